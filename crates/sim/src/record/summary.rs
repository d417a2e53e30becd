//! The summary's ports and engine figures (`--json`, `summary.json`).

use crate::net::topology::Network;
use crate::record::queue::QueueRecorder;
use crate::record::{EngineSummary, PortSummary};
use crate::time::Time;

/// Every recorded port, and every other port that dropped packets, at the end of a run.
pub fn ports(net: &Network, queue: &QueueRecorder, now: Time) -> Vec<PortSummary> {
    net.ports
        .iter()
        .enumerate()
        .filter(|(_, p)| p.recorded || p.stats.drops > 0)
        .map(|(i, p)| PortSummary {
            node: net.nodes[p.node as usize].name.clone(),
            port: p.name.clone(),
            drops: p.stats.drops,
            max_queue_bytes: p.stats.max_queue_bytes,
            mean_queue_bytes: p.recorded.then(|| queue.mean(i, now)),
            ecn_marks: p.stats.ecn_marks,
            tbf_drops: p.shaper.as_ref().map(|t| t.dropped_skbs),
        })
        .collect()
}

/// `events` processed in `wall_s` seconds of wall time, up to simulated time `now`.
pub fn engine(events: u64, wall_s: f64, now: Time) -> EngineSummary {
    EngineSummary {
        events,
        wall_s,
        events_per_s: if wall_s > 0.0 { events as f64 / wall_s } else { 0.0 },
        sim_time_s: now.as_secs_f64(),
        version: crate::VERSION.to_owned(),
    }
}
