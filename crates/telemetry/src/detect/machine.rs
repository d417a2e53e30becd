//! The rise/fall state machine of one queue at known thresholds (int-telemetry.md §16.2), as
//! [`super::hysteresis`] drives it: IDLE, IN_BURST and CLOSING, the counts and attribution of the
//! burst being tracked, and what the queue carried outside its bursts.

use super::median::LogHistogram;
use super::params::{HysteresisParams, Thresholds};
use crate::attribution::{Attribution, Usual};
use crate::observation::Observation;

#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Counts {
    pub(super) bytes: u64,
    pub(super) drops: u64,
    pub(super) samples: u64,
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

/// What a queue carried outside its bursts: the victims' latency baseline and each flow's usual
/// traffic.
#[derive(Debug)]
pub(super) struct Outside {
    pub(super) baseline: LogHistogram,
    pub(super) usual: Usual,
}

impl Outside {
    pub(super) fn new() -> Self {
        Outside { baseline: LogHistogram::new(), usual: Usual::default() }
    }

    pub(super) fn observe(&mut self, obs: &Observation) {
        if let Some(lat) = obs.hop_latency_ns {
            self.baseline.record(lat);
        }
        self.usual.observe(obs);
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
    /// Samples of the current merge gap (their attribution is in `Machine::gap`).
    gap: Counts,
}

/// A burst the machine emitted.
#[derive(Debug)]
pub(super) struct Closed {
    pub(super) start_ns: u64,
    pub(super) end_ns: u64,
    pub(super) peak_bytes: u64,
    pub(super) peak_ns: u64,
    pub(super) counts: Counts,
    pub(super) attribution: Attribution,
}

/// The state machine of one queue at known thresholds.
#[derive(Debug, Default)]
pub(super) struct Machine {
    open: Option<Open>,
    /// Merge-gap attribution, reused from gap to gap.
    gap: Attribution,
    pub(super) closed: Vec<Closed>,
}

impl Machine {
    /// One sample at thresholds `th`; what falls outside any burst goes to `outside`.
    pub(super) fn push(
        &mut self,
        obs: &Observation,
        p: &HysteresisParams,
        th: Thresholds,
        outside: &mut Outside,
    ) {
        let (t, occ) = (obs.t_ns, obs.occupancy_bytes);
        // CLOSING: expire, re-rise, or stay in the gap.
        if let Some(end) = self.open.as_ref().and_then(|o| o.end_ns) {
            if t - end > p.merge_gap_ns {
                self.close(p, t);
            } else if occ >= th.rise_bytes {
                self.rerise();
            } else {
                self.gap_sample(obs, outside);
                return;
            }
        }
        match &mut self.open {
            None if occ >= th.rise_bytes => {
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
                self.in_burst_sample(obs, th);
            }
            None => outside.observe(obs),
            Some(_) => self.in_burst_sample(obs, th),
        }
    }

    fn in_burst_sample(&mut self, obs: &Observation, th: Thresholds) {
        let Some(open) = self.open.as_mut() else { return };
        let (t, occ) = (obs.t_ns, obs.occupancy_bytes);
        if occ > open.peak_bytes {
            open.peak_bytes = occ;
            open.peak_ns = t;
            open.attribution.new_peak(t);
        }
        open.counts.add(obs);
        open.attribution.observe(obs);
        if occ < th.fall_bytes {
            open.end_ns = Some(t);
            open.gap = Counts::default();
            self.gap.reset(open.peak_ns);
        }
    }

    fn gap_sample(&mut self, obs: &Observation, outside: &mut Outside) {
        if let Some(open) = self.open.as_mut() {
            open.gap.add(obs);
        }
        self.gap.observe(obs);
        outside.observe(obs);
    }

    fn rerise(&mut self) {
        if let Some(open) = self.open.as_mut() {
            open.end_ns = None;
            let mut gap = std::mem::take(&mut open.gap);
            open.counts.absorb(&mut gap);
            open.attribution.absorb(&mut self.gap);
        }
    }

    /// End the open burst (at its fall, or at `last_ns`, the queue's last sample, if it never
    /// fell) and keep it if long enough.
    pub(super) fn close(&mut self, p: &HysteresisParams, last_ns: u64) {
        let Some(open) = self.open.take() else { return };
        let end_ns = open.end_ns.unwrap_or(last_ns);
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
