//! The per-sample fields google/bbr v3 adds to `struct rate_sample` (`include/net/tcp.h`,
//! filled by `tcp_rate_skb_delivered()` / `tcp_rate_gen()` in `net/ipv4/tcp_rate.c`), rebuilt
//! from what our [`RateSample`] and [`Sock`] already carry:
//!
//! - `rs->lost` = `tp->lost − skb->tx.lost`: packets marked lost while the sampled packet was
//!   in flight. Linux stamps `tx.lost` on every skb at send time; we log `(delivered, lost,
//!   delivered_ce)` after each ACK and look up the entry for `rs.prior_delivered` (the
//!   `tp->delivered` the sampled packet was sent with), so the same difference comes out.
//! - `rs->delivered_ce` = `tp->delivered_ce − skb->tx.delivered_ce`, from the same entry.
//! - `rs->tx_in_flight` (packets in flight when the sampled packet was sent) is taken as
//!   `rs.prior_in_flight`, in flight just before this ACK.
//! - `rs->is_ece` (the ACK carried ECE) is taken as "`tp.delivered_ce` grew on this ACK".
//!
//! The log keeps about [`STRIDE_DIV`] entries per cwnd of delivered packets, so it stays small
//! on long paths; an entry can then be up to cwnd/32 deliveries older than the sampled packet,
//! which counts losses and marks over a slightly longer flight (never fewer).

use std::collections::VecDeque;

use super::super::{RateSample, Sock};

/// Entries per cwnd of delivered packets kept in the log (ours, not Linux's).
pub const STRIDE_DIV: u32 = 32;

/// The loss/ECN view of one ACK (the v3 fields of `struct rate_sample`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Signals {
    /// `rs->lost`: packets lost while the sampled packet was in flight.
    pub lost: u32,
    /// `rs->tx_in_flight`: packets in flight when the sampled packet was sent.
    pub tx_in_flight: u32,
    /// `rs->delivered`: packets delivered over the sample (negative: no sample).
    pub delivered: i64,
    /// `rs->delivered_ce`: of those, delivered with a CE mark.
    pub delivered_ce: u32,
    /// `rs->is_ece`: this ACK echoed CE.
    pub is_ece: bool,
    /// `rs->is_app_limited`.
    pub is_app_limited: bool,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Entry {
    delivered: u64,
    lost: u64,
    delivered_ce: u64,
}

impl Entry {
    fn of(tp: &Sock) -> Entry {
        Entry { delivered: tp.delivered, lost: tp.lost, delivered_ce: tp.delivered_ce }
    }
}

/// Counters as packets in flight saw them when sent (Linux's per-skb `tx.lost`,
/// `tx.delivered_ce`), keyed by `tp.delivered`.
#[derive(Clone, Debug, Default)]
pub struct TxLog {
    entries: VecDeque<Entry>,
    /// `tp.delivered_ce` after the previous ACK.
    last_ce: u64,
}

impl TxLog {
    /// Forget everything; packets sent from now see the socket's counters as they are.
    pub fn reset(&mut self, tp: &Sock) {
        self.entries.clear();
        self.entries.push_back(Entry::of(tp));
        self.last_ce = tp.delivered_ce;
    }

    /// After an ACK: packets sent until the next ACK carry these counters.
    pub fn record(&mut self, tp: &Sock) {
        let stride = (tp.snd_cwnd / STRIDE_DIV).max(1) as u64;
        let due = self.entries.back().is_none_or(|b| tp.delivered >= b.delivered + stride);
        if due {
            self.entries.push_back(Entry::of(tp));
        }
        self.last_ce = tp.delivered_ce;
    }

    /// The v3 fields for the sample `rs` of this ACK (before [`TxLog::record`]).
    pub fn signals(&mut self, tp: &Sock, rs: &RateSample) -> Signals {
        let is_ece = tp.delivered_ce > self.last_ce;
        let mut s = Signals {
            delivered: rs.delivered,
            is_ece,
            is_app_limited: rs.is_app_limited,
            ..Signals::default()
        };
        // No packet delivered with send-time state: Linux leaves the fields zero.
        if rs.delivered < 0 {
            return s;
        }
        while self.entries.len() >= 2 && self.entries[1].delivered <= rs.prior_delivered {
            self.entries.pop_front();
        }
        let at = self.entries.front().copied().unwrap_or_else(|| Entry::of(tp));
        s.lost = tp.lost.saturating_sub(at.lost).min(u32::MAX as u64) as u32;
        s.delivered_ce =
            tp.delivered_ce.saturating_sub(at.delivered_ce).min(u32::MAX as u64) as u32;
        s.tx_in_flight = rs.prior_in_flight;
        s
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.entries.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rs(prior_delivered: u64, prior_in_flight: u32) -> RateSample {
        RateSample {
            delivered: 1,
            interval_us: 10,
            prior_delivered,
            prior_in_flight,
            ..RateSample::default()
        }
    }

    #[test]
    fn signals_count_losses_and_marks_since_the_sampled_packet_was_sent() {
        let mut tp = Sock::new(1448, 10, 1000);
        tp.snd_cwnd = 10; // stride 1: an entry per ACK
        let mut log = TxLog::default();
        log.reset(&tp);
        // ACK 1: delivered 1; packets sent now have tx.delivered = 1, tx.lost = 0.
        tp.delivered = 1;
        log.record(&tp);
        // ACK 2: 3 losses and 2 CE marks happen; delivered 2.
        tp.delivered = 2;
        tp.lost = 3;
        tp.delivered_ce = 2;
        log.record(&tp);
        // ACK 3 samples a packet sent after ACK 1: the 3 losses and 2 marks are in its flight.
        tp.delivered = 3;
        let s = log.signals(&tp, &rs(1, 17));
        assert_eq!((s.lost, s.delivered_ce, s.tx_in_flight, s.is_ece), (3, 2, 17, false));
        // A packet sent after ACK 2 saw lost = 3 already.
        tp.lost = 4;
        tp.delivered_ce = 3;
        let s = log.signals(&tp, &rs(2, 9));
        assert_eq!((s.lost, s.delivered_ce, s.is_ece), (1, 1, true));
    }

    #[test]
    fn signals_are_zero_without_a_delivery_sample() {
        let mut tp = Sock::new(1448, 10, 1000);
        let mut log = TxLog::default();
        log.reset(&tp);
        tp.lost = 5;
        let s = log.signals(
            &tp,
            &RateSample { delivered: -1, prior_in_flight: 9, ..RateSample::default() },
        );
        assert_eq!((s.lost, s.tx_in_flight, s.delivered), (0, 0, -1));
    }

    #[test]
    fn record_keeps_about_stride_div_entries_per_window() {
        let mut tp = Sock::new(1448, 3200, 1000);
        let mut log = TxLog::default();
        log.reset(&tp);
        // One window of 3200 packets acked one by one: an entry every 100 deliveries.
        for d in 1..=3200 {
            tp.delivered = d;
            log.record(&tp);
        }
        assert_eq!(log.len(), 1 + STRIDE_DIV as usize);
        // A sample for a packet sent at delivered = 3150 prunes all entries before 3100.
        log.signals(&tp, &rs(3150, 0));
        assert_eq!(log.len(), 2);
    }
}
