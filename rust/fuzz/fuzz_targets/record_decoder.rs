//! A record value through the generated metadata and control decoders: no
//! panic, output only for values that decode to their last byte.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quorumctl_core::decode::Reader;
use quorumctl_core::dumplog::metadata_payload;
use quorumctl_core::generated::control_body;

fuzz_target!(|data: &[u8]| {
    let mut out = Vec::new();
    if metadata_payload(data, &mut out) {
        assert!(out.starts_with(b"{\"type\":\"") && out.ends_with(b"}"));
    } else {
        assert!(out.is_empty());
    }
    if data.len() >= 2 {
        let ctype = i16::from(data[0] % 8);
        let version = i16::from(data[1] % 2);
        let mut r = Reader::new(data, 2);
        out.clear();
        let _ = control_body(ctype, version, &mut r, &mut out);
    }
});
