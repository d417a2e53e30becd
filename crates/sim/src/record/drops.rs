//! The `drops` table: one row per dropped packet, naming its node, port and queue.

use crate::net::port::PortId;
use crate::net::topology::Network;
use crate::packet::Packet;
use crate::record::queue::PortColumns;
use crate::record::{Column, DictBuilder, DropReason, RowCap, Table};
use crate::time::Time;

/// Column builders of the `drops` table.
pub struct Drops {
    t: Vec<f64>,
    ports: PortColumns,
    queue: Vec<u64>,
    flow: Vec<u64>,
    bytes: Vec<u64>,
    reason: DictBuilder,
    pub cap: RowCap,
}

impl Drops {
    pub fn new(cap: RowCap) -> Drops {
        let mut reason = DictBuilder::default();
        for r in [
            DropReason::QueueFull,
            DropReason::FqFlowLimit,
            DropReason::FqLimit,
            DropReason::FqHorizon,
        ] {
            reason.intern(r.as_str());
        }
        Drops {
            t: Vec::new(),
            ports: PortColumns::default(),
            queue: Vec::new(),
            flow: Vec::new(),
            bytes: Vec::new(),
            reason,
            cap,
        }
    }

    /// Port `pid`'s queue `queue` dropped `p` at `now`.
    pub fn push(&mut self, now: Time, pid: PortId, queue: usize, p: &Packet, why: DropReason) {
        if !self.cap.admit(self.t.len()) {
            return;
        }
        self.t.push(now.as_secs_f64());
        self.ports.push(pid);
        self.queue.push(queue as u64);
        self.flow.push(p.flow as u64);
        self.bytes.push(p.ip_bytes as u64);
        let code = self.reason.intern(why.as_str());
        self.reason.push_code(code);
    }

    /// The table; `net` names the ports in its rows.
    pub fn finish(self, net: &Network) -> Table {
        let (node, port) = self.ports.finish(net);
        Table {
            name: "drops",
            columns: vec![
                ("t_s", Column::F64(self.t)),
                ("node", node),
                ("port", port),
                ("queue", Column::U64(self.queue)),
                ("flow_id", Column::U64(self.flow)),
                ("bytes", Column::U64(self.bytes)),
                ("reason", self.reason.finish()),
            ],
        }
    }
}
