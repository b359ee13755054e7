//! PyO3 glue: `tcplab._core`. JSON in, Python objects out; the GIL is released while simulating
//! so trials run in parallel threads.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyModule;
use tcplab_cc::ParamKind;

mod capture;
mod linkem;
mod script;
mod trace;

/// Parse JSON text into Python objects with the standard library's `json` module.
fn from_json<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import("json")?.call_method1("loads", (text,))
}

/// Run one trial of a normalized config (docs/design.md §3) given as JSON text; returns the raw
/// result (§4) as a dict. The GIL is released while the simulation runs.
#[pyfunction]
fn run<'py>(py: Python<'py>, config_json: String) -> PyResult<Bound<'py, PyAny>> {
    let out = py.allow_threads(move || run_trial(&config_json));
    let text = out.map_err(PyValueError::new_err)?;
    from_json(py, &text)
}

/// One trial, with pcap captures when the config asks for them.
fn run_trial(config_json: &str) -> Result<String, String> {
    let cfg = tcplab_sim::Config::from_json(config_json).map_err(|e| e.to_string())?;
    let mut sim = tcplab_sim::Simulation::new(&cfg).map_err(|e| e.to_string())?;
    if !cfg.capture.is_empty() {
        let flow_src = sim.flow_sources();
        let tap = capture::PcapTap::open(&cfg, flow_src).map_err(|e| format!("capture: {e}"))?;
        sim.set_tap(Box::new(tap));
    }
    sim.run();
    sim.close_tap().map_err(|e| format!("capture: {e}"))?;
    Ok(serde_json::to_string(&sim.finish()).expect("result serialises"))
}

/// Every TCP knob: name, kind, default, documentation.
#[pyfunction]
fn tcp_knobs(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    let text = serde_json::to_string(&tcplab_sim::tcp::config::TcpConfig::schema())
        .expect("schema serialises");
    from_json(py, &text)
}

/// Every congestion-control algorithm with its parameters.
#[pyfunction]
fn list_ccas(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    let list: Vec<serde_json::Value> = tcplab_cc::list()
        .iter()
        .map(|c| {
            serde_json::json!({
                "name": c.name,
                "summary": c.summary,
                "source": c.source,
                "params": c.params.iter().map(|p| {
                    let (kind, choices): (&str, &[&str]) = match p.kind {
                        ParamKind::Bool => ("bool", &[]),
                        ParamKind::Float => ("float", &[]),
                        ParamKind::Int => ("int", &[]),
                        ParamKind::Choice(c) => ("choice", c),
                    };
                    // The engine reads integer parameters as i64 (tcplab_cc::ParamValue::Int).
                    let (min, max) = match p.kind {
                        ParamKind::Int => (Some(i64::MIN), Some(i64::MAX)),
                        _ => (None, None),
                    };
                    serde_json::json!({
                        "name": p.name, "kind": kind, "choices": choices,
                        "default": p.default, "doc": p.doc, "min": min, "max": max,
                    })
                }).collect::<Vec<_>>(),
            })
        })
        .collect();
    from_json(py, &serde_json::to_string(&list).expect("list serialises"))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(tcp_knobs, m)?)?;
    m.add_function(wrap_pyfunction!(list_ccas, m)?)?;
    linkem::register(m)?;
    script::register(m)?;
    trace::register(m)?;
    Ok(())
}
