//! quorumctl's compiled core: the hot loops of dump-log end to end without a
//! Python object per record (the frame walk, CRC-32C, decompression, record
//! frames and varints, metadata record decoding generated from the Python
//! schema declarations, and the output text). Safe Rust; the PyO3 binding
//! layer is `python.rs`. The pure-Python path stays complete: every function
//! here has its definition there, and `tests/unit/test_core_differential.py` holds
//! the two to the same bytes.

pub mod batch;
pub mod compress;
pub mod decode;
pub mod dumplog;
pub mod verify;
#[rustfmt::skip]
pub mod generated;

#[cfg(feature = "python")]
mod python;
