"""`quorumctl state`: offline view of one or more replicas' metadata logs."""

from typing import Annotated, List, Optional

import typer

from .options import OutputOpt, ServerConfigs, printer


def state(
    ctx: typer.Context,
    paths: Annotated[
        Optional[List[str]],
        typer.Argument(
            metavar="LOG_DIR...", help="Log dirs or __cluster_metadata-0 dirs (the replicas of one quorum)."
        ),
    ] = None,
    config: ServerConfigs = [],
    output: OutputOpt = None,
):
    """Offline view of replicas: quorum-state, epochs, snapshots, offsets, divergence.

    With several replicas: which one wins an election (last epoch, then end
    offset), where each other one diverges from it (KIP-595's DivergingEpoch rule),
    which logs clash (different batches at one offset and epoch: Raft's log
    matching broken; exit 1), and which entries of each are provably committed
    (held by a majority of the voters), provably uncommitted, or unknown.

    Example: quorumctl state /var/lib/kafka/c1 /var/lib/kafka/c2 /var/lib/kafka/c3
    """
    from ..ops.state import state as run
    from ..render.state import state_doc, state_table, state_text

    result = run(list(paths or []), config)
    printer(ctx).emit(output, state_doc(result), text=state_text, table=state_table)
    raise typer.Exit(result.exit_code)


def register(app: typer.Typer) -> None:
    app.command("state")(state)
