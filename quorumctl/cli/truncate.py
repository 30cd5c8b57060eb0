"""`quorumctl truncate`: cut a replica's metadata log back to where it diverges."""

from __future__ import annotations

from typing import Optional

import typer

from ..render.output import Output, PlainOutput


def truncate(
    log_dir: str = typer.Argument(..., metavar="LOG_DIR", help="The replica's log dir or its __cluster_metadata-0."),
    reference: Optional[str] = typer.Option(None, "--reference", metavar="OTHER_DIR",
                                            help="A healthier replica's log dir: truncate to where this one "
                                                 "diverges from it, as the Fetch protocol would."),
    diverging_epoch: Optional[int] = typer.Option(None, "--diverging-epoch", metavar="EPOCH",
                                                  help="The epoch of a leader's DivergingEpoch (with --end-offset)."),
    end_offset: Optional[int] = typer.Option(None, "--end-offset", metavar="OFFSET",
                                             help="The end offset of a leader's DivergingEpoch."),
    to_offset: Optional[int] = typer.Option(None, "--to-offset", metavar="OFFSET",
                                            help="Truncate to this offset (whole batches: a batch holding it goes)."),
    apply: bool = typer.Option(False, "--apply", help="Do it (the default is a dry run that prints the plan)."),
    force: bool = typer.Option(False, "--force", help="Allow cutting below the latest snapshot's end offset."),
    backup_dir: Optional[str] = typer.Option(None, "--backup-dir", metavar="DIR",
                                             help="Where removed and replaced files are kept (default: "
                                                  "<log dir>.quorumctl-backup beside the log dir, same file system)."),
    output: Optional[PlainOutput] = typer.Option(None, "--output", "-o", help="text or json."),
):
    """Truncate a stopped replica's metadata log to where it diverges (dry run by default).

    Whole batches, indexes cut, leader-epoch-checkpoint rewritten, later snapshots
    and producer snapshots removed; with --apply: Kafka's .lock taken, a backup
    kept, and the directory swapped in atomically.

    Example: quorumctl truncate /var/lib/kafka/c3 --reference /var/lib/kafka/c1 --apply
    """
    import sys

    from ..errors import InputError
    from ..render.output import json_line, resolve_plain
    from ..render.state import plan_lines
    from ..storage import fsutil
    from ..storage import truncate as storage_truncate
    from ..storage.replica import load_replica, resolve_partition_dir

    modes = [m for m, on in (("--reference", reference is not None),
                             ("--diverging-epoch/--end-offset", diverging_epoch is not None or end_offset is not None),
                             ("--to-offset", to_offset is not None)) if on]
    if len(modes) != 1:
        raise InputError("give exactly one of --reference OTHER_DIR, --diverging-epoch E --end-offset O, "
                         f"--to-offset O (got {', '.join(modes) or 'none'})")
    if (diverging_epoch is None) != (end_offset is None):
        raise InputError("--diverging-epoch and --end-offset go together")
    ld, _pdir = resolve_partition_dir(log_dir)
    backup_root = backup_dir or storage_truncate.default_backup_root(ld)
    unfinished = storage_truncate.unfinished_runs(backup_root)
    lock = fsutil.LogDirLock(ld).acquire() if apply else None
    try:
        r = load_replica(log_dir)
        refusal = None
        caution = None
        divergence = None
        if reference is not None:
            ref = load_replica(reference)
            if ref.meta and r.meta and ref.meta.get("cluster.id") != r.meta.get("cluster.id"):
                raise InputError(f"{reference} belongs to cluster {ref.meta.get('cluster.id')}, "
                                 f"{log_dir} to {r.meta.get('cluster.id')}")
            target, reason, divergence, refusal = storage_truncate.target_from_reference(r, ref)
            caution = storage_truncate.reference_caution(r, ref)
            mode = "reference"
        elif diverging_epoch is not None:
            target, reason = storage_truncate.target_from_diverging_epoch(r, diverging_epoch, end_offset)
            mode = "diverging-epoch"
        else:
            if to_offset < 0:
                raise InputError(f"--to-offset must not be negative (got {to_offset})")
            target, reason, mode = to_offset, f"explicit offset {to_offset}", "to-offset"
        plan = storage_truncate.plan_truncation(r, mode=mode, target=target, reason=reason, divergence=divergence,
                                 force=force, refusal=refusal, caution=caution)
        pj = plan.to_json()
        report = None
        if apply and not plan.refusal:
            report = storage_truncate.apply_plan(plan, backup_root)
            report["verify"] = _post_verify(r.partition_dir)
    finally:
        if lock is not None:
            lock.release()
    mode_out = resolve_plain(output)
    if mode_out is Output.json:
        sys.stdout.write(json_line({"plan": pj, "applied": report, "dry_run": not apply,
                                    "unfinished_backups": unfinished}) + "\n")
    else:
        lines = plan_lines(pj, report if (report and report.get("applied")) else None, backup_root,
                           dry_run=not apply)
        if report is not None and report.get("verify") is not None:
            v = report["verify"]
            lines.append(f"verify {r.partition_dir}: " + ("OK" if v["ok"] else f"{len(v['problems'])} problem(s)"))
            lines.extend(f"  {x}" for x in v["problems"])
        for run in unfinished:
            lines.append(f"note: an earlier truncation did not finish: {run} (the partition directory was left "
                         "wholly old or wholly new; its plan.json says what was planned)")
        if not apply:
            holder = fsutil.lock_holder(ld)
            if holder:
                lines.append(f"note: process {holder} holds {ld}/.lock (a running Kafka); --apply will refuse")
        sys.stdout.write("\n".join(lines) + "\n")
    if plan.refusal:
        raise typer.Exit(1)
    if report is not None and report.get("verify") and not report["verify"]["ok"]:
        raise typer.Exit(1)
    raise typer.Exit(0)


def _post_verify(partition_dir: str) -> dict | None:
    """`quorumctl verify` on the result (None when verify is not available)."""
    try:
        from ..storage.verify import verify_paths
    except ImportError:
        return None
    try:
        reports = verify_paths([partition_dir])
    except ImportError:
        return None
    problems = [p.line() for rep in reports for p in rep.problems]
    return {"ok": not problems, "problems": problems}


def register(app: typer.Typer) -> None:
    app.command("truncate")(truncate)
