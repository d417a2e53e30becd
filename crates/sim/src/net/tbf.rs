//! A token-bucket shaper in front of a port's queue, as Linux `sch_tbf` (`net/sched/sch_tbf.c`)
//! runs it with its default `bfifo` child: packets wait in a byte-limited FIFO (`limit`) and
//! leave only when the bucket holds enough tokens for them; the bucket fills at `rate` up to
//! `burst` bytes and starts full.
//!
//! Like `sch_tbf`, tokens are kept as time (`psched_l2t_ns()`): a packet of L bytes needs L/rate
//! of accumulated time, the bucket holds at most burst/rate. The packet length charged is the
//! Ethernet frame without FCS (14 + IP bytes, `qdisc_pkt_len()` on an Ethernet device).

use crate::scenario::TbfSpec;
use crate::time::Time;
use crate::units::Rate;

/// Ethernet header bytes counted by `qdisc_pkt_len()` (no preamble, FCS or gap).
pub const L2_HEADER_BYTES: u32 = 14;

#[derive(Clone, Debug)]
pub struct TokenBucket {
    rate: Rate,
    /// Bucket size as time at `rate` (`q->buffer`).
    buffer: Time,
    /// Tokens (as time) at `t_c` (`q->tokens`).
    tokens: Time,
    /// Last update (`q->t_c`).
    t_c: Time,
}

impl TokenBucket {
    pub fn new(spec: &TbfSpec) -> TokenBucket {
        let buffer = spec.rate.serialization_time(spec.burst_bytes);
        TokenBucket { rate: spec.rate, buffer, tokens: buffer, t_c: Time::ZERO }
    }

    fn cost(&self, ip_bytes: u32) -> Time {
        self.rate.serialization_time((ip_bytes + L2_HEADER_BYTES) as u64)
    }

    fn available(&self, now: Time) -> Time {
        (self.tokens + (now - self.t_c)).min(self.buffer)
    }

    /// Earliest time at or after `now` when a packet of `ip_bytes` may leave
    /// (`tbf_dequeue()`: otherwise the watchdog is set for the missing tokens).
    pub fn ready_at(&self, now: Time, ip_bytes: u32) -> Time {
        let have = self.available(now);
        let need = self.cost(ip_bytes);
        if have >= need { now } else { now + (need - have) }
    }

    /// The packet leaves at `now`: take its tokens.
    pub fn consume(&mut self, now: Time, ip_bytes: u32) {
        let have = self.available(now);
        let need = self.cost(ip_bytes);
        debug_assert!(have >= need, "tbf released a packet without tokens");
        self.tokens = have - need;
        self.t_c = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bucket(rate_mbps: u64, burst: u64) -> TokenBucket {
        TokenBucket::new(&TbfSpec { rate: Rate::from_mbps(rate_mbps), burst_bytes: burst, limit_bytes: 100_000 })
    }

    #[test]
    fn a_full_bucket_passes_a_burst_then_paces_at_the_rate() {
        let mut b = bucket(8, 3028); // 8 Mbit/s = 1 byte/µs; two 1514-byte frames of burst
        let now = Time::ZERO;
        for _ in 0..2 {
            assert_eq!(b.ready_at(now, 1500), now);
            b.consume(now, 1500);
        }
        // Empty: the third frame waits 1514 µs for its tokens.
        assert_eq!(b.ready_at(now, 1500), Time::from_us(1514));
        b.consume(Time::from_us(1514), 1500);
        assert_eq!(b.ready_at(Time::from_us(1514), 1500), Time::from_us(3028));
    }

    #[test]
    fn tokens_never_exceed_the_burst() {
        let b = bucket(8, 2000);
        // After a long idle, still only 2000 bytes of tokens: a 1500-byte frame (1514 B) goes,
        // and a second would wait.
        let later = Time::from_secs(10);
        assert_eq!(b.ready_at(later, 1500), later);
        let mut b = b;
        b.consume(later, 1500);
        assert_eq!(b.ready_at(later, 1500), later + Time::from_us(1514 - (2000 - 1514)));
    }
}
