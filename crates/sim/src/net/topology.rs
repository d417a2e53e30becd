//! Topology presets: nodes, ports (one per direction of each link) and static routes.

use crate::net::clock::PortClock;
use crate::net::fq::{Fq, FqSpec};
use crate::net::port::{Port, PortId};
use crate::net::queue::PortQueues;
use crate::net::tbf::{TBF_WATCHDOG_STREAM, Tbf};
use crate::packet::NodeId;
use crate::rng;
use crate::scenario::{FlowSpec, HostQdisc, Preset, Scenario, Topology};
use crate::time::Time;
use crate::units::Rate;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    Host,
    Switch,
}

pub struct Node {
    pub name: String,
    pub kind: NodeKind,
    /// Egress port towards each destination node (static routing), indexed by `NodeId`.
    pub routes: Vec<Option<PortId>>,
}

/// A built network and where the scenario's traffic attaches to it.
pub struct Network {
    pub nodes: Vec<Node>,
    pub ports: Vec<Port>,
    /// The bottleneck egress port (its occupancy is recorded).
    pub bottleneck: PortId,
    /// (sender host, receiver host) of each `[[flow]]`.
    pub flow_hosts: Vec<(NodeId, NodeId)>,
    /// (source host, its port into the first switch, destination host) of each burst source,
    /// in `[[burst]]` order, `sources` per burst.
    pub burst_hosts: Vec<(NodeId, PortId, NodeId)>,
}

/// A host's own queue (its qdisc + NIC ring): deep enough never to drop what TCP hands it.
/// Linux bounds it with TCP Small Queues instead; see docs/fidelity.md.
const HOST_QUEUE_BYTES: u64 = 1 << 40;

struct Builder {
    nodes: Vec<Node>,
    ports: Vec<Port>,
    /// The run's seed and `[topology] clock_ppm`: each port draws its clock offset from
    /// stream (`seed`, "port-clock", port index) when it is created.
    seed: u64,
    clock_ppm: f64,
    /// `[topology] veth`: GSO skbs cross the network whole.
    veth: bool,
}

impl Builder {
    fn node(&mut self, name: String, kind: NodeKind) -> NodeId {
        self.nodes.push(Node { name, kind, routes: Vec::new() });
        (self.nodes.len() - 1) as NodeId
    }

    /// A full-duplex link: one egress port at each end, each on its own clock. Returns
    /// (a→b, b→a).
    fn link(
        &mut self,
        a: NodeId,
        b: NodeId,
        rate: Rate,
        delay: Time,
        qa: PortQueues,
        qb: PortQueues,
    ) -> (PortId, PortId) {
        let ab = self.port(a, b, rate, delay, qa);
        let ba = self.port(b, a, rate, delay, qb);
        (ab, ba)
    }

    fn port(
        &mut self,
        from: NodeId,
        to: NodeId,
        rate: Rate,
        delay: Time,
        queues: PortQueues,
    ) -> PortId {
        let id = self.ports.len() as PortId;
        let name = format!("{}->{}", self.nodes[from as usize].name, self.nodes[to as usize].name);
        let clock = PortClock::seeded(rate, self.seed, id as u64, self.clock_ppm);
        let mut port = Port::new(name, from, to, rate, clock, delay, queues);
        port.segments = !self.veth;
        self.ports.push(port);
        id
    }

    fn route(&mut self, at: NodeId, dst: NodeId, port: PortId) {
        let routes = &mut self.nodes[at as usize].routes;
        if routes.len() <= dst as usize {
            routes.resize(dst as usize + 1, None);
        }
        routes[dst as usize] = Some(port);
    }
}

/// The two switches and the bottleneck between them, to which hosts attach.
struct Ends {
    sw_a: NodeId,
    sw_b: NodeId,
    bottleneck: PortId,
    reverse: PortId,
    side_buffer: u64,
}

impl Ends {
    /// A receiving host behind switch B; returns it and its port back towards B.
    fn receiver(&self, b: &mut Builder, name: String, t: &Topology) -> (NodeId, PortId) {
        let rcv = b.node(name, NodeKind::Host);
        let (to_rcv, from_rcv) = b.link(
            self.sw_b,
            rcv,
            t.host_rate,
            Time::ZERO,
            PortQueues::fifo(self.side_buffer),
            PortQueues::fifo(HOST_QUEUE_BYTES),
        );
        b.route(self.sw_a, rcv, self.bottleneck);
        b.route(self.sw_b, rcv, to_rcv);
        (rcv, from_rcv)
    }

    /// A sending host on switch A, talking to `rcv`, with its own qdisc.
    fn sender(
        &self,
        b: &mut Builder,
        snd: NodeId,
        (rcv, from_rcv): (NodeId, PortId),
        spec: &FlowSpec,
        t: &Topology,
    ) {
        let (up, down) = b.link(
            snd,
            self.sw_a,
            t.host_rate,
            Time::ZERO,
            PortQueues::fifo(HOST_QUEUE_BYTES),
            PortQueues::fifo(self.side_buffer),
        );
        if let HostQdisc::Fq(p) = &spec.qdisc {
            let mut fq = FqSpec::linux_default(t.mtu);
            fq.flow_limit = p.flow_limit;
            fq.maxrate = p.maxrate_bytes_per_s;
            if let Some(q) = p.quantum {
                fq.quantum = q;
            }
            b.ports[up as usize].fq = Some(Fq::new(&fq));
        }
        b.route(snd, rcv, up);
        b.route(rcv, snd, from_rcv);
        b.route(self.sw_b, snd, self.reverse);
        b.route(self.sw_a, snd, down);
    }
}

pub fn build(s: &Scenario) -> Network {
    match s.topology.preset {
        Preset::Dumbbell => dumbbell(s),
    }
}

/// Sender hosts — switch A ==bottleneck== switch B — receiver hosts. All propagation delay is
/// on the bottleneck link (rtt/2 each way) so the base RTT is exactly `rtt`. Burst sources sit
/// on their own ports of switch A and send to a sink behind switch B.
fn dumbbell(s: &Scenario) -> Network {
    let t = &s.topology;
    let mut b = Builder {
        nodes: Vec::new(),
        ports: Vec::new(),
        seed: s.seed,
        clock_ppm: t.clock_ppm,
        veth: t.veth,
    };
    let sw_a = b.node("swA".into(), NodeKind::Switch);
    let sw_b = b.node("swB".into(), NodeKind::Switch);
    let side_buffer = t.bottleneck.queues.iter().map(|q| q.buffer_bytes).max().unwrap_or(0);
    let one_way = t.rtt / 2;
    let (bottleneck, reverse) = b.link(
        sw_a,
        sw_b,
        t.bottleneck_rate,
        one_way,
        PortQueues::new(&t.bottleneck),
        PortQueues::fifo(side_buffer),
    );
    b.ports[bottleneck as usize].shaper = t.bottleneck.shaper.as_ref().map(|spec| {
        Tbf::new(spec, rng::stream(s.seed, TBF_WATCHDOG_STREAM, u64::from(bottleneck)))
    });
    b.ports[bottleneck as usize].pauses = t.bottleneck.pauses.clone();

    let mut flow_hosts = Vec::new();
    let ends = Ends { sw_a, sw_b, bottleneck, reverse, side_buffer };
    // Each [[flow]] has a receiver of its own; an incast's senders share one.
    for (i, spec) in s.flows.iter().enumerate() {
        let rcv = ends.receiver(&mut b, format!("r{i}"), t);
        let snd = b.node(format!("s{i}"), NodeKind::Host);
        ends.sender(&mut b, snd, rcv, spec, t);
        flow_hosts.push((snd, rcv.0));
    }
    for (k, inc) in s.incasts.iter().enumerate() {
        let rcv = ends.receiver(&mut b, format!("q{k}"), t);
        let shared = inc.one_sender_host.then(|| {
            let snd = b.node(format!("q{k}s"), NodeKind::Host);
            ends.sender(&mut b, snd, rcv, &inc.tcp, t);
            snd
        });
        for j in 0..inc.senders {
            let snd = shared.unwrap_or_else(|| {
                let snd = b.node(format!("q{k}s{j}"), NodeKind::Host);
                ends.sender(&mut b, snd, rcv, &inc.tcp, t);
                snd
            });
            flow_hosts.push((snd, rcv.0));
        }
    }

    let mut burst_hosts = Vec::new();
    if !s.bursts.is_empty() {
        let sink = b.node("sink".into(), NodeKind::Host);
        let (to_sink, _) = b.link(
            sw_b,
            sink,
            t.bottleneck_rate,
            Time::ZERO,
            PortQueues::fifo(side_buffer),
            PortQueues::fifo(HOST_QUEUE_BYTES),
        );
        b.route(sw_a, sink, bottleneck);
        b.route(sw_b, sink, to_sink);
        let mut k = 0;
        for burst in &s.bursts {
            for _ in 0..burst.sources {
                let src = b.node(format!("b{k}"), NodeKind::Host);
                let (up, _) = b.link(
                    src,
                    sw_a,
                    t.burst_link_rate,
                    Time::ZERO,
                    PortQueues::fifo(HOST_QUEUE_BYTES),
                    PortQueues::fifo(side_buffer),
                );
                b.route(src, sink, up);
                burst_hosts.push((src, up, sink));
                k += 1;
            }
        }
    }
    b.ports[bottleneck as usize].recorded = true;
    Network { nodes: b.nodes, ports: b.ports, bottleneck, flow_hosts, burst_hosts }
}
