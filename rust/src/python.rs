//! The binding layer: `quorumctl._core`. A panic never reaches Python as a
//! traceback: each entry point catches it and raises CoreError (a ValueError),
//! which the commands report in one line like any undecodable input.

use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use crate::dumplog;
use crate::verify;

thread_local! {
    static BUF: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}
/// The output buffer kept between calls, at most (a bigger one is freed).
const KEEP_BYTES: usize = 64 << 20;

create_exception!(
    _core,
    CoreError,
    PyValueError,
    "The compiled core could not handle an input (a bug: report it)."
);

fn guarded<T>(what: &str, f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(panic) => {
            let msg = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic".to_string());
            Err(CoreError::new_err(format!(
                "internal error in the compiled core ({what}): {msg}"
            )))
        }
    }
}

/// dump-log's output of one plain metadata batch (the whole batch's bytes,
/// header included, at file `position`): with json false the batch line and
/// its record lines, with json true the records' JSON objects joined by
/// commas; (bytes, record count, CRC valid), or None when the batch is not a plain
/// metadata batch. `fallback(value, json)` gives the pure path's payload text
/// of a value the generated decoders do not take.
///
/// With json and `head` given, `head(crc_valid)` gives the batch object's text up
/// to its records (`{"kind":"batch",...,"records":[`): the output is then the
/// whole JSON line, records closed and a newline after.
#[pyfunction]
#[pyo3(signature = (data, position, json, fallback, head=None))]
fn metadata_batch<'py>(
    py: Python<'py>,
    data: &[u8],
    position: u64,
    json: bool,
    fallback: &Bound<'py, PyAny>,
    head: Option<&Bound<'py, PyAny>>,
) -> PyResult<Option<(Bound<'py, PyBytes>, usize, bool)>> {
    guarded("dump-log", || {
        // one buffer kept between calls: a batch's output is written without growing it
        let mut out = BUF.with(|b| std::mem::take(&mut *b.borrow_mut()));
        out.clear();
        let mut cb = |value: &[u8], json: bool, out: &mut Vec<u8>| -> PyResult<()> {
            let text = fallback.call1((PyBytes::new(py, value), json))?;
            let text = text.downcast::<PyString>()?;
            out.extend_from_slice(text.to_str()?.as_bytes());
            Ok(())
        };
        let mut head_cb = |crc_ok: bool, out: &mut Vec<u8>| -> PyResult<()> {
            if let Some(head) = head {
                let text = head.call1((crc_ok,))?;
                out.extend_from_slice(text.downcast::<PyString>()?.to_str()?.as_bytes());
            }
            Ok(())
        };
        let got = dumplog::metadata_batch(data, position, json, &mut out, &mut cb, &mut head_cb);
        let got = match got {
            Ok(Some(w)) if json && head.is_some() => {
                out.extend_from_slice(b"]}\n");
                Ok(Some(w))
            }
            other => other,
        };
        let result = match got {
            Ok(Some((n, crc_ok))) => Ok(Some((PyBytes::new(py, &out), n, crc_ok))),
            Ok(None) => Ok(None),
            Err(e) => Err(e),
        };
        if out.capacity() <= KEEP_BYTES {
            out.clear();
            BUF.with(|b| *b.borrow_mut() = out);
        }
        result
    })
}

/// The open file of a verify walk, as the pure path opens it: O_NONBLOCK (a
/// FIFO swapped in never blocks the open), then a regular file or nothing.
fn open_regular(path: &str, start: u64) -> Option<std::fs::File> {
    use std::io::{Seek, SeekFrom};
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NONBLOCK);
    }
    let mut f = opts.open(path).ok()?;
    if !f.metadata().ok()?.is_file() {
        return None;
    }
    f.seek(SeekFrom::Start(start)).ok()?;
    Some(f)
}

/// The walk's result: (end position, clean end, batches, records, max timestamp,
/// [(attributes, batches, first position)], producer ids, the last batch's last
/// offset when it was checked here, the log's last offset).
type VerifyWalk = (
    u64,
    bool,
    u64,
    i64,
    Option<i64>,
    Vec<(i16, u64, u64)>,
    Vec<i64>,
    Option<i128>,
    Option<i128>,
);

/// verify's batch-level pass over `path` from `start` to `end` (rust/src/verify.rs):
/// the plain batches are checked and tallied here, every other entry goes to
/// `handle(position, entry bytes, the log's last offset before it)`, which
/// returns the scan's (last offset, epoch) after it. A file that cannot be opened here is left whole to the pure path
/// (end position `start`, not clean).
#[pyfunction]
#[pyo3(signature = (path, start, end, contiguous, last_offset, epoch, expect_epoch, handle))]
#[allow(clippy::too_many_arguments)]
fn verify_walk(
    py: Python<'_>,
    path: &str,
    start: u64,
    end: u64,
    contiguous: bool,
    last_offset: Option<i128>,
    epoch: Option<i32>,
    expect_epoch: Option<i32>,
    handle: &Bound<'_, PyAny>,
) -> PyResult<VerifyWalk> {
    guarded("verify", || {
        let mut checks = verify::Checks {
            contiguous,
            last_offset,
            epoch,
            expect_epoch,
        };
        let mut t = verify::Tally::default();
        let Some(mut f) = open_regular(path, start) else {
            return Ok((
                start,
                false,
                0,
                0,
                None,
                Vec::new(),
                Vec::new(),
                None,
                last_offset,
            ));
        };
        let mut cb = |pos: u64, entry: &[u8], c: &mut verify::Checks| -> PyResult<()> {
            let (last, epoch): (Option<i128>, Option<i32>) = handle
                .call1((pos, PyBytes::new(py, entry), c.last_offset))?
                .extract()?;
            c.last_offset = last;
            c.epoch = epoch;
            Ok(())
        };
        let e = verify::walk(&mut f, start, end, &mut checks, &mut t, &mut cb)?;
        Ok((
            e.position,
            e.clean,
            t.batches,
            t.records,
            t.max_ts,
            t.attrs,
            t.producer_ids,
            t.last_offset,
            checks.last_offset,
        ))
    })
}

/// plain_value_spans' three lists: timestamp deltas, value starts, value ends.
type Spans<'py> = (Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>);

/// The records of an uncompressed batch body as Kafka's metadata log writes them
/// (records.batch.plain_value_spans, whose definition this follows: batch.rs
/// plain_records): ([timestamp delta], [value start], [value end]) with positions
/// in `data`, whose records section starts at `pos`; None for any other body.
#[pyfunction]
fn plain_value_spans<'py>(
    py: Python<'py>,
    data: &[u8],
    pos: usize,
    count: i64,
) -> PyResult<Option<Spans<'py>>> {
    guarded("plain_value_spans", || {
        let Some(body) = data.get(pos..) else {
            return Ok(None);
        };
        let Ok(count) = i32::try_from(count) else {
            return Ok(None);
        };
        let mut recs = Vec::new();
        if crate::batch::plain_records(body, count, &mut recs).is_none() {
            return Ok(None);
        }
        let starts: Vec<usize> = recs.iter().map(|r| r.start + pos).collect();
        let ends: Vec<usize> = recs.iter().map(|r| r.end + pos).collect();
        // a timestamp delta is a varlong: past i64 only in a hostile batch
        let tss = match recs
            .iter()
            .map(|r| i64::try_from(r.ts_delta).ok())
            .collect::<Option<Vec<i64>>>()
        {
            Some(t) => t.into_pyobject(py)?.into_any(),
            None => recs
                .iter()
                .map(|r| r.ts_delta)
                .collect::<Vec<i128>>()
                .into_pyobject(py)?
                .into_any(),
        };
        Ok(Some((
            tss,
            starts.into_pyobject(py)?.into_any(),
            ends.into_pyobject(py)?.into_any(),
        )))
    })
}

/// Raise a panic inside the core (tests: a panic must become CoreError).
#[pyfunction]
fn _panic_for_test() -> PyResult<()> {
    guarded("test", || panic!("deliberate"))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("CoreError", m.py().get_type::<CoreError>())?;
    m.add_function(wrap_pyfunction!(metadata_batch, m)?)?;
    m.add_function(wrap_pyfunction!(verify_walk, m)?)?;
    m.add_function(wrap_pyfunction!(plain_value_spans, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_test, m)?)?;
    Ok(())
}
