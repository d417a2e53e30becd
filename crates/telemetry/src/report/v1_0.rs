//! Telemetry Report v1.0 (int-telemetry.md §3): a 16-byte header, one 4-byte optional metadata
//! word per set RepMdBits bit, then the reported packet (Ethernet, IPv4 or IPv6 by NProt).
//! AmLight's NoviFlow switches send it with RepMdBits 0 and Length 4 (§9).

use super::reader::Reader;
use super::{ReportHeader, flag_bits, flags_at, occupancy_bytes, occupancy_units};
use crate::error::DecodeError;
use crate::model::{Hop, InnerKind, ReportVersion};
use crate::profile::{DeviceProfile, FlagLayout};

/// Fixed header: 4 words (TR v1.0 §3, int-telemetry.md §3.1: "4 if none").
pub const FIXED_WORDS: u8 = 4;

/// RepMdBits masks over the 6-bit field, bit 0 = MSB (int-telemetry.md §3.1 table).
pub const MD_PORTS: u8 = 0x20;
pub const MD_HOP_LATENCY: u8 = 0x10;
pub const MD_QUEUE_OCCUPANCY: u8 = 0x08;
pub const MD_EGRESS_TS: u8 = 0x04;
pub const MD_QUEUE_DROP: u8 = 0x02;
/// Egress port tx utilization: no [`Hop`] field holds it, so it is stepped over.
pub const MD_TX_UTILIZATION: u8 = 0x01;

/// NProt values: what follows the header (TR v1.0 §3).
pub const NPROT_ETHERNET: u8 = 0;
pub const NPROT_IPV4: u8 = 1;
pub const NPROT_IPV6: u8 = 2;

/// A metadata word of 0xFFFFFFFF means "not available", never a value (int-telemetry.md §8,
/// §11); only the whole word counts, not an all-ones sub-field.
const NOT_AVAILABLE: u32 = u32::MAX;

/// Shifts from the LSB of word 0 of D, Q, F: spec bits 23–25, or bits 17–19 in the
/// mandaryoshi/p4-int layout that puts them before Reserved (§3.3).
fn flag_shifts(layout: FlagLayout) -> (u32, u32, u32) {
    match layout {
        FlagLayout::Spec => (8, 7, 6),
        FlagLayout::DqfBeforeReserved => (14, 13, 12),
    }
}

fn kind_of(nprot: u8) -> Option<InnerKind> {
    match nprot {
        NPROT_ETHERNET => Some(InnerKind::Ethernet),
        NPROT_IPV4 => Some(InnerKind::Ipv4),
        NPROT_IPV6 => Some(InnerKind::Ipv6),
        _ => None,
    }
}

/// One TR v1.0 report at the start of `payload`.
pub fn parse(payload: &[u8], profile: &DeviceProfile) -> Result<ReportHeader, DecodeError> {
    let mut r = Reader::new(payload, 0);
    let w0 = r.u32("tr_v1_0.word0")?;
    let switch_id = r.u32("tr_v1_0.switch_id")?;
    let seq = r.u32("tr_v1_0.seq")?;
    let ingress_ts = u64::from(r.u32("tr_v1_0.ingress_ts")?);
    let nprot = ((w0 >> 21) & 0x7) as u8;
    let md_bits = ((w0 >> 15) & 0x3F) as u8;
    let needed = FIXED_WORDS + md_bits.count_ones() as u8;
    let length = if profile.tr_v1_length_from_bits { needed } else { ((w0 >> 24) & 0xF) as u8 };

    if length < needed {
        return Err(DecodeError::new(
            0,
            "tr_v1_0.length",
            u64::from(length),
            format!("≥ {needed} words: 4 + one per RepMdBits bit (RepMdBits = {md_bits:#04x})"),
        ));
    }
    let Some(kind) = kind_of(nprot) else {
        return Err(DecodeError::new(
            1,
            "tr_v1_0.nprot",
            u64::from(nprot),
            "0 (Ethernet), 1 (IPv4) or 2 (IPv6)",
        ));
    };

    let mut hop =
        Hop { switch_id: Some(switch_id), ingress_ts: Some(ingress_ts), ..Hop::default() };
    let mut drop_reason = None;
    // A whole word of all ones is "not available"; a sub-field of all ones is a value.
    if md_bits & MD_PORTS != 0 {
        let w = Some(r.u32("tr_v1_0.md.ports")?).filter(|&w| w != NOT_AVAILABLE);
        hop.ingress_port = w.map(|w| w >> 16);
        hop.egress_port = w.map(|w| w & 0xFFFF);
    }
    if md_bits & MD_HOP_LATENCY != 0 {
        let w = r.u32("tr_v1_0.md.hop_latency")?;
        hop.hop_latency_ns = (w != NOT_AVAILABLE).then_some(w);
    }
    if md_bits & MD_QUEUE_OCCUPANCY != 0 {
        let w = Some(r.u32("tr_v1_0.md.queue_occupancy")?).filter(|&w| w != NOT_AVAILABLE);
        hop.queue_id = w.map(|w| (w >> 24) as u8);
        hop.queue_occupancy_bytes = w.map(|w| occupancy_bytes(w & 0xFF_FFFF, profile));
    }
    if md_bits & MD_EGRESS_TS != 0 {
        hop.egress_ts = Some(u64::from(r.u32("tr_v1_0.md.egress_ts")?));
    }
    if md_bits & MD_QUEUE_DROP != 0 {
        let [qid, reason, _, _] = r.bytes("tr_v1_0.md.queue_drop")?;
        hop.queue_id = hop.queue_id.or(Some(qid));
        drop_reason = Some(reason);
    }
    // Tx utilization, then any words a longer Length claims beyond the bits (tolerated).
    let extra_words = usize::from(length - needed) + usize::from(md_bits & MD_TX_UTILIZATION);
    r.skip(extra_words * 4, "tr_v1_0.md")?;

    let (d, q, f) = flag_shifts(profile.flag_layout);
    Ok(ReportHeader {
        version: ReportVersion::V1_0,
        switch_id: Some(switch_id),
        hw_id: (w0 & 0x3F) as u8,
        seq,
        ingress_ts: Some(ingress_ts),
        flags: flags_at(w0, d, q, f),
        drop_reason,
        local: (md_bits != 0).then_some(hop),
        inner: Some((kind, r.pos()..payload.len())),
    })
}

/// Appends a TR v1.0 report. A metadata word is sent when any of its fields is set in
/// `h.local` (ports, hop latency, occupancy, egress timestamp) or `h.drop_reason`; NoviFlow-style
/// reports (`local: None`) get RepMdBits 0 and Length 4. `h.inner: None` is sent as Ethernet.
pub fn encode(h: &ReportHeader, inner: &[u8], profile: &DeviceProfile, out: &mut Vec<u8>) {
    let l = h.local.unwrap_or_default();
    let mut md_bits = 0u8;
    if l.ingress_port.is_some() || l.egress_port.is_some() {
        md_bits |= MD_PORTS;
    }
    if l.hop_latency_ns.is_some() {
        md_bits |= MD_HOP_LATENCY;
    }
    if l.queue_occupancy_bytes.is_some() {
        md_bits |= MD_QUEUE_OCCUPANCY;
    }
    if l.egress_ts.is_some() {
        md_bits |= MD_EGRESS_TS;
    }
    if h.drop_reason.is_some() {
        md_bits |= MD_QUEUE_DROP;
    }
    let nprot = match h.inner.as_ref().map(|(k, _)| *k) {
        None | Some(InnerKind::Ethernet) => NPROT_ETHERNET,
        Some(InnerKind::Ipv4) => NPROT_IPV4,
        Some(InnerKind::Ipv6) => NPROT_IPV6,
    };
    let length = FIXED_WORDS + md_bits.count_ones() as u8;
    let (d, q, f) = flag_shifts(profile.flag_layout);
    let w0 = (1u32 << 28)
        | (u32::from(length) << 24)
        | (u32::from(nprot) << 21)
        | (u32::from(md_bits) << 15)
        | flag_bits(h.flags, d, q, f)
        | u32::from(h.hw_id & 0x3F);
    for w in [w0, h.switch_id.unwrap_or(0), h.seq, h.ingress_ts.unwrap_or(0) as u32] {
        out.extend_from_slice(&w.to_be_bytes());
    }
    let qid = u32::from(l.queue_id.unwrap_or(0));
    let mut word = |bit: u8, w: u32| {
        if md_bits & bit != 0 {
            out.extend_from_slice(&w.to_be_bytes());
        }
    };
    word(MD_PORTS, (l.ingress_port.unwrap_or(0) << 16) | (l.egress_port.unwrap_or(0) & 0xFFFF));
    word(MD_HOP_LATENCY, l.hop_latency_ns.unwrap_or(NOT_AVAILABLE));
    let units = occupancy_units(l.queue_occupancy_bytes.unwrap_or(0), profile) as u32;
    word(MD_QUEUE_OCCUPANCY, (qid << 24) | (units & 0xFF_FFFF));
    word(MD_EGRESS_TS, l.egress_ts.unwrap_or(0) as u32);
    word(MD_QUEUE_DROP, (qid << 24) | (u32::from(h.drop_reason.unwrap_or(0)) << 16));
    out.extend_from_slice(inner);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ReportFlags;
    use crate::report::parse_reports;

    // ---- constants ----

    #[test]
    fn constants_rep_md_bits_are_msb_first() {
        assert_eq!(FIXED_WORDS, 4);
        let masks = [MD_PORTS, MD_HOP_LATENCY, MD_QUEUE_OCCUPANCY, MD_EGRESS_TS, MD_QUEUE_DROP];
        for (bit, m) in masks.into_iter().chain([MD_TX_UTILIZATION]).enumerate() {
            assert_eq!(m, 0x20 >> bit, "RepMdBits bit {bit}");
        }
        assert_eq!((NPROT_ETHERNET, NPROT_IPV4, NPROT_IPV6), (0, 1, 2));
        assert_eq!(flag_shifts(FlagLayout::Spec), (8, 7, 6));
        assert_eq!(flag_shifts(FlagLayout::DqfBeforeReserved), (14, 13, 12));
    }

    // ---- NoviFlow style ----

    #[test]
    fn noviflow_amlight_generator_defaults() {
        // amlight/int_collector tests/support/packet_gen.py defaults (int-telemetry.md §12.2).
        let bytes = [
            0x14, 0x00, 0x00,
            0x01, // Ver 1, Length 4, NProt 0, RepMdBits 0, rsvd 0, DQF 0, hw_id 1
            0xFB, 0x65, 0xD6, 0x75, // switch id 0xFB65D675
            0x53, 0xFB, 0x36, 0x0A, // seq 1408972298
            0x3A, 0x6E, 0x94, 0xE4, // ingress ts 980325604
            0x01, 0x02, // inner Ethernet starts here
        ];
        let h = &parse_reports(&bytes, &DeviceProfile::noviflow()).unwrap()[0];
        assert_eq!(h.version, ReportVersion::V1_0);
        assert_eq!((h.switch_id, h.hw_id, h.seq), (Some(0xFB65_D675), 1, 1_408_972_298));
        assert_eq!(h.ingress_ts, Some(980_325_604));
        assert_eq!((h.local, h.flags), (None, ReportFlags::default()));
        assert_eq!(h.inner, Some((InnerKind::Ethernet, 16..18)));
    }

    #[test]
    fn spec_every_rep_md_bit_in_order() {
        let bytes = [
            0x1A, 0x5F, 0x81,
            0xC5, // Ver 1, Length 10, NProt 2 (IPv6), RepMdBits 0x3F, D Q F 1, hw_id 5
            0x00, 0x00, 0x00, 0x01, // switch id 1
            0x00, 0x00, 0x00, 0x02, // seq 2
            0x00, 0x00, 0x00, 0x03, // ingress ts 3
            0x00, 0x17, 0x00, 0x0B, // bit 0: ingress port 23 | egress port 11
            0xFF, 0xFF, 0xFF, 0xFF, // bit 1: hop latency not available
            0x02, 0x00, 0x00, 0x6F, // bit 2: queue 2 | occupancy 111 cells
            0x00, 0x00, 0x00, 0x09, // bit 3: egress ts 9
            0x02, 0x0E, 0x00, 0x00, // bit 4: queue 2 | drop reason 14 | pad
            0x00, 0x00, 0x00, 0x32, // bit 5: tx utilization (stepped over)
            0x60, // inner IPv6 starts here
        ];
        let h = &parse_reports(&bytes, &DeviceProfile::noviflow()).unwrap()[0];
        assert!(h.flags.dropped && h.flags.congested && h.flags.tracked);
        assert_eq!((h.hw_id, h.drop_reason), (5, Some(14)));
        let l = h.local.unwrap();
        assert_eq!((l.ingress_port, l.egress_port, l.hop_latency_ns), (Some(23), Some(11), None));
        assert_eq!((l.queue_id, l.queue_occupancy_bytes), (Some(2), Some(8880)));
        assert_eq!((l.ingress_ts, l.egress_ts, l.switch_id), (Some(3), Some(9), Some(1)));
        assert_eq!(h.inner, Some((InnerKind::Ipv6, 40..41)));
    }

    #[test]
    fn flag_layout_dqf_before_reserved_reads_bits_17_to_19() {
        // D/Q/F as mandaryoshi/p4-int sends them: bits 17, 18, 19 → only Q set here (0x2000).
        let mut bytes = vec![0x14, 0x00, 0x20, 0x00];
        bytes.extend_from_slice(&[0; 12]);
        let spec = &parse_reports(&bytes, &DeviceProfile::spec()).unwrap()[0];
        assert_eq!(spec.flags, ReportFlags::default(), "reserved bits are ignored, not rejected");
        let p =
            DeviceProfile { flag_layout: FlagLayout::DqfBeforeReserved, ..DeviceProfile::spec() };
        let quirk = &parse_reports(&bytes, &p).unwrap()[0];
        assert_eq!(quirk.flags, ReportFlags { dropped: false, congested: true, tracked: false });
        let mut out = Vec::new();
        encode(quirk, &[], &p, &mut out);
        assert_eq!(&out[..4], &bytes[..4]);
    }

    #[test]
    fn spec_longer_length_than_bits_is_stepped_over() {
        // Length 6 with RepMdBits 0: two unknown words before the inner packet.
        let mut bytes = vec![0x16, 0x20, 0x00, 0x00];
        bytes.extend_from_slice(&[0; 20]);
        let h = &parse_reports(&bytes, &DeviceProfile::spec()).unwrap()[0];
        assert_eq!(h.inner, Some((InnerKind::Ipv4, 24..24)));
    }

    // ---- malformed ----

    #[test]
    fn malformed_length_below_the_bits() {
        // Length 4 but RepMdBits 0x21 (two words).
        let mut bytes = vec![0x14, 0x10, 0x80, 0x00];
        bytes.extend_from_slice(&[0; 24]);
        let e = parse(&bytes, &DeviceProfile::spec()).unwrap_err();
        assert_eq!((e.offset, e.field, e.value), (0, "tr_v1_0.length", 4));
        assert!(e.expected.starts_with("≥ 6 words"), "{}", e.expected);
    }

    #[test]
    fn malformed_nprot_and_truncation() {
        let mut bytes = vec![0x14, 0x60, 0x00, 0x00];
        bytes.extend_from_slice(&[0; 12]);
        let e = parse(&bytes, &DeviceProfile::spec()).unwrap_err();
        assert_eq!((e.offset, e.field, e.value), (1, "tr_v1_0.nprot", 3));
        let e = parse(&bytes[..15], &DeviceProfile::spec()).unwrap_err();
        assert_eq!((e.offset, e.field, e.value), (12, "tr_v1_0.ingress_ts", 3));
        // RepMdBits 0x08 (occupancy) with the word missing.
        let bytes = [0x15, 0x04, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xAA];
        let e = parse(&bytes, &DeviceProfile::spec()).unwrap_err();
        assert_eq!((e.offset, e.field, e.value), (16, "tr_v1_0.md.queue_occupancy", 1));
    }
}
