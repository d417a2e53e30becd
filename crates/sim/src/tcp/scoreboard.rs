//! The retransmission queue with its SACK scoreboard (Linux `tcp_rtx_queue` + `TCP_SKB_CB(skb)->sacked`
//! bits, `net/ipv4/tcp_input.c` `tcp_sacktag_write_queue()`), and the list of segments in
//! transmission order that RACK walks (`tsorted_sent_queue`).
//!
//! Segments are kept in sequence order from `snd_una`; a segment is found by binary search on
//! its start. Counters follow Linux: `packets_out`, `sacked_out`, `lost_out`, `retrans_out`.

use std::collections::VecDeque;

use crate::packet::{MAX_SACK_BLOCKS, SeqRange};
use crate::time::Time;

/// `TCPCB_SACKED_ACKED`: the receiver holds this segment.
pub const SACKED: u8 = 1 << 0;
/// `TCPCB_LOST`: deemed lost. It stays set while a retransmission is in flight (`RETRANS`), so
/// that such a segment counts once in `tcp_packets_in_flight()`.
pub const LOST: u8 = 1 << 1;
/// `TCPCB_SACKED_RETRANS`: a retransmission of it is in flight.
pub const RETRANS: u8 = 1 << 2;
/// `TCPCB_EVER_RETRANS`: it was retransmitted at least once (Karn's rule).
pub const EVER_RETRANS: u8 = 1 << 3;
/// The segment begins an skb of the retransmission queue: it began one when it was last sent,
/// or a partial resend cut its skb before it (`tcp_fragment()`). Linux keeps the skbs it sent in
/// the retransmission queue and retransmits them one by one (`tcp_xmit_retransmit_queue()`);
/// `__tcp_retransmit_skb()` may cut one (`tcp_fragment()`) but merges only sub-MSS skbs
/// (`tcp_retrans_try_collapse()`), so two lost skbs side by side leave as two, not one.
pub const SKB_HEAD: u8 = 1 << 4;

#[derive(Clone, Copy, Debug)]
pub struct Segment {
    pub start: u64,
    pub len: u32,
    /// Time of the latest (re)transmission.
    pub sent_at: Time,
    pub flags: u8,
    /// Delivery-rate state when this segment was last sent (`tcp_rate_skb_sent()`).
    pub tx: TxInfo,
}

/// `TCP_SKB_CB(skb)->tx` (`net/ipv4/tcp_rate.c`): what the sender knew when the segment left.
#[derive(Clone, Copy, Debug, Default)]
pub struct TxInfo {
    /// `tp->delivered` (packets).
    pub delivered: u64,
    /// `tp->delivered_mstamp`: time of the latest delivery.
    pub delivered_mstamp: Time,
    /// `tp->first_tx_mstamp`: start of the current send phase.
    pub first_tx: Time,
    /// The application limited sending (`tp->app_limited != 0`).
    pub app_limited: bool,
}

impl Segment {
    #[inline]
    pub fn end(&self) -> u64 {
        self.start + self.len as u64
    }
    #[inline]
    pub fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }
    #[inline]
    fn set_skb_head(&mut self, head: bool) {
        self.flags = if head { self.flags | SKB_HEAD } else { self.flags & !SKB_HEAD };
    }
}

/// What one ACK changed in the scoreboard.
#[derive(Clone, Copy, Debug, Default)]
pub struct AckDelta {
    /// Segments newly removed by the cumulative ACK.
    pub acked: u32,
    /// Segments newly SACKed.
    pub sacked: u32,
    /// Segments newly delivered: cumulatively acked without an earlier SACK, or newly SACKed
    /// (Linux `tp->delivered` growth, the `acked_sacked` of `tcp_cong_control()`).
    pub delivered: u32,
    /// Payload bytes newly cumulatively acked.
    pub acked_bytes: u64,
    /// Send time of the first newly acked segment never retransmitted (`first_ackt`).
    pub first_ackt: Option<Time>,
    /// Send time of the last newly acked segment never retransmitted (`last_ackt`).
    pub last_ackt: Option<Time>,
    /// Send time of the first newly SACKed segment never retransmitted (`first_sackt`).
    pub first_sackt: Option<Time>,
    /// Send time of the last newly SACKed segment never retransmitted (`last_sackt`).
    pub last_sackt: Option<Time>,
    /// Newly acked or SACKed data included retransmitted segments.
    pub retrans_data_acked: bool,
    /// The cumulative ACK covered a segment ever retransmitted, SACKed or not (Linux
    /// `FLAG_RETRANS_DATA_ACKED`): Karn's rule then forbids a sequence RTT sample.
    pub cum_retrans_acked: bool,
    /// What the newly (S)ACKed segments tell RACK.
    pub rack: RackAdvance,
    /// Rate-sampling info of the most recently sent newly delivered segment.
    pub rate_from: Option<Segment>,
    /// Lowest start of a never-retransmitted segment newly SACKed below the highest SACK of
    /// earlier ACKs: a hole filled by an original, which Linux calls reordering
    /// (`tcp_sacktag_one()`, `state->reord`).
    pub reord_sacked: Option<u64>,
    /// Lowest start of a never-retransmitted, never-SACKed segment the cumulative ACK removed
    /// (`tcp_clean_rtx_queue()`'s `reord`); reordering if below the prior highest SACK.
    pub reord_acked: Option<u64>,
}

/// `tcp_rack_advance()` as Linux calls it, once per newly delivered skb: first for the SACKed
/// ones (`tcp_sacktag_one()`, blocks sorted, ascending), then for the cumulatively acked ones
/// never SACKed (`tcp_clean_rtx_queue()`, ascending). `rack.mstamp` becomes the most recently
/// sent of them, but `rack.rtt_us` the RTT of the *last one called* (`net/ipv4/tcp_recovery.c`):
/// when an ACK both advances `snd_una` and SACKs newer data, that is the oldest segment's RTT,
/// and a hole sent after it is not yet overdue (RFC 8985 §6.2 takes the newest's RTT instead).
#[derive(Clone, Copy, Debug, Default)]
pub struct RackAdvance {
    /// Send time and the min RTT the ACK arrived with: a retransmission delivered faster than
    /// the min RTT may be the original's doing and does not advance RACK.
    now: Time,
    min_rtt: Time,
    /// The most recently sent advancing segment: (flags, end, sent_at).
    pub newest: Option<(u8, u64, Time)>,
    /// (start, sent_at) of the highest advancing segment newly SACKed.
    last_sacked: Option<(u64, Time)>,
    /// Send time of the highest advancing segment the cumulative ACK removed.
    last_acked: Option<Time>,
}

impl RackAdvance {
    /// The RTT `rack.rtt_us` ends up with, if any segment advanced RACK.
    pub fn rtt(&self) -> Option<Time> {
        let sent = self.last_acked.or(self.last_sacked.map(|(_, t)| t))?;
        Some(self.now.saturating_sub(sent))
    }

    fn advance(&mut self, seg: &Segment, cumulative: bool) {
        if seg.has(EVER_RETRANS) && self.now.saturating_sub(seg.sent_at) < self.min_rtt {
            return;
        }
        if cumulative {
            self.last_acked = Some(seg.sent_at);
        } else if self.last_sacked.is_none_or(|(start, _)| seg.start > start) {
            self.last_sacked = Some((seg.start, seg.sent_at));
        }
        let newer = match self.newest {
            None => true,
            Some((_, end, t)) => seg.sent_at > t || (seg.sent_at == t && seg.end() > end),
        };
        if newer {
            self.newest = Some((seg.flags, seg.end(), seg.sent_at));
        }
    }
}

impl AckDelta {
    /// An empty delta for an ACK arriving at `now` when the min RTT was `min_rtt`.
    pub fn at(now: Time, min_rtt: Time) -> AckDelta {
        AckDelta {
            rack: RackAdvance { now, min_rtt, ..RackAdvance::default() },
            ..AckDelta::default()
        }
    }

    fn delivered(&mut self, seg: &Segment, cumulative: bool) {
        self.delivered += 1;
        self.rack.advance(seg, cumulative);
        let newer = match self.rate_from {
            None => true,
            Some(r) => seg.sent_at > r.sent_at || (seg.sent_at == r.sent_at && seg.end() > r.end()),
        };
        if newer {
            self.rate_from = Some(*seg);
        }
        if seg.has(EVER_RETRANS) {
            self.retrans_data_acked = true;
        }
    }
}

#[derive(Default)]
pub struct Scoreboard {
    segs: VecDeque<Segment>,
    /// (start, sent_at) in transmission order; stale entries are skipped lazily.
    tsorted: VecDeque<(u64, Time)>,
    pub sacked_out: u32,
    pub lost_out: u32,
    pub retrans_out: u32,
    /// Previous ACK's SACK blocks: ranges already tagged, skipped next time (Linux
    /// `recv_sack_cache`), so a long-lived block costs only its growth.
    sack_cache: [SeqRange; MAX_SACK_BLOCKS],
    sack_cache_len: usize,
    /// Index hint: no segment before it is LOST-and-not-retransmitted.
    lost_hint: usize,
    /// Segments LOST and not being retransmitted: when zero, `next_lost` answers at once
    /// (Linux stops `tcp_xmit_retransmit_queue()` once `retrans_out >= lost_out`).
    lost_pending: u32,
    /// End of the highest segment ever SACKed; meaningful while `sacked_out > 0`.
    highest_sack: u64,
    /// Retransmissions marked lost again (`tcp_mark_skb_lost()`: `LINUX_MIB_TCPLOSTRETRANSMIT`).
    pub lost_retransmits: u64,
}

impl Scoreboard {
    /// `packets_out`.
    #[inline]
    pub fn packets_out(&self) -> u32 {
        self.segs.len() as u32
    }

    /// `tcp_packets_in_flight()`: packets_out − (sacked_out + lost_out) + retrans_out.
    #[inline]
    pub fn in_flight(&self) -> u32 {
        self.packets_out() - (self.sacked_out + self.lost_out) + self.retrans_out
    }

    pub fn is_empty(&self) -> bool {
        self.segs.is_empty()
    }

    /// `tcp_highest_sack_seq()`: the end of the highest SACKed segment, or `snd_una` when
    /// nothing is SACKed.
    pub fn highest_sack_seq(&self, snd_una: u64) -> u64 {
        if self.sacked_out == 0 { snd_una } else { self.highest_sack }
    }

    pub fn head(&self) -> Option<&Segment> {
        self.segs.front()
    }

    pub fn tail(&self) -> Option<&Segment> {
        self.segs.back()
    }

    /// A new segment was sent.
    pub fn push(&mut self, seg: Segment) {
        debug_assert!(self.segs.back().is_none_or(|b| b.end() == seg.start));
        self.tsorted.push_back((seg.start, seg.sent_at));
        self.segs.push_back(seg);
    }

    /// The index of the segment starting at `start`. The segments asked for are nearly always
    /// the head (RACK's walk) or among the last sent (an skb being cut), and nearly all are one
    /// MSS long, so the head, the tail and the index one MSS per step back from the tail are
    /// tried before a binary search.
    #[inline]
    fn index_of(&self, start: u64) -> Option<usize> {
        let n = self.segs.len();
        let head = self.segs.front()?;
        if start <= head.start {
            return (start == head.start).then_some(0);
        }
        let tail = &self.segs[n - 1];
        if start >= tail.start {
            return (start == tail.start).then_some(n - 1);
        }
        let back = (tail.start - start) / tail.len.max(1) as u64;
        if back < n as u64 {
            let i = n - 1 - back as usize;
            if self.segs[i].start == start {
                return Some(i);
            }
        }
        let i = self.segs.partition_point(|s| s.start < start);
        (i < n && self.segs[i].start == start).then_some(i)
    }

    /// Remove every segment that ends at or below `ack`.
    pub fn cumulative_ack(&mut self, ack: u64, d: &mut AckDelta) {
        while let Some(seg) = self.segs.front() {
            if seg.end() > ack {
                break;
            }
            let seg = self.segs.pop_front().unwrap();
            d.acked += 1;
            d.acked_bytes += seg.len as u64;
            if seg.has(SACKED) {
                self.sacked_out -= 1;
            } else {
                if !seg.has(EVER_RETRANS) {
                    d.first_ackt.get_or_insert(seg.sent_at);
                    d.last_ackt = Some(seg.sent_at);
                    d.reord_acked = Some(d.reord_acked.map_or(seg.start, |r| r.min(seg.start)));
                }
                d.delivered(&seg, true);
            }
            if seg.has(EVER_RETRANS) {
                d.cum_retrans_acked = true;
            }
            self.forget(seg.flags);
            self.lost_hint = self.lost_hint.saturating_sub(1);
        }
    }

    /// Tag the segments covered by the SACK blocks of one ACK.
    pub fn sack(&mut self, blocks: &[SeqRange], snd_una: u64, d: &mut AckDelta) {
        // Linux tags the blocks in ascending order, so "below the highest SACK" means below
        // the highest of earlier ACKs (`tcp_highest_sack_reset()` once nothing is SACKed).
        if self.sacked_out == 0 {
            self.highest_sack = snd_una;
        }
        if blocks.is_empty() {
            // Nearly every ACK of a loss-free transfer: nothing to tag, nothing to cache.
            self.sack_cache_len = 0;
            return;
        }
        let prior_fack = self.highest_sack_seq(snd_una);
        for b in blocks {
            if b.end <= snd_una || b.start >= b.end {
                continue;
            }
            // What is left of the block once the cached ranges are cut out: each cut splits a
            // range in at most two, so 3 cached blocks leave at most 4 pieces.
            let mut todo = [SeqRange::default(); MAX_SACK_BLOCKS + 1];
            todo[0] = SeqRange { start: b.start.max(snd_una), end: b.end };
            let mut n = 1;
            for c in &self.sack_cache[..self.sack_cache_len] {
                let mut next = [SeqRange::default(); MAX_SACK_BLOCKS + 1];
                let mut m = 0;
                for r in &todo[..n] {
                    for piece in subtract(*r, *c).into_iter().flatten() {
                        next[m] = piece;
                        m += 1;
                    }
                }
                todo = next;
                n = m;
            }
            for r in &todo[..n] {
                self.tag_range(*r, prior_fack, d);
            }
        }
        self.sack_cache_len = blocks.len().min(MAX_SACK_BLOCKS);
        self.sack_cache[..self.sack_cache_len].copy_from_slice(&blocks[..self.sack_cache_len]);
    }

    fn tag_range(&mut self, r: SeqRange, prior_fack: u64, d: &mut AckDelta) {
        let mut i = self.segs.partition_point(|s| s.end() <= r.start);
        while i < self.segs.len() {
            let seg = self.segs[i];
            if seg.start >= r.end {
                break;
            }
            // Only whole segments are tagged (Linux splits partially covered skbs; our segments
            // are the receiver's units, so a block always covers whole segments).
            if seg.start >= r.start && seg.end() <= r.end && !seg.has(SACKED) {
                self.forget(seg.flags);
                let s = &mut self.segs[i];
                s.flags = (s.flags & !(LOST | RETRANS)) | SACKED;
                self.sacked_out += 1;
                self.highest_sack = self.highest_sack.max(seg.end());
                d.sacked += 1;
                if !seg.has(EVER_RETRANS) {
                    d.first_sackt.get_or_insert(seg.sent_at);
                    d.last_sackt = Some(seg.sent_at);
                    if seg.start < prior_fack {
                        d.reord_sacked =
                            Some(d.reord_sacked.map_or(seg.start, |x| x.min(seg.start)));
                    }
                }
                d.delivered(&seg, false);
            }
            i += 1;
        }
    }

    /// Mark a segment lost (`tcp_mark_skb_lost()`). A lost segment whose retransmission is in
    /// flight has lost that retransmission too. Returns whether the sender's loss count
    /// (`tp->lost`) grows: a first loss, or a retransmission lost again — Linux calls
    /// `tcp_notify_skb_loss_event()` in both branches (net/ipv4/tcp_input.c), so BBR's
    /// `rs->losses` and PRR's `newly_lost` see lost retransmissions.
    pub fn mark_lost(&mut self, i: usize) -> bool {
        let s = &mut self.segs[i];
        if s.has(SACKED) {
            return false;
        }
        self.lost_hint = self.lost_hint.min(i);
        if s.has(LOST) {
            if s.has(RETRANS) {
                s.flags &= !RETRANS;
                self.retrans_out -= 1;
                self.lost_pending += 1;
                self.lost_retransmits += 1;
                return true;
            }
            return false;
        }
        s.flags |= LOST;
        self.lost_out += 1;
        if !s.has(RETRANS) {
            self.lost_pending += 1;
        }
        true
    }

    /// Take a segment leaving the LOST/RETRANS states (acked or SACKed) out of the counters.
    fn forget(&mut self, flags: u8) {
        if flags & LOST != 0 {
            self.lost_out -= 1;
            if flags & RETRANS == 0 {
                self.lost_pending -= 1;
            }
        }
        if flags & RETRANS != 0 {
            self.retrans_out -= 1;
        }
    }

    /// RTO (`tcp_timeout_mark_lost()`): every segment not SACKed is lost, except those other
    /// than the head sent less than the RACK RTT before `now` ("don't mark recently sent ones
    /// lost yet"). Returns the losses counted, as [`Scoreboard::mark_lost`] counts them.
    /// A SACKed head means the receiver reneged (it dropped data it had SACKed,
    /// `tcp_prune_ofo_queue()`): every SACK mark is forgotten and every segment is lost
    /// (`is_reneg`, `TCPSACKReneging`).
    pub fn mark_all_lost(&mut self, now: Time, rack_rtt: Time) -> u32 {
        let reneg = self.segs.front().is_some_and(|s| s.has(SACKED));
        if reneg {
            for s in self.segs.iter_mut() {
                s.flags &= !SACKED;
            }
            self.sacked_out = 0;
            self.sack_cache_len = 0;
        }
        let mut n = 0;
        for i in 0..self.segs.len() {
            if !reneg && i > 0 && self.segs[i].sent_at + rack_rtt > now {
                continue;
            }
            n += self.mark_lost(i) as u32;
        }
        self.lost_hint = 0;
        n
    }

    /// Next segment to retransmit (LOST and not being retransmitted), in sequence order.
    pub fn next_lost(&mut self) -> Option<usize> {
        if self.lost_pending == 0 {
            return None;
        }
        while self.lost_hint < self.segs.len() {
            let s = &self.segs[self.lost_hint];
            if s.has(LOST) && !s.has(RETRANS) {
                return Some(self.lost_hint);
            }
            self.lost_hint += 1;
        }
        None
    }

    /// Record a retransmission of segment `i` sent at `now` (`tcp_retransmit_skb()`: RETRANS,
    /// and counted in `retrans_out`).
    pub fn retransmitted(&mut self, i: usize, now: Time, tx: TxInfo) -> Segment {
        let s = &mut self.segs[i];
        debug_assert!(!s.has(SACKED));
        if !s.has(RETRANS) {
            self.retrans_out += 1;
        }
        if s.has(LOST) && !s.has(RETRANS) {
            self.lost_pending -= 1;
        }
        s.flags |= RETRANS;
        self.sent_again(i, now, tx)
    }

    /// Record a loss probe's copy of segment `i` sent at `now`. `tcp_send_loss_probe()` calls
    /// `__tcp_retransmit_skb()`, which marks the skb EVER_RETRANS only: the probed segment is
    /// not a retransmission in flight (`retrans_out`), so if RACK then finds it lost it is
    /// resent at once.
    pub fn probed(&mut self, i: usize, now: Time, tx: TxInfo) -> Segment {
        debug_assert!(!self.segs[i].has(SACKED));
        self.sent_again(i, now, tx)
    }

    /// A segment left again: a new send time for RACK and the rate samples, Karn's mark.
    fn sent_again(&mut self, i: usize, now: Time, tx: TxInfo) -> Segment {
        let s = &mut self.segs[i];
        s.flags |= EVER_RETRANS;
        s.sent_at = now;
        s.tx = tx;
        let seg = *s;
        self.tsorted.push_back((seg.start, now));
        seg
    }

    pub fn get(&self, i: usize) -> &Segment {
        &self.segs[i]
    }

    /// Whether the segment starting at `start` begins an skb ([`SKB_HEAD`]).
    pub fn is_skb_head(&self, start: u64) -> bool {
        self.index_of(start).is_some_and(|i| self.segs[i].has(SKB_HEAD))
    }

    /// Record whether the segment starting at `start` begins an skb ([`SKB_HEAD`]).
    pub fn set_skb_head(&mut self, start: u64, head: bool) {
        if let Some(i) = self.index_of(start) {
            self.segs[i].set_skb_head(head);
        }
    }

    /// [`Scoreboard::set_skb_head`] for a segment expected at index `at` (looked up by its
    /// start if it is not there).
    #[inline]
    pub fn set_skb_head_near(&mut self, at: usize, start: u64, head: bool) {
        match self.segs.get_mut(at) {
            Some(s) if s.start == start => s.set_skb_head(head),
            _ => self.set_skb_head(start, head),
        }
    }

    pub fn len(&self) -> usize {
        self.segs.len()
    }

    /// RACK loss detection over segments in transmission order (`tcp_rack_detect_loss()`):
    /// every segment sent before the most recently delivered one (`rack_xmit`, `rack_end`)
    /// whose time `sent + rack_rtt + reo_wnd` has passed is lost. Returns (the losses counted,
    /// as [`Scoreboard::mark_lost`] counts them, and the longest remaining wait of the others,
    /// for the reorder timer).
    pub fn rack_detect_loss(
        &mut self,
        now: Time,
        rack_xmit: Time,
        rack_end: u64,
        rack_rtt: Time,
        reo_wnd: Time,
    ) -> (u32, Option<Time>) {
        let mut newly_lost = 0;
        let mut wait: Option<Time> = None;
        let mut k = 0;
        while k < self.tsorted.len() {
            let (start, sent) = self.tsorted[k];
            let Some(i) = self.index_of(start) else {
                self.drop_tsorted(k);
                continue;
            };
            let seg = self.segs[i];
            if seg.sent_at != sent || seg.has(SACKED) || (seg.has(LOST) && !seg.has(RETRANS)) {
                // Stale (resent later, delivered, or already lost): not in Linux's list.
                self.drop_tsorted(k);
                continue;
            }
            let sent_after =
                rack_xmit > seg.sent_at || (rack_xmit == seg.sent_at && rack_end > seg.end());
            if !sent_after {
                break;
            }
            let deadline = seg.sent_at + rack_rtt + reo_wnd;
            if deadline <= now {
                newly_lost += self.mark_lost(i) as u32;
                self.drop_tsorted(k);
            } else {
                let left = deadline - now;
                wait = Some(wait.map_or(left, |w| w.max(left)));
                k += 1;
            }
        }
        (newly_lost, wait)
    }

    fn drop_tsorted(&mut self, k: usize) {
        if k == 0 {
            self.tsorted.pop_front();
        } else {
            self.tsorted.remove(k);
        }
    }

    /// Debug check of the counters against the segments (O(n); tests only).
    pub fn check(&self) {
        let sacked = self.segs.iter().filter(|s| s.has(SACKED)).count() as u32;
        let lost = self.segs.iter().filter(|s| s.has(LOST)).count() as u32;
        let retrans = self.segs.iter().filter(|s| s.has(RETRANS)).count() as u32;
        let pending = self.segs.iter().filter(|s| s.has(LOST) && !s.has(RETRANS)).count() as u32;
        assert_eq!(
            (sacked, lost, retrans, pending),
            (self.sacked_out, self.lost_out, self.retrans_out, self.lost_pending)
        );
    }
}

/// `r` minus `c`, as zero, one or two ranges.
fn subtract(r: SeqRange, c: SeqRange) -> [Option<SeqRange>; 2] {
    if c.end <= r.start || c.start >= r.end {
        return [Some(r), None];
    }
    [
        (c.start > r.start).then_some(SeqRange { start: r.start, end: c.start }),
        (c.end < r.end).then_some(SeqRange { start: c.end, end: r.end }),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segment(start: u64, len: u32, sent_at: Time) -> Segment {
        Segment { start, len, sent_at, flags: 0, tx: TxInfo::default() }
    }

    /// SACK `start..end`, then run RACK at `now` against the most recently sent segment it
    /// delivered (RACK RTT 1 ms, reordering window `reo`): (newly lost, the reorder wait).
    fn sack_then_rack(
        b: &mut Scoreboard,
        start: u64,
        end: u64,
        now: Time,
        reo: Time,
    ) -> (u32, Option<Time>) {
        let mut d = AckDelta::default();
        b.sack(&[SeqRange { start, end }], 0, &mut d);
        let (_, rack_end, xmit) = d.rack.newest.unwrap();
        b.rack_detect_loss(now, xmit, rack_end, Time::from_ms(1), reo)
    }

    fn board(n: u64, mss: u32) -> Scoreboard {
        let mut b = Scoreboard::default();
        for k in 0..n {
            b.push(segment(k * mss as u64, mss, Time::from_us(k)));
        }
        b
    }

    /// `index_of()`'s shortcuts (head, tail, one MSS per step back from the tail) must find
    /// what a search finds, with short segments among full ones and the head acked away.
    #[test]
    fn index_of_finds_every_start_and_nothing_between() {
        let lens = [100, 100, 40, 100, 100, 100, 7, 100, 100, 60, 100, 100];
        let mut b = Scoreboard::default();
        let mut starts = Vec::new();
        let mut at = 1000;
        for (k, len) in lens.into_iter().enumerate() {
            starts.push(at);
            b.push(segment(at, len, Time::from_us(k as u64)));
            at += len as u64;
        }
        for acked in 0..lens.len() {
            let live = &starts[acked..];
            for probe in 900..at + 200 {
                let want = live.iter().position(|&s| s == probe);
                assert_eq!(b.index_of(probe), want, "start {probe} with {acked} acked");
            }
            let mut d = AckDelta::default();
            b.cumulative_ack(starts[acked] + lens[acked] as u64, &mut d);
        }
        assert_eq!(b.index_of(1000), None);
    }

    #[test]
    fn established_cumulative_ack_removes_segments() {
        let mut b = board(10, 100);
        let mut d = AckDelta::default();
        b.cumulative_ack(300, &mut d);
        assert_eq!((d.acked, d.acked_bytes, b.packets_out()), (3, 300, 7));
        assert_eq!(d.first_ackt, Some(Time::from_us(0)));
        assert_eq!(d.last_ackt, Some(Time::from_us(2)));
    }

    #[test]
    fn loss_a_receiver_that_reneged_has_every_segment_resent() {
        // Segments 3-9 SACKed, then the receiver pruned them (`tcp_prune_ofo_queue()`) and
        // ACKed 0-2: the head is SACKed, so the RTO forgets every SACK mark and marks all lost
        // (`tcp_timeout_mark_lost()`, is_reneg), recently sent ones included.
        let mut b = board(10, 100);
        let mut d = AckDelta::default();
        b.sack(&[SeqRange { start: 300, end: 1000 }], 0, &mut d);
        b.cumulative_ack(300, &mut d);
        assert_eq!(b.sacked_out, 7);
        assert_eq!(b.mark_all_lost(Time::from_us(5), Time::from_ms(1)), 7);
        assert_eq!((b.sacked_out, b.lost_out, b.in_flight()), (0, 7, 0));
        assert_eq!(b.next_lost(), Some(0));
        // The same block SACKed again is tagged again (the SACK cache was cleared).
        let mut d = AckDelta::default();
        b.sack(&[SeqRange { start: 300, end: 1000 }], 300, &mut d);
        assert_eq!(d.sacked, 7);
        b.check();
    }

    #[test]
    fn recovery_sack_then_rack_marks_the_hole_lost() {
        let mut b = board(10, 100);
        // Segment 0 was sent before the delivered segment 4: with reo_wnd 0 it is lost at once.
        let (lost, wait) = sack_then_rack(&mut b, 100, 500, Time::from_ms(10), Time::ZERO);
        assert_eq!((b.sacked_out, b.lost_out, b.in_flight()), (4, 1, 5));
        assert_eq!((lost, wait), (1, None));
        assert_eq!(b.next_lost(), Some(0));
        b.check();
    }

    #[test]
    fn recovery_repeated_sack_block_is_not_counted_twice() {
        let mut b = board(10, 100);
        let mut d = AckDelta::default();
        b.sack(&[SeqRange { start: 100, end: 300 }], 0, &mut d);
        let mut d2 = AckDelta::default();
        b.sack(&[SeqRange { start: 100, end: 400 }], 0, &mut d2);
        assert_eq!((d.sacked, d2.sacked, b.sacked_out), (2, 1, 3));
        b.check();
    }

    #[test]
    fn recovery_rack_waits_for_the_reordering_window() {
        let mut b = board(4, 100);
        let now = Time::from_us(3) + Time::from_ms(1);
        let (lost, wait) = sack_then_rack(&mut b, 300, 400, now, Time::from_ms(1));
        assert_eq!(lost, 0);
        // Segments 0..2 (sent at 0, 1, 2 µs) are due 2 ms after their send; the timer waits for
        // the last of them (Linux keeps the largest remaining time): 1 ms − 1 µs from now.
        assert_eq!(wait, Some(Time::from_ms(1) - Time::from_us(1)));
    }

    #[test]
    fn loss_rto_marks_all_unsacked_and_retransmission_clears_lost() {
        let mut b = board(5, 100);
        let mut d = AckDelta::default();
        b.sack(&[SeqRange { start: 200, end: 300 }], 0, &mut d);
        assert_eq!(b.mark_all_lost(Time::from_ms(100), Time::from_ms(1)), 4);
        assert_eq!(b.in_flight(), 0);
        let i = b.next_lost().unwrap();
        b.retransmitted(i, Time::from_ms(5), TxInfo::default());
        // The retransmitted segment stays LOST with RETRANS set: it counts once in flight.
        assert_eq!((b.lost_out, b.retrans_out, b.in_flight()), (4, 1, 1));
        assert_eq!(b.next_lost(), Some(1));
        b.check();
    }

    /// `tcp_send_loss_probe()` resends through `__tcp_retransmit_skb()`: EVER_RETRANS, not
    /// SACKED_RETRANS. If RACK then finds the probe lost, it is a first loss, queued for resending
    /// at once, not a retransmission lost again.
    #[test]
    fn tlp_a_probed_segment_is_not_a_retransmission_in_flight() {
        let mut b = board(4, 100);
        b.probed(3, Time::from_ms(5), TxInfo::default());
        assert_eq!((b.retrans_out, b.in_flight()), (0, 4));
        assert!(b.get(3).has(EVER_RETRANS) && !b.get(3).has(RETRANS));
        b.push(segment(400, 100, Time::from_ms(6)));
        let (lost, _) = sack_then_rack(&mut b, 400, 500, Time::from_ms(20), Time::ZERO);
        assert_eq!((lost, b.lost_out, b.lost_retransmits), (4, 4, 0));
        for k in 0..4 {
            let i = b.next_lost().unwrap();
            assert_eq!(b.get(i).start, k * 100);
            b.retransmitted(i, Time::from_ms(20), TxInfo::default());
        }
        assert_eq!(b.next_lost(), None);
        b.check();
    }

    /// `tcp_mark_skb_lost()` counts a retransmission lost again in `tp->lost`
    /// (`tcp_notify_skb_loss_event()`), though `lost_out` does not grow: the segment is resent
    /// again, and BBR subtracts it from cwnd (`rs->losses`).
    #[test]
    fn recovery_a_retransmission_lost_again_counts_as_a_loss() {
        let mut b = board(4, 100);
        let (lost, _) = sack_then_rack(&mut b, 300, 400, Time::from_ms(5), Time::ZERO);
        assert_eq!((lost, b.lost_out), (3, 3));
        let i = b.next_lost().unwrap();
        b.retransmitted(i, Time::from_ms(5), TxInfo::default());
        assert_eq!((b.retrans_out, b.in_flight()), (1, 1));
        // A later delivery, sent after the retransmission, shows it lost too.
        b.push(segment(400, 100, Time::from_ms(6)));
        let (lost, _) = sack_then_rack(&mut b, 400, 500, Time::from_ms(20), Time::ZERO);
        assert_eq!(lost, 1, "the lost retransmission counts");
        assert_eq!((b.lost_out, b.retrans_out, b.lost_retransmits), (3, 0, 1));
        assert_eq!(b.next_lost(), Some(i));
        b.check();
    }
}
