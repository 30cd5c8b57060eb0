"""`verify`'s result as text (one line per problem, then the summary), a Rich
table (one row per file) and JSON."""

from __future__ import annotations

import os


def totals(reports) -> dict:
    problems = sum(len(r.problems) for r in reports)
    return {
        "files": len(reports),
        "batches": sum(r.stats.get("batches", 0) for r in reports),
        "records": sum(r.stats.get("records", 0) for r in reports),
        "bytes": sum(r.stats.get("size", 0) for r in reports),
        "problems": problems,
        "notes": sum(len(r.notes) for r in reports),
    }


def verify_json(reports) -> dict:
    t = totals(reports)
    return {"ok": not t["problems"], "summary": t, "files": [r.to_json() for r in reports]}


def summary(t: dict) -> str:
    verdict = "OK" if not t["problems"] else f"{t['problems']} problem(s) found"
    return (
        f"Verified {t['files']} file(s), {t['batches']} batch(es), {t['records']} record(s), "
        f"{t['bytes']} bytes: {verdict}" + (f" ({t['notes']} note(s), see --notes)" if t["notes"] else "")
    )


def verify_text(reports, notes: bool) -> str:
    lines = [p.line() for r in reports for p in r.problems]
    if notes:
        lines += ["note: " + n.line() for r in reports for n in r.notes]
    return "\n".join(lines + [summary(totals(reports))]) + "\n"


def verify_table(reports, notes: bool) -> list:
    from rich.table import Table
    from rich.text import Text

    # names relative to the directory all files share (named in the title): what is left is
    # what tells them apart, and a cell folds it rather than cutting its end
    common = os.path.commonpath([os.path.dirname(os.path.abspath(r.path)) for r in reports])
    t = Table(title=f"quorumctl verify: {common}")
    for col in ("file", "kind", "batches", "records", "offsets", "result"):
        # a file name's end (segment and snapshot offsets) is what tells files apart: fold, never cut
        t.add_column(
            col, justify="right" if col in ("batches", "records") else "left", overflow="fold", no_wrap=col != "file"
        )
    for r in reports:
        s = r.stats
        offs = f"{s['first_offset']}..{s['last_offset']}" if s.get("first_offset") is not None else ""
        res = "[green]ok[/]" if not r.problems else f"[bold red]{len(r.problems)} problem(s)[/]"
        t.add_row(
            os.path.relpath(os.path.abspath(r.path), common),
            r.kind,
            str(s.get("batches", "")),
            str(s.get("records", "")),
            offs,
            res,
        )
    out: list[Table | Text] = [t]
    out += [Text(p.line(), style="red") for r in reports for p in r.problems]
    if notes:
        out += [Text(n.line(), style="yellow") for r in reports for n in r.notes]
    out.append(Text(summary(totals(reports))))
    return out
