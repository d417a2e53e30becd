//! INT-MD/MX inside a tunnel (INT v2.1 §"INT over any encapsulation", §"Header Location"):
//! between the GRE header and its payload, as a VXLAN-GPE next protocol, or as a Geneve
//! option. The flow a report is about is then the tunnelled packet's, not the tunnel's.
//!
//! The specification leaves the GRE protocol type and the VXLAN-GPE next protocol "TBD"; the
//! values here are the ones scapy's INT layers bind (secdev/scapy `scapy/contrib/int.py`:
//! `INT_GRE_PROTOCOL`, `INT_VXLAN_PROTOCOL`, `INT_GENEVE_CLASSID`), which the spec's own text
//! uses for VXLAN-GPE (0x82) and Geneve (0x0103, "tentatively assigned").

use super::bytes::{take, u8_at, u16_at};
use super::inner::{ETHERTYPE_IPV4, ETHERTYPE_IPV6, Headers, PROTO_GRE, PROTO_UDP};
use crate::error::DecodeError;
use crate::model::InnerKind;

/// GRE Protocol Type announcing an INT shim (spec TBD_INT; scapy `INT_GRE_PROTOCOL`).
pub const GRE_PROTO_INT: u16 = 0x4569;
/// VXLAN-GPE's UDP port (IANA; draft-ietf-nvo3-vxlan-gpe §3.1) and its Next Protocol value
/// for an INT header (INT v2.1 §"INT over VXLAN GPE": 0x82).
pub const VXLAN_GPE_PORT: u16 = 4790;
pub const GPE_NEXT_INT: u8 = 0x82;
/// Geneve's UDP port (RFC 8926 §3.3) and the option class for INT (INT v2.1 §"INT over
/// Geneve": 0x0103).
pub const GENEVE_PORT: u16 = 6081;
pub const GENEVE_CLASS_INT: u16 = 0x0103;
/// INT header types carried in the tunnel's shim or option Type (INT v2.1 §"INT Header
/// Types"): 1 INT-MD, 3 INT-MX (2, destination, carries no hops).
const TYPE_MD: u8 = 1;
const TYPE_MX: u8 = 3;
/// GRE flag bits that add a 4-byte word each: C (checksum + offset), K (key), S (sequence)
/// (RFC 2784 §2, RFC 2890 §2).
const GRE_C: u16 = 0x8000;
const GRE_K: u16 = 0x2000;
const GRE_S: u16 = 0x1000;
/// The EtherType of a GRE or Geneve payload that is an Ethernet frame: transparent Ethernet
/// bridging (RFC 1701); IPv4 and IPv6 as in [`super::inner`].
const ETHERTYPE_TEB: u16 = 0x6558;

/// Where a tunnel puts its INT header and what follows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Tunnel {
    /// The INT-MD/MX header, its Length (words of header + stack) and where that was read.
    pub md: usize,
    pub length_at: usize,
    pub length: usize,
    pub md_type: bool,
    /// The tunnelled packet: its first header and offset, when the next protocol is one.
    pub payload: Option<(InnerKind, usize)>,
}

/// The INT header a tunnel in `buf` carries, or `None` when the packet is no INT tunnel.
pub(crate) fn find(buf: &[u8], h: &Headers) -> Result<Option<Tunnel>, DecodeError> {
    let (Some(flow), Some(at)) = (h.flow, h.l4_at) else { return Ok(None) };
    match (flow.proto, flow.dport) {
        (PROTO_GRE, _) => gre(buf, at),
        (PROTO_UDP, VXLAN_GPE_PORT) => vxlan_gpe(buf, at + 8),
        (PROTO_UDP, GENEVE_PORT) => geneve(buf, at + 8),
        _ => Ok(None),
    }
}

fn by_ethertype(ty: u16, at: usize) -> Option<(InnerKind, usize)> {
    match ty {
        ETHERTYPE_IPV4 => Some((InnerKind::Ipv4, at)),
        ETHERTYPE_IPV6 => Some((InnerKind::Ipv6, at)),
        ETHERTYPE_TEB => Some((InnerKind::Ethernet, at)),
        _ => None,
    }
}

/// GRE: flags | Protocol Type = INT, optional words, then the shim `Type:4 G:1 Rsvd:3 |
/// Length | Next Protocol (EtherType)`, Length not counting the shim.
fn gre(buf: &[u8], at: usize) -> Result<Option<Tunnel>, DecodeError> {
    let flags = u16_at(buf, at, "gre.flags")?;
    if u16_at(buf, at + 2, "gre.protocol")? != GRE_PROTO_INT {
        return Ok(None);
    }
    let optional = [GRE_C, GRE_K, GRE_S].iter().filter(|&&b| flags & b != 0).count() * 4;
    let shim = at + 4 + optional;
    let [b0, length, n0, n1] = shim_bytes(buf, shim, "int.gre_shim")?;
    let (md, length) = (shim + 4, usize::from(length));
    let next = by_ethertype(u16::from_be_bytes([n0, n1]), md + length * 4);
    Ok(int_type(b0 >> 4).map(|md_type| Tunnel {
        md,
        length_at: shim + 1,
        length,
        md_type,
        payload: next,
    }))
}

/// VXLAN-GPE: 8-byte header with Next Protocol 0x82, then the shim `Type:4 Rsvd:4 | Length |
/// G:1 Rsvd:7 | Next Protocol` (1 IPv4, 2 IPv6, 3 Ethernet), Length not counting the shim.
fn vxlan_gpe(buf: &[u8], at: usize) -> Result<Option<Tunnel>, DecodeError> {
    if u8_at(buf, at + 3, "vxlan_gpe.next_protocol")? != GPE_NEXT_INT {
        return Ok(None);
    }
    let shim = at + 8;
    let [b0, length, _, next] = shim_bytes(buf, shim, "int.vxlan_gpe_shim")?;
    let (md, length) = (shim + 4, usize::from(length));
    let end = md + length * 4;
    let payload = match next {
        1 => Some((InnerKind::Ipv4, end)),
        2 => Some((InnerKind::Ipv6, end)),
        3 => Some((InnerKind::Ethernet, end)),
        _ => None,
    };
    Ok(int_type(b0 >> 4).map(|md_type| Tunnel {
        md,
        length_at: shim + 1,
        length,
        md_type,
        payload,
    }))
}

/// Geneve: `Ver:2 OptLen:6 | O C Rsvd | Protocol Type | VNI | Rsvd`, options of `Class |
/// Type | R R R Length:5` (Length in words, not counting the option header); the INT option
/// has class 0x0103 and the INT header type as its Type.
fn geneve(buf: &[u8], at: usize) -> Result<Option<Tunnel>, DecodeError> {
    let [b0, _, p0, p1] = shim_bytes(buf, at, "geneve")?;
    take(buf, at, 8, "geneve")?;
    let options_end = at + 8 + usize::from(b0 & 0x3F) * 4;
    let payload = by_ethertype(u16::from_be_bytes([p0, p1]), options_end);
    let mut opt = at + 8;
    // Each option is ≥ 4 bytes, so the walk ends at `options_end`.
    while opt + 4 <= options_end {
        let [c0, c1, ty, len] = shim_bytes(buf, opt, "geneve.option")?;
        let length = usize::from(len & 0x1F);
        if u16::from_be_bytes([c0, c1]) == GENEVE_CLASS_INT {
            let found = int_type(ty).map(|md_type| Tunnel {
                md: opt + 4,
                length_at: opt + 3,
                length,
                md_type,
                payload,
            });
            return Ok(found);
        }
        opt += 4 + length * 4;
    }
    Ok(None)
}

fn shim_bytes(buf: &[u8], at: usize, field: &'static str) -> Result<[u8; 4], DecodeError> {
    let b = take(buf, at, 4, field)?;
    Ok([b[0], b[1], b[2], b[3]])
}

/// `Some(true)` for INT-MD, `Some(false)` for INT-MX, `None` for other header types.
fn int_type(t: u8) -> Option<bool> {
    match t {
        TYPE_MD => Some(true),
        TYPE_MX => Some(false),
        _ => None,
    }
}
