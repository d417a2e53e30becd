//! Whole report payloads as deployments and the specifications send them, decoded end to end
//! by [`Decoder`]. Each vector says which public source its bytes come from; values the source
//! leaves open (addresses, checksums, occupancies it draws as a box) are chosen and say so.

use super::*;
use crate::int::tests::ONOS_INNER;
use crate::model::{IntVersion, ReportFlags, ReportVersion};
use crate::profile::DeviceProfile;
use std::net::{IpAddr, Ipv4Addr};

fn v4(a: [u8; 4]) -> IpAddr {
    IpAddr::V4(Ipv4Addr::from(a))
}

fn decode_one(payload: &[u8], dport: u16) -> Report {
    let mut d = Decoder::new(Profiles::builtin());
    let out = d.decode(payload, dport).unwrap();
    assert_eq!(out.len(), 1);
    out[0].clone()
}

fn node_queue(node: u32, occupancy: u64) -> Hop {
    Hop {
        switch_id: Some(node),
        queue_id: Some(0),
        queue_occupancy_bytes: Some(occupancy),
        ..Hop::default()
    }
}

// ---- TR v2.0: the specification's worked example ----------------------------------------

/// TR v2.0 §"Example with Embedded INT-MD in a TCP Packet" (p4lang/p4-applications
/// telemetry_report.mdk @ 7eedb79), the report sink Switch3 sends for INT v2.1 §6.3's packet:
/// group header with Switch3's node id; one INT report, InType IPv4, RepLength 23, MD Length 1
/// (Switch3's queue occupancy, RepMdBits bit 3); the truncated packet: IPv4 (proto 17), UDP to
/// INT_TBD, shim Type 1 NPT 2 Length 7 IP proto 6, MD header Ver 2 HopML 2 RemainingHopCnt 6
/// ins 0x9000 (node id + queue), hop2 then hop1, the original TCP header. Chosen where the
/// figure draws boxes: node ids 3, 2, 1; occupancies 1500, 3000, 200 in queue 0; addresses
/// 10.0.1.1 → 10.0.3.3; UDP port 17768 (scapy contrib's INT_TBD); TCP 5001 → 80.
#[rustfmt::skip]
fn tr_v2_worked_example() -> Vec<u8> {
    vec![
        // Telemetry Report Group Header: Ver 2, hw_id 0, seq 1; Node ID of Switch3
        0x20, 0x00, 0x00, 0x01,  0x00, 0x00, 0x00, 0x03,
        // RepType 1, InType 4, RepLength 23, MD Length 1, D 0 Q 0 F 1 I 0
        0x14, 23, 1, 0x20,
        // RepMdBits 0x1000 | Domain Specific ID 0; DSMdBits 0 | DSMdstatus 0
        0x10, 0x00, 0x00, 0x00,  0x00, 0x00, 0x00, 0x00,
        // Queue Occupancy of Switch3: queue 0, 1500
        0x00, 0x00, 0x05, 0xdc,
        // IP (original): IHL 5, length 1500, DF, TTL 64, proto 17, 10.0.1.1 → 10.0.3.3
        0x45, 0x00, 0x05, 0xdc,  0x00, 0x00, 0x40, 0x00,  64, 17, 0x00, 0x00,
        10, 0, 1, 1,  10, 0, 3, 3,
        // UDP: 49152 → INT_TBD (17768), length 1480, checksum 0
        0xc0, 0x00, 0x45, 0x68,  0x05, 0xc8, 0x00, 0x00,
        // INT shim: Type 1, NPT 2, Length 7, Reserved, IP proto 6
        0x18, 7, 0x00, 0x06,
        // INT-MD header: Ver 2, HopML 2, RemainingHopCnt 6; ins 0x9000, DS id 0; DS ins, flags
        0x20, 0x00, 0x02, 0x06,  0x90, 0x00, 0x00, 0x00,  0x00, 0x00, 0x00, 0x00,
        // stack: Node ID of hop2, its queue occupancy; Node ID of hop1, its queue occupancy
        0, 0, 0, 2,  0x00, 0x00, 0x0b, 0xb8,  0, 0, 0, 1,  0x00, 0x00, 0x00, 0xc8,
        // TCP header: 5001 → 80, seq 1, ack 0, data offset 5, ACK, window 65535
        0x13, 0x89, 0x00, 0x50,  0, 0, 0, 1,  0, 0, 0, 0,  0x50, 0x10, 0xff, 0xff,  0, 0, 0, 0,
    ]
}

#[test]
fn tr_v2_worked_example_yields_switch3_then_hop2_then_hop1() {
    let bytes = tr_v2_worked_example();
    assert_eq!(bytes.len(), 8 + 4 + 23 * 4, "RepLength 23 words after the report header");
    let r = decode_one(&bytes, 17_768);
    assert_eq!((r.version, r.switch_id, r.seq), (ReportVersion::V2_0, Some(3), 1));
    assert_eq!(r.flags, ReportFlags { dropped: false, congested: false, tracked: true });
    assert_eq!(r.int_version, Some(IntVersion::V2_1));
    assert_eq!(r.hops, vec![node_queue(3, 1500), node_queue(2, 3000), node_queue(1, 200)]);
    // NPT 2: the flow is the original TCP one, read after the stack.
    let flow = r.flow.unwrap();
    assert_eq!((flow.src, flow.dst), (v4([10, 0, 1, 1]), v4([10, 0, 3, 3])));
    assert_eq!((flow.sport, flow.dport, flow.proto), (5001, 80, 6));
    assert_eq!((r.packet_bytes, r.inner_error), (Some(1500), None));
}

// ---- TR v1.0 RepMdBits beside an embedded stack (AmLight) -------------------------------

/// A TR v1.0 report as amlight/int_collector's test generator builds it
/// (`tests/support/packet_gen.py` `generate_packet`, `int_specs.py`; @ 67a126a): Ver 1, Length
/// 4 + RepMdBits words, switch id 0xFB65D675, seq 1408972298, ingress ts 980327565; inner
/// Ethernet + 802.1Q VLAN 42 + IPv4 9.9.9.9 → 8.8.8.8 ToS 0x17 << 2 + UDP 50000 → 50001 + INT
/// v1.0 shim (Length, DSCP 0x02) + MD header (HopML 6, RemainingHopCnt, ins 0xFC00) + one
/// 6-word hop per `generate_metadata(...)`. `rep_md` is RepMdBits with its metadata words in
/// bit order; `hops` the stack, newest first; `rhc` RemainingHopCnt.
fn amlight_report(rep_md: (u8, &[u32]), hops: &[[u32; 6]], rhc: u8) -> Vec<u8> {
    let (bits, words) = rep_md;
    let length = 4 + words.len() as u32;
    let w0 = (1 << 28) | (length << 24) | (u32::from(bits) << 15);
    let mut b = Vec::new();
    for w in [w0, 0xFB65_D675, 1_408_972_298, 980_327_565].iter().chain(words) {
        b.extend_from_slice(&w.to_be_bytes());
    }
    let shim_len = 3 + 6 * hops.len();
    let ip_len = 20 + 8 + shim_len * 4;
    // Ethernet (scapy's defaults; the MACs are not read) + 802.1Q VLAN 42 + IPv4
    b.extend_from_slice(&[0xff; 6]);
    b.extend_from_slice(&[0x00, 0x0e, 0x1e, 0xd7, 0x0d, 0xa3, 0x81, 0x00, 0x00, 42, 0x08, 0x00]);
    b.extend_from_slice(&[0x45, 0x17 << 2]);
    b.extend_from_slice(&(ip_len as u16).to_be_bytes());
    b.extend_from_slice(&[0, 1, 0, 0, 64, 17, 0, 0, 9, 9, 9, 9, 8, 8, 8, 8]);
    b.extend_from_slice(&[0xc3, 0x50, 0xc3, 0x51]);
    b.extend_from_slice(&((ip_len - 20) as u16).to_be_bytes());
    b.extend_from_slice(&[0, 0]);
    // IntShim(type 1, length, dscp 0x02); IntMetadataHeader(ver 1, hopMLen 6, rhc, ins 0xFC00)
    b.extend_from_slice(&[0x01, 0x00, shim_len as u8, 0x02 << 2]);
    b.extend_from_slice(&[0x10, 0x00, 0x06, rhc, 0xfc, 0x00, 0x00, 0x00]);
    for hop in hops {
        for w in hop {
            b.extend_from_slice(&w.to_be_bytes());
        }
    }
    b
}

/// `generate_metadata(switch_id, ingress_id, egress_id, queue_id, queue_occ, ...)` as 6 words;
/// hop latency is the scapy layer's default, 4294967295 (NoviFlow does not measure it).
fn amlight_hop(switch_id: u32, ingress: u32, egress: u32, queue: u32, occ: u32) -> [u32; 6] {
    [switch_id, ingress << 16 | egress, u32::MAX, queue << 24 | occ, 980_325_604, 980_327_060]
}

#[test]
fn amlight_ten_hops_with_occupancy_0xffffff_are_values_not_missing() {
    // amlight/int_collector tests/test_int_collector.py `test_multiple_ten_metadata` (@ 5a11d1d):
    // switches 1, 10, …, 90, egress port = switch id, queue 5, queue_occ=16777215, shim length
    // (12 + 10 × 24) / 4 = 63, RemainingHopCnt 0. AmLight's collector stores these occupancies.
    let ids = [1u32, 10, 20, 30, 40, 50, 60, 70, 80, 90];
    let hops: Vec<_> = ids.iter().map(|&s| amlight_hop(s, 23, s, 5, 0xFF_FFFF)).collect();
    let r = decode_one(&amlight_report((0, &[]), &hops, 0), 5900);
    assert_eq!(r.hops.len(), 10);
    for (hop, &id) in r.hops.iter().zip(&ids) {
        assert_eq!((hop.switch_id, hop.egress_port, hop.queue_id), (Some(id), Some(id), Some(5)));
        // 80-byte cells on UDP 5900 (NoviFlow).
        assert_eq!(hop.queue_occupancy_bytes, Some(0xFF_FFFF * 80));
        assert_eq!(hop.hop_latency_ns, None, "a whole all-ones word is not available");
    }
}

#[test]
fn tr_v1_rep_md_bits_put_the_reporting_switch_before_the_stack() {
    // RepMdBits bits 0 (ports) and 2 (queue id + occupancy) describe the reporting switch
    // 0xFB65D675; the stack holds the 10 switches of `test_multiple_ten_metadata`.
    let ids = [1u32, 10, 20, 30, 40, 50, 60, 70, 80, 90];
    let hops: Vec<_> = ids.iter().map(|&s| amlight_hop(s, 23, s, 5, 7)).collect();
    let rep_md = (0x20 | 0x08, &[23 << 16 | 11, 2 << 24 | 111][..]);
    let r = decode_one(&amlight_report(rep_md, &hops, 0), 5900);
    assert_eq!(r.hops.len(), 11);
    let own = r.hops[0];
    assert_eq!(own.switch_id, Some(0xFB65_D675));
    assert_eq!((own.ingress_port, own.egress_port, own.queue_id), (Some(23), Some(11), Some(2)));
    assert_eq!(own.queue_occupancy_bytes, Some(111 * 80));
    let stack: Vec<_> = r.hops[1..].iter().map(|h| h.switch_id.unwrap()).collect();
    assert_eq!(stack, ids);
    assert_eq!(r.flow.unwrap().sport, 50000);
}

#[test]
fn tr_v1_reporting_switch_already_on_the_stack_is_one_hop() {
    // `generate_packet()`'s defaults: the report's switch id and the one stack hop are both
    // 0xFB65D675 (the sink pushed itself, INT v2.1 sink option 1). RepMdBits bit 1 adds the
    // hop latency the stack leaves all ones: one hop, the stack's values, the gap filled.
    let hop = amlight_hop(0xFB65_D675, 23, 11, 2, 111);
    let r = decode_one(&amlight_report((0x10, &[1456]), &[hop], 9), 5900);
    assert_eq!(r.hops.len(), 1);
    let h = r.hops[0];
    assert_eq!((h.switch_id, h.queue_occupancy_bytes), (Some(0xFB65_D675), Some(111 * 80)));
    assert_eq!((h.ingress_ts, h.egress_ts), (Some(980_325_604), Some(980_327_060)));
    assert_eq!(h.hop_latency_ns, Some(1456));
}

// ---- TR v0.5 switch-local and drop headers beside the ONOS stack --------------------------

/// TR v0.5 (telemetry_report_v0_5, int-telemetry.md §2) around the ONOS bmv2 sample frame
/// (serkantul/prometheus_int_exporter `int_report.pcap`, §12.1: INT v0.5 stack of switches
/// 2, 3, 1), with NProto 1 (drop) or 2 (switch-local) and the given header words.
fn onos_report(nproto: u8, flags: u8, words: &[u32]) -> Vec<u8> {
    let mut b = vec![nproto, flags, 0x00, 0x01, 0, 0, 0, 9, 0, 0, 0, 100];
    for w in words {
        b.extend_from_slice(&w.to_be_bytes());
    }
    b.extend_from_slice(&ONOS_INNER);
    b
}

#[test]
fn tr_v0_5_switch_local_header_is_the_first_hop_before_the_stack() {
    // Switch-local header of switch 4 (ports 1 → 2, queue 3 × 1000 B, egress ts 200), which
    // sent the report for a packet whose stack holds 2, 3, 1.
    let words = [4, 1 << 16 | 2, 3 << 24 | 1000, 200];
    let r = decode_one(&onos_report(0x02, 0x20, &words), 1234);
    assert_eq!(r.version, ReportVersion::V0_5);
    let ids: Vec<_> = r.hops.iter().map(|h| h.switch_id.unwrap()).collect();
    assert_eq!(ids, [4, 2, 3, 1]);
    let own = r.hops[0];
    assert_eq!(
        (own.egress_port, own.queue_occupancy_bytes, own.egress_ts),
        (Some(2), Some(1000), Some(200))
    );
    assert_eq!(r.int_version, Some(IntVersion::V0_5));
    assert_eq!(r.flow.unwrap().sport, 63804);
}

#[test]
fn tr_v0_5_drop_header_gives_reason_and_the_sinks_hop_merges_with_its_stack_entry() {
    // Drop header of switch 2 (the stack's newest hop): D set, drop reason 71, queue 6.
    let words = [2, 5 << 16 | 6, 6 << 24 | 71 << 16];
    let r = decode_one(&onos_report(0x01, 0x80, &words), 1234);
    assert!(r.flags.dropped);
    assert_eq!(r.drop_reason, Some(71));
    let ids: Vec<_> = r.hops.iter().map(|h| h.switch_id.unwrap()).collect();
    assert_eq!(ids, [2, 3, 1]);
    assert_eq!(
        (r.hops[0].ingress_port, r.hops[0].egress_port, r.hops[0].queue_id),
        (Some(5), Some(6), Some(6))
    );
    let line = serde_json::to_value(ReportLine { frame: 1, report: &r }).unwrap();
    assert_eq!(
        (&line["flags"], &line["drop_reason"], &line["int_version"]),
        (&"D".into(), &71.into(), &"0.5".into())
    );
}

// ---- a malformed inner L4 header ----------------------------------------------------------

#[test]
fn malformed_inner_tcp_header_loses_only_the_flow_key() {
    // The ONOS frame's TCP header with data offset 3 words (< 5), behind switch 4's
    // switch-local header: the report, its flags and switch 4's hop stand; the flow key and the
    // stack behind the bad header are lost, and the fault is named.
    let words = [4, 1 << 16 | 2, 3 << 24 | 1000, 200];
    let mut bytes = onos_report(0x02, 0x20, &words);
    let doff = 28 + 14 + 20 + 12;
    assert_eq!(bytes[doff], 0x50);
    bytes[doff] = 0x30;
    let r = decode_one(&bytes, 1234);
    assert_eq!((r.flow, r.switch_id, r.seq), (None, Some(4), 9));
    assert_eq!(r.hops.iter().map(|h| h.switch_id).collect::<Vec<_>>(), [Some(4)]);
    assert_eq!(r.packet_bytes, Some(69), "the IP header was read");
    let e = r.inner_error.unwrap();
    assert_eq!((e.offset, e.field, e.value), (doff, "tcp.data_offset", 3));
}

#[test]
fn original_tcp_header_cut_after_the_stack_loses_only_the_flow_key() {
    // The worked example truncated 2 bytes into the original TCP header, its RepLength rounded
    // down to 18 words as switch.p4 does: the stack was read whole; only the ports after it
    // are missing.
    let mut bytes = tr_v2_worked_example();
    let tcp = bytes.len() - 20;
    bytes.truncate(tcp + 2);
    bytes[9] = 18;
    let r = decode_one(&bytes, 17_768);
    assert_eq!(r.flow, None);
    assert_eq!(r.hops, vec![node_queue(3, 1500), node_queue(2, 3000), node_queue(1, 200)]);
    let e = r.inner_error.unwrap();
    assert_eq!((e.offset, e.field, e.value), (tcp, "l4.ports", 2));
}

// ---- MPLS-labelled report frames (fabric-tna leaf to spine) ------------------------------

/// The report frame stratum/fabric-tna's PTF expects when the collector sits behind a spine
/// (`fabric_test.py` `build_int_local_report(..., send_report_to_spine=True)`): Ethernet
/// SWITCH_MAC 00:00:00:00:aa:01 → INT_COLLECTOR_MAC 00:1e:67:d2:ee:ee, MPLS label
/// MPLS_LABEL_2 = 200 with TTL 64, IPv4 SWITCH_IPV4 192.168.0.1 → INT_COLLECTOR_IPV4
/// 192.168.99.254 (ToS 4, TTL 64), UDP 0 → 32766, INT_L45_REPORT_FIXED(nproto=2, f=1,
/// hw_id=0), INT_L45_LOCAL_REPORT(switch_id=1, ingress port 1, egress port 2; the fields the
/// test masks — seq, timestamps, queue — are chosen), then the routed packet (ptf's
/// `simple_udp_packet` 10.0.1.1:1234 → 10.0.2.1:80).
#[rustfmt::skip]
fn fabric_tna_report_to_spine() -> Vec<u8> {
    let mut inner = vec![
        0, 0, 0, 0, 0, 0x02,  0, 0, 0, 0, 0xaa, 0x01,  0x08, 0x00,
        0x45, 0x00, 0x00, 0x1c,  0x00, 0x01, 0x00, 0x00,  63, 17, 0x00, 0x00,
        10, 0, 1, 1,  10, 0, 2, 1,
        0x04, 0xd2, 0x00, 0x50,  0x00, 0x08, 0x00, 0x00,
    ];
    let mut report = vec![
        0x02, 0x20, 0x00, 0x00,  0, 0, 0, 5,  0, 0, 0, 7, // fixed: NProto 2, F, hw_id 0
        0, 0, 0, 1,  0x00, 0x01, 0x00, 0x02,  0x00, 0x00, 0x00, 0x0a,  0, 0, 0, 9, // local
    ];
    report.append(&mut inner);
    let udp_len = 8 + report.len();
    let mut f = vec![
        0x00, 0x1e, 0x67, 0xd2, 0xee, 0xee,  0x00, 0x00, 0x00, 0x00, 0xaa, 0x01,  0x88, 0x47,
        0x00, 0x0c, 0x81, 64, // label 200, TC 0, S 1, TTL 64
        0x45, 0x04,
    ];
    f.extend_from_slice(&((20 + udp_len) as u16).to_be_bytes());
    f.extend_from_slice(&[0, 0, 0x40, 0, 64, 17, 0, 0, 192, 168, 0, 1, 192, 168, 99, 254]);
    f.extend_from_slice(&[0, 0, 0x7f, 0xfe]);
    f.extend_from_slice(&(udp_len as u16).to_be_bytes());
    f.extend_from_slice(&[0, 0]);
    f.extend_from_slice(&report);
    f
}

#[test]
fn fabric_tna_mpls_labelled_report_decodes() {
    use crate::capture::{Frame, L4, Linktype, parse_packet};
    let bytes = fabric_tna_report_to_spine();
    let frame =
        Frame { ts_ns: 0, interface: 0, linktype: Linktype::ETHERNET, orig_len: 0, data: &bytes };
    let rec = parse_packet(&frame).unwrap();
    let L4::Udp { payload } = rec.l4 else { panic!("{rec:?}") };
    assert_eq!(payload.start, 14 + 4 + 20 + 8);
    assert_eq!(rec.flow.unwrap().dport, 32766);
    let r = decode_one(&bytes[payload], 32766);
    assert_eq!(r.version, ReportVersion::V0_5FabricTna);
    assert_eq!((r.switch_id, r.seq, r.flags.tracked), (Some(1), 5, true));
    let own = r.hops[0];
    assert_eq!((own.ingress_port, own.egress_port), (Some(1), Some(2)));
    assert_eq!(own.queue_occupancy_bytes, Some(10 * 80), "Tofino cells on 32766");
    let flow = r.flow.unwrap();
    assert_eq!((flow.src, flow.dport, flow.proto), (v4([10, 0, 1, 1]), 80, 17));
}

#[test]
fn a_capture_counts_the_frames_it_skips_and_decodes_the_labelled_one() {
    use crate::capture::TcpFlags;
    use crate::capture::testwrite::{pcap_header, pcap_record, tcp_frame};
    use crate::pipeline::decode_capture;
    use crate::profile::DEFAULT_REPORT_PORTS;
    let mut file = pcap_header(false, true, 1, 65_535);
    let report = fabric_tna_report_to_spine();
    let tcp = tcp_frame([10, 0, 0, 1], [10, 0, 0, 2], 1, 2, 0, 0, 0, TcpFlags::ACK, 0, &[]);
    let mut arp = vec![0xff; 12];
    arp.extend_from_slice(&[0x08, 0x06, 0, 1, 8, 0, 6, 4, 0, 1]);
    arp.resize(42, 0);
    let mut other_label = report.clone();
    other_label[18] = 0x00; // under the label: not IPv4/IPv6 (a pseudowire control word)
    for (k, f) in [&report, &tcp, &arp, &other_label, &report].into_iter().enumerate() {
        pcap_record(&mut file, false, 0, k as u32, f, f.len() as u32);
    }
    let mut d = Decoder::new(Profiles::builtin());
    let stats =
        decode_capture(&file[..], &mut d, &DEFAULT_REPORT_PORTS, |_, _| {}, |_| {}).unwrap();
    assert_eq!((stats.frames, stats.reports, stats.malformed), (5, 2, 0));
    assert_eq!((stats.skipped.not_udp, stats.skipped.not_ip, stats.skipped.total()), (1, 2, 3));
}

// ---- deployed variants only a device profile can tell -------------------------------------

fn decoder_with(port: u16, profile: DeviceProfile) -> Decoder {
    let mut profiles = Profiles::builtin();
    profiles.by_port.insert(port, profile);
    Decoder::new(profiles)
}

/// Ethernet (scapy `Ether()` defaults) + IPv4 10.0.0.1 → 10.0.0.2 (`tos`) + UDP 5000 → 5000,
/// then `int` (shim onwards): the reported packet both generators below build.
fn generator_inner(tos: u8, int: &[u8]) -> Vec<u8> {
    let mut b = vec![0xff; 6];
    b.extend_from_slice(&[0; 6]);
    b.extend_from_slice(&[0x08, 0x00, 0x45, tos]);
    b.extend_from_slice(&((20 + 8 + int.len()) as u16).to_be_bytes());
    b.extend_from_slice(&[
        0, 1, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2, 0x13, 0x88, 0x13, 0x88,
    ]);
    b.extend_from_slice(&((8 + int.len()) as u16).to_be_bytes());
    b.extend_from_slice(&[0, 0]);
    b.extend_from_slice(int);
    b
}

/// Three 8-word hops (ins 0xFF00) with switch ids 4, 5, 6 as both generators write them:
/// `[sw, 2<<16|3, lat, 5<<16|q, in_ts, 1524234560, 5<<16|x, 1]`.
fn generator_hops(first: [u32; 3]) -> Vec<u8> {
    let mut b = Vec::new();
    for (k, sw) in [4u32, 5, 6].into_iter().enumerate() {
        let (lat, q, ts) = if k == 0 { (first[0], first[1], first[2]) } else { (4, 6, 7) };
        for w in [sw, 2 << 16 | 3, lat, 5 << 16 | q, ts, 1_524_234_560, 5 << 16 | 10, 1] {
            b.extend_from_slice(&w.to_be_bytes());
        }
    }
    b
}

#[test]
fn tr_v0_5_layout_with_version_nibble_1_needs_its_profile() {
    // BPFCollector's generator (amlight/int_collector before 2020, `INT_gen/INTReport.py`,
    // `--test_onos_collector`): class TelemetryReport "INT telemetry report v0.5" with
    // `BitField("ver", 1, 4)`, nProto 0, F 1, ingressTimestamp 1524138290; inner IP ToS 0x1<<2;
    // INT v0.5 insCnt 8, totalHopCnt 3, ins 0xFF00, originDSCP 14. scapy writes its unset
    // shim `length` (None) as 0.
    let mut int = vec![0x01, 0x00, 0x00, 0x00, 0x00, 0x08, 8, 3, 0xff, 0x00, 0x00, 0x00];
    int.extend(generator_hops([4, 6, 7]));
    int.extend_from_slice(&[0, 0, 0, 14]);
    let mut payload = vec![0x10, 0x20, 0x00, 0x00, 0, 0, 0, 0];
    payload.extend_from_slice(&1_524_138_290u32.to_be_bytes());
    payload.extend(generator_inner(0x1 << 2, &int));
    // Read as the version nibble says, it is a TR v1.0 header of Length 0.
    let e = Decoder::new(Profiles::builtin()).decode(&payload, 1234).unwrap_err();
    assert_eq!((e.field, e.value), ("tr_v1_0.length", 0));
    let p = Profiles::from_toml_str("[port.1234]\nreport_version_1 = \"0.5\"").unwrap();
    let r = Decoder::new(p).decode(&payload, 1234).unwrap()[0].clone();
    assert_eq!(r.version, ReportVersion::V0_5);
    assert_eq!((r.seq, r.ingress_ts, r.flags.tracked), (0, Some(1_524_138_290), true));
    let flow = r.flow.unwrap();
    assert_eq!((flow.src, flow.sport, flow.dport, flow.proto), (v4([10, 0, 0, 1]), 5000, 5000, 17));
    // The generator's shim Length 0 cannot hold its stack: named, not guessed around.
    let e = r.inner_error.unwrap();
    assert_eq!((e.field, e.value), ("int.shim.length", 0));
}

#[test]
fn geant_int_v1_0_with_4_byte_l2_ids_needs_its_profile() {
    // GEANT-DataPlaneProgramming/int-collector `benchmark/int_package_generator.py` `p0`
    // (@ 051adfb): TelemetryReport_v10(len 1, F, swid 1, seqNumber 5, ingressTimestamp
    // 1524138290) to UDP 8086; INT_v10(length 27, MD ver 0, hopMLen 8, remainHopCnt 3, ins
    // 0xFF00): 8 words a hop, so bit 6 (level-2 ids) is one 4-byte word and the timestamps
    // are 4 bytes, as its collector reads them (`BPFCollector.c`: `u32 lv2_in_e_port_ids`).
    let mut int = vec![0x01, 0x00, 27, 0x00, 0x00, 0x00, 0x08, 0x03, 0xff, 0x00, 0x00, 0x00];
    int.extend(generator_hops([400, 600, 700]));
    let mut payload = Vec::new();
    for w in [0x1100_0040u32, 1, 5, 1_524_138_290] {
        payload.extend_from_slice(&w.to_be_bytes());
    }
    payload.extend(generator_inner(0, &int));
    let e = Decoder::new(Profiles::builtin()).decode(&payload, 8086).unwrap_err();
    assert_eq!((e.field, e.value), ("tr_v1_0.length", 1), "the spec's reading");
    let geant = DeviceProfile { timestamp_bytes: 4, ..DeviceProfile::geant() };
    let r = decoder_with(8086, geant).decode(&payload, 8086).unwrap()[0].clone();
    assert_eq!((r.switch_id, r.seq, r.int_version), (Some(1), 5, Some(IntVersion::V1_0)));
    let ids: Vec<_> = r.hops.iter().map(|h| h.switch_id.unwrap()).collect();
    assert_eq!(ids, [4, 5, 6]);
    let h = r.hops[0];
    assert_eq!((h.ingress_port, h.egress_port, h.hop_latency_ns), (Some(2), Some(3), Some(400)));
    assert_eq!((h.ingress_ts, h.egress_ts), (Some(700), Some(1_524_234_560)));
    // The generator puts its queue id at bit 16 (`5 << 16 | 600`); read as the spec lays the
    // word out, queue 0 holds 0x050258 bytes (GEANT's collector keeps 16 bits and sees 600).
    assert_eq!((h.queue_id, h.queue_occupancy_bytes), (Some(0), Some(0x05_0258)));
    // Its level-2 ids alone (bit 6 without bit 1): one word, ingress | egress.
    let l2 = crate::int::metadata::HopLayout::with_l2(IntVersion::V1_0, 0x0200, 4, 4);
    let hop = l2.decode(&(5u32 << 16 | 10).to_be_bytes(), 1);
    assert_eq!((hop.ingress_port, hop.egress_port), (Some(5), Some(10)));
}

/// The UDP payload of the report switch 2 sends to its collector (10.0.0.1:1234 →
/// 10.0.0.2:1234) for the packet h1 → h3, running laofan13/P4-INT's INT-MX program on bmv2
/// (`int-mx/` @ 920dbc6, GPL-3.0; written here from its header definitions, not copied): laid
/// out by `int_headers.p4` and `parser.p4` `Int_Deparser`, filled by `int_sink.p4`
/// `do_report_encapsulation` and `int_transit.p4`, with the values its capture
/// `int-mx/pcap/s2-cpu-eth0_out.pcap` holds, except the queue depth (3 packets, chosen: the
/// capture's is 0). `ingress_global_timestamp` of an I2E clone reads 0 there, so the hop
/// latency is the egress timestamp.
#[rustfmt::skip]
fn bmv2_int_mx_report() -> Vec<u8> {
    vec![
        // report_group_header_t: ver 1, hw_id 1 (HW_ID), seq_no 0 | node_id 2
        0x10, 0x40, 0x00, 0x00,  0x00, 0x00, 0x00, 0x02,
        // report_individual_header_t: rep_type 1, in_type 4, len 0, rep_md_len 0, d q f i = 0011
        0x14, 0x00, 0x00, 0x30,
        // rep_md_bits 0 | domain_specific_id 0; domain_specific_md_bits 0 | md_status 0
        0x00, 0x00, 0x00, 0x00,  0x00, 0x00, 0x00, 0x00,
        // the I2E clone: Ethernet 00:01:0a:00:03:05 ← ff:ff:ff:ff:ff:ff, IPv4
        0x00, 0x01, 0x0a, 0x00, 0x03, 0x05,  0xff, 0xff, 0xff, 0xff, 0xff, 0xff,  0x08, 0x00,
        // IPv4: DSCP 0x17 (DSCP_INT), length 102, id 1, TTL 63, UDP, 10.0.1.1 → 10.0.3.3
        0x45, 0x5c, 0x00, 0x66,  0x00, 0x01, 0x00, 0x00,  0x3f, 0x11, 0x63, 0x27,
        10, 0, 1, 1,  10, 0, 3, 3,
        // UDP 64057 → 8080, length 82
        0xfa, 0x39, 0x1f, 0x90,  0x00, 0x52, 0x5d, 0xff,
        // intl4_shim_t: int_type 3 (MX), npt 0, len 14 (3 + this node's 11 words), dscp 0
        0x30, 0x0e, 0x00, 0x00,
        // int_header_t: ver 2, d 0; instruction mask 0xFF00, domain id 0; ds_instruction, flags
        0x20, 0x00, 0x00, 0x00,  0xff, 0x00, 0x00, 0x00,  0x00, 0x00, 0x00, 0x00,
        // switch id 2 | L1 ports 0 → 3 | hop latency 44,944,418 µs | queue 0, deq_qdepth 3
        0x00, 0x00, 0x00, 0x02,  0x00, 0x00, 0x00, 0x03,  0x02, 0xad, 0xcc, 0x22,
        0x00, 0x00, 0x00, 0x03,
        // ingress ts 0 | egress ts 44,944,418 µs (64-bit)
        0, 0, 0, 0, 0, 0, 0, 0,  0, 0, 0, 0, 0x02, 0xad, 0xcc, 0x22,
        // level-2 ports 0 → 3 (32 bits each) | tx utilization 0
        0, 0, 0, 0,  0, 0, 0, 3,  0, 0, 0, 0,
    ]
}

/// Everything on UDP 1234 read as bmv2 INT-MX.
fn bmv2_int_mx_decoder() -> Decoder {
    Decoder::new(Profiles::from_toml_str("[port.1234]\nbase = \"bmv2-int-mx\"").unwrap())
}

#[test]
fn bmv2_int_mx_report_needs_its_profile() {
    let bytes = bmv2_int_mx_report();
    assert_eq!(bytes.len(), 122, "the captured UDP payload's length");
    // Read as its version nibble says, it is a TR v1.0 header of Length 0.
    let e = Decoder::new(Profiles::builtin()).decode(&bytes, 1234).unwrap_err();
    assert_eq!((e.field, e.value), ("tr_v1_0.length", 0));
    // The TR v2.0 layout alone is not enough: Report Length 0 holds no INT report.
    let p = Profiles::from_toml_str("[port.1234]\nreport_version_1 = \"2.0\"").unwrap();
    let e = Decoder::new(p).decode(&bytes, 1234).unwrap_err();
    assert_eq!((e.field, e.value), ("tr_v2_0.md_length", 0));

    let r = bmv2_int_mx_decoder().decode(&bytes, 1234).unwrap()[0].clone();
    assert_eq!((r.version, r.switch_id, r.hw_id, r.seq), (ReportVersion::V2_0, Some(2), 1, 0));
    assert_eq!(r.flags, ReportFlags { dropped: false, congested: false, tracked: true });
    assert_eq!((r.int_version, r.inner_error), (Some(IntVersion::V2_1), None));
    let flow = r.flow.unwrap();
    assert_eq!((flow.src, flow.dst), (v4([10, 0, 1, 1]), v4([10, 0, 3, 3])));
    assert_eq!((flow.sport, flow.dport, flow.proto), (64057, 8080, 17));
    // One hop, the reporting node's own, in bytes and nanoseconds: 3 packets × 1,500 B; µs ×
    // 1,000; a 44.9 s latency does not fit 32 bits of ns and is not available.
    let hop = Hop {
        switch_id: Some(2),
        ingress_port: Some(0),
        egress_port: Some(3),
        hop_latency_ns: None,
        queue_id: Some(0),
        queue_occupancy_bytes: Some(3 * 1500),
        ingress_ts: Some(0),
        egress_ts: Some(44_944_418_000),
    };
    assert_eq!(r.hops, vec![hop]);
}

#[test]
fn bmv2_int_mx_hops_must_be_whole_bitmap_hops() {
    // Shim len 13: 10 words after the MX header, not a whole hop of 11 (ins 0xFF00). The report
    // and its flow stand; the stack is named as the fault.
    let mut bytes = bmv2_int_mx_report();
    let shim = 20 + 14 + 20 + 8;
    assert_eq!(bytes[shim], 0x30);
    bytes[shim + 1] = 13;
    let r = bmv2_int_mx_decoder().decode(&bytes, 1234).unwrap()[0].clone();
    assert_eq!((r.switch_id, r.flow.unwrap().dport, r.hops.len()), (Some(2), 8080, 0));
    let e = r.inner_error.unwrap();
    assert_eq!((e.offset, e.field, e.value), (shim + 1, "int.shim.length", 13));
}

#[test]
fn bmv2_int_mx_report_is_a_queue_sample_for_detect_and_collect() {
    let r = bmv2_int_mx_decoder().decode(&bmv2_int_mx_report(), 1234).unwrap()[0].clone();
    let mut out = Vec::new();
    crate::observe::Observer::default().push(&r, &mut out);
    assert_eq!(out.len(), 1);
    let o = out[0];
    assert_eq!((o.queue.switch_id, o.queue.port, o.queue.queue_id), (2, 3, 0));
    assert_eq!((o.t_ns, o.occupancy_bytes), (44_944_418_000, 4500));
    assert_eq!(o.report.map(|(s, seq)| (s.switch_id, s.hw_id, seq)), Some((2, 1, 0)));
}
