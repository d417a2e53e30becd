//! A constant-rate UDP burst source (the seeds' traffic generator): `rate` per source from
//! `start` for `duration`, datagrams of `packet_size` IP bytes.
//!
//! The source's own link is faster than its rate, so it never queues: each datagram's arrival
//! at the first switch is computed arithmetically, one event per datagram, where it first
//! contends (reference/engine.md, "Trains and fluids").
//!
//! Each source starts at a random phase within one datagram gap, drawn from its own seeded
//! stream: identical sources with identical phases would lock to the switch's departures, and
//! the same one would lose every tail-drop race — an artifact of perfect clocks, not of the
//! network.

use crate::rng;
use crate::scenario::BurstSpec;
use crate::time::Time;
use crate::units::Rate;

#[derive(Clone, Debug)]
pub struct BurstSource {
    pub rate: Rate,
    /// The burst's start as the scenario gives it.
    pub scheduled: Time,
    /// First departure: `scheduled` plus this source's phase.
    pub start: Time,
    pub end: Time,
    pub packet_size: u32,
    pub dscp: u8,
    /// Datagrams emitted so far.
    pub sent: u64,
    /// Datagrams that reached the sink.
    pub received: u64,
}

impl BurstSource {
    /// Source `index` of a run seeded `seed`.
    pub fn new(spec: &BurstSpec, seed: u64, index: u64) -> BurstSource {
        let gap = spec.rate.serialization_time(spec.packet_size as u64);
        let phase = crate::time::Time(rng::stream(seed, "burst-phase", index).below(gap.ps().max(1)));
        BurstSource {
            rate: spec.rate,
            scheduled: spec.start,
            start: spec.start + phase,
            end: spec.start + spec.duration,
            packet_size: spec.packet_size,
            dscp: spec.dscp,
            sent: 0,
            received: 0,
        }
    }

    /// Departure time of datagram `k`: exact to the picosecond, with no drift over millions
    /// of datagrams (computed from `k`, not accumulated).
    pub fn departure(&self, k: u64) -> Time {
        let bits = k as u128 * self.packet_size as u128 * 8 * Time::PS_PER_S as u128;
        self.start + Time(bits.div_ceil(self.rate.bps() as u128) as u64)
    }

    /// The next datagram's departure, if it is still inside the burst.
    pub fn next_departure(&self) -> Option<Time> {
        let t = self.departure(self.sent);
        (t < self.end).then_some(t)
    }

    pub fn sent_bytes(&self) -> u64 {
        self.sent * self.packet_size as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_is_exact_over_a_long_burst() {
        let spec = BurstSpec {
            sources: 1,
            rate: Rate::from_gbps(25),
            start: Time::from_ms(1500),
            duration: Time::from_ms(100),
            packet_size: 9000,
            dscp: 0,
        };
        let mut b = BurstSource::new(&spec, 1, 0);
        while b.next_departure().is_some() {
            b.sent += 1;
        }
        // 25 Gbit/s × 100 ms / (9000 B × 8) = 34,722.2: 34,722 or 34,723 datagrams start
        // inside, depending on the phase.
        assert!((34_722..=34_723).contains(&b.sent), "{}", b.sent);
        assert_eq!(b.departure(1) - b.departure(0), Time::from_ns(2880));
        assert!(b.start - spec.start < Time::from_ns(2880));
    }

    #[test]
    fn sources_get_different_phases_from_the_seed() {
        let spec = BurstSpec {
            sources: 2,
            rate: Rate::from_gbps(1),
            start: Time::ZERO,
            duration: Time::from_ms(1),
            packet_size: 1500,
            dscp: 0,
        };
        let (a, b) = (BurstSource::new(&spec, 1, 0), BurstSource::new(&spec, 1, 1));
        assert_ne!(a.start, b.start);
        assert_eq!(a.start, BurstSource::new(&spec, 1, 0).start);
        assert_ne!(a.start, BurstSource::new(&spec, 2, 0).start);
    }
}
