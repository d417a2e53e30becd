//! CUBIC as Linux runs it (`net/ipv4/tcp_cubic.c`). Being written; until then it runs Reno.

use super::{CongestionOps, Sock, reno_cong_avoid, reno_undo_cwnd};

#[derive(Clone, Debug, Default)]
pub struct Cubic;

impl CongestionOps for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }
    fn ssthresh(&mut self, tp: &Sock) -> u32 {
        (tp.snd_cwnd * 717 / 1024).max(2)
    }
    fn cong_avoid(&mut self, tp: &mut Sock, acked: u32) {
        reno_cong_avoid(tp, acked)
    }
    fn undo_cwnd(&mut self, tp: &Sock) -> u32 {
        reno_undo_cwnd(tp)
    }
}
