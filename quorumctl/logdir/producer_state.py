"""Producer-state snapshots (<offset>.snapshot) and transaction indexes (.txnindex).

Producer snapshot (ProducerStateManager.readSnapshot/writeSnapshot, 3.0-3.9,
version 1; big-endian):
  version int16 (= 1), crc uint32 = CRC-32C of every byte after it,
  entries: int32 count, then per producer (46 bytes):
    producer_id int64, epoch int16, last_sequence int32, last_offset int64,
    offset_delta int32, timestamp int64, coordinator_epoch int32,
    current_txn_first_offset int64 (-1: no ongoing transaction)
Kafka validates the layout first, then the version, then the CRC, and ignores
bytes after the entries (the CRC still covers them). An empty snapshot is 10
bytes (brokers write one at the log end on clean shutdown).

Transaction index (TransactionIndex/AbortedTxn): 34-byte entries, version
int16 (= 0), producerId, firstOffset, lastOffset, lastStableOffset (int64
each). Kafka reads whole entries and ignores a partial one at the end.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from typing import Iterator


from ..errors import InputError
from ..openfile import open_regular
from ..records.crc import crc32c
from .problems import Problem

SNAPSHOT_VERSION = 1
SNAPSHOT_HEADER = struct.Struct(">hIi")  # version, crc, entry count
PRODUCER_ENTRY = struct.Struct(">qhiqiqiq")
TXN_VERSION = 0
TXN_ENTRY = struct.Struct(">hqqqq")
_CRC_START = 6  # CRC covers everything after version and crc
_CHUNK = 46 * 34 * 64  # a multiple of both entry sizes


@dataclass(frozen=True)
class ProducerEntry:
    producer_id: int
    producer_epoch: int
    last_sequence: int
    last_offset: int
    offset_delta: int
    timestamp: int
    coordinator_epoch: int
    current_txn_first_offset: int  # -1: none

    @property
    def has_batch(self) -> bool:
        """Kafka keeps the batch metadata only when last_offset >= 0."""
        return self.last_offset >= 0

    @property
    def first_sequence(self) -> int:
        # BatchMetadata.firstSeq(): DefaultRecordBatch.decrementSequence (wraps past Integer.MAX_VALUE)
        seq, dec = self.last_sequence, self.offset_delta
        if seq < dec:
            return _int32(0x7FFFFFFF - (dec - seq) + 1)
        return _int32(seq - dec)

    def kafka_line(self, kafka: str = "4.3") -> str:
        """kafka-dump-log's line (DumpLogSegments.dumpProducerIdSnapshot); 4.1's
        ends with a space when there is no batch metadata."""
        txn = (
            f"OptionalLong[{self.current_txn_first_offset}]"
            if self.current_txn_first_offset >= 0
            else "OptionalLong.empty"
        )
        line = (
            f"producerId: {self.producer_id} producerEpoch: {self.producer_epoch} "
            f"coordinatorEpoch: {self.coordinator_epoch} currentTxnFirstOffset: {txn} "
            f"lastTimestamp: {self.timestamp}"
        )
        if self.has_batch:
            line += (
                f" firstSequence: {self.first_sequence} lastSequence: {self.last_sequence} "
                f"lastOffset: {self.last_offset} offsetDelta: {self.offset_delta} timestamp: {self.timestamp}"
            )
        return line if self.has_batch or kafka != "4.1" else line + " "

    def to_json(self) -> dict:
        return {
            "producerId": self.producer_id,
            "producerEpoch": self.producer_epoch,
            "lastSequence": self.last_sequence,
            "lastOffset": self.last_offset,
            "offsetDelta": self.offset_delta,
            "timestamp": self.timestamp,
            "coordinatorEpoch": self.coordinator_epoch,
            "currentTxnFirstOffset": self.current_txn_first_offset,
        }


class FormatError(InputError):
    """Bad bytes in a producer snapshot or transaction index: one line naming the
    file, the byte position and what was expected."""

    def __init__(self, path: str, position: int, detail: str):
        super().__init__(f"{path}: byte {position}: {detail}")
        self.path = path
        self.position = position
        self.detail = detail


def _int32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v & 0x80000000 else v


def _snapshot_header(path: str, f) -> tuple[int, int, int, int]:
    """(version, stored crc, entry count, file size), after checking the layout,
    the version and the CRC in Kafka's order; streams the file for the CRC."""
    size = os.fstat(f.fileno()).st_size
    head = f.read(SNAPSHOT_HEADER.size)
    if len(head) < SNAPSHOT_HEADER.size:
        raise FormatError(
            path,
            0,
            f"expected a producer snapshot header of {SNAPSHOT_HEADER.size} bytes "
            f"(version, crc, entry count), found {len(head)} bytes",
        )
    version, crc, count = SNAPSHOT_HEADER.unpack(head)
    if count < 0:
        raise FormatError(path, 6, f"producer entry count {count} is negative")
    need = SNAPSHOT_HEADER.size + count * PRODUCER_ENTRY.size
    if need > size:
        raise FormatError(
            path,
            SNAPSHOT_HEADER.size,
            f"expected {count} producer entries of {PRODUCER_ENTRY.size} "
            f"bytes (a file of {need} bytes), found a file of {size} bytes",
        )
    if version != SNAPSHOT_VERSION:
        raise FormatError(path, 0, f"unknown producer snapshot version {version} (expected {SNAPSHOT_VERSION})")
    computed = crc32c(head[_CRC_START:])
    while True:
        chunk = f.read(_CHUNK)
        if not chunk:
            break
        computed = crc32c(chunk, computed)
    if computed != crc:
        raise FormatError(
            path, 2, f"producer snapshot CRC-32C mismatch: stored {crc}, computed {computed} over bytes 6..{size}"
        )
    return version, crc, count, size


def iter_producer_snapshot(path: str) -> Iterator[ProducerEntry]:
    """The producers of a snapshot, in file order, after the whole file has been
    validated (layout, version, CRC-32C); bad input is an InputError. Streaming."""
    with open_regular(path, "a producer snapshot") as f:
        _, _, count, _ = _snapshot_header(path, f)
        f.seek(SNAPSHOT_HEADER.size)
        left = count
        while left:
            n = min(left, _CHUNK // PRODUCER_ENTRY.size)
            chunk = f.read(n * PRODUCER_ENTRY.size)
            for e in PRODUCER_ENTRY.iter_unpack(chunk):
                yield ProducerEntry(*e)
            left -= n


def read_producer_snapshot(path: str) -> list[ProducerEntry]:
    return list(iter_producer_snapshot(path))


def producer_snapshot_lines(path: str, kafka: str = "4.3") -> Iterator[str]:
    """kafka-dump-log's stdout lines for a producer snapshot (none for an empty one)."""
    for e in iter_producer_snapshot(path):
        yield e.kafka_line(kafka)


def snapshot_bytes(entries: list[ProducerEntry] | list[tuple], version: int = SNAPSHOT_VERSION) -> bytes:
    """A producer snapshot as ProducerStateManager.writeSnapshot writes it (tests, repair)."""
    body = struct.pack(">i", len(entries)) + b"".join(
        PRODUCER_ENTRY.pack(
            *(
                e
                if isinstance(e, tuple)
                else (
                    e.producer_id,
                    e.producer_epoch,
                    e.last_sequence,
                    e.last_offset,
                    e.offset_delta,
                    e.timestamp,
                    e.coordinator_epoch,
                    e.current_txn_first_offset,
                )
            )
        )
        for e in entries
    )
    return struct.pack(">hI", version, crc32c(body)) + body


def check_producer_snapshot(path: str) -> list[Problem]:
    """verify's view: a bad snapshot is a Problem rather than an error."""
    try:
        n = 0
        for _ in iter_producer_snapshot(path):
            n += 1
    except FormatError as e:
        return [Problem(path, e.position, None, e.detail, "producer-snapshot")]
    return []


# -- transaction index -----------------------------------------------------------


@dataclass(frozen=True)
class AbortedTxn:
    version: int
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int
    position: int = 0  # byte position in the file

    def kafka_line(self) -> str:
        # DumpLogSegments.dumpTxnIndex
        return (
            f"version: {self.version} producerId: {self.producer_id} firstOffset: {self.first_offset} "
            f"lastOffset: {self.last_offset} lastStableOffset: {self.last_stable_offset}"
        )

    def to_json(self) -> dict:
        return {
            "version": self.version,
            "producerId": self.producer_id,
            "firstOffset": self.first_offset,
            "lastOffset": self.last_offset,
            "lastStableOffset": self.last_stable_offset,
        }


def iter_txn_index(path: str, remainder: list | None = None) -> Iterator[AbortedTxn]:
    """Whole 34-byte entries, streaming. A version other than 0 is an InputError
    (Kafka: "Unexpected aborted transaction version"). The size of a partial
    trailing entry, if any, is appended to `remainder`."""
    with open_regular(path, "a transaction index") as f:
        pos = 0
        while True:
            chunk = f.read(_CHUNK)
            if not chunk:
                return
            whole = len(chunk) - len(chunk) % TXN_ENTRY.size
            for i, e in enumerate(TXN_ENTRY.iter_unpack(chunk[:whole])):
                if e[0] != TXN_VERSION:
                    raise FormatError(
                        path,
                        pos + i * TXN_ENTRY.size,
                        f"unexpected aborted transaction version {e[0]} (expected {TXN_VERSION})",
                    )
                version, producer_id, first, last, lso = e
                yield AbortedTxn(version, producer_id, first, last, lso, position=pos + i * TXN_ENTRY.size)
            if whole < len(chunk):
                if remainder is not None:
                    remainder.append(len(chunk) - whole)
                return
            pos += len(chunk)


def read_txn_index(path: str) -> list[AbortedTxn]:
    return list(iter_txn_index(path))


def txn_index_lines(path: str) -> tuple[list[str], list[str]]:
    """kafka-dump-log's lines for a .txnindex: (stdout lines, stderr lines). Kafka
    ignores a partial trailing entry silently; we say so on stderr."""
    rem: list[int] = []
    out = [t.kafka_line() for t in iter_txn_index(path, rem)]
    err = []
    if rem:
        err.append(f"{path}: {rem[0]} bytes after the last whole {TXN_ENTRY.size}-byte entry (ignored)")
    return out, err


def txn_index_bytes(entries) -> bytes:
    """Entries as TransactionIndex.append writes them: (producerId, firstOffset,
    lastOffset, lastStableOffset) tuples or AbortedTxn."""
    out = []
    for e in entries:
        if isinstance(e, AbortedTxn):
            e = (e.producer_id, e.first_offset, e.last_offset, e.last_stable_offset)
        out.append(TXN_ENTRY.pack(TXN_VERSION, *e))
    return b"".join(out)


def check_txn_index(path: str, base_offset: int | None = None) -> list[Problem]:
    """verify's view of a .txnindex: version, partial entry, Kafka's sanity check
    (lastOffset >= the segment's base offset), firstOffset <= lastOffset, and
    lastOffset strictly increasing (TransactionIndex.append)."""
    problems: list[Problem] = []
    rem: list[int] = []
    prev = None
    try:
        for t in iter_txn_index(path, rem):
            if base_offset is not None and t.last_offset < base_offset:
                problems.append(
                    Problem(
                        path,
                        t.position,
                        t.last_offset,
                        f"last offset {t.last_offset} of the aborted transaction of producer "
                        f"{t.producer_id} is below the segment's base offset {base_offset}",
                        "txnindex-below-base",
                    )
                )
            if t.first_offset > t.last_offset:
                problems.append(
                    Problem(
                        path,
                        t.position,
                        t.first_offset,
                        f"first offset {t.first_offset} is after last offset {t.last_offset}",
                        "txnindex-range",
                    )
                )
            if prev is not None and t.last_offset <= prev.last_offset:
                problems.append(
                    Problem(
                        path,
                        t.position,
                        t.last_offset,
                        f"last offset {t.last_offset} is not greater than the previous entry's "
                        f"{prev.last_offset} (byte {prev.position})",
                        "txnindex-decreasing",
                    )
                )
            prev = t
    except FormatError as e:
        problems.append(Problem(path, e.position, None, e.detail, "txnindex-version"))
        return problems
    if rem:
        size = os.path.getsize(path)
        problems.append(
            Problem(
                path,
                size - rem[0],
                None,
                f"{size} bytes is not a multiple of the entry size {TXN_ENTRY.size}: the last "
                f"{rem[0]} bytes are a partial entry",
                "index-size",
            )
        )
    return problems
