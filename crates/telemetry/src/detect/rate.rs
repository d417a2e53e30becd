//! Bursts in a plain capture of one link: bytes per window against the link rate, at several
//! timescales at once (int-telemetry.md §14.1 ntop n2disk `--uburst-win-size` and Allegro's
//! 1 ms intervals; §16.1 "per-link rate over windows at several timescales").
//!
//! Windows tumble on multiples of their length from time 0, so runs at different timescales
//! line up. A window is hot when its bytes exceed `threshold × link_bps × window`; consecutive
//! hot windows are one burst; an empty window is cold. Culprits are the flows by bytes in the
//! hot windows that carried at least their usual share of the link there (their share outside
//! hot windows at that timescale; [`crate::attribution`]). A capture says nothing of queueing
//! delay or drops, so rate bursts have no drops, and victims only from TCP's own loss signals
//! (added by the caller; `crate::pipeline`), never a culprit.
//!
//! Input order: packets time-ordered; a packet older than the current window is counted in it.

use super::{Burst, Definition, ParamError};
use crate::attribution::{DEFAULT_TOP_K, Usual, culprits_of};
use crate::model::FlowKey;
use crate::observation::QueueKey;
use rustc_hash::FxHashMap;

/// Timescales looked at by default: 100 µs (fmadio's slices, BurstRadar's "< 200 µs"), 1 ms
/// (Allegro), 10 ms (int-telemetry.md §14.1, §16.2).
pub const DEFAULT_TIMESCALES_NS: [u64; 3] = [100_000, 1_000_000, 10_000_000];

/// Longer windows for slow links, where none of the defaults is long enough.
const SLOW_LINK_TIMESCALES_NS: [u64; 3] = [100_000_000, 1_000_000_000, 10_000_000_000];

/// The least a window must carry before it is hot, in bytes: ten 1500-byte segments, one TCP
/// initial window (RFC 6928) sent back to back. A shorter window is filled by any sender's first
/// train and says nothing of a burst (on a 50 Mbit/s link a 100 µs window is half a packet).
pub const MIN_HOT_WINDOW_BYTES: f64 = 10.0 * 1_500.0;

/// The default timescales for a link: those of [`DEFAULT_TIMESCALES_NS`] whose hot budget is at
/// least [`MIN_HOT_WINDOW_BYTES`]; on a link too slow for any of them, the shortest of 100 ms,
/// 1 s and 10 s that is (or 10 s).
pub fn default_timescales(link_bps: u64, threshold: f64) -> Vec<u64> {
    let holds = |w: u64| threshold * link_bps as f64 * w as f64 / 8e9 >= MIN_HOT_WINDOW_BYTES;
    let fit: Vec<u64> = DEFAULT_TIMESCALES_NS.into_iter().filter(|&w| holds(w)).collect();
    if !fit.is_empty() {
        return fit;
    }
    let slow = SLOW_LINK_TIMESCALES_NS.into_iter().find(|&w| holds(w));
    vec![slow.unwrap_or(SLOW_LINK_TIMESCALES_NS[2])]
}

#[derive(Clone, Debug, PartialEq)]
pub struct RateParams {
    pub link_bps: u64,
    /// Fraction of the link rate above which a window is hot (1.0 = line rate).
    pub threshold: f64,
    pub timescales_ns: Vec<u64>,
}

impl RateParams {
    /// The default timescales, checked: a non-zero link rate and a positive finite threshold.
    pub fn new(link_bps: u64, threshold: f64) -> Result<Self, ParamError> {
        RateParams { link_bps, threshold, timescales_ns: DEFAULT_TIMESCALES_NS.to_vec() }.check()
    }

    pub fn check(self) -> Result<Self, ParamError> {
        if self.link_bps == 0 {
            return Err(ParamError { field: "link_bps", value: 0.0, expected: "> 0" });
        }
        if !(self.threshold.is_finite() && self.threshold > 0.0) {
            let value = self.threshold;
            return Err(ParamError { field: "threshold", value, expected: "a fraction > 0" });
        }
        if self.timescales_ns.is_empty() || self.timescales_ns.contains(&0) {
            let value = self.timescales_ns.len() as f64;
            return Err(ParamError {
                field: "timescales_ns",
                value,
                expected: "at least one window, each > 0 ns",
            });
        }
        Ok(self)
    }
}

#[derive(Debug)]
struct HotRun {
    first: u64,
    last: u64,
    peak_bytes: u64,
    peak_window: u64,
    bytes: u64,
    packets: u64,
    flows: FxHashMap<FlowKey, u64>,
}

/// One timescale's current window and the run of hot windows before it.
#[derive(Debug)]
struct Scale {
    window_ns: u64,
    /// Bytes a window may carry before it is hot.
    budget_bytes: f64,
    index: Option<u64>,
    bytes: u64,
    packets: u64,
    flows: FxHashMap<FlowKey, u64>,
    run: Option<HotRun>,
    done: Vec<HotRun>,
    /// Flows' bytes in the windows that were not hot.
    usual: Usual,
}

impl Scale {
    fn push(&mut self, t_ns: u64, wire_bytes: u32, flow: Option<FlowKey>) {
        let index = t_ns / self.window_ns;
        match self.index {
            Some(current) if index <= current => {}
            Some(_) => {
                self.end_window();
                self.index = Some(index);
            }
            None => self.index = Some(index),
        }
        self.bytes += u64::from(wire_bytes);
        self.packets += 1;
        if let Some(f) = flow {
            *self.flows.entry(f).or_default() += u64::from(wire_bytes);
        }
    }

    /// Judge the current window: extend or start a hot run, or end the run.
    fn end_window(&mut self) {
        let Some(index) = self.index else { return };
        let hot = self.bytes as f64 > self.budget_bytes;
        let continues = self.run.as_ref().is_some_and(|r| r.last + 1 == index);
        if !(hot && continues)
            && let Some(run) = self.run.take()
        {
            self.done.push(run);
        }
        if hot {
            let run = self.run.get_or_insert_with(|| HotRun {
                first: index,
                last: index,
                peak_bytes: 0,
                peak_window: index,
                bytes: 0,
                packets: 0,
                flows: FxHashMap::default(),
            });
            run.last = index;
            if self.bytes > run.peak_bytes {
                run.peak_bytes = self.bytes;
                run.peak_window = index;
            }
            run.bytes += self.bytes;
            run.packets += self.packets;
            for (f, b) in self.flows.drain() {
                *run.flows.entry(f).or_default() += b;
            }
        }
        for (f, b) in self.flows.drain() {
            self.usual.add(f, b);
        }
        self.bytes = 0;
        self.packets = 0;
    }
}

/// The rate detector for one link.
#[derive(Debug)]
pub struct RateDetector {
    link: QueueKey,
    params: RateParams,
    top_k: usize,
    scales: Vec<Scale>,
}

impl RateDetector {
    /// `link` names the link in the bursts found (for a capture: e.g. switch 0, port = the
    /// interface index).
    pub fn new(link: QueueKey, params: RateParams) -> Self {
        let scales = params
            .timescales_ns
            .iter()
            .map(|&window_ns| Scale {
                window_ns: window_ns.max(1),
                budget_bytes: params.threshold * params.link_bps as f64 * window_ns as f64 / 8e9,
                index: None,
                bytes: 0,
                packets: 0,
                flows: FxHashMap::default(),
                run: None,
                done: Vec::new(),
                usual: Usual::default(),
            })
            .collect();
        RateDetector { link, params, top_k: DEFAULT_TOP_K, scales }
    }

    pub fn with_top_k(mut self, k: usize) -> Self {
        self.top_k = k;
        self
    }

    /// One packet of `wire_bytes` seen at `t_ns`.
    pub fn push(&mut self, t_ns: u64, wire_bytes: u32, flow: Option<FlowKey>) {
        for s in &mut self.scales {
            s.push(t_ns, wire_bytes, flow);
        }
    }

    /// Every burst at every timescale, in order of start time then window length.
    pub fn finish(mut self) -> Vec<Burst> {
        let mut bursts = Vec::new();
        for s in &mut self.scales {
            s.end_window();
            if let Some(run) = s.run.take() {
                s.done.push(run);
            }
            let definition = Definition::Rate {
                window_s: s.window_ns as f64 / 1e9,
                threshold: self.params.threshold,
                link_bps: self.params.link_bps,
            };
            for run in s.done.drain(..) {
                let w = s.window_ns;
                let (culprits, culprit_flows) =
                    culprits_of(run.flows.into_iter(), &s.usual, self.top_k);
                bursts.push(Burst {
                    queue: self.link,
                    start_ns: run.first.saturating_mul(w),
                    end_ns: run.last.saturating_add(1).saturating_mul(w),
                    peak_bytes: run.peak_bytes,
                    peak_ns: run.peak_window.saturating_mul(w),
                    bytes: run.bytes,
                    drops: 0,
                    reports: run.packets,
                    reports_lost: 0,
                    definition,
                    resolution_ns: w,
                    culprits,
                    victims: Vec::new(),
                    culprit_flows,
                });
            }
        }
        bursts.sort_by_key(|b| (b.start_ns, b.resolution_ns));
        bursts
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attribution::test_flow as flow;
    use proptest::prelude::*;

    const LINK: QueueKey = QueueKey { switch_id: 0, port: 1, queue_id: 0 };
    const GBPS: u64 = 1_000_000_000;

    /// On a 1 Gbit/s link: flow 2 at 0.5 Gbit/s for 5 ms (1 250 B every 20 µs), and flow 1 at
    /// 2 Gbit/s (1 250 B every 5 µs) for exactly 1 ms from 1 ms.
    fn train(d: &mut RateDetector) {
        let mut pkts: Vec<(u64, u8)> = (0..250u64).map(|i| (i * 20_000, 2)).collect();
        pkts.extend((0..200u64).map(|i| (1_000_000 + i * 5_000, 1)));
        pkts.sort_unstable();
        for (t, f) in pkts {
            d.push(t, 1_250, Some(flow(f)));
        }
    }

    #[test]
    fn defaults_pin_the_timescales() {
        assert_eq!(DEFAULT_TIMESCALES_NS, [100_000, 1_000_000, 10_000_000]);
        let p = RateParams::new(GBPS, 0.9).unwrap();
        assert_eq!(p.timescales_ns, DEFAULT_TIMESCALES_NS.to_vec());
    }

    #[test]
    fn default_timescales_skip_windows_one_initial_window_fills() {
        // 10 Gbit/s: 100 µs at 0.95 holds 119 kB, every default is kept.
        assert_eq!(default_timescales(10 * GBPS, 0.95), DEFAULT_TIMESCALES_NS.to_vec());
        // 1 Gbit/s: 100 µs holds 11.9 kB, under ten packets.
        assert_eq!(default_timescales(GBPS, 0.95), vec![1_000_000, 10_000_000]);
        // 50 Mbit/s: only 10 ms (59 kB) is long enough; 1 ms holds four packets.
        assert_eq!(default_timescales(50_000_000, 0.95), vec![10_000_000]);
        // 10 Mbit/s: 10 ms holds 11.9 kB, so 100 ms; 100 kbit/s: even 1 s holds 11.9 kB.
        assert_eq!(default_timescales(10_000_000, 0.95), vec![100_000_000]);
        assert_eq!(default_timescales(100_000, 0.95), vec![10_000_000_000]);
        // A higher threshold is a larger budget: 1 ms qualifies at 50 Mbit/s × 3.
        assert_eq!(default_timescales(50_000_000, 3.0), vec![1_000_000, 10_000_000]);
    }

    #[test]
    fn bad_params_name_their_field() {
        assert_eq!(RateParams::new(0, 1.0).unwrap_err().field, "link_bps");
        assert_eq!(RateParams::new(GBPS, 0.0).unwrap_err().field, "threshold");
        assert_eq!(RateParams::new(GBPS, f64::INFINITY).unwrap_err().field, "threshold");
        let p = RateParams { link_bps: GBPS, threshold: 1.0, timescales_ns: vec![0] };
        assert_eq!(p.check().unwrap_err().field, "timescales_ns");
    }

    #[test]
    fn window_100us_finds_the_1ms_train_exactly() {
        let p = RateParams { link_bps: GBPS, threshold: 1.0, timescales_ns: vec![100_000] };
        let mut d = RateDetector::new(LINK, p);
        train(&mut d);
        let b = d.finish();
        assert_eq!(b.len(), 1);
        let b = &b[0];
        assert_eq!((b.start_ns, b.end_ns), (1_000_000, 2_000_000));
        // Each 100 µs window: 20 + 5 packets of 1 250 B = 2.5 Gbit/s.
        assert_eq!(b.peak_bytes, 31_250);
        assert_eq!(b.bytes, 312_500);
        assert_eq!(b.reports, 250);
        assert_eq!(b.resolution_ns, 100_000);
        assert_eq!(b.culprits[0].flow, flow(1));
        assert_eq!(b.culprits[0].share, 0.8);
        // Flow 2 kept its pace through the hot windows: 20 % of them, all of the link outside.
        assert_eq!(b.culprits.len(), 1);
        assert!(b.is_culprit(&flow(1)) && !b.is_culprit(&flow(2)));
        assert!(b.victims.is_empty());
        assert_eq!(
            b.definition,
            Definition::Rate { window_s: 1e-4, threshold: 1.0, link_bps: GBPS }
        );
    }

    #[test]
    fn default_timescales_report_each_window() {
        let mut d = RateDetector::new(LINK, RateParams::new(GBPS, 1.0).unwrap());
        train(&mut d);
        let b = d.finish();
        let found: Vec<(u64, u64, u64)> =
            b.iter().map(|b| (b.resolution_ns, b.start_ns, b.end_ns)).collect();
        // 1 ms window 1..2 ms: 2.5 Gbit/s. 10 ms window 0..10 ms: 562 500 B = 0.45 Gbit/s.
        assert_eq!(found, vec![(100_000, 1_000_000, 2_000_000), (1_000_000, 1_000_000, 2_000_000)]);
    }

    #[test]
    fn threshold_is_strictly_above() {
        // Exactly line rate: 1 250 B every 10 µs on 1 Gbit/s.
        let p = RateParams { link_bps: GBPS, threshold: 1.0, timescales_ns: vec![100_000] };
        let mut d = RateDetector::new(LINK, p.clone());
        for i in 0..100u64 {
            d.push(i * 10_000, 1_250, None);
        }
        assert!(d.finish().is_empty());
        let mut d = RateDetector::new(LINK, RateParams { threshold: 0.99, ..p });
        for i in 0..100u64 {
            d.push(i * 10_000, 1_250, None);
        }
        let b = d.finish();
        assert_eq!((b[0].start_ns, b[0].end_ns), (0, 1_000_000));
        assert!(b[0].culprits.is_empty());
    }

    #[test]
    fn empty_window_splits_hot_runs() {
        let p = RateParams { link_bps: GBPS, threshold: 1.0, timescales_ns: vec![100_000] };
        let mut d = RateDetector::new(LINK, p);
        // 20 kB in window 0 and in window 2, nothing in window 1.
        d.push(0, 20_000, Some(flow(1)));
        d.push(200_000, 20_000, Some(flow(2)));
        let b = d.finish();
        assert_eq!(b.len(), 2);
        assert_eq!(
            (b[1].start_ns, b[1].end_ns, b[1].culprits[0].flow),
            (200_000, 300_000, flow(2))
        );
    }

    proptest! {
        #[test]
        fn arbitrary_packets_never_panic(pkts in proptest::collection::vec(
            (any::<u64>(), any::<u32>()), 0..200)) {
            let p = RateParams { link_bps: 1, threshold: 1e-9, timescales_ns: vec![1, 7, 1_000] };
            let mut d = RateDetector::new(LINK, p);
            for (t, b) in pkts {
                d.push(t, b, None);
            }
            for b in d.finish() {
                prop_assert!(b.start_ns <= b.end_ns);
            }
        }
    }
}
