//! The network a scenario runs on: its graph (its own, or the one its dumbbell expands to),
//! the built [`Network`], and the expanded view a user checks.

use std::borrow::Cow;

use super::model::{HostQdisc, Scenario};
use crate::host::fq::FqSpec;
use crate::net::graph::{FlowView, GraphView, LinkView, NodeView};
use crate::net::presets::dumbbell::{self, Dumbbell, IncastHosts, SenderHost, Traffic};
use crate::net::topology::{self, GraphTopology, Network};
use crate::tcp::config::FlowSpec;

/// A host's `fq`, if its qdisc is one.
pub(crate) fn host_fq(q: &HostQdisc, mtu: u32) -> Option<FqSpec> {
    let HostQdisc::Fq(p) = q else { return None };
    let mut fq = FqSpec::linux_default(mtu);
    fq.flow_limit = p.flow_limit;
    fq.maxrate = p.maxrate_bytes_per_s;
    if let Some(q) = p.quantum {
        fq.quantum = q;
    }
    Some(fq)
}

/// A flow's sending host in the dumbbell: its qdisc and NIC rate.
fn sender_host(f: &FlowSpec, mtu: u32) -> SenderHost {
    SenderHost { fq: host_fq(&f.qdisc, mtu), nic_rate: f.nic_rate }
}

impl Scenario {
    /// The dumbbell's settings and traffic, for its preset.
    fn dumbbell(&self) -> (Dumbbell, Traffic) {
        let d = self.topology.dumbbell.clone();
        let mtu = d.mtu;
        // One sending host per [[flow]] entry, its first stream's (streams share settings).
        let entries = self.flow_entries();
        let firsts = (0..self.flows.len()).filter(|&f| f == 0 || entries[f] != entries[f - 1]);
        let traffic = Traffic {
            flows: firsts.map(|f| sender_host(&self.flows[f], mtu)).collect(),
            flow_streams: self.streams.clone(),
            incasts: self
                .incasts
                .iter()
                .map(|i| IncastHosts {
                    senders: i.senders,
                    one_sender_host: i.one_sender_host,
                    host: sender_host(&i.tcp, mtu),
                })
                .collect(),
            bursts: self.bursts.iter().map(|b| b.sources).collect(),
        };
        (d, traffic)
    }

    /// The graph this scenario runs on, with its traffic attached.
    pub fn graph(&self) -> Cow<'_, GraphTopology> {
        match &self.topology.graph {
            Some(g) => Cow::Borrowed(g),
            None => {
                let (d, traffic) = self.dumbbell();
                Cow::Owned(dumbbell::expand(&d, &traffic))
            }
        }
    }

    /// The network of this (validated) scenario.
    pub fn network(&self) -> Network {
        topology::from_graph(&self.graph(), self.seed)
            .unwrap_or_else(|e| panic!("scenario checked: {e}"))
    }

    /// The expanded graph: nodes, links, each flow's path and base RTT.
    pub fn graph_view(&self) -> GraphView {
        let gt = self.graph();
        let net = self.network();
        let n_tcp = net.flow_hosts.len();
        GraphView {
            nodes: net
                .nodes
                .iter()
                .map(|n| NodeView { name: n.name.clone(), kind: n.kind })
                .collect(),
            links: gt
                .graph
                .links
                .iter()
                .map(|l| LinkView {
                    a: l.a.clone(),
                    b: l.b.clone(),
                    rate_bps: l.rate.bps(),
                    delay_s: l.delay.as_secs_f64(),
                })
                .collect(),
            flows: (0..net.routes.len())
                .map(|f| {
                    let (src, dst) = if f < n_tcp {
                        net.flow_hosts[f]
                    } else {
                        let (s, _, d) = net.burst_hosts[f - n_tcp];
                        (s, d)
                    };
                    FlowView {
                        flow_id: f as u32,
                        kind: if f < n_tcp { "tcp" } else { "udp" },
                        src: net.nodes[src as usize].name.clone(),
                        dst: net.nodes[dst as usize].name.clone(),
                        path: net.path_names(f),
                        base_rtt_s: net.base_rtt[f].as_secs_f64(),
                    }
                })
                .collect(),
        }
    }
}
