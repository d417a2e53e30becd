//! Who caused a burst and who paid for it (int-telemetry.md §16.3).
//!
//! - **Culprits**: flows whose sampled packets were in the queue while it grew, i.e. whose
//!   residence interval `[t − hop_latency, t]` overlaps the growth window `[start, peak]`
//!   (BurstRadar's "queue occupants"), ranked by bytes with their share. Only packets sampled
//!   inside the burst count, so the interval can only miss the window on its right: a packet
//!   counts when it was enqueued no later than the peak. Dropped packets were never queued and
//!   do not count.
//! - **Victims**: flows whose packets during the burst waited longer than the queue's baseline
//!   latency, or were dropped, with their *maximum* excess delay and their drop count.
//!
//! The peak moves later while a burst lasts, so a packet enqueued after the current peak is held
//! as "late" and becomes a growth packet if a later peak comes: a peak at time P' after the
//! packet's sample time t ≥ its enqueue time covers it. An epoch number per peak makes that
//! promotion lazy, O(1) per sample.

use crate::model::FlowKey;
use crate::observation::Observation;
use rustc_hash::FxHashMap;
use serde::Serialize;
use serde::ser::{SerializeStruct, Serializer};

/// Culprit and victim lists keep this many flows unless told otherwise.
pub const DEFAULT_TOP_K: usize = 10;

/// A flow that filled the queue.
#[derive(Clone, Debug, PartialEq)]
pub struct Culprit {
    pub flow: FlowKey,
    /// Sampled bytes this flow had in the queue while it grew.
    pub bytes: u64,
    /// `bytes` over the growth bytes of all flows (not only the listed ones).
    pub share: f64,
}

/// A flow the burst hurt.
#[derive(Clone, Debug, PartialEq)]
pub struct Victim {
    pub flow: FlowKey,
    /// Largest hop latency of its sampled packets above the queue's baseline (0 if only dropped).
    pub delay_ns: u64,
    pub drops: u64,
    /// Plain TCP captures: the flow's retransmitted segments inside or right after the burst.
    pub retransmits: u64,
    /// Plain TCP captures: duplicate ACKs the flow's receiver sent in that time.
    pub dup_acks: u64,
}

impl Serialize for Culprit {
    /// `{"flow": "10.0.0.1:5001 > 10.0.0.2:80 tcp", "bytes": int, "share": float}`.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_struct("Culprit", 3)?;
        m.serialize_field("flow", &self.flow.to_string())?;
        m.serialize_field("bytes", &self.bytes)?;
        m.serialize_field("share", &self.share)?;
        m.end()
    }
}

impl Serialize for Victim {
    /// `{"flow": str, "delay_s": float, "drops": int, "retransmits": int, "dup_acks": int}`.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_struct("Victim", 5)?;
        m.serialize_field("flow", &self.flow.to_string())?;
        m.serialize_field("delay_s", &(self.delay_ns as f64 / 1e9))?;
        m.serialize_field("drops", &self.drops)?;
        m.serialize_field("retransmits", &self.retransmits)?;
        m.serialize_field("dup_acks", &self.dup_acks)?;
        m.end()
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct FlowTally {
    /// Bytes enqueued no later than a peak already seen.
    growth: u64,
    /// Bytes enqueued after the peak of epoch `late_epoch`; growth once a later peak comes.
    late: u64,
    late_epoch: u32,
    max_latency_ns: Option<u64>,
    drops: u64,
}

impl FlowTally {
    fn settle(&mut self, epoch: u32) {
        if self.late_epoch < epoch {
            self.growth += self.late;
            self.late = 0;
            self.late_epoch = epoch;
        }
    }

    fn growth_at(&self, epoch: u32) -> u64 {
        if self.late_epoch < epoch { self.growth + self.late } else { self.growth }
    }
}

/// Per-flow tallies of one burst (or of one merge gap waiting to join it).
#[derive(Clone, Debug, Default)]
pub struct Attribution {
    flows: FxHashMap<FlowKey, FlowTally>,
    peak_ns: u64,
    epoch: u32,
}

impl Attribution {
    /// Empty tallies for a burst whose growth window currently ends at `peak_ns`.
    pub fn new(peak_ns: u64) -> Self {
        Attribution { flows: FxHashMap::default(), peak_ns, epoch: 0 }
    }

    /// Forget every flow (keeping the map's capacity) and start from `peak_ns`.
    pub fn reset(&mut self, peak_ns: u64) {
        self.flows.clear();
        self.peak_ns = peak_ns;
        self.epoch = 0;
    }

    /// The queue reached a new peak at `peak_ns` (call before observing that sample).
    pub fn new_peak(&mut self, peak_ns: u64) {
        self.peak_ns = peak_ns;
        self.epoch = self.epoch.saturating_add(1);
    }

    /// Count one sample taken during the burst. Samples without a flow are ignored.
    pub fn observe(&mut self, obs: &Observation) {
        let Some(flow) = obs.flow else { return };
        let epoch = self.epoch;
        let tally = self.flows.entry(flow).or_default();
        tally.settle(epoch);
        if obs.dropped {
            tally.drops += 1;
            return;
        }
        if let Some(lat) = obs.hop_latency_ns {
            tally.max_latency_ns = Some(tally.max_latency_ns.map_or(lat, |m| m.max(lat)));
        }
        let enqueued = obs.t_ns.saturating_sub(obs.hop_latency_ns.unwrap_or(0));
        let bytes = u64::from(obs.packet_bytes);
        if enqueued <= self.peak_ns {
            tally.growth += bytes;
        } else {
            tally.late += bytes;
        }
    }

    /// Move the tallies of a merge gap into this burst. The gap was reset at this burst's
    /// peak and no peak can occur in a gap (occupancy stays below rise), so its late bytes are
    /// late relative to the current peak here too.
    pub fn absorb(&mut self, gap: &mut Attribution) {
        let epoch = self.epoch;
        for (flow, g) in gap.flows.drain() {
            let t = self.flows.entry(flow).or_default();
            t.settle(epoch);
            t.growth += g.growth_at(gap.epoch);
            if g.late_epoch >= gap.epoch {
                t.late += g.late;
            }
            t.max_latency_ns = match (t.max_latency_ns, g.max_latency_ns) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            };
            t.drops += g.drops;
        }
    }

    /// The flows that filled the queue, most bytes first (ties by flow key), at most `top_k`.
    pub fn culprits(&self, top_k: usize) -> Vec<Culprit> {
        rank_culprits(self.flows.iter().map(|(f, t)| (*f, t.growth_at(self.epoch))), top_k)
    }

    /// The flows whose maximum latency exceeded `baseline_ns` or that lost packets, longest
    /// excess first, then most drops, then flow key; at most `top_k`. With no baseline only
    /// drops make a victim.
    pub fn victims(&self, baseline_ns: Option<u64>, top_k: usize) -> Vec<Victim> {
        let mut v: Vec<Victim> = self
            .flows
            .iter()
            .filter_map(|(flow, t)| {
                let delay_ns = match (t.max_latency_ns, baseline_ns) {
                    (Some(lat), Some(base)) => lat.saturating_sub(base),
                    _ => 0,
                };
                (delay_ns > 0 || t.drops > 0).then_some(Victim {
                    flow: *flow,
                    delay_ns,
                    drops: t.drops,
                    retransmits: 0,
                    dup_acks: 0,
                })
            })
            .collect();
        v.sort_unstable_by(|a, b| {
            (b.delay_ns, b.drops).cmp(&(a.delay_ns, a.drops)).then(a.flow.cmp(&b.flow))
        });
        v.truncate(top_k);
        v
    }
}

/// Rank `(flow, bytes)` by bytes (ties by flow key) with each flow's share of the total of all
/// given bytes; zero-byte flows are left out.
pub(crate) fn rank_culprits(
    flows: impl Iterator<Item = (FlowKey, u64)>,
    top_k: usize,
) -> Vec<Culprit> {
    let mut v: Vec<(FlowKey, u64)> = flows.filter(|(_, b)| *b > 0).collect();
    let total: u64 = v.iter().map(|(_, b)| *b).sum();
    v.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    v.truncate(top_k);
    v.into_iter()
        .map(|(flow, bytes)| Culprit { flow, bytes, share: bytes as f64 / total as f64 })
        .collect()
}

/// `10.0.0.<last>:<1000 + last> > 10.0.1.1:80 tcp`, the flows of this crate's detector tests.
#[cfg(test)]
pub(crate) fn test_flow(last: u8) -> FlowKey {
    use std::net::{IpAddr, Ipv4Addr};
    FlowKey {
        src: IpAddr::V4(Ipv4Addr::new(10, 0, 0, last)),
        dst: IpAddr::V4(Ipv4Addr::new(10, 0, 1, 1)),
        sport: 1000 + u16::from(last),
        dport: 80,
        proto: 6,
    }
}

#[cfg(test)]
mod tests {
    use super::test_flow as flow;
    use super::*;
    use crate::observation::QueueKey;

    fn sample(t_ns: u64, f: u8, bytes: u32, latency: u64) -> Observation {
        Observation {
            t_ns,
            queue: QueueKey { switch_id: 1, port: 1, queue_id: 0 },
            occupancy_bytes: 0,
            flow: Some(flow(f)),
            packet_bytes: bytes,
            hop_latency_ns: Some(latency),
            dropped: false,
            report: None,
        }
    }

    #[test]
    fn growth_flow_with_three_quarters_of_bytes_ranks_first() {
        let mut a = Attribution::new(0);
        // Growth from 0 to 100 µs: A sends 3 packets for every one of B.
        for i in 0..40u64 {
            let t = i * 2_500;
            a.new_peak(t);
            let f = if i % 4 == 3 { 2 } else { 1 };
            a.observe(&sample(t, f, 1_000, 0));
        }
        let c = a.culprits(DEFAULT_TOP_K);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].flow, flow(1));
        assert_eq!(c[0].bytes, 30_000);
        assert_eq!(c[0].share, 0.75);
        assert_eq!(c[1].share, 0.25);
    }

    #[test]
    fn after_peak_only_packets_enqueued_before_it_count() {
        let mut a = Attribution::new(0);
        a.new_peak(100_000);
        a.observe(&sample(100_000, 1, 1_000, 10_000));
        // Dequeued after the peak but enqueued at 90 µs, during the growth: a culprit.
        a.observe(&sample(150_000, 2, 1_000, 60_000));
        // Enqueued at 140 µs, after the peak: not an occupant of the growth.
        a.observe(&sample(160_000, 3, 1_000, 20_000));
        let c = a.culprits(10);
        let flows: Vec<FlowKey> = c.iter().map(|c| c.flow).collect();
        assert_eq!(flows, vec![flow(1), flow(2)]);
        assert_eq!(c[0].share, 0.5);
    }

    #[test]
    fn late_packets_become_growth_when_a_later_peak_comes() {
        let mut a = Attribution::new(0);
        a.new_peak(100_000);
        a.observe(&sample(160_000, 3, 1_000, 20_000));
        assert!(a.culprits(10).is_empty());
        a.new_peak(200_000);
        let c = a.culprits(10);
        assert_eq!(c.len(), 1);
        assert_eq!((c[0].flow, c[0].bytes), (flow(3), 1_000));
        // And touching the flow again settles without double counting.
        a.observe(&sample(200_000, 3, 500, 0));
        assert_eq!(a.culprits(10)[0].bytes, 1_500);
    }

    #[test]
    fn dropped_packets_are_victims_not_culprits() {
        let mut a = Attribution::new(0);
        a.new_peak(10);
        let mut d = sample(5, 4, 1_500, 0);
        d.dropped = true;
        d.hop_latency_ns = None;
        a.observe(&d);
        assert!(a.culprits(10).is_empty());
        assert_eq!(
            a.victims(Some(1_000), 10),
            vec![Victim { flow: flow(4), delay_ns: 0, drops: 1, retransmits: 0, dup_acks: 0 }]
        );
    }

    #[test]
    fn victims_rank_by_max_excess_over_baseline() {
        let mut a = Attribution::new(1_000_000);
        a.observe(&sample(10, 1, 100, 5_000)); // at baseline: not a victim
        a.observe(&sample(20, 2, 100, 9_000));
        a.observe(&sample(30, 2, 100, 7_000)); // max, not mean: 9 µs − 5 µs
        a.observe(&sample(40, 3, 100, 25_000));
        let v = a.victims(Some(5_000), 10);
        assert_eq!(
            v,
            vec![
                Victim { flow: flow(3), delay_ns: 20_000, drops: 0, retransmits: 0, dup_acks: 0 },
                Victim { flow: flow(2), delay_ns: 4_000, drops: 0, retransmits: 0, dup_acks: 0 },
            ]
        );
        assert_eq!(a.victims(Some(5_000), 1).len(), 1);
        assert!(a.victims(None, 10).is_empty());
    }

    #[test]
    fn top_k_caps_the_list_but_shares_use_all_bytes() {
        let mut a = Attribution::new(u64::MAX);
        for f in 1..=20u8 {
            a.observe(&sample(1, f, u32::from(f) * 100, 0));
        }
        let c = a.culprits(3);
        assert_eq!(c.len(), 3);
        assert_eq!(c[0].flow, flow(20));
        assert_eq!(c[0].share, 2_000.0 / 21_000.0);
    }

    #[test]
    fn absorb_merges_gap_tallies() {
        let mut burst = Attribution::new(0);
        burst.new_peak(100);
        burst.observe(&sample(100, 1, 1_000, 0));
        let mut gap = Attribution::new(100);
        gap.observe(&sample(300, 1, 700, 250)); // enqueued at 50: growth
        gap.observe(&sample(300, 2, 400, 100)); // enqueued at 200: late
        let mut d = sample(310, 2, 400, 0);
        d.dropped = true;
        gap.observe(&d);
        burst.absorb(&mut gap);
        let c = burst.culprits(10);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].bytes, 1_700);
        // A new peak after the gap promotes its late bytes.
        burst.new_peak(400);
        assert_eq!(burst.culprits(10)[1].bytes, 400);
        assert_eq!(
            burst.victims(Some(0), 10)[0],
            Victim { flow: flow(1), delay_ns: 250, drops: 0, retransmits: 0, dup_acks: 0 }
        );
        assert_eq!(burst.victims(Some(0), 10)[1].drops, 1);
    }
}
