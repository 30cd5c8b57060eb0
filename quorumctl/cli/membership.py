"""`quorumctl replace-controller ID`: a voter back on a replaced (wiped) disk made a
voter again under its new directory id, live (`quorumctl.live.membership.replace`).
Exit codes as add-controller's: 0 done (or the dry run found nothing against it);
1 refused (by quorumctl's preflight or the quorum), or not verified; 2 bad options;
3 cluster unreachable or authentication failed."""

from typing import Annotated, List, Optional

import typer

from .options import (
    Apply,
    BootstrapController,
    BootstrapServer,
    CommandConfig,
    DryRun,
    PlainOutputOpt,
    Timeout,
    printer,
)


def replace_controller(
    ctx: typer.Context,
    controller_id: Annotated[
        int, typer.Argument(metavar="ID", help="The id of the controller whose disk was replaced.")
    ],
    bootstrap_server: BootstrapServer = None,
    bootstrap_controller: BootstrapController = None,
    command_config: CommandConfig = None,
    endpoint: Annotated[
        Optional[List[str]],
        typer.Option(
            "--endpoint",
            metavar="NAME://HOST:PORT",
            help="The controller's endpoint (repeat for each controller listener); default: the ones the voter set "
            "stores for it.",
        ),
    ] = None,
    apply: Apply = False,
    dry_run: DryRun = False,  # the default, said out loud
    timeout: Timeout = None,
    output: PlainOutputOpt = None,
):
    """Make a controller back on a replaced disk a voter again (RemoveRaftVoter, AddRaftVoter).

    A controller whose disk was wiped and formatted again fetches as an observer under a
    new directory id while the voter set still names the old one. This removes the old
    (id, directory id) from the voters, then adds the new one with the node's endpoints,
    after add-controller's preflight (the observer runs and has caught up, it answers on
    its endpoints, the other voters are a majority without it). Dry run by default;
    --apply acts, then verifies the full voter set.

    Example: quorumctl replace-controller 3 --bootstrap-controller localhost:9093 --apply
    """
    from ..live.membership.replace import replace_controller as replace
    from ..render.membership import replace_text
    from ..wire.access import ClusterAccess

    access = ClusterAccess(bootstrap_server, bootstrap_controller, command_config)
    printer(ctx).emit(
        output,
        replace(access, timeout, controller_id, endpoint or [], apply),
        text=lambda p: replace_text(p) + "\n",
        json=lambda p: p.to_json(),
    )


def register(app: typer.Typer) -> None:
    app.command("replace-controller")(replace_controller)
