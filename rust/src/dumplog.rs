//! dump-log's output for a plain metadata batch, written into one buffer:
//! kafka-dump-log's text lines (--cluster-metadata-decoder), or the records of
//! the batch's JSON object (-o json), byte for byte as the pure path writes them
//! (quorumctl/render/dumplog.py). A value the generated decoders do not take
//! is handed to `fallback`, the pure path's own decoder.

use crate::batch::{
    crc_valid, plain_records, records_section, Header, Plain, ATTR_CONTROL, ATTR_DELETE_HORIZON,
    ATTR_LOG_APPEND_TIME, ATTR_TRANSACTIONAL,
};
use crate::decode::{push_int, Reader};
use crate::generated;

fn bool_text(b: bool) -> &'static [u8] {
    if b {
        b"true"
    } else {
        b"false"
    }
}

/// A number printed as i64 when it fits (the common case, faster) else i128.
#[derive(Clone, Copy)]
enum Int {
    Small(i64),
    Big(i128),
}

impl Int {
    #[inline]
    fn of(x: i128) -> Int {
        i64::try_from(x).map_or(Int::Big(x), Int::Small)
    }
}

#[inline]
fn push_num(out: &mut Vec<u8>, x: Int) {
    match x {
        Int::Small(v) => push_int(out, v),
        Int::Big(v) => push_int(out, v),
    }
}

/// kafka-dump-log's line for one batch (without the newline).
pub fn batch_line(out: &mut Vec<u8>, h: &Header, position: u64, crc_ok: bool) {
    let a = h.attributes;
    out.extend_from_slice(b"baseOffset: ");
    push_int(out, h.base_offset);
    out.extend_from_slice(b" lastOffset: ");
    push_int(
        out,
        i128::from(h.base_offset) + i128::from(h.last_offset_delta),
    );
    out.extend_from_slice(b" count: ");
    push_int(out, h.record_count);
    out.extend_from_slice(b" baseSequence: ");
    push_int(out, h.base_sequence);
    out.extend_from_slice(b" lastSequence: ");
    push_int(out, h.last_sequence());
    out.extend_from_slice(b" producerId: ");
    push_int(out, h.producer_id);
    out.extend_from_slice(b" producerEpoch: ");
    push_int(out, h.producer_epoch);
    out.extend_from_slice(b" partitionLeaderEpoch: ");
    push_int(out, h.leader_epoch);
    out.extend_from_slice(b" isTransactional: ");
    out.extend_from_slice(bool_text(a & ATTR_TRANSACTIONAL != 0));
    out.extend_from_slice(b" isControl: ");
    out.extend_from_slice(bool_text(a & ATTR_CONTROL != 0));
    out.extend_from_slice(b" deleteHorizonMs: ");
    if a & ATTR_DELETE_HORIZON != 0 {
        out.extend_from_slice(b"OptionalLong[");
        push_int(out, h.base_timestamp);
        out.push(b']');
    } else {
        out.extend_from_slice(b"OptionalLong.empty");
    }
    out.extend_from_slice(b" position: ");
    push_int(out, position);
    out.extend_from_slice(if a & ATTR_LOG_APPEND_TIME != 0 {
        b" LogAppendTime: "
    } else {
        b" CreateTime: "
    });
    push_int(out, h.max_timestamp);
    out.extend_from_slice(b" size: ");
    push_int(out, i64::from(h.length) + 12);
    out.extend_from_slice(b" magic: 2 compresscodec: ");
    out.extend_from_slice(h.compression_name().as_bytes());
    out.extend_from_slice(b" crc: ");
    push_int(out, h.crc);
    out.extend_from_slice(b" isvalid: ");
    out.extend_from_slice(bool_text(crc_ok));
}

/// Kafka's payload JSON {"type":..,"version":..,"data":{..}} of a metadata
/// value from the generated decoders; false (out unchanged) when they do not
/// take it.
pub fn metadata_payload(value: &[u8], out: &mut Vec<u8>) -> bool {
    if value.len() < 3 || value[0] != 1 || value[1] >= 128 || value[2] >= 128 {
        return false;
    }
    let Some(name) = generated::type_name(value[1]) else {
        return false;
    };
    let mark = out.len();
    out.extend_from_slice(b"{\"type\":\"");
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"\",\"version\":");
    push_int(out, value[2]);
    out.extend_from_slice(b",\"data\":");
    let mut r = Reader::new(value, 3);
    match generated::metadata_body(value[1], value[2], &mut r, out) {
        Some(Ok(())) if r.p == value.len() => {
            out.push(b'}');
            true
        }
        _ => {
            out.truncate(mark);
            false
        }
    }
}

/// What a batch gave: the number of records written and whether its CRC is
/// valid, or None when the batch is not a plain metadata batch (the pure path
/// takes it whole).
pub type Written = Option<(usize, bool)>;

/// The pure path's payload text of a value: (value, json, out).
pub type PayloadFallback<'f, E> = dyn FnMut(&[u8], bool, &mut Vec<u8>) -> Result<(), E> + 'f;

/// What opens a batch's JSON object before its records: (crc valid, out).
pub type BatchHead<'f, E> = dyn FnMut(bool, &mut Vec<u8>) -> Result<(), E> + 'f;

/// The text (`json` false: the batch line and one line per record, each ending
/// in a newline) or the JSON records (`json` true: the record objects joined by
/// commas, after what `head(crc_valid, out)` writes) of a plain metadata batch.
/// `fallback(value, json, out)` appends the pure path's payload text for a value
/// the generated decoders do not take.
pub fn metadata_batch<E>(
    batch: &[u8],
    position: u64,
    json: bool,
    out: &mut Vec<u8>,
    fallback: &mut PayloadFallback<'_, E>,
    head: &mut BatchHead<'_, E>,
) -> Result<Written, E> {
    let Some(h) = Header::parse(batch) else {
        return Ok(None);
    };
    if h.magic != 2 || h.attributes & ATTR_CONTROL != 0 || h.length as usize + 12 != batch.len() {
        return Ok(None);
    }
    let mut holder = Vec::new();
    let Some(data) = records_section(batch, &h, &mut holder) else {
        return Ok(None);
    };
    let mut recs: Vec<Plain> = Vec::new();
    if plain_records(data, h.record_count, &mut recs).is_none() {
        return Ok(None);
    }
    let mark = out.len();
    let crc_ok = crc_valid(batch, &h);
    if json {
        head(crc_ok, out)?;
    } else {
        batch_line(out, &h, position, crc_ok);
        out.push(b'\n');
    }
    let log_append = h.attributes & ATTR_LOG_APPEND_TIME != 0;
    let ts_name: &[u8] = if log_append {
        b" LogAppendTime: "
    } else {
        b" CreateTime: "
    };
    let base_off = i128::from(h.base_offset);
    let base_ts = i128::from(h.base_timestamp);
    let base_seq = i64::from(h.base_sequence);
    out.reserve(data.len() * 5);
    for (i, rec) in recs.iter().enumerate() {
        let value = &data[rec.start..rec.end];
        let seq = if base_seq >= 0 {
            (base_seq + i as i64) & 0x7fff_ffff
        } else {
            -1
        };
        let ts = if log_append {
            i128::from(h.max_timestamp)
        } else {
            base_ts + rec.ts_delta
        };
        let off = base_off + i as i128;
        let (off, ts) = (Int::of(off), Int::of(ts));
        if json {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(b"{\"offset\":");
            push_num(out, off);
            out.extend_from_slice(b",\"timestamp\":");
            push_num(out, ts);
            out.extend_from_slice(b",\"keySize\":-1,\"valueSize\":");
            push_int(out, value.len());
            out.extend_from_slice(b",\"sequence\":");
            push_int(out, seq);
            out.extend_from_slice(b",\"headers\":[],\"payload\":");
        } else {
            out.extend_from_slice(b"| offset: ");
            push_num(out, off);
            out.extend_from_slice(ts_name);
            push_num(out, ts);
            out.extend_from_slice(b" keySize: -1 valueSize: ");
            push_int(out, value.len());
            out.extend_from_slice(b" sequence: ");
            push_int(out, seq);
            out.extend_from_slice(b" headerKeys: [] payload: ");
        }
        if !metadata_payload(value, out) {
            if let Err(e) = fallback(value, json, out) {
                out.truncate(mark);
                return Err(e);
            }
        }
        out.extend_from_slice(if json { b"}" } else { b"\n" });
    }
    Ok(Some((recs.len(), crc_ok)))
}
