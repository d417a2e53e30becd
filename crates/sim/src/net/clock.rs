//! A port's own oscillator: the link serializes at `rate × (1 + offset)` by the network's
//! clock, with the offset drawn once per port from its seeded stream.
//!
//! Two ports of the same nominal rate with exact clocks share one period to the picosecond: an
//! unpaced sender's line-rate train then meets an equally fast bottleneck's departures at one
//! fixed point of that period and wins (or loses) every freed queue slot for a whole burst
//! (docs/scenarios.md, "port clocks"; `tests/port_clocks.rs`). Real NICs and switch ports each
//! run on their own crystal, so their periods differ by a few ppm and every alignment is visited.
//!
//! The offset is in parts per billion and serialization stays integer picoseconds, exact and
//! O(1): `ceil(wire_bytes × 8 × 10¹² × 10⁹ / (bps × (10⁹ + ppb)))`, with the fraction reduced
//! once at construction. With a zero offset this is `Rate::serialization_time` to the
//! picosecond.

use crate::rng;
use crate::time::Time;
use crate::units::Rate;

/// burstlab's default bound on a port's clock offset, ±20 ppm: the usual rating of the crystal
/// oscillators that clock NICs and switch ports, well inside the ±100 ppm IEEE 802.3 allows a
/// PHY's transmit clock (e.g. 100GBASE-LR4, clause 88: each lane signals at 25.78125 GBd
/// ± 100 ppm). The same bound as the burst sources' `clock_ppm`.
pub const DEFAULT_PORT_CLOCK_PPM: f64 = 20.0;

/// Largest accepted `[topology] clock_ppm`: the burst sources' bound, 1000 ppm, ten times IEEE
/// 802.3's ±100 ppm, so a scenario can exaggerate the drift but not turn it into another rate.
pub const MAX_PORT_CLOCK_PPM: f64 = crate::app::burst::MAX_CLOCK_PPM;

/// Name of the RNG stream of port clock offsets (one stream per port index).
pub const PORT_CLOCK_STREAM: &str = "port-clock";

const PPB: u128 = 1_000_000_000;
const PPB_PER_PPM: f64 = 1000.0;
/// Numerator per wire byte: 8 bits × 10¹² ps/s × 10⁹ (the ppb scale of the denominator).
const PS_PPB_PER_BYTE: u128 = 8 * Time::PS_PER_S as u128 * PPB;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortClock {
    /// Offset in parts per billion; positive: the port's clock runs fast, so it serializes
    /// faster than its nominal rate by the network's clock.
    pub ppb: i64,
    /// `8 × 10¹² × 10⁹ / g` and `bps × (10⁹ + ppb) / g`, `g` their gcd: serialization of `n`
    /// wire bytes is `ceil(n × num / den)` ps.
    num: u128,
    den: u128,
}

impl PortClock {
    /// A clock `ppb` parts per billion off nominal for a link of `rate`.
    pub fn new(rate: Rate, ppb: i64) -> PortClock {
        debug_assert!(rate.bps() > 0);
        debug_assert!(ppb.unsigned_abs() < PPB as u64, "clock offset of a whole rate");
        let num = PS_PPB_PER_BYTE;
        let den = rate.bps() as u128 * (PPB as i128 + ppb as i128) as u128;
        let g = gcd(num, den);
        PortClock { ppb, num: num / g, den: den / g }
    }

    /// An exact clock.
    pub fn exact(rate: Rate) -> PortClock {
        PortClock::new(rate, 0)
    }

    /// Port `index`'s clock in a run seeded `seed`: offset uniform in ±`clock_ppm`.
    pub fn seeded(rate: Rate, seed: u64, index: u64, clock_ppm: f64) -> PortClock {
        let bound = (clock_ppm.clamp(0.0, MAX_PORT_CLOCK_PPM) * PPB_PER_PPM).round() as u64;
        let draw = rng::stream(seed, PORT_CLOCK_STREAM, index).below(2 * bound + 1);
        PortClock::new(rate, draw as i64 - bound as i64)
    }

    /// Time on the wire for `wire_bytes` (framing included), rounded up to the picosecond.
    #[inline]
    pub fn serialization(&self, wire_bytes: u64) -> Time {
        let n = wire_bytes as u128 * self.num;
        // After the reduction both sides fit 64 bits at every Ethernet rate: a hardware divide
        // instead of the 128-bit routine (same quotient).
        if (n | self.den) >> 64 == 0 {
            Time((n as u64).div_ceil(self.den as u64))
        } else {
            Time(n.div_ceil(self.den) as u64)
        }
    }

    /// The rate this port serializes at by the network's clock, bit/s.
    pub fn effective_bps(&self, rate: Rate) -> f64 {
        rate.bps() as f64 * (1.0 + self.ppb as f64 / PPB as f64)
    }
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_default_20_ppm_max_1000_ppm() {
        assert_eq!(DEFAULT_PORT_CLOCK_PPM, 20.0);
        assert_eq!(MAX_PORT_CLOCK_PPM, 1000.0);
        assert_eq!(PORT_CLOCK_STREAM, "port-clock");
    }

    #[test]
    fn exact_matches_rate_serialization_to_the_picosecond() {
        for rate in [
            Rate(3),
            Rate::from_mbps(1500),
            Rate::from_gbps(10),
            Rate::from_gbps(100),
            Rate::from_gbps(400),
        ] {
            let c = PortClock::exact(rate);
            for bytes in [1u64, 64, 1538, 9038, 65_574] {
                assert_eq!(
                    c.serialization(bytes),
                    rate.serialization_time(bytes),
                    "{rate:?} {bytes}"
                );
            }
        }
    }

    #[test]
    fn offset_fast_clock_shortens_a_jumbo_frame_by_its_ppm() {
        // 9038 bytes at 100 Gbit/s: 723,040 ps exact; at +20 ppm 723,040 / 1.00002 =
        // 723,025.539… → 723,026 ps; at −20 ppm 723,054.46… → 723,055 ps.
        let r = Rate::from_gbps(100);
        assert_eq!(PortClock::new(r, 0).serialization(9038), Time(723_040));
        assert_eq!(PortClock::new(r, 20_000).serialization(9038), Time(723_026));
        assert_eq!(PortClock::new(r, -20_000).serialization(9038), Time(723_055));
    }

    #[test]
    fn offset_is_exact_over_a_long_train() {
        // One million 9038-byte frames at −20 ppm: the rounding of each frame is at most 1 ps,
        // and the total is within that of the exact rational time.
        let c = PortClock::new(Rate::from_gbps(100), -20_000);
        let per_frame = c.serialization(9038).ps() as f64;
        let exact = 9038.0 * 8.0 / (1e11 * (1.0 - 20e-6)) * 1e12;
        assert!(per_frame >= exact && per_frame < exact + 1.0, "{per_frame} vs {exact}");
        assert!((c.effective_bps(Rate::from_gbps(100)) - 1e11 * (1.0 - 20e-6)).abs() < 1.0);
    }

    #[test]
    fn offset_wide_operands_agree_with_the_unreduced_fraction() {
        // 2^40 wire bytes overflow 64 bits in the numerator: the 128-bit path, checked against
        // ceil(bytes × 8 × 10²¹ / (bps × (10⁹ + ppb))) computed without reduction.
        for (rate, ppb) in
            [(Rate::from_gbps(100), -20_000), (Rate(3), 7), (Rate::from_gbps(1600), 999_999)]
        {
            for bytes in [9038u64, 1 << 40] {
                let den = rate.bps() as u128 * (1_000_000_000 + ppb) as u128;
                let exact = (bytes as u128 * PS_PPB_PER_BYTE).div_ceil(den) as u64;
                assert_eq!(
                    PortClock::new(rate, ppb as i64).serialization(bytes),
                    Time(exact),
                    "{rate:?} {ppb} {bytes}"
                );
            }
        }
    }

    #[test]
    fn seeded_offsets_stay_within_bound_and_average_near_zero() {
        let r = Rate::from_gbps(100);
        let ppbs: Vec<i64> = (0..20_000).map(|i| PortClock::seeded(r, 7, i, 20.0).ppb).collect();
        assert!(ppbs.iter().all(|p| p.abs() <= 20_000));
        // Uniform on ±20,000 ppb: sd 11,547; the mean of 20,000 has sd ~82 ppb.
        let mean = ppbs.iter().sum::<i64>() as f64 / ppbs.len() as f64;
        assert!(mean.abs() < 400.0, "mean {mean}");
        // Both halves and both tails are visited.
        assert!(ppbs.iter().any(|p| *p > 19_000) && ppbs.iter().any(|p| *p < -19_000));
    }

    #[test]
    fn seeded_is_deterministic_per_seed_and_index() {
        let r = Rate::from_gbps(100);
        assert_eq!(PortClock::seeded(r, 1, 3, 20.0), PortClock::seeded(r, 1, 3, 20.0));
        assert_ne!(PortClock::seeded(r, 1, 3, 20.0).ppb, PortClock::seeded(r, 1, 4, 20.0).ppb);
        assert_ne!(PortClock::seeded(r, 1, 3, 20.0).ppb, PortClock::seeded(r, 2, 3, 20.0).ppb);
    }

    #[test]
    fn seeded_zero_ppm_is_exact() {
        for i in 0..100 {
            assert_eq!(
                PortClock::seeded(Rate::from_gbps(100), 9, i, 0.0),
                PortClock::exact(Rate::from_gbps(100))
            );
        }
    }
}
