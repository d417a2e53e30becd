//! Topology presets: each a function that returns a [`Graph`](crate::net::graph::Graph).

pub mod dumbbell;
pub mod leaf_spine;
pub mod parking_lot;
pub mod racks;

use rustc_hash::FxHashSet;

use crate::net::graph::{DirSpec, Graph, LinkSpec, NodeKind, NodeSpec};
use crate::net::queue::PortSpec;
use crate::time::Time;
use crate::units::Rate;

/// What every preset's links share: each switch port's queues, each link's delay, the MTU,
/// clocks, and the hosts' qdisc.
#[derive(Clone, Debug, PartialEq)]
pub struct Common {
    pub switch_port: PortSpec,
    pub link_delay: Time,
    pub mtu: u32,
    pub clock_ppm: f64,
    pub veth: bool,
    pub host_fq: Option<crate::host::fq::FqSpec>,
    /// Record every switch port's occupancy in the `queue` table.
    pub record_switch_ports: bool,
}

struct Builder<'c> {
    c: &'c Common,
    g: Graph,
    /// The switches' names, so a link finds its ends' kinds without a scan of every node
    /// (quadratic in a preset of thousands of hosts).
    switches: FxHashSet<String>,
}

impl<'c> Builder<'c> {
    fn new(c: &'c Common) -> Builder<'c> {
        let g = Graph {
            nodes: vec![],
            links: vec![],
            mtu: c.mtu,
            clock_ppm: c.clock_ppm,
            veth: c.veth,
        };
        Builder { c, g, switches: FxHashSet::default() }
    }

    fn node(&mut self, name: String, kind: NodeKind) -> String {
        let fq = if kind == NodeKind::Host { self.c.host_fq.clone() } else { None };
        if kind == NodeKind::Switch {
            self.switches.insert(name.clone());
        }
        self.g.nodes.push(NodeSpec { name: name.clone(), kind, fq });
        name
    }

    fn dir(&self, from: &str) -> DirSpec {
        let switch = self.switches.contains(from);
        DirSpec {
            port: self.c.switch_port.clone(),
            clock_ppm: None,
            recorded: switch && self.c.record_switch_ports,
        }
    }

    fn link(&mut self, a: &str, b: &str, rate: Rate) {
        let (ab, ba) = (self.dir(a), self.dir(b));
        self.g.links.push(LinkSpec {
            a: a.into(),
            b: b.into(),
            rate,
            delay: self.c.link_delay,
            ab,
            ba,
        });
    }
}
