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
//! when every sample was in a burst.
//!
//! Input order: samples must be time-ordered **per queue**; queues may interleave in any order
//! (a gap closes lazily, on the queue's next sample or at [`Detector::finish`]). A sample older
//! than its queue's previous one is read at the previous one's time and counted in
//! [`Detector::out_of_order`].

use super::median::LogHistogram;
use super::{Burst, Definition, ParamError};
use crate::attribution::{Attribution, DEFAULT_TOP_K};
use crate::loss::{LossLedger, SeqWidth};
use crate::observation::{Observation, QueueKey, ReportStream};
use rustc_hash::FxHashMap;

/// Thresholds in bytes of queue occupancy, times in nanoseconds. A `fall_bytes` above
/// `rise_bytes` is read as `rise_bytes` (a burst then ends as soon as it drops below rise).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HysteresisParams {
    pub rise_bytes: u64,
    pub fall_bytes: u64,
    pub min_duration_ns: u64,
    pub merge_gap_ns: u64,
}

impl HysteresisParams {
    /// Thresholds as percentages of a buffer of `buffer_bytes` (Cisco NX-OS 10.5x accepts
    /// rise/fall in %; int-telemetry.md §14.1), rounded to the nearest byte.
    pub fn from_buffer_percent(
        buffer_bytes: u64,
        rise_pct: f64,
        fall_pct: f64,
        min_duration_ns: u64,
        merge_gap_ns: u64,
    ) -> Result<Self, ParamError> {
        let pct = |field, v: f64| {
            if v.is_finite() && (0.0..=100.0).contains(&v) {
                Ok(v)
            } else {
                Err(ParamError { field, value: v, expected: "a percentage in 0..=100" })
            }
        };
        let rise = pct("rise_pct", rise_pct)?;
        let fall = pct("fall_pct", fall_pct)?;
        if fall > rise {
            return Err(ParamError { field: "fall_pct", value: fall, expected: "≤ rise_pct" });
        }
        let bytes = |p: f64| (buffer_bytes as f64 * p / 100.0).round() as u64;
        Ok(HysteresisParams {
            rise_bytes: bytes(rise),
            fall_bytes: bytes(fall),
            min_duration_ns,
            merge_gap_ns,
        })
    }

    fn fall(&self) -> u64 {
        self.fall_bytes.min(self.rise_bytes)
    }

    /// The definition as each burst reports it.
    pub fn definition(&self) -> Definition {
        Definition::Hysteresis {
            rise_bytes: self.rise_bytes,
            fall_bytes: self.fall(),
            min_duration_s: self.min_duration_ns as f64 / 1e9,
            merge_gap_s: self.merge_gap_ns as f64 / 1e9,
        }
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct Counts {
    bytes: u64,
    drops: u64,
    samples: u64,
}

impl Counts {
    fn add(&mut self, obs: &Observation) {
        self.samples += 1;
        if obs.dropped {
            self.drops += 1;
        } else {
            self.bytes += u64::from(obs.packet_bytes);
        }
    }

    fn absorb(&mut self, other: &mut Counts) {
        self.bytes += other.bytes;
        self.drops += other.drops;
        self.samples += other.samples;
        *other = Counts::default();
    }
}

/// A burst being tracked: IN_BURST while `end_ns` is `None`, CLOSING after.
#[derive(Debug)]
struct Open {
    start_ns: u64,
    end_ns: Option<u64>,
    peak_bytes: u64,
    peak_ns: u64,
    counts: Counts,
    attribution: Attribution,
    /// Samples of the current merge gap (their attribution is in `QueueState::gap`).
    gap: Counts,
}

#[derive(Debug)]
struct Closed {
    start_ns: u64,
    end_ns: u64,
    peak_bytes: u64,
    peak_ns: u64,
    counts: Counts,
    attribution: Attribution,
}

#[derive(Debug)]
struct QueueState {
    key: QueueKey,
    last_t: Option<u64>,
    /// Spacing of consecutive samples: the resolution.
    spacing: LogHistogram,
    /// Hop latency of samples outside bursts: the victims' baseline.
    baseline: LogHistogram,
    min_latency: Option<u64>,
    /// Report streams that carried this queue's samples, for reports lost during a burst.
    streams: Vec<ReportStream>,
    open: Option<Open>,
    /// Merge-gap attribution, reused from gap to gap.
    gap: Attribution,
    closed: Vec<Closed>,
}

impl QueueState {
    fn new(key: QueueKey) -> Self {
        QueueState {
            key,
            last_t: None,
            spacing: LogHistogram::new(),
            baseline: LogHistogram::new(),
            min_latency: None,
            streams: Vec::new(),
            open: None,
            gap: Attribution::default(),
            closed: Vec::new(),
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
        let occ = obs.occupancy_bytes;

        // CLOSING: expire, re-rise, or stay in the gap.
        if let Some(end) = self.open.as_ref().and_then(|o| o.end_ns) {
            if t - end > p.merge_gap_ns {
                self.close(p);
            } else if occ >= p.rise_bytes {
                self.rerise();
            } else {
                self.gap_sample(obs);
                return late;
            }
        }
        match &mut self.open {
            None if occ >= p.rise_bytes => {
                let mut attribution = Attribution::new(t);
                attribution.new_peak(t);
                self.open = Some(Open {
                    start_ns: t,
                    end_ns: None,
                    peak_bytes: occ,
                    peak_ns: t,
                    counts: Counts::default(),
                    attribution,
                    gap: Counts::default(),
                });
                self.in_burst_sample(obs, p);
            }
            None => self.outside_sample(obs),
            Some(_) => self.in_burst_sample(obs, p),
        }
        late
    }

    fn in_burst_sample(&mut self, obs: &Observation, p: &HysteresisParams) {
        let Some(open) = self.open.as_mut() else { return };
        let (t, occ) = (obs.t_ns, obs.occupancy_bytes);
        if occ > open.peak_bytes {
            open.peak_bytes = occ;
            open.peak_ns = t;
            open.attribution.new_peak(t);
        }
        open.counts.add(obs);
        open.attribution.observe(obs);
        if occ < p.fall() {
            open.end_ns = Some(t);
            open.gap = Counts::default();
            self.gap.reset(open.peak_ns);
        }
    }

    fn gap_sample(&mut self, obs: &Observation) {
        if let Some(open) = self.open.as_mut() {
            open.gap.add(obs);
        }
        self.gap.observe(obs);
        self.outside_sample(obs);
    }

    fn outside_sample(&mut self, obs: &Observation) {
        if let Some(lat) = obs.hop_latency_ns {
            self.baseline.record(lat);
        }
    }

    fn rerise(&mut self) {
        if let Some(open) = self.open.as_mut() {
            open.end_ns = None;
            let mut gap = std::mem::take(&mut open.gap);
            open.counts.absorb(&mut gap);
            open.attribution.absorb(&mut self.gap);
        }
    }

    /// End the open burst (at its fall, or at the last sample if it never fell) and keep it
    /// if long enough.
    fn close(&mut self, p: &HysteresisParams) {
        let Some(open) = self.open.take() else { return };
        let end_ns = open.end_ns.or(self.last_t).unwrap_or(open.start_ns);
        if end_ns - open.start_ns >= p.min_duration_ns {
            self.closed.push(Closed {
                start_ns: open.start_ns,
                end_ns,
                peak_bytes: open.peak_bytes,
                peak_ns: open.peak_ns,
                counts: open.counts,
                attribution: open.attribution,
            });
        }
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

    pub fn params(&self) -> &HysteresisParams {
        &self.params
    }

    pub fn push(&mut self, obs: &Observation) {
        self.observations += 1;
        if let Some((stream, seq)) = obs.report {
            self.loss.observe(stream, seq, obs.t_ns);
        }
        let i = match self.last {
            Some((key, i)) if key == obs.queue => i,
            _ => {
                let i = match self.index.get(&obs.queue) {
                    Some(&i) => i,
                    None => {
                        self.queues.push(QueueState::new(obs.queue));
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

    /// Samples older than their queue's previous sample.
    pub fn out_of_order(&self) -> u64 {
        self.out_of_order
    }

    /// Close what is open and return every burst, in order of start time then queue.
    pub fn finish(mut self) -> Vec<Burst> {
        let definition = self.params.definition();
        let mut bursts = Vec::new();
        for q in &mut self.queues {
            q.close(&self.params);
            let baseline = q.baseline.median().or(q.min_latency);
            let resolution_ns = q.spacing.median().unwrap_or(0);
            for c in q.closed.drain(..) {
                let reports_lost =
                    q.streams.iter().map(|s| self.loss.lost_between(s, c.start_ns, c.end_ns)).sum();
                bursts.push(Burst {
                    queue: q.key,
                    start_ns: c.start_ns,
                    end_ns: c.end_ns,
                    peak_bytes: c.peak_bytes,
                    peak_ns: c.peak_ns,
                    bytes: c.counts.bytes,
                    drops: c.counts.drops,
                    reports: c.counts.samples,
                    reports_lost,
                    definition,
                    resolution_ns,
                    culprits: c.attribution.culprits(self.top_k),
                    victims: c.attribution.victims(baseline, self.top_k),
                });
            }
        }
        bursts.sort_by_key(|b| (b.start_ns, b.queue));
        bursts
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attribution::test_flow as flow;
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
        HysteresisParams { rise_bytes: rise, fall_bytes: fall, min_duration_ns, merge_gap_ns }
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
                merge_gap_s: 0.0
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
    fn percent_of_buffer_thresholds() {
        let p = HysteresisParams::from_buffer_percent(1_000_000, 50.0, 25.0, 10, 20).unwrap();
        assert_eq!(p, params(500_000, 250_000, 10, 20));
        let p = HysteresisParams::from_buffer_percent(333, 33.3, 0.0, 0, 0).unwrap();
        assert_eq!((p.rise_bytes, p.fall_bytes), (111, 0));
        let e = HysteresisParams::from_buffer_percent(1, 120.0, 10.0, 0, 0).unwrap_err();
        assert_eq!(e.field, "rise_pct");
        let e = HysteresisParams::from_buffer_percent(1, 10.0, f64::NAN, 0, 0).unwrap_err();
        assert_eq!(e.field, "fall_pct");
        let e = HysteresisParams::from_buffer_percent(1, 10.0, 20.0, 0, 0).unwrap_err();
        assert_eq!(e.expected, "≤ rise_pct");
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
        assert_eq!(b.culprits.len(), 2);
        // Baseline 2 µs: flow 9 waited 28 µs more; flow 2 at most 2 + 39/2 = 21.5 µs.
        assert_eq!(b.victims[0].flow, flow(9));
        assert_eq!(b.victims[0].delay_ns, 28 * US);
        let dropped = b.victims.iter().find(|v| v.flow == flow(3)).unwrap();
        assert_eq!((dropped.delay_ns, dropped.drops), (0, 1));
        let v2 = b.victims.iter().find(|v| v.flow == flow(2)).unwrap();
        assert_eq!(v2.delay_ns, 19_500);
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
