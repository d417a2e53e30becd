//! A two-tier Clos fabric: `leaves` leaf switches each with `hosts_per_leaf` hosts, every leaf
//! linked to every one of `spines` spine switches. Hosts `h0`… (leaf by leaf), `leaf0`…,
//! `spine0`…. Traffic between leaves has `spines` equal-cost paths (ECMP).

use super::{Builder, Common};
use crate::net::graph::{Graph, NodeKind};
use crate::units::Rate;

#[derive(Clone, Debug, PartialEq)]
pub struct LeafSpine {
    pub leaves: u32,
    pub spines: u32,
    pub hosts_per_leaf: u32,
    pub host_rate: Rate,
    /// Rate of each leaf–spine link.
    pub fabric_rate: Rate,
}

impl LeafSpine {
    /// The fabric rate that gives `ratio` : 1 oversubscription at each leaf (host capacity
    /// over uplink capacity), rounded to whole bit/s.
    pub fn fabric_rate_for(hosts_per_leaf: u32, spines: u32, host_rate: Rate, ratio: f64) -> Rate {
        let down = host_rate.bps() as f64 * f64::from(hosts_per_leaf);
        Rate((down / (f64::from(spines) * ratio)).round() as u64)
    }

    pub fn oversubscription(&self) -> f64 {
        (self.host_rate.bps() as f64 * f64::from(self.hosts_per_leaf))
            / (self.fabric_rate.bps() as f64 * f64::from(self.spines))
    }
}

pub fn graph(p: &LeafSpine, c: &Common) -> Graph {
    let mut b = Builder::new(c);
    let spines: Vec<String> =
        (0..p.spines).map(|s| b.node(format!("spine{s}"), NodeKind::Switch)).collect();
    for l in 0..p.leaves {
        let leaf = b.node(format!("leaf{l}"), NodeKind::Switch);
        for spine in &spines {
            b.link(&leaf, spine, p.fabric_rate);
        }
        for h in 0..p.hosts_per_leaf {
            let host = b.node(format!("h{}", l * p.hosts_per_leaf + h), NodeKind::Host);
            b.link(&host, &leaf, p.host_rate);
        }
    }
    b.g
}
