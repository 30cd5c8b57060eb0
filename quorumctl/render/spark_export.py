"""spark-export's summary: one text line, a Rich table or a JSON line (around the
summary's own to_json); --follow's line per micro-batch. Rich is imported only when
a table is asked for."""

from __future__ import annotations


def summary_line(s) -> str:
    verdict = (
        "no errors"
        if not s.errors
        else f"{s.errors} error(s): rows with corrupt = true ({s.corrupt_records} record(s) of CRC-failing batches)"
    )
    return (
        f"Exported {s.files} file(s), {s.bytes} bytes: {s.batches} batch(es), {s.records} record(s), "
        f"{s.decode_errors} undecodable value(s), {verdict}; {s.rows} row(s) in {s.seconds:.1f} s "
        f"({s.records_per_second:,.0f} records/s) to {s.out}"
    )


def summary_doc(s) -> dict:
    return {"ok": s.errors == 0, "summary": s.to_json()}


def summary_table(summary):
    from rich.table import Table

    t = Table(title="quorumctl spark-export", show_header=False)
    t.add_column("", style="bold")
    t.add_column("", justify="right")
    rows = [
        ("files", f"{summary.files:,}"),
        ("bytes", f"{summary.bytes:,}"),
        ("tasks", f"{summary.tasks:,}"),
        ("batches", f"{summary.batches:,}"),
        ("records", f"{summary.records:,}"),
        ("errors", f"[bold red]{summary.errors:,}[/]" if summary.errors else "0"),
        ("undecodable values", f"{summary.decode_errors:,}"),
        ("seconds", f"{summary.seconds:.1f}"),
        ("records/s", f"{summary.records_per_second:,.0f}"),
        ("output", summary.out),
    ]
    for k, v in rows:
        t.add_row(k, v)
    return t


def follow_batch_line(b) -> str:
    """One line per micro-batch of `spark-export --follow`."""
    again = " (re-run of an interrupted batch)" if b.rerun else ""
    cut = f"; {len(b.truncated)} segment(s) truncated under us" if b.truncated else ""
    return (
        f"batch {b.batch}{again}: {b.files} file(s), {b.bytes} bytes, {b.records} "
        f"record(s), {b.errors} error(s), {b.rows} row(s) in {b.seconds:.1f} s{cut}"
    )


def follow_batch_doc(b) -> dict:
    return {"ok": b.errors == 0, "batch": b.to_json()}
