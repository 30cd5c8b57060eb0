//! A file's bytes through verify's batch-level pass (the walk reading in chunks,
//! the inline checks, the hand-over of every other entry): no panic, no
//! unbounded allocation (libFuzzer's -rss_limit_mb), no hang; the walk ends
//! inside the file and hands over only whole entries that lie in it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quorumctl_core::batch::Header;
use quorumctl_core::verify::{walk, Checks, Tally};

fuzz_target!(|data: &[u8]| {
    for contiguous in [false, true] {
        let mut c = Checks {
            contiguous,
            ..Checks::default()
        };
        let mut t = Tally::default();
        let mut handed = 0u64;
        let mut handle = |pos: u64, entry: &[u8], c: &mut Checks| -> Result<(), ()> {
            assert!(pos as usize + entry.len() <= data.len());
            assert_eq!(&data[pos as usize..pos as usize + entry.len()], entry);
            handed += 1;
            // as the pure path leaves it after a batch: its last offset and epoch
            if let Some(h) = Header::parse(entry) {
                c.last_offset = Some(i128::from(h.base_offset) + i128::from(h.last_offset_delta));
                c.epoch = Some(h.leader_epoch);
            }
            Ok(())
        };
        let end = walk(&mut &data[..], 0, data.len() as u64, &mut c, &mut t, &mut handle).unwrap();
        assert!(end.position <= data.len() as u64);
        assert!(t.batches + handed <= data.len() as u64 / 12 + 1);
    }
});
