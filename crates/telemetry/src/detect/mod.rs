//! Microburst detection (int-telemetry.md §14, §16.2): what a detected burst records and which
//! definition found it.
//!
//! There is no agreed definition of a microburst (§14), so every [`Burst`] carries the
//! [`Definition`] and parameters that fired, and the finest timescale its input could resolve:
//! - [`hysteresis`]: per-queue rise/fall thresholds on occupancy samples, the Cisco Nexus /
//!   Arista LANZ / Juniper QFX definition, for INT reports, queue-depth streams and the
//!   simulator;
//! - [`rate`]: bytes per window against the link rate at several timescales, the n2disk /
//!   Allegro definition, for plain packet captures.

pub mod hysteresis;
mod machine;
mod median;
pub mod params;
pub mod rate;

pub use crate::attribution::{Culprit, Victim};
use crate::model::FlowKey;
use crate::observation::QueueKey;
use serde::Serialize;
use serde::ser::{SerializeStruct, Serializer};
use std::fmt;

/// Which definition found a burst, with its parameters, as the JSON output names them.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Definition {
    /// Occupancy ≥ `rise_bytes` opens, < `fall_bytes` closes; bursts shorter than
    /// `min_duration_s` are discarded, closes followed by a re-rise within `merge_gap_s` merge.
    /// `rise_of_deepest`: the fraction of the queue's deepest occupancy `rise_bytes` came from
    /// (the buffer unknown), `null` when the rise was given or taken from the buffer.
    Hysteresis {
        rise_bytes: u64,
        fall_bytes: u64,
        min_duration_s: f64,
        merge_gap_s: f64,
        rise_of_deepest: Option<f64>,
    },
    /// A window of `window_s` is hot when its bytes exceed `threshold` × `link_bps` × `window_s`.
    Rate { window_s: f64, threshold: f64, link_bps: u64 },
}

/// One detected microburst. Times are nanoseconds on the input's timeline; the JSON form
/// (`Serialize`) gives seconds and flattens the queue:
/// `{"switch_id","port","queue_id","start_s","end_s","duration_s","peak_bytes","peak_s","bytes",
/// "drops","reports","reports_lost","resolution_s","definition","culprits","victims"}`.
#[derive(Clone, Debug, PartialEq)]
pub struct Burst {
    /// The queue (for a rate burst: the link the caller named).
    pub queue: QueueKey,
    pub start_ns: u64,
    pub end_ns: u64,
    /// Highest occupancy seen (for a rate burst: most bytes in one window).
    pub peak_bytes: u64,
    /// When the peak was first seen (for a rate burst: the start of that window).
    pub peak_ns: u64,
    /// Bytes dequeued during the burst, from the sizes of the forwarded samples (for a rate
    /// burst: the bytes of the hot windows).
    pub bytes: u64,
    /// Samples that were drops.
    pub drops: u64,
    /// Samples seen during the burst (reports, or packets for a rate burst).
    pub reports: u64,
    /// Reports lost during the burst on the report streams that fed this queue (§16.4).
    pub reports_lost: u64,
    pub definition: Definition,
    /// The finest timescale this detection resolves: the input's median sample spacing for a
    /// queue (§16.2 "report which timescale a detector can resolve"), the window for a rate
    /// burst. 0 when the queue had a single sample.
    pub resolution_ns: u64,
    /// Flows that filled the queue, most bytes first (at most the detector's top k).
    pub culprits: Vec<Culprit>,
    /// Flows that waited or were dropped and are not culprits, longest excess delay first.
    pub victims: Vec<Victim>,
    /// Every culprit, listed or not, sorted: a flow in here is never a victim of this burst.
    pub culprit_flows: Vec<FlowKey>,
}

impl Burst {
    pub fn duration_ns(&self) -> u64 {
        self.end_ns.saturating_sub(self.start_ns)
    }

    /// Whether `flow` is a culprit of this burst (listed or not): such a flow is not a victim.
    pub fn is_culprit(&self, flow: &FlowKey) -> bool {
        self.culprit_flows.binary_search(flow).is_ok()
    }
}

fn seconds(ns: u64) -> f64 {
    ns as f64 / 1e9
}

impl Serialize for Burst {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_struct("Burst", 16)?;
        m.serialize_field("switch_id", &self.queue.switch_id)?;
        m.serialize_field("port", &self.queue.port)?;
        m.serialize_field("queue_id", &self.queue.queue_id)?;
        m.serialize_field("start_s", &seconds(self.start_ns))?;
        m.serialize_field("end_s", &seconds(self.end_ns))?;
        m.serialize_field("duration_s", &seconds(self.duration_ns()))?;
        m.serialize_field("peak_bytes", &self.peak_bytes)?;
        m.serialize_field("peak_s", &seconds(self.peak_ns))?;
        m.serialize_field("bytes", &self.bytes)?;
        m.serialize_field("drops", &self.drops)?;
        m.serialize_field("reports", &self.reports)?;
        m.serialize_field("reports_lost", &self.reports_lost)?;
        m.serialize_field("resolution_s", &seconds(self.resolution_ns))?;
        m.serialize_field("definition", &self.definition)?;
        m.serialize_field("culprits", &self.culprits)?;
        m.serialize_field("victims", &self.victims)?;
        m.end()
    }
}

/// A detector parameter out of range: which one, its value, what was expected.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamError {
    pub field: &'static str,
    pub value: f64,
    pub expected: &'static str,
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} = {}: expected {}", self.field, self.value, self.expected)
    }
}

impl std::error::Error for ParamError {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attribution::test_flow as flow;

    fn burst(definition: Definition) -> Burst {
        Burst {
            queue: QueueKey { switch_id: 7, port: 3, queue_id: 1 },
            start_ns: 1_000_000,
            end_ns: 1_250_000,
            peak_bytes: 80_000,
            peak_ns: 1_100_000,
            bytes: 120_000,
            drops: 2,
            reports: 40,
            reports_lost: 1,
            definition,
            resolution_ns: 5_000,
            culprits: vec![Culprit { flow: flow(1), bytes: 90_000, share: 0.75 }],
            victims: vec![Victim {
                flow: flow(2),
                delay_ns: 40_000,
                drops: 2,
                retransmits: 0,
                dup_acks: 0,
            }],
            culprit_flows: vec![flow(1)],
        }
    }

    #[test]
    fn json_burst_has_the_documented_keys_in_seconds() {
        let b = burst(Definition::Hysteresis {
            rise_bytes: 50_000,
            fall_bytes: 20_000,
            min_duration_s: 1e-5,
            merge_gap_s: 5e-5,
            rise_of_deepest: None,
        });
        let v = serde_json::to_value(&b).unwrap();
        let mut got: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        let mut want = vec![
            "switch_id",
            "port",
            "queue_id",
            "start_s",
            "end_s",
            "duration_s",
            "peak_bytes",
            "peak_s",
            "bytes",
            "drops",
            "reports",
            "reports_lost",
            "resolution_s",
            "definition",
            "culprits",
            "victims",
        ];
        got.sort_unstable();
        want.sort_unstable();
        assert_eq!(got, want);
        assert_eq!(v["switch_id"], 7);
        assert_eq!(v["duration_s"], 0.00025);
        assert_eq!(v["peak_s"], 0.0011);
        assert_eq!(v["resolution_s"], 5e-6);
        assert_eq!(v["definition"]["kind"], "hysteresis");
        assert_eq!(v["definition"]["rise_bytes"], 50_000);
        assert_eq!(v["definition"]["merge_gap_s"], 5e-5);
        assert_eq!(v["culprits"][0]["flow"], "10.0.0.1:1001 > 10.0.1.1:80 tcp");
        assert_eq!(v["culprits"][0]["share"], 0.75);
        assert_eq!(v["victims"][0]["delay_s"], 4e-5);
        assert_eq!(v["victims"][0]["drops"], 2);
        assert!(b.is_culprit(&flow(1)) && !b.is_culprit(&flow(2)));
    }

    #[test]
    fn json_rate_definition_is_tagged() {
        let b =
            burst(Definition::Rate { window_s: 1e-4, threshold: 1.0, link_bps: 10_000_000_000 });
        let v = serde_json::to_value(&b).unwrap();
        assert_eq!(
            v["definition"],
            serde_json::json!({"kind": "rate", "window_s": 1e-4, "threshold": 1.0,
                               "link_bps": 10_000_000_000u64})
        );
    }

    #[test]
    fn param_error_names_field_value_expectation() {
        let e = ParamError { field: "rise_pct", value: 150.0, expected: "a percentage in 0..=100" };
        assert_eq!(e.to_string(), "rise_pct = 150: expected a percentage in 0..=100");
    }
}
