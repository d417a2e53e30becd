//! Simulator errors become the exception classes declared in `burstlab/errors.py`, so Python
//! users catch one hierarchy (`BurstlabError`) whatever layer failed.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

use burstlab_sim::scenario::ScenarioError;

/// `burstlab.errors.ScenarioError(message, kind)` (`MemoryBudgetError` for a run over its
/// memory budget); if that module cannot be imported (a broken install), a `RuntimeError` with
/// the same message rather than hiding the user's mistake.
pub fn scenario_error(py: Python<'_>, err: &ScenarioError) -> PyErr {
    let message = err.to_string();
    let name = match err {
        ScenarioError::OverBudget { .. } => "MemoryBudgetError",
        _ => "ScenarioError",
    };
    let class = py.import("burstlab.errors").and_then(|m| m.getattr(name));
    match class.and_then(|c| c.call1((message.as_str(), err.kind()))) {
        Ok(exc) => PyErr::from_value(exc),
        Err(_) => PyRuntimeError::new_err(message),
    }
}
