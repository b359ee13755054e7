//! `tcplab._core.linkem_serve`: the kernel engine's link emulator (crates/tcplab-linkem), run
//! in-process so that `python -m tcplab.kernel.linkem` needs no separately installed binary.
//!
//! Registered from lib.rs with `linkem::register(m)?`.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyModule;

/// Run the link emulator described by `config_json` (see crates/tcplab-linkem/src/config.rs) in
/// the current process and network namespace until it is told to stop (`stop` or end of file on
/// standard input, or its `max_runtime_ns`). Prints `ready <epoch>` on standard output once its
/// sockets are bound. Releases the GIL while running; returns the report as a JSON string.
/// Raises RuntimeError when the configuration is invalid or a socket cannot be opened.
#[pyfunction]
fn linkem_serve(py: Python<'_>, config_json: String) -> PyResult<String> {
    py.allow_threads(move || tcplab_linkem::serve_json(&config_json))
        .map_err(PyRuntimeError::new_err)
}

/// Add the emulator's functions to the `_core` module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(linkem_serve, m)?)?;
    Ok(())
}
