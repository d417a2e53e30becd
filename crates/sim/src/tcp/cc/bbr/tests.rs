//! BBR tests: directed rate samples for exact Linux arithmetic, and a small packet-level path
//! (fixed bottleneck rate, fixed propagation delay, one ACK per packet) for the mode machine.

use std::collections::VecDeque;

use super::*;
use crate::time::Time;

const MSS: u32 = 1448;

// ---- directed samples ----

/// A BBR and its socket, fed one rate sample per packet-timed round.
struct Rig {
    bbr: Bbr,
    tp: Sock,
}

impl Rig {
    fn new(seed: u64) -> Rig {
        let mut tp = Sock::new(MSS, 10, 1000);
        let mut bbr = Bbr::new(Params { seed });
        bbr.init(&mut tp);
        Rig { bbr, tp }
    }

    /// One ACK that starts a new round: `delivered` packets over `interval_us`, RTT `rtt_us`.
    fn round(
        &mut self,
        delivered: u64,
        interval_us: u64,
        rtt_us: i64,
        edit: impl FnOnce(&mut RateSample),
    ) {
        self.tp.now += Time::from_us(interval_us);
        let prior_delivered = self.tp.delivered;
        self.tp.delivered += delivered;
        let mut rs = RateSample {
            delivered: delivered as i64,
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

    /// Put BBR in PROBE_BW with a filled pipe and `bw` in the filter.
    fn probe_bw(&mut self, bw: u32, min_rtt_us: u32) {
        self.bbr.full_bw_reached = true;
        self.bbr.min_rtt_us = min_rtt_us;
        self.bbr.bw.reset(self.bbr.rtt_cnt, bw);
        self.bbr.reset_probe_bw_mode();
        self.bbr.update_gains();
    }
}

/// `bbr_rate_bytes_per_sec()` written out in Linux's u64 order: `bw` (packets/µs << 24) ×
/// mss × gain / 256 × 990,000 >> 24.
fn linux_rate(bw: u64, mss: u64, gain: u64) -> u64 {
    (((bw * mss * gain) >> 8) * 990_000) >> 24
}

/// bytes/s of `bw` (packets/µs << 24) at `gain`, with the 1 % margin, in floating point.
fn rate_f64(bw: u32, gain: f64) -> f64 {
    bw as f64 / BW_UNIT as f64 * 1e6 * MSS as f64 * gain * 0.99
}

#[test]
fn constants_are_linux_values() {
    assert_eq!((BW_SCALE, BW_UNIT, BBR_SCALE, BBR_UNIT), (24, 1 << 24, 8, 256));
    assert_eq!((BBR_HIGH_GAIN, BBR_DRAIN_GAIN, BBR_CWND_GAIN), (739, 88, 512));
    assert_eq!(BBR_PACING_GAIN, [320, 192, 256, 256, 256, 256, 256, 256]);
    assert_eq!((CYCLE_LEN, BBR_CYCLE_RAND, BBR_BW_RTTS), (8, 7, 10));
    assert_eq!((BBR_MIN_RTT_WIN_SEC, BBR_PROBE_RTT_MODE_MS, BBR_CWND_MIN_TARGET), (10, 200, 4));
    assert_eq!((BBR_FULL_BW_THRESH, BBR_FULL_BW_CNT), (320, 3));
    assert_eq!((BBR_MIN_TSO_RATE, BBR_PACING_MARGIN_PERCENT), (1_200_000, 1));
    assert_eq!((BBR_LT_INTVL_MIN_RTTS, BBR_LT_LOSS_THRESH, BBR_LT_BW_RATIO), (4, 50, 32));
    assert_eq!((BBR_LT_BW_DIFF, BBR_LT_BW_MAX_RTTS), (500, 48));
    assert_eq!((BBR_EXTRA_ACKED_GAIN, BBR_EXTRA_ACKED_WIN_RTTS), (256, 5));
    assert_eq!((BBR_ACK_EPOCH_ACKED_RESET_THRESH, BBR_EXTRA_ACKED_MAX_US), (1 << 20, 100_000));
    assert_eq!(
        (BBR_SNDBUF_EXPAND, TCP_INIT_CWND, BBR_TSO_MAX_BYTES, BBR_TSO_MAX_SEGS),
        (3, 10, 65_215, 127)
    );
    // The real-valued gains the fixed-point ones stand for.
    assert!((BBR_HIGH_GAIN as f64 / 256.0 - 2.0 / 2f64.ln()).abs() < 0.003);
    assert!((BBR_DRAIN_GAIN as f64 / 256.0 - 2f64.ln() / 2.0).abs() < 0.003);
    let bbr = Bbr::default();
    assert!(bbr.wants_pacing());
    assert_eq!(bbr.name(), "bbr");
}

#[test]
fn init_pacing_rate_is_high_gain_initcwnd_over_srtt() {
    // reference/linux-tcp.md §7.3: initcwnd 1000, MSS 8948 → 0.978 Gbit/s at 209 ms,
    // 0.679 Gbit/s at 301 ms.
    for (srtt_us, gbit) in [(209_000, 0.978), (301_000, 0.679)] {
        let mut tp = Sock::new(8948, 1000, 1000);
        tp.srtt_us = srtt_us;
        let mut bbr = Bbr::default();
        bbr.init(&mut tp);
        let bw = (1000u64 << 24) / srtt_us as u64;
        let exact = linux_rate(bw, 8948, 739);
        assert_eq!(tp.pacing_rate, exact);
        assert_eq!((tp.pacing_rate as f64 * 8e-9 * 1000.0).floor() / 1000.0, gbit);
        assert!(bbr.has_seen_rtt);
    }
    // No RTT yet: a nominal 1 ms, 10 × 1448 B per ms × 2.885 × 0.99 ≈ 41.4 MB/s.
    let rig = Rig::new(0);
    let want = 10.0 * 1448.0 / 1e-3 * 739.0 / 256.0 * 0.99;
    assert!((rig.tp.pacing_rate as f64 / want - 1.0).abs() < 1e-4, "{}", rig.tp.pacing_rate);
    assert!(!rig.bbr.has_seen_rtt);
    assert_eq!(rig.tp.snd_ssthresh, super::super::TCP_INFINITE_SSTHRESH);
}

#[test]
fn startup_paces_at_high_gain_times_bw_and_never_slower() {
    let mut rig = Rig::new(0);
    rig.tp.srtt_us = 100_000; // initial rate from 10 packets / 100 ms: below the samples
    rig.tp.in_flight = 10_000; // keeps DRAIN from ending at once
    // 1000 packets in 10 ms = 0.1 packet/µs (1.16 Gbit/s at 1448 B).
    rig.round(1000, 10_000, 10_000, |_| {});
    let bw = rig.bbr.max_bw();
    assert_eq!(bw, ((1000u64 << 24) / 10_000) as u32);
    assert_eq!(rig.tp.pacing_rate, linux_rate(bw as u64, 1448, 739));
    assert!((rig.tp.pacing_rate as f64 / rate_f64(bw, 2.885) - 1.0).abs() < 1e-3);
    // Once the pipe is full (3 flat rounds) the rate follows the estimate down; the filter
    // still holds the high sample, the gain is now DRAIN's.
    for _ in 0..3 {
        rig.round(100, 10_000, 10_000, |_| {});
    }
    assert_eq!(rig.bbr.mode(), Mode::Drain);
    assert_eq!(rig.tp.pacing_rate, Bbr::rate_bytes_per_sec(&rig.tp, bw as u64, BBR_DRAIN_GAIN));
}

#[test]
fn startup_never_lowers_pacing_before_full_pipe() {
    let mut rig = Rig::new(0);
    rig.tp.srtt_us = 1_000; // 10 packets per ms × 2.885: 41.4 MB/s
    rig.round(10, 10_000, 10_000, |_| {}); // 1 packet per ms: 4.1 MB/s at high gain
    let init = linux_rate((10 << 24) / 1_000, 1448, 739);
    assert_eq!(rig.tp.pacing_rate, init);
    assert!(Bbr::rate_bytes_per_sec(&rig.tp, rig.bbr.bw() as u64, BBR_HIGH_GAIN) < init / 9);
}

#[test]
fn startup_full_pipe_after_three_rounds_below_25_percent_growth() {
    let mut rig = Rig::new(0);
    rig.tp.in_flight = 10_000; // far above BDP: DRAIN cannot end at once
    // Packets per 10 ms round: growth ≥ 25 % resets the count, 2.4 < 1.25 × 2 does not.
    for (i, pkts) in [100, 200, 240, 240].into_iter().enumerate() {
        rig.round(pkts, 10_000, 10_000, |_| {});
        assert_eq!(rig.bbr.mode(), Mode::Startup, "round {i}");
    }
    assert_eq!((rig.bbr.full_bw, rig.bbr.full_bw_cnt), (((200u64 << 24) / 10_000) as u32, 2));
    // The BDP budget uses the TSO goal of the pacing rate before this ACK.
    let goal = Bbr::tso_segs_goal(&rig.tp);
    rig.round(240, 10_000, 10_000, |_| {});
    assert!(rig.bbr.full_bw_reached());
    assert_eq!(rig.bbr.mode(), Mode::Drain);
    assert_eq!((rig.bbr.pacing_gain(), rig.bbr.cwnd_gain()), (BBR_DRAIN_GAIN, BBR_HIGH_GAIN));
    // ssthresh = BDP (240 packets) + 3 TSO bursts, even.
    assert_eq!(rig.tp.snd_ssthresh, (240 + 3 * goal + 1) & !1);
    // DRAIN ends when inflight is down to the BDP budget (with DRAIN's smaller TSO goal).
    rig.tp.in_flight = 242 + 3 * Bbr::tso_segs_goal(&rig.tp); // one above the even budget
    rig.round(240, 10_000, 10_000, |_| {});
    assert_eq!(rig.bbr.mode(), Mode::Drain);
    rig.tp.in_flight = 240;
    rig.round(240, 10_000, 10_000, |_| {});
    assert_eq!(rig.bbr.mode(), Mode::ProbeBw);
    assert_eq!(rig.bbr.cwnd_gain(), BBR_CWND_GAIN);
}

#[test]
fn startup_cwnd_grows_only_while_below_the_high_gain_bdp() {
    // A window-limited start (AmLight: initcwnd 1000, the receive window opening slowly): bw
    // samples are window/RTT, so the STARTUP target 2.885·BDP stays below the initial cwnd
    // and cwnd holds until the samples catch up; it is never cut before the pipe is full.
    let mut rig = Rig::new(0);
    rig.tp.snd_cwnd = 1000;
    rig.tp.in_flight = 1000;
    rig.round(100, 200_000, 200_000, |_| {}); // 100 packets per 200 ms round
    let target = rig.bbr.inflight(&rig.tp, rig.bbr.max_bw(), BBR_HIGH_GAIN);
    assert_eq!(rig.bbr.bdp(rig.bbr.max_bw(), BBR_HIGH_GAIN), 289, "⌈100 × 739/256⌉");
    assert!(target < 1000, "target {target}");
    assert_eq!(rig.tp.snd_cwnd, 1000, "above target in STARTUP: neither grown nor cut");
    rig.round(400, 200_000, 200_000, |_| {}); // target ⌈400 × 2.887⌉ = 1155 > cwnd
    assert_eq!(rig.bbr.bdp(rig.bbr.max_bw(), BBR_HIGH_GAIN), 1155);
    assert_eq!(rig.tp.snd_cwnd, 1000 + 400, "below target: slow start by the packets acked");
}

#[test]
fn startup_app_limited_rounds_do_not_count_toward_full_pipe() {
    let mut rig = Rig::new(0);
    rig.round(100, 10_000, 10_000, |_| {});
    for _ in 0..10 {
        rig.round(100, 10_000, 10_000, |rs| rs.is_app_limited = true);
    }
    assert_eq!((rig.bbr.full_bw_cnt, rig.bbr.mode()), (0, Mode::Startup));
    for _ in 0..3 {
        rig.round(100, 10_000, 10_000, |_| {});
    }
    assert!(rig.bbr.full_bw_reached());
}

#[test]
fn bw_filter_forgets_a_high_sample_after_ten_rounds() {
    let mut rig = Rig::new(0);
    rig.round(500, 10_000, 10_000, |_| {}); // round 1: the high sample
    let high = rig.bbr.max_bw();
    for round in 2..=11 {
        rig.round(100, 10_000, 10_000, |_| {});
        assert_eq!(rig.bbr.max_bw(), high, "round {round}");
    }
    rig.round(100, 10_000, 10_000, |_| {}); // round 12 = 1 + bbr_bw_rtts + 1
    assert_eq!(rig.bbr.round_count(), 12);
    assert_eq!(rig.bbr.max_bw(), ((100u64 << 24) / 10_000) as u32);
}

#[test]
fn bw_filter_ignores_app_limited_samples_below_the_estimate() {
    let mut rig = Rig::new(0);
    rig.round(100, 10_000, 10_000, |_| {});
    let bw = rig.bbr.max_bw();
    // Low app-limited samples never enter the filter, so the estimate does not age out.
    for _ in 0..2 * BBR_BW_RTTS {
        rig.round(50, 10_000, 10_000, |rs| rs.is_app_limited = true);
    }
    assert_eq!(rig.bbr.max_bw(), bw);
    rig.round(300, 10_000, 10_000, |rs| rs.is_app_limited = true);
    assert_eq!(rig.bbr.max_bw(), 3 * bw, "an app-limited sample above the estimate counts");
}

#[test]
fn probe_bw_start_phase_is_never_the_drain_phase_and_is_seeded() {
    let mut seen = [0u32; CYCLE_LEN as usize];
    for seed in 0..2000 {
        let mut bbr = Bbr::new(Params { seed });
        bbr.reset_probe_bw_mode();
        seen[bbr.cycle_idx() as usize] += 1;
    }
    assert_eq!(seen[1], 0, "never starts in the 3/4 phase");
    for idx in [0, 2, 3, 4, 5, 6, 7] {
        assert!((200..380).contains(&seen[idx]), "phase {idx}: {}", seen[idx]);
    }
    let phases = |seed| {
        let mut bbr = Bbr::new(Params { seed });
        (0..16)
            .map(|_| {
                bbr.reset_probe_bw_mode();
                bbr.cycle_idx()
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(phases(42), phases(42));
    assert_ne!(phases(42), phases(43));
    // init() keeps the stream going rather than replaying it.
    let mut bbr = Bbr::new(Params { seed: 42 });
    bbr.init(&mut Sock::new(MSS, 10, 1000));
    assert_eq!(
        (0..16)
            .map(|_| {
                bbr.reset_probe_bw_mode();
                bbr.cycle_idx()
            })
            .collect::<Vec<_>>(),
        phases(42)
    );
}

#[test]
fn recovery_first_round_conserves_packets_then_restores() {
    let mut rig = Rig::new(0);
    rig.round(100, 10_000, 10_000, |_| {}); // bw 0.01 packet/µs, min RTT 10 ms
    rig.tp.snd_cwnd = 100;
    rig.tp.in_flight = 80;
    // Entering recovery: ssthresh() saves cwnd and leaves ssthresh alone.
    assert_eq!(rig.bbr.ssthresh(&rig.tp), rig.tp.snd_ssthresh);
    assert_eq!(rig.bbr.prior_cwnd, 100);
    rig.tp.ca_state = CaState::Recovery;
    rig.tp.in_flight = 75;
    rig.round(2, 1000, -1, |rs| rs.losses = 3);
    assert!(rig.bbr.packet_conservation);
    assert_eq!(rig.tp.snd_cwnd, 75 + 2, "cwnd = inflight + acked");
    assert_eq!(rig.bbr.next_rtt_delivered, rig.tp.delivered, "a round starts with recovery");
    // Same round: losses come off, but never below inflight + acked.
    let round_start = rig.tp.delivered;
    rig.tp.in_flight = 74;
    rig.tp.now += Time::from_us(1000);
    rig.tp.delivered += 2;
    let rs = RateSample {
        delivered: 2,
        interval_us: 1000,
        rtt_us: -1,
        losses: 1,
        acked_sacked: 2,
        prior_delivered: round_start - 1,
        ..RateSample::default()
    };
    rig.bbr.cong_control(&mut rig.tp, &rs);
    assert_eq!(rig.tp.snd_cwnd, 76, "max(77 − 1, 74 + 2)");
    // Next round: conservation ends; slow start toward the target (STARTUP, below target).
    rig.round(2, 1000, -1, |_| {});
    assert!(!rig.bbr.packet_conservation);
    assert_eq!(rig.tp.snd_cwnd, 78);
    // Leaving recovery restores the saved cwnd (then grows by acked below target).
    rig.tp.ca_state = CaState::Open;
    rig.round(2, 1000, -1, |_| {});
    assert_eq!(rig.tp.snd_cwnd, 100 + 2);
}

#[test]
fn probe_rtt_done_restores_saved_cwnd_and_mode() {
    let mut rig = Rig::new(0);
    rig.probe_bw(((100u64 << 24) / 10_000) as u32, 10_000);
    rig.tp.snd_cwnd = 300;
    rig.bbr.mode = Mode::ProbeRtt;
    rig.bbr.save_cwnd(&rig.tp); // PROBE_RTT keeps the max of saved and current
    assert_eq!(rig.bbr.prior_cwnd, 300);
    rig.tp.snd_cwnd = 4;
    rig.tp.now = Time::from_ms(1000);
    rig.bbr.probe_rtt.done_stamp = 1000; // not after it yet
    rig.bbr.check_probe_rtt_done(&mut rig.tp);
    assert_eq!((rig.bbr.mode(), rig.tp.snd_cwnd), (Mode::ProbeRtt, 4));
    rig.tp.now = Time::from_ms(1001);
    rig.bbr.check_probe_rtt_done(&mut rig.tp);
    assert_eq!((rig.bbr.mode(), rig.tp.snd_cwnd), (Mode::ProbeBw, 300));
    assert_eq!(rig.bbr.min_rtt_stamp, 1001, "the next PROBE_RTT is a full window away");
    // Without a filled pipe, PROBE_RTT returns to STARTUP.
    rig.bbr.full_bw_reached = false;
    rig.bbr.mode = Mode::ProbeRtt;
    rig.bbr.probe_rtt.done_stamp = 1000;
    rig.bbr.check_probe_rtt_done(&mut rig.tp);
    assert_eq!(rig.bbr.mode(), Mode::Startup);
}

#[test]
fn idle_restart_paces_at_bw_and_defers_probe_rtt() {
    let mut rig = Rig::new(0);
    let bw = ((100u64 << 24) / 10_000) as u32;
    rig.probe_bw(bw, 10_000);
    rig.tp.pacing_rate = 1 << 40;
    rig.tp.app_limited = true;
    rig.bbr.cwnd_event(&mut rig.tp, CaEvent::TxStart);
    assert!(rig.bbr.idle_restart);
    assert_eq!(rig.tp.pacing_rate, Bbr::rate_bytes_per_sec(&rig.tp, bw as u64, BBR_UNIT));
    // The min-RTT filter expires during the restart: no PROBE_RTT until data is acked.
    rig.tp.now = Time::from_secs(11);
    rig.bbr.update_min_rtt(&mut rig.tp, &RateSample { rtt_us: -1, ..RateSample::default() });
    assert_eq!(rig.bbr.mode(), Mode::ProbeBw);
    // Not app-limited: TxStart is no idle restart.
    let mut rig = Rig::new(0);
    rig.bbr.cwnd_event(&mut rig.tp, CaEvent::TxStart);
    assert!(!rig.bbr.idle_restart);
}

#[test]
fn ack_aggregation_adds_excess_acked_to_cwnd_target() {
    let mut rig = Rig::new(0);
    let bw = ((100u64 << 24) / 10_000) as u32; // 0.01 packet/µs
    rig.probe_bw(bw, 10_000);
    rig.tp.snd_cwnd = 1000;
    // First ACK opens an epoch; 1 ms later 50 more packets arrive where bw predicts 9.
    rig.round(10, 1000, -1, |_| {});
    rig.round(50, 1000, -1, |rs| rs.interval_us = 10_000);
    let expected = (bw as u64 * 1000 / BW_UNIT) as u32;
    assert_eq!(expected, 9);
    assert_eq!(rig.bbr.aggregation.extra_acked[rig.bbr.aggregation.win_idx] as u32, 60 - expected);
    assert_eq!(rig.bbr.ack_aggregation_cwnd(), 51);
    // Capped at 100 ms of bandwidth (1000 packets here) and absent before the pipe is full.
    assert_eq!((bw as u64 * BBR_EXTRA_ACKED_MAX_US / BW_UNIT) as u32, 999);
    rig.bbr.full_bw_reached = false;
    assert_eq!(rig.bbr.ack_aggregation_cwnd(), 0);
}

#[test]
fn lt_bw_detects_a_policer_and_gives_up_after_48_rounds() {
    let mut rig = Rig::new(0);
    // The filter says 0.02 packet/µs; a policer passes 0.01 and drops 30 %.
    rig.probe_bw(((200u64 << 24) / 10_000) as u32, 10_000);
    let policed = |rig: &mut Rig| {
        rig.tp.lost += 30;
        rig.round(100, 10_000, -1, |rs| {
            rs.losses = 30;
            rs.interval_us = 5_000;
        });
    };
    for _ in 0..4 {
        policed(&mut rig); // first interval: 300 packets over 30 ms after the first loss
    }
    assert!(!rig.bbr.lt_use_bw());
    assert_eq!(rig.bbr.lt_bw, ((300u64 << 24) / 30_000) as u32);
    for _ in 0..4 {
        policed(&mut rig); // second interval: 400 over 40 ms, the same rate
    }
    assert!(rig.bbr.lt_use_bw());
    let lt = ((100u64 << 24) / 10_000) as u32;
    assert_eq!(rig.bbr.bw(), lt);
    assert!(rig.bbr.max_bw() > lt);
    assert_eq!(rig.bbr.pacing_gain(), BBR_UNIT);
    assert_eq!(rig.tp.pacing_rate, Bbr::rate_bytes_per_sec(&rig.tp, lt as u64, BBR_UNIT));
    for _ in 0..47 {
        rig.round(100, 10_000, -1, |_| {});
    }
    assert!(rig.bbr.lt_use_bw());
    rig.round(100, 10_000, -1, |_| {});
    assert!(!rig.bbr.lt_use_bw());
    assert_eq!(rig.bbr.bw(), rig.bbr.max_bw());
}

#[test]
fn undo_restarts_full_pipe_detection_and_lt_sampling() {
    let mut rig = Rig::new(0);
    rig.round(100, 10_000, 10_000, |_| {});
    rig.bbr.full_bw_cnt = 2;
    rig.bbr.lt_is_sampling = true;
    rig.tp.snd_cwnd = 77;
    assert_eq!(rig.bbr.undo_cwnd(&rig.tp), 77);
    assert_eq!((rig.bbr.full_bw, rig.bbr.full_bw_cnt, rig.bbr.lt_is_sampling), (0, 0, false));
}

#[test]
fn rto_ends_the_round_and_starts_policer_sampling() {
    let mut rig = Rig::new(0);
    rig.round(100, 10_000, 10_000, |_| {});
    rig.bbr.set_state(&mut rig.tp, CaState::Loss);
    assert_eq!((rig.bbr.prev_ca_state, rig.bbr.full_bw), (CaState::Loss, 0));
    assert!(rig.bbr.round_start && rig.bbr.lt_is_sampling);
    assert_eq!(rig.bbr.lt_rtt_cnt, 1);
}

#[test]
fn tso_goal_follows_pacing_rate_with_legacy_cap() {
    let mut tp = Sock::new(MSS, 10, 1000);
    tp.pacing_rate = (BBR_MIN_TSO_RATE >> 3) - 1; // 149,999 B/s
    assert_eq!((Bbr::min_tso_segs(&tp), Bbr::tso_segs_goal(&tp)), (1, 1));
    tp.pacing_rate = BBR_MIN_TSO_RATE >> 3;
    assert_eq!((Bbr::min_tso_segs(&tp), Bbr::tso_segs_goal(&tp)), (2, 2));
    tp.pacing_rate = 14_480_000; // >> 10 = 14,140 B = 9 segments
    assert_eq!(Bbr::tso_segs_goal(&tp), 9);
    tp.pacing_rate = 10_000_000_000;
    assert_eq!(Bbr::tso_segs_goal(&tp), (65_215 / 1448) as u32);
    tp.mss = 100;
    assert_eq!(Bbr::tso_segs_goal(&tp), BBR_TSO_MAX_SEGS);
}

// ---- a packet-level path ----

struct Pkt {
    sent: u64,
    first_tx: u64,
    delivered_mstamp: u64,
    delivered: u64,
    app_limited: bool,
    ack_at: u64,
}

/// One bulk flow over a FIFO bottleneck of one packet per `service_ns` and a fixed
/// `prop_ns` of delay, one ACK per packet; delivery-rate samples as `tcp_rate.c` takes them.
struct Path {
    bbr: Bbr,
    tp: Sock,
    service_ns: u64,
    prop_ns: u64,
    now: u64,
    link_free: u64,
    next_send: u64,
    flight: VecDeque<Pkt>,
    first_tx: u64,
    delivered_mstamp: u64,
    app_limited_until: u64,
}

impl Path {
    fn new(seed: u64, service_ns: u64, prop_ns: u64, setup: impl FnOnce(&mut Sock)) -> Path {
        let mut tp = Sock::new(MSS, 10, 1000);
        setup(&mut tp);
        let mut bbr = Bbr::new(Params { seed });
        bbr.init(&mut tp);
        Path {
            bbr,
            tp,
            service_ns,
            prop_ns,
            now: 0,
            link_free: 0,
            next_send: 0,
            flight: VecDeque::new(),
            first_tx: 0,
            delivered_mstamp: 0,
            app_limited_until: 0,
        }
    }

    /// Bottleneck rate in BW units (packets/µs << 24).
    fn path_bw(&self) -> f64 {
        1000.0 / self.service_ns as f64 * BW_UNIT as f64
    }

    /// Run to `end_ns`, calling `each` after every ACK.
    fn run(&mut self, end_ns: u64, mut each: impl FnMut(&Path)) {
        while self.now < end_ns {
            let t_send = if (self.flight.len() as u32) < self.tp.snd_cwnd {
                self.next_send.max(self.now)
            } else {
                u64::MAX
            };
            let t_ack = self.flight.front().map_or(u64::MAX, |p| p.ack_at);
            if t_send < t_ack {
                self.send(t_send);
            } else {
                self.ack(t_ack);
                each(self);
            }
        }
    }

    fn send(&mut self, t: u64) {
        self.now = t;
        self.tp.now = Time::from_ns(t);
        if self.flight.is_empty() {
            self.first_tx = t;
            self.delivered_mstamp = t;
            self.bbr.cwnd_event(&mut self.tp, CaEvent::TxStart);
        }
        let depart = t.max(self.link_free) + self.service_ns;
        self.link_free = depart;
        self.flight.push_back(Pkt {
            sent: t,
            first_tx: self.first_tx,
            delivered_mstamp: self.delivered_mstamp,
            delivered: self.tp.delivered,
            app_limited: self.app_limited_until != 0,
            ack_at: depart + self.prop_ns,
        });
        self.tp.in_flight = self.flight.len() as u32;
        self.tp.packets_out = self.tp.in_flight;
        self.next_send = t + (MSS as u64 * 1_000_000_000).div_ceil(self.tp.pacing_rate.max(1));
    }

    fn ack(&mut self, t: u64) {
        self.now = t;
        self.tp.now = Time::from_ns(t);
        let p = self.flight.pop_front().unwrap();
        let prior_in_flight = self.flight.len() as u32 + 1;
        self.tp.delivered += 1;
        self.tp.in_flight = self.flight.len() as u32;
        self.tp.packets_out = self.tp.in_flight;
        let rtt_us = (t - p.sent) / 1000;
        self.tp.srtt_us = if self.tp.srtt_us == 0 {
            rtt_us as u32
        } else {
            (self.tp.srtt_us * 7 + rtt_us as u32) / 8
        };
        if self.tp.min_rtt_us == 0 || (rtt_us as u32) < self.tp.min_rtt_us {
            self.tp.min_rtt_us = rtt_us as u32;
        }
        let interval_ns = (p.sent - p.first_tx).max(t - p.delivered_mstamp);
        self.first_tx = p.sent;
        self.delivered_mstamp = t;
        if self.app_limited_until != 0 && self.tp.delivered > self.app_limited_until {
            self.app_limited_until = 0;
        }
        let rs = RateSample {
            delivered: (self.tp.delivered - p.delivered) as i64,
            interval_us: (interval_ns / 1000) as i64,
            rtt_us: rtt_us as i64,
            losses: 0,
            acked_sacked: 1,
            prior_in_flight,
            prior_delivered: p.delivered,
            is_app_limited: p.app_limited,
        };
        // BBR's `tp.app_limited = true` asks for Linux's marker delivered + in_flight.
        self.tp.app_limited = false;
        self.bbr.cong_control(&mut self.tp, &rs);
        if self.tp.app_limited {
            self.app_limited_until = (self.tp.delivered + self.tp.in_flight as u64).max(1);
        }
        self.tp.app_limited = self.app_limited_until != 0;
    }
}

const MS: u64 = 1_000_000;

/// 1448 B every 100 µs (115.8 Mbit/s) and 20 ms: BDP = 201 packets (RTT 20.1 ms).
fn wan(seed: u64) -> Path {
    Path::new(seed, 100_000, 20 * MS, |_| {})
}

#[test]
fn path_startup_drain_probe_bw_in_order() {
    let mut path = wan(1);
    let mut modes = vec![Mode::Startup];
    let mut drain_gains = Vec::new();
    path.run(2_000 * MS, |p| {
        if *modes.last().unwrap() != p.bbr.mode() {
            modes.push(p.bbr.mode());
        }
        if p.bbr.mode() == Mode::Drain {
            drain_gains.push(p.bbr.pacing_gain());
        }
    });
    assert_eq!(modes, [Mode::Startup, Mode::Drain, Mode::ProbeBw]);
    assert!(drain_gains.iter().all(|g| *g == BBR_DRAIN_GAIN) && !drain_gains.is_empty());
    let bw = path.bbr.max_bw() as f64;
    assert!((bw / path.path_bw() - 1.0).abs() < 0.02, "bw {bw} vs {}", path.path_bw());
    assert_eq!(path.bbr.min_rtt_us(), 20_100);
}

#[test]
fn path_probe_bw_pacing_follows_the_gain_cycle() {
    let mut path = wan(2);
    path.run(1_000 * MS, |_| {});
    assert_eq!(path.bbr.mode(), Mode::ProbeBw);
    let mut visited = [false; CYCLE_LEN as usize];
    path.run(2_000 * MS, |p| {
        let idx = p.bbr.cycle_idx() as usize;
        visited[idx] = true;
        assert_eq!(p.bbr.pacing_gain(), BBR_PACING_GAIN[idx]);
        assert_eq!(
            p.tp.pacing_rate,
            Bbr::rate_bytes_per_sec(&p.tp, p.bbr.bw() as u64, p.bbr.pacing_gain())
        );
        let gain = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0][idx];
        assert!((p.tp.pacing_rate as f64 / rate_f64(p.bbr.bw(), gain) - 1.0).abs() < 1e-3);
    });
    assert!(visited.iter().all(|v| *v), "{visited:?}");
}

#[test]
fn path_probe_bw_cwnd_is_two_bdp_plus_quantization() {
    let mut path = wan(3);
    path.run(1_000 * MS, |_| {});
    let (mut equal, mut total) = (0, 0);
    path.run(3_000 * MS, |p| {
        let b = &p.bbr;
        if b.cycle_idx() < 3 {
            return; // phases 0–2 change the TSO goal or add 2
        }
        // Linux arithmetic written out again: ⌈2·bw·min_rtt⌉ + aggregation + 3 bursts, even.
        let bdp =
            ((2 * b.max_bw() as u64 * b.min_rtt_us() as u64) as f64 / BW_UNIT as f64).ceil() as u32;
        let aggr = (b.aggregation.extra_acked[0].max(b.aggregation.extra_acked[1]) as u32)
            .min(((b.max_bw() as u64 * 100_000) >> 24) as u32);
        let goal = ((p.tp.pacing_rate >> 10).min(65_215) / MSS as u64).max(2) as u32;
        let target = (bdp + aggr + 3 * goal + 1) & !1;
        assert!(p.tp.snd_cwnd <= target);
        assert!((bdp as i64 - 2 * 201).abs() <= 4, "bdp {bdp}");
        total += 1;
        equal += (p.tp.snd_cwnd == target) as u32;
    });
    assert!(total > 10_000, "{total} ACKs in phases 3–7");
    assert!(equal * 10 >= total * 9, "{equal} of {total} ACKs at the target");
}

#[test]
fn path_probe_rtt_after_ten_seconds_holds_four_packets() {
    let mut path = wan(4);
    path.run(1_000 * MS, |_| {});
    let stamp = path.bbr.min_rtt_stamp;
    let (mut cwnd_before, mut entered, mut at_four, mut left) = (0, None, None, None);
    let mut prior = 0;
    let mut max_cwnd_inside = 0;
    let mut cwnd_after = 0;
    path.run(12_000 * MS, |p| {
        let jiffies = p.tp.jiffies();
        match (p.bbr.mode(), entered, left) {
            (Mode::ProbeRtt, None, _) => {
                entered = Some(jiffies);
                prior = p.bbr.prior_cwnd;
            }
            (Mode::ProbeRtt, Some(_), None) => {
                max_cwnd_inside = max_cwnd_inside.max(p.tp.snd_cwnd);
                if at_four.is_none() && p.bbr.probe_rtt.done_stamp != 0 {
                    at_four = Some(jiffies);
                }
            }
            (Mode::ProbeBw, Some(_), None) => {
                left = Some(jiffies);
                cwnd_after = p.tp.snd_cwnd;
            }
            (_, None, _) => cwnd_before = p.tp.snd_cwnd,
            _ => {}
        }
    });
    let (entered, at_four, left) = (entered.unwrap(), at_four.unwrap(), left.unwrap());
    // Entered on the first ACK after the 10 s window (HZ = 1000: jiffies are ms).
    assert!(entered > stamp + 10_000 && entered <= stamp + 10_000 + 21, "{stamp} → {entered}");
    assert_eq!(prior, cwnd_before, "save_cwnd kept the PROBE_BW cwnd");
    assert!(max_cwnd_inside <= BBR_CWND_MIN_TARGET);
    assert!(left - at_four > BBR_PROBE_RTT_MODE_MS, "{at_four} → {left}");
    assert!(left - at_four >= 20, "at least one round (20.1 ms)");
    assert!(left - at_four <= BBR_PROBE_RTT_MODE_MS + 21);
    assert!(cwnd_after as f64 >= 0.9 * prior as f64, "cwnd {cwnd_after} restored toward {prior}");
    assert_eq!(path.bbr.min_rtt_stamp, left, "the window restarts at exit");
}

#[test]
fn path_pacing_never_exceeds_max_pacing_rate() {
    let cap = 5_000_000; // 40 Mbit/s, below the 115.8 Mbit/s path
    let mut path = Path::new(5, 100_000, 20 * MS, |tp| tp.max_pacing_rate = cap);
    assert!(path.tp.pacing_rate <= cap);
    let mut top = 0;
    path.run(3_000 * MS, |p| {
        assert!(p.tp.pacing_rate <= cap);
        top = top.max(p.tp.pacing_rate);
    });
    assert_eq!(top, cap);
}
