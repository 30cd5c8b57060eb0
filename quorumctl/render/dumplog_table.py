"""dump-log as tables for a person at a terminal (`--output table`, the default there).

Batches are rows with what an operator scans for (offsets, position, time,
epoch, type, records, size, codec, CRC state); with --deep-iteration each
batch's records follow as indented rows with their type and a payload summary.
Other files (indexes, quorum-state, leader-epoch-checkpoint, ...) are the same
objects `--output json` prints, as tables.

Streaming like the text path: rows are kept for at most CHUNK_ROWS and then
printed as one Rich table; the next chunk continues it without a header, its
columns at least as wide as before, so a segment of any size prints in bounded
memory and lines up on screen. Free-form lines ("Dumping ...", problems) end
the current table.
"""

from __future__ import annotations

from itertools import islice

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..records import metadata as md
from ..records.batch import ATTR_CONTROL, ATTR_LOG_APPEND_TIME, ATTR_TRANSACTIONAL
from ..records.javatext import java_utf8
from .dumplog import Options, Sink, metadata_json
from .output import Printer, iso_utc, json_line

CHUNK_ROWS = 200
CONTROL_SUMMARY_RECORDS = 16  # a control batch's summary names the types of its first records
SUMMARY_CHARS = 240  # a payload summary is cut here before Rich fits it to the screen

BATCH_COLUMNS = ("offset", "position", "time (UTC)", "epoch", "type", "records", "size", "codec", "crc", "summary")
_RIGHT = {"offset", "position", "epoch", "records", "size"}
DROP_ORDER = ("position", "records", "codec", "size", "epoch")  # on a narrow screen, in this order
MIN_LAST = 12
LIST_FIELDS = ("entries", "producers")  # the fields of a file's JSON object shown one entry per row


def _time(ms: int) -> str:
    """ISO time, or the raw value where it is no time (-1, before 1970, after 9999)."""
    return iso_utc(ms) or str(ms)


def _cut(s: str) -> str:
    return s if len(s) <= SUMMARY_CHARS else s[: SUMMARY_CHARS - 1] + "…"


def _control_summary(key, value) -> tuple[str, str]:
    """(type name, summary) of one control record."""
    d = md.decode_control(key, value)
    if d.data is None:
        return d.type_name, f"error: {d.error}"
    return d.type_name, json_line(d.data)


def _record_row(b, r, decode_metadata: bool) -> tuple:
    if b.attributes & ATTR_CONTROL:
        rtype, summary = _control_summary(r.key, r.value)
    elif decode_metadata and r.value is not None:
        p = metadata_json(r.value)
        name = p["type"].removesuffix("_RECORD")  # as --record-type takes it; saves a narrow screen 7 columns
        rtype = f"{name} v{p['version']}" if p.get("version") is not None else name
        summary = json_line(p["data"]) if "data" in p else f"error: {p.get('error')}"
    else:
        rtype = "record"
        summary = " ".join(
            f"{k}: {java_utf8(v[:SUMMARY_CHARS])}" if v is not None else f"{k}: null"
            for k, v in (("key", r.key), ("value", r.value))
        )
    ts = b.max_timestamp if b.attributes & ATTR_LOG_APPEND_TIME else r.timestamp
    size = -1 if r.value is None else len(r.value)
    return (Text(f"↳ {r.offset}", style="dim"), "", _time(ts), "", rtype, "", str(size), "", "", _cut(summary))


class TableSink(Sink):
    """The Sink of dumplog.py for tables: same methods, rows instead of lines (JSON's
    part and end_line are never called on it)."""

    plain = False  # rows are printed in file order by this process

    def __init__(self, sink: Sink, opts: Options, console: Console | None = None):
        super().__init__(sink.out, sink.err)
        self.sink = sink
        self.opts = opts
        self.console = console or Printer(sink.out, sink.err).console(highlight=False, soft_wrap=False)
        self.columns: tuple = ()
        self.widths: list[int] = []
        self.rows: list[tuple] = []
        self.header_due = True

    # -- the Sink interface --------------------------------------------------
    def line(self, s: str):
        self.flush()
        self.header_due = True
        style = "bold" if s.startswith("Dumping ") else ""
        self.console.print(Text(s, style=style), soft_wrap=True)  # a path is never cut or folded

    def lines(self, ls):
        for s in ls:
            self.line(s)

    def error(self, s: str):
        self.flush()
        self.console.file.flush()
        self.sink.err.write(s + "\n")

    def flush(self):
        if self.rows:
            self._print_chunk()
        self.console.file.flush()

    def batch(self, b, crc_ok: bool):
        """One batch's row (its records follow through records())."""
        self._columns(BATCH_COLUMNS)
        last = b.base_offset + b.last_offset_delta
        control = b.attributes & ATTR_CONTROL
        kind = ("control" if control else "data") + (" txn" if b.attributes & ATTR_TRANSACTIONAL else "")
        summary = ""
        if control and not self.opts.deep:
            try:  # name what a control batch holds even without --deep-iteration (the first few records)
                summary = ", ".join(
                    dict.fromkeys(
                        _control_summary(r.key, r.value)[0] for r in islice(b.iter_records(), CONTROL_SUMMARY_RECORDS)
                    )
                )
            except Exception as e:  # shown, and the text/verify paths report it
                summary = f"error: {e}"
        elif b.producer_id >= 0:
            summary = f"producerId {b.producer_id} epoch {b.producer_epoch}"
        crc = Text("ok", style="green") if crc_ok else Text("INVALID", style="bold red")
        self._add(
            (
                str(b.base_offset) if last == b.base_offset else f"{b.base_offset}..{last}",
                str(b.position),
                _time(b.max_timestamp),
                str(b.leader_epoch),
                Text(kind, style="cyan") if control else kind,
                str(b.record_count),
                str(b.size),
                b.compression_name,
                crc,
                summary,
            )
        )

    def records(self, b, records, opts: Options, decode_metadata: bool):
        """Rows for some of a batch's records (--deep-iteration)."""
        for r in records:
            self._add(_record_row(b, r, decode_metadata))

    def doc(self, obj: dict):
        """A file that is not record batches: its JSON object as tables (its
        entries one per row, the other fields as field/value rows)."""
        fields = [(k, v) for k, v in obj.items() if k not in ("kind", "file", "mismatches") + LIST_FIELDS]
        if fields:
            self._columns(("field", "value"))
            for k, v in fields:
                self._add((k, json_line(v) if isinstance(v, (dict, list)) or v is None else str(v)))
            self.flush()
        for k in LIST_FIELDS:
            entries = obj.get(k)
            if entries is None:
                continue
            if not entries:
                self.line(f"no {k}")
                continue
            cols = tuple(entries[0])
            self._columns(cols + ("",))
            for e in entries:
                self._add(tuple("" if e.get(c) is None else str(e.get(c)) for c in cols) + ("",))
            self.flush()

    # -- rows and chunks -----------------------------------------------------
    def _columns(self, cols: tuple):
        if cols != self.columns:
            self.flush()
            self.columns = cols
            self.widths = [len(c) for c in cols]
            self.header_due = True

    def _add(self, row: tuple):
        for i, cell in enumerate(row[:-1]):  # the last column takes what the screen leaves
            n = cell.cell_len if isinstance(cell, Text) else len(cell)
            if n > self.widths[i]:
                self.widths[i] = n
        self.rows.append(row)
        if len(self.rows) >= CHUNK_ROWS:
            self._print_chunk()

    def _print_chunk(self):
        # On a narrow screen whole columns go, least useful first, rather than
        # Rich hiding whichever it likes (the CRC or the offset).
        n = len(self.columns)
        shown = [True] * n
        need = sum(w + 2 for w in self.widths[:-1]) + MIN_LAST
        for name in DROP_ORDER:
            if need <= self.console.width:
                break
            if name in self.columns[:-1]:
                i = self.columns.index(name)
                shown[i] = False
                need -= self.widths[i] + 2
        t = Table(
            box=box.SIMPLE_HEAD,
            show_header=self.header_due,
            show_edge=False,
            pad_edge=False,
            padding=(0, 1, 0, 0),
            header_style="bold",
        )  # a column: width + 1 pad + 1 divider
        # fixed widths (only ever growing): chunks line up, and Rich never has to choose
        rest = max(MIN_LAST, self.console.width - sum(w + 2 for w, on in zip(self.widths[:-1], shown) if on))
        for i, (c, w) in enumerate(zip(self.columns, self.widths)):
            if not shown[i]:
                continue
            if i == n - 1:  # the last column takes what the screen leaves, cut at its end
                t.add_column(c, overflow="ellipsis", no_wrap=True, width=rest)
            else:
                t.add_column(c, justify="right" if c in _RIGHT else "left", no_wrap=True, width=w)
        for row in self.rows:
            t.add_row(*(cell for i, cell in enumerate(row) if shown[i]))
        self.console.print(t)
        self.rows.clear()
        self.header_due = False
