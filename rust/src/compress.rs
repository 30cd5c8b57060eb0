//! Decompression of a batch's records section (attributes bits 0-2), bounded:
//! output beyond `cap` bytes is never produced (the caller then leaves the
//! batch to the pure path, which streams and reports it).

use std::io::Read;

pub const XERIAL_MAGIC: &[u8] = b"\x82SNAPPY\x00";

/// The records section decompressed, or None: unknown codec, data that does
/// not decompress, or more than `cap` bytes of output.
pub fn decompress(codec: u8, data: &[u8], cap: usize) -> Option<Vec<u8>> {
    match codec {
        1 => read_capped(flate2::read::GzDecoder::new(data), cap),
        2 => snappy(data, cap),
        3 => read_capped(lz4_flex::frame::FrameDecoder::new(data), cap),
        4 => read_capped(zstd::stream::read::Decoder::with_buffer(data).ok()?, cap),
        _ => None,
    }
}

fn read_capped<R: Read>(r: R, cap: usize) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    r.take(cap as u64 + 1).read_to_end(&mut out).ok()?;
    if out.len() > cap {
        return None;
    }
    Some(out)
}

/// Java's xerial framing ([int32 length][raw snappy block]... after a 16-byte
/// header) or one raw snappy block.
fn snappy(data: &[u8], cap: usize) -> Option<Vec<u8>> {
    let mut dec = snap::raw::Decoder::new();
    if data.starts_with(XERIAL_MAGIC) && data.len() >= 16 {
        let mut out = Vec::new();
        let mut pos = 16;
        while pos < data.len() {
            let len = data.get(pos..pos + 4)?;
            let size = i32::from_be_bytes([len[0], len[1], len[2], len[3]]);
            pos += 4;
            let size = usize::try_from(size).ok()?;
            let block = data.get(pos..pos.checked_add(size)?)?;
            let n = snap::raw::decompress_len(block).ok()?;
            if out.len() + n > cap {
                return None;
            }
            let at = out.len();
            out.resize(at + n, 0);
            let got = dec.decompress(block, &mut out[at..]).ok()?;
            out.truncate(at + got);
            pos += size;
        }
        return Some(out);
    }
    let n = snap::raw::decompress_len(data).ok()?;
    if n > cap {
        return None;
    }
    dec.decompress_vec(data).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn codecs_round_trip_and_cap() {
        let data: Vec<u8> = (0..100_000u32)
            .flat_map(|i| (i % 251).to_be_bytes())
            .collect();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&data).unwrap();
        let gz = gz.finish().unwrap();
        assert_eq!(decompress(1, &gz, 1 << 20).unwrap(), data);
        assert!(decompress(1, &gz, 1000).is_none());
        let raw = snap::raw::Encoder::new().compress_vec(&data).unwrap();
        assert_eq!(decompress(2, &raw, 1 << 20).unwrap(), data);
        let mut xerial = XERIAL_MAGIC.to_vec();
        xerial.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 1]);
        for chunk in data.chunks(32 * 1024) {
            let b = snap::raw::Encoder::new().compress_vec(chunk).unwrap();
            xerial.extend_from_slice(&(b.len() as i32).to_be_bytes());
            xerial.extend_from_slice(&b);
        }
        assert_eq!(decompress(2, &xerial, 1 << 20).unwrap(), data);
        assert!(decompress(2, &xerial, 1000).is_none());
        let mut lz = lz4_flex::frame::FrameEncoder::new(Vec::new());
        lz.write_all(&data).unwrap();
        let lz = lz.finish().unwrap();
        assert_eq!(decompress(3, &lz, 1 << 20).unwrap(), data);
        let zs = zstd::encode_all(&data[..], 3).unwrap();
        assert_eq!(decompress(4, &zs, 1 << 20).unwrap(), data);
        assert!(decompress(4, &zs, 10).is_none());
        assert!(decompress(5, &zs, 1 << 20).is_none());
        assert!(decompress(4, b"garbage", 1 << 20).is_none());
    }
}
