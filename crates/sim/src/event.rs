//! The pending-event set: a binary heap ordered by (time, insertion sequence), so events at
//! the same picosecond pop in the order they were scheduled and a run is deterministic.
//!
//! Events are small `Copy` values; handlers never cancel events — a timer whose deadline moved
//! is recognised as stale when it pops (lazy cancellation, see `sim.rs`), or swept out in bulk
//! when many have piled up (`retain`).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::time::Time;

/// Everything that can happen. Indices refer to the world's ports, flows and burst sources.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A port finished serializing its current packet.
    TxDone { port: u32 },
    /// The head packet of a port's link reached the far end.
    Arrival { port: u32 },
    /// A port's shaper may now release its head packet.
    PortWake { port: u32 },
    /// A TCP flow opens its connection (sends the SYN).
    FlowStart { flow: u32 },
    /// A flow's sender timer (RTO, TLP or RACK reorder) may be due.
    SenderTimer { flow: u32 },
    /// A flow's pacing timer may let its next train leave.
    PaceTimer { flow: u32 },
    /// A flow's segment left its host without a transmission (a qdisc drop): TSQ may resume.
    TsqResume { flow: u32 },
    /// A flow's receiver delayed-ACK timer may be due.
    DelAckTimer { flow: u32 },
    /// A flow's receiving application wakes and reads what is queued.
    AppRead { flow: u32 },
    /// A flow's receiving host answers the SYN it held (`handshake_latency`).
    HandshakeAnswer { flow: u32 },
    /// A flow's receiving host hands the data segments it batched to TCP (`rx_coalesce`).
    RxBatch { flow: u32 },
    /// A flow's iperf3-style reporting interval ends.
    Interval { flow: u32 },
    /// A burst source emits its next datagram.
    BurstEmit { source: u32 },
    /// An incast receiver sends its next request.
    IncastRequest { app: u32 },
    /// An incast's request reaches its senders, which write their responses.
    IncastWrite { app: u32 },
    /// One sender of an incast writes its response (one `serve_time` after the previous one).
    IncastServe { app: u32, sender: u32 },
}

/// `key` is `time << 64 | seq`, so one u128 compare orders by (time, seq): a heap sift compares
/// on every level, and the pairwise compare cost 7 % of the leaf-spine benchmark's instructions.
#[derive(Clone, Copy, Debug)]
struct Entry {
    key: u128,
    event: Event,
}

impl Entry {
    #[inline]
    fn time(&self) -> Time {
        Time((self.key >> 64) as u64)
    }
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    /// Reversed, so the max-heap pops the earliest (time, seq).
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.cmp(&self.key)
    }
}

#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    seq: u64,
    popped: u64,
}

impl EventQueue {
    #[inline]
    pub fn push(&mut self, time: Time, event: Event) {
        self.heap.push(Entry { key: ((time.0 as u128) << 64) | self.seq as u128, event });
        self.seq += 1;
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        let e = self.heap.pop()?;
        self.popped += 1;
        Some((e.time(), e.event))
    }

    /// Drop the pending events `keep` rejects. The rest pop in the same order as before: the
    /// order is the total one of (time, seq), whatever the heap's layout.
    pub fn retain(&mut self, mut keep: impl FnMut(Time, Event) -> bool) {
        self.heap.retain(|e| keep(e.time(), e.event));
    }

    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|e| e.time())
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Events popped so far.
    pub fn popped(&self) -> u64 {
        self.popped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_order() {
        let mut q = EventQueue::default();
        q.push(Time(30), Event::TxDone { port: 3 });
        q.push(Time(10), Event::TxDone { port: 1 });
        q.push(Time(20), Event::TxDone { port: 2 });
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(t, _)| t.0).collect();
        assert_eq!(order, vec![10, 20, 30]);
    }

    #[test]
    fn equal_times_pop_in_insertion_order() {
        let mut q = EventQueue::default();
        for port in 0..100 {
            q.push(Time(5), Event::TxDone { port });
        }
        for port in 0..100 {
            assert_eq!(q.pop().unwrap().1, Event::TxDone { port });
        }
        assert_eq!(q.popped(), 100);
    }

    #[test]
    fn retain_drops_the_rejected_and_keeps_the_order_of_the_rest() {
        let mut q = EventQueue::default();
        for i in 0..60u32 {
            // Times repeat, so insertion order decides among equals.
            q.push(Time(u64::from(i % 7)), Event::SenderTimer { flow: i });
        }
        let mut kept: Vec<(u64, u32)> =
            (0..60u32).filter(|i| i % 3 != 0).map(|i| (u64::from(i % 7), i)).collect();
        kept.sort();
        q.retain(|_, e| !matches!(e, Event::SenderTimer { flow } if flow % 3 == 0));
        assert_eq!(q.len(), kept.len());
        let popped: Vec<(u64, u32)> = std::iter::from_fn(|| q.pop())
            .map(|(t, e)| match e {
                Event::SenderTimer { flow } => (t.0, flow),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(popped, kept);
    }
}
