//! The ACK-aggregation estimate shared by BBR v1 and v3 (`bbr_update_ack_aggregation()`,
//! `bbr_ack_aggregation_cwnd()` in `tcp_bbr.c`): how many packets arrive acked beyond what the
//! bandwidth estimate explains since an "ACK epoch" began, max-filtered over a window of
//! rounds, so cwnd leaves room for receivers and NICs that ACK in batches.

use super::{
    BBR_ACK_EPOCH_ACKED_RESET_THRESH, BBR_EXTRA_ACKED_GAIN, BBR_EXTRA_ACKED_MAX_US, BBR_SCALE,
    BW_UNIT,
};

#[derive(Clone, Debug, Default)]
pub struct AckAggregation {
    /// µs (`ack_epoch_mstamp`).
    epoch_mstamp: u64,
    /// Packets acked in this epoch (`ack_epoch_acked`, 20 bits).
    epoch_acked: u32,
    /// Max extra acked per window slot (`extra_acked[2]`, u16 as in Linux).
    pub(crate) extra_acked: [u16; 2],
    /// Rounds into the current slot (`extra_acked_win_rtts`, 5 bits).
    win_rtts: u32,
    /// The current slot (`extra_acked_win_idx`).
    pub(crate) win_idx: usize,
}

impl AckAggregation {
    /// Start a new epoch at `now_us` (connection start, idle restart).
    pub fn restart(&mut self, now_us: u64) {
        self.epoch_mstamp = now_us;
        self.epoch_acked = 0;
    }

    /// One ACK that (S)ACKed `acked` packets at `delivered_mstamp` (µs), with bandwidth `bw`
    /// (packets/µs × `BW_UNIT`); the slot rotates every `win_rtts` rounds (v1: 5; v3: 1 before
    /// the pipe is full).
    pub fn update(
        &mut self,
        round_start: bool,
        win_rtts: u32,
        delivered_mstamp: u64,
        bw: u32,
        acked: u32,
        cwnd: u32,
    ) {
        if round_start {
            self.win_rtts = (self.win_rtts + 1).min(0x1f);
            if self.win_rtts >= win_rtts {
                self.win_rtts = 0;
                self.win_idx ^= 1;
                self.extra_acked[self.win_idx] = 0;
            }
        }
        let epoch_us = delivered_mstamp.saturating_sub(self.epoch_mstamp).min(u32::MAX as u64);
        let mut expected = (bw as u64 * epoch_us / BW_UNIT) as u32;
        // ACKs slower than bw, or a very old epoch: start a new epoch.
        if self.epoch_acked <= expected
            || self.epoch_acked + acked >= BBR_ACK_EPOCH_ACKED_RESET_THRESH
        {
            self.epoch_acked = 0;
            self.epoch_mstamp = delivered_mstamp;
            expected = 0;
        }
        self.epoch_acked = (self.epoch_acked + acked).min(0xfffff);
        let extra = (self.epoch_acked - expected).min(cwnd);
        let slot = &mut self.extra_acked[self.win_idx];
        if extra > *slot as u32 {
            *slot = extra as u16; // truncated to the u16 slot, as in Linux
        }
    }

    /// The extra cwnd: the windowed max, at most `BBR_EXTRA_ACKED_MAX_US` of bandwidth.
    pub fn cwnd(&self, bw: u32) -> u32 {
        let max_aggr = (bw as u64 * BBR_EXTRA_ACKED_MAX_US / BW_UNIT) as u32;
        let extra = self.extra_acked[0].max(self.extra_acked[1]) as u32;
        ((BBR_EXTRA_ACKED_GAIN * extra) >> BBR_SCALE).min(max_aggr)
    }
}
