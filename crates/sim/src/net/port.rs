//! An egress port and the link it drives (htsim's `Queue` + `Pipe` in one object).
//!
//! The port serializes one packet at a time at the link rate (one `TxDone` event per packet);
//! finished packets enter the link's in-flight ring in departure order, and only the ring's
//! head has an `Arrival` event pending — a FIFO link needs no more. Serialization runs on the
//! port's own clock (`net::clock`): `rate` is the nominal rate, `clock` its offset.
//!
//! A packet that starts alone (nothing queued behind it) on a plain port may go on the wire as
//! it starts ([`Port::cut_through`]): its arrival at the far end is known, and no `TxDone` is
//! needed unless another packet comes before its serialization ends, which then asks for a
//! wake-up at that end ([`Start::Wait`]). A hop through an idle port costs one event, not two,
//! at the same times.

use std::collections::VecDeque;

use crate::net::clock::PortClock;
use crate::net::queue::{Dequeued, PortQueues, Verdict};
use crate::net::tbf::{Admit, Tbf};
use crate::packet::{NodeId, Packet, PacketId, PacketPool};
use crate::record::DropReason;
use crate::time::Time;
use crate::units::{ETHERNET_OVERHEAD_BYTES, Rate};

pub type PortId = u32;

pub struct Port {
    pub name: String,
    pub node: NodeId,
    /// Node at the far end of the link.
    pub peer: NodeId,
    /// Nominal link rate.
    pub rate: Rate,
    /// The port's oscillator: the link serializes at `rate × (1 + offset)`.
    pub clock: PortClock,
    /// One-way propagation delay of the link.
    pub delay: Time,
    pub queues: PortQueues,
    /// A `tbf` qdisc: the head packet leaves only when the bucket has its tokens. Boxed: few
    /// ports have one, and inline it made every port far larger.
    pub shaper: Option<Box<Tbf>>,
    /// A hardware port: its qdisc holds GSO skbs, but they leave as separate frames (TSO), so
    /// the next hop sees lone segments. False on a veth path.
    pub segments: bool,
    /// A host's NIC port: its host wants each packet's GSO position when it starts
    /// (`tx_skb_end`). A switch's port without a shaper starts a queued packet without reading
    /// it ([`Port::start_next`]).
    pub at_host: bool,
    /// Intervals in which the port starts no packet ([`Pause`]), ascending.
    pub pauses: Vec<Pause>,
    /// Pauses before this index have ended.
    next_pause: usize,
    /// A wake-up is scheduled for the shaper (or the end of a pause) at this time.
    pub wake_at: Option<Time>,
    /// Packet being serialized, if any.
    pub in_tx: Option<PacketId>,
    /// Its `ip_bytes`, for the counters when it leaves, without reading the packet again.
    in_tx_bytes: u32,
    /// When the current (or last) serialization ends.
    pub tx_end: Time,
    /// The packet in (or last in) serialization was the last segment of its GSO skb: the host
    /// frees the skb, and TCP Small Queues get its bytes back, only then (`tcp_wfree()`).
    pub tx_skb_end: bool,
    /// Packets on the wire, with their arrival time at `peer`, in departure order.
    pub pipe: VecDeque<(Time, PacketId)>,
    /// Record this port's occupancy in the `queue` table.
    pub recorded: bool,
    pub stats: PortStats,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct PortStats {
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub drops: u64,
    pub dropped_bytes: u64,
    pub ecn_marks: u64,
    pub max_queue_bytes: u64,
}

/// What the world must do after offering a packet to a port.
pub enum Offer {
    /// Queued; `start` says whether the port started serializing (or must wake up later).
    Queued {
        queue: usize,
        start: Start,
    },
    Dropped {
        queue: usize,
        reason: DropReason,
    },
}

/// The outcome of asking an idle port to send its next packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// Serializing; schedule `TxDone` at this time.
    Sending(Time),
    /// The shaper holds the head packet until this time; schedule a wake-up.
    Wait(Time),
    /// Busy already, or nothing to send.
    Nothing,
}

impl Port {
    pub fn new(
        name: String,
        node: NodeId,
        peer: NodeId,
        rate: Rate,
        clock: PortClock,
        delay: Time,
        mut queues: PortQueues,
    ) -> Port {
        // S-ECN's R is the port's nominal rate.
        queues.set_line_rate(rate);
        Port {
            name,
            node,
            peer,
            rate,
            clock,
            delay,
            queues,
            shaper: None,
            pauses: Vec::new(),
            next_pause: 0,
            segments: true,
            at_host: false,
            wake_at: None,
            in_tx: None,
            in_tx_bytes: 0,
            tx_end: Time::ZERO,
            tx_skb_end: true,
            pipe: VecDeque::new(),
            recorded: false,
            stats: PortStats::default(),
        }
    }

    /// Time on the wire for an IP datagram of `ip_bytes`, Ethernet framing included, by this
    /// port's clock.
    #[inline]
    pub fn serialization(&self, ip_bytes: u32) -> Time {
        self.clock.serialization((ip_bytes + ETHERNET_OVERHEAD_BYTES) as u64)
    }

    /// Offer a packet at `now`: enqueue (or drop), and start serializing if idle.
    pub fn offer(&mut self, now: Time, pool: &mut PacketPool, id: PacketId) -> Offer {
        let packet = pool.get_mut(id);
        packet.enqueued_at = now;
        // Idle, nothing queued, no shaper or pause to ask: the packet starts now, as it would
        // after joining the queue and leaving it at once, with the same counters.
        if self.shaper.is_none()
            && self.in_tx.is_none()
            && now >= self.tx_end
            && self.pauses.is_empty()
            && let Some(queue) = self.queues.pass_through(packet)
        {
            self.stats.max_queue_bytes = self.stats.max_queue_bytes.max(packet.ip_bytes as u64);
            return Offer::Queued { queue, start: self.transmit(now, pool, id) };
        }
        let refused = match &mut self.shaper {
            Some(tbf) => tbf.admit(pool.get_mut(id)) == Admit::Drop,
            None => false,
        };
        let verdict =
            if refused { self.queues.refuse(pool, id) } else { self.queues.enqueue(pool, id) };
        match verdict {
            Verdict::Dropped { queue, reason } => {
                self.stats.drops += 1;
                self.stats.dropped_bytes += pool.get(id).ip_bytes as u64;
                Offer::Dropped { queue, reason }
            }
            Verdict::Enqueued { queue, ce_marked } => {
                if self.starts_unread() {
                    // Cut into frames now, while the packet is at hand: it will start unread.
                    self.tso(pool.get_mut(id));
                }
                self.stats.ecn_marks += ce_marked as u64;
                self.stats.max_queue_bytes = self.stats.max_queue_bytes.max(self.queues.bytes());
                Offer::Queued { queue, start: self.start_next(now, pool) }
            }
        }
    }

    /// If idle, take the next packet the shaper allows and start serializing it.
    pub fn start_next(&mut self, now: Time, pool: &mut PacketPool) -> Start {
        if let Err(busy) = self.may_start(now) {
            return busy;
        }
        if let Some(tbf) = &mut self.shaper {
            let Some(head) = self.queues.peek() else { return Start::Nothing };
            let ready = tbf.ready_at(now, pool.get(head));
            if ready > now {
                let runs_at = tbf.watchdog(ready);
                return self.wake(runs_at);
            }
            tbf.release(now, pool.get(head));
        }
        let Some(Dequeued { id, ip_bytes, ce_marked, .. }) = self.queues.dequeue(pool) else {
            return Start::Nothing;
        };
        self.stats.ecn_marks += ce_marked as u64;
        if self.starts_unread() {
            debug_assert!(!self.segments || pool.get(id).gso_segs == 1, "{}: not cut", self.name);
            debug_assert_eq!(pool.get(id).ip_bytes, ip_bytes);
            // Only a host asks whether a packet ends its skb.
            self.tx_skb_end = true;
            return self.start_tx(now, id, ip_bytes);
        }
        self.transmit(now, pool, id)
    }

    /// A switch's port without a shaper: nothing it does after queueing a packet needs the
    /// packet itself, whose size the queue keeps. Its TSO cut is made when it is queued, so a
    /// queued packet starts without a read of the pool (on the 128-host leaf-spine benchmark
    /// that read was 8.9 % of the last-level read misses).
    #[inline]
    fn starts_unread(&self) -> bool {
        !self.at_host && self.shaper.is_none()
    }

    /// Whether the port may start a packet at `now`: not while one is serializing, its wire is
    /// still held by a cut-through packet, or it is paused (`Err` says what to do instead).
    /// A host's qdisc asks this before it dequeues (`host::nic`).
    #[inline]
    pub fn may_start(&mut self, now: Time) -> Result<(), Start> {
        if self.in_tx.is_some() {
            return Err(Start::Nothing);
        }
        if now < self.tx_end {
            // A cut-through packet still holds the wire: start the next one when it is free.
            return Err(self.wake(self.tx_end));
        }
        if let Some(end) = self.paused(now) {
            return Err(self.wake(end));
        }
        Ok(())
    }

    /// The end of the pause `now` falls in, if any. Time only moves forward, so pauses that
    /// ended are passed over for good.
    fn paused(&mut self, now: Time) -> Option<Time> {
        while self.pauses.get(self.next_pause).is_some_and(|p| p.end <= now) {
            self.next_pause += 1;
        }
        self.pauses.get(self.next_pause).filter(|p| p.start <= now).map(|p| p.end)
    }

    /// Ask for a wake-up at `t` unless one is already due by then (the qdisc watchdog).
    pub fn wake(&mut self, t: Time) -> Start {
        match self.wake_at {
            Some(w) if w <= t => Start::Nothing,
            _ => {
                self.wake_at = Some(t);
                Start::Wait(t)
            }
        }
    }

    /// Start serializing packet `id`.
    pub fn transmit(&mut self, now: Time, pool: &mut PacketPool, id: PacketId) -> Start {
        let p = pool.get_mut(id);
        self.tx_skb_end = p.gso_index + 1 >= p.gso_segs;
        self.tso(p);
        self.start_tx(now, id, p.ip_bytes)
    }

    /// TSO on a hardware port: on the wire every segment is a frame of its own.
    #[inline]
    fn tso(&self, p: &mut Packet) {
        if self.segments && p.gso_segs > 1 {
            (p.gso_segs, p.gso_index, p.gso_bytes) = (1, 0, p.ip_bytes);
        }
    }

    /// Start serializing packet `id` of `ip_bytes`.
    #[inline]
    fn start_tx(&mut self, now: Time, id: PacketId, ip_bytes: u32) -> Start {
        // Invariant: a port never starts a packet before the previous one has left.
        debug_assert!(now >= self.tx_end, "{}: overlapping transmissions", self.name);
        let ser = self.serialization(ip_bytes);
        (self.in_tx, self.in_tx_bytes) = (Some(id), ip_bytes);
        self.tx_end = now + ser;
        Start::Sending(self.tx_end)
    }

    /// The packet just started may go on the wire now, its serialization then running without
    /// a `TxDone`: nothing is queued behind it, and no shaper or pause decides when the next
    /// one starts. (A host's own qdisc is the host's to ask about: `host::Host::nic`.)
    #[inline]
    pub fn can_cut_through(&self) -> bool {
        self.queues.packets() == 0 && self.shaper.is_none() && self.pauses.is_empty()
    }

    /// Put the packet that just started on the wire now, arriving one serialization and the
    /// link's delay later; the wire stays busy until `tx_end`. Returns true if the pipe was
    /// empty (the caller schedules the `Arrival` of this new head).
    #[inline]
    pub fn cut_through(&mut self) -> bool {
        let id = self.in_tx.take().expect("cut-through without a packet in transmission");
        self.stats.tx_packets += 1;
        self.stats.tx_bytes += self.in_tx_bytes as u64;
        self.put_on_wire(self.tx_end + self.delay, id)
    }

    /// Serialization of the current packet ended at `now`: put it on the wire. Returns true if
    /// the pipe was empty (the caller schedules the `Arrival` of this new head).
    pub fn finish_tx(&mut self, now: Time) -> bool {
        let id = self.in_tx.take().expect("TxDone without a packet in transmission");
        debug_assert_eq!(
            now, self.tx_end,
            "{}: dequeue spacing must equal serialization time",
            self.name
        );
        self.stats.tx_packets += 1;
        self.stats.tx_bytes += self.in_tx_bytes as u64;
        self.put_on_wire(now + self.delay, id)
    }

    /// Append a packet arriving at `at` to the pipe; true if the pipe was empty. One wire
    /// sends one packet at a time, so none may arrive before the one sent ahead of it.
    #[inline]
    fn put_on_wire(&mut self, at: Time, id: PacketId) -> bool {
        debug_assert!(
            self.pipe.back().is_none_or(|&(t, _)| t <= at),
            "{}: a packet arriving at {at} overtakes the one sent before it",
            self.name
        );
        let was_empty = self.pipe.is_empty();
        self.pipe.push_back((at, id));
        was_empty
    }
}

/// `[start, end)`: the port starts no packet (one already on the wire finishes). A host that
/// did not run its qdisc in time — the validation twin replays the real `tbf`'s late dequeues —
/// or a link paused by its far end (IEEE 802.1Qbb PFC). A `tbf` keeps earning tokens meanwhile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pause {
    pub start: Time,
    pub end: Time,
}

/// A plain 10 Gbit/s port from node 0 to node 1, a 1 MiB FIFO, a 5 µs link: 1500-byte packets
/// take 1,230.4 ns on its wire. The tests' common port (here and `host::nic`).
#[cfg(test)]
pub(crate) fn test_port() -> Port {
    let rate = Rate::from_gbps(10);
    let queues = PortQueues::fifo(1 << 20);
    Port::new("p".into(), 0, 1, rate, PortClock::new(rate, 0), Time::from_us(5), queues)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Kind, Packet};

    fn offer(port: &mut Port, pool: &mut PacketPool, now: Time) -> (PacketId, Start) {
        let id = pool.alloc(Packet::new(Kind::Udp, 0, 0, 1, 1500));
        match port.offer(now, pool, id) {
            Offer::Queued { start, .. } => (id, start),
            Offer::Dropped { .. } => panic!("a packet offered to an empty port was dropped"),
        }
    }

    // ---- cut-through ----

    #[test]
    fn cut_through_puts_a_lone_packet_on_the_wire_at_its_arrival_time() {
        let (mut port, mut pool) = (test_port(), PacketPool::default());
        let now = Time::from_us(100);
        let (id, start) = offer(&mut port, &mut pool, now);
        let end = now + Time(1_230_400);
        assert_eq!(start, Start::Sending(end));
        assert!(port.can_cut_through());
        assert!(port.cut_through());
        assert_eq!(port.in_tx, None);
        assert_eq!(port.pipe.front(), Some(&(end + Time::from_us(5), id)));
        assert_eq!((port.stats.tx_packets, port.stats.tx_bytes), (1, 1500));
    }

    #[test]
    fn an_idle_port_sends_at_once_and_counts_the_packet_as_queued_and_taken() {
        let (mut port, mut pool) = (test_port(), PacketPool::default());
        let now = Time::from_us(100);
        let (id, start) = offer(&mut port, &mut pool, now);
        assert_eq!((start, port.in_tx), (Start::Sending(now + Time(1_230_400)), Some(id)));
        assert_eq!(pool.get(id).enqueued_at, now);
        assert_eq!(port.stats.max_queue_bytes, 1500);
        let t = port.queues.total();
        assert_eq!((t.enqueued_packets, t.dequeued_packets, t.max_bytes), (1, 1, 1500));
        assert_eq!((t.enqueued_bytes, t.dequeued_bytes), (1500, 1500));
        assert!(port.queues.is_empty());
        // Busy now: the next one waits in the queue.
        let (_, start) = offer(&mut port, &mut pool, now);
        assert_eq!(start, Start::Nothing);
        assert_eq!((port.queues.packets(), port.queues.total().max_bytes), (1, 1500));
    }

    #[test]
    fn cut_through_a_packet_during_the_serialization_waits_for_its_end() {
        let (mut port, mut pool) = (test_port(), PacketPool::default());
        let now = Time::from_us(100);
        offer(&mut port, &mut pool, now);
        port.cut_through();
        let end = now + Time(1_230_400);
        // Queued behind the wire: a wake-up at the end, asked for once.
        let (second, start) = offer(&mut port, &mut pool, now + Time::from_ns(500));
        assert_eq!(start, Start::Wait(end));
        assert!(!port.can_cut_through());
        let (_, start) = offer(&mut port, &mut pool, now + Time::from_ns(600));
        assert_eq!(start, Start::Nothing);
        // At the end the next one starts, exactly one serialization later than the first.
        port.wake_at = None;
        assert_eq!(port.start_next(end, &mut pool), Start::Sending(end + Time(1_230_400)));
        assert_eq!(port.in_tx, Some(second));
    }

    #[test]
    fn cut_through_is_not_for_a_port_with_a_packet_queued_or_a_shaper() {
        let (mut port, mut pool) = (test_port(), PacketPool::default());
        let now = Time::from_us(100);
        // Two offered at once: the first serializes, the second waits in the queue.
        offer(&mut port, &mut pool, now);
        offer(&mut port, &mut pool, now);
        assert!(!port.can_cut_through());
        let mut paused = test_port();
        paused.pauses.push(Pause { start: Time::from_secs(1), end: Time::from_secs(2) });
        assert!(!paused.can_cut_through());
    }

    // ---- starting a queued packet ----

    /// A GSO segment `index` of 4 (1500 bytes each), offered at `now` to a port busy with a
    /// first packet; that one's serialization ends at the time returned.
    fn queue_behind_one(port: &mut Port, pool: &mut PacketPool, index: u16) -> (PacketId, Time) {
        let now = Time::from_us(100);
        offer(port, pool, now);
        let mut p = Packet::new(Kind::Data, 0, 0, 1, 1500);
        (p.gso_segs, p.gso_index, p.gso_bytes) = (4, index, 6000);
        let id = pool.alloc(p);
        assert!(matches!(port.offer(now, pool, id), Offer::Queued { start: Start::Nothing, .. }));
        (id, now + Time(1_230_400))
    }

    #[test]
    fn a_switch_port_cuts_a_gso_segment_as_it_queues_it_and_starts_it_by_its_queued_size() {
        let (mut port, mut pool) = (test_port(), PacketPool::default());
        let (id, end) = queue_behind_one(&mut port, &mut pool, 1);
        let p = pool.get(id);
        assert_eq!((p.gso_segs, p.gso_index, p.gso_bytes), (1, 0, 1500));
        port.finish_tx(end);
        assert_eq!(port.start_next(end, &mut pool), Start::Sending(end + Time(1_230_400)));
        assert_eq!(port.in_tx, Some(id));
        port.finish_tx(end + Time(1_230_400));
        assert_eq!((port.stats.tx_packets, port.stats.tx_bytes), (2, 3000));
    }

    #[test]
    fn a_host_port_starts_a_queued_segment_knowing_whether_it_ends_its_skb() {
        for (index, skb_end) in [(1, false), (3, true)] {
            let (mut port, mut pool) = (test_port(), PacketPool::default());
            port.at_host = true;
            let (id, end) = queue_behind_one(&mut port, &mut pool, index);
            // Queued whole: the host's port cuts it as it starts it.
            assert_eq!(pool.get(id).gso_segs, 4);
            port.finish_tx(end);
            assert_eq!(port.start_next(end, &mut pool), Start::Sending(end + Time(1_230_400)));
            assert_eq!((port.in_tx, port.tx_skb_end), (Some(id), skb_end));
            assert_eq!((pool.get(id).gso_segs, pool.get(id).gso_bytes), (1, 1500));
        }
    }

    /// 100,000 flows build about 400k ports; a port that grows back past this (an inline qdisc)
    /// costs hundreds of MiB there (docs/performance.md, "Memory and scale").
    #[test]
    fn a_port_stays_small() {
        let size = std::mem::size_of::<Port>();
        assert!(size <= 528, "Port is {size} bytes, expected at most 528");
    }
}
