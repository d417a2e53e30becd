//! The `int` table: the INT metadata a switch port would export, one row per sampled packet
//! and INT-enabled hop (DESIGN.md "Records"). The INT report export builds Telemetry Report
//! packets from these rows, so their fields follow the INT spec's per-hop metadata.
//!
//! Definitions (docs/scenarios.md, `[telemetry]`):
//! - `t_s`: the egress timestamp, when the port dequeues the packet and starts serializing it
//!   (a Tofino's egress pipeline timestamp); for a drop, the time of the drop;
//! - `hop_latency_ns`: egress time − arrival time at the switch (the last bit in), truncated
//!   to whole nanoseconds; 0 for a drop. No pipeline latency is modelled: an idle port gives 0;
//! - `queue_occupancy_bytes`: bytes in the packet's egress queue as it is dequeued, the packet
//!   itself included (the depth it saw on leaving); for a drop, the bytes the queue held when
//!   it refused the packet;
//! - `ingress_port`/`egress_port`: the port's index among its switch's ports (in topology
//!   order); `*_port_name` is the name the `queue` table uses. A port names the link, so the
//!   ingress port of a packet from host `s0` into `swA` is `swA->s0`;
//! - the 5-tuple follows [`super::flow_key`]; `packet_bytes` counts the IP datagram;
//! - `report_seq` counts rows per switch from 0 in emission order;
//! - sampling: with `int_sample = N`, the 1st, (N+1)th, … packet each INT port transmits or
//!   drops gets a row (a per-port counter: deterministic, no random stream).

use crate::net::port::{Port, PortId};
use crate::net::topology::Network;
use crate::packet::{NodeId, Packet, PacketId, PacketPool};
use crate::record::flow_key::FiveTuple;
use crate::record::{Column, DictBuilder, RowCap, Table};
use crate::time::Time;

/// Column builders of the `int` table and the per-port state that feeds them.
#[derive(Default)]
pub(crate) struct IntRecorder {
    /// Per port: INT enabled.
    enabled: Vec<bool>,
    /// Per port: packets transmitted or dropped so far (for 1-in-N sampling).
    seen: Vec<u64>,
    sample: u64,
    /// Per port: its index among its node's ports.
    local: Vec<u32>,
    /// Per port: the port of the same link in the other direction (the far end's port).
    reverse: Vec<PortId>,
    /// Per port: the node it belongs to (a switch's `switch_id` is its node index).
    owner: Vec<NodeId>,
    /// Per port: codes of its node and of its name in the dictionaries.
    node_code: Vec<u32>,
    name_code: Vec<u32>,
    /// Per node: the next `report_seq`.
    seq: Vec<u64>,
    /// Per TCP flow: the sender host (packets from elsewhere are replies).
    flow_src: Vec<NodeId>,
    /// Per packet slot: the port whose link delivered it last (its sender's egress port).
    came_from: Vec<PortId>,
    t: Vec<f64>,
    switch_id: Vec<u64>,
    switch: DictBuilder,
    in_port: Vec<u64>,
    in_name: DictBuilder,
    out_port: Vec<u64>,
    out_name: DictBuilder,
    queue: Vec<u64>,
    occupancy: Vec<u64>,
    latency_ns: Vec<u64>,
    src_ip: Vec<u64>,
    dst_ip: Vec<u64>,
    src_port: Vec<u64>,
    dst_port: Vec<u64>,
    protocol: Vec<u64>,
    flow: Vec<u64>,
    bytes: Vec<u64>,
    dropped: Vec<bool>,
    report_seq: Vec<u64>,
    pub(crate) cap: RowCap,
}

/// What happened to a sampled packet at an INT port.
pub(crate) struct Hop {
    pub now: Time,
    pub port: PortId,
    pub queue: usize,
    pub occupancy_bytes: u64,
    /// When the packet arrived at the switch; `None` for a drop (no egress, no latency).
    pub arrived: Option<Time>,
}

impl IntRecorder {
    /// A recorder for the ports `spec` names, resolved against `net`; `None` when INT is off.
    /// Names were checked when the scenario was parsed.
    pub(crate) fn new(net: &Network, spec: &Telemetry, cap: RowCap) -> Option<IntRecorder> {
        if spec.int_ports.is_empty() {
            return None;
        }
        let n = net.ports.len();
        let mut enabled = vec![false; n];
        for want in &spec.int_ports {
            let pid = net
                .ports
                .iter()
                .position(|p| p.name == want.port && net.nodes[p.node as usize].name == want.node)
                .unwrap_or_else(|| {
                    panic!("INT port {want:?} not in the topology (the parser checks names)")
                });
            enabled[pid] = true;
        }
        let mut per_node = vec![0u32; net.nodes.len()];
        let local = net
            .ports
            .iter()
            .map(|p| {
                let i = per_node[p.node as usize];
                per_node[p.node as usize] += 1;
                i
            })
            .collect();
        // Topology builds each link as two adjacent ports, a→b then b→a.
        let reverse: Vec<PortId> = (0..n as PortId).map(|p| p ^ 1).collect();
        for (p, &r) in reverse.iter().enumerate() {
            let (a, b) = (&net.ports[p], &net.ports[r as usize]);
            assert!(a.node == b.peer && a.peer == b.node, "ports {p} and {r} are not one link");
        }
        let mut switch = DictBuilder::default();
        let mut names = DictBuilder::default();
        let node_code =
            net.ports.iter().map(|p| switch.intern(&net.nodes[p.node as usize].name)).collect();
        let name_code = net.ports.iter().map(|p| names.intern(&p.name)).collect();
        Some(IntRecorder {
            enabled,
            seen: vec![0; n],
            sample: u64::from(spec.int_sample),
            local,
            reverse,
            owner: net.ports.iter().map(|p| p.node).collect(),
            node_code,
            name_code,
            seq: vec![0; net.nodes.len()],
            flow_src: net.flow_hosts.iter().map(|&(s, _)| s).collect(),
            came_from: Vec::new(),
            t: Vec::new(),
            switch_id: Vec::new(),
            switch,
            in_port: Vec::new(),
            in_name: names.clone(),
            out_port: Vec::new(),
            out_name: names,
            queue: Vec::new(),
            occupancy: Vec::new(),
            latency_ns: Vec::new(),
            src_ip: Vec::new(),
            dst_ip: Vec::new(),
            src_port: Vec::new(),
            dst_port: Vec::new(),
            protocol: Vec::new(),
            flow: Vec::new(),
            bytes: Vec::new(),
            dropped: Vec::new(),
            report_seq: Vec::new(),
            cap,
        })
    }

    /// Packet `id` came off the link driven by port `link`.
    #[inline]
    pub(crate) fn arrived(&mut self, id: PacketId, link: PortId) {
        let slot = id.0 as usize;
        if slot >= self.came_from.len() {
            self.came_from.resize(slot + 1, PortId::MAX);
        }
        self.came_from[slot] = link;
    }

    #[inline]
    pub(crate) fn enabled(&self, port: PortId) -> bool {
        self.enabled[port as usize]
    }

    /// Port `pid` (INT-enabled or not) just started serializing its packet at `now`.
    pub(crate) fn egress(&mut self, now: Time, pid: PortId, port: &Port, pool: &PacketPool) {
        if !self.enabled(pid) {
            return;
        }
        let id = port.in_tx.expect("egress without a packet in transmission");
        let p = pool.get(id);
        let queue = port.queues.classify(p);
        // The depth the packet saw as it left: what is still queued plus itself, so the
        // largest INT occupancy equals the queue's peak rather than one packet under it.
        let occupancy_bytes = port.queues.queue_bytes(queue) + u64::from(p.ip_bytes);
        let hop = Hop { now, port: pid, queue, occupancy_bytes, arrived: Some(p.enqueued_at) };
        self.record(id, p, hop);
    }

    /// A sampled packet's row (the caller checked the port is INT-enabled).
    pub(crate) fn record(&mut self, id: PacketId, p: &Packet, hop: Hop) {
        let pid = hop.port as usize;
        let k = self.seen[pid];
        self.seen[pid] += 1;
        // A row past the cap is not exported either: `report_seq` stays gapless.
        if !k.is_multiple_of(self.sample) || !self.cap.admit(self.t.len()) {
            return;
        }
        let link = self.came_from.get(id.0 as usize).copied().unwrap_or(PortId::MAX);
        debug_assert!(link != PortId::MAX, "a packet at a switch port came off no link");
        let ingress = self.reverse[link as usize] as usize;
        let node = self.node_code[pid];
        let switch_id = self.owner[pid];
        let seq = &mut self.seq[switch_id as usize];
        self.report_seq.push(*seq);
        *seq += 1;
        self.t.push(hop.now.as_secs_f64());
        self.switch_id.push(u64::from(switch_id));
        self.switch.push_code(node);
        self.in_port.push(u64::from(self.local[ingress]));
        self.in_name.push_code(self.name_code[ingress]);
        self.out_port.push(u64::from(self.local[pid]));
        self.out_name.push_code(self.name_code[pid]);
        self.queue.push(hop.queue as u64);
        self.occupancy.push(hop.occupancy_bytes);
        self.latency_ns.push(hop.arrived.map_or(0, |at| (hop.now - at).ps() / 1000));
        self.dropped.push(hop.arrived.is_none());
        let fi = p.flow as usize;
        let reply = fi < self.flow_src.len() && p.src != self.flow_src[fi];
        let key = FiveTuple::of(p.flow, fi >= self.flow_src.len(), p.src, p.dst, reply);
        self.src_ip.push(u64::from(key.src_ip));
        self.dst_ip.push(u64::from(key.dst_ip));
        self.src_port.push(u64::from(key.src_port));
        self.dst_port.push(u64::from(key.dst_port));
        self.protocol.push(u64::from(key.protocol));
        self.flow.push(u64::from(p.flow));
        self.bytes.push(u64::from(p.ip_bytes));
    }

    /// The `int` table; empty (with its columns) when INT is off.
    pub(crate) fn finish(rec: Option<IntRecorder>) -> Table {
        let r = rec.unwrap_or_default();
        Table {
            name: "int",
            columns: vec![
                ("t_s", Column::F64(r.t)),
                ("switch_id", Column::U64(r.switch_id)),
                ("switch", r.switch.finish()),
                ("ingress_port", Column::U64(r.in_port)),
                ("ingress_port_name", r.in_name.finish()),
                ("egress_port", Column::U64(r.out_port)),
                ("egress_port_name", r.out_name.finish()),
                ("queue_id", Column::U64(r.queue)),
                ("queue_occupancy_bytes", Column::U64(r.occupancy)),
                ("hop_latency_ns", Column::U64(r.latency_ns)),
                ("src_ip", Column::U64(r.src_ip)),
                ("dst_ip", Column::U64(r.dst_ip)),
                ("src_port", Column::U64(r.src_port)),
                ("dst_port", Column::U64(r.dst_port)),
                ("protocol", Column::U64(r.protocol)),
                ("flow_id", Column::U64(r.flow)),
                ("packet_bytes", Column::U64(r.bytes)),
                ("dropped", Column::Bool(r.dropped)),
                ("report_seq", Column::U64(r.report_seq)),
            ],
        }
    }
}

/// The `[telemetry]` section: INT at chosen switch ports (off by default).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Telemetry {
    /// Switch egress ports that record INT metadata, by the `queue` table's node and port names.
    pub int_ports: Vec<IntPort>,
    /// Record 1 in `int_sample` packets per port (the 1st, the (N+1)th, …); 1 = every packet.
    pub int_sample: u32,
}

impl Default for Telemetry {
    fn default() -> Telemetry {
        Telemetry { int_ports: Vec::new(), int_sample: 1 }
    }
}

/// A switch egress port, named as in the `queue` table (`node = "swA"`, `port = "swA->swB"`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IntPort {
    pub node: String,
    pub port: String,
}
