"""Batch compression codecs (attributes bits 0-2): none, gzip, snappy, lz4, zstd.

The codecs themselves come from cramjam (and zlib for gzip). What is ours is
the framing Kafka clients wrap around them and a hard bound on the
decompressed size, computed from the frame headers *before* decompressing, so
a hostile batch cannot make us allocate gigabytes:
- snappy: Java's client writes xerial stream framing (magic header, then
  [int32 length][raw snappy block]...); librdkafka and others may write raw
  snappy. Raw snappy starts with its uncompressed length as a varint.
- lz4: the LZ4 frame format; each block decompresses to at most the frame's
  declared block maximum.
- zstd: frames of blocks of at most 128 KiB each (or a declared content size).
"""

from __future__ import annotations

import struct
import zlib

import cramjam

NONE, GZIP, SNAPPY, LZ4, ZSTD = 0, 1, 2, 3, 4
NAMES = {NONE: "none", GZIP: "gzip", SNAPPY: "snappy", LZ4: "lz4", ZSTD: "zstd"}
BY_NAME = {v: k for k, v in NAMES.items()}

# No real metadata or topic batch comes near this; Kafka's own limits
# (message.max.bytes, 8 MiB metadata batches) are far below it.
MAX_DECOMPRESSED = 128 * 1024 * 1024

XERIAL_MAGIC = b"\x82SNAPPY\x00"
_I32 = struct.Struct(">i")


class CompressionError(ValueError):
    pass


def _check(bound: int, cap: int) -> None:
    if bound > cap:
        raise CompressionError(f"decompressed size would exceed {cap} bytes")


def _snappy_decompress(data: bytes, cap: int) -> bytes | cramjam.Buffer:
    if data.startswith(XERIAL_MAGIC) and len(data) >= 16:
        blocks = []
        pos, n, total = 16, len(data), 0
        while pos < n:
            if pos + 4 > n:
                raise CompressionError("xerial snappy block length cut short")
            (size,) = _I32.unpack_from(data, pos)
            pos += 4
            if size < 0 or pos + size > n:
                raise CompressionError("xerial snappy block runs past the batch")
            block = data[pos : pos + size]
            total += cramjam.snappy.decompress_raw_len(block)
            _check(total, cap)
            blocks.append(block)
            pos += size
        return b"".join(bytes(cramjam.snappy.decompress_raw(b)) for b in blocks)
    _check(cramjam.snappy.decompress_raw_len(data), cap)
    return cramjam.snappy.decompress_raw(data)


_LZ4_BLOCK_MAX = {4: 64 << 10, 5: 256 << 10, 6: 1 << 20, 7: 4 << 20}


def _lz4_bound(data: bytes) -> int:
    """Upper bound of an LZ4 frame's output, from its block headers."""
    pos, n, total = 0, len(data), 0
    while pos < n:
        if pos + 7 > n:
            raise CompressionError("lz4 frame header cut short")
        magic = int.from_bytes(data[pos : pos + 4], "little")
        if 0x184D2A50 <= magic <= 0x184D2A5F:  # skippable frame
            size = int.from_bytes(data[pos + 4 : pos + 8], "little")
            pos += 8 + size
            continue
        if magic != 0x184D2204:
            raise CompressionError(f"not an lz4 frame (magic {magic:#x})")
        flg, bd = data[pos + 4], data[pos + 5]
        block_max = _LZ4_BLOCK_MAX.get((bd >> 4) & 7)
        if block_max is None:
            raise CompressionError("lz4 frame has an invalid block size")
        pos += 6 + (8 if flg & 0x08 else 0) + (4 if flg & 0x01 else 0) + 1
        block_checksum = 4 if flg & 0x10 else 0
        while True:
            if pos + 4 > n:
                raise CompressionError("lz4 block header cut short")
            size = int.from_bytes(data[pos : pos + 4], "little")
            pos += 4
            if size == 0:
                break
            pos += (size & 0x7FFFFFFF) + block_checksum
            total += block_max
        pos += 4 if flg & 0x04 else 0  # content checksum
    return total


def _zstd_bound(data: bytes) -> int:
    """Upper bound of a zstd stream's output, from its frame and block headers."""
    pos, n, total = 0, len(data), 0
    while pos < n:
        if pos + 5 > n:
            raise CompressionError("zstd frame header cut short")
        magic = int.from_bytes(data[pos : pos + 4], "little")
        if 0x184D2A50 <= magic <= 0x184D2A5F:
            pos += 8 + int.from_bytes(data[pos + 4 : pos + 8], "little")
            continue
        if magic != 0xFD2FB528:
            raise CompressionError(f"not a zstd frame (magic {magic:#x})")
        fhd = data[pos + 4]
        single = (fhd >> 5) & 1
        fcs_size = {0: 1 if single else 0, 1: 2, 2: 4, 3: 8}[fhd >> 6]
        did_size = {0: 0, 1: 1, 2: 2, 3: 4}[fhd & 3]
        pos += 5 + (0 if single else 1) + did_size + fcs_size
        while True:
            if pos + 3 > n:
                raise CompressionError("zstd block header cut short")
            hdr = int.from_bytes(data[pos : pos + 3], "little")
            pos += 3
            last, btype, bsize = hdr & 1, (hdr >> 1) & 3, hdr >> 3
            if btype == 3:
                raise CompressionError("zstd reserved block type")
            pos += 1 if btype == 1 else bsize
            total += 128 << 10
            if last:
                break
        pos += 4 if (fhd >> 2) & 1 else 0
    return total


def decompress(codec: int, data: bytes, cap: int = MAX_DECOMPRESSED):
    """The decompressed block as a bytes-like object (bytes or a cramjam Buffer)."""
    try:
        if codec == GZIP:
            d = zlib.decompressobj(47)  # 32+15: gzip or zlib header, detected
            out = d.decompress(data, cap)
            if d.unconsumed_tail:
                raise CompressionError(f"decompressed size would exceed {cap} bytes")
            return out
        if codec == SNAPPY:
            return _snappy_decompress(data, cap)
        if codec == LZ4:
            _check(_lz4_bound(data), cap)
            return cramjam.lz4.decompress(data)  # a cramjam Buffer: not copied
        if codec == ZSTD:
            _check(_zstd_bound(data), cap)
            return cramjam.zstd.decompress(data)
    except CompressionError:
        raise
    except (zlib.error, cramjam.DecompressionError, ValueError, IndexError) as e:
        raise CompressionError(f"{NAMES.get(codec, codec)} data does not decompress: {e}") from None
    raise CompressionError(f"unknown compression codec {codec}")


def compress(codec: int, data: bytes, *, xerial: bool = True) -> bytes:
    """Compress as Kafka's Java client does (xerial-framed snappy unless xerial=False)."""
    if codec == NONE:
        return data
    if codec == GZIP:
        c = zlib.compressobj(6, zlib.DEFLATED, 31)
        return c.compress(data) + c.flush()
    if codec == SNAPPY:
        if not xerial:
            return bytes(cramjam.snappy.compress_raw(data))
        # xerial header: magic, version 1, compatible version 1; 32 KiB blocks as snappy-java
        out = [XERIAL_MAGIC, _I32.pack(1), _I32.pack(1)]
        for i in range(0, len(data), 32 * 1024):
            block = bytes(cramjam.snappy.compress_raw(data[i : i + 32 * 1024]))
            out += [_I32.pack(len(block)), block]
        return b"".join(out)
    if codec == LZ4:
        return bytes(cramjam.lz4.compress(data))
    if codec == ZSTD:
        return bytes(cramjam.zstd.compress(data))
    raise CompressionError(f"unknown compression codec {codec}")
