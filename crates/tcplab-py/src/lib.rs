//! PyO3 glue: `tcplab._core`. JSON in, Python objects out; the GIL is released while simulating
//! so trials run in parallel threads.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyModule;

/// Run one trial of a normalized config (docs/design.md §3); returns the raw result (§4) as a
/// JSON string.
#[pyfunction]
fn run_json(py: Python<'_>, config_json: String) -> PyResult<String> {
    let out = py.allow_threads(move || {
        tcplab_sim::run_json(&config_json)
            .map(|r| serde_json::to_string(&r).expect("result serialises"))
    });
    out.map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Every TCP knob: name, kind, default, documentation (JSON list).
#[pyfunction]
fn tcp_knobs_json() -> String {
    serde_json::to_string(&tcplab_sim::tcp::config::TcpConfig::schema()).expect("schema serialises")
}

/// Every congestion-control algorithm with its parameters (JSON list).
#[pyfunction]
fn ccas_json() -> String {
    let list: Vec<serde_json::Value> = tcplab_cc::list()
        .iter()
        .map(|c| {
            serde_json::json!({
                "name": c.name,
                "summary": c.summary,
                "source": c.source,
                "params": c.params.iter().map(|p| serde_json::json!({
                    "name": p.name,
                    "kind": format!("{:?}", p.kind),
                    "default": p.default,
                    "doc": p.doc,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    serde_json::to_string(&list).expect("list serialises")
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(run_json, m)?)?;
    m.add_function(wrap_pyfunction!(tcp_knobs_json, m)?)?;
    m.add_function(wrap_pyfunction!(ccas_json, m)?)?;
    Ok(())
}
