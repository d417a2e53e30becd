//! A chain of `hops` + 1 switches `sw0`…`sw{hops}` joined by `hops` links of `rate`, with
//! `hosts_per_switch` hosts `h{i}_{k}` on each switch: a long flow from `h0_0` to `h{hops}_0`
//! crosses every link, and cross traffic between neighbours shares one each (the parking lot
//! of Floyd & Jacobson's fairness studies).

use super::{Builder, Common};
use crate::net::graph::{Graph, NodeKind};
use crate::units::Rate;

#[derive(Clone, Debug, PartialEq)]
pub struct ParkingLot {
    pub hops: u32,
    pub hosts_per_switch: u32,
    /// Rate of the links between switches.
    pub rate: Rate,
    pub host_rate: Rate,
}

pub fn graph(p: &ParkingLot, c: &Common) -> Graph {
    let mut b = Builder::new(c);
    let mut prev: Option<String> = None;
    for i in 0..=p.hops {
        let sw = b.node(format!("sw{i}"), NodeKind::Switch);
        if let Some(prev) = &prev {
            b.link(prev, &sw, p.rate);
        }
        for k in 0..p.hosts_per_switch {
            let host = b.node(format!("h{i}_{k}"), NodeKind::Host);
            b.link(&host, &sw, p.host_rate);
        }
        prev = Some(sw);
    }
    b.g
}
