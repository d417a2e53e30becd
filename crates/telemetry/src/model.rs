//! What a decoded telemetry report says, independent of its wire version.
//!
//! Fields a report does not carry are `None` (they print as JSON `null`); a value the device
//! marked "not available" (all ones, INT spec §"Per-hop metadata") is `None` too.

use crate::error::DecodeError;
use serde::Serialize;
use std::net::IpAddr;

/// The report format, from the version nibble of the UDP payload (int-telemetry.md §1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum ReportVersion {
    /// Telemetry Report v0.5 as the spec packs it.
    #[serde(rename = "0.5")]
    V0_5,
    /// TR v0.5 as stratum/fabric-tna packs its drop and switch-local headers (§2.3).
    #[serde(rename = "0.5-fabric-tna")]
    V0_5FabricTna,
    #[serde(rename = "1.0")]
    V1_0,
    #[serde(rename = "2.0")]
    V2_0,
}

impl ReportVersion {
    pub fn as_str(self) -> &'static str {
        match self {
            ReportVersion::V0_5 => "0.5",
            ReportVersion::V0_5FabricTna => "0.5-fabric-tna",
            ReportVersion::V1_0 => "1.0",
            ReportVersion::V2_0 => "2.0",
        }
    }
}

/// The embedded INT-MD version found inside the reported packet, if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum IntVersion {
    #[serde(rename = "0.5")]
    V0_5,
    #[serde(rename = "1.0")]
    V1_0,
    #[serde(rename = "2.1")]
    V2_1,
}

/// The reported packet's 5-tuple.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct FlowKey {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub sport: u16,
    pub dport: u16,
    /// IP protocol number (6 TCP, 17 UDP).
    pub proto: u8,
}

impl std::fmt::Display for FlowKey {
    /// `10.0.0.1:5001 > 10.0.0.2:80 tcp`, brackets around IPv6 addresses.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let proto = match self.proto {
            6 => "tcp".to_string(),
            17 => "udp".to_string(),
            p => format!("proto {p}"),
        };
        let addr = |a: IpAddr, p: u16| match a {
            IpAddr::V4(a) => format!("{a}:{p}"),
            IpAddr::V6(a) => format!("[{a}]:{p}"),
        };
        write!(f, "{} > {} {proto}", addr(self.src, self.sport), addr(self.dst, self.dport))
    }
}

/// One switch's metadata about the reported packet. Units are normalised: occupancy in bytes
/// (cells × the profile's cell size), times in nanoseconds of the device clock as carried
/// (4-byte timestamps are not unwrapped here; [`crate::observation`] does that per device).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Hop {
    pub switch_id: Option<u32>,
    pub ingress_port: Option<u32>,
    pub egress_port: Option<u32>,
    pub hop_latency_ns: Option<u32>,
    pub queue_id: Option<u8>,
    pub queue_occupancy_bytes: Option<u64>,
    pub ingress_ts: Option<u64>,
    pub egress_ts: Option<u64>,
}

/// The D/Q/F flags every report version carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ReportFlags {
    /// D: a packet matching a drop watchlist was dropped.
    pub dropped: bool,
    /// Q: congestion on a monitored queue.
    pub congested: bool,
    /// F: a tracked flow (embedded INT may follow).
    pub tracked: bool,
}

/// One decoded report. A TR v2.0 packet can coalesce several reports; each becomes one
/// `Report` sharing the group header's `switch_id`, `hw_id` and `seq`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Report {
    pub version: ReportVersion,
    /// The reporting switch (TR v1.0 switch id, TR v2.0 node id, TR v0.5 from the
    /// drop/switch-local header when present).
    pub switch_id: Option<u32>,
    pub hw_id: u8,
    /// 32-bit in TR v0.5/v1.0, 22-bit in TR v2.0.
    pub seq: u32,
    pub ingress_ts: Option<u64>,
    pub flags: ReportFlags,
    pub drop_reason: Option<u8>,
    /// The reported packet's 5-tuple when the report carries the packet.
    pub flow: Option<FlowKey>,
    /// Length on the wire of the reported packet (its IP total length + L2), when carried.
    pub packet_bytes: Option<u32>,
    pub int_version: Option<IntVersion>,
    /// Hops in wire order: the reporting switch's own metadata first (the report header's,
    /// when it carries any), then the embedded stack, most recent switch first, as INT pushes.
    pub hops: Vec<Hop>,
    /// Why the reported packet could not be read whole (a cut or malformed inner header): the
    /// report keeps its header and the reporting switch's own hop; what sits at or after the
    /// fault (the flow key for a bad L4 header, the embedded hops for a bad stack) is left out.
    #[serde(skip)]
    pub inner_error: Option<DecodeError>,
    /// INT v2.1 domain-specific metadata the INT source alone inserted (never hops).
    pub source_only: Option<SourceOnly>,
}

/// INT v2.1 "source-only" domain-specific metadata: words the INT source adds after its own
/// hop, excluded from Hop ML but counted by the shim Length (INT v2.1 §"INT-MD Metadata Header
/// Format", DS Instruction; the spec's example "INT-MD including domain specific source-only
/// metadata" carries a 6-byte MAC in 2 words).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SourceOnly {
    pub domain_id: u16,
    pub ds_instruction: u16,
    pub ds_flags: u16,
    /// The metadata bytes as sent (whole words).
    pub bytes: Vec<u8>,
}

/// What a report says follows its header: the reported packet starts with this header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum InnerKind {
    Ethernet,
    Ipv4,
    Ipv6,
}

/// A reported (or captured) data packet as far as telemetry cares: its 5-tuple, its length and
/// the embedded INT stack it carries.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct InnerPacket {
    pub flow: Option<FlowKey>,
    /// The packet's length from its IP header (IPv4 total length, IPv6 payload length + 40).
    pub packet_bytes: u32,
    pub int_version: Option<IntVersion>,
    /// Wire order: the most recent switch first.
    pub hops: Vec<Hop>,
    /// INT v2.1 source-only domain-specific metadata, when the stack carries some.
    pub source_only: Option<SourceOnly>,
}
