"""Offset (.index) and time (.timeindex) indexes: the layouts, the streaming
readers and the writer (LogSegment.recover's entries). Kafka's lookups
against the segment's log are index_lookup.py, kafka-dump-log's text
index_dump.py, verify's checks index_checks.py.

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
from dataclasses import dataclass
from typing import Generator, Iterator

from ..errors import InputError
from ..openfile import open_regular
from . import filekinds

OFFSET_ENTRY_SIZE = 8
TIME_ENTRY_SIZE = 12
DEFAULT_MAX_MESSAGE_SIZE = 5 * 1024 * 1024  # kafka-dump-log --max-message-size default
INDEX_INTERVAL_BYTES = 4096  # index.interval.bytes default
WARM_BYTES = 8192  # AbstractIndex.warmEntries() = 8192 / entrySize
_CHUNK = 24 * 2730  # 65520: a multiple of both entry sizes
CHECKPOINT_EVERY = 1 << 16  # log walker restart points, in bytes

OFFSET_ENTRY = struct.Struct(">ii")  # relative offset, position
TIME_ENTRY = struct.Struct(">qi")  # timestamp, relative offset


# -- reading -------------------------------------------------------------------


@dataclass
class IndexScan:
    """What one pass over an index file found (complete once its iterator is exhausted)."""

    path: str
    entry_size: int
    size: int
    entries: int = 0  # logical entries: up to the end rule above
    nonzero_entries: int = 0  # entries with any non-zero byte, in the whole file
    end_position: int | None = None  # byte position of the entry that ended the index
    after_end: int = 0  # non-zero entries after the logical end
    first_after_end: int | None = None  # byte position of the first of them

    @property
    def file_entries(self) -> int:
        """Entries Kafka maps: whole entries in the file, preallocation included."""
        return self.size // self.entry_size

    @property
    def remainder(self) -> int:
        return self.size % self.entry_size


def segment_base(path: str, base_offset: int | None) -> int:
    """The base offset of an index's segment: the one given, else its file name's."""
    if base_offset is not None:
        return base_offset
    b = filekinds.base_offset_of(path)
    if b is None:
        raise InputError(
            f"{path}: the file name does not start with the segment's base offset "
            f"(<20 digits>.{os.path.basename(path).rsplit('.', 1)[-1]})"
        )
    return b


def scan_entries(path: str, time: bool, scan: IndexScan, rest: str = "stop") -> Iterator[tuple[int, int, int, bool]]:
    """(byte position, a, b, after_end) per entry, where (a, b) is (relative
    offset, position) or (timestamp, relative offset). What happens at the
    logical end depends on `rest`: "stop" reads no further; "count" reads the
    rest of the file to count its non-zero entries; "yield" also yields them
    (with after_end=True). All-zero entries after the end are preallocation."""
    es = TIME_ENTRY_SIZE if time else OFFSET_ENTRY_SIZE
    st = TIME_ENTRY if time else OFFSET_ENTRY
    ri, oi = (1, 0) if time else (0, 1)  # where the relative offset is, and the other field
    zero = bytes(es)
    with open_regular(path, "an index file") as f:
        scan.size = os.fstat(f.fileno()).st_size
        pos = 0  # file position of chunk[0]
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
                    if chunk[j : j + es] != zero:
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
    for _ in scan_entries(path, time, scan, "count"):
        pass
    return scan


def iter_offset_index(
    path: str, base_offset: int | None = None, scan: IndexScan | None = None
) -> Generator[tuple[int, int], None, None]:
    """(absolute offset, position) for each entry up to the logical end, streaming."""
    base = segment_base(path, base_offset)
    scan = scan or IndexScan(path, OFFSET_ENTRY_SIZE, 0)
    for _, rel, position, _ in scan_entries(path, False, scan):
        yield base + rel, position


def iter_time_index(
    path: str, base_offset: int | None = None, scan: IndexScan | None = None
) -> Generator[tuple[int, int], None, None]:
    """(timestamp, absolute offset) for each entry up to the logical end, streaming."""
    base = segment_base(path, base_offset)
    scan = scan or IndexScan(path, TIME_ENTRY_SIZE, 0)
    for _, ts, rel, _ in scan_entries(path, True, scan):
        yield ts, base + rel


def size_message(path: str, time: bool, size: int) -> str:
    # AbstractIndex.sanityCheck's texts (OffsetIndex, TimeIndex)
    if time:
        return (
            f"Time index file {os.path.abspath(path)} is corrupt, found {size} bytes which is neither "
            f"positive nor a multiple of {TIME_ENTRY_SIZE}"
        )
    return (
        f"Index file {os.path.abspath(path)} is corrupt, found {size} bytes which is neither positive "
        f"nor a multiple of {OFFSET_ENTRY_SIZE}"
    )


def read_offset_index(path: str, base_offset: int | None = None) -> list[tuple[int, int]]:
    """[(absolute offset, position)] up to the logical end. A size that is not a
    multiple of 8 is an InputError with Kafka's sanity-check text."""
    scan = IndexScan(path, OFFSET_ENTRY_SIZE, 0)
    out = list(iter_offset_index(path, base_offset, scan))
    if scan.remainder:
        raise InputError(size_message(path, False, scan.size))
    return out


def read_time_index(path: str, base_offset: int | None = None) -> list[tuple[int, int]]:
    """[(timestamp, absolute offset)] up to the logical end. A size that is not
    a multiple of 12 is an InputError with Kafka's sanity-check text."""
    scan = IndexScan(path, TIME_ENTRY_SIZE, 0)
    out = list(iter_time_index(path, base_offset, scan))
    if scan.remainder:
        raise InputError(size_message(path, True, scan.size))
    return out


# -- writing -------------------------------------------------------------------


def offset_index_bytes(entries, base_offset: int) -> bytes:
    """An .index holding (absolute offset, position) entries, trimmed (no preallocation)."""
    return b"".join(OFFSET_ENTRY.pack(o - base_offset, p) for o, p in entries)


def time_index_bytes(entries, base_offset: int) -> bytes:
    """A .timeindex holding (timestamp, absolute offset) entries, trimmed."""
    return b"".join(TIME_ENTRY.pack(t, o - base_offset) for t, o in entries)


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
