//! A v2 record batch: its 61-byte header, CRC-32C, records section, and the
//! record frames of a metadata batch (what Kafka's metadata log writes:
//! offset deltas 0, 1, 2 ..., null keys, no headers), walked without an
//! object per record.

use crate::compress;
use crate::decode::varint;

pub const HEADER_SIZE: usize = 61;
pub const LOG_OVERHEAD: usize = 12;
pub const CRC_START: usize = 21;
pub const ATTR_COMPRESSION: i16 = 0x07;
pub const ATTR_LOG_APPEND_TIME: i16 = 0x08;
pub const ATTR_TRANSACTIONAL: i16 = 0x10;
pub const ATTR_CONTROL: i16 = 0x20;
pub const ATTR_DELETE_HORIZON: i16 = 0x40;
/// Record sections above this size are left to the pure path, which streams
/// them in windows (bounded memory whatever a batch claims).
pub const FAST_MAX_BYTES: usize = 1 << 20;

#[derive(Debug, Clone)]
pub struct Header {
    pub base_offset: i64,
    pub length: i32,
    pub leader_epoch: i32,
    pub magic: i8,
    pub crc: u32,
    pub attributes: i16,
    pub last_offset_delta: i32,
    pub base_timestamp: i64,
    pub max_timestamp: i64,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub base_sequence: i32,
    pub record_count: i32,
}

fn be<const N: usize>(b: &[u8], at: usize) -> [u8; N] {
    let mut a = [0u8; N];
    a.copy_from_slice(&b[at..at + N]);
    a
}

impl Header {
    /// The header of a batch (None when shorter than a header).
    pub fn parse(b: &[u8]) -> Option<Header> {
        if b.len() < HEADER_SIZE {
            return None;
        }
        Some(Header {
            base_offset: i64::from_be_bytes(be(b, 0)),
            length: i32::from_be_bytes(be(b, 8)),
            leader_epoch: i32::from_be_bytes(be(b, 12)),
            magic: i8::from_be_bytes(be(b, 16)),
            crc: u32::from_be_bytes(be(b, 17)),
            attributes: i16::from_be_bytes(be(b, 21)),
            last_offset_delta: i32::from_be_bytes(be(b, 23)),
            base_timestamp: i64::from_be_bytes(be(b, 27)),
            max_timestamp: i64::from_be_bytes(be(b, 35)),
            producer_id: i64::from_be_bytes(be(b, 43)),
            producer_epoch: i16::from_be_bytes(be(b, 51)),
            base_sequence: i32::from_be_bytes(be(b, 53)),
            record_count: i32::from_be_bytes(be(b, 57)),
        })
    }

    pub fn last_sequence(&self) -> i64 {
        if self.base_sequence < 0 {
            -1
        } else {
            (i64::from(self.base_sequence) + i64::from(self.last_offset_delta)) & 0x7fff_ffff
        }
    }

    pub fn compression_name(&self) -> &'static str {
        match self.attributes & ATTR_COMPRESSION {
            0 => "none",
            1 => "gzip",
            2 => "snappy",
            3 => "lz4",
            4 => "zstd",
            _ => "unknown",
        }
    }
}

/// CRC-32C of everything after the crc field, compared with the header's.
pub fn crc_valid(batch: &[u8], h: &Header) -> bool {
    batch.len() >= CRC_START && crc32c::crc32c(&batch[CRC_START..]) == h.crc
}

/// One record of a plain metadata batch: its timestamp delta and value span.
#[derive(Debug, Clone, Copy)]
pub struct Plain {
    pub ts_delta: i128,
    pub start: usize,
    pub end: usize,
}

/// The records of a plain records section (the pure path's plain_value_spans):
/// None when it is anything else (a key, a header, offsets out of order, a
/// malformed frame), which the pure path then reports precisely.
pub fn plain_records(data: &[u8], count: i32, out: &mut Vec<Plain>) -> Option<()> {
    let n = data.len();
    if count < 0 || count as usize > n {
        return None;
    }
    out.clear();
    let mut pos = 0usize;
    for i in 0..count as i128 {
        let (length, p) = varint(data, pos, 5)?;
        if length < 0 {
            return None;
        }
        let end = p.checked_add(usize::try_from(length).ok()?)?;
        let p = p + 1; // attributes (unused by Kafka)
        let (ts_delta, p) = varint(data, p, 10)?;
        let (od, p) = varint(data, p, 5)?;
        if od != i || *data.get(p)? != 1 {
            return None; // offsets as Kafka writes them; a null key (-1)
        }
        let (vlen, p) = varint(data, p + 1, 5)?;
        if vlen < 0 {
            return None;
        }
        let vend = p.checked_add(usize::try_from(vlen).ok()?)?;
        if vend + 1 != end || end > n || data[vend] != 0 {
            return None; // then no headers
        }
        out.push(Plain {
            ts_delta,
            start: p,
            end: vend,
        });
        pos = end;
    }
    if pos != n {
        return None;
    }
    Some(())
}

/// The records section of a batch, decompressed (bounded by FAST_MAX_BYTES):
/// None when over the bound or it does not decompress.
pub fn records_section<'a>(
    batch: &'a [u8],
    h: &Header,
    holder: &'a mut Vec<u8>,
) -> Option<&'a [u8]> {
    let body = batch.get(HEADER_SIZE..)?;
    let codec = (h.attributes & ATTR_COMPRESSION) as u8;
    if codec == 0 {
        if body.len() > FAST_MAX_BYTES {
            return None;
        }
        return Some(body);
    }
    *holder = compress::decompress(codec, body, FAST_MAX_BYTES)?;
    Some(holder.as_slice())
}

/// Where a walk over a file's bytes stopped (the pure path's BatchReader.stop).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    End,
    Short,
    Corrupt,
    Truncated,
}

/// Hop over the batches of `buf` from `pos`: (start, total size) of each
/// batch, and why the walk stopped, as Kafka's FileLogInputStream stops.
pub fn walk(buf: &[u8], mut pos: usize, out: &mut Vec<(usize, usize)>) -> (usize, Stop) {
    loop {
        let remaining = buf.len() - pos;
        if remaining == 0 {
            return (pos, Stop::End);
        }
        if remaining < 17 {
            return (pos, Stop::Short);
        }
        let length = i32::from_be_bytes(be(buf, pos + 8));
        if length < 14 {
            return (pos, Stop::Corrupt);
        }
        let total = length as usize + LOG_OVERHEAD;
        if total > remaining {
            return (pos, Stop::Truncated);
        }
        out.push((pos, total));
        pos += total;
    }
}
