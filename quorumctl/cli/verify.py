"""`quorumctl verify`: check files without printing their records."""

from typing import Annotated, List

import typer

from ..errors import ExitStatus
from .options import OutputOpt, printer


def verify(
    ctx: typer.Context,
    paths: Annotated[List[str], typer.Argument(metavar="PATH...", help="Files or log dirs (directories are walked).")],
    output: OutputOpt = None,
    notes: Annotated[
        bool, typer.Option("--notes", help="Also list findings Kafka repairs by itself at startup.")
    ] = False,
    deep: Annotated[
        bool,
        typer.Option("--deep", help="Also decode every record (and metadata record), not only batch headers and CRCs."),
    ] = False,
):
    """Check CRCs, lengths, offsets, epochs, indexes and snapshots; exit 1 on any problem.

    Given several metadata log dirs (replicas of one cluster), also Raft's log
    matching between them: different batches at one offset and epoch.

    Example: quorumctl verify /var/lib/kafka/data/__cluster_metadata-0
    """
    from ..ops.verify import verify_paths
    from ..render.verify import verify_json, verify_table, verify_text

    pr = printer(ctx)
    reports = verify_paths(paths, deep=deep, stray=lambda f: pr.say(f"Ignoring unknown file {f}"))
    pr.emit(
        output, reports, text=lambda r: verify_text(r, notes), table=lambda r: verify_table(r, notes), json=verify_json
    )
    raise typer.Exit(ExitStatus.of(any(r.problems for r in reports)))


def register(app: typer.Typer) -> None:
    app.command("verify")(verify)
