//! The `queue` table: each recorded port's queues over time, and every port's time-weighted
//! mean occupancy for the summary.

use crate::host::fq::Fq;
use crate::net::port::{Port, PortId};
use crate::net::topology::Network;
use crate::record::time_weighted::TimeWeighted;
use crate::record::{Column, DictBuilder, RowCap, Table};
use crate::time::Time;

/// The `queue` table resolves a deep buffer into this many levels.
const QUEUE_RECORD_LEVELS: u64 = 1024;

/// Column builders of the `queue` table and the per-port state that feeds them.
pub struct QueueRecorder {
    t: Vec<f64>,
    node: DictBuilder,
    port: DictBuilder,
    queue: Vec<u64>,
    bytes: Vec<u64>,
    /// Per port: codes of its node's name and of its own.
    codes: Vec<(u32, u32)>,
    /// Per port, what a packet's pass updates, in one place: a port's occupancy over time and
    /// its first queue's last row (on the leaf-spine benchmark, separate vectors were a cache
    /// miss each per packet and port).
    ports: Vec<PortRecord>,
    /// The occupancy last written of each port's queues after its first, `PortRecord::more`
    /// on.
    more_last: Vec<u64>,
    step: u64,
    pub cap: RowCap,
}

impl QueueRecorder {
    /// `deepest_buffer`: the deepest queue among the recorded ports, bytes.
    pub fn new(net: &Network, mtu: u32, deepest_buffer: u64, cap: RowCap) -> QueueRecorder {
        let (node, port, codes) = port_names(net);
        let mut more = 0;
        let ports = (net.ports.iter())
            .map(|p| {
                let r = PortRecord { mean: TimeWeighted::default(), last: 0, more: more as u32 };
                more += p.queues.num_queues() - 1;
                r
            })
            .collect();
        // Two MTUs, or 1/1024 of the bottleneck buffer if larger: ≤ ~2k rows per fill and
        // drain of a deep (64 MiB) buffer. Moves of one or two packets — each packet through
        // an idle port, a full drop-tail queue refilled after every departure — add no rows:
        // a 13 GiB transfer hit by a 2 s burst at a 1 MiB buffer wrote 1.7 million of them.
        let step = (2 * mtu as u64).max(deepest_buffer / QUEUE_RECORD_LEVELS);
        QueueRecorder {
            t: Vec::new(),
            node,
            port,
            queue: Vec::new(),
            bytes: Vec::new(),
            codes,
            ports,
            more_last: vec![0; more],
            step,
            cap,
        }
    }

    /// Write a row when a queue of port `pid` moved by more than one step (two MTUs, or
    /// 1/1024 of the buffer) since its last row, or emptied: bounded output that still shows
    /// every burst's shape, and its peak to within a step.
    #[inline]
    pub fn record(&mut self, now: Time, pid: PortId, port: &Port, fq: Option<&Fq>) {
        let rec = &mut self.ports[pid as usize];
        rec.mean.set(now, occupancy(port, fq));
        let more = rec.more as usize;
        for q in 0..port.queues.num_queues() {
            let bytes = port.queues.queue_bytes(q);
            let last = match q {
                0 => &mut self.ports[pid as usize].last,
                _ => &mut self.more_last[more + q - 1],
            };
            if bytes.abs_diff(*last) > self.step || (bytes == 0 && *last != 0) {
                *last = bytes;
                if !self.cap.admit(self.t.len()) {
                    continue;
                }
                let (n, p) = self.codes[pid as usize];
                self.t.push(now.as_secs_f64());
                self.node.push_code(n);
                self.port.push_code(p);
                self.queue.push(q as u64);
                self.bytes.push(bytes);
            }
        }
    }

    /// Port `pid`'s mean occupancy over `[0, end]`.
    pub fn mean(&self, pid: usize, end: Time) -> f64 {
        self.ports[pid].mean.mean(end)
    }

    pub fn finish(self) -> Table {
        Table {
            name: "queue",
            columns: vec![
                ("t_s", Column::F64(self.t)),
                ("node", self.node.finish()),
                ("port", self.port.finish()),
                ("queue", Column::U64(self.queue)),
                ("occupancy_bytes", Column::U64(self.bytes)),
            ],
        }
    }
}

/// One port's occupancy over time (recorded ports only: it is updated where their rows are, at
/// no cost to the others) and the occupancy of its first queue last written; its other
/// queues' are at `more` on in `QueueRecorder::more_last`.
struct PortRecord {
    mean: TimeWeighted,
    last: u64,
    more: u32,
}

/// Dictionaries of every port's node name and own name, and each port's codes in them
/// (`queue` and `drops` name ports alike).
pub(crate) fn port_names(net: &Network) -> (DictBuilder, DictBuilder, Vec<(u32, u32)>) {
    let (mut node, mut port) = (DictBuilder::default(), DictBuilder::default());
    let codes = (net.ports.iter())
        .map(|p| (node.intern(&net.nodes[p.node as usize].name), port.intern(&p.name)))
        .collect();
    (node, port, codes)
}

/// Bytes waiting in a port's qdisc (its host's `fq`, or its queues), the packet on the wire
/// aside.
#[inline]
fn occupancy(port: &Port, fq: Option<&Fq>) -> u64 {
    fq.map_or_else(|| port.queues.bytes(), |fq| fq.bytes())
}
