//! Networks of any shape: named nodes (hosts, switches), full-duplex links whose two directions
//! each get their own egress port, static shortest-path routing with seeded ECMP, and the
//! build of a [`Network`] in which every flow has its own path.
//!
//! Routing is by hop count, ties broken by summed propagation delay; paths still equal after
//! that are equal-cost, and each node picks among its equal-cost next hops by a hash of the
//! packet's 5-tuple salted per node and per run seed (a switch's ECMP hash with its own seed,
//! so that successive switches do not polarise onto one link). Hosts never forward: a path
//! leaves a host only at its start. A flow may also give its `path` as a list of node names.
//!
//! Link `l` makes port `2l` (from `a` to `b`) and port `2l + 1` (from `b` to `a`), so the
//! dumbbell preset, whose links are listed in the order today's builder made them, numbers its
//! ports (and seeds their clocks) as before.

use rustc_hash::FxHashMap;
use serde::Serialize;

use crate::host::fq::FqSpec;
use crate::net::clock::PortClock;
use crate::net::port::{Port, PortId};
use crate::net::queue::PortQueues;
use crate::net::queue::PortSpec;
pub use crate::net::route::{Route, Router};
use crate::net::tbf::{TBF_WATCHDOG_STREAM, Tbf};
use crate::packet::{IPV4_HEADER_BYTES, NodeId, TCP_HEADER_BYTES, TCP_TIMESTAMP_OPTION_BYTES};
use crate::rng;
use crate::time::Time;
use crate::units::{ETHERNET_OVERHEAD_BYTES, Rate};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum NodeKind {
    Host,
    Switch,
}

/// A node as the scenario describes it.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeSpec {
    pub name: String,
    pub kind: NodeKind,
    /// A host's `fq` root qdisc on every port it sends from (`None`: pfifo).
    pub fq: Option<FqSpec>,
}

/// One direction of a link: the egress port that drives it.
#[derive(Clone, Debug, PartialEq)]
pub struct DirSpec {
    /// Scheduler, queues, ECN marking, `tbf` shaper and pauses of a switch's port. A host's
    /// port is its qdisc instead (deep FIFO, or its `fq`).
    pub port: PortSpec,
    /// This port's clock offset bound in ppm; `None`: the graph's.
    pub clock_ppm: Option<f64>,
    /// Record the port's occupancy in the `queue` table.
    pub recorded: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct LinkSpec {
    pub a: String,
    pub b: String,
    pub rate: Rate,
    /// One-way propagation delay.
    pub delay: Time,
    /// The port at `a` towards `b`, and the one at `b` towards `a`.
    pub ab: DirSpec,
    pub ba: DirSpec,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Graph {
    pub nodes: Vec<NodeSpec>,
    pub links: Vec<LinkSpec>,
    /// IP MTU of every interface.
    pub mtu: u32,
    /// Default bound of every port's clock offset, ppm (`net::clock`).
    pub clock_ppm: f64,
    /// GSO skbs cross the network whole (veth pairs) rather than as frames.
    pub veth: bool,
}

/// Where one flow (or one burst source) attaches: its hosts, and optionally its path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attach {
    /// The scenario entry it comes from, for errors (`flow[3]`).
    pub field: String,
    pub src: String,
    pub dst: String,
    /// Node names from `src` to `dst`; `None`: routed. Replies take it backwards.
    pub path: Option<Vec<String>>,
}

/// A graph that cannot be built: which field, its value, and what was expected. Fields are
/// named as in the scenario (`link[2].b`, `flow[0].path[3]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GraphError {
    pub field: String,
    pub value: String,
    pub expected: String,
}

impl std::fmt::Display for GraphError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} = {}: expected {}", self.field, self.value, self.expected)
    }
}

pub(crate) fn err(field: String, value: &str, expected: impl Into<String>) -> GraphError {
    GraphError { field, value: format!("{value:?}"), expected: expected.into() }
}

/// A host's own queue (its qdisc + NIC ring): deep enough never to drop what TCP hands it.
/// Linux bounds it with TCP Small Queues instead; see docs/fidelity.md.
pub const HOST_QUEUE_BYTES: u64 = 1 << 40;

/// A pure ACK as our receivers send it: IPv4 + TCP + timestamps (52 bytes).
const ACK_IP_BYTES: u32 = IPV4_HEADER_BYTES + TCP_HEADER_BYTES + TCP_TIMESTAMP_OPTION_BYTES;

/// The graph with names resolved: adjacency by port.
pub struct Resolved<'g> {
    pub graph: &'g Graph,
    index: FxHashMap<&'g str, NodeId>,
    /// Per node: (port, neighbour) of each link end at it, by port id.
    pub(crate) out: Vec<Vec<(PortId, NodeId)>>,
    /// Per port: (from, to).
    ends: Vec<(NodeId, NodeId)>,
}

impl Graph {
    /// Check names and links: unique node names, links between two known, distinct nodes.
    pub fn resolve(&self) -> Result<Resolved<'_>, GraphError> {
        let mut index = FxHashMap::default();
        for (i, n) in self.nodes.iter().enumerate() {
            if n.name.is_empty() {
                return Err(err(format!("node[{i}].name"), "", "a non-empty name"));
            }
            if let Some(j) = index.insert(n.name.as_str(), i as NodeId) {
                return Err(err(
                    format!("node[{i}].name"),
                    &n.name,
                    format!("a name not already given to node[{j}]"),
                ));
            }
        }
        let mut out = vec![Vec::new(); self.nodes.len()];
        let mut ends = Vec::with_capacity(2 * self.links.len());
        for (l, link) in self.links.iter().enumerate() {
            let find = |end: &str, name: &str| {
                index.get(name).copied().ok_or_else(|| {
                    err(format!("link[{l}].{end}"), name, "the name of a [[node]] (unknown node)")
                })
            };
            let (a, b) = (find("a", &link.a)?, find("b", &link.b)?);
            if a == b {
                return Err(err(
                    format!("link[{l}].b"),
                    &link.b,
                    "a node other than link.a (a link to itself)",
                ));
            }
            if link.rate.bps() == 0 {
                return Err(err(format!("link[{l}].rate"), "0bps", "a rate above 0"));
            }
            let (ab, ba) = (2 * l as PortId, 2 * l as PortId + 1);
            out[a as usize].push((ab, b));
            out[b as usize].push((ba, a));
            ends.push((a, b));
            ends.push((b, a));
        }
        Ok(Resolved { graph: self, index, out, ends })
    }
}

impl<'g> Resolved<'g> {
    pub fn node(&self, name: &str) -> Option<NodeId> {
        self.index.get(name).copied()
    }
}

/// One-way: each hop's propagation delay plus the serialization of `ip_bytes` at its rate.
fn one_way(graph: &Graph, ports: &[PortId], ip_bytes: u32) -> Time {
    ports
        .iter()
        .map(|&p| {
            let l = &graph.links[p as usize / 2];
            l.delay + l.rate.serialization_time((ip_bytes + ETHERNET_OVERHEAD_BYTES) as u64)
        })
        .fold(Time::ZERO, |a, b| a + b)
}

/// A flow's base RTT: an MTU-sized segment out, an ACK back, through empty queues at nominal
/// rates (no clock offsets, no host delays). A UDP source has no way back: its one-way delay.
pub fn base_rtt(graph: &Graph, route: &Route) -> Time {
    one_way(graph, &route.forward, graph.mtu) + one_way(graph, &route.reverse, ACK_IP_BYTES)
}

/// The propagation part of [`base_rtt`] alone.
pub fn propagation_rtt(graph: &Graph, route: &Route) -> Time {
    let d = |ports: &[PortId]| {
        ports.iter().map(|&p| graph.links[p as usize / 2].delay).fold(Time::ZERO, |a, b| a + b)
    };
    d(&route.forward) + d(&route.reverse)
}

/// Builds the network's nodes and ports (port ids as in the module doc).
pub fn build_ports(g: &Resolved<'_>, seed: u64) -> (Vec<crate::net::topology::Node>, Vec<Port>) {
    let graph = g.graph;
    let nodes = graph
        .nodes
        .iter()
        .map(|n| crate::net::topology::Node {
            name: n.name.clone(),
            kind: n.kind,
            fq: n.fq.clone(),
        })
        .collect::<Vec<_>>();
    let mut ports = Vec::with_capacity(2 * graph.links.len());
    for link in &graph.links {
        for dir in [&link.ab, &link.ba] {
            let id = ports.len() as PortId;
            let (from, to) = g.ends[id as usize];
            let name = format!("{}->{}", nodes[from as usize].name, nodes[to as usize].name);
            let ppm = dir.clock_ppm.unwrap_or(graph.clock_ppm);
            let clock = PortClock::seeded(link.rate, seed, id as u64, ppm);
            let node = &graph.nodes[from as usize];
            let queues = match node.kind {
                NodeKind::Host => PortQueues::fifo(HOST_QUEUE_BYTES),
                NodeKind::Switch => PortQueues::new(&dir.port),
            };
            let mut port = Port::new(name, from, to, link.rate, clock, link.delay, queues);
            port.segments = !graph.veth;
            port.at_host = node.kind == NodeKind::Host;
            match node.kind {
                NodeKind::Host => {} // its qdisc is the host's (`host::nic`)
                NodeKind::Switch => {
                    port.shaper = dir.port.shaper.as_ref().map(|spec| {
                        let watchdog = rng::stream(seed, TBF_WATCHDOG_STREAM, u64::from(id));
                        Box::new(Tbf::new(spec, watchdog))
                    });
                    port.pauses = dir.port.pauses.clone();
                }
            }
            port.recorded = dir.recorded;
            ports.push(port);
        }
    }
    (nodes, ports)
}

/// The expanded graph as a user checks it: nodes, links, and each flow's path and base RTT.
#[derive(Clone, Debug, Serialize)]
pub struct GraphView {
    pub nodes: Vec<NodeView>,
    pub links: Vec<LinkView>,
    pub flows: Vec<FlowView>,
}

#[derive(Clone, Debug, Serialize)]
pub struct NodeView {
    pub name: String,
    pub kind: NodeKind,
}

#[derive(Clone, Debug, Serialize)]
pub struct LinkView {
    pub a: String,
    pub b: String,
    pub rate_bps: u64,
    pub delay_s: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct FlowView {
    pub flow_id: u32,
    pub kind: &'static str,
    pub src: String,
    pub dst: String,
    /// Node names from src to dst.
    pub path: Vec<String>,
    /// `base_rtt`; for a UDP source, its one-way delay.
    pub base_rtt_s: f64,
}

impl GraphView {
    /// One line per node, link and flow.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        for n in &self.nodes {
            let kind = if n.kind == NodeKind::Host { "host" } else { "switch" };
            s.push_str(&format!("node {} ({kind})\n", n.name));
        }
        for l in &self.links {
            s.push_str(&format!(
                "link {} -- {}  {} Gbit/s  {} us\n",
                l.a,
                l.b,
                l.rate_bps as f64 / 1e9,
                l.delay_s * 1e6
            ));
        }
        for f in &self.flows {
            s.push_str(&format!(
                "flow {} ({}) {} -> {}: {}  base RTT {:.6} ms\n",
                f.flow_id,
                f.kind,
                f.src,
                f.dst,
                f.path.join(" > "),
                f.base_rtt_s * 1e3
            ));
        }
        s
    }

    /// Graphviz DOT: hosts as boxes, switches as ellipses, links labelled with rate and delay.
    pub fn to_dot(&self) -> String {
        let mut s = String::from("graph burstlab {\n");
        for n in &self.nodes {
            let shape = if n.kind == NodeKind::Host { "box" } else { "ellipse" };
            s.push_str(&format!("  \"{}\" [shape={shape}];\n", n.name));
        }
        for l in &self.links {
            s.push_str(&format!(
                "  \"{}\" -- \"{}\" [label=\"{} Gbit/s, {} us\"];\n",
                l.a,
                l.b,
                l.rate_bps as f64 / 1e9,
                l.delay_s * 1e6
            ));
        }
        s.push_str("}\n");
        s
    }
}
