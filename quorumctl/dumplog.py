"""dump-log: stream one file after another to text (Kafka's lines) or JSON Lines.

Memory stays bounded by the largest batch: batches are read one at a time and
output is flushed every few thousand lines. Problems found while dumping
(invalid CRC, torn or zero tail, non-consecutive offsets, undecodable records)
do not stop the dump; they are reported on stderr and make the exit code 1.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field

from .errors import InputError
from .records.batch import Batch, BatchError, BatchReader, LegacyEntry
from .render import dumplog as R
from .render.output import json_line
from .storage import filekinds as K

FLUSH_LINES = 4096


@dataclass
class Result:
    problems: int = 0
    errors: list[str] = field(default_factory=list)


class Sink:
    """Buffered stdout/stderr writer (stdout lines are joined and written in blocks)."""

    def __init__(self, out=None, err=None):
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.buf: list[str] = []

    def line(self, s: str):
        self.buf.append(s)
        if len(self.buf) >= FLUSH_LINES:
            self.flush()

    def lines(self, ls):
        self.buf.extend(ls)
        if len(self.buf) >= FLUSH_LINES:
            self.flush()

    def flush(self):
        if self.buf:
            self.out.write("\n".join(self.buf) + "\n")
            self.buf.clear()

    def error(self, s: str):
        self.flush()
        self.err.write(s + "\n")


def header_line(path: str) -> str:
    kind = K.kind_of(path)
    if kind == K.BOOTSTRAP:
        return "KRaft bootstrap snapshot"
    if kind == K.SNAPSHOT:
        sid = K.snapshot_id(path)
        if sid is None:
            return "Snapshot end offset: unknown (the name is not <20-digit offset>-<10-digit epoch>.checkpoint)"
        return f"Snapshot end offset: {sid[0]}, epoch: {sid[1]}"
    base = K.base_offset_of(path)
    return f"Log starting offset: {base if base is not None else 'unknown (the name is not numeric)'}"


def dump_batches(path: str, opts: R.Options, sink: Sink, *, as_json: bool, max_bytes: int | None,
                 result: Result) -> None:
    """Dump one record-batch file (.log, snapshot .checkpoint, bootstrap.checkpoint)."""
    decode_json = opts.metadata_decoder or K.is_metadata_path(path)
    if not as_json:
        sink.line(header_line(path))
    reader = BatchReader(path, max_bytes=max_bytes)
    last_offset = None
    gaps: list[tuple[int, int]] = []
    start, end = opts.offset_start, opts.offset_end
    need_records = as_json or opts.records_needed
    deep = opts.deep or opts.print_data or opts.metadata_decoder
    for b in reader:
        if isinstance(b, LegacyEntry):
            if as_json:
                sink.line(json_line({"kind": "legacy-entry", "file": path, "position": b.position,
                                     "offset": b.base_offset, "magic": b.magic, "size": b.size}))
            else:
                sink.line(R.legacy_line(b))
            continue
        if (start is not None and b.base_offset + b.last_offset_delta < start) or \
                (end is not None and b.base_offset > end):
            continue
        crc_ok = b.crc_valid()
        if not crc_ok:
            result.problems += 1
        records = None
        error = None
        if need_records:
            try:
                records = b.records()
            except BatchError as e:
                error = str(e)
                result.problems += 1
                sink.error(f"quorumctl: {path}: position {e.pos}: {e}")
            if records is not None:
                if opts.deep or opts.print_data or opts.metadata_decoder:
                    for r in records:  # Kafka checks consecutive offsets in deep iteration
                        if last_offset is not None and r.offset != last_offset + 1:
                            gaps.append((last_offset, r.offset))
                        last_offset = r.offset
                if start is not None or end is not None:
                    records = [r for r in records if (start is None or r.offset >= start)
                               and (end is None or r.offset <= end)]
                if opts.record_types is not None:
                    records = [r for r in records if R.matches_type(b, r, opts)]
                    if not records:
                        continue
        if as_json:
            sink.line(json_line(R.batch_json(path, b, records, crc_ok, decode_json, error)))
        else:
            sink.line(R.batch_line(b, crc_ok))
            if deep and records:
                R.record_lines(b, records, opts, sink.buf)
                if len(sink.buf) >= FLUSH_LINES:
                    sink.flush()
    stop = reader.stop
    if stop is not None and stop.reason == "corrupt":
        result.problems += 1
        msg = f"{path}: position {stop.position}: {stop.detail}"
        if as_json:
            sink.line(json_line({"kind": "problem", "file": path, "position": stop.position,
                                 "problem": "corrupt-batch-length", "message": stop.detail}))
        sink.error(f"quorumctl: {msg}")
    elif stop is not None and stop.reason and max_bytes is None:
        result.problems += 1
        if as_json:
            sink.line(json_line({"kind": "problem", "file": path, "position": stop.position,
                                 "problem": "invalid-bytes-at-end", "bytes": stop.remaining,
                                 "message": stop.detail}))
        else:
            sink.line(f"Found {stop.remaining} invalid bytes at the end of {os.path.basename(path)}")
    if gaps:
        result.problems += 1
        if as_json:
            for a, z in gaps:
                sink.line(json_line({"kind": "problem", "file": path, "problem": "non-consecutive-offsets",
                                     "offset": a, "next": z}))
        else:
            sink.error(f"Non-consecutive offsets in {os.path.abspath(path)}")
            for a, z in gaps:
                sink.error(f"  {a} is followed by {z}")


def check_readable(path: str) -> None:
    if not os.path.exists(path):
        raise InputError(f"{path}: no such file or directory")
    if not os.access(path, os.R_OK):
        raise InputError(f"{path}: permission denied")


BATCH_KINDS = (K.LOG, K.SNAPSHOT, K.BOOTSTRAP)


def run(paths: list[str], *, deep=False, print_data=False, metadata_decoder=False,
        skip_record_metadata=False, max_bytes=None, offset_start=None, offset_end=None,
        record_types=None, verify_index_only=False, index_sanity_check=False,
        max_message_size=5 * 1024 * 1024, output=None, sink: Sink | None = None) -> int:
    """Dump every path; returns the exit code (0 clean, 1 problems seen, 2 bad input)."""
    from .render.output import Output, resolve

    out_mode = resolve(output)
    if not paths:
        raise InputError("no files given (pass FILE_OR_DIR... or --files)")
    for p in paths:
        check_readable(p)
    opts = R.Options(
        deep=deep or print_data or metadata_decoder,
        print_data=print_data or metadata_decoder,
        metadata_decoder=metadata_decoder,
        skip_record_metadata=skip_record_metadata,
        offset_start=offset_start, offset_end=offset_end,
        record_types=frozenset(t.upper() for t in record_types) if record_types else None,
    )
    sink = sink or Sink()
    result = Result()
    as_json = out_mode is Output.json
    if out_mode is Output.table:
        from .render.dumplog_table import TableSink
        sink = TableSink(sink, opts)
    for path in K.expand(paths):
        kind = K.kind_of(path)
        if not as_json:
            sink.line(f"Dumping {path}")
        try:
            if kind in BATCH_KINDS:
                dump_batches(path, opts, sink, as_json=as_json, max_bytes=max_bytes, result=result)
            else:
                dump_other(path, kind, sink, as_json=as_json, result=result, opts=opts,
                           verify_index_only=verify_index_only, index_sanity_check=index_sanity_check,
                           max_message_size=max_message_size)
        except InputError as e:
            result.problems += 1
            result.errors.append(str(e))
            sink.error(f"quorumctl: error: {e}")
        except OSError as e:
            result.errors.append(str(e))
            sink.error(f"quorumctl: error: {path}: {e.strerror or e}")
    sink.flush()
    if result.errors and not result.problems:
        return 2
    return 1 if result.problems or result.errors else 0


def dump_other(path, kind, sink: Sink, *, as_json, result, opts, verify_index_only,
               index_sanity_check, max_message_size) -> None:
    if kind == K.UNKNOWN or kind == K.OFFSET_CHECKPOINT:
        sink.error(f"Ignoring unknown file {path}")
        return
    raise InputError(f"{path}: dumping {kind} files is not implemented yet")
