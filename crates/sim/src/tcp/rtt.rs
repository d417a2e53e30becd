//! RTT estimation and the retransmission timeout as Linux computes them:
//! `net/ipv4/tcp_input.c` `tcp_rtt_estimator()`, `tcp_set_rto()`, `__tcp_set_rto()`,
//! `tcp_bound_rto()`; constants from `include/net/tcp.h`; backoff from `net/ipv4/tcp_timer.c`
//! `tcp_retransmit_timer()` and `inet_csk_rto_backoff()`.
//!
//! Same EWMA as RFC 6298 (gains 1/8 and 1/4) in Linux's fixed point: `srtt_us` holds 8·SRTT,
//! `mdev_us` 4·mdev, both in µs. Linux departs from the RFC in three ways we keep:
//! - RTO = SRTT + `rttvar`, where `rttvar` tracks the largest 4·mdev of the last RTT and never
//!   goes below `rto_min` (200 ms), so the floor is on the variance term, not on the RTO; the
//!   first sample R gives RTO = 3R;
//! - `rttvar` may only fall once per RTT (when `snd_una` passes `rtt_seq`), by a quarter of the
//!   gap to that RTT's largest mdev;
//! - a sample below SRTT updates mdev with gain 1/32 instead of 1/4 (Eifel-like), so an RTT drop
//!   does not inflate the RTO.
//!
//! Deviation (docs/fidelity.md): the RTO is kept in µs; Linux rounds it up to jiffies.

use crate::time::Time;

/// `TCP_RTO_MIN` (`include/net/tcp.h`): HZ/5 = 200 ms, the default floor on `rttvar`.
pub const TCP_RTO_MIN: Time = Time::from_ms(200);
/// `TCP_RTO_MAX` (`include/net/tcp.h`): 120 s, cap on the RTO with and without backoff.
pub const TCP_RTO_MAX: Time = Time::from_secs(120);
/// `TCP_TIMEOUT_INIT` (`include/net/tcp.h`): 1 s, the RTO before any RTT sample (RFC 6298 §2.1).
pub const TCP_TIMEOUT_INIT: Time = Time::from_secs(1);

/// The RTT state of one `tcp_sock` (`srtt_us`, `mdev_us`, `mdev_max_us`, `rttvar_us`,
/// `rtt_seq`) and of its `inet_connection_sock` (`icsk_rto`, `icsk_backoff`).
#[derive(Clone, Debug)]
pub struct RttEstimator {
    /// 8·SRTT, µs; 0 = no sample yet.
    srtt_us: u32,
    /// 4·mdev, µs (the RFC's RTTVAR is `mdev_us / 4`).
    mdev_us: u32,
    /// Largest `mdev_us` in the current RTT, at least `rto_min`.
    mdev_max_us: u32,
    /// The RTO's variance term, µs: follows `mdev_max_us` up at once, down once per RTT.
    rttvar_us: u32,
    /// `snd_nxt` when the current RTT began; the RTT ends when `snd_una` passes it.
    rtt_seq: u64,
    /// `tcp_rto_min_us()`: the floor on `rttvar_us`.
    rto_min_us: u32,
    /// `icsk_rto` without backoff.
    rto: Time,
    /// `icsk_backoff`: RTO expiries since the last valid sample.
    backoff: u32,
}

impl RttEstimator {
    /// A connection before any sample: RTO = [`TCP_TIMEOUT_INIT`]. `rto_min` is the route's
    /// `rto_min` ([`TCP_RTO_MIN`] by default).
    pub fn new(rto_min: Time) -> Self {
        RttEstimator {
            srtt_us: 0,
            // tcp_init_sock(): mdev starts at the initial timeout.
            mdev_us: TCP_TIMEOUT_INIT.as_us() as u32,
            mdev_max_us: 0,
            rttvar_us: 0,
            rtt_seq: 0,
            rto_min_us: rto_min.as_us().min(u32::MAX as u64) as u32,
            rto: TCP_TIMEOUT_INIT,
            backoff: 0,
        }
    }

    /// A valid RTT sample (Karn's rule is the caller's): `tcp_rtt_estimator()` then
    /// `tcp_set_rto()`. `snd_una` is after this ACK's update, `snd_nxt` the next byte to send.
    pub fn on_sample(&mut self, rtt: Time, snd_una: u64, snd_nxt: u64) {
        // srtt_us holds 8·RTT in a u32: RTTs are below 536 s.
        let m = rtt.as_us().min((u32::MAX >> 3) as u64) as i64;
        let srtt = if self.srtt_us != 0 {
            self.smooth(m, snd_una, snd_nxt)
        } else {
            self.first(m, snd_nxt)
        };
        self.srtt_us = srtt.max(1);
        self.set_rto();
    }

    /// First sample: SRTT = R, 4·mdev = 2R, so that RTO = 3R.
    fn first(&mut self, m: i64, snd_nxt: u64) -> u32 {
        self.mdev_us = (m << 1) as u32;
        self.rttvar_us = self.mdev_us.max(self.rto_min_us);
        self.mdev_max_us = self.rttvar_us;
        self.rtt_seq = snd_nxt;
        (m << 3) as u32
    }

    /// Later samples: the EWMAs, then the once-per-RTT `rttvar` decay.
    fn smooth(&mut self, sample: i64, snd_una: u64, snd_nxt: u64) -> u32 {
        let srtt = self.srtt_us as i64;
        let mut m = sample - (srtt >> 3); // error of the estimate
        let srtt = srtt + m; // SRTT += err/8 (srtt is ×8)
        let quarter_mdev = (self.mdev_us >> 2) as i64;
        if m < 0 {
            // RTT fell: gain 1/32 on mdev, and only if the drop exceeds mdev.
            m = -m - quarter_mdev;
            if m > 0 {
                m >>= 3;
            }
        } else {
            m -= quarter_mdev;
        }
        self.mdev_us = (self.mdev_us as i64 + m) as u32; // mdev += (|err| − mdev)/4 (mdev is ×4)
        if self.mdev_us > self.mdev_max_us {
            self.mdev_max_us = self.mdev_us;
            self.rttvar_us = self.rttvar_us.max(self.mdev_max_us);
        }
        // after(snd_una, rtt_seq): an RTT has passed since the last decay.
        if snd_una > self.rtt_seq {
            if self.mdev_max_us < self.rttvar_us {
                self.rttvar_us -= (self.rttvar_us - self.mdev_max_us) >> 2;
            }
            self.rtt_seq = snd_nxt;
            self.mdev_max_us = self.rto_min_us;
        }
        srtt as u32
    }

    /// `tcp_set_rto()`: `__tcp_set_rto()` = SRTT + rttvar, bounded by `tcp_bound_rto()`.
    fn set_rto(&mut self) {
        let us = (self.srtt_us >> 3) as u64 + self.rttvar_us as u64;
        self.rto = Time::from_us(us).min(TCP_RTO_MAX);
    }

    /// Smoothed RTT, unscaled; `None` before the first sample.
    pub fn srtt(&self) -> Option<Time> {
        (self.srtt_us != 0).then(|| Time::from_us((self.srtt_us >> 3) as u64))
    }

    /// Smoothed RTT in µs, unscaled; 0 before the first sample (as [`super::cc::Sock`] wants).
    pub fn srtt_us(&self) -> u32 {
        self.srtt_us >> 3
    }

    /// The RTO's variance term (Linux `rttvar_us`: 4·mdev at its recent peak, ≥ `rto_min`),
    /// so that `base_rto = srtt + rttvar`. 0 before the first sample.
    pub fn rttvar(&self) -> Time {
        Time::from_us(self.rttvar_us as u64)
    }

    /// The mean deviation, RFC 6298's RTTVAR: what `ss -ti` prints after the `/` in `rtt:`
    /// (`tcpi_rttvar = mdev_us >> 2`).
    pub fn mdev(&self) -> Time {
        Time::from_us((self.mdev_us >> 2) as u64)
    }

    /// `icsk_rto`: the RTO without backoff.
    pub fn base_rto(&self) -> Time {
        self.rto
    }

    /// The timer to arm: `base_rto << backoff`, at most [`TCP_RTO_MAX`] (`inet_csk_rto_backoff()`).
    pub fn rto(&self) -> Time {
        let ps = self.rto.ps();
        // A shift past the leading zeros would overflow, and is far above the cap anyway.
        if self.backoff >= 64 || self.backoff > ps.leading_zeros() {
            return TCP_RTO_MAX;
        }
        Time::from_ps(ps << self.backoff).min(TCP_RTO_MAX)
    }

    /// An RTO expired (`icsk_backoff++` in `tcp_retransmit_timer()`): the next timer doubles.
    pub fn backoff(&mut self) {
        self.backoff = self.backoff.saturating_add(1);
    }

    /// A valid RTT sample for new data arrived (`tcp_ack_update_rtt()` clears `icsk_backoff`).
    pub fn reset_backoff(&mut self) {
        self.backoff = 0;
    }

    /// RTO expiries since the last valid sample (`icsk_backoff`).
    pub fn backoffs(&self) -> u32 {
        self.backoff
    }
}

impl Default for RttEstimator {
    fn default() -> Self {
        RttEstimator::new(TCP_RTO_MIN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1448;

    fn ms(x: u64) -> Time {
        Time::from_ms(x)
    }

    /// Feed `rounds` RTTs of `per_rtt` samples of `rtt`, with snd_una advancing one MSS per
    /// sample and a window of `per_rtt` MSS, so that each round passes `rtt_seq` once.
    fn steady(e: &mut RttEstimator, rtt: Time, rounds: u64, per_rtt: u64, una: &mut u64) {
        for _ in 0..rounds * per_rtt {
            *una += MSS;
            e.on_sample(rtt, *una, *una + per_rtt * MSS);
        }
    }

    // ---- constants ----

    #[test]
    fn constants_match_include_net_tcp_h() {
        assert_eq!(TCP_RTO_MIN, ms(200));
        assert_eq!(TCP_RTO_MAX, Time::from_secs(120));
        assert_eq!(TCP_TIMEOUT_INIT, Time::from_secs(1));
    }

    // ---- before any sample ----

    #[test]
    fn no_sample_rto_is_one_second() {
        let e = RttEstimator::default();
        assert_eq!(e.rto(), Time::from_secs(1));
        assert_eq!(e.base_rto(), Time::from_secs(1));
        assert_eq!((e.srtt(), e.srtt_us()), (None, 0));
        // tcp_init_sock() sets mdev to the initial timeout; ss shows 250 ms.
        assert_eq!(e.mdev(), ms(250));
    }

    // ---- first sample ----

    #[test]
    fn first_sample_rto_is_three_rtt() {
        let mut e = RttEstimator::default();
        e.on_sample(ms(209), 0, 100 * MSS);
        assert_eq!(e.srtt(), Some(ms(209)));
        assert_eq!(e.srtt_us(), 209_000);
        assert_eq!(e.rttvar(), ms(418));
        assert_eq!(e.mdev(), Time::from_us(104_500));
        assert_eq!(e.rto(), ms(627));
    }

    #[test]
    fn first_small_sample_rttvar_floored_at_rto_min() {
        let mut e = RttEstimator::default();
        e.on_sample(ms(10), 0, MSS);
        assert_eq!(e.rttvar(), ms(200));
        assert_eq!(e.rto(), ms(210));
    }

    #[test]
    fn configurable_rto_min_5ms() {
        let mut e = RttEstimator::new(ms(5));
        e.on_sample(ms(1), 0, MSS);
        // 4·mdev = 2 ms < 5 ms floor.
        assert_eq!(e.rto(), ms(6));
        e.on_sample(ms(10), 0, MSS);
        assert!(e.rto() > ms(10) && e.rto() < ms(40), "{}", e.rto());
        let mut una = MSS;
        let mut e = RttEstimator::new(ms(5));
        e.on_sample(Time::from_us(100), 0, MSS);
        steady(&mut e, Time::from_us(100), 100, 10, &mut una);
        // Steady state: srtt + rto_min.
        assert_eq!(e.rto(), Time::from_us(5_100));
    }

    // ---- steady state ----

    #[test]
    fn steady_209ms_rto_is_srtt_plus_200ms_floor() {
        let mut e = RttEstimator::default();
        let mut una = 0;
        e.on_sample(ms(209), una, 10 * MSS);
        steady(&mut e, ms(209), 60, 10, &mut una);
        assert_eq!(e.srtt(), Some(ms(209)));
        // The integer decay `(rttvar − floor) >> 2` stalls within 3 µs of the floor.
        assert!(e.rttvar() >= ms(200) && e.rttvar() < ms(200) + Time::from_us(4));
        assert!(e.rto() >= ms(409) && e.rto() < ms(409) + Time::from_us(4));
        assert_eq!(e.mdev(), Time::ZERO);
    }

    #[test]
    fn ewma_gains_are_one_eighth_and_one_quarter() {
        let mut e = RttEstimator::default();
        e.on_sample(ms(100), 0, MSS);
        // RTT rises by 80 ms: SRTT += 80/8; mdev = 3/4·50 + 1/4·80 = 57.5 ms.
        e.on_sample(ms(180), 0, MSS);
        assert_eq!(e.srtt(), Some(ms(110)));
        assert_eq!(e.mdev(), Time::from_us(57_500));
    }

    #[test]
    fn rtt_drop_updates_mdev_with_gain_one_32nd() {
        let mut e = RttEstimator::default();
        e.on_sample(ms(100), 0, MSS);
        // RTT falls by 80 ms: SRTT −= 10 ms; mdev += (80 − 50)/32 ms, not /4.
        e.on_sample(ms(20), 0, MSS);
        assert_eq!(e.srtt(), Some(ms(90)));
        assert_eq!(e.mdev(), Time::from_us(50_000 + 30_000 / 32));
        // A drop smaller than mdev shrinks mdev at the usual 1/4.
        let mut e = RttEstimator::default();
        e.on_sample(ms(100), 0, MSS);
        e.on_sample(ms(80), 0, MSS);
        assert_eq!(e.mdev(), Time::from_us(50_000 - (50_000 - 20_000) / 4));
    }

    #[test]
    fn rttvar_falls_only_once_per_rtt() {
        let mut e = RttEstimator::new(ms(5));
        e.on_sample(ms(100), 0, 10 * MSS); // rtt_seq = 10 MSS; rttvar = 200 ms
        // Nine samples inside the first RTT: mdev decays, rttvar does not.
        for i in 1..10 {
            e.on_sample(ms(100), i * MSS, 10 * MSS);
            assert_eq!(e.rttvar(), ms(200));
            assert_eq!(e.rto(), ms(300));
        }
        assert!(e.mdev() < ms(4));
        // snd_una passes rtt_seq: rttvar drops by a quarter of the gap to this RTT's peak
        // mdev_max (still the first sample's 200 ms), i.e. not at all; the peak resets.
        e.on_sample(ms(100), 11 * MSS, 20 * MSS);
        assert_eq!(e.rttvar(), ms(200));
        // Next RTT: mdev keeps decaying; its peak is the round's first value (above the 5 ms
        // floor). rttvar falls by a quarter of the gap to that peak, once, at the round's end.
        e.on_sample(ms(100), 12 * MSS, 20 * MSS);
        let peak = e.mdev_us;
        assert!(peak > 5_000 && peak < 10_000, "{peak}");
        for i in 13..=20 {
            e.on_sample(ms(100), i * MSS, 20 * MSS);
            assert_eq!(e.rttvar(), ms(200));
        }
        e.on_sample(ms(100), 21 * MSS, 30 * MSS);
        assert_eq!(e.rttvar(), Time::from_us((200_000 - (200_000 - peak) / 4) as u64));
    }

    #[test]
    fn rttvar_rises_at_once_within_an_rtt() {
        let mut e = RttEstimator::default();
        e.on_sample(ms(100), 0, 10 * MSS);
        assert_eq!(e.rttvar(), ms(200));
        // Error 400 ms: 4·mdev = 3/4·200 + 400 = 550 ms, above rttvar: taken immediately.
        e.on_sample(ms(500), MSS, 10 * MSS);
        assert_eq!(e.rttvar(), ms(550));
        assert_eq!(e.rto(), ms(150 + 550));
    }

    // ---- bounds and backoff ----

    #[test]
    fn base_rto_capped_at_120s() {
        let mut e = RttEstimator::default();
        e.on_sample(Time::from_secs(50), 0, MSS);
        assert_eq!(e.base_rto(), TCP_RTO_MAX);
    }

    #[test]
    fn backoff_doubles_until_120s_cap() {
        let mut e = RttEstimator::default();
        e.on_sample(ms(209), 0, MSS);
        let mut expect = ms(627);
        for n in 0..8 {
            assert_eq!(e.backoffs(), n);
            assert_eq!(e.rto(), expect.min(TCP_RTO_MAX));
            assert_eq!(e.base_rto(), ms(627));
            e.backoff();
            expect = expect * 2;
        }
        assert_eq!(e.rto(), TCP_RTO_MAX); // 627 ms · 256 = 160 s
        for _ in 0..100 {
            e.backoff();
        }
        assert_eq!(e.rto(), TCP_RTO_MAX);
        e.reset_backoff();
        assert_eq!((e.backoffs(), e.rto()), (0, ms(627)));
    }

    #[test]
    fn backoff_before_any_sample_starts_from_one_second() {
        let mut e = RttEstimator::default();
        e.backoff();
        e.backoff();
        assert_eq!(e.rto(), Time::from_secs(4));
    }
}
