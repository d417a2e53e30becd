//! The pending-event set, ordered by (time, insertion sequence), so events at the same
//! picosecond pop in the order they were scheduled and a run is deterministic.
//!
//! Events are small `Copy` values; handlers never cancel events — a timer whose deadline moved
//! is recognised as stale when it pops (lazy cancellation, see `sim.rs`), or swept out in bulk
//! when many have piled up (`retain`).
//!
//! The set is a radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, "Faster algorithms for the
//! shortest path problem", J. ACM 37(2), 1990) on the time, with 4-bit digits: a simulation
//! never schedules before the event it is handling, so every pushed time is at least the last
//! popped one (`last`), and an entry waits in the bucket named by the highest digit in which
//! its time differs from `last` and by its value there. A push appends to a bucket; a pop takes
//! the next entry at `last` or, when there is none, makes the earliest pending time the new
//! `last` and moves the lowest non-empty bucket's entries into lower buckets (each entry moves
//! at most once per digit; one alone in its bucket pops without moving). Neither grows
//! with the number of pending events, where a binary heap's pop sifts through log2(n) levels
//! (12 on the 128-host leaf-spine benchmark, a quarter of its instructions; docs/performance.md).
//!
//! Ties keep insertion order without a sequence number: equal times always share a bucket,
//! and each bucket holds its entries in push order, because pushes append and a move carries
//! a bucket's entries, in order, into buckets that are empty (all below the lowest non-empty
//! one).

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
    /// A host's core ends its current work (a NAPI poll, an skb sent; `host::cpu`).
    HostCpu { host: u32, core: u32 },
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
    /// A web-search workload's next arrival or planned write is due.
    WebSearchWake { app: u32 },
}

/// A time that differs from `last` first in digit `l` (bits `l * DIGIT_BITS` up) sits in bucket
/// `l * RADIX + d`, `d` being its digit there. Wider digits mean fewer moves per entry (one per
/// level at most) but more buckets in the cache: on the leaf-spine benchmark 6 and 8 bits ran
/// 2 % fewer instructions than 4 but missed the cache more and took no less CPU time.
const DIGIT_BITS: u32 = 4;
const RADIX: usize = 1 << DIGIT_BITS;
const LEVELS: usize = u64::BITS.div_ceil(DIGIT_BITS) as usize;
const BUCKETS: usize = LEVELS * RADIX;
const WORDS: usize = BUCKETS.div_ceil(64);

/// No sequence number: ties pop in push order because equal times share a bucket and every
/// bucket keeps push order (see the module doc), so an entry is 24 bytes instead of 32.
#[derive(Clone, Copy, Debug)]
struct Entry {
    time: u64,
    event: Event,
}

/// The bucket of `time` (≠ `last`) seen from `last`. Buckets in index order hold ever later
/// times: a lower level agrees with `last` on more digits, and within a level the digit orders.
#[inline]
fn bucket(last: u64, time: u64) -> usize {
    // `| 1` keeps the count below 64 at no cost to a nonzero difference, so the compiler sees
    // that the index is in range.
    let level = (u64::BITS - 1 - ((time ^ last) | 1).leading_zeros()) / DIGIT_BITS;
    let digit = (time >> (level * DIGIT_BITS)) as usize & (RADIX - 1);
    level as usize * RADIX + digit
}

/// File `e`, later than `last`, in its bucket among `buckets` (a prefix of the queue's).
#[inline]
fn put(buckets: &mut [Vec<Entry>], occupied: &mut [u64; WORDS], last: u64, e: Entry) {
    let b = bucket(last, e.time);
    buckets[b].push(e);
    occupied[b / 64] |= 1 << (b % 64);
}

pub struct EventQueue {
    /// The time entries are bucketed against: the last one popped (or a pushed earlier one).
    last: u64,
    /// The entries at `last`, in push order; those before `head` have been popped.
    now: Vec<Entry>,
    head: usize,
    /// The entries after `last`.
    buckets: Box<[Vec<Entry>; BUCKETS]>,
    /// Bit `b` is set iff bucket `b` holds an entry.
    occupied: [u64; WORDS],
    len: usize,
    popped: u64,
}

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue {
            last: 0,
            now: Vec::new(),
            head: 0,
            buckets: Box::new(std::array::from_fn(|_| Vec::new())),
            occupied: [0; WORDS],
            len: 0,
            popped: 0,
        }
    }
}

impl EventQueue {
    #[inline]
    pub fn push(&mut self, time: Time, event: Event) {
        let t = time.0;
        self.len += 1;
        if t < self.last {
            self.rebase(t);
        }
        if t == self.last {
            self.now.push(Entry { time: t, event });
        } else {
            self.put(Entry { time: t, event });
        }
    }

    /// File an entry later than `last` in its bucket.
    #[inline]
    fn put(&mut self, e: Entry) {
        put(&mut self.buckets[..], &mut self.occupied, self.last, e);
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        let e = match self.now.get(self.head) {
            Some(&e) => {
                self.head += 1;
                e
            }
            None => self.refill()?,
        };
        self.len -= 1;
        self.popped += 1;
        Some((Time(e.time), e.event))
    }

    /// The lowest occupied bucket: the one holding the earliest pending time.
    #[inline]
    fn lowest(&self) -> Option<usize> {
        let w = self.occupied.iter().position(|&w| w != 0)?;
        Some(w * 64 + self.occupied[w].trailing_zeros() as usize)
    }

    /// `now` is used up: make the earliest pending time the new `last` and return its first
    /// entry, moving the others at that time into `now` and the rest of its bucket into lower
    /// buckets. `None` when nothing is pending. Inlined into `pop` for the common case, an
    /// entry alone in its bucket (68 % of the leaf-spine benchmark's pops): as one function,
    /// its prologue and epilogue were 2 % of that benchmark's instructions.
    #[inline]
    fn refill(&mut self) -> Option<Entry> {
        self.now.clear();
        self.head = 0;
        let b = self.lowest()?;
        self.occupied[b / 64] &= !(1 << (b % 64));
        if b >= RADIX
            && let [e] = self.buckets[b][..]
        {
            // Alone in its bucket: nothing to move.
            self.last = e.time;
            self.buckets[b].clear();
            return Some(e);
        }
        Some(self.spill(b))
    }

    /// `refill` from bucket `b`, just taken out of `occupied`, when it is a level-0 bucket or
    /// holds more than one entry.
    #[inline(never)]
    fn spill(&mut self, b: usize) -> Entry {
        if b < RADIX {
            // Level 0 fixes every bit of the time: the bucket is one time, in push order.
            std::mem::swap(&mut self.now, &mut self.buckets[b]);
            self.last = (self.last & !(RADIX as u64 - 1)) | b as u64;
            self.head = 1;
            return self.now[0];
        }
        let (lower, from) = self.buckets.split_at_mut(b);
        let src = &mut from[0];
        // The bucket's entries agree with `min` down to its level, so each moves lower; every
        // lower bucket is empty, so each receives its entries in push order.
        let min = src.iter().map(|e| e.time).min().expect("an occupied bucket has an entry");
        self.last = min;
        for &e in src.iter() {
            if e.time == min {
                self.now.push(e);
            } else {
                put(lower, &mut self.occupied, min, e);
            }
        }
        src.clear();
        self.head = 1;
        self.now[0]
    }

    /// A push before `last`, which a simulation never makes (its handlers schedule at or after
    /// the event they handle): file everything again against the new, earlier time. Equal
    /// times come from one old bucket, in order, so they keep their push order.
    #[cold]
    fn rebase(&mut self, t: u64) {
        let mut old = std::mem::take(&mut self.now);
        old.drain(..self.head);
        self.head = 0;
        for v in self.buckets.iter_mut() {
            old.append(v);
        }
        self.occupied = [0; WORDS];
        self.last = t;
        for e in old {
            self.put(e);
        }
    }

    /// Drop the pending events `keep` rejects. The rest keep their buckets and their order, so
    /// they pop in the same order as before.
    pub fn retain(&mut self, mut keep: impl FnMut(Time, Event) -> bool) {
        self.now.drain(..self.head);
        self.head = 0;
        self.now.retain(|e| keep(Time(e.time), e.event));
        self.len = self.now.len();
        for (b, v) in self.buckets.iter_mut().enumerate() {
            v.retain(|e| keep(Time(e.time), e.event));
            self.len += v.len();
            if v.is_empty() {
                self.occupied[b / 64] &= !(1 << (b % 64));
            }
        }
    }

    pub fn peek_time(&self) -> Option<Time> {
        if self.head < self.now.len() {
            return Some(Time(self.last));
        }
        let b = self.lowest()?;
        if b < RADIX {
            return Some(Time((self.last & !(RADIX as u64 - 1)) | b as u64));
        }
        self.buckets[b].iter().map(|e| Time(e.time)).min()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Events popped so far.
    pub fn popped(&self) -> u64 {
        self.popped
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

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
    fn equal_times_pushed_while_their_time_pops_come_after_the_earlier_ones() {
        let mut q = EventQueue::default();
        q.push(Time(7), Event::TxDone { port: 0 });
        q.push(Time(7), Event::TxDone { port: 1 });
        q.push(Time(9), Event::TxDone { port: 9 });
        assert_eq!(q.pop(), Some((Time(7), Event::TxDone { port: 0 })));
        // Scheduled for "now", as a handler does: after the pending event at the same time.
        q.push(Time(7), Event::TxDone { port: 2 });
        let rest: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            rest,
            vec![
                (Time(7), Event::TxDone { port: 1 }),
                (Time(7), Event::TxDone { port: 2 }),
                (Time(9), Event::TxDone { port: 9 }),
            ]
        );
    }

    #[test]
    fn a_push_before_the_last_popped_time_pops_next() {
        let mut q = EventQueue::default();
        for t in [10, 20, 20, 1 << 40] {
            q.push(Time(t), Event::PortWake { port: t as u32 });
        }
        assert_eq!(q.pop().map(|(t, _)| t), Some(Time(10)));
        q.push(Time(3), Event::TxDone { port: 3 });
        assert_eq!(q.peek_time(), Some(Time(3)));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(t, _)| t.0).collect();
        assert_eq!(order, vec![3, 20, 20, 1 << 40]);
    }

    #[test]
    fn times_at_the_ends_of_the_range_pop_in_order() {
        let mut q = EventQueue::default();
        for t in [u64::MAX, 0, u64::MAX - 1, 1 << 63, (1 << 63) - 1, 0] {
            q.push(Time(t), Event::PortWake { port: 0 });
        }
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(t, _)| t.0).collect();
        assert_eq!(order, vec![0, 0, (1 << 63) - 1, 1 << 63, u64::MAX - 1, u64::MAX]);
        assert!(q.is_empty() && q.peek_time().is_none());
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

    // ---- Against the binary heap it replaced ----

    /// The order the queue promises, kept the obvious way: a min-heap on (time, push number).
    #[derive(Default)]
    struct Reference {
        heap: BinaryHeap<Reverse<(u64, u64, u32)>>,
        pushed: u64,
    }

    impl Reference {
        fn push(&mut self, t: u64, id: u32) {
            self.heap.push(Reverse((t, self.pushed, id)));
            self.pushed += 1;
        }
        fn pop(&mut self) -> Option<(u64, u32)> {
            self.heap.pop().map(|Reverse((t, _, id))| (t, id))
        }
    }

    #[derive(Clone, Debug)]
    enum Op {
        /// Push at the last popped time plus this (ties when 0, as handlers schedule "now").
        Later(u64),
        /// Push this far before the last popped time (never done by the simulator).
        Earlier(u64),
        Pop,
        /// Keep the events whose id is not a multiple of this.
        Retain(u32),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => prop_oneof![Just(0u64), 0u64..4, 0u64..2_000, 0u64..1 << 40, any::<u64>()]
                .prop_map(Op::Later),
            1 => (1u64..1_000).prop_map(Op::Earlier),
            4 => Just(Op::Pop),
            1 => (2u32..5).prop_map(Op::Retain),
        ]
    }

    fn unpack(e: Event) -> u32 {
        match e {
            Event::SenderTimer { flow } => flow,
            other => panic!("the test pushes only SenderTimer, popped {other:?}"),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        #[test]
        fn pops_what_a_binary_heap_on_time_and_push_order_pops(
            base in prop_oneof![Just(0u64), any::<u64>()],
            ops in prop::collection::vec(op(), 0..400),
        ) {
            let mut q = EventQueue::default();
            let mut r = Reference::default();
            let mut now = base;
            for (id, op) in ops.iter().enumerate() {
                let id = id as u32;
                match *op {
                    Op::Later(dt) => {
                        q.push(Time(now.saturating_add(dt)), Event::SenderTimer { flow: id });
                        r.push(now.saturating_add(dt), id);
                    }
                    Op::Earlier(dt) => {
                        q.push(Time(now.saturating_sub(dt)), Event::SenderTimer { flow: id });
                        r.push(now.saturating_sub(dt), id);
                    }
                    Op::Pop => {
                        let got = q.pop().map(|(t, e)| (t.0, unpack(e)));
                        prop_assert_eq!(got, r.pop());
                        if let Some((t, _)) = got {
                            now = t;
                        }
                    }
                    Op::Retain(m) => {
                        q.retain(|_, e| !unpack(e).is_multiple_of(m));
                        r.heap.retain(|Reverse((_, _, id))| !id.is_multiple_of(m));
                    }
                }
                prop_assert_eq!(q.len(), r.heap.len());
                prop_assert_eq!(q.is_empty(), r.heap.is_empty());
                let next = r.heap.peek().map(|Reverse((t, _, _))| *t);
                prop_assert_eq!(q.peek_time().map(|t| t.0), next);
            }
            let popped_before = q.popped();
            let rest: Vec<_> =
                std::iter::from_fn(|| q.pop()).map(|(t, e)| (t.0, unpack(e))).collect();
            let expected: Vec<_> = std::iter::from_fn(|| r.pop()).collect();
            prop_assert_eq!(q.popped() - popped_before, rest.len() as u64);
            prop_assert_eq!(rest, expected);
        }
    }
}
