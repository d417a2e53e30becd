//! Records: the columnar tables every run produces (DESIGN.md "Records"). Engines append to
//! column builders; the tables cross to Python once, column by column.
//!
//! Times are seconds (`f64`) here, at the edge; units are in the column names.

use std::collections::BTreeMap;
use std::hash::BuildHasher;

use rustc_hash::{FxBuildHasher, FxHashMap};
use serde::Serialize;

pub mod drops;
pub mod flow_key;
pub mod flows;
pub(crate) mod int;
pub mod intervals;
pub mod queries;
pub mod queue;
pub mod summary;
pub(crate) mod time_weighted;

/// One column of a table.
#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    U64(Vec<u64>),
    I64(Vec<i64>),
    F64(Vec<f64>),
    Bool(Vec<bool>),
    /// Small tables: plain strings (`None` = null).
    Str(Vec<Option<String>>),
    /// Long tables with few distinct strings: codes into `dict`.
    Dict {
        codes: Vec<u32>,
        dict: Vec<String>,
    },
}

impl Column {
    pub fn len(&self) -> usize {
        match self {
            Column::U64(v) => v.len(),
            Column::I64(v) => v.len(),
            Column::F64(v) => v.len(),
            Column::Bool(v) => v.len(),
            Column::Str(v) => v.len(),
            Column::Dict { codes, .. } => codes.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A named table of equal-length columns.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    pub name: &'static str,
    pub columns: Vec<(&'static str, Column)>,
}

impl Table {
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |(_, c)| c.len())
    }
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|(n, _)| *n == name).map(|(_, c)| c)
    }
}

/// A table's row limit: rows past `max` are counted in `not_kept` instead of stored, so a
/// table the estimate cannot bound (the `queue` table, drops of TCP's own packets, INT on an
/// ACK path) stops growing at its share of the memory budget rather than aborting the run
/// (`scenario::budget::row_caps` sets each table's `max`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowCap {
    pub max: u64,
    pub not_kept: u64,
}

impl Default for RowCap {
    /// No limit: for tables built outside a scenario's run (unit tests, tools).
    fn default() -> RowCap {
        RowCap::new(u64::MAX)
    }
}

impl RowCap {
    pub fn new(max: u64) -> RowCap {
        RowCap { max, not_kept: 0 }
    }

    /// Whether a table holding `rows` rows may keep one more; counts it if not.
    #[inline]
    pub fn admit(&mut self, rows: usize) -> bool {
        if (rows as u64) < self.max {
            return true;
        }
        self.not_kept += 1;
        false
    }
}

/// A string column whose values repeat: interns each distinct string once.
#[derive(Clone, Debug, Default)]
pub struct DictBuilder {
    codes: Vec<u32>,
    dict: Vec<String>,
    /// The string's hash -> its code, so interning 400k port names is not quadratic; keyed by
    /// hash rather than by the string so the names are not held twice.
    index: FxHashMap<u64, u32>,
    /// Codes whose hash collided with an earlier, different string (rare; scanned linearly).
    collided: Vec<u32>,
}

impl DictBuilder {
    /// The code of `s`, assigning the next one (in first-seen order) if it is new.
    pub fn intern(&mut self, s: &str) -> u32 {
        let h = FxBuildHasher.hash_one(s);
        if let Some(&code) = self.index.get(&h) {
            if self.dict[code as usize] == s {
                return code;
            }
            if let Some(&c) = self.collided.iter().find(|&&c| self.dict[c as usize] == s) {
                return c;
            }
            let code = self.dict.len() as u32;
            self.dict.push(s.to_owned());
            self.collided.push(code);
            return code;
        }
        let code = self.dict.len() as u32;
        self.dict.push(s.to_owned());
        self.index.insert(h, code);
        code
    }
    #[inline]
    pub fn push_code(&mut self, code: u32) {
        debug_assert!((code as usize) < self.dict.len());
        self.codes.push(code);
    }
    pub fn finish(self) -> Column {
        Column::Dict { codes: self.codes, dict: self.dict }
    }
}

/// Why a packet was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DropReason {
    /// The queue's byte limit would have been exceeded (tail drop).
    QueueFull,
    /// A host `fq`: the flow already held `flow_limit` packets.
    FqFlowLimit,
    /// A host `fq`: the qdisc already held `limit` packets.
    FqLimit,
    /// A host `fq`: the departure time was beyond the horizon.
    FqHorizon,
    /// A host's NIC receive ring was full (`host::cpu`).
    RxMissed,
}

impl From<crate::host::fq::FqDrop> for DropReason {
    fn from(d: crate::host::fq::FqDrop) -> DropReason {
        use crate::host::fq::FqDrop;
        match d {
            FqDrop::FlowLimit => DropReason::FqFlowLimit,
            FqDrop::Limit => DropReason::FqLimit,
            FqDrop::Horizon => DropReason::FqHorizon,
        }
    }
}

impl DropReason {
    pub fn as_str(self) -> &'static str {
        match self {
            DropReason::QueueFull => "queue_full",
            DropReason::FqFlowLimit => "fq_flow_limit",
            DropReason::FqLimit => "fq_limit",
            DropReason::FqHorizon => "fq_horizon",
            DropReason::RxMissed => "rx_missed",
        }
    }
}

/// The `--json` summary of one run (the schema is part of the CLI contract).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Summary {
    pub scenario: String,
    pub seed: u64,
    pub flows: Vec<FlowSummary>,
    pub ports: Vec<PortSummary>,
    pub engine: EngineSummary,
    /// Per table, rows past its cap that were counted but not kept (`RowCap`); absent from
    /// the JSON when every row was kept.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub rows_not_kept: BTreeMap<&'static str, u64>,
    /// Every host with a CPU model (`host::cpu`); absent from the JSON when none has one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<HostSummary>,
}

/// A host's CPU in a run.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct HostSummary {
    pub node: String,
    /// The profile its CPU started from, if any.
    pub cpu: Option<String>,
    pub cores: u32,
    /// Packets dropped at a full NIC receive ring, as the NIC counts them (`rx_missed`).
    pub rx_missed: u64,
    pub rx_packets: u64,
    /// Skbs after GRO: `rx_packets / rx_skbs` segments per skb.
    pub rx_skbs: u64,
    pub tx_skbs: u64,
    /// The busiest core's busy time over the run's time (1 = that core never idled).
    pub busiest_core_share: f64,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FlowSummary {
    pub flow_id: u32,
    pub kind: &'static str,
    pub cca: Option<String>,
    pub src: String,
    pub dst: String,
    /// The flow's size (a burst source's: the bytes it sent); for an unsized TCP flow, the bytes
    /// its sender saw acknowledged by the end of the run, so `delivered_bytes` can be above it
    /// by what ACKs still in flight cover, or below it by what the application has not read.
    pub size_bytes: u64,
    /// Bytes the receiving application has read (a burst source's: datagrams that reached the
    /// sink).
    pub delivered_bytes: u64,
    pub start_s: f64,
    /// First SYN to the last byte delivered to the receiving application; `None` if unfinished.
    pub fct_s: Option<f64>,
    /// First SYN to the last byte acknowledged at the sender (iperf3 sender's view).
    pub sender_done_s: Option<f64>,
    pub retransmits: u64,
    pub timeouts: u64,
    /// Tail loss probes sent (the kernel's `TCPLossProbes`).
    pub loss_probes: u64,
    /// Fast-recovery episodes (`TCPSackRecovery`).
    pub recoveries: u64,
    /// Retransmissions lost again (`TCPLostRetransmit`).
    pub lost_retransmits: u64,
    /// RTOs that ended a fast recovery (`TCPSackRecoveryFail`).
    pub recovery_timeouts: u64,
    /// Pure ACKs the receiver sent (the sender's `Tcp.InSegs`, less the handshake).
    pub acks: u64,
    pub max_cwnd_bytes: Option<u64>,
    /// Seconds the flow was active: its FCT once finished; first SYN to the end of the run if
    /// unfinished; a burst source's scheduled span, cut at the end of the run.
    pub active_s: f64,
    /// `delivered_bytes` × 8 / `active_s`, bit/s: a throughput for every flow, finished or not;
    /// `None` for a flow that never started.
    pub throughput_bps: Option<f64>,
    /// The receiver's memory counters, only with its `skb_truesize` given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receive_memory: Option<crate::tcp::receiver::RmemStats>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PortSummary {
    pub node: String,
    pub port: String,
    pub drops: u64,
    pub max_queue_bytes: u64,
    /// Bytes queued, averaged over the run's time (each level weighted by how long it held),
    /// from 0 to the end of the run; `None` on a port whose queue is not recorded (listed for
    /// its drops).
    pub mean_queue_bytes: Option<f64>,
    pub ecn_marks: u64,
    /// Skbs a `tbf` on this port dropped, as `tc -s` counts them (a GSO skb dropped whole is
    /// one); absent on ports without `tbf`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tbf_drops: Option<u64>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct EngineSummary {
    pub events: u64,
    pub wall_s: f64,
    pub events_per_s: f64,
    pub sim_time_s: f64,
    pub version: String,
}

/// Everything a run returns.
#[derive(Clone, Debug)]
pub struct Output {
    pub summary: Summary,
    /// `flows`, `intervals`, `queue`, `drops`, `queries` (one row per completed incast query),
    /// `int` (INT metadata per sampled packet and INT-enabled hop; empty when INT is off), in
    /// that order.
    pub tables: Vec<Table>,
    /// Packets serialized on a port, summed over the ports: the run's packet-hops (a burst
    /// source's datagrams on its own link, which no port serializes, not counted).
    pub packet_hops: u64,
}

impl Output {
    pub fn table(&self, name: &str) -> Option<&Table> {
        self.tables.iter().find(|t| t.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dict_of(b: DictBuilder) -> (Vec<u32>, Vec<String>) {
        match b.finish() {
            Column::Dict { codes, dict } => (codes, dict),
            other => panic!("DictBuilder::finish gave {other:?}, expected Column::Dict"),
        }
    }

    #[test]
    fn intern_assigns_codes_in_first_seen_order_like_a_linear_scan() {
        let names: Vec<String> = (0..5000).map(|i| format!("h{}-eth{}", i % 1700, i % 3)).collect();
        let mut b = DictBuilder::default();
        let mut reference: Vec<&str> = Vec::new();
        for n in &names {
            let want = match reference.iter().position(|d| d == n) {
                Some(i) => i as u32,
                None => {
                    reference.push(n);
                    (reference.len() - 1) as u32
                }
            };
            let code = b.intern(n);
            assert_eq!(code, want, "code of {n}");
            b.push_code(code);
        }
        let (codes, dict) = dict_of(b);
        assert_eq!(dict, reference);
        assert_eq!(codes.len(), names.len());
        for (c, n) in codes.iter().zip(&names) {
            assert_eq!(&dict[*c as usize], n);
        }
    }

    #[test]
    fn a_row_cap_admits_up_to_its_max_then_counts() {
        let mut cap = RowCap::new(2);
        let mut rows = Vec::new();
        for i in 0..5 {
            if cap.admit(rows.len()) {
                rows.push(i);
            }
        }
        assert_eq!(rows, [0, 1]);
        assert_eq!(cap.not_kept, 3);
        assert!(RowCap::default().admit(usize::MAX - 1));
    }

    #[test]
    fn intern_keeps_strings_apart_when_their_hashes_collide() {
        let mut b = DictBuilder::default();
        assert_eq!(b.intern("a"), 0);
        // Point "b"'s hash at "a"'s code, as a real collision would.
        let hb = FxBuildHasher.hash_one("b");
        b.index.insert(hb, 0);
        assert_eq!(b.intern("b"), 1);
        assert_eq!(b.intern("b"), 1);
        assert_eq!(b.intern("a"), 0);
        assert_eq!(b.intern("c"), 2);
        let (_, dict) = dict_of(b);
        assert_eq!(dict, ["a", "b", "c"]);
    }
}
