//! Report-loss accounting from sequence numbers (int-telemetry.md §16.4).
//!
//! A switch numbers its reports per (switch id, hw_id) per destination (§3.2), so the counter is
//! kept per [`ReportStream`], not globally as AmLight's collector does. A gap in the numbers is
//! a loss; a late report that fills a gap no more than [`REORDER_WINDOW`] behind the highest
//! number seen un-counts it; a duplicate changes nothing. Each loss is remembered with the
//! times of the reports around it, so a burst can say how many reports went missing while it
//! lasted ([`LossCounter::lost_between`]).
//!
//! Numbers are unwrapped to 64 bits: the step from the highest number seen is taken modulo
//! 2^width, forward when under half the range, backward otherwise. Two consecutive numbers far
//! behind the window are a restart of the switch's counter: accounting resumes from there
//! without counting a loss.
//!
//! A forward step of more than [`SUSPECT_JUMP`] is held until the stream's next report: if that
//! one follows on from it, the jump was real and its gap is counted; if not (a flipped bit in one
//! report's number), the report is *suspect*, left out of the accounting and counted apart, so a
//! single corrupt number cannot make a billion reports "lost".

use crate::observation::ReportStream;
use rustc_hash::FxHashMap;

/// Width of a report stream's sequence number.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SeqWidth {
    /// Telemetry Report v0.5 and v1.0: a 32-bit Sequence Number word (int-telemetry.md §3.1,
    /// §3.2), wrapping at 2^32.
    #[default]
    Bits32,
    /// Telemetry Report v2.0: 22 bits of the group header's word 0 (int-telemetry.md §4.1),
    /// wrapping at 4,194,304.
    Bits22,
}

impl SeqWidth {
    pub fn modulus(self) -> u64 {
        match self {
            SeqWidth::Bits32 => 1 << 32,
            SeqWidth::Bits22 => 1 << 22,
        }
    }
}

/// How far behind the highest sequence number a late report may arrive and still fill its gap.
/// Reports reorder only across parallel paths or NIC queues, a few apart; 128 covers that with
/// one `u128` of state.
pub const REORDER_WINDOW: u64 = 128;

/// Largest forward step taken on one report's word alone. A collector that misses 65,536 reports
/// of one stream between two it receives has lost a long outage's worth; such a step must be
/// confirmed by the next report. Below it, one flipped low bit is indistinguishable from loss.
pub const SUSPECT_JUMP: u64 = 1 << 16;

/// One gap: `count` reports numbered from `first`, missing between the report seen at `t_before`
/// and the one seen at `t_after`; `remaining` of them have not turned up late.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Gap {
    first: u64,
    count: u64,
    remaining: u64,
    t_before: u64,
    t_after: u64,
}

impl Gap {
    /// How many of the `remaining` reports fall in `[t0, t1]`, taking the missing reports as
    /// evenly spread over `(t_before, t_after)`: report k of n at t_before + k·Δ/(n + 1).
    fn lost_within(&self, t0: u64, t1: u64) -> u64 {
        if self.remaining == 0 || t1 < t0 || t1 < self.t_before || t0 > self.t_after {
            return 0;
        }
        let n = u128::from(self.count);
        let span = u128::from(self.t_after - self.t_before);
        let in_range = if span == 0 {
            n
        } else {
            // k·span/(n+1) ≥ t0 − t_before  ⇔  k ≥ ⌈(t0 − t_before)(n+1)/span⌉
            let lo = u128::from(t0.saturating_sub(self.t_before)) * (n + 1);
            let k_min = lo.div_ceil(span).max(1);
            let hi = u128::from(t1.min(self.t_after) - self.t_before) * (n + 1);
            let k_max = (hi / span).min(n);
            (k_max + 1).saturating_sub(k_min)
        };
        // Late arrivals are spread evenly too.
        u64::try_from(in_range * u128::from(self.remaining) / n).unwrap_or(u64::MAX)
    }
}

/// Loss accounting for one report stream.
#[derive(Clone, Debug)]
pub struct LossCounter {
    width: SeqWidth,
    /// Highest unwrapped sequence number seen, and when; `None` before the first report.
    highest: Option<u64>,
    highest_t: u64,
    /// The unwrapped number accounting started from (the first report, or a restart).
    first: u64,
    /// Bit i set: report `highest − i` was seen (or precedes the first report).
    seen: u128,
    lost: u64,
    received: u64,
    duplicates: u64,
    /// Arrived more than [`REORDER_WINDOW`] behind: already counted lost and left so.
    too_late: u64,
    restarts: u64,
    /// The last report seen far behind the window: a restart if its successor follows.
    restart_candidate: Option<u64>,
    gaps: Vec<Gap>,
    /// A step beyond [`SUSPECT_JUMP`] awaiting the next report: (number, time).
    pending_jump: Option<(u64, u64)>,
    /// Reports whose number jumped beyond [`SUSPECT_JUMP`] and was not followed on from.
    suspect: u64,
}

impl LossCounter {
    pub fn new(width: SeqWidth) -> Self {
        LossCounter {
            width,
            highest: None,
            highest_t: 0,
            first: 0,
            seen: 0,
            lost: 0,
            received: 0,
            duplicates: 0,
            too_late: 0,
            restarts: 0,
            restart_candidate: None,
            gaps: Vec::new(),
            pending_jump: None,
            suspect: 0,
        }
    }

    /// Account report number `seq` (only its low `width` bits are used) seen at `t_ns`. Times
    /// are taken as non-decreasing: an earlier time is read as the latest time seen.
    pub fn observe(&mut self, seq: u32, t_ns: u64) {
        let m = self.width.modulus();
        let seq = u64::from(seq) & (m - 1);
        let t = t_ns.max(self.highest_t);
        let Some(highest) = self.highest else {
            // Offset by one modulus so that a late report `behind` the first one never
            // unwraps below zero.
            self.highest = Some(m + seq);
            self.first = m + seq;
            self.highest_t = t;
            self.seen = u128::MAX;
            self.received = 1;
            return;
        };
        if let Some((jump, jump_t)) = self.pending_jump.take() {
            let from_jump = seq.wrapping_sub(jump) & (m - 1);
            if from_jump <= SUSPECT_JUMP {
                // The stream carries on from the jump: it was real.
                self.step(highest, jump, jump_t, false);
                return self.observe(seq as u32, t);
            }
            self.suspect += 1;
        }
        self.step(highest, seq, t, true);
    }

    /// Account masked number `seq` against the highest seen; a step beyond [`SUSPECT_JUMP`] is
    /// held for confirmation when `hold`.
    fn step(&mut self, highest: u64, seq: u64, t: u64, hold: bool) {
        let m = self.width.modulus();
        let ahead = seq.wrapping_sub(highest) & (m - 1);
        if hold && ahead > SUSPECT_JUMP && ahead < m / 2 {
            self.pending_jump = Some((seq, t));
        } else if ahead == 0 {
            self.duplicates += 1;
        } else if ahead < m / 2 {
            self.advance(highest.saturating_add(ahead), ahead, t);
        } else {
            let behind = m - ahead;
            if behind < REORDER_WINDOW {
                self.fill(highest - behind, behind);
            } else if self.restart_candidate == Some(seq.wrapping_sub(1) & (m - 1)) {
                // Two consecutive numbers far behind: the switch's counter restarted.
                self.restart(highest, seq, t);
            } else {
                // Out of the window: its gap stays counted lost. It may be a restart's first
                // report; the next one tells.
                self.too_late += 1;
                self.received += 1;
                self.restart_candidate = Some(seq);
            }
        }
    }

    fn advance(&mut self, new: u64, ahead: u64, t: u64) {
        let missing = ahead - 1;
        if missing > 0 {
            self.lost += missing;
            self.gaps.push(Gap {
                first: new - missing,
                count: missing,
                remaining: missing,
                t_before: self.highest_t,
                t_after: t,
            });
        }
        self.seen = if ahead >= 128 { 0 } else { self.seen << ahead };
        self.seen |= 1;
        self.highest = Some(new);
        self.highest_t = t;
        self.received += 1;
    }

    fn fill(&mut self, unwrapped: u64, behind: u64) {
        if unwrapped < self.first {
            // Sent before the first report seen (or before a restart): received, no gap to fill.
            self.received += 1;
            return;
        }
        let bit = 1u128 << behind;
        if self.seen & bit != 0 {
            self.duplicates += 1;
            return;
        }
        self.seen |= bit;
        self.received += 1;
        self.lost = self.lost.saturating_sub(1);
        // Gaps are in sequence order; find the one holding `unwrapped`.
        let i = self.gaps.partition_point(|g| g.first + g.count <= unwrapped);
        if let Some(g) = self.gaps.get_mut(i).filter(|g| g.first <= unwrapped) {
            g.remaining = g.remaining.saturating_sub(1);
        }
    }

    fn restart(&mut self, highest: u64, seq: u64, t: u64) {
        let m = self.width.modulus();
        // Continue the unwrapped numbering above everything seen, keeping `seq`'s low bits.
        let new = (highest / m).saturating_add(1).saturating_mul(m).saturating_add(seq);
        self.restarts += 1;
        // The candidate was received, not late.
        self.too_late = self.too_late.saturating_sub(1);
        self.restart_candidate = None;
        self.highest = Some(new);
        self.first = new;
        self.highest_t = t;
        self.seen = u128::MAX;
        self.received += 1;
    }

    /// Reports missing so far (gaps not filled by late arrivals).
    pub fn lost(&self) -> u64 {
        self.lost
    }

    pub fn received(&self) -> u64 {
        self.received
    }

    /// Reports whose number jumped more than [`SUSPECT_JUMP`] ahead with the next report not
    /// following on (a jump still awaiting its next report counts too): left out of `lost` and
    /// `received`.
    pub fn suspect(&self) -> u64 {
        self.suspect + u64::from(self.pending_jump.is_some())
    }

    pub fn duplicates(&self) -> u64 {
        self.duplicates
    }

    /// Reports that arrived too late to un-count their gap (they remain counted lost).
    pub fn too_late(&self) -> u64 {
        self.too_late
    }

    /// Times the switch's counter jumped back beyond the reorder window (a restart).
    pub fn restarts(&self) -> u64 {
        self.restarts
    }

    /// Reports lost in `[t0_ns, t1_ns]`, each missing report placed evenly between the reports
    /// seen around its gap.
    pub fn lost_between(&self, t0_ns: u64, t1_ns: u64) -> u64 {
        // Gaps are in time order (times are clamped non-decreasing).
        let first = self.gaps.partition_point(|g| g.t_after < t0_ns);
        self.gaps
            .get(first..)
            .unwrap_or(&[])
            .iter()
            .take_while(|g| g.t_before <= t1_ns)
            .map(|g| g.lost_within(t0_ns, t1_ns))
            .sum()
    }
}

/// Loss counters for every report stream seen.
#[derive(Clone, Debug, Default)]
pub struct LossLedger {
    width: SeqWidth,
    streams: FxHashMap<ReportStream, LossCounter>,
    /// Reports come in runs from one stream: the last one's counter is kept out of the map.
    last: Option<(ReportStream, LossCounter)>,
}

impl LossLedger {
    /// Every stream's numbers have `width` bits.
    pub fn new(width: SeqWidth) -> Self {
        LossLedger { width, streams: FxHashMap::default(), last: None }
    }

    pub fn observe(&mut self, stream: ReportStream, seq: u32, t_ns: u64) {
        if self.last.as_ref().is_none_or(|(s, _)| *s != stream) {
            let counter =
                self.streams.remove(&stream).unwrap_or_else(|| LossCounter::new(self.width));
            if let Some((s, c)) = self.last.replace((stream, counter)) {
                self.streams.insert(s, c);
            }
        }
        if let Some((_, c)) = self.last.as_mut() {
            c.observe(seq, t_ns);
        }
    }

    pub fn stream(&self, stream: &ReportStream) -> Option<&LossCounter> {
        match &self.last {
            Some((s, c)) if s == stream => Some(c),
            _ => self.streams.get(stream),
        }
    }

    /// Reports missing over all streams.
    pub fn lost(&self) -> u64 {
        self.streams.values().chain(self.last.as_ref().map(|(_, c)| c)).map(LossCounter::lost).sum()
    }

    /// Reports with an implausible sequence jump over all streams ([`LossCounter::suspect`]).
    pub fn suspect(&self) -> u64 {
        self.streams
            .values()
            .chain(self.last.as_ref().map(|(_, c)| c))
            .map(LossCounter::suspect)
            .sum()
    }

    pub fn lost_between(&self, stream: &ReportStream, t0_ns: u64, t1_ns: u64) -> u64 {
        self.stream(stream).map_or(0, |c| c.lost_between(t0_ns, t1_ns))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn count(width: SeqWidth, seqs: &[u32]) -> LossCounter {
        let mut c = LossCounter::new(width);
        for (i, &s) in seqs.iter().enumerate() {
            c.observe(s, i as u64 * 1_000);
        }
        c
    }

    #[test]
    fn width_moduli_match_the_report_formats() {
        assert_eq!(SeqWidth::Bits32.modulus(), 4_294_967_296);
        assert_eq!(SeqWidth::Bits22.modulus(), 4_194_304);
        assert_eq!(REORDER_WINDOW, 128);
    }

    #[test]
    fn in_order_amlight_vector_counts_seven() {
        let c = count(SeqWidth::Bits32, &[1, 2, 4, 6, 9, 11, 12, 15]);
        assert_eq!(c.lost(), 7);
        assert_eq!(c.received(), 8);
    }

    #[test]
    fn wrap_at_2_pow_32_counts_only_the_gap() {
        let c = count(SeqWidth::Bits32, &[u32::MAX - 1, u32::MAX, 0, 2]);
        assert_eq!(c.lost(), 1);
        assert_eq!(c.restarts(), 0);
    }

    #[test]
    fn wrap_at_2_pow_22_counts_only_the_gap() {
        let c = count(SeqWidth::Bits22, &[(1 << 22) - 2, (1 << 22) - 1, 1, 2]);
        assert_eq!(c.lost(), 1);
        // The upper 10 bits of a 22-bit stream's word are not part of the number.
        let c = count(SeqWidth::Bits22, &[(1 << 22) - 1, (1 << 22) | 5]);
        assert_eq!(c.lost(), 5);
    }

    #[test]
    fn reordered_late_report_uncounts_its_gap() {
        assert_eq!(count(SeqWidth::Bits32, &[1, 2, 4, 3, 5]).lost(), 0);
        assert_eq!(count(SeqWidth::Bits32, &[1, 5, 3, 2]).lost(), 1);
        // Across the wrap too.
        assert_eq!(count(SeqWidth::Bits22, &[(1 << 22) - 1, 1, 0]).lost(), 0);
    }

    #[test]
    fn duplicates_change_nothing() {
        let c = count(SeqWidth::Bits32, &[1, 2, 2, 4, 4, 3, 3]);
        assert_eq!(c.lost(), 0);
        assert_eq!(c.duplicates(), 3);
        assert_eq!(c.received(), 4);
    }

    #[test]
    fn late_beyond_window_stays_lost() {
        let mut seqs = vec![1u32];
        seqs.extend(3..=200);
        seqs.push(2); // 198 behind
        seqs.push(201); // one far-behind report is not a restart
        let c = count(SeqWidth::Bits32, &seqs);
        assert_eq!(c.lost(), 1);
        assert_eq!(c.too_late(), 1);
        assert_eq!(c.restarts(), 0);
        assert_eq!(c.received(), 201);
    }

    #[test]
    fn restart_is_not_a_loss() {
        let c = count(SeqWidth::Bits32, &[100_000, 100_001, 0, 1, 3]);
        assert_eq!(c.restarts(), 1);
        assert_eq!(c.lost(), 1);
    }

    // ---- implausible jumps ----

    #[test]
    fn one_flipped_bit_is_suspect_not_a_billion_lost() {
        // Report 1000 of 2000 with bit 30 of its number flipped (issue 41).
        let seqs: Vec<u32> =
            (1..=2000u32).map(|s| if s == 1000 { s ^ (1 << 30) } else { s }).collect();
        let c = count(SeqWidth::Bits32, &seqs);
        assert_eq!(c.suspect(), 1);
        assert_eq!(c.lost(), 1, "only the corrupt report's own number is missing");
        assert_eq!(c.received(), 1999);
        assert_eq!(c.restarts(), 0);
    }

    #[test]
    fn confirmed_large_jump_is_a_real_loss() {
        let c = count(SeqWidth::Bits32, &[1, 2, 200_000, 200_001, 200_003]);
        assert_eq!(c.suspect(), 0);
        assert_eq!(c.lost(), 199_997 + 1);
        assert_eq!(c.received(), 5);
    }

    #[test]
    fn jump_at_the_end_stays_suspect_until_confirmed() {
        let mut c = count(SeqWidth::Bits22, &[5, 6, 6 + (1 << 20)]);
        assert_eq!((c.suspect(), c.lost(), c.received()), (1, 0, 2));
        c.observe(7 + (1 << 20), 10_000);
        assert_eq!((c.suspect(), c.lost(), c.received()), (0, (1 << 20) - 1, 4));
    }

    #[test]
    fn jump_just_within_the_limit_counts_at_once() {
        let c = count(SeqWidth::Bits32, &[1, 1 + SUSPECT_JUMP as u32]);
        assert_eq!((c.suspect(), c.lost()), (0, SUSPECT_JUMP - 1));
        let c = count(SeqWidth::Bits32, &[1, 2 + SUSPECT_JUMP as u32]);
        assert_eq!((c.suspect(), c.lost()), (1, 0));
    }

    #[test]
    fn lost_between_places_missing_reports_in_their_gap() {
        let mut c = LossCounter::new(SeqWidth::Bits32);
        c.observe(10, 1_000);
        c.observe(14, 5_000); // 11, 12, 13 at 2 000, 3 000, 4 000
        c.observe(15, 6_000);
        c.observe(17, 8_000); // 16 at 7 000
        assert_eq!(c.lost_between(0, 10_000), 4);
        assert_eq!(c.lost_between(2_000, 3_000), 2);
        assert_eq!(c.lost_between(2_500, 6_900), 2);
        assert_eq!(c.lost_between(7_000, 7_000), 1);
        assert_eq!(c.lost_between(8_001, 9_000), 0);
        c.observe(12, 8_500);
        assert_eq!(c.lost_between(0, 10_000), 3);
    }

    #[test]
    fn ledger_keeps_streams_apart() {
        let a = ReportStream { switch_id: 1, hw_id: 0 };
        let b = ReportStream { switch_id: 1, hw_id: 1 };
        let mut l = LossLedger::new(SeqWidth::Bits32);
        for (i, s) in [1u32, 2, 4].into_iter().enumerate() {
            l.observe(a, s, i as u64);
        }
        for (i, s) in [7u32, 8, 9].into_iter().enumerate() {
            l.observe(b, s, i as u64);
        }
        assert_eq!(l.stream(&a).unwrap().lost(), 1);
        assert_eq!(l.stream(&b).unwrap().lost(), 0);
        assert_eq!(l.lost(), 1);
        assert_eq!(l.lost_between(&a, 0, 10), 1);
    }

    proptest! {
        #[test]
        fn random_drops_count_exactly(drop in proptest::collection::vec(any::<bool>(), 1..500),
                                      start in any::<u32>()) {
            let mut c = LossCounter::new(SeqWidth::Bits32);
            c.observe(start, 0);
            let mut expected = 0u64;
            let mut pending = 0u64;
            for (i, d) in drop.iter().enumerate() {
                let seq = start.wrapping_add(i as u32 + 1);
                if *d { pending += 1 } else {
                    expected += pending;
                    pending = 0;
                    c.observe(seq, i as u64);
                }
            }
            prop_assert_eq!(c.lost(), expected);
            prop_assert_eq!(c.lost_between(0, u64::MAX), expected);
        }

        #[test]
        fn local_reordering_loses_nothing(swaps in proptest::collection::vec(any::<bool>(), 1..400),
                                          start in 0u32..(1 << 22)) {
            // Adjacent pairs swapped at random, across the 22-bit wrap for some starts.
            let mut seqs: Vec<u32> = (0..swaps.len() as u32 * 2).map(|i| start + i).collect();
            for (pair, swap) in seqs.chunks_mut(2).zip(&swaps) {
                if *swap { pair.swap(0, 1) }
            }
            for width in [SeqWidth::Bits32, SeqWidth::Bits22] {
                let mut c = LossCounter::new(width);
                for (i, s) in seqs.iter().enumerate() {
                    c.observe(*s, i as u64);
                }
                prop_assert_eq!(c.lost(), 0);
                prop_assert_eq!(c.received(), seqs.len() as u64);
                prop_assert_eq!(c.duplicates(), 0);
            }
        }

        #[test]
        fn arbitrary_sequences_never_panic(seqs in proptest::collection::vec(any::<u32>(), 0..300),
                                           ts in proptest::collection::vec(any::<u64>(), 300)) {
            for width in [SeqWidth::Bits32, SeqWidth::Bits22] {
                let mut c = LossCounter::new(width);
                for (s, t) in seqs.iter().zip(&ts) {
                    c.observe(*s, *t);
                }
                let _ = c.lost_between(0, u64::MAX);
                let _ = c.lost_between(ts[0], ts[1]);
            }
        }
    }
}
