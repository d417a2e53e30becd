//! The detector's input: one queue sample with what the sampled packet was. INT reports
//! (one per hop), the simulator's `int` and `queue` records and queue-depth streams all become
//! `Observation`s, so one detector and one attribution serve real and simulated telemetry.

use crate::model::FlowKey;
use serde::Serialize;

/// One egress queue of one switch: the unit the detector keeps state for
/// (DESIGN.md: "per (switch, port, queue)").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct QueueKey {
    pub switch_id: u32,
    pub port: u32,
    pub queue_id: u8,
}

/// Identifies a report stream for loss accounting (int-telemetry.md §16.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct ReportStream {
    pub switch_id: u32,
    pub hw_id: u8,
}

/// One sample of a queue. Times are nanoseconds on one monotone timeline per switch (device
/// timestamps already unwrapped, or simulator time).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Observation {
    pub t_ns: u64,
    pub queue: QueueKey,
    /// Queue occupancy in bytes as the packet left (or, for a drop, when it was refused).
    pub occupancy_bytes: u64,
    /// The sampled packet, when the sample is about one (INT); `None` for pure depth samples.
    pub flow: Option<FlowKey>,
    pub packet_bytes: u32,
    /// Time the packet spent in the switch, when known.
    pub hop_latency_ns: Option<u64>,
    /// The packet was dropped at this queue rather than forwarded.
    pub dropped: bool,
    /// The report this sample came from, with its sequence number, for loss accounting.
    pub report: Option<(ReportStream, u32)>,
}
