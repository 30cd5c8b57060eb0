"""`quorumctl truncate`: cut a replica's metadata log back to where it diverges."""

from __future__ import annotations

from typing import List, Optional

import typer

from ..render.output import Output
from .options import Apply, BackupDir, PlainOutputOpt, ServerConfigs


def truncate(
    log_dir: str = typer.Argument(..., metavar="LOG_DIR", help="The replica's log dir or its __cluster_metadata-0."),
    reference: List[str] = typer.Option([], "--reference", metavar="OTHER_DIR",
                                        help="A healthier replica's log dir: truncate to where this one "
                                             "diverges from it, as the Fetch protocol would. Repeatable: the most "
                                             "up to date reference is used, and all of them decide which entries "
                                             "are committed (dropping provably uncommitted ones needs no --force)."),
    diverging_epoch: Optional[int] = typer.Option(None, "--diverging-epoch", metavar="EPOCH",
                                                  help="The epoch of a leader's DivergingEpoch (with --end-offset)."),
    end_offset: Optional[int] = typer.Option(None, "--end-offset", metavar="OFFSET",
                                             help="The end offset of a leader's DivergingEpoch."),
    to_offset: Optional[int] = typer.Option(None, "--to-offset", metavar="OFFSET",
                                            help="Truncate to this offset (whole batches: a batch holding it goes)."),
    apply: Apply = False,
    force: bool = typer.Option(False, "--force", help="Allow cutting below the latest snapshot's end offset, "
                               "entries the references prove committed, or a replica more up to date than "
                               "the reference."),
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
    import sys

    from ..render.output import json_line, resolve_plain
    from ..render.state import plan_lines
    from ..protocol.connection import static_voter_ids
    from ..ops.truncate import run

    static, source = static_voter_ids(config)
    res = run(log_dir, reference=reference, diverging_epoch=diverging_epoch, end_offset=end_offset,
              to_offset=to_offset, apply=apply, force=force, backup_dir=backup_dir,
              static_voters=static, static_source=source)
    report = res.report
    if resolve_plain(output) is Output.json:
        sys.stdout.write(json_line({"plan": res.plan_json, "applied": report, "dry_run": not apply,
                                    "unfinished_backups": res.unfinished}) + "\n")
    else:
        lines = plan_lines(res.plan_json, report if (report and report.get("applied")) else None,
                           res.backup_root, dry_run=not apply)
        if report is not None and report.get("verify") is not None:
            v = report["verify"]
            lines.append(f"verify {res.partition_dir}: " + ("OK" if v["ok"] else f"{len(v['problems'])} problem(s)"))
            lines.extend(f"  {x}" for x in v["problems"])
        for unfinished in res.unfinished:
            lines.append(f"note: an earlier truncation did not finish: {unfinished} (the partition directory was "
                         "left wholly old or wholly new; its plan.json says what was planned)")
        if res.lock_holder:
            lines.append(f"note: process {res.lock_holder} holds {res.log_dir}/.lock (a running Kafka); "
                         "--apply will refuse")
        sys.stdout.write("\n".join(lines) + "\n")
    raise typer.Exit(res.exit_code)


def register(app: typer.Typer) -> None:
    app.command("truncate")(truncate)
