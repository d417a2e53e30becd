//! The per-queue rise/fall state machine (int-telemetry.md §14, §16.2): the microburst
//! definition of Cisco Nexus micro-burst monitoring, Arista LANZ and Juniper QFX queue
//! monitoring, with a minimum duration and a merge gap.
//!
//! ```text
//! IDLE     --occ ≥ rise-->                      IN_BURST (start = t)
//! IN_BURST --occ < fall-->                      CLOSING  (end = t)
//! CLOSING  --occ ≥ rise, t − end ≤ merge_gap--> IN_BURST (same burst)
//! CLOSING  --t − end > merge_gap-->             emit if end − start ≥ min_duration; IDLE
//! ```
//!
//! A burst spans `[start, end]`: the first sample at or above rise and the first sample below
//! fall after the last re-rise. Samples in a merge gap join the burst when it re-rises and are
//! dropped from it otherwise. A burst still open when the input ends closes at its queue's last
//! sample. The victims' baseline is the median hop latency of the queue's samples outside
//! IN_BURST (merge-gap samples included, as they are below fall), or the least latency seen
//! when every sample was in a burst; the same samples give each flow's usual share of the
//! queue, against which culprits are judged ([`crate::attribution`]).
//!
//! With fixed thresholds every sample goes through the machine as it comes. With a rise taken
//! from each queue's deepest occupancy ([`Rise::OfDeepest`]) the thresholds are known only at
//! the end, but those of the deepest occupancy so far bound them from below. So a queue holds
//! back the runs of samples that could belong to a burst — from a sample at the bound's rise
//! until a sample under its fall is followed by nothing at that fall for a merge gap — releases
//! what a deeper queue puts under the rise (a run's samples before its first at the new rise;
//! a whole run that never reached it), and replays the rest at
//! [`Detector::finish`]. Every other sample is outside any burst and counted as it comes. The
//! result is the same as a run at the final thresholds; memory holds only the runs that still
//! reach the rise of the deepest occupancy seen.
//!
//! Input order: samples must be time-ordered **per queue**; queues may interleave in any order
//! (a gap closes lazily, on the queue's next sample or at [`Detector::finish`]). A sample older
//! than its queue's previous one is read at the previous one's time and counted in
//! [`Detector::out_of_order`].

use super::Burst;
use super::machine::{Machine, Outside};
use super::median::LogHistogram;
pub use super::params::{Fall, HysteresisParams, Rise, Thresholds};
use crate::attribution::DEFAULT_TOP_K;
use crate::loss::{LossLedger, SeqWidth};
use crate::observation::{Observation, QueueKey, ReportStream};
use rustc_hash::FxHashMap;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// A run of samples held back until the thresholds are known.
#[derive(Debug)]
struct Held {
    samples: VecDeque<Observation>,
    peak: u64,
    /// The first sample under the fall bound since the last one at or above it.
    below_since: Option<u64>,
}

impl Held {
    /// Count outside the samples before the first at or above `rise_bytes`: no burst can open
    /// earlier. Returns whether any sample is left.
    fn trim(&mut self, rise_bytes: u64, outside: &mut Outside) -> bool {
        while let Some(o) = self.samples.front()
            && o.occupancy_bytes < rise_bytes
        {
            outside.observe(o);
            self.samples.pop_front();
        }
        !self.samples.is_empty()
    }
}

/// The runs of a queue whose thresholds wait for its deepest occupancy. The thresholds of the
/// deepest occupancy so far bound the final ones from below (the rise only grows with it): under
/// that rise a sample can open no burst, under that fall it can keep none open, and a run that
/// never reached that rise holds no burst — its samples are outside, counted at once.
#[derive(Debug, Default)]
struct Deferred {
    current: Option<Held>,
    /// Ended runs in time order; a released run is left empty.
    held: Vec<Held>,
    /// Held runs by peak, lowest first, to release those a deeper queue rules out.
    by_peak: BinaryHeap<Reverse<(u64, usize)>>,
}

impl Deferred {
    fn push(&mut self, obs: &Observation, bound: Thresholds, gap_ns: u64, outside: &mut Outside) {
        let (t, occ) = (obs.t_ns, obs.occupancy_bytes);
        let ended =
            self.current.as_ref().and_then(|h| h.below_since).is_some_and(|b| t - b > gap_ns);
        if ended && let Some(h) = self.current.take() {
            self.keep(h, bound, outside);
        }
        match &mut self.current {
            Some(h) => {
                h.peak = h.peak.max(occ);
                h.below_since =
                    if occ < bound.fall_bytes { h.below_since.or(Some(t)) } else { None };
                h.samples.push_back(*obs);
            }
            None if occ >= bound.rise_bytes => {
                let samples = VecDeque::from([*obs]);
                self.current = Some(Held { samples, peak: occ, below_since: None });
            }
            None => outside.observe(obs),
        }
    }

    /// Hold an ended run from its first sample at the rise bound (none: it is all outside).
    fn keep(&mut self, mut h: Held, bound: Thresholds, outside: &mut Outside) {
        if h.trim(bound.rise_bytes, outside) {
            self.by_peak.push(Reverse((h.peak, self.held.len())));
            self.held.push(h);
        }
    }

    /// The rise bound went up to `rise_bytes`: the current run starts at its first sample that
    /// high (if any), and the held runs that stayed under it are released.
    fn raise(&mut self, rise_bytes: u64, outside: &mut Outside) {
        if let Some(h) = self.current.as_mut()
            && !h.trim(rise_bytes, outside)
        {
            self.current = None;
        }
        while let Some(&Reverse((peak, i))) = self.by_peak.peek()
            && peak < rise_bytes
        {
            self.by_peak.pop();
            if let Some(h) = self.held.get_mut(i) {
                std::mem::take(&mut h.samples).iter().for_each(|o| outside.observe(o));
            }
        }
    }

    /// The runs still held, in time order, the current one last.
    fn into_runs(self) -> impl Iterator<Item = Held> {
        self.held.into_iter().chain(self.current).filter(|h| !h.samples.is_empty())
    }
}

/// How a queue meets its samples.
#[derive(Debug)]
enum Mode {
    /// Thresholds known: through the machine as they come.
    Streaming(Machine, Thresholds),
    /// Thresholds wait for the deepest occupancy: the runs that may hold a burst are kept.
    Deferred(Deferred),
}

#[derive(Debug)]
struct QueueState {
    key: QueueKey,
    last_t: Option<u64>,
    /// Spacing of consecutive samples: the resolution.
    spacing: LogHistogram,
    min_latency: Option<u64>,
    deepest: u64,
    /// Report streams that carried this queue's samples, for reports lost during a burst.
    streams: Vec<ReportStream>,
    outside: Outside,
    mode: Mode,
}

impl QueueState {
    fn new(key: QueueKey, p: &HysteresisParams) -> Self {
        let mode = if p.relative() {
            Mode::Deferred(Deferred::default())
        } else {
            Mode::Streaming(Machine::default(), p.thresholds(0))
        };
        QueueState {
            key,
            last_t: None,
            spacing: LogHistogram::new(),
            min_latency: None,
            deepest: 0,
            streams: Vec::new(),
            outside: Outside::new(),
            mode,
        }
    }

    /// Returns whether the sample was out of order.
    fn push(&mut self, obs: &Observation, p: &HysteresisParams) -> bool {
        let late = self.last_t.is_some_and(|l| obs.t_ns < l);
        let t = self.last_t.map_or(obs.t_ns, |l| l.max(obs.t_ns));
        let obs = &Observation { t_ns: t, ..*obs };
        if let Some(l) = self.last_t {
            self.spacing.record(t - l);
        }
        self.last_t = Some(t);
        if let Some((stream, _)) = obs.report
            && !self.streams.contains(&stream)
        {
            self.streams.push(stream);
        }
        if let Some(lat) = obs.hop_latency_ns {
            self.min_latency = Some(self.min_latency.map_or(lat, |m| m.min(lat)));
        }
        let deeper = obs.occupancy_bytes > self.deepest;
        self.deepest = self.deepest.max(obs.occupancy_bytes);
        match &mut self.mode {
            Mode::Streaming(machine, th) => machine.push(obs, p, *th, &mut self.outside),
            Mode::Deferred(d) => {
                let bound = p.thresholds(self.deepest);
                if deeper {
                    d.raise(bound.rise_bytes, &mut self.outside);
                }
                d.push(obs, bound, p.merge_gap_ns, &mut self.outside);
            }
        }
        late
    }

    /// Close what is open (replaying held samples at the queue's thresholds) and return the
    /// machine that holds the queue's bursts, with those thresholds.
    fn finish(&mut self, p: &HysteresisParams) -> (Machine, Thresholds) {
        let last_ns = self.last_t.unwrap_or(0);
        match std::mem::replace(&mut self.mode, Mode::Streaming(Machine::default(), p.lowest())) {
            Mode::Streaming(mut machine, th) => {
                machine.close(p, last_ns);
                (machine, th)
            }
            Mode::Deferred(d) => {
                let th = p.thresholds(self.deepest);
                let mut machine = Machine::default();
                for h in d.into_runs() {
                    for o in &h.samples {
                        machine.push(o, p, th, &mut self.outside);
                    }
                    // The run ended because no sample reached even the fall bound for a merge
                    // gap (or the input ended): whatever is open closes here.
                    machine.close(p, h.samples.back().map_or(last_ns, |o| o.t_ns));
                }
                (machine, th)
            }
        }
    }
}

impl QueueState {
    /// Samples held back waiting for the thresholds.
    fn held(&self) -> usize {
        match &self.mode {
            Mode::Streaming(..) => 0,
            Mode::Deferred(d) => {
                d.held.iter().chain(&d.current).map(|h| h.samples.len()).sum::<usize>()
            }
        }
    }

    /// Fix the thresholds at those of the deepest occupancy so far: the ended runs held are
    /// replayed at them and closed (as at [`QueueState::finish`]), the current one replayed and
    /// left open, and later samples go through the machine as they come. Returns whether the
    /// queue was waiting.
    fn settle(&mut self, p: &HysteresisParams) -> bool {
        if matches!(self.mode, Mode::Streaming(..)) {
            return false;
        }
        let th = p.thresholds(self.deepest);
        let Mode::Deferred(d) =
            std::mem::replace(&mut self.mode, Mode::Streaming(Machine::default(), th))
        else {
            unreachable!("checked above")
        };
        let Mode::Streaming(machine, _) = &mut self.mode else { unreachable!("set above") };
        for h in d.held.iter().filter(|h| !h.samples.is_empty()) {
            h.samples.iter().for_each(|o| machine.push(o, p, th, &mut self.outside));
            machine.close(p, h.samples.back().map_or(0, |o| o.t_ns));
        }
        for o in d.current.iter().flat_map(|h| &h.samples) {
            machine.push(o, p, th, &mut self.outside);
        }
        true
    }
}

/// The hysteresis detector over every queue it is shown.
#[derive(Debug)]
pub struct Detector {
    params: HysteresisParams,
    top_k: usize,
    loss: LossLedger,
    index: FxHashMap<QueueKey, usize>,
    queues: Vec<QueueState>,
    /// The last queue's slot: samples come in runs from one queue.
    last: Option<(QueueKey, usize)>,
    observations: u64,
    out_of_order: u64,
    /// Samples deeper than the stated buffer, kept out of the bursts.
    suspect_occupancy: u64,
    /// Whether occupancies are a device's reports, which cannot exceed its buffer (a queue
    /// rebuilt from two captures can: it also holds what the device dropped).
    reported_occupancy: bool,
}

impl Detector {
    /// A detector with culprit/victim lists of [`DEFAULT_TOP_K`] and 32-bit report sequence
    /// numbers (TR v0.5 / v1.0).
    pub fn new(params: HysteresisParams) -> Self {
        Detector {
            params,
            top_k: DEFAULT_TOP_K,
            loss: LossLedger::new(SeqWidth::Bits32),
            index: FxHashMap::default(),
            queues: Vec::new(),
            last: None,
            observations: 0,
            out_of_order: 0,
            suspect_occupancy: 0,
            reported_occupancy: false,
        }
    }

    /// Keep at most `k` culprits and `k` victims per burst.
    pub fn with_top_k(mut self, k: usize) -> Self {
        self.top_k = k;
        self
    }

    /// Sequence width of the report streams (22 bits for TR v2.0). Call before any `push`.
    pub fn with_seq_width(mut self, width: SeqWidth) -> Self {
        self.loss = LossLedger::new(width);
        self
    }

    /// The occupancies pushed are a device's own reports: one above the stated buffer
    /// ([`HysteresisParams::buffer_bytes`]) is counted suspect and kept out of the bursts.
    pub fn with_reported_occupancy(mut self) -> Self {
        self.reported_occupancy = true;
        self
    }

    pub fn params(&self) -> &HysteresisParams {
        &self.params
    }

    pub fn push(&mut self, obs: &Observation) {
        self.observations += 1;
        if let Some((stream, seq)) = obs.report {
            self.loss.observe(stream, seq, obs.t_ns);
        }
        if self.reported_occupancy
            && self.params.buffer_bytes.is_some_and(|b| obs.occupancy_bytes > b)
        {
            self.suspect_occupancy += 1;
            return;
        }
        let i = match self.last {
            Some((key, i)) if key == obs.queue => i,
            _ => {
                let i = match self.index.get(&obs.queue) {
                    Some(&i) => i,
                    None => {
                        self.queues.push(QueueState::new(obs.queue, &self.params));
                        self.index.insert(obs.queue, self.queues.len() - 1);
                        self.queues.len() - 1
                    }
                };
                self.last = Some((obs.queue, i));
                i
            }
        };
        if let Some(q) = self.queues.get_mut(i)
            && q.push(obs, &self.params)
        {
            self.out_of_order += 1;
        }
    }

    /// Report loss over every stream seen so far.
    pub fn loss(&self) -> &LossLedger {
        &self.loss
    }

    pub fn observations(&self) -> u64 {
        self.observations
    }

    /// Samples whose occupancy exceeds the stated buffer ([`HysteresisParams::buffer_bytes`]):
    /// counted here, not in any burst.
    pub fn suspect_occupancy(&self) -> u64 {
        self.suspect_occupancy
    }

    /// Samples older than their queue's previous sample.
    pub fn out_of_order(&self) -> u64 {
        self.out_of_order
    }

    /// Close what is open and return every burst not yet taken by [`Detector::take_closed`],
    /// in order of start time then queue.
    pub fn finish(mut self) -> Vec<Burst> {
        let mut bursts = Vec::new();
        for q in &mut self.queues {
            let (mut machine, th) = q.finish(&self.params);
            let closed = std::mem::take(&mut machine.closed);
            bursts.extend(
                closed.into_iter().map(|c| q.burst(c, th, &self.params, &self.loss, self.top_k)),
            );
        }
        bursts.sort_by_key(|b| (b.start_ns, b.queue));
        bursts
    }

    /// The bursts that have ended so far on queues whose thresholds are fixed (a queue with a
    /// rise from its deepest occupancy knows its bursts only at [`Detector::finish`]), in order
    /// of start time then queue; each is returned once, and `finish` leaves them out. A burst
    /// ends when its queue's next sample comes a merge gap after its fall. Culprits and victims
    /// are judged against the queue's traffic outside bursts up to now (`finish` judges against
    /// all of it), so a live collector can name them as the burst ends.
    pub fn take_closed(&mut self) -> Vec<Burst> {
        let mut bursts = Vec::new();
        for q in &mut self.queues {
            let Mode::Streaming(machine, th) = &mut q.mode else { continue };
            if machine.closed.is_empty() {
                continue;
            }
            let (closed, th) = (std::mem::take(&mut machine.closed), *th);
            bursts.extend(
                closed.into_iter().map(|c| q.burst(c, th, &self.params, &self.loss, self.top_k)),
            );
        }
        bursts.sort_by_key(|b| (b.start_ns, b.queue));
        bursts
    }

    /// Samples held back by queues whose rise waits for their deepest occupancy.
    pub fn held_samples(&self) -> usize {
        self.queues.iter().map(QueueState::held).sum()
    }

    /// Fix the thresholds of every queue whose rise waits for its deepest occupancy at those
    /// of its deepest occupancy so far, so its bursts come out of [`Detector::take_closed`] as
    /// they end and nothing more is held for it. What was held is judged as `finish` would
    /// judge it had the capture ended here; later samples are judged at these thresholds even
    /// if the queue goes deeper. Returns how many queues were settled.
    pub fn settle(&mut self) -> usize {
        let p = self.params;
        self.queues.iter_mut().map(|q| q.settle(&p)).filter(|&settled| settled).count()
    }

    /// Queues seen so far.
    pub fn queues(&self) -> usize {
        self.queues.len()
    }
}

impl QueueState {
    /// A closed burst of this queue with its definition, report loss and roles as of now.
    fn burst(
        &self,
        c: super::machine::Closed,
        th: Thresholds,
        p: &HysteresisParams,
        loss: &LossLedger,
        top_k: usize,
    ) -> Burst {
        let baseline = self.outside.baseline.median().or(self.min_latency);
        let reports_lost =
            self.streams.iter().map(|s| loss.lost_between(s, c.start_ns, c.end_ns)).sum();
        let roles = c.attribution.roles(&self.outside.usual, baseline, top_k);
        Burst {
            queue: self.key,
            start_ns: c.start_ns,
            end_ns: c.end_ns,
            peak_bytes: c.peak_bytes,
            peak_ns: c.peak_ns,
            bytes: c.counts.bytes,
            drops: c.counts.drops,
            reports: c.counts.samples,
            reports_lost,
            definition: p.definition(th),
            resolution_ns: self.spacing.median().unwrap_or(0),
            culprits: roles.culprits,
            victims: roles.victims,
            culprit_flows: roles.culprit_flows,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attribution::test_flow as flow;
    use crate::detect::Definition;
    use proptest::prelude::*;

    const Q: QueueKey = QueueKey { switch_id: 1, port: 2, queue_id: 0 };
    const US: u64 = 1_000;

    fn depth(queue: QueueKey, t_ns: u64, occupancy_bytes: u64) -> Observation {
        Observation {
            t_ns,
            queue,
            occupancy_bytes,
            flow: None,
            packet_bytes: 1_000,
            hop_latency_ns: None,
            dropped: false,
            report: None,
        }
    }

    fn params(rise: u64, fall: u64, min_duration_ns: u64, merge_gap_ns: u64) -> HysteresisParams {
        HysteresisParams::fixed(rise, fall, min_duration_ns, merge_gap_ns)
    }

    /// One sample per µs: up 1 000 B/µs from 0 to 100 kB at 100 µs, then down to 0 at 200 µs.
    fn ramp(d: &mut Detector, queue: QueueKey, t0: u64) {
        for i in 0..=200u64 {
            let occ = if i <= 100 { 1_000 * i } else { 1_000 * (200 - i) };
            d.push(&depth(queue, t0 + i * US, occ));
        }
    }

    // ---- IDLE / IN_BURST / CLOSING on a ramp ----

    #[test]
    fn ramp_gives_exact_start_end_peak() {
        let mut d = Detector::new(params(50_000, 20_000, 0, 0));
        ramp(&mut d, Q, 0);
        let b = d.finish();
        assert_eq!(b.len(), 1);
        let b = &b[0];
        // First sample ≥ 50 kB at 50 µs; peak 100 kB at 100 µs; first < 20 kB at 181 µs.
        assert_eq!(
            (b.start_ns, b.peak_bytes, b.peak_ns, b.end_ns),
            (50 * US, 100_000, 100 * US, 181 * US)
        );
        assert_eq!(b.reports, 132);
        assert_eq!(b.bytes, 132_000);
        assert_eq!(b.drops, 0);
        assert_eq!(b.resolution_ns, US);
        assert_eq!(b.queue, Q);
        assert_eq!(
            b.definition,
            Definition::Hysteresis {
                rise_bytes: 50_000,
                fall_bytes: 20_000,
                min_duration_s: 0.0,
                merge_gap_s: 0.0,
                rise_of_deepest: None,
            }
        );
    }

    #[test]
    fn idle_never_reaching_rise_gives_nothing() {
        let mut d = Detector::new(params(100_001, 20_000, 0, 0));
        ramp(&mut d, Q, 0);
        assert!(d.finish().is_empty());
    }

    #[test]
    fn in_burst_at_end_of_input_closes_at_last_sample() {
        let mut d = Detector::new(params(50_000, 20_000, 0, 0));
        for i in 0..=100u64 {
            d.push(&depth(Q, i * US, 1_000 * i));
        }
        let b = d.finish();
        assert_eq!((b[0].start_ns, b[0].end_ns), (50 * US, 100 * US));
    }

    #[test]
    fn closing_min_duration_discards_short_bursts() {
        // Rise at 50 µs, fall at 181 µs: 131 µs long.
        let mut d = Detector::new(params(50_000, 20_000, 131 * US, 0));
        ramp(&mut d, Q, 0);
        assert_eq!(d.finish().len(), 1);
        let mut d = Detector::new(params(50_000, 20_000, 131 * US + 1, 0));
        ramp(&mut d, Q, 0);
        assert!(d.finish().is_empty());
    }

    /// Two 10 µs bursts of 60 kB, the second starting `gap` after the first fell.
    fn two_bursts(merge_gap_ns: u64, gap: u64) -> Vec<Burst> {
        let mut d = Detector::new(params(50_000, 20_000, 0, merge_gap_ns));
        let mut t = 0;
        for _ in 0..2 {
            for occ in [0, 60_000, 60_000, 10_000] {
                d.push(&depth(Q, t, occ));
                t += 5 * US;
            }
            t += gap - 5 * US;
        }
        d.push(&depth(Q, t + 1_000 * US, 0));
        d.finish()
    }

    #[test]
    fn closing_rerise_within_merge_gap_merges() {
        // First: 5..15 µs. Second rises at 15 + 40 + 5 = 60 µs, i.e. 45 µs after the fall.
        let b = two_bursts(50 * US, 40 * US);
        assert_eq!(b.len(), 1);
        assert_eq!((b[0].start_ns, b[0].end_ns), (5 * US, 70 * US));
        // Both bursts' samples and the gap sample in between.
        assert_eq!(b[0].reports, 7);
        // Exactly at the gap still merges.
        assert_eq!(two_bursts(45 * US, 40 * US).len(), 1);
    }

    #[test]
    fn closing_rerise_after_merge_gap_is_a_new_burst() {
        let b = two_bursts(44 * US, 40 * US);
        assert_eq!(b.len(), 2);
        assert_eq!((b[0].start_ns, b[0].end_ns), (5 * US, 15 * US));
        assert_eq!((b[1].start_ns, b[1].end_ns), (60 * US, 70 * US));
        assert_eq!(b[0].reports, 3);
    }

    #[test]
    fn percent_thresholds_drive_the_detector() {
        // 200 kB buffer, 25 % / 10 %: rise 50 kB, fall 20 kB: the ramp's burst exactly.
        let p = HysteresisParams::from_buffer_percent(200_000, 25.0, 10.0, 0, 0).unwrap();
        let mut d = Detector::new(p);
        ramp(&mut d, Q, 0);
        let b = d.finish();
        assert_eq!((b[0].start_ns, b[0].end_ns), (50 * US, 181 * US));
    }

    #[test]
    fn occupancy_beyond_the_stated_buffer_is_suspect_not_a_burst() {
        // 2 MB buffer; one sample reads 671 MB (a flipped bit in the field, issue 41).
        let p = HysteresisParams::from_options(None, None, Some(2_000_000), None, None);
        let mut d = Detector::new(p).with_reported_occupancy();
        for i in 0..100u64 {
            let occ = if i == 50 { 671_088_640 } else { 10_000 };
            d.push(&depth(Q, i * US, occ));
        }
        assert_eq!(d.suspect_occupancy(), 1);
        assert_eq!(d.observations(), 100);
        assert!(d.finish().is_empty());
        // A full buffer is real.
        let mut d = Detector::new(p).with_reported_occupancy();
        d.push(&depth(Q, 0, 2_000_000));
        assert_eq!(d.suspect_occupancy(), 0);
        assert_eq!(d.finish().len(), 1);
    }

    #[test]
    fn fall_above_rise_is_read_as_rise() {
        let mut d = Detector::new(params(50_000, 90_000, 0, 0));
        ramp(&mut d, Q, 0);
        let b = d.finish();
        // Falls below 50 kB first at 151 µs.
        assert_eq!((b[0].start_ns, b[0].end_ns), (50 * US, 151 * US));
        assert!(matches!(b[0].definition, Definition::Hysteresis { fall_bytes: 50_000, .. }));
    }

    #[test]
    fn two_queues_interleaved_are_tracked_independently() {
        let q2 = QueueKey { switch_id: 1, port: 3, queue_id: 0 };
        let mut d = Detector::new(params(50_000, 20_000, 0, 0));
        for i in 0..=200u64 {
            let occ = if i <= 100 { 1_000 * i } else { 1_000 * (200 - i) };
            d.push(&depth(Q, i * US, occ));
            // The second queue is 1 000 µs later and half as deep.
            d.push(&depth(q2, 1_000 * US + i * US, occ / 2));
        }
        let b = d.finish();
        assert_eq!(b.len(), 2);
        assert_eq!((b[0].queue, b[0].start_ns, b[0].end_ns), (Q, 50 * US, 181 * US));
        assert_eq!((b[1].queue, b[1].start_ns, b[1].peak_bytes), (q2, 1_100 * US, 50_000));
        assert_eq!(b[1].end_ns, 1_161 * US);
    }

    #[test]
    fn out_of_order_sample_is_read_at_its_queue_time() {
        let mut d = Detector::new(params(50_000, 20_000, 0, 0));
        d.push(&depth(Q, 100, 0));
        d.push(&depth(Q, 50, 60_000));
        d.push(&depth(Q, 200, 0));
        assert_eq!(d.out_of_order(), 1);
        let b = d.finish();
        assert_eq!((b[0].start_ns, b[0].end_ns), (100, 200));
    }

    // ---- attribution and loss through the detector ----

    fn packet(t_ns: u64, occ: u64, f: u8, latency: u64) -> Observation {
        Observation { flow: Some(flow(f)), hop_latency_ns: Some(latency), ..depth(Q, t_ns, occ) }
    }

    #[test]
    fn in_burst_culprits_and_victims() {
        let mut d = Detector::new(params(10_000, 5_000, 0, 0));
        // Quiet: flow 9 sees 2 µs of latency.
        for i in 0..50u64 {
            d.push(&packet(i * US, 0, 9, 2 * US));
        }
        // Growth 50..90 µs: flow 1 sends three packets for each of flow 2's.
        for i in 0..40u64 {
            let f = if i % 4 == 3 { 2 } else { 1 };
            d.push(&packet(50 * US + i * US, 10_000 + 1_000 * i, f, 2 * US + i * US / 2));
        }
        // Drain from 90 µs, below fall at 126 µs: depth-only samples, then from 120 µs flow 9
        // waits 30 µs (enqueued after the peak, so no culprit); flow 3 is dropped at 95 µs.
        for i in 0..40u64 {
            let t = 90 * US + i * US;
            let occ = 49_000 - 1_250 * i;
            if i == 5 {
                d.push(&Observation {
                    dropped: true,
                    hop_latency_ns: None,
                    ..packet(t, occ, 3, 0)
                });
            } else if i < 30 {
                d.push(&depth(Q, t, occ));
            } else {
                d.push(&packet(t, occ, 9, 30 * US));
            }
        }
        for i in 0..10u64 {
            d.push(&packet(131 * US + i * US, 0, 9, 2 * US));
        }
        let b = d.finish();
        assert_eq!(b.len(), 1);
        let b = &b[0];
        assert_eq!((b.start_ns, b.peak_ns, b.end_ns), (50 * US, 89 * US, 126 * US));
        assert_eq!(b.drops, 1);
        assert_eq!(b.culprits[0].flow, flow(1));
        assert_eq!(b.culprits[0].share, 0.75);
        // Flows 1 and 2 are new to this queue: both filled it, both are culprits. Flow 2 also
        // waited (up to 2 + 39/2 = 21.5 µs), but a culprit is not its own burst's victim.
        assert_eq!(b.culprits.len(), 2);
        assert_eq!(b.culprit_flows, vec![flow(1), flow(2)]);
        // Baseline 2 µs: flow 9, the queue's usual traffic, waited 28 µs more.
        let victims: Vec<_> = b.victims.iter().map(|v| (v.flow, v.delay_ns, v.drops)).collect();
        assert_eq!(victims, vec![(flow(9), 28 * US, 0), (flow(3), 0, 1)]);
    }

    #[test]
    fn in_burst_reports_lost_counts_only_gaps_during_the_burst() {
        let stream = ReportStream { switch_id: 1, hw_id: 0 };
        let mut d = Detector::new(params(50_000, 20_000, 0, 0));
        let mut seq = 0u32;
        for i in 0..=200u64 {
            seq += 1;
            // Lose report 10 (before the burst) and reports 100 and 101 (in it).
            if seq == 10 || seq == 100 {
                seq += if seq == 100 { 2 } else { 1 };
            }
            let occ = if i <= 100 { 1_000 * i } else { 1_000 * (200 - i) };
            d.push(&Observation { report: Some((stream, seq)), ..depth(Q, i * US, occ) });
        }
        assert_eq!(d.loss().lost(), 3);
        let b = d.finish();
        assert_eq!(b[0].reports_lost, 2);
    }

    #[test]
    fn in_burst_22_bit_sequence_wrap_is_not_loss() {
        let stream = ReportStream { switch_id: 1, hw_id: 0 };
        let mut d = Detector::new(params(50_000, 20_000, 0, 0)).with_seq_width(SeqWidth::Bits22);
        for i in 0..=200u64 {
            let seq = ((1u64 << 22) - 100 + i) as u32 & ((1 << 22) - 1);
            let occ = if i <= 100 { 1_000 * i } else { 1_000 * (200 - i) };
            d.push(&Observation { report: Some((stream, seq)), ..depth(Q, i * US, occ) });
        }
        assert_eq!(d.loss().lost(), 0);
        assert_eq!(d.finish()[0].reports_lost, 0);
    }

    #[test]
    fn json_of_detected_burst_parses_back() {
        let mut d = Detector::new(params(50_000, 20_000, 0, 0));
        ramp(&mut d, Q, 0);
        let v = serde_json::to_value(&d.finish()[0]).unwrap();
        assert_eq!(v["start_s"], 5e-5);
        assert_eq!(v["end_s"], 1.81e-4);
        assert_eq!(v["definition"]["kind"], "hysteresis");
        assert_eq!(v["definition"]["fall_bytes"], 20_000);
    }

    // ---- thresholds from the deepest occupancy (the buffer unknown) ----

    /// A 10 Gbit/s port's routine: every 500 µs a 60 µs train of two flows' TSO bursts reaching
    /// 90 kB; at 5 ms and 20 ms a burst filling 2 MB over 4 ms and draining over 2 ms.
    fn routine_and_two_bursts_samples() -> Vec<Observation> {
        (0..30_000 * US)
            .step_by(US as usize)
            .map(|t| {
                let ms = t / 1_000_000;
                let occ = if (5..11).contains(&ms) || (20..26).contains(&ms) {
                    let into = t % 15_000_000 - 5_000_000;
                    if into < 4_000_000 { into / 2 } else { 2_000_000 - (into - 4_000_000) }
                } else {
                    let phase = t % (500 * US);
                    if phase < 60 * US { 1_500 * (phase / US) } else { 0 }
                };
                depth(Q, t, occ)
            })
            .collect()
    }

    fn routine_and_two_bursts(d: &mut Detector) {
        routine_and_two_bursts_samples().iter().for_each(|o| d.push(o));
    }

    #[test]
    fn deepest_rise_keeps_routine_trains_out_and_finds_both_bursts() {
        let mut d = Detector::new(HysteresisParams::from_options(None, None, None, None, None));
        routine_and_two_bursts(&mut d);
        let b = d.finish();
        let found: Vec<(u64, u64)> = b.iter().map(|b| (b.start_ns, b.peak_bytes)).collect();
        // Rise: half of the 2 MB reached, 1 MB, first met 2 ms into each burst.
        assert_eq!(found, vec![(7_000 * US, 2_000_000), (22_000 * US, 2_000_000)]);
        assert!(matches!(
            b[0].definition,
            Definition::Hysteresis {
                rise_bytes: 1_000_000,
                fall_bytes: 500_000,
                rise_of_deepest: Some(0.5),
                ..
            }
        ));
        // What a fixed 64 kB rise (the old default) made of the same port: every train a burst.
        let mut d = Detector::new(params(64_000, 32_000, 0, 0));
        routine_and_two_bursts(&mut d);
        assert!(d.finish().len() > 30);
    }

    #[test]
    fn a_settled_queue_gives_finishs_bursts_as_they_end() {
        let p = HysteresisParams::from_options(None, None, None, None, None);
        let samples = routine_and_two_bursts_samples();
        let mut whole = Detector::new(p);
        samples.iter().for_each(|o| whole.push(o));
        let want: Vec<(u64, u64, u64)> =
            whole.finish().iter().map(|b| (b.start_ns, b.end_ns, b.peak_bytes)).collect();
        // Settled at 12 ms: the first burst has filled the queue to its deepest and ended.
        let mut d = Detector::new(p);
        let (before, after) = samples.split_at(12_000);
        before.iter().for_each(|o| d.push(o));
        assert!(d.held_samples() > 0);
        assert!(d.take_closed().is_empty(), "a waiting queue knows its bursts only at the end");
        assert_eq!((d.settle(), d.held_samples(), d.settle()), (1, 0, 0));
        let mut got = d.take_closed();
        assert_eq!(got.len(), 1);
        after.iter().for_each(|o| d.push(o));
        got.extend(d.take_closed());
        assert_eq!(d.held_samples(), 0);
        got.extend(d.finish());
        let got: Vec<(u64, u64, u64)> =
            got.iter().map(|b| (b.start_ns, b.end_ns, b.peak_bytes)).collect();
        assert_eq!(got, want);
        assert_eq!(want.len(), 2);
    }

    #[test]
    fn deeper_queue_releases_the_runs_it_rules_out() {
        let mut d = Detector::new(HysteresisParams::from_options(None, None, None, None, None));
        // Five 60 µs trains to 88.5 kB, 500 µs apart: each is held (it reaches half of 88.5 kB).
        for i in 0..2_500u64 {
            let phase = i % 500;
            d.push(&depth(Q, i * US, if phase < 60 { 1_500 * phase } else { 0 }));
        }
        assert!(d.held_samples() > 5 * 20);
        // A queue of 2 MB puts the rise at 1 MB: the trains are released, only the burst is held.
        for i in 0..=100u64 {
            d.push(&depth(Q, 3_000 * US + i * US, 20_000 * i));
        }
        assert_eq!(d.held_samples(), 51);
        assert_eq!(d.finish().len(), 1);
    }

    #[test]
    fn deepest_rise_has_a_floor_on_a_quiet_queue() {
        // A queue that never held more than three packets has no burst.
        let mut d = Detector::new(HysteresisParams::from_options(None, None, None, None, None));
        for i in 0..1_000u64 {
            d.push(&depth(Q, i * US, 1_500 * (i % 4)));
        }
        assert!(d.finish().is_empty());
    }

    #[test]
    fn deepest_rise_is_per_queue() {
        // Queue Q peaks at 100 kB, queue q2 at 50 kB: each gets half its own deepest.
        let q2 = QueueKey { switch_id: 1, port: 3, queue_id: 0 };
        let p = HysteresisParams {
            rise: Rise::OfDeepest { fraction: 0.5, floor_bytes: 1 },
            fall: Fall::OfRise(0.5),
            min_duration_ns: 0,
            merge_gap_ns: 0,
            buffer_bytes: None,
        };
        let mut d = Detector::new(p);
        for i in 0..=200u64 {
            let occ = if i <= 100 { 1_000 * i } else { 1_000 * (200 - i) };
            d.push(&depth(Q, i * US, occ));
            d.push(&depth(q2, i * US, occ / 2));
        }
        let b = d.finish();
        let got: Vec<(QueueKey, u64, u64)> =
            b.iter().map(|b| (b.queue, b.start_ns, b.end_ns)).collect();
        // Q: rise 50 kB at 50 µs, fall 25 kB first below at 176 µs; q2 the same times.
        assert_eq!(got, vec![(Q, 50 * US, 176 * US), (q2, 50 * US, 176 * US)]);
    }

    proptest! {
        /// Holding back the runs that may be bursts and replaying them at the end finds exactly
        /// what a detector told each queue's final thresholds from the start finds.
        #[test]
        fn deepest_rise_matches_a_run_at_the_final_thresholds(
            samples in proptest::collection::vec(
                (0u64..3_000, 0u64..100_000, 0u8..2, any::<bool>(), proptest::option::of(0u64..50_000)),
                0..300),
            fraction in 0.05f64..1.0, floor in 0u64..60_000,
            fall in prop_oneof![(0.0f64..=1.0).prop_map(Fall::OfRise), (0u64..80_000).prop_map(Fall::Bytes)],
            min_d in 0u64..3_000, gap in 0u64..6_000,
        ) {
            let p = HysteresisParams {
                rise: Rise::OfDeepest { fraction, floor_bytes: floor },
                fall,
                min_duration_ns: min_d,
                merge_gap_ns: gap,
                buffer_bytes: None,
            };
            let mut t = 0u64;
            let obs: Vec<Observation> = samples
                .into_iter()
                .map(|(dt, occ, port, dropped, lat)| {
                    t += dt;
                    Observation {
                        t_ns: t,
                        queue: QueueKey { switch_id: 1, port: u32::from(port), queue_id: 0 },
                        occupancy_bytes: occ,
                        flow: Some(flow(port + u8::from(dropped) * 2 + u8::from(occ % 3 == 0) * 4)),
                        packet_bytes: 100 + (occ % 1_400) as u32,
                        hop_latency_ns: lat,
                        dropped,
                        report: None,
                    }
                })
                .collect();
            let mut relative = Detector::new(p);
            for o in &obs {
                relative.push(o);
            }
            let got = relative.finish();
            for port in 0..2u32 {
                let mine: Vec<&Observation> = obs.iter().filter(|o| o.queue.port == port).collect();
                let deepest = mine.iter().map(|o| o.occupancy_bytes).max().unwrap_or(0);
                let th = p.thresholds(deepest);
                let mut fixed = Detector::new(params(th.rise_bytes, th.fall_bytes, min_d, gap));
                for o in mine {
                    fixed.push(o);
                }
                let want = fixed.finish();
                let have: Vec<&Burst> = got.iter().filter(|b| b.queue.port == port).collect();
                prop_assert_eq!(have.len(), want.len());
                for (h, w) in have.into_iter().zip(&want) {
                    prop_assert_eq!(h.definition, p.definition(th));
                    prop_assert_eq!(&Burst { definition: w.definition, ..h.clone() }, w);
                }
            }
        }
    }

    proptest! {
        #[test]
        fn arbitrary_samples_give_well_formed_bursts(
            samples in proptest::collection::vec(
                (0u64..5_000, 0u64..100_000, 0u8..3, any::<bool>(), proptest::option::of(0u64..50_000),
                 any::<u32>()),
                0..400),
            rise in 0u64..100_000, fall in 0u64..100_000,
            min_d in 0u64..2_000, gap in 0u64..2_000,
        ) {
            let p = params(rise, fall, min_d, gap);
            let mut d = Detector::new(p);
            let mut t = 0u64;
            for (dt, occ, port, dropped, lat, seq) in samples {
                t += dt;
                d.push(&Observation {
                    t_ns: t,
                    queue: QueueKey { switch_id: 1, port: u32::from(port), queue_id: 0 },
                    occupancy_bytes: occ,
                    flow: Some(flow(port)),
                    packet_bytes: 100,
                    hop_latency_ns: lat,
                    dropped,
                    report: Some((ReportStream { switch_id: 1, hw_id: 0 }, seq)),
                });
            }
            let bursts = d.finish();
            for b in &bursts {
                prop_assert!(b.start_ns <= b.peak_ns && b.peak_ns <= b.end_ns);
                prop_assert!(b.peak_bytes >= rise);
                prop_assert!(b.duration_ns() >= min_d);
                let total: f64 = b.culprits.iter().map(|c| c.share).sum();
                prop_assert!(b.culprits.is_empty() || (total - 1.0).abs() < 1e-9);
            }
            for w in bursts.windows(2).filter(|w| w[0].queue == w[1].queue) {
                prop_assert!(w[1].start_ns - w[0].end_ns > gap);
            }
        }
    }
}
