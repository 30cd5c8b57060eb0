"""Record batch v2: streaming reader, record decoding, and the writer.

Layout: the 61-byte header declared once in HEADER_FIELDS (below), then the
records (one compressed block when a codec is set).

The reader streams a file in chunks and keeps at most one chunk plus one batch
in memory. It stops where Kafka's FileLogInputStream stops (fewer than 17
bytes left, or a batch running past the end) and records why in
`BatchReader.stop`, so callers can report a torn tail exactly.
"""

from __future__ import annotations

import io
import os
import struct
from dataclasses import dataclass
from typing import Iterator

from ..core import core as _core
from ..openfile import open_regular
from ..schema.codec import DecodeError, read_uvarint, varint_bytes
from . import compression
from .crc import crc32c
from .javatext import java_utf8

# The batch header, declared once (as Kafka's DefaultRecordBatch): each field's
# Batch attribute, its struct code (big-endian) and its numpy dtype. Offsets,
# the struct formats and spark's numpy dtype are all derived from this list.
HEADER_FIELDS = (
    ("base_offset", "q", ">i8"),
    ("length", "i", ">i4"),  # batchLength: the bytes after this field
    ("leader_epoch", "i", ">i4"),  # partitionLeaderEpoch
    ("magic", "b", "i1"),
    ("crc", "I", ">u4"),  # CRC-32C of everything after it
    ("attributes", "h", ">i2"),
    ("last_offset_delta", "i", ">i4"),
    ("base_timestamp", "q", ">i8"),
    ("max_timestamp", "q", ">i8"),
    ("producer_id", "q", ">i8"),
    ("producer_epoch", "h", ">i2"),
    ("base_sequence", "i", ">i4"),
    ("record_count", "i", ">i4"),
)
OFFSETS: dict[str, int] = {}
_at = 0
for _name, _code, _dtype in HEADER_FIELDS:
    OFFSETS[_name] = _at
    _at += struct.calcsize(">" + _code)
del _at, _name, _code, _dtype


def _fmt(first: str, last: str) -> struct.Struct:
    """The struct of the header fields first..last (inclusive)."""
    names = [f[0] for f in HEADER_FIELDS]
    return struct.Struct(">" + "".join(f[1] for f in HEADER_FIELDS[names.index(first) : names.index(last) + 1]))


HEADER = _fmt("base_offset", "record_count")
HEADER_SIZE = HEADER.size  # 61: Kafka's RECORD_BATCH_OVERHEAD
LENGTH_PREFIX = _fmt("base_offset", "length")  # what a batch walk reads
LOG_OVERHEAD = LENGTH_PREFIX.size  # 12: baseOffset + batchLength
MAGIC_OFFSET = OFFSETS["magic"]
HEADER_UP_TO_MAGIC = MAGIC_OFFSET + 1  # 17: what Kafka reads before deciding a batch is there
MIN_RECORD_OVERHEAD = 14  # Kafka's LegacyRecord.RECORD_OVERHEAD_V0: smaller sizes are corrupt
CRC_START = OFFSETS["attributes"]  # 21: the CRC covers from here to the end
HEAD_TO_CRC = _fmt("base_offset", "crc")  # the fields before the CRC'd part
AFTER_CRC = _fmt("attributes", "record_count")  # the CRC'd header fields
ATTRIBUTES = _fmt("attributes", "attributes")
LAST_OFFSET_DELTA_OFFSET = OFFSETS["last_offset_delta"]
LAST_OFFSET_DELTA = _fmt("last_offset_delta", "last_offset_delta")
TIMESTAMPS = _fmt("base_timestamp", "max_timestamp")
NUMPY_HEADER = [(name, dtype) for name, _code, dtype in HEADER_FIELDS]  # spark's numpy dtype

ATTR_COMPRESSION = 0x07
ATTR_LOG_APPEND_TIME = 0x08
ATTR_TRANSACTIONAL = 0x10
ATTR_CONTROL = 0x20
ATTR_DELETE_HORIZON = 0x40

_ZZ = tuple((b >> 1) ^ -(b & 1) for b in range(128))  # one-byte zig-zag varints


class BatchError(DecodeError):
    """A batch or record that does not decode; `pos` is the byte position in the file."""


class Batch:
    __slots__ = (
        "base_offset",
        "length",
        "leader_epoch",
        "magic",
        "crc",
        "attributes",
        "last_offset_delta",
        "base_timestamp",
        "max_timestamp",
        "producer_id",
        "producer_epoch",
        "base_sequence",
        "record_count",
        "position",
        "data",
    )

    def __init__(self, header: tuple, position: int, data: bytes | memoryview):
        (
            self.base_offset,
            self.length,
            self.leader_epoch,
            self.magic,
            self.crc,
            self.attributes,
            self.last_offset_delta,
            self.base_timestamp,
            self.max_timestamp,
            self.producer_id,
            self.producer_epoch,
            self.base_sequence,
            self.record_count,
        ) = header
        self.position = position
        self.data = data  # the whole batch, header included (a memoryview into the read buffer)

    @property
    def size(self) -> int:
        return self.length + LOG_OVERHEAD

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.base_offset + self.last_offset_delta + 1

    @property
    def compression(self) -> int:
        return self.attributes & ATTR_COMPRESSION

    @property
    def compression_name(self) -> str:
        return compression.NAMES.get(self.attributes & ATTR_COMPRESSION, "unknown")

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & ATTR_CONTROL)

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & ATTR_TRANSACTIONAL)

    @property
    def timestamp_type(self) -> str:
        return "LogAppendTime" if self.attributes & ATTR_LOG_APPEND_TIME else "CreateTime"

    @property
    def last_sequence(self) -> int:
        if self.base_sequence < 0:
            return -1
        return (self.base_sequence + self.last_offset_delta) & 0x7FFFFFFF

    def computed_crc(self) -> int:
        """The CRC-32C of the bytes after the crc field (what the header's crc should be)."""
        return crc32c(self.data[CRC_START:])

    def crc_valid(self) -> bool:
        return self.computed_crc() == self.crc

    def records_buffer(self):
        """The records section, decompressed, as a bytes-like object: not copied
        (a view of the batch, or the decompressor's own buffer)."""
        codec = self.attributes & ATTR_COMPRESSION
        if codec == 0:
            return self.data[HEADER_SIZE:]
        try:
            return compression.decompress(codec, bytes(self.data[HEADER_SIZE:]))
        except compression.CompressionError as e:
            raise BatchError(f"batch at offset {self.base_offset}: {e}", self.position + HEADER_SIZE) from None

    def records_bytes(self) -> bytes:
        """The records section, decompressed."""
        return bytes(self.records_buffer())

    def records(self) -> list["Record"]:
        """All records as a list (small batches only: see iter_records)."""
        return decode_records(self)

    def iter_records(self) -> Iterator["Record"]:
        return iter_records(self)


class Record:
    __slots__ = ("offset", "timestamp", "attributes", "key", "value", "headers", "sequence")

    def __init__(self, offset, timestamp, attributes, key, value, headers, sequence=-1):
        self.offset = offset
        self.timestamp = timestamp
        self.attributes = attributes
        self.key = key
        self.value = value
        self.headers = headers
        self.sequence = sequence

    def __repr__(self):
        return (
            f"Record(offset={self.offset}, timestamp={self.timestamp}, key={self.key!r}, "
            f"value={self.value!r}, headers={self.headers!r})"
        )


def _varint(data, pos):
    b = data[pos]
    if b < 0x80:
        return _ZZ[b], pos + 1
    u, pos = read_uvarint(data, pos)
    return (u >> 1) ^ -(u & 1), pos


def _varlong(data, pos):
    b = data[pos]
    if b < 0x80:
        return _ZZ[b], pos + 1
    u, pos = read_uvarint(data, pos, 10)
    return (u >> 1) ^ -(u & 1), pos


def decode_records(batch: Batch) -> list[Record]:
    """All records of a batch as a list: only for batches known to be small
    (a batch may claim millions of records; stream those with iter_records)."""
    return list(iter_records(batch))


# Records are decoded from `bytes` windows of at most this size (plus one record):
# a decompressed block of up to 128 MiB is never copied whole.
WINDOW = 4 << 20


class _Refill(Exception):
    """The record being decoded runs past the current window."""


def iter_records(batch: Batch) -> Iterator[Record]:
    """The records of a batch, one at a time, so a consumer holds only the one it
    is handling: memory is the decompressed block (at most
    compression.MAX_DECOMPRESSED, never copied whole) plus one window, whatever
    recordCount claims. Raises BatchError with the file position of the bad
    record (for compressed batches, the position of the batch's records) when it
    reaches it: the records before it have been yielded already.
    `Record.timestamp` is the stored one (base + delta); with LogAppendTime Kafka
    shows the batch's maxTimestamp instead (see `display_timestamp`)."""
    buf = memoryview(batch.records_buffer())
    total = buf.nbytes
    count = batch.record_count
    if count < 0 or count > total:
        raise BatchError(
            f"batch at offset {batch.base_offset} claims {count} records in {total} bytes",
            batch.position + OFFSETS["record_count"],
        )
    base_off = batch.base_offset
    base_ts = batch.base_timestamp
    base_seq = batch.base_sequence
    wbase = 0  # position of data[0] in the records section
    data = bytes(buf[:WINDOW])
    n = len(data)
    final = n == total
    pos = 0
    done = 0
    varint = _varint
    try:
        while True:
            try:
                for done in range(done, count):  # noqa: B007, B020 - resumes at `done`; the except reads it
                    start = pos
                    length, pos = varint(data, pos)
                    end = pos + length
                    if length < 0 or end > n:
                        if length >= 0 and not final:
                            raise _Refill
                        raise BatchError(f"record of {length} bytes runs past the end of its batch", pos)
                    attrs = data[pos]
                    ts_delta, pos = _varlong(data, pos + 1)
                    off_delta, pos = varint(data, pos)
                    klen, pos = varint(data, pos)
                    if klen < 0:
                        key = None
                    else:
                        key = data[pos : pos + klen]
                        pos += klen
                    vlen, pos = varint(data, pos)
                    if vlen < 0:
                        value = None
                    else:
                        value = data[pos : pos + vlen]
                        pos += vlen
                    hcount, pos = varint(data, pos)
                    headers: list[tuple[str, bytes | None]] | tuple[()]  # () when none
                    if hcount:
                        if hcount < 0 or hcount > end - pos:
                            raise BatchError(f"record claims {hcount} headers", pos)
                        hlist: list[tuple[str, bytes | None]] = []
                        for _ in range(hcount):
                            hk, pos = varint(data, pos)
                            if hk < 0:
                                raise BatchError("record header with a null key", pos)
                            hkey = java_utf8(data[pos : pos + hk])  # RecordHeader.key(), as Kafka prints it
                            pos += hk
                            hv, pos = varint(data, pos)
                            if hv < 0:
                                hval = None
                            else:
                                hval = data[pos : pos + hv]
                                pos += hv
                            hlist.append((hkey, hval))
                        headers = hlist
                    else:
                        headers = ()
                    if pos != end:
                        raise BatchError(
                            f"record at offset {base_off + off_delta} has "
                            f"{'trailing' if pos < end else 'missing'} bytes ({end - pos:+d})",
                            start,
                        )
                    seq = (base_seq + off_delta) & 0x7FFFFFFF if base_seq >= 0 else -1
                    pos = end
                    yield Record(base_off + off_delta, base_ts + ts_delta, attrs, key, value, headers, seq)
                else:
                    done = count
                break
            except (_Refill, IndexError) as ex:
                # the record starting at `start` needs bytes beyond this window: the next
                # window starts there (one that overruns a window it starts is cut short)
                refill = isinstance(ex, _Refill)
                if final or (start == 0 and not refill):
                    raise IndexError from None
                need = end - start if refill else 0
                wbase += start
                data = bytes(buf[wbase : wbase + max(WINDOW, need + 32)])
                n = len(data)
                final = wbase + n == total
                pos = 0
    except IndexError:
        raise BatchError(f"batch at offset {base_off}: record data cut short", batch.position + HEADER_SIZE) from None
    except BatchError as e:
        if batch.compression == 0 and e.pos is not None and wbase + e.pos < total:
            e.pos = batch.position + HEADER_SIZE + wbase + e.pos
        else:
            e.pos = batch.position + HEADER_SIZE
        raise
    if wbase + pos != total:
        raise BatchError(
            f"batch at offset {base_off} has {total - wbase - pos} bytes after its {count} records",
            batch.position + HEADER_SIZE + (wbase + pos if batch.compression == 0 else 0),
        )


@dataclass
class Stop:
    """Why reading ended: reason is None (clean end of data), 'truncated'
    (a batch runs past the end: a torn tail), 'short' (fewer bytes than a batch
    header), or 'corrupt' (an impossible batch length, e.g. a zero-filled tail)."""

    position: int
    reason: str | None
    detail: str = ""
    remaining: int = 0


def _size_of(f) -> int | None:
    """The size of a binary file object: fstat when it has a descriptor, else
    seek to its end (e.g. pyarrow's remote files); None if it cannot tell."""
    try:
        return os.fstat(f.fileno()).st_size
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both
        pass
    if hasattr(f, "seek") and (not hasattr(f, "seekable") or f.seekable()):
        here = f.tell()
        size = f.seek(0, 2)
        f.seek(here)
        return size
    return None


class BatchReader:
    """Iterate the batches of a file (path, binary file object, or bytes).

    `start`/`end` limit the byte range (end exclusive); `max_bytes` mimics
    kafka-dump-log's option (read only the first N bytes). After iteration,
    `stop` says where and why reading ended.
    """

    CHUNK = 1 << 20

    def __init__(self, source, start: int = 0, end: int | None = None, max_bytes: int | None = None):
        self._close = False
        size: int | None
        if isinstance(source, (bytes, bytearray, memoryview)):
            self._f = io.BytesIO(bytes(source))
            size = len(source)
        elif hasattr(source, "read"):
            self._f = source
            size = _size_of(source)
        else:
            self._f = open_regular(source, "a record batch file")
            self._close = True
            size = os.fstat(self._f.fileno()).st_size
        if size is None:
            raise ValueError("cannot size the input")
        self.file_size = size
        self.start = start
        self.end = size if end is None else min(end, size)
        if max_bytes is not None:
            self.end = min(self.end, start + max_bytes)
        self.stop: Stop | None = None

    def close(self):
        if self._close:
            self._f.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __iter__(self):
        f = self._f
        f.seek(self.start)
        end = self.end
        base = self.start  # file position of buf[0]
        buf = b""
        view = memoryview(buf)
        off = 0
        chunk = self.CHUNK
        try:
            while True:
                pos = base + off
                remaining = end - pos
                if remaining < HEADER_UP_TO_MAGIC:
                    self.stop = Stop(
                        pos,
                        None if remaining == 0 else "short",
                        "" if remaining == 0 else f"{remaining} bytes too few for a batch header",
                        remaining,
                    )
                    return
                if len(buf) - off < HEADER_UP_TO_MAGIC:
                    buf = buf[off:] + f.read(min(chunk, remaining) - (len(buf) - off))
                    base, off = pos, 0
                base_offset, length = LENGTH_PREFIX.unpack_from(buf, off)
                if length < MIN_RECORD_OVERHEAD:
                    self.stop = Stop(
                        pos,
                        "corrupt",
                        f"batch length {length} is smaller than the minimum record overhead ({MIN_RECORD_OVERHEAD})",
                        remaining,
                    )
                    return
                total = length + LOG_OVERHEAD
                if total > remaining:
                    self.stop = Stop(
                        pos,
                        "truncated",
                        f"batch at offset {base_offset} needs {total} bytes, {remaining} remain",
                        remaining,
                    )
                    return
                if len(buf) - off < total:
                    buf = buf[off:] + f.read(
                        max(chunk, total) - (len(buf) - off) if remaining > chunk else remaining - (len(buf) - off)
                    )
                    base, off = pos, 0
                    if len(buf) < total:
                        self.stop = Stop(pos, "truncated", "file shrank while reading", remaining)
                        return
                if view.obj is not buf:
                    view = memoryview(buf)
                data = view[off : off + total]  # a view: batches are not copied until decoded
                yield entry_at(buf, off, pos, data)
                off += total
        finally:
            self.close()


def entry_at(buf, off: int, position: int, data) -> "Batch | LegacyEntry":
    """The entry whose bytes (`data`, its whole length) start at buf[off], at file
    `position`: a Batch, or a LegacyEntry for another magic or a length shorter
    than a v2 header."""
    magic = buf[off + MAGIC_OFFSET]
    if magic != 2 or len(data) < HEADER_SIZE:
        base_offset, length = LENGTH_PREFIX.unpack_from(buf, off)
        return LegacyEntry(base_offset, length, magic, position, data)
    return Batch(HEADER.unpack_from(buf, off), position, data)


class LegacyEntry:
    """A message set entry with magic 0 or 1 (or an unknown magic): not decoded
    further, reported as it is (KRaft logs never contain these)."""

    __slots__ = ("base_offset", "length", "magic", "position", "data")

    def __init__(self, base_offset, length, magic, position, data):
        self.base_offset = base_offset
        self.length = length
        self.magic = magic
        self.position = position
        self.data = data

    @property
    def size(self):
        return self.length + LOG_OVERHEAD


CUT_WINDOW = 64 << 10


def batch_walk(f, size: int, every: int, start: int = 0) -> tuple[list[int], int]:
    """Hop over batch lengths from `start` (a batch boundary): the batch start
    positions after `start` at least `every` bytes apart (for splitting a file
    between processes or tasks), and where the walk ended. It ends where BatchReader
    would stop (fewer than HEADER_UP_TO_MAGIC bytes left, an impossible length, a
    batch running past the end): no cut beyond that point can be trusted, and the
    range holding it reports it."""
    cuts = []
    pos = start
    next_cut = start + every
    buf = b""
    buf_pos = 0
    unpack = LENGTH_PREFIX.unpack_from
    while size - pos >= HEADER_UP_TO_MAGIC:
        rel = pos - buf_pos
        if rel < 0 or rel + LOG_OVERHEAD > len(buf):
            f.seek(pos)
            buf = f.read(min(CUT_WINDOW, size - pos))
            buf_pos, rel = pos, 0
            if len(buf) < LOG_OVERHEAD:
                break
        _base, length = unpack(buf, rel)
        if length < MIN_RECORD_OVERHEAD or pos + LOG_OVERHEAD + length > size:
            break
        if pos >= next_cut:
            cuts.append(pos)
            next_cut = pos + every
        pos += LOG_OVERHEAD + length
    return cuts, pos


def batch_cuts(f, size: int, every: int, start: int = 0) -> list[int]:
    """Cut points at least `every` bytes apart (see batch_walk)."""
    return batch_walk(f, size, every, start)[0]


def complete_end(f, size: int, start: int = 0) -> int:
    """The end of the last complete batch at or after `start` (`start` when there is
    none): how much of a segment Kafka is still appending to can be read."""
    return batch_walk(f, size, size + 1, start)[1]


# -- writing -----------------------------------------------------------------


def encode_record(
    offset_delta: int, timestamp_delta: int, key: bytes | None, value: bytes | None, headers=(), attributes: int = 0
) -> bytes:
    body = bytearray()
    body.append(attributes & 0xFF)
    body += varint_bytes(timestamp_delta)
    body += varint_bytes(offset_delta)
    for part in (key, value):
        if part is None:
            body += varint_bytes(-1)
        else:
            body += varint_bytes(len(part))
            body += part
    body += varint_bytes(len(headers))
    for hk, hv in headers:
        hkb = hk if isinstance(hk, bytes) else hk.encode("utf-8")  # bytes: any key, even one not UTF-8
        body += varint_bytes(len(hkb))
        body += hkb
        if hv is None:
            body += varint_bytes(-1)
        else:
            body += varint_bytes(len(hv))
            body += hv
    return varint_bytes(len(body)) + bytes(body)


@dataclass(frozen=True)
class Producer:
    """Who a batch is written for, as its header records it: an idempotent or
    transactional producer's id, epoch and first sequence number (-1: none, as
    the quorum's own batches), and whether the batch is part of a transaction."""

    id: int = -1
    epoch: int = -1
    base_sequence: int = -1
    transactional: bool = False


NO_PRODUCER = Producer()


def encode_batch(
    records,
    *,
    base_offset: int,
    leader_epoch: int = 0,
    base_timestamp: int = 0,
    max_timestamp: int | None = None,
    compression_codec: int = 0,
    control: bool = False,
    log_append_time: bool = False,
    delete_horizon: bool = False,
    producer: Producer = NO_PRODUCER,
) -> bytes:
    """Build one v2 batch. `records` is a list of (key, value) or
    (key, value, headers) or (key, value, headers, timestamp) tuples; offsets are
    consecutive from base_offset; timestamps default to base_timestamp. Snappy is
    written xerial-framed, as Kafka's Java client writes it."""
    parts = []
    max_ts = base_timestamp
    for i, r in enumerate(records):
        key, value = r[0], r[1]
        headers = r[2] if len(r) > 2 else ()
        ts = r[3] if len(r) > 3 else base_timestamp
        max_ts = max(max_ts, ts)
        parts.append(encode_record(i, ts - base_timestamp, key, value, headers))
    body = b"".join(parts)
    if compression_codec:
        body = compression.compress(compression_codec, body)
    attributes = (
        compression_codec
        | (ATTR_LOG_APPEND_TIME if log_append_time else 0)
        | (ATTR_TRANSACTIONAL if producer.transactional else 0)
        | (ATTR_CONTROL if control else 0)
        | (ATTR_DELETE_HORIZON if delete_horizon else 0)
    )
    if max_timestamp is None:
        max_timestamp = max_ts
    length = HEADER_SIZE - LOG_OVERHEAD + len(body)
    after_crc = (
        AFTER_CRC.pack(
            attributes,
            max(len(records) - 1, 0),
            base_timestamp,
            max_timestamp,
            producer.id,
            producer.epoch,
            producer.base_sequence,
            len(records),
        )
        + body
    )
    crc = crc32c(after_crc)
    return HEAD_TO_CRC.pack(base_offset, length, leader_epoch, 2, crc) + after_crc


def display_timestamp(batch: Batch, record: Record) -> int:
    """The timestamp Kafka reports for a record (maxTimestamp under LogAppendTime)."""
    return batch.max_timestamp if batch.attributes & ATTR_LOG_APPEND_TIME else record.timestamp


def reencode_batch(batch: Batch, records: list[Record]) -> bytes:
    """Re-encode decoded records with the batch's own header fields (round-trip check)."""
    body = b"".join(
        encode_record(
            r.offset - batch.base_offset, r.timestamp - batch.base_timestamp, r.key, r.value, r.headers, r.attributes
        )
        for r in records
    )
    if batch.compression:
        # compressor output is not canonical: keep the original block if it decodes to the same bytes
        body = (
            bytes(batch.data[HEADER_SIZE:])
            if batch.records_bytes() == body
            else compression.compress(batch.compression, body)
        )
    after_crc = bytes(batch.data[CRC_START:HEADER_SIZE]) + body
    length = HEADER_SIZE - LOG_OVERHEAD + len(body)
    return HEAD_TO_CRC.pack(batch.base_offset, length, batch.leader_epoch, batch.magic, crc32c(after_crc)) + after_crc


def plain_value_spans(data: bytes, pos: int, count: int):
    """plain_value_spans_py's result, from the compiled core where it is built
    (rust/src/batch.rs plain_records) and `data` is bytes."""
    if _core is not None and type(data) is bytes:
        return _core.plain_value_spans(data, pos, count)
    return plain_value_spans_py(data, pos, count)


def plain_value_spans_py(data: bytes, pos: int, count: int):
    """The records of an uncompressed batch body as Kafka's metadata log writes
    them (offset deltas 0, 1, 2 ..., null keys, no headers), walked without a
    Record object per record: ([timestamp delta], [value start], [value end])
    with positions in `data`, whose record section starts at `pos`. None when
    the body is anything else (a key, a header, a null value, offsets out of
    order, a malformed frame): the caller then takes `iter_records`, which
    reports precisely. The one frame walk of the hot paths: dump-log, image
    replay and spark-export."""
    n = len(data)
    if count < 0 or count > n - pos:
        return None
    zz = _ZZ
    slow, slow_long = _varint, _varlong  # more than one byte: at most 5 (int) or 10 (long)
    tss: list[int] = []
    starts: list[int] = []
    ends: list[int] = []
    ts_app, s_app, e_app = tss.append, starts.append, ends.append
    try:
        for i in range(count):
            # length, attributes, timestamp delta, offset delta, key length, value length
            # (zig-zag varints; the one- and two-byte forms inline)
            c = data[pos]
            if c < 128:
                end = pos + 1 + zz[c]
                pos += 2  # and the attributes byte (unused by Kafka)
            elif data[pos + 1] < 128:
                u = (c & 127) | data[pos + 1] << 7
                end = pos + 2 + ((u >> 1) ^ -(u & 1))
                pos += 3
            else:
                length, pos = slow(data, pos)
                end = pos + length
                pos += 1
            c = data[pos]
            if c < 128:
                ts_app(zz[c])
                pos += 1
            else:
                ts, pos = slow_long(data, pos)
                ts_app(ts)
            c = data[pos]
            if c < 128:
                od = zz[c]
                pos += 1
            elif data[pos + 1] < 128:
                u = (c & 127) | data[pos + 1] << 7
                od = (u >> 1) ^ -(u & 1)
                pos += 2
            elif data[pos + 2] < 128:  # offsets 8192 and up: snapshots write 100 k+ records a batch
                u = (c & 127) | (data[pos + 1] & 127) << 7 | data[pos + 2] << 14
                od = (u >> 1) ^ -(u & 1)
                pos += 3
            else:
                od, pos = slow(data, pos)
            if od != i or data[pos] != 1:  # offsets as Kafka writes them; a null key (-1)
                return None
            c = data[pos + 1]
            if c < 128:
                vlen = zz[c]
                pos += 2
            elif data[pos + 2] < 128:
                u = (c & 127) | data[pos + 2] << 7
                vlen = (u >> 1) ^ -(u & 1)
                pos += 3
            else:
                vlen, pos = slow(data, pos + 1)
            vend = pos + vlen
            if vlen < 0 or vend + 1 != end or end > n or data[vend] != 0:  # then no headers
                return None
            s_app(pos)
            e_app(vend)
            pos = end
    except (IndexError, ValueError):
        return None
    if pos != n:
        return None
    return tss, starts, ends
