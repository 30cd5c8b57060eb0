//! A file's bytes through the frame walk and dump-log's batch output (text and
//! JSON): no panic, no unbounded allocation (libFuzzer's -rss_limit_mb), no hang.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quorumctl_core::batch::{crc_valid, walk, Header};
use quorumctl_core::dumplog::metadata_batch;

fuzz_target!(|data: &[u8]| {
    let mut batches = Vec::new();
    let (end, _stop) = walk(data, 0, &mut batches);
    assert!(end <= data.len());
    let mut out = Vec::new();
    for &(start, size) in &batches {
        let batch = &data[start..start + size];
        if let Some(h) = Header::parse(batch) {
            let _ = crc_valid(batch, &h);
        }
        for json in [false, true] {
            out.clear();
            let mut fallback = |_v: &[u8], _j: bool, o: &mut Vec<u8>| -> Result<(), ()> {
                o.extend_from_slice(b"{}");
                Ok(())
            };
            let mut head = |_ok: bool, o: &mut Vec<u8>| -> Result<(), ()> {
                o.push(b'[');
                Ok(())
            };
            let got = metadata_batch(batch, start as u64, json, &mut out, &mut fallback, &mut head);
            if let Ok(Some((n, _))) = got {
                assert!(n <= batch.len() * 64);
            }
        }
    }
});
