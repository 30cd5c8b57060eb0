"""Offset (.index) and time (.timeindex) indexes: streaming readers, the
writer (LogSegment.recover's entries), Kafka's dump-log text and checks
against the segment's log.

Layouts (Kafka's storage/.../OffsetIndex.java, TimeIndex.java; big-endian):
  .index      8 bytes per entry: int32 relative offset, int32 byte position in the .log
  .timeindex 12 bytes per entry: int64 timestamp, int32 relative offset

The active segment's files are preallocated (10 MB of zeros) and trimmed on
roll/close. The logical end of an index is therefore the first entry whose
relative offset is 0 after the first entry (kafka-dump-log's rule), or an
all-zero first entry (an index with no entries yet). Everything after it is
preallocation: read in chunks, never a problem. Kafka itself maps
`size // entry_size` entries, so the few non-zero entries that can sit after a
zero gap (lost writes, seen in real data) are still used by its lookups; the
checks examine them too and report the gap as a note.

What an entry means, and the one rule both `verify` and `dump-log` apply:
  offset entry (O, P): valid iff a batch starts at P and ends at O. That is what
      LogSegment.recover always writes (batch.lastOffset, its position), what
      LogSegment.append writes since Kafka 4.1 (KAFKA-806: an entry per batch),
      and what kafka-dump-log checks ("Mismatches in ... Index offset: O, log
      offset: L", DumpLogSegments.dumpIndex). Before 4.1, a follower appending
      several batches at once wrote (last offset of the append, position of its
      first batch): reported too, with that explanation (lookups still find O by
      scanning forward; none of the 644 real indexes of the corpus has one).
      The broker's own sanity check (OffsetIndex.sanityCheck) only asks that the
      last offset be at or above the base offset and the size a multiple of 8.
  time entry (T, O): T is the largest timestamp in the segment so far and O the
      offset where it was seen: the last offset of its batch, or (older brokers)
      the offset of the record. Valid iff O is in a batch whose max timestamp
      is T; timestamps strictly increase (TimeIndex.maybeAppend), offsets do
      not decrease.

Problem kinds reported by the checks (Problem.position is the byte position
of the entry in the index file):
  index-size                 size not a multiple of the entry size
  index-offset-below-base    negative relative offset
  index-offset-decreasing    offset not increasing (time index: decreasing)
  index-position-decreasing  position not increasing
  index-past-end             position at or past the end of the log's batches
  index-not-batch-boundary   position in the middle of a batch
  index-offset-mismatch      the batch at the position does not end at the offset
  index-offset-not-found     the offset is in no batch (past the end, or a gap)
  timeindex-out-of-order     timestamp not greater than the previous one
  timeindex-timestamp-mismatch  timestamp differs from its batch's max timestamp
"""

from __future__ import annotations

import os
import struct
from bisect import bisect_right
from dataclasses import dataclass
from typing import Iterator

from ..errors import InputError
from ..openfile import open_regular
from ..records.batch import (HEADER_SIZE, HEADER_UP_TO_MAGIC, LAST_OFFSET_DELTA, LAST_OFFSET_DELTA_OFFSET,
                             LENGTH_PREFIX, LOG_OVERHEAD, MAGIC_OFFSET, MIN_RECORD_OVERHEAD, Batch,
                             BatchError, BatchReader, display_timestamp)
from . import filekinds
from .problems import Problem

OFFSET_ENTRY_SIZE = 8
TIME_ENTRY_SIZE = 12
DEFAULT_MAX_MESSAGE_SIZE = 5 * 1024 * 1024    # kafka-dump-log --max-message-size default
INDEX_INTERVAL_BYTES = 4096                   # index.interval.bytes default
WARM_BYTES = 8192                             # AbstractIndex.warmEntries() = 8192 / entrySize
_CHUNK = 24 * 2730                            # 65520: a multiple of both entry sizes
_CHECKPOINT_EVERY = 1 << 16                   # log walker restart points, in bytes

_OFFSET = struct.Struct(">ii")
_TIME = struct.Struct(">qi")


# -- reading -------------------------------------------------------------------

@dataclass
class IndexScan:
    """What one pass over an index file found (complete once its iterator is exhausted)."""

    path: str
    entry_size: int
    size: int
    entries: int = 0                  # logical entries: up to the end rule above
    nonzero_entries: int = 0          # entries with any non-zero byte, in the whole file
    end_position: int | None = None   # byte position of the entry that ended the index
    after_end: int = 0                # non-zero entries after the logical end
    first_after_end: int | None = None  # byte position of the first of them

    @property
    def file_entries(self) -> int:
        """Entries Kafka maps: whole entries in the file, preallocation included."""
        return self.size // self.entry_size

    @property
    def remainder(self) -> int:
        return self.size % self.entry_size


def _base(path: str, base_offset: int | None) -> int:
    if base_offset is not None:
        return base_offset
    b = filekinds.base_offset_of(path)
    if b is None:
        raise InputError(f"{path}: the file name does not start with the segment's base offset "
                         f"(<20 digits>.{os.path.basename(path).rsplit('.', 1)[-1]})")
    return b


def _entries(path: str, time: bool, scan: IndexScan, rest: str = "stop") -> Iterator[tuple[int, int, int, bool]]:
    """(byte position, a, b, after_end) per entry, where (a, b) is (relative
    offset, position) or (timestamp, relative offset). What happens at the
    logical end depends on `rest`: "stop" reads no further; "count" reads the
    rest of the file to count its non-zero entries; "yield" also yields them
    (with after_end=True). All-zero entries after the end are preallocation."""
    es = TIME_ENTRY_SIZE if time else OFFSET_ENTRY_SIZE
    st = _TIME if time else _OFFSET
    ri, oi = (1, 0) if time else (0, 1)      # where the relative offset is, and the other field
    zero = bytes(es)
    with open_regular(path, "an index file") as f:
        scan.size = os.fstat(f.fileno()).st_size
        pos = 0                               # file position of chunk[0]
        ended = False
        while True:
            chunk = f.read(_CHUNK)
            if not chunk:
                return
            whole = len(chunk) - len(chunk) % es
            start = 0
            if not ended:
                for e in st.iter_unpack(chunk[:whole]):
                    if e[ri] == 0 and (pos + start > 0 or e[oi] == 0):
                        ended = True
                        scan.end_position = pos + start
                        break
                    scan.entries += 1
                    scan.nonzero_entries += 1
                    yield pos + start, e[0], e[1], False
                    start += es
                if ended and rest == "stop":
                    return
            if ended and chunk.count(0, start, whole) != whole - start:
                for j in range(start, whole, es):
                    if chunk[j:j + es] != zero:
                        scan.after_end += 1
                        scan.nonzero_entries += 1
                        if scan.first_after_end is None:
                            scan.first_after_end = pos + j
                        if rest == "yield":
                            a, b = st.unpack_from(chunk, j)
                            yield pos + j, a, b, True
            pos += len(chunk)


def scan_index(path: str, time: bool = False) -> IndexScan:
    """Statistics of a whole index file (entries, non-zero entries, size)."""
    scan = IndexScan(path, TIME_ENTRY_SIZE if time else OFFSET_ENTRY_SIZE, 0)
    for _ in _entries(path, time, scan, "count"):
        pass
    return scan


def iter_offset_index(path: str, base_offset: int | None = None,
                      scan: IndexScan | None = None) -> Iterator[tuple[int, int]]:
    """(absolute offset, position) for each entry up to the logical end, streaming."""
    base = _base(path, base_offset)
    scan = scan or IndexScan(path, OFFSET_ENTRY_SIZE, 0)
    for _, rel, position, _ in _entries(path, False, scan):
        yield base + rel, position


def iter_time_index(path: str, base_offset: int | None = None,
                    scan: IndexScan | None = None) -> Iterator[tuple[int, int]]:
    """(timestamp, absolute offset) for each entry up to the logical end, streaming."""
    base = _base(path, base_offset)
    scan = scan or IndexScan(path, TIME_ENTRY_SIZE, 0)
    for _, ts, rel, _ in _entries(path, True, scan):
        yield ts, base + rel


def _size_message(path: str, time: bool, size: int) -> str:
    # AbstractIndex.sanityCheck's texts (OffsetIndex, TimeIndex)
    if time:
        return (f"Time index file {os.path.abspath(path)} is corrupt, found {size} bytes which is neither "
                f"positive nor a multiple of {TIME_ENTRY_SIZE}")
    return (f"Index file {os.path.abspath(path)} is corrupt, found {size} bytes which is neither positive "
            f"nor a multiple of {OFFSET_ENTRY_SIZE}")


def read_offset_index(path: str, base_offset: int | None = None) -> list[tuple[int, int]]:
    """[(absolute offset, position)] up to the logical end. A size that is not a
    multiple of 8 is an InputError with Kafka's sanity-check text."""
    scan = IndexScan(path, OFFSET_ENTRY_SIZE, 0)
    out = list(iter_offset_index(path, base_offset, scan))
    if scan.remainder:
        raise InputError(_size_message(path, False, scan.size))
    return out


def read_time_index(path: str, base_offset: int | None = None) -> list[tuple[int, int]]:
    """[(timestamp, absolute offset)] up to the logical end. A size that is not
    a multiple of 12 is an InputError with Kafka's sanity-check text."""
    scan = IndexScan(path, TIME_ENTRY_SIZE, 0)
    out = list(iter_time_index(path, base_offset, scan))
    if scan.remainder:
        raise InputError(_size_message(path, True, scan.size))
    return out


# -- writing -------------------------------------------------------------------

def offset_index_bytes(entries, base_offset: int) -> bytes:
    """An .index holding (absolute offset, position) entries, trimmed (no preallocation)."""
    return b"".join(_OFFSET.pack(o - base_offset, p) for o, p in entries)


def time_index_bytes(entries, base_offset: int) -> bytes:
    """A .timeindex holding (timestamp, absolute offset) entries, trimmed."""
    return b"".join(_TIME.pack(t, o - base_offset) for t, o in entries)


def build_indexes(batches, base_offset: int, interval: int = INDEX_INTERVAL_BYTES) -> tuple[list, list]:
    """The (offset index, time index) entries LogSegment.recover writes for a
    segment's batches (anything with last_offset, size and max_timestamp): an
    offset entry (batch last offset -> position) and a time entry once more than
    `interval` bytes have passed, and a final time entry for the largest timestamp."""
    oidx: list[tuple[int, int]] = []
    tidx: list[tuple[int, int]] = []
    valid = 0
    last_entry = 0
    max_ts, max_ts_off = -1, -1

    def maybe_append_time(ts, off):
        if ts < 0:
            return
        if not tidx or ts > tidx[-1][0]:
            tidx.append((ts, off))

    for b in batches:
        if b.max_timestamp > max_ts:
            max_ts, max_ts_off = b.max_timestamp, b.last_offset
        if valid - last_entry > interval:
            oidx.append((b.last_offset, valid))
            maybe_append_time(max_ts, max_ts_off)
            last_entry = valid
        valid += b.size
    maybe_append_time(max_ts, max_ts_off)
    return oidx, tidx


def sibling(path: str, suffix: str) -> str:
    """The same segment's file with another suffix (Kafka: name up to the first dot);
    a renamed file's sibling is renamed the same way (Kafka renames a segment's files together)."""
    name = os.path.basename(path).split(".", 1)[0] + "." + suffix + (filekinds.renamed(path) or "")
    return os.path.join(os.path.dirname(path), name)


# -- the log side ------------------------------------------------------------

def _last_offset(b) -> int:
    if isinstance(b, Batch):
        return b.last_offset
    if b.magic < 2 or len(b.data) < LAST_OFFSET_DELTA_OFFSET + LAST_OFFSET_DELTA.size:
        return b.base_offset            # legacy wrapper: its offset is the last offset
    return b.base_offset + LAST_OFFSET_DELTA.unpack_from(b.data, LAST_OFFSET_DELTA_OFFSET)[0]


def _first_batch_last_offset(f, log_size: int, position: int, max_size: int) -> tuple[int | None, str]:
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
        return None, (f"batch size {size} at position {position} is smaller than the minimum record "
                      f"overhead ({MIN_RECORD_OVERHEAD})")
    if position > end - LOG_OVERHEAD - size:
        if end == log_size:
            return None, f"the batch at position {position} ({size + LOG_OVERHEAD} bytes) runs past the end of the log"
        return None, (f"the batch at position {position} ({size + LOG_OVERHEAD} bytes) is larger than "
                      f"--max-message-size {max_size}")
    if head[MAGIC_OFFSET] < 2:
        return base, ""
    if len(head) < HEADER_SIZE:
        return None, f"the batch header at position {position} is cut short by the end of the log"
    return base + LAST_OFFSET_DELTA.unpack_from(head, LAST_OFFSET_DELTA_OFFSET)[0], ""


class _KafkaOffsetLookup:
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
            rel, pos = _OFFSET.unpack(os.pread(self._f.fileno(), OFFSET_ENTRY_SIZE, n * OFFSET_ENTRY_SIZE))
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
            return 0                        # slot -1: (baseOffset, 0)
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


class _KafkaFinder:
    """`fileRecords.slice(P, Int.MaxValue).batches.find(_.lastOffset >= offset)`
    for a series of (P, offset) queries. One forward walk from the start of the
    log answers them while they move forward (the normal case, and the active
    segment's case where every lookup gives P = 0); anything else is a fresh
    scan from P, exactly as Kafka does it."""

    def __init__(self, log_path: str):
        self.path = log_path
        self._reader = BatchReader(log_path)
        self._it = iter(self._reader)
        self.pend = next(self._it, None)       # the next batch of the walk
        self.max_before = -1 << 63             # largest last offset among walked batches before pend
        self.landed: set[int] = {0} if self.pend is not None and self.pend.position == 0 else set()

    def _advance(self):
        self.max_before = max(self.max_before, _last_offset(self.pend))
        self.pend = next(self._it, None)

    def _end_error(self, reader) -> str | None:
        s = reader.stop
        if s is not None and s.reason == "corrupt":
            return s.detail + f" at position {s.position}"
        return None

    def find(self, position: int, offset: int):
        """(batch or None, error or None)."""
        size = self._reader.file_size
        if position < 0 or position > size:    # FileRecords.slice throws
            return None, (f"the offset index gives position {position} for it, outside the log "
                          f"({size} bytes)")
        if self.pend is not None and position >= self.pend.position:
            while self.pend is not None and self.pend.position < position:
                self._advance()
            if self.pend is None or self.pend.position != position:
                return self._fresh(position, offset)
            self.landed.add(position)
        elif position not in self.landed or offset <= self.max_before or (
                self.pend is None and position >= self._reader.stop.position):
            return self._fresh(position, offset)
        # scanning from `position` is now the same as continuing the walk
        while self.pend is not None and _last_offset(self.pend) < offset:
            self._advance()
        if self.pend is None:
            return None, self._end_error(self._reader)
        return self.pend, None

    def _fresh(self, position: int, offset: int):
        reader = BatchReader(self.path, start=position)
        for b in reader:
            if _last_offset(b) >= offset:
                reader.close()
                return b, None
        return None, self._end_error(reader)

    def close(self):
        self._reader.close()


class _LogWalker:
    """Forward walk over a log's batches for the checks. An entry that points
    backwards restarts the walk from a checkpoint (one every 64 KiB of log),
    so memory stays bounded and a valid index reads the log once."""

    def __init__(self, log_path: str):
        self.path = log_path
        self.size = os.path.getsize(log_path)
        self._cp_pos: list[int] = []
        self._cp_off: list[int] = []
        self.end: int | None = None          # where the walk stopped (the valid end of the log)
        self.end_note = ""
        self.max_last: int | None = None     # largest last offset walked
        self._start(0)

    def _start(self, position: int):
        if getattr(self, "_reader", None) is not None:
            self._reader.close()
        self.walk_start = position
        self._reader = BatchReader(self.path, start=position)
        self._it = iter(self._reader)
        self.prev = None                      # the batch right before cur in this walk
        self.cur = None
        self._next()

    def _next(self):
        self.prev = self.cur
        b = next(self._it, None)
        self.cur = b
        if b is None:
            s = self._reader.stop
            self.end = s.position
            self.end_note = s.detail if s.reason else ""
            return
        last = _last_offset(b)
        if self.max_last is None or last > self.max_last:
            self.max_last = last
        if not self._cp_pos or b.position >= self._cp_pos[-1] + _CHECKPOINT_EVERY:
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
            back = _last_offset(self.prev) >= offset
        else:
            back = self.walk_start > 0 and (self.cur is None or self.cur.base_offset > offset)
        if back:
            i = bisect_right(self._cp_off, offset) - 1
            self._start(self._cp_pos[i] if i >= 0 else 0)
        while self.cur is not None and _last_offset(self.cur) < offset:
            self._next()

    def close(self):
        self._reader.close()


# -- kafka-dump-log text -------------------------------------------------------

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

    def __init__(self, path: str, time: bool, *, verify_only: bool = False, sanity_check: bool = False,
                 max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE, base_offset: int | None = None,
                 log_path: str | None = None, index_path: str | None = None):
        self.path = path
        self.time = time
        self.verify_only = verify_only
        self.sanity_check = sanity_check
        self.max_message_size = max_message_size
        self.base = _base(path, base_offset)
        self.log_path = log_path or sibling(path, "log")
        self.index_path = index_path or sibling(path, "index")
        self.abs_path = os.path.abspath(path)
        self.scan = IndexScan(path, TIME_ENTRY_SIZE if time else OFFSET_ENTRY_SIZE, 0)
        self.mismatches: list[tuple[int, int]] = []       # (index offset, log offset), Kafka's order
        self.ts_mismatches: list[tuple[int, int]] = []    # (index timestamp, log timestamp)
        self.out_of_order: list[tuple[int, int]] = []     # (index timestamp, previous timestamp)
        self.not_found: list[tuple[int, int]] = []        # (index offset, found log offset or -1)
        self.invalid: list[str] = []                      # entries Kafka would throw on
        self.errors: list[str] = []                       # bad size, failed sanity check

    @property
    def problems(self) -> int:
        return (len(self.mismatches) + len(self.ts_mismatches) + len(self.out_of_order) + len(self.not_found)
                + len(self.invalid) + len(self.errors))

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
            self.errors.append(_size_message(self.path, self.time, self.scan.size))

    def _dump_offsets(self) -> Iterator[str]:
        with self._open_log() as log:
            log_size = os.fstat(log.fileno()).st_size
            mismatches = []
            empty = True
            for _, rel, position, _ in _entries(self.path, False, self.scan):
                empty = False
                offset = self.base + rel
                last, why = _first_batch_last_offset(log, log_size, position, self.max_message_size)
                if last is None:
                    self.invalid.append(f"  Index offset: {offset}, position: {position}: {why}")
                elif last != offset:
                    mismatches.append((offset, last))
                if not self.verify_only:
                    yield f"offset: {offset} position: {position}"
            if empty:
                yield f"{self.path} is empty."
        self.mismatches = mismatches[::-1]      # Kafka prepends to a List: newest first
        self._note_size()

    def _dump_time(self) -> Iterator[str]:
        log = self._open_log()
        log.close()
        lookup = _KafkaOffsetLookup(self.index_path, self.base)
        finder = _KafkaFinder(self.log_path)
        try:
            prev_ts = -1
            for _, ts, rel, _ in _entries(self.path, True, self.scan):
                offset = self.base + rel
                batch, err = finder.find(lookup.position(offset), offset)
                if err is not None:
                    self.invalid.append(f"  Index timestamp: {ts}, offset: {offset}: {err}")
                elif batch is None:
                    self.not_found.append((offset, -1))
                elif _last_offset(batch) != offset:
                    self.not_found.append((offset, _last_offset(batch)))
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
        for _, a, b, _ in _entries(self.path, self.time, self.scan):
            if first is None:
                first = (a, b)
            last = (a, b)
        abs_path = self.abs_path
        msg = None
        if self.time:
            if last is not None and last[0] < first[0]:
                msg = (f"Corrupt time index found, time index file ({abs_path}) has non-zero size but the last "
                       f"timestamp is {last[0]} which is less than the first timestamp {first[0]}")
            elif last is not None and last[1] < 0:
                msg = (f"Corrupt time index found, time index file ({abs_path}) has non-zero size but the last "
                       f"offset is {self.base + last[1]} which is less than the first offset {self.base}")
        else:
            if last is None:
                yield f"{self.path} is empty."
                return
            if last[0] < 0:
                msg = (f"Corrupt index found, index file {abs_path} has non-zero size but the last offset is "
                       f"{self.base + last[0]} which is less than the base offset {self.base}")
        if msg is None and self.scan.remainder:
            msg = _size_message(self.path, self.time, self.scan.size)
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
            out.append("The following indexed offsets are not found in the log.")
            out += [f"Indexed offset: {i}, found log offset: {o}" for i, o in self.not_found]
        if self.invalid:
            out.append(f"Index entries that point at no readable batch in :{a}")
            out += self.invalid
        out += self.errors
        return out


def dump_index(path: str, **kw) -> IndexDump:
    """A streaming dump of an offset index (see IndexDump for the options)."""
    return IndexDump(path, False, **kw)


def dump_time_index(path: str, **kw) -> IndexDump:
    """A streaming dump of a time index (see IndexDump for the options)."""
    return IndexDump(path, True, **kw)


def dump_index_lines(path: str, *, verify_only: bool = False, sanity_check: bool = False,
                     max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
                     base_offset: int | None = None) -> tuple[list[str], list[str]]:
    """kafka-dump-log's lines for an .index file: (stdout lines, stderr lines)."""
    d = IndexDump(path, False, verify_only=verify_only, sanity_check=sanity_check,
                  max_message_size=max_message_size, base_offset=base_offset)
    return list(d), d.stderr_lines()


def dump_timeindex_lines(path: str, *, verify_only: bool = False, sanity_check: bool = False,
                         base_offset: int | None = None) -> tuple[list[str], list[str]]:
    """kafka-dump-log's lines for a .timeindex file: (stdout lines, stderr lines)."""
    d = IndexDump(path, True, verify_only=verify_only, sanity_check=sanity_check, base_offset=base_offset)
    return list(d), d.stderr_lines()


# -- checks for verify -----------------------------------------------------------

def _gap_note(scan: IndexScan, path: str) -> str:
    return (f"{path}: the index ends at byte {scan.end_position} (an entry with relative offset 0), but "
            f"{scan.after_end} non-zero entr{'y' if scan.after_end == 1 else 'ies'} follow from byte "
            f"{scan.first_after_end}: writes were lost; Kafka still uses them, so they were checked too")


def _check(index_path: str, log_path: str | None, base_offset: int | None, time: bool,
           notes: list[str] | None, check_entry) -> list[Problem]:
    """The frame both checks share: every entry (those after a zero gap too)
    beside one forward walk of the log; a negative relative offset is reported
    here, the rest goes to check_entry(problem, walker, entry byte position,
    position or timestamp, absolute offset)."""
    base = _base(index_path, base_offset)
    scan = IndexScan(index_path, TIME_ENTRY_SIZE if time else OFFSET_ENTRY_SIZE, 0)
    log_path = log_path or sibling(index_path, "log")
    if not os.path.isfile(log_path):
        raise InputError(f"{index_path}: no segment log {log_path} to check it against")
    problems: list[Problem] = []

    def problem(pos, off, kind, msg):
        problems.append(Problem(index_path, pos, off, msg, kind))

    walker = _LogWalker(log_path)
    try:
        for ip, x, y, _ in _entries(index_path, time, scan, "yield"):
            rel, value = (y, x) if time else (x, y)
            offset = base + rel
            if rel < 0:
                problem(ip, offset, "index-offset-below-base",
                        f"relative offset {rel} is negative: offset {offset} is below the segment's base "
                        f"offset {base}")
                continue
            check_entry(problem, walker, ip, value, offset)
    finally:
        walker.close()
    _finish(index_path, scan, time, problems, notes)
    return problems


def check_offset_index(index_path: str, log_path: str | None = None, base_offset: int | None = None, *,
                       notes: list[str] | None = None) -> list[Problem]:
    """Problems of an offset index against its log (see the module docstring for
    the rules and kinds). `notes` collects remarks that are not problems."""
    prev = None

    def entry(problem, walker, ip, position, offset):
        nonlocal prev
        if prev is not None:
            if offset <= prev[0]:
                problem(ip, offset, "index-offset-decreasing",
                        f"offset {offset} is not greater than the previous entry's offset {prev[0]} "
                        f"(byte {prev[2]})")
            if position <= prev[1]:
                problem(ip, offset, "index-position-decreasing",
                        f"position {position} is not greater than the previous entry's position "
                        f"{prev[1]} (byte {prev[2]})")
        prev = (offset, position, ip)
        if position < 0:
            problem(ip, offset, "index-not-batch-boundary",
                    f"position {position} is negative; expected the position of a batch holding offset {offset}")
            return
        walker.to_position(position)
        b = walker.cur
        if b is None and walker.prev is not None and position < walker.end:
            problem(ip, offset, "index-not-batch-boundary",
                    f"position {position} is inside the log's last batch, which starts at "
                    f"{walker.prev.position} and ends at {walker.end}; expected the position of a batch "
                    f"holding offset {offset}")
            return
        if b is None:
            end = walker.end
            detail = (f"the log has {walker.size} bytes" if end == walker.size
                      else f"its batches end at byte {end} of {walker.size} ({walker.end_note})")
            problem(ip, offset, "index-past-end",
                    f"position {position} is at or past the end of the log's batches: {detail}; "
                    f"expected the position of a batch holding offset {offset}")
            return
        if b.position != position:
            before = walker.prev.position if walker.prev is not None else None
            problem(ip, offset, "index-not-batch-boundary",
                    f"position {position} is not the start of a batch: batches start at "
                    f"{before} and {b.position}; expected the position of a batch holding offset {offset}")
            return
        last = _last_offset(b)
        if b.base_offset > offset:
            problem(ip, offset, "index-offset-mismatch",
                    f"the batch at position {position} starts at offset {b.base_offset}, after the "
                    f"entry's offset {offset}; expected a batch starting at or before it")
            return
        mismatch = (f"the batch at position {position} holds offsets {b.base_offset}..{last}, not ending at the "
                    f"entry's offset {offset} (kafka-dump-log: Index offset: {offset}, log offset: {last})")
        if last > offset:
            problem(ip, offset, "index-offset-mismatch", mismatch)
            return
        walker.to_offset(offset)
        c = walker.cur
        if last < offset and c is not None and c.base_offset <= offset:
            problem(ip, offset, "index-offset-mismatch",
                    f"{mismatch}; offset {offset} is in the batch at {c.position}: Kafka before 4.1 wrote such "
                    "entries when a follower appended several batches at once (KAFKA-806), and lookups still find it")
        elif c is None:
            problem(ip, offset, "index-offset-not-found",
                    f"offset {offset} is past the last offset in the log ({walker.max_last}); expected "
                    f"an offset of a batch at or after position {position}")
        elif c.base_offset > offset:
            problem(ip, offset, "index-offset-not-found",
                    f"offset {offset} is in no batch: the batch at position {c.position} starts at "
                    f"{c.base_offset} and the one before ends at {_last_offset(walker.prev)}")

    return _check(index_path, log_path, base_offset, False, notes, entry)


def check_time_index(index_path: str, log_path: str | None = None, base_offset: int | None = None, *,
                     notes: list[str] | None = None) -> list[Problem]:
    """Problems of a time index against its log (see the module docstring)."""
    prev = None

    def entry(problem, walker, ip, ts, offset):
        nonlocal prev
        if prev is not None:
            if ts <= prev[0]:
                problem(ip, offset, "timeindex-out-of-order",
                        f"timestamp {ts} is not greater than the previous entry's timestamp {prev[0]} "
                        f"(byte {prev[2]})")
            if offset < prev[1]:
                problem(ip, offset, "index-offset-decreasing",
                        f"offset {offset} is less than the previous entry's offset {prev[1]} (byte {prev[2]})")
        prev = (ts, offset, ip)
        walker.to_offset(offset)
        c = walker.cur
        if c is None:
            last = walker.max_last
            problem(ip, offset, "index-offset-not-found",
                    f"offset {offset} is past the last offset in the log "
                    f"({'none: no batches' if last is None else last}); expected an offset in the log")
            return
        if c.base_offset > offset:
            problem(ip, offset, "index-offset-not-found",
                    f"offset {offset} is in no batch: the batch at position {c.position} starts at "
                    f"{c.base_offset}" + (f" and the one before ends at {_last_offset(walker.prev)}"
                                          if walker.prev is not None else ""))
            return
        if isinstance(c, Batch) and c.max_timestamp != ts:
            problem(ip, offset, "timeindex-timestamp-mismatch",
                    f"timestamp {ts} differs from the max timestamp {c.max_timestamp} of the batch holding "
                    f"offset {offset} (offsets {c.base_offset}..{c.last_offset} at log position "
                    f"{c.position}); expected {c.max_timestamp}")

    return _check(index_path, log_path, base_offset, True, notes, entry)


def _finish(path: str, scan: IndexScan, time: bool, problems: list[Problem], notes: list[str] | None):
    if scan.remainder:
        es = scan.entry_size
        problems.append(Problem(path, scan.size - scan.remainder, None,
                                f"{scan.size} bytes is not a multiple of the entry size {es}: the last "
                                f"{scan.remainder} bytes are a partial entry", "index-size"))
    if scan.after_end and notes is not None:
        notes.append(_gap_note(scan, path))


# What kafka-dump-log's own reports (IndexDump.stderr_lines) already cover.
_DUMP_REPORTS = {"index-offset-mismatch", "index-offset-not-found", "index-past-end", "index-not-batch-boundary",
                 "index-size", "index-offset-below-base", "timeindex-out-of-order", "timeindex-timestamp-mismatch"}


def problems_beyond_dump(path: str, time: bool) -> list[Problem]:
    """The problems verify finds in an index that kafka-dump-log's reports do not
    cover (entries out of order whose batches are right): dump-log adds them, so
    that both commands give one answer for one index."""
    log = sibling(path, "log")
    if not os.path.isfile(log):
        return []
    check = check_time_index if time else check_offset_index
    return [p for p in check(path, log) if p.kind not in _DUMP_REPORTS]
