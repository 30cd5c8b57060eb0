"""`quorumctl cluster cluster-id | list-endpoints | unregister`: kafka-cluster's
commands (Kafka 4.3), live. Thin: parse, ask `quorumctl.live.cluster`, render
with `quorumctl.render.cluster`."""

from typing import Annotated

import typer

from ..errors import ExitStatus
from .options import (
    Apply,
    BootstrapControllerC,
    BootstrapServerB,
    CommandConfigC,
    DryRun,
    PlainOutputOpt,
    Timeout,
    group,
    printer,
)

app = group(
    "The cluster's id, endpoints and broker registrations (like kafka-cluster).\n\n"
    "Example: quorumctl cluster list-endpoints --bootstrap-server localhost:9092 --include-fenced-brokers"
)


@app.command("cluster-id")
def cluster_id(
    ctx: typer.Context,
    bootstrap_server: BootstrapServerB = None,
    bootstrap_controller: BootstrapControllerC = None,
    command_config: CommandConfigC = None,
    timeout: Timeout = None,
    output: PlainOutputOpt = None,
):
    """The cluster's id, as kafka-cluster cluster-id prints it.

    Example: quorumctl cluster cluster-id --bootstrap-controller localhost:9093
    """
    from ..live.cluster import cluster_id as ask
    from ..render.cluster import cluster_id_doc, cluster_id_text
    from ..wire.access import ClusterAccess

    printer(ctx).emit(
        output,
        ask(ClusterAccess(bootstrap_server, bootstrap_controller, command_config), timeout),
        text=cluster_id_text,
        json=cluster_id_doc,
    )


@app.command("list-endpoints")
def list_endpoints(
    ctx: typer.Context,
    bootstrap_server: BootstrapServerB = None,
    bootstrap_controller: BootstrapControllerC = None,
    command_config: CommandConfigC = None,
    include_fenced: Annotated[
        bool, typer.Option("--include-fenced-brokers", help="Also the fenced brokers (with --bootstrap-server).")
    ] = False,
    timeout: Timeout = None,
    output: PlainOutputOpt = None,
):
    """The brokers' or the controllers' endpoints, as kafka-cluster list-endpoints prints them.

    Example: quorumctl cluster list-endpoints --bootstrap-server localhost:9092 --include-fenced-brokers
    """
    from ..live.cluster import list_endpoints as ask
    from ..render.cluster import endpoints_text
    from ..wire.access import ClusterAccess

    printer(ctx).emit(
        output,
        ask(ClusterAccess(bootstrap_server, bootstrap_controller, command_config), timeout, include_fenced),
        text=endpoints_text,
    )


@app.command("unregister")
def unregister(
    ctx: typer.Context,
    broker_id: Annotated[int, typer.Option("--id", "-i", metavar="N", help="The broker to unregister.")],
    bootstrap_server: BootstrapServerB = None,
    bootstrap_controller: BootstrapControllerC = None,
    command_config: CommandConfigC = None,
    apply: Apply = False,
    dry_run: DryRun = False,
    timeout: Timeout = None,
    output: PlainOutputOpt = None,
):
    """Unregister a dead broker, as kafka-cluster unregister; a dry run that checks it unless --apply.

    Refused (exit 1) while the broker is unfenced (running and heartbeating) or not
    registered. The plan names what its registration holds: the partitions that list it
    as a replica, in the ISR or ELR, and the feature level checks it takes part in.

    Example: quorumctl cluster unregister --bootstrap-server localhost:9092 --id 6 --apply
    """
    from ..live.cluster import unregister as plan_for
    from ..render.cluster import plan_text
    from ..wire.access import ClusterAccess

    plan = plan_for(ClusterAccess(bootstrap_server, bootstrap_controller, command_config), timeout, broker_id, apply)
    printer(ctx).emit(output, plan, text=plan_text, json=lambda p: p.doc())
    raise typer.Exit(ExitStatus.of(plan.refused is not None or plan.applied is False))


def register(parent: typer.Typer) -> None:
    parent.add_typer(app, name="cluster")
