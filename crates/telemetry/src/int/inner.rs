//! The data packet around the INT stack: Ethernet with any number of 802.1Q / 802.1ad tags,
//! IPv4 or IPv6 (with extension headers), then TCP or UDP. Finds the 5-tuple, the IP length,
//! the DSCP and where an INT shim would start.

use super::bytes::{take, u8_at, u16_at};
use crate::error::DecodeError;
use crate::model::{FlowKey, InnerKind};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// EtherTypes (IEEE 802.3 / IANA): IPv4, IPv6, and the VLAN tag protocol ids we skip:
/// 802.1Q C-tag, 802.1ad S-tag, and the pre-standard QinQ 0x9100.
pub const ETHERTYPE_IPV4: u16 = 0x0800;
pub const ETHERTYPE_IPV6: u16 = 0x86DD;
pub const TPID_8021Q: u16 = 0x8100;
pub const TPID_8021AD: u16 = 0x88A8;
pub const TPID_QINQ_LEGACY: u16 = 0x9100;
/// IP protocol numbers (IANA): TCP, UDP, and the IPv6 extension headers we walk over
/// (RFC 8200 §4: hop-by-hop 0, routing 43, fragment 44, destination options 60; RFC 4302 AH 51).
pub const PROTO_TCP: u8 = 6;
pub const PROTO_UDP: u8 = 17;
/// GRE (IANA protocol number 47, RFC 2784).
pub const PROTO_GRE: u8 = 47;
const EXT_HOP_BY_HOP: u8 = 0;
const EXT_ROUTING: u8 = 43;
const EXT_FRAGMENT: u8 = 44;
const EXT_AH: u8 = 51;
const EXT_DEST_OPTS: u8 = 60;
/// Fixed header sizes: Ethernet 14, VLAN tag 4, IPv4 minimum 20 (IHL 5), IPv6 40, TCP
/// minimum 20 (data offset 5), UDP 8.
pub const ETH_BYTES: usize = 14;
pub const VLAN_BYTES: usize = 4;
pub const IPV4_MIN_BYTES: usize = 20;
pub const IPV6_BYTES: usize = 40;
pub const TCP_MIN_BYTES: usize = 20;
pub const UDP_BYTES: usize = 8;

/// What the headers say.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Headers {
    /// `None` for a non-first fragment (no L4 header to read ports from).
    pub flow: Option<FlowKey>,
    pub packet_bytes: u32,
    pub dscp: u8,
    /// Offset of the first byte after the fixed TCP header (TCP) or the UDP header.
    pub l4_fixed_end: usize,
    /// Offset of the first byte after the TCP options (TCP) or the UDP header (UDP);
    /// `None` for other protocols and fragments.
    pub l4_end: Option<usize>,
    /// The TCP or UDP header is cut or malformed: `flow` is `None`, the IP fields stand.
    pub l4_error: Option<DecodeError>,
    /// Offset of the first byte after the IP header(s): where GRE or L4 starts; `None` for a
    /// non-first fragment.
    pub l4_at: Option<usize>,
}

/// Parse the headers of a packet starting with `kind`.
pub(crate) fn parse(buf: &[u8], kind: InnerKind) -> Result<Headers, DecodeError> {
    let (ip_at, ip_kind) = match kind {
        InnerKind::Ethernet => ethernet(buf)?,
        k => (0, k),
    };
    match ip_kind {
        InnerKind::Ipv6 => ipv6(buf, ip_at),
        _ => ipv4(buf, ip_at),
    }
}

/// Skip the Ethernet header and its tags; returns where IP starts and which IP.
fn ethernet(buf: &[u8]) -> Result<(usize, InnerKind), DecodeError> {
    take(buf, 0, ETH_BYTES, "ethernet")?;
    let mut at = 12;
    loop {
        let ty = u16_at(buf, at, "ethernet.ethertype")?;
        match ty {
            TPID_8021Q | TPID_8021AD | TPID_QINQ_LEGACY => {
                // The tag and the type after it, so a cut frame errs at the tag.
                take(buf, at, VLAN_BYTES + 2, "ethernet.vlan")?;
                at += VLAN_BYTES;
            }
            ETHERTYPE_IPV4 => return Ok((at + 2, InnerKind::Ipv4)),
            ETHERTYPE_IPV6 => return Ok((at + 2, InnerKind::Ipv6)),
            _ => {
                return Err(DecodeError::new(
                    at,
                    "ethernet.ethertype",
                    u64::from(ty),
                    "0x0800 (IPv4) or 0x86dd (IPv6), after any 0x8100/0x88a8/0x9100 tags",
                ));
            }
        }
    }
}

fn ipv4(buf: &[u8], at: usize) -> Result<Headers, DecodeError> {
    let h = take(buf, at, IPV4_MIN_BYTES, "ipv4")?;
    if h[0] >> 4 != 4 {
        return Err(DecodeError::new(at, "ipv4.version", u64::from(h[0] >> 4), "4"));
    }
    let ihl = usize::from(h[0] & 0x0F) * 4;
    if ihl < IPV4_MIN_BYTES {
        return Err(DecodeError::new(at, "ipv4.ihl", (ihl / 4) as u64, "≥ 5 words"));
    }
    take(buf, at, ihl, "ipv4.options")?;
    let total = u16::from_be_bytes([h[2], h[3]]);
    let frag_offset = u16::from_be_bytes([h[6], h[7]]) & 0x1FFF;
    let src = IpAddr::V4(Ipv4Addr::new(h[12], h[13], h[14], h[15]));
    let dst = IpAddr::V4(Ipv4Addr::new(h[16], h[17], h[18], h[19]));
    let l4 = (frag_offset == 0).then_some(at + ihl);
    transport(buf, src, dst, h[9], l4, u32::from(total), h[1] >> 2)
}

fn ipv6(buf: &[u8], at: usize) -> Result<Headers, DecodeError> {
    let h = take(buf, at, IPV6_BYTES, "ipv6")?;
    if h[0] >> 4 != 6 {
        return Err(DecodeError::new(at, "ipv6.version", u64::from(h[0] >> 4), "6"));
    }
    let traffic_class = (h[0] << 4) | (h[1] >> 4);
    let payload = u16::from_be_bytes([h[4], h[5]]);
    let mut next = h[6];
    let addr = |o: usize| {
        let mut a = [0u8; 16];
        a.copy_from_slice(&h[o..o + 16]);
        IpAddr::V6(Ipv6Addr::from(a))
    };
    let (src, dst) = (addr(8), addr(24));
    let mut l4 = Some(at + IPV6_BYTES);
    // Each extension header is ≥ 8 bytes, so the walk ends within the input.
    while let Some(ext) = l4 {
        let len = match next {
            EXT_HOP_BY_HOP | EXT_ROUTING | EXT_DEST_OPTS => {
                (usize::from(u8_at(buf, ext + 1, "ipv6.ext_len")?) + 1) * 8
            }
            EXT_AH => (usize::from(u8_at(buf, ext + 1, "ipv6.ah_len")?) + 2) * 4,
            EXT_FRAGMENT => {
                let off = u16_at(buf, ext + 2, "ipv6.fragment_offset")? >> 3;
                if off != 0 {
                    next = u8_at(buf, ext, "ipv6.next_header")?;
                    l4 = None;
                    break;
                }
                8
            }
            _ => break,
        };
        next = u8_at(buf, ext, "ipv6.next_header")?;
        take(buf, ext, len, "ipv6.extension")?;
        l4 = Some(ext + len);
    }
    let bytes = u32::from(payload) + IPV6_BYTES as u32;
    transport(buf, src, dst, next, l4, bytes, traffic_class >> 2)
}

fn transport(
    buf: &[u8],
    src: IpAddr,
    dst: IpAddr,
    proto: u8,
    l4: Option<usize>,
    packet_bytes: u32,
    dscp: u8,
) -> Result<Headers, DecodeError> {
    let mut hdr = Headers {
        flow: None,
        packet_bytes,
        dscp,
        l4_fixed_end: 0,
        l4_end: None,
        l4_error: None,
        l4_at: l4,
    };
    let Some(at) = l4 else { return Ok(hdr) };
    if let Err(e) = l4_header(buf, at, FlowKey { src, dst, sport: 0, dport: 0, proto }, &mut hdr) {
        hdr.l4_error = Some(e);
    }
    Ok(hdr)
}

/// The TCP or UDP header at `at`: the ports into `flow`, which is kept in `hdr` only when the
/// header is whole.
fn l4_header(
    buf: &[u8],
    at: usize,
    mut flow: FlowKey,
    hdr: &mut Headers,
) -> Result<(), DecodeError> {
    match flow.proto {
        PROTO_TCP => {
            let t = take(buf, at, TCP_MIN_BYTES, "tcp")?;
            let doff = usize::from(t[12] >> 4) * 4;
            if doff < TCP_MIN_BYTES {
                return Err(DecodeError::new(
                    at + 12,
                    "tcp.data_offset",
                    (doff / 4) as u64,
                    "≥ 5 words",
                ));
            }
            flow.sport = u16::from_be_bytes([t[0], t[1]]);
            flow.dport = u16::from_be_bytes([t[2], t[3]]);
            hdr.l4_fixed_end = at + TCP_MIN_BYTES;
            hdr.l4_end = Some(at + doff);
        }
        PROTO_UDP => {
            let u = take(buf, at, UDP_BYTES, "udp")?;
            flow.sport = u16::from_be_bytes([u[0], u[1]]);
            flow.dport = u16::from_be_bytes([u[2], u[3]]);
            hdr.l4_fixed_end = at + UDP_BYTES;
            hdr.l4_end = Some(at + UDP_BYTES);
        }
        _ => {}
    }
    hdr.flow = Some(flow);
    Ok(())
}

/// Append Ethernet (with one 802.1Q tag per entry of `vlans`) for an IP packet of `family`.
pub(crate) fn emit_ethernet(v6: bool, vlans: &[u16], out: &mut Vec<u8>) {
    // Locally administered unicast addresses: the reported packet's MACs carry no telemetry.
    out.extend_from_slice(&[0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01]);
    for vid in vlans {
        out.extend_from_slice(&TPID_8021Q.to_be_bytes());
        out.extend_from_slice(&(vid & 0x0FFF).to_be_bytes());
    }
    let ty = if v6 { ETHERTYPE_IPV6 } else { ETHERTYPE_IPV4 };
    out.extend_from_slice(&ty.to_be_bytes());
}

/// Append an IPv4 header (valid checksum, DF, TTL 64) for `l4_bytes` after it.
pub(crate) fn emit_ipv4(
    src: Ipv4Addr,
    dst: Ipv4Addr,
    proto: u8,
    dscp: u8,
    l4_bytes: usize,
    out: &mut Vec<u8>,
) {
    let total = (IPV4_MIN_BYTES + l4_bytes).min(usize::from(u16::MAX)) as u16;
    let mut h = [0u8; IPV4_MIN_BYTES];
    h[0] = 0x45;
    h[1] = dscp << 2;
    h[2..4].copy_from_slice(&total.to_be_bytes());
    h[6] = 0x40;
    h[8] = 64;
    h[9] = proto;
    h[12..16].copy_from_slice(&src.octets());
    h[16..20].copy_from_slice(&dst.octets());
    let sum = h.chunks_exact(2).map(|w| u32::from(u16::from_be_bytes([w[0], w[1]]))).sum::<u32>();
    let folded = (sum & 0xFFFF) + (sum >> 16);
    let folded = (folded & 0xFFFF) + (folded >> 16);
    h[10..12].copy_from_slice(&(!(folded as u16)).to_be_bytes());
    out.extend_from_slice(&h);
}

/// Append an IPv6 header (hop limit 64, no extension headers).
pub(crate) fn emit_ipv6(
    src: Ipv6Addr,
    dst: Ipv6Addr,
    proto: u8,
    dscp: u8,
    l4_bytes: usize,
    out: &mut Vec<u8>,
) {
    let tc = dscp << 2;
    out.extend_from_slice(&[0x60 | (tc >> 4), tc << 4, 0, 0]);
    out.extend_from_slice(&(l4_bytes.min(usize::from(u16::MAX)) as u16).to_be_bytes());
    out.extend_from_slice(&[proto, 64]);
    out.extend_from_slice(&src.octets());
    out.extend_from_slice(&dst.octets());
}

/// Append a TCP header without options (ACK, window 65535, checksum left 0) or a UDP header
/// (length covering `after` bytes, checksum 0 = none).
pub(crate) fn emit_l4(flow: &FlowKey, after: usize, out: &mut Vec<u8>) {
    out.extend_from_slice(&flow.sport.to_be_bytes());
    out.extend_from_slice(&flow.dport.to_be_bytes());
    if flow.proto == PROTO_TCP {
        out.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x10, 0xFF, 0xFF, 0, 0, 0, 0]);
    } else {
        let len = (UDP_BYTES + after).min(usize::from(u16::MAX)) as u16;
        out.extend_from_slice(&len.to_be_bytes());
        out.extend_from_slice(&[0, 0]);
    }
}

/// Bytes [`emit_l4`] writes for `proto`.
pub(crate) fn l4_bytes(proto: u8) -> usize {
    if proto == PROTO_TCP { TCP_MIN_BYTES } else { UDP_BYTES }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ethernet_skips_qinq_tags() {
        let mut b = vec![0u8; 12];
        b.extend_from_slice(&[0x88, 0xA8, 0, 10, 0x81, 0x00, 0, 20, 0x08, 0x00]);
        assert_eq!(ethernet(&b).unwrap(), (22, InnerKind::Ipv4));
    }

    #[test]
    fn ethernet_skips_legacy_qinq_to_ipv6() {
        let mut b = vec![0u8; 12];
        b.extend_from_slice(&[0x91, 0x00, 0, 10, 0x86, 0xDD]);
        assert_eq!(ethernet(&b).unwrap(), (18, InnerKind::Ipv6));
    }

    #[test]
    fn header_sizes_are_the_fixed_ones() {
        // IEEE 802.3 / 802.1Q; RFC 791 IHL 5; RFC 8200 §3; RFC 9293 data offset 5; RFC 768.
        assert_eq!((ETH_BYTES, VLAN_BYTES), (14, 4));
        assert_eq!((IPV4_MIN_BYTES, IPV6_BYTES, TCP_MIN_BYTES, UDP_BYTES), (20, 40, 20, 8));
        assert_eq!((PROTO_TCP, PROTO_UDP), (6, 17));
        assert_eq!(
            (EXT_HOP_BY_HOP, EXT_ROUTING, EXT_FRAGMENT, EXT_AH, EXT_DEST_OPTS),
            (0, 43, 44, 51, 60)
        );
    }

    #[test]
    fn ethernet_rejects_non_ip_with_the_ethertype_offset() {
        let mut b = vec![0u8; 12];
        b.extend_from_slice(&[0x81, 0x00, 0, 20, 0x08, 0x06]);
        let e = ethernet(&b).unwrap_err();
        assert_eq!((e.offset, e.field, e.value), (16, "ethernet.ethertype", 0x0806));
    }

    #[test]
    fn ipv4_checksum_verifies_to_zero() {
        let mut out = Vec::new();
        emit_ipv4(Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 0, 2), 6, 0x17, 100, &mut out);
        let sum =
            out.chunks_exact(2).map(|w| u32::from(u16::from_be_bytes([w[0], w[1]]))).sum::<u32>();
        let folded = (sum & 0xFFFF) + (sum >> 16);
        assert_eq!(folded, 0xFFFF);
        assert_eq!(out[1], 0x17 << 2);
    }

    #[test]
    fn ipv4_non_first_fragment_has_no_flow() {
        let mut b = vec![0x45, 0, 0, 40, 0, 0, 0x00, 0x10, 64, 6, 0, 0];
        b.extend_from_slice(&[10, 0, 0, 1, 10, 0, 0, 2]);
        let h = parse(&b, InnerKind::Ipv4).unwrap();
        assert_eq!((h.flow, h.packet_bytes, h.l4_end), (None, 40, None));
    }

    #[test]
    fn ipv6_walks_extension_headers_to_udp() {
        let mut out = Vec::new();
        emit_ipv6(Ipv6Addr::LOCALHOST, Ipv6Addr::LOCALHOST, EXT_HOP_BY_HOP, 0, 16, &mut out);
        out.extend_from_slice(&[PROTO_UDP, 0, 0, 0, 0, 0, 0, 0]);
        out.extend_from_slice(&[0x12, 0x34, 0x00, 0x35, 0, 8, 0, 0]);
        let h = parse(&out, InnerKind::Ipv6).unwrap();
        let f = h.flow.unwrap();
        assert_eq!((f.proto, f.sport, f.dport, h.packet_bytes), (17, 0x1234, 53, 56));
        assert_eq!(h.l4_end, Some(56));
    }

    #[test]
    fn tcp_data_offset_below_five_is_an_error_at_its_byte() {
        let mut b = Vec::new();
        emit_ipv4(Ipv4Addr::LOCALHOST, Ipv4Addr::LOCALHOST, 6, 0, 20, &mut b);
        b.extend_from_slice(&[0, 1, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0x40, 0x10, 0, 0, 0, 0, 0, 0]);
        // The IP header stands; only the flow key (and what follows L4) is lost.
        let h = parse(&b, InnerKind::Ipv4).unwrap();
        let e = h.l4_error.unwrap();
        assert_eq!((e.offset, e.field, e.value), (32, "tcp.data_offset", 4));
        assert_eq!((h.flow, h.packet_bytes), (None, 40));
    }
}
