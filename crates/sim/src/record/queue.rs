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
    ports: PortColumns,
    queue: Vec<u64>,
    bytes: Vec<u64>,
    /// Per port: its index among the recorded ports, or [`NOT_RECORDED`]. Only recorded ports
    /// write rows and have a mean, and a run of many flows records few of its ports.
    slot: Vec<u32>,
    /// Per recorded port, what a packet's pass updates, in one place: its occupancy over time
    /// and its first queue's last row (on the leaf-spine benchmark, separate vectors were a
    /// cache miss each per packet and port).
    recs: Vec<PortRecord>,
    /// The occupancy last written of each recorded port's queues after its first,
    /// `PortRecord::more` on.
    more_last: Vec<u64>,
    step: u64,
    pub cap: RowCap,
}

/// [`QueueRecorder::slot`] of a port that is not recorded.
const NOT_RECORDED: u32 = u32::MAX;

impl QueueRecorder {
    /// `deepest_buffer`: the deepest queue among the recorded ports, bytes.
    pub fn new(net: &Network, mtu: u32, deepest_buffer: u64, cap: RowCap) -> QueueRecorder {
        // Two MTUs, or 1/1024 of the bottleneck buffer if larger: ≤ ~2k rows per fill and
        // drain of a deep (64 MiB) buffer. Moves of one or two packets — each packet through
        // an idle port, a full drop-tail queue refilled after every departure — add no rows:
        // a 13 GiB transfer hit by a 2 s burst at a 1 MiB buffer wrote 1.7 million of them.
        let step = (2 * mtu as u64).max(deepest_buffer / QUEUE_RECORD_LEVELS);
        let (mut recs, mut more) = (Vec::new(), 0);
        let slot = (net.ports.iter())
            .map(|p| {
                if !p.recorded {
                    return NOT_RECORDED;
                }
                recs.push(PortRecord { mean: TimeWeighted::default(), last: 0, more: more as u32 });
                more += p.queues.num_queues() - 1;
                (recs.len() - 1) as u32
            })
            .collect();
        QueueRecorder {
            t: Vec::new(),
            ports: PortColumns::default(),
            queue: Vec::new(),
            bytes: Vec::new(),
            slot,
            recs,
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
        let slot = self.slot[pid as usize] as usize;
        debug_assert!(port.recorded, "port {pid} is not recorded");
        let rec = &mut self.recs[slot];
        rec.mean.set(now, occupancy(port, fq));
        let more = rec.more as usize;
        for q in 0..port.queues.num_queues() {
            let bytes = port.queues.queue_bytes(q);
            let last = match q {
                0 => &mut self.recs[slot].last,
                _ => &mut self.more_last[more + q - 1],
            };
            if bytes.abs_diff(*last) > self.step || (bytes == 0 && *last != 0) {
                *last = bytes;
                if !self.cap.admit(self.t.len()) {
                    continue;
                }
                self.t.push(now.as_secs_f64());
                self.ports.push(pid);
                self.queue.push(q as u64);
                self.bytes.push(bytes);
            }
        }
    }

    /// Port `pid`'s mean occupancy over `[0, end]` (0 for a port that is not recorded).
    pub fn mean(&self, pid: usize, end: Time) -> f64 {
        match self.slot[pid] {
            NOT_RECORDED => 0.0,
            slot => self.recs[slot as usize].mean.mean(end),
        }
    }

    /// The table; `net` names the ports in its rows.
    pub fn finish(self, net: &Network) -> Table {
        let (node, port) = self.ports.finish(net);
        Table {
            name: "queue",
            columns: vec![
                ("t_s", Column::F64(self.t)),
                ("node", node),
                ("port", port),
                ("queue", Column::U64(self.queue)),
                ("occupancy_bytes", Column::U64(self.bytes)),
            ],
        }
    }
}

/// One recorded port's occupancy over time and the occupancy of its first queue last written;
/// its other queues' are at `more` on in `QueueRecorder::more_last`.
struct PortRecord {
    mean: TimeWeighted,
    last: u64,
    more: u32,
}

/// The `node` and `port` columns of a table with a row per port event (`queue`, `drops`):
/// each row's port id while the run goes on, named at the end, so that only the ports that
/// appear have their names interned (a run of 100,000 flows has 400,002 ports; their names
/// in two tables' dictionaries held about 1 KB a flow through the run).
#[derive(Default)]
pub(crate) struct PortColumns {
    ports: Vec<PortId>,
}

impl PortColumns {
    #[inline]
    pub(crate) fn push(&mut self, pid: PortId) {
        self.ports.push(pid);
    }

    /// Dictionary columns of the rows' node names and port names, in each a code per name in
    /// the order of the ports that appear.
    pub(crate) fn finish(self, net: &Network) -> (Column, Column) {
        const UNSEEN: (u32, u32) = (u32::MAX, u32::MAX);
        let mut codes = vec![UNSEEN; net.ports.len()];
        for &pid in &self.ports {
            codes[pid as usize] = (0, 0);
        }
        let (mut node, mut port) = (DictBuilder::default(), DictBuilder::default());
        for (c, p) in codes.iter_mut().zip(&net.ports).filter(|(c, _)| **c != UNSEEN) {
            *c = (node.intern(&net.nodes[p.node as usize].name), port.intern(&p.name));
        }
        for &pid in &self.ports {
            let (n, p) = codes[pid as usize];
            node.push_code(n);
            port.push_code(p);
        }
        (node.finish(), port.finish())
    }
}

/// Bytes waiting in a port's qdisc (its host's `fq`, or its queues), the packet on the wire
/// aside.
#[inline]
fn occupancy(port: &Port, fq: Option<&Fq>) -> u64 {
    fq.map_or_else(|| port.queues.bytes(), |fq| fq.bytes())
}
