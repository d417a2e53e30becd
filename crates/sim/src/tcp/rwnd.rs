//! The receiver's advertised window as Linux computes it.
//!
//! One [`RcvWindow`] per receiving socket follows the life of Linux's receive-side state:
//! - set-up: `tcp_select_initial_window` (`net/ipv4/tcp_output.c`, via `tcp_openreq_init_rwin`,
//!   `net/ipv4/tcp_minisocks.c`) picks the window scale and the SYN window, then
//!   `tcp_init_buffer_space` (`net/ipv4/tcp_input.c`) fixes `window_clamp`, `rcv_ssthresh` and
//!   the first DRS sample;
//! - each in-order segment: `tcp_event_data_recv` → `tcp_grow_window` raises `rcv_ssthresh`;
//! - the first full-sized segment: `tcp_measure_rcv_mss` measures the skbs' len/truesize ratio
//!   (≥ 6.6) and resizes `window_clamp` with it;
//! - each application read: `tcp_rcv_space_adjust` (dynamic right-sizing, DRS) grows `sk_rcvbuf`
//!   and `window_clamp` at most once per receiver RTT, up to `tcp_rmem[2]`; in 6.18 each
//!   out-of-order segment may grow them too (`tcp_rcvbuf_grow`), see [`RcvBufTuning`];
//! - each ACK: `tcp_select_window` / `__tcp_select_window` (`net/ipv4/tcp_output.c`) turn the
//!   free buffer into the window, never receding the right edge already offered.
//!
//! **Memory model.** Linux charges each queued skb's `truesize` (payload + `struct sk_buff` +
//! driver buffer slack) to `sk_rmem_alloc`. We carry no skbs, so unread payload `held` is charged
//! as `space_from_win(model, held)`, the exact inverse of [`win_from_space`]: with
//! `AdvWinScale(1)` every payload byte costs two bytes of `rcvbuf` (window = `rcvbuf/2`), with
//! `ScalingRatio(r)` a payload byte costs `256/r` bytes (window = `rcvbuf·r >> 8`). The window
//! model *is* the len/truesize ratio, so the free window is the configured window minus what is
//! held, as in Linux when every skb has the assumed ratio.

pub use crate::tcp::config::RcvBufTuning;
use crate::tcp::config::WindowModel;
use crate::time::Time;

/// Initial `tp->scaling_ratio` of current kernels: `TCP_DEFAULT_SCALING_RATIO` =
/// `1 << (TCP_RMEM_TO_WIN_SCALE - 1)` = 128, a 50 % len/truesize ratio (`include/net/tcp.h`,
/// upstream commit 697a6c8cec03 "tcp: increase the default TCP scaling ratio", Linux 6.10,
/// backported to 6.6.y, 6.8.y and 6.9.y stable in May 2024). It reproduces the window of the old
/// default `tcp_adv_win_scale = 1`.
pub const TCP_DEFAULT_SCALING_RATIO: u8 = 1 << (TCP_RMEM_TO_WIN_SCALE - 1);

/// `TCP_DEFAULT_SCALING_RATIO` as first merged in Linux 6.6 (dfa2f0483360, "tcp: get rid of
/// sysctl_tcp_adv_win_scale") and used by 6.6–6.9 until the 2024 change above reached them:
/// `(1200 << TCP_RMEM_TO_WIN_SCALE) / SKB_TRUESIZE(4096)` = 307200 / 4672 = 65 (≈ 25 %) on
/// x86_64, where `SKB_TRUESIZE(4096)` = 4096 + `SKB_DATA_ALIGN(sizeof(struct sk_buff))` (232 →
/// 256) + `SKB_DATA_ALIGN(sizeof(struct skb_shared_info))` (320 with 17 frags)
/// (`include/linux/skbuff.h`).
pub const TCP_SCALING_RATIO_V6_6_0: u8 = ((1200u32 << TCP_RMEM_TO_WIN_SCALE) / 4672) as u8;

/// `SOCK_MIN_RCVBUF` = 2 · `TCP_SKB_MIN_TRUESIZE` = 2 · (2048 + `SKB_DATA_ALIGN(sizeof(struct
/// sk_buff))`) = 2 · (2048 + 256) on x86_64 (`include/net/sock.h`): `tcp_set_window_clamp()`
/// never sets a clamp below half of it.
pub const SOCK_MIN_RCVBUF: u64 = 2 * (2048 + 256);

/// `TCP_RMEM_TO_WIN_SCALE` = 8 (`include/net/tcp.h`): `scaling_ratio` is a fraction of 256.
pub const TCP_RMEM_TO_WIN_SCALE: u32 = 8;

/// `TCP_MAX_WSCALE` = 14 (`include/net/tcp.h`; RFC 7323 §2.3 caps the shift at 14).
pub const TCP_MAX_WSCALE: u8 = 14;

/// Largest window any Linux socket can advertise: `U16_MAX << TCP_MAX_WSCALE` =
/// 1,073,725,440 B (`tcp_select_initial_window`, `tcp_select_window`; RFC 7323 §2.3).
pub const TCP_MAX_WINDOW_BYTES: u64 = (u16::MAX as u64) << TCP_MAX_WSCALE;

/// Integer sysctls (`tcp_rmem`, `rmem_max`) are C `int`s: nothing above `INT_MAX` can be set
/// (`net/ipv4/sysctl_net_ipv4.c`, `proc_dointvec_minmax`).
pub const SYSCTL_INT_MAX: u64 = i32::MAX as u64;

pub use super::TCP_INIT_CWND;

/// `TCP_MSS_DEFAULT` = 536 (`include/net/tcp.h`): the first `rcv_mss` guess is at most this
/// (`tcp_initialize_rcv_mss`).
pub const TCP_MSS_DEFAULT: u32 = 536;

/// `TCP_MIN_MSS` = 88 (`include/net/tcp.h`): floor of the first `rcv_mss` guess.
pub const TCP_MIN_MSS: u32 = 88;

/// Default `net.ipv4.tcp_app_win` = 31 (`net/ipv4/tcp_ipv4.c`, `tcp_sk_init`): the share of the
/// window reserved for the application in `tcp_init_buffer_space` (`maxwin >> 31` = 0 in
/// practice, but it also switches on the one-segment reservation).
pub const TCP_APP_WIN: u32 = 31;

/// `tcp_event_data_recv` (`net/ipv4/tcp_input.c`) grows the window only for segments of at
/// least 128 bytes.
pub const TCP_GROW_MIN_LEN: u32 = 128;

/// What the receiving host's configuration says about its window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RcvWindowConfig {
    /// `net.ipv4.tcp_rmem` (min, default, max), bytes. Values above `INT_MAX` are capped.
    pub tcp_rmem: [u64; 3],
    /// `net.core.rmem_max`, bytes (raises the window scale like `tcp_rmem[2]`).
    pub rmem_max: u64,
    pub model: WindowModel,
    /// Route `initrwnd` in segments (`RTAX_INITRWND`); 0 = not set.
    pub initrwnd: u32,
    /// The len/truesize ratio (of 256) `tcp_measure_rcv_mss()` measures from the host's skbs at
    /// the first full-sized segment; `None` = keep the model's (≥ 6.6 only).
    pub skb_ratio: Option<u8>,
    pub tuning: RcvBufTuning,
    /// MSS the receiver offers and quantises its SYN window to: MTU − 40 − 12 (timestamps) =
    /// 1448 on a 1500-byte MTU gives Linux's familiar SYN-ACK window of 65160. Also used where
    /// Linux uses `tp->advmss` (1460 there): growth steps and DRS cushion.
    pub advmss: u32,
}

/// Receive-side window state of one socket (`tp->rcv_wnd`, `rcv_wup`, `rcv_ssthresh`,
/// `window_clamp`, `rx_opt.rcv_wscale`, `icsk_ack.rcv_mss`, `sk->sk_rcvbuf`, `tp->rcvq_space`).
#[derive(Clone, Debug)]
pub struct RcvWindow {
    model: WindowModel,
    skb_ratio: Option<u8>,
    tuning: RcvBufTuning,
    /// `tcp_rmem[2]`, capped at `INT_MAX`.
    rmem_cap: u64,
    advmss: u64,
    wscale: u8,
    rcvbuf: u64,
    window_clamp: u64,
    rcv_ssthresh: u64,
    /// Window offered by the last ACK (before the `65535 << wscale` header cap, as in Linux).
    rcv_wnd: u64,
    /// `rcv_nxt` when `rcv_wnd` was offered: the right edge is `rcv_wup + rcv_wnd`.
    rcv_wup: u64,
    initial_rcv_wnd: u64,
    rcv_mss: u64,
    /// DRS (`tp->rcvq_space`): bytes read per RTT last time, the `copied` mark and time then.
    space: u64,
    space_seq: u64,
    space_time: Option<Time>,
}

/// `tcp_win_from_space` for either model: the payload window `space` bytes of buffer hold.
/// ≤ 6.5: `adv_win_scale ≤ 0 ? space >> −s : space − (space >> s)`; ≥ 6.6:
/// `space · scaling_ratio >> TCP_RMEM_TO_WIN_SCALE` (`include/net/tcp.h`). A ratio of 0 counts as
/// 1, as `tcp_measure_rcv_mss` never stores 0.
pub fn win_from_space(model: WindowModel, space: u64) -> u64 {
    match model {
        WindowModel::AdvWinScale(s) if s <= 0 => space >> s.unsigned_abs().min(63),
        WindowModel::AdvWinScale(s) => space - (space >> s.unsigned_abs().min(63)),
        WindowModel::ScalingRatio(r) => {
            ((space as u128 * r.max(1) as u128) >> TCP_RMEM_TO_WIN_SCALE) as u64
        }
    }
}

/// Inverse of [`win_from_space`]: the buffer needed to hold a payload window `win`
/// (`tcp_space_from_win`, `include/net/tcp.h`, ≥ 6.6; for ≤ 6.5 the algebraic inverse, see the
/// module's memory model).
pub fn space_from_win(model: WindowModel, win: u64) -> u64 {
    let v = match model {
        WindowModel::AdvWinScale(s) if s <= 0 => (win as u128) << s.unsigned_abs().min(63),
        WindowModel::AdvWinScale(s) => {
            let k = 1u128 << s.unsigned_abs().min(63);
            win as u128 * k / (k - 1)
        }
        // In 64 bits while the shift fits: the same quotient, no 128-bit division per segment.
        WindowModel::ScalingRatio(r) if win >> (u64::BITS - TCP_RMEM_TO_WIN_SCALE) == 0 => {
            return (win << TCP_RMEM_TO_WIN_SCALE) / r.max(1) as u64;
        }
        WindowModel::ScalingRatio(r) => ((win as u128) << TCP_RMEM_TO_WIN_SCALE) / r.max(1) as u128,
    };
    v.min(u64::MAX as u128) as u64
}

impl RcvWindow {
    /// `tcp_select_initial_window` + `tcp_init_buffer_space` at connection set-up.
    pub fn new(cfg: &RcvWindowConfig) -> Self {
        let model = cfg.model;
        let rmem = cfg.tcp_rmem.map(|v| v.min(SYSCTL_INT_MAX));
        let rmem_max = cfg.rmem_max.min(SYSCTL_INT_MAX);
        let mss = cfg.advmss.max(1) as u64;
        // tcp_init_sock: sk_rcvbuf = tcp_rmem[1]; the SYN offers tcp_full_space().
        let rcvbuf = rmem[1];
        let full_space = win_from_space(model, rcvbuf);

        // tcp_select_initial_window: no user clamp, so the clamp is the largest scaled window.
        let mut window_clamp = TCP_MAX_WINDOW_BYTES;
        let mut space = full_space.min(window_clamp);
        if space > mss {
            space -= space % mss;
        }
        let mut rcv_wnd = space;
        // Route initrwnd only lowers the offer (`rcv_wnd = min(rcv_wnd, init_rcv_wnd * mss)`).
        if cfg.initrwnd > 0 {
            rcv_wnd = rcv_wnd.min(cfg.initrwnd as u64 * mss);
        }
        // The scale is sized for the largest buffer the socket may ever get.
        let scale_space = space.max(rmem[2]).max(rmem_max).min(window_clamp);
        let wscale = (ilog2(scale_space) - 15).clamp(0, TCP_MAX_WSCALE as i32) as u8;
        window_clamp = window_clamp.min((u16::MAX as u64) << wscale);
        // tcp_create_openreq_child: rcv_ssthresh starts at the SYN window.
        let mut rcv_ssthresh = rcv_wnd;

        // tcp_init_buffer_space, with the default tcp_app_win.
        let maxwin = full_space;
        if window_clamp >= maxwin {
            window_clamp = maxwin;
            if maxwin > 4 * mss {
                window_clamp = (maxwin - (maxwin >> TCP_APP_WIN)).max(4 * mss);
            }
        }
        // "Force reservation of one segment."
        if window_clamp > 2 * mss && window_clamp + mss > maxwin {
            window_clamp = (2 * mss).max(maxwin.saturating_sub(mss));
        }
        rcv_ssthresh = rcv_ssthresh.min(window_clamp);
        let drs_space = rcv_ssthresh.min(rcv_wnd).min(TCP_INIT_CWND as u64 * mss);

        // tcp_initialize_rcv_mss: a deliberate under-estimate, corrected by the first segments.
        let rcv_mss = mss.min(rcv_wnd / 2).min(TCP_MSS_DEFAULT as u64).max(TCP_MIN_MSS as u64);

        RcvWindow {
            model,
            skb_ratio: cfg.skb_ratio,
            tuning: cfg.tuning,
            rmem_cap: rmem[2],
            advmss: mss,
            wscale,
            rcvbuf,
            window_clamp,
            rcv_ssthresh,
            rcv_wnd,
            rcv_wup: 0,
            initial_rcv_wnd: rcv_wnd,
            rcv_mss,
            space: drs_space,
            space_seq: 0,
            space_time: None,
        }
    }

    /// Window scale this side announces in its SYN/SYN-ACK (0..=14).
    pub fn wscale(&self) -> u8 {
        self.wscale
    }

    /// Window chosen at set-up (`rsk_rcv_wnd`), bytes; it is also the first right edge.
    pub fn initial_rcv_wnd(&self) -> u64 {
        self.initial_rcv_wnd
    }

    /// Window field of the SYN/SYN-ACK: never scaled, so at most 65535 (RFC 7323 §2.2;
    /// `tcp_make_synack`: `min(req->rsk_rcv_wnd, 65535U)`).
    pub fn syn_window(&self) -> u64 {
        self.initial_rcv_wnd.min(u16::MAX as u64)
    }

    /// An in-order data segment of `len` payload bytes arrived (`tcp_event_data_recv` →
    /// `tcp_grow_window`). `held_bytes` = payload held unread *including this segment*: Linux
    /// queues the skb before it grows the window.
    /// Returns whether `rcv_ssthresh` grew.
    pub fn on_data(&mut self, len: u32, held_bytes: u64) -> bool {
        // tcp_measure_rcv_mss: track the peer's segment size, never above our advmss, and
        // measure the skbs' ratio whenever it changes.
        let len64 = len as u64;
        if len64 >= self.rcv_mss {
            if len64 != self.rcv_mss {
                self.measure_scaling_ratio();
            }
            self.rcv_mss = len64.min(self.advmss);
        }
        len >= TCP_GROW_MIN_LEN && self.grow(len64, held_bytes)
    }

    /// `tcp_measure_rcv_mss()` (≥ 6.6, as fixed in 6.14 and 6.6.y by "tcp: adjust rcvq_space
    /// after updating scaling ratio"): `scaling_ratio = skb->len · 256 / skb->truesize`; a new
    /// ratio resizes the clamp to the buffer (`tcp_set_window_clamp()`) and the DRS sample to
    /// the clamp.
    fn measure_scaling_ratio(&mut self) {
        let (WindowModel::ScalingRatio(old), Some(ratio)) = (self.model, self.skb_ratio) else {
            return;
        };
        if ratio == old {
            return;
        }
        self.model = WindowModel::ScalingRatio(ratio);
        self.set_window_clamp(win_from_space(self.model, self.rcvbuf));
        self.space = self.space.min(self.window_clamp);
    }

    /// `tcp_set_window_clamp()` (`net/ipv4/tcp.c`, ≥ 6.10): a smaller clamp caps
    /// `rcv_ssthresh` (`__tcp_adjust_rcv_ssthresh()`, no reserved memory here), a larger one
    /// lets it rise to the window already offered.
    fn set_window_clamp(&mut self, val: u64) {
        let clamp = val.max(SOCK_MIN_RCVBUF / 2);
        if clamp < self.window_clamp {
            self.rcv_ssthresh = self.rcv_ssthresh.min(clamp);
        } else {
            self.rcv_ssthresh = self.rcv_ssthresh.max(self.rcv_wnd.min(clamp));
        }
        self.window_clamp = clamp;
    }

    /// An out-of-order segment was queued on a SACK connection: `tcp_data_queue_ofo` grows the
    /// window too, without the size test or the `rcv_mss` update; in 6.18 it then grows the
    /// buffer to hold twice the last DRS sample and the `ofo_span` bytes from `rcv_nxt` to the
    /// end of the out-of-order queue (`tcp_rcvbuf_grow(sk, tp->rcvq_space.space)`).
    pub fn on_ofo_data(&mut self, len: u32, held_bytes: u64, ofo_span: u64) -> bool {
        let grew = self.grow(len as u64, held_bytes);
        if self.tuning == RcvBufTuning::Linux6_18 {
            self.rcvbuf_grow(self.space, ofo_span);
        }
        grew
    }

    /// `tcp_grow_window`: raise `rcv_ssthresh` by `max(2·advmss, 2·len)` (or by `2·rcv_mss`
    /// through `__tcp_grow_window` if the segment's overhead looks poor) within the room left
    /// under `min(window_clamp, tcp_space)`. Returns whether it grew: Linux then asks for one
    /// quick ACK (`icsk_ack.quick |= 1`), so a growing window is announced at once.
    fn grow(&mut self, len: u64, held: u64) -> bool {
        let room = self.window_clamp.min(self.free_space(held));
        if room <= self.rcv_ssthresh {
            return false;
        }
        let room = room - self.rcv_ssthresh;
        let truesize = space_from_win(self.model, len);
        let mut incr = if win_from_space(self.model, truesize) <= len {
            2 * self.advmss
        } else {
            self.grow_slow(truesize, len)
        };
        if incr > 0 {
            incr = incr.max(2 * len);
            self.rcv_ssthresh += room.min(incr);
        }
        incr > 0
    }

    /// `__tcp_grow_window`: allow growth while the skb's share of the buffer would still fit.
    fn grow_slow(&self, truesize: u64, len: u64) -> u64 {
        let mut truesize = win_from_space(self.model, truesize) >> 1;
        let mut window = win_from_space(self.model, self.rmem_cap) >> 1;
        while self.rcv_ssthresh <= window {
            if truesize <= len {
                return 2 * self.rcv_mss;
            }
            truesize >>= 1;
            window >>= 1;
        }
        0
    }

    /// The application copied data out: `copied_seq` = total bytes read so far, `inq` = bytes
    /// still queued in order behind them, `ofo_span` = bytes from `rcv_nxt` to the end of the
    /// out-of-order queue; `rcv_rtt` = the receiver's RTT estimate
    /// (`tcp_rcv_rtt_est`; `None` if unknown). Runs dynamic right-sizing
    /// (`tcp_rcv_space_adjust`) at most once per receiver RTT. Linux calls it after each skb a
    /// read copies, with the clock of the last segment processed, so within one read only the
    /// first skb can pass the RTT test: the caller passes that point.
    /// - 6.6–6.15: `rcvwin = 2·copied + 16·advmss`, plus `2·rcvwin·(copied − prev)/prev` for a
    ///   growing sender; `rcvbuf = min(space_from_win(rcvwin), tcp_rmem[2])`; `window_clamp`
    ///   follows.
    /// - 6.18: the sample is `copied − inq` (6.16, "tcp: add receive queue awareness in
    ///   tcp_rcv_space_adjust()"), and [`Self::rcvbuf_grow`] sizes the buffer from it.
    pub fn on_app_read(
        &mut self,
        now: Time,
        copied_seq: u64,
        inq: u64,
        ofo_span: u64,
        rcv_rtt: Option<Time>,
    ) {
        // Linux stamps rcvq_space.time at ESTABLISHED; the first read stands in for it (the
        // passive receiver's first data arrives with the handshake's last ACK).
        let since = now.saturating_sub(*self.space_time.get_or_insert(now));
        let Some(rtt) = rcv_rtt.filter(|r| *r > Time::ZERO) else {
            return;
        };
        if since < rtt {
            return;
        }
        let copied = copied_seq.saturating_sub(self.space_seq);
        if self.tuning == RcvBufTuning::Linux6_18 {
            // `copied` is an int there: more queued than read is no sample.
            let sample = copied.saturating_sub(inq);
            if sample > self.space {
                self.rcvbuf_grow(sample, ofo_span);
            }
        } else if copied > self.space {
            let prev = self.space.max(1);
            let mut rcvwin = 2 * copied + 16 * self.advmss;
            let grow = (rcvwin as u128 * (copied - self.space) as u128 / prev as u128) as u64;
            rcvwin = rcvwin.saturating_add(grow.saturating_mul(2));
            let rcvbuf = space_from_win(self.model, rcvwin).min(self.rmem_cap);
            if rcvbuf > self.rcvbuf {
                self.rcvbuf = rcvbuf;
                self.window_clamp = win_from_space(self.model, rcvbuf);
            }
            self.space = copied;
        }
        self.space_seq = copied_seq;
        self.space_time = Some(now);
    }

    /// `tcp_rcvbuf_grow()` (`net/ipv4/tcp_input.c`: 6.16's "tcp: fix sk_rcvbuf overshoot" and
    /// "tcp: adjust rcvbuf in presence of reorders", with 6.18's "tcp: fix too slow
    /// tcp_rcvbuf_grow() action"): take `newval` as the DRS sample, then size the buffer for
    /// `rcvwin = 2·newval`, plus twice `rcvwin·(newval − old)/old` for a sender that grew since
    /// the last sample ("DRS is always one RTT late"), plus the out-of-order span; never
    /// shrink it, never above `tcp_rmem[2]`, and let `window_clamp` follow. Linux computes in
    /// 32 bits; these sums stay far below that for any `tcp_rmem[2]` (an `int`).
    fn rcvbuf_grow(&mut self, newval: u64, ofo_span: u64) {
        let old = std::mem::replace(&mut self.space, newval).max(1);
        let mut rcvwin = newval << 1;
        let grow = (rcvwin as u128 * newval.saturating_sub(old) as u128 / old as u128) as u64;
        rcvwin = rcvwin.saturating_add(grow << 1).saturating_add(ofo_span);
        let rcvbuf = space_from_win(self.model, rcvwin).min(self.rmem_cap);
        if rcvbuf > self.rcvbuf {
            self.rcvbuf = rcvbuf;
            self.window_clamp = win_from_space(self.model, rcvbuf);
        }
    }

    /// The window to advertise (bytes, a multiple of `1 << wscale`), given `held_bytes` = payload
    /// the receiver holds unread (in-order and out-of-order) and `rcv_nxt` = bytes received in
    /// order so far (stream offset). `tcp_select_window`: take `__tcp_select_window`, but never
    /// move the right edge `rcv_nxt + window` left of the one already offered; cap at
    /// `65535 << wscale`.
    pub fn advertise(&mut self, held_bytes: u64, rcv_nxt: u64) -> u64 {
        let unit = 1u64 << self.wscale;
        let cur_win = (self.rcv_wup + self.rcv_wnd).saturating_sub(rcv_nxt);
        let mut new_win = self.select_window(held_bytes);
        if new_win < cur_win {
            new_win = cur_win.next_multiple_of(unit);
        }
        self.rcv_wnd = new_win;
        self.rcv_wup = rcv_nxt;
        new_win.min((u16::MAX as u64) << self.wscale) & !(unit - 1)
    }

    /// What `__tcp_select_window()` would offer now with `held` bytes unread, without offering
    /// it (`__tcp_ack_snd_check()` and `tcp_cleanup_rbuf()` compare it to the current offer).
    pub fn would_offer(&self, held: u64) -> u64 {
        self.select_window(held)
    }

    /// `tp->rcv_wup`: `rcv_nxt` when the current window was offered.
    pub fn rcv_wup(&self) -> u64 {
        self.rcv_wup
    }

    /// `__tcp_select_window` with `tcp_shrink_window = 0` (the default) and no memory pressure.
    fn select_window(&self, held: u64) -> u64 {
        let unit = 1u64 << self.wscale;
        let mut mss = self.rcv_mss;
        let mut free = self.free_space(held);
        let allowed = self.full_space();
        let full = self.window_clamp.min(allowed);
        if mss > full {
            mss = full;
            if mss == 0 {
                return 0;
            }
        }
        if free < full >> 1 {
            // Offer zero rather than a sliver the rmem limit would make us drop anyway.
            free -= free % unit;
            if free < allowed >> 4 || free < mss {
                return 0;
            }
        }
        free = free.min(self.rcv_ssthresh);
        if self.wscale > 0 {
            // Round up so a small free space is not scaled away to a zero window.
            return free.next_multiple_of(unit);
        }
        // Unscaled: keep the current offer if within one MSS of the free space, else a whole
        // number of MSS.
        let window = self.rcv_wnd;
        if window + mss <= free || window > free {
            free - free % mss
        } else if mss == full && free > window + (full >> 1) {
            free
        } else {
            window
        }
    }

    /// `tcp_space`: payload window left in `rcvbuf` after `held` bytes are charged.
    fn free_space(&self, held: u64) -> u64 {
        let charged = space_from_win(self.model, held);
        win_from_space(self.model, self.rcvbuf.saturating_sub(charged))
    }

    /// `tcp_full_space`.
    fn full_space(&self) -> u64 {
        win_from_space(self.model, self.rcvbuf)
    }

    /// `sk->sk_rcvbuf`, bytes.
    pub fn rcvbuf(&self) -> u64 {
        self.rcvbuf
    }

    /// The window model (the len/truesize ratio the window assumes).
    pub fn model(&self) -> WindowModel {
        self.model
    }

    /// `tcp_clamp_window()` (`net/ipv4/tcp_input.c`), the first step of `tcp_prune_queue()`
    /// with `rmem_alloc` ≥ `sk_rcvbuf`: the buffer grows to what is allocated, within
    /// `tcp_rmem[2]` (no memory pressure modelled), and if that is still not enough
    /// `rcv_ssthresh` falls to two segments.
    pub fn clamp_window(&mut self, rmem_alloc: u64) {
        if self.rcvbuf < self.rmem_cap {
            self.rcvbuf = self.rcvbuf.max(rmem_alloc.min(self.rmem_cap));
        }
        if rmem_alloc > self.rcvbuf {
            self.rcv_ssthresh = self.window_clamp.min(2 * self.advmss);
        }
    }

    /// `tp->window_clamp`, bytes.
    pub fn window_clamp(&self) -> u64 {
        self.window_clamp
    }

    /// `tp->rcv_ssthresh`, bytes.
    pub fn rcv_ssthresh(&self) -> u64 {
        self.rcv_ssthresh
    }

    /// `icsk_ack.rcv_mss`: the receiver's estimate of the peer's segment size, bytes.
    pub fn rcv_mss(&self) -> u64 {
        self.rcv_mss
    }

    /// Which kernel's buffer auto-tuning this receiver follows.
    pub fn tuning(&self) -> RcvBufTuning {
        self.tuning
    }

    /// `tp->rcv_wnd`: the window last offered, bytes (read-only; `advertise` changes it).
    pub fn rcv_wnd(&self) -> u64 {
        self.rcv_wnd
    }
}

/// `ilog2`, with 0 for 0 (Linux never calls it on 0 here).
fn ilog2(v: u64) -> i32 {
    if v == 0 { 0 } else { 63 - v.leading_zeros() as i32 }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;
    const MSS: u32 = 1448;

    fn cfg(rmem_max: u64, model: WindowModel) -> RcvWindowConfig {
        RcvWindowConfig {
            tcp_rmem: [4096, 131_072, rmem_max],
            rmem_max: 212_992,
            model,
            initrwnd: 0,
            advmss: MSS,
            skb_ratio: None,
            tuning: RcvBufTuning::Linux6_6,
        }
    }

    /// A sender that always fills the advertised window, each segment read at once by the
    /// application and ACKed; `rounds` RTTs. Returns the last window and the largest one seen.
    fn drive(w: &mut RcvWindow, rtt: Time, rounds: u64, seg: u64) -> (u64, u64) {
        let (mut rcv_nxt, mut snd_nxt) = (0u64, 0u64);
        let mut edge = w.initial_rcv_wnd();
        let (mut last, mut max) = (0, 0);
        for round in 0..rounds {
            let burst = edge - snd_nxt;
            let n = burst.div_ceil(seg).max(1);
            for i in 0..n {
                let len = seg.min(edge - snd_nxt);
                if len == 0 {
                    break;
                }
                snd_nxt += len;
                rcv_nxt += len;
                let now = rtt * round + rtt * i / n;
                w.on_data(len as u32, len);
                w.on_app_read(now, rcv_nxt, 0, 0, Some(rtt));
                last = w.advertise(0, rcv_nxt);
                max = max.max(last);
                assert_eq!(last % (1 << w.wscale()), 0, "window not in scale units");
                edge = edge.max(rcv_nxt + last);
            }
        }
        (last, max)
    }

    #[test]
    fn constants_match_linux() {
        assert_eq!(TCP_RMEM_TO_WIN_SCALE, 8);
        assert_eq!(TCP_MAX_WSCALE, 14);
        assert_eq!(TCP_MAX_WINDOW_BYTES, 1_073_725_440);
        assert_eq!(SYSCTL_INT_MAX, 2_147_483_647);
        assert_eq!(TCP_INIT_CWND, 10);
        assert_eq!(TCP_MSS_DEFAULT, 536);
        assert_eq!(TCP_MIN_MSS, 88);
        assert_eq!(TCP_APP_WIN, 31);
        assert_eq!(TCP_GROW_MIN_LEN, 128);
    }

    #[test]
    fn wscale_follows_largest_buffer() {
        let ws = |rmem2: u64, rmem_max: u64| {
            let mut c = cfg(rmem2, WindowModel::AdvWinScale(1));
            c.rmem_max = rmem_max;
            RcvWindow::new(&c).wscale()
        };
        assert_eq!(ws(6 * MIB, 212_992), 7);
        assert_eq!(ws(16 * MIB, 212_992), 9);
        assert_eq!(ws(1 << 30, 212_992), 14);
        // rmem_max above tcp_rmem[2] raises the scale.
        assert_eq!(ws(6 * MIB, 16 * MIB), 9);
        // Sysctls cap at INT_MAX and the scale at 14.
        assert_eq!(ws(u64::MAX, u64::MAX), TCP_MAX_WSCALE);
        // Small buffers: ilog2(212992) - 15 = 2.
        assert_eq!(ws(65_536, 212_992), 2);
    }

    #[test]
    fn setup_initial_window_from_tcp_rmem1() {
        // 131072 · ½ = 65536, rounded down to 45 · 1448 = 65160 (Linux's SYN-ACK window).
        let w = RcvWindow::new(&cfg(6 * MIB, WindowModel::AdvWinScale(1)));
        assert_eq!(w.initial_rcv_wnd(), 65_160);
        assert_eq!(w.syn_window(), 65_160);
        assert_eq!(w.rcvbuf(), 131_072);
        // tcp_init_buffer_space reserves one segment: clamp = 65536 − 1448.
        assert_eq!(w.window_clamp(), 64_088);
        assert_eq!(w.rcv_ssthresh(), 64_088);
        // With the 1460-byte MSS of an active opener: 44 · 1460 = 64240.
        let mut c = cfg(6 * MIB, WindowModel::AdvWinScale(1));
        c.advmss = 1460;
        assert_eq!(RcvWindow::new(&c).initial_rcv_wnd(), 64_240);
    }

    #[test]
    fn setup_initrwnd_bounds_but_never_raises() {
        let mut c = cfg(6 * MIB, WindowModel::AdvWinScale(1));
        c.initrwnd = 10;
        let w = RcvWindow::new(&c);
        assert_eq!(w.initial_rcv_wnd(), 14_480);
        assert_eq!(w.rcv_ssthresh(), 14_480);
        c.initrwnd = 1000;
        assert_eq!(RcvWindow::new(&c).initial_rcv_wnd(), 65_160);
    }

    #[test]
    fn setup_syn_window_field_is_unscaled() {
        let mut c = cfg(6 * MIB, WindowModel::AdvWinScale(1));
        c.tcp_rmem[1] = 4 * MIB;
        let w = RcvWindow::new(&c);
        assert!(w.initial_rcv_wnd() > 65_535);
        assert_eq!(w.syn_window(), 65_535);
    }

    #[test]
    fn model_win_from_space_both_kernels() {
        assert_eq!(TCP_DEFAULT_SCALING_RATIO, 128);
        assert_eq!(TCP_SCALING_RATIO_V6_6_0, 65);
        assert_eq!(win_from_space(WindowModel::AdvWinScale(1), 131_072), 65_536);
        assert_eq!(win_from_space(WindowModel::AdvWinScale(2), 131_072), 98_304);
        assert_eq!(win_from_space(WindowModel::AdvWinScale(0), 131_072), 131_072);
        assert_eq!(win_from_space(WindowModel::AdvWinScale(-2), 131_072), 32_768);
        assert_eq!(win_from_space(WindowModel::ScalingRatio(128), 131_072), 65_536);
        // The 6.6.0 default: a quarter of the buffer.
        assert_eq!(win_from_space(WindowModel::ScalingRatio(65), 131_072), 33_280);
        let w = RcvWindow::new(&cfg(6 * MIB, WindowModel::ScalingRatio(65)));
        assert_eq!(w.initial_rcv_wnd(), 22 * 1448);
    }

    #[test]
    fn model_space_from_win_inverts() {
        for m in [
            WindowModel::AdvWinScale(1),
            WindowModel::AdvWinScale(-1),
            WindowModel::ScalingRatio(128),
        ] {
            for w in [1u64, 1448, 65_160, 3 * MIB] {
                assert_eq!(win_from_space(m, space_from_win(m, w)), w, "{m:?} {w}");
            }
        }
        for m in [WindowModel::AdvWinScale(2), WindowModel::ScalingRatio(65)] {
            for w in [1u64, 1448, 65_160, 3 * MIB] {
                let back = win_from_space(m, space_from_win(m, w));
                assert!(back <= w && back + 1 >= w, "{m:?} {w} -> {back}");
            }
        }
    }

    #[test]
    fn established_ssthresh_grows_by_two_segments() {
        let mut c = cfg(6 * MIB, WindowModel::AdvWinScale(1));
        c.initrwnd = 10;
        let mut w = RcvWindow::new(&c);
        w.on_data(MSS, MSS as u64);
        assert_eq!(w.rcv_ssthresh(), 14_480 + 2 * 1448);
        // A short segment still earns 2·advmss; a GRO aggregate earns 2·len.
        w.on_data(500, 500);
        assert_eq!(w.rcv_ssthresh(), 14_480 + 4 * 1448);
        w.on_data(10_000, 10_000);
        assert_eq!(w.rcv_ssthresh(), 14_480 + 4 * 1448 + 20_000);
        // Under 128 bytes: no growth.
        w.on_data(100, 100);
        assert_eq!(w.rcv_ssthresh(), 14_480 + 4 * 1448 + 20_000);
        // Bounded by min(window_clamp, tcp_space).
        for _ in 0..100 {
            w.on_data(MSS, MSS as u64);
        }
        assert_eq!(w.rcv_ssthresh(), w.window_clamp());
        w.on_data(MSS, 30_000);
        assert_eq!(w.rcv_ssthresh(), w.window_clamp());
    }

    #[test]
    fn established_drs_once_per_rtt_and_capped() {
        let mut w = RcvWindow::new(&cfg(6 * MIB, WindowModel::AdvWinScale(1)));
        let rtt = Time::from_ms(8);
        w.on_app_read(Time::from_ms(100), 0, 0, 0, Some(rtt));
        // Unknown RTT: nothing happens.
        w.on_app_read(Time::from_ms(200), 100_000, 0, 0, None);
        assert_eq!(w.rcvbuf(), 131_072);
        // copied 100000 > 14480: rcvwin = 2·100000 + 16·1448 = 223168, grow = 223168·85520/14480
        // = 1318047, rcvwin += 2·grow = 2859262; rcvbuf = 2·rcvwin = 5718524.
        w.on_app_read(Time::from_ms(200), 100_000, 0, 0, Some(rtt));
        assert_eq!(w.rcvbuf(), 5_718_524);
        assert_eq!(w.window_clamp(), 2_859_262);
        // Within the same RTT: no second step.
        w.on_app_read(Time::from_ms(207), 10_000_000, 0, 0, Some(rtt));
        assert_eq!(w.rcvbuf(), 5_718_524);
        // Next RTT: capped at tcp_rmem[2].
        w.on_app_read(Time::from_ms(208), 10_000_000, 0, 0, Some(rtt));
        assert_eq!(w.rcvbuf(), 6 * MIB);
        assert_eq!(w.window_clamp(), 3 * MIB);
    }

    /// A 6.18 receiver traced here (`tcp:tcp_probe`, `tcp:tcp_rcvbuf_grow`; BBR through a 64 KB
    /// `tbf` at 1 Gbit/s, `tcp_rmem` max 32 MiB): its first full-sized skb measured a ratio of
    /// 229 and moved the clamp from 64088 to 117248; its first two DRS steps gave the buffers
    /// below, the second with 57920 bytes out of order.
    #[test]
    fn linux_6_18_receiver_follows_a_traced_kernel() {
        let mut c = cfg(32 * MIB, WindowModel::ScalingRatio(TCP_DEFAULT_SCALING_RATIO));
        c.skb_ratio = Some(229);
        c.tuning = RcvBufTuning::Linux6_18;
        let mut w = RcvWindow::new(&c);
        assert_eq!((w.window_clamp(), w.rcvbuf()), (64_088, 131_072));
        w.on_data(16, 16);
        assert_eq!(w.window_clamp(), 64_088, "a short segment measures nothing");
        w.on_data(MSS, MSS as u64);
        assert_eq!(w.window_clamp(), 117_248);
        let rtt = Time::from_us(722);
        w.on_app_read(Time::from_ms(1), 0, 0, 0, Some(rtt));
        // Read 148183, 99376 still queued: the sample is 48807 against 14480.
        w.on_app_read(Time::from_ms(5), 148_183, 99_376, 0, Some(rtt));
        assert_eq!((w.rcvbuf(), w.window_clamp()), (626_506, 560_429));
        // 603624 more read, 237472 queued: 366152 against 48807, and the out-of-order span.
        w.on_app_read(Time::from_ms(14), 148_183 + 603_624, 237_472, 57_920, Some(rtt));
        assert_eq!((w.rcvbuf(), w.window_clamp()), (11_529_122, 10_313_159));
    }

    /// 6.18 grows the buffer at out-of-order data too: to twice the last sample and the span,
    /// never shrinking it; the 6.6 model does not.
    #[test]
    fn linux_6_18_grows_the_buffer_for_out_of_order_data() {
        let mut c = cfg(32 * MIB, WindowModel::ScalingRatio(TCP_DEFAULT_SCALING_RATIO));
        let mut old = RcvWindow::new(&c);
        c.tuning = RcvBufTuning::Linux6_18;
        let mut w = RcvWindow::new(&c);
        // space 14480: rcvwin = 2·14480 + 200000 = 228960, rcvbuf = 228960·256/128.
        w.on_ofo_data(MSS, 0, 200_000);
        old.on_ofo_data(MSS, 0, 200_000);
        assert_eq!((w.rcvbuf(), w.window_clamp()), (457_920, 228_960));
        assert_eq!(old.rcvbuf(), 131_072);
        w.on_ofo_data(MSS, 0, 1_000);
        assert_eq!(w.rcvbuf(), 457_920, "never shrinks");
    }

    /// A ratio measured below the default shrinks the clamp and `rcv_ssthresh` with it
    /// (`tcp_set_window_clamp()`); the DRS sample never exceeds the clamp.
    #[test]
    fn a_smaller_measured_ratio_shrinks_the_clamp() {
        let mut c = cfg(32 * MIB, WindowModel::ScalingRatio(TCP_DEFAULT_SCALING_RATIO));
        c.skb_ratio = Some(TCP_SCALING_RATIO_V6_6_0);
        let mut w = RcvWindow::new(&c);
        w.on_data(MSS, MSS as u64);
        assert_eq!(w.window_clamp(), (131_072 * 65) >> 8);
        assert!(w.rcv_ssthresh() <= w.window_clamp());
        assert_eq!(SOCK_MIN_RCVBUF, 4608);
    }

    /// The small-`tcp_rmem` set-up of `tests/python/advise` (6.18, `tcp_rmem` 4096 8192 8192,
    /// `rmem_max` 4 MiB): the SYN-ACK offers 2,896 B (`tcp_select_initial_window()`: half of
    /// 8 KiB in whole MSS) with scale 7 (`ilog2(rmem_max) - 15`). The first full-sized skb, the
    /// sender's two segments with 1,280 B of `truesize` overhead, measures 2896·256/4176 = 177
    /// (`tcp_measure_rcv_mss()`), so the clamp becomes 5,664 B (`tcp_set_window_clamp()`);
    /// `tcp_grow_window()` raises `rcv_ssthresh` to what is free with that skb held, and once it
    /// is read `__tcp_select_window()` offers 4,224 B, rounded up to 128 B, as Linux's
    /// `snd_wnd` showed (3,840–4,480 B), not the 2,896 B of the default ratio.
    #[test]
    fn small_tcp_rmem_on_veth_offers_what_linux_offered() {
        let mut c = cfg(8192, WindowModel::ScalingRatio(TCP_DEFAULT_SCALING_RATIO));
        c.tcp_rmem = [4096, 8192, 8192];
        c.rmem_max = 4 << 20;
        c.tuning = RcvBufTuning::Linux6_18;
        let default = RcvWindow::new(&c);
        c.skb_ratio = Some(177);
        let mut w = RcvWindow::new(&c);
        assert_eq!((w.wscale(), w.initial_rcv_wnd(), w.window_clamp()), (7, 2896, 2896));
        assert_eq!(((2896u64 << 8) / (2896 + 1280)) as u8, 177);
        w.on_data(MSS, MSS as u64);
        assert_eq!(w.window_clamp(), (8192 * 177) >> 8);
        assert_eq!(w.rcv_ssthresh(), 5664 - MSS as u64);
        assert_eq!(w.advertise(0, MSS as u64), 4224);
        // With the default ratio the clamp stays at 2,896 B: 2,944 B offered.
        let mut d = default;
        d.on_data(MSS, MSS as u64);
        assert_eq!(d.advertise(0, MSS as u64), 2944);
    }

    /// GRNET (seed 003): tcp_adv_win_scale 1, 8 ms. The clamp reaches rmem/2 exactly; the
    /// advertised window stops one segment short of it because the segment being ACKed is
    /// charged when rcv_ssthresh grows (tcp_grow_window), then rounds up to the scale unit.
    #[test]
    fn established_grnet_window_reaches_half_of_rmem() {
        let rtt = Time::from_ms(8);
        for (rmem2, wscale) in [(6 * MIB, 7u8), (16 * MIB, 9)] {
            let mut w = RcvWindow::new(&cfg(rmem2, WindowModel::AdvWinScale(1)));
            assert_eq!(w.wscale(), wscale);
            let (last, max) = drive(&mut w, rtt, 30, MSS as u64);
            assert_eq!(w.rcvbuf(), rmem2);
            assert_eq!(w.window_clamp(), rmem2 / 2);
            let expect = (rmem2 / 2 - MSS as u64).next_multiple_of(1 << wscale);
            assert_eq!(last, expect);
            assert_eq!(max, expect);
            assert!(rmem2 / 2 - last < MSS as u64);
            // 3 MiB at 8 ms = 3145.728 Mbit/s; 8 MiB = 8388.608 Mbit/s.
            let mbps = w.window_clamp() as f64 * 8.0 / rtt.as_secs_f64() / 1e6;
            let want = if rmem2 == 6 * MIB { 3145.728 } else { 8388.608 };
            assert!((mbps - want).abs() < 1e-6, "{mbps}");
        }
    }

    #[test]
    fn established_window_never_exceeds_wscale_ceiling() {
        let rtt = Time::from_ms(209);
        // 1 GiB tcp_rmem[2] with adv_win_scale 1: half of it, under the ceiling.
        let mut w = RcvWindow::new(&cfg(1 << 30, WindowModel::AdvWinScale(1)));
        let (last, max) = drive(&mut w, rtt, 40, 65_536);
        assert!(max <= TCP_MAX_WINDOW_BYTES);
        assert_eq!(w.window_clamp(), 1 << 29);
        assert!(last > (1 << 29) - 2 * 65_536);
        // A big buffer and ratio: the clamp passes the ceiling, the header cap holds.
        let mut c = cfg(u64::MAX, WindowModel::ScalingRatio(255));
        c.rmem_max = u64::MAX;
        let mut w = RcvWindow::new(&c);
        let (last, max) = drive(&mut w, rtt, 40, 65_536);
        assert!(w.window_clamp() > TCP_MAX_WINDOW_BYTES);
        assert_eq!(max, TCP_MAX_WINDOW_BYTES);
        assert_eq!(last, 1_073_725_440);
    }

    #[test]
    fn established_held_bytes_shrink_the_offer() {
        let fresh = RcvWindow::new(&cfg(6 * MIB, WindowModel::AdvWinScale(1)));
        // The sender filled the SYN window: nothing left of the old offer.
        let n = fresh.initial_rcv_wnd();
        // All read: min(65536, rcv_ssthresh 64088) rounded up to 128.
        assert_eq!(fresh.clone().advertise(0, n), 64_128);
        // 20000 unread: 65536 − 20000 = 45536 → 45568.
        assert_eq!(fresh.clone().advertise(20_000, n), 45_568);
        // Nothing read: 376 B free is under rcvbuf/16 → zero window.
        assert_eq!(fresh.clone().advertise(n, n), 0);
    }

    #[test]
    fn established_right_edge_never_recedes() {
        let mut w = RcvWindow::new(&cfg(6 * MIB, WindowModel::AdvWinScale(1)));
        let mut rcv_nxt = 0u64;
        let mut edge = w.initial_rcv_wnd();
        let mut acks = 0;
        // The application never reads; the sender fills every offer.
        while rcv_nxt < edge {
            let len = (MSS as u64).min(edge - rcv_nxt);
            rcv_nxt += len;
            w.on_data(len as u32, rcv_nxt);
            let win = w.advertise(rcv_nxt, rcv_nxt);
            acks += 1;
            assert!(rcv_nxt + win >= edge, "edge moved left at {rcv_nxt}");
            edge = edge.max(rcv_nxt + win);
        }
        // The buffer is full and the window closed. Keeping an old edge rounds it up to the
        // scale unit, so the edge may creep past the 64 KiB the buffer holds by < 128 B per ACK.
        assert_eq!(w.advertise(rcv_nxt, rcv_nxt), 0);
        assert!(rcv_nxt > 65_536 && rcv_nxt < 65_536 + acks * 128, "{rcv_nxt} after {acks}");
    }

    #[test]
    fn established_unscaled_window_keeps_mss_multiples() {
        let mut c = cfg(65_536, WindowModel::AdvWinScale(1));
        c.rmem_max = 65_536;
        let mut w = RcvWindow::new(&c);
        assert_eq!(w.wscale(), 1);
        c.tcp_rmem = [4096, 65_536, 65_535];
        c.rmem_max = 0;
        let mut w0 = RcvWindow::new(&c);
        assert_eq!(w0.wscale(), 0);
        w0.on_data(MSS, MSS as u64);
        // free = 32768 − 1448 = 31320; the SYN offer 31856 exceeds it → 21 · 1448 = 30408.
        assert_eq!(w0.advertise(MSS as u64, MSS as u64), 30_408);
        // Scaled by 2: min(free 65536, rcv_ssthresh 64088), already even, no MSS rounding.
        w.on_data(MSS, MSS as u64);
        assert_eq!(w.advertise(0, MSS as u64), 64_088);
    }
}
