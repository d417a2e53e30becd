//! BBR v3 tests: directed rate samples, one ACK per call, as `bbr/tests.rs` does for v1.

use super::*;
use crate::time::Time;

const MSS: u32 = 1448;
/// 1/8 packet per µs (1.45 Gbit/s at 1448 B): exact in BW units, so samples need no rounding.
const BW: u32 = 1 << 21;
/// Min RTT of the PROBE_BW tests: BDP = [`BW`] × 8 ms = 1000 packets.
const RTT: u32 = 8000;

struct Rig {
    bbr: Bbr3,
    tp: Sock,
}

impl Rig {
    fn new(seed: u64) -> Rig {
        let mut tp = Sock::new(MSS, 10, 1000);
        let mut bbr = Bbr3::new(Params { seed, ecn_low: true });
        bbr.init(&mut tp);
        Rig { bbr, tp }
    }

    /// One ACK `dt_us` after the last one: `delivered` packets over `interval_us`, sampling a
    /// packet sent at `prior_delivered` (None: at the current `tp.delivered`, so the ACK starts
    /// a round).
    fn ack_from(
        &mut self,
        prior: Option<u64>,
        dt_us: u64,
        delivered: u64,
        interval_us: u64,
        rtt_us: i64,
        edit: impl FnOnce(&mut RateSample),
    ) {
        self.tp.now += Time::from_us(dt_us);
        let prior_delivered = prior.unwrap_or(self.tp.delivered);
        self.tp.delivered += delivered;
        let mut rs = RateSample {
            delivered: (self.tp.delivered - prior_delivered) as i64,
            interval_us: interval_us as i64,
            rtt_us,
            acked_sacked: delivered as u32,
            prior_in_flight: self.tp.in_flight,
            prior_delivered,
            ..RateSample::default()
        };
        edit(&mut rs);
        assert!(self.bbr.cong_control(&mut self.tp, &rs));
    }

    /// An ACK that starts a round: `delivered` packets in `interval_us`, RTT `rtt_us`.
    fn round(&mut self, delivered: u64, interval_us: u64, rtt_us: i64) {
        self.ack_from(None, interval_us, delivered, interval_us, rtt_us, |_| {});
    }

    /// A round-starting ACK `dt_us` after the last, delivering at exactly [`BW`], RTT [`RTT`].
    fn tick(&mut self, dt_us: u64) {
        self.round(dt_us / 8, dt_us, RTT as i64);
    }

    /// PROBE_BW with a full pipe at [`BW`] and `min_rtt_us`, starting in DOWN.
    fn probe_bw(&mut self, min_rtt_us: u32) {
        let b = &mut self.bbr;
        b.full_bw_reached = true;
        (b.min_rtt_us, b.probe_rtt_min_us) = (min_rtt_us, min_rtt_us);
        (b.min_rtt_stamp, b.probe_rtt_min_stamp) = (self.tp.jiffies(), self.tp.jiffies());
        b.bw_hi = [BW, 0];
        b.mode = Mode::ProbeBw;
        b.start_bw_probe_down(&self.tp);
        b.update_gains();
        self.tp.snd_cwnd = 2000;
        self.tp.in_flight = 1100;
    }

    /// From DOWN through REFILL into UP.
    fn probe_up(&mut self) {
        self.bbr.start_bw_probe_refill(&self.tp, 0);
        self.tick(1000);
        assert_eq!((self.bbr.mode(), self.bbr.phase()), (Mode::ProbeBw, Phase::Up));
        assert!(self.bbr.bw_probe_samples);
    }
}

#[test]
fn constants_are_google_bbr_v3_values() {
    assert_eq!(
        (BBR_STARTUP_PACING_GAIN, BBR_STARTUP_CWND_GAIN, BBR_DRAIN_GAIN, BBR_CWND_GAIN),
        (710, 512, 88, 512)
    );
    assert_eq!(BBR_PACING_GAIN, [320, 232, 256, 256]);
    assert_eq!(
        (Phase::Up as usize, Phase::Down as usize, Phase::Cruise as usize, Phase::Refill as usize),
        (0, 1, 2, 3)
    );
    assert_eq!(
        (BBR_PROBE_RTT_WIN_MS, BBR_PROBE_RTT_CWND_GAIN, BBR_PROBE_RTT_MODE_MS, BBR_MIN_RTT_WIN_SEC),
        (5000, 128, 200, 10)
    );
    assert_eq!(
        (BBR_TSO_RTT_SHIFT, BBR_TSO_MAX_BYTES, BBR_PACING_MARGIN_PERCENT, BBR_CWND_MIN_TARGET),
        (9, 65_215, 1, 4)
    );
    assert_eq!(
        (BBR_ECN_MAX_RTT_US, BBR_ECN_ALPHA_GAIN, BBR_ECN_ALPHA_INIT, BBR_ECN_FACTOR),
        (5000, 16, 256, 85)
    );
    assert_eq!((BBR_ECN_THRESH, BBR_ECN_REPROBE_GAIN, BBR_FULL_ECN_CNT), (128, 128, 2));
    assert_eq!(
        (BBR_BETA, BBR_LOSS_THRESH, BBR_FULL_LOSS_CNT, BBR_INFLIGHT_HEADROOM),
        (76, 5, 6, 38)
    );
    assert_eq!((BBR_FULL_BW_THRESH, BBR_FULL_BW_CNT), (320, 3));
    assert_eq!(
        (BBR_BW_PROBE_CWND_GAIN, BBR_BW_PROBE_MAX_ROUNDS, BBR_BW_PROBE_RAND_ROUNDS),
        (1, 63, 2)
    );
    assert_eq!((BBR_BW_PROBE_BASE_US, BBR_BW_PROBE_RAND_US), (2_000_000, 1_000_000));
    assert_eq!(
        (BBR_EXTRA_ACKED_GAIN, BBR_EXTRA_ACKED_WIN_RTTS, BBR_EXTRA_ACKED_MAX_US),
        (256, 5, 100_000)
    );
    assert_eq!(
        (BBR_ACK_EPOCH_ACKED_RESET_THRESH, BBR_SNDBUF_EXPAND, BW_SCALE, BBR_SCALE),
        (1 << 20, 3, 24, 8)
    );
    // The real values the fixed-point ones stand for.
    assert!((BBR_STARTUP_PACING_GAIN as f64 / 256.0 - 4.0 * 2f64.ln()).abs() < 0.002);
    assert!((BBR_PACING_GAIN[1] as f64 / 256.0 - 0.91).abs() < 0.004);
    assert!(((BBR_UNIT - BBR_BETA) as f64 / 256.0 - 0.7).abs() < 0.004);
    assert!((BBR_LOSS_THRESH as f64 / 256.0 - 0.02).abs() < 0.001);
    let b = Bbr3::default();
    assert_eq!(
        (b.name(), b.wants_pacing(), b.needs_ecn(), b.sndbuf_expand()),
        ("bbr3", true, false, 3)
    );
}

#[test]
fn startup_paces_at_4ln2_with_cwnd_gain_2() {
    let mut rig = Rig::new(0);
    // No RTT yet: 10 packets per nominal ms × 710/256 × 0.99.
    let want = 10.0 * 1448.0 * 1e3 * 710.0 / 256.0 * 0.99;
    assert!((rig.tp.pacing_rate as f64 / want - 1.0).abs() < 1e-4, "{}", rig.tp.pacing_rate);
    rig.tp.in_flight = 5000;
    rig.tp.snd_cwnd = 3000;
    rig.round(1000, 8000, 8000);
    assert_eq!(
        (rig.bbr.mode(), rig.bbr.pacing_gain(), rig.bbr.cwnd_gain()),
        (Mode::Startup, 710, 512)
    );
    assert_eq!(rig.bbr.max_bw(), BW);
    let rate = rig.bbr.bw_bytes_per_sec(&rig.tp) as f64 * 710.0 / 256.0 * 0.99;
    assert!((rig.tp.pacing_rate as f64 / rate - 1.0).abs() < 1e-3);
    // cwnd grows toward 2 × BDP = 2 × 1/8 × 8000 = 2000 packets, no further.
    assert_eq!(rig.bbr.bdp(rig.bbr.bw(), rig.bbr.cwnd_gain()), 2000);
    rig.round(1000, 8000, 8000);
    assert_eq!(rig.tp.snd_cwnd, 3000, "above target: held, not cut, before the pipe is full");
}

#[test]
fn startup_exits_after_three_rounds_without_25_percent_growth() {
    let mut rig = Rig::new(0);
    rig.tp.in_flight = 5000; // keep DRAIN from ending at once
    // Growth of exactly 25 % per round keeps STARTUP going.
    let mut d = 256;
    for _ in 0..5 {
        rig.round(d, 10_000, 10_000);
        d = d * 5 / 4;
    }
    assert_eq!(rig.bbr.mode(), Mode::Startup);
    // 24.6 % more than the last sample counts as flat; the third flat round fills the pipe.
    let flat = d - 2;
    rig.round(flat, 10_000, 10_000);
    rig.round(flat, 10_000, 10_000);
    assert_eq!(rig.bbr.mode(), Mode::Startup);
    rig.round(flat, 10_000, 10_000);
    assert!(rig.bbr.full_bw_reached());
    assert_eq!(rig.bbr.mode(), Mode::Drain);
    assert_eq!(
        (rig.bbr.pacing_gain(), rig.bbr.cwnd_gain()),
        (BBR_DRAIN_GAIN, BBR_STARTUP_CWND_GAIN)
    );
    assert_ne!(rig.tp.snd_ssthresh, super::super::TCP_INFINITE_SSTHRESH);
    // Inflight below the BDP: DRAIN ends in PROBE_BW DOWN, which on the same ACK finds
    // inflight low enough to CRUISE (check_drain runs before update_cycle_phase).
    rig.tp.in_flight = 10;
    rig.round(flat, 10_000, 10_000);
    assert_eq!((rig.bbr.mode(), rig.bbr.phase()), (Mode::ProbeBw, Phase::Cruise));
    assert!(rig.bbr.probe_wait_us() >= BBR_BW_PROBE_BASE_US, "DOWN picked the probe wait");
}

/// STARTUP in recovery: one round ACK, then `events` lossy ACKs of `per_event` losses each, then
/// the ACK that ends the loss round. Returns the mode after it.
fn startup_loss_round(events: u32, per_event: u64) -> (Mode, u32) {
    let mut rig = Rig::new(0);
    rig.tp.in_flight = 1000; // tx_in_flight: the 2 % threshold is 1000 × 5/256 = 19
    rig.round(100, 1000, 1000); // BDP 100: DRAIN will not end at once
    rig.tp.ca_state = CaState::Recovery;
    for _ in 0..events {
        rig.tp.lost += per_event;
        rig.ack_from(Some(50), 100, 10, 1000, 1000, |rs| rs.losses = per_event as u32);
    }
    // Samples the packet sent just after the first lossy ACK: the round of loss is over.
    rig.ack_from(Some(110), 100, 10, 1000, 1000, |_| {});
    (rig.bbr.mode(), rig.bbr.inflight_hi())
}

#[test]
fn startup_exits_on_six_lossy_acks_with_loss_above_2_percent_in_a_round() {
    // 6 events × 5 = 30 lost, 25 of them after the sampled packet was sent: 25 > 19.
    let (mode, inflight_hi) = startup_loss_round(BBR_FULL_LOSS_CNT, 5);
    assert_eq!(mode, Mode::Drain);
    assert_ne!(inflight_hi, u32::MAX, "inflight_hi is set from the BDP / last round");
    // One event short of bbr_full_loss_cnt: no exit.
    assert_eq!(startup_loss_round(BBR_FULL_LOSS_CNT - 1, 8).0, Mode::Startup);
    // Enough events, but 6 × 3 − 3 = 15 ≤ 19 lost: under 2 %, no exit.
    assert_eq!(startup_loss_round(BBR_FULL_LOSS_CNT, 3).0, Mode::Startup);
}

#[test]
fn startup_exits_on_two_rounds_of_ce_at_or_above_half() {
    for (ce_half, exits) in [(true, true), (false, false)] {
        let mut rig = Rig::new(0);
        rig.tp.ecn_ok = true;
        rig.tp.in_flight = 5000;
        let mut d = 100;
        for i in 0..4 {
            // Growing 2× per round: the plateau test never fires.
            rig.tp.delivered_ce += if ce_half { d / 2 } else { d / 2 - 1 };
            rig.round(d, 1000, 1000);
            d *= 2;
            // Round 1 has no min RTT yet (not ECN-eligible); rounds 2 and 3 count.
            if i < 2 {
                assert_eq!(rig.bbr.mode(), Mode::Startup);
            }
        }
        assert!(rig.bbr.ecn_eligible());
        assert_eq!(rig.bbr.full_bw_reached(), exits, "ce_half {ce_half}");
    }
}

#[test]
fn probe_bw_cycles_down_cruise_refill_up_down() {
    let mut rig = Rig::new(3);
    rig.probe_bw(RTT); // BDP 1000 packets
    assert_eq!(
        (rig.bbr.phase(), rig.bbr.pacing_gain(), rig.bbr.cwnd_gain()),
        (Phase::Down, 232, 512)
    );
    // DOWN holds while inflight is above the BDP...
    rig.tick(1000);
    assert_eq!(rig.bbr.phase(), Phase::Down);
    // ...and cruises once it is down to it.
    rig.tp.in_flight = 1000;
    rig.tick(1000);
    assert_eq!((rig.bbr.phase(), rig.bbr.pacing_gain()), (Phase::Cruise, 256));
    // CRUISE lasts the random 2–3 s wall-clock wait (fewer than 63 rounds pass).
    let start = rig.bbr.cycle_mstamp;
    let wait = rig.bbr.probe_wait_us() as u64;
    assert!((2_000_000..3_000_000).contains(&wait));
    while rig.tp.now.as_us() + 100_000 <= start + wait {
        rig.tick(100_000);
        assert_eq!(rig.bbr.phase(), Phase::Cruise);
    }
    rig.tp.now = Time::from_us(start + wait);
    rig.tick(8);
    assert_eq!((rig.bbr.phase(), rig.bbr.pacing_gain()), (Phase::Refill, 256));
    assert!(rig.bbr.rounds_since_probe() < BBR_BW_PROBE_MAX_ROUNDS);
    // REFILL lasts one round, then UP at 5/4 with cwnd gain 2.25.
    rig.tick(1000);
    assert_eq!(
        (rig.bbr.phase(), rig.bbr.pacing_gain(), rig.bbr.cwnd_gain()),
        (Phase::Up, 320, 576)
    );
    // UP ends when bw plateaus for 3 rounds (inflight_hi is not limiting): back to DOWN.
    for _ in 0..3 {
        assert_eq!(rig.bbr.phase(), Phase::Up);
        rig.tick(1000);
    }
    assert_eq!(rig.bbr.phase(), Phase::Down);
}

#[test]
fn probe_bw_reno_coexistence_probes_after_target_inflight_rounds() {
    let mut rig = Rig::new(0);
    rig.probe_bw(RTT);
    rig.tp.in_flight = 10;
    rig.round(1, 1000, 10_000);
    assert_eq!(rig.bbr.phase(), Phase::Cruise);
    // cwnd 20 < BDP: min(63, target inflight 20) rounds, long before the 2 s wait.
    rig.bbr.bw_hi = [BW / 100, 0]; // 10-packet BDP, so cwnd stays small
    rig.tp.snd_cwnd = 20;
    let mut rounds = 0;
    while rig.bbr.phase() == Phase::Cruise {
        rig.round(1, 1000, 10_000);
        rounds += 1;
        assert!(rounds < 64);
    }
    assert_eq!(rig.bbr.phase(), Phase::Refill);
    let target = rig.bbr.target_inflight(&rig.tp);
    assert!(rig.tp.now.as_us() < 2_000_000);
    assert!(
        rounds as u32 <= target && target < BBR_BW_PROBE_MAX_ROUNDS,
        "{rounds} rounds, target {target}"
    );
}

#[test]
fn probe_up_loss_above_2_percent_cuts_inflight_hi_and_goes_down() {
    // 2 % of 1200 in flight is 1200 × 5/256 = 23 packets.
    let mut rig = Rig::new(0);
    rig.probe_bw(RTT);
    rig.tp.in_flight = 1200;
    rig.probe_up();
    rig.tp.lost += 20;
    rig.ack_from(None, 1000, 125, 1000, RTT as i64, |rs| rs.losses = 20);
    assert_eq!(
        (rig.bbr.phase(), rig.bbr.inflight_hi()),
        (Phase::Up, u32::MAX),
        "20 ≤ 23: not too high"
    );
    let mut rig = Rig::new(0);
    rig.probe_bw(RTT);
    rig.tp.in_flight = 1200;
    rig.probe_up();
    rig.tp.lost += 30;
    rig.ack_from(None, 1000, 125, 1000, RTT as i64, |rs| rs.losses = 30);
    // The 24th lost packet crossed 2 %: inflight_prev 1199, 23 lost before it, loss budget
    // ⌈1199 × 5/256⌉ = 24, so 1 more packet: 1200. That beats 0.7 × target (1002 × 180/256 = 704).
    assert_eq!(rig.bbr.inflight_hi(), 1200);
    assert_eq!(rig.bbr.phase(), Phase::Down);
    assert!(rig.bbr.prev_probe_too_high);
}

#[test]
fn probe_up_too_high_sets_inflight_hi_to_max_of_flight_and_beta_target() {
    let mut rig = Rig::new(0);
    rig.probe_bw(RTT);
    rig.probe_up();
    let target = rig.bbr.target_inflight(&rig.tp);
    assert_eq!(target, 1002); // BDP 1000 + 2 in UP (cwnd 2000 does not bind)
    let s = Signals { lost: 50, tx_in_flight: 300, delivered: 100, ..Signals::default() };
    assert!(rig.bbr.is_inflight_too_high(&s));
    rig.bbr.handle_inflight_too_high(&rig.tp, &s);
    assert_eq!(rig.bbr.inflight_hi(), 1002 * 180 / 256); // 0.7 × target beats a 300 flight
    assert_eq!(rig.bbr.phase(), Phase::Down);
    // App-limited probes do not move inflight_hi.
    rig.bbr.inflight_hi = 5000;
    rig.bbr.handle_inflight_too_high(&rig.tp, &Signals { is_app_limited: true, ..s });
    assert_eq!(rig.bbr.inflight_hi(), 5000);
}

#[test]
fn cruise_loss_cuts_lower_bounds_by_beta_once_per_round() {
    let mut rig = Rig::new(0);
    rig.probe_bw(RTT);
    rig.tp.in_flight = 900;
    rig.tick(1000);
    assert_eq!(rig.bbr.phase(), Phase::Cruise);
    // A round at half rate, a lossy ACK, then the ACK ending that loss round: bw_lo and
    // inflight_lo cut to 0.7×; the floor (this round's delivery: BW/2, 125 packets) is lower.
    rig.round(125, 2000, RTT as i64);
    rig.tp.lost += 1;
    rig.ack_from(Some(rig.tp.delivered - 50), 1000, 10, 1000, RTT as i64, |rs| rs.losses = 1);
    let cwnd = rig.tp.snd_cwnd;
    rig.round(10, 1000, RTT as i64);
    assert_eq!(rig.bbr.inflight_lo(), cwnd * 180 / 256);
    assert_eq!(rig.bbr.bw_lo(), (BW as u64 * 180 / 256) as u32);
    assert!(rig.tp.snd_cwnd <= cwnd * 180 / 256);
}

#[test]
fn probe_rtt_every_5_s_at_half_bdp_for_200_ms() {
    let mut rig = Rig::new(0);
    rig.probe_bw(RTT); // BDP 1000: PROBE_RTT cwnd 500
    let t0 = rig.tp.now.as_us();
    // Same RTT every 100 ms: the 5 s min is never refreshed by a lower sample.
    while rig.tp.now.as_us() + 100_000 <= t0 + 5_000_000 {
        rig.tick(100_000);
        assert_ne!(rig.bbr.mode(), Mode::ProbeRtt, "at {} µs", rig.tp.now.as_us());
    }
    rig.tp.in_flight = 2000;
    rig.tick(100_000);
    assert_eq!(rig.bbr.mode(), Mode::ProbeRtt);
    assert_eq!(rig.bbr.probe_rtt_cwnd(), 500);
    assert_eq!(rig.tp.snd_cwnd, 500);
    assert!(rig.tp.app_limited);
    let prior = rig.bbr.prior_cwnd;
    // Inflight down to half the BDP: 200 ms and a round from now.
    rig.tp.in_flight = 500;
    rig.tick(1000);
    let entered = rig.tp.now.as_us();
    while rig.tp.now.as_us() <= entered + 200_000 {
        assert_eq!(rig.bbr.mode(), Mode::ProbeRtt);
        rig.tick(20_000);
    }
    assert_eq!((rig.bbr.mode(), rig.bbr.phase()), (Mode::ProbeBw, Phase::Cruise));
    // cwnd is restored (to the saved one, then snapped to the 2 × BDP + aggregation target).
    assert!(prior > 2000 && rig.tp.snd_cwnd >= 2000, "cwnd {} prior {prior}", rig.tp.snd_cwnd);
    // The next PROBE_RTT is 5 s after this exit.
    assert_eq!(rig.bbr.probe_rtt_min_stamp, rig.tp.jiffies());
}

/// Cruise at `min_rtt_us`, then a round with half the packets CE-marked and an ECE ACK.
/// Returns (eligible, inflight_lo, expected inflight_lo if the ECN cut applied).
fn cruise_with_marks(min_rtt_us: u32, ecn_ok: bool, ecn_low: bool) -> (bool, u32, u32) {
    let mut rig = Rig::new(0);
    rig.bbr.ecn_low = ecn_low;
    rig.tp.ecn_ok = ecn_ok;
    rig.probe_bw(min_rtt_us);
    rig.tp.in_flight = 10;
    rig.round(100, 1000, min_rtt_us as i64);
    assert_eq!(rig.bbr.phase(), Phase::Cruise);
    let cwnd = rig.tp.snd_cwnd;
    rig.tp.delivered_ce += 50;
    rig.round(100, 1000, min_rtt_us as i64);
    let cut = BBR_UNIT - ((rig.bbr.ecn_alpha() * BBR_ECN_FACTOR) >> BBR_SCALE);
    (rig.bbr.ecn_eligible(), rig.bbr.inflight_lo(), cwnd * cut / 256)
}

#[test]
fn cruise_ecn_cuts_inflight_lo_only_when_min_rtt_at_most_5_ms() {
    let (eligible, lo, want) = cruise_with_marks(BBR_ECN_MAX_RTT_US, true, true);
    assert!(eligible);
    assert_eq!(lo, want);
    assert!(lo < u32::MAX && want < 2000);
    for (rtt, ecn_ok, ecn_low) in
        [(BBR_ECN_MAX_RTT_US + 1, true, true), (1000, false, true), (1000, true, false)]
    {
        let (eligible, lo, _) = cruise_with_marks(rtt, ecn_ok, ecn_low);
        assert!(!eligible, "rtt {rtt} ecn_ok {ecn_ok} ecn_low {ecn_low}");
        assert_eq!(lo, u32::MAX);
    }
}

#[test]
fn ecn_alpha_is_an_ewma_of_the_ce_fraction_with_gain_1_16() {
    let mut rig = Rig::new(0);
    rig.tp.ecn_ok = true;
    rig.tp.in_flight = 5000;
    rig.round(100, 1000, 1000); // sets min RTT 1 ms; not yet eligible at this round start
    assert_eq!(rig.bbr.ecn_alpha(), 256);
    rig.tp.delivered_ce += 50; // 50 of the 200 delivered so far: ratio 64
    rig.round(100, 1000, 1000);
    assert_eq!(rig.bbr.ecn_alpha(), ((240 * 256) >> 8) + ((16 * 64) >> 8));
}

#[test]
fn probe_wait_is_deterministic_for_a_seed() {
    let waits = |seed| {
        let mut rig = Rig::new(seed);
        (0..8)
            .map(|_| {
                rig.bbr.start_bw_probe_down(&rig.tp);
                (rig.bbr.probe_wait_us(), rig.bbr.rounds_since_probe())
            })
            .collect::<Vec<_>>()
    };
    let a = waits(7);
    assert_eq!(a, waits(7));
    assert_ne!(a, waits(8));
    assert!(a.iter().all(|&(w, r)| (2_000_000..3_000_000).contains(&w) && r < 2));
    assert!(a.iter().any(|&(_, r)| r == 1) && a.iter().any(|&(_, r)| r == 0));
}

#[test]
fn recovery_undo_restores_bounds_and_prior_cwnd() {
    let mut rig = Rig::new(0);
    rig.probe_bw(RTT);
    rig.bbr.inflight_lo = 800;
    rig.bbr.bw_lo = BW / 2;
    rig.tp.snd_cwnd = 900;
    rig.bbr.ssthresh(&rig.tp);
    rig.bbr.inflight_lo = 400;
    rig.bbr.bw_lo = BW / 4;
    assert_eq!(rig.bbr.undo_cwnd(&rig.tp), 900);
    assert_eq!((rig.bbr.inflight_lo(), rig.bbr.bw_lo()), (800, BW / 2));
}
