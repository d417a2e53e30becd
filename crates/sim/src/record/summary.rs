//! The summary's ports and engine figures (`--json`, `summary.json`).

use crate::host::Host;
use crate::net::topology::Network;
use crate::record::queue::QueueRecorder;
use crate::record::{EngineSummary, HostSummary, PortSummary};
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

/// Every host with a CPU model, at the end of a run.
pub fn hosts(hosts: &[Host], net: &Network, now: Time) -> Vec<HostSummary> {
    let span = now.as_secs_f64();
    (hosts.iter())
        .filter_map(|h| h.cpu.as_deref().map(|c| (h, c)))
        .map(|(h, c)| HostSummary {
            node: net.nodes[h.node as usize].name.clone(),
            cpu: c.spec.profile.clone(),
            cores: c.spec.cores,
            rx_missed: c.stats.rx_missed,
            rx_packets: c.stats.rx_packets,
            rx_skbs: c.stats.rx_skbs,
            tx_skbs: c.stats.tx_skbs,
            // Work is charged when it starts: the last may run past the end of the run.
            busiest_core_share: if span > 0.0 {
                (c.busiest().as_secs_f64() / span).min(1.0)
            } else {
                0.0
            },
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
