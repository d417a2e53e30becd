//! Long work run with the GIL released (a simulation, a pass over a capture) comes back to
//! Python now and then: to run its signal handlers, so Ctrl-C raises `KeyboardInterrupt` within
//! a fraction of a second, and to hand over progress.

use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

/// How often the work re-attaches: Ctrl-C is seen, and progress shown, within this much wall
/// time. Re-attaching costs microseconds, so at this rate it costs nothing measurable.
pub(crate) const POLL_EVERY: Duration = Duration::from_millis(50);

/// A gate on the wall clock, and the first Python error, which stops the work and is raised
/// once it has stopped.
pub(crate) struct Reattach {
    last: Instant,
    failure: Option<PyErr>,
}

impl Reattach {
    pub(crate) fn new() -> Reattach {
        Reattach { last: Instant::now(), failure: None }
    }

    /// At least [`POLL_EVERY`] after the last time: take the GIL, run the signal handlers, then
    /// `f`. Breaks once anything has failed.
    pub(crate) fn every(&mut self, f: impl FnOnce(Python<'_>) -> PyResult<()>) -> ControlFlow<()> {
        if self.failure.is_some() {
            return ControlFlow::Break(());
        }
        if self.last.elapsed() < POLL_EVERY {
            return ControlFlow::Continue(());
        }
        self.last = Instant::now();
        let result = Python::attach(|py| {
            py.check_signals()?;
            f(py)
        });
        self.fail(result)
    }

    /// Keep the first error of `result`, and break on any.
    pub(crate) fn fail(&mut self, result: PyResult<()>) -> ControlFlow<()> {
        match result {
            Ok(()) => ControlFlow::Continue(()),
            Err(e) => {
                self.failure.get_or_insert(e);
                ControlFlow::Break(())
            }
        }
    }

    pub(crate) fn failed(&self) -> bool {
        self.failure.is_some()
    }

    /// The error the stopped work ends with: the Python one that stopped it.
    pub(crate) fn stopped(self, what: &str) -> PyErr {
        self.failure.unwrap_or_else(|| PyRuntimeError::new_err(format!("{what} stopped")))
    }
}
