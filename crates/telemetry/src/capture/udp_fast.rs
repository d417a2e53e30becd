//! The collector's hot path: is this Ethernet frame a UDP datagram to a report port, and where
//! is its payload? Telemetry captures are nearly all such frames, and the full packet parser
//! ([`super::parse_packet`]) does more than this question needs. Anything the fast path does
//! not recognise is left to the full parser, so both always agree (tested below).

use super::file::Frame;
use super::linktype::Linktype;

/// The answer for one frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UdpFast<'a> {
    /// A UDP datagram to one of the ports: its payload and destination port.
    Report(&'a [u8], u16),
    /// A well-formed frame that is not a UDP datagram to one of the ports.
    Other,
    /// A shape the fast path does not handle (other link types, IP options it cannot skip,
    /// fragments, IPv6 extension headers, truncation): ask the full parser.
    Unknown,
}

/// EtherTypes (IEEE 802.1Q, RFC 7042).
const ETHERTYPE_IPV4: u16 = 0x0800;
const ETHERTYPE_IPV6: u16 = 0x86DD;
const ETHERTYPE_VLAN: u16 = 0x8100;
const ETHERTYPE_QINQ: u16 = 0x88A8;
/// IP protocol number of UDP (RFC 768).
const PROTO_UDP: u8 = 17;

fn be16(d: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*d.get(at)?, *d.get(at + 1)?]))
}

/// Classify `frame`: Ethernet with up to two VLAN tags, IPv4 (any header length, not a
/// fragment) or IPv6 (UDP as the first next header), then UDP.
pub fn udp_to_ports<'a>(frame: &Frame<'a>, ports: &[u16]) -> UdpFast<'a> {
    if frame.linktype != Linktype::ETHERNET {
        return UdpFast::Unknown;
    }
    let d = frame.data;
    let mut at = 12;
    let mut ethertype = match be16(d, at) {
        Some(t) => t,
        None => return UdpFast::Unknown,
    };
    for _ in 0..2 {
        if ethertype != ETHERTYPE_VLAN && ethertype != ETHERTYPE_QINQ {
            break;
        }
        at += 4;
        ethertype = match be16(d, at) {
            Some(t) => t,
            None => return UdpFast::Unknown,
        };
    }
    let ip = at + 2;
    let (udp, ip_end) = match ethertype {
        ETHERTYPE_IPV4 => {
            let (Some(&vihl), Some(&proto), Some(total), Some(frag)) =
                (d.get(ip), d.get(ip + 9), be16(d, ip + 2), be16(d, ip + 6))
            else {
                return UdpFast::Unknown;
            };
            let ihl = usize::from(vihl & 0x0F) * 4;
            if vihl >> 4 != 4 || ihl < 20 || frag & 0x3FFF != 0 {
                return UdpFast::Unknown;
            }
            if proto != PROTO_UDP {
                return UdpFast::Other;
            }
            (ip + ihl, ip + usize::from(total))
        }
        ETHERTYPE_IPV6 => {
            let (Some(&v), Some(&next), Some(len)) = (d.get(ip), d.get(ip + 6), be16(d, ip + 4))
            else {
                return UdpFast::Unknown;
            };
            if v >> 4 != 6 || next != PROTO_UDP {
                return UdpFast::Unknown;
            }
            (ip + 40, ip + 40 + usize::from(len))
        }
        _ => return UdpFast::Unknown,
    };
    let (Some(dport), Some(udp_len)) = (be16(d, udp + 2), be16(d, udp + 4)) else {
        return UdpFast::Unknown;
    };
    if !ports.contains(&dport) {
        return UdpFast::Other;
    }
    // The payload ends where the UDP length says, within the IP packet and what was captured.
    let end = (udp + usize::from(udp_len)).min(ip_end).min(d.len());
    match d.get(udp + 8..end) {
        Some(payload) if usize::from(udp_len) >= 8 => UdpFast::Report(payload, dport),
        _ => UdpFast::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::{L4, parse_packet};
    use proptest::prelude::*;

    fn frame(data: &[u8]) -> Frame<'_> {
        Frame {
            ts_ns: 0,
            interface: 0,
            linktype: Linktype::ETHERNET,
            orig_len: data.len() as u32,
            data,
        }
    }

    /// Ethernet (+ `vlans` tags) / IPv4 / UDP to `dport` with `payload`.
    fn udp4(vlans: usize, dport: u16, payload: &[u8]) -> Vec<u8> {
        let mut f = vec![2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2];
        for _ in 0..vlans {
            f.extend_from_slice(&[0x81, 0x00, 0x00, 0x64]);
        }
        f.extend_from_slice(&[0x08, 0x00]);
        let total = (20 + 8 + payload.len()) as u16;
        f.extend_from_slice(&[
            0x45, 0, 0, 0, 0, 1, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
        ]);
        f[16 + 4 * vlans..18 + 4 * vlans].copy_from_slice(&total.to_be_bytes());
        f.extend_from_slice(&[0x30, 0x39]);
        f.extend_from_slice(&dport.to_be_bytes());
        f.extend_from_slice(&(8 + payload.len() as u16).to_be_bytes());
        f.extend_from_slice(&[0, 0]);
        f.extend_from_slice(payload);
        f
    }

    /// What the full parser says about the same question.
    fn slow<'a>(f: &Frame<'a>, ports: &[u16]) -> Option<(&'a [u8], u16)> {
        let rec = parse_packet(f).ok()?;
        let L4::Udp { payload } = rec.l4 else { return None };
        let dport = rec.flow?.dport;
        ports.contains(&dport).then(|| f.data.get(payload).map(|p| (p, dport)))?
    }

    #[test]
    fn report_behind_zero_one_and_two_vlan_tags() {
        for vlans in 0..=2 {
            let bytes = udp4(vlans, 5900, b"report");
            assert_eq!(udp_to_ports(&frame(&bytes), &[5900]), UdpFast::Report(b"report", 5900));
            assert_eq!(udp_to_ports(&frame(&bytes), &[32766]), UdpFast::Other);
        }
    }

    #[test]
    fn ethernet_padding_is_not_payload() {
        let mut bytes = udp4(0, 5900, b"ab");
        bytes.resize(60, 0); // minimum Ethernet frame
        assert_eq!(udp_to_ports(&frame(&bytes), &[5900]), UdpFast::Report(b"ab", 5900));
    }

    #[test]
    fn fragments_and_other_link_types_go_to_the_full_parser() {
        let mut bytes = udp4(0, 5900, b"x");
        bytes[20] = 0x20; // more fragments
        assert_eq!(udp_to_ports(&frame(&bytes), &[5900]), UdpFast::Unknown);
        let raw = Frame { linktype: Linktype::RAW, ..frame(&bytes) };
        assert_eq!(udp_to_ports(&raw, &[5900]), UdpFast::Unknown);
    }

    proptest! {
        /// Whenever the fast path answers, the full parser gives the same answer.
        #[test]
        fn fast_path_agrees_with_the_full_parser(
            vlans in 0usize..3,
            dport in prop_oneof![Just(5900u16), any::<u16>()],
            payload in proptest::collection::vec(any::<u8>(), 0..64),
            flips in proptest::collection::vec((0usize..80, any::<u8>()), 0..4),
            cut in 0usize..120,
        ) {
            let mut bytes = udp4(vlans, dport, &payload);
            for (at, v) in flips {
                if let Some(b) = bytes.get_mut(at) { *b = v; }
            }
            bytes.truncate(cut.max(1).min(bytes.len()));
            let f = frame(&bytes);
            match udp_to_ports(&f, &[5900]) {
                UdpFast::Report(p, port) => prop_assert_eq!(slow(&f, &[5900]), Some((p, port))),
                UdpFast::Other => prop_assert_eq!(slow(&f, &[5900]), None),
                UdpFast::Unknown => {}
            }
        }
    }
}
