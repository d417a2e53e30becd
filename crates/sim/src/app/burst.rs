//! A constant-rate UDP burst source (the seeds' traffic generator): `rate` per source from
//! `start` for `duration`, datagrams of `packet_size` IP bytes.
//!
//! The source's own link is faster than its rate, so it never queues: each datagram's arrival
//! at the first switch is computed arithmetically, one event per datagram, where it first
//! contends (reference/engine.md, "Trains and fluids"). A source alone on its link
//! ([`SourceLink`]) does not even touch its link's port: its one event per datagram is the
//! datagram's arrival at the far end, which keeps the cost per datagram flat however many
//! sources there are (docs/performance.md, "Memory and scale").
//!
//! # Timing model
//!
//! A perfect clock is an artifact here, not a simplification. Sources of equal datagrams with
//! periods exact to the picosecond decide each tail-drop race by arithmetic, the same way for
//! the whole burst: of five equal sources overloading a port, some never lose a datagram
//! (`tests/burst_timing.rs`). (The AmLight swing of H-TCP's loss with the datagram size is a
//! different lock, between the sender's NIC and the bottleneck: docs/fidelity.md.) Real
//! generators (iperf3 `-u -b`, TRex, hardware testers) have three imperfections, and each
//! source gets all three, drawn from its own seeded streams:
//!
//! - a **phase**: the first datagram leaves up to one gap after `start` (`"burst-phase"`);
//! - a **clock offset** drawn once, uniform in ±`clock_ppm` (`"burst-clock"`): the source
//!   keeps its configured rate by its own clock, so by the network's clock it sends
//!   `rate × (1 + offset)`. The offsets are zero-mean, so the expected rate over sources is
//!   the configured one, while the sources' relative phases drift through every alignment
//!   (at 20 ppm, a 2.88 µs gap slips by one 0.72 µs service slot of a 100G port every
//!   ~12,500 datagrams, 36 ms);
//! - a bounded **per-datagram jitter**, uniform in `[0, jitter]`, added to each departure
//!   without moving the next: departure `k` is computed from `k` alone (an O(1) counter-based
//!   draw, `"burst-jitter"`), so jitter never accumulates into drift and the mean rate is
//!   untouched.
//!
//! The scenario's defaults (`scenario::traffic`): `clock_ppm` = [`DEFAULT_CLOCK_PPM`], and
//! `jitter` = one frame's serialization on the source's link (the NIC cannot place a frame
//! more finely than the frame in front of it occupies the wire), capped by [`max_jitter`] so
//! that a source's frames never overlap on its own link and never reorder.

use crate::packet::NodeId;
use crate::rng;
use crate::time::Time;
use crate::units::{ETHERNET_OVERHEAD_BYTES, Rate};

/// burstlab's default bound on a source's clock offset, ±20 ppm: the usual rating of the
/// crystal oscillators that clock servers' and testers' NICs (IEEE 802.3 allows a PHY's
/// transmit clock ±100 ppm). Each source draws its own offset within the bound.
pub const DEFAULT_CLOCK_PPM: f64 = 20.0;

/// Largest accepted `clock_ppm`: 1000 ppm, ten times IEEE 802.3's ±100 ppm, so a scenario can
/// exaggerate the drift but not turn it into a different rate.
pub const MAX_CLOCK_PPM: f64 = 1000.0;

/// Parts per billion in one part per million.
const PPB_PER_PPM: f64 = 1000.0;
const PPB: u128 = 1_000_000_000;

/// The link of a source that has it to itself (no other source, no TCP flow leaves by it), as
/// the source needs it to hand each datagram straight to the link's far end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SourceLink {
    /// A datagram reaches the far end this long after it leaves: one serialization on the
    /// link (by its port's clock) plus the link's propagation delay.
    pub lead: Time,
    /// The source's own port, the link's sending end (INT names it as the ingress).
    pub up: u32,
    /// The port the datagram joins at the far end when that is a switch, else [`NO_PORT`]
    /// (the far end is the sink).
    pub next: u32,
    /// The datagram's step after `next` (`net::topology::Network::hops`).
    pub then: u32,
    pub src: NodeId,
    pub sink: NodeId,
}

/// [`SourceLink::next`] of a link that ends at the sink.
pub const NO_PORT: u32 = u32::MAX;

#[derive(Clone, Debug)]
pub struct BurstSource {
    /// The source's number in the scenario, its `[[burst]]` tables' sources in order: its
    /// flow id is the number of TCP flows plus this. The world keeps its sources in the order
    /// they first send, not by this (`World::bursts`).
    pub index: u32,
    pub rate: Rate,
    /// The burst's start as the scenario gives it.
    pub scheduled: Time,
    /// First departure before jitter: `scheduled` plus this source's phase.
    pub start: Time,
    pub end: Time,
    pub packet_size: u32,
    pub dscp: u8,
    /// This source's clock offset in parts per billion (positive: its clock runs fast, so it
    /// sends faster than `rate` by the network's clock).
    pub clock_ppb: i64,
    /// Bound of the per-datagram jitter (inclusive).
    pub jitter: Time,
    /// Key of the per-datagram jitter draws.
    jitter_key: u64,
    /// Datagrams emitted so far; with a [`SourceLink`], those that reached its far end
    /// ([`BurstSource::sent_by`] counts the ones still on the link).
    pub sent: u64,
    /// Datagrams that reached the sink.
    pub received: u64,
    /// Set when the source has its link to itself: each datagram's one event is its arrival
    /// at the link's far end.
    pub link: Option<SourceLink>,
}

impl BurstSource {
    /// Source `index` of a run seeded `seed`.
    pub fn new(spec: &BurstSpec, seed: u64, index: u64) -> BurstSource {
        let gap = spec.rate.serialization_time(spec.packet_size as u64);
        let phase = Time(rng::stream(seed, "burst-phase", index).below(gap.ps().max(1)));
        let bound = ppb_bound(spec.clock_ppm);
        let clock_ppb =
            rng::stream(seed, "burst-clock", index).below(2 * bound + 1) as i64 - bound as i64;
        let mut b = BurstSource {
            index: u32::try_from(index).expect("flow ids are u32, so are source numbers"),
            rate: spec.rate,
            scheduled: spec.start,
            start: spec.start + phase,
            end: spec.start + spec.duration,
            packet_size: spec.packet_size,
            dscp: spec.dscp,
            clock_ppb,
            jitter: Time::ZERO,
            jitter_key: rng::stream(seed, "burst-jitter", index).next_u64(),
            sent: 0,
            received: 0,
            link: None,
        };
        // Whatever the spec says, a jitter of a whole period could reorder the source's own
        // datagrams: keep it below the shortest gap this clock produces.
        let shortest_gap = b.nominal(1).ps().saturating_sub(1);
        b.jitter = Time(spec.jitter.ps().min(shortest_gap));
        b
    }

    /// Offset of datagram `k` from `start` by this source's clock, before jitter: computed from
    /// `k` in integer arithmetic, so it never drifts from `k × size / (rate × (1 + offset))`.
    fn nominal(&self, k: u64) -> Time {
        let num = k as u128 * self.packet_size as u128 * 8 * Time::PS_PER_S as u128 * PPB;
        let den = self.rate.bps() as u128 * (PPB as i128 + self.clock_ppb as i128) as u128;
        Time(num.div_ceil(den) as u64)
    }

    /// Jitter of datagram `k`, uniform in `[0, jitter]`: a draw keyed by `k`, not a stream
    /// position, so departures do not depend on how many were asked for before.
    fn jitter_of(&self, k: u64) -> Time {
        if self.jitter == Time::ZERO {
            return Time::ZERO;
        }
        Time(rng::stream(self.jitter_key, "", k).below(self.jitter.ps() + 1))
    }

    /// Departure time of datagram `k`. O(1) and strictly increasing in `k`.
    pub fn departure(&self, k: u64) -> Time {
        self.start + self.nominal(k) + self.jitter_of(k)
    }

    /// The next datagram's departure, if the source's clock still has it inside the burst
    /// (jitter may push the last one past `end`; it never adds or removes one).
    pub fn next_departure(&self) -> Option<Time> {
        (self.start + self.nominal(self.sent) < self.end).then(|| self.departure(self.sent))
    }

    /// When the next datagram's event is due: its departure, or with a [`SourceLink`] its
    /// arrival at the link's far end.
    pub fn next_event(&self) -> Option<Time> {
        let lead = self.link.map_or(Time::ZERO, |l| l.lead);
        self.next_departure().map(|t| t + lead)
    }

    /// Datagrams that have left the source by `now`: with a [`SourceLink`], `sent` counts
    /// only those that reached its far end, and the ones still on the link count too.
    pub fn sent_by(&self, now: Time) -> u64 {
        let mut k = self.sent;
        if self.link.is_some() {
            while self.start + self.nominal(k) < self.end && self.departure(k) <= now {
                k += 1;
            }
        }
        k
    }

    /// Bytes of the datagrams that have left the source by `now`.
    pub fn sent_bytes(&self, now: Time) -> u64 {
        self.sent_by(now) * self.packet_size as u64
    }
}

/// `clock_ppm` as an inclusive bound in parts per billion.
fn ppb_bound(clock_ppm: f64) -> u64 {
    (clock_ppm.clamp(0.0, MAX_CLOCK_PPM) * PPB_PER_PPM).round() as u64
}

/// Serialization of one `packet_size` datagram's frame on a source link of `link_rate`.
pub fn frame_time(packet_size: u32, link_rate: Rate) -> Time {
    link_rate.serialization_time((packet_size + ETHERNET_OVERHEAD_BYTES) as u64)
}

/// The largest jitter a source can have without its frames overlapping on its own link: the
/// shortest gap its clock can produce (at `+clock_ppm`), less one frame's serialization.
/// Zero when the source runs at (or near) its link's rate.
pub fn max_jitter(rate: Rate, packet_size: u32, link_rate: Rate, clock_ppm: f64) -> Time {
    let bits_ps = packet_size as u128 * 8 * Time::PS_PER_S as u128 * PPB;
    let fastest_gap = bits_ps / (rate.bps() as u128 * (PPB + ppb_bound(clock_ppm) as u128));
    Time((fastest_gap as u64).saturating_sub(frame_time(packet_size, link_rate).ps()))
}

/// The default jitter: one frame's serialization on the source's link, within [`max_jitter`].
pub fn default_jitter(rate: Rate, packet_size: u32, link_rate: Rate, clock_ppm: f64) -> Time {
    frame_time(packet_size, link_rate).min(max_jitter(rate, packet_size, link_rate, clock_ppm))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(
        rate: Rate,
        duration: Time,
        packet_size: u32,
        jitter: Time,
        clock_ppm: f64,
    ) -> BurstSpec {
        BurstSpec {
            sources: 1,
            rate,
            start: Time::from_ms(1500),
            duration,
            packet_size,
            dscp: 0,
            jitter,
            clock_ppm,
        }
    }

    fn count(mut b: BurstSource) -> u64 {
        while b.next_departure().is_some() {
            b.sent += 1;
        }
        b.sent
    }

    // ---- perfect clock (jitter 0, clock_ppm 0) ----

    #[test]
    fn perfect_clock_rate_is_exact_over_a_long_burst() {
        let s = spec(Rate::from_gbps(25), Time::from_ms(100), 9000, Time::ZERO, 0.0);
        let b = BurstSource::new(&s, 1, 0);
        // 25 Gbit/s × 100 ms / (9000 B × 8) = 34,722.2: 34,722 or 34,723 datagrams start
        // inside, depending on the phase.
        assert!((34_722..=34_723).contains(&count(b.clone())));
        assert_eq!(b.clock_ppb, 0);
        assert_eq!(b.departure(1) - b.departure(0), Time::from_ns(2880));
        assert!(b.start - s.start < Time::from_ns(2880));
    }

    #[test]
    fn perfect_clock_sources_get_different_phases_from_the_seed() {
        let s = spec(Rate::from_gbps(1), Time::from_ms(1), 1500, Time::ZERO, 0.0);
        let (a, b) = (BurstSource::new(&s, 1, 0), BurstSource::new(&s, 1, 1));
        assert_ne!(a.start, b.start);
        assert_eq!(a.start, BurstSource::new(&s, 1, 0).start);
        assert_ne!(a.start, BurstSource::new(&s, 2, 0).start);
    }

    // ---- defaults and bounds ----

    #[test]
    fn defaults_clock_ppm_is_tens_of_ppm_within_ieee_802_3() {
        assert_eq!(DEFAULT_CLOCK_PPM, 20.0);
        assert_eq!(MAX_CLOCK_PPM, 1000.0);
        assert_eq!(ppb_bound(DEFAULT_CLOCK_PPM), 20_000);
        assert_eq!(ppb_bound(12.5), 12_500);
    }

    #[test]
    fn defaults_jitter_is_one_frame_on_the_source_link() {
        // 9000 + 38 bytes at 100 Gbit/s = 723.04 ns; the gap at 25 Gbit/s is 2880 ns.
        let (r, l) = (Rate::from_gbps(25), Rate::from_gbps(100));
        assert_eq!(frame_time(9000, l), Time(723_040));
        assert_eq!(default_jitter(r, 9000, l, DEFAULT_CLOCK_PPM), Time(723_040));
        // Shortest gap at +20 ppm: 2880 ns / 1.00002 = 2879.942 ns, less one frame.
        assert_eq!(max_jitter(r, 9000, l, DEFAULT_CLOCK_PPM), Time(2_879_942 - 723_040));
    }

    #[test]
    fn defaults_jitter_is_zero_at_line_rate() {
        let r = Rate::from_gbps(100);
        assert_eq!(max_jitter(r, 9000, r, 0.0), Time::ZERO);
        assert_eq!(default_jitter(r, 9000, r, DEFAULT_CLOCK_PPM), Time::ZERO);
        // Half the line rate leaves a gap of 1440 ns − 723.04 ns for jitter.
        assert_eq!(max_jitter(Rate::from_gbps(50), 9000, r, 0.0), Time(1_440_000 - 723_040));
    }

    // ---- clock offset ----

    #[test]
    fn clock_offsets_stay_in_bound_and_average_to_zero() {
        let s = spec(Rate::from_gbps(25), Time::from_ms(1), 9000, Time::ZERO, 20.0);
        let ppb: Vec<i64> = (0..2000).map(|i| BurstSource::new(&s, 7, i).clock_ppb).collect();
        assert!(ppb.iter().all(|p| p.abs() <= 20_000));
        assert!(ppb.iter().any(|p| *p > 15_000) && ppb.iter().any(|p| *p < -15_000));
        // Uniform on ±20 ppm: σ = 11.5 ppm, so the mean of 2000 has σ = 0.26 ppm.
        let mean = ppb.iter().sum::<i64>() as f64 / ppb.len() as f64;
        assert!(mean.abs() < 1_500.0, "mean offset {mean} ppb");
    }

    #[test]
    fn clock_offset_scales_the_rate_by_the_network_clock() {
        let s = spec(Rate::from_gbps(25), Time::from_secs(10), 9000, Time::ZERO, 50.0);
        let b = BurstSource::new(&s, 3, 0);
        assert_ne!(b.clock_ppb, 0);
        let n = count(b.clone());
        let expected = 25e9 * 10.0 / 72_000.0 * (1.0 + b.clock_ppb as f64 * 1e-9);
        assert!((n as f64 / expected - 1.0).abs() < 1e-6, "{n} vs {expected}");
    }

    // ---- per-datagram jitter ----

    #[test]
    fn jitter_is_bounded_spread_and_never_reorders() {
        let (r, l) = (Rate::from_gbps(25), Rate::from_gbps(100));
        let j = default_jitter(r, 9000, l, 20.0);
        let b = BurstSource::new(&spec(r, Time::from_ms(100), 9000, j, 20.0), 5, 2);
        assert_eq!(b.jitter, j);
        let offs: Vec<u64> =
            (0..20_000).map(|k| (b.departure(k) - b.start - b.nominal(k)).ps()).collect();
        assert!(offs.iter().all(|o| *o <= j.ps()));
        // Uniform on [0, 723 ns]: the extremes are reached and the mean is near the middle.
        assert!(
            offs.iter().any(|o| *o < j.ps() / 100) && offs.iter().any(|o| *o > j.ps() * 99 / 100)
        );
        let mean = offs.iter().sum::<u64>() as f64 / offs.len() as f64;
        assert!((mean / j.ps() as f64 - 0.5).abs() < 0.02, "mean jitter {mean} ps");
        // Frames never overlap on the source's own link.
        assert!((1..20_000).all(|k| b.departure(k) - b.departure(k - 1) >= frame_time(9000, l)));
    }

    #[test]
    fn jitter_keeps_the_mean_rate_exact() {
        let r = Rate::from_gbps(25);
        let s = spec(
            r,
            Time::from_secs(10),
            9000,
            default_jitter(r, 9000, Rate::from_gbps(100), 0.0),
            0.0,
        );
        let b = BurstSource::new(&s, 11, 0);
        assert!(b.jitter > Time::ZERO);
        let n = count(b.clone());
        let configured = 25e9 * 10.0 / 72_000.0;
        assert!((n as f64 / configured - 1.0).abs() < 1e-6, "{n} vs {configured}");
        // Measured between the first and the last departure, jitter included.
        let span = (b.departure(n - 1) - b.departure(0)).as_secs_f64();
        let rate = (n - 1) as f64 * 72_000.0 / span;
        assert!((rate / 25e9 - 1.0).abs() < 1e-6, "{rate} bit/s");
    }

    #[test]
    fn jitter_is_a_function_of_seed_source_and_index() {
        let r = Rate::from_gbps(25);
        let s = spec(r, Time::from_ms(10), 9000, Time::from_ns(700), 20.0);
        let a = BurstSource::new(&s, 9, 1);
        let again = BurstSource::new(&s, 9, 1);
        // Asked in any order, departure k is the same.
        let fwd: Vec<Time> = (0..100).map(|k| a.departure(k)).collect();
        let back: Vec<Time> = (0..100).rev().map(|k| again.departure(k)).collect();
        assert!(fwd.iter().eq(back.iter().rev()));
        let other = BurstSource::new(&s, 9, 2);
        let other_seed = BurstSource::new(&s, 10, 1);
        let jit = |b: &BurstSource| (0..100).map(|k| b.jitter_of(k)).collect::<Vec<_>>();
        assert_ne!(jit(&a), jit(&other));
        assert_ne!(jit(&a), jit(&other_seed));
    }

    #[test]
    fn jitter_above_a_gap_is_clamped_below_it() {
        let r = Rate::from_gbps(25);
        let b = BurstSource::new(&spec(r, Time::from_ms(1), 9000, Time::from_us(10), 0.0), 1, 0);
        assert_eq!(b.jitter, Time::from_ns(2880) - Time(1));
        assert!((1..10_000).all(|k| b.departure(k) > b.departure(k - 1)));
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct BurstSpec {
    /// Number of sources, each on its own port of switch A.
    pub sources: u32,
    /// Sending rate of each source (IP bytes).
    pub rate: Rate,
    pub start: Time,
    pub duration: Time,
    /// IP datagram size, bytes.
    pub packet_size: u32,
    pub dscp: u8,
    /// Bound of each datagram's departure jitter (uniform in `[0, jitter]`, no drift);
    /// `app::burst` explains the timing model.
    pub jitter: Time,
    /// Bound of each source's clock offset in ppm (each draws its own, uniform in ±bound).
    pub clock_ppm: f64,
}
