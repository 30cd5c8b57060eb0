"""kafka-dump-log's text for offset and time indexes (DumpLogSegments.dumpIndex,
dumpTimeIndex), their mismatches included."""

from __future__ import annotations

import os
from typing import Iterator

from ..errors import InputError
from ..openfile import open_regular
from ..records.batch import Batch, BatchError, display_timestamp
from .index_lookup import KafkaFinder, KafkaOffsetLookup, first_batch_last_offset, last_offset_of
from .indexes import (
    DEFAULT_MAX_MESSAGE_SIZE,
    IndexScan,
    OFFSET_ENTRY_SIZE,
    TIME_ENTRY_SIZE,
    scan_entries,
    segment_base,
    sibling,
    size_message,
)


class IndexDump:
    """One .index or .timeindex file as kafka-dump-log prints it.

    Iterate for the stdout lines (streaming); then `stderr_lines()` gives the
    reports Kafka prints on stderr after the entries (mismatches, out of order
    timestamps, offsets not found), followed by our own lines for what Kafka
    would crash on (entries pointing at no batch) and for a bad size or a
    failed sanity check. `problems` counts the findings. The "Dumping <path>"
    line is the caller's.

    Deviations from Kafka, on purpose: the logical end also applies to an
    all-zero first entry (Kafka prints "offset: 0 position: 0" for a fresh
    active segment); the sanity check stops at the logical end (Kafka throws
    on every preallocated active time index); a missing sibling .index for a
    time index is treated as an empty one (Kafka creates the file, then
    throws); Kafka's reports are printed per file rather than for all files
    at the end of the run.
    """

    def __init__(
        self,
        path: str,
        time: bool,
        *,
        verify_only: bool = False,
        sanity_check: bool = False,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        base_offset: int | None = None,
        log_path: str | None = None,
        index_path: str | None = None,
        kafka: str = "4.3",
    ):
        self.path = path
        self.kafka = kafka  # whose words (kafka-dump-log 4.1 or 4.3) where they differ
        self.time = time
        self.verify_only = verify_only
        self.sanity_check = sanity_check
        self.max_message_size = max_message_size
        self.base = segment_base(path, base_offset)
        self.log_path = log_path or sibling(path, "log")
        self.index_path = index_path or sibling(path, "index")
        self.abs_path = os.path.abspath(path)
        self.scan = IndexScan(path, TIME_ENTRY_SIZE if time else OFFSET_ENTRY_SIZE, 0)
        self.mismatches: list[tuple[int, int]] = []  # (index offset, log offset), Kafka's order
        self.ts_mismatches: list[tuple[int, int]] = []  # (index timestamp, log timestamp)
        self.out_of_order: list[tuple[int, int]] = []  # (index timestamp, previous timestamp)
        self.not_found: list[tuple[int, int]] = []  # (index offset, found log offset or -1)
        self.invalid: list[str] = []  # entries Kafka would throw on
        self.errors: list[str] = []  # bad size, failed sanity check

    @property
    def problems(self) -> int:
        return (
            len(self.mismatches)
            + len(self.ts_mismatches)
            + len(self.out_of_order)
            + len(self.not_found)
            + len(self.invalid)
            + len(self.errors)
        )

    def __iter__(self) -> Iterator[str]:
        if self.sanity_check:
            yield from self._sanity()
        elif self.time:
            yield from self._dump_time()
        else:
            yield from self._dump_offsets()

    def _open_log(self):
        try:
            return open_regular(self.log_path, "a segment")
        except InputError as e:
            raise InputError(f"cannot open the segment's log to check {self.path} against: {e}") from None

    def _note_size(self):
        if self.scan.remainder:
            self.errors.append(size_message(self.path, self.time, self.scan.size))

    def _dump_offsets(self) -> Iterator[str]:
        with self._open_log() as log:
            log_size = os.fstat(log.fileno()).st_size
            mismatches = []
            empty = True
            for _, rel, position, _ in scan_entries(self.path, False, self.scan):
                empty = False
                offset = self.base + rel
                last, why = first_batch_last_offset(log, log_size, position, self.max_message_size)
                if last is None:
                    self.invalid.append(f"  Index offset: {offset}, position: {position}: {why}")
                elif last != offset:
                    mismatches.append((offset, last))
                if not self.verify_only:
                    yield f"offset: {offset} position: {position}"
            if empty:
                yield f"{self.path} is empty."
        self.mismatches = mismatches[::-1]  # Kafka prepends to a List: newest first
        self._note_size()

    def _dump_time(self) -> Iterator[str]:
        log = self._open_log()
        log.close()
        lookup = KafkaOffsetLookup(self.index_path, self.base)
        finder = KafkaFinder(self.log_path)
        try:
            prev_ts = -1
            for _, ts, rel, _ in scan_entries(self.path, True, self.scan):
                offset = self.base + rel
                batch, err = finder.find(lookup.position(offset), offset)
                if err is not None:
                    self.invalid.append(f"  Index timestamp: {ts}, offset: {offset}: {err}")
                elif batch is None:
                    self.not_found.append((offset, -1))
                elif last_offset_of(batch) != offset:
                    self.not_found.append((offset, last_offset_of(batch)))
                else:
                    max_ts, err = self._max_record_timestamp(batch)
                    if err is not None:
                        self.invalid.append(f"  Index timestamp: {ts}, offset: {offset}: {err}")
                    else:
                        if max_ts != ts:
                            self.ts_mismatches.append((ts, max_ts))
                        if prev_ts >= ts:
                            self.out_of_order.append((ts, prev_ts))
                if not self.verify_only:
                    yield f"timestamp: {ts} offset: {offset}"
                prev_ts = ts
        finally:
            finder.close()
            lookup.close()
        self._note_size()

    @staticmethod
    def _max_record_timestamp(batch) -> tuple[int, str | None]:
        if not isinstance(batch, Batch):
            return -1, f"the batch at position {batch.position} has magic {batch.magic}, not 2"
        try:
            ts = -1
            for r in batch.iter_records():
                ts = max(ts, display_timestamp(batch, r))
        except BatchError as e:
            return -1, f"the batch at position {batch.position} does not decode: {e}"
        return ts, None

    def _sanity(self) -> Iterator[str]:
        first = last = None
        for _, a, b, _ in scan_entries(self.path, self.time, self.scan):
            if first is None:
                first = (a, b)
            last = (a, b)
        abs_path = self.abs_path
        msg = None
        if self.time:
            if last is not None and first is not None and last[0] < first[0]:  # (set together)
                msg = (
                    f"Corrupt time index found, time index file ({abs_path}) has non-zero size but the last "
                    f"timestamp is {last[0]} which is less than the first timestamp {first[0]}"
                )
            elif last is not None and last[1] < 0:
                msg = (
                    f"Corrupt time index found, time index file ({abs_path}) has non-zero size but the last "
                    f"offset is {self.base + last[1]} which is less than the first offset {self.base}"
                )
        else:
            if last is None:
                yield f"{self.path} is empty."
                return
            if last[0] < 0:
                msg = (
                    f"Corrupt index found, index file {abs_path} has non-zero size but the last offset is "
                    f"{self.base + last[0]} which is less than the base offset {self.base}"
                )
        if msg is None and self.scan.remainder:
            msg = size_message(self.path, self.time, self.scan.size)
        if msg is None:
            yield f"{self.path} passed sanity check."
        else:
            self.errors.append(msg)

    def stderr_lines(self) -> list[str]:
        out: list[str] = []
        a = self.abs_path
        if self.mismatches:
            out.append(f"Mismatches in :{a}")
            out += [f"  Index offset: {i}, log offset: {o}" for i, o in self.mismatches]
        if self.ts_mismatches:
            out.append(f"Found timestamp mismatch in :{a}")
            out += [f"  Index timestamp: {i}, log timestamp: {o}" for i, o in self.ts_mismatches]
        if self.out_of_order:
            out.append(f"Found out of order timestamp in :{a}")
            out += [f"  Index timestamp: {i}, Previously indexed timestamp: {p}" for i, p in self.out_of_order]
        if self.not_found:
            out.append(
                "The following indexed offsets are not found in the log."
                if self.kafka == "4.1"
                else f"The following indexed offsets are not found in :{a}"
            )
            out += [f"Indexed offset: {i}, found log offset: {o}" for i, o in self.not_found]
        if self.invalid:
            out.append(f"Index entries that point at no readable batch in :{a}")
            out += self.invalid
        out += self.errors
        return out


def dump_time_index(path: str, **kw) -> IndexDump:
    """A streaming dump of a time index (see IndexDump for the options)."""
    return IndexDump(path, True, **kw)


def dump_index_lines(
    path: str,
    *,
    verify_only: bool = False,
    sanity_check: bool = False,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    base_offset: int | None = None,
) -> tuple[list[str], list[str]]:
    """kafka-dump-log's lines for an .index file: (stdout lines, stderr lines)."""
    d = IndexDump(
        path,
        False,
        verify_only=verify_only,
        sanity_check=sanity_check,
        max_message_size=max_message_size,
        base_offset=base_offset,
    )
    return list(d), d.stderr_lines()


def dump_timeindex_lines(
    path: str,
    *,
    verify_only: bool = False,
    sanity_check: bool = False,
    base_offset: int | None = None,
    kafka: str = "4.3",
) -> tuple[list[str], list[str]]:
    """kafka-dump-log's lines for a .timeindex file: (stdout lines, stderr lines)."""
    d = IndexDump(path, True, verify_only=verify_only, sanity_check=sanity_check, base_offset=base_offset, kafka=kafka)
    return list(d), d.stderr_lines()
