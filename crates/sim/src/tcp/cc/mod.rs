//! Congestion control behind one interface shaped like Linux's `struct tcp_congestion_ops`
//! (`include/net/tcp.h`).
//!
//! As in Linux, cwnd and ssthresh are in **packets** and live in the socket ([`Sock`]); a CCA
//! reads and writes them through the hooks. Required hooks: [`CongestionOps::ssthresh`],
//! [`CongestionOps::undo_cwnd`] and [`CongestionOps::cong_avoid`] (a CCA that takes over the
//! whole cwnd/pacing decision, like BBR, implements [`CongestionOps::cong_control`] and leaves
//! `cong_avoid` empty). The other hooks default to no-ops.
//!
//! Adding an algorithm = its own file + one [`AnyCc`] variant + one line in [`REGISTRY`].
//! Shared mechanics (`tcp_slow_start`, `tcp_cong_avoid_ai`, `tcp_reno_*` in
//! `net/ipv4/tcp_cong.c`) live here once.

pub mod bbr;
pub mod bbr3;
pub mod cubic;
pub mod dctcp;
pub mod htcp;
pub mod reno;

use crate::time::Time;

/// Linux `enum tcp_ca_state` (`include/uapi/linux/tcp.h`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    #[default]
    Open,
    Disorder,
    Cwr,
    Recovery,
    Loss,
}

/// Linux `enum tcp_ca_event` (`include/net/tcp.h`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaEvent {
    /// First transmission when no packets are in flight.
    TxStart,
    /// Congestion window restart after idle.
    CwndRestart,
    /// End of a CWR/Recovery episode.
    CompleteCwr,
    /// Loss timeout (RTO).
    Loss,
    /// ECT packet without CE received.
    EcnNoCe,
    /// CE received.
    EcnIsCe,
}

/// The `tcp_sock` fields a congestion control may read or write.
#[derive(Clone, Debug)]
pub struct Sock {
    /// Current time (the CCA's clock: `tcp_jiffies32`, `tcp_clock_us()`).
    pub now: Time,
    /// Kernel tick rate `HZ`; H-TCP and CUBIC count time in jiffies.
    pub hz: u32,
    /// Congestion window, packets.
    pub snd_cwnd: u32,
    /// Slow-start threshold, packets (`TCP_INFINITE_SSTHRESH` until the first reduction).
    pub snd_ssthresh: u32,
    /// Linear-increase counter (`snd_cwnd_cnt`).
    pub snd_cwnd_cnt: u32,
    /// Upper bound on cwnd, packets (`snd_cwnd_clamp`).
    pub snd_cwnd_clamp: u32,
    /// Sender MSS in bytes (`mss_cache`).
    pub mss: u32,
    /// Smoothed RTT in µs, unscaled (Linux keeps `srtt_us` ×8; we store the value). 0 = none yet.
    pub srtt_us: u32,
    /// Minimum RTT seen, µs (`tcp_min_rtt()`); 0 = none yet.
    pub min_rtt_us: u32,
    /// Packets sent and not yet cumulatively acked or SACKed-and-lost (`packets_out`).
    pub packets_out: u32,
    /// Largest `packets_out` in the last window (`max_packets_out`).
    pub max_packets_out: u32,
    /// The last window was limited by cwnd rather than by the application or rwnd.
    pub is_cwnd_limited: bool,
    pub ca_state: CaState,
    /// Packets delivered so far (`tp->delivered`).
    pub delivered: u64,
    /// Packets delivered with CE marks (`tp->delivered_ce`).
    pub delivered_ce: u64,
    /// cwnd before the last reduction (`prior_cwnd`), for undo.
    pub prior_cwnd: u32,
    /// ssthresh before the last reduction (`prior_ssthresh`).
    pub prior_ssthresh: u32,
    /// Pacing rate in bytes/s (`sk_pacing_rate`). The core sets it after every ACK as
    /// `tcp_update_pacing_rate()` does, unless the CCA sets it itself (BBR, in `cong_control`).
    pub pacing_rate: u64,
    /// `sk_max_pacing_rate` in bytes/s (`SO_MAX_PACING_RATE`); `u64::MAX` = unset.
    pub max_pacing_rate: u64,
    /// `sk_pacing_shift`: a TSO burst holds about `pacing_rate >> pacing_shift` bytes (10 ⇒ ~1 ms).
    pub pacing_shift: u32,
    /// `sk_gso_max_size`, bytes (64 KiB; BIG TCP raises it).
    pub gso_max_size: u32,
    /// Packets in flight (`tcp_packets_in_flight()`), kept current before every hook call.
    pub in_flight: u32,
    /// Packets marked lost so far (`tp->lost`, monotone).
    pub lost: u64,
    /// The sender is application-limited (`tp->app_limited != 0`).
    pub app_limited: bool,
    /// ECN was negotiated on this connection.
    pub ecn_ok: bool,
    /// Byte sequence numbers (64-bit, from 0): oldest unacked and next to send.
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// When data was last sent (`tp->lsndtime`).
    pub lsndtime: Time,
}

/// `SK_PACING_SHIFT` = 10 (`include/net/sock.h`): TSO bursts of about 1 ms at the pacing rate.
pub const SK_PACING_SHIFT: u32 = 10;
/// `GSO_LEGACY_MAX_SIZE` = 65536 (`include/linux/netdevice.h`): the default `gso_max_size`.
pub const GSO_MAX_SIZE: u32 = 65_536;
/// `sysctl_tcp_tso_rtt_log` = 9 (`net/ipv4/tcp_ipv4.c`, Linux ≥ 5.18): short-RTT paths get
/// larger TSO bursts.
pub const TCP_TSO_RTT_LOG: u32 = 9;
/// `sysctl_tcp_min_tso_segs` = 2 (`net/ipv4/tcp_ipv4.c`).
pub const TCP_MIN_TSO_SEGS: u32 = 2;

/// `after(a, b)` on 32-bit jiffies (`include/linux/jiffies.h` `time_after`): wrap-safe a > b.
#[inline]
pub fn after(a: u32, b: u32) -> bool {
    (b.wrapping_sub(a) as i32) < 0
}

/// `msecs_to_jiffies()`: rounds up to whole ticks.
#[inline]
pub fn msecs_to_jiffies(ms: u32, hz: u32) -> u32 {
    (ms as u64 * hz as u64).div_ceil(1000) as u32
}

/// `TCP_INFINITE_SSTHRESH` (`include/net/tcp.h`): 0x7fffffff.
pub const TCP_INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

impl Sock {
    pub fn new(mss: u32, initcwnd: u32, hz: u32) -> Sock {
        Sock {
            now: Time::ZERO,
            hz,
            snd_cwnd: initcwnd,
            snd_ssthresh: TCP_INFINITE_SSTHRESH,
            snd_cwnd_cnt: 0,
            snd_cwnd_clamp: u32::MAX,
            mss,
            srtt_us: 0,
            min_rtt_us: 0,
            packets_out: 0,
            max_packets_out: 0,
            is_cwnd_limited: false,
            ca_state: CaState::Open,
            delivered: 0,
            delivered_ce: 0,
            prior_cwnd: 0,
            prior_ssthresh: 0,
            pacing_rate: 0,
            max_pacing_rate: u64::MAX,
            pacing_shift: SK_PACING_SHIFT,
            gso_max_size: GSO_MAX_SIZE,
            in_flight: 0,
            lost: 0,
            app_limited: false,
            ecn_ok: false,
            snd_una: 0,
            snd_nxt: 0,
            lsndtime: Time::ZERO,
        }
    }

    /// `tcp_tso_autosize()` (`net/ipv4/tcp_output.c`): segments per TSO/GSO burst — about
    /// 1 ms of data at the pacing rate (`pacing_rate >> pacing_shift`), plus
    /// `gso_max_size >> (min_rtt_us >> tcp_tso_rtt_log)` for short paths, at most
    /// `gso_max_size`, at least `min_tso_segs`.
    pub fn tso_autosize(&self, min_tso_segs: u32) -> u32 {
        let mut bytes = self.pacing_rate >> self.pacing_shift;
        let r = self.min_rtt_us >> TCP_TSO_RTT_LOG;
        if r < 32 {
            bytes += (self.gso_max_size >> r) as u64;
        }
        let bytes = bytes.min(self.gso_max_size as u64);
        ((bytes / self.mss.max(1) as u64) as u32).max(min_tso_segs)
    }

    /// `tcp_jiffies32`: the current time in ticks of `1/HZ` s.
    #[inline]
    pub fn jiffies(&self) -> u32 {
        (self.now.ps() / (Time::PS_PER_S / self.hz as u64)) as u32
    }

    /// `tcp_in_slow_start()`.
    #[inline]
    pub fn in_slow_start(&self) -> bool {
        self.snd_cwnd < self.snd_ssthresh
    }

    /// `tcp_is_cwnd_limited()` (`include/net/tcp.h`): in slow start, grow while cwnd is below
    /// twice what was in flight, so a flow that cannot use its window does not inflate it.
    #[inline]
    pub fn is_cwnd_limited(&self) -> bool {
        if self.is_cwnd_limited {
            return true;
        }
        if self.in_slow_start() {
            return self.snd_cwnd < 2 * self.max_packets_out;
        }
        false
    }
}

/// Per-ACK sample for `pkts_acked` (Linux `struct ack_sample`).
#[derive(Clone, Copy, Debug, Default)]
pub struct AckSample {
    /// Packets the cumulative ACK newly covered, SACKed earlier or not (`tcp_clean_rtx_queue()`'s
    /// `pkts_acked`); 0 for an ACK that only SACKs.
    pub pkts_acked: u32,
    /// RTT sample in µs, or negative if this ACK gave none (Karn's rule).
    pub rtt_us: i64,
    /// Packets in flight before this ACK.
    pub in_flight: u32,
}

/// Delivery-rate sample (Linux `struct rate_sample`, `net/ipv4/tcp_rate.c`).
#[derive(Clone, Copy, Debug, Default)]
pub struct RateSample {
    /// Packets delivered over the sampling interval.
    pub delivered: i64,
    /// Interval of the sample in µs; negative when no valid sample.
    pub interval_us: i64,
    /// RTT of the most recently (S)ACKed packet, µs; negative if none.
    pub rtt_us: i64,
    /// Packets marked lost by this ACK.
    pub losses: u32,
    /// Packets newly (S)ACKed by this ACK.
    pub acked_sacked: u32,
    /// Packets in flight before this ACK.
    pub prior_in_flight: u32,
    /// `tp->delivered` when the sampled packet was sent.
    pub prior_delivered: u64,
    /// The sample was taken while the application limited sending.
    pub is_app_limited: bool,
}

/// The hooks of `struct tcp_congestion_ops`, fast-path first.
pub trait CongestionOps {
    /// Name as in `tcp_congestion_control` (`"cubic"`, `"reno"`).
    fn name(&self) -> &'static str;

    /// (required) New slow-start threshold after loss, in packets.
    fn ssthresh(&mut self, tp: &Sock) -> u32;

    /// (required unless `cong_control` is used) Grow cwnd on an ACK that acked `acked` packets.
    fn cong_avoid(&mut self, tp: &mut Sock, acked: u32);

    /// (optional) Take over cwnd and pacing decisions from the delivery-rate sample. Returns
    /// `true` if it did (then `cong_avoid` and PRR are not run, as Linux does for BBR).
    fn cong_control(&mut self, _tp: &mut Sock, _rs: &RateSample) -> bool {
        false
    }

    /// (optional) Called before changing `ca_state`.
    fn set_state(&mut self, _tp: &mut Sock, _new_state: CaState) {}

    /// (optional) Called on a congestion event.
    fn cwnd_event(&mut self, _tp: &mut Sock, _ev: CaEvent) {}

    /// (optional) Called on each ACK with the flags of that ACK (see `ack_flags`).
    fn in_ack_event(&mut self, _tp: &mut Sock, _flags: u32) {}

    /// (optional) Called on each ACK that acks new packets, with an RTT sample when there is one.
    fn pkts_acked(&mut self, _tp: &mut Sock, _sample: &AckSample) {}

    /// (required) cwnd to restore when a reduction is undone (spurious loss).
    fn undo_cwnd(&mut self, tp: &Sock) -> u32;

    /// (optional) Called once when the connection is established.
    fn init(&mut self, _tp: &mut Sock) {}

    /// (optional) The CCA wants TCP-internal pacing (Linux: `sk_pacing_status = SK_PACING_NEEDED`
    /// from `bbr_init`).
    fn wants_pacing(&self) -> bool {
        false
    }

    /// (optional) The algorithm needs ECN (`TCP_CONG_NEEDS_ECN`): it is negotiated whatever
    /// the host's `tcp_ecn`.
    fn needs_ecn(&self) -> bool {
        false
    }

    /// (optional) The algorithm implements `cong_control` (Linux: `ca_ops->cong_control` set),
    /// which exempts it from the core's cwnd restart after idle.
    fn has_cong_control(&self) -> bool {
        false
    }

    /// (optional) Send-buffer multiple of cwnd (`sndbuf_expand`; Linux's default is 2).
    fn sndbuf_expand(&self) -> u32 {
        2
    }

    /// (optional) Fewest segments in a TSO burst (`min_tso_segs`; `sysctl_tcp_min_tso_segs`).
    fn min_tso_segs(&self, _tp: &Sock) -> u32 {
        TCP_MIN_TSO_SEGS
    }
}

/// Flags passed to `in_ack_event` (Linux `enum tcp_ca_ack_event_flags`).
pub mod ack_flags {
    /// The ACK arrived on the slow path.
    pub const SLOWPATH: u32 = 1 << 0;
    /// The ACK advanced the window (`CA_ACK_WIN_UPDATE`).
    pub const WIN_UPDATE: u32 = 1 << 1;
    /// The ACK carried ECE.
    pub const ECE: u32 = 1 << 2;
}

// ---- shared mechanics (`net/ipv4/tcp_cong.c`) ----

/// `tcp_slow_start()`: cwnd grows by every newly acked packet (no RFC 3465 L = 2 limit), up to
/// ssthresh. Returns the acked packets left over for congestion avoidance.
pub fn slow_start(tp: &mut Sock, acked: u32) -> u32 {
    let cwnd = tp.snd_cwnd.saturating_add(acked).min(tp.snd_ssthresh);
    let left = acked - (cwnd - tp.snd_cwnd).min(acked);
    tp.snd_cwnd = cwnd.min(tp.snd_cwnd_clamp);
    left
}

/// `tcp_cong_avoid_ai()`: additive increase of one packet per `w` acked packets.
pub fn cong_avoid_ai(tp: &mut Sock, w: u32, acked: u32) {
    let w = w.max(1);
    // Credits accumulated at a higher w: apply them gently.
    if tp.snd_cwnd_cnt >= w {
        tp.snd_cwnd_cnt = 0;
        tp.snd_cwnd += 1;
    }
    tp.snd_cwnd_cnt += acked;
    if tp.snd_cwnd_cnt >= w {
        let delta = tp.snd_cwnd_cnt / w;
        tp.snd_cwnd_cnt -= delta * w;
        tp.snd_cwnd += delta;
    }
    tp.snd_cwnd = tp.snd_cwnd.min(tp.snd_cwnd_clamp);
}

/// The common start of a `cong_avoid` (`tcp_reno_cong_avoid()`, `cubictcp_cong_avoid()`):
/// nothing unless cwnd-limited; slow start first; returns the acked packets left for
/// congestion avoidance, if any.
pub fn slow_start_then(tp: &mut Sock, acked: u32) -> Option<u32> {
    if !tp.is_cwnd_limited() {
        return None;
    }
    let left = if tp.in_slow_start() { slow_start(tp, acked) } else { acked };
    (left > 0).then_some(left)
}

/// `tcp_reno_cong_avoid()`.
pub fn reno_cong_avoid(tp: &mut Sock, acked: u32) {
    if let Some(acked) = slow_start_then(tp, acked) {
        let w = tp.snd_cwnd;
        cong_avoid_ai(tp, w, acked);
    }
}

/// `tcp_reno_ssthresh()`: half the window, at least 2.
pub fn reno_ssthresh(tp: &Sock) -> u32 {
    (tp.snd_cwnd >> 1).max(2)
}

/// `tcp_reno_undo_cwnd()`: the larger of now and before the reduction.
pub fn reno_undo_cwnd(tp: &Sock) -> u32 {
    tp.snd_cwnd.max(tp.prior_cwnd)
}

/// Static dispatch over the registered algorithms (hot path: no vtable).
#[derive(Clone, Debug)]
pub enum AnyCc {
    Reno(reno::Reno),
    Cubic(cubic::Cubic),
    Dctcp(dctcp::Dctcp),
    Htcp(htcp::Htcp),
    Bbr(bbr::Bbr),
    Bbr3(bbr3::Bbr3),
}

macro_rules! dispatch {
    ($self:ident, $cc:ident => $e:expr) => {
        match $self {
            AnyCc::Reno($cc) => $e,
            AnyCc::Cubic($cc) => $e,
            AnyCc::Dctcp($cc) => $e,
            AnyCc::Htcp($cc) => $e,
            AnyCc::Bbr($cc) => $e,
            AnyCc::Bbr3($cc) => $e,
        }
    };
}

impl CongestionOps for AnyCc {
    fn name(&self) -> &'static str {
        dispatch!(self, c => c.name())
    }
    fn ssthresh(&mut self, tp: &Sock) -> u32 {
        dispatch!(self, c => c.ssthresh(tp))
    }
    fn cong_avoid(&mut self, tp: &mut Sock, acked: u32) {
        dispatch!(self, c => c.cong_avoid(tp, acked))
    }
    fn cong_control(&mut self, tp: &mut Sock, rs: &RateSample) -> bool {
        dispatch!(self, c => c.cong_control(tp, rs))
    }
    fn set_state(&mut self, tp: &mut Sock, s: CaState) {
        dispatch!(self, c => c.set_state(tp, s))
    }
    fn cwnd_event(&mut self, tp: &mut Sock, ev: CaEvent) {
        dispatch!(self, c => c.cwnd_event(tp, ev))
    }
    fn in_ack_event(&mut self, tp: &mut Sock, flags: u32) {
        dispatch!(self, c => c.in_ack_event(tp, flags))
    }
    fn pkts_acked(&mut self, tp: &mut Sock, s: &AckSample) {
        dispatch!(self, c => c.pkts_acked(tp, s))
    }
    fn undo_cwnd(&mut self, tp: &Sock) -> u32 {
        dispatch!(self, c => c.undo_cwnd(tp))
    }
    fn init(&mut self, tp: &mut Sock) {
        dispatch!(self, c => c.init(tp))
    }
    fn wants_pacing(&self) -> bool {
        dispatch!(self, c => c.wants_pacing())
    }
    fn min_tso_segs(&self, tp: &Sock) -> u32 {
        dispatch!(self, c => c.min_tso_segs(tp))
    }
    fn needs_ecn(&self) -> bool {
        dispatch!(self, c => c.needs_ecn())
    }
    fn sndbuf_expand(&self) -> u32 {
        dispatch!(self, c => c.sndbuf_expand())
    }
    fn has_cong_control(&self) -> bool {
        dispatch!(self, c => c.has_cong_control())
    }
}

/// A congestion control's constructor.
pub type NewCc = fn() -> AnyCc;

/// One line per algorithm: its name and constructor.
pub const REGISTRY: &[(&str, NewCc)] = &[
    ("reno", || AnyCc::Reno(reno::Reno)),
    ("cubic", || AnyCc::Cubic(cubic::Cubic::default())),
    ("dctcp", || AnyCc::Dctcp(dctcp::Dctcp::default())),
    ("htcp", || AnyCc::Htcp(htcp::Htcp::default())),
    ("bbr", || AnyCc::Bbr(bbr::Bbr::default())),
    ("bbr3", || AnyCc::Bbr3(bbr3::Bbr3::default())),
];

/// Names accepted for a flow's `cca`.
pub fn names() -> impl Iterator<Item = &'static str> {
    REGISTRY.iter().map(|(n, _)| *n)
}

/// The algorithm registered under `name`.
pub fn by_name(name: &str) -> Option<AnyCc> {
    REGISTRY.iter().find(|(n, _)| *n == name).map(|(_, make)| make())
}

/// The algorithm a flow runs, with its sender's module parameters (`dctcp_shift_g`,
/// `dctcp_alpha_on_init`).
pub fn for_flow(spec: &crate::tcp::config::FlowSpec) -> Option<AnyCc> {
    match by_name(&spec.cca)? {
        AnyCc::Dctcp(_) => {
            let params = dctcp::Params {
                shift_g: spec.dctcp_shift_g,
                alpha_on_init: spec.dctcp_alpha_on_init,
            };
            Some(AnyCc::Dctcp(dctcp::Dctcp::new(params)))
        }
        cc => Some(cc),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_names_are_unique_and_match_the_algorithm() {
        let mut seen = std::collections::HashSet::new();
        for (name, make) in REGISTRY {
            assert!(seen.insert(*name), "duplicate CCA name {name}");
            assert_eq!(make().name(), *name);
        }
    }

    #[test]
    fn tso_autosize_is_about_a_millisecond_at_the_pacing_rate() {
        assert_eq!(
            (SK_PACING_SHIFT, GSO_MAX_SIZE, TCP_TSO_RTT_LOG, TCP_MIN_TSO_SEGS),
            (10, 65_536, 9, 2)
        );
        let mut tp = Sock::new(8948, 10, 1000);
        tp.min_rtt_us = 209_000;
        // 10 Gbit/s = 1.25e9 B/s: >> 10 = 1,220,703 B, capped at 64 KiB = 7 jumbo segments.
        tp.pacing_rate = 1_250_000_000;
        assert_eq!(tp.tso_autosize(TCP_MIN_TSO_SEGS), 7);
        // 100 Mbit/s: 12,207 B = 1 segment, raised to the minimum of 2.
        tp.pacing_rate = 12_500_000;
        assert_eq!(tp.tso_autosize(TCP_MIN_TSO_SEGS), 2);
        // A 1 ms path adds gso_max_size >> 1 = 32 KiB: (12,207 + 32,768) / 1448 = 31 segments.
        tp.mss = 1448;
        tp.min_rtt_us = 1000;
        assert_eq!(tp.tso_autosize(TCP_MIN_TSO_SEGS), 31);
    }

    #[test]
    fn infinite_ssthresh_is_linux_value() {
        assert_eq!(TCP_INFINITE_SSTHRESH, 0x7fff_ffff);
    }

    #[test]
    fn slow_start_adds_every_acked_packet_and_spills_over() {
        let mut tp = Sock::new(1448, 10, 1000);
        tp.snd_ssthresh = 25;
        assert_eq!(slow_start(&mut tp, 10), 0);
        assert_eq!(tp.snd_cwnd, 20);
        // 10 more would pass ssthresh 25: 5 are used, 5 spill into congestion avoidance.
        assert_eq!(slow_start(&mut tp, 10), 5);
        assert_eq!(tp.snd_cwnd, 25);
    }

    #[test]
    fn cong_avoid_ai_adds_one_packet_per_window() {
        let mut tp = Sock::new(1448, 100, 1000);
        tp.snd_ssthresh = 50;
        for _ in 0..99 {
            cong_avoid_ai(&mut tp, 100, 1);
        }
        assert_eq!(tp.snd_cwnd, 100);
        cong_avoid_ai(&mut tp, 100, 1);
        assert_eq!(tp.snd_cwnd, 101);
        assert_eq!(tp.snd_cwnd_cnt, 0);
    }

    #[test]
    fn reno_ssthresh_halves_with_floor_two() {
        let mut tp = Sock::new(1448, 3, 1000);
        assert_eq!(reno_ssthresh(&tp), 2);
        tp.snd_cwnd = 101;
        assert_eq!(reno_ssthresh(&tp), 50);
    }

    #[test]
    fn no_growth_when_not_cwnd_limited() {
        let mut tp = Sock::new(1448, 10, 1000);
        tp.max_packets_out = 4; // cwnd 10 >= 2 * 4: application-limited
        reno_cong_avoid(&mut tp, 4);
        assert_eq!(tp.snd_cwnd, 10);
    }
}
