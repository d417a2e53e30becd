//! The collector's work on each datagram: decode it, keep one row per report and per queue
//! sample for storage, and feed the samples to the burst detector, culprit/victim attribution
//! and report-loss accounting, per (switch, port, queue), as `burstlab detect` does on a capture
//! ([`crate::pipeline::detect_capture`]). No socket here: [`super::socket`] receives, this
//! counts.
//!
//! Memory is bounded whatever arrives: at most `max_queues` (switch, port, queue) triples and as
//! many switches are tracked; a report that would add one more is counted in
//! [`Counters::overflow`] and kept out of detection (its row is still stored). The flows each
//! queue remembers (for culprits and victims) are capped too: at most `max_flows` (queue, flow)
//! pairs over all queues; a sample of a pair past the cap is kept without its flow (its queue
//! occupancy still counts) and counted in [`Counters::flow_overflow`]. The rows wait in
//! [`Batch`] until the caller takes them.
//!
//! The bursts are `detect`'s, with its defaults: without a rise or a buffer, each queue's rise
//! is half its deepest occupancy, known only at the end, so such a queue's bursts come out at
//! [`Collector::finish`] and the samples that may hold one are held until then. Once more than
//! [`MAX_HELD_SAMPLES`] are held, every waiting queue's thresholds are fixed at those of its
//! deepest occupancy so far ([`Detector::settle`]; counted in [`Counters::settled`]): what was
//! held is judged as `detect` would judge a capture ending there, and its bursts come out as
//! they end.

use crate::decode::Decoder;
use crate::detect::Burst;
use crate::detect::hysteresis::{Detector, HysteresisParams};
use crate::loss::SeqWidth;
use crate::model::{FlowKey, Report, ReportVersion};
use crate::observation::{Observation, QueueKey, ReportStream};
use crate::observe::Observer;
use rustc_hash::{FxHashMap, FxHashSet};

/// Most queue samples held for queues whose rise waits for their deepest occupancy, over all
/// queues, before their thresholds are fixed: about 100 MB of [`Observation`]s.
pub const MAX_HELD_SAMPLES: usize = 1 << 20;

/// What the collector is told.
#[derive(Clone, Debug)]
pub struct CollectOptions {
    pub hysteresis: HysteresisParams,
    /// Culprits and victims kept per burst.
    pub top_k: usize,
    /// Most (switch, port, queue) triples tracked, and most switches.
    pub max_queues: usize,
    /// Most (queue, flow) pairs remembered for attribution, over all queues.
    pub max_flows: usize,
    /// Keep one report in this many in the reports table (1: every report; 0: none). Queue
    /// samples and detection see every report whatever this says.
    pub report_sample: u32,
}

/// Running totals since the collector started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// UDP datagrams handed to [`Collector::ingest`].
    pub datagrams: u64,
    /// Their payload bytes.
    pub bytes: u64,
    /// Reports decoded (a TR v2.0 datagram may carry several).
    pub reports: u64,
    /// Datagrams that did not decode (each counted once, whatever it held).
    pub malformed: u64,
    /// Datagrams cut by the receive buffer (longer than it): counted, not decoded.
    pub truncated: u64,
    /// Reports kept out of detection because they would have tracked one queue or switch more
    /// than the cap allows.
    pub overflow: u64,
    /// Reports whose flow was left out of attribution because its (queue, flow) pair would
    /// have gone past `max_flows`.
    pub flow_overflow: u64,
    /// (queue, flow) pairs remembered.
    pub flows: u64,
    /// Reports without any hop that says how full a queue was (a drop report without
    /// occupancy is one).
    pub without_occupancy: u64,
    /// Queue samples the detector saw.
    pub samples: u64,
    /// Bursts that have ended.
    pub bursts: u64,
    /// Queues whose rise waited for their deepest occupancy and was fixed before the end,
    /// because [`MAX_HELD_SAMPLES`] were held.
    pub settled: u64,
}

/// A flow-key column: per-row codes into the batch's dictionary of flow strings; -1 none.
#[derive(Debug, Default)]
pub struct Flows {
    pub dict: Vec<String>,
    index: FxHashMap<FlowKey, i32>,
}

impl Flows {
    fn code(&mut self, flow: Option<FlowKey>) -> i32 {
        let Some(flow) = flow else { return -1 };
        let next = self.dict.len() as i32;
        *self.index.entry(flow).or_insert_with(|| {
            self.dict.push(flow.to_string());
            next
        })
    }
}

/// Rows waiting to be stored, column by column. Times are nanoseconds: `recv_ns` since the Unix
/// epoch (the collector's clock), `t_ns` on the switch's own timeline.
#[derive(Debug, Default)]
pub struct Batch {
    // The reports table.
    pub r_recv_ns: Vec<u64>,
    pub r_switch_id: Vec<u32>,
    pub r_hw_id: Vec<u8>,
    pub r_seq: Vec<u32>,
    /// Index into [`VERSION_NAMES`].
    pub r_version: Vec<u8>,
    pub r_dropped: Vec<bool>,
    pub r_congested: Vec<bool>,
    pub r_tracked: Vec<bool>,
    /// -1: none.
    pub r_drop_reason: Vec<i16>,
    pub r_flow: Vec<i32>,
    pub r_packet_bytes: Vec<u32>,
    pub r_hops: Vec<u8>,
    // The queue-samples table.
    pub q_t_ns: Vec<u64>,
    pub q_recv_ns: Vec<u64>,
    pub q_switch_id: Vec<u32>,
    pub q_port: Vec<u32>,
    pub q_queue_id: Vec<u8>,
    pub q_occupancy_bytes: Vec<u64>,
    /// -1: unknown.
    pub q_hop_latency_ns: Vec<i64>,
    pub q_flow: Vec<i32>,
    pub q_packet_bytes: Vec<u32>,
    pub q_dropped: Vec<bool>,
    /// The dictionary both flow columns index.
    pub flows: Flows,
    /// Bursts that ended since the last batch.
    pub bursts: Vec<Burst>,
}

/// `reports.version` values, by [`Batch::r_version`] code.
pub const VERSION_NAMES: [&str; 4] = ["0.5", "0.5-fabric-tna", "1.0", "2.0"];

fn version_code(v: ReportVersion) -> u8 {
    match v {
        ReportVersion::V0_5 => 0,
        ReportVersion::V0_5FabricTna => 1,
        ReportVersion::V1_0 => 2,
        ReportVersion::V2_0 => 3,
    }
}

impl Batch {
    /// Rows held: reports plus queue samples.
    pub fn rows(&self) -> usize {
        self.r_seq.len() + self.q_t_ns.len()
    }
}

/// One queue's occupancy for the exporters: the last sample and the deepest since the last
/// [`Collector::take_gauges`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gauge {
    pub queue: QueueKey,
    pub last_bytes: u64,
    pub max_bytes: u64,
}

/// One report stream's sequence accounting (int-telemetry.md §16.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamLoss {
    pub stream: ReportStream,
    pub received: u64,
    pub lost: u64,
}

/// The online pipeline: datagrams in, rows and ended bursts out.
pub struct Collector {
    opts: CollectOptions,
    decoder: Decoder,
    observer: Observer,
    /// Made at the first report, as `detect` makes it: TR v2.0 numbers with 22 bits.
    detector: Option<Detector>,
    switches: FxHashSet<u32>,
    queues: FxHashMap<QueueKey, (u64, u64)>,
    streams: FxHashSet<ReportStream>,
    pairs: FxHashSet<(QueueKey, FlowKey)>,
    counters: Counters,
    /// [`MAX_HELD_SAMPLES`] unless told.
    max_held: usize,
    batch: Batch,
    scratch: Vec<Observation>,
    /// The loss accounting as it stood when [`Collector::finish`] consumed the detector.
    lost_at_finish: u64,
    losses_at_finish: Vec<StreamLoss>,
}

impl Collector {
    pub fn new(decoder: Decoder, opts: CollectOptions) -> Self {
        Collector {
            opts,
            decoder,
            observer: Observer::default(),
            detector: None,
            switches: FxHashSet::default(),
            queues: FxHashMap::default(),
            streams: FxHashSet::default(),
            pairs: FxHashSet::default(),
            counters: Counters::default(),
            max_held: MAX_HELD_SAMPLES,
            batch: Batch::default(),
            scratch: Vec::new(),
            lost_at_finish: 0,
            losses_at_finish: Vec::new(),
        }
    }

    /// Hold at most `samples` for queues waiting for their deepest occupancy.
    pub fn with_max_held(mut self, samples: usize) -> Self {
        self.max_held = samples;
        self
    }

    pub fn counters(&self) -> Counters {
        self.counters
    }

    /// A datagram cut short by the receive buffer.
    pub fn truncated(&mut self, bytes: usize) {
        self.counters.datagrams += 1;
        self.counters.bytes += bytes as u64;
        self.counters.truncated += 1;
        self.counters.malformed += 1;
    }

    /// One UDP payload that arrived on port `dport` at `recv_ns`.
    pub fn ingest(&mut self, payload: &[u8], dport: u16, recv_ns: u64) {
        self.counters.datagrams += 1;
        self.counters.bytes += payload.len() as u64;
        let reports = match self.decoder.decode(payload, dport) {
            Ok(reports) => reports,
            Err(_) => {
                self.counters.malformed += 1;
                return;
            }
        };
        let c = &mut self.counters;
        let (opts, batch, observer, scratch) =
            (&self.opts, &mut self.batch, &mut self.observer, &mut self.scratch);
        for r in reports {
            c.reports += 1;
            if opts.report_sample > 0 && c.reports.is_multiple_of(u64::from(opts.report_sample)) {
                push_report(batch, r, recv_ns);
            }
            if !admit_switches(&mut self.switches, r, opts.max_queues) {
                c.overflow += 1;
                continue;
            }
            scratch.clear();
            let before = observer.without_occupancy;
            observer.push(r, scratch);
            c.without_occupancy += observer.without_occupancy - before;
            if !admit_queues(&mut self.queues, scratch, opts.max_queues) {
                c.overflow += 1;
                continue;
            }
            if !admit_flows(&mut self.pairs, &mut scratch[..], opts.max_flows) {
                c.flow_overflow += 1;
            }
            c.flows = self.pairs.len() as u64;
            let det = self.detector.get_or_insert_with(|| {
                let width = if r.version == ReportVersion::V2_0 {
                    SeqWidth::Bits22
                } else {
                    SeqWidth::Bits32
                };
                Detector::new(opts.hysteresis).with_top_k(opts.top_k).with_seq_width(width)
            });
            if r.switch_id.is_some() || !scratch.is_empty() {
                self.streams
                    .insert(ReportStream { switch_id: r.switch_id.unwrap_or(0), hw_id: r.hw_id });
            }
            for o in scratch.iter() {
                det.push(o);
                push_sample(batch, o, recv_ns);
                if let Some(g) = self.queues.get_mut(&o.queue) {
                    *g = (o.occupancy_bytes, g.1.max(o.occupancy_bytes));
                }
            }
            c.samples += scratch.len() as u64;
        }
    }

    /// The rows held, with the bursts that ended since the last call; the collector starts a
    /// new batch.
    pub fn take_batch(&mut self) -> Batch {
        self.collect_bursts();
        std::mem::take(&mut self.batch)
    }

    pub fn pending_rows(&self) -> usize {
        self.batch.rows()
    }

    fn collect_bursts(&mut self) {
        if let Some(det) = self.detector.as_mut() {
            if det.held_samples() > self.max_held {
                self.counters.settled += det.settle() as u64;
            }
            let ended = det.take_closed();
            self.counters.bursts += ended.len() as u64;
            self.batch.bursts.extend(ended);
        }
    }

    /// End: close what is open, as `detect` does at the end of a capture.
    pub fn finish(&mut self) -> Batch {
        self.collect_bursts();
        if let Some(det) = self.detector.take() {
            self.lost_at_finish = det.loss().lost();
            self.losses_at_finish = self.losses_of(&det);
            let ended = det.finish();
            self.counters.bursts += ended.len() as u64;
            self.batch.bursts.extend(ended);
        }
        std::mem::take(&mut self.batch)
    }

    /// Every tracked queue's occupancy; the deepest-since resets to the last sample.
    pub fn take_gauges(&mut self) -> Vec<Gauge> {
        let mut out: Vec<Gauge> = self
            .queues
            .iter_mut()
            .map(|(q, g)| {
                let gauge = Gauge { queue: *q, last_bytes: g.0, max_bytes: g.1 };
                g.1 = g.0;
                gauge
            })
            .collect();
        out.sort_unstable_by_key(|g| g.queue);
        out
    }

    /// Received and lost reports per report stream.
    pub fn losses(&self) -> Vec<StreamLoss> {
        match self.detector.as_ref() {
            Some(det) => self.losses_of(det),
            None => self.losses_at_finish.clone(),
        }
    }

    fn losses_of(&self, det: &Detector) -> Vec<StreamLoss> {
        let mut out: Vec<StreamLoss> = self
            .streams
            .iter()
            .filter_map(|s| {
                let c = det.loss().stream(s)?;
                Some(StreamLoss { stream: *s, received: c.received(), lost: c.lost() })
            })
            .collect();
        out.sort_unstable_by_key(|l| l.stream);
        out
    }

    /// Reports lost over every stream.
    pub fn lost(&self) -> u64 {
        self.detector.as_ref().map_or(self.lost_at_finish, |d| d.loss().lost())
    }
}

/// Whether every switch `r` names is tracked or fits under the cap (then it is tracked).
fn admit_switches(switches: &mut FxHashSet<u32>, r: &Report, cap: usize) -> bool {
    let ids = r.switch_id.into_iter().chain(r.hops.iter().filter_map(|h| h.switch_id));
    let mut new: Vec<u32> = ids.filter(|s| !switches.contains(s)).collect();
    if new.is_empty() {
        return true;
    }
    new.sort_unstable();
    new.dedup();
    if switches.len() + new.len() > cap {
        return false;
    }
    switches.extend(new);
    true
}

/// Whether every queue of `obs` is tracked or fits under the cap (then it is tracked).
fn admit_queues(
    queues: &mut FxHashMap<QueueKey, (u64, u64)>,
    obs: &[Observation],
    cap: usize,
) -> bool {
    let mut new: Vec<QueueKey> =
        obs.iter().map(|o| o.queue).filter(|q| !queues.contains_key(q)).collect();
    if new.is_empty() {
        return true;
    }
    new.sort_unstable();
    new.dedup();
    if queues.len() + new.len() > cap {
        return false;
    }
    for o in obs {
        queues.entry(o.queue).or_insert((o.occupancy_bytes, o.occupancy_bytes));
    }
    true
}

/// Keep each sample's flow if its (queue, flow) pair is remembered or fits under the cap (then
/// it is remembered); else drop the flow from the sample. Returns whether every flow was kept.
fn admit_flows(
    pairs: &mut FxHashSet<(QueueKey, FlowKey)>,
    obs: &mut [Observation],
    cap: usize,
) -> bool {
    let mut kept = true;
    for o in obs.iter_mut() {
        let Some(flow) = o.flow else { continue };
        if pairs.contains(&(o.queue, flow)) {
            continue;
        }
        if pairs.len() < cap {
            pairs.insert((o.queue, flow));
        } else {
            o.flow = None;
            kept = false;
        }
    }
    kept
}

fn push_report(b: &mut Batch, r: &Report, recv_ns: u64) {
    b.r_recv_ns.push(recv_ns);
    b.r_switch_id.push(r.switch_id.unwrap_or(0));
    b.r_hw_id.push(r.hw_id);
    b.r_seq.push(r.seq);
    b.r_version.push(version_code(r.version));
    b.r_dropped.push(r.flags.dropped);
    b.r_congested.push(r.flags.congested);
    b.r_tracked.push(r.flags.tracked);
    b.r_drop_reason.push(r.drop_reason.map_or(-1, i16::from));
    let flow = b.flows.code(r.flow);
    b.r_flow.push(flow);
    b.r_packet_bytes.push(r.packet_bytes.unwrap_or(0));
    b.r_hops.push(r.hops.len().min(255) as u8);
}

fn push_sample(b: &mut Batch, o: &Observation, recv_ns: u64) {
    b.q_t_ns.push(o.t_ns);
    b.q_recv_ns.push(recv_ns);
    b.q_switch_id.push(o.queue.switch_id);
    b.q_port.push(o.queue.port);
    b.q_queue_id.push(o.queue.queue_id);
    b.q_occupancy_bytes.push(o.occupancy_bytes);
    b.q_hop_latency_ns.push(o.hop_latency_ns.map_or(-1, |l| l.min(i64::MAX as u64) as i64));
    let flow = b.flows.code(o.flow);
    b.q_flow.push(flow);
    b.q_packet_bytes.push(o.packet_bytes);
    b.q_dropped.push(o.dropped);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::CaptureReader;
    use crate::export::{ExportFormat, IntRow, ramp_row, write_int_pcap};
    use crate::pipeline::{DetectOptions, detect_capture, report_of};
    use crate::profile::DEFAULT_REPORT_PORTS;
    use crate::profiles::Profiles;

    /// Reports 1 µs apart on one queue that ramps to 1.6 MB and back every 4,000 reports; two
    /// flows fill it, a third is there all along.
    fn rows(n: u32, switches: u32) -> impl Iterator<Item = IntRow> {
        (0..n)
            .map(move |k| {
                let phase = k % 4_000;
                let burst = phase > 500 && phase < 3_500;
                ramp_row(k, 1 + k % switches, if burst { 1 + (k % 2) as u8 } else { 9 })
            })
            // Every 997th report lost on its way.
            .filter(|r| r.seq % 997 != 996)
    }

    fn params() -> HysteresisParams {
        HysteresisParams::fixed(400_000, 200_000, 0, 100_000)
    }

    fn capture(n: u32, switches: u32) -> Vec<u8> {
        let mut file = Vec::new();
        write_int_pcap(rows(n, switches), ExportFormat::NoviFlowV1_0, &mut file).unwrap();
        file
    }

    fn collector(hysteresis: HysteresisParams, max_queues: usize, max_flows: usize) -> Collector {
        let opts = CollectOptions { hysteresis, top_k: 5, max_queues, max_flows, report_sample: 1 };
        Collector::new(Decoder::new(Profiles::builtin()), opts)
    }

    fn collect(file: &[u8], cap: usize) -> (Vec<Burst>, Collector) {
        collect_with(file, cap, params(), MAX_HELD_SAMPLES)
    }

    fn collect_with(
        file: &[u8],
        cap: usize,
        hysteresis: HysteresisParams,
        max_held: usize,
    ) -> (Vec<Burst>, Collector) {
        let mut c = collector(hysteresis, cap, 1 << 20).with_max_held(max_held);
        let mut reader = CaptureReader::new(file).unwrap();
        let mut bursts = Vec::new();
        while let Some(frame) = reader.next() {
            let frame = frame.unwrap();
            if let (Some((payload, dport)), _) = report_of(&frame, &DEFAULT_REPORT_PORTS, false) {
                c.ingest(payload, dport, 0);
            }
            if c.pending_rows() > 3_000 {
                bursts.extend(c.take_batch().bursts);
            }
        }
        bursts.extend(c.finish().bursts);
        (bursts, c)
    }

    // ---- online against detect ----

    fn detect(file: &[u8], hysteresis: HysteresisParams) -> crate::pipeline::Detection {
        let opts = DetectOptions {
            hysteresis,
            rate: None,
            top_k: 5,
            ports: DEFAULT_REPORT_PORTS.to_vec(),
            drop_horizon_ns: 0,
            tcp_after_ns: 0,
        };
        let mut decoder = Decoder::new(Profiles::builtin());
        detect_capture(file, "x", &mut decoder, &opts, |_| {}).unwrap()
    }

    fn starts_ends_peaks(b: &[Burst]) -> Vec<(u64, u64, u64)> {
        b.iter().map(|b| (b.start_ns, b.end_ns, b.peak_bytes)).collect()
    }

    #[test]
    fn with_detects_defaults_collect_gives_its_bursts_at_the_end() {
        let file = capture(20_000, 1);
        let defaults = HysteresisParams::from_options(None, None, None, None, None);
        let want = detect(&file, defaults);
        let (got, c) = collect_with(&file, 100, defaults, MAX_HELD_SAMPLES);
        assert_eq!(want.bursts.len(), 5);
        assert_eq!(starts_ends_peaks(&got), starts_ends_peaks(&want.bursts));
        for (g, w) in got.iter().zip(&want.bursts) {
            assert_eq!(
                (g.culprit_flows.clone(), g.reports_lost),
                (w.culprit_flows.clone(), w.reports_lost)
            );
        }
        assert_eq!(c.counters().settled, 0);
    }

    #[test]
    fn past_the_held_cap_the_thresholds_are_fixed_and_bursts_come_as_they_end() {
        // The queue reaches its deepest (1.6 MB) in its first ramp, so thresholds fixed once
        // 2,000 samples are held give detect's bursts.
        let file = capture(20_000, 1);
        let defaults = HysteresisParams::from_options(None, None, None, None, None);
        let want = detect(&file, defaults);
        let (got, c) = collect_with(&file, 100, defaults, 2_000);
        assert_eq!(starts_ends_peaks(&got), starts_ends_peaks(&want.bursts));
        assert_eq!(c.counters().settled, 1);
    }

    #[test]
    fn collect_gives_detects_bursts_culprits_and_losses() {
        let file = capture(20_000, 1);
        let want = detect(&file, params());
        let (got, c) = collect(&file, 100);
        assert_eq!(want.bursts.len(), 5);
        assert_eq!(got.len(), want.bursts.len());
        for (g, w) in got.iter().zip(&want.bursts) {
            assert_eq!(
                (g.queue, g.start_ns, g.end_ns, g.peak_bytes),
                (w.queue, w.start_ns, w.end_ns, w.peak_bytes)
            );
            assert_eq!(
                (g.bytes, g.drops, g.reports, g.reports_lost),
                (w.bytes, w.drops, w.reports, w.reports_lost)
            );
            assert_eq!(g.culprit_flows, w.culprit_flows);
        }
        assert_eq!(c.lost(), want.reports_lost);
        assert!(c.lost() > 0);
        assert_eq!(c.counters().reports, 19_980);
        assert_eq!(c.counters().bursts, 5);
    }

    // ---- the cap ----

    #[test]
    fn many_switches_stay_under_the_cap_and_are_counted() {
        let file = capture(5_000, 500);
        let (_, mut c) = collect(&file, 50);
        let n = c.counters();
        // The first 50 switches are admitted, whatever comes after them is counted.
        let admitted = rows(5_000, 500).filter(|r| r.switch_id <= 50).count() as u64;
        assert_eq!(n.reports, 4_995);
        let g = c.take_gauges();
        assert_eq!(g.len(), 50);
        assert_eq!((n.samples, n.overflow), (admitted, n.reports - admitted));
        assert!(n.overflow > 4_000);
    }

    #[test]
    fn a_flood_of_distinct_flows_keeps_the_samples_but_not_their_flows_past_the_cap() {
        let mut rows: Vec<IntRow> = rows(3_000, 1).collect();
        for (k, r) in rows.iter_mut().enumerate() {
            r.flow.sport = k as u16; // every report a flow of its own
        }
        let mut file = Vec::new();
        write_int_pcap(rows, ExportFormat::NoviFlowV1_0, &mut file).unwrap();
        let mut c = collector(params(), 10, 100);
        let mut reader = CaptureReader::new(&file[..]).unwrap();
        while let Some(frame) = reader.next() {
            if let (Some((payload, dport)), _) =
                report_of(&frame.unwrap(), &DEFAULT_REPORT_PORTS, false)
            {
                c.ingest(payload, dport, 0);
            }
        }
        let n = c.counters();
        // 3,000 rows less the 3 lost on their way (every 997th).
        assert_eq!((n.reports, n.samples), (2_997, 2_997));
        assert_eq!((n.flows, n.flow_overflow), (100, 2_897));
        assert_eq!(c.pairs.len(), 100);
    }

    #[test]
    fn garbage_is_counted_malformed_and_nothing_is_tracked() {
        let mut c = collector(params(), 10, 100);
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for len in 0..2_000usize {
            let bytes: Vec<u8> = (0..len % 300)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect();
            c.ingest(&bytes, 5900, 0);
        }
        let n = c.counters();
        assert_eq!(n.datagrams, 2_000);
        // Random bytes almost never make a report; those that do are tracked under the cap.
        assert!(n.malformed > 1_900, "{n:?}");
        assert!(c.take_gauges().len() <= 10);
    }
}
