//! Watching a run while it proceeds: an [`Observer`] sees each `intervals` row as it is
//! completed and may stop the run (Ctrl-C, a closed pipe).
//!
//! An observer cannot change the simulation. It receives copies of finished rows and is asked
//! at fixed event counts ([`OBSERVE_EVERY`]), never at wall-clock instants, so the same scenario
//! and seed give the same records whatever it does, short of stopping the run
//! (`tests/progress.rs`).

use std::ops::ControlFlow;

use crate::time::Time;

/// The loop hands new rows to its observer and asks whether to go on once per this many
/// events: ~0.4 ms of wall time at 10 M events/s, so a stop request is seen within a
/// millisecond, at the cost of one counter decrement per event.
pub const OBSERVE_EVERY: u32 = 4096;

/// One row of the `intervals` table (columns of the same names, `record.rs`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IntervalRow {
    pub flow_id: u64,
    pub t_start_s: f64,
    pub t_end_s: f64,
    /// Bytes newly acknowledged in the interval.
    pub bytes: u64,
    pub bits_per_second: f64,
    pub retransmits: u64,
    /// Congestion window at the interval's end.
    pub cwnd_bytes: u64,
    pub srtt_us: u64,
    pub pacing_rate_bps: u64,
}

/// What a caller learns of a run while it proceeds.
pub trait Observer {
    /// A completed `intervals` row, in table order. Every row of the table is passed once,
    /// the last ones before [`crate::sim::run_observed`] returns.
    fn interval(&mut self, _row: &IntervalRow) {}

    /// Asked every [`OBSERVE_EVERY`] events, after the rows completed so far were passed;
    /// `now` is the simulation clock. `Break` stops the run: it returns [`Cancelled`].
    fn poll(&mut self, _now: Time) -> ControlFlow<()> {
        ControlFlow::Continue(())
    }
}

/// The observer that watches nothing ([`crate::sim::run`]).
impl Observer for () {}

/// The observer stopped the run at simulation time `at`; it produced no records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cancelled {
    pub at: Time,
}

impl std::fmt::Display for Cancelled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "run stopped by its observer at {} s simulated", self.at.as_secs_f64())
    }
}

impl std::error::Error for Cancelled {}
