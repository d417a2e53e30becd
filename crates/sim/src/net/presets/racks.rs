//! Hosts in racks behind top-of-rack switches under one aggregation switch: the data-centre
//! seed's testbed (12 hosts in 4 racks of 3, 1 Gbit/s links), where congestion at a ToR's
//! uplink ("hidden buffer") feeds the port measured at the aggregation switch. Hosts `h0`…
//! (rack by rack), switches `tor0`… and `agg`.

use super::{Builder, Common};
use crate::net::graph::{Graph, NodeKind};
use crate::units::Rate;

#[derive(Clone, Debug, PartialEq)]
pub struct Racks {
    pub racks: u32,
    pub hosts_per_rack: u32,
    pub host_rate: Rate,
    /// Rate of each ToR–aggregation link.
    pub uplink_rate: Rate,
}

impl Racks {
    /// The seed's testbed: 4 racks of 3 hosts, every link 1 Gbit/s.
    pub fn seed_testbed() -> Racks {
        Racks {
            racks: 4,
            hosts_per_rack: 3,
            host_rate: Rate::from_gbps(1),
            uplink_rate: Rate::from_gbps(1),
        }
    }
}

pub fn graph(p: &Racks, c: &Common) -> Graph {
    let mut b = Builder::new(c);
    let agg = b.node("agg".into(), NodeKind::Switch);
    for r in 0..p.racks {
        let tor = b.node(format!("tor{r}"), NodeKind::Switch);
        b.link(&tor, &agg, p.uplink_rate);
        for h in 0..p.hosts_per_rack {
            let host = b.node(format!("h{}", r * p.hosts_per_rack + h), NodeKind::Host);
            b.link(&host, &tor, p.host_rate);
        }
    }
    b.g
}
