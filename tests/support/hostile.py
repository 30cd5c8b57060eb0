"""Generators of hostile inputs (issue 13), shared by tests/cli/test_hostile_inputs.py
and the property tests: every file is valid where it has to be (CRC-32C fixed
up) so that the hostile part is what a reader meets."""

from __future__ import annotations

import struct

import crc32c

from quorumctl.records import compression
from quorumctl.records.batch import CRC_START, HEADER_SIZE, encode_batch

# one 7-byte record: length 6, attributes 0, timestampDelta 0, offsetDelta 0,
# key null, value null, no headers
TINY_RECORD = bytes([0x0C, 0x00, 0x00, 0x00, 0x01, 0x01, 0x00])

# header field offsets (batch.HEADER layout)
ATTRIBUTES_AT = 21
LAST_OFFSET_DELTA_AT = 23
BASE_TIMESTAMP_AT = 27
MAX_TIMESTAMP_AT = 35
PRODUCER_ID_AT = 43
RECORD_COUNT_AT = 57


def fix_crc(batch: bytes | bytearray) -> bytes:
    """The batch with its CRC-32C recomputed (the header's crc field at 17)."""
    b = bytearray(batch)
    struct.pack_into(">I", b, 17, crc32c.crc32c(bytes(b[CRC_START:])))
    return bytes(b)


def flip_in_batches(data: bytes, batches: list[tuple[int, int]], flips) -> bytes:
    """`data` (a segment) with bytes XOR-ed inside the records of its batches
    ((position, size) each): a flip (batch index, where, mask) lands at `where`
    modulo the batch's records section, and the batch's CRC-32C is recomputed, so
    the decoders, not the CRC check, meet the garbage."""
    buf = bytearray(data)
    for i, where, x in flips:
        pos, size = batches[i]
        at = pos + HEADER_SIZE + where % max(size - HEADER_SIZE, 1)
        if at < pos + size:
            buf[at] ^= x
            struct.pack_into(">I", buf, pos + 17, crc32c.crc32c(bytes(buf[pos + CRC_START : pos + size])))
    return bytes(buf)


def garbage_in_batches(segment):
    """For property tests on a real segment: (write, flips), `flips` a hypothesis
    strategy of up to 8 flips and `write(root, flips)` the log dir
    root/__cluster_metadata-0 holding the segment with those flips (flip_in_batches)."""
    from hypothesis import strategies as st

    from quorumctl.records.batch import BatchReader

    data = open(segment, "rb").read()
    batches = [(b.position, b.size) for b in BatchReader(str(segment))]

    def write(root, flips):
        d = root / "__cluster_metadata-0"
        d.mkdir(parents=True, exist_ok=True)
        (d / "00000000000000000000.log").write_bytes(flip_in_batches(data, batches, flips))
        return d

    flips = st.lists(
        st.tuples(st.integers(0, len(batches) - 1), st.integers(0, 10**6), st.integers(1, 255)), min_size=1, max_size=8
    )
    return write, flips


def set_field(batch: bytes, at: int, fmt: str, value: int) -> bytes:
    """One header field changed, CRC fixed up."""
    b = bytearray(batch)
    struct.pack_into(fmt, b, at, value)
    return fix_crc(b)


def record_count_bomb(
    count: int, codec: int, *, base_offset: int = 0, last_offset_delta: int = 0, leader_epoch: int = 1
) -> bytes:
    """A batch declaring `count` 7-byte records (all with offset delta 0) in a
    compressed block of a few KB, lastOffsetDelta as given, CRC valid."""
    body = TINY_RECORD * count
    block = compression.compress(codec, body) if codec else body
    attrs = codec
    length = HEADER_SIZE - 12 + len(block)
    after_crc = struct.pack(">hiqqqhii", attrs, last_offset_delta, 0, 0, -1, -1, -1, count) + block
    head = struct.pack(">qiibI", base_offset, length, leader_epoch, 2, crc32c.crc32c(after_crc))
    return head + after_crc


def plain_batch(n: int = 3, base_offset: int = 0, **kw) -> bytes:
    return encode_batch([(None, b"v%d" % i) for i in range(n)], base_offset=base_offset, **kw)


def batch_with_deltas(
    values: list[bytes], deltas: list[int], *, count: int, last_offset_delta: int, codec: int = 0, base_offset: int = 0
) -> bytes:
    """A batch of `values` (null keys) at the given offset deltas, with a
    recordCount and lastOffsetDelta of our choosing, CRC valid."""
    from quorumctl.records.batch import encode_record

    body = b"".join(encode_record(d, 0, None, v) for d, v in zip(deltas, values))
    block = compression.compress(codec, body) if codec else body
    length = HEADER_SIZE - 12 + len(block)
    after_crc = struct.pack(">hiqqqhii", codec, last_offset_delta, 0, 0, -1, -1, -1, count) + block
    return struct.pack(">qiibI", base_offset, length, 1, 2, crc32c.crc32c(after_crc)) + after_crc
