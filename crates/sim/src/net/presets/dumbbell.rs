//! Sender hosts — switch A ==bottleneck== switch B — receiver hosts. All propagation delay is
//! on the bottleneck link (rtt/2 each way) so the base propagation RTT is `rtt`. Each
//! `[[flow]]` gets a sender and a receiver of its own; an incast's senders share one receiver.
//! Burst sources sit on their own ports of switch A and send to a sink behind switch B.
//!
//! Nodes and links are listed in the order the pre-graph builder created them, so node
//! addresses, port ids and port clocks — and every shipped scenario's results — are unchanged.

use crate::host::fq::FqSpec;
use crate::net::graph::{Attach, DirSpec, Graph, HOST_QUEUE_BYTES, LinkSpec, NodeKind, NodeSpec};
use crate::net::queue::PortSpec;
use crate::net::topology::GraphTopology;
use crate::time::Time;
use crate::units::Rate;

/// The dumbbell's settings (`[topology]` without `preset`).
#[derive(Clone, Debug, PartialEq)]
pub struct Dumbbell {
    pub bottleneck_rate: Rate,
    /// Rate of every host's access link.
    pub host_rate: Rate,
    /// Rate of the links that bring burst sources into switch A.
    pub burst_link_rate: Rate,
    /// Base round-trip propagation time between a sender and its receiver.
    pub rtt: Time,
    pub mtu: u32,
    pub clock_ppm: f64,
    pub veth: bool,
    /// The bottleneck egress port; the other switch ports are FIFOs as deep as its deepest
    /// queue.
    pub bottleneck: PortSpec,
}

/// The traffic whose hosts the dumbbell makes: each `[[flow]]`'s sending host, each incast's
/// senders, each burst's source count.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Traffic {
    pub flows: Vec<SenderHost>,
    /// Each flow's parallel streams (iperf3 `-P`), all between its two hosts; empty: one each.
    pub flow_streams: Vec<u32>,
    pub incasts: Vec<IncastHosts>,
    pub bursts: Vec<u32>,
}

/// A sending host's own settings: its qdisc, and its NIC's rate where it is not `host_rate`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SenderHost {
    pub fq: Option<FqSpec>,
    pub nic_rate: Option<Rate>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct IncastHosts {
    pub senders: u32,
    /// All senders on one host.
    pub one_sender_host: bool,
    /// Every sender's host.
    pub host: SenderHost,
}

pub fn dir(port: PortSpec) -> DirSpec {
    DirSpec { port, clock_ppm: None, recorded: false }
}

struct Build {
    g: Graph,
    side_buffer: u64,
    nic_rates: Vec<(String, Rate)>,
}

impl Build {
    /// A sending host and its access link to switch A.
    fn sender(&mut self, name: String, host: &SenderHost, switch: &str, rate: Rate) -> String {
        let snd = self.node(name, NodeKind::Host, host.fq.clone());
        self.access(&snd, switch, rate, true);
        if let Some(nic) = host.nic_rate {
            self.nic_rates.push((snd.clone(), nic));
        }
        snd
    }

    fn node(&mut self, name: String, kind: NodeKind, fq: Option<FqSpec>) -> String {
        self.g.nodes.push(NodeSpec { name: name.clone(), kind, fq });
        name
    }

    /// A host's access link: `host` ⇄ `switch` at `rate`, no delay.
    fn access(&mut self, host: &str, switch: &str, rate: Rate, host_is_a: bool) {
        let host_dir = dir(PortSpec::fifo(HOST_QUEUE_BYTES));
        let switch_dir = dir(PortSpec::fifo(self.side_buffer));
        let (a, b, ab, ba) = if host_is_a {
            (host, switch, host_dir, switch_dir)
        } else {
            (switch, host, switch_dir, host_dir)
        };
        self.g.links.push(LinkSpec { a: a.into(), b: b.into(), rate, delay: Time::ZERO, ab, ba });
    }
}

pub fn expand(t: &Dumbbell, traffic: &Traffic) -> GraphTopology {
    let side_buffer = t.bottleneck.queues.iter().map(|q| q.buffer_bytes).max().unwrap_or(0);
    let g =
        Graph { nodes: vec![], links: vec![], mtu: t.mtu, clock_ppm: t.clock_ppm, veth: t.veth };
    let mut b = Build { g, side_buffer, nic_rates: vec![] };
    let sw_a = b.node("swA".into(), NodeKind::Switch, None);
    let sw_b = b.node("swB".into(), NodeKind::Switch, None);
    b.g.links.push(LinkSpec {
        a: sw_a.clone(),
        b: sw_b.clone(),
        rate: t.bottleneck_rate,
        delay: t.rtt / 2,
        ab: DirSpec { port: t.bottleneck.clone(), clock_ppm: None, recorded: true },
        ba: dir(PortSpec::fifo(side_buffer)),
    });
    let attach = |src: &str, dst: &str, field: String| Attach {
        field,
        src: src.into(),
        dst: dst.into(),
        path: None,
    };
    let mut tcp = Vec::new();
    for (i, host) in traffic.flows.iter().enumerate() {
        let rcv = b.node(format!("r{i}"), NodeKind::Host, None);
        b.access(&rcv, &sw_b, t.host_rate, false);
        let snd = b.sender(format!("s{i}"), host, &sw_a, t.host_rate);
        for _ in 0..traffic.flow_streams.get(i).copied().unwrap_or(1) {
            tcp.push(attach(&snd, &rcv, format!("flow[{i}]")));
        }
    }
    for (k, inc) in traffic.incasts.iter().enumerate() {
        let rcv = b.node(format!("q{k}"), NodeKind::Host, None);
        b.access(&rcv, &sw_b, t.host_rate, false);
        let shared =
            inc.one_sender_host.then(|| b.sender(format!("q{k}s"), &inc.host, &sw_a, t.host_rate));
        for j in 0..inc.senders {
            let snd = shared
                .clone()
                .unwrap_or_else(|| b.sender(format!("q{k}s{j}"), &inc.host, &sw_a, t.host_rate));
            tcp.push(attach(&snd, &rcv, format!("incast[{k}]")));
        }
    }
    let mut udp = Vec::new();
    if !traffic.bursts.is_empty() {
        let sink = b.node("sink".into(), NodeKind::Host, None);
        b.access(&sink, &sw_b, t.bottleneck_rate, false);
        let mut k = 0;
        for (i, &sources) in traffic.bursts.iter().enumerate() {
            for _ in 0..sources {
                let src = b.node(format!("b{k}"), NodeKind::Host, None);
                b.access(&src, &sw_a, t.burst_link_rate, true);
                udp.push(attach(&src, &sink, format!("burst[{i}]")));
                k += 1;
            }
        }
    }
    GraphTopology { graph: b.g, tcp, udp, nic_rates: b.nic_rates }
}
