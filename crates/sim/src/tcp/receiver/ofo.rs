//! The receiver's out-of-order queue and the order its SACK blocks are reported in.
//!
//! Ranges above `rcv_nxt` are kept sorted, disjoint and not adjacent, keyed by their start, as
//! Linux keeps the out-of-order queue in an rbtree (`tcp_data_queue_ofo()` in
//! `net/ipv4/tcp_input.c`). Each range carries a stamp, a new highest one when it changes
//! (unless it has the highest already); ranges in descending stamp order are the SACK blocks
//! most recently changed first (RFC 2018 §4: the first block holds the segment that triggered
//! the ACK; `tcp_sack_new_ofo_skb()` moves a new or extended block to the front). Every
//! operation is O(log n) in the number of ranges: a loss episode leaves thousands of holes
//! behind, and a linear search per segment cost more than the rest of the simulation together
//! (issue 40).
//!
//! Each range also carries the memory its skbs are charged (`truesize`, summed over the
//! segments queued into it), for the receiver's memory accounting ([`super::rmem`]): Linux
//! collapses ranges of bloated skbs (`tcp_collapse_ofo_queue()`) and drops the highest ones
//! (`tcp_prune_ofo_queue()`) when the socket is over its receive buffer.

use std::collections::BTreeMap;
use std::ops::Bound::{Excluded, Included};

use crate::packet::SeqRange;

#[derive(Clone, Copy, Debug)]
struct Held {
    end: u64,
    /// Its place in the report order: the larger, the more recently it changed.
    stamp: u64,
    /// Bytes of `sk_rmem_alloc` its skbs are charged.
    truesize: u64,
}

#[derive(Debug, Default)]
pub(super) struct OfoQueue {
    /// Start → end and stamp.
    ranges: BTreeMap<u64, Held>,
    /// Stamp → the range: the ranges in the order they last changed.
    recent: BTreeMap<u64, SeqRange>,
    next_stamp: u64,
    /// Payload bytes held.
    bytes: u64,
    /// Their charge: the sum of the ranges' `truesize`.
    truesize: u64,
    /// Ranges last changed before this stamp are not reported: a prune reset the SACK state
    /// (`tcp_sack_reset()`), and Linux reports a block again only once new data reaches it.
    reported_from: u64,
}

impl OfoQueue {
    #[inline]
    pub(super) fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Payload bytes held.
    #[inline]
    pub(super) fn bytes(&self) -> u64 {
        self.bytes
    }

    /// What the held ranges are charged (`truesize` summed), bytes.
    #[inline]
    pub(super) fn truesize(&self) -> u64 {
        self.truesize
    }

    /// The end of the highest range.
    #[inline]
    pub(super) fn last_end(&self) -> Option<u64> {
        self.ranges.last_key_value().map(|(_, h)| h.end)
    }

    /// Queue `start..end`, charged `truesize` (0 without memory accounting), merged with every
    /// range it overlaps or touches; the result becomes the most recent block. Only the bytes
    /// it adds are charged, their share of `truesize` (Linux drops a wholly duplicate skb and
    /// trims the overlap of a partial one).
    pub(super) fn insert(&mut self, start: u64, end: u64, truesize: u64) {
        // The common case, new data just above the highest range: it grows in place, found
        // without a key comparison.
        if let Some(mut last) = self.ranges.last_entry()
            && *last.key() <= start
            && start <= last.get().end
        {
            let lo = *last.key();
            let h = last.get_mut();
            let old = *h;
            h.end = h.end.max(end);
            self.bytes += h.end - old.end;
            let charge = share(truesize, h.end - old.end, end - start);
            h.truesize += charge;
            self.truesize += charge;
            let grown = SeqRange { start: lo, end: h.end };
            if old.stamp + 1 == self.next_stamp && old.stamp >= self.reported_from {
                // Already the most recent block.
                if let Some(mut top) = self.recent.last_entry() {
                    *top.get_mut() = grown;
                }
            } else {
                h.stamp = self.next_stamp;
                self.recent.remove(&old.stamp);
                self.recent.insert(self.next_stamp, grown);
                self.next_stamp += 1;
            }
            return;
        }
        // Only the range starting last before `start` can reach it: the ones below it end
        // before it starts. Every range starting from there to the end of the data merges too.
        let (lo, grown) = match self.ranges.range(..start).next_back() {
            Some((&s, &h)) if h.end >= start => (s, Some(h)),
            _ => (start, None),
        };
        let mut hi = grown.map_or(end, |h| h.end.max(end));
        let above = if grown.is_some() { Excluded(lo) } else { Included(lo) };
        let mut covered = grown.map_or(0, |h| h.end - lo);
        let mut merged_truesize = grown.map_or(0, |h| h.truesize);
        while let Some((&s, &h)) = self.ranges.range((above, Included(hi))).next() {
            self.remove(s, h);
            hi = hi.max(h.end);
            covered += h.end - s;
            merged_truesize += h.truesize;
        }
        // The merged ranges' charges were taken out as they were removed; `grown`'s stays.
        let charge = share(truesize, (hi - lo).saturating_sub(covered), end - start);
        self.truesize += charge + merged_truesize - grown.map_or(0, |h| h.truesize);
        if let Some(h) = grown {
            self.recent.remove(&h.stamp);
        }
        let stamp = self.next_stamp;
        self.next_stamp += 1;
        self.recent.insert(stamp, SeqRange { start: lo, end: hi });
        // The merged ranges' bytes were taken out as they were removed; `grown`'s stay.
        self.bytes += hi - grown.map_or(lo, |h| h.end);
        self.ranges.insert(lo, Held { end: hi, stamp, truesize: merged_truesize + charge });
    }

    fn remove(&mut self, start: u64, h: Held) {
        self.ranges.remove(&start);
        self.recent.remove(&h.stamp);
        self.bytes -= h.end - start;
        self.truesize -= h.truesize;
    }

    /// `rcv_nxt` moved to `rcv_nxt`: take out the ranges it reaches, which are now in order, and
    /// return where in-order data ends.
    #[inline]
    pub(super) fn advance(&mut self, mut rcv_nxt: u64) -> u64 {
        while let Some(first) = self.ranges.first_entry() {
            if *first.key() > rcv_nxt {
                break;
            }
            let (s, h) = first.remove_entry();
            self.recent.remove(&h.stamp);
            self.bytes -= h.end - s;
            self.truesize -= h.truesize;
            rcv_nxt = rcv_nxt.max(h.end);
        }
        rcv_nxt
    }

    /// The ranges, most recently changed first (those a SACK reset left unreported skipped).
    pub(super) fn recent_blocks(&self) -> impl Iterator<Item = SeqRange> + '_ {
        self.recent.range(self.reported_from..).rev().map(|(_, r)| *r)
    }

    /// `tcp_collapse_ofo_queue()`: each range whose skbs are bloated (`bloated(len,
    /// truesize)`: the window model gives their charge more room than their payload) is
    /// copied into compact skbs, charged `collapsed(len)`. Linux leaves a range of one skb
    /// smaller than a compact skb alone ("do not attempt collapsing tiny skbs") and stops once
    /// such tiny ranges add up to more than `rcvbuf / 8`; `tiny` = the largest range that is
    /// one skb (one segment). Returns the charge freed.
    pub(super) fn collapse(
        &mut self,
        rcvbuf: u64,
        tiny: u64,
        bloated: impl Fn(u64, u64) -> bool,
        collapsed: impl Fn(u64) -> u64,
    ) -> u64 {
        let mut freed = 0;
        let mut sum_tiny = 0;
        for (s, h) in self.ranges.iter_mut() {
            let len = h.end - *s;
            if len <= tiny && len < SKB_MAX_HEAD_DATA {
                sum_tiny += h.truesize;
                if sum_tiny > rcvbuf >> 3 {
                    break;
                }
                continue;
            }
            if bloated(len, h.truesize) {
                let new = collapsed(len).min(h.truesize);
                freed += h.truesize - new;
                h.truesize = new;
            }
        }
        self.truesize -= freed;
        freed
    }

    /// `tcp_prune_ofo_queue()`: drop skbs from the highest down, `unit` bytes (one segment) at
    /// a time, until `goal` bytes of charge are freed or the queue is empty; `done()` is then
    /// asked with the charge left whether to stop, else another `goal` is freed. The SACK state
    /// is reset. Returns (payload bytes, charge) dropped.
    pub(super) fn prune(&mut self, goal: u64, unit: u64, done: impl Fn(u64) -> bool) -> (u64, u64) {
        let (mut bytes, mut charge) = (0, 0);
        let mut left = goal as i64;
        while let Some(mut last) = self.ranges.last_entry() {
            let start = *last.key();
            let h = *last.get();
            let len = h.end - start;
            // One skb: `unit` bytes from the top (the range's last, possibly shorter, part).
            let cut = match len % unit {
                0 => unit.min(len),
                r => r,
            };
            let freed = share(h.truesize, cut, len);
            if cut == len {
                last.remove();
                self.recent.remove(&h.stamp);
            } else {
                let held = last.get_mut();
                held.end -= cut;
                held.truesize -= freed;
                if let Some(r) = self.recent.get_mut(&h.stamp) {
                    r.end = held.end;
                }
            }
            self.bytes -= cut;
            self.truesize -= freed;
            bytes += cut;
            charge += freed;
            left -= freed as i64;
            if left <= 0 || self.ranges.is_empty() {
                if done(self.truesize) {
                    break;
                }
                left = goal as i64;
            }
        }
        // `tcp_sack_reset()`: what is left is reported again only once new data changes it.
        self.reported_from = self.next_stamp;
        (bytes, charge)
    }
}

/// `SKB_WITH_OVERHEAD(SK_MEM_QUANTUM)` = 4096 − `SKB_DATA_ALIGN(sizeof(struct
/// skb_shared_info))` (320 on x86_64) = 3776 (`include/linux/skbuff.h`, `include/net/sock.h`):
/// the payload one compact skb of `tcp_collapse()` holds; a smaller lone skb is "tiny".
pub(super) const SKB_MAX_HEAD_DATA: u64 = 4096 - 320;

/// `part` of `whole` bytes' share of `charge`, rounded up (a cut skb keeps its charge whole).
fn share(charge: u64, part: u64, whole: u64) -> u64 {
    if whole == 0 {
        return 0;
    }
    ((charge as u128 * part as u128).div_ceil(whole as u128)) as u64
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// The queue as it was kept before: vectors searched linearly and shifted from the front.
    #[derive(Default)]
    struct Reference {
        ofo: Vec<SeqRange>,
        recent: Vec<u64>,
    }

    impl Reference {
        fn insert(&mut self, start: u64, end: u64) {
            let i = self.ofo.partition_point(|r| r.end < start);
            let mut new = SeqRange { start, end };
            let mut j = i;
            while j < self.ofo.len() && self.ofo[j].start <= end {
                new.start = new.start.min(self.ofo[j].start);
                new.end = new.end.max(self.ofo[j].end);
                j += 1;
            }
            self.ofo.splice(i..j, std::iter::once(new));
            self.recent.retain(|s| *s < new.start || *s >= new.end);
            self.recent.insert(0, new.start);
        }

        fn advance(&mut self, mut rcv_nxt: u64) -> u64 {
            while let Some(r) = self.ofo.first().copied() {
                if r.start > rcv_nxt {
                    break;
                }
                rcv_nxt = rcv_nxt.max(r.end);
                self.ofo.remove(0);
                self.recent.retain(|s| *s != r.start);
            }
            rcv_nxt
        }

        fn blocks(&self) -> Vec<SeqRange> {
            self.recent.iter().map(|s| *self.ofo.iter().find(|r| r.start == *s).unwrap()).collect()
        }
    }

    /// Feed segments to both as the receiver does: data above `rcv_nxt` is queued, data
    /// reaching it moves it; after each, the blocks in report order, the bytes held and the
    /// highest end must agree.
    fn replay(segments: &[(u64, u64)]) -> Result<(), TestCaseError> {
        let (mut q, mut reference) = (OfoQueue::default(), Reference::default());
        let mut rcv_nxt = 0;
        for &(start, len) in segments {
            let end = start + len;
            if end <= rcv_nxt {
                continue;
            } else if start <= rcv_nxt {
                let a = q.advance(end.max(rcv_nxt));
                prop_assert_eq!(a, reference.advance(end.max(rcv_nxt)));
                rcv_nxt = a;
            } else {
                q.insert(start, end, 0);
                reference.insert(start, end);
            }
            let blocks: Vec<SeqRange> = q.recent_blocks().collect();
            prop_assert_eq!(&blocks, &reference.blocks());
            let held: u64 = reference.ofo.iter().map(|r| r.end - r.start).sum();
            prop_assert_eq!(q.bytes(), held);
            prop_assert_eq!(q.last_end(), reference.ofo.last().map(|r| r.end));
            prop_assert_eq!(q.is_empty(), reference.ofo.is_empty());
            prop_assert_eq!(q.recent.len(), q.ranges.len());
        }
        Ok(())
    }

    /// Segments of a 64-segment window in a random order, some sent twice; `unit` apart, so
    /// with `len` > `unit` they overlap, with `len` < `unit` gaps stay between neighbours.
    fn arrivals() -> impl Strategy<Value = Vec<(u64, u64)>> {
        (1u64..4, 1u64..4, prop::collection::vec(0u64..64, 1..200)).prop_map(|(unit, len, ks)| {
            ks.into_iter().map(|k| (k * unit * 100, len * 100)).collect()
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn matches_the_linear_reference_over_random_arrival_orders(segments in arrivals()) {
            replay(&segments)?;
        }

        #[test]
        fn matches_the_linear_reference_over_shuffled_windows(
            order in Just((0u64..48).collect::<Vec<_>>()).prop_shuffle(),
            lost in prop::collection::vec(0u64..48, 0..12),
        ) {
            // A window of 48 MSS-sized segments in a shuffled order, some dropped first and
            // retransmitted at the end, as a loss episode delivers them.
            let mss = 1448;
            let mut segments: Vec<(u64, u64)> =
                order.iter().filter(|k| !lost.contains(k)).map(|k| (k * mss, mss)).collect();
            segments.extend(lost.iter().map(|k| (k * mss, mss)));
            replay(&segments)?;
        }
    }

    #[test]
    fn a_segment_bridging_two_ranges_merges_them_into_the_most_recent_block() {
        let mut q = OfoQueue::default();
        q.insert(10, 20, 0);
        q.insert(40, 50, 0);
        q.insert(60, 70, 0);
        q.insert(20, 40, 0);
        let blocks: Vec<_> = q.recent_blocks().map(|r| (r.start, r.end)).collect();
        assert_eq!(blocks, [(10, 50), (60, 70)]);
        assert_eq!(q.bytes(), 50);
        assert_eq!(q.advance(10), 50);
        assert_eq!(q.recent_blocks().map(|r| (r.start, r.end)).collect::<Vec<_>>(), [(60, 70)]);
    }
}
