//! Reports to detector samples: one [`Observation`] per hop that carries a queue occupancy, on
//! each switch's own timeline with 32-bit timestamps unwrapped (int-telemetry.md §16.2: "use
//! device timestamps with 32-bit wrap handling, not collector wall clock").

use crate::model::{IntVersion, Report, ReportVersion};
use crate::observation::{Observation, QueueKey, ReportStream};
use rustc_hash::FxHashMap;

/// A 32-bit nanosecond counter wraps every 2^32 ns ≈ 4.295 s (INT v0.5/v1.0 and TR v0.5/v1.0
/// timestamps, int-telemetry.md §8).
pub const WRAP_32: u64 = 1 << 32;

/// Unwraps one device's 32-bit timestamps onto a 64-bit timeline. Samples may arrive slightly
/// out of order: a value is placed in the 2^32 period that puts it closest to the previous one.
#[derive(Clone, Copy, Debug, Default)]
pub struct Unwrap32 {
    last: Option<u64>,
}

impl Unwrap32 {
    pub fn unwrap(&mut self, raw: u32) -> u64 {
        let raw = raw as u64;
        let t = match self.last {
            None => raw,
            Some(last) => {
                let base = last & !(WRAP_32 - 1);
                [base.wrapping_sub(WRAP_32), base, base + WRAP_32]
                    .into_iter()
                    .filter(|b| *b <= base || b.checked_add(raw).is_some())
                    .map(|b| b.wrapping_add(raw))
                    .min_by_key(|t| t.abs_diff(last))
                    .unwrap_or(raw)
            }
        };
        if self.last.is_none_or(|l| t > l) {
            self.last = Some(t);
        }
        t
    }
}

/// Turns reports into observations, keeping one unwrapper per switch.
#[derive(Default)]
pub struct Observer {
    clocks: FxHashMap<u32, Unwrap32>,
    /// The last switch's clock, kept out of the map: reports come in runs from one switch.
    last: Option<(u32, Unwrap32)>,
    /// Reports with no hop that says how full a queue was.
    pub without_occupancy: u64,
    /// Each queue's last occupancy, for drop reports that carry none; the last queue's kept out
    /// of the map, as the clocks are.
    occupancy: FxHashMap<QueueKey, u64>,
    last_occupancy: Option<(QueueKey, u64)>,
}

impl Observer {
    /// Append the observations of `r` to `out`. The report's sequence number rides on its
    /// first observation only, so loss accounting counts each report once.
    pub fn push(&mut self, r: &Report, out: &mut Vec<Observation>) {
        let before = out.len();
        let stream = ReportStream { switch_id: r.switch_id.unwrap_or(0), hw_id: r.hw_id };
        // 8-byte timestamps: INT v2.x stacks and TR v2.0 metadata; everything else is 32-bit.
        let wide = r.int_version == Some(IntVersion::V2_1)
            || (r.int_version.is_none() && r.version == ReportVersion::V2_0);
        for (i, hop) in r.hops.iter().enumerate() {
            let Some(occupancy) = hop.queue_occupancy_bytes else { continue };
            let switch_id = hop.switch_id.or(r.switch_id).unwrap_or(0);
            let latency = hop.hop_latency_ns.map(u64::from).or_else(|| {
                match (hop.ingress_ts, hop.egress_ts) {
                    (Some(a), Some(b)) if wide => b.checked_sub(a),
                    // 32-bit: the difference modulo 2^32 is right across a wrap.
                    (Some(a), Some(b)) => Some((b as u32).wrapping_sub(a as u32) as u64),
                    _ => None,
                }
            });
            let raw = hop
                .egress_ts
                // A 64-bit device timestamp can be anything the wire says: never overflow.
                .or_else(|| hop.ingress_ts.map(|t| t.saturating_add(latency.unwrap_or(0))))
                .or(r.ingress_ts);
            let Some(raw) = raw else { continue };
            let t_ns = if wide { raw } else { self.clock(switch_id).unwrap(raw as u32) };
            let queue = QueueKey {
                switch_id,
                port: hop.egress_port.unwrap_or(0),
                queue_id: hop.queue_id.unwrap_or(0),
            };
            self.note_occupancy(queue, occupancy);
            out.push(Observation {
                t_ns,
                queue,
                occupancy_bytes: occupancy,
                flow: r.flow,
                packet_bytes: r.packet_bytes.unwrap_or(0),
                hop_latency_ns: latency,
                // A drop report is about the reporting switch, the first hop.
                dropped: r.flags.dropped && i == 0,
                report: (out.len() == before).then_some((stream, r.seq)),
            });
        }
        if out.len() == before {
            self.without_occupancy += 1;
            if r.flags.dropped {
                self.push_drop(r, stream, wide, out);
            }
        }
    }

    /// A drop report without an occupancy (a TR v0.5 drop header, TR v1.0/v2.0 drop metadata)
    /// is still a drop at the reporting switch's queue: one dropped observation at the queue's
    /// last occupancy (0 before any), so `detect` and `collect` count it (issue 35).
    fn push_drop(
        &mut self,
        r: &Report,
        stream: ReportStream,
        wide: bool,
        out: &mut Vec<Observation>,
    ) {
        let hop = r.hops.first().copied().unwrap_or_default();
        let switch_id = hop.switch_id.or(r.switch_id).unwrap_or(0);
        let Some(raw) = hop.egress_ts.or(hop.ingress_ts).or(r.ingress_ts) else { return };
        let t_ns = if wide { raw } else { self.clock(switch_id).unwrap(raw as u32) };
        let queue = QueueKey {
            switch_id,
            port: hop.egress_port.unwrap_or(0),
            queue_id: hop.queue_id.unwrap_or(0),
        };
        let occupancy = match self.last_occupancy {
            Some((q, occ)) if q == queue => occ,
            _ => self.occupancy.get(&queue).copied().unwrap_or(0),
        };
        out.push(Observation {
            t_ns,
            queue,
            occupancy_bytes: occupancy,
            flow: r.flow,
            packet_bytes: r.packet_bytes.unwrap_or(0),
            hop_latency_ns: None,
            dropped: true,
            report: Some((stream, r.seq)),
        });
    }

    fn note_occupancy(&mut self, queue: QueueKey, occupancy: u64) {
        if let Some((q, occ)) = self.last_occupancy.replace((queue, occupancy))
            && q != queue
        {
            self.occupancy.insert(q, occ);
        }
    }

    fn clock(&mut self, switch_id: u32) -> &mut Unwrap32 {
        if self.last.is_none_or(|(s, _)| s != switch_id) {
            let clock = self.clocks.remove(&switch_id).unwrap_or_default();
            if let Some((s, c)) = self.last.replace((switch_id, clock)) {
                self.clocks.insert(s, c);
            }
        }
        &mut self.last.as_mut().expect("just set").1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Hop, ReportFlags};

    #[test]
    fn wrap_32_is_about_4_3_seconds() {
        assert_eq!(WRAP_32, 4_294_967_296);
    }

    #[test]
    fn unwrap_carries_across_the_wrap_and_tolerates_late_samples() {
        let mut u = Unwrap32::default();
        assert_eq!(u.unwrap(u32::MAX - 10), WRAP_32 - 11);
        assert_eq!(u.unwrap(5), WRAP_32 + 5);
        // A sample from just before the wrap arriving late stays in the earlier period.
        assert_eq!(u.unwrap(u32::MAX - 2), WRAP_32 - 3);
        assert_eq!(u.unwrap(100), WRAP_32 + 100);
        // Three periods on, in steps under half a period.
        for k in 1..=12u64 {
            assert_eq!(u.unwrap((100 + k * (1 << 30)) as u32), WRAP_32 + 100 + k * (1 << 30));
        }
    }

    fn report(hops: Vec<Hop>, seq: u32) -> Report {
        Report {
            version: ReportVersion::V1_0,
            switch_id: Some(3),
            hw_id: 0,
            seq,
            ingress_ts: Some(1),
            flags: ReportFlags::default(),
            drop_reason: None,
            flow: None,
            packet_bytes: Some(1500),
            int_version: Some(IntVersion::V1_0),
            hops,
            inner_error: None,
            source_only: None,
        }
    }

    #[test]
    fn egress_time_from_ingress_plus_latency_saturates_at_the_end_of_the_clock() {
        let hop = Hop {
            queue_occupancy_bytes: Some(1),
            ingress_ts: Some(u64::MAX - 5),
            hop_latency_ns: Some(100),
            ..Default::default()
        };
        let mut r = report(vec![hop], 1);
        r.int_version = Some(IntVersion::V2_1); // 8-byte timestamps: used as they are
        let mut out = Vec::new();
        Observer::default().push(&r, &mut out);
        assert_eq!(out[0].t_ns, u64::MAX);
    }

    #[test]
    fn a_drop_report_without_occupancy_is_a_drop_at_the_queues_last_occupancy() {
        // A TR v0.5 drop header gives switch, ports, queue and reason, never an occupancy.
        let at = |occ, ts| Hop {
            switch_id: Some(3),
            egress_port: Some(9),
            queue_id: Some(1),
            queue_occupancy_bytes: occ,
            ingress_ts: Some(ts),
            ..Default::default()
        };
        let mut o = Observer::default();
        let mut out = Vec::new();
        o.push(&report(vec![at(Some(64_000), 100)], 1), &mut out);
        let mut drop = report(vec![at(None, 200)], 2);
        drop.flags.dropped = true;
        o.push(&drop, &mut out);
        assert_eq!(out.len(), 2);
        let d = out[1];
        assert!(d.dropped);
        assert_eq!((d.queue, d.occupancy_bytes, d.t_ns), (out[0].queue, 64_000, 200));
        assert_eq!(d.report, Some((ReportStream { switch_id: 3, hw_id: 0 }, 2)));
        // A report that is no drop and has no occupancy still gives nothing.
        o.push(&report(vec![at(None, 300)], 3), &mut out);
        assert_eq!((out.len(), o.without_occupancy), (2, 2));
        // A drop on a queue never seen: occupancy 0, still counted.
        let mut other = report(vec![Hop { egress_port: Some(4), ..at(None, 400) }], 4);
        other.flags.dropped = true;
        o.push(&other, &mut out);
        assert_eq!((out[2].dropped, out[2].occupancy_bytes, out[2].queue.port), (true, 0, 4));
    }

    #[test]
    fn each_hop_with_occupancy_is_one_observation_and_the_seq_rides_on_the_first() {
        let hop = |sw, occ| Hop {
            switch_id: Some(sw),
            egress_port: Some(9),
            queue_id: Some(1),
            queue_occupancy_bytes: occ,
            ingress_ts: Some(u32::MAX as u64 - 99),
            egress_ts: Some(400),
            ..Default::default()
        };
        let mut o = Observer::default();
        let mut out = Vec::new();
        o.push(&report(vec![hop(5, Some(8000)), hop(6, None), hop(7, Some(80))], 11), &mut out);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].queue, QueueKey { switch_id: 5, port: 9, queue_id: 1 });
        // Latency across the 32-bit wrap: 100 ns to the wrap + 400 after it.
        assert_eq!(out[0].hop_latency_ns, Some(500));
        assert_eq!(out[0].report, Some((ReportStream { switch_id: 3, hw_id: 0 }, 11)));
        assert_eq!(out[1].report, None);
        assert_eq!(out[1].queue.switch_id, 7);
        o.push(&report(vec![hop(5, None)], 12), &mut out);
        assert_eq!(o.without_occupancy, 1);
    }
}
