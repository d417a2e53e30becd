//! S-ECN, slope-based ECN marking: Shan, Ren, Cheng, Shu & Guo, "Micro-burst in Data Centers:
//! Observations, Analysis, and Mitigations", IEEE ICNP 2018, §IV-B–C (seeds/004).
//!
//! A queue's slope is its arrival rate less the port rate R. For each arriving packet of P bytes,
//! I after the previous arrival, the arrival rate is P/I, so the slope is `s = P/I − R`, and S-ECN
//! marks with probability `s/R` clamped to [0, 1] — the paper's equation (2):
//!
//! ```text
//! p = 0                    if P ≤ R·I
//! p = (P − R·I) / (R·I)    if R·I < P < 2R·I
//! p = 1                    if P ≥ 2R·I
//! ```
//!
//! Its NetFPGA switch has no random numbers and no divider, so it marks when the sum of
//! `P_j − R·I_j` over the packets left unmarked exceeds the current `R·I_K`: at a steady
//! slope that marks every ⌊1/p⌋ + 1-th packet, p's rate rounded down to a unit fraction.
//! The paper states the sum and the comparison but not what happens to the sum outside a
//! steady climb; we fix two things it leaves open (docs/scenarios.md, "S-ECN"):
//! - the sum restarts at 0 after every mark (it runs over "the number of unmarked packets", K,
//!   which a mark resets);
//! - it never goes below 0: a negative slope (a gap in arrivals; an idle port makes `R·I`
//!   huge) cannot bank credit that would hold back the marks of the next climb, which the
//!   paper marks "as soon as queue length begins to increase".
//!
//! Above the ECN threshold K every packet is marked (§IV-D: "marks all packets when queue length
//! is larger than ECN threshold"); the queue compares K at arrival, as DCTCP's enqueue marking.
//!
//! Units: P counts the bytes the port's rate is measured in, the IP datagram plus Ethernet
//! framing (`ETHERNET_OVERHEAD_BYTES`), so a single input at exactly line rate has slope 0 and is
//! never marked. Products are exact integers in bit·ps/s: `P·8·10^12` against `R·I` with R in
//! bit/s and I in ps. The first packet a queue sees has no interval: slope 0.

use crate::packet::Packet;
use crate::rng;
use crate::time::Time;
use crate::units::ETHERNET_OVERHEAD_BYTES;

/// Which of the paper's two forms marks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlopeForm {
    /// Equation (2), with one uniform draw per arrival in the middle region. The draw is a hash
    /// of the run's `seed` and the packet (flow, sequence, arrival time), so a run is
    /// deterministic and two ports never share draws.
    Probabilistic { seed: u64 },
    /// §IV-C: the accumulator `Σ(P_j − R·I_j) > R·I_K`, with no random numbers.
    Hardware,
}

/// Picoseconds per second: P in bytes × 8 × this is comparable with R (bit/s) × I (ps).
const PS_PER_S: u128 = Time::PS_PER_S as u128;

/// One arrival seen by the slope rule: `p_rate = P·8·10^12`, `r_i = R·I` (bit·ps/s).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Arrival {
    p_rate: u128,
    r_i: u128,
}

/// Equation (2): the marking probability of `wire_bytes` arriving `interval` after the previous
/// packet at a port of `rate_bps`.
pub fn probability(wire_bytes: u32, interval: Time, rate_bps: u64) -> f64 {
    let a = Arrival::new(wire_bytes, interval, rate_bps);
    if a.p_rate <= a.r_i {
        0.0
    } else if a.p_rate >= 2 * a.r_i {
        1.0
    } else {
        (a.p_rate - a.r_i) as f64 / a.r_i as f64
    }
}

impl Arrival {
    fn new(wire_bytes: u32, interval: Time, rate_bps: u64) -> Arrival {
        Arrival {
            p_rate: u128::from(wire_bytes) * 8 * PS_PER_S,
            r_i: u128::from(rate_bps) * u128::from(interval.ps()),
        }
    }
}

/// The slope marker of one queue: its form, the port rate and the state both forms keep.
#[derive(Clone, Debug)]
pub(super) struct SlopeMarker {
    form: SlopeForm,
    /// R, the port's nominal rate (bit/s); 0 until the port sets it.
    rate_bps: u64,
    /// The previous packet offered to this queue, dropped or not.
    last_arrival: Option<Time>,
    /// Hardware form: Σ(P_j − R·I_j) since the last mark, bit·ps/s, never below 0.
    sum: u128,
}

impl SlopeMarker {
    pub(super) fn new(form: SlopeForm) -> SlopeMarker {
        SlopeMarker { form, rate_bps: 0, last_arrival: None, sum: 0 }
    }

    pub(super) fn set_rate(&mut self, rate_bps: u64) {
        self.rate_bps = rate_bps;
    }

    /// A packet the queue could not take still arrived: the next interval starts at it.
    pub(super) fn missed(&mut self, now: Time) {
        self.last_arrival = Some(now);
    }

    /// Whether the packet arriving at `now` is to be marked; `above_k` says the queue it joins
    /// already exceeds the threshold. The decision does not look at the packet's codepoint.
    pub(super) fn decide(&mut self, now: Time, packet: &Packet, above_k: bool) -> bool {
        assert!(self.rate_bps > 0, "S-ECN queue without a port rate (PortQueues::set_line_rate)");
        let arrival = self.last_arrival.map(|prev| {
            let wire = packet.ip_bytes + ETHERNET_OVERHEAD_BYTES;
            Arrival::new(wire, now.saturating_sub(prev), self.rate_bps)
        });
        self.last_arrival = Some(now);
        let mark = match self.form {
            SlopeForm::Probabilistic { seed } => {
                above_k || arrival.is_some_and(|a| draw(a, seed, now, packet))
            }
            SlopeForm::Hardware => {
                self.sum = match arrival {
                    Some(a) => (self.sum + a.p_rate).saturating_sub(a.r_i),
                    None => 0,
                };
                above_k || arrival.is_some_and(|a| self.sum > a.r_i)
            }
        };
        if mark {
            self.sum = 0;
        }
        mark
    }
}

/// Equation (2) with one uniform draw where 0 < p < 1.
fn draw(a: Arrival, seed: u64, now: Time, packet: &Packet) -> bool {
    if a.p_rate <= a.r_i {
        return false;
    }
    if a.p_rate >= 2 * a.r_i {
        return true;
    }
    let key = rng::hash(rng::hash(seed, u64::from(packet.flow)), packet.seq);
    let u = (rng::hash(key, now.ps()) >> 11) as f64 / (1u64 << 53) as f64;
    u * (a.r_i as f64) < (a.p_rate - a.r_i) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Kind;

    const GBPS: u64 = 1_000_000_000;
    /// 1500-byte IP packets: 1538 wire bytes, 12.304 µs at 1 Gbit/s.
    const WIRE: u32 = 1500 + ETHERNET_OVERHEAD_BYTES;
    const LINE_GAP: Time = Time(12_304_000);

    fn pkt(flow: u32, seq: u64) -> Packet {
        let mut p = Packet::new(Kind::Data, flow, 0, 1, 1500);
        p.seq = seq;
        p
    }

    /// Marks of `n` 1500-byte arrivals `gap` apart at a 1 Gbit/s queue below K.
    fn marks(form: SlopeForm, gap: Time, n: u64) -> Vec<bool> {
        let mut m = SlopeMarker::new(form);
        m.set_rate(GBPS);
        (0..n).map(|k| m.decide(gap * k, &pkt(1, k * 1448), false)).collect()
    }

    // ---- Equation (2): the three regions ----

    #[test]
    fn probability_is_zero_at_or_below_the_port_rate() {
        // One input at exactly line rate: P = R·I.
        assert_eq!(probability(WIRE, LINE_GAP, GBPS), 0.0);
        assert_eq!(probability(WIRE, LINE_GAP * 3, GBPS), 0.0);
        // An idle port: I is huge.
        assert_eq!(probability(WIRE, Time::from_secs_f64(1.0), GBPS), 0.0);
    }

    #[test]
    fn probability_is_the_slope_over_r_between_r_and_2r() {
        // Arrivals at 1.25 R: I = P/(1.25 R) ⇒ p = 0.25.
        let p = probability(WIRE, Time(LINE_GAP.ps() * 4 / 5), GBPS);
        assert!((p - 0.25).abs() < 1e-12, "p {p}");
        // At 1.6 R: p = 0.6.
        let p = probability(WIRE, Time(LINE_GAP.ps() * 5 / 8), GBPS);
        assert!((p - 0.6).abs() < 1e-12, "p {p}");
        // Just above R and just below 2R.
        let p = probability(WIRE, LINE_GAP - Time(1), GBPS);
        assert!(p > 0.0 && p < 1e-6, "p {p}");
        let p = probability(WIRE, Time(LINE_GAP.ps() / 2 + 1), GBPS);
        assert!(p > 0.999 && p < 1.0, "p {p}");
    }

    #[test]
    fn probability_is_one_at_twice_the_port_rate_and_above() {
        assert_eq!(probability(WIRE, Time(LINE_GAP.ps() / 2), GBPS), 1.0);
        assert_eq!(probability(WIRE, Time(LINE_GAP.ps() / 9), GBPS), 1.0);
        // Two packets at the same instant.
        assert_eq!(probability(WIRE, Time::ZERO, GBPS), 1.0);
    }

    // ---- Probabilistic form ----

    #[test]
    fn probabilistic_marks_at_the_equation_rate() {
        let seed = 7;
        let form = SlopeForm::Probabilistic { seed };
        for (num, den, p) in [(4u64, 5u64, 0.25), (5, 8, 0.6)] {
            let gap = Time(LINE_GAP.ps() * num / den);
            let n = 40_000;
            let m = marks(form, gap, n + 1);
            assert!(!m[0], "the first arrival has no interval");
            let rate = m[1..].iter().filter(|&&x| x).count() as f64 / n as f64;
            // Binomial standard deviation ≤ 0.0025 at n = 40,000: 4σ ≈ 0.01.
            assert!((rate - p).abs() < 0.01, "p {p}: marked {rate}");
        }
        assert!(marks(form, LINE_GAP, 1000).iter().all(|&x| !x));
        assert!(marks(form, Time(LINE_GAP.ps() / 2), 1000)[1..].iter().all(|&x| x));
    }

    #[test]
    fn probabilistic_draws_follow_the_seed() {
        let gap = Time(LINE_GAP.ps() * 2 / 3);
        let a = marks(SlopeForm::Probabilistic { seed: 1 }, gap, 2000);
        assert_eq!(a, marks(SlopeForm::Probabilistic { seed: 1 }, gap, 2000));
        assert_ne!(a, marks(SlopeForm::Probabilistic { seed: 2 }, gap, 2000));
    }

    // ---- Hardware form: the accumulator ----

    #[test]
    fn hardware_marks_when_the_sum_exceeds_r_i() {
        // p = 0.25: each arrival adds R·I/4; the sum passes R·I (strictly) at the 5th.
        let m = marks(SlopeForm::Hardware, Time(LINE_GAP.ps() * 4 / 5), 16);
        let at: Vec<u64> = (0..16).filter(|&k| m[k as usize]).collect();
        // Arrival 0 has no interval; 1–5 accumulate, 5 marks and restarts the sum; then 10, 15.
        assert_eq!(at, [5, 10, 15]);
        // p = 0.3: 4 × 0.3 = 1.2 > 1 ⇒ every 4th.
        let m = marks(SlopeForm::Hardware, Time(LINE_GAP.ps() * 10 / 13), 13);
        let at: Vec<u64> = (0..13).filter(|&k| m[k as usize]).collect();
        assert_eq!(at, [4, 8, 12]);
    }

    #[test]
    fn hardware_marks_every_packet_above_2r_and_none_at_r() {
        let m = marks(SlopeForm::Hardware, Time(LINE_GAP.ps() / 3), 50);
        assert!(m[1..].iter().all(|&x| x));
        assert!(marks(SlopeForm::Hardware, LINE_GAP, 50).iter().all(|&x| !x));
    }

    #[test]
    fn hardware_sum_is_clamped_at_zero_after_a_gap() {
        let mut m = SlopeMarker::new(SlopeForm::Hardware);
        m.set_rate(GBPS);
        let fast = Time(LINE_GAP.ps() * 4 / 5);
        let mut t = Time::ZERO;
        let mut step = |m: &mut SlopeMarker, gap: Time, k: u64| {
            t += gap;
            m.decide(t, &pkt(1, k), false)
        };
        // Three fast arrivals bank 0.75 R·I, then a 1 ms gap.
        let early: Vec<bool> = (0..4).map(|k| step(&mut m, fast, k)).collect();
        assert_eq!(early, [false, false, false, false]);
        assert!(!step(&mut m, Time::from_us(1000), 4));
        // Without the clamp the gap's −R·I would hold back marks for ~400 arrivals; with it the
        // next climb marks at its 5th arrival, like the first.
        let next: Vec<bool> = (5..10).map(|k| step(&mut m, fast, k)).collect();
        assert_eq!(next, [false, false, false, false, true]);
    }

    #[test]
    fn threshold_marks_everything_and_restarts_the_sum() {
        for form in [SlopeForm::Hardware, SlopeForm::Probabilistic { seed: 3 }] {
            let mut m = SlopeMarker::new(form);
            m.set_rate(GBPS);
            // Slow arrivals (slope < 0) are marked only above K.
            assert!(m.decide(Time::ZERO, &pkt(1, 0), true));
            assert!(!m.decide(LINE_GAP * 2, &pkt(1, 1), false));
            assert!(m.decide(LINE_GAP * 4, &pkt(1, 2), true));
        }
        let mut m = SlopeMarker::new(SlopeForm::Hardware);
        m.set_rate(GBPS);
        let fast = Time(LINE_GAP.ps() * 4 / 5);
        let mut marks = vec![];
        for k in 0..9u64 {
            // Arrival 3 is above K: it is marked and the count starts again from it.
            marks.push(m.decide(fast * k, &pkt(1, k), k == 3));
        }
        assert_eq!(marks, [false, false, false, true, false, false, false, false, true]);
    }

    #[test]
    #[should_panic(expected = "without a port rate")]
    fn a_marker_without_a_rate_refuses_to_guess() {
        SlopeMarker::new(SlopeForm::Hardware).decide(Time::ZERO, &pkt(1, 0), false);
    }
}
