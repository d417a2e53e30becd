//! The typed scenario: what the parser produces and the simulator consumes. Every quantity is
//! already in engine units (picoseconds, bits per second, bytes).

use crate::time::Time;

// Each component's own config type, re-exported: the scenario maps TOML onto them.
pub use crate::app::burst::BurstSpec;
pub use crate::app::incast::{IncastSpec, ServeOrder};
pub use crate::app::websearch::WebSearchSpec;
pub use crate::latency::Latency;
pub use crate::net::port::Pause;
pub use crate::net::presets::dumbbell::Dumbbell;
pub use crate::net::queue::{EcnMode, EcnSpec, PortSpec, QueueSpec, Scheduler, SlopeForm};
pub use crate::net::tbf::TbfSpec;
pub use crate::record::int::{IntPort, Telemetry};
pub use crate::tcp::config::{FlowSpec, FqParams, HostQdisc, RcvBufTuning, Timers, WindowModel};

#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    pub name: String,
    pub seed: u64,
    /// Simulated time at which the run ends, whatever is still in flight.
    pub stop: Time,
    /// Period of the `intervals` table (iperf3 `-i`), 1 s by default, ≥ 1 ms.
    pub interval: Time,
    pub topology: Topology,
    pub flows: Vec<FlowSpec>,
    /// Each `[[flow]]` entry's `streams` (iperf3 `-P`): its flows are consecutive in `flows`,
    /// with its settings, between the same two hosts. Empty: one flow per entry.
    pub streams: Vec<u32>,
    /// N-to-1 query apps; their senders' flows are numbered after `flows`.
    pub incasts: Vec<IncastSpec>,
    /// Web-search workloads (graphs only); their connections are numbered after the incasts'.
    pub websearches: Vec<WebSearchSpec>,
    pub bursts: Vec<BurstSpec>,
    /// `[telemetry]`: which switch ports export INT metadata (the `int` table).
    pub telemetry: Telemetry,
    /// The resolved memory budget, bytes (`memory_budget`, or the machine's share): the
    /// loader refuses a run estimated over it, and the record tables are capped within it
    /// (`budget::row_caps`).
    pub memory_budget: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preset {
    /// Sender hosts — switch A ==bottleneck== switch B — receiver hosts; burst sources on their
    /// own ports of switch A, fanning in to the bottleneck egress queue.
    Dumbbell,
    /// `[[node]]` and `[[link]]` tables (`net::graph`).
    Graph,
    /// A chain of switches with hosts on each (`net::presets::parking_lot`).
    ParkingLot,
    /// Leaves, spines and hosts per leaf (`net::presets::leaf_spine`).
    LeafSpine,
    /// Hosts in racks behind ToRs under one aggregation switch (`net::presets::racks`).
    Racks,
}

impl Preset {
    pub const ALL: [(&'static str, Preset); 5] = [
        ("dumbbell", Preset::Dumbbell),
        ("graph", Preset::Graph),
        ("parking-lot", Preset::ParkingLot),
        ("leaf-spine", Preset::LeafSpine),
        ("racks", Preset::Racks),
    ];

    /// The scenario's spelling.
    pub fn name(self) -> &'static str {
        Preset::ALL.iter().find(|(_, p)| *p == self).map(|(n, _)| *n).expect("listed")
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Topology {
    pub preset: Preset,
    /// The dumbbell's settings (`net::presets::dumbbell`). With a graph only its `mtu`,
    /// `clock_ppm` and `veth` apply, to every interface; the rest summarise the graph: `rtt`
    /// 0, the rates the fastest link's, `bottleneck` a FIFO of `[topology] buffer`.
    pub dumbbell: Dumbbell,
    /// The network as a graph with the traffic attached (every preset but the dumbbell).
    pub graph: Option<crate::net::topology::GraphTopology>,
}

impl Topology {
    /// IP MTU of every interface, bytes.
    pub fn mtu(&self) -> u32 {
        self.dumbbell.mtu
    }
}

impl Scenario {
    /// The `[[flow]]` entry each of `flows` comes from (`streams` opens several per entry).
    pub fn flow_entries(&self) -> Vec<u32> {
        if self.streams.is_empty() {
            return (0..self.flows.len() as u32).collect();
        }
        let per = self.streams.iter().enumerate();
        per.flat_map(|(i, &n)| std::iter::repeat_n(i as u32, n as usize)).collect()
    }
}
