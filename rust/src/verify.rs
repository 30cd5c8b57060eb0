//! verify's batch-level pass (the pure path's `ops/verify.py` `_Scan.batch`
//! without `--deep`) over a file read in chunks: the frame walk, CRC-32C and
//! the header checks (record count, offset and epoch continuity) of every
//! batch, without a Python object per batch. A batch that passes every check
//! and is a plain data batch is tallied here; any other entry (the file's
//! first, a control batch, a legacy entry, one that fails a check, an epoch
//! change) goes to `handle`, the pure path's own code, which words the
//! problems: the checks and their messages keep one definition. Where the walk
//! stops short of a clean end, the pure path reads on from there and words the
//! tail.

use std::io::{ErrorKind, Read};

use crate::batch::{crc_valid, Header, ATTR_CONTROL, HEADER_SIZE, LOG_OVERHEAD};

/// What Kafka reads before deciding a batch is there (offset, length, epoch, magic).
pub const HEADER_UP_TO_MAGIC: usize = 17;
const MAGIC_OFFSET: usize = HEADER_UP_TO_MAGIC - 1;
/// Smaller batch lengths are corrupt (Kafka's LegacyRecord.RECORD_OVERHEAD_V0).
pub const MIN_RECORD_OVERHEAD: i32 = 14;
/// The read size, as the pure path's BatchReader.CHUNK.
pub const CHUNK: usize = 1 << 20;

/// The scan's state the inline checks read: the pure path's `LogState.last_offset`,
/// `_Scan.epoch`, the snapshot name's epoch and whether offsets must be contiguous.
#[derive(Debug, Clone, Default)]
pub struct Checks {
    pub contiguous: bool,
    /// i128: a hostile base offset near i64::MAX plus its delta is past i64
    pub last_offset: Option<i128>,
    pub epoch: Option<i32>,
    pub expect_epoch: Option<i32>,
}

/// The tallies of the batches checked here (the pure path adds them to its own).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    pub batches: u64,
    pub records: i64,
    pub max_ts: Option<i64>,
    /// (attributes, batches, file position of the first): the pure path orders its
    /// attribute counts by first occurrence
    pub attrs: Vec<(i16, u64, u64)>,
    pub producer_ids: Vec<i64>,
    /// the last offset of the file's last batch, when that batch was checked here
    pub last_offset: Option<i128>,
}

/// What an entry not checked here goes to: (file position, its bytes, the
/// checks' state, which it updates for what follows).
pub type Handle<'a, E> = dyn FnMut(u64, &[u8], &mut Checks) -> Result<(), E> + 'a;

/// Where the walk ended: `clean` when at the end of the range with nothing left.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct End {
    pub position: u64,
    pub clean: bool,
}

/// A plain data batch that passes every header check of the batch-level pass:
/// tallied, and true; false leaves the batch to the pure path (nothing changed).
pub fn check_inline(
    batch: &[u8],
    h: &Header,
    position: u64,
    c: &mut Checks,
    t: &mut Tally,
) -> bool {
    if h.attributes & ATTR_CONTROL != 0 || h.magic != 2 {
        return false;
    }
    let Some(prev) = c.last_offset else {
        return false;
    };
    let base = i128::from(h.base_offset);
    let delta = h.last_offset_delta;
    let count = h.record_count;
    if delta < 0 {
        return false;
    }
    let span = i64::from(delta) + 1;
    let count_ok = if c.contiguous {
        i64::from(count) == span
    } else {
        count >= 0 && i64::from(count) <= span
    };
    if !count_ok {
        return false;
    }
    // base > prev (and contiguous: base == prev + 1); then last > prev too
    if base <= prev || (c.contiguous && prev.checked_add(1) != Some(base)) {
        return false;
    }
    let last = base + i128::from(delta);
    if Some(h.leader_epoch) != c.epoch || c.expect_epoch.is_some_and(|e| e != h.leader_epoch) {
        return false;
    }
    if !crc_valid(batch, h) {
        return false;
    }
    c.last_offset = Some(last);
    t.batches += 1;
    t.records += i64::from(count);
    t.max_ts = Some(t.max_ts.map_or(h.max_timestamp, |m| m.max(h.max_timestamp)));
    match t.attrs.iter_mut().find(|a| a.0 == h.attributes) {
        Some(a) => a.1 += 1,
        None => t.attrs.push((h.attributes, 1, position)),
    }
    if h.producer_id >= 0 {
        if let Err(i) = t.producer_ids.binary_search(&h.producer_id) {
            t.producer_ids.insert(i, h.producer_id);
        }
    }
    t.last_offset = Some(last);
    true
}

/// Fill `buf` from `r` until it holds `want` bytes or the input ends.
fn fill<R: Read>(r: &mut R, buf: &mut Vec<u8>, want: usize) -> std::io::Result<()> {
    let mut have = buf.len();
    if have >= want {
        return Ok(());
    }
    buf.resize(want, 0);
    while have < want {
        match r.read(&mut buf[have..]) {
            Ok(0) => break,
            Ok(n) => have += n,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => {
                buf.truncate(have);
                return Err(e);
            }
        }
    }
    buf.truncate(have);
    Ok(())
}

/// Walk the entries of `r` (positioned at file position `start`, the range
/// ending at `end`) as the pure path's BatchReader does, checking each batch
/// inline or handing it to `handle(position, entry bytes, checks)`, which
/// updates `checks` for what follows. Memory: one chunk plus one batch (a
/// batch is read whole only after its length fits the range). A read error
/// ends the walk there, not clean: the pure path reads on and reports it.
pub fn walk<R: Read, E>(
    r: &mut R,
    start: u64,
    end: u64,
    c: &mut Checks,
    t: &mut Tally,
    handle: &mut Handle<'_, E>,
) -> Result<End, E> {
    let mut buf: Vec<u8> = Vec::new();
    let mut base = start; // file position of buf[0]
    let mut off = 0usize;
    let mut first = true;
    loop {
        let pos = base + off as u64;
        let remaining = end.saturating_sub(pos);
        let stop = End {
            position: pos,
            clean: false,
        };
        if remaining == 0 {
            return Ok(End {
                position: pos,
                clean: true,
            });
        }
        if remaining < HEADER_UP_TO_MAGIC as u64 {
            return Ok(stop);
        }
        let remaining = usize::try_from(remaining).unwrap_or(usize::MAX);
        if buf.len() - off < HEADER_UP_TO_MAGIC {
            buf.drain(..off);
            base = pos;
            off = 0;
            if fill(r, &mut buf, CHUNK.min(remaining)).is_err() || buf.len() < HEADER_UP_TO_MAGIC {
                return Ok(stop);
            }
        }
        let mut len4 = [0u8; 4];
        len4.copy_from_slice(&buf[off + 8..off + 12]);
        let length = i32::from_be_bytes(len4);
        if length < MIN_RECORD_OVERHEAD {
            return Ok(stop);
        }
        let total = length as usize + LOG_OVERHEAD;
        if total > remaining {
            return Ok(stop);
        }
        if buf.len() - off < total {
            buf.drain(..off);
            base = pos;
            off = 0;
            let want = if remaining > CHUNK {
                CHUNK.max(total)
            } else {
                remaining
            };
            if fill(r, &mut buf, want).is_err() || buf.len() < total {
                return Ok(stop);
            }
        }
        let entry = &buf[off..off + total];
        let inline = !first
            && total >= HEADER_SIZE
            && Header::parse(entry).is_some_and(|h| check_inline(entry, &h, pos, c, t));
        if inline {
            // the file's last batch so far was checked here
        } else {
            // a v2 batch handed over is the file's last batch so far; an entry of another
            // magic (or shorter than a v2 header) is no batch, as the pure path counts them
            if entry[MAGIC_OFFSET] == 2 && total >= HEADER_SIZE {
                t.last_offset = None;
            }
            handle(pos, entry, c)?;
        }
        first = false;
        off += total;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(base: i64, epoch: i32, records: i32, attributes: i16, pid: i64) -> Vec<u8> {
        let body = vec![0u8; 3 * records as usize];
        let length = (HEADER_SIZE - LOG_OVERHEAD + body.len()) as i32;
        let mut b = Vec::new();
        b.extend_from_slice(&base.to_be_bytes());
        b.extend_from_slice(&length.to_be_bytes());
        b.extend_from_slice(&epoch.to_be_bytes());
        b.push(2);
        b.extend_from_slice(&[0; 4]);
        b.extend_from_slice(&attributes.to_be_bytes());
        b.extend_from_slice(&(records - 1).to_be_bytes());
        b.extend_from_slice(&1000i64.to_be_bytes());
        b.extend_from_slice(&(1000i64 + base).to_be_bytes());
        b.extend_from_slice(&pid.to_be_bytes());
        b.extend_from_slice(&0i16.to_be_bytes());
        b.extend_from_slice(&(-1i32).to_be_bytes());
        b.extend_from_slice(&records.to_be_bytes());
        b.extend_from_slice(&body);
        let crc = crc32c::crc32c(&b[21..]);
        b[17..21].copy_from_slice(&crc.to_be_bytes());
        b
    }

    fn run(file: &[u8], c: &mut Checks) -> (End, Tally, Vec<u64>) {
        let mut t = Tally::default();
        let mut handed = Vec::new();
        let mut h = |pos: u64, e: &[u8], c: &mut Checks| -> Result<(), ()> {
            handed.push(pos);
            let h = Header::parse(e).unwrap();
            c.last_offset = Some(i128::from(h.base_offset) + i128::from(h.last_offset_delta));
            c.epoch = Some(h.leader_epoch);
            Ok(())
        };
        let end = walk(&mut &file[..], 0, file.len() as u64, c, &mut t, &mut h).unwrap();
        (end, t, handed)
    }

    #[test]
    fn an_entry_of_another_magic_after_the_last_batch_keeps_its_offset() {
        // the pure path counts a magic 0/1 entry as no batch: the file's last batch (checked
        // here) still gives the last offset
        let mut f = batch(0, 1, 2, 0, -1);
        f.extend(batch(2, 1, 3, 0, -1));
        let legacy = f.len() as u64;
        let mut entry = vec![0u8; 12 + 20];
        entry[..8].copy_from_slice(&5i64.to_be_bytes());
        entry[8..12].copy_from_slice(&20i32.to_be_bytes());
        entry[MAGIC_OFFSET] = 1;
        f.extend(&entry);
        let mut c = Checks {
            contiguous: true,
            ..Checks::default()
        };
        let mut t = Tally::default();
        let mut handed = Vec::new();
        let mut h = |pos: u64, e: &[u8], c: &mut Checks| -> Result<(), ()> {
            handed.push(pos);
            if e[MAGIC_OFFSET] == 2 {
                let h = Header::parse(e).unwrap();
                c.last_offset = Some(i128::from(h.base_offset) + i128::from(h.last_offset_delta));
                c.epoch = Some(h.leader_epoch);
            }
            Ok(())
        };
        let end = walk(&mut &f[..], 0, f.len() as u64, &mut c, &mut t, &mut h).unwrap();
        assert!(end.clean);
        assert_eq!(handed, vec![0, legacy]);
        assert_eq!(t.batches, 1);
        assert_eq!(t.last_offset, Some(4));
    }

    #[test]
    fn plain_batches_are_tallied_and_the_rest_handed_over() {
        let mut f = batch(0, 1, 2, 0, -1);
        let second = f.len() as u64;
        f.extend(batch(2, 1, 3, 4, 7));
        let third = f.len() as u64;
        f.extend(batch(5, 1, 1, ATTR_CONTROL, -1)); // control: handed over
        f.extend(batch(6, 2, 1, 0, 7)); // epoch change: handed over
        f.extend(batch(7, 2, 2, 4, 3));
        let mut c = Checks {
            contiguous: true,
            ..Checks::default()
        };
        let (end, t, handed) = run(&f, &mut c);
        assert_eq!(
            end,
            End {
                position: f.len() as u64,
                clean: true
            }
        );
        assert_eq!(
            handed,
            vec![0, third, third + batch(5, 1, 1, 0, 0).len() as u64]
        );
        assert_eq!(t.batches, 2);
        assert_eq!(t.records, 5);
        assert_eq!(t.max_ts, Some(1007));
        assert_eq!(t.attrs, vec![(4, 2, second)]);
        assert_eq!(t.producer_ids, vec![3, 7]);
        assert_eq!(t.last_offset, Some(8));
        assert_eq!(c.last_offset, Some(8));
    }

    #[test]
    fn a_bad_crc_a_gap_and_a_torn_tail_are_left_to_the_pure_path() {
        let mut f = batch(0, 1, 1, 0, -1);
        let mut bad = batch(1, 1, 1, 0, -1);
        bad[62] ^= 1;
        let at_bad = f.len() as u64;
        f.extend(bad);
        let at_gap = f.len() as u64;
        f.extend(batch(5, 1, 1, 0, -1));
        let tail = f.len() as u64;
        f.extend(&batch(6, 1, 1, 0, -1)[..30]);
        let mut c = Checks {
            contiguous: true,
            ..Checks::default()
        };
        let (end, t, handed) = run(&f, &mut c);
        assert_eq!(
            end,
            End {
                position: tail,
                clean: false
            }
        );
        assert_eq!(handed, vec![0, at_bad, at_gap]);
        assert_eq!(t.batches, 0);
    }

    #[test]
    fn hostile_lengths_stop_the_walk_without_reading_on() {
        let mut f = batch(0, 1, 1, 0, -1);
        f.extend(&0i64.to_be_bytes());
        f.extend(&i32::MAX.to_be_bytes());
        f.extend(&[0u8; 20]);
        let mut c = Checks::default();
        let (end, _, handed) = run(&f, &mut c);
        assert!(!end.clean);
        assert_eq!(handed, vec![0]);
        let zeros = vec![0u8; 100];
        let (end, _, handed) = run(&zeros, &mut Checks::default());
        assert_eq!(
            end,
            End {
                position: 0,
                clean: false
            }
        );
        assert!(handed.is_empty());
    }
}
