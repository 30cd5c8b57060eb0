"""verify's checks of offset and time indexes against their segment (the problem
kinds are listed in indexes.py)."""

from __future__ import annotations

import os

from ..errors import InputError
from ..records.batch import Batch
from .problems import Problem
from .index_lookup import LogWalker, last_offset_of
from .indexes import IndexScan, OFFSET_ENTRY_SIZE, TIME_ENTRY_SIZE, segment_base, scan_entries, sibling


def _gap_note(scan: IndexScan, path: str) -> str:
    return (
        f"{path}: the index ends at byte {scan.end_position} (an entry with relative offset 0), but "
        f"{scan.after_end} non-zero entr{'y' if scan.after_end == 1 else 'ies'} follow from byte "
        f"{scan.first_after_end}: writes were lost; Kafka still uses them, so they were checked too"
    )


def _check(
    index_path: str, log_path: str | None, base_offset: int | None, time: bool, notes: list[str] | None, check_entry
) -> list[Problem]:
    """The frame both checks share: every entry (those after a zero gap too)
    beside one forward walk of the log; a negative relative offset is reported
    here, the rest goes to check_entry(problem, walker, entry byte position,
    position or timestamp, absolute offset)."""
    base = segment_base(index_path, base_offset)
    scan = IndexScan(index_path, TIME_ENTRY_SIZE if time else OFFSET_ENTRY_SIZE, 0)
    log_path = log_path or sibling(index_path, "log")
    if not os.path.isfile(log_path):
        raise InputError(f"{index_path}: no segment log {log_path} to check it against")
    problems: list[Problem] = []

    def problem(pos, off, kind, msg):
        problems.append(Problem(index_path, pos, off, msg, kind))

    walker = LogWalker(log_path)
    try:
        for ip, x, y, _ in scan_entries(index_path, time, scan, "yield"):
            rel, value = (y, x) if time else (x, y)
            offset = base + rel
            if rel < 0:
                problem(
                    ip,
                    offset,
                    "index-offset-below-base",
                    f"relative offset {rel} is negative: offset {offset} is below the segment's base offset {base}",
                )
                continue
            check_entry(problem, walker, ip, value, offset)
    finally:
        walker.close()
    _finish(index_path, scan, time, problems, notes)
    return problems


def check_offset_index(
    index_path: str, log_path: str | None = None, base_offset: int | None = None, *, notes: list[str] | None = None
) -> list[Problem]:
    """Problems of an offset index against its log (see the module docstring for
    the rules and kinds). `notes` collects remarks that are not problems."""
    prev = None

    def entry(problem, walker, ip, position, offset):
        nonlocal prev
        if prev is not None:
            if offset <= prev[0]:
                problem(
                    ip,
                    offset,
                    "index-offset-decreasing",
                    f"offset {offset} is not greater than the previous entry's offset {prev[0]} (byte {prev[2]})",
                )
            if position <= prev[1]:
                problem(
                    ip,
                    offset,
                    "index-position-decreasing",
                    f"position {position} is not greater than the previous entry's position {prev[1]} (byte {prev[2]})",
                )
        prev = (offset, position, ip)
        if position < 0:
            problem(
                ip,
                offset,
                "index-not-batch-boundary",
                f"position {position} is negative; expected the position of a batch holding offset {offset}",
            )
            return
        walker.to_position(position)
        b = walker.cur
        if b is None and walker.prev is not None and position < walker.end:
            problem(
                ip,
                offset,
                "index-not-batch-boundary",
                f"position {position} is inside the log's last batch, which starts at "
                f"{walker.prev.position} and ends at {walker.end}; expected the position of a batch "
                f"holding offset {offset}",
            )
            return
        if b is None:
            end = walker.end
            detail = (
                f"the log has {walker.size} bytes"
                if end == walker.size
                else f"its batches end at byte {end} of {walker.size} ({walker.end_note})"
            )
            problem(
                ip,
                offset,
                "index-past-end",
                f"position {position} is at or past the end of the log's batches: {detail}; "
                f"expected the position of a batch holding offset {offset}",
            )
            return
        if b.position != position:
            before = walker.prev.position if walker.prev is not None else None
            problem(
                ip,
                offset,
                "index-not-batch-boundary",
                f"position {position} is not the start of a batch: batches start at "
                f"{before} and {b.position}; expected the position of a batch holding offset {offset}",
            )
            return
        last = last_offset_of(b)
        if b.base_offset > offset:
            problem(
                ip,
                offset,
                "index-offset-mismatch",
                f"the batch at position {position} starts at offset {b.base_offset}, after the "
                f"entry's offset {offset}; expected a batch starting at or before it",
            )
            return
        mismatch = (
            f"the batch at position {position} holds offsets {b.base_offset}..{last}, not ending at the "
            f"entry's offset {offset} (kafka-dump-log: Index offset: {offset}, log offset: {last})"
        )
        if last > offset:
            problem(ip, offset, "index-offset-mismatch", mismatch)
            return
        walker.to_offset(offset)
        c = walker.cur
        if last < offset and c is not None and c.base_offset <= offset:
            problem(
                ip,
                offset,
                "index-offset-mismatch",
                f"{mismatch}; offset {offset} is in the batch at {c.position}: Kafka before 4.1 wrote such "
                "entries when a follower appended several batches at once (KAFKA-806), and lookups still find it",
            )
        elif c is None:
            problem(
                ip,
                offset,
                "index-offset-not-found",
                f"offset {offset} is past the last offset in the log ({walker.max_last}); expected "
                f"an offset of a batch at or after position {position}",
            )
        elif c.base_offset > offset:
            problem(
                ip,
                offset,
                "index-offset-not-found",
                f"offset {offset} is in no batch: the batch at position {c.position} starts at "
                f"{c.base_offset} and the one before ends at {last_offset_of(walker.prev)}",
            )

    return _check(index_path, log_path, base_offset, False, notes, entry)


def check_time_index(
    index_path: str, log_path: str | None = None, base_offset: int | None = None, *, notes: list[str] | None = None
) -> list[Problem]:
    """Problems of a time index against its log (see the module docstring)."""
    prev = None

    def entry(problem, walker, ip, ts, offset):
        nonlocal prev
        if prev is not None:
            if ts <= prev[0]:
                problem(
                    ip,
                    offset,
                    "timeindex-out-of-order",
                    f"timestamp {ts} is not greater than the previous entry's timestamp {prev[0]} (byte {prev[2]})",
                )
            if offset < prev[1]:
                problem(
                    ip,
                    offset,
                    "index-offset-decreasing",
                    f"offset {offset} is less than the previous entry's offset {prev[1]} (byte {prev[2]})",
                )
        prev = (ts, offset, ip)
        walker.to_offset(offset)
        c = walker.cur
        if c is None:
            last = walker.max_last
            problem(
                ip,
                offset,
                "index-offset-not-found",
                f"offset {offset} is past the last offset in the log "
                f"({'none: no batches' if last is None else last}); expected an offset in the log",
            )
            return
        if c.base_offset > offset:
            problem(
                ip,
                offset,
                "index-offset-not-found",
                f"offset {offset} is in no batch: the batch at position {c.position} starts at "
                f"{c.base_offset}"
                + (f" and the one before ends at {last_offset_of(walker.prev)}" if walker.prev is not None else ""),
            )
            return
        if isinstance(c, Batch) and c.max_timestamp != ts:
            problem(
                ip,
                offset,
                "timeindex-timestamp-mismatch",
                f"timestamp {ts} differs from the max timestamp {c.max_timestamp} of the batch holding "
                f"offset {offset} (offsets {c.base_offset}..{c.last_offset} at log position "
                f"{c.position}); expected {c.max_timestamp}",
            )

    return _check(index_path, log_path, base_offset, True, notes, entry)


def _finish(path: str, scan: IndexScan, time: bool, problems: list[Problem], notes: list[str] | None):
    if scan.remainder:
        es = scan.entry_size
        problems.append(
            Problem(
                path,
                scan.size - scan.remainder,
                None,
                f"{scan.size} bytes is not a multiple of the entry size {es}: the last "
                f"{scan.remainder} bytes are a partial entry",
                "index-size",
            )
        )
    if scan.after_end and notes is not None:
        notes.append(_gap_note(scan, path))


# What kafka-dump-log's own reports (IndexDump.stderr_lines) already cover.
_DUMP_REPORTS = {
    "index-offset-mismatch",
    "index-offset-not-found",
    "index-past-end",
    "index-not-batch-boundary",
    "index-size",
    "index-offset-below-base",
    "timeindex-out-of-order",
    "timeindex-timestamp-mismatch",
}


def problems_beyond_dump(path: str, time: bool) -> list[Problem]:
    """The problems verify finds in an index that kafka-dump-log's reports do not
    cover (entries out of order whose batches are right): dump-log adds them, so
    that both commands give one answer for one index."""
    log = sibling(path, "log")
    if not os.path.isfile(log):
        return []
    check = check_time_index if time else check_offset_index
    return [p for p in check(path, log) if p.kind not in _DUMP_REPORTS]
