//! A captured frame to a packet record: 5-tuple, IP id, and the TCP or UDP fields telemetry
//! needs, sliced in place with `etherparse` (lax, so snaplen-truncated payloads still parse).
//!
//! Link layers: Ethernet with up to three VLAN tags (802.1Q, QinQ 802.1ad) and an MPLS label
//! stack ([`super::mpls`]), Linux cooked v1 (SLL, 16 bytes) and v2 (SLL2, 20 bytes, carrying
//! the interface index), raw IPv4/IPv6.

use super::file::Frame;
use super::linktype::Linktype;
use crate::error::DecodeError;
use crate::model::FlowKey;
use etherparse::err::LenError;
use etherparse::err::packet::SliceError;
use etherparse::{
    EtherType, Ipv6ExtensionSlice, LaxLinkExtSlice, LaxNetSlice, LaxSlicedPacket, LenSource,
    TransportSlice,
};
use rustc_hash::FxHasher;
use std::hash::Hasher;
use std::ops::Range;

/// TCP header flag bits (RFC 9293 §3.1; ECE/CWR RFC 3168 §6.1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct TcpFlags(pub u8);

impl TcpFlags {
    pub const FIN: u8 = 0x01;
    pub const SYN: u8 = 0x02;
    pub const RST: u8 = 0x04;
    pub const PSH: u8 = 0x08;
    pub const ACK: u8 = 0x10;
    pub const URG: u8 = 0x20;
    pub const ECE: u8 = 0x40;
    pub const CWR: u8 = 0x80;

    pub fn has(self, bit: u8) -> bool {
        self.0 & bit != 0
    }
}

/// The transport layer as far as telemetry needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum L4 {
    Tcp {
        seq: u32,
        ack: u32,
        flags: TcpFlags,
        /// Raw window field (not scaled: the scale is negotiated in the SYNs).
        window: u16,
        /// Payload bytes as the IP header says, even when the snaplen cut them off.
        payload_len: u32,
    },
    /// `payload` indexes the frame's bytes (what was captured of the UDP payload), so a caller
    /// can hand it to the INT report decoder without copying.
    Udp { payload: Range<usize> },
    /// Not TCP or UDP, not IP, or a non-first IP fragment.
    Other,
}

/// One packet of a capture.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PacketRecord {
    pub ts_ns: u64,
    /// The SLL2 header's interface index when the frame has one, else the capture interface.
    pub interface: u32,
    /// Length on the wire (the frame's original length).
    pub wire_len: u32,
    /// The 5-tuple for IP packets; ports are 0 without a TCP/UDP header.
    pub flow: Option<FlowKey>,
    /// IPv4 identification, or the IPv6 fragment header's identification.
    pub ip_id: Option<u32>,
    pub l4: L4,
    /// Hash of the fields a router leaves alone (IP id, TCP seq/ack/flags/window/length, UDP
    /// length and first payload bytes): with `flow` it finds one packet in two captures.
    pub fingerprint: u64,
}

/// SLL header length and protocol offset (tcpdump.org LINKTYPE_LINUX_SLL).
const SLL_LEN: usize = 16;
const SLL_PROTOCOL_AT: usize = 14;
/// SLL2 header length, protocol and interface index offsets (tcpdump.org LINKTYPE_LINUX_SLL2).
const SLL2_LEN: usize = 20;
const SLL2_PROTOCOL_AT: usize = 0;
const SLL2_IFINDEX_AT: usize = 4;
/// Ethernet II header length (IEEE 802.3 §3.1.1, no FCS).
const ETHERNET_LEN: usize = 14;
/// UDP payload bytes that enter the fingerprint: enough to tell datagrams of one flow apart,
/// few enough to survive a short snaplen on either capture.
const FINGERPRINT_PAYLOAD_BYTES: usize = 32;

/// Decodes one frame. Errors name the byte offset within `frame.data`.
pub fn parse_packet(frame: &Frame) -> Result<PacketRecord, DecodeError> {
    let data = frame.data;
    let mut interface = frame.interface;
    let (sliced, base, link_len) = match frame.linktype {
        Linktype::ETHERNET => match super::mpls::ip_under_labels(data) {
            // An MPLS label stack (fabric-tna's leaf-to-spine reports): IP from under it.
            Some(ip) => {
                let rest = data.get(ip..).unwrap_or_default();
                (LaxSlicedPacket::from_ip(rest).map_err(|e| ip_error(e, ip))?, ip, 0)
            }
            None => {
                let p = LaxSlicedPacket::from_ethernet(data).map_err(|e| len_error(&e, 0))?;
                (p, 0, ETHERNET_LEN)
            }
        },
        Linktype::LINUX_SLL => {
            let proto = be16(data, SLL_PROTOCOL_AT, "sll.protocol")?;
            let rest = data.get(SLL_LEN..).unwrap_or_default();
            (LaxSlicedPacket::from_ether_type(EtherType(proto), rest), SLL_LEN, 0)
        }
        Linktype::LINUX_SLL2 => {
            let proto = be16(data, SLL2_PROTOCOL_AT, "sll2.protocol")?;
            interface = be32(data, SLL2_IFINDEX_AT, "sll2.interface_index")?;
            if data.len() < SLL2_LEN {
                return Err(DecodeError::truncated(0, "sll2 header", data.len(), SLL2_LEN));
            }
            let rest = data.get(SLL2_LEN..).unwrap_or_default();
            (LaxSlicedPacket::from_ether_type(EtherType(proto), rest), SLL2_LEN, 0)
        }
        Linktype::RAW | Linktype::IPV4 | Linktype::IPV6 => {
            (LaxSlicedPacket::from_ip(data).map_err(|e| ip_error(e, 0))?, 0, 0)
        }
        Linktype(other) => {
            return Err(DecodeError::new(
                0,
                "linktype",
                u64::from(other),
                "Ethernet (1), raw IP (101, 228, 229), Linux SLL (113) or SLL2 (276)",
            ));
        }
    };
    if let Some((err, _layer)) = &sliced.stop_err {
        return Err(stop_error(err, &sliced, data, base, base + link_len));
    }
    let mut rec = PacketRecord {
        ts_ns: frame.ts_ns,
        interface,
        wire_len: frame.orig_len,
        flow: None,
        ip_id: None,
        l4: L4::Other,
        fingerprint: 0,
    };
    let Some(net) = &sliced.net else {
        return Ok(rec);
    };
    let (src, dst, proto, ip_start, ip_len) = match net {
        LaxNetSlice::Ipv4(v4) => {
            let h = v4.header();
            rec.ip_id = Some(u32::from(h.identification()));
            let len =
                (v4.payload().len_source != LenSource::Slice).then(|| usize::from(h.total_len()));
            (
                h.source_addr().into(),
                h.destination_addr().into(),
                v4.payload().ip_number,
                h.slice(),
                len,
            )
        }
        LaxNetSlice::Ipv6(v6) => {
            let h = v6.header();
            rec.ip_id = v6.extensions().clone().into_iter().find_map(|x| match x {
                Ipv6ExtensionSlice::Fragment(f) => Some(f.identification()),
                _ => None,
            });
            let len = (v6.payload().len_source != LenSource::Slice)
                .then(|| usize::from(h.payload_length()) + 40);
            let proto = v6.payload().ip_number;
            (h.source_addr().into(), h.destination_addr().into(), proto, h.slice(), len)
        }
        LaxNetSlice::Arp(_) => return Ok(rec),
    };
    // Where the IP packet ends on the wire: its length field, or the wire length when the
    // field is 0 (TSO/GSO super-packets, IPv6 jumbograms).
    let ip_end = match ip_len {
        Some(l) => offset_in(data, ip_start) + l,
        None => frame.orig_len as usize,
    };
    let mut h = FxHasher::default();
    h.write_u32(rec.ip_id.unwrap_or(0));
    h.write_u8(proto.0);
    let (sport, dport) = match &sliced.transport {
        Some(TransportSlice::Tcp(t)) => {
            let flags = TcpFlags(t.header_slice().get(13).copied().unwrap_or(0));
            let payload_start = offset_in(data, t.payload());
            let payload_len = u32::try_from(ip_end.saturating_sub(payload_start)).unwrap_or(0);
            let (seq, ack, window) =
                (t.sequence_number(), t.acknowledgment_number(), t.window_size());
            h.write_u32(seq);
            h.write_u32(ack);
            h.write_u8(flags.0);
            h.write_u16(window);
            h.write_u32(payload_len);
            rec.l4 = L4::Tcp { seq, ack, flags, window, payload_len };
            (t.source_port(), t.destination_port())
        }
        Some(TransportSlice::Udp(u)) => {
            let payload = u.payload();
            let start = offset_in(data, payload);
            h.write_u16(u.length());
            h.write(payload.get(..FINGERPRINT_PAYLOAD_BYTES).unwrap_or(payload));
            rec.l4 = L4::Udp { payload: start..start + payload.len() };
            (u.source_port(), u.destination_port())
        }
        _ => (0, 0),
    };
    rec.flow = Some(FlowKey { src, dst, sport, dport, proto: proto.0 });
    rec.fingerprint = h.finish();
    Ok(rec)
}

/// Offset of `sub` (a slice of `data`) from the start of `data`.
fn offset_in(data: &[u8], sub: &[u8]) -> usize {
    (sub.as_ptr() as usize).saturating_sub(data.as_ptr() as usize)
}

fn be16(data: &[u8], at: usize, field: &'static str) -> Result<u16, DecodeError> {
    match data.get(at..at + 2) {
        Some(&[a, b]) => Ok(u16::from_be_bytes([a, b])),
        _ => Err(DecodeError::truncated(at, field, data.len().saturating_sub(at), 2)),
    }
}

fn be32(data: &[u8], at: usize, field: &'static str) -> Result<u32, DecodeError> {
    match data.get(at..at + 4) {
        Some(&[a, b, c, d]) => Ok(u32::from_be_bytes([a, b, c, d])),
        _ => Err(DecodeError::truncated(at, field, data.len().saturating_sub(at), 4)),
    }
}

/// An IP header at `base` that `etherparse` could not slice.
fn ip_error(e: etherparse::err::ip::LaxHeaderSliceError, base: usize) -> DecodeError {
    match e {
        etherparse::err::ip::LaxHeaderSliceError::Len(l) => len_error(&l, base),
        etherparse::err::ip::LaxHeaderSliceError::Content(c) => {
            DecodeError::new(base, "ip header", 0, c.to_string())
        }
    }
}

fn len_error(e: &LenError, base: usize) -> DecodeError {
    DecodeError::truncated(base + e.layer_start_offset, layer_field(e.layer), e.len, e.required_len)
}

fn layer_field(layer: etherparse::err::Layer) -> &'static str {
    use etherparse::err::Layer as L;
    match layer {
        L::Ethernet2Header => "ethernet header",
        L::VlanHeader => "vlan tag",
        L::MacsecHeader | L::MacsecPacket => "macsec header",
        L::Ipv4Header | L::Ipv4Packet => "ipv4 header",
        L::Ipv6Header | L::Ipv6Packet => "ipv6 header",
        L::IpAuthHeader | L::Ipv6ExtHeader | L::Ipv6FragHeader | L::Ipv6RouteHeader => {
            "ip extension header"
        }
        L::TcpHeader => "tcp header",
        L::UdpHeader | L::UdpPayload => "udp header",
        L::IpHeader => "ip header",
        _ => "packet",
    }
}

/// The error that stopped slicing, with the offset of the layer that failed.
fn stop_error(
    err: &SliceError,
    p: &LaxSlicedPacket,
    data: &[u8],
    base: usize,
    l3_base: usize,
) -> DecodeError {
    // Content errors carry no offset: the failing layer starts after the link extensions (IP
    // errors) or where the IP payload starts (TCP errors).
    let exts: usize = p
        .link_exts
        .iter()
        .map(|x| match x {
            LaxLinkExtSlice::Vlan(v) => v.header_len(),
            LaxLinkExtSlice::Macsec(m) => m.header.header_len(),
        })
        .sum();
    let l3 = l3_base + exts;
    let l4 = p
        .net
        .as_ref()
        .and_then(|n| n.ip_payload_ref())
        .map_or(l3, |pl| offset_in(data, pl.payload));
    match err {
        SliceError::Len(e) => len_error(e, base),
        SliceError::Tcp(c) => DecodeError::new(l4, "tcp header", 0, c.to_string()),
        SliceError::LinuxSll(c) => DecodeError::new(0, "sll header", 0, c.to_string()),
        SliceError::Macsec(c) => DecodeError::new(l3_base, "macsec header", 0, c.to_string()),
        SliceError::Ip(c) => DecodeError::new(l3, "ip header", 0, c.to_string()),
        SliceError::Ipv4(c) => DecodeError::new(l3, "ipv4 header", 0, c.to_string()),
        SliceError::Ipv6(c) => DecodeError::new(l3, "ipv6 header", 0, c.to_string()),
        SliceError::Ipv4Exts(c) => DecodeError::new(l3, "ip extension header", 0, c.to_string()),
        SliceError::Ipv6Exts(c) => DecodeError::new(l3, "ip extension header", 0, c.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::testwrite::tcp_frame;
    use etherparse::{PacketBuilder, VlanId};
    use proptest::prelude::*;
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

    fn frame(linktype: Linktype, data: &[u8]) -> Frame<'_> {
        Frame { ts_ns: 5, interface: 2, linktype, orig_len: data.len() as u32, data }
    }

    fn v4(a: [u8; 4]) -> IpAddr {
        IpAddr::V4(Ipv4Addr::from(a))
    }

    fn udp_v4(
        builder: etherparse::PacketBuilderStep<etherparse::UdpHeader>,
        payload: &[u8],
    ) -> Vec<u8> {
        let mut out = Vec::new();
        builder.write(&mut out, payload).unwrap();
        out
    }

    // ---- Ethernet ----

    #[test]
    fn ethernet_tcp_gives_flow_ip_id_and_tcp_fields() {
        let f = tcp_frame(
            [10, 0, 0, 1],
            [10, 0, 0, 2],
            5001,
            80,
            0x1234,
            1000,
            77,
            TcpFlags::ACK,
            512,
            &[0; 100],
        );
        let r = parse_packet(&frame(Linktype::ETHERNET, &f)).unwrap();
        assert_eq!(
            r.flow,
            Some(FlowKey {
                src: v4([10, 0, 0, 1]),
                dst: v4([10, 0, 0, 2]),
                sport: 5001,
                dport: 80,
                proto: 6
            })
        );
        assert_eq!(r.ip_id, Some(0x1234));
        assert_eq!((r.ts_ns, r.interface, r.wire_len), (5, 2, 154));
        assert_eq!(
            r.l4,
            L4::Tcp {
                seq: 1000,
                ack: 77,
                flags: TcpFlags(TcpFlags::ACK),
                window: 512,
                payload_len: 100
            }
        );
    }

    #[test]
    fn ethernet_snaplen_cut_keeps_the_ip_payload_length() {
        let f =
            tcp_frame([10, 0, 0, 1], [10, 0, 0, 2], 1, 2, 0, 0, 0, TcpFlags::ACK, 0, &[7; 1400]);
        let cut = Frame { orig_len: f.len() as u32, ..frame(Linktype::ETHERNET, &f[..96]) };
        let r = parse_packet(&cut).unwrap();
        assert!(matches!(r.l4, L4::Tcp { payload_len: 1400, .. }));
        assert_eq!(r.wire_len, 14 + 20 + 20 + 1400);
        // Ethernet pads a bare ACK to 60 bytes: the padding is not TCP payload.
        let mut ack = tcp_frame([10, 0, 0, 1], [10, 0, 0, 2], 1, 2, 0, 0, 0, TcpFlags::ACK, 0, &[]);
        ack.resize(60, 0);
        let r = parse_packet(&frame(Linktype::ETHERNET, &ack)).unwrap();
        assert!(matches!(r.l4, L4::Tcp { payload_len: 0, .. }));
    }

    #[test]
    fn ethernet_vlan_and_qinq_parse_to_the_same_five_tuple() {
        let b = || PacketBuilder::ethernet2([1; 6], [2; 6]);
        let plain = udp_v4(b().ipv4([1, 1, 1, 1], [2, 2, 2, 2], 9).udp(4000, 5900), &[1, 2, 3]);
        let vlan = udp_v4(
            b().single_vlan(VlanId::try_new(100).unwrap())
                .ipv4([1, 1, 1, 1], [2, 2, 2, 2], 9)
                .udp(4000, 5900),
            &[1, 2, 3],
        );
        let qinq = udp_v4(
            b().double_vlan(VlanId::try_new(7).unwrap(), VlanId::try_new(100).unwrap())
                .ipv4([1, 1, 1, 1], [2, 2, 2, 2], 9)
                .udp(4000, 5900),
            &[1, 2, 3],
        );
        let want = FlowKey {
            src: v4([1, 1, 1, 1]),
            dst: v4([2, 2, 2, 2]),
            sport: 4000,
            dport: 5900,
            proto: 17,
        };
        for (f, payload_at) in [(&plain, 42), (&vlan, 46), (&qinq, 50)] {
            let r = parse_packet(&frame(Linktype::ETHERNET, f)).unwrap();
            assert_eq!(r.flow, Some(want));
            assert_eq!(r.l4, L4::Udp { payload: payload_at..payload_at + 3 });
            assert_eq!(&f[payload_at..payload_at + 3], &[1, 2, 3]);
        }
        // The router may add a tag and rewrite the TTL: the fingerprint stays.
        let fp = |f: &[u8]| parse_packet(&frame(Linktype::ETHERNET, f)).unwrap().fingerprint;
        assert_eq!(fp(&plain), fp(&qinq));
        let other = udp_v4(b().ipv4([1, 1, 1, 1], [2, 2, 2, 2], 9).udp(4000, 5900), &[1, 2, 4]);
        assert_ne!(fp(&plain), fp(&other));
    }

    #[test]
    fn ethernet_ipv6_udp_gives_addresses_and_payload() {
        let (s, d) = ([0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], [0xfe; 16]);
        let f =
            udp_v4(PacketBuilder::ethernet2([1; 6], [2; 6]).ipv6(s, d, 64).udp(53, 5353), &[9; 10]);
        let r = parse_packet(&frame(Linktype::ETHERNET, &f)).unwrap();
        let flow = r.flow.unwrap();
        assert_eq!(
            (flow.src, flow.dst),
            (IpAddr::V6(Ipv6Addr::from(s)), IpAddr::V6(Ipv6Addr::from(d)))
        );
        assert_eq!((flow.sport, flow.dport, flow.proto), (53, 5353, 17));
        assert_eq!(r.ip_id, None);
        assert_eq!(r.l4, L4::Udp { payload: 62..72 });
    }

    #[test]
    fn ethernet_arp_has_no_flow() {
        let mut f = vec![0xff; 12];
        f.extend_from_slice(&[0x08, 0x06]);
        f.extend_from_slice(&[0, 1, 8, 0, 6, 4, 0, 1]);
        f.extend_from_slice(&[0; 20]);
        let r = parse_packet(&frame(Linktype::ETHERNET, &f)).unwrap();
        assert_eq!((r.flow, r.l4), (None, L4::Other));
    }

    #[test]
    fn ethernet_truncated_tcp_header_names_its_offset() {
        let f = tcp_frame([10, 0, 0, 1], [10, 0, 0, 2], 1, 2, 0, 0, 0, TcpFlags::ACK, 0, &[]);
        let e = parse_packet(&Frame { orig_len: 54, ..frame(Linktype::ETHERNET, &f[..44]) })
            .unwrap_err();
        assert_eq!((e.offset, e.field, e.value), (34, "tcp header", 10));
        let e = parse_packet(&frame(Linktype::ETHERNET, &f[..10])).unwrap_err();
        assert_eq!((e.offset, e.field), (0, "ethernet header"));
    }

    #[test]
    fn ethernet_bad_tcp_data_offset_is_a_tcp_error_at_the_tcp_header() {
        let mut f =
            tcp_frame([10, 0, 0, 1], [10, 0, 0, 2], 1, 2, 0, 0, 0, TcpFlags::ACK, 0, &[0; 8]);
        f[34 + 12] = 0x30; // data offset 3 words < 5
        let e = parse_packet(&frame(Linktype::ETHERNET, &f)).unwrap_err();
        assert_eq!((e.offset, e.field), (34, "tcp header"));
    }

    // ---- Linux cooked and raw IP ----

    fn sll2(ifindex: u32, ip: &[u8]) -> Vec<u8> {
        let mut f = vec![0x08, 0x00, 0, 0];
        f.extend_from_slice(&ifindex.to_be_bytes());
        f.extend_from_slice(&[0, 1, 4, 6, 1, 2, 3, 4, 5, 6, 0, 0]);
        f.extend_from_slice(ip);
        f
    }

    fn ip_only() -> Vec<u8> {
        let f = tcp_frame(
            [192, 168, 0, 1],
            [192, 168, 0, 9],
            443,
            50000,
            9,
            5,
            6,
            TcpFlags::ACK,
            100,
            &[1; 4],
        );
        f[14..].to_vec()
    }

    #[test]
    fn sll2_gives_the_interface_index_and_the_five_tuple() {
        let f = sll2(7, &ip_only());
        let r = parse_packet(&frame(Linktype::LINUX_SLL2, &f)).unwrap();
        assert_eq!(r.interface, 7);
        let flow = r.flow.unwrap();
        assert_eq!(
            (flow.src, flow.sport, flow.dport, flow.proto),
            (v4([192, 168, 0, 1]), 443, 50000, 6)
        );
        assert!(matches!(r.l4, L4::Tcp { payload_len: 4, seq: 5, .. }));
        let e = parse_packet(&frame(Linktype::LINUX_SLL2, &f[..19])).unwrap_err();
        assert_eq!((e.offset, e.field), (0, "sll2 header"));
        // A truncated IP header is reported from the frame's start, past the 20-byte header.
        let e = parse_packet(&frame(Linktype::LINUX_SLL2, &f[..30])).unwrap_err();
        assert_eq!((e.offset, e.field), (20, "ipv4 header"));
    }

    #[test]
    fn sll_v1_and_raw_ip_parse_the_same_packet() {
        let ip = ip_only();
        let mut sll = vec![0, 0, 0, 1, 0, 6, 1, 2, 3, 4, 5, 6, 0, 0, 0x08, 0x00];
        sll.extend_from_slice(&ip);
        let a = parse_packet(&frame(Linktype::LINUX_SLL, &sll)).unwrap();
        let b = parse_packet(&frame(Linktype::RAW, &ip)).unwrap();
        let c = parse_packet(&frame(Linktype::IPV4, &ip)).unwrap();
        assert_eq!((a.flow, a.fingerprint, a.interface), (b.flow, b.fingerprint, 2));
        assert_eq!(b, c);
    }

    #[test]
    fn unknown_linktype_is_refused_with_its_number() {
        let e = parse_packet(&frame(Linktype(147), &[0; 40])).unwrap_err();
        assert_eq!((e.offset, e.field, e.value), (0, "linktype", 147));
    }

    #[test]
    fn tcp_flag_bits_are_rfc_9293s() {
        assert_eq!(
            [
                TcpFlags::FIN,
                TcpFlags::SYN,
                TcpFlags::RST,
                TcpFlags::PSH,
                TcpFlags::ACK,
                TcpFlags::URG,
                TcpFlags::ECE,
                TcpFlags::CWR
            ],
            [1, 2, 4, 8, 16, 32, 64, 128]
        );
        assert_eq!((SLL_LEN, SLL2_LEN, SLL2_IFINDEX_AT, SLL_PROTOCOL_AT), (16, 20, 4, 14));
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(
            lt in prop::sample::select(vec![1u16, 101, 113, 228, 229, 276, 0]),
            bytes in prop::collection::vec(any::<u8>(), 0..120),
            orig in any::<u32>(),
        ) {
            let f = Frame { ts_ns: 0, interface: 0, linktype: Linktype(lt), orig_len: orig, data: &bytes };
            if let Ok(PacketRecord { l4: L4::Udp { payload }, .. }) = parse_packet(&f) {
                prop_assert!(payload.end <= bytes.len());
            }
        }

        #[test]
        fn mutated_valid_frames_never_panic(at in 0usize..80, v: u8, cut in 0usize..90) {
            let mut f = tcp_frame([10, 0, 0, 1], [10, 0, 0, 2], 1, 2, 3, 4, 5, TcpFlags::ACK, 6, &[0; 24]);
            if at < f.len() { f[at] = v; }
            f.truncate(cut.max(1));
            let _ = parse_packet(&frame(Linktype::ETHERNET, &f));
            let _ = parse_packet(&frame(Linktype::RAW, f.get(14..).unwrap_or_default()));
        }
    }
}
