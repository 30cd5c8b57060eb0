"""`quorumctl verify`: check files without printing their records."""

from __future__ import annotations

from typing import List

import typer

from ..errors import ExitStatus
from ..render.output import Output
from .options import OutputOpt


def verify(
    paths: List[str] = typer.Argument(..., metavar="PATH...", help="Files or log dirs (directories are walked)."),
    output: OutputOpt = None,
    notes: bool = typer.Option(False, "--notes", help="Also list findings Kafka repairs by itself at startup."),
    deep: bool = typer.Option(False, "--deep", help="Also decode every record (and metadata record), not only batch headers and CRCs."),
):
    """Check CRCs, lengths, offsets, epochs, indexes and snapshots; exit 1 on any problem.

    Given several metadata log dirs (replicas of one cluster), also Raft's log
    matching between them: different batches at one offset and epoch.

    Example: quorumctl verify /var/lib/kafka/data/__cluster_metadata-0
    """
    import sys

    from ..render.output import json_line, resolve
    from ..ops.verify import verify_paths

    reports = verify_paths(paths, deep=deep, stray=lambda f: sys.stderr.write(f"Ignoring unknown file {f}\n"))
    problems = [p for r in reports for p in r.problems]
    mode = resolve(output)
    totals = {"files": len(reports), "batches": sum(r.stats.get("batches", 0) for r in reports),
              "records": sum(r.stats.get("records", 0) for r in reports),
              "bytes": sum(r.stats.get("size", 0) for r in reports),
              "problems": len(problems), "notes": sum(len(r.notes) for r in reports)}
    if mode is Output.json:
        sys.stdout.write(json_line({"ok": not problems, "summary": totals,
                                    "files": [r.to_json() for r in reports]}) + "\n")
    elif mode is Output.table:
        from rich.console import Console
        from rich.table import Table

        # names relative to the directory all files share (named in the title): what is left is
        # what tells them apart, and a cell folds it rather than cutting its end
        import os
        common = os.path.commonpath([os.path.dirname(os.path.abspath(r.path)) for r in reports])
        t = Table(title=f"quorumctl verify: {common}")
        for col in ("file", "kind", "batches", "records", "offsets", "result"):
            # a file name's end (segment and snapshot offsets) is what tells files apart: fold, never cut
            t.add_column(col, justify="right" if col in ("batches", "records") else "left",
                         overflow="fold", no_wrap=col != "file")
        for r in reports:
            s = r.stats
            offs = (f"{s['first_offset']}..{s['last_offset']}" if s.get("first_offset") is not None else "")
            res = "[green]ok[/]" if not r.problems else f"[bold red]{len(r.problems)} problem(s)[/]"
            t.add_row(os.path.relpath(os.path.abspath(r.path), common), r.kind, str(s.get("batches", "")), str(s.get("records", "")), offs, res)
        con = Console()
        con.print(t)
        for p in problems + ([n for r in reports for n in r.notes] if notes else []):
            con.print(("[red]" if p in problems else "[yellow]") + p.line().replace("[", "\\["))
        con.print(_summary(totals))
    else:
        for p in problems:
            sys.stdout.write(p.line() + "\n")
        if notes:
            for r in reports:
                for n in r.notes:
                    sys.stdout.write("note: " + n.line() + "\n")
        sys.stdout.write(_summary(totals) + "\n")
    raise typer.Exit(ExitStatus.of(problems))


def _summary(t: dict) -> str:
    verdict = "OK" if not t["problems"] else f"{t['problems']} problem(s) found"
    return (f"Verified {t['files']} file(s), {t['batches']} batch(es), {t['records']} record(s), "
            f"{t['bytes']} bytes: {verdict}" + (f" ({t['notes']} note(s), see --notes)" if t["notes"] else ""))


def register(app: typer.Typer) -> None:
    app.command("verify")(verify)
