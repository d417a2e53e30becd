//! Telemetry Report v2.0 (int-telemetry.md §4): an 8-byte group header (hw_id, 22-bit sequence
//! number, node id), then one or more coalesced individual reports, each a 4-byte header, for
//! RepType INT the 8-byte main contents and MD Length words of metadata, then the reported
//! packet up to Report Length.

use super::reader::Reader;
use super::{ReportHeader, flag_bits, flags_at, occupancy_bytes, occupancy_units};
use crate::error::DecodeError;
use crate::model::{Hop, InnerKind, ReportVersion};
use crate::profile::DeviceProfile;

/// Group header size (TR v2.0 §"Telemetry Group Header", int-telemetry.md §4.1).
pub const GROUP_BYTES: usize = 8;
/// The sequence number is 22 bits, so it wraps at 2^22 = 4,194,304 (§4.1, §16.4).
pub const SEQ_MASK: u32 = 0x3F_FFFF;
/// INT main contents: RepMdBits, Domain Specific ID, DSMdBits, DSMdstatus, 2 words (§4.1),
/// counted by Report Length but not by MD Length (the spec's worked example, §4.3).
pub const MAIN_CONTENTS_WORDS: usize = 2;
/// Report Length 0xFF: "≥ 255 words; runs to the end of the UDP payload; no further reports"
/// (TR v2.0 at p4-applications HEAD 7eedb79, int-telemetry.md §4.3).
pub const LENGTH_TO_END: u8 = 0xFF;

/// RepType values (§4.1).
pub const REP_INNER_ONLY: u8 = 0;
pub const REP_INT: u8 = 1;
/// InType values (§4.1) and the TLV header's TLVType values (§4.3).
pub const IN_NONE: u8 = 0;
pub const IN_TLV: u8 = 1;
pub const IN_ETHERNET: u8 = 3;
pub const IN_IPV4: u8 = 4;
pub const IN_IPV6: u8 = 5;
const TLV_ETHERNET: u8 = 1;
const TLV_IPV4: u8 = 2;
const TLV_IPV6: u8 = 3;

/// D, Q, F are bits 24–26 of the individual report header (MSB = bit 0), shifts 7, 6, 5 (§4.1).
const FLAG_SHIFTS: (u32, u32, u32) = (7, 6, 5);

/// RepMdBits (16 bits, bit 0 = MSB = 0x8000) and each item's size in bytes (§4.2). Reserved bits
/// (0, 9–14) carry no data.
pub const MD_L1_PORTS: u16 = 0x4000;
pub const MD_HOP_LATENCY: u16 = 0x2000;
pub const MD_QUEUE_OCCUPANCY: u16 = 0x1000;
pub const MD_INGRESS_TS: u16 = 0x0800;
pub const MD_EGRESS_TS: u16 = 0x0400;
pub const MD_L2_PORTS: u16 = 0x0200;
pub const MD_TX_UTILIZATION: u16 = 0x0100;
pub const MD_BUFFER_OCCUPANCY: u16 = 0x0080;
pub const MD_QUEUE_DROP: u16 = 0x0001;
const MD_SIZES: [(u16, usize); 9] = [
    (MD_L1_PORTS, 4),
    (MD_HOP_LATENCY, 4),
    (MD_QUEUE_OCCUPANCY, 4),
    (MD_INGRESS_TS, 8),
    (MD_EGRESS_TS, 8),
    (MD_L2_PORTS, 8),
    (MD_TX_UTILIZATION, 4),
    (MD_BUFFER_OCCUPANCY, 4),
    (MD_QUEUE_DROP, 4),
];
/// The bits that fill a [`Hop`] field or the drop reason; the others are stepped over.
const MD_HOP_FIELDS: u16 = MD_L1_PORTS
    | MD_HOP_LATENCY
    | MD_QUEUE_OCCUPANCY
    | MD_INGRESS_TS
    | MD_EGRESS_TS
    | MD_L2_PORTS
    | MD_QUEUE_DROP;

/// Hop latency 0xFFFFFFFF means "not available" (int-telemetry.md §8).
const NOT_AVAILABLE: u32 = u32::MAX;

/// Bytes of baseline metadata `md_bits` announces.
fn baseline_bytes(md_bits: u16) -> usize {
    MD_SIZES.iter().filter(|(bit, _)| md_bits & bit != 0).map(|(_, n)| n).sum()
}

/// Every individual report of a TR v2.0 packet, appended to `out`.
pub fn parse(
    payload: &[u8],
    profile: &DeviceProfile,
    out: &mut Vec<ReportHeader>,
) -> Result<(), DecodeError> {
    let mut r = Reader::new(payload, 0);
    let w0 = r.u32("tr_v2_0.group")?;
    let node_id = r.u32("tr_v2_0.node_id")?;
    let group = Group { hw_id: ((w0 >> 22) & 0x3F) as u8, seq: w0 & SEQ_MASK, node_id };
    let mut pos = GROUP_BYTES;
    // Each report consumes ≥ 4 bytes, so the vector stays within payload.len() / 4 entries.
    while pos < payload.len() {
        let (mut h, end) = individual(payload, pos, &group, profile)?;
        // 1–3 bytes after the last report are its own: Report Length counts whole words and
        // Intel's switch.p4 rounds it down (PTF `dtel_utils` `ipv4_dtel_v2_pkt`:
        // `report_length = (total_len - 12) // 4`), leaving the reported packet's last bytes
        // outside it. No report is shorter than 4 bytes, so they cannot be another one.
        if (1..4).contains(&(payload.len() - end)) {
            if let Some((_, range)) = h.inner.as_mut().filter(|(_, r)| r.end == end) {
                range.end = payload.len();
            }
            out.push(h);
            break;
        }
        out.push(h);
        pos = end;
    }
    Ok(())
}

struct Group {
    hw_id: u8,
    seq: u32,
    node_id: u32,
}

/// The individual report starting at `start`, and where the next one starts.
fn individual(
    payload: &[u8],
    start: usize,
    g: &Group,
    profile: &DeviceProfile,
) -> Result<(ReportHeader, usize), DecodeError> {
    let w = Reader::new(payload, start).u32("tr_v2_0.report")?;
    let rep_type = (w >> 28) as u8;
    let in_type = ((w >> 24) & 0xF) as u8;
    let report_len = ((w >> 16) & 0xFF) as u8;
    let md_len = ((w >> 8) & 0xFF) as usize;
    let body = start + 4;
    // A device whose Report Length is not to be trusted sends one report per packet.
    let end = if report_len == LENGTH_TO_END || profile.tr_v2_length_to_end {
        payload.len()
    } else {
        let end = body + usize::from(report_len) * 4;
        if end > payload.len() {
            return Err(DecodeError::new(
                start + 1,
                "tr_v2_0.report_length",
                u64::from(report_len),
                format!(
                    "≤ {} words: the payload ends {} bytes after this header",
                    (payload.len() - body) / 4,
                    payload.len() - body
                ),
            ));
        }
        end
    };
    // The report's own bytes: nothing it announces may run past `end`.
    let unit = payload.get(..end).unwrap_or(payload);
    let mut r = Reader::new(unit, body);
    let mut h = ReportHeader {
        version: ReportVersion::V2_0,
        switch_id: Some(g.node_id),
        hw_id: g.hw_id,
        seq: g.seq,
        ingress_ts: None,
        flags: flags_at(w, FLAG_SHIFTS.0, FLAG_SHIFTS.1, FLAG_SHIFTS.2),
        drop_reason: None,
        local: None,
        inner: None,
    };
    match rep_type {
        REP_INT => {
            let main = MAIN_CONTENTS_WORDS * 4;
            if end - body < main + md_len * 4 {
                return Err(DecodeError::new(
                    start + 2,
                    "tr_v2_0.md_length",
                    md_len as u64,
                    format!(
                        "≤ Report Length ({report_len}) − {MAIN_CONTENTS_WORDS} main-contents words"
                    ),
                ));
            }
            let md_bits = r.u16("tr_v2_0.rep_md_bits")?;
            r.skip(6, "tr_v2_0.main_contents")?;
            let need = baseline_bytes(md_bits);
            if need > md_len * 4 {
                return Err(DecodeError::new(
                    start + 2,
                    "tr_v2_0.md_length",
                    md_len as u64,
                    format!("≥ {} words for RepMdBits {md_bits:#06x}", need / 4),
                ));
            }
            let after_md = r.pos() + md_len * 4;
            baseline(&mut r, md_bits, g.node_id, profile, &mut h)?;
            r = Reader::new(unit, after_md);
        }
        REP_INNER_ONLY => r.skip(md_len * 4, "tr_v2_0.metadata")?,
        // IOAM and reserved types: reported with their flags, contents stepped over.
        _ => return Ok((h, end)),
    }
    h.inner = inner(unit, r.pos(), in_type)?;
    if profile.inner_always_ethernet
        && let Some((kind, _)) = h.inner.as_mut()
    {
        *kind = InnerKind::Ethernet;
    }
    Ok((h, end))
}

/// The baseline metadata items RepMdBits announces, in bit order (§4.2).
fn baseline(
    r: &mut Reader,
    md_bits: u16,
    node_id: u32,
    profile: &DeviceProfile,
    h: &mut ReportHeader,
) -> Result<(), DecodeError> {
    let mut hop = Hop { switch_id: Some(node_id), ..Hop::default() };
    for (bit, size) in MD_SIZES {
        if md_bits & bit == 0 {
            continue;
        }
        match bit {
            MD_L1_PORTS => {
                // A whole word of all ones is "not available"; a sub-field of all ones is a value.
                let w = Some(r.u32("tr_v2_0.md.l1_ports")?).filter(|&w| w != NOT_AVAILABLE);
                (hop.ingress_port, hop.egress_port) = (w.map(|w| w >> 16), w.map(|w| w & 0xFFFF));
            }
            MD_HOP_LATENCY => {
                let w = r.u32("tr_v2_0.md.hop_latency")?;
                hop.hop_latency_ns = (w != NOT_AVAILABLE).then_some(w);
            }
            MD_QUEUE_OCCUPANCY => {
                let w = Some(r.u32("tr_v2_0.md.queue_occupancy")?).filter(|&w| w != NOT_AVAILABLE);
                hop.queue_id = w.map(|w| (w >> 24) as u8);
                hop.queue_occupancy_bytes = w.map(|w| occupancy_bytes(w & 0xFF_FFFF, profile));
            }
            MD_INGRESS_TS => hop.ingress_ts = Some(r.u64("tr_v2_0.md.ingress_ts")?),
            MD_EGRESS_TS => hop.egress_ts = Some(r.u64("tr_v2_0.md.egress_ts")?),
            MD_L2_PORTS => {
                // L1 interface ids win when both are present.
                let ig = r.u32("tr_v2_0.md.l2_ingress")?;
                let eg = r.u32("tr_v2_0.md.l2_egress")?;
                hop.ingress_port = hop.ingress_port.or(Some(ig));
                hop.egress_port = hop.egress_port.or(Some(eg));
            }
            MD_QUEUE_DROP => {
                let [qid, reason, _, _] = r.bytes("tr_v2_0.md.queue_drop")?;
                hop.queue_id = hop.queue_id.or(Some(qid));
                h.drop_reason = Some(reason);
            }
            _ => r.skip(size, "tr_v2_0.md")?,
        }
    }
    h.ingress_ts = hop.ingress_ts;
    h.local = (md_bits & MD_HOP_FIELDS != 0).then_some(hop);
    Ok(())
}

/// Where the reported packet lies between `pos` and the report's end, by InType; for TLV, the
/// first TLV that holds a packet (§4.3).
fn inner(
    unit: &[u8],
    pos: usize,
    in_type: u8,
) -> Result<Option<(InnerKind, std::ops::Range<usize>)>, DecodeError> {
    let kind = match in_type {
        IN_ETHERNET => InnerKind::Ethernet,
        IN_IPV4 => InnerKind::Ipv4,
        IN_IPV6 => InnerKind::Ipv6,
        IN_TLV => return tlv_packet(unit, pos),
        // None, DS extension data, reserved: no packet to hand on.
        _ => return Ok(None),
    };
    Ok(Some((kind, pos..unit.len())))
}

fn tlv_packet(
    unit: &[u8],
    mut pos: usize,
) -> Result<Option<(InnerKind, std::ops::Range<usize>)>, DecodeError> {
    while pos < unit.len() {
        let w = Reader::new(unit, pos).u32("tr_v2_0.tlv")?;
        let data = pos + 4;
        let end = data + ((w >> 16) & 0xFF) as usize * 4;
        if end > unit.len() {
            return Err(DecodeError::truncated(
                data,
                "tr_v2_0.tlv_data",
                unit.len() - data,
                end - data,
            ));
        }
        let kind = match (w >> 28) as u8 {
            TLV_ETHERNET => Some(InnerKind::Ethernet),
            TLV_IPV4 => Some(InnerKind::Ipv4),
            TLV_IPV6 => Some(InnerKind::Ipv6),
            _ => None,
        };
        if let Some(kind) = kind {
            return Ok(Some((kind, data..end)));
        }
        pos = end;
    }
    Ok(None)
}

/// Appends the 8-byte group header; `seq` keeps its low 22 bits, `hw_id` its low 6.
pub fn encode_group_header(hw_id: u8, seq: u32, node_id: u32, out: &mut Vec<u8>) {
    let w0 = (2u32 << 28) | (u32::from(hw_id & 0x3F) << 22) | (seq & SEQ_MASK);
    out.extend_from_slice(&w0.to_be_bytes());
    out.extend_from_slice(&node_id.to_be_bytes());
}

/// Appends one individual report of RepType INT. Baseline items are sent for the fields set in
/// `h.local`, `h.ingress_ts` and `h.drop_reason`; ports as L1 ids when both fit 16 bits, else
/// L2. `inner` is zero-padded to whole words. A report of 255 words or more gets Report Length
/// 0xFF, so it must be the last of its packet.
pub fn encode_individual(
    h: &ReportHeader,
    inner: &[u8],
    profile: &DeviceProfile,
    out: &mut Vec<u8>,
) {
    let l = h.local.unwrap_or_default();
    let ports = (l.ingress_port.is_some() || l.egress_port.is_some())
        .then(|| (l.ingress_port.unwrap_or(0), l.egress_port.unwrap_or(0)));
    let mut md_bits = 0u16;
    let mut set = |bit: u16, on: bool| {
        if on {
            md_bits |= bit;
        }
    };
    set(MD_L1_PORTS, ports.is_some_and(|(i, e)| i <= 0xFFFF && e <= 0xFFFF));
    set(MD_L2_PORTS, ports.is_some_and(|(i, e)| i > 0xFFFF || e > 0xFFFF));
    set(MD_HOP_LATENCY, l.hop_latency_ns.is_some());
    set(MD_QUEUE_OCCUPANCY, l.queue_occupancy_bytes.is_some());
    set(MD_INGRESS_TS, h.ingress_ts.is_some());
    set(MD_EGRESS_TS, l.egress_ts.is_some());
    set(MD_QUEUE_DROP, h.drop_reason.is_some());
    let md_words = baseline_bytes(md_bits) / 4;
    let in_type = match h.inner.as_ref().map(|(k, _)| *k) {
        None => IN_NONE,
        Some(InnerKind::Ethernet) => IN_ETHERNET,
        Some(InnerKind::Ipv4) => IN_IPV4,
        Some(InnerKind::Ipv6) => IN_IPV6,
    };
    let inner = if in_type == IN_NONE { &[][..] } else { inner };
    let words = MAIN_CONTENTS_WORDS + md_words + inner.len().div_ceil(4);
    let report_len =
        u8::try_from(words).ok().filter(|&n| n < LENGTH_TO_END).unwrap_or(LENGTH_TO_END);
    let w = (u32::from(REP_INT) << 28)
        | (u32::from(in_type) << 24)
        | (u32::from(report_len) << 16)
        | ((md_words as u32) << 8)
        | flag_bits(h.flags, FLAG_SHIFTS.0, FLAG_SHIFTS.1, FLAG_SHIFTS.2);
    out.extend_from_slice(&w.to_be_bytes());
    out.extend_from_slice(&md_bits.to_be_bytes());
    out.extend_from_slice(&[0; 6]); // Domain Specific ID, DSMdBits, DSMdstatus: none
    let qid = u32::from(l.queue_id.unwrap_or(0));
    let (ig, eg) = ports.unwrap_or((0, 0));
    if md_bits & MD_L1_PORTS != 0 {
        out.extend_from_slice(&((ig << 16) | eg).to_be_bytes());
    }
    if md_bits & MD_HOP_LATENCY != 0 {
        out.extend_from_slice(&l.hop_latency_ns.unwrap_or(NOT_AVAILABLE).to_be_bytes());
    }
    if md_bits & MD_QUEUE_OCCUPANCY != 0 {
        let units = occupancy_units(l.queue_occupancy_bytes.unwrap_or(0), profile) as u32;
        out.extend_from_slice(&((qid << 24) | (units & 0xFF_FFFF)).to_be_bytes());
    }
    if let Some(ts) = h.ingress_ts {
        out.extend_from_slice(&ts.to_be_bytes());
    }
    if let Some(ts) = l.egress_ts {
        out.extend_from_slice(&ts.to_be_bytes());
    }
    if md_bits & MD_L2_PORTS != 0 {
        out.extend_from_slice(&ig.to_be_bytes());
        out.extend_from_slice(&eg.to_be_bytes());
    }
    if let Some(reason) = h.drop_reason {
        out.extend_from_slice(&((qid << 24) | (u32::from(reason) << 16)).to_be_bytes());
    }
    out.extend_from_slice(inner);
    out.resize(out.len() + (4 - inner.len() % 4) % 4, 0);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ReportFlags;
    use crate::report::parse_reports;

    fn group(w0: u32, node: u32) -> Vec<u8> {
        let mut v = w0.to_be_bytes().to_vec();
        v.extend_from_slice(&node.to_be_bytes());
        v
    }

    // ---- constants ----

    #[test]
    fn constants_rep_md_bits_and_sizes_are_the_specs() {
        let by_index = [(1, MD_L1_PORTS), (2, MD_HOP_LATENCY), (3, MD_QUEUE_OCCUPANCY)]
            .into_iter()
            .chain([(4, MD_INGRESS_TS), (5, MD_EGRESS_TS), (6, MD_L2_PORTS)])
            .chain([(7, MD_TX_UTILIZATION), (8, MD_BUFFER_OCCUPANCY), (15, MD_QUEUE_DROP)]);
        for (bit, mask) in by_index {
            assert_eq!(mask, 0x8000 >> bit, "RepMdBits bit {bit}");
        }
        assert_eq!(baseline_bytes(0xFFFF), 4 + 4 + 4 + 8 + 8 + 8 + 4 + 4 + 4);
        assert_eq!(baseline_bytes(0x807E), 0, "reserved bits 0, 9–14 carry no data");
        assert_eq!((GROUP_BYTES, MAIN_CONTENTS_WORDS, LENGTH_TO_END), (8, 2, 0xFF));
        assert_eq!(SEQ_MASK + 1, 4_194_304);
        assert_eq!((REP_INNER_ONLY, REP_INT), (0, 1));
        assert_eq!((IN_NONE, IN_TLV, IN_ETHERNET, IN_IPV4, IN_IPV6), (0, 1, 3, 4, 5));
    }

    // ---- group header ----

    #[test]
    fn group_22_bit_seq_and_6_bit_hw_id() {
        // Ver 2 | hw_id 63 | seq 0x3FFFFF: every bit after the nibble set.
        let mut bytes = group(0x2FFF_FFFF, 0xDEAD_BEEF);
        bytes.extend_from_slice(&[0x00, 0x00, 0x00, 0x00]); // Inner Only, no packet, length 0
        let h = &parse_reports(&bytes, &DeviceProfile::spec()).unwrap()[0];
        assert_eq!((h.hw_id, h.seq, h.switch_id), (63, 0x3F_FFFF, Some(0xDEAD_BEEF)));
        // hw_id 0b100001 = 33 straddles bytes 0 and 1; seq 0x200001 straddles bytes 1–3.
        let mut bytes = group(0x2000_0000 | (33 << 22) | 0x20_0001, 1);
        bytes.extend_from_slice(&[0; 4]);
        let h = &parse_reports(&bytes, &DeviceProfile::spec()).unwrap()[0];
        assert_eq!((h.hw_id, h.seq), (33, 0x20_0001));
        let mut out = Vec::new();
        encode_group_header(33, 0x20_0001 | 0xC0_0000, 1, &mut out);
        assert_eq!(out, bytes[..8], "encoding keeps the low 22 bits of seq");
    }

    #[test]
    fn group_without_reports_is_empty() {
        assert!(parse_reports(&group(0x2000_0001, 5), &DeviceProfile::spec()).unwrap().is_empty());
    }

    // ---- the spec's worked example ----

    #[test]
    fn worked_example_report_length_23() {
        // TR v2.0 §"Example with Embedded INT-MD in a TCP Packet" (telemetry_report.mdk at
        // p4-applications 7eedb79): Report Length 23 = 2 (main contents) + MD 1 + IP 5 +
        // UDP 2 + shim 1 + INT fixed 3 + stack 4 + TCP 5; RepMdBits 0x1000 (queue occupancy of
        // the sink Switch3). The header level only: decode.rs reads the packet it carries.
        assert_eq!(2 + 1 + 5 + 2 + 1 + 3 + 4 + 5, 23);
        let mut bytes = group(0x2040_0007, 0x0000_0003); // hw_id 1, seq 7, node id of Switch3
        bytes.extend_from_slice(&[
            0x14, 23, 1,
            0x20, // RepType 1 (INT), InType 4 (IPv4), RepLength 23, MD Length 1, F
            0x10, 0x00, 0x00,
            0x00, // RepMdBits bit 3 (queue occupancy) | Domain Specific ID 0
            0x00, 0x00, 0x00, 0x00, // DSMdBits 0 | DSMdstatus 0
            0x00, 0x00, 0x01, 0xF4, // queue 0, occupancy 500 of Switch3
        ]);
        bytes.extend_from_slice(&[0x45; 80]); // IP 5 + UDP 2 + shim 1 + INT 3 + stack 4 + TCP 5
        let hs = parse_reports(&bytes, &DeviceProfile::spec()).unwrap();
        assert_eq!(hs.len(), 1);
        let h = &hs[0];
        assert_eq!(h.flags, ReportFlags { dropped: false, congested: false, tracked: true });
        let local = h.local.unwrap();
        assert_eq!((local.switch_id, local.queue_id), (Some(3), Some(0)));
        assert_eq!(local.queue_occupancy_bytes, Some(500));
        assert_eq!(h.ingress_ts, None);
        assert_eq!(h.inner, Some((InnerKind::Ipv4, 24..104)));
        assert_eq!(bytes.len(), 8 + 4 + 23 * 4);
    }

    // ---- coalescing ----

    #[test]
    fn coalesced_two_reports_share_the_group() {
        let mut bytes = group(0x2080_0010, 0x0000_0003); // hw_id 2, seq 16, node 3
        bytes.extend_from_slice(&[
            // report 1: INT, InType 3 (Ethernet), Report Length 6, MD Length 3, D Q
            0x13, 6, 3, 0xC0, 0x18, 0x00, 0x00,
            0x00, // RepMdBits bits 3 (queue) and 4 (ingress ts) | DS id 0
            0x00, 0x00, 0x00, 0x00, // DSMdBits | DSMdstatus
            0x04, 0x00, 0x00, 0x0A, // queue 4 | occupancy 10 cells
            0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x02, // ingress ts 2^32 + 2 (64-bit)
            0xE1, 0xE2, 0xE3, 0xE4, // 1 word of Ethernet
            // report 2: INT, InType 5 (IPv6), Report Length 3, MD Length 1, F
            0x15, 3, 1, 0x20, 0x00, 0x01, 0x00,
            0x00, // RepMdBits bit 15 (queue + drop reason) | DS id
            0x00, 0x00, 0x00, 0x00, // DSMdBits | DSMdstatus
            0x06, 0x2B, 0x00, 0x00, // queue 6 | drop reason 43 | pad
        ]);
        let hs = parse_reports(&bytes, &DeviceProfile::noviflow()).unwrap();
        assert_eq!(hs.len(), 2);
        assert!(hs.iter().all(|h| (h.hw_id, h.seq, h.switch_id) == (2, 16, Some(3))));
        let (a, b) = (&hs[0], &hs[1]);
        assert!(a.flags.dropped && a.flags.congested && !a.flags.tracked);
        let la = a.local.unwrap();
        assert_eq!((la.queue_id, la.queue_occupancy_bytes), (Some(4), Some(800)));
        assert_eq!((a.ingress_ts, la.ingress_ts), (Some((1 << 32) + 2), Some((1 << 32) + 2)));
        assert_eq!(a.inner, Some((InnerKind::Ethernet, 32..36)));
        assert_eq!((b.drop_reason, b.local.unwrap().queue_id), (Some(43), Some(6)));
        assert_eq!(b.inner, Some((InnerKind::Ipv6, 52..52)));
    }

    #[test]
    fn length_to_end_stops_the_walk() {
        let mut bytes = group(0x2000_0001, 1);
        // Inner Only, Ethernet, Report Length 0xFF: everything after is this report's.
        bytes.extend_from_slice(&[0x03, 0xFF, 0x00, 0x00]);
        bytes.extend_from_slice(&[0x13, 0x01, 0x00, 0x00, 0xAA]); // looks like a report; is not
        let hs = parse_reports(&bytes, &DeviceProfile::spec()).unwrap();
        assert_eq!(hs.len(), 1);
        assert_eq!(hs[0].inner, Some((InnerKind::Ethernet, 12..17)));
    }

    #[test]
    fn tlv_inner_is_the_first_packet_tlv() {
        let mut bytes = group(0x2000_0001, 1);
        bytes.extend_from_slice(&[
            0x01, 4, 0, 0, // Inner Only, InType 1 (TLV), Report Length 4
            0x00, 1, 0, 0, // TLV DS extension data, 1 word
            0xDD, 0xDD, 0xDD, 0xDD, 0x20, 0, 0, 0, // TLV IPv4, 0 words
            0x30, 0, 0, 0, // TLV IPv6 (not reached)
        ]);
        let h = &parse_reports(&bytes, &DeviceProfile::spec()).unwrap()[0];
        assert_eq!(h.inner, Some((InnerKind::Ipv4, 24..24)));
        // A TLV claiming more words than the report holds.
        bytes[13] = 4;
        let e = parse_reports(&bytes, &DeviceProfile::spec()).unwrap_err();
        assert_eq!((e.offset, e.field, e.value), (16, "tr_v2_0.tlv_data", 12));
    }

    #[test]
    fn ioam_and_reserved_rep_types_are_stepped_over() {
        let mut bytes = group(0x2000_0001, 1);
        bytes.extend_from_slice(&[0x23, 1, 0, 0x80, 0xFF, 0xFF, 0xFF, 0xFF]); // IOAM, 1 word, D
        bytes.extend_from_slice(&[0xF3, 0, 0, 0]); // RepType 15, nothing
        let hs = parse_reports(&bytes, &DeviceProfile::spec()).unwrap();
        assert_eq!(hs.len(), 2);
        assert!(hs[0].flags.dropped);
        assert_eq!((hs[0].inner.clone(), hs[0].local), (None, None));
    }

    // ---- malformed ----

    #[test]
    fn malformed_report_length_past_the_payload() {
        let mut bytes = group(0x2000_0001, 1);
        bytes.extend_from_slice(&[0x13, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]); // needs 12, has 8
        let e = parse_reports(&bytes, &DeviceProfile::spec()).unwrap_err();
        assert_eq!((e.offset, e.field, e.value), (9, "tr_v2_0.report_length", 3));
        assert!(e.expected.starts_with("≤ 2 words"), "{}", e.expected);
    }

    #[test]
    fn malformed_md_length_disagrees() {
        let mut bytes = group(0x2000_0001, 1);
        // Report Length 3, MD Length 2: 2 main-contents words + 2 > 3.
        bytes.extend_from_slice(&[0x13, 3, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        let e = parse_reports(&bytes, &DeviceProfile::spec()).unwrap_err();
        assert_eq!((e.offset, e.field, e.value), (10, "tr_v2_0.md_length", 2));
        // MD Length 1 cannot hold RepMdBits bit 4's 8-byte ingress timestamp.
        let mut bytes = group(0x2000_0001, 1);
        bytes.extend_from_slice(&[0x13, 3, 1, 0, 0x08, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        let e = parse_reports(&bytes, &DeviceProfile::spec()).unwrap_err();
        assert_eq!((e.offset, e.field, e.value), (10, "tr_v2_0.md_length", 1));
        assert!(e.expected.starts_with("≥ 2 words"), "{}", e.expected);
    }

    #[test]
    fn malformed_truncated_group() {
        let e = parse_reports(&[0x20, 0, 0, 0, 0, 0], &DeviceProfile::spec()).unwrap_err();
        assert_eq!((e.offset, e.field, e.value), (4, "tr_v2_0.node_id", 2));
        // Four bytes or more after a report are another report, and must be one.
        let mut bytes = group(0x2000_0001, 1);
        bytes.extend_from_slice(&[0x00, 0, 0, 0, 0x13, 0x09, 0x00]);
        bytes.push(0);
        let e = parse_reports(&bytes, &DeviceProfile::spec()).unwrap_err();
        assert_eq!((e.offset, e.field, e.value), (13, "tr_v2_0.report_length", 9));
    }

    // ---- Report Length rounded down (Intel switch.p4) ----

    #[test]
    fn rounded_down_report_length_leaves_1_to_3_bytes_to_the_last_report() {
        // Intel switch.p4's PTF DTel utilities compute the expected report's Report Length as
        // `(total_len - 12) // 4` (`ipv4_dtel_v2_pkt`, open-p4studio
        // pkgsrc/switch-p4-16/ptf/common/dtel_utils*.py): a reported frame of 4k + r bytes
        // leaves r bytes after the last whole word. An Inner Only Ethernet report of 14 bytes
        // (a bare Ethernet header) says Report Length 3 and leaves 2.
        for extra in 1..=3usize {
            let mut bytes = group(0x2000_0001, 1);
            bytes.extend_from_slice(&[0x03, 3, 0, 0x20]); // Inner Only, Ethernet, 3 words, F
            bytes.extend((0..12 + extra).map(|i| i as u8));
            let hs = parse_reports(&bytes, &DeviceProfile::spec()).unwrap();
            assert_eq!(hs.len(), 1, "{extra} trailing bytes");
            assert_eq!(hs[0].inner, Some((InnerKind::Ethernet, 12..24 + extra)));
            assert!(hs[0].flags.tracked);
        }
        // An empty report (InType None) followed by 2 stray bytes: the same tolerance.
        let mut bytes = group(0x2000_0001, 1);
        bytes.extend_from_slice(&[0x00, 0, 0, 0, 0x00, 0x00]);
        assert_eq!(parse_reports(&bytes, &DeviceProfile::spec()).unwrap().len(), 1);
    }

    // ---- encoder ----

    #[test]
    fn encoder_pads_inner_and_picks_l2_for_wide_ports() {
        let h = ReportHeader {
            version: ReportVersion::V2_0,
            switch_id: Some(4),
            hw_id: 0,
            seq: 0,
            ingress_ts: None,
            flags: ReportFlags::default(),
            drop_reason: None,
            local: Some(Hop {
                switch_id: Some(4),
                ingress_port: Some(0x1_0000),
                egress_port: Some(2),
                ..Hop::default()
            }),
            inner: Some((InnerKind::Ethernet, 0..0)),
        };
        let mut out = Vec::new();
        crate::report::encode_report(&h, &[1, 2, 3, 4, 5], &DeviceProfile::spec(), &mut out);
        // group 8 + header 4 + main 8 + L2 ports 8 + inner 5 padded to 8.
        assert_eq!(out.len(), 36);
        assert_eq!(&out[12..14], &MD_L2_PORTS.to_be_bytes());
        assert_eq!(&out[33..36], &[0, 0, 0]);
        let back = &parse_reports(&out, &DeviceProfile::spec()).unwrap()[0];
        assert_eq!(back.local, h.local);
        assert_eq!(back.inner, Some((InnerKind::Ethernet, 28..36)));
    }
}
