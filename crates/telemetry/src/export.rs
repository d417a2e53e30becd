//! Simulated telemetry as real packets: the simulator's `int` rows written as Telemetry Report
//! packets in a pcap file (`burstlab run --int-pcap`), so the collector path (`decode`,
//! `detect`) runs on simulated networks exactly as on real ones.
//!
//! Each row becomes one report about one packet at one switch:
//! - TR v1.0 as AmLight's NoviFlow switches send it (int-telemetry.md §9): UDP 5900, the reported
//!   packet's headers with a one-hop INT v1.0 stack (ins 0xFC00, hop latency all-ones, occupancy
//!   in 80-byte cells, 32-bit timestamps);
//! - TR v2.0 to UDP 1234: the hop as the report's own RepMdBits metadata (bytes, 64-bit
//!   timestamps) and the reported packet's headers.
//!
//! Reports carry the reported packet's headers only, as switches truncate them; its IP total
//! length still states the original size, which attribution counts.

use crate::int::{IntStackSpec, encode_inner};
use crate::model::{FlowKey, Hop, InnerKind, ReportFlags, ReportVersion};
use crate::profile::DeviceProfile;
use crate::report::{ReportHeader, encode_report};
use std::io::{self, Write};

/// The report formats the simulator can emit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportFormat {
    /// TR v1.0 + INT v1.0, NoviFlow style, to UDP 5900.
    NoviFlowV1_0,
    /// TR v2.0 with RepMdBits metadata, to UDP 1234.
    V2_0,
}

impl ExportFormat {
    pub fn udp_port(self) -> u16 {
        match self {
            ExportFormat::NoviFlowV1_0 => 5900,
            ExportFormat::V2_0 => 1234,
        }
    }

    fn profile(self) -> DeviceProfile {
        match self {
            ExportFormat::NoviFlowV1_0 => DeviceProfile::noviflow(),
            ExportFormat::V2_0 => DeviceProfile::spec(),
        }
    }
}

/// One packet seen at one INT-enabled switch port (the simulator's `int` table row).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IntRow {
    /// Egress time (or drop time), simulation nanoseconds.
    pub t_ns: u64,
    pub switch_id: u32,
    pub ingress_port: u32,
    pub egress_port: u32,
    pub queue_id: u8,
    pub occupancy_bytes: u64,
    pub hop_latency_ns: u64,
    pub flow: FlowKey,
    pub packet_bytes: u32,
    pub dropped: bool,
    pub seq: u32,
}

/// A pcap file (nanosecond timestamps, Ethernet) written record by record.
pub struct PcapWriter<W: Write> {
    out: W,
}

/// The nanosecond-resolution pcap magic (draft-ietf-opsawg-pcap §4).
const PCAP_MAGIC_NS: u32 = 0xa1b2_3c4d;
/// LINKTYPE_ETHERNET (tcpdump.org link-layer header types).
const LINKTYPE_ETHERNET: u32 = 1;

impl<W: Write> PcapWriter<W> {
    pub fn new(mut out: W) -> io::Result<Self> {
        let mut h = Vec::with_capacity(24);
        h.extend_from_slice(&PCAP_MAGIC_NS.to_le_bytes());
        h.extend_from_slice(&2u16.to_le_bytes());
        h.extend_from_slice(&4u16.to_le_bytes());
        h.extend_from_slice(&[0; 8]); // thiszone, sigfigs
        h.extend_from_slice(&65_535u32.to_le_bytes());
        h.extend_from_slice(&LINKTYPE_ETHERNET.to_le_bytes());
        out.write_all(&h)?;
        Ok(PcapWriter { out })
    }

    pub fn record(&mut self, t_ns: u64, frame: &[u8]) -> io::Result<()> {
        let mut h = [0u8; 16];
        h[0..4].copy_from_slice(&((t_ns / 1_000_000_000) as u32).to_le_bytes());
        h[4..8].copy_from_slice(&((t_ns % 1_000_000_000) as u32).to_le_bytes());
        h[8..12].copy_from_slice(&(frame.len() as u32).to_le_bytes());
        h[12..16].copy_from_slice(&(frame.len() as u32).to_le_bytes());
        self.out.write_all(&h)?;
        self.out.write_all(frame)
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

/// Builds report frames, reusing its buffers.
pub struct ReportExporter {
    format: ExportFormat,
    profile: DeviceProfile,
    inner: Vec<u8>,
    payload: Vec<u8>,
    /// The v2.0 group sequence number is 22 bits (int-telemetry.md §4.1).
    seq_mask: u32,
}

/// The collector the reports are addressed to and the reporting switches' source network.
const COLLECTOR: [u8; 4] = [10, 255, 255, 1];
const REPORTER_NET: [u8; 2] = [10, 254];

impl ReportExporter {
    pub fn new(format: ExportFormat) -> Self {
        ReportExporter {
            format,
            profile: format.profile(),
            inner: Vec::new(),
            payload: Vec::new(),
            seq_mask: if format == ExportFormat::V2_0 { (1 << 22) - 1 } else { u32::MAX },
        }
    }

    /// The Ethernet frame of the report about `row`, into `frame` (cleared first).
    pub fn frame(&mut self, row: &IntRow, frame: &mut Vec<u8>) {
        let ingress_ns = row.t_ns.saturating_sub(row.hop_latency_ns);
        let wide = self.format == ExportFormat::V2_0;
        let ts = |t: u64| if wide { t } else { t & 0xFFFF_FFFF };
        let hop = Hop {
            switch_id: Some(row.switch_id),
            ingress_port: Some(row.ingress_port),
            egress_port: Some(row.egress_port),
            hop_latency_ns: if wide {
                Some(row.hop_latency_ns.min(u32::MAX as u64 - 1) as u32)
            } else {
                None
            },
            queue_id: Some(row.queue_id),
            queue_occupancy_bytes: Some(row.occupancy_bytes),
            ingress_ts: Some(ts(ingress_ns)),
            egress_ts: Some(ts(row.t_ns)),
        };
        self.inner.clear();
        let stack = (!wide).then(|| IntStackSpec::noviflow(&[hop]));
        encode_inner(
            &row.flow,
            InnerKind::Ethernet,
            &[],
            stack.as_ref(),
            0,
            &self.profile,
            &mut self.inner,
        );
        claim_original_length(&mut self.inner, row.packet_bytes);
        let header = ReportHeader {
            version: if wide { ReportVersion::V2_0 } else { ReportVersion::V1_0 },
            switch_id: Some(row.switch_id),
            hw_id: 0,
            seq: row.seq & self.seq_mask,
            ingress_ts: Some(ts(ingress_ns)),
            flags: ReportFlags { dropped: row.dropped, congested: false, tracked: true },
            drop_reason: None,
            local: wide.then_some(hop),
            inner: Some((InnerKind::Ethernet, 0..0)),
        };
        self.payload.clear();
        encode_report(&header, &self.inner, &self.profile, &mut self.payload);
        frame.clear();
        udp_frame(row.switch_id, self.format.udp_port(), &self.payload, frame);
    }
}

/// Write `rows` as a pcap of report packets; returns how many were written.
pub fn write_int_pcap<W: Write>(
    rows: impl IntoIterator<Item = IntRow>,
    format: ExportFormat,
    out: W,
) -> io::Result<u64> {
    let mut pcap = PcapWriter::new(out)?;
    let mut exporter = ReportExporter::new(format);
    let mut frame = Vec::new();
    let mut n = 0;
    for row in rows {
        exporter.frame(&row, &mut frame);
        pcap.record(row.t_ns, &frame)?;
        n += 1;
    }
    pcap.into_inner().flush()?;
    Ok(n)
}

/// The reported packet is cut after its headers; its IP header keeps stating the original size
/// (IPv4 total length, with the header checksum redone).
fn claim_original_length(frame: &mut [u8], packet_bytes: u32) {
    const IP_AT: usize = 14;
    if frame.len() < IP_AT + 20 || frame[12..14] != [0x08, 0x00] {
        return;
    }
    let ip = &mut frame[IP_AT..IP_AT + 20];
    let len = packet_bytes.clamp(20, u16::MAX as u32) as u16;
    ip[2..4].copy_from_slice(&len.to_be_bytes());
    ip[10..12].copy_from_slice(&[0, 0]);
    let sum = ipv4_checksum(ip);
    ip[10..12].copy_from_slice(&sum.to_be_bytes());
}

/// RFC 791 §3.1 header checksum: one's complement of the one's-complement sum of 16-bit words.
fn ipv4_checksum(header: &[u8]) -> u16 {
    let mut sum: u32 = header.chunks(2).map(|w| u32::from(u16::from_be_bytes([w[0], w[1]]))).sum();
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    !(sum as u16)
}

/// Ethernet / IPv4 / UDP from the reporting switch to the collector, around `payload`.
fn udp_frame(switch_id: u32, dport: u16, payload: &[u8], out: &mut Vec<u8>) {
    let [a, b] = REPORTER_NET;
    let sw = switch_id.to_be_bytes();
    let src = [a, b, sw[2], sw[3]];
    out.extend_from_slice(&[
        0x02, 0, 0, 0, 0, 0xFE, 0x02, 0, sw[0], sw[1], sw[2], sw[3], 0x08, 0x00,
    ]);
    let total = (20 + 8 + payload.len()) as u16;
    let mut ip = [0u8; 20];
    ip[0] = 0x45;
    ip[2..4].copy_from_slice(&total.to_be_bytes());
    ip[6] = 0x40; // DF (TR v1.0 §3.2: DF set or a unique IP id)
    ip[8] = 64;
    ip[9] = 17;
    ip[12..16].copy_from_slice(&src);
    ip[16..20].copy_from_slice(&COLLECTOR);
    let sum = ipv4_checksum(&ip);
    ip[10..12].copy_from_slice(&sum.to_be_bytes());
    out.extend_from_slice(&ip);
    // Source port 0: TR v1.0 allows it (no flow entropy); UDP checksum 0 = none (RFC 768).
    out.extend_from_slice(&0u16.to_be_bytes());
    out.extend_from_slice(&dport.to_be_bytes());
    out.extend_from_slice(&(8 + payload.len() as u16).to_be_bytes());
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(payload);
}

/// The synthetic report the collector's and the pipeline's tests replay: report `k`, 1 µs after
/// the one before, from `switch_id`, about a flow from 10.0.0.`src_host`, on a queue that ramps
/// to 1.6 MB and back every 4,000 reports.
#[cfg(test)]
pub(crate) fn ramp_row(k: u32, switch_id: u32, src_host: u8) -> IntRow {
    use std::net::{IpAddr, Ipv4Addr};
    let phase = u64::from(k % 4_000);
    let occupancy = if phase < 2_000 { phase * 800 } else { (4_000 - phase) * 800 };
    IntRow {
        t_ns: 1_000_000 + u64::from(k) * 1_000,
        switch_id,
        ingress_port: 3,
        egress_port: 7,
        queue_id: 0,
        occupancy_bytes: occupancy,
        hop_latency_ns: occupancy * 8 / 100,
        flow: FlowKey {
            src: IpAddr::V4(Ipv4Addr::new(10, 0, 0, src_host)),
            dst: IpAddr::V4(Ipv4Addr::new(10, 1, 0, 1)),
            sport: 10_000,
            dport: 5201,
            proto: 6,
        },
        packet_bytes: 1500,
        dropped: false,
        seq: k,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::Decoder;
    use crate::pipeline::decode_capture;
    use crate::profiles::Profiles;
    use std::net::{IpAddr, Ipv4Addr};

    fn row(seq: u32) -> IntRow {
        IntRow {
            t_ns: (1 << 32) + 5_000 + seq as u64 * 1_000,
            switch_id: 3,
            ingress_port: 1,
            egress_port: 2,
            queue_id: 0,
            occupancy_bytes: 123_456,
            hop_latency_ns: 7_000,
            flow: FlowKey {
                src: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
                dst: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 4)),
                sport: 10_000,
                dport: 5201,
                proto: 6,
            },
            packet_bytes: 9000,
            dropped: seq == 2,
            seq,
        }
    }

    fn round_trip(format: ExportFormat) -> Vec<crate::model::Report> {
        let mut file = Vec::new();
        assert_eq!(write_int_pcap((0..4).map(row), format, &mut file).unwrap(), 4);
        let mut decoder = Decoder::new(Profiles::builtin());
        let mut reports = Vec::new();
        let stats = decode_capture(
            file.as_slice(),
            &mut decoder,
            &[format.udp_port()],
            |_, r| reports.extend_from_slice(r.expect("decodes")),
            |_| {},
        )
        .unwrap();
        assert_eq!((stats.frames, stats.reports, stats.malformed), (4, 4, 0));
        reports
    }

    #[test]
    fn noviflow_export_reads_back_within_one_cell_with_32_bit_timestamps() {
        let reports = round_trip(ExportFormat::NoviFlowV1_0);
        let r = &reports[1];
        assert_eq!((r.version, r.switch_id, r.seq), (ReportVersion::V1_0, Some(3), 1));
        assert_eq!(r.flow, Some(row(1).flow));
        assert_eq!(r.packet_bytes, Some(9000));
        let h = r.hops[0];
        let occ = h.queue_occupancy_bytes.unwrap();
        assert!((123_456..123_456 + 80).contains(&occ), "{occ}");
        assert_eq!(h.hop_latency_ns, None, "NoviFlow sends all-ones");
        assert_eq!(h.egress_ts, Some(row(1).t_ns & 0xFFFF_FFFF));
        // The row sits 6 µs past a 2^32 ns wrap: the 7 µs latency straddles it.
        assert_eq!((h.egress_ts.unwrap() as u32).wrapping_sub(h.ingress_ts.unwrap() as u32), 7_000);
        assert!(reports[2].flags.dropped && !reports[1].flags.dropped);
    }

    #[test]
    fn v2_export_keeps_bytes_and_64_bit_timestamps() {
        let reports = round_trip(ExportFormat::V2_0);
        let h = reports[3].hops[0];
        assert_eq!(reports[3].version, ReportVersion::V2_0);
        assert_eq!(h.queue_occupancy_bytes, Some(123_456));
        assert_eq!(h.egress_ts, Some(row(3).t_ns));
        assert_eq!(h.hop_latency_ns, Some(7_000));
    }

    #[test]
    fn ipv4_checksum_of_a_known_header() {
        // RFC 1071 style check: a header with its checksum in place sums to 0xFFFF.
        let mut h = [
            0x45, 0, 0, 0x73, 0, 0, 0x40, 0, 0x40, 0x11, 0, 0, 0xc0, 0xa8, 0, 1, 0xc0, 0xa8, 0,
            0xc7,
        ];
        let s = ipv4_checksum(&h);
        assert_eq!(s, 0xb861);
        h[10..12].copy_from_slice(&s.to_be_bytes());
        assert_eq!(ipv4_checksum(&h), 0);
    }
}
