"""`quorumctl truncate`: cut a replica's metadata log back to where it diverges."""

from typing import Annotated, List, Optional

import typer

from .options import Apply, BackupDir, DryRun, PlainOutputOpt, ServerConfigs, printer


def truncate(
    ctx: typer.Context,
    log_dir: Annotated[
        str, typer.Argument(metavar="LOG_DIR", help="The replica's log dir or its __cluster_metadata-0.")
    ],
    reference: Annotated[
        List[str],
        typer.Option(
            "--reference",
            metavar="OTHER_DIR",
            help="A healthier replica's log dir: truncate to where this one "
            "diverges from it, as the Fetch protocol would. Repeatable: the most "
            "up to date reference is used, and all of them decide which entries "
            "are committed (dropping provably uncommitted ones needs no --force).",
        ),
    ] = [],
    diverging_epoch: Annotated[
        Optional[int],
        typer.Option(
            "--diverging-epoch", metavar="EPOCH", help="The epoch of a leader's DivergingEpoch (with --end-offset)."
        ),
    ] = None,
    end_offset: Annotated[
        Optional[int],
        typer.Option("--end-offset", metavar="OFFSET", help="The end offset of a leader's DivergingEpoch."),
    ] = None,
    to_offset: Annotated[
        Optional[int],
        typer.Option(
            "--to-offset", metavar="OFFSET", help="Truncate to this offset (whole batches: a batch holding it goes)."
        ),
    ] = None,
    apply: Apply = False,
    dry_run: DryRun = False,  # the default, said out loud
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Allow cutting below the latest snapshot's end offset, entries the references prove committed, "
            "or a replica more up to date than the reference.",
        ),
    ] = False,
    config: ServerConfigs = [],
    backup_dir: BackupDir = None,
    output: PlainOutputOpt = None,
):
    """Truncate a stopped replica's metadata log to where it diverges (dry run by default).

    Whole batches, indexes cut, leader-epoch-checkpoint rewritten, later snapshots
    and producer snapshots removed; with --apply: Kafka's .lock taken, a backup
    kept, and the directory swapped in atomically.

    Example: quorumctl truncate /var/lib/kafka/c3 --reference /var/lib/kafka/c1 --apply

    Example: quorumctl truncate /var/lib/kafka/c1 --reference /var/lib/kafka/c2 --reference /var/lib/kafka/c3
    """
    from ..config.addresses import static_voter_ids
    from ..ops.truncate import run
    from ..render.state import truncate_text

    static, source = static_voter_ids(config)
    res = run(
        log_dir,
        reference=reference,
        diverging_epoch=diverging_epoch,
        end_offset=end_offset,
        to_offset=to_offset,
        apply=apply,
        force=force,
        backup_dir=backup_dir,
        static_voters=static,
        static_source=source,
    )
    printer(ctx).emit(output, res, text=truncate_text, json=lambda r: r.to_json())
    raise typer.Exit(res.exit_code)


def register(app: typer.Typer) -> None:
    app.command("truncate")(truncate)
