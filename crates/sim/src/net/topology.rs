//! A built network: nodes, ports (one per direction of each link), and each flow's route.
//! Built from a [`Graph`] — the scenario's own, or the one a preset expands to.

use crate::net::clock::PortClock;
use crate::net::graph::{self, Attach, Graph, GraphError, Route, Router};
use crate::net::port::{Port, PortId};
use rustc_hash::FxHashMap;

use crate::packet::{
    IPV4_HEADER_BYTES, NO_HOP, NodeId, Packet, TCP_HEADER_BYTES, TCP_TIMESTAMP_OPTION_BYTES,
};
use crate::time::Time;
use crate::units::{ETHERNET_OVERHEAD_BYTES, Rate};

pub use crate::net::graph::NodeKind;

pub struct Node {
    pub name: String,
    pub kind: NodeKind,
    /// A host's `fq` root qdisc on each of its NICs (`None`: pfifo); the host owns it.
    pub fq: Option<crate::host::fq::FqSpec>,
}

/// A network given as a graph and where the traffic attaches to it: `tcp` for the TCP flows
/// (`[[flow]]` entries, then every incast's senders), `udp` for the burst sources, in flow-id
/// order.
#[derive(Clone, Debug, PartialEq)]
pub struct GraphTopology {
    pub graph: Graph,
    pub tcp: Vec<Attach>,
    pub udp: Vec<Attach>,
    /// Hosts whose NIC rate differs from their link's (`nic_rate`), by name: their egress
    /// ports serialize at this rate.
    pub nic_rates: Vec<(String, Rate)>,
}

/// A built network and where the scenario's traffic attaches to it.
pub struct Network {
    pub nodes: Vec<Node>,
    pub ports: Vec<Port>,
    /// The dumbbell's bottleneck egress port; in a graph, the first recorded port (or 0).
    pub bottleneck: PortId,
    /// (sender host, receiver host) of each TCP flow.
    pub flow_hosts: Vec<(NodeId, NodeId)>,
    /// (source host, its first port, destination host) of each burst source, in `[[burst]]`
    /// order, `sources` per burst.
    pub burst_hosts: Vec<(NodeId, PortId, NodeId)>,
    /// Per flow id (TCP flows, then burst sources): its route, and its source host (packets
    /// from it take `forward`, the others `reverse`).
    pub routes: Vec<(NodeId, Route)>,
    /// Per flow id: base RTT (`graph::base_rtt`) and propagation-only RTT.
    pub base_rtt: Vec<Time>,
    pub propagation_rtt: Vec<Time>,
    /// The steps of every route, routes that end alike sharing their tails: the steps the
    /// packets of many flows take fit in a few cache lines, and a switch finds a packet's
    /// next port in one read (`routes[flow]` and its `Vec` were two dependent misses).
    pub hops: Vec<Hop>,
    /// Per flow id: where its routes start in `hops`.
    pub entries: Vec<RouteEntry>,
}

/// One step of a route: the port to take, and the index of the next step in
/// [`Network::hops`] ([`NO_HOP`] after the last).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Hop {
    pub port: PortId,
    pub next: u32,
}

/// A flow's first steps: packets from its source host `src` take `forward`, the others (its
/// ACKs) `reverse`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RouteEntry {
    pub src: NodeId,
    pub forward: u32,
    pub reverse: u32,
}

impl Network {
    /// The first step of the route of a packet of `flow` leaving `src`.
    #[inline]
    pub fn first_hop(&self, flow: u32, src: NodeId) -> u32 {
        let e = &self.entries[flow as usize];
        if e.src == src { e.forward } else { e.reverse }
    }

    /// The port a packet of `flow` from `src` takes at hop `hop` of its route, by walking its
    /// steps: for setting up, not per packet ([`Network::take_step`]).
    pub fn next_port(&self, flow: u32, src: NodeId, hop: u8) -> PortId {
        let mut h = self.first_hop(flow, src);
        for _ in 0..hop {
            h = self.hops[h as usize].next;
        }
        self.hops[h as usize].port
    }

    /// The port packet `p` takes next, moving it one step along its route.
    #[inline]
    pub fn take_step(&self, p: &mut Packet) -> PortId {
        let h = self.hops[p.hop as usize];
        p.hop = h.next;
        h.port
    }

    /// Node names along flow `f`'s forward route.
    pub fn path_names(&self, f: usize) -> Vec<String> {
        let ports = &self.routes[f].1.forward;
        let mut v = Vec::with_capacity(ports.len() + 1);
        if let Some(&p) = ports.first() {
            v.push(self.nodes[self.ports[p as usize].node as usize].name.clone());
        }
        v.extend(
            ports.iter().map(|&p| self.nodes[self.ports[p as usize].peer as usize].name.clone()),
        );
        v
    }
}

/// The ACK `graph::base_rtt` sends back: IPv4 + TCP + timestamps.
const ACK_IP_BYTES: u32 = IPV4_HEADER_BYTES + TCP_HEADER_BYTES + TCP_TIMESTAMP_OPTION_BYTES;

/// A NIC rate's port: its nominal rate before the NIC's, and the NIC's.
struct Nic {
    port: PortId,
    link_rate: Rate,
    nic_rate: Rate,
}

/// Each named host's egress ports serialize at its NIC rate (their clock offsets kept).
fn set_nic_rates(rates: &[(String, Rate)], nodes: &[Node], ports: &mut [Port]) -> Vec<Nic> {
    let mut nics = Vec::new();
    for (name, rate) in rates {
        let Some(node) = nodes.iter().position(|n| &n.name == name) else { continue };
        for (id, p) in ports.iter_mut().enumerate().filter(|(_, p)| p.node as usize == node) {
            nics.push(Nic { port: id as PortId, link_rate: p.rate, nic_rate: *rate });
            p.clock = PortClock::new(*rate, p.clock.ppb);
            p.rate = *rate;
        }
    }
    nics
}

/// Route `r`'s base RTT (`graph::base_rtt`, which serializes at link rates) with each NIC
/// port on it serializing its packet (an MTU-sized segment out, an ACK back) at its NIC's rate.
fn base_rtt(graph: &Graph, nics: &[Nic], r: &Route) -> Time {
    let mut t = graph::base_rtt(graph, r);
    for (ports, ip_bytes) in [(&r.forward, graph.mtu), (&r.reverse, ACK_IP_BYTES)] {
        let wire = u64::from(ip_bytes + ETHERNET_OVERHEAD_BYTES);
        for nic in nics.iter().filter(|n| ports.contains(&n.port)) {
            t = t + nic.nic_rate.serialization_time(wire) - nic.link_rate.serialization_time(wire);
        }
    }
    t
}

/// Every route's ports as steps in one table, each step shared by all the routes that end
/// with the same ports from it on.
fn chain_hops(routes: &[(NodeId, Route)]) -> (Vec<Hop>, Vec<RouteEntry>) {
    let mut hops = Vec::new();
    let mut index: FxHashMap<Hop, u32> = FxHashMap::default();
    let mut chain = |ports: &[PortId]| {
        ports.iter().rev().fold(NO_HOP, |next, &port| {
            let h = Hop { port, next };
            *index.entry(h).or_insert_with(|| {
                hops.push(h);
                (hops.len() - 1) as u32
            })
        })
    };
    let entries = (routes.iter())
        .map(|(src, r)| RouteEntry {
            src: *src,
            forward: chain(&r.forward),
            reverse: chain(&r.reverse),
        })
        .collect();
    hops.shrink_to_fit();
    (hops, entries)
}

/// Build a network from a graph and its attachments; the first problem is the error.
pub fn from_graph(t: &GraphTopology, seed: u64) -> Result<Network, GraphError> {
    let g = t.graph.resolve()?;
    let routed = Router::new(&g, seed).route_all(&t.tcp, &t.udp)?;
    let mut routes = Vec::with_capacity(routed.len());
    let mut flow_hosts = Vec::with_capacity(t.tcp.len());
    let mut burst_hosts = Vec::with_capacity(t.udp.len());
    for (i, (s, d, r)) in routed.into_iter().enumerate() {
        if i < t.tcp.len() {
            flow_hosts.push((s, d));
        } else {
            burst_hosts.push((s, r.forward[0], d));
        }
        routes.push((s, r));
    }
    let propagation_rtt = routes.iter().map(|(_, r)| graph::propagation_rtt(&t.graph, r)).collect();
    let (nodes, mut ports) = graph::build_ports(&g, seed);
    let nics = set_nic_rates(&t.nic_rates, &nodes, &mut ports);
    let base_rtt = routes.iter().map(|(_, r)| base_rtt(&t.graph, &nics, r)).collect();
    let bottleneck = ports.iter().position(|p| p.recorded).unwrap_or(0) as PortId;
    let (hops, entries) = chain_hops(&routes);
    Ok(Network {
        nodes,
        ports,
        bottleneck,
        flow_hosts,
        burst_hosts,
        routes,
        base_rtt,
        propagation_rtt,
        hops,
        entries,
    })
}
