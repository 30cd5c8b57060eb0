"""`quorumctl cluster clear-registration ID`: a ghost registration (a removed controller,
a dead broker) cleared by the way the cluster's version allows
(`quorumctl.live.membership.registration`): UnregisterBroker, UnregisterController (metadata.version
4.4-IV2+), or the re-registration workaround, planned step by step and checked on each run.
Exit codes: 0 nothing blocks any more (or a dry run of a request quorumctl sends passed its
checks); 1 steps remain, or refused; 2 bad options; 3 cluster unreachable."""

from typing import Annotated, Optional

import typer

from ..errors import ExitStatus
from .options import (
    Apply,
    BootstrapController,
    BootstrapServer,
    CommandConfig,
    DryRun,
    MetadataTarget,
    PlainOutputOpt,
    Timeout,
    group,
    printer,
)


def clear_registration(
    ctx: typer.Context,
    node_id: Annotated[int, typer.Argument(metavar="ID", help="The node whose registration to clear.")],
    bootstrap_server: BootstrapServer = None,
    bootstrap_controller: BootstrapController = None,
    command_config: CommandConfig = None,
    metadata: MetadataTarget = None,
    node_config: Annotated[
        Optional[str],
        typer.Option(
            "--node-config",
            metavar="FILE",
            help="The server.properties of the controller that re-registers (the workaround below 4.4-IV2): checked.",
        ),
    ] = None,
    apply: Apply = False,
    dry_run: DryRun = False,  # the default, said out loud
    timeout: Timeout = None,
    output: PlainOutputOpt = None,
):
    """Clear a ghost registration that blocks metadata.version upgrades (strimzi#11039).

    A broker: UnregisterBroker. A controller at metadata.version 4.4-IV2+: UnregisterController.
    A controller below it: the re-registration workaround (a controller with the ghost's id,
    on the new release, formatted with --no-initial-controllers, starts as an observer,
    registers its new ranges, and is stopped): each step printed with its commands and its
    state, checked again on every run; with --metadata, Kafka's verdict on that level says
    whether the registration still blocks. Dry run by default; --apply sends the requests
    quorumctl can send (the unregistrations).

    Example: quorumctl cluster clear-registration 4 --bootstrap-controller localhost:9093 --metadata 4.3-IV0
    """
    from ..live.membership.registration import clear_registration as clear
    from ..render.membership import clear_text
    from ..wire.access import ClusterAccess

    access = ClusterAccess(bootstrap_server, bootstrap_controller, command_config)
    plan = clear(access, timeout, node_id, metadata, node_config, apply)
    printer(ctx).emit(output, plan, text=lambda p: clear_text(p) + "\n", json=lambda p: p.to_json())
    raise typer.Exit(ExitStatus.of(not plan.cleared))


def register(parent: typer.Typer) -> None:
    cluster = next((g.typer_instance for g in parent.registered_groups if g.name == "cluster"), None)
    if cluster is None:
        cluster = group("Cluster membership (like kafka-cluster.sh).")
        parent.add_typer(cluster, name="cluster")
    cluster.command("clear-registration")(clear_registration)
