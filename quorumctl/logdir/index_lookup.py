"""How Kafka finds an index entry's batch in the segment's log (OffsetIndex
lookups, LogSegment's translateOffset): the log side of the index dump and checks."""

from __future__ import annotations

import os
from bisect import bisect_right

from ..errors import InputError
from ..openfile import open_regular
from ..records.batch import (
    HEADER_SIZE,
    HEADER_UP_TO_MAGIC,
    LAST_OFFSET_DELTA,
    LAST_OFFSET_DELTA_OFFSET,
    LENGTH_PREFIX,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    MIN_RECORD_OVERHEAD,
    Batch,
    BatchReader,
)
from .indexes import CHECKPOINT_EVERY, OFFSET_ENTRY, OFFSET_ENTRY_SIZE, WARM_BYTES


def last_offset_of(b) -> int:
    """A batch's last offset (a legacy entry's own offset)."""
    if isinstance(b, Batch):
        return b.last_offset
    if b.magic < 2 or len(b.data) < LAST_OFFSET_DELTA_OFFSET + LAST_OFFSET_DELTA.size:
        return b.base_offset  # legacy wrapper: its offset is the last offset
    return b.base_offset + LAST_OFFSET_DELTA.unpack_from(b.data, LAST_OFFSET_DELTA_OFFSET)[0]


def first_batch_last_offset(f, log_size: int, position: int, max_size: int) -> tuple[int | None, str]:
    """Kafka's `fileRecords.slice(position, maxMessageSize).batches.iterator.next().lastOffset`
    (FileRecords.slice, FileLogInputStream.nextBatch). Where Kafka throws, returns
    (None, why)."""
    if position < 0:
        return None, f"position {position} is negative"
    if position > log_size:
        return None, f"position {position} is past the end of the log ({log_size} bytes)"
    end = min(position + max_size, log_size)
    if position >= end - HEADER_UP_TO_MAGIC:
        if end == log_size:
            return None, f"no batch at position {position}: the log ends {log_size - position} bytes after it"
        return None, f"no batch at position {position} within --max-message-size {max_size}"
    head = os.pread(f.fileno(), HEADER_SIZE, position)
    base, size = LENGTH_PREFIX.unpack_from(head)
    if size < MIN_RECORD_OVERHEAD:
        return None, (
            f"batch size {size} at position {position} is smaller than the minimum record "
            f"overhead ({MIN_RECORD_OVERHEAD})"
        )
    if position > end - LOG_OVERHEAD - size:
        if end == log_size:
            return None, f"the batch at position {position} ({size + LOG_OVERHEAD} bytes) runs past the end of the log"
        return None, (
            f"the batch at position {position} ({size + LOG_OVERHEAD} bytes) is larger than "
            f"--max-message-size {max_size}"
        )
    if head[MAGIC_OFFSET] < 2:
        return base, ""
    if len(head) < HEADER_SIZE:
        return None, f"the batch header at position {position} is cut short by the end of the log"
    return base + LAST_OFFSET_DELTA.unpack_from(head, LAST_OFFSET_DELTA_OFFSET)[0], ""


class KafkaOffsetLookup:
    """OffsetIndex.lookup as kafka-dump-log runs it for a time index: over every
    entry of the file (preallocated zeros included), with AbstractIndex's
    warm-section binary search. A missing index behaves as an empty one."""

    def __init__(self, path: str, base_offset: int):
        self.base = base_offset
        self._f = None
        self.entries = 0
        try:
            self._f = open_regular(path, "an offset index")
            self.entries = os.fstat(self._f.fileno()).st_size // OFFSET_ENTRY_SIZE
        except (OSError, InputError):
            self._f = None
        self._cache: dict[int, tuple[int, int]] = {}

    def close(self):
        if self._f is not None:
            self._f.close()

    def _entry(self, n: int) -> tuple[int, int]:
        e = self._cache.get(n)
        if e is None:
            f = self._f
            assert f is not None  # without the file there are no entries to read
            rel, pos = OFFSET_ENTRY.unpack(os.pread(f.fileno(), OFFSET_ENTRY_SIZE, n * OFFSET_ENTRY_SIZE))
            e = (self.base + rel, pos)
            if len(self._cache) > 4096:
                self._cache.clear()
            self._cache[n] = e
        return e

    def position(self, target: int) -> int:
        n = self.entries
        if n == 0:
            return 0
        first_hot = max(0, n - 1 - WARM_BYTES // OFFSET_ENTRY_SIZE)
        if self._entry(first_hot)[0] < target:
            slot = self._search(target, first_hot, n - 1)
        elif self._entry(0)[0] > target:
            return 0  # slot -1: (baseOffset, 0)
        else:
            slot = self._search(target, 0, first_hot)
        return self._entry(slot)[1]

    def _search(self, target: int, lo: int, hi: int) -> int:
        while lo < hi:
            mid = (lo + hi + 1) >> 1
            found = self._entry(mid)[0]
            if found > target:
                hi = mid - 1
            elif found < target:
                lo = mid
            else:
                return mid
        return lo


class KafkaFinder:
    """`fileRecords.slice(P, Int.MaxValue).batches.find(_.lastOffset >= offset)`
    for a series of (P, offset) queries. One forward walk from the start of the
    log answers them while they move forward (the normal case, and the active
    segment's case where every lookup gives P = 0); anything else is a fresh
    scan from P, exactly as Kafka does it."""

    def __init__(self, log_path: str):
        self.path = log_path
        self._reader = BatchReader(log_path)
        self._it = iter(self._reader)
        self.pend = next(self._it, None)  # the next batch of the walk
        self.max_before = -1 << 63  # largest last offset among walked batches before pend
        self.landed: set[int] = {0} if self.pend is not None and self.pend.position == 0 else set()

    def _advance(self):
        self.max_before = max(self.max_before, last_offset_of(self.pend))
        self.pend = next(self._it, None)

    def _end_error(self, reader) -> str | None:
        s = reader.stop
        if s is not None and s.reason == "corrupt":
            return s.detail + f" at position {s.position}"
        return None

    def find(self, position: int, offset: int):
        """(batch or None, error or None)."""
        size = self._reader.file_size
        if position < 0 or position > size:  # FileRecords.slice throws
            return None, (f"the offset index gives position {position} for it, outside the log ({size} bytes)")
        if self.pend is not None and position >= self.pend.position:
            while self.pend is not None and self.pend.position < position:
                self._advance()
            if self.pend is None or self.pend.position != position:
                return self._fresh(position, offset)
            self.landed.add(position)
        elif (
            position not in self.landed
            or offset <= self.max_before
            or (self.pend is None and (stop := self._reader.stop) is not None and position >= stop.position)
        ):
            return self._fresh(position, offset)
        # scanning from `position` is now the same as continuing the walk
        while self.pend is not None and last_offset_of(self.pend) < offset:
            self._advance()
        if self.pend is None:
            return None, self._end_error(self._reader)
        return self.pend, None

    def _fresh(self, position: int, offset: int):
        reader = BatchReader(self.path, start=position)
        for b in reader:
            if last_offset_of(b) >= offset:
                reader.close()
                return b, None
        return None, self._end_error(reader)

    def close(self):
        self._reader.close()


class LogWalker:
    """Forward walk over a log's batches for the checks. An entry that points
    backwards restarts the walk from a checkpoint (one every 64 KiB of log),
    so memory stays bounded and a valid index reads the log once."""

    _reader: BatchReader  # the walk's reader, (re)made by _start

    def __init__(self, log_path: str):
        self.path = log_path
        self.size = os.path.getsize(log_path)
        self._cp_pos: list[int] = []
        self._cp_off: list[int] = []
        self.end: int | None = None  # where the walk stopped (the valid end of the log)
        self.end_note = ""
        self.max_last: int | None = None  # largest last offset walked
        self._start(0)

    def _start(self, position: int):
        if getattr(self, "_reader", None) is not None:
            self._reader.close()
        self.walk_start = position
        self._reader = BatchReader(self.path, start=position)
        self._it = iter(self._reader)
        self.prev = None  # the batch right before cur in this walk
        self.cur = None
        self._next()

    def _next(self):
        self.prev = self.cur
        b = next(self._it, None)
        self.cur = b
        if b is None:
            s = self._reader.stop
            assert s is not None  # a BatchReader says why it stopped when its iteration ends
            self.end = s.position
            self.end_note = s.detail if s.reason else ""
            return
        last = last_offset_of(b)
        if self.max_last is None or last > self.max_last:
            self.max_last = last
        if not self._cp_pos or b.position >= self._cp_pos[-1] + CHECKPOINT_EVERY:
            self._cp_pos.append(b.position)
            self._cp_off.append(b.base_offset)

    def to_position(self, position: int):
        """Make `cur` the first batch at or after `position` (None: past the end)."""
        lo = self.prev.position + 1 if self.prev is not None else self.walk_start
        if position < lo:
            i = bisect_right(self._cp_pos, position) - 1
            self._start(self._cp_pos[i] if i >= 0 else 0)
        while self.cur is not None and self.cur.position < position:
            self._next()

    def to_offset(self, offset: int):
        """Make `cur` the first batch whose last offset is >= `offset`."""
        if self.prev is not None:
            back = last_offset_of(self.prev) >= offset
        else:
            back = self.walk_start > 0 and (self.cur is None or self.cur.base_offset > offset)
        if back:
            i = bisect_right(self._cp_off, offset) - 1
            self._start(self._cp_pos[i] if i >= 0 else 0)
        while self.cur is not None and last_offset_of(self.cur) < offset:
            self._next()

    def close(self):
        self._reader.close()
