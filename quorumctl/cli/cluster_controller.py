"""`quorumctl cluster unregister-controller --id N` (KIP-1312, Kafka 4.4's
kafka-cluster.sh unregister-controller): UnregisterController (API 94), a dry run
by default, refused (with every reason) while the controller is a voter, still
runs, or metadata.version is below 4.4-IV2 (`quorumctl.live.membership.unregister`).

The `cluster` group: this module adds `unregister-controller` to it, creating the
group when no other module has (another branch adds list-endpoints, unregister and
cluster-id to the same group; whichever registers first creates it).
Exit codes: 0 done or the dry run found nothing against it; 1 refused (by quorumctl
or the cluster); 2 bad options; 3 cluster unreachable or authentication failed.
"""

from typing import Annotated

import typer

from .options import (
    Apply,
    BootstrapController,
    BootstrapServer,
    CommandConfig,
    DryRun,
    PlainOutputOpt,
    Timeout,
    group,
    printer,
)


def unregister_controller(
    ctx: typer.Context,
    *,  # keyword-only: a required option below keeps its place in --help
    bootstrap_server: BootstrapServer = None,
    bootstrap_controller: BootstrapController = None,
    command_config: CommandConfig = None,
    controller_id: Annotated[int, typer.Option("--id", "-i", help="The id of the controller to unregister.")],
    apply: Apply = False,
    dry_run: DryRun = False,  # the default, said out loud
    timeout: Timeout = None,
    output: PlainOutputOpt = None,
):
    """Remove a stopped, removed controller's registration (UnregisterController, Kafka 4.4).

    Needs metadata.version 4.4-IV2. Refused while the controller is a voter (remove
    it first: remove-controller), while it still runs (it fetches as an observer, or
    answers on its endpoint: it would register again), or below 4.4-IV2. Dry run by
    default; --apply sends it and prints what Kafka's kafka-cluster.sh prints.

    Example: quorumctl cluster unregister-controller --bootstrap-controller localhost:9093 --id 4 --apply
    """
    from ..live.membership.unregister import unregister_controller as unregister
    from ..render.quorum import unregister_text
    from ..wire.access import ClusterAccess

    access = ClusterAccess(bootstrap_server, bootstrap_controller, command_config)
    printer(ctx).emit(
        output,
        unregister(access, timeout, controller_id, apply),
        text=lambda p: unregister_text(p, "cluster") + "\n",
        json=lambda p: p.to_json(),
    )


def register(parent: typer.Typer) -> None:
    cluster = next((g.typer_instance for g in parent.registered_groups if g.name == "cluster"), None)
    if cluster is None:
        cluster = group(
            "Cluster membership (like kafka-cluster.sh).\n\n"
            "Example: quorumctl cluster unregister-controller --bootstrap-controller localhost:9093 --id 4"
        )
        parent.add_typer(cluster, name="cluster")
    cluster.command("unregister-controller")(unregister_controller)
