//! From a report packet's UDP payload to [`Report`]s: the report-header parsers
//! ([`crate::report`]) and the reported packet's parser ([`crate::int`]) glued, with the device
//! profile chosen per UDP port and switch; and the JSON line `burstlab decode` prints.

use crate::error::DecodeError;
use crate::int::parse_inner_into;
use crate::model::{FlowKey, Hop, InnerPacket, Report, ReportFlags, SourceOnly};
use crate::profiles::Profiles;
use crate::report::{ReportHeader, parse_reports_into};
use serde::Serialize;
use serde::ser::{SerializeStruct, Serializer};

/// Decodes report payloads, reusing its buffers between packets: the reports of the last
/// payload live in the decoder (their hop lists keep their capacity), so steady-state decoding
/// allocates nothing.
pub struct Decoder {
    profiles: Profiles,
    headers: Vec<ReportHeader>,
    inner: InnerPacket,
    reports: Vec<Report>,
    live: usize,
}

impl Decoder {
    pub fn new(profiles: Profiles) -> Self {
        Decoder {
            profiles,
            headers: Vec::new(),
            inner: InnerPacket::default(),
            reports: Vec::new(),
            live: 0,
        }
    }

    pub fn profiles(&self) -> &Profiles {
        &self.profiles
    }

    /// Decode every report in `payload`, a UDP payload sent to port `dport`. A malformed report
    /// header fails the whole payload (offsets count from the payload's first byte); a
    /// reported packet that cannot be read whole keeps its report, with the fault in
    /// [`Report::inner_error`].
    pub fn decode(&mut self, payload: &[u8], dport: u16) -> Result<&[Report], DecodeError> {
        self.live = 0;
        let mut profile = self.profiles.for_report(dport, None);
        parse_reports_into(payload, profile, &mut self.headers)?;
        // A per-switch profile can only be chosen once the header has named the switch.
        let switch = self.headers.first().and_then(|h| h.switch_id);
        let by_switch = self.profiles.for_report(dport, switch);
        if !std::ptr::eq(by_switch, profile) {
            profile = by_switch;
            parse_reports_into(payload, profile, &mut self.headers)?;
        }
        for h in &self.headers {
            if self.live == self.reports.len() {
                self.reports.push(empty_report(h));
            }
            let report = &mut self.reports[self.live];
            *report = Report { hops: std::mem::take(&mut report.hops), ..empty_report(h) };
            report.hops.clear();
            if let Some((kind, range)) = &h.inner {
                let bytes = payload.get(range.clone()).unwrap_or(&[]);
                let parsed = parse_inner_into(bytes, *kind, profile, &mut self.inner);
                report.flow = self.inner.flow;
                report.packet_bytes = (self.inner.packet_bytes > 0 || parsed.is_ok())
                    .then_some(self.inner.packet_bytes);
                report.int_version = self.inner.int_version;
                report.source_only = self.inner.source_only.take();
                report.inner_error = parsed.err().map(|e| e.shifted(range.start));
                // Trade buffers instead of copying: the parser clears what it gets back.
                std::mem::swap(&mut report.hops, &mut self.inner.hops);
            }
            with_reporting_hop(&mut report.hops, h.local);
            if profile.time_unit_ns != 1 {
                in_nanoseconds(report, profile.time_unit_ns);
            }
            self.live += 1;
        }
        Ok(&self.reports[..self.live])
    }
}

/// Puts the reporting switch's own metadata (the report header's) before the embedded stack,
/// as the TR v2.0 worked example "Embedded INT-MD in a TCP Packet" reads: the sink Switch3
/// "inserts its node ID and queue occupancy into the Individual Report Header rather than the
/// embedded INT stack", which holds hop2 and hop1. An INT sink may instead push its own
/// metadata onto the stack (INT v2.1 §"INT-MD Metadata Header Format", sink option 1); when
/// the stack's newest hop is the reporting switch, the two are one hop, the stack's values
/// first.
fn with_reporting_hop(hops: &mut Vec<Hop>, local: Option<Hop>) {
    let Some(local) = local else { return };
    match hops.first_mut() {
        Some(top) if top.switch_id.is_some() && top.switch_id == local.switch_id => {
            let fill = |a: &mut Option<_>, b| *a = a.or(b);
            fill(&mut top.ingress_port, local.ingress_port);
            fill(&mut top.egress_port, local.egress_port);
            fill(&mut top.hop_latency_ns, local.hop_latency_ns);
            top.queue_id = top.queue_id.or(local.queue_id);
            top.queue_occupancy_bytes = top.queue_occupancy_bytes.or(local.queue_occupancy_bytes);
            top.ingress_ts = top.ingress_ts.or(local.ingress_ts);
            top.egress_ts = top.egress_ts.or(local.egress_ts);
        }
        _ => hops.insert(0, local),
    }
}

/// Device time units (µs on bmv2) to the nanoseconds a [`Hop`] holds. A value that does not
/// fit (a 32-bit hop latency above 4.29 s) is not available rather than wrong.
fn in_nanoseconds(report: &mut Report, unit_ns: u32) {
    let wide = |t: Option<u64>| t.and_then(|t| t.checked_mul(u64::from(unit_ns)));
    report.ingress_ts = wide(report.ingress_ts);
    for hop in &mut report.hops {
        hop.ingress_ts = wide(hop.ingress_ts);
        hop.egress_ts = wide(hop.egress_ts);
        hop.hop_latency_ns = hop.hop_latency_ns.and_then(|l| l.checked_mul(unit_ns));
    }
}

/// A report with the header's fields and nothing from the reported packet yet.
fn empty_report(h: &ReportHeader) -> Report {
    Report {
        version: h.version,
        switch_id: h.switch_id,
        hw_id: h.hw_id,
        seq: h.seq,
        ingress_ts: h.ingress_ts,
        flags: h.flags,
        drop_reason: h.drop_reason,
        flow: None,
        packet_bytes: None,
        int_version: None,
        hops: Vec::new(),
        inner_error: None,
        source_only: None,
    }
}

/// One line of `burstlab decode --json`: the report with the capture frame it came from.
pub struct ReportLine<'a> {
    pub frame: u64,
    pub report: &'a Report,
}

impl Serialize for ReportLine<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let r = self.report;
        let mut m = s.serialize_struct("ReportLine", 14)?;
        m.serialize_field("frame", &self.frame)?;
        m.serialize_field("report_version", r.version.as_str())?;
        m.serialize_field("switch_id", &r.switch_id)?;
        m.serialize_field("hw_id", &r.hw_id)?;
        m.serialize_field("seq", &r.seq)?;
        m.serialize_field("ingress_ts", &r.ingress_ts)?;
        m.serialize_field("flags", &FlagsJson(r.flags))?;
        m.serialize_field("drop_reason", &r.drop_reason)?;
        m.serialize_field("int_version", &r.int_version)?;
        m.serialize_field("flow", &r.flow.as_ref().map(FlowJson))?;
        m.serialize_field("hops", &r.hops as &[Hop])?;
        m.serialize_field("source_only", &r.source_only.as_ref().map(SourceOnlyJson))?;
        m.serialize_field("inner_error", &r.inner_error.as_ref().map(|e| e.to_string()))?;
        m.end()
    }
}

/// The D/Q/F flags as the letters of those set, in that order (`"DQ"`, `"F"`, `""`), the way
/// the report formats name them.
struct FlagsJson(ReportFlags);

impl Serialize for FlagsJson {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let f = self.0;
        let mut text = String::with_capacity(3);
        for (on, letter) in [(f.dropped, 'D'), (f.congested, 'Q'), (f.tracked, 'F')] {
            if on {
                text.push(letter);
            }
        }
        s.serialize_str(&text)
    }
}

/// `{"domain_id", "ds_instruction", "ds_flags", "hex"}`: the metadata bytes as hex.
struct SourceOnlyJson<'a>(&'a SourceOnly);

impl Serialize for SourceOnlyJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let o = self.0;
        let mut m = s.serialize_struct("SourceOnly", 4)?;
        m.serialize_field("domain_id", &o.domain_id)?;
        m.serialize_field("ds_instruction", &o.ds_instruction)?;
        m.serialize_field("ds_flags", &o.ds_flags)?;
        let hex: String = o.bytes.iter().map(|b| format!("{b:02x}")).collect();
        m.serialize_field("hex", &hex)?;
        m.end()
    }
}

/// A malformed report: `{"frame", "error", "offset"}`.
pub struct ErrorLine<'a> {
    pub frame: u64,
    pub error: &'a DecodeError,
}

impl Serialize for ErrorLine<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_struct("ErrorLine", 3)?;
        m.serialize_field("frame", &self.frame)?;
        m.serialize_field("error", &self.error.to_string())?;
        m.serialize_field("offset", &self.error.offset)?;
        m.end()
    }
}

/// `{"src", "dst", "sport", "dport", "proto"}` with the protocol by name ("tcp", "udp") when
/// it has one, else its number.
struct FlowJson<'a>(&'a FlowKey);

impl Serialize for FlowJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let f = self.0;
        let mut m = s.serialize_struct("Flow", 5)?;
        m.serialize_field("src", &f.src.to_string())?;
        m.serialize_field("dst", &f.dst.to_string())?;
        m.serialize_field("sport", &f.sport)?;
        m.serialize_field("dport", &f.dport)?;
        match f.proto {
            6 => m.serialize_field("proto", "tcp")?,
            17 => m.serialize_field("proto", "udp")?,
            p => m.serialize_field("proto", &p.to_string())?,
        }
        m.end()
    }
}

#[cfg(test)]
mod vectors;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::int::{IntStackSpec, encode_inner};
    use crate::model::{InnerKind, ReportFlags, ReportVersion};
    use crate::profile::DeviceProfile;
    use crate::report::encode_report;
    use std::net::{IpAddr, Ipv4Addr};

    fn flow() -> FlowKey {
        FlowKey {
            src: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
            dst: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)),
            sport: 10000,
            dport: 5201,
            proto: 6,
        }
    }

    fn noviflow_report(hop: Hop, seq: u32) -> Vec<u8> {
        let p = DeviceProfile::noviflow();
        let mut inner = Vec::new();
        encode_inner(
            &flow(),
            InnerKind::Ethernet,
            &[100],
            Some(&IntStackSpec::noviflow(&[hop])),
            1000,
            &p,
            &mut inner,
        );
        let h = ReportHeader {
            version: ReportVersion::V1_0,
            switch_id: Some(7),
            hw_id: 1,
            seq,
            ingress_ts: Some(123),
            flags: ReportFlags { tracked: true, ..Default::default() },
            drop_reason: None,
            local: None,
            inner: Some((InnerKind::Ethernet, 0..0)),
        };
        let mut out = Vec::new();
        encode_report(&h, &inner, &p, &mut out);
        out
    }

    fn hop() -> Hop {
        Hop {
            switch_id: Some(7),
            ingress_port: Some(1),
            egress_port: Some(2),
            hop_latency_ns: None,
            queue_id: Some(0),
            queue_occupancy_bytes: Some(80 * 1000),
            ingress_ts: Some(4_000_000_000),
            egress_ts: Some(4_000_001_000),
        }
    }

    #[test]
    fn noviflow_report_on_5900_decodes_flow_and_hop_in_bytes() {
        let mut d = Decoder::new(Profiles::builtin());
        let out = d.decode(&noviflow_report(hop(), 42), 5900).unwrap().to_vec();
        assert_eq!(out.len(), 1);
        let r = &out[0];
        assert_eq!((r.switch_id, r.hw_id, r.seq), (Some(7), 1, 42));
        assert_eq!(r.flow, Some(flow()));
        assert_eq!(r.hops, vec![hop()]);
    }

    #[test]
    fn json_line_has_exactly_the_documented_keys() {
        let mut d = Decoder::new(Profiles::builtin());
        let out = d.decode(&noviflow_report(hop(), 42), 5900).unwrap().to_vec();
        let text = serde_json::to_string(&ReportLine { frame: 3, report: &out[0] }).unwrap();
        assert!(text.starts_with(r#"{"frame":3,"report_version":"1.0","switch_id":7,"hw_id":1,"seq":42,"ingress_ts":123,"flags":"F","drop_reason":null,"int_version":"1.0","flow":{"#), "{text}");
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v.as_object().unwrap().len(), 13);
        assert_eq!(
            (&v["source_only"], &v["inner_error"]),
            (&serde_json::Value::Null, &serde_json::Value::Null)
        );
        assert_eq!(v["report_version"], "1.0");
        assert_eq!(v["flow"]["proto"], "tcp");
        assert_eq!(v["flow"]["src"], "10.0.0.1");
        let mut hop_keys: Vec<&str> =
            v["hops"][0].as_object().unwrap().keys().map(|k| k.as_str()).collect();
        hop_keys.sort_unstable();
        assert_eq!(
            hop_keys,
            [
                "egress_port",
                "egress_ts",
                "hop_latency_ns",
                "ingress_port",
                "ingress_ts",
                "queue_id",
                "queue_occupancy_bytes",
                "switch_id"
            ]
        );
        assert_eq!(v["hops"][0]["hop_latency_ns"], serde_json::Value::Null);
        assert_eq!(v["hops"][0]["queue_occupancy_bytes"], 80_000);
    }

    #[test]
    fn cut_inner_packet_keeps_the_report_and_names_the_fault_from_the_payload_start() {
        let mut bytes = noviflow_report(hop(), 1);
        bytes.truncate(16 + 30); // TR v1.0 header (16 B) + a cut inner frame
        let mut d = Decoder::new(Profiles::builtin());
        let r = d.decode(&bytes, 5900).unwrap()[0].clone();
        assert_eq!((r.switch_id, r.seq, r.flow, r.hops.len()), (Some(7), 1, None, 0));
        let e = r.inner_error.clone().unwrap();
        assert!(e.offset >= 16, "{e}");
        let v = serde_json::to_value(ReportLine { frame: 9, report: &r }).unwrap();
        assert_eq!(v["inner_error"], e.to_string());
        // A malformed report header still fails the payload, as an error line.
        let e = d.decode(&bytes[..10], 5900).unwrap_err();
        let v = serde_json::to_value(ErrorLine { frame: 9, error: &e }).unwrap();
        assert_eq!((v["offset"].as_u64(), v["frame"].as_u64()), (Some(e.offset as u64), Some(9)));
    }

    #[test]
    fn decoding_again_reuses_the_reports_and_keeps_nothing_stale() {
        let mut d = Decoder::new(Profiles::builtin());
        let first = d.decode(&noviflow_report(hop(), 1), 5900).unwrap().to_vec();
        let cut = noviflow_report(hop(), 2)[..40].to_vec();
        assert!(d.decode(&cut, 5900).unwrap()[0].inner_error.is_some());
        assert!(d.decode(&cut[..12], 5900).is_err());
        let again = d.decode(&noviflow_report(hop(), 1), 5900).unwrap();
        assert_eq!(again, &first[..]);
    }

    #[test]
    fn same_bytes_on_a_spec_port_read_occupancy_as_bytes_not_cells() {
        let mut d = Decoder::new(Profiles::builtin());
        let out = d.decode(&noviflow_report(hop(), 1), 1234).unwrap();
        // The encoder wrote 1000 cells; a spec-profile port reads them as 1000 bytes.
        assert_eq!(out[0].hops[0].queue_occupancy_bytes, Some(1000));
    }
}
