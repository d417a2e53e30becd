//! Egress-port queueing discipline: several byte-limited FIFO queues, a classifier, strict
//! priority or DRR scheduling, tail drop and ECN threshold marking. (Being written.)

use crate::packet::{PacketId, PacketPool};
use crate::record::DropReason;
use crate::scenario::PortSpec;

/// What happened to a packet offered to the port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Enqueued { queue: usize, ce_marked: bool },
    Dropped { queue: usize, reason: DropReason },
}

/// A packet taken out for transmission.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dequeued {
    pub id: PacketId,
    pub queue: usize,
    pub ce_marked: bool,
}

pub struct PortQueues {}

impl PortQueues {
    pub fn new(_spec: &PortSpec) -> PortQueues {
        todo!()
    }
    pub fn fifo(_buffer_bytes: u64) -> PortQueues {
        todo!()
    }
    pub fn enqueue(&mut self, _pool: &mut PacketPool, _id: PacketId) -> Verdict {
        todo!()
    }
    pub fn dequeue(&mut self, _pool: &mut PacketPool) -> Option<Dequeued> {
        todo!()
    }
    pub fn bytes(&self) -> u64 {
        todo!()
    }
    pub fn queue_bytes(&self, _queue: usize) -> u64 {
        todo!()
    }
    pub fn num_queues(&self) -> usize {
        todo!()
    }
    pub fn is_empty(&self) -> bool {
        todo!()
    }
}
