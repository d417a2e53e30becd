//! # burstlab-bindings
//!
//! The Python module `burstlab._core`. It is the only crate that knows Python: it turns a
//! scenario text into a run of `burstlab_sim`, with the GIL released for the whole simulation,
//! and hands the record tables over once, column by column (numeric columns as NumPy arrays that
//! take ownership of the Rust vectors, strings as lists).
//!
//! The Pythonic front (`burstlab.run`, `RunResult`, the CLI) lives in `python/burstlab/`; this
//! module stays small and is typed by `python/burstlab/_core.pyi`.

mod columns;
mod error;
mod scenario_json;
mod telemetry;

use pyo3::prelude::*;
use pyo3::types::PyDict;

use columns::PyTable;
use error::scenario_error;

/// Load, validate and simulate a scenario; returns
/// `{"summary_json": str, "tables": {name: {column: array | list | (codes, dict)}}}`.
///
/// The GIL is released while the scenario is parsed and simulated, so other Python threads
/// (a progress spinner, a sweep's scheduler) keep running.
#[pyfunction]
#[pyo3(signature = (scenario_toml, overrides = Vec::new()))]
fn run<'py>(
    py: Python<'py>,
    scenario_toml: &str,
    overrides: Vec<String>,
) -> PyResult<Bound<'py, PyDict>> {
    let text = scenario_toml.to_owned();
    let output = py
        .detach(move || {
            burstlab_sim::scenario::load(&text, &overrides).map(|s| burstlab_sim::run(&s))
        })
        .map_err(|e| scenario_error(py, &e))?;

    let summary_json = serde_json::to_string(&output.summary)
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?;
    let tables = PyDict::new(py);
    for table in output.tables {
        tables.set_item(table.name, PyTable(table))?;
    }
    let result = PyDict::new(py);
    result.set_item("summary_json", summary_json)?;
    result.set_item("tables", tables)?;
    Ok(result)
}

/// Parse and validate a scenario without running it; returns the normalised scenario as JSON
/// (engine units: seconds, bits per second, bytes) or raises `burstlab.errors.ScenarioError`.
#[pyfunction]
#[pyo3(signature = (text, overrides = Vec::new()))]
fn load_scenario(py: Python<'_>, text: &str, overrides: Vec<String>) -> PyResult<String> {
    let scenario =
        burstlab_sim::scenario::load(text, &overrides).map_err(|e| scenario_error(py, &e))?;
    Ok(scenario_json::to_json(&scenario).to_string())
}

/// Version of the simulator crate compiled into this module.
#[pyfunction]
fn version() -> &'static str {
    burstlab_sim::VERSION
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(load_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(telemetry::decode_capture, m)?)?;
    m.add_function(wrap_pyfunction!(telemetry::detect_capture, m)?)?;
    m.add_function(wrap_pyfunction!(telemetry::detect_table, m)?)?;
    m.add_function(wrap_pyfunction!(telemetry::write_int_pcap, m)?)?;
    Ok(())
}
