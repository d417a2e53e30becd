//! parse_inner / encode_inner: byte-exact vectors written from the spec layouts, the ONOS
//! sample frame, NoviFlow stacks, malformed inputs and property tests.

use super::metadata::{
    INS_BIT6, INS_EGRESS_TS, INS_INGRESS_TS, INS_L1_PORTS, INS_QUEUE, hop_bytes,
};
use super::*;
use crate::model::{FlowKey, Hop, IntVersion};
use proptest::prelude::*;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

fn v4(a: [u8; 4]) -> IpAddr {
    IpAddr::V4(Ipv4Addr::from(a))
}

fn dscp_profile() -> DeviceProfile {
    DeviceProfile {
        int_detect: IntDetect::Dscp { value: 0x17, mask: 0x3F },
        ..DeviceProfile::noviflow()
    }
}

// ---- byte-exact vectors ------------------------------------------------------------------

/// The reported packet of the ONOS bmv2 sample (int-telemetry.md §12.1, frame bytes 54–136),
/// rebuilt from its decode; fields the table does not give (IP id, TTL, checksums, TCP
/// seq/window) are zero, which the parser does not read.
#[rustfmt::skip]
pub(crate) const ONOS_INNER: [u8; 83] = [
    // inner Ethernet: dst ff:ff:ff:ff:ff:ff, src 00:00:00:00:01:01, type IPv4
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0x01, 0x01, 0x08, 0x00,
    // IPv4: ver 4 IHL 5, ToS 0x04 (DSCP 1), total length 69, id, flags, TTL, proto 6, csum
    0x45, 0x04, 0x00, 0x45, 0x00, 0x00, 0x00, 0x00, 0x00, 0x06, 0x00, 0x00,
    // 10.0.1.1 → 10.0.2.3
    10, 0, 1, 1, 10, 0, 2, 3,
    // TCP 63804 → 1234, seq, ack, data offset 5, SYN, window, csum, urg
    0xf9, 0x3c, 0x04, 0xd2, 0, 0, 0, 0, 0, 0, 0, 0, 0x50, 0x02, 0, 0, 0, 0, 0, 0,
    // INT v0.5 shim: type 1, reserved, Length 7 words, reserved
    0x01, 0x00, 0x07, 0x00,
    // MD: Ver 0, InsCnt 1, MaxHopCnt 32, TotalHopCnt 3; ins 0x8000 (switch id); reserved
    0x00, 0x01, 0x20, 0x03, 0x80, 0x00, 0x00, 0x00,
    // stack, newest first: switch ids 2, 3, 1
    0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 1,
    // tail: proto 6, dport 1234, DSCP 0
    0x06, 0x04, 0xd2, 0x00,
    // payload "a"
    0x61,
];

fn switch_only(ids: &[u32]) -> Vec<Hop> {
    ids.iter().map(|&id| Hop { switch_id: Some(id), ..Hop::default() }).collect()
}

#[test]
fn v0_5_onos_sample_frame_decodes_as_published() {
    let p = parse_inner(&ONOS_INNER, InnerKind::Ethernet, &DeviceProfile::spec()).unwrap();
    let flow = FlowKey {
        src: v4([10, 0, 1, 1]),
        dst: v4([10, 0, 2, 3]),
        sport: 63804,
        dport: 1234,
        proto: 6,
    };
    assert_eq!(p.flow, Some(flow));
    assert_eq!(p.packet_bytes, 69);
    assert_eq!(p.int_version, Some(IntVersion::V0_5));
    assert_eq!(p.hops, switch_only(&[2, 3, 1]));
}

#[test]
fn v0_5_encoder_reproduces_the_onos_int_bytes() {
    let spec = IntStackSpec {
        version: IntVersion::V0_5,
        instructions: 0x8000,
        max_hops: 32,
        hops: switch_only(&[2, 3, 1]),
    };
    let mut out = Vec::new();
    spec.encode(6, 1234, &DeviceProfile::spec(), &mut out);
    assert_eq!(out, ONOS_INNER[54..82]);
}

/// NoviFlow-style INT v1.0 over UDP in a VLAN-tagged frame, offsets as in §9.1 (minus the
/// 58 bytes of outer headers and TR v1.0): two hops, timestamps either side of 2^32.
#[rustfmt::skip]
fn noviflow_two_hops() -> Vec<u8> {
    let mut b = vec![
        // Ethernet dst, src; 802.1Q TPID, TCI (VLAN 100); type IPv4
        0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01, 0x81, 0x00, 0x00, 0x64, 0x08, 0x00,
        // IPv4 @18: ToS 0x17 << 2, total length 20 + 8 + 60 = 88, DF, TTL 64, UDP, checksum
        0x45, 0x5c, 0x00, 0x58, 0, 0, 0x40, 0, 64, 17, 0x00, 0x00,
        192, 168, 0, 1, 192, 168, 0, 2,
        // UDP @38: 40000 → 5201, length 68, checksum none
        0x9c, 0x40, 0x14, 0x51, 0x00, 0x44, 0x00, 0x00,
        // INT v1.0 shim @46: type 1, reserved, Length 3 + 2 × 6 = 15, DSCP 0
        0x01, 0x00, 0x0f, 0x00,
        // MD @50: Ver 1, HopML 6, RemainingHopCnt 8; ins 0xFC00; reserved
        0x10, 0x00, 0x06, 0x08, 0xfc, 0x00, 0x00, 0x00,
        // hop[0] @58 (newest): switch 2, ports 3 → 4, latency n/a, queue 1 × 10 cells,
        // ingress ts 0xFFFFFFF0, egress ts 0x00000010 (wrapped)
        0, 0, 0, 2,  0, 3, 0, 4,  0xff, 0xff, 0xff, 0xff,  0x01, 0x00, 0x00, 0x0a,
        0xff, 0xff, 0xff, 0xf0,  0x00, 0x00, 0x00, 0x10,
        // hop[1] @82: switch 1, ports 1 → 2, latency n/a, queue 7 × 0 cells,
        // ingress ts 0xFFFFFF00, egress ts 0xFFFFFFFE (largest available value)
        0, 0, 0, 1,  0, 1, 0, 2,  0xff, 0xff, 0xff, 0xff,  0x07, 0x00, 0x00, 0x00,
        0xff, 0xff, 0xff, 0x00,  0xff, 0xff, 0xff, 0xfe,
    ];
    // IPv4 header checksum over bytes 18..38.
    let sum: u32 = b[18..38].chunks_exact(2).map(|w| u32::from(u16::from_be_bytes([w[0], w[1]]))).sum();
    let f = (sum & 0xffff) + (sum >> 16);
    let c = !((f & 0xffff) + (f >> 16)) as u16;
    b[28..30].copy_from_slice(&c.to_be_bytes());
    b
}

fn noviflow_two_hops_decoded() -> Vec<Hop> {
    vec![
        Hop {
            switch_id: Some(2),
            ingress_port: Some(3),
            egress_port: Some(4),
            hop_latency_ns: None,
            queue_id: Some(1),
            queue_occupancy_bytes: Some(800),
            ingress_ts: Some(0xFFFF_FFF0),
            egress_ts: Some(0x10),
        },
        Hop {
            switch_id: Some(1),
            ingress_port: Some(1),
            egress_port: Some(2),
            hop_latency_ns: None,
            queue_id: Some(7),
            queue_occupancy_bytes: Some(0),
            ingress_ts: Some(0xFFFF_FF00),
            egress_ts: Some(0xFFFF_FFFE),
        },
    ]
}

fn noviflow_flow() -> FlowKey {
    FlowKey {
        src: v4([192, 168, 0, 1]),
        dst: v4([192, 168, 0, 2]),
        sport: 40000,
        dport: 5201,
        proto: 17,
    }
}

#[test]
fn v1_0_noviflow_vector_decodes_field_by_field() {
    let p =
        parse_inner(&noviflow_two_hops(), InnerKind::Ethernet, &DeviceProfile::noviflow()).unwrap();
    assert_eq!(p.flow, Some(noviflow_flow()));
    assert_eq!(p.packet_bytes, 88);
    assert_eq!(p.int_version, Some(IntVersion::V1_0));
    assert_eq!(p.hops, noviflow_two_hops_decoded());
}

#[test]
fn v1_0_noviflow_encoder_is_byte_exact() {
    let spec =
        IntStackSpec { max_hops: 10, ..IntStackSpec::noviflow(&noviflow_two_hops_decoded()) };
    let mut out = Vec::new();
    encode_inner(
        &noviflow_flow(),
        InnerKind::Ethernet,
        &[100],
        Some(&spec),
        0,
        &DeviceProfile::noviflow(),
        &mut out,
    );
    assert_eq!(out, noviflow_two_hops());
}

/// INT v2.1 MD over IPv6/TCP: one hop with ins 0xFC00, so 8-byte timestamps and HopML 8.
#[rustfmt::skip]
fn v2_1_one_hop() -> Vec<u8> {
    let mut b = vec![
        // IPv6: ver 6, traffic class 0x5c (DSCP 0x17), flow label 0; payload 20 + 48; TCP; hop limit
        0x65, 0xc0, 0x00, 0x00, 0x00, 0x44, 6, 64,
    ];
    b.extend_from_slice(&Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1).octets());
    b.extend_from_slice(&Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 2).octets());
    b.extend_from_slice(&[
        // TCP @40: 443 → 50000, seq 1, ack 0, data offset 5, ACK, window 65535
        0x01, 0xbb, 0xc3, 0x50, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x10, 0xff, 0xff, 0, 0, 0, 0,
        // shim @60: Type 1 (MD) NPT 0, Length 3 + 8 = 11 (shim not counted), reserved, DSCP
        0x10, 0x0b, 0x00, 0x00,
        // MD @64: Ver 2 D E M 0, HopML 8, RemainingHopCnt 4; ins 0xFC00, DS id; DS ins, flags
        0x20, 0x00, 0x08, 0x04, 0xfc, 0x00, 0x00, 0x00, 0, 0, 0, 0,
        // hop @76: node 0x0a0b0c0d, ports 1 → 65534, latency 1500 ns, queue 2 × 3000 B
        0x0a, 0x0b, 0x0c, 0x0d,  0x00, 0x01, 0xff, 0xfe,  0x00, 0x00, 0x05, 0xdc,
        0x02, 0x00, 0x0b, 0xb8,
        // ingress ts 2^32 + 5, egress ts 2^32 + 1505 (64 bits, no wrap in v2.x)
        0, 0, 0, 1, 0, 0, 0, 5,  0, 0, 0, 1, 0, 0, 0x05, 0xe1,
    ]);
    b
}

fn v2_1_hop() -> Hop {
    Hop {
        switch_id: Some(0x0a0b_0c0d),
        ingress_port: Some(1),
        egress_port: Some(65534),
        hop_latency_ns: Some(1500),
        queue_id: Some(2),
        queue_occupancy_bytes: Some(3000),
        ingress_ts: Some((1 << 32) + 5),
        egress_ts: Some((1 << 32) + 1505),
    }
}

#[test]
fn v2_1_vector_decodes_with_8_byte_timestamps() {
    let p = parse_inner(&v2_1_one_hop(), InnerKind::Ipv6, &DeviceProfile::spec()).unwrap();
    let f = p.flow.unwrap();
    assert_eq!((f.sport, f.dport, f.proto), (443, 50000, 6));
    assert_eq!(p.packet_bytes, 40 + 68);
    assert_eq!(p.int_version, Some(IntVersion::V2_1));
    assert_eq!(p.hops, vec![v2_1_hop()]);
}

#[test]
fn v2_1_encoder_is_byte_exact() {
    let spec = IntStackSpec {
        version: IntVersion::V2_1,
        instructions: 0xFC00,
        max_hops: 5,
        hops: vec![v2_1_hop()],
    };
    let flow = FlowKey {
        src: IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1)),
        dst: IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 2)),
        sport: 443,
        dport: 50000,
        proto: 6,
    };
    let mut out = Vec::new();
    encode_inner(&flow, InnerKind::Ipv6, &[], Some(&spec), 0, &DeviceProfile::spec(), &mut out);
    assert_eq!(out, v2_1_one_hop());
}

#[test]
fn v2_1_npt1_restores_the_original_udp_port() {
    // IPv4/UDP to 17768 (scapy's INT port); shim NPT = 1 carries the original dport 53.
    let mut b = Vec::new();
    inner::emit_ipv4(Ipv4Addr::new(1, 1, 1, 1), Ipv4Addr::new(2, 2, 2, 2), 17, 0, 8 + 16, &mut b);
    b.extend_from_slice(&[0x30, 0x39, 0x45, 0x68, 0, 24, 0, 0]);
    // Type 1, NPT 1 → 0x14; Length 3; original dport 53
    b.extend_from_slice(&[0x14, 3, 0x00, 0x35, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    let p = parse_inner(&b, InnerKind::Ipv4, &DeviceProfile::spec()).unwrap();
    assert_eq!(p.flow.unwrap().dport, 53);
    assert_eq!(p.int_version, Some(IntVersion::V2_1));
}

#[test]
fn v2_1_npt2_reads_the_original_l4_header_after_the_stack() {
    let mut b = Vec::new();
    inner::emit_ipv4(
        Ipv4Addr::new(1, 1, 1, 1),
        Ipv4Addr::new(2, 2, 2, 2),
        17,
        0,
        8 + 16 + 20,
        &mut b,
    );
    b.extend_from_slice(&[0x30, 0x39, 0x45, 0x68, 0, 44, 0, 0]);
    // Type 1, NPT 2 → 0x18; Length 3; original protocol 6 (TCP)
    b.extend_from_slice(&[0x18, 3, 0x00, 0x06, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    b.extend_from_slice(&[
        0x00, 0x50, 0x1f, 0x90, 0, 0, 0, 0, 0, 0, 0, 0, 0x50, 0x10, 0, 0, 0, 0, 0, 0,
    ]);
    let f = parse_inner(&b, InnerKind::Ipv4, &DeviceProfile::spec()).unwrap().flow.unwrap();
    assert_eq!((f.proto, f.sport, f.dport), (6, 80, 8080));
}

#[test]
fn v2_1_mx_carries_no_hops() {
    let mut b = Vec::new();
    inner::emit_ipv4(
        Ipv4Addr::new(1, 1, 1, 1),
        Ipv4Addr::new(2, 2, 2, 2),
        17,
        0x17,
        8 + 16,
        &mut b,
    );
    b.extend_from_slice(&[0x30, 0x39, 0x14, 0x51, 0, 24, 0, 0]);
    b.extend_from_slice(&[0x30, 3, 0, 0, 0x20, 0, 0, 0, 0xfc, 0, 0, 0, 0, 0, 0, 0]);
    let p = parse_inner(&b, InnerKind::Ipv4, &DeviceProfile::spec()).unwrap();
    assert_eq!((p.int_version, p.hops.len()), (Some(IntVersion::V2_1), 0));
}

// ---- NoviFlow ----------------------------------------------------------------------------

#[test]
fn noviflow_1_to_10_hops_round_trip_in_cells() {
    let p = DeviceProfile::noviflow();
    for n in 1..=10u32 {
        let hops: Vec<Hop> = (0..n)
            .map(|i| Hop {
                switch_id: Some(100 + i),
                ingress_port: Some(i),
                egress_port: Some(i + 1),
                hop_latency_ns: None,
                queue_id: Some((i % 8) as u8),
                queue_occupancy_bytes: Some(u64::from(i) * 80 * 1000),
                ingress_ts: Some(u64::from(u32::MAX - 1000 * n + i)),
                egress_ts: Some(u64::from(i * 7)),
            })
            .collect();
        for proto in [6, 17] {
            let flow = FlowKey { proto, ..noviflow_flow() };
            let mut out = Vec::new();
            encode_inner(
                &flow,
                InnerKind::Ethernet,
                &[100],
                Some(&IntStackSpec::noviflow(&hops)),
                100,
                &p,
                &mut out,
            );
            let got = parse_inner(&out, InnerKind::Ethernet, &p).unwrap();
            assert_eq!(got.hops, hops, "{n} hops, proto {proto}");
            assert_eq!(got.flow, Some(flow));
            // §9.1: over UDP the shim is at inner byte 46, hop[0] at 58, 24 B per hop.
            if proto == 17 {
                assert_eq!(out[46..49], [1, 0, 3 + 6 * n as u8]);
                assert_eq!(out[53], 10 - n as u8, "RemainingHopCnt counts down from 10");
                assert_eq!(out[58..62], 100u32.to_be_bytes());
                assert_eq!(out.len(), 58 + 24 * n as usize + 100);
            }
        }
    }
}

#[test]
fn noviflow_int_sits_before_tcp_options() {
    // A TCP header whose data offset claims 12 bytes of options: NoviFlow's INT is what follows
    // the fixed 20 bytes, and a spec-profile reader looking after the options finds none.
    let flow = FlowKey { proto: 6, ..noviflow_flow() };
    let hops = &noviflow_two_hops_decoded();
    let mut out = Vec::new();
    encode_inner(
        &flow,
        InnerKind::Ipv4,
        &[],
        Some(&IntStackSpec::noviflow(hops)),
        0,
        &DeviceProfile::noviflow(),
        &mut out,
    );
    out[32] = 0x80;
    let nf = parse_inner(&out, InnerKind::Ipv4, &DeviceProfile::noviflow()).unwrap();
    assert_eq!(nf.hops.len(), 2);
    let spec = parse_inner(&out, InnerKind::Ipv4, &DeviceProfile::spec()).unwrap();
    assert_eq!((spec.int_version, spec.hops.len()), (None, 0));
}

#[test]
fn rhc_is_ignored_hops_come_from_length() {
    // RemainingHopCnt 0 and 255 change nothing: hops = (Length − 3) / HopML.
    for rhc in [0u8, 255] {
        let mut b = noviflow_two_hops();
        b[53] = rhc;
        let p = parse_inner(&b, InnerKind::Ethernet, &DeviceProfile::noviflow()).unwrap();
        assert_eq!(p.hops.len(), 2);
    }
}

#[test]
fn packet_without_int_has_no_hops() {
    let mut out = Vec::new();
    encode_inner(
        &noviflow_flow(),
        InnerKind::Ethernet,
        &[],
        None,
        40,
        &DeviceProfile::noviflow(),
        &mut out,
    );
    let p = parse_inner(&out, InnerKind::Ethernet, &DeviceProfile::noviflow()).unwrap();
    assert_eq!(
        (p.flow, p.int_version, p.hops.len(), p.packet_bytes),
        (Some(noviflow_flow()), None, 0, 68)
    );
}

#[test]
fn dscp_detect_ignores_unmarked_packets_and_requires_a_shim_on_marked_ones() {
    let mut b = noviflow_two_hops();
    b[19] = 0; // ToS 0: unmarked, so the stack is payload
    let p = parse_inner(&b, InnerKind::Ethernet, &dscp_profile()).unwrap();
    assert_eq!((p.int_version, p.hops.len()), (None, 0));
    let mut b = noviflow_two_hops();
    b[46] = 0x07; // marked, but not a shim
    let e = parse_inner(&b, InnerKind::Ethernet, &dscp_profile()).unwrap_err();
    assert_eq!((e.offset, e.field, e.value), (46, "int.shim.type", 7));
}

// ---- malformed ---------------------------------------------------------------------------

#[test]
fn v1_0_erratum_length_8_for_2_hops_of_2_words_is_rejected_at_the_length_byte() {
    // §6 erratum: the spec example prints Length 8 for 2 hops × 2 words; it must be 7.
    let hops = switch_only(&[1, 2])
        .into_iter()
        .map(|h| Hop { ingress_port: Some(1), egress_port: Some(2), ..h })
        .collect();
    let spec = IntStackSpec { version: IntVersion::V1_0, instructions: 0xC000, max_hops: 8, hops };
    let p = DeviceProfile::spec();
    let mut out = Vec::new();
    encode_inner(&noviflow_flow(), InnerKind::Ipv4, &[], Some(&spec), 4, &p, &mut out);
    assert_eq!(out[28 + 2], 7, "the encoder writes the correct Length");
    assert_eq!(parse_inner(&out, InnerKind::Ipv4, &p).unwrap().hops.len(), 2);
    out[30] = 8;
    let e = parse_inner(&out, InnerKind::Ipv4, &p).unwrap_err();
    assert_eq!((e.offset, e.field, e.value), (30, "int.shim.length", 8));
    assert!(e.expected.contains("HopML = 2"), "{e}");
}

#[test]
fn v1_0_hop_ml_below_the_bitmap_is_rejected_at_hop_ml() {
    let mut b = noviflow_two_hops();
    b[52] = 5; // HopML 5 < 6 words for 0xFC00; Length 15 − 3 = 12 is not whole hops anyway
    let e = parse_inner(&b, InnerKind::Ethernet, &DeviceProfile::noviflow()).unwrap_err();
    assert_eq!((e.offset, e.field, e.value), (52, "int.md.hop_ml", 5));
}

#[test]
fn v0_5_length_not_whole_hops_is_rejected() {
    let mut b = ONOS_INNER;
    b[59] = 2; // InsCnt 2: 3 stack words are not whole 2-word hops
    let e = parse_inner(&b, InnerKind::Ethernet, &DeviceProfile::spec()).unwrap_err();
    assert_eq!((e.offset, e.field, e.value), (56, "int.shim.length", 7));
    let mut b = ONOS_INNER;
    b[59] = 0; // InsCnt 0: fewer words than the bitmap's switch id
    let e = parse_inner(&b, InnerKind::Ethernet, &DeviceProfile::spec()).unwrap_err();
    assert_eq!((e.offset, e.field, e.value), (59, "int.md.ins_cnt", 0));
}

#[test]
fn truncated_noviflow_packet_errors_at_every_cut() {
    let full = noviflow_two_hops();
    for cut in 0..full.len() {
        let e = parse_inner(&full[..cut], InnerKind::Ethernet, &dscp_profile())
            .expect_err(&format!("cut at {cut}"));
        assert!(e.offset <= cut, "cut {cut}: {e}");
        assert!(
            e.value <= (cut - e.offset.min(cut)) as u64 || e.field == "int.shim.type",
            "cut {cut}: {e}"
        );
    }
    let e = parse_inner(&full[..100], InnerKind::Ethernet, &DeviceProfile::noviflow()).unwrap_err();
    assert_eq!((e.offset, e.field, e.value), (46, "int.stack", 54));
}

#[test]
fn reserved_bits_set_are_tolerated() {
    let mut b = noviflow_two_hops();
    b[47] = 0xff; // shim reserved
    b[49] = 0xff; // shim DSCP + R
    b[50] = 0x1f; // Rep, C, E set
    b[51] = 0xff; // M + reserved
    b[52] |= 0xe0; // reserved bits above HopML
    b[55] = 0x40; // reserved instruction bit 9, within HopML
    b[56] = 0xff; // MD reserved half-word
    b[57] = 0xff;
    let p = parse_inner(&b, InnerKind::Ethernet, &DeviceProfile::noviflow()).unwrap();
    assert_eq!(p.hops, noviflow_two_hops_decoded());
    // A reserved instruction bit (v1.0 bit 10): its word follows the kept fields.
    let hops = noviflow_two_hops_decoded();
    let spec = IntStackSpec {
        instructions: NOVIFLOW_INSTRUCTIONS | 0x0020,
        ..IntStackSpec::noviflow(&hops)
    };
    let mut out = Vec::new();
    let p = DeviceProfile::noviflow();
    encode_inner(&noviflow_flow(), InnerKind::Ipv4, &[], Some(&spec), 0, &p, &mut out);
    assert_eq!(out[28 + 6], 7, "HopML counts the reserved word");
    assert_eq!(parse_inner(&out, InnerKind::Ipv4, &p).unwrap().hops, hops);
}

#[test]
fn reused_packet_is_cleared_between_parses() {
    let p = DeviceProfile::noviflow();
    let mut packet = InnerPacket::default();
    parse_inner_into(&noviflow_two_hops(), InnerKind::Ethernet, &p, &mut packet).unwrap();
    let mut plain = Vec::new();
    encode_inner(&noviflow_flow(), InnerKind::Ethernet, &[], None, 0, &p, &mut plain);
    parse_inner_into(&plain, InnerKind::Ethernet, &p, &mut packet).unwrap();
    assert_eq!((packet.int_version, packet.hops.len()), (None, 0));
}

// ---- properties --------------------------------------------------------------------------

/// What the decoder can give back for `hop` under this bitmap: the fields it carries.
fn project(version: IntVersion, ins: u16, hop: &Hop) -> Hop {
    let has = |m: u16| ins & m != 0;
    let l2 = version != IntVersion::V0_5 && has(INS_BIT6) && !has(INS_L1_PORTS);
    let q05 = version == IntVersion::V0_5 && has(INS_BIT6) && !has(INS_QUEUE);
    // A word shared by two fields is all ones ("not available") only when both are absent; one
    // absent beside a value is written as its sub-field's all ones, which is a value.
    let l1 = |p: Option<u32>| {
        (hop.ingress_port.is_some() || hop.egress_port.is_some()).then(|| p.unwrap_or(0xFFFF))
    };
    let (ingress_port, egress_port) = if has(INS_L1_PORTS) {
        (l1(hop.ingress_port), l1(hop.egress_port))
    } else if l2 {
        (hop.ingress_port, hop.egress_port)
    } else {
        (None, None)
    };
    let queue_id = if has(INS_QUEUE) {
        hop.queue_occupancy_bytes.map(|_| hop.queue_id.unwrap_or(0xFF))
    } else {
        hop.queue_id.filter(|_| q05)
    };
    Hop {
        switch_id: hop.switch_id.filter(|_| has(0x8000)),
        ingress_port,
        egress_port,
        hop_latency_ns: hop.hop_latency_ns.filter(|_| has(0x2000)),
        queue_id,
        queue_occupancy_bytes: hop.queue_occupancy_bytes.filter(|_| has(INS_QUEUE)),
        ingress_ts: hop.ingress_ts.filter(|_| has(INS_INGRESS_TS)),
        egress_ts: hop.egress_ts.filter(|_| has(INS_EGRESS_TS)),
    }
}

prop_compose! {
    /// A hop whose values fit their fields and are never the all-ones marker.
    fn hop(cell: u32, ts_bits: u32)(
        sw in proptest::option::of(0..u32::MAX),
        ip in proptest::option::of(0..0xFFFFu32),
        ep in proptest::option::of(0..0xFFFFu32),
        lat in proptest::option::of(0..u32::MAX),
        qid in proptest::option::of(0..0xFFu8),
        cells in proptest::option::of(0..0xFF_FFFFu64),
        its in proptest::option::of(0..u64::MAX >> (64 - ts_bits)),
        ets in proptest::option::of(0..u64::MAX >> (64 - ts_bits)),
    ) -> Hop {
        Hop {
            switch_id: sw,
            ingress_port: ip,
            egress_port: ep,
            hop_latency_ns: lat,
            queue_id: qid,
            queue_occupancy_bytes: cells.map(|c| c * u64::from(cell)),
            ingress_ts: its,
            egress_ts: ets,
        }
    }
}

fn version() -> impl Strategy<Value = IntVersion> {
    prop_oneof![Just(IntVersion::V0_5), Just(IntVersion::V1_0), Just(IntVersion::V2_1)]
}

fn flow() -> impl Strategy<Value = FlowKey> {
    (any::<bool>(), any::<[u8; 16]>(), any::<[u8; 16]>(), any::<u16>(), any::<u16>(), any::<bool>())
        .prop_map(|(six, s, d, sport, dport, tcp)| {
            let ip = |a: [u8; 16]| {
                if six { IpAddr::V6(Ipv6Addr::from(a)) } else { v4([a[0], a[1], a[2], a[3]]) }
            };
            FlowKey { src: ip(s), dst: ip(d), sport, dport, proto: if tcp { 6 } else { 17 } }
        })
}

fn case() -> impl Strategy<Value = (IntVersion, u8, u32, u16, FlowKey, Vec<Hop>, u8, usize, usize)>
{
    (version(), prop_oneof![Just(4u8), Just(8u8)], prop_oneof![Just(1u32), Just(80u32)])
        .prop_flat_map(|(v, ts, cell)| {
            let bits = if v == IntVersion::V2_1 { 64 } else { u32::from(ts) * 8 };
            (
                Just(v),
                Just(ts),
                Just(cell),
                any::<u16>(),
                flow(),
                proptest::collection::vec(hop(cell, bits), 0..=10),
                any::<u8>(),
                0..3usize,
                0..64usize,
            )
        })
}

fn kind_for(flow: &FlowKey, ethernet: bool) -> InnerKind {
    match (ethernet, flow.src) {
        (true, _) => InnerKind::Ethernet,
        (false, IpAddr::V4(_)) => InnerKind::Ipv4,
        (false, IpAddr::V6(_)) => InnerKind::Ipv6,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn any_version_encode_then_decode_is_identity(
        (v, ts, cell, ins, flow, hops, max_hops, vlans, payload) in case()
    ) {
        let profile = DeviceProfile { cell_bytes: cell, timestamp_bytes: ts, ..DeviceProfile::spec() };
        let spec = IntStackSpec { version: v, instructions: ins, max_hops, hops };
        let kind = kind_for(&flow, vlans > 0);
        let tags = [10u16, 20];
        let mut out = Vec::new();
        encode_inner(&flow, kind, &tags[..vlans.saturating_sub(1)], Some(&spec), payload, &profile, &mut out);
        let got = parse_inner(&out, kind, &profile).unwrap();
        let width = super::metadata::timestamp_bytes(v, ts);
        let expect: Vec<Hop> = if hop_bytes(v, ins, width) == 0 {
            Vec::new()
        } else {
            spec.hops.iter().map(|h| project(v, ins, h)).collect()
        };
        prop_assert_eq!(got.flow, Some(flow));
        prop_assert_eq!(got.int_version, Some(v));
        prop_assert_eq!(got.hops, expect);
        let ip_len = out.len() - match kind { InnerKind::Ethernet => 14 + 4 * vlans.saturating_sub(1), _ => 0 };
        prop_assert_eq!(got.packet_bytes as usize, ip_len);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        for kind in [InnerKind::Ethernet, InnerKind::Ipv4, InnerKind::Ipv6] {
            for p in [DeviceProfile::noviflow(), DeviceProfile::spec(), dscp_profile()] {
                let _ = parse_inner(&bytes, kind, &p);
            }
        }
    }

    #[test]
    fn corrupted_encodings_never_panic_and_errors_point_inside(
        (v, ts, cell, ins, flow, hops, max_hops, _vlans, payload) in case(),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        cut in any::<prop::sample::Index>(),
    ) {
        let profile = DeviceProfile { cell_bytes: cell, timestamp_bytes: ts, ..DeviceProfile::spec() };
        let spec = IntStackSpec { version: v, instructions: ins, max_hops, hops };
        let mut out = Vec::new();
        encode_inner(&flow, InnerKind::Ethernet, &[7], Some(&spec), payload, &profile, &mut out);
        for (i, b) in edits {
            let i = i.index(out.len());
            out[i] = b;
        }
        let out = &out[..cut.index(out.len() + 1)];
        for p in [profile.clone(), dscp_profile()] {
            if let Err(e) = parse_inner(out, InnerKind::Ethernet, &p) {
                prop_assert!(e.offset <= out.len() + 255 * 4, "{}", e);
            }
        }
    }
}

// ---- INT v2.1 source-only domain-specific metadata ---------------------------------------

/// IPv4/UDP to 17768 carrying an INT v2.1 MD stack: `md` the 12-byte MD header, `stack` words.
fn v2_udp_with(md: [u8; 12], stack: &[u32]) -> Vec<u8> {
    let length = 3 + stack.len();
    let mut b = Vec::new();
    inner::emit_ipv4(
        Ipv4Addr::new(10, 0, 0, 1),
        Ipv4Addr::new(10, 0, 0, 2),
        17,
        0,
        8 + 4 + length * 4,
        &mut b,
    );
    b.extend_from_slice(&[0x30, 0x39, 0x45, 0x68]);
    b.extend_from_slice(&((8 + 4 + length * 4) as u16).to_be_bytes());
    b.extend_from_slice(&[0, 0, 0x10, length as u8, 0, 0]);
    b.extend_from_slice(&md);
    for w in stack {
        b.extend_from_slice(&w.to_be_bytes());
    }
    b
}

#[test]
fn v2_1_source_only_mac_of_the_spec_example_is_not_read_as_hops() {
    // INT v2.1 §"Example with INT-MD including domain specific source-only metadata"
    // (p4-applications INT.mdk @ 7eedb79): HopML 1, RemainingHopCnt 5, ins 0x8000, Domain
    // Specific ID 0x5453, DS Instruction bit 0, DS Flags bit 1; stack: node ids of hop2, hop1
    // and the gateway, then host1's MAC a6:1a:f6:b1:64:7d as 0xA61AF6B1647D0000. Node ids
    // 2, 1, 10 are chosen (the figure draws boxes).
    let md = [0x20, 0x00, 0x01, 0x05, 0x80, 0x00, 0x54, 0x53, 0x80, 0x00, 0x40, 0x00];
    let b = v2_udp_with(md, &[2, 1, 10, 0xA61A_F6B1, 0x647D_0000]);
    let p = parse_inner(&b, InnerKind::Ipv4, &DeviceProfile::spec()).unwrap();
    assert_eq!(p.hops, switch_only(&[2, 1, 10]), "five words, three hops");
    let so = p.source_only.unwrap();
    assert_eq!((so.domain_id, so.ds_instruction, so.ds_flags), (0x5453, 0x8000, 0x4000));
    assert_eq!(so.bytes, [0xA6, 0x1A, 0xF6, 0xB1, 0x64, 0x7D, 0, 0]);
}

#[test]
fn v2_1_source_only_of_an_unknown_domain_is_what_whole_hops_leave() {
    // Domain 0x1234, HopML 2 (node id + queue), one source-only word under two hops.
    let md = [0x20, 0x00, 0x02, 0x06, 0x90, 0x00, 0x12, 0x34, 0x00, 0x01, 0x00, 0x00];
    let b = v2_udp_with(md, &[2, 0x0000_0100, 1, 0x0000_0200, 0xCAFE_F00D]);
    let p = parse_inner(&b, InnerKind::Ipv4, &DeviceProfile::spec()).unwrap();
    assert_eq!(p.hops.iter().map(|h| h.switch_id).collect::<Vec<_>>(), [Some(2), Some(1)]);
    assert_eq!(p.hops[1].queue_occupancy_bytes, Some(0x200));
    assert_eq!(p.source_only.unwrap().bytes, [0xCA, 0xFE, 0xF0, 0x0D]);
    // A profile that knows the domain's size wins over the remainder.
    let md = [0x20, 0x00, 0x01, 0x05, 0x80, 0x00, 0x12, 0x34, 0x00, 0x01, 0x00, 0x00];
    let b = v2_udp_with(md, &[2, 1, 7, 8]);
    let two = DeviceProfile { source_only_words: Some(2), ..DeviceProfile::spec() };
    let p = parse_inner(&b, InnerKind::Ipv4, &two).unwrap();
    assert_eq!(p.hops, switch_only(&[2, 1]));
    assert_eq!(p.source_only.unwrap().bytes.len(), 8);
    // Without DS Instruction bits there is none, and every word is a hop.
    let md = [0x20, 0x00, 0x01, 0x05, 0x80, 0x00, 0x12, 0x34, 0x00, 0x00, 0x00, 0x00];
    let p =
        parse_inner(&v2_udp_with(md, &[2, 1, 7]), InnerKind::Ipv4, &DeviceProfile::spec()).unwrap();
    assert_eq!((p.hops.len(), p.source_only), (3, None));
}

// ---- INT-MD in GRE, VXLAN-GPE and Geneve tunnels -----------------------------------------

/// secdev/scapy `test/contrib/int.uts` (@ b9cdba3), "Build & Dissect, INT MD Over IPv4
/// GRE / VXLAN / GENEVE": `int_md` = Ver 2, hop_left 7, instr_bitmap 0xfe00 (HopML 10), ds_id
/// 0x7777, ds_instr 0x8888, ds_flags 0x9999; hops node 0xb22 (L1 20 → 21, L2 5 → 6) and node
/// 0xa11 (L1 10 → 11, L2 1 → 2), other fields 0; its shim/option Length 23.
fn scapy_int_md() -> Vec<u8> {
    let mut b = vec![0x20, 0x00, 0x0a, 0x07, 0xfe, 0x00, 0x77, 0x77, 0x88, 0x88, 0x99, 0x99];
    for (node, l1, l2) in [(0xb22u32, (20u16, 21u16), (5u32, 6u32)), (0xa11, (10, 11), (1, 2))] {
        b.extend_from_slice(&node.to_be_bytes());
        b.extend_from_slice(&l1.0.to_be_bytes());
        b.extend_from_slice(&l1.1.to_be_bytes());
        b.extend_from_slice(&[0; 4 + 4 + 8 + 8]); // latency, queue, ingress and egress ts
        b.extend_from_slice(&l2.0.to_be_bytes());
        b.extend_from_slice(&l2.1.to_be_bytes());
    }
    assert_eq!(b.len(), 23 * 4);
    b
}

/// The tunnelled frame of those tests: Ether b6:18:00:99:99:00 → b6:18:00:88:88:00,
/// IP 192.168.1.5 → 192.168.6.9 TTL 128, TCP 6677 → 8899, 64 × 'a' (scapy's defaults: IP id
/// 1, TCP seq 0, flags S, window 8192; checksums left 0, which the decoder does not read).
fn scapy_inner_frame() -> Vec<u8> {
    let mut b = vec![0xb6, 0x18, 0, 0x88, 0x88, 0, 0xb6, 0x18, 0, 0x99, 0x99, 0, 0x08, 0x00];
    inner::emit_ipv4(
        Ipv4Addr::new(192, 168, 1, 5),
        Ipv4Addr::new(192, 168, 6, 9),
        6,
        0,
        20 + 64,
        &mut b,
    );
    b[14 + 4..14 + 6].copy_from_slice(&[0, 1]);
    b[14 + 8] = 128;
    b.extend_from_slice(&[
        0x1a, 0x15, 0x22, 0xc3, 0, 0, 0, 0, 0, 0, 0, 0, 0x50, 0x02, 0x20, 0x00, 0, 0, 0, 0,
    ]);
    b.extend_from_slice(&[b'a'; 64]);
    b
}

/// Ether b6:18:00:11:11:00 → b6:18:00:22:22:00 / IPv4 198.1.1.17 → 198.1.2.18 TTL 63 (id 1)
/// carrying `proto` and `body`; scapy's test asserts the IPv4 checksum, checked here so the
/// rebuilt bytes are the test's.
fn scapy_outer(proto: u8, body: &[u8], checksum: u16) -> Vec<u8> {
    let mut b = vec![0xb6, 0x18, 0, 0x22, 0x22, 0, 0xb6, 0x18, 0, 0x11, 0x11, 0, 0x08, 0x00];
    let mut ip = Vec::new();
    inner::emit_ipv4(
        Ipv4Addr::new(198, 1, 1, 17),
        Ipv4Addr::new(198, 1, 2, 18),
        proto,
        0,
        body.len(),
        &mut ip,
    );
    ip[4..6].copy_from_slice(&[0, 1]);
    ip[6] = 0; // scapy sets no DF
    ip[8] = 63;
    ip[10..12].copy_from_slice(&[0, 0]);
    let sum: u32 = ip.chunks_exact(2).map(|w| u32::from(u16::from_be_bytes([w[0], w[1]]))).sum();
    let f = (sum & 0xffff) + (sum >> 16);
    let c = !((f & 0xffff) + (f >> 16)) as u16;
    assert_eq!(c, checksum, "the IPv4 checksum scapy's test asserts");
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    b.extend_from_slice(&ip);
    b.extend_from_slice(body);
    b
}

fn scapy_udp(dport: u16, after: &[u8]) -> Vec<u8> {
    let mut u = vec![0x10, 0x64];
    u.extend_from_slice(&dport.to_be_bytes());
    u.extend_from_slice(&((8 + after.len()) as u16).to_be_bytes());
    u.extend_from_slice(&[0, 0]);
    u.extend_from_slice(after);
    u
}

fn assert_scapy_tunnel_decodes(frame: &[u8]) {
    let p = parse_inner(frame, InnerKind::Ethernet, &DeviceProfile::spec()).unwrap();
    assert_eq!(p.int_version, Some(IntVersion::V2_1));
    let hop = |node, (ig, eg)| Hop {
        switch_id: Some(node),
        ingress_port: Some(ig),
        egress_port: Some(eg),
        hop_latency_ns: Some(0),
        queue_id: Some(0),
        queue_occupancy_bytes: Some(0),
        ingress_ts: Some(0),
        egress_ts: Some(0),
    };
    assert_eq!(p.hops, vec![hop(0xb22, (20, 21)), hop(0xa11, (10, 11))]);
    assert_eq!(p.source_only, None, "20 stack words are two whole hops of 10");
    let flow = p.flow.unwrap();
    assert_eq!((flow.src, flow.dst), (v4([192, 168, 1, 5]), v4([192, 168, 6, 9])));
    assert_eq!((flow.sport, flow.dport, flow.proto), (6677, 8899, 6));
}

#[test]
fn int_md_over_gre_gives_the_tunnelled_flow() {
    // GRE(proto=INT_GRE_PROTOCOL 0x4569) / INTShimGre(type=1, gre=0, gre_proto=0x6558)
    let mut body = vec![0x00, 0x00, 0x45, 0x69, 0x10, 23, 0x65, 0x58];
    body.extend(scapy_int_md());
    body.extend(scapy_inner_frame());
    assert_scapy_tunnel_decodes(&scapy_outer(47, &body, 0xebba));
}

#[test]
fn int_md_over_vxlan_gpe_gives_the_tunnelled_flow() {
    // UDP 4196 → 4790 / VXLAN(flags='NextProtocol', NextProtocol=0x82, vni=5000) /
    // INTShimVxlan(type=1, gpe=0, vxlan_proto=3)
    let mut gpe = vec![0x04, 0, 0, 0x82, 0x00, 0x13, 0x88, 0x00, 0x10, 23, 0x00, 0x03];
    gpe.extend(scapy_int_md());
    gpe.extend(scapy_inner_frame());
    assert_scapy_tunnel_decodes(&scapy_outer(17, &scapy_udp(4790, &gpe), 0xebcc));
}

#[test]
fn int_md_over_geneve_gives_the_tunnelled_flow() {
    // UDP 4196 → 6081 / GENEVE(proto=0x6558, vni=5000, options=GeneveOptINT(classid=0x0103,
    // type=1)): option length 23 words; the header's OptLen counts the option header too (24).
    let mut g = vec![24, 0x00, 0x65, 0x58, 0x00, 0x13, 0x88, 0x00, 0x01, 0x03, 0x01, 23];
    g.extend(scapy_int_md());
    g.extend(scapy_inner_frame());
    assert_scapy_tunnel_decodes(&scapy_outer(17, &scapy_udp(6081, &g), 0xebcc));
}

#[test]
fn tunnels_without_int_keep_the_outer_flow_and_a_cut_tunnel_is_an_error() {
    // GRE with another protocol type: no INT, the GRE packet's own flow.
    let mut body = vec![0x00, 0x00, 0x08, 0x00];
    body.extend(scapy_inner_frame().split_off(14));
    let mut ip = Vec::new();
    inner::emit_ipv4(
        Ipv4Addr::new(198, 1, 1, 17),
        Ipv4Addr::new(198, 1, 2, 18),
        47,
        0,
        body.len(),
        &mut ip,
    );
    ip.extend(&body);
    let p = parse_inner(&ip, InnerKind::Ipv4, &DeviceProfile::spec()).unwrap();
    assert_eq!((p.int_version, p.flow.unwrap().proto), (None, 47));
    // The INT GRE shim cut short.
    let mut body = vec![0x00, 0x00, 0x45, 0x69, 0x10, 23];
    let mut ip = Vec::new();
    inner::emit_ipv4(
        Ipv4Addr::new(1, 1, 1, 1),
        Ipv4Addr::new(2, 2, 2, 2),
        47,
        0,
        body.len(),
        &mut ip,
    );
    ip.append(&mut body);
    let e = parse_inner(&ip, InnerKind::Ipv4, &DeviceProfile::spec()).unwrap_err();
    assert_eq!((e.offset, e.field), (24, "int.gre_shim"));
}
