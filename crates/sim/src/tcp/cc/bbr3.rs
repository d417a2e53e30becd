//! BBR v3 as google/bbr branch `v3` runs it: `net/ipv4/tcp_bbr.c` (`BBR_VERSION 3`, read at
//! google/bbr @ 001a430). Algorithm: draft-ietf-ccwg-bbr; Cardwell et al., "BBRv3: Algorithm
//! Bug Fixes and Performance Refinements", IETF 117 ICCRG, 2023.
//!
//! Beyond v1's model (bw, min_rtt) v3 keeps bounds learned from loss and ECN: a long-term upper
//! bound `inflight_hi` (cut when a bandwidth probe sees loss > 2 % or CE > 50 % of the flight)
//! and short-term lower bounds `bw_lo`/`inflight_lo` (cut by β = 0.3 per lossy round, or by
//! α·1/3 per marked round, while not probing). The bandwidth filter is the max of the last two
//! PROBE_BW cycles. STARTUP paces at 4 ln 2 with cwnd gain 2 and also ends on sustained loss or
//! ECN. PROBE_BW cycles DOWN (0.91) → CRUISE (1.0, below inflight_hi with 15 % headroom) →
//! REFILL (1.0, one round) → UP (1.25) with the next probe after a random 2–3 s or
//! min(63, BDP) rounds. PROBE_RTT runs every 5 s at half the BDP.
//!
//! Units as v1 ([`super::bbr`]): bw in packets/µs × [`BW_UNIT`], gains in [`BBR_UNIT`], cwnd in
//! packets, pacing rate in bytes/s. Constants v3 shares with v1 (same value, same name in both
//! files) are re-used from [`super::bbr`] and pinned again here against v3.
//!
//! Where we differ from google/bbr v3 (docs/fidelity.md):
//! - `rs->lost`, `rs->delivered_ce`, `rs->tx_in_flight`, `rs->is_ece` are rebuilt from
//!   [`Sock`] counters ([`signals`]); `tx_in_flight` is `rs.prior_in_flight`.
//! - `skb_marked_lost` has no hook: its work runs at the start of `cong_control` for the
//!   `rs.losses` packets of this ACK, each with `pcount` 1 and the sampled packet's send state.
//! - `bbr_can_use_ecn()` needs `TCP_ECN_LOW` (route feature `ecn_low`): here
//!   [`Params::ecn_low`], default on, with [`Sock::ecn_ok`] for `TCP_ECN_OK`.
//! - Not modelled: PLB (`sysctl_tcp_plb_enabled` is 0 by default), the precise-ECE ACK state
//!   (`dctcp_ece_ack_update`, receiver side), `CA_EVENT_TLP_RECOVERY`, `fast_ack_mode`,
//!   `TCP_ECN_ECT_PERMANENT`, `rs->is_ack_delayed`, `rs->is_acking_tlp_retrans_seq`.
//! - The `tso_segs` hook is not in [`CongestionOps`]: the core's `tcp_tso_autosize()` with
//!   `min_tso_segs` 2 sizes bursts (cap `gso_max_size`, not `gso_max_size − 1 − MAX_TCP_HEADER`,
//!   and `tp.min_rtt_us` for the short-RTT bonus). BBR's own `bbr_tso_segs_goal()` is exact.
//! - The EDT is `now` (as v1), and `tp->delivered_mstamp` is derived as in v1.
//! - `get_random_u32_below()` draws from a seeded [`crate::rng`] stream ([`Params::seed`]).

mod signals;

use super::bbr::aggregation::AckAggregation;
use super::bbr::probe_rtt::{Hold, ProbeRttHold};

use signals::{Signals, TxLog};

pub use super::bbr::{
    BBR_ACK_EPOCH_ACKED_RESET_THRESH, BBR_CWND_GAIN, BBR_CWND_MIN_TARGET, BBR_DRAIN_GAIN,
    BBR_EXTRA_ACKED_GAIN, BBR_EXTRA_ACKED_MAX_US, BBR_EXTRA_ACKED_WIN_RTTS, BBR_FULL_BW_CNT,
    BBR_FULL_BW_THRESH, BBR_MIN_RTT_WIN_SEC, BBR_PACING_MARGIN_PERCENT, BBR_PROBE_RTT_MODE_MS,
    BBR_SCALE, BBR_SNDBUF_EXPAND, BBR_UNIT, BW_SCALE, BW_UNIT, Mode,
};
use super::{
    CaEvent, CaState, CongestionOps, GSO_MAX_SIZE, RateSample, Sock, TCP_MIN_TSO_SEGS, after,
    msecs_to_jiffies,
};
use crate::rng::{self, Stream};
use crate::tcp::sender::MAX_TCP_HEADER;

/// `bbr_startup_pacing_gain` = `BBR_UNIT·277/100 + 1` = 710 (`tcp_bbr.c` v3): 4 ln 2 ≈ 2.77, the
/// smallest gain that doubles the rate each round while sending what slow start would.
pub const BBR_STARTUP_PACING_GAIN: u32 = BBR_UNIT * 277 / 100 + 1;
/// `bbr_startup_cwnd_gain` = 2·`BBR_UNIT` (`tcp_bbr.c` v3); v1 used 2.885.
pub const BBR_STARTUP_CWND_GAIN: u32 = BBR_UNIT * 2;
/// `bbr_pacing_gain[]` (`tcp_bbr.c` v3), indexed by [`Phase`]: UP 5/4, DOWN 91/100 (232),
/// CRUISE 1, REFILL 1.
pub const BBR_PACING_GAIN: [u32; 4] = [BBR_UNIT * 5 / 4, BBR_UNIT * 91 / 100, BBR_UNIT, BBR_UNIT];
/// `bbr_probe_rtt_win_ms` (`tcp_bbr.c` v3): PROBE_RTT when no RTT at or below the 5 s min.
pub const BBR_PROBE_RTT_WIN_MS: u32 = 5000;
/// `bbr_probe_rtt_cwnd_gain` = `BBR_UNIT/2` (`tcp_bbr.c` v3): PROBE_RTT cwnd is half the BDP.
pub const BBR_PROBE_RTT_CWND_GAIN: u32 = BBR_UNIT / 2;
/// `bbr_tso_rtt_shift` (`tcp_bbr.c` v3): the 64 KiB burst bonus halves per 512 µs of min RTT.
pub const BBR_TSO_RTT_SHIFT: u32 = 9;
/// `bbr_ecn_max_rtt_us` (`tcp_bbr.c` v3): ECN logic only on paths with min RTT ≤ 5 ms.
pub const BBR_ECN_MAX_RTT_US: u32 = 5000;
/// `bbr_beta` = `BBR_UNIT·30/100` = 76 (`tcp_bbr.c` v3): a lossy round cuts bw_lo and
/// inflight_lo, and a lossy probe inflight_hi, to (1 − β) ≈ 0.7.
pub const BBR_BETA: u32 = BBR_UNIT * 30 / 100;
/// `bbr_ecn_alpha_gain` = `BBR_UNIT/16` (`tcp_bbr.c` v3): EWMA gain of the CE fraction.
pub const BBR_ECN_ALPHA_GAIN: u32 = BBR_UNIT / 16;
/// `bbr_ecn_alpha_init` = `BBR_UNIT` (`tcp_bbr.c` v3): start as if fully marked.
pub const BBR_ECN_ALPHA_INIT: u32 = BBR_UNIT;
/// `bbr_ecn_factor` = `BBR_UNIT/3` = 85 (`tcp_bbr.c` v3): a marked round cuts inflight_lo by
/// α/3.
pub const BBR_ECN_FACTOR: u32 = BBR_UNIT / 3;
/// `bbr_ecn_thresh` = `BBR_UNIT/2` (`tcp_bbr.c` v3): CE on > 50 % of a sample is "too high".
pub const BBR_ECN_THRESH: u32 = BBR_UNIT / 2;
/// `bbr_ecn_reprobe_gain` = `BBR_UNIT/2` (`tcp_bbr.c` v3): after an ECN-only cycle, re-probe
/// at once, first round growing inflight_hi by half of it.
pub const BBR_ECN_REPROBE_GAIN: u32 = BBR_UNIT / 2;
/// `bbr_loss_thresh` = `BBR_UNIT·2/100` = 5 (`tcp_bbr.c` v3): loss > 2 % of the flight is
/// "too high".
pub const BBR_LOSS_THRESH: u32 = BBR_UNIT * 2 / 100;
/// `bbr_full_loss_cnt` (`tcp_bbr.c` v3): STARTUP ends after ≥ 6 loss events in a recovery round
/// with loss too high.
pub const BBR_FULL_LOSS_CNT: u32 = 6;
/// `bbr_full_ecn_cnt` (`tcp_bbr.c` v3): STARTUP ends after 2 rounds with CE ≥ 50 %.
pub const BBR_FULL_ECN_CNT: u32 = 2;
/// `bbr_inflight_headroom` = `BBR_UNIT·15/100` = 38 (`tcp_bbr.c` v3): CRUISE leaves 15 % of
/// inflight_hi unused for other flows.
pub const BBR_INFLIGHT_HEADROOM: u32 = BBR_UNIT * 15 / 100;
/// `bbr_bw_probe_cwnd_gain` (`tcp_bbr.c` v3): PROBE_UP adds 1 × `BBR_UNIT/4` to the cwnd gain.
pub const BBR_BW_PROBE_CWND_GAIN: u32 = 1;
/// `bbr_bw_probe_max_rounds` (`tcp_bbr.c` v3): probe at least every 63 rounds (Reno
/// coexistence up to a 62-packet BDP).
pub const BBR_BW_PROBE_MAX_ROUNDS: u32 = 63;
/// `bbr_bw_probe_rand_rounds` (`tcp_bbr.c` v3): the round count starts at a random 0 or 1.
pub const BBR_BW_PROBE_RAND_ROUNDS: u32 = 2;
/// `bbr_bw_probe_base_us` (`tcp_bbr.c` v3): wall-clock wait between probes, at least 2 s...
pub const BBR_BW_PROBE_BASE_US: u32 = 2_000_000;
/// `bbr_bw_probe_rand_us` (`tcp_bbr.c` v3): ...plus a random 0–1 s.
pub const BBR_BW_PROBE_RAND_US: u32 = 1_000_000;
/// `GSO_LEGACY_MAX_SIZE − 1 − MAX_TCP_HEADER` (`bbr_tso_segs_goal()` v3): burst cap, bytes.
pub const BBR_TSO_MAX_BYTES: u64 = GSO_MAX_SIZE as u64 - 1 - MAX_TCP_HEADER;

/// `enum bbr_pacing_gain_phase` (`tcp_bbr.c` v3): the PROBE_BW phase (`cycle_idx`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Phase {
    /// Push inflight up to probe for bandwidth and volume.
    #[default]
    Up = 0,
    /// Drain the queue the probe built.
    Down = 1,
    /// Pace at bw with headroom, reacting only to loss/ECN.
    Cruise = 2,
    /// One round at bw to refill the pipe before probing.
    Refill = 3,
}

/// `enum bbr_ack_phase` (`tcp_bbr.c` v3): what the ACKs now arriving say about probing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum AckPhase {
    #[default]
    Init,
    Refilling,
    ProbeStarting,
    ProbeFeedback,
    ProbeStopping,
}

/// Knobs the kernel gets from elsewhere.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Params {
    /// Seed of the stream for `bbr_pick_probe_wait()`.
    pub seed: u64,
    /// The route has the `ecn_low` feature (`TCP_ECN_LOW`: CE marks mean a shallow-threshold
    /// queue). With [`Sock::ecn_ok`] this lets BBR use ECN.
    pub ecn_low: bool,
}

impl Default for Params {
    fn default() -> Params {
        Params { seed: 0, ecn_low: true }
    }
}

/// `struct bbr` (`tcp_bbr.c` v3). `u32::MAX` stands for Linux's `~0U` ("unset").
#[derive(Clone, Debug)]
pub struct Bbr3 {
    rng: Stream,
    ecn_low: bool,
    min_rtt_us: u32,
    /// jiffies.
    min_rtt_stamp: u32,
    /// The PROBE_RTT hold (`probe_rtt_done_stamp`, `probe_rtt_round_done`).
    probe_rtt: ProbeRttHold,
    /// Min RTT in the last 5 s, and when, jiffies.
    probe_rtt_min_us: u32,
    probe_rtt_min_stamp: u32,
    next_rtt_delivered: u64,
    /// Start of this PROBE_BW phase (`tcp_mstamp`), µs.
    cycle_mstamp: u64,
    mode: Mode,
    prev_ca_state: CaState,
    round_start: bool,
    bw_probe_up_rounds: u32,
    try_fast_path: bool,
    idle_restart: bool,
    init_cwnd: u32,
    pacing_gain: u32,
    cwnd_gain: u32,
    full_bw_reached: bool,
    full_bw_cnt: u32,
    phase: Phase,
    has_seen_rtt: bool,
    prior_cwnd: u32,
    full_bw: u32,
    aggregation: AckAggregation,
    full_bw_now: bool,
    startup_ecn_rounds: u32,
    loss_in_cycle: bool,
    ecn_in_cycle: bool,
    loss_round_delivered: u64,
    undo_bw_lo: u32,
    undo_inflight_lo: u32,
    undo_inflight_hi: u32,
    bw_latest: u32,
    bw_lo: u32,
    bw_hi: [u32; 2],
    inflight_latest: u32,
    inflight_lo: u32,
    inflight_hi: u32,
    bw_probe_up_cnt: u32,
    bw_probe_up_acks: u32,
    probe_wait_us: u32,
    ecn_eligible: bool,
    ecn_alpha: u32,
    bw_probe_samples: bool,
    prev_probe_too_high: bool,
    stopped_risky_probe: bool,
    rounds_since_probe: u32,
    loss_round_start: bool,
    loss_in_round: bool,
    ecn_in_round: bool,
    ack_phase: AckPhase,
    loss_events_in_round: u32,
    alpha_last_delivered: u64,
    alpha_last_delivered_ce: u64,
    /// `tp->delivered_mstamp`, µs, and the `tp.delivered` it was stamped for.
    delivered_mstamp: u64,
    stamped_delivered: u64,
    tx: TxLog,
}

impl Default for Bbr3 {
    fn default() -> Bbr3 {
        Bbr3::new(Params::default())
    }
}

impl Bbr3 {
    /// A BBR v3 in the state `bbr_init()` leaves on a fresh socket (cwnd 10, no RTT).
    pub fn new(params: Params) -> Bbr3 {
        Bbr3 {
            rng: rng::stream(params.seed, "bbr3", 0),
            ecn_low: params.ecn_low,
            min_rtt_us: u32::MAX,
            min_rtt_stamp: 0,
            probe_rtt: ProbeRttHold::default(),
            probe_rtt_min_us: u32::MAX,
            probe_rtt_min_stamp: 0,
            next_rtt_delivered: 0,
            cycle_mstamp: 0,
            mode: Mode::Startup,
            prev_ca_state: CaState::Open,
            round_start: false,
            bw_probe_up_rounds: 0,
            try_fast_path: false,
            idle_restart: false,
            init_cwnd: 10,
            pacing_gain: BBR_STARTUP_PACING_GAIN,
            cwnd_gain: BBR_STARTUP_CWND_GAIN,
            full_bw_reached: false,
            full_bw_cnt: 0,
            phase: Phase::Up,
            has_seen_rtt: false,
            prior_cwnd: 0,
            full_bw: 0,
            aggregation: AckAggregation::default(),
            full_bw_now: false,
            startup_ecn_rounds: 0,
            loss_in_cycle: false,
            ecn_in_cycle: false,
            loss_round_delivered: 1,
            undo_bw_lo: 0,
            undo_inflight_lo: 0,
            undo_inflight_hi: 0,
            bw_latest: 0,
            bw_lo: u32::MAX,
            bw_hi: [0; 2],
            inflight_latest: 0,
            inflight_lo: u32::MAX,
            inflight_hi: u32::MAX,
            bw_probe_up_cnt: u32::MAX,
            bw_probe_up_acks: 0,
            probe_wait_us: 0,
            ecn_eligible: false,
            ecn_alpha: BBR_ECN_ALPHA_INIT,
            bw_probe_samples: false,
            prev_probe_too_high: false,
            stopped_risky_probe: false,
            rounds_since_probe: 0,
            loss_round_start: false,
            loss_in_round: false,
            ecn_in_round: false,
            ack_phase: AckPhase::Init,
            loss_events_in_round: 0,
            alpha_last_delivered: 0,
            alpha_last_delivered_ce: 0,
            delivered_mstamp: 0,
            stamped_delivered: 0,
            tx: TxLog::default(),
        }
    }

    // ---- read-only state, for tests and records ----

    pub fn mode(&self) -> Mode {
        self.mode
    }
    /// The PROBE_BW phase (meaningful in [`Mode::ProbeBw`]).
    pub fn phase(&self) -> Phase {
        self.phase
    }
    /// `bbr_max_bw()`: max of the two `bw_hi` slots, packets/µs × [`BW_UNIT`].
    pub fn max_bw(&self) -> u32 {
        self.bw_hi[0].max(self.bw_hi[1])
    }
    /// `bbr_bw()`: `min(max_bw, bw_lo)`, packets/µs × [`BW_UNIT`].
    pub fn bw(&self) -> u32 {
        self.max_bw().min(self.bw_lo)
    }
    /// `bw_lo`; `u32::MAX` when unset.
    pub fn bw_lo(&self) -> u32 {
        self.bw_lo
    }
    /// `inflight_hi`, packets; `u32::MAX` when unset.
    pub fn inflight_hi(&self) -> u32 {
        self.inflight_hi
    }
    /// `inflight_lo`, packets; `u32::MAX` when unset.
    pub fn inflight_lo(&self) -> u32 {
        self.inflight_lo
    }
    /// Min RTT estimate, µs; `u32::MAX` before the first sample.
    pub fn min_rtt_us(&self) -> u32 {
        self.min_rtt_us
    }
    pub fn pacing_gain(&self) -> u32 {
        self.pacing_gain
    }
    pub fn cwnd_gain(&self) -> u32 {
        self.cwnd_gain
    }
    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }
    /// ECN logic is in use (ECN negotiated, `ecn_low`, min RTT ≤ 5 ms once).
    pub fn ecn_eligible(&self) -> bool {
        self.ecn_eligible
    }
    /// EWMA of the CE fraction, in [`BBR_UNIT`].
    pub fn ecn_alpha(&self) -> u32 {
        self.ecn_alpha
    }
    /// Wall-clock wait before the next bandwidth probe, µs.
    pub fn probe_wait_us(&self) -> u32 {
        self.probe_wait_us
    }
    /// Packet-timed rounds since the last probe (starts at a random 0 or 1).
    pub fn rounds_since_probe(&self) -> u32 {
        self.rounds_since_probe
    }

    // ---- rates and windows ----

    /// `bbr_rate_bytes_per_sec()`: `rate` × mss × gain × (100 − margin) %, bytes/s, at least 1.
    fn rate_bytes_per_sec(tp: &Sock, rate: u64, gain: u32, margin: u64) -> u64 {
        let r = (rate as u128 * tp.mss as u128 * gain as u128) >> BBR_SCALE;
        let r = (r * (1_000_000 / 100 * (100 - margin)) as u128) >> BW_SCALE;
        (r as u64).max(1)
    }

    /// `bbr_bw_to_pacing_rate()`: with the 1 % margin, capped by `SO_MAX_PACING_RATE`.
    fn bw_to_pacing_rate(tp: &Sock, bw: u32, gain: u32) -> u64 {
        Self::rate_bytes_per_sec(tp, bw as u64, gain, BBR_PACING_MARGIN_PERCENT)
            .min(tp.max_pacing_rate)
    }

    /// [`Bbr3::bw`] in bytes/s without gain or margin (`bbr_bw_bytes_per_sec()`).
    pub fn bw_bytes_per_sec(&self, tp: &Sock) -> u64 {
        Self::rate_bytes_per_sec(tp, self.bw() as u64, BBR_UNIT, 0)
    }

    /// `bbr_init_pacing_rate_from_rtt()`: startup gain × cwnd / srtt (1 ms without an RTT).
    fn init_pacing_rate_from_rtt(&mut self, tp: &mut Sock) {
        let bw = super::bbr::initial_bw(tp);
        self.has_seen_rtt |= tp.srtt_us != 0;
        tp.pacing_rate = Self::bw_to_pacing_rate(tp, bw, BBR_STARTUP_PACING_GAIN);
    }

    /// `bbr_set_pacing_rate()`: never lowered before the pipe is full.
    fn set_pacing_rate(&mut self, tp: &mut Sock, bw: u32, gain: u32) {
        let rate = Self::bw_to_pacing_rate(tp, bw, gain);
        if !self.has_seen_rtt && tp.srtt_us != 0 {
            self.init_pacing_rate_from_rtt(tp);
        }
        if self.full_bw_reached || rate > tp.pacing_rate {
            tp.pacing_rate = rate;
        }
    }

    /// `bbr_tso_segs_goal()`: ~1 ms at the pacing rate plus 64 KiB halved per 512 µs of min RTT,
    /// at most [`BBR_TSO_MAX_BYTES`], at least `sysctl_tcp_min_tso_segs`.
    fn tso_segs_goal(&self, tp: &Sock) -> u32 {
        let mut bytes = tp.pacing_rate >> tp.pacing_shift;
        let r = self.min_rtt_us >> BBR_TSO_RTT_SHIFT;
        if r < 32 {
            bytes += (GSO_MAX_SIZE >> r) as u64;
        }
        let bytes = bytes.min(BBR_TSO_MAX_BYTES);
        ((bytes / tp.mss.max(1) as u64) as u32).max(TCP_MIN_TSO_SEGS)
    }

    /// `bbr_save_cwnd()`.
    fn save_cwnd(&mut self, tp: &Sock) {
        if self.prev_ca_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = tp.snd_cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(tp.snd_cwnd);
        }
    }

    /// `bbr_bdp()`: ⌈bw × min_rtt × gain⌉; the initial cwnd before any RTT sample.
    fn bdp(&self, bw: u32, gain: u32) -> u32 {
        if self.min_rtt_us == u32::MAX {
            return self.init_cwnd;
        }
        let w = bw as u128 * self.min_rtt_us as u128;
        ((w * gain as u128) >> BBR_SCALE).div_ceil(BW_UNIT as u128).min(u32::MAX as u128) as u32
    }

    /// `bbr_quantization_budget()` v3: at least three TSO bursts and 4 packets, +2 in UP.
    fn quantization_budget(&self, tp: &Sock, cwnd: u32) -> u32 {
        let cwnd = cwnd.max(3 * self.tso_segs_goal(tp)).max(BBR_CWND_MIN_TARGET);
        if self.mode == Mode::ProbeBw && self.phase == Phase::Up { cwnd + 2 } else { cwnd }
    }

    /// `bbr_inflight()`.
    fn inflight(&self, tp: &Sock, bw: u32, gain: u32) -> u32 {
        self.quantization_budget(tp, self.bdp(bw, gain))
    }

    /// `bbr_packets_in_net_at_edt()` with the EDT at `now`.
    fn packets_in_net_at_edt(&self, tp: &Sock, inflight_now: u32) -> u32 {
        if self.pacing_gain > BBR_UNIT {
            inflight_now + self.tso_segs_goal(tp)
        } else {
            inflight_now
        }
    }

    /// `bbr_ack_aggregation_cwnd()` v3 (no full-pipe condition, unlike v1).
    fn ack_aggregation_cwnd(&self) -> u32 {
        self.aggregation.cwnd(self.bw())
    }

    /// `bbr_probe_rtt_cwnd()`: half the BDP, at least 4 packets.
    fn probe_rtt_cwnd(&self) -> u32 {
        self.bdp(self.bw(), BBR_PROBE_RTT_CWND_GAIN).max(BBR_CWND_MIN_TARGET)
    }

    /// `bbr_target_inflight()`: the BDP unless congestion has cut cwnd below it.
    fn target_inflight(&self, tp: &Sock) -> u32 {
        self.inflight(tp, self.bw(), BBR_UNIT).min(tp.snd_cwnd)
    }

    /// `bbr_inflight_with_headroom()`: inflight_hi less 15 % (≥ 1), at least 4 packets.
    fn inflight_with_headroom(&self) -> u32 {
        if self.inflight_hi == u32::MAX {
            return u32::MAX;
        }
        let headroom =
            ((self.inflight_hi as u64 * BBR_INFLIGHT_HEADROOM as u64) >> BBR_SCALE).max(1) as u32;
        self.inflight_hi.saturating_sub(headroom).max(BBR_CWND_MIN_TARGET)
    }

    // ---- cwnd ----

    /// `bbr_set_cwnd()` v3: slow-start toward the target, snap down once the pipe is full;
    /// PROBE_RTT caps at half the BDP. (v3 has no packet-conservation step.)
    fn set_cwnd(&mut self, tp: &mut Sock, acked: u32, bw: u32, gain: u32) {
        // Growth saturates at u32::MAX, `snd_cwnd_clamp`'s `~0U` (`tcp_init_sock()`): route
        // initcwnd is a u32 bounded only by that clamp (`tcp_init_cwnd()`).
        let mut cwnd = tp.snd_cwnd;
        if acked != 0 {
            let target = self.bdp(bw, gain) + self.ack_aggregation_cwnd();
            let target = self.quantization_budget(tp, target);
            self.try_fast_path = false;
            if self.full_bw_reached {
                cwnd = cwnd.saturating_add(acked);
                if cwnd >= target {
                    cwnd = target;
                    self.try_fast_path = true;
                }
            } else if cwnd < target || cwnd < self.init_cwnd.saturating_mul(2) {
                cwnd = cwnd.saturating_add(acked);
            } else {
                self.try_fast_path = true;
            }
            cwnd = cwnd.max(BBR_CWND_MIN_TARGET);
        }
        tp.snd_cwnd = cwnd.min(tp.snd_cwnd_clamp);
        if self.mode == Mode::ProbeRtt {
            tp.snd_cwnd = tp.snd_cwnd.min(self.probe_rtt_cwnd());
        }
    }

    /// `bbr_bound_cwnd_for_inflight_model()`: inflight_hi while probing, inflight_hi less
    /// headroom in CRUISE and PROBE_RTT, and inflight_lo always.
    fn bound_cwnd_for_inflight_model(&self, tp: &mut Sock) {
        let mut cap = u32::MAX;
        if self.mode == Mode::ProbeBw && self.phase != Phase::Cruise {
            cap = self.inflight_hi;
        } else if self.mode == Mode::ProbeRtt || self.mode == Mode::ProbeBw {
            cap = self.inflight_with_headroom();
        }
        let cap = cap.min(self.inflight_lo).max(BBR_CWND_MIN_TARGET);
        tp.snd_cwnd = tp.snd_cwnd.min(cap);
    }

    // ---- the bw filter and the full-pipe estimator ----

    /// `bbr_take_max_bw_sample()`.
    fn take_max_bw_sample(&mut self, bw: u32) {
        self.bw_hi[1] = self.bw_hi[1].max(bw);
    }

    /// `bbr_advance_max_bw_filter()`: once per cycle; an empty window keeps the old one.
    fn advance_max_bw_filter(&mut self) {
        if self.bw_hi[1] == 0 {
            return;
        }
        self.bw_hi = [self.bw_hi[1], 0];
    }

    /// `bbr_reset_full_bw()`.
    fn reset_full_bw(&mut self) {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.full_bw_now = false;
    }

    /// `bbr_check_full_bw_reached()` v3: per-ACK samples ≥ 1.25 × full_bw restart the count;
    /// 3 rounds without one mean a plateau.
    fn check_full_bw_reached(&mut self, rs: &RateSample, sample_bw: u32) {
        if self.full_bw_now || rs.is_app_limited {
            return;
        }
        let thresh = ((self.full_bw as u64 * BBR_FULL_BW_THRESH as u64) >> BBR_SCALE) as u32;
        if sample_bw >= thresh {
            self.reset_full_bw();
            self.full_bw = sample_bw;
            return;
        }
        if !self.round_start {
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_now = self.full_bw_cnt >= BBR_FULL_BW_CNT;
        self.full_bw_reached |= self.full_bw_now;
    }

    /// `bbr_handle_queue_too_high_in_startup()`: the pipe is full; inflight_hi starts at the
    /// larger of the BDP and what the last round delivered.
    fn handle_queue_too_high_in_startup(&mut self, tp: &Sock) {
        self.full_bw_reached = true;
        let bdp = self.inflight(tp, self.max_bw(), BBR_UNIT);
        self.inflight_hi = bdp.max(self.inflight_latest);
    }

    /// `bbr_check_ecn_too_high_in_startup()`.
    fn check_ecn_too_high_in_startup(&mut self, tp: &Sock, ce_ratio: u32) {
        if self.full_bw_reached || !self.ecn_eligible {
            return;
        }
        if ce_ratio >= BBR_ECN_THRESH {
            self.startup_ecn_rounds += 1;
        } else {
            self.startup_ecn_rounds = 0;
        }
        if self.startup_ecn_rounds >= BBR_FULL_ECN_CNT {
            self.handle_queue_too_high_in_startup(tp);
        }
    }

    /// `bbr_check_loss_too_high_in_startup()`: at the end of a recovery round with ≥ 6 lossy
    /// ACKs and loss > 2 % of the flight.
    fn check_loss_too_high_in_startup(&mut self, tp: &Sock, rs: &RateSample, sig: &Signals) {
        if self.full_bw_reached {
            return;
        }
        if rs.losses > 0 && self.loss_events_in_round < 0xf {
            self.loss_events_in_round += 1;
        }
        if self.loss_round_start
            && tp.ca_state == CaState::Recovery
            && self.loss_events_in_round >= BBR_FULL_LOSS_CNT
            && self.is_inflight_too_high(sig)
        {
            self.handle_queue_too_high_in_startup(tp);
            return;
        }
        if self.loss_round_start {
            self.loss_events_in_round = 0;
        }
    }

    /// `bbr_check_drain()`.
    fn check_drain(&mut self, tp: &mut Sock) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            // Exported for monitoring only, as in Linux.
            tp.snd_ssthresh = self.inflight(tp, self.max_bw(), BBR_UNIT);
            self.reset_congestion_signals();
        }
        if self.mode == Mode::Drain
            && self.packets_in_net_at_edt(tp, tp.in_flight)
                <= self.inflight(tp, self.max_bw(), BBR_UNIT)
        {
            self.mode = Mode::ProbeBw;
            self.start_bw_probe_down(tp);
        }
    }

    // ---- congestion signals ----

    /// `bbr_update_ecn_alpha()` (at round starts): becomes ECN-eligible once min RTT ≤ 5 ms;
    /// EWMA of the CE fraction since the last update. Returns the CE ratio if computed.
    fn update_ecn_alpha(&mut self, tp: &Sock) -> Option<u32> {
        let can_use_ecn = tp.ecn_ok && self.ecn_low;
        if !self.ecn_eligible
            && can_use_ecn
            && BBR_ECN_FACTOR != 0
            && self.min_rtt_us <= BBR_ECN_MAX_RTT_US
        {
            self.ecn_eligible = true;
        }
        if !self.ecn_eligible {
            return None;
        }
        let delivered = tp.delivered.wrapping_sub(self.alpha_last_delivered);
        let delivered_ce = tp.delivered_ce.wrapping_sub(self.alpha_last_delivered_ce);
        if delivered == 0 {
            return None;
        }
        let ce_ratio = ((delivered_ce << BBR_SCALE) / delivered) as u32;
        let alpha = (((BBR_UNIT - BBR_ECN_ALPHA_GAIN) * self.ecn_alpha) >> BBR_SCALE)
            + ((BBR_ECN_ALPHA_GAIN * ce_ratio) >> BBR_SCALE);
        self.ecn_alpha = alpha.min(BBR_UNIT);
        self.alpha_last_delivered = tp.delivered;
        self.alpha_last_delivered_ce = tp.delivered_ce;
        self.check_ecn_too_high_in_startup(tp, ce_ratio);
        Some(ce_ratio)
    }

    /// `bbr_is_inflight_too_high()`: loss > 2 % of the flight, or (ECN-eligible) CE > 50 % of
    /// the delivered packets.
    fn is_inflight_too_high(&self, s: &Signals) -> bool {
        if s.lost > 0 && s.tx_in_flight > 0 {
            let loss_thresh =
                ((s.tx_in_flight as u64 * BBR_LOSS_THRESH as u64) >> BBR_SCALE) as u32;
            if s.lost > loss_thresh {
                return true;
            }
        }
        if s.delivered_ce > 0 && s.delivered > 0 && self.ecn_eligible {
            let ecn_thresh = ((s.delivered as u64 * BBR_ECN_THRESH as u64) >> BBR_SCALE) as u32;
            if s.delivered_ce > ecn_thresh {
                return true;
            }
        }
        false
    }

    /// `bbr_inflight_hi_from_lost_skb()` for a lost packet (`pcount` 1): the flight at which the
    /// loss rate crossed 2 %, rounded up to a packet.
    fn inflight_hi_from_lost_skb(s: &Signals) -> u32 {
        const PCOUNT: u32 = 1;
        let (Some(inflight_prev), Some(lost_prev)) =
            (s.tx_in_flight.checked_sub(PCOUNT), s.lost.checked_sub(PCOUNT))
        else {
            return u32::MAX;
        };
        let loss_budget =
            (inflight_prev as u64 * BBR_LOSS_THRESH as u64 + BBR_UNIT as u64 - 1) >> BBR_SCALE;
        let lost_prefix = if lost_prev as u64 >= loss_budget {
            0
        } else {
            ((loss_budget - lost_prev as u64) << BBR_SCALE) / (BBR_UNIT - BBR_LOSS_THRESH) as u64
        };
        (inflight_prev as u64 + lost_prefix).min(u32::MAX as u64) as u32
    }

    /// `bbr_handle_inflight_too_high()`: once per probe, inflight_hi :=
    /// max(tx_in_flight, 0.7 × target inflight); a probe in UP turns to DOWN.
    fn handle_inflight_too_high(&mut self, tp: &Sock, s: &Signals) {
        self.prev_probe_too_high = true;
        self.bw_probe_samples = false;
        if !s.is_app_limited {
            let cut = (self.target_inflight(tp) as u64 * (BBR_UNIT - BBR_BETA) as u64) >> BBR_SCALE;
            self.inflight_hi = s.tx_in_flight.max(cut as u32);
        }
        if self.mode == Mode::ProbeBw && self.phase == Phase::Up {
            self.start_bw_probe_down(tp);
        }
    }

    /// `bbr_note_loss()`.
    fn note_loss(&mut self, tp: &Sock) {
        if !self.loss_in_round {
            self.loss_round_delivered = tp.delivered;
        }
        self.loss_in_round = true;
        self.loss_in_cycle = true;
    }

    /// `bbr_skb_marked_lost()` for the `rs.losses` packets this ACK marked lost, in order (the
    /// k-th sees `tp->lost` already counting it).
    fn skb_marked_lost(&mut self, tp: &Sock, losses: u32, sig: &Signals) {
        self.note_loss(tp);
        if !self.bw_probe_samples || sig.delivered < 0 {
            return;
        }
        let lost_before = sig.lost.saturating_sub(losses);
        for k in 1..=losses {
            let s = Signals { lost: lost_before + k, ..*sig };
            if self.is_inflight_too_high(&s) {
                let s = Signals { tx_in_flight: Self::inflight_hi_from_lost_skb(&s), ..s };
                self.handle_inflight_too_high(tp, &s);
                return; // bw_probe_samples is now off: later packets return at once
            }
        }
    }

    /// `bbr_init_lower_bounds()`.
    fn init_lower_bounds(&mut self, tp: &Sock, init_bw: bool) {
        if init_bw && self.bw_lo == u32::MAX {
            self.bw_lo = self.max_bw();
        }
        if self.inflight_lo == u32::MAX {
            self.inflight_lo = tp.snd_cwnd;
        }
    }

    /// `bbr_adapt_lower_bounds()`: once per round while not probing: ECN cuts inflight_lo by
    /// α × 1/3, loss cuts bw_lo and inflight_lo by β, never below this round's delivery.
    fn adapt_lower_bounds(&mut self, tp: &Sock) {
        if self.is_probing_bandwidth() {
            return;
        }
        let mut ecn_inflight_lo = u32::MAX;
        if self.ecn_in_round && BBR_ECN_FACTOR != 0 {
            self.init_lower_bounds(tp, false);
            let ecn_cut = BBR_UNIT - ((self.ecn_alpha * BBR_ECN_FACTOR) >> BBR_SCALE);
            ecn_inflight_lo = ((self.inflight_lo as u64 * ecn_cut as u64) >> BBR_SCALE) as u32;
        }
        if self.loss_in_round {
            self.init_lower_bounds(tp, true);
            let loss_cut = (BBR_UNIT - BBR_BETA) as u64;
            self.bw_lo = self.bw_latest.max(((self.bw_lo as u64 * loss_cut) >> BBR_SCALE) as u32);
            self.inflight_lo = self
                .inflight_latest
                .max(((self.inflight_lo as u64 * loss_cut) >> BBR_SCALE) as u32);
        }
        self.inflight_lo = self.inflight_lo.min(ecn_inflight_lo);
        self.bw_lo = self.bw_lo.max(1);
    }

    /// `bbr_reset_lower_bounds()`.
    fn reset_lower_bounds(&mut self) {
        self.bw_lo = u32::MAX;
        self.inflight_lo = u32::MAX;
    }

    /// `bbr_reset_congestion_signals()`.
    fn reset_congestion_signals(&mut self) {
        self.loss_in_round = false;
        self.ecn_in_round = false;
        self.loss_in_cycle = false;
        self.ecn_in_cycle = false;
        self.bw_latest = 0;
        self.inflight_latest = 0;
    }

    /// `bbr_update_latest_delivery_signals()`: max rate and volume delivered this loss round.
    fn update_latest_delivery_signals(&mut self, tp: &Sock, rs: &RateSample, sample_bw: u32) {
        self.loss_round_start = false;
        if rs.interval_us <= 0 || rs.acked_sacked == 0 {
            return;
        }
        self.bw_latest = self.bw_latest.max(sample_bw);
        self.inflight_latest =
            self.inflight_latest.max(rs.delivered.clamp(0, u32::MAX as i64) as u32);
        if rs.prior_delivered >= self.loss_round_delivered {
            self.loss_round_delivered = tp.delivered;
            self.loss_round_start = true;
        }
    }

    /// `bbr_advance_latest_delivery_signals()`.
    fn advance_latest_delivery_signals(&mut self, rs: &RateSample, sample_bw: u32) {
        if self.loss_round_start {
            self.bw_latest = sample_bw;
            self.inflight_latest = rs.delivered.clamp(0, u32::MAX as i64) as u32;
        }
    }

    /// `bbr_update_congestion_signals()`.
    fn update_congestion_signals(&mut self, tp: &Sock, rs: &RateSample, sample_bw: u32) {
        if rs.interval_us <= 0 || rs.acked_sacked == 0 {
            return;
        }
        if !rs.is_app_limited || sample_bw >= self.max_bw() {
            self.take_max_bw_sample(sample_bw);
        }
        self.loss_in_round |= rs.losses > 0;
        if !self.loss_round_start {
            return;
        }
        self.adapt_lower_bounds(tp);
        self.loss_in_round = false;
        self.ecn_in_round = false;
    }

    /// `bbr_update_ack_aggregation()` (the window is 1 round until the pipe is full in v3).
    fn update_ack_aggregation(&mut self, tp: &Sock, rs: &RateSample) {
        if rs.acked_sacked == 0 || rs.delivered < 0 || rs.interval_us <= 0 {
            return;
        }
        let win_rtts = if self.full_bw_reached { BBR_EXTRA_ACKED_WIN_RTTS } else { 1 };
        let bw = self.bw();
        self.aggregation.update(
            self.round_start,
            win_rtts,
            self.delivered_mstamp,
            bw,
            rs.acked_sacked,
            tp.snd_cwnd,
        );
    }

    // ---- PROBE_BW ----

    /// `bbr_is_probing_bandwidth()`.
    fn is_probing_bandwidth(&self) -> bool {
        self.mode == Mode::Startup
            || (self.mode == Mode::ProbeBw && matches!(self.phase, Phase::Refill | Phase::Up))
    }

    /// `bbr_raise_inflight_hi_slope()`: each UP round doubles the growth of inflight_hi.
    fn raise_inflight_hi_slope(&mut self, tp: &Sock) {
        let growth_this_round = 1u32 << self.bw_probe_up_rounds.min(31);
        self.bw_probe_up_rounds = (self.bw_probe_up_rounds + 1).min(30);
        self.bw_probe_up_cnt = (tp.snd_cwnd / growth_this_round).max(1);
    }

    /// `bbr_probe_inflight_hi_upward()`: +1 per `bw_probe_up_cnt` packets acked while cwnd is
    /// full at inflight_hi.
    fn probe_inflight_hi_upward(&mut self, tp: &Sock, rs: &RateSample) {
        if !tp.is_cwnd_limited || tp.snd_cwnd < self.inflight_hi {
            return;
        }
        self.bw_probe_up_acks += rs.acked_sacked;
        if self.bw_probe_up_acks >= self.bw_probe_up_cnt {
            let delta = self.bw_probe_up_acks / self.bw_probe_up_cnt;
            self.bw_probe_up_acks -= delta * self.bw_probe_up_cnt;
            self.inflight_hi = self.inflight_hi.saturating_add(delta);
            self.try_fast_path = false;
        }
        if self.round_start {
            self.raise_inflight_hi_slope(tp);
        }
    }

    /// `bbr_adapt_upper_bounds()`: returns whether it decided a phase change.
    fn adapt_upper_bounds(&mut self, tp: &Sock, rs: &RateSample, sig: &Signals) -> bool {
        if self.ack_phase == AckPhase::ProbeStarting && self.round_start {
            self.ack_phase = AckPhase::ProbeFeedback;
        }
        if self.ack_phase == AckPhase::ProbeStopping && self.round_start {
            // The last ACKs of the probe: forget the previous cycle's bw.
            self.bw_probe_samples = false;
            self.ack_phase = AckPhase::Init;
            if self.mode == Mode::ProbeBw && !rs.is_app_limited {
                self.advance_max_bw_filter();
            }
            // Reached inflight_hi without loss: probe again, holding there a round first.
            if self.mode == Mode::ProbeBw && self.stopped_risky_probe && !self.prev_probe_too_high {
                self.start_bw_probe_refill(tp, 0);
                return true;
            }
        }
        if self.is_inflight_too_high(sig) {
            if self.bw_probe_samples {
                self.handle_inflight_too_high(tp, sig);
            }
        } else {
            if self.inflight_hi == u32::MAX {
                return false;
            }
            // Any phase that shows a higher level is safe raises the bound (random loss).
            if sig.tx_in_flight > self.inflight_hi {
                self.inflight_hi = sig.tx_in_flight;
            }
            if self.mode == Mode::ProbeBw && self.phase == Phase::Up {
                self.probe_inflight_hi_upward(tp, rs);
            }
        }
        false
    }

    /// `bbr_pick_probe_wait()`: 0–1 rounds already counted, and 2 s + rand(1 s).
    fn pick_probe_wait(&mut self) {
        self.rounds_since_probe = self.rng.below(BBR_BW_PROBE_RAND_ROUNDS as u64) as u32;
        self.probe_wait_us =
            BBR_BW_PROBE_BASE_US + self.rng.below(BBR_BW_PROBE_RAND_US as u64) as u32;
    }

    /// `bbr_set_cycle_idx()`.
    fn set_phase(&mut self, phase: Phase) {
        self.phase = phase;
        self.try_fast_path = false;
    }

    /// `bbr_start_bw_probe_refill()`.
    fn start_bw_probe_refill(&mut self, tp: &Sock, bw_probe_up_rounds: u32) {
        self.reset_lower_bounds();
        self.bw_probe_up_rounds = bw_probe_up_rounds;
        self.bw_probe_up_acks = 0;
        self.stopped_risky_probe = false;
        self.ack_phase = AckPhase::Refilling;
        self.next_rtt_delivered = tp.delivered;
        self.set_phase(Phase::Refill);
    }

    /// `bbr_start_bw_probe_up()`.
    fn start_bw_probe_up(&mut self, tp: &Sock, sample_bw: u32) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.next_rtt_delivered = tp.delivered;
        self.cycle_mstamp = tp.now.as_us();
        self.reset_full_bw();
        self.full_bw = sample_bw;
        self.set_phase(Phase::Up);
        self.raise_inflight_hi_slope(tp);
    }

    /// `bbr_start_bw_probe_down()`: a new cycle; the wall clock to the next probe starts now.
    fn start_bw_probe_down(&mut self, tp: &Sock) {
        self.reset_congestion_signals();
        self.bw_probe_up_cnt = u32::MAX;
        self.pick_probe_wait();
        self.cycle_mstamp = tp.now.as_us();
        self.ack_phase = AckPhase::ProbeStopping;
        self.next_rtt_delivered = tp.delivered;
        self.set_phase(Phase::Down);
    }

    /// `bbr_start_bw_probe_cruise()`.
    fn start_bw_probe_cruise(&mut self) {
        if self.inflight_lo != u32::MAX {
            self.inflight_lo = self.inflight_lo.min(self.inflight_hi);
        }
        self.set_phase(Phase::Cruise);
    }

    /// `bbr_has_elapsed_in_phase()`.
    fn has_elapsed_in_phase(&self, tp: &Sock, interval_us: u32) -> bool {
        tp.now.as_us() > self.cycle_mstamp + interval_us as u64
    }

    /// `bbr_is_reno_coexistence_probe_time()`: min(63, target inflight) rounds.
    fn is_reno_coexistence_probe_time(&self, tp: &Sock) -> bool {
        self.rounds_since_probe >= BBR_BW_PROBE_MAX_ROUNDS.min(self.target_inflight(tp))
    }

    /// `bbr_check_time_to_probe_bw()`.
    fn check_time_to_probe_bw(&mut self, tp: &Sock) -> bool {
        // ECN marks without loss this cycle, and now no marks: re-probe at once.
        if BBR_ECN_REPROBE_GAIN != 0
            && self.ecn_eligible
            && self.ecn_in_cycle
            && !self.loss_in_cycle
            && tp.ca_state == CaState::Open
        {
            let v = (self.inflight_hi as u64 * BBR_ECN_REPROBE_GAIN as u64) >> BBR_SCALE;
            let n = v.checked_ilog2().unwrap_or(0);
            self.start_bw_probe_refill(tp, n);
            return true;
        }
        if self.has_elapsed_in_phase(tp, self.probe_wait_us)
            || self.is_reno_coexistence_probe_time(tp)
        {
            self.start_bw_probe_refill(tp, 0);
            return true;
        }
        false
    }

    /// `bbr_check_time_to_cruise()`: inflight below both inflight_hi less headroom and BDP.
    fn check_time_to_cruise(&self, tp: &Sock, inflight: u32, bw: u32) -> bool {
        if inflight > self.inflight_with_headroom() {
            return false;
        }
        inflight <= self.inflight(tp, bw, BBR_UNIT)
    }

    /// `bbr_update_cycle_phase()`: the PROBE_BW state machine.
    fn update_cycle_phase(&mut self, tp: &Sock, rs: &RateSample, sig: &Signals, sample_bw: u32) {
        if !self.full_bw_reached {
            return;
        }
        if self.adapt_upper_bounds(tp, rs, sig) {
            return;
        }
        if self.mode != Mode::ProbeBw {
            return;
        }
        let inflight = self.packets_in_net_at_edt(tp, rs.prior_in_flight);
        let bw = self.max_bw();
        match self.phase {
            Phase::Cruise => {
                self.check_time_to_probe_bw(tp);
            }
            Phase::Refill => {
                // A round of refilling done: samples now reflect it; probe.
                if self.round_start {
                    self.bw_probe_samples = true;
                    self.start_bw_probe_up(tp, sample_bw);
                }
            }
            Phase::Up => {
                let mut done = false;
                if self.prev_probe_too_high && inflight >= self.inflight_hi {
                    self.stopped_risky_probe = true;
                    done = true;
                } else if tp.is_cwnd_limited && tp.snd_cwnd >= self.inflight_hi {
                    // inflight_hi limits growth: the plateau test restarts.
                    self.reset_full_bw();
                    self.full_bw = sample_bw;
                } else if self.full_bw_now {
                    done = true;
                }
                if done {
                    self.prev_probe_too_high = false;
                    self.start_bw_probe_down(tp);
                }
            }
            Phase::Down => {
                if self.check_time_to_probe_bw(tp) {
                    return;
                }
                if self.check_time_to_cruise(tp, inflight, bw) {
                    self.start_bw_probe_cruise();
                }
            }
        }
    }

    // ---- PROBE_RTT ----

    /// `bbr_exit_probe_rtt()`: to CRUISE (with a fresh probe wait) or back to STARTUP.
    fn exit_probe_rtt(&mut self, tp: &Sock) {
        self.reset_lower_bounds();
        if self.full_bw_reached {
            self.mode = Mode::ProbeBw;
            self.start_bw_probe_down(tp);
            self.start_bw_probe_cruise();
        } else {
            self.mode = Mode::Startup;
        }
    }

    /// `bbr_check_probe_rtt_done()`.
    fn check_probe_rtt_done(&mut self, tp: &mut Sock) {
        let now = tp.jiffies();
        if !self.probe_rtt.expired(now) {
            return;
        }
        self.probe_rtt_min_stamp = now; // next PROBE_RTT in 5 s
        tp.snd_cwnd = tp.snd_cwnd.max(self.prior_cwnd);
        self.exit_probe_rtt(tp);
    }

    /// `bbr_update_min_rtt()` v3: a 5 s min schedules PROBE_RTT, the 10 s min is the estimate;
    /// PROBE_RTT holds inflight at half the BDP for max(200 ms, 1 round).
    fn update_min_rtt(&mut self, tp: &mut Sock, rs: &RateSample) {
        let now = tp.jiffies();
        let probe_rtt_expired = after(
            now,
            self.probe_rtt_min_stamp.wrapping_add(msecs_to_jiffies(BBR_PROBE_RTT_WIN_MS, tp.hz)),
        );
        if rs.rtt_us >= 0 && (rs.rtt_us < self.probe_rtt_min_us as i64 || probe_rtt_expired) {
            self.probe_rtt_min_us = rs.rtt_us.min(u32::MAX as i64) as u32;
            self.probe_rtt_min_stamp = now;
        }
        let min_rtt_expired =
            after(now, self.min_rtt_stamp.wrapping_add(BBR_MIN_RTT_WIN_SEC * tp.hz));
        if self.probe_rtt_min_us <= self.min_rtt_us || min_rtt_expired {
            self.min_rtt_us = self.probe_rtt_min_us;
            self.min_rtt_stamp = self.probe_rtt_min_stamp;
        }
        if BBR_PROBE_RTT_MODE_MS > 0
            && probe_rtt_expired
            && !self.idle_restart
            && self.mode != Mode::ProbeRtt
        {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(tp);
            self.probe_rtt.reset();
            self.ack_phase = AckPhase::ProbeStopping;
            self.next_rtt_delivered = tp.delivered;
        }
        if self.mode == Mode::ProbeRtt {
            tp.app_limited = true; // samples at a cut cwnd say nothing about the path rate
            match self.probe_rtt.on_ack(
                now,
                tp.hz,
                tp.in_flight,
                self.probe_rtt_cwnd(),
                self.round_start,
            ) {
                Hold::Started => self.next_rtt_delivered = tp.delivered,
                Hold::RoundDone => self.check_probe_rtt_done(tp),
                Hold::Waiting => {}
            }
        }
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }

    // ---- main ----

    /// `bbr_update_gains()`.
    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (BBR_STARTUP_PACING_GAIN, BBR_STARTUP_CWND_GAIN),
            Mode::Drain => (BBR_DRAIN_GAIN, BBR_STARTUP_CWND_GAIN),
            Mode::ProbeBw => {
                let up =
                    if self.phase == Phase::Up { BBR_UNIT * BBR_BW_PROBE_CWND_GAIN / 4 } else { 0 };
                (BBR_PACING_GAIN[self.phase as usize], BBR_CWND_GAIN + up)
            }
            Mode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
    }

    /// `bbr_update_round_start()`.
    fn update_round_start(&mut self, tp: &Sock, rs: &RateSample) {
        self.round_start = false;
        if rs.interval_us > 0 && rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = tp.delivered;
            self.round_start = true;
        }
    }

    /// `bbr_calculate_bw_sample()`: ⌈delivered / interval⌉, packets/µs × [`BW_UNIT`].
    fn bw_sample(rs: &RateSample) -> u32 {
        if rs.interval_us <= 0 || rs.delivered < 0 {
            return 0;
        }
        (rs.delivered as u64 * BW_UNIT).div_ceil(rs.interval_us as u64).min(u32::MAX as u64) as u32
    }

    /// `bbr_update_model()`.
    fn update_model(&mut self, tp: &mut Sock, rs: &RateSample, sig: &Signals, sample_bw: u32) {
        self.update_congestion_signals(tp, rs, sample_bw);
        self.update_ack_aggregation(tp, rs);
        self.check_loss_too_high_in_startup(tp, rs, sig);
        self.check_full_bw_reached(rs, sample_bw);
        self.check_drain(tp);
        self.update_cycle_phase(tp, rs, sig, sample_bw);
        self.update_min_rtt(tp, rs);
    }

    /// `bbr_run_fast_path()`: an app-limited, clean, low sample changes nothing but the state
    /// machine; if that stays put too, skip the control update. Returns whether to skip.
    fn run_fast_path(
        &mut self,
        tp: &mut Sock,
        rs: &RateSample,
        sig: &Signals,
        sample_bw: u32,
    ) -> Option<bool> {
        if !(self.try_fast_path
            && rs.is_app_limited
            && sample_bw < self.max_bw()
            && !self.loss_in_round
            && !self.ecn_in_round)
        {
            return None;
        }
        let (prev_mode, prev_min_rtt) = (self.mode, self.min_rtt_us);
        self.check_drain(tp);
        self.update_cycle_phase(tp, rs, sig, sample_bw);
        self.update_min_rtt(tp, rs);
        Some(self.mode == prev_mode && self.min_rtt_us == prev_min_rtt && self.try_fast_path)
    }

    /// `bbr_main()`.
    fn main(&mut self, tp: &mut Sock, rs: &RateSample, sig: &Signals) {
        self.update_round_start(tp, rs);
        if self.round_start {
            self.rounds_since_probe = (self.rounds_since_probe + 1).min(0xff);
            self.update_ecn_alpha(tp);
        }
        self.ecn_in_round |= self.ecn_eligible && sig.is_ece;
        let sample_bw = Self::bw_sample(rs);
        self.update_latest_delivery_signals(tp, rs, sample_bw);
        let fast = self.run_fast_path(tp, rs, sig, sample_bw);
        if fast != Some(true) {
            if fast.is_none() {
                self.update_model(tp, rs, sig, sample_bw);
            }
            self.update_gains();
            let bw = self.bw();
            self.set_pacing_rate(tp, bw, self.pacing_gain);
            self.set_cwnd(tp, rs.acked_sacked, bw, self.cwnd_gain);
            self.bound_cwnd_for_inflight_model(tp);
        }
        self.advance_latest_delivery_signals(rs, sample_bw);
        self.prev_ca_state = tp.ca_state;
        self.loss_in_cycle |= sig.lost > 0;
        self.ecn_in_cycle |= sig.delivered_ce > 0;
    }

    /// Keep `tp->delivered_mstamp`: the time `tp.delivered` last grew.
    fn stamp_delivery(&mut self, tp: &Sock) {
        if tp.delivered != self.stamped_delivered {
            self.stamped_delivered = tp.delivered;
            self.delivered_mstamp = tp.now.as_us();
        }
    }
}

impl CongestionOps for Bbr3 {
    fn name(&self) -> &'static str {
        "bbr3"
    }

    fn has_cong_control(&self) -> bool {
        true
    }

    /// v3's `bbr_min_tso_segs()` is v1's.
    fn min_tso_segs(&self, tp: &Sock) -> u32 {
        super::bbr::Bbr::min_tso_segs(tp)
    }

    /// `bbr_ssthresh()`: entering recovery, save cwnd and the loss-adapted bounds for undo.
    fn ssthresh(&mut self, tp: &Sock) -> u32 {
        self.save_cwnd(tp);
        self.undo_bw_lo = self.bw_lo;
        self.undo_inflight_lo = self.inflight_lo;
        self.undo_inflight_hi = self.inflight_hi;
        tp.snd_ssthresh
    }

    /// BBR decides cwnd in `cong_control`.
    fn cong_avoid(&mut self, _tp: &mut Sock, _acked: u32) {}

    /// `bbr_skb_marked_lost()` for this ACK's losses, then `bbr_main()`.
    fn cong_control(&mut self, tp: &mut Sock, rs: &RateSample) -> bool {
        self.stamp_delivery(tp);
        let sig = self.tx.signals(tp, rs);
        if rs.losses > 0 {
            self.skb_marked_lost(tp, rs.losses, &sig);
        }
        self.main(tp, rs, &sig);
        self.tx.record(tp);
        true
    }

    /// `bbr_set_state()`: an RTO restarts full-pipe detection and, outside probing, seeds
    /// inflight_lo with the pre-RTO cwnd; leaving Loss restores cwnd.
    fn set_state(&mut self, tp: &mut Sock, new_state: CaState) {
        if new_state == CaState::Loss {
            self.prev_ca_state = CaState::Loss;
            self.reset_full_bw();
            if !self.is_probing_bandwidth() && self.inflight_lo == u32::MAX {
                self.inflight_lo = tp.snd_cwnd.max(self.prior_cwnd);
            }
        } else if self.prev_ca_state == CaState::Loss {
            // `bbr_exit_loss_recovery()`.
            tp.snd_cwnd = tp.snd_cwnd.max(self.prior_cwnd);
            self.try_fast_path = false;
        }
    }

    /// `bbr_cwnd_event()`: restart from idle as v1. (ECE bookkeeping for precise ACKs and
    /// TLP recovery are not modelled; see the module doc.)
    fn cwnd_event(&mut self, tp: &mut Sock, ev: CaEvent) {
        if ev == CaEvent::TxStart && tp.app_limited {
            self.idle_restart = true;
            self.aggregation.restart(tp.now.as_us());
            match self.mode {
                Mode::ProbeBw => self.set_pacing_rate(tp, self.bw(), BBR_UNIT),
                Mode::ProbeRtt => self.check_probe_rtt_done(tp),
                _ => {}
            }
        }
    }

    /// `bbr_undo_cwnd()` v3: a spurious loss: restore the bounds and the saved cwnd.
    fn undo_cwnd(&mut self, _tp: &Sock) -> u32 {
        self.reset_full_bw();
        self.loss_in_round = false;
        self.bw_lo = self.bw_lo.max(self.undo_bw_lo);
        self.inflight_lo = self.inflight_lo.max(self.undo_inflight_lo);
        self.inflight_hi = self.inflight_hi.max(self.undo_inflight_hi);
        self.try_fast_path = false;
        self.prior_cwnd
    }

    /// `bbr_init()` v3.
    fn init(&mut self, tp: &mut Sock) {
        let (rng, ecn_low) = (self.rng.clone(), self.ecn_low);
        *self = Bbr3 { rng, ecn_low, ..Bbr3::new(Params::default()) };
        self.init_cwnd = tp.snd_cwnd.min(0x7f);
        self.prior_cwnd = tp.prior_cwnd;
        tp.snd_ssthresh = super::TCP_INFINITE_SSTHRESH;
        self.next_rtt_delivered = tp.delivered;
        let min_rtt = if tp.min_rtt_us == 0 { u32::MAX } else { tp.min_rtt_us };
        (self.probe_rtt_min_us, self.min_rtt_us) = (min_rtt, min_rtt);
        (self.probe_rtt_min_stamp, self.min_rtt_stamp) = (tp.jiffies(), tp.jiffies());
        self.init_pacing_rate_from_rtt(tp);
        self.aggregation.restart(tp.now.as_us());
        // Start sampling the loss/ECN rounds after the first full flight is acked.
        self.loss_round_delivered = tp.delivered + 1;
        self.stamped_delivered = tp.delivered;
        self.delivered_mstamp = if tp.delivered > 0 { tp.now.as_us() } else { 0 };
        self.tx.reset(tp);
    }

    /// `bbr_init()` sets `SK_PACING_NEEDED`.
    fn wants_pacing(&self) -> bool {
        true
    }

    /// `bbr_sndbuf_expand()`: 3 × cwnd.
    fn sndbuf_expand(&self) -> u32 {
        BBR_SNDBUF_EXPAND
    }
}

#[cfg(test)]
mod tests;
