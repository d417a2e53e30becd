//! CUBIC as Linux runs it: `net/ipv4/tcp_cubic.c` (mainline, read at Kingxukai/linux
//! @ 9b44fff655e2). Algorithm: Ha, Rhee & Xu, "CUBIC: A New TCP-Friendly High-Speed TCP Variant",
//! ACM SIGOPS OSR 2008 (later RFC 9438); slow-start exit: HyStart, Ha & Rhee, "Taming the
//! Elephants: New TCP Slow Start", NCSU 2008 (HyStart, not RFC 9406 HyStart++).
//!
//! After a reduction the window follows `W(t) = C·(t − K)³ + W_max` packets, `t` in seconds since
//! the epoch began plus `delay_min` (so the target is one RTT ahead), `K = ∛((W_max − cwnd)/C)`.
//! Linux computes it in fixed point: time in 1/1024 s (`BICTCP_HZ`), `C = bic_scale·10/1024`.
//! Each ACK adds `1/cnt` packet with `cnt = cwnd/(target − cwnd)`, so cwnd reaches the target
//! within one RTT; a Reno estimate with α = 3(1−β)/(1+β) bounds it from below.
//!
//! Where Linux differs from RFC 9438 (we follow Linux): `cnt ≤ 20` before the first loss, `cnt`
//! recomputed at most once per jiffy, the Reno estimate never switches α to 1, ssthresh from cwnd.
//!
//! Where we differ from Linux (docs/fidelity.md):
//! - `cubic_root` is the exact integer cube root; Linux uses a 64-entry table and one Newton step
//!   (mean error 0.195 %), so our K can differ from Linux's by that much.
//! - HyStart rounds end when `delivered` passes `delivered + packets_out` captured at the round
//!   start (Linux: `snd_una` passes `snd_nxt`); [`Sock`] carries no sequence numbers.
//! - The idle time for `CA_EVENT_TX_START` is measured from the send time of the newest packet
//!   acked by the last ACK with an RTT sample (`now − rtt_us`), Linux uses `lsndtime`; the two
//!   agree when that ACK emptied the pipe, which is when `TxStart` fires.

use super::{
    AckSample, CaEvent, CaState, CongestionOps, Sock, cong_avoid_ai, reno_undo_cwnd,
    slow_start_then,
};
use crate::time::Time;

/// `BICTCP_BETA_SCALE` (`tcp_cubic.c`): β and the fast-convergence factor are in 1/1024.
pub const BICTCP_BETA_SCALE: u32 = 1024;
/// `BICTCP_HZ` (`tcp_cubic.c`): the cubic clock ticks 2^10 = 1024 times a second.
pub const BICTCP_HZ: u32 = 10;
/// `HYSTART_ACK_TRAIN` (`tcp_cubic.c`): `hystart_detect` bit for ACK-train detection.
pub const HYSTART_ACK_TRAIN: u32 = 0x1;
/// `HYSTART_DELAY` (`tcp_cubic.c`): `hystart_detect` bit for delay-increase detection.
pub const HYSTART_DELAY: u32 = 0x2;
/// `HYSTART_MIN_SAMPLES` (`tcp_cubic.c`): RTT samples per round before the delay test.
pub const HYSTART_MIN_SAMPLES: u8 = 8;
/// `HYSTART_DELAY_MIN` (`tcp_cubic.c`): lower clamp of the delay threshold, µs (4 ms).
pub const HYSTART_DELAY_MIN: u32 = 4_000;
/// `HYSTART_DELAY_MAX` (`tcp_cubic.c`): upper clamp of the delay threshold, µs (16 ms).
pub const HYSTART_DELAY_MAX: u32 = 16_000;
/// `bictcp_update()`: before the first loss, `cnt ≤ 20`, i.e. at least 5 % growth per RTT.
pub const FIRST_EPOCH_MAX_CNT: u32 = 20;
/// `bictcp_update()`: at or above the target, `cnt = 100·cwnd` (one packet per 100 RTTs).
pub const FLAT_CNT_PER_CWND: u32 = 100;
/// `bictcp_update()`: `cnt ≥ 2`, so cwnd grows at most 1.5× per RTT.
pub const MIN_CNT: u32 = 2;
/// `hystart_ack_delay()`: the TSO/GRO cushion on the ACK-train threshold is at most 1 ms (µs).
pub const HYSTART_ACK_DELAY_MAX_US: u64 = 1_000;
/// `GSO_LEGACY_MAX_SIZE` (`include/linux/netdevice.h`): the usual `sk_gso_max_size`, bytes.
pub const GSO_LEGACY_MAX_SIZE: u32 = 65_536;

/// `INITIAL_JIFFIES` (`include/linux/jiffies.h`): jiffies start 300 s before wrapping, so that
/// `epoch_start == 0` ("no epoch") is never a real time early in a run.
pub fn initial_jiffies(hz: u32) -> u32 {
    0u32.wrapping_sub(300u32.wrapping_mul(hz))
}

/// The module parameters of `tcp_cubic.c` (same names, same defaults) plus the two socket
/// properties HyStart reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Params {
    /// `fast_convergence = 1`: release bandwidth faster when W_max shrinks.
    pub fast_convergence: bool,
    /// `beta = 717`: multiplicative decrease, in 1/1024 (0.7002).
    pub beta: u32,
    /// `initial_ssthresh = 0`: used only when `hystart` is off; 0 keeps it infinite.
    pub initial_ssthresh: u32,
    /// `bic_scale = 41`: C = bic_scale·10/1024 = 0.4004.
    pub bic_scale: u32,
    /// `tcp_friendliness = 1`: never grow slower than the Reno estimate.
    pub tcp_friendliness: bool,
    /// `hystart = 1`.
    pub hystart: bool,
    /// `hystart_detect = 3`: [`HYSTART_ACK_TRAIN`] | [`HYSTART_DELAY`].
    pub hystart_detect: u32,
    /// `hystart_low_window = 16`: HyStart acts only from this cwnd up.
    pub hystart_low_window: u32,
    /// `hystart_ack_delta_us = 2000`: ACKs this close (µs) belong to one train.
    pub hystart_ack_delta_us: u32,
    /// `sk_pacing_status != SK_PACING_NONE`; unpaced sockets halve the ACK-train threshold.
    pub paced: bool,
    /// `sk_gso_max_size`, bytes, for the `hystart_ack_delay()` cushion.
    pub gso_max_size: u32,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            fast_convergence: true,
            beta: 717,
            initial_ssthresh: 0,
            bic_scale: 41,
            tcp_friendliness: true,
            hystart: true,
            hystart_detect: HYSTART_ACK_TRAIN | HYSTART_DELAY,
            hystart_low_window: 16,
            hystart_ack_delta_us: 2000,
            paced: false,
            gso_max_size: GSO_LEGACY_MAX_SIZE,
        }
    }
}

/// Factors `cubictcp_register()` precomputes from the parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Scales {
    /// `beta_scale = 8·(1024 + β)/3/(1024 − β)` = 15: Reno estimate adds one packet per
    /// `cwnd·15/8` acked, α = 8/15 ≈ 0.533.
    beta_scale: u32,
    /// `cube_rtt_scale = bic_scale·10` = 410: C·1024.
    cube_rtt_scale: u32,
    /// `cube_factor = 2^40/(bic_scale·10)`: K = ∛(cube_factor·(W_max − cwnd)) in 1/1024 s.
    cube_factor: u64,
}

impl Scales {
    fn new(p: &Params) -> Scales {
        Scales {
            beta_scale: 8 * (BICTCP_BETA_SCALE + p.beta) / 3 / (BICTCP_BETA_SCALE - p.beta),
            cube_rtt_scale: p.bic_scale * 10,
            cube_factor: (1u64 << (10 + 3 * BICTCP_HZ)) / (p.bic_scale as u64 * 10),
        }
    }
}

impl Default for Scales {
    fn default() -> Scales {
        Scales::new(&Params::default())
    }
}

/// The part of `struct bictcp` that `bictcp_reset()` clears. Times are jiffies.
#[derive(Clone, Debug, Default)]
struct Epoch {
    /// Add one packet per `cnt` acked.
    cnt: u32,
    /// W_max, packets; 0 until the first reduction.
    last_max_cwnd: u32,
    last_cwnd: u32,
    /// When `cnt` was last computed.
    last_time: u32,
    /// W_max of the current curve, packets.
    bic_origin_point: u32,
    /// K, in 1/1024 s.
    bic_k: u32,
    /// Minimum RTT seen, µs; 0 = none.
    delay_min: u32,
    /// Start of the current curve; 0 = none.
    epoch_start: u32,
    /// Packets acked since the Reno estimate last grew.
    ack_cnt: u32,
    /// The Reno estimate, packets.
    tcp_cwnd: u32,
    /// HyStart has found the exit point.
    found: bool,
}

/// The HyStart round (`bictcp_hystart_reset()`). Times are µs (`tcp_mstamp`).
#[derive(Clone, Debug)]
struct Round {
    round_start: u32,
    /// ACK that ends the round, as a `delivered` count (Linux: `end_seq = snd_nxt`).
    end_delivered: u64,
    last_ack: u32,
    /// Minimum RTT of this round, µs.
    curr_rtt: u32,
    sample_cnt: u8,
}

impl Default for Round {
    fn default() -> Round {
        Round { round_start: 0, end_delivered: 0, last_ack: 0, curr_rtt: u32::MAX, sample_cnt: 0 }
    }
}

/// CUBIC with HyStart. The TCP core must, as Linux does, update `delivered` and `packets_out`
/// before calling `pkts_acked` (HyStart rounds), call `pkts_acked` for every ACK with an RTT
/// sample (idle time), and keep `pacing_rate` set (`tcp_update_pacing_rate`) for the HyStart
/// ACK-delay cushion; `init` runs when the connection is established.
#[derive(Clone, Debug, Default)]
pub struct Cubic {
    params: Params,
    scales: Scales,
    ca: Epoch,
    round: Round,
    /// Estimate of `lsndtime` (jiffies): see the module doc.
    last_send: u32,
}

impl Cubic {
    pub fn new(params: Params) -> Cubic {
        Cubic { scales: Scales::new(&params), params, ..Cubic::default() }
    }

    pub fn params(&self) -> &Params {
        &self.params
    }

    /// `tcp_jiffies32`, counted from [`initial_jiffies`] as in Linux.
    fn jiffies(tp: &Sock) -> u32 {
        tp.jiffies().wrapping_add(initial_jiffies(tp.hz))
    }

    /// [`Self::jiffies`] at another instant (same arithmetic as [`Sock::jiffies`]).
    fn jiffies_at(t: Time, hz: u32) -> u32 {
        ((t.ps() / (Time::PS_PER_S / hz as u64)) as u32).wrapping_add(initial_jiffies(hz))
    }

    /// `bictcp_clock_us()`: `tcp_mstamp` truncated to 32 bits.
    fn clock_us(tp: &Sock) -> u32 {
        tp.now.as_us() as u32
    }

    fn hystart_reset(&mut self, tp: &Sock) {
        let now = Self::clock_us(tp);
        self.round = Round {
            round_start: now,
            end_delivered: tp.delivered + tp.packets_out as u64,
            last_ack: now,
            curr_rtt: u32::MAX,
            sample_cnt: 0,
        };
    }

    /// `bictcp_update()`: recompute `cnt` for a cwnd-limited ACK in congestion avoidance.
    fn update(&mut self, cwnd: u32, acked: u32, now: u32, hz: u32) {
        let ca = &mut self.ca;
        ca.ack_cnt = ca.ack_cnt.wrapping_add(acked);
        // Same cwnd and less than HZ/32 since the last update: nothing new to compute.
        if ca.last_cwnd == cwnd && (now.wrapping_sub(ca.last_time) as i32) <= (hz / 32) as i32 {
            return;
        }
        // The curve moves once per jiffy; a reduction (epoch_start = 0) forces a recompute.
        if ca.epoch_start == 0 || now != ca.last_time {
            ca.last_cwnd = cwnd;
            ca.last_time = now;
            if ca.epoch_start == 0 {
                self.start_epoch(cwnd, acked, now);
            }
            self.ca.cnt = self.curve_cnt(cwnd, now, hz);
        }
        if self.params.tcp_friendliness {
            self.reno_friendly(cwnd);
        }
        self.ca.cnt = self.ca.cnt.max(MIN_CNT);
    }

    fn start_epoch(&mut self, cwnd: u32, acked: u32, now: u32) {
        let ca = &mut self.ca;
        ca.epoch_start = now;
        ca.ack_cnt = acked;
        ca.tcp_cwnd = cwnd;
        if ca.last_max_cwnd <= cwnd {
            ca.bic_k = 0;
            ca.bic_origin_point = cwnd;
        } else {
            let gap = (ca.last_max_cwnd - cwnd) as u64;
            ca.bic_k = cubic_root(self.scales.cube_factor.wrapping_mul(gap));
            ca.bic_origin_point = ca.last_max_cwnd;
        }
    }

    /// `cnt` from the cubic target one `delay_min` ahead (the "cubic function" part of
    /// `bictcp_update()`), with the first-epoch cap.
    fn curve_cnt(&self, cwnd: u32, now: u32, hz: u32) -> u32 {
        let ca = &self.ca;
        // As C: a signed 32-bit jiffy difference widened to u64.
        let mut t = now.wrapping_sub(ca.epoch_start) as i32 as i64 as u64;
        t = t.wrapping_add(usecs_to_jiffies(ca.delay_min, hz));
        t = (t << BICTCP_HZ) / hz as u64;
        let k = ca.bic_k as u64;
        let offs = t.abs_diff(k);
        // C·(t − K)³ with t in 1/1024 s: ×410, then >> (10 + 3·10). Wraps like Linux's u64.
        let delta = ((self.scales.cube_rtt_scale as u64)
            .wrapping_mul(offs)
            .wrapping_mul(offs)
            .wrapping_mul(offs)
            >> (10 + 3 * BICTCP_HZ)) as u32;
        let target = if t < k {
            ca.bic_origin_point.wrapping_sub(delta)
        } else {
            ca.bic_origin_point.wrapping_add(delta)
        };
        let cnt = if target > cwnd {
            cwnd / (target - cwnd)
        } else {
            FLAT_CNT_PER_CWND.wrapping_mul(cwnd)
        };
        if ca.last_max_cwnd == 0 { cnt.min(FIRST_EPOCH_MAX_CNT) } else { cnt }
    }

    /// The "TCP Friendly" part of `bictcp_update()`: grow the Reno estimate by one packet per
    /// `cwnd·beta_scale/8` acked (α ≈ 0.533, never switched to 1) and grow at least as fast.
    fn reno_friendly(&mut self, cwnd: u32) {
        let ca = &mut self.ca;
        let per_packet = ((cwnd as u64 * self.scales.beta_scale as u64) >> 3).max(1) as u32;
        // Linux loops `while ack_cnt > per_packet`; this is the same count in one step.
        let grow = ca.ack_cnt.saturating_sub(1) / per_packet;
        ca.ack_cnt -= grow * per_packet;
        ca.tcp_cwnd = ca.tcp_cwnd.wrapping_add(grow);
        if ca.tcp_cwnd > cwnd {
            let max_cnt = cwnd / (ca.tcp_cwnd - cwnd);
            ca.cnt = ca.cnt.min(max_cnt);
        }
    }

    /// `hystart_ack_delay()`: TSO/GRO cushion, µs: time to send 4 GSO packets at the pacing
    /// rate, at most 1 ms; 0 without a pacing rate.
    fn hystart_ack_delay(&self, tp: &Sock) -> u32 {
        if tp.pacing_rate == 0 {
            return 0;
        }
        let d = self.params.gso_max_size as u64 * 4 * 1_000_000 / tp.pacing_rate;
        d.min(HYSTART_ACK_DELAY_MAX_US) as u32
    }

    /// `hystart_update()`: leave slow start (ssthresh = cwnd) on a long ACK train or a rise
    /// of the round's minimum RTT.
    fn hystart_update(&mut self, tp: &mut Sock, delay: u32) {
        if tp.delivered > self.round.end_delivered {
            self.hystart_reset(tp);
        }
        if tp.snd_cwnd < self.params.hystart_low_window {
            return;
        }
        if self.params.hystart_detect & HYSTART_ACK_TRAIN != 0 {
            let now = Self::clock_us(tp);
            let gap = now.wrapping_sub(self.round.last_ack) as i32;
            if gap <= self.params.hystart_ack_delta_us as i32 {
                self.round.last_ack = now;
                let mut threshold = self.ca.delay_min.wrapping_add(self.hystart_ack_delay(tp));
                // Unpaced: the train ends by delay_min/2. Pacing may spread it over RTT/2.
                if !self.params.paced {
                    threshold >>= 1;
                }
                // Linux compares the s32 train length with a u32: unsigned.
                if now.wrapping_sub(self.round.round_start) > threshold {
                    self.ca.found = true;
                    tp.snd_ssthresh = tp.snd_cwnd;
                }
            }
        }
        if self.params.hystart_detect & HYSTART_DELAY != 0 {
            self.round.curr_rtt = self.round.curr_rtt.min(delay);
            if self.round.sample_cnt < HYSTART_MIN_SAMPLES {
                self.round.sample_cnt += 1;
            } else if self.round.curr_rtt
                > self.ca.delay_min + hystart_delay_thresh(self.ca.delay_min)
            {
                self.ca.found = true;
                tp.snd_ssthresh = tp.snd_cwnd;
            }
        }
    }
}

/// `HYSTART_DELAY_THRESH(delay_min >> 3)`: the RTT rise that ends slow start, µs.
pub fn hystart_delay_thresh(delay_min_us: u32) -> u32 {
    (delay_min_us >> 3).clamp(HYSTART_DELAY_MIN, HYSTART_DELAY_MAX)
}

/// `usecs_to_jiffies()` (`include/linux/jiffies.h`): rounds up.
fn usecs_to_jiffies(us: u32, hz: u32) -> u64 {
    (us as u64 * hz as u64).div_ceil(1_000_000)
}

/// ⌊∛a⌋, exact (Linux's `cubic_root()` approximates this within 0.195 % on average).
pub fn cubic_root(a: u64) -> u32 {
    let cube = |x: u64| x.checked_mul(x).and_then(|x2| x2.checked_mul(x));
    let mut x = (a as f64).cbrt() as u64;
    // The float guess is within one of the answer; settle it in integers.
    while cube(x).is_none_or(|c| c > a) {
        x -= 1;
    }
    while cube(x + 1).is_some_and(|c| c <= a) {
        x += 1;
    }
    x as u32
}

impl CongestionOps for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    /// `cubictcp_init()`.
    fn init(&mut self, tp: &mut Sock) {
        self.ca = Epoch::default();
        if self.params.hystart {
            self.hystart_reset(tp);
        } else if self.params.initial_ssthresh != 0 {
            tp.snd_ssthresh = self.params.initial_ssthresh;
        }
    }

    /// `cubictcp_recalc_ssthresh()`: end the epoch, remember W_max (lowered further by fast
    /// convergence when the window shrank since the last loss), and return cwnd·β.
    fn ssthresh(&mut self, tp: &Sock) -> u32 {
        let cwnd = tp.snd_cwnd as u64;
        let beta = self.params.beta as u64;
        let scale = BICTCP_BETA_SCALE as u64;
        self.ca.epoch_start = 0;
        self.ca.last_max_cwnd =
            if tp.snd_cwnd < self.ca.last_max_cwnd && self.params.fast_convergence {
                (cwnd * (scale + beta) / (2 * scale)) as u32
            } else {
                tp.snd_cwnd
            };
        ((cwnd * beta / scale) as u32).max(2)
    }

    /// `cubictcp_cong_avoid()`.
    fn cong_avoid(&mut self, tp: &mut Sock, acked: u32) {
        let Some(acked) = slow_start_then(tp, acked) else { return };
        self.update(tp.snd_cwnd, acked, Self::jiffies(tp), tp.hz);
        cong_avoid_ai(tp, self.ca.cnt, acked);
    }

    /// `cubictcp_state()`: an RTO forgets everything, W_max and delay_min included.
    fn set_state(&mut self, tp: &mut Sock, new_state: CaState) {
        if new_state == CaState::Loss {
            self.ca = Epoch::default();
            self.hystart_reset(tp);
        }
    }

    /// `cubictcp_cwnd_event()`: after idle, shift the epoch so the curve resumes where it was.
    fn cwnd_event(&mut self, tp: &mut Sock, ev: CaEvent) {
        if ev != CaEvent::TxStart {
            return;
        }
        let now = Self::jiffies(tp);
        let idle = now.wrapping_sub(self.last_send) as i32;
        if self.ca.epoch_start != 0 && idle > 0 {
            self.ca.epoch_start = self.ca.epoch_start.wrapping_add(idle as u32);
            // after(epoch_start, now)
            if (self.ca.epoch_start.wrapping_sub(now) as i32) > 0 {
                self.ca.epoch_start = now;
            }
        }
    }

    /// `cubictcp_acked()`: track delay_min and run HyStart in slow start.
    fn pkts_acked(&mut self, tp: &mut Sock, sample: &AckSample) {
        if sample.rtt_us < 0 {
            return;
        }
        let sent = tp.now.saturating_sub(Time::from_us(sample.rtt_us as u64));
        self.last_send = Self::jiffies_at(sent, tp.hz);
        // Samples within a second of a reduction still carry the queue that caused it.
        if self.ca.epoch_start != 0
            && (Self::jiffies(tp).wrapping_sub(self.ca.epoch_start) as i32) < tp.hz as i32
        {
            return;
        }
        let delay = (sample.rtt_us.min(u32::MAX as i64) as u32).max(1);
        if self.ca.delay_min == 0 || self.ca.delay_min > delay {
            self.ca.delay_min = delay;
        }
        if !self.ca.found && tp.in_slow_start() && self.params.hystart {
            self.hystart_update(tp, delay);
        }
    }

    /// `tcp_reno_undo_cwnd()`.
    fn undo_cwnd(&mut self, tp: &Sock) -> u32 {
        reno_undo_cwnd(tp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::cc::TCP_INFINITE_SSTHRESH;

    const HZ: u32 = 1000;
    const RTT: Time = Time::from_ms(100);
    /// C = 410/1024 per s³.
    const C: f64 = 410.0 / 1024.0;

    fn sock(cwnd: u32) -> Sock {
        let mut tp = Sock::new(1448, cwnd, HZ);
        tp.now = Time::from_secs(1);
        tp.is_cwnd_limited = true;
        tp
    }

    fn ack(c: &mut Cubic, tp: &mut Sock, rtt: Time) {
        tp.delivered += 1;
        c.pkts_acked(tp, &AckSample { pkts_acked: 1, rtt_us: rtt.as_us() as i64, in_flight: 0 });
    }

    /// A flow that saw RTT samples at `RTT`, then lost at `w_max` and reduced to ssthresh.
    fn after_loss(w_max: u32) -> (Cubic, Sock) {
        let mut c = Cubic::default();
        let mut tp = sock(w_max);
        c.init(&mut tp);
        ack(&mut c, &mut tp, RTT);
        tp.snd_ssthresh = c.ssthresh(&tp);
        tp.snd_cwnd = tp.snd_ssthresh;
        (c, tp)
    }

    /// Congestion avoidance at a fixed RTT: each RTT, cwnd ACKs evenly spread. Returns cwnd at
    /// the start of every RTT, indexed by RTT count.
    fn run_rtts(c: &mut Cubic, tp: &mut Sock, rtts: usize) -> Vec<u32> {
        run_rtts_at(c, tp, rtts, RTT)
    }

    fn run_rtts_at(c: &mut Cubic, tp: &mut Sock, rtts: usize, rtt: Time) -> Vec<u32> {
        let mut trace = Vec::with_capacity(rtts);
        for _ in 0..rtts {
            trace.push(tp.snd_cwnd);
            let n = tp.snd_cwnd as u64;
            for _ in 0..n {
                tp.now += rtt / n;
                c.cong_avoid(tp, 1);
            }
        }
        trace
    }

    fn w_cubic(t: f64, w_max: f64, k: f64) -> f64 {
        C * (t - k).powi(3) + w_max
    }

    // ---- constants ----

    #[test]
    fn params_default_to_linux_module_params() {
        let p = Params::default();
        assert!(p.fast_convergence && p.tcp_friendliness && p.hystart && !p.paced);
        assert_eq!((p.beta, p.bic_scale, p.initial_ssthresh), (717, 41, 0));
        assert_eq!(p.hystart_detect, 3);
        assert_eq!((p.hystart_low_window, p.hystart_ack_delta_us), (16, 2000));
        assert_eq!(p.gso_max_size, 65_536);
    }

    #[test]
    fn scales_match_cubictcp_register() {
        let s = Scales::default();
        assert_eq!(s.cube_rtt_scale, 410);
        assert_eq!(s.beta_scale, 15);
        // 2^40 / 410 = 2681735677.5…
        assert_eq!(s.cube_factor, 2_681_735_677);
        assert_eq!(Cubic::default().scales, s);
        assert_eq!((BICTCP_BETA_SCALE, BICTCP_HZ), (1024, 10));
    }

    #[test]
    fn hystart_constants_and_delay_threshold_clamp() {
        assert_eq!((HYSTART_ACK_TRAIN, HYSTART_DELAY, HYSTART_MIN_SAMPLES), (1, 2, 8));
        assert_eq!((HYSTART_DELAY_MIN, HYSTART_DELAY_MAX), (4_000, 16_000));
        assert_eq!(hystart_delay_thresh(100_000), 12_500);
        assert_eq!(hystart_delay_thresh(16_000), 4_000);
        assert_eq!(hystart_delay_thresh(200_000), 16_000);
        assert_eq!(HYSTART_ACK_DELAY_MAX_US, 1_000);
    }

    #[test]
    fn cnt_limits_match_bictcp_update() {
        assert_eq!((FIRST_EPOCH_MAX_CNT, FLAT_CNT_PER_CWND, MIN_CNT), (20, 100, 2));
    }

    #[test]
    fn jiffies_start_300_seconds_before_wrap() {
        assert_eq!(initial_jiffies(1000), 0u32.wrapping_sub(300_000));
        let tp = sock(10);
        assert_eq!(Cubic::jiffies(&tp), Cubic::jiffies_at(tp.now, HZ));
        assert_eq!(Cubic::jiffies(&tp), 1000u32.wrapping_sub(300_000));
    }

    // ---- cubic root and K ----

    #[test]
    fn cubic_root_is_exact_floor_against_f64() {
        for n in [1u64, 2, 3, 10, 1000, 9300, 65_535, 2_642_245] {
            assert_eq!(cubic_root(n * n * n), n as u32);
            assert_eq!(cubic_root(n * n * n - 1), n as u32 - 1);
        }
        let mut a = 1u64;
        while a < u64::MAX / 3 {
            let r = cubic_root(a) as f64;
            let exact = (a as f64).cbrt();
            assert!(r <= exact + 1e-9 && exact < r + 1.0, "a={a}: {r} vs {exact}");
            a = a * 3 + 1;
        }
        assert_eq!(cubic_root(0), 0);
        assert_eq!(cubic_root(u64::MAX), 2_642_245);
    }

    #[test]
    fn epoch_k_for_wmax_1000_cwnd_700_is_9_08_s() {
        let (mut c, mut tp) = after_loss(1000);
        assert_eq!(tp.snd_cwnd, 700);
        tp.now += Time::from_ms(1);
        c.cong_avoid(&mut tp, 1);
        // K = ∛(300 / C) = 9.0826 s = 9300.6 units of 1/1024 s.
        let k = (300.0 / C).cbrt();
        assert!((k - 9.0826).abs() < 1e-3);
        assert_eq!(c.ca.bic_k, 9300);
        assert_eq!(c.ca.bic_origin_point, 1000);
    }

    // ---- congestion avoidance ----

    #[test]
    fn avoidance_follows_the_cubic_curve() {
        let (mut c, mut tp) = after_loss(1000);
        let k = (300.0 / C).cbrt();
        let trace = run_rtts(&mut c, &mut tp, 140);
        for (i, &cwnd) in trace.iter().enumerate() {
            let t = i as f64 * RTT.as_secs_f64();
            let w = w_cubic(t, 1000.0, k);
            let err = (cwnd as f64 - w).abs() / w;
            assert!(err < 0.02, "t={t:.1}s cwnd={cwnd} W(t)={w:.1} err={err:.4}");
        }
        // 14 s is K + 4.9 s: W = 1000 + 0.4·4.9³ ≈ 1048.
        assert!((1040..1060).contains(&tp.snd_cwnd), "cwnd {}", tp.snd_cwnd);
    }

    #[test]
    fn avoidance_is_concave_before_k_and_convex_after() {
        let (mut c, mut tp) = after_loss(1000);
        let trace = run_rtts(&mut c, &mut tp, 150);
        let at = |s: f64| trace[(s * 10.0) as usize] as i64;
        let grow = |a: f64, b: f64| at(b) - at(a);
        // Concave: each 2 s adds less than the previous 2 s.
        assert!(grow(0.0, 2.0) > grow(2.0, 4.0));
        assert!(grow(2.0, 4.0) > grow(4.0, 6.0));
        // Plateau around K ≈ 9.1 s.
        assert!(grow(8.0, 10.0) <= 2);
        // Convex: growth accelerates past K.
        assert!(grow(10.5, 12.5) < grow(12.5, 14.5));
        assert!(grow(12.5, 14.5) > 10);
    }

    #[test]
    fn first_epoch_cnt_capped_at_20_then_5_percent_per_rtt() {
        let mut c = Cubic::default();
        let mut tp = sock(100);
        c.init(&mut tp);
        tp.snd_ssthresh = 100;
        c.cong_avoid(&mut tp, 1);
        // On the curve's plateau cnt would be 100·cwnd; before any loss it is capped.
        assert_eq!(c.ca.last_max_cwnd, 0);
        assert_eq!(c.ca.cnt, 20);
        let trace = run_rtts(&mut c, &mut tp, 3);
        assert!(trace[2] >= trace[1] + trace[1] / 20, "{trace:?}");
    }

    #[test]
    fn after_a_loss_cnt_is_not_capped_on_the_plateau() {
        let mut c = Cubic::default();
        let mut tp = sock(100);
        c.init(&mut tp);
        tp.snd_ssthresh = c.ssthresh(&tp);
        tp.snd_cwnd = 100; // undo back to W_max: on the plateau
        c.cong_avoid(&mut tp, 1);
        assert_eq!(c.ca.cnt, 100 * 100);
    }

    #[test]
    fn growth_never_exceeds_half_a_packet_per_ack() {
        // Far below W_max the curve asks for more than 1.5×; cnt ≥ 2 limits it.
        let (mut c, mut tp) = after_loss(100_000);
        tp.snd_cwnd = 100;
        tp.snd_ssthresh = 100;
        let trace = run_rtts(&mut c, &mut tp, 2);
        assert!(c.ca.cnt >= MIN_CNT);
        assert!(trace[1] <= 150, "{trace:?}");
    }

    #[test]
    fn not_cwnd_limited_means_no_growth() {
        let (mut c, mut tp) = after_loss(1000);
        tp.is_cwnd_limited = false;
        run_rtts(&mut c, &mut tp, 5);
        assert_eq!(tp.snd_cwnd, 700);
    }

    #[test]
    fn short_rtt_grows_like_reno_with_alpha_0_53() {
        // At 1 ms the curve (K ≈ 4.2 s) barely moves in 100 RTTs; the Reno estimate adds
        // 8/15 packet per RTT: 70 + 53 ≈ 123.
        let mut c = Cubic::default();
        let mut tp = sock(100);
        c.init(&mut tp);
        ack(&mut c, &mut tp, Time::from_ms(1));
        tp.snd_ssthresh = c.ssthresh(&tp);
        tp.snd_cwnd = tp.snd_ssthresh;
        run_rtts_at(&mut c, &mut tp, 100, Time::from_ms(1));
        assert!((119..=126).contains(&tp.snd_cwnd), "cwnd {}", tp.snd_cwnd);

        let mut cubic_only = Cubic::new(Params { tcp_friendliness: false, ..Params::default() });
        let mut tp = sock(100);
        cubic_only.init(&mut tp);
        ack(&mut cubic_only, &mut tp, Time::from_ms(1));
        tp.snd_ssthresh = cubic_only.ssthresh(&tp);
        tp.snd_cwnd = tp.snd_ssthresh;
        run_rtts_at(&mut cubic_only, &mut tp, 100, Time::from_ms(1));
        assert!(tp.snd_cwnd < 80, "cwnd {}", tp.snd_cwnd);
    }

    #[test]
    fn cnt_recomputed_at_most_once_per_jiffy() {
        let (mut c, mut tp) = after_loss(1000);
        c.cong_avoid(&mut tp, 1);
        let first = c.ca.cnt;
        // Same jiffy, larger cwnd: the curve is not evaluated again.
        tp.snd_cwnd = 706;
        c.cong_avoid(&mut tp, 1);
        assert_eq!(c.ca.cnt, first);
        tp.now += Time::from_ms(1);
        c.cong_avoid(&mut tp, 1);
        assert_ne!(c.ca.cnt, first);
    }

    #[test]
    fn same_cwnd_waits_hz_over_32_before_recompute() {
        let (mut c, mut tp) = after_loss(1000);
        c.cong_avoid(&mut tp, 1);
        let t0 = c.ca.last_time;
        tp.snd_cwnd_cnt = 0;
        tp.now += Time::from_ms(31);
        c.cong_avoid(&mut tp, 1);
        assert_eq!(c.ca.last_time, t0);
        tp.now += Time::from_ms(1);
        c.cong_avoid(&mut tp, 1);
        assert_eq!(c.ca.last_time, t0.wrapping_add(32));
    }

    #[test]
    fn reno_estimate_grows_one_packet_per_15_8_cwnd_acked() {
        let mut c = Cubic::default();
        c.ca.tcp_cwnd = 100;
        // 100·15/8 = 187 acked per packet; exactly 187 is not yet "more than".
        c.ca.ack_cnt = 187;
        c.reno_friendly(100);
        assert_eq!((c.ca.tcp_cwnd, c.ca.ack_cnt), (100, 187));
        c.ca.ack_cnt = 3 * 187 + 5;
        c.reno_friendly(100);
        assert_eq!((c.ca.tcp_cwnd, c.ca.ack_cnt), (103, 5));
    }

    #[test]
    fn reno_estimate_ahead_of_cwnd_caps_cnt() {
        let mut c = Cubic::default();
        c.ca.cnt = 10_000;
        c.ca.tcp_cwnd = 110;
        c.reno_friendly(100);
        assert_eq!(c.ca.cnt, 10); // 100 / (110 − 100)
    }

    // ---- reduction ----

    #[test]
    fn ssthresh_is_cwnd_times_717_over_1024() {
        let mut c = Cubic::default();
        let mut tp = sock(1000);
        assert_eq!(c.ssthresh(&tp), 700);
        tp.snd_cwnd = 100;
        assert_eq!(c.ssthresh(&tp), 70);
        tp.snd_cwnd = 2;
        assert_eq!(c.ssthresh(&tp), 2);
    }

    #[test]
    fn fast_convergence_lowers_wmax_when_window_shrank() {
        let mut c = Cubic::default();
        let mut tp = sock(1000);
        c.ssthresh(&tp);
        assert_eq!(c.ca.last_max_cwnd, 1000);
        tp.snd_cwnd = 900;
        c.ssthresh(&tp);
        // 900 · (1024 + 717) / 2048 = 765.08
        assert_eq!(c.ca.last_max_cwnd, 765);

        let mut slow = Cubic::new(Params { fast_convergence: false, ..Params::default() });
        tp.snd_cwnd = 1000;
        slow.ssthresh(&tp);
        tp.snd_cwnd = 900;
        slow.ssthresh(&tp);
        assert_eq!(slow.ca.last_max_cwnd, 900);
    }

    #[test]
    fn loss_state_forgets_wmax_and_delay_min() {
        let (mut c, mut tp) = after_loss(1000);
        assert_eq!((c.ca.last_max_cwnd, c.ca.delay_min), (1000, 100_000));
        c.set_state(&mut tp, CaState::Recovery);
        assert_eq!(c.ca.last_max_cwnd, 1000);
        c.set_state(&mut tp, CaState::Loss);
        assert_eq!((c.ca.last_max_cwnd, c.ca.delay_min, c.ca.epoch_start), (0, 0, 0));
        assert_eq!(c.round.curr_rtt, u32::MAX);
    }

    #[test]
    fn rtt_samples_within_a_second_of_epoch_start_are_ignored() {
        let (mut c, mut tp) = after_loss(1000);
        tp.now += Time::from_ms(1);
        c.cong_avoid(&mut tp, 1);
        tp.now += Time::from_ms(500);
        ack(&mut c, &mut tp, Time::from_ms(50));
        assert_eq!(c.ca.delay_min, 100_000);
        tp.now += Time::from_ms(600);
        ack(&mut c, &mut tp, Time::from_ms(50));
        assert_eq!(c.ca.delay_min, 50_000);
    }

    // ---- idle restart ----

    #[test]
    fn tx_start_shifts_epoch_by_idle_time() {
        let (mut c, mut tp) = after_loss(1000);
        tp.now += Time::from_ms(1);
        c.cong_avoid(&mut tp, 1);
        let epoch = c.ca.epoch_start;
        // The last packet was sent 1 ms after the epoch began; its ACK empties the pipe.
        tp.now += RTT;
        ack(&mut c, &mut tp, RTT - Time::from_ms(1));
        tp.now += Time::from_secs(5);
        c.cwnd_event(&mut tp, CaEvent::TxStart);
        assert_eq!(c.ca.epoch_start.wrapping_sub(epoch), 5_099);
    }

    #[test]
    fn tx_start_never_moves_epoch_past_now() {
        let (mut c, mut tp) = after_loss(1000);
        tp.now += Time::from_ms(1);
        c.cong_avoid(&mut tp, 1);
        // The last send was long before the epoch began.
        ack(&mut c, &mut tp, Time::from_ms(900));
        tp.now += Time::from_secs(2);
        c.cwnd_event(&mut tp, CaEvent::TxStart);
        assert_eq!(c.ca.epoch_start, Cubic::jiffies(&tp));
    }

    #[test]
    fn tx_start_without_epoch_does_nothing() {
        let mut c = Cubic::default();
        let mut tp = sock(10);
        c.init(&mut tp);
        tp.now += Time::from_secs(3);
        c.cwnd_event(&mut tp, CaEvent::TxStart);
        assert_eq!(c.ca.epoch_start, 0);
    }

    // ---- HyStart ----

    /// Slow start at cwnd `cwnd` with `packets_out` in flight: `first` ACKs at `RTT`, spaced
    /// 5 ms (no train), fill the first round and set delay_min; the next round begins.
    fn slow_start_round_two(cwnd: u32, packets_out: u32, params: Params) -> (Cubic, Sock) {
        let mut c = Cubic::new(params);
        let mut tp = sock(cwnd);
        tp.packets_out = packets_out;
        c.init(&mut tp);
        for _ in 0..packets_out {
            tp.now += Time::from_ms(5);
            ack(&mut c, &mut tp, RTT);
        }
        assert_eq!(c.ca.delay_min, 100_000);
        (c, tp)
    }

    #[test]
    fn slow_start_delay_rise_exits_with_ssthresh_cwnd() {
        let (mut c, mut tp) = slow_start_round_two(16, 16, Params::default());
        // Threshold: 100 ms + clamp(12.5 ms) = 112.5 ms; 8 samples, then the test.
        for i in 0..9 {
            tp.now += Time::from_ms(5);
            ack(&mut c, &mut tp, Time::from_us(112_600));
            let expect = if i < 8 { TCP_INFINITE_SSTHRESH } else { 16 };
            assert_eq!(tp.snd_ssthresh, expect, "sample {i}");
        }
        assert!(c.ca.found);
    }

    #[test]
    fn slow_start_delay_below_threshold_keeps_going() {
        let (mut c, mut tp) = slow_start_round_two(16, 16, Params::default());
        for _ in 0..15 {
            tp.now += Time::from_ms(5);
            ack(&mut c, &mut tp, Time::from_us(112_500));
        }
        assert_eq!(tp.snd_ssthresh, TCP_INFINITE_SSTHRESH);
    }

    #[test]
    fn slow_start_below_low_window_never_exits() {
        let (mut c, mut tp) = slow_start_round_two(15, 15, Params::default());
        for _ in 0..14 {
            tp.now += Time::from_ms(5);
            ack(&mut c, &mut tp, Time::from_ms(150));
        }
        assert_eq!(tp.snd_ssthresh, TCP_INFINITE_SSTHRESH);
        assert!(!c.ca.found);
    }

    /// ACKs 1 ms apart at constant RTT in round two; returns the ms at which HyStart exited.
    fn ack_train_exit_ms(params: Params) -> Option<u32> {
        let (mut c, mut tp) = slow_start_round_two(16, 128, params);
        for ms in 0..127 {
            tp.now += Time::from_ms(1);
            ack(&mut c, &mut tp, RTT);
            if tp.snd_ssthresh != TCP_INFINITE_SSTHRESH {
                assert_eq!(tp.snd_ssthresh, 16);
                return Some(ms);
            }
        }
        None
    }

    #[test]
    fn slow_start_ack_train_longer_than_half_delay_min_exits() {
        // The first ACK of round two opens the train; exit once it spans > 50 ms.
        assert_eq!(ack_train_exit_ms(Params::default()), Some(51));
    }

    #[test]
    fn slow_start_paced_ack_train_threshold_is_full_delay_min() {
        let paced = Params { paced: true, ..Params::default() };
        assert_eq!(ack_train_exit_ms(paced), Some(101));
        let delay_only = Params { hystart_detect: HYSTART_DELAY, ..Params::default() };
        assert_eq!(ack_train_exit_ms(delay_only), None);
    }

    #[test]
    fn ack_delay_cushion_is_four_gso_packets_at_most_1ms() {
        let c = Cubic::default();
        let mut tp = sock(10);
        assert_eq!(c.hystart_ack_delay(&tp), 0);
        tp.pacing_rate = 1_250_000_000; // 10 Gbit/s: 4 · 64 KiB take 210 µs
        assert_eq!(c.hystart_ack_delay(&tp), 209);
        tp.pacing_rate = 125_000_000; // 1 Gbit/s: 2.1 ms, capped
        assert_eq!(c.hystart_ack_delay(&tp), 1_000);
    }

    #[test]
    fn no_hystart_uses_initial_ssthresh() {
        let mut c =
            Cubic::new(Params { hystart: false, initial_ssthresh: 50, ..Params::default() });
        let mut tp = sock(10);
        c.init(&mut tp);
        assert_eq!(tp.snd_ssthresh, 50);
        let mut c = Cubic::default();
        let mut tp = sock(10);
        c.init(&mut tp);
        assert_eq!(tp.snd_ssthresh, TCP_INFINITE_SSTHRESH);
    }
}
