//! # burstlab-bindings
//!
//! The Python module `burstlab._core`. It is the only crate that knows Python: it turns a
//! scenario text into a run of `burstlab_sim`, with the GIL released for the simulation (taken
//! back briefly every 50 ms to honour Ctrl-C and show progress), and hands the record tables
//! over once, column by column (numeric columns as NumPy arrays that
//! take ownership of the Rust vectors, strings as lists).
//!
//! The Pythonic front (`burstlab.run`, `RunResult`, the CLI) lives in `python/burstlab/`; this
//! module stays small and is typed by `python/burstlab/_core.pyi`.

mod collect;
mod columns;
mod error;
mod graph;
mod reattach;
mod scenario_json;
mod telemetry;

use std::ops::ControlFlow;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use burstlab_sim::{IntervalRow, Observer, Time};

use columns::PyTable;
use error::scenario_error;
use reattach::Reattach;

/// Load, validate and simulate a scenario; returns
/// `{"summary_json": str, "tables": {name: {column: array | list | (codes, dict)}}}`.
///
/// The GIL is released while the scenario is parsed and simulated, so other Python threads
/// (a progress spinner, a sweep's scheduler) keep running. Every [`reattach::POLL_EVERY`] of
/// wall time the run re-attaches to run Python's signal handlers (Ctrl-C raises
/// `KeyboardInterrupt`, which stops the run and propagates) and to call
/// `progress(sim_time_s, rows)` with the `intervals` rows completed since its last call, as
/// tuples in the table's column order; an exception `progress` raises stops the run and
/// propagates too.
#[pyfunction]
#[pyo3(signature = (scenario_toml, overrides = Vec::new(), progress = None))]
fn run<'py>(
    py: Python<'py>,
    scenario_toml: &str,
    overrides: Vec<String>,
    progress: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let text = scenario_toml.to_owned();
    let mut watch = Watch::new(progress);
    let outcome = py.detach(|| {
        burstlab_sim::scenario::load(&text, &overrides)
            .map(|s| burstlab_sim::run_observed(&s, &mut watch))
    });
    let output = match outcome {
        Err(e) => return Err(scenario_error(py, &e)),
        Ok(Err(_cancelled)) => return Err(watch.stopped()),
        Ok(Ok(output)) => output,
    };
    // The last rows, and a Ctrl-C that came while the tables were assembled.
    watch.report(py, output.summary.engine.sim_time_s)?;
    py.check_signals()?;

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

/// Python's view of a run with the GIL released: the interval rows not yet handed to
/// `progress`, and when to come back to Python.
struct Watch {
    progress: Option<Py<PyAny>>,
    rows: Vec<IntervalRow>,
    reattach: Reattach,
}

impl Watch {
    fn new(progress: Option<Py<PyAny>>) -> Watch {
        Watch { progress, rows: Vec::new(), reattach: Reattach::new() }
    }

    /// Run the signal handlers, then hand the pending rows to `progress`.
    fn report(&mut self, py: Python<'_>, sim_time_s: f64) -> PyResult<()> {
        py.check_signals()?;
        deliver(py, self.progress.as_ref(), &mut self.rows, sim_time_s)
    }

    /// The error a stopped run ends with.
    fn stopped(self) -> PyErr {
        self.reattach.stopped("run")
    }
}

/// `progress(sim_time_s, rows)` with `rows` drained, as tuples in the table's column order.
fn deliver(
    py: Python<'_>,
    progress: Option<&Py<PyAny>>,
    rows: &mut Vec<IntervalRow>,
    sim_time_s: f64,
) -> PyResult<()> {
    let Some(progress) = progress else {
        rows.clear();
        return Ok(());
    };
    let list = PyList::empty(py);
    for r in rows.drain(..) {
        list.append((
            r.flow_id,
            r.t_start_s,
            r.t_end_s,
            r.bytes,
            r.bits_per_second,
            r.retransmits,
            r.cwnd_bytes,
            r.srtt_us,
            r.pacing_rate_bps,
        ))?;
    }
    progress.call1(py, (sim_time_s, list)).map(drop)
}

impl Observer for Watch {
    fn interval(&mut self, row: &IntervalRow) {
        self.rows.push(*row);
    }

    fn poll(&mut self, now: Time) -> ControlFlow<()> {
        let Watch { progress, rows, reattach } = self;
        reattach.every(|py| deliver(py, progress.as_ref(), rows, now.as_secs_f64()))
    }
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

/// Validate a scenario as `load_scenario` does; returns only what `burstlab run` reads
/// before the run (`name`, `streams`, `telemetry.int_ports`) as JSON, not every flow's
/// settings: the normalised JSON of 100,000 flows held 1.2 GB on its way to Python.
#[pyfunction]
#[pyo3(signature = (text, overrides = Vec::new()))]
fn check_scenario(py: Python<'_>, text: &str, overrides: Vec<String>) -> PyResult<String> {
    let text = text.to_owned();
    let scenario = py.detach(|| burstlab_sim::scenario::load(&text, &overrides));
    let s = scenario.map_err(|e| scenario_error(py, &e))?;
    let int_ports: Vec<_> = (s.telemetry.int_ports.iter())
        .map(|p| serde_json::json!({ "node": p.node, "port": p.port }))
        .collect();
    let outline = serde_json::json!({
        "name": s.name,
        "streams": s.streams,
        "telemetry": { "int_ports": int_ports },
    });
    Ok(outline.to_string())
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
    m.add_function(wrap_pyfunction!(check_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(graph::graph_view, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(telemetry::decode_capture, m)?)?;
    m.add_function(wrap_pyfunction!(telemetry::detect_capture, m)?)?;
    m.add_function(wrap_pyfunction!(telemetry::detect_table, m)?)?;
    m.add_function(wrap_pyfunction!(telemetry::write_int_pcap, m)?)?;
    m.add_class::<collect::PyCollector>()?;
    m.add_function(wrap_pyfunction!(collect::replay, m)?)?;
    Ok(())
}
