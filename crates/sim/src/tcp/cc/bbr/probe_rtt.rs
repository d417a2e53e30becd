//! The PROBE_RTT hold shared by BBR v1 and v3 (`bbr_update_min_rtt()`,
//! `bbr_check_probe_rtt_done()` in `tcp_bbr.c`): once inflight has drained to the mode's target,
//! stay for `BBR_PROBE_RTT_MODE_MS` and at least one packet-timed round.

use super::BBR_PROBE_RTT_MODE_MS;
use crate::tcp::cc::{after, msecs_to_jiffies};

#[derive(Clone, Debug, Default)]
pub struct ProbeRttHold {
    /// End of the hold, jiffies; 0 = inflight has not reached the target yet
    /// (`probe_rtt_done_stamp`).
    pub(crate) done_stamp: u32,
    /// A round has ended since the hold began (`probe_rtt_round_done`).
    round_done: bool,
}

/// What one ACK in PROBE_RTT means for the hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hold {
    /// Inflight just reached the target: the hold starts; the caller starts a new round.
    Started,
    Waiting,
    /// A round has passed: the caller checks whether the hold time is up.
    RoundDone,
}

impl ProbeRttHold {
    /// Entering PROBE_RTT: the hold waits for inflight to drain.
    pub fn reset(&mut self) {
        self.done_stamp = 0;
    }

    /// One ACK in PROBE_RTT at jiffies `now`.
    pub fn on_ack(
        &mut self,
        now: u32,
        hz: u32,
        in_flight: u32,
        target: u32,
        round_start: bool,
    ) -> Hold {
        if self.done_stamp == 0 && in_flight <= target {
            self.done_stamp = now.wrapping_add(msecs_to_jiffies(BBR_PROBE_RTT_MODE_MS, hz));
            self.round_done = false;
            return Hold::Started;
        }
        if self.done_stamp == 0 {
            return Hold::Waiting;
        }
        self.round_done |= round_start;
        if self.round_done { Hold::RoundDone } else { Hold::Waiting }
    }

    /// The hold time has passed (`bbr_check_probe_rtt_done()`'s condition).
    pub fn expired(&self, now: u32) -> bool {
        self.done_stamp != 0 && after(now, self.done_stamp)
    }
}
