//! A receiving socket's host side: the application that reads it (how late it wakes, how long
//! it holds the socket), the socket's backlog while it does, the host's receive batching
//! (`rx_coalesce`), and how late the host answers a handshake. The world asks it what to do
//! with each segment and when to wake the reader; TCP itself is `tcp::receiver`.

use crate::latency::Latency;
use crate::packet::Packet;
use crate::rng;
use crate::tcp::config::FlowSpec;
use crate::time::Time;

/// The receiving application and its socket's host-side queues, for one connection.
pub struct Reader {
    /// The application's wake-up latency (0 = it reads every segment at once), the stream its
    /// draws come from, and its pending wake-up.
    latency: Latency,
    rng: rng::Stream,
    read_at: Option<Time>,
    /// The application's first read, if it comes later than the others (`first_read_latency`).
    first_read: Option<Time>,
    /// The socket held by the reader before its next read ends (`read_hold`): from when, and
    /// the data segments that came meanwhile, waiting in the socket's backlog.
    hold: Latency,
    hold_rng: rng::Stream,
    hold_from: Option<Time>,
    backlog: Vec<Packet>,
    /// How late the host answers the handshake; the SYN waiting for that answer.
    handshake: Latency,
    handshake_rng: rng::Stream,
    pending_syn: Option<Packet>,
    /// Receive batching (`rx_coalesce`, `None` when zero): the data segments the host holds
    /// for TCP.
    coalesce: Option<Latency>,
    rx_rng: rng::Stream,
    rx_held: Vec<Packet>,
    /// Every byte is acknowledged but the application has not read them all yet.
    pub done_unread: bool,
}

/// What becomes of a data segment that reached the receiving host.
pub enum Arrival {
    /// The reader holds the socket: `tcp_v4_rcv()` queued it to the backlog.
    Backlogged,
    /// Held for a receive batch; the first of a batch says when the batch goes up.
    Batched { goes_up: Option<Time> },
    /// TCP processes it now.
    Now,
}

impl Reader {
    /// Connection `i`'s reader, its streams seeded from the run's `seed`.
    pub fn new(spec: &FlowSpec, seed: u64, i: u64) -> Reader {
        Reader {
            latency: spec.read_latency.clone(),
            rng: rng::stream(seed, "read-latency", i),
            read_at: None,
            first_read: spec.first_read_latency,
            hold: spec.read_hold.clone(),
            hold_rng: rng::stream(seed, "read-hold", i),
            hold_from: None,
            backlog: Vec::new(),
            handshake: spec.handshake_latency.clone(),
            handshake_rng: rng::stream(seed, "handshake-latency", i),
            pending_syn: None,
            coalesce: (!spec.rx_coalesce.is_zero()).then(|| spec.rx_coalesce.clone()),
            rx_rng: rng::stream(seed, "rx-coalesce", i),
            rx_held: Vec::new(),
            done_unread: false,
        }
    }

    /// A data segment for this socket reached its host at `now`; it is kept only if it waits.
    pub fn data_arrives(&mut self, now: Time, p: &Packet) -> Arrival {
        if self.hold_from.is_some_and(|t| now >= t) {
            self.backlog.push(*p);
            return Arrival::Backlogged;
        }
        if let Some(delay) = &self.coalesce {
            let goes_up = self.rx_held.is_empty().then(|| now + delay.draw(&mut self.rx_rng));
            self.rx_held.push(*p);
            return Arrival::Batched { goes_up };
        }
        Arrival::Now
    }

    /// The batch the host hands TCP, in arrival order.
    pub fn take_batch(&mut self) -> Vec<Packet> {
        std::mem::take(&mut self.rx_held)
    }

    /// The reader lets go of the socket: the backlog's segments as skbs, if any.
    pub fn release(&mut self) -> Option<Vec<Packet>> {
        self.hold_from = None;
        if self.backlog.is_empty() {
            return None;
        }
        let mut held = std::mem::take(&mut self.backlog);
        mark_backlog_skbs(&mut held);
        Some(held)
    }

    /// A SYN arrives: `None` if the host answers at once; otherwise it is held (the first
    /// one; a retransmitted one while it waits changes nothing), with the time of the answer
    /// if it is the one held.
    pub fn hold_syn(&mut self, now: Time, p: Packet) -> Option<Option<Time>> {
        if self.handshake.is_zero() {
            return None;
        }
        if self.pending_syn.is_some() {
            return Some(None);
        }
        self.pending_syn = Some(p);
        Some(Some(now + self.handshake.draw(&mut self.handshake_rng)))
    }

    /// The SYN held for the handshake's answer.
    pub fn take_syn(&mut self) -> Option<Packet> {
        self.pending_syn.take()
    }

    /// The application reads every segment as it arrives.
    pub fn reads_at_once(&self) -> bool {
        self.latency.is_zero()
    }

    /// Data is queued (`unread`): the sleeping application wakes this much later, unless a
    /// wake-up is pending. It holds the socket for a draw of `read_hold` before its read ends.
    pub fn wake(&mut self, now: Time, unread: bool) -> Option<Time> {
        if self.read_at.is_some() || !unread {
            return None;
        }
        let at = now + self.next_read_latency();
        self.read_at = Some(at);
        if !self.hold.is_zero() {
            let hold = self.hold.draw(&mut self.hold_rng);
            self.hold_from = Some(at.saturating_sub(hold).max(now));
        }
        Some(at)
    }

    /// The application read.
    pub fn read_done(&mut self) {
        self.read_at = None;
    }

    /// How long the application takes to come for the data that just woke it.
    fn next_read_latency(&mut self) -> Time {
        match self.first_read.take() {
            Some(first) => first,
            None => self.latency.draw(&mut self.rng),
        }
    }
}

/// `tcp_add_backlog()` joins a segment to the backlog's last skb when it continues it
/// (`end_seq == seq`), with the same TCP options (our timestamps: the same millisecond, as
/// Linux's TSval clock ticks), ECN bits and flags, while the skb has room for its page
/// (`MAX_SKB_FRAGS`, 17: veth delivers a segment's payload as one page fragment; traced here,
/// the kernel's backlog skbs at 1500 bytes held at most 16-18 segments). Each resulting skb is
/// marked as a GSO skb (`gso_index` of `gso_segs`): one receive event, one ACK decision.
pub fn mark_backlog_skbs(held: &mut [Packet]) {
    use crate::tcp::{MAX_SKB_FRAGS, TCP_TS_TICK};
    let tick = |p: &Packet| p.ts_val.ps() / TCP_TS_TICK.ps();
    let joins = |tail: &Packet, p: &Packet| {
        tail.seq + tail.payload as u64 == p.seq
            && tick(tail) == tick(p)
            && tail.ecn == p.ecn
            && tail.dscp == p.dscp
            && (tail.ece, tail.cwr) == (p.ece, p.cwr)
    };
    let mut start = 0;
    for i in 1..=held.len() {
        if i < held.len() && i - start < MAX_SKB_FRAGS && joins(&held[i - 1], &held[i]) {
            continue;
        }
        let segs = (i - start) as u16;
        for (k, p) in held[start..i].iter_mut().enumerate() {
            p.gso_index = k as u16;
            p.gso_segs = segs;
        }
        start = i;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Kind;

    fn seg(k: u64, sent_us: u64) -> Packet {
        let mut p = Packet::new(Kind::Data, 0, 0, 1, 1500);
        (p.seq, p.payload, p.ts_val) = (k * 1448, 1448, Time::from_us(sent_us));
        p
    }

    fn skb_sizes(held: &[Packet]) -> Vec<u16> {
        held.iter().filter(|p| p.gso_index == 0).map(|p| p.gso_segs).collect()
    }

    #[test]
    fn backlog_joins_contiguous_segments_of_one_tsval_up_to_max_skb_frags() {
        // 40 segments sent within one millisecond: skbs of 17, 17 and 6.
        let mut held: Vec<Packet> = (0..40).map(|k| seg(k, 100 + k)).collect();
        mark_backlog_skbs(&mut held);
        assert_eq!(skb_sizes(&held), [17, 17, 6]);
        assert!(held.iter().all(|p| p.gso_index < p.gso_segs));
    }

    #[test]
    fn backlog_keeps_a_holes_sides_and_a_new_tsval_apart() {
        // Segments 0-4, then 6-9 (5 lost), of which 8 and 9 were sent in the next millisecond.
        let mut held: Vec<Packet> =
            [0, 1, 2, 3, 4, 6, 7].iter().map(|&k| seg(k, 900 + k)).collect();
        held.extend([seg(8, 1_000), seg(9, 1_001)]);
        mark_backlog_skbs(&mut held);
        assert_eq!(skb_sizes(&held), [5, 2, 2]);
    }
}
