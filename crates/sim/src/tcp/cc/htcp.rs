//! H-TCP as Linux runs it: `net/ipv4/tcp_htcp.c` (torvalds/linux @ 05909cd9a0c8). Algorithm:
//! Leith & Shorten, "H-TCP: TCP for high-speed and long-distance networks", PFLDnet 2004
//! (hamilton.ie/net/htcp3.pdf); draft-leith-tcp-htcp-06.
//!
//! The additive increase grows with the time Δ since the last congestion event:
//! `ᾱ(Δ) = 1 + 10(Δ − 1) + ((Δ − 1)/2)²` (Δ in s, after the first second), scaled by minRTT/100 ms
//! and multiplied by `2(1 − β)`; cwnd gains α packets per RTT. The decrease β is
//! minRTT/maxRTT in [0.5, 0.797] while the achieved throughput stays within 20 % from one event
//! to the next, otherwise 0.5. Everything is integer arithmetic in jiffies, fixed point `<<7`.
//!
//! Where Linux differs from the paper and the draft (we follow Linux; `linux-tcp.md` §1.4, §6):
//! - the increase is multiplied by minRTT/100 ms clamped to [0.1, 2.0] and truncated;
//! - the first event always uses β = 0.5; with the bandwidth switch on it also sees the
//!   throughput "change" from nothing and disarms `modeswitch`, so the second event (throughput
//!   steady) uses 0.5 again and only arms it: the RTT ratio applies from the third event;
//! - maxRTT grows only in Open, by samples at most 20 ms above it, and fades 5 % toward minRTT
//!   at each event; minRTT is never reset;
//! - in congestion avoidance cwnd grows by the packets of the last ACK seen in Open (one after
//!   each growth step), not by the `acked` argument, and slow start leftovers are dropped;
//! - undo gives back the epoch start, but maxRTT and old_maxB only as `ssthresh` left them
//!   (they are saved in `set_state`, which runs after `ssthresh`); β and α are not undone.
//!
//! Where we differ from Linux: nowhere in the arithmetic. `jiffies` come from the simulated
//! clock (from `INITIAL_JIFFIES`, as in Linux); `usecs_to_jiffies`/`msecs_to_jiffies` round up
//! exactly, as Linux does when HZ divides 10⁶ (HZ = 100, 250, 1000).
//!
//! The TCP core must call `init` at establishment, `pkts_acked` before `cong_avoid` on each ACK
//! (as `tcp_clean_rtx_queue()` precedes `tcp_cong_control()`), and `set_state` on every
//! `ca_state` change, Open included: returning to Open restarts Δ.

use super::cubic::initial_jiffies;
use super::{AckSample, CaState, CongestionOps, Sock, reno_undo_cwnd, slow_start};

/// `ALPHA_BASE` (`tcp_htcp.c`): α = 1.0 in `<<7` fixed point.
pub const ALPHA_BASE: u32 = 1 << 7;
/// `BETA_MIN` (`tcp_htcp.c`): β = 0.5 in `<<7`.
pub const BETA_MIN: u8 = 1 << 6;
/// `BETA_MAX` (`tcp_htcp.c`): β = 102/128 = 0.797 (the paper's 0.8).
pub const BETA_MAX: u8 = 102;
/// `htcp_alpha_update()`: the RTT scale `(HZ<<3)/(10·minRTT)` is at least `1<<2`, so the
/// increase is multiplied by at most 8/4 = 2.0 (minRTT ≥ 200 ms).
pub const RTT_SCALE_MIN: u32 = 1 << 2;
/// `htcp_alpha_update()`: the RTT scale is at most `10<<3`, a multiplier of at least 0.1
/// (minRTT ≤ 10 ms).
pub const RTT_SCALE_MAX: u32 = 10 << 3;
/// `measure_rtt()`: an RTT sample raises maxRTT only if at most 20 ms above it (outlier filter).
pub const MAX_RTT_STEP_MS: u32 = 20;
/// `htcp_beta_update()`: β follows minRTT/maxRTT only if minRTT exceeds 10 ms.
pub const ADAPTIVE_BETA_MIN_RTT_MS: u32 = 10;
/// `htcp_param_update()`: at each event maxRTT keeps 95 % of its excess over minRTT.
pub const MAX_RTT_FADE_PERCENT: u32 = 95;
/// `measure_achieved_throughput()`: up to `htcp_ccount() == 3` minRTTs after an event (i.e.
/// less than 4), throughput samples restart the estimate instead of being averaged into it.
pub const BACKOFF_SETTLE_RTTS: u32 = 3;

/// The module parameters of `tcp_htcp.c` (same names, same defaults).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Params {
    /// `use_rtt_scaling = 1`: scale the increase by minRTT/100 ms.
    pub use_rtt_scaling: bool,
    /// `use_bandwidth_switch = 1`: fall back to β = 0.5 when throughput moved by more than 20 %.
    pub use_bandwidth_switch: bool,
}

impl Default for Params {
    fn default() -> Params {
        Params { use_rtt_scaling: true, use_bandwidth_switch: true }
    }
}

/// `struct htcp`. Times and RTTs are jiffies, throughputs packets/s.
#[derive(Clone, Debug)]
struct State {
    /// Packets added per RTT, `<<7`.
    alpha: u32,
    /// Decrease factor, `<<7`.
    beta: u8,
    /// Adaptive β is allowed (set by the first steady event).
    modeswitch: bool,
    /// Packets of the last ACK in Open: the step of `snd_cwnd_cnt` in congestion avoidance.
    pkts_acked: u16,
    /// Packets acked since `lasttime` (throughput sample).
    packetcount: u32,
    min_rtt: u32,
    max_rtt: u32,
    /// Start of the current congestion epoch (end of the last event, or its start until then).
    last_cong: u32,
    /// `last_cong` before the event under way; 0 = nothing to undo.
    undo_last_cong: u32,
    undo_max_rtt: u32,
    undo_old_max_b: u32,
    min_b: u32,
    max_b: u32,
    /// `max_b` at the previous event.
    old_max_b: u32,
    /// Smoothed throughput.
    bi: u32,
    /// Start of the throughput sample.
    lasttime: u32,
}

/// `htcp_init()` without the clock: `last_cong` is set by [`CongestionOps::init`].
impl Default for State {
    fn default() -> State {
        State {
            alpha: ALPHA_BASE,
            beta: BETA_MIN,
            modeswitch: false,
            pkts_acked: 1,
            packetcount: 0,
            min_rtt: 0,
            max_rtt: 0,
            last_cong: 0,
            undo_last_cong: 0,
            undo_max_rtt: 0,
            undo_old_max_b: 0,
            min_b: 0,
            max_b: 0,
            old_max_b: 0,
            bi: 0,
            lasttime: 0,
        }
    }
}

/// H-TCP. Default = Linux module defaults.
#[derive(Clone, Debug, Default)]
pub struct Htcp {
    params: Params,
    ca: State,
}

impl Htcp {
    pub fn new(params: Params) -> Htcp {
        Htcp { params, ca: State::default() }
    }

    /// Packets counted toward the throughput sample under way.
    #[cfg(test)]
    pub(crate) fn packetcount(&self) -> u32 {
        self.ca.packetcount
    }

    pub fn params(&self) -> &Params {
        &self.params
    }

    /// `jiffies`, counted from `INITIAL_JIFFIES` as in Linux (so 0 is not an early time and
    /// the `undo_last_cong == 0` sentinel means what it means there).
    fn jiffies(tp: &Sock) -> u32 {
        tp.jiffies().wrapping_add(initial_jiffies(tp.hz))
    }

    /// `htcp_cong_time()`: jiffies since the epoch began.
    fn cong_time(&self, now: u32) -> u32 {
        now.wrapping_sub(self.ca.last_cong)
    }

    /// `htcp_reset()`: a congestion event starts; keep what undo needs.
    fn reset(&mut self, now: u32) {
        let ca = &mut self.ca;
        ca.undo_last_cong = ca.last_cong;
        ca.undo_max_rtt = ca.max_rtt;
        ca.undo_old_max_b = ca.old_max_b;
        ca.last_cong = now;
    }

    /// `measure_rtt()`: running minimum; maximum only in Open and only by steps ≤ 20 ms.
    fn measure_rtt(&mut self, state: CaState, rtt: u32, hz: u32) {
        let ca = &mut self.ca;
        if ca.min_rtt > rtt || ca.min_rtt == 0 {
            ca.min_rtt = rtt;
        }
        if state == CaState::Open {
            ca.max_rtt = ca.max_rtt.max(ca.min_rtt);
            if ca.max_rtt < rtt
                && rtt <= ca.max_rtt.wrapping_add(msecs_to_jiffies(MAX_RTT_STEP_MS, hz))
            {
                ca.max_rtt = rtt;
            }
        }
    }

    /// The throughput part of `measure_achieved_throughput()`: one sample per ≥ minRTT and
    /// ≥ cwnd − α packets.
    fn measure_throughput(&mut self, tp: &Sock, pkts: u32, now: u32) {
        let ca = &mut self.ca;
        if !matches!(tp.ca_state, CaState::Open | CaState::Disorder) {
            ca.packetcount = 0;
            ca.lasttime = now;
            return;
        }
        ca.packetcount = ca.packetcount.wrapping_add(pkts);
        let alpha_pkts = match ca.alpha >> 7 {
            0 => 1,
            a => a,
        };
        let elapsed = now.wrapping_sub(ca.lasttime);
        if ca.packetcount >= tp.snd_cwnd.wrapping_sub(alpha_pkts)
            && elapsed >= ca.min_rtt
            && ca.min_rtt > 0
        {
            let cur_bi = ca.packetcount.wrapping_mul(tp.hz) / elapsed;
            // `htcp_ccount()`: whole minRTTs since the epoch began.
            if now.wrapping_sub(ca.last_cong) / ca.min_rtt <= BACKOFF_SETTLE_RTTS {
                // Just after a backoff the rate is still settling: restart the estimate.
                ca.min_b = cur_bi;
                ca.max_b = cur_bi;
                ca.bi = cur_bi;
            } else {
                ca.bi = (3u32.wrapping_mul(ca.bi).wrapping_add(cur_bi)) / 4;
                ca.max_b = ca.max_b.max(ca.bi);
                ca.min_b = ca.min_b.min(ca.max_b);
            }
            ca.packetcount = 0;
            ca.lasttime = now;
        }
    }

    /// `htcp_beta_update()`.
    fn beta_update(&mut self, hz: u32) {
        let ca = &mut self.ca;
        if self.params.use_bandwidth_switch {
            let (max_b, old_max_b) = (ca.max_b, ca.old_max_b);
            ca.old_max_b = max_b;
            if !throughput_steady(old_max_b, max_b) {
                ca.beta = BETA_MIN;
                ca.modeswitch = false;
                return;
            }
        }
        if ca.modeswitch
            && ca.min_rtt > msecs_to_jiffies(ADAPTIVE_BETA_MIN_RTT_MS, hz)
            && ca.max_rtt != 0
        {
            // Linux stores the ratio in the u8 `beta` before clamping; it is ≤ 128 here
            // because maxRTT never falls below minRTT.
            let ratio = (ca.min_rtt << 7) / ca.max_rtt;
            ca.beta = (ratio as u8).clamp(BETA_MIN, BETA_MAX);
        } else {
            ca.beta = BETA_MIN;
            ca.modeswitch = true;
        }
    }

    /// `htcp_alpha_update()`.
    fn alpha_update(&mut self, now: u32, hz: u32) {
        let mut factor = alpha_factor(self.cong_time(now), hz);
        if self.params.use_rtt_scaling && self.ca.min_rtt != 0 {
            factor = ((factor << 3) / rtt_scale(self.ca.min_rtt, hz)).max(1);
        }
        self.ca.alpha = alpha_from(factor, self.ca.beta);
    }

    /// `htcp_param_update()`: β, then α, then fade maxRTT toward minRTT (routing changes).
    fn param_update(&mut self, now: u32, hz: u32) {
        let (min_rtt, max_rtt) = (self.ca.min_rtt, self.ca.max_rtt);
        self.beta_update(hz);
        self.alpha_update(now, hz);
        if min_rtt > 0 && max_rtt > min_rtt {
            self.ca.max_rtt =
                min_rtt + (max_rtt - min_rtt).wrapping_mul(MAX_RTT_FADE_PERCENT) / 100;
        }
    }
}

/// ᾱ(Δ) of `htcp_alpha_update()`, Δ = `diff` jiffies: 1 for the first second (Δ_L = 1 s), then
/// `1 + (10·d + (d/2)²/HZ)/HZ` with d = Δ − HZ. All u32 as in Linux, so `(d/2)²` wraps past
/// d ≈ 131 s at HZ = 1000.
fn alpha_factor(diff: u32, hz: u32) -> u32 {
    if diff <= hz {
        return 1;
    }
    let d = diff - hz;
    let half = d / 2;
    1 + 10u32.wrapping_mul(d).wrapping_add(half.wrapping_mul(half) / hz) / hz
}

/// The RTT scale of `htcp_alpha_update()`: `(HZ<<3)/(10·minRTT)`, clamped to
/// [[`RTT_SCALE_MIN`], [`RTT_SCALE_MAX`]]; the increase is multiplied by `8/scale`.
fn rtt_scale(min_rtt: u32, hz: u32) -> u32 {
    ((hz << 3) / min_rtt.wrapping_mul(10).max(1)).clamp(RTT_SCALE_MIN, RTT_SCALE_MAX)
}

/// α = 2·factor·(1 − β) in `<<7`, with Linux's fallback to 1.0 if the u32 product wraps to 0.
fn alpha_from(factor: u32, beta: u8) -> u32 {
    match 2u32.wrapping_mul(factor).wrapping_mul(128 - beta as u32) {
        0 => ALPHA_BASE,
        a => a,
    }
}

/// The bandwidth switch of `htcp_beta_update()`: `between(5·maxB, 4·old_maxB, 6·old_maxB)`,
/// i.e. maxB within ±20 % of its value at the previous event, in Linux's wrapping u32
/// arithmetic (`between()`, `include/net/tcp.h`).
fn throughput_steady(old_max_b: u32, max_b: u32) -> bool {
    let lo = 4u32.wrapping_mul(old_max_b);
    let hi = 6u32.wrapping_mul(old_max_b);
    hi.wrapping_sub(lo) >= 5u32.wrapping_mul(max_b).wrapping_sub(lo)
}

/// `msecs_to_jiffies()`: rounds up.
fn msecs_to_jiffies(ms: u32, hz: u32) -> u32 {
    (ms as u64 * hz as u64).div_ceil(1000) as u32
}

/// `usecs_to_jiffies()`: rounds up.
fn usecs_to_jiffies(us: u32, hz: u32) -> u32 {
    (us as u64 * hz as u64).div_ceil(1_000_000) as u32
}

impl CongestionOps for Htcp {
    fn name(&self) -> &'static str {
        "htcp"
    }

    /// `htcp_init()`. The initial ssthresh stays infinite; there is no HyStart.
    fn init(&mut self, tp: &mut Sock) {
        self.ca = State { last_cong: Self::jiffies(tp), ..State::default() };
    }

    /// `htcp_recalc_ssthresh()`: update β and α for the event, return cwnd·β (at least 2).
    fn ssthresh(&mut self, tp: &Sock) -> u32 {
        self.param_update(Self::jiffies(tp), tp.hz);
        (tp.snd_cwnd.wrapping_mul(self.ca.beta as u32) >> 7).max(2)
    }

    /// `htcp_cong_avoid()`: cwnd += α/cwnd per packet, as one packet each time the counter
    /// reaches cwnd/α; α is recomputed only then.
    fn cong_avoid(&mut self, tp: &mut Sock, acked: u32) {
        if !tp.is_cwnd_limited() {
            return;
        }
        if tp.in_slow_start() {
            // Linux ignores what is left over past ssthresh.
            slow_start(tp, acked);
            return;
        }
        if tp.snd_cwnd_cnt.wrapping_mul(self.ca.alpha) >> 7 >= tp.snd_cwnd {
            if tp.snd_cwnd < tp.snd_cwnd_clamp {
                tp.snd_cwnd += 1;
            }
            tp.snd_cwnd_cnt = 0;
            self.alpha_update(Self::jiffies(tp), tp.hz);
        } else {
            tp.snd_cwnd_cnt += self.ca.pkts_acked as u32;
        }
        self.ca.pkts_acked = 1;
    }

    /// `htcp_state()`: an event (CWR, Recovery, Loss) starts a new epoch and saves undo state;
    /// returning to Open after it (not undone) restarts the epoch there.
    fn set_state(&mut self, tp: &mut Sock, new_state: CaState) {
        let now = Self::jiffies(tp);
        match new_state {
            CaState::Open => {
                if self.ca.undo_last_cong != 0 {
                    self.ca.last_cong = now;
                    self.ca.undo_last_cong = 0;
                }
            }
            CaState::Cwr | CaState::Recovery | CaState::Loss => self.reset(now),
            CaState::Disorder => {}
        }
    }

    /// `measure_achieved_throughput()`: RTT extremes and the throughput estimate.
    fn pkts_acked(&mut self, tp: &mut Sock, sample: &AckSample) {
        let now = Self::jiffies(tp);
        if tp.ca_state == CaState::Open {
            // Linux keeps this in a u16.
            self.ca.pkts_acked = sample.pkts_acked as u16;
        }
        if sample.rtt_us > 0 {
            let rtt = usecs_to_jiffies(sample.rtt_us.min(u32::MAX as i64) as u32, tp.hz);
            self.measure_rtt(tp.ca_state, rtt, tp.hz);
        }
        if self.params.use_bandwidth_switch {
            self.measure_throughput(tp, sample.pkts_acked, now);
        }
    }

    /// `htcp_cwnd_undo()`: the event was spurious: resume the old epoch, then
    /// `tcp_reno_undo_cwnd()`.
    fn undo_cwnd(&mut self, tp: &Sock) -> u32 {
        let ca = &mut self.ca;
        if ca.undo_last_cong != 0 {
            ca.last_cong = ca.undo_last_cong;
            ca.max_rtt = ca.undo_max_rtt;
            ca.old_max_b = ca.undo_old_max_b;
            ca.undo_last_cong = 0;
        }
        reno_undo_cwnd(tp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::cc::TCP_INFINITE_SSTHRESH;
    use crate::time::Time;

    const HZ: u32 = 1000;

    /// Linux defaults with `use_bandwidth_switch = 0`.
    const NO_SWITCH: Params = Params { use_rtt_scaling: true, use_bandwidth_switch: false };

    fn msec(v: u64) -> Time {
        Time::from_ms(v)
    }

    fn sock(cwnd: u32, hz: u32) -> Sock {
        let mut tp = Sock::new(1448, cwnd, hz);
        tp.now = Time::from_secs(1);
        tp.is_cwnd_limited = true;
        tp
    }

    /// An initialised flow in congestion avoidance at `cwnd`.
    fn flow(cwnd: u32, hz: u32, params: Params) -> (Htcp, Sock) {
        let mut h = Htcp::new(params);
        let mut tp = sock(cwnd, hz);
        h.init(&mut tp);
        tp.snd_ssthresh = cwnd;
        (h, tp)
    }

    fn sample(h: &mut Htcp, tp: &mut Sock, pkts: u32, rtt: Time) {
        let s = AckSample { pkts_acked: pkts, rtt_us: rtt.as_us() as i64, in_flight: 0 };
        h.pkts_acked(tp, &s);
    }

    /// ACKs of one packet at `rate` packets/s for `dur`, each with RTT sample `rtt`, as the
    /// core delivers them: `pkts_acked`, then `cong_avoid`.
    fn run(h: &mut Htcp, tp: &mut Sock, dur: Time, rate: u64, rtt: Time) {
        let step = Time::from_ps(Time::PS_PER_S / rate);
        for _ in 0..dur.ps() / step.ps() {
            tp.now += step;
            sample(h, tp, 1, rtt);
            h.cong_avoid(tp, 1);
        }
    }

    /// A congestion event as the core runs it: ssthresh, Recovery for one RTT (PRR, no
    /// `cong_avoid`), cwnd = ssthresh, Open. Returns β.
    fn backoff(h: &mut Htcp, tp: &mut Sock, rtt: Time) -> u8 {
        tp.prior_cwnd = tp.snd_cwnd;
        tp.prior_ssthresh = tp.snd_ssthresh;
        tp.snd_cwnd_cnt = 0;
        tp.snd_ssthresh = h.ssthresh(tp);
        h.set_state(tp, CaState::Recovery);
        tp.ca_state = CaState::Recovery;
        tp.now += rtt;
        sample(h, tp, 1, rtt);
        tp.snd_cwnd = tp.snd_ssthresh;
        h.set_state(tp, CaState::Open);
        tp.ca_state = CaState::Open;
        h.ca.beta
    }

    /// Steady 1000 packets/s at minRTT 100 ms with the queue raising samples to `max_rtt_ms`
    /// (in 10 ms steps, under the 20 ms filter), for 5 s.
    fn steady(h: &mut Htcp, tp: &mut Sock, rate: u64, max_rtt_ms: u64) {
        run(h, tp, Time::from_secs(1), rate, msec(100));
        let mut ms = 110;
        while ms <= max_rtt_ms {
            run(h, tp, msec(200), rate, msec(ms));
            ms += 10;
        }
        run(h, tp, Time::from_secs(2), rate, msec(max_rtt_ms));
    }

    // ---- constants ----

    #[test]
    fn constants_match_tcp_htcp_c() {
        assert_eq!((ALPHA_BASE, BETA_MIN, BETA_MAX), (128, 64, 102));
        assert_eq!((RTT_SCALE_MIN, RTT_SCALE_MAX), (4, 80));
        assert_eq!(MAX_RTT_STEP_MS, 20);
        assert_eq!(ADAPTIVE_BETA_MIN_RTT_MS, 10);
        assert_eq!(MAX_RTT_FADE_PERCENT, 95);
        assert_eq!(BACKOFF_SETTLE_RTTS, 3);
        let p = Params::default();
        assert!(p.use_rtt_scaling && p.use_bandwidth_switch);
        assert_eq!(Htcp::default().params(), &p);
    }

    #[test]
    fn init_matches_htcp_init() {
        let (h, tp) = flow(10, HZ, Params::default());
        assert_eq!((h.ca.alpha, h.ca.beta, h.ca.pkts_acked), (ALPHA_BASE, BETA_MIN, 1));
        assert_eq!(h.ca.last_cong, Htcp::jiffies(&tp));
        assert_eq!(h.name(), "htcp");
        // Default (before init) is already a usable α = 1, β = 0.5.
        assert_eq!((Htcp::default().ca.alpha, Htcp::default().ca.beta), (128, 64));
    }

    #[test]
    fn jiffy_conversions_round_up_like_linux() {
        assert_eq!(msecs_to_jiffies(10, 1000), 10);
        assert_eq!(msecs_to_jiffies(10, 250), 3);
        assert_eq!(msecs_to_jiffies(20, 250), 5);
        assert_eq!(usecs_to_jiffies(209_000, 1000), 209);
        assert_eq!(usecs_to_jiffies(209_000, 250), 53);
        assert_eq!(usecs_to_jiffies(1, 1000), 1);
    }

    // ---- α ----

    /// linux-tcp.md §6.3: minRTT 209 ms, β = 0.5, Δ = 10 s ⇒ α = 222 packets per RTT.
    fn worked_example(hz: u32) {
        let (mut h, mut tp) = flow(10, hz, Params::default());
        sample(&mut h, &mut tp, 1, msec(209));
        tp.now += Time::from_secs(10);
        let now = Htcp::jiffies(&tp);
        let diff = h.cong_time(now);
        assert_eq!(diff, 10 * hz);
        assert_eq!(alpha_factor(diff, hz), 111);
        assert_eq!((hz << 3) / (10 * h.ca.min_rtt), 3);
        assert_eq!(rtt_scale(h.ca.min_rtt, hz), 4);
        h.alpha_update(now, hz);
        assert_eq!(h.ca.alpha, 28_416);

        // One RTT of single-packet ACKs at a fixed cwnd W (time held at Δ = 10 s): each step
        // counts ⌈W/222⌉ packets, and the ACK that takes the step counts none, so the growth is
        // 222·W/(W + 222) — 221.78 at W = 222,000.
        let w = 222_000;
        tp.snd_cwnd = w;
        tp.snd_ssthresh = w;
        let mut grown = 0;
        let mut acks_since_step = 0;
        for _ in 0..w {
            h.cong_avoid(&mut tp, 1);
            acks_since_step += 1;
            if tp.snd_cwnd > w {
                assert_eq!(acks_since_step, w.div_ceil(222) + 1);
                acks_since_step = 0;
                grown += 1;
                tp.snd_cwnd = w;
            }
        }
        assert_eq!(h.ca.alpha, 28_416);
        assert_eq!(grown, 221);
    }

    #[test]
    fn alpha_worked_example_209ms_10s_hz1000() {
        worked_example(1000);
    }

    #[test]
    fn alpha_worked_example_209ms_10s_hz250() {
        worked_example(250);
    }

    #[test]
    fn alpha_rtt_scaling_multiplier_table() {
        // Multiplier 8/scale = minRTT/100 ms, clamped to [0.1, 2.0], integer scale.
        // (minRTT ms, scale at HZ=1000, scaled factor 111)
        let table = [(50, 16, 55), (100, 8, 111), (160, 5, 177), (209, 4, 222), (301, 4, 222)];
        for (ms, scale, f) in table {
            let rtt = usecs_to_jiffies(ms * 1000, 1000);
            assert_eq!(rtt_scale(rtt, 1000), scale, "{ms} ms");
            assert_eq!((111 << 3) / scale, f, "{ms} ms");
        }
        // HZ = 250: the same except 50 ms = 13 jiffies ⇒ 2000/130 = 15 (×0.533, not 0.5).
        let hz250: Vec<u32> = table
            .iter()
            .map(|&(ms, _, _)| rtt_scale(usecs_to_jiffies(ms * 1000, 250), 250))
            .collect();
        assert_eq!(hz250, [15, 8, 5, 4, 4]);
        // Short paths: 1 ms ⇒ 800 clamped to 80 (×0.1); 5 ms ⇒ 160 → 80.
        assert_eq!(rtt_scale(1, 1000), RTT_SCALE_MAX);
        assert_eq!(rtt_scale(5, 1000), RTT_SCALE_MAX);
    }

    #[test]
    fn alpha_short_rtt_factor_floors_at_one() {
        let (mut h, mut tp) = flow(100, HZ, Params::default());
        sample(&mut h, &mut tp, 1, msec(5));
        // Δ = 1.5 s: ᾱ = 1 + (5000 + 62)/1000 = 6; 6·8/80 = 0 → 1.
        tp.now += msec(1500);
        let now = Htcp::jiffies(&tp);
        assert_eq!(alpha_factor(h.cong_time(now), HZ), 6);
        h.alpha_update(now, HZ);
        assert_eq!(h.ca.alpha, ALPHA_BASE);
        // Δ = 3 s: ᾱ = 1 + (20000 + 1000)/1000 = 22 ⇒ 22·8/80 = 2.
        tp.now += msec(1500);
        h.alpha_update(Htcp::jiffies(&tp), HZ);
        assert_eq!(h.ca.alpha, 2 * 128);
    }

    #[test]
    fn alpha_without_rtt_scaling_is_the_paper_increase() {
        let (mut h, mut tp) = flow(10, HZ, Params { use_rtt_scaling: false, ..Params::default() });
        sample(&mut h, &mut tp, 1, msec(209));
        tp.now += Time::from_secs(10);
        h.alpha_update(Htcp::jiffies(&tp), HZ);
        // ᾱ(10 s) = 1 + 90 + 20.25 = 111.25, truncated.
        assert_eq!(h.ca.alpha, 111 * 128);
    }

    #[test]
    fn alpha_is_one_during_the_first_second_after_an_event() {
        let (mut h, mut tp) = flow(100, HZ, Params::default());
        steady(&mut h, &mut tp, 1000, 100);
        backoff(&mut h, &mut tp, msec(100));
        let start = h.ca.last_cong;
        assert_eq!(start, Htcp::jiffies(&tp));
        // minRTT 100 ms: scale 8, β = 0.5 ⇒ α = 2·1·64 = 128 until Δ passes 1 s (+ the 100 ms
        // that ᾱ's integer part needs to reach 2).
        let cwnd = tp.snd_cwnd;
        while h.cong_time(Htcp::jiffies(&tp)) < 1000 {
            run(&mut h, &mut tp, msec(10), 1000, msec(100));
            assert_eq!(h.ca.alpha, ALPHA_BASE);
        }
        // One packet per cwnd + 1 ACKs (the first step may come early: α from the event).
        let steps = (tp.snd_cwnd - cwnd) as i64;
        assert!((steps - 1000 / (cwnd as i64 + 1)).abs() <= 1, "cwnd {cwnd} grew {steps}");
        assert_eq!(alpha_factor(1000 + 99, HZ), 1);
        assert_eq!(alpha_factor(1000 + 100, HZ), 2);
        // At Δ = 2 s: ᾱ = 1 + (10000 + 250)/1000 = 11.
        run(&mut h, &mut tp, Time::from_secs(1), 1000, msec(100));
        assert_eq!(alpha_factor(2000, HZ), 11);
        // α was last recomputed at the last step, less than one cwnd of ACKs ago.
        assert!((8 * 128..=11 * 128).contains(&h.ca.alpha), "alpha {}", h.ca.alpha);
    }

    #[test]
    fn alpha_factor_wraps_in_u32_like_linux() {
        // Δ = 200 s at HZ = 1000: (d/2)² = 99,500² overflows u32 in Linux too.
        let d: u64 = 199_000;
        let wrapped = ((d / 2) * (d / 2)) % (1u64 << 32);
        let expect = 1 + ((10 * d + wrapped / 1000) % (1u64 << 32)) / 1000;
        assert_eq!(alpha_factor(200_000, HZ) as u64, expect);
        assert_ne!(expect, 1 + (10 * d + (d / 2) * (d / 2) / 1000) / 1000);
    }

    #[test]
    fn alpha_product_wrapping_to_zero_falls_back_to_base() {
        assert_eq!(alpha_from(1 << 25, BETA_MIN), ALPHA_BASE);
        assert_eq!(alpha_from(3, BETA_MAX), 2 * 3 * 26);
    }

    // ---- congestion avoidance ----

    #[test]
    fn slow_start_adds_acked_and_drops_the_leftover() {
        let mut h = Htcp::default();
        let mut tp = sock(10, HZ);
        h.init(&mut tp);
        assert_eq!(tp.snd_ssthresh, TCP_INFINITE_SSTHRESH);
        h.cong_avoid(&mut tp, 8);
        assert_eq!(tp.snd_cwnd, 18);
        tp.snd_ssthresh = 20;
        h.cong_avoid(&mut tp, 8);
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (20, 0));
    }

    #[test]
    fn avoidance_counts_the_open_ack_size_not_acked() {
        let (mut h, mut tp) = flow(100, HZ, Params::default());
        // A delayed ACK of 2 packets, seen in Open.
        sample(&mut h, &mut tp, 2, msec(100));
        h.cong_avoid(&mut tp, 5);
        assert_eq!(tp.snd_cwnd_cnt, 2);
        // The next ACK without a pkts_acked call counts 1, whatever `acked` says.
        h.cong_avoid(&mut tp, 5);
        assert_eq!(tp.snd_cwnd_cnt, 3);
        // Outside Open the size is not refreshed.
        tp.ca_state = CaState::Disorder;
        sample(&mut h, &mut tp, 4, msec(100));
        h.cong_avoid(&mut tp, 4);
        assert_eq!(tp.snd_cwnd_cnt, 4);
    }

    #[test]
    fn avoidance_one_packet_per_rtt_at_alpha_one() {
        let (mut h, mut tp) = flow(100, HZ, Params::default());
        // α = 1: 100 counted ACKs, then the step.
        for _ in 0..100 {
            h.cong_avoid(&mut tp, 1);
        }
        assert_eq!(tp.snd_cwnd, 100);
        h.cong_avoid(&mut tp, 1);
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (101, 0));
    }

    #[test]
    fn avoidance_respects_cwnd_clamp() {
        let (mut h, mut tp) = flow(100, HZ, Params::default());
        tp.snd_cwnd_clamp = 100;
        for _ in 0..300 {
            h.cong_avoid(&mut tp, 1);
        }
        assert_eq!(tp.snd_cwnd, 100);
    }

    #[test]
    fn avoidance_no_growth_when_not_cwnd_limited() {
        let (mut h, mut tp) = flow(100, HZ, Params::default());
        tp.is_cwnd_limited = false;
        tp.max_packets_out = 100;
        run(&mut h, &mut tp, Time::from_secs(5), 1000, msec(100));
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (100, 0));
        // Slow start: cwnd 100 ≥ 2·40 in flight is not limited either.
        tp.snd_ssthresh = TCP_INFINITE_SSTHRESH;
        tp.max_packets_out = 40;
        h.cong_avoid(&mut tp, 10);
        assert_eq!(tp.snd_cwnd, 100);
    }

    // ---- RTT extremes ----

    #[test]
    fn rtt_max_ignores_samples_more_than_20ms_above() {
        let (mut h, mut tp) = flow(100, HZ, Params::default());
        sample(&mut h, &mut tp, 1, msec(100));
        assert_eq!((h.ca.min_rtt, h.ca.max_rtt), (100, 100));
        sample(&mut h, &mut tp, 1, msec(121));
        assert_eq!(h.ca.max_rtt, 100);
        sample(&mut h, &mut tp, 1, msec(120));
        assert_eq!(h.ca.max_rtt, 120);
        sample(&mut h, &mut tp, 1, msec(140));
        assert_eq!(h.ca.max_rtt, 140);
        // Outside Open maxRTT does not move; minRTT does.
        tp.ca_state = CaState::Recovery;
        sample(&mut h, &mut tp, 1, msec(150));
        sample(&mut h, &mut tp, 1, msec(90));
        assert_eq!((h.ca.min_rtt, h.ca.max_rtt), (90, 140));
        // No sample (Karn) or a zero sample: nothing.
        tp.ca_state = CaState::Open;
        h.pkts_acked(&mut tp, &AckSample { pkts_acked: 1, rtt_us: -1, in_flight: 0 });
        h.pkts_acked(&mut tp, &AckSample { pkts_acked: 1, rtt_us: 0, in_flight: 0 });
        assert_eq!((h.ca.min_rtt, h.ca.max_rtt), (90, 140));
    }

    #[test]
    fn rtt_max_fades_5_percent_toward_min_at_each_event() {
        let (mut h, mut tp) = flow(100, HZ, Params::default());
        sample(&mut h, &mut tp, 1, msec(100));
        for ms in [120, 140, 160, 180, 200] {
            sample(&mut h, &mut tp, 1, msec(ms));
        }
        assert_eq!(h.ca.max_rtt, 200);
        h.ssthresh(&tp);
        assert_eq!(h.ca.max_rtt, 195);
        h.ssthresh(&tp);
        // 100 + 95·95/100 = 190.25
        assert_eq!(h.ca.max_rtt, 190);
        // minRTT is never reset.
        assert_eq!(h.ca.min_rtt, 100);
    }

    // ---- β ----

    #[test]
    fn beta_first_backoff_halves_even_when_rtt_ratio_gives_0_8() {
        let (mut h, mut tp) = flow(100, HZ, Params::default());
        steady(&mut h, &mut tp, 1000, 125);
        assert_eq!((h.ca.min_rtt, h.ca.max_rtt), (100, 125));
        let cwnd = tp.snd_cwnd;
        assert_eq!(backoff(&mut h, &mut tp, msec(125)), BETA_MIN);
        assert_eq!(tp.snd_cwnd, cwnd / 2);
        // Throughput went from nothing to 1000 pkt/s: the switch disarmed adaptive β.
        assert_eq!(h.ca.old_max_b, 1000);
        assert!(!h.ca.modeswitch);
    }

    /// Three events at steady throughput, minRTT 100 ms, queue to `max_rtt_ms`: the β of each.
    fn three_backoffs(max_rtt_ms: u64) -> [u8; 3] {
        let (mut h, mut tp) = flow(100, HZ, Params::default());
        let rtt = msec(max_rtt_ms);
        [0; 3].map(|_| {
            steady(&mut h, &mut tp, 1000, max_rtt_ms);
            assert_eq!((h.ca.min_rtt, h.ca.max_rtt), (100, max_rtt_ms as u32));
            let cwnd = tp.snd_cwnd;
            let beta = backoff(&mut h, &mut tp, rtt);
            assert_eq!(tp.snd_cwnd, ((cwnd * beta as u32) >> 7).max(2));
            beta
        })
    }

    #[test]
    fn beta_steady_throughput_arms_then_follows_rtt_ratio() {
        // The second event finds modeswitch off (the first disarmed it), so it only arms it.
        // 100/125 = 0.8 ⇒ 102.4 → 102.
        assert_eq!(three_backoffs(125), [BETA_MIN, BETA_MIN, 102]);
        // 100/110 = 0.91 is clamped to 0.797.
        assert_eq!(three_backoffs(110), [BETA_MIN, BETA_MIN, BETA_MAX]);
        // 100/160 = 0.625 ⇒ 80.
        assert_eq!(three_backoffs(160), [BETA_MIN, BETA_MIN, 80]);
        // 100/250 = 0.4 is clamped to 0.5.
        assert_eq!(three_backoffs(250), [BETA_MIN, BETA_MIN, BETA_MIN]);
    }

    #[test]
    fn beta_throughput_change_over_20_percent_halves_and_disarms() {
        for (rate, expect) in [(1300, BETA_MIN), (1150, 102), (850, 102), (700, BETA_MIN)] {
            let (mut h, mut tp) = flow(100, HZ, Params::default());
            for _ in 0..2 {
                steady(&mut h, &mut tp, 1000, 125);
                backoff(&mut h, &mut tp, msec(125));
            }
            assert!(h.ca.modeswitch);
            steady(&mut h, &mut tp, rate, 125);
            assert_eq!(backoff(&mut h, &mut tp, msec(125)), expect, "{rate} pkt/s");
            assert_eq!(h.ca.modeswitch, expect != BETA_MIN, "{rate} pkt/s");
        }
    }

    #[test]
    fn beta_throughput_steady_bounds_are_plus_minus_20_percent() {
        assert!(throughput_steady(0, 0));
        assert!(!throughput_steady(0, 1));
        assert!(throughput_steady(1000, 800) && throughput_steady(1000, 1200));
        assert!(!throughput_steady(1000, 799) && !throughput_steady(1000, 1201));
    }

    #[test]
    fn beta_min_rtt_at_most_10ms_halves() {
        for (min_ms, expect) in [(10, BETA_MIN), (11, 102)] {
            let (mut h, mut tp) = flow(100, HZ, NO_SWITCH);
            sample(&mut h, &mut tp, 1, msec(min_ms));
            sample(&mut h, &mut tp, 1, msec(min_ms * 5 / 4));
            assert_eq!(backoff(&mut h, &mut tp, msec(min_ms)), BETA_MIN);
            sample(&mut h, &mut tp, 1, msec(min_ms * 5 / 4));
            assert_eq!(backoff(&mut h, &mut tp, msec(min_ms)), expect, "minRTT {min_ms} ms");
        }
    }

    #[test]
    fn beta_without_bandwidth_switch_second_backoff_is_adaptive() {
        let p = NO_SWITCH;
        let (mut h, mut tp) = flow(100, HZ, p);
        steady(&mut h, &mut tp, 1000, 125);
        assert_eq!(backoff(&mut h, &mut tp, msec(125)), BETA_MIN);
        // Throughput tripled: ignored without the switch (and not even measured).
        steady(&mut h, &mut tp, 3000, 125);
        assert_eq!(backoff(&mut h, &mut tp, msec(125)), 102);
        assert_eq!(h.ca.max_b, 0);
    }

    #[test]
    fn ssthresh_is_cwnd_times_beta_at_least_two() {
        let (mut h, mut tp) = flow(1000, HZ, Params::default());
        assert_eq!(h.ssthresh(&tp), 500);
        tp.snd_cwnd = 3;
        assert_eq!(h.ssthresh(&tp), 2);
    }

    // ---- throughput ----

    #[test]
    fn throughput_restarts_within_3_min_rtts_then_averages() {
        let (mut h, mut tp) = flow(100, HZ, Params::default());
        steady(&mut h, &mut tp, 1000, 100);
        assert_eq!((h.ca.bi, h.ca.max_b), (1000, 1000));
        backoff(&mut h, &mut tp, msec(100));
        tp.snd_cwnd = 50;
        tp.snd_ssthresh = 50;
        // At 2000 pkt/s: the first samples after the event replace the estimate outright…
        run(&mut h, &mut tp, msec(250), 2000, msec(100));
        assert!(h.cong_time(Htcp::jiffies(&tp)) / h.ca.min_rtt <= BACKOFF_SETTLE_RTTS);
        assert_eq!((h.ca.min_b, h.ca.max_b, h.ca.bi), (2000, 2000, 2000));
        // …later ones are averaged 3:1 and maxB keeps the peak.
        run(&mut h, &mut tp, msec(500), 2000, msec(100));
        assert!(h.cong_time(Htcp::jiffies(&tp)) / h.ca.min_rtt > BACKOFF_SETTLE_RTTS);
        let before = h.ca.bi;
        let lasttime = h.ca.lasttime;
        run(&mut h, &mut tp, Time::from_secs(1), 1000, msec(100));
        assert!(h.ca.lasttime != lasttime);
        assert!(h.ca.bi < before && h.ca.bi > 1000, "Bi {}", h.ca.bi);
        assert_eq!(h.ca.max_b, 2000);
        assert_eq!(h.ca.min_b, 2000);
    }

    #[test]
    fn throughput_sample_waits_for_min_rtt_and_cwnd_minus_alpha_packets() {
        let (mut h, mut tp) = flow(100, HZ, Params::default());
        sample(&mut h, &mut tp, 1, msec(100));
        // First sample: `lasttime` 0 is far in the past; Δt is huge so Bi = 0.
        for _ in 0..98 {
            sample(&mut h, &mut tp, 1, msec(100));
        }
        assert_eq!(h.ca.lasttime, Htcp::jiffies(&tp));
        assert_eq!((h.ca.packetcount, h.ca.bi), (0, 0));
        // 99 packets (cwnd − 1) in 50 ms: not yet a minRTT.
        for _ in 0..99 {
            tp.now += Time::from_us(505);
            sample(&mut h, &mut tp, 1, msec(100));
        }
        assert_eq!(h.ca.packetcount, 99);
        tp.now += Time::from_us(50_005);
        sample(&mut h, &mut tp, 1, msec(100));
        assert_eq!(h.ca.packetcount, 0);
        // 100 packets in 100 ms.
        assert_eq!(h.ca.bi, 1000);
        // Outside Open/Disorder the sample restarts.
        tp.ca_state = CaState::Recovery;
        sample(&mut h, &mut tp, 5, msec(100));
        assert_eq!((h.ca.packetcount, h.ca.lasttime), (0, Htcp::jiffies(&tp)));
    }

    // ---- events, state and undo ----

    #[test]
    fn state_open_after_event_restarts_the_epoch_there() {
        let (mut h, mut tp) = flow(100, HZ, Params::default());
        tp.now += Time::from_secs(5);
        h.set_state(&mut tp, CaState::Recovery);
        assert_eq!(h.ca.last_cong, Htcp::jiffies(&tp));
        tp.now += msec(300);
        h.set_state(&mut tp, CaState::Open);
        assert_eq!((h.ca.last_cong, h.ca.undo_last_cong), (Htcp::jiffies(&tp), 0));
        // Open again (e.g. from Disorder) changes nothing.
        tp.now += msec(300);
        h.set_state(&mut tp, CaState::Disorder);
        h.set_state(&mut tp, CaState::Open);
        assert_eq!(h.cong_time(Htcp::jiffies(&tp)), 300);
    }

    #[test]
    fn undo_restores_pre_loss_cwnd_and_epoch() {
        let (mut h, mut tp) = flow(100, HZ, Params::default());
        steady(&mut h, &mut tp, 1000, 125);
        steady(&mut h, &mut tp, 1000, 125);
        let last_cong = h.ca.last_cong;
        let cwnd = tp.snd_cwnd;
        tp.prior_cwnd = cwnd;
        // As the core does it (`tcp_init_cwnd_reduction()` then `tcp_set_ca_state()`): the
        // saved maxRTT and old_maxB are those `ssthresh` already updated, so in Linux undo
        // gives back only the epoch start (and cwnd).
        tp.snd_ssthresh = h.ssthresh(&tp);
        let (max_rtt, old_max_b) = (h.ca.max_rtt, h.ca.old_max_b);
        assert_eq!((max_rtt, old_max_b), (123, 1000));
        h.set_state(&mut tp, CaState::Recovery);
        tp.ca_state = CaState::Recovery;
        tp.snd_cwnd = tp.snd_ssthresh;
        assert_ne!(h.ca.last_cong, last_cong);
        tp.now += msec(100);
        sample(&mut h, &mut tp, 1, msec(150));
        h.ca.max_rtt = 140;
        h.ca.old_max_b = 5;
        assert_eq!(h.undo_cwnd(&tp), cwnd);
        assert_eq!((h.ca.last_cong, h.ca.max_rtt, h.ca.old_max_b), (last_cong, max_rtt, old_max_b));
        // Back in Open the old epoch continues (Δ is not restarted).
        h.set_state(&mut tp, CaState::Open);
        assert_eq!(h.ca.last_cong, last_cong);
        // A second undo has nothing left to restore.
        h.ca.last_cong = 7;
        h.undo_cwnd(&tp);
        assert_eq!(h.ca.last_cong, 7);
    }
}
