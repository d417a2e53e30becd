//! Who caused a burst and who paid for it (int-telemetry.md §16.3). Each flow seen in a burst
//! has at most one role there:
//!
//! - **Culprits**: flows whose sampled packets were in the queue while it grew, i.e. whose
//!   residence interval `[t − hop_latency, t]` overlaps the growth window `[start, peak]`
//!   (BurstRadar's "queue occupants"), and that were *over-represented* there: their share of
//!   those growth bytes is at least their share of the queue's traffic outside bursts
//!   ([`Usual`]). A burst source that is silent otherwise has a usual share of 0; a steady flow
//!   that keeps sending at its pace while others pile in loses share. With nothing outside
//!   bursts to compare with, every occupant is a culprit. Ranked by growth bytes; `share` is
//!   over the growth bytes of all flows. Only packets sampled inside the burst count, so the
//!   interval can only miss the window on its right: a packet counts when it was enqueued no
//!   later than the peak. Dropped packets were never queued and do not count.
//! - **Victims**: the other flows whose packets during the burst waited longer than the queue's
//!   baseline latency, or were dropped, with their *maximum* excess delay and their drop count.
//!   A culprit that is delayed or dropped by its own burst stays a culprit.
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

/// What each flow usually sends through a queue: the bytes of its samples outside bursts (for
/// a rate detector: outside hot windows). The reference a culprit is over-represented against.
#[derive(Clone, Debug, Default)]
pub struct Usual {
    flows: FxHashMap<FlowKey, u64>,
    total: u64,
}

impl Usual {
    /// Count a sample taken outside any burst (dropped packets and samples without a flow are
    /// not traffic through the queue).
    pub fn observe(&mut self, obs: &Observation) {
        if let (Some(flow), false) = (obs.flow, obs.dropped) {
            self.add(flow, u64::from(obs.packet_bytes));
        }
    }

    pub fn add(&mut self, flow: FlowKey, bytes: u64) {
        *self.flows.entry(flow).or_default() += bytes;
        self.total += bytes;
    }

    /// Whether `growth_bytes` out of `growth_total` is at least this flow's usual share (always,
    /// when nothing was seen outside bursts).
    fn over_represented(&self, flow: &FlowKey, growth_bytes: u64, growth_total: u64) -> bool {
        let usual = self.flows.get(flow).copied().unwrap_or(0);
        u128::from(growth_bytes) * u128::from(self.total)
            >= u128::from(usual) * u128::from(growth_total)
    }
}

/// The roles of one burst's flows: the listed culprits and victims (at most `top_k` each) and
/// every culprit, listed or not.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Roles {
    pub culprits: Vec<Culprit>,
    pub victims: Vec<Victim>,
    /// Sorted.
    pub culprit_flows: Vec<FlowKey>,
}

/// Culprits among `(flow, growth bytes)`: the over-represented flows (see the module doc),
/// ranked by bytes (ties by flow key) with their share of all the given bytes; and the sorted
/// list of all of them. Zero-byte flows are left out.
pub fn culprits_of(
    growth: impl Iterator<Item = (FlowKey, u64)>,
    usual: &Usual,
    top_k: usize,
) -> (Vec<Culprit>, Vec<FlowKey>) {
    let all: Vec<(FlowKey, u64)> = growth.filter(|(_, b)| *b > 0).collect();
    let total: u64 = all.iter().map(|(_, b)| *b).sum();
    let mut v: Vec<(FlowKey, u64)> =
        all.into_iter().filter(|(f, b)| usual.over_represented(f, *b, total)).collect();
    let mut flows: Vec<FlowKey> = v.iter().map(|(f, _)| *f).collect();
    flows.sort_unstable();
    v.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    v.truncate(top_k);
    let culprits = v
        .into_iter()
        .map(|(flow, bytes)| Culprit { flow, bytes, share: bytes as f64 / total as f64 })
        .collect();
    (culprits, flows)
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

    /// Each flow's role in this burst: culprits against `usual`, then victims among the rest —
    /// those whose maximum latency exceeded `baseline_ns` or that lost packets, longest excess
    /// first, then most drops, then flow key. With no baseline only drops make a victim.
    pub fn roles(&self, usual: &Usual, baseline_ns: Option<u64>, top_k: usize) -> Roles {
        let (culprits, culprit_flows) = culprits_of(
            self.flows.iter().map(|(f, t)| (*f, t.growth_at(self.epoch))),
            usual,
            top_k,
        );
        let mut victims: Vec<Victim> = self
            .flows
            .iter()
            .filter(|(flow, _)| culprit_flows.binary_search(flow).is_err())
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
        victims.sort_unstable_by(|a, b| {
            (b.delay_ns, b.drops).cmp(&(a.delay_ns, a.drops)).then(a.flow.cmp(&b.flow))
        });
        victims.truncate(top_k);
        Roles { culprits, victims, culprit_flows }
    }
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

    /// Culprits with nothing outside bursts to compare with: every occupant.
    fn occupants(a: &Attribution, top_k: usize) -> Vec<Culprit> {
        a.roles(&Usual::default(), None, top_k).culprits
    }

    /// A queue whose traffic outside bursts was `bytes` of each flow in `flows`.
    fn usual(flows: &[(u8, u64)]) -> Usual {
        let mut u = Usual::default();
        for &(f, bytes) in flows {
            u.add(flow(f), bytes);
        }
        u
    }

    // ---- culprits: the queue's occupants while it grew ----

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
        let c = occupants(&a, DEFAULT_TOP_K);
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
        let c = occupants(&a, 10);
        let flows: Vec<FlowKey> = c.iter().map(|c| c.flow).collect();
        assert_eq!(flows, vec![flow(1), flow(2)]);
        assert_eq!(c[0].share, 0.5);
    }

    #[test]
    fn late_packets_become_growth_when_a_later_peak_comes() {
        let mut a = Attribution::new(0);
        a.new_peak(100_000);
        a.observe(&sample(160_000, 3, 1_000, 20_000));
        assert!(occupants(&a, 10).is_empty());
        a.new_peak(200_000);
        let c = occupants(&a, 10);
        assert_eq!(c.len(), 1);
        assert_eq!((c[0].flow, c[0].bytes), (flow(3), 1_000));
        // And touching the flow again settles without double counting.
        a.observe(&sample(200_000, 3, 500, 0));
        assert_eq!(occupants(&a, 10)[0].bytes, 1_500);
    }

    #[test]
    fn top_k_caps_the_list_but_shares_use_all_bytes() {
        let mut a = Attribution::new(u64::MAX);
        for f in 1..=20u8 {
            a.observe(&sample(1, f, u32::from(f) * 100, 0));
        }
        let r = a.roles(&Usual::default(), None, 3);
        assert_eq!(r.culprits.len(), 3);
        assert_eq!(r.culprits[0].flow, flow(20));
        assert_eq!(r.culprits[0].share, 2_000.0 / 21_000.0);
        // Every culprit is known, listed or not.
        assert_eq!(r.culprit_flows.len(), 20);
    }

    // ---- roles: over-represented occupants are culprits, the rest can be victims ----

    #[test]
    fn burst_source_is_culprit_and_steady_flow_is_victim_though_both_were_queued() {
        // Outside bursts the queue carries flows 1 and 2 evenly; flow 3 only bursts.
        let u = usual(&[(1, 50_000), (2, 50_000)]);
        let mut a = Attribution::new(0);
        a.new_peak(100_000);
        // During the growth flow 3 brings 80 % of the bytes, 1 and 2 keep their pace (10 %
        // each) and wait behind it; flow 3 loses packets too.
        for i in 0..10u64 {
            let f = match i {
                0 => 1,
                1 => 2,
                _ => 3,
            };
            a.observe(&sample(i * 10_000, f, 1_000, 6_000 + i * 1_000));
        }
        let mut d = sample(95_000, 3, 1_000, 0);
        d.dropped = true;
        a.observe(&d);
        let r = a.roles(&u, Some(5_000), 10);
        assert_eq!(r.culprits.len(), 1);
        assert_eq!((r.culprits[0].flow, r.culprits[0].share), (flow(3), 0.8));
        assert_eq!(r.culprit_flows, vec![flow(3)]);
        // Flow 3 was dropped and delayed most, yet it is no victim: it filled the queue.
        let victims: Vec<FlowKey> = r.victims.iter().map(|v| v.flow).collect();
        assert_eq!(victims, vec![flow(2), flow(1)]);
        assert_eq!((r.victims[0].delay_ns, r.victims[1].delay_ns), (2_000, 1_000));
    }

    #[test]
    fn flow_alone_in_its_queue_is_the_culprit_of_its_own_burst() {
        // Equal shares in and out of the burst: over-represented by the tie.
        let u = usual(&[(1, 7_000)]);
        let mut a = Attribution::new(10);
        a.observe(&sample(5, 1, 1_500, 40_000));
        let r = a.roles(&u, Some(1_000), 10);
        assert_eq!(r.culprit_flows, vec![flow(1)]);
        assert!(r.victims.is_empty());
    }

    #[test]
    fn share_exactly_at_the_usual_share_is_culprit_and_below_is_not() {
        let u = usual(&[(1, 3), (2, 1)]);
        let mut a = Attribution::new(10);
        for (f, bytes) in [(1, 300), (2, 100)] {
            a.observe(&sample(1, f, bytes, 0));
        }
        assert_eq!(a.roles(&u, None, 10).culprit_flows, vec![flow(1), flow(2)]);
        a.observe(&sample(2, 1, 1, 0));
        assert_eq!(a.roles(&u, None, 10).culprit_flows, vec![flow(1)]);
    }

    #[test]
    fn dropped_packets_are_victims_not_culprits() {
        let mut a = Attribution::new(0);
        a.new_peak(10);
        let mut d = sample(5, 4, 1_500, 0);
        d.dropped = true;
        d.hop_latency_ns = None;
        a.observe(&d);
        let r = a.roles(&Usual::default(), Some(1_000), 10);
        assert!(r.culprits.is_empty());
        assert_eq!(
            r.victims,
            vec![Victim { flow: flow(4), delay_ns: 0, drops: 1, retransmits: 0, dup_acks: 0 }]
        );
    }

    #[test]
    fn victims_rank_by_max_excess_over_baseline() {
        // Every flow here is usual traffic, and the burst's growth was someone else's (flow 9).
        let u = usual(&[(1, 100), (2, 100), (3, 100)]);
        let mut a = Attribution::new(1_000_000);
        a.observe(&sample(5, 9, 10_000, 0));
        a.observe(&sample(10, 1, 100, 5_000)); // at baseline: not a victim
        a.observe(&sample(20, 2, 100, 9_000));
        a.observe(&sample(30, 2, 100, 7_000)); // max, not mean: 9 µs − 5 µs
        a.observe(&sample(40, 3, 100, 25_000));
        let v = a.roles(&u, Some(5_000), 10).victims;
        assert_eq!(
            v,
            vec![
                Victim { flow: flow(3), delay_ns: 20_000, drops: 0, retransmits: 0, dup_acks: 0 },
                Victim { flow: flow(2), delay_ns: 4_000, drops: 0, retransmits: 0, dup_acks: 0 },
            ]
        );
        assert_eq!(a.roles(&u, Some(5_000), 1).victims.len(), 1);
        assert!(a.roles(&u, None, 10).victims.is_empty());
    }

    #[test]
    fn absorb_merges_gap_tallies() {
        let u = usual(&[(1, 1_000)]);
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
        let c = occupants(&burst, 10);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].bytes, 1_700);
        // Flow 1 alone filled the queue: a culprit, and flow 2, dropped, a victim.
        let r = burst.roles(&u, Some(0), 10);
        assert_eq!(r.culprit_flows, vec![flow(1)]);
        assert_eq!(
            r.victims,
            vec![Victim { flow: flow(2), delay_ns: 100, drops: 1, retransmits: 0, dup_acks: 0 }]
        );
        // A new peak after the gap promotes flow 2's late bytes: 400 of 2 100, above its usual
        // share of nothing, so it turns culprit; flow 1, all of this queue's usual traffic, now
        // brings less than that (81 %) and is a victim of the 250 ns it waited.
        burst.new_peak(400);
        let r = burst.roles(&u, Some(0), 10);
        assert_eq!(r.culprits[0].bytes, 400);
        assert_eq!(r.culprit_flows, vec![flow(2)]);
        assert_eq!(
            r.victims,
            vec![Victim { flow: flow(1), delay_ns: 250, drops: 0, retransmits: 0, dup_acks: 0 }]
        );
    }
}
