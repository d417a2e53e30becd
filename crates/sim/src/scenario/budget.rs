//! The memory budget: before anything is built, an estimate of what a run will hold — its
//! network (nodes, links and their ports), its sockets and burst sources, the packets its
//! queues and links can hold, and the rows of the record tables that grow with the settings
//! (`intervals` from `stop` / `interval`, `drops` from the bursts' datagrams, `int` from the INT
//! ports' packets) — refused when over the budget, with the field that drives the estimate.
//! An allocation the machine cannot serve aborts the whole process (SIGABRT, nothing a Python
//! caller can catch); a refusal is one line and exit status 2.
//!
//! The budget is the scenario's `memory_budget` (a size), or half of this machine's memory
//! (`MemTotal` in `/proc/meminfo`, or the cgroup's `memory.max` if lower). The per-item costs
//! below were measured as peak RSS slopes (`burstlab-bench` at 2k and 20k of each item,
//! docs/reliability.md); the estimate is within a third of the measured peak for networks of
//! thousands of hosts. The `queue` table and drops of TCP's own packets are not estimated: they
//! follow what the run does, not its settings.

use super::error::ScenarioError;
use super::fields::Fields;
use super::model::Scenario;
use super::units::{format_rate, format_size, format_time};
use crate::net::topology::NodeKind;
use crate::time::Time;

type Result<T> = std::result::Result<T, ScenarioError>;

/// Per link: its two ports (queues, clock, name, wire), their record state, the link's spec.
pub const LINK_BYTES: u64 = 3_600;
/// Per node: its name, kind, adjacency, routing salt.
pub const NODE_BYTES: u64 = 600;
/// Per TCP connection beyond its hosts: both endpoints, its settings, route, summary row.
pub const TCP_FLOW_BYTES: u64 = 3_600;
/// Per burst source beyond its host: its state, route, summary row.
pub const SOURCE_BYTES: u64 = 400;
/// Per packet alive: the pooled packet, its queue entry, the sender's retransmit state.
pub const PACKET_BYTES: u64 = 256;
/// Per `intervals` row: nine 8-byte columns, twice over for a vector's growth.
pub const INTERVAL_ROW_BYTES: u64 = 144;
/// Per `drops` row: 44 bytes of columns, twice over for growth.
pub const DROP_ROW_BYTES: u64 = 88;
/// Per `int` row: about 120 bytes of columns, twice over for growth.
pub const INT_ROW_BYTES: u64 = 240;
/// Per `queue` row: 32 bytes of columns (time, node and port codes, queue, bytes), twice over
/// for growth.
pub const QUEUE_ROW_BYTES: u64 = 64;
/// The engine, its event queue and tables at their smallest.
pub const BASE_BYTES: u64 = 16 << 20;

/// One part of the estimate: the field that drives it, as a refusal names it.
#[derive(Clone, Debug, PartialEq)]
pub struct Part {
    /// `scenario.burst[0].sources`
    pub field: String,
    /// The field's value as the scenario gives it (TOML spelling), or a count.
    pub value: String,
    pub bytes: u64,
    /// What is held: `"4294967295 burst sources: hosts, links, ports"`.
    pub what: String,
}

/// What a run will hold, part by part.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Estimate {
    pub parts: Vec<Part>,
}

impl Estimate {
    pub fn total(&self) -> u64 {
        self.parts.iter().fold(BASE_BYTES, |a, p| a.saturating_add(p.bytes))
    }

    /// The part that drives the estimate.
    pub fn largest(&self) -> Option<&Part> {
        self.parts.iter().max_by_key(|p| p.bytes)
    }

    fn add(
        &mut self,
        field: impl Into<String>,
        value: impl Into<String>,
        bytes: u64,
        what: String,
    ) {
        self.parts.push(Part { field: field.into(), value: value.into(), bytes, what });
    }
}

/// `a × b` in bytes, saturating: an absurd scenario must give an absurd estimate, not wrap.
fn times(a: u64, b: u64) -> u64 {
    a.saturating_mul(b)
}

/// How many `size`-byte packets `rate` sends in `span`.
fn packets(rate_bps: u64, span: Time, size: u64) -> u64 {
    let bits = rate_bps as u128 * span.ps() as u128 / Time::PS_PER_S as u128;
    u64::try_from(bits / (8 * size.max(1)) as u128).unwrap_or(u64::MAX)
}

/// The estimate of `scn`'s run.
pub fn estimate(scn: &Scenario) -> Estimate {
    let mut e = Estimate::default();
    network(scn, &mut e);
    records(scn, &mut e);
    in_flight(scn, &mut e);
    e
}

fn network(scn: &Scenario, e: &mut Estimate) {
    let host = LINK_BYTES + NODE_BYTES;
    match &scn.topology.graph {
        // The dumbbell makes each flow's hosts, each incast's, each burst source's.
        None => {
            if !scn.flows.is_empty() {
                let n = scn.flows.len() as u64;
                let each = 2 * host + TCP_FLOW_BYTES;
                e.add(
                    "scenario.flow",
                    format!("{n} entries"),
                    times(n, each),
                    format!(
                        "{n} TCP flows: their sockets, sender and receiver hosts, links and ports"
                    ),
                );
            }
            for (k, inc) in scn.incasts.iter().enumerate() {
                let n = u64::from(inc.senders);
                let hosts = if inc.one_sender_host { 2 } else { n + 1 };
                let bytes = times(hosts, host).saturating_add(times(n, TCP_FLOW_BYTES));
                e.add(
                    format!("scenario.incast[{k}].senders"),
                    n.to_string(),
                    bytes,
                    format!("{n} incast connections: their sockets, hosts, links and ports"),
                );
            }
            for (i, b) in scn.bursts.iter().enumerate() {
                let n = u64::from(b.sources);
                e.add(
                    format!("scenario.burst[{i}].sources"),
                    n.to_string(),
                    times(n, host + SOURCE_BYTES),
                    format!("{n} burst sources: their hosts, links and ports"),
                );
            }
        }
        // A graph's nodes and links are the scenario's own (or its preset's).
        Some(gt) => {
            let (nodes, links) = (gt.graph.nodes.len() as u64, gt.graph.links.len() as u64);
            let (field, value) = graph_field(scn);
            e.add(
                field,
                value,
                graph_bytes(nodes, links),
                format!("a network of {nodes} nodes and {links} links"),
            );
            let tcp = gt.tcp.len() as u64;
            if tcp > 0 {
                e.add(
                    "scenario.flow",
                    format!("{tcp} connections"),
                    times(tcp, TCP_FLOW_BYTES),
                    format!("{tcp} TCP connections' sockets"),
                );
            }
            for (i, b) in scn.bursts.iter().enumerate() {
                let n = u64::from(b.sources);
                e.add(
                    format!("scenario.burst[{i}].sources"),
                    n.to_string(),
                    times(n, SOURCE_BYTES),
                    format!("{n} burst sources"),
                );
            }
        }
    }
}

/// A graph of `nodes` and `links`, built.
pub fn graph_bytes(nodes: u64, links: u64) -> u64 {
    times(nodes, NODE_BYTES).saturating_add(times(links, LINK_BYTES))
}

fn graph_field(scn: &Scenario) -> (String, String) {
    let name = scn.topology.preset.name();
    match scn.topology.preset {
        super::model::Preset::Graph => ("scenario.link".into(), "[[link]] entries".into()),
        _ => ("scenario.topology.preset".into(), format!("\"{name}\"")),
    }
}

fn records(scn: &Scenario, e: &mut Estimate) {
    // iperf3-style rows: each [[flow]] one per interval from its start to `stop`.
    let rows = scn
        .flows
        .iter()
        .map(|f| scn.stop.ps().saturating_sub(f.start.ps()) / scn.interval.ps().max(1) + 1)
        .fold(0u64, u64::saturating_add);
    if rows > 0 {
        let n = scn.flows.len();
        e.add(
            "scenario.interval",
            format!("\"{}\"", format_time(scn.interval)),
            times(rows, INTERVAL_ROW_BYTES),
            format!(
                "the intervals table: {rows} rows for {n} flows until stop = {}",
                format_time(scn.stop)
            ),
        );
    }
    // A burst's datagrams may all be dropped, one `drops` row each.
    for (i, b) in scn.bursts.iter().enumerate() {
        let span = b.duration.min(Time(scn.stop.ps().saturating_sub(b.start.ps())));
        let each = packets(b.rate.bps(), span, u64::from(b.packet_size));
        let rows = times(each, u64::from(b.sources));
        e.add(
            format!("scenario.burst[{i}].rate"),
            format!("\"{}\"", format_rate(b.rate)),
            times(rows, DROP_ROW_BYTES),
            format!("the drops table: up to {rows} rows, one per datagram of the burst"),
        );
    }
    // INT: a row per sampled packet through each INT port, at the fastest link's rate.
    let t = &scn.telemetry;
    if !t.int_ports.is_empty() {
        let smallest = scn.bursts.iter().map(|b| b.packet_size).fold(scn.topology.mtu(), u32::min);
        let per_port = packets(fastest_bps(scn), scn.stop, u64::from(smallest));
        let rows = times(per_port / u64::from(t.int_sample.max(1)), t.int_ports.len() as u64);
        let n = t.int_ports.len();
        e.add(
            "scenario.telemetry.int_ports",
            format!("{n} ports"),
            times(rows, INT_ROW_BYTES),
            format!("the int table: up to {rows} rows (every sampled packet until stop)"),
        );
    }
}

fn fastest_bps(scn: &Scenario) -> u64 {
    let t = &scn.topology;
    // A sending host's NIC may be faster than any link (`nic_rate`).
    let specs = scn.flows.iter().chain(scn.incasts.iter().map(|i| &i.tcp));
    let nics = specs.filter_map(|f| f.nic_rate).map(|r| r.bps()).max().unwrap_or(0);
    let links = match &t.graph {
        None => {
            let d = &t.dumbbell;
            d.bottleneck_rate.bps().max(d.host_rate.bps()).max(d.burst_link_rate.bps())
        }
        Some(g) => g.graph.links.iter().map(|l| l.rate.bps()).max().unwrap_or(0),
    };
    links.max(nics)
}

/// Packets alive at once: what the network can hold (the bottleneck's buffer and one round
/// trip at its rate; in a graph, every switch-to-switch port's buffer and every link's
/// propagation, and one host-facing buffer per destination), each packet at the MTU.
fn in_flight(scn: &Scenario, e: &mut Estimate) {
    let t = &scn.topology;
    let buffer = |p: &crate::net::queue::PortSpec| {
        p.queues.iter().map(|q| q.buffer_bytes).fold(0u64, u64::saturating_add)
    };
    // The bytes, and the buffer that drives them (the bottleneck's, or a graph's deepest).
    let (bytes, driver) = match &t.graph {
        None => {
            let d = &t.dumbbell;
            let bdp = packets(d.bottleneck_rate.bps(), d.rtt, 1);
            (buffer(&d.bottleneck).saturating_add(bdp), buffer(&d.bottleneck))
        }
        Some(gt) => {
            let g = &gt.graph;
            let kinds: rustc_hash::FxHashMap<&str, NodeKind> =
                g.nodes.iter().map(|n| (n.name.as_str(), n.kind)).collect();
            let kind = |name: &str| kinds.get(name).copied();
            let mut total = 0u64;
            let mut deepest = 0u64;
            for l in &g.links {
                total = total.saturating_add(packets(l.rate.bps(), l.delay * 2, 1));
                let both =
                    kind(&l.a) == Some(NodeKind::Switch) && kind(&l.b) == Some(NodeKind::Switch);
                for d in [&l.ab, &l.ba] {
                    if both {
                        total = total.saturating_add(buffer(&d.port));
                    }
                    deepest = deepest.max(buffer(&d.port));
                }
            }
            let mut dsts: Vec<&str> =
                gt.tcp.iter().chain(&gt.udp).map(|a| a.dst.as_str()).collect();
            dsts.sort_unstable();
            dsts.dedup();
            (total.saturating_add(times(deepest, dsts.len() as u64)), deepest)
        }
    };
    let n = bytes / u64::from(t.mtu().max(1));
    e.add(
        "scenario.topology.buffer",
        format!("\"{}\"", format_size(driver)),
        times(n, PACKET_BYTES),
        format!("up to {n} packets in queues and on links"),
    );
}

/// Each record table's row limit within a budget of `budget` bytes. Each of the four tables
/// that can grow with the run (`queue`, `drops`, `int`, `intervals`) may take a quarter of
/// the budget, at its row size above (`QUEUE_ROW_BYTES` 64, `DROP_ROW_BYTES` 88,
/// `INT_ROW_BYTES` 240, `INTERVAL_ROW_BYTES` 144): all four at their caps hold the budget,
/// which is itself half the machine by default. The estimate refuses a run whose settings
/// alone would pass these; the caps bound what it cannot foresee (the `queue` table, drops
/// of TCP's packets, INT on an ACK path).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowCaps {
    pub queue: u64,
    pub drops: u64,
    pub int: u64,
    pub intervals: u64,
}

/// The share of the budget each capped table may take.
const TABLE_SHARE: u64 = 4;

pub fn row_caps(budget: u64) -> RowCaps {
    let rows = |row_bytes: u64| budget / TABLE_SHARE / row_bytes;
    RowCaps {
        queue: rows(QUEUE_ROW_BYTES),
        drops: rows(DROP_ROW_BYTES),
        int: rows(INT_ROW_BYTES),
        intervals: rows(INTERVAL_ROW_BYTES),
    }
}

/// What a run may hold, and where that figure comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Budget {
    pub bytes: u64,
    /// `"memory_budget"`, or how the machine's share was found.
    pub whence: String,
}

/// Half of this machine's memory: `MemTotal`, or the cgroup's `memory.max` if lower (a
/// container's limit kills before the machine runs out).
pub fn machine_budget() -> Budget {
    let total = std::fs::read_to_string("/proc/meminfo").ok().and_then(|t| meminfo_total(&t));
    let cgroup = std::fs::read_to_string("/sys/fs/cgroup/memory.max")
        .ok()
        .and_then(|t| t.trim().parse::<u64>().ok());
    match (total, cgroup) {
        (Some(m), Some(c)) if c < m => Budget {
            bytes: c / 2,
            whence: format!("half of this cgroup's memory.max, {}", human(c)),
        },
        (Some(m), _) => {
            Budget { bytes: m / 2, whence: format!("half of this machine's {}", human(m)) }
        }
        (None, Some(c)) => Budget {
            bytes: c / 2,
            whence: format!("half of this cgroup's memory.max, {}", human(c)),
        },
        (None, None) => Budget {
            bytes: FALLBACK_BUDGET,
            whence: format!("{} (no /proc/meminfo to read)", human(FALLBACK_BUDGET)),
        },
    }
}

/// The budget where the machine's memory cannot be read: 4 GiB, what the smallest machines
/// we run on have.
const FALLBACK_BUDGET: u64 = 4 << 30;

/// `MemTotal` of a `/proc/meminfo` text, in bytes (the file counts kB of 1024 bytes).
fn meminfo_total(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// The scenario's `memory_budget`, or the machine's share.
pub(crate) fn budget(root: &Fields) -> Result<Budget> {
    match root.size("memory_budget")? {
        Some(bytes) => {
            root.ensure("memory_budget", bytes > 0, || "a size above 0, such as \"8GiB\"".into())?;
            Ok(Budget { bytes, whence: "memory_budget".into() })
        }
        None => Ok(machine_budget()),
    }
}

/// Refuse `e` if it is over `b`, naming its largest part.
pub fn refuse_over(e: &Estimate, b: &Budget) -> Result<()> {
    let total = e.total();
    match e.largest() {
        Some(p) if total > b.bytes => Err(ScenarioError::OverBudget {
            path: p.field.clone(),
            value: p.value.clone(),
            what: p.what.clone(),
            estimate: total,
            budget: b.bytes,
            whence: b.whence.clone(),
        }),
        _ => Ok(()),
    }
}

/// Refuse a loaded scenario whose run would not fit its budget.
pub(crate) fn check(scn: &Scenario, root: &Fields) -> Result<()> {
    refuse_over(&estimate(scn), &budget(root)?)
}

/// Refuse a graph of `nodes` and `links` over the budget before it is built (a preset of
/// 4096 leaves of 4096 hosts would take tens of GB to expand), naming `key` of table `at`.
pub(crate) fn check_graph(
    root: &Fields,
    at: &Fields,
    key: &str,
    value: String,
    nodes: u64,
    links: u64,
) -> Result<()> {
    let mut e = Estimate::default();
    let what = format!("a network of {nodes} nodes and {links} links");
    e.add(at.path(key), value, graph_bytes(nodes, links), what);
    refuse_over(&e, &budget(root)?)
}

/// Bytes for people: `17.6 TiB`, `512.0 MiB`, `900 B`.
pub fn human(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut v = bytes as f64 / 1024.0;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    format!("{v:.1} {}", UNITS[u])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_sizes_read_at_a_glance() {
        assert_eq!(human(900), "900 B");
        assert_eq!(human(1536), "1.5 KiB");
        assert_eq!(human(12 << 30), "12.0 GiB");
        assert_eq!(human(u64::MAX), "16.0 EiB");
    }

    #[test]
    fn meminfo_total_is_read_in_bytes() {
        let t = "MemTotal:       24684544 kB\nMemFree:        21642208 kB\n";
        assert_eq!(meminfo_total(t), Some(24_684_544 * 1024));
        assert_eq!(meminfo_total("MemFree: 1 kB\n"), None);
    }

    #[test]
    fn packets_saturate_rather_than_wrap() {
        assert_eq!(packets(8_000, Time::from_secs(1), 1), 1000);
        assert_eq!(packets(u64::MAX, Time(u64::MAX), 1), u64::MAX);
    }

    #[test]
    fn row_caps_give_each_table_a_quarter_of_the_budget() {
        let c = row_caps(64 << 20);
        assert_eq!(c.queue, (16 << 20) / 64);
        assert_eq!(c.drops, (16 << 20) / 88);
        assert_eq!(c.int, (16 << 20) / 240);
        assert_eq!(c.intervals, (16 << 20) / 144);
    }

    #[test]
    fn refusal_names_the_largest_part() {
        let mut e = Estimate::default();
        e.add("scenario.flow", "3 entries", 10 << 20, "flows".into());
        e.add("scenario.interval", "\"1ms\"", 900 << 20, "the intervals table".into());
        let b = Budget { bytes: 512 << 20, whence: "memory_budget".into() };
        let err = refuse_over(&e, &b).unwrap_err();
        assert_eq!(err.kind(), "memory_budget");
        assert_eq!(
            err.to_string(),
            "scenario.interval = \"1ms\": the run would hold about 926.0 MiB (the intervals \
             table), over the memory budget of 512.0 MiB (memory_budget); expected a smaller \
             value, or a memory_budget above the estimate"
        );
        assert!(refuse_over(&e, &Budget { bytes: 1 << 30, whence: String::new() }).is_ok());
    }
}
