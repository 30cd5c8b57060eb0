//! What the generated decoders (generated.rs) are made of: a bounded reader of
//! Kafka's wire primitives and the JSON text forms the pure path writes
//! (msgspec's strings and base64, Kafka's Uuid.toString).

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;

/// A value the generated decoders leave to the Python decoder: malformed input
/// (whose error text is Python's) or a rare form (unknown tagged fields).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fallback;

pub type Res = Result<(), Fallback>;

/// A cursor over one value; every read is bounded by the value's end.
pub struct Reader<'a> {
    pub b: &'a [u8],
    pub p: usize,
}

macro_rules! be {
    ($name:ident, $t:ty, $n:expr) => {
        #[inline]
        pub fn $name(&mut self) -> Result<$t, Fallback> {
            let s = self.take($n)?;
            let mut a = [0u8; $n];
            a.copy_from_slice(s);
            Ok(<$t>::from_be_bytes(a))
        }
    };
}

impl<'a> Reader<'a> {
    pub fn new(b: &'a [u8], p: usize) -> Self {
        Reader { b, p }
    }

    #[inline]
    pub fn left(&self) -> usize {
        self.b.len() - self.p
    }

    #[inline]
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], Fallback> {
        if n > self.left() {
            return Err(Fallback);
        }
        let s = &self.b[self.p..self.p + n];
        self.p += n;
        Ok(s)
    }

    #[inline]
    pub fn u8(&mut self) -> Result<u8, Fallback> {
        let x = *self.b.get(self.p).ok_or(Fallback)?;
        self.p += 1;
        Ok(x)
    }

    be!(i8, i8, 1);
    be!(i16, i16, 2);
    be!(u16, u16, 2);
    be!(i32, i32, 4);
    be!(u32, u32, 4);
    be!(i64, i64, 8);

    /// An unsigned varint of at most 5 bytes (the pure path's read_uvarint).
    #[inline]
    pub fn uvarint(&mut self) -> Result<u64, Fallback> {
        let (v, p) = uvarint(self.b, self.p, 5).ok_or(Fallback)?;
        self.p = p;
        Ok(v)
    }
}

/// An unsigned varint of at most `max` bytes at `pos`: (value, next position).
#[inline]
pub fn uvarint(b: &[u8], mut pos: usize, max: u32) -> Option<(u64, usize)> {
    let mut result: u64 = 0;
    let mut shift = 0u32;
    loop {
        let c = *b.get(pos)?;
        pos += 1;
        result |= u64::from(c & 0x7f) << shift;
        if c < 0x80 {
            return Some((result, pos));
        }
        shift += 7;
        if shift > 7 * (max - 1) {
            return None;
        }
    }
}

/// A zig-zag varint of at most `max` bytes (5: int, 10: long) as i128: a
/// 10-byte varint holds up to 70 bits, which the pure path keeps exactly.
#[inline]
pub fn varint(b: &[u8], pos: usize, max: u32) -> Option<(i128, usize)> {
    let c = *b.get(pos)?;
    if c < 0x80 {
        let u = i128::from(c);
        return Some(((u >> 1) ^ -(u & 1), pos + 1));
    }
    let mut result: u128 = 0;
    let mut shift = 0u32;
    let mut p = pos;
    loop {
        let c = *b.get(p)?;
        p += 1;
        result |= u128::from(c & 0x7f) << shift;
        if c < 0x80 {
            let u = result as i128;
            return Some(((u >> 1) ^ -(u & 1), p));
        }
        shift += 7;
        if shift > 7 * (max - 1) {
            return None;
        }
    }
}

#[inline]
pub fn key(out: &mut Vec<u8>, first: &mut bool, k: &[u8]) {
    if !*first {
        out.push(b',');
    }
    *first = false;
    out.extend_from_slice(k);
}

#[inline]
pub fn push_int<T: itoa::Integer>(out: &mut Vec<u8>, x: T) {
    let mut b = itoa::Buffer::new();
    out.extend_from_slice(b.format(x).as_bytes());
}

/// Kafka's Uuid.toString: base64url of the 16 bytes without padding.
#[inline]
pub fn push_uuid(out: &mut Vec<u8>, raw: &[u8]) {
    let mut b = [0u8; 24];
    let n = URL_SAFE_NO_PAD.encode_slice(raw, &mut b).unwrap_or(0);
    out.push(b'"');
    out.extend_from_slice(&b[..n]);
    out.push(b'"');
}

/// Bytes as msgspec writes them: standard base64 with padding, quoted.
pub fn push_base64(out: &mut Vec<u8>, raw: &[u8]) -> Res {
    out.push(b'"');
    let s = STANDARD.encode(raw);
    out.extend_from_slice(s.as_bytes());
    out.push(b'"');
    Ok(())
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// A string (strict UTF-8, as Python's decode) as msgspec's JSON writes it:
/// `"` and `\` escaped, control characters as \b \t \n \f \r or \u00XX,
/// everything else (non-ASCII included) as it is.
pub fn push_str(out: &mut Vec<u8>, raw: &[u8]) -> Res {
    if std::str::from_utf8(raw).is_err() {
        return Err(Fallback);
    }
    out.push(b'"');
    let mut start = 0;
    for (i, &c) in raw.iter().enumerate() {
        if c >= 0x20 && c != b'"' && c != b'\\' {
            continue;
        }
        out.extend_from_slice(&raw[start..i]);
        start = i + 1;
        match c {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            _ => {
                out.extend_from_slice(b"\\u00");
                out.push(HEX[usize::from(c >> 4)]);
                out.push(HEX[usize::from(c & 15)]);
            }
        }
    }
    out.extend_from_slice(&raw[start..]);
    out.push(b'"');
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints() {
        assert_eq!(uvarint(&[0x96, 0x01], 0, 5), Some((150, 2)));
        assert_eq!(uvarint(&[0xff, 0xff, 0xff, 0xff, 0xff, 0x01], 0, 5), None);
        assert_eq!(varint(&[0x03], 0, 5), Some((-2, 1)));
        assert_eq!(varint(&[0x80, 0x01], 0, 5), Some((64, 2)));
        assert_eq!(uvarint(&[0x80], 0, 5), None);
    }

    #[test]
    fn strings() {
        let mut o = Vec::new();
        push_str(&mut o, b"a\"b\\c\n\x01\xc3\xa9").unwrap();
        assert_eq!(o, b"\"a\\\"b\\\\c\\n\\u0001\xc3\xa9\"".to_vec());
        assert_eq!(push_str(&mut o, b"\xed\xa0\x80"), Err(Fallback));
        let mut u = Vec::new();
        push_uuid(&mut u, &[0u8; 16]);
        assert_eq!(u, b"\"AAAAAAAAAAAAAAAAAAAAAA\"".to_vec());
    }
}
