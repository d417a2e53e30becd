//! The `flows` table and the summary's flows: one row per TCP flow and burst source, in flow
//! id order (TCP flows, then burst sources).

use crate::app::burst::BurstSource;
use crate::net::topology::Network;
use crate::record::flow_key::{FiveTuple, format_ipv4};
use crate::record::{Column, FlowSummary, Table};
use crate::tcp::cc::CongestionOps;
use crate::tcp::receiver::TcpReceiver;
use crate::tcp::sender::TcpSender;
use crate::time::Time;

/// A TCP flow's row at the end of a run (`now`): `size` is its transfer's, `None` for a
/// connection that carries whatever its application writes.
pub fn tcp(
    net: &Network,
    flow_id: usize,
    (snd, rcv): (&TcpSender, &TcpReceiver),
    start: Time,
    size: Option<u64>,
    now: Time,
) -> FlowSummary {
    let secs = |t: Time| t.as_secs_f64();
    let syn = snd.stats.syn_at;
    let since = |t: Option<Time>| syn.zip(t).map(|(s, t)| secs(t - s));
    let (src, dst) = net.flow_hosts[flow_id];
    let fct_s = since(rcv.stats.done_at);
    let active_s = fct_s.or(since(Some(now))).unwrap_or(0.0);
    FlowSummary {
        flow_id: flow_id as u32,
        kind: "tcp",
        cca: Some(snd.cc.name().to_owned()),
        src: net.nodes[src as usize].name.clone(),
        dst: net.nodes[dst as usize].name.clone(),
        size_bytes: size.unwrap_or(snd.snd_una),
        delivered_bytes: rcv.stats.delivered,
        start_s: secs(start),
        fct_s,
        sender_done_s: since(snd.stats.done_at),
        retransmits: snd.stats.retransmits,
        timeouts: snd.stats.timeouts,
        loss_probes: snd.stats.loss_probes,
        recoveries: snd.stats.recoveries,
        lost_retransmits: snd.lost_retransmits(),
        recovery_timeouts: snd.stats.recovery_timeouts,
        acks: rcv.stats.acks_sent,
        max_cwnd_bytes: Some(snd.stats.max_cwnd as u64 * snd.mss() as u64),
        active_s,
        throughput_bps: throughput_bps(rcv.stats.delivered, active_s),
        receive_memory: rcv.rmem_stats(),
    }
}

/// Burst source `k`'s row (flow id `flow_id`) at the end of a run (`now`).
pub fn udp(net: &Network, flow_id: usize, k: usize, b: &BurstSource, now: Time) -> FlowSummary {
    let (src, _, sink) = net.burst_hosts[k];
    let delivered = b.received * b.packet_size as u64;
    let active_s = (b.end.min(now).max(b.scheduled) - b.scheduled).as_secs_f64();
    FlowSummary {
        flow_id: flow_id as u32,
        kind: "udp",
        cca: None,
        src: net.nodes[src as usize].name.clone(),
        dst: net.nodes[sink as usize].name.clone(),
        size_bytes: b.sent_bytes(now),
        delivered_bytes: delivered,
        start_s: b.scheduled.as_secs_f64(),
        fct_s: None,
        sender_done_s: None,
        retransmits: 0,
        timeouts: 0,
        loss_probes: 0,
        recoveries: 0,
        lost_retransmits: 0,
        recovery_timeouts: 0,
        acks: 0,
        max_cwnd_bytes: None,
        active_s,
        throughput_bps: throughput_bps(delivered, active_s),
        receive_memory: None,
    }
}

/// Delivered bytes × 8 over `active_s` seconds; `None` for a flow that was never active.
fn throughput_bps(delivered_bytes: u64, active_s: f64) -> Option<f64> {
    (active_s > 0.0).then(|| delivered_bytes as f64 * 8.0 / active_s)
}

/// The `flows` table of the rows `fs` (TCP flows, then burst sources, as `net` numbers them).
pub fn table(fs: &[FlowSummary], net: &Network) -> Table {
    // Each flow's 5-tuple in its data direction (record/flow_key.rs), for mapping a key found
    // in INT reports or captures back to its flow.
    let n_tcp = net.flow_hosts.len();
    let keys: Vec<FiveTuple> = fs
        .iter()
        .map(|f| {
            let i = f.flow_id as usize;
            let (src, dst, udp) = match i.checked_sub(n_tcp) {
                None => (net.flow_hosts[i].0, net.flow_hosts[i].1, false),
                Some(k) => (net.burst_hosts[k].0, net.burst_hosts[k].2, true),
            };
            FiveTuple::of(f.flow_id, udp, src, dst, false)
        })
        .collect();
    let f64s = |get: fn(&FlowSummary) -> f64| Column::F64(fs.iter().map(get).collect());
    let u64s = |get: fn(&FlowSummary) -> u64| Column::U64(fs.iter().map(get).collect());
    Table {
        name: "flows",
        columns: vec![
            ("flow_id", u64s(|f| f.flow_id as u64)),
            ("kind", Column::Str(fs.iter().map(|f| Some(f.kind.to_owned())).collect())),
            ("src", Column::Str(fs.iter().map(|f| Some(f.src.clone())).collect())),
            ("dst", Column::Str(fs.iter().map(|f| Some(f.dst.clone())).collect())),
            ("src_ip", Column::Str(keys.iter().map(|k| Some(format_ipv4(k.src_ip))).collect())),
            ("dst_ip", Column::Str(keys.iter().map(|k| Some(format_ipv4(k.dst_ip))).collect())),
            ("src_port", Column::U64(keys.iter().map(|k| u64::from(k.src_port)).collect())),
            ("dst_port", Column::U64(keys.iter().map(|k| u64::from(k.dst_port)).collect())),
            // Node names along the data direction, and the empty-network RTT of that path.
            (
                "path",
                Column::Str(
                    fs.iter().map(|f| Some(net.path_names(f.flow_id as usize).join(">"))).collect(),
                ),
            ),
            (
                "base_rtt_s",
                Column::F64(
                    fs.iter().map(|f| net.base_rtt[f.flow_id as usize].as_secs_f64()).collect(),
                ),
            ),
            ("cca", Column::Str(fs.iter().map(|f| f.cca.clone()).collect())),
            ("size_bytes", u64s(|f| f.size_bytes)),
            ("start_s", f64s(|f| f.start_s)),
            ("end_s", f64s(|f| f.fct_s.map_or(f64::NAN, |x| x + f.start_s))),
            ("fct_s", f64s(|f| f.fct_s.unwrap_or(f64::NAN))),
            ("sender_done_s", f64s(|f| f.sender_done_s.unwrap_or(f64::NAN))),
            ("delivered_bytes", u64s(|f| f.delivered_bytes)),
            ("retransmits", u64s(|f| f.retransmits)),
            ("timeouts", u64s(|f| f.timeouts)),
            ("loss_probes", u64s(|f| f.loss_probes)),
            ("recoveries", u64s(|f| f.recoveries)),
            ("lost_retransmits", u64s(|f| f.lost_retransmits)),
            ("recovery_timeouts", u64s(|f| f.recovery_timeouts)),
            ("max_cwnd_bytes", u64s(|f| f.max_cwnd_bytes.unwrap_or(0))),
        ],
    }
}
