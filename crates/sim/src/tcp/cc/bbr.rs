//! BBR v1 as Linux runs it: `net/ipv4/tcp_bbr.c` (mainline, read at torvalds/linux and checked
//! against a v6.x copy for the later fixes: strict `<` min-RTT refresh, `next_rtt_delivered`
//! from `tp->delivered` at init). Algorithm: Cardwell, Cheng, Gunn, Hassas Yeganeh & Jacobson,
//! "BBR: Congestion-Based Congestion Control", ACM Queue 14(5), 2016;
//! draft-cardwell-iccrg-bbr-congestion-control-00.
//!
//! BBR models the path from delivery-rate samples: `bw` = windowed max of delivered/interval
//! over 10 packet-timed rounds, `min_rtt` = windowed min over 10 s. It paces at
//! `pacing_gain·bw` and caps inflight at `cwnd_gain·bw·min_rtt` plus a quantization budget. Modes:
//! STARTUP (gain 2/ln 2) until bw grows < 25 % for 3 rounds, DRAIN (1/2.885) until inflight ≤
//! BDP, PROBE_BW (gain cycle 5/4, 3/4, 1×6), and PROBE_RTT (cwnd 4 for max(200 ms, 1 round))
//! when min_rtt has not been refreshed for 10 s.
//!
//! Units as in Linux: bandwidth in packets/µs scaled by [`BW_UNIT`] (2^24), gains in
//! [`BBR_UNIT`] (256), cwnd in packets, pacing rate in bytes/s.
//!
//! Where we differ from Linux (docs/fidelity.md):
//! - `get_random_u32_below(7)` draws from a seeded [`crate::rng`] stream ([`Params::seed`]).
//! - `bbr_packets_in_net_at_edt` sees no earliest departure time ([`Sock`] carries no
//!   `tcp_wstamp_ns`): the EDT is taken as `now`, so nothing is credited as delivered before it.
//! - `rs->is_ack_delayed` is not in [`RateSample`]: an expired min-RTT filter takes any sample.
//! - `tp->delivered_mstamp` is derived here: the time of the last hook call that saw
//!   `tp.delivered` grow (Linux stamps it in `tcp_rate_gen()` just before `cong_control`).
//! - `tp->app_limited` is a bool in [`Sock`]: in PROBE_RTT we set it to `true` where Linux
//!   stores the marker `delivered + in_flight`; the core turns it into that marker.
//! - Sequence-like counters (`delivered`, `lost`) are `u64`, so Linux's `before()` wrap logic
//!   becomes a plain comparison.

pub(super) mod aggregation;
mod minmax;
pub(super) mod probe_rtt;

use minmax::Minmax;

use super::{CaEvent, CaState, CongestionOps, RateSample, Sock, after};
use crate::rng::{self, Stream};
use crate::tcp::sender::MAX_TCP_HEADER;
use aggregation::AckAggregation;
use probe_rtt::{Hold, ProbeRttHold};

/// `BW_SCALE` (`tcp_bbr.c`): bandwidth is packets/µs << 24 (one unit ≈ 715 bit/s at 1500 B).
pub const BW_SCALE: u32 = 24;
/// `BW_UNIT` = 1 << [`BW_SCALE`].
pub const BW_UNIT: u64 = 1 << BW_SCALE;
/// `BBR_SCALE` (`tcp_bbr.c`): gains and fractions are in 1/256.
pub const BBR_SCALE: u32 = 8;
/// `BBR_UNIT` = 1 << [`BBR_SCALE`] = 256, a gain of 1.0.
pub const BBR_UNIT: u32 = 1 << BBR_SCALE;
/// `CYCLE_LEN` (`tcp_bbr.c`): phases in the PROBE_BW pacing-gain cycle.
pub const CYCLE_LEN: u32 = 8;
/// `bbr_bw_rtts` = `CYCLE_LEN + 2` (`tcp_bbr.c`): the bandwidth filter window, in rounds.
pub const BBR_BW_RTTS: u32 = CYCLE_LEN + 2;
/// `bbr_min_rtt_win_sec` (`tcp_bbr.c`): the min-RTT filter window, seconds.
pub const BBR_MIN_RTT_WIN_SEC: u32 = 10;
/// `bbr_probe_rtt_mode_ms` (`tcp_bbr.c`): least time at the minimum cwnd in PROBE_RTT.
pub const BBR_PROBE_RTT_MODE_MS: u32 = 200;
/// `bbr_min_tso_rate` (`tcp_bbr.c`): below 1.2 Mbit/s, one segment per TSO burst.
pub const BBR_MIN_TSO_RATE: u64 = 1_200_000;
/// `bbr_pacing_margin_percent` (`tcp_bbr.c`): pace 1 % below the bandwidth estimate.
pub const BBR_PACING_MARGIN_PERCENT: u64 = 1;
/// `bbr_high_gain` = `BBR_UNIT·2885/1000 + 1` = 739 (`tcp_bbr.c`): 2/ln 2, the smallest gain
/// that doubles the sending rate every round.
pub const BBR_HIGH_GAIN: u32 = BBR_UNIT * 2885 / 1000 + 1;
/// `bbr_drain_gain` = `BBR_UNIT·1000/2885` = 88 (`tcp_bbr.c`): drains STARTUP's queue in a round.
pub const BBR_DRAIN_GAIN: u32 = BBR_UNIT * 1000 / 2885;
/// `bbr_cwnd_gain` = 2·`BBR_UNIT` (`tcp_bbr.c`): steady-state cwnd tolerates stretched ACKs.
pub const BBR_CWND_GAIN: u32 = BBR_UNIT * 2;
/// `bbr_pacing_gain[]` (`tcp_bbr.c`): probe at 5/4, drain at 3/4, cruise at 1 for 6 phases.
pub const BBR_PACING_GAIN: [u32; CYCLE_LEN as usize] = [
    BBR_UNIT * 5 / 4,
    BBR_UNIT * 3 / 4,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
];
/// `bbr_cycle_rand` (`tcp_bbr.c`): the gain cycle starts at a random one of 7 phases (never 3/4).
pub const BBR_CYCLE_RAND: u32 = 7;
/// `bbr_cwnd_min_target` (`tcp_bbr.c`): cwnd floor, and the PROBE_RTT cwnd, in packets.
pub const BBR_CWND_MIN_TARGET: u32 = 4;
/// `bbr_full_bw_thresh` = `BBR_UNIT·5/4` (`tcp_bbr.c`): growth that counts as "still filling".
pub const BBR_FULL_BW_THRESH: u32 = BBR_UNIT * 5 / 4;
/// `bbr_full_bw_cnt` (`tcp_bbr.c`): rounds without such growth before the pipe is full.
pub const BBR_FULL_BW_CNT: u32 = 3;
/// `bbr_lt_intvl_min_rtts` (`tcp_bbr.c`): least rounds in a long-term sampling interval.
pub const BBR_LT_INTVL_MIN_RTTS: u32 = 4;
/// `bbr_lt_loss_thresh` (`tcp_bbr.c`): an interval is lossy at lost/delivered ≥ 50/256 (~20 %).
pub const BBR_LT_LOSS_THRESH: u64 = 50;
/// `bbr_lt_bw_ratio` = `BBR_UNIT/8` (`tcp_bbr.c`): intervals within 1/8 have consistent bw.
pub const BBR_LT_BW_RATIO: u32 = BBR_UNIT / 8;
/// `bbr_lt_bw_diff` = 4000/8 (`tcp_bbr.c`): or within 4 kbit/s, here in bytes/s.
pub const BBR_LT_BW_DIFF: u64 = 4000 / 8;
/// `bbr_lt_bw_max_rtts` (`tcp_bbr.c`): rounds to use the policer rate before re-probing.
pub const BBR_LT_BW_MAX_RTTS: u32 = 48;
/// `bbr_extra_acked_gain` = `BBR_UNIT` (`tcp_bbr.c`): weight of ACK aggregation in cwnd.
pub const BBR_EXTRA_ACKED_GAIN: u32 = BBR_UNIT;
/// `bbr_extra_acked_win_rtts` (`tcp_bbr.c`): rounds per slot of the 2-slot extra_acked max.
pub const BBR_EXTRA_ACKED_WIN_RTTS: u32 = 5;
/// `bbr_ack_epoch_acked_reset_thresh` = 1 << 20 (`tcp_bbr.c`): restart an aggregation epoch
/// after this many packets.
pub const BBR_ACK_EPOCH_ACKED_RESET_THRESH: u32 = 1 << 20;
/// `bbr_extra_acked_max_us` (`tcp_bbr.c`): aggregation adds at most 100 ms of bw to cwnd.
pub const BBR_EXTRA_ACKED_MAX_US: u64 = 100_000;
/// `bbr_sndbuf_expand()` (`tcp_bbr.c`): send buffer for 3·cwnd (BBR may slow-start in
/// recovery); other CCAs get 2 from `tcp_sndbuf_expand()`.
pub const BBR_SNDBUF_EXPAND: u32 = 3;
/// `TCP_INIT_CWND` (`include/net/tcp.h`): cwnd cap while no RTT has been sampled.
pub const TCP_INIT_CWND: u32 = 10;
/// `GSO_LEGACY_MAX_SIZE - 1 - MAX_TCP_HEADER` (`bbr_tso_segs_goal()`): BBR's TSO burst cap in
/// bytes, ignoring the driver's `gso_max_size`.
pub const BBR_TSO_MAX_BYTES: u64 = 65_536 - 1 - MAX_TCP_HEADER;
/// `bbr_tso_segs_goal()`: at most 127 segments (`0x7F`) per burst.
pub const BBR_TSO_MAX_SEGS: u32 = 0x7f;

/// `enum bbr_mode` (`tcp_bbr.c`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// Ramp up quickly to fill the pipe.
    #[default]
    Startup,
    /// Drain the queue STARTUP built.
    Drain,
    /// Steady state: cycle the pacing gain around the bandwidth estimate.
    ProbeBw,
    /// Cut inflight to 4 packets to re-measure the propagation delay.
    ProbeRtt,
}

/// BBR has no module parameters in Linux; the seed replaces the kernel's random source.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Params {
    /// Seed of the stream that picks the gain-cycle start phase (`bbr_reset_probe_bw_mode`).
    pub seed: u64,
}

/// `struct bbr` (`tcp_bbr.c`).
#[derive(Clone, Debug)]
pub struct Bbr {
    rng: Stream,
    /// Min RTT in the 10 s window, µs; `u32::MAX` until the first sample.
    min_rtt_us: u32,
    /// When `min_rtt_us` was taken, jiffies.
    min_rtt_stamp: u32,
    /// The PROBE_RTT hold (`probe_rtt_done_stamp`, `probe_rtt_round_done`).
    probe_rtt: ProbeRttHold,
    /// Max recent delivery rate, packets/µs << 24, over rounds.
    bw: Minmax,
    /// Packet-timed rounds so far.
    rtt_cnt: u32,
    /// `tp.delivered` at the end of this round.
    next_rtt_delivered: u64,
    /// Start of this gain-cycle phase, µs.
    cycle_mstamp: u64,
    mode: Mode,
    /// CA state on the previous ACK.
    prev_ca_state: CaState,
    packet_conservation: bool,
    round_start: bool,
    idle_restart: bool,
    lt_is_sampling: bool,
    lt_rtt_cnt: u32,
    lt_use_bw: bool,
    /// Long-term (policed) delivery rate, packets/µs << 24.
    lt_bw: u32,
    lt_last_delivered: u64,
    /// Start of the long-term interval, ms.
    lt_last_stamp: u32,
    lt_last_lost: u64,
    pacing_gain: u32,
    cwnd_gain: u32,
    full_bw_reached: bool,
    full_bw_cnt: u32,
    cycle_idx: u32,
    has_seen_rtt: bool,
    /// cwnd before loss recovery or PROBE_RTT (BBR's own, not `tp.prior_cwnd`).
    prior_cwnd: u32,
    /// Bandwidth at the last ≥ 25 % growth in STARTUP.
    full_bw: u32,
    /// Start of the ACK-aggregation epoch, µs.
    aggregation: AckAggregation,
    /// `tp->delivered_mstamp`, µs, and the `tp.delivered` it was stamped for.
    delivered_mstamp: u64,
    stamped_delivered: u64,
}

impl Default for Bbr {
    fn default() -> Bbr {
        Bbr::new(Params::default())
    }
}

impl Bbr {
    /// A BBR in the state `bbr_init()` leaves on a fresh socket.
    pub fn new(params: Params) -> Bbr {
        Bbr {
            rng: rng::stream(params.seed, "bbr", 0),
            min_rtt_us: u32::MAX,
            min_rtt_stamp: 0,
            probe_rtt: ProbeRttHold::default(),
            bw: Minmax::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            cycle_mstamp: 0,
            mode: Mode::Startup,
            prev_ca_state: CaState::Open,
            packet_conservation: false,
            round_start: false,
            idle_restart: false,
            lt_is_sampling: false,
            lt_rtt_cnt: 0,
            lt_use_bw: false,
            lt_bw: 0,
            lt_last_delivered: 0,
            lt_last_stamp: 0,
            lt_last_lost: 0,
            pacing_gain: BBR_HIGH_GAIN,
            cwnd_gain: BBR_HIGH_GAIN,
            full_bw_reached: false,
            full_bw_cnt: 0,
            cycle_idx: 0,
            has_seen_rtt: false,
            prior_cwnd: 0,
            full_bw: 0,
            aggregation: AckAggregation::default(),
            delivered_mstamp: 0,
            stamped_delivered: 0,
        }
    }

    // ---- read-only state, for tests and records ----

    pub fn mode(&self) -> Mode {
        self.mode
    }
    /// `bbr_max_bw()`: windowed max delivery rate, packets/µs × [`BW_UNIT`].
    pub fn max_bw(&self) -> u32 {
        self.bw.get()
    }
    /// `bbr_bw()`: the bandwidth BBR uses (the policer estimate when one is in use), packets/µs
    /// × [`BW_UNIT`].
    pub fn bw(&self) -> u32 {
        if self.lt_use_bw { self.lt_bw } else { self.max_bw() }
    }
    /// [`Bbr::bw`] in bytes/s, as `bbr_get_info()` reports it (no gain, no pacing margin).
    pub fn bw_bytes_per_sec(&self, mss: u32) -> u64 {
        ((self.bw() as u128 * mss as u128 * 1_000_000) >> BW_SCALE) as u64
    }
    /// Min RTT estimate, µs; `u32::MAX` before the first sample.
    pub fn min_rtt_us(&self) -> u32 {
        self.min_rtt_us
    }
    /// Current phase of the PROBE_BW gain cycle, `0..CYCLE_LEN` (0 = probe at 5/4).
    pub fn cycle_idx(&self) -> u32 {
        self.cycle_idx
    }
    /// Current pacing gain in [`BBR_UNIT`].
    pub fn pacing_gain(&self) -> u32 {
        self.pacing_gain
    }
    /// Current cwnd gain in [`BBR_UNIT`].
    pub fn cwnd_gain(&self) -> u32 {
        self.cwnd_gain
    }
    /// STARTUP has estimated the pipe full.
    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }
    /// The long-term (policer) rate is in use.
    pub fn lt_use_bw(&self) -> bool {
        self.lt_use_bw
    }
    /// Packet-timed rounds so far.
    pub fn round_count(&self) -> u32 {
        self.rtt_cnt
    }
    /// `bbr_sndbuf_expand()`: send-buffer multiple of cwnd ([`BBR_SNDBUF_EXPAND`]).
    pub fn sndbuf_expand(&self) -> u32 {
        BBR_SNDBUF_EXPAND
    }

    // ---- rates and windows ----

    /// `bbr_rate_bytes_per_sec()`: `rate` (packets/µs << 24) × mss × gain × 99 % in bytes/s.
    /// u128 where Linux orders u64 operations to avoid overflow; equal wherever Linux is exact.
    fn rate_bytes_per_sec(tp: &Sock, rate: u64, gain: u32) -> u64 {
        let r = (rate as u128 * tp.mss as u128 * gain as u128) >> BBR_SCALE;
        let r = r * (1_000_000 / 100 * (100 - BBR_PACING_MARGIN_PERCENT)) as u128;
        (r >> BW_SCALE) as u64
    }

    /// `bbr_bw_to_pacing_rate()`: capped by `SO_MAX_PACING_RATE`.
    fn bw_to_pacing_rate(tp: &Sock, bw: u32, gain: u32) -> u64 {
        Self::rate_bytes_per_sec(tp, bw as u64, gain).min(tp.max_pacing_rate)
    }

    /// `bbr_init_pacing_rate_from_rtt()`: high_gain × cwnd / srtt (1 ms if no RTT yet).
    fn init_pacing_rate_from_rtt(&mut self, tp: &mut Sock) {
        let bw = initial_bw(tp);
        self.has_seen_rtt |= tp.srtt_us != 0;
        tp.pacing_rate = Self::bw_to_pacing_rate(tp, bw, BBR_HIGH_GAIN);
    }

    /// `bbr_set_pacing_rate()`: never lowered until the pipe has been filled.
    fn set_pacing_rate(&mut self, tp: &mut Sock, bw: u32, gain: u32) {
        let rate = Self::bw_to_pacing_rate(tp, bw, gain);
        if !self.has_seen_rtt && tp.srtt_us != 0 {
            self.init_pacing_rate_from_rtt(tp);
        }
        if self.full_bw_reached || rate > tp.pacing_rate {
            tp.pacing_rate = rate;
        }
    }

    /// `bbr_min_tso_segs()` (the `min_tso_segs` hook): one segment per burst below
    /// [`BBR_MIN_TSO_RATE`], else two. `tcp_tso_segs()` passes it to `tcp_tso_autosize()` in
    /// place of `sysctl_tcp_min_tso_segs`.
    pub fn min_tso_segs(tp: &Sock) -> u32 {
        if tp.pacing_rate < BBR_MIN_TSO_RATE >> 3 { 1 } else { 2 }
    }

    /// `bbr_tso_segs_goal()`: about 1 ms of data at the pacing rate, like `tcp_tso_autosize()`
    /// but with the legacy 64 KiB cap and no short-RTT bonus.
    fn tso_segs_goal(tp: &Sock) -> u32 {
        let bytes = (tp.pacing_rate >> tp.pacing_shift).min(BBR_TSO_MAX_BYTES);
        let segs = ((bytes / tp.mss.max(1) as u64) as u32).max(Self::min_tso_segs(tp));
        segs.min(BBR_TSO_MAX_SEGS)
    }

    /// `bbr_save_cwnd()`: remember the last good cwnd; during recovery or PROBE_RTT keep the max.
    fn save_cwnd(&mut self, tp: &Sock) {
        if self.prev_ca_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = tp.snd_cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(tp.snd_cwnd);
        }
    }

    /// `bbr_bdp()`: ⌈bw × min_rtt × gain⌉ packets; `TCP_INIT_CWND` before any RTT sample.
    fn bdp(&self, bw: u32, gain: u32) -> u32 {
        if self.min_rtt_us == u32::MAX {
            return TCP_INIT_CWND;
        }
        let w = bw as u128 * self.min_rtt_us as u128;
        (((w * gain as u128) >> BBR_SCALE).div_ceil(BW_UNIT as u128)) as u32
    }

    /// `bbr_quantization_budget()`: room for three TSO bursts (qdisc, NIC, receiver GRO),
    /// rounded up to even against delayed ACKs, +2 in the probing phase for tiny BDPs.
    fn quantization_budget(&self, tp: &Sock, cwnd: u32) -> u32 {
        let cwnd = cwnd + 3 * Self::tso_segs_goal(tp);
        let cwnd = (cwnd + 1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 { cwnd + 2 } else { cwnd }
    }

    /// `bbr_inflight()`: BDP × gain plus the quantization budget.
    fn inflight(&self, tp: &Sock, bw: u32, gain: u32) -> u32 {
        self.quantization_budget(tp, self.bdp(bw, gain))
    }

    /// `bbr_packets_in_net_at_edt()` with the EDT at `now` (no departure-time queue is
    /// modelled): inflight, plus the next burst when raising inflight.
    fn packets_in_net_at_edt(&self, tp: &Sock, inflight_now: u32) -> u32 {
        if self.pacing_gain > BBR_UNIT {
            inflight_now + Self::tso_segs_goal(tp)
        } else {
            inflight_now
        }
    }

    /// `bbr_ack_aggregation_cwnd()`: the extra cwnd for ACK aggregation, once the pipe is full.
    fn ack_aggregation_cwnd(&self) -> u32 {
        if !self.full_bw_reached {
            return 0;
        }
        self.aggregation.cwnd(self.bw())
    }

    // ---- cwnd ----

    /// `bbr_set_cwnd_to_recover_or_restore()`: subtract losses; the first round of recovery is
    /// packet conservation; leaving recovery restores the saved cwnd. Returns the new cwnd and
    /// whether packet conservation decides it.
    fn recover_or_restore(&mut self, tp: &Sock, rs: &RateSample, acked: u32) -> (u32, bool) {
        let (prev, state) = (self.prev_ca_state, tp.ca_state);
        let mut cwnd = tp.snd_cwnd;
        if rs.losses > 0 {
            cwnd = (cwnd.wrapping_sub(rs.losses) as i32).max(1) as u32;
        }
        if state == CaState::Recovery && prev != CaState::Recovery {
            self.packet_conservation = true;
            self.next_rtt_delivered = tp.delivered; // the round starts now
            // Cut cwnd the application, TSQ or TSO deferral left unused.
            cwnd = tp.in_flight + acked;
        } else if prev >= CaState::Recovery && state < CaState::Recovery {
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            return (cwnd.max(tp.in_flight + acked), true);
        }
        (cwnd, false)
    }

    /// `bbr_set_cwnd()`: slow-start toward the target (or snap down to it once the pipe is
    /// full); PROBE_RTT caps at [`BBR_CWND_MIN_TARGET`].
    fn set_cwnd(&mut self, tp: &mut Sock, rs: &RateSample, acked: u32, bw: u32, gain: u32) {
        // Growth saturates at u32::MAX, `snd_cwnd_clamp`'s `~0U` (`tcp_init_sock()`): route
        // initcwnd is a u32 bounded only by that clamp (`tcp_init_cwnd()`).
        let mut cwnd = tp.snd_cwnd;
        if acked != 0 {
            let (c, conserving) = self.recover_or_restore(tp, rs, acked);
            cwnd = c;
            if !conserving {
                let target = self.bdp(bw, gain) + self.ack_aggregation_cwnd();
                let target = self.quantization_budget(tp, target);
                if self.full_bw_reached {
                    cwnd = cwnd.saturating_add(acked).min(target);
                } else if cwnd < target || tp.delivered < TCP_INIT_CWND as u64 {
                    cwnd = cwnd.saturating_add(acked);
                }
                cwnd = cwnd.max(BBR_CWND_MIN_TARGET);
            }
        }
        tp.snd_cwnd = cwnd.min(tp.snd_cwnd_clamp);
        if self.mode == Mode::ProbeRtt {
            tp.snd_cwnd = tp.snd_cwnd.min(BBR_CWND_MIN_TARGET);
        }
    }

    // ---- gain cycling and modes ----

    /// `bbr_is_next_cycle_phase()`: a phase lasts min_rtt; the 5/4 phase also needs inflight
    /// at 5/4·BDP (or a loss), the 3/4 phase ends early once inflight is down to BDP.
    fn is_next_cycle_phase(&self, tp: &Sock, rs: &RateSample) -> bool {
        let elapsed = self.delivered_mstamp.saturating_sub(self.cycle_mstamp).min(u32::MAX as u64);
        let is_full_length = elapsed > self.min_rtt_us as u64;
        if self.pacing_gain == BBR_UNIT {
            return is_full_length;
        }
        let inflight = self.packets_in_net_at_edt(tp, rs.prior_in_flight);
        let bw = self.max_bw();
        if self.pacing_gain > BBR_UNIT {
            return is_full_length
                && (rs.losses > 0 || inflight >= self.inflight(tp, bw, self.pacing_gain));
        }
        is_full_length || inflight <= self.inflight(tp, bw, BBR_UNIT)
    }

    /// `bbr_advance_cycle_phase()`.
    fn advance_cycle_phase(&mut self) {
        self.cycle_idx = (self.cycle_idx + 1) & (CYCLE_LEN - 1);
        self.cycle_mstamp = self.delivered_mstamp;
    }

    /// `bbr_reset_probe_bw_mode()`: start the gain cycle at a random phase other than 3/4:
    /// index `CYCLE_LEN − 1 − rand(7)` ∈ {1..7}, then advance, giving {2..7, 0}.
    fn reset_probe_bw_mode(&mut self) {
        self.mode = Mode::ProbeBw;
        self.cycle_idx = CYCLE_LEN - 1 - self.rng.below(BBR_CYCLE_RAND as u64) as u32;
        self.advance_cycle_phase();
    }

    /// `bbr_reset_mode()`: back to STARTUP unless the pipe has been filled.
    fn reset_mode(&mut self) {
        if self.full_bw_reached {
            self.reset_probe_bw_mode();
        } else {
            self.mode = Mode::Startup;
        }
    }

    // ---- long-term (policer) bandwidth ----

    /// `bbr_reset_lt_bw_sampling_interval()`.
    fn reset_lt_bw_sampling_interval(&mut self, tp: &Sock) {
        self.lt_last_stamp = (self.delivered_mstamp / 1000) as u32;
        self.lt_last_delivered = tp.delivered;
        self.lt_last_lost = tp.lost;
        self.lt_rtt_cnt = 0;
    }

    /// `bbr_reset_lt_bw_sampling()`.
    fn reset_lt_bw_sampling(&mut self, tp: &Sock) {
        self.lt_bw = 0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.reset_lt_bw_sampling_interval(tp);
    }

    /// `bbr_lt_bw_interval_done()`: two consecutive lossy intervals with bandwidth within 1/8
    /// or 4 kbit/s mean a policer; use their average.
    fn lt_bw_interval_done(&mut self, tp: &Sock, bw: u32) {
        if self.lt_bw != 0 {
            let diff = (bw as i64 - self.lt_bw as i64).unsigned_abs() as u32;
            // u32 products as in Linux.
            if diff.wrapping_mul(BBR_UNIT) <= BBR_LT_BW_RATIO.wrapping_mul(self.lt_bw)
                || Self::rate_bytes_per_sec(tp, diff as u64, BBR_UNIT) <= BBR_LT_BW_DIFF
            {
                self.lt_bw = ((bw as u64 + self.lt_bw as u64) >> 1) as u32;
                self.lt_use_bw = true;
                self.pacing_gain = BBR_UNIT;
                self.lt_rtt_cnt = 0;
                return;
            }
        }
        self.lt_bw = bw;
        self.reset_lt_bw_sampling_interval(tp);
    }

    /// `bbr_lt_bw_sampling()`: token-bucket policer detection. Sampling starts at the first
    /// loss and measures 4–16 rounds ending in a loss with lost/delivered ≥ 50/256.
    fn lt_bw_sampling(&mut self, tp: &Sock, rs: &RateSample) {
        if self.lt_use_bw {
            if self.mode == Mode::ProbeBw && self.round_start {
                self.lt_rtt_cnt += 1;
                if self.lt_rtt_cnt >= BBR_LT_BW_MAX_RTTS {
                    self.reset_lt_bw_sampling(tp);
                    self.reset_probe_bw_mode();
                }
            }
            return;
        }
        // Let the policer spend its tokens first: sampling starts at the first loss.
        if !self.lt_is_sampling {
            if rs.losses == 0 {
                return;
            }
            self.reset_lt_bw_sampling_interval(tp);
            self.lt_is_sampling = true;
        }
        if rs.is_app_limited {
            self.reset_lt_bw_sampling(tp);
            return;
        }
        if self.round_start {
            self.lt_rtt_cnt += 1;
        }
        if self.lt_rtt_cnt < BBR_LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt_rtt_cnt > 4 * BBR_LT_INTVL_MIN_RTTS {
            self.reset_lt_bw_sampling(tp);
            return;
        }
        // End the interval on a loss, when the tokens are surely exhausted.
        if rs.losses == 0 {
            return;
        }
        let lost = tp.lost - self.lt_last_lost;
        let delivered = tp.delivered - self.lt_last_delivered;
        if delivered == 0 || (lost << BBR_SCALE) < BBR_LT_LOSS_THRESH * delivered {
            return;
        }
        let t = ((self.delivered_mstamp / 1000) as u32).wrapping_sub(self.lt_last_stamp);
        if (t as i32) < 1 {
            return; // under a millisecond: wait
        }
        if t >= u32::MAX / 1000 {
            self.reset_lt_bw_sampling(tp);
            return;
        }
        let bw = delivered * BW_UNIT / (t as u64 * 1000);
        self.lt_bw_interval_done(tp, bw.min(u32::MAX as u64) as u32);
    }

    // ---- the model ----

    /// `bbr_update_bw()`: count rounds and feed the max filter; app-limited samples only when
    /// they raise the estimate.
    fn update_bw(&mut self, tp: &Sock, rs: &RateSample) {
        self.round_start = false;
        if rs.delivered < 0 || rs.interval_us <= 0 {
            return;
        }
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = tp.delivered;
            self.rtt_cnt = self.rtt_cnt.wrapping_add(1);
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_bw_sampling(tp, rs);
        let bw =
            (rs.delivered as u64 * BW_UNIT / rs.interval_us as u64).min(u32::MAX as u64) as u32;
        if !rs.is_app_limited || bw >= self.max_bw() {
            self.bw.running_max(BBR_BW_RTTS, self.rtt_cnt, bw);
        }
    }

    /// `bbr_update_ack_aggregation()`.
    fn update_ack_aggregation(&mut self, tp: &Sock, rs: &RateSample) {
        if rs.acked_sacked == 0 || rs.delivered < 0 || rs.interval_us <= 0 {
            return;
        }
        let win_rtts = BBR_EXTRA_ACKED_WIN_RTTS;
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

    /// `bbr_update_cycle_phase()`.
    fn update_cycle_phase(&mut self, tp: &Sock, rs: &RateSample) {
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(tp, rs) {
            self.advance_cycle_phase();
        }
    }

    /// `bbr_check_full_bw_reached()`: full after 3 non-app-limited rounds without 25 % growth.
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        let thresh = ((self.full_bw as u64 * BBR_FULL_BW_THRESH as u64) >> BBR_SCALE) as u32;
        if self.max_bw() >= thresh {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= BBR_FULL_BW_CNT;
    }

    /// `bbr_check_drain()`: STARTUP → DRAIN once full (ssthresh := BDP budget), DRAIN → PROBE_BW
    /// once inflight is down to it.
    fn check_drain(&mut self, tp: &mut Sock) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            tp.snd_ssthresh = self.inflight(tp, self.max_bw(), BBR_UNIT);
        }
        if self.mode == Mode::Drain
            && self.packets_in_net_at_edt(tp, tp.in_flight)
                <= self.inflight(tp, self.max_bw(), BBR_UNIT)
        {
            self.reset_probe_bw_mode();
        }
    }

    /// `bbr_check_probe_rtt_done()`: after the PROBE_RTT time, restore cwnd and mode.
    fn check_probe_rtt_done(&mut self, tp: &mut Sock) {
        let now = tp.jiffies();
        if !self.probe_rtt.expired(now) {
            return;
        }
        self.min_rtt_stamp = now; // wait a full window before the next PROBE_RTT
        tp.snd_cwnd = tp.snd_cwnd.max(self.prior_cwnd);
        self.reset_mode();
    }

    /// `bbr_update_min_rtt()`: refresh the 10 s min filter; when it expires (and we are not
    /// restarting from idle) enter PROBE_RTT, hold ≤ 4 packets for max(200 ms, 1 round).
    fn update_min_rtt(&mut self, tp: &mut Sock, rs: &RateSample) {
        let now = tp.jiffies();
        let filter_expired =
            after(now, self.min_rtt_stamp.wrapping_add(BBR_MIN_RTT_WIN_SEC * tp.hz));
        // Linux also requires `!rs->is_ack_delayed` for the expired case; see the module doc.
        if rs.rtt_us >= 0 && (rs.rtt_us < self.min_rtt_us as i64 || filter_expired) {
            self.min_rtt_us = rs.rtt_us.min(u32::MAX as i64) as u32;
            self.min_rtt_stamp = now;
        }
        if BBR_PROBE_RTT_MODE_MS > 0
            && filter_expired
            && !self.idle_restart
            && self.mode != Mode::ProbeRtt
        {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(tp);
            self.probe_rtt.reset();
        }
        if self.mode == Mode::ProbeRtt {
            // Samples taken at 4 packets say nothing about the path rate.
            tp.app_limited = true;
            match self.probe_rtt.on_ack(
                now,
                tp.hz,
                tp.in_flight,
                BBR_CWND_MIN_TARGET,
                self.round_start,
            ) {
                Hold::Started => self.next_rtt_delivered = tp.delivered,
                Hold::RoundDone => self.check_probe_rtt_done(tp),
                Hold::Waiting => {}
            }
        }
        // The idle restart ends with the first ACK of new data.
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }

    /// `bbr_update_gains()`.
    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (BBR_HIGH_GAIN, BBR_HIGH_GAIN),
            Mode::Drain => (BBR_DRAIN_GAIN, BBR_HIGH_GAIN),
            Mode::ProbeBw => {
                let pacing = if self.lt_use_bw {
                    BBR_UNIT
                } else {
                    BBR_PACING_GAIN[self.cycle_idx as usize]
                };
                (pacing, BBR_CWND_GAIN)
            }
            Mode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
    }

    /// `bbr_update_model()`.
    fn update_model(&mut self, tp: &mut Sock, rs: &RateSample) {
        self.update_bw(tp, rs);
        self.update_ack_aggregation(tp, rs);
        self.update_cycle_phase(tp, rs);
        self.check_full_bw_reached(rs);
        self.check_drain(tp);
        self.update_min_rtt(tp, rs);
        self.update_gains();
    }

    /// Keep `tp->delivered_mstamp`: the time `tp.delivered` last grew.
    fn stamp_delivery(&mut self, tp: &Sock) {
        if tp.delivered != self.stamped_delivered {
            self.stamped_delivered = tp.delivered;
            self.delivered_mstamp = tp.now.as_us();
        }
    }
}

/// The bandwidth `bbr_init_pacing_rate_from_rtt()` starts from: cwnd / srtt, with a nominal
/// 1 ms srtt before the first RTT sample (packets/µs × `BW_UNIT`). Shared with BBR v3.
pub(super) fn initial_bw(tp: &Sock) -> u32 {
    let rtt_us = if tp.srtt_us != 0 { tp.srtt_us } else { 1_000 };
    (tp.snd_cwnd as u64 * BW_UNIT / rtt_us as u64).min(u32::MAX as u64) as u32
}

impl CongestionOps for Bbr {
    fn min_tso_segs(&self, tp: &Sock) -> u32 {
        Bbr::min_tso_segs(tp)
    }

    fn sndbuf_expand(&self) -> u32 {
        Bbr::sndbuf_expand(self)
    }

    fn has_cong_control(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "bbr"
    }

    /// `bbr_ssthresh()`: entering recovery, save cwnd; ssthresh is left as is.
    fn ssthresh(&mut self, tp: &Sock) -> u32 {
        self.stamp_delivery(tp);
        self.save_cwnd(tp);
        tp.snd_ssthresh
    }

    /// BBR decides cwnd in `cong_control`.
    fn cong_avoid(&mut self, _tp: &mut Sock, _acked: u32) {}

    /// `bbr_main()`.
    fn cong_control(&mut self, tp: &mut Sock, rs: &RateSample) -> bool {
        self.stamp_delivery(tp);
        self.update_model(tp, rs);
        let bw = self.bw();
        self.set_pacing_rate(tp, bw, self.pacing_gain);
        self.set_cwnd(tp, rs, rs.acked_sacked, bw, self.cwnd_gain);
        true
    }

    /// `bbr_set_state()`: an RTO ends the round, restarts full-pipe detection and counts as a
    /// loss for the policer model.
    fn set_state(&mut self, tp: &mut Sock, new_state: CaState) {
        if new_state == CaState::Loss {
            self.stamp_delivery(tp);
            self.prev_ca_state = CaState::Loss;
            self.full_bw = 0;
            self.round_start = true;
            self.lt_bw_sampling(tp, &RateSample { losses: 1, ..RateSample::default() });
        }
    }

    /// `bbr_cwnd_event()`: restarting from idle while app-limited, pace at bw (PROBE_BW) or
    /// finish PROBE_RTT if it is due.
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

    /// `bbr_undo_cwnd()`: a spurious loss: restart full-pipe detection and policer sampling.
    fn undo_cwnd(&mut self, tp: &Sock) -> u32 {
        self.stamp_delivery(tp);
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.reset_lt_bw_sampling(tp);
        tp.snd_cwnd
    }

    /// `bbr_init()`.
    fn init(&mut self, tp: &mut Sock) {
        let rng = self.rng.clone();
        *self = Bbr { rng, ..Bbr::new(Params::default()) };
        tp.snd_ssthresh = super::TCP_INFINITE_SSTHRESH;
        self.next_rtt_delivered = tp.delivered;
        self.stamped_delivered = tp.delivered;
        self.delivered_mstamp = if tp.delivered > 0 { tp.now.as_us() } else { 0 };
        self.min_rtt_us = if tp.min_rtt_us == 0 { u32::MAX } else { tp.min_rtt_us };
        self.min_rtt_stamp = tp.jiffies();
        self.init_pacing_rate_from_rtt(tp);
        self.reset_lt_bw_sampling(tp);
        self.aggregation.restart(tp.now.as_us());
    }

    /// `bbr_init()` sets `SK_PACING_NEEDED`.
    fn wants_pacing(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests;
