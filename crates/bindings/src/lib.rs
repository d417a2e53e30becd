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

mod columns;
mod error;
mod graph;
mod scenario_json;
mod telemetry;

use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use burstlab_sim::{IntervalRow, Observer, Time};

use columns::PyTable;
use error::scenario_error;

/// Load, validate and simulate a scenario; returns
/// `{"summary_json": str, "tables": {name: {column: array | list | (codes, dict)}}}`.
///
/// The GIL is released while the scenario is parsed and simulated, so other Python threads
/// (a progress spinner, a sweep's scheduler) keep running. Every [`POLL_EVERY`] of wall time
/// the run re-attaches to run Python's signal handlers (Ctrl-C raises `KeyboardInterrupt`,
/// which stops the run and propagates) and to call `progress(sim_time_s, rows)` with the
/// `intervals` rows completed since its last call, as tuples in the table's column order; an
/// exception `progress` raises stops the run and propagates too.
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

/// How often a run re-attaches to Python: Ctrl-C is seen, and interval rows are shown, within
/// this much wall time.
const POLL_EVERY: Duration = Duration::from_millis(50);

/// Python's view of a run with the GIL released: the interval rows not yet handed to
/// `progress`, and the first Python error, which stops the run and is raised after it.
struct Watch {
    progress: Option<Py<PyAny>>,
    rows: Vec<IntervalRow>,
    last: Instant,
    failure: Option<PyErr>,
}

impl Watch {
    fn new(progress: Option<Py<PyAny>>) -> Watch {
        Watch { progress, rows: Vec::new(), last: Instant::now(), failure: None }
    }

    /// Run the signal handlers, then hand the pending rows to `progress`.
    fn report(&mut self, py: Python<'_>, sim_time_s: f64) -> PyResult<()> {
        py.check_signals()?;
        let Some(progress) = &self.progress else {
            self.rows.clear();
            return Ok(());
        };
        let rows = PyList::empty(py);
        for r in self.rows.drain(..) {
            rows.append((
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
        progress.call1(py, (sim_time_s, rows)).map(drop)
    }

    /// The error a stopped run ends with.
    fn stopped(self) -> PyErr {
        self.failure.unwrap_or_else(|| PyRuntimeError::new_err("run stopped without a reason"))
    }
}

impl Observer for Watch {
    fn interval(&mut self, row: &IntervalRow) {
        self.rows.push(*row);
    }

    fn poll(&mut self, now: Time) -> ControlFlow<()> {
        if self.last.elapsed() < POLL_EVERY {
            return ControlFlow::Continue(());
        }
        self.last = Instant::now();
        match Python::attach(|py| self.report(py, now.as_secs_f64())) {
            Ok(()) => ControlFlow::Continue(()),
            Err(e) => {
                self.failure = Some(e);
                ControlFlow::Break(())
            }
        }
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

/// Version of the simulator crate compiled into this module.
#[pyfunction]
fn version() -> &'static str {
    burstlab_sim::VERSION
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(load_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(graph::graph_view, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(telemetry::decode_capture, m)?)?;
    m.add_function(wrap_pyfunction!(telemetry::detect_capture, m)?)?;
    m.add_function(wrap_pyfunction!(telemetry::detect_table, m)?)?;
    m.add_function(wrap_pyfunction!(telemetry::write_int_pcap, m)?)?;
    Ok(())
}
