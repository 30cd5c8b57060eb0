//! The binding layer: `quorumctl._core`. A panic never reaches Python as a
//! traceback: each entry point catches it and raises CoreError (a ValueError),
//! which the commands report in one line like any undecodable input.

use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use crate::dumplog;

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
/// commas; (bytes, record count), or None when the batch is not a plain
/// metadata batch. `fallback(value, json)` gives the pure path's payload text
/// of a value the generated decoders do not take.
#[pyfunction]
fn metadata_batch<'py>(
    py: Python<'py>,
    data: &[u8],
    position: u64,
    json: bool,
    fallback: &Bound<'py, PyAny>,
) -> PyResult<Option<(Bound<'py, PyBytes>, usize)>> {
    guarded("dump-log", || {
        let mut out = Vec::new();
        let mut cb = |value: &[u8], json: bool, out: &mut Vec<u8>| -> PyResult<()> {
            let text = fallback.call1((PyBytes::new(py, value), json))?;
            let text = text.downcast::<PyString>()?;
            out.extend_from_slice(text.to_str()?.as_bytes());
            Ok(())
        };
        match dumplog::metadata_batch(data, position, json, &mut out, &mut cb)? {
            Some(n) => Ok(Some((PyBytes::new(py, &out), n))),
            None => Ok(None),
        }
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
    m.add_function(wrap_pyfunction!(_panic_for_test, m)?)?;
    Ok(())
}
