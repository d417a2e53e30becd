//! Reno as Linux runs it: `tcp_reno_congestion_ops` in `net/ipv4/tcp_cong.c`.
//!
//! Slow start adds every newly acked packet; congestion avoidance adds one packet per cwnd of
//! acked packets; a loss halves cwnd (at least 2). Loss recovery itself (SACK, RACK, PRR) is
//! in the TCP core, as in Linux, not RFC 6582 NewReno.

use super::{CongestionOps, Sock, reno_cong_avoid, reno_ssthresh, reno_undo_cwnd};

#[derive(Clone, Debug, Default)]
pub struct Reno;

impl CongestionOps for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }
    fn ssthresh(&mut self, tp: &Sock) -> u32 {
        reno_ssthresh(tp)
    }
    fn cong_avoid(&mut self, tp: &mut Sock, acked: u32) {
        reno_cong_avoid(tp, acked)
    }
    fn undo_cwnd(&mut self, tp: &Sock) -> u32 {
        reno_undo_cwnd(tp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_packet_per_rtt_in_congestion_avoidance() {
        let mut tp = Sock::new(8948, 100, 250);
        tp.snd_ssthresh = 100;
        tp.is_cwnd_limited = true;
        let mut r = Reno;
        // One RTT's worth of ACKs, one packet each.
        for _ in 0..100 {
            r.cong_avoid(&mut tp, 1);
        }
        assert_eq!(tp.snd_cwnd, 101);
    }

    #[test]
    fn loss_halves() {
        let mut tp = Sock::new(8948, 1000, 250);
        assert_eq!(Reno.ssthresh(&tp), 500);
        tp.prior_cwnd = 1000;
        tp.snd_cwnd = 500;
        assert_eq!(Reno.undo_cwnd(&tp), 1000);
    }
}
