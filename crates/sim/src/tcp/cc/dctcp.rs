//! DCTCP, sender side, as Linux runs it: `net/ipv4/tcp_dctcp.c` (mainline, read at
//! Kingxukai/linux @ 9b44fff655e2). Algorithm: Alizadeh et al., "Data Center TCP (DCTCP)",
//! SIGCOMM 2010; RFC 8257 (Informational).
//!
//! Switches mark CE above a queue threshold; the receiver echoes each CE state change at once
//! (ECE mirrors CE, no RFC 3168 latching). The sender keeps α, an EWMA of the fraction of
//! delivered packets that came back with ECE, updated once per window of data:
//! `α ← (1 − g)·α + g·F`, g = 1/16, α in 1/1024. On ECE (the CWR reduction, once per window,
//! run by the TCP core) ssthresh = `cwnd·(1 − α/2)`. On loss it halves like Reno (RFC 8257
//! §3.5; Linux ≥ 5.1 `dctcp_react_to_loss`). Growth is Reno's.
//!
//! Where Linux differs from RFC 8257 (we follow Linux): F counts **packets** (`delivered`,
//! `delivered_ce`), not bytes; the decay `α −= min_not_zero(α, α >> g)` lets α reach exactly 0
//! (below 16 it drops to 0 in one step); ssthresh takes the reduction from `(cwnd·α) >> 11`,
//! rounding the cut down, at least 2.
//!
//! Without ECN negotiated, `dctcp_init` swaps in the `dctcp_reno` ops table: pure Reno (Reno
//! ssthresh and undo, no α, no loss hook), reported as `"dctcp-reno"`.
//!
//! Not here: the receiver's CE state machine (`dctcp_ece_ack_update` in `tcp_dctcp.h`, driven by
//! `CA_EVENT_ECN_IS_CE`/`CA_EVENT_ECN_NO_CE`) belongs to the TCP core's receiver. Protective Load
//! Balancing (`tcp_plb_*`, off by default: `sysctl_tcp_plb_enabled = 0`) is not modelled.
//!
//! Where we differ from Linux (docs/fidelity.md):
//! - `cwnd·α` is computed in 64 bits; Linux's u32 product wraps above 4 Mi packets of cwnd,
//!   which no flow reaches (the 1 GiB window cap is < 2 Mi packets even at MSS 536).
//! - The window end compares 64-bit sequence numbers (`snd_una ≥ next_seq`) where Linux uses the
//!   32-bit serial `!before()`: the same outside sequence wrap, which we never have.

use super::{
    CaEvent, CaState, CongestionOps, Sock, reno_cong_avoid, reno_ssthresh, reno_undo_cwnd,
};

/// `DCTCP_MAX_ALPHA` (`tcp_dctcp.c`): α is in units of 1/1024, so 1024 = 1.0.
pub const DCTCP_MAX_ALPHA: u32 = 1024;

/// `dctcp_shift_g_set()` (`tcp_dctcp.c`): the module refuses `dctcp_shift_g` above 10, since the
/// update shifts marks by `10 − g`.
pub const MAX_SHIFT_G: u32 = 10;

/// `dctcp_ssthresh()` (`tcp_dctcp.c`): the cut is `(cwnd·α) >> 11`, i.e. `cwnd·α/2` with α in
/// 1/1024 (RFC 8257 §3.3: `cwnd·(1 − α/2)`).
pub const SSTHRESH_ALPHA_SHIFT: u32 = 11;

/// The module parameters of `tcp_dctcp.c` (same names, same defaults).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Params {
    /// `dctcp_shift_g = 4`: EWMA gain g = 1/2^4 = 1/16, the gain RFC 8257 recommends.
    /// At most [`MAX_SHIFT_G`]. A flow's `dctcp_shift_g` key sets it (`cc::for_flow`); the
    /// S-ECN paper (Shan et al., ICNP 2018 §IV-D) runs g = 0.125, shift 3.
    pub shift_g: u32,
    /// `dctcp_alpha_on_init = 1024` (`DCTCP_MAX_ALPHA`): α starts at 1.0, so the first marks
    /// halve the window (RFC 8257 §3.3: "initialized to 1"). Values above 1024 act as 1024.
    /// A flow's `dctcp_alpha_on_init` key sets it; 0 is the out-of-tree patch for 2.6.38.3
    /// (myasuda/DCTCP-Linux `dctcp-2.6.38.3-rev1.1.0.patch`), whose `tp->dctcp_alpha` is a new
    /// `tcp_sock` field no code sets before the first window's update, so it starts zeroed.
    pub alpha_on_init: u32,
}

impl Default for Params {
    fn default() -> Params {
        Params { shift_g: 4, alpha_on_init: DCTCP_MAX_ALPHA }
    }
}

/// Per-connection state (`struct dctcp`, less the receiver's `ce_state`/`prior_rcv_nxt` and PLB).
#[derive(Clone, Debug)]
pub struct Dctcp {
    params: Params,
    /// `dctcp_alpha`, 1/1024.
    alpha: u32,
    /// `next_seq`: the observation window ends when `snd_una` reaches it.
    next_seq: u64,
    /// `old_delivered`, `old_delivered_ce`: the counters when the window began.
    old_delivered: u64,
    old_delivered_ce: u64,
    /// `loss_cwnd`: cwnd at the last reduction, for undo.
    loss_cwnd: u32,
    /// `dctcp_init` installed the `dctcp_reno` table: no ECN on this connection.
    reno_fallback: bool,
}

impl Default for Dctcp {
    fn default() -> Dctcp {
        Dctcp::new(Params::default())
    }
}

impl Dctcp {
    /// Panics if `shift_g` exceeds [`MAX_SHIFT_G`] (Linux refuses the setting).
    pub fn new(params: Params) -> Dctcp {
        assert!(params.shift_g <= MAX_SHIFT_G, "dctcp shift_g {} > {MAX_SHIFT_G}", params.shift_g);
        Dctcp {
            alpha: params.alpha_on_init.min(DCTCP_MAX_ALPHA),
            params,
            next_seq: 0,
            old_delivered: 0,
            old_delivered_ce: 0,
            loss_cwnd: 0,
            reno_fallback: false,
        }
    }

    /// α in 1/1024 (`dctcp_alpha` of `INET_DIAG_DCTCPINFO`).
    pub fn alpha(&self) -> u32 {
        self.alpha
    }

    /// `dctcp_enabled` of `INET_DIAG_DCTCPINFO`: false once `init` fell back to Reno.
    pub fn enabled(&self) -> bool {
        !self.reno_fallback
    }

    /// `TCP_CONG_NEEDS_ECN`: the `dctcp` table asks for ECN whatever the host's `tcp_ecn`
    /// sysctl says (ECN in the SYN, ECT on data); `dctcp_reno` does not (`INET_ECN_dontxmit`).
    pub fn needs_ecn(&self) -> bool {
        !self.reno_fallback
    }

    /// `dctcp_reset()`: start a new observation window at what has been sent so far.
    fn reset_window(&mut self, tp: &Sock) {
        self.next_seq = tp.snd_nxt;
        self.old_delivered = tp.delivered;
        self.old_delivered_ce = tp.delivered_ce;
    }

    /// `dctcp_update_alpha()`: once `snd_una` passes the window end, fold the window's marked
    /// fraction into α. Linux's u32 arithmetic: the decay is `min_not_zero(α, α >> g)`, so an α
    /// below 2^g (where `α >> g` = 0) drops to 0 rather than sticking.
    fn update_alpha(&mut self, tp: &Sock) {
        if tp.snd_una < self.next_seq {
            return;
        }
        let delivered = tp.delivered.wrapping_sub(self.old_delivered) as u32;
        let mut delivered_ce = tp.delivered_ce.wrapping_sub(self.old_delivered_ce) as u32;
        let g = self.params.shift_g;
        let decay = self.alpha >> g;
        let mut alpha = self.alpha - if decay == 0 { self.alpha } else { decay };
        if delivered_ce > 0 {
            // F·2^10·g = delivered_ce·2^(10 − g)/delivered.
            delivered_ce <<= MAX_SHIFT_G - g;
            delivered_ce /= delivered.max(1);
            alpha = (alpha + delivered_ce).min(DCTCP_MAX_ALPHA);
        }
        self.alpha = alpha;
        self.reset_window(tp);
    }

    /// `dctcp_react_to_loss()`: a loss halves ssthresh like Reno, whatever α is.
    fn react_to_loss(&mut self, tp: &mut Sock) {
        self.loss_cwnd = tp.snd_cwnd;
        tp.snd_ssthresh = (tp.snd_cwnd >> 1).max(2);
    }
}

impl CongestionOps for Dctcp {
    fn needs_ecn(&self) -> bool {
        Dctcp::needs_ecn(self)
    }

    fn name(&self) -> &'static str {
        if self.reno_fallback { "dctcp-reno" } else { "dctcp" }
    }

    /// `dctcp_ssthresh()`: `max(cwnd − (cwnd·α >> 11), 2)`; remembers cwnd for undo.
    fn ssthresh(&mut self, tp: &Sock) -> u32 {
        if self.reno_fallback {
            return reno_ssthresh(tp);
        }
        self.loss_cwnd = tp.snd_cwnd;
        let cut = (tp.snd_cwnd as u64 * self.alpha as u64) >> SSTHRESH_ALPHA_SHIFT;
        (tp.snd_cwnd - cut as u32).max(2)
    }

    /// `tcp_reno_cong_avoid`, in both tables.
    fn cong_avoid(&mut self, tp: &mut Sock, acked: u32) {
        reno_cong_avoid(tp, acked)
    }

    /// `dctcp_state()`: entering Recovery (not re-entering) is a loss: halve. RTOs come through
    /// `CA_EVENT_LOSS` instead, so one RTO reduces once.
    fn set_state(&mut self, tp: &mut Sock, new_state: CaState) {
        if !self.reno_fallback && new_state == CaState::Recovery && tp.ca_state != CaState::Recovery
        {
            self.react_to_loss(tp);
        }
    }

    /// `dctcp_cwnd_event()`, sender part: an RTO halves. `EcnIsCe`/`EcnNoCe` drive the
    /// receiver's state machine (TCP core); `TxStart` only feeds PLB (not modelled).
    fn cwnd_event(&mut self, tp: &mut Sock, ev: CaEvent) {
        if !self.reno_fallback && ev == CaEvent::Loss {
            self.react_to_loss(tp);
        }
    }

    /// `dctcp_update_alpha()` (the `in_ack_event` hook; the ACK flags are not read).
    fn in_ack_event(&mut self, tp: &mut Sock, _flags: u32) {
        if !self.reno_fallback {
            self.update_alpha(tp);
        }
    }

    /// `dctcp_cwnd_undo()`: back to cwnd at the reduction (`loss_cwnd`, not `prior_cwnd`).
    fn undo_cwnd(&mut self, tp: &Sock) -> u32 {
        if self.reno_fallback {
            return reno_undo_cwnd(tp);
        }
        tp.snd_cwnd.max(self.loss_cwnd)
    }

    /// `dctcp_init()`: with ECN, α = `alpha_on_init` and the first window ends at `snd_nxt`;
    /// without, fall back to the `dctcp_reno` table.
    fn init(&mut self, tp: &mut Sock) {
        if !tp.ecn_ok {
            self.reno_fallback = true;
            return;
        }
        self.reno_fallback = false;
        self.alpha = self.params.alpha_on_init.min(DCTCP_MAX_ALPHA);
        self.loss_cwnd = 0;
        self.reset_window(tp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::cc::reno::Reno;

    const MSS: u32 = 1448;

    fn ecn_sock(cwnd: u32) -> Sock {
        let mut tp = Sock::new(MSS, cwnd, 1000);
        tp.ecn_ok = true;
        tp
    }

    fn started(params: Params, tp: &mut Sock) -> Dctcp {
        let mut cc = Dctcp::new(params);
        cc.init(tp);
        cc
    }

    fn with_alpha(alpha: u32, tp: &mut Sock) -> Dctcp {
        started(Params { alpha_on_init: alpha, ..Params::default() }, tp)
    }

    /// One ACK-clocked packet: the ACK delivers the oldest packet (with ECE if `ce`), runs
    /// `in_ack_event`, then the freed slot sends a new packet (Linux sends after the hook).
    fn ack_one(cc: &mut Dctcp, tp: &mut Sock, ce: bool) {
        tp.snd_una += MSS as u64;
        tp.delivered += 1;
        tp.delivered_ce += ce as u64;
        cc.in_ack_event(tp, 0);
        tp.snd_nxt += MSS as u64;
    }

    #[test]
    fn constants_are_linux_values() {
        assert_eq!(DCTCP_MAX_ALPHA, 1024);
        assert_eq!(MAX_SHIFT_G, 10);
        assert_eq!(SSTHRESH_ALPHA_SHIFT, 11);
        assert_eq!(Params::default(), Params { shift_g: 4, alpha_on_init: 1024 });
        assert_eq!(Dctcp::default().name(), "dctcp");
    }

    #[test]
    fn init_alpha_starts_at_one_and_clamps() {
        let mut tp = ecn_sock(10);
        assert_eq!(started(Params::default(), &mut tp).alpha(), 1024);
        assert_eq!(with_alpha(5000, &mut tp).alpha(), 1024);
        assert_eq!(with_alpha(300, &mut tp).alpha(), 300);
    }

    #[test]
    #[should_panic(expected = "shift_g")]
    fn params_shift_g_above_ten_is_refused() {
        Dctcp::new(Params { shift_g: 11, ..Params::default() });
    }

    /// An ACK that brings the totals to `pkts` delivered (all cumulatively acked), `ce` marked.
    fn ack_up_to(cc: &mut Dctcp, tp: &mut Sock, pkts: u64, ce: u64) -> u32 {
        tp.snd_una = pkts * MSS as u64;
        tp.delivered = pkts;
        tp.delivered_ce = ce;
        cc.in_ack_event(tp, 0);
        cc.alpha()
    }

    #[test]
    fn window_ewma_step_is_one_sixteenth() {
        let mut tp = ecn_sock(100);
        tp.snd_nxt = 100 * MSS as u64;
        let mut cc = started(Params::default(), &mut tp);
        // 99 of 100 packets acked, 30 of them marked: the window is still open.
        assert_eq!(ack_up_to(&mut cc, &mut tp, 99, 30), 1024);
        // The 100th closes it: 1024 − 1024/16 + (30·64)/100 = 960 + 19 = 979.
        tp.snd_nxt = 180 * MSS as u64;
        assert_eq!(ack_up_to(&mut cc, &mut tp, 100, 30), 979);
        // The next window ends at what was sent when this one closed, and counts from there:
        // 80 of 80 marked gives 979 − 61 + (80·64)/80 = 918 + 64 = 982.
        assert_eq!(ack_up_to(&mut cc, &mut tp, 179, 110), 979);
        assert_eq!(ack_up_to(&mut cc, &mut tp, 180, 110), 982);
    }

    /// The module parameters `cc::for_flow` hands a flow whose spec `set` changed.
    fn flow_params(set: impl FnOnce(&mut crate::tcp::config::FlowSpec)) -> Params {
        let mut spec = crate::tcp::config::FlowSpec::linux_default("dctcp");
        set(&mut spec);
        let Some(super::super::AnyCc::Dctcp(d)) = super::super::for_flow(&spec) else {
            panic!("not dctcp")
        };
        d.params
    }

    #[test]
    fn a_flows_shift_g_sets_the_ewma_step() {
        let mut tp = ecn_sock(100);
        tp.snd_nxt = 100 * MSS as u64;
        let mut cc = started(flow_params(|s| s.dctcp_shift_g = 3), &mut tp);
        // g = 1/8: 1024 − 1024/8 + (30·128)/100 = 896 + 38 = 934.
        assert_eq!(ack_up_to(&mut cc, &mut tp, 100, 30), 934);
    }

    #[test]
    fn a_flows_alpha_on_init_of_zero_cuts_nothing_on_the_first_marks() {
        let mut tp = ecn_sock(40);
        let mut cc = started(flow_params(|s| s.dctcp_alpha_on_init = 0), &mut tp);
        assert_eq!(cc.alpha(), 0);
        // ECE before the first window closes: ssthresh = cwnd − (cwnd·0 >> 11), no cut at all,
        // where the default α = 1 halves (40 → 20).
        assert_eq!(cc.ssthresh(&tp), 40);
        assert_eq!(started(Params::default(), &mut ecn_sock(40)).ssthresh(&tp), 20);
    }

    #[test]
    fn window_without_deliveries_only_decays() {
        let mut tp = ecn_sock(10);
        let mut cc = with_alpha(512, &mut tp);
        // Nothing sent at init: the first ACK ends the (empty) window.
        cc.in_ack_event(&mut tp, 0);
        assert_eq!(cc.alpha(), 512 - 32);
    }

    #[test]
    fn steady_marking_alpha_converges_to_marked_fraction() {
        // N packets per window, marks spread so any N consecutive packets hold F·N of them.
        const N: u64 = 100;
        for (marked, from) in [(10, 1024), (30, 1024), (100, 0), (0, 1024), (30, 0)] {
            let mut tp = ecn_sock(N as u32 + 1);
            tp.snd_nxt = (N + 1) * MSS as u64;
            let mut cc = with_alpha(from, &mut tp);
            for k in 0..200 * N {
                ack_one(&mut cc, &mut tp, k % N < marked);
            }
            let f = marked as f64 / N as f64;
            let a = cc.alpha() as f64 / 1024.0;
            // Integer α stops within one 2^g/1024 step (1.6 %) of F.
            assert!((a - f).abs() <= 0.02, "F = {f}, from {from}: alpha = {a}");
        }
    }

    #[test]
    fn unmarked_alpha_decays_to_exactly_zero() {
        let mut tp = ecn_sock(10);
        let mut cc = started(Params::default(), &mut tp);
        let mut prev = cc.alpha();
        let mut windows = 0;
        while cc.alpha() > 0 {
            ack_one(&mut cc, &mut tp, false);
            assert!(cc.alpha() <= prev);
            prev = cc.alpha();
            windows += 1;
            assert!(windows < 200, "alpha stuck at {}", cc.alpha());
        }
        // `α −= α >> 4` (the floored decrement decays slower than ×15/16's ≈ 64 windows) takes
        // 1024 below 16 in 74 windows; the 75th drops it to 0 through `min_not_zero`, where the
        // plain decrement would stick at 15.
        assert_eq!(windows, 75);
    }

    #[test]
    fn ssthresh_cuts_by_half_alpha() {
        let mut tp = ecn_sock(100);
        assert_eq!(with_alpha(0, &mut tp).ssthresh(&tp), 100);
        assert_eq!(with_alpha(1024, &mut tp).ssthresh(&tp), 50);
        assert_eq!(with_alpha(512, &mut tp).ssthresh(&tp), 75);
        // The cut rounds down: 101 − (101·1024 >> 11) = 101 − 50 = 51 (Reno gives 50).
        tp.snd_cwnd = 101;
        assert_eq!(with_alpha(1024, &mut tp).ssthresh(&tp), 51);
        tp.snd_cwnd = 3;
        assert_eq!(with_alpha(1024, &mut tp).ssthresh(&tp), 2);
    }

    #[test]
    fn loss_halves_even_when_alpha_is_zero() {
        // Fast recovery, as `tcp_enter_recovery` runs it: ssthresh hook, then set_state.
        let mut tp = ecn_sock(100);
        let mut cc = with_alpha(0, &mut tp);
        tp.snd_ssthresh = cc.ssthresh(&tp);
        assert_eq!(tp.snd_ssthresh, 100);
        cc.set_state(&mut tp, CaState::Recovery);
        tp.ca_state = CaState::Recovery;
        assert_eq!(tp.snd_ssthresh, 50);
        // Already in Recovery: no second halving.
        tp.snd_cwnd = 60;
        cc.set_state(&mut tp, CaState::Recovery);
        assert_eq!(tp.snd_ssthresh, 50);
        // CWR (the ECN response) is not a loss.
        tp.ca_state = CaState::Open;
        tp.snd_ssthresh = 77;
        cc.set_state(&mut tp, CaState::Cwr);
        assert_eq!(tp.snd_ssthresh, 77);

        // RTO, as `tcp_enter_loss` runs it: ssthresh hook, then CA_EVENT_LOSS.
        let mut tp = ecn_sock(100);
        let mut cc = with_alpha(0, &mut tp);
        tp.snd_ssthresh = cc.ssthresh(&tp);
        cc.cwnd_event(&mut tp, CaEvent::Loss);
        assert_eq!(tp.snd_ssthresh, 50);
        for ev in [CaEvent::TxStart, CaEvent::CwndRestart, CaEvent::CompleteCwr, CaEvent::EcnIsCe] {
            tp.snd_cwnd = 10;
            cc.cwnd_event(&mut tp, ev);
            assert_eq!(tp.snd_ssthresh, 50, "{ev:?}");
        }
    }

    #[test]
    fn undo_restores_cwnd_at_the_reduction() {
        let mut tp = ecn_sock(100);
        let mut cc = with_alpha(1024, &mut tp);
        tp.prior_cwnd = 7; // DCTCP keeps its own loss_cwnd
        tp.snd_ssthresh = cc.ssthresh(&tp);
        tp.snd_cwnd = tp.snd_ssthresh;
        assert_eq!(cc.undo_cwnd(&tp), 100);
        tp.snd_cwnd = 120;
        assert_eq!(cc.undo_cwnd(&tp), 120);
        // The loss path records cwnd too.
        tp.snd_cwnd = 80;
        cc.cwnd_event(&mut tp, CaEvent::Loss);
        tp.snd_cwnd = 1;
        assert_eq!(cc.undo_cwnd(&tp), 80);
    }

    #[test]
    fn cong_avoid_is_reno() {
        let mut tp = ecn_sock(100);
        tp.snd_ssthresh = 100;
        tp.is_cwnd_limited = true;
        let mut cc = started(Params::default(), &mut tp);
        for _ in 0..100 {
            cc.cong_avoid(&mut tp, 1);
        }
        assert_eq!(tp.snd_cwnd, 101);
    }

    #[test]
    fn without_ecn_it_is_reno() {
        let mut a = Sock::new(MSS, 101, 1000);
        let mut cc = Dctcp::default();
        cc.init(&mut a);
        assert_eq!((cc.name(), cc.enabled(), cc.needs_ecn()), ("dctcp-reno", false, false));
        let mut b = a.clone();
        let mut reno = Reno;
        a.is_cwnd_limited = true;
        b.is_cwnd_limited = true;
        // The same ACKs, losses and undos through both; the sockets must stay equal.
        for step in 0..400u32 {
            for (cc, tp) in [(&mut cc as &mut dyn CongestionOps, &mut a), (&mut reno, &mut b)] {
                tp.snd_una += MSS as u64;
                tp.delivered += 1;
                cc.in_ack_event(tp, 0);
                cc.cong_avoid(tp, 1);
                if step % 97 == 0 {
                    tp.prior_cwnd = tp.snd_cwnd;
                    tp.snd_ssthresh = cc.ssthresh(tp);
                    cc.set_state(tp, CaState::Recovery);
                    cc.cwnd_event(tp, CaEvent::Loss);
                    tp.snd_cwnd = tp.snd_ssthresh;
                }
                if step % 131 == 0 {
                    tp.snd_cwnd = cc.undo_cwnd(tp);
                }
            }
            assert_eq!(
                (a.snd_cwnd, a.snd_ssthresh, a.snd_cwnd_cnt),
                (b.snd_cwnd, b.snd_ssthresh, b.snd_cwnd_cnt),
                "step {step}"
            );
        }
        // 400 unmarked windows would have taken α to 0: no α is kept.
        assert_eq!(cc.alpha(), 1024);
        // Reno halves 101 to 50 where DCTCP at α = 1 gives 51.
        a.snd_cwnd = 101;
        assert_eq!(cc.ssthresh(&a), 50);
    }
}
