//! The typed scenario: what the parser produces and the simulator consumes. Every quantity is
//! already in engine units (picoseconds, bits per second, bytes).

use crate::time::Time;
use crate::units::Rate;

// Each component's own config type, re-exported: the scenario maps TOML onto them.
pub use crate::app::burst::BurstSpec;
pub use crate::app::incast::{IncastSpec, ServeOrder};
pub use crate::latency::Latency;
pub use crate::net::port::Pause;
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
    /// N-to-1 query apps; their senders' flows are numbered after `flows`.
    pub incasts: Vec<IncastSpec>,
    pub bursts: Vec<BurstSpec>,
    /// `[telemetry]`: which switch ports export INT metadata (the `int` table).
    pub telemetry: Telemetry,
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
    pub bottleneck_rate: Rate,
    /// Rate of every host NIC and access link.
    pub host_rate: Rate,
    /// Rate of the links that bring burst sources into switch A (default: `host_rate`).
    pub burst_link_rate: Rate,
    /// Base round-trip propagation time between a sender and its receiver.
    pub rtt: Time,
    /// IP MTU of every interface, bytes.
    pub mtu: u32,
    /// Bound of every port's clock offset, ppm (`net::clock`); 0 gives exact link rates.
    pub clock_ppm: f64,
    /// Hosts and switches are Linux network namespaces joined by veth pairs: TCP's GSO skbs
    /// stay whole up to the `tbf` qdisc and into the receiver, which ACKs each as one
    /// (docs/fidelity.md). Otherwise NICs cut them into frames on the wire.
    pub veth: bool,
    /// Bottleneck egress port: scheduler and queues.
    pub bottleneck: PortSpec,
    /// The network as a graph with the traffic attached (every preset but the dumbbell, which
    /// the fields above describe; with a graph they are unused: `rtt` 0, the rates the fastest
    /// link's, `bottleneck` a FIFO of `[topology] buffer`).
    pub graph: Option<crate::net::topology::GraphTopology>,
}
