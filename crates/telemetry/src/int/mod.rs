//! Embedded INT-MD v0.5, v1.0 and v2.1 inside a reported (or captured) data packet: parse and
//! encode (int-telemetry.md §5–§9, §11).
//!
//! Where the stack is: INT over TCP/UDP sits right after the UDP header, and after the TCP
//! header — after its options, or before them when the profile says so (NoviFlow, §11).
//! Whether it is there is the profile's [`IntDetect`] rule: by default a recognised shim (its
//! Type and the MD header's Ver agree on a version), or a configured DSCP value.
//!
//! What we read: hops from the lengths (shim Length, HopML / InsCnt), never RemainingHopCnt;
//! occupancy × the profile's cell size; 4- or 8-byte timestamps (8 always in v2.x); all ones
//! as "not available". v2.x NPT = 1 restores the original UDP destination port from the shim,
//! NPT = 2 the original IP protocol and the ports of the L4 header after the stack.

mod bytes;
pub mod encode;
pub mod inner;
pub mod metadata;
pub mod stack;
pub mod tunnel;

pub use encode::{IntStackSpec, encode_inner};
pub use metadata::NOVIFLOW_INSTRUCTIONS;

use crate::error::DecodeError;
use crate::model::{InnerKind, InnerPacket, IntVersion};
use crate::profile::{DeviceProfile, IntDetect};
use inner::{PROTO_TCP, PROTO_UDP};

/// Parse a data packet starting with `kind`: its 5-tuple, IP length and embedded INT stack.
pub fn parse_inner(
    bytes: &[u8],
    kind: InnerKind,
    profile: &DeviceProfile,
) -> Result<InnerPacket, DecodeError> {
    let mut packet = InnerPacket::default();
    parse_inner_into(bytes, kind, profile, &mut packet)?;
    Ok(packet)
}

/// [`parse_inner`] into a reused packet, so a decode loop keeps one `hops` allocation.
/// On error `packet` holds what was read before the error: the IP length once the IP header
/// was read, the flow key once the L4 header was, never a partial stack.
pub fn parse_inner_into(
    bytes: &[u8],
    kind: InnerKind,
    profile: &DeviceProfile,
    packet: &mut InnerPacket,
) -> Result<(), DecodeError> {
    packet.hops.clear();
    packet.int_version = None;
    packet.flow = None;
    packet.packet_bytes = 0;
    packet.source_only = None;
    let h = inner::parse(bytes, kind)?;
    packet.flow = h.flow;
    packet.packet_bytes = h.packet_bytes;
    if let Some(e) = h.l4_error {
        return Err(e);
    }
    if let Some(t) = tunnel::find(bytes, &h)? {
        return tunnelled(bytes, &t, profile, packet);
    }
    let Some(l4_end) = h.l4_end else { return Ok(()) };
    let Some(flow) = packet.flow.as_mut() else { return Ok(()) };
    let at = match flow.proto {
        PROTO_TCP if profile.int_before_tcp_options => h.l4_fixed_end,
        PROTO_TCP | PROTO_UDP => l4_end,
        _ => return Ok(()),
    };
    let version = match profile.int_detect {
        IntDetect::Shim => match stack::recognise(bytes, at) {
            Some(v) => v,
            None => return Ok(()),
        },
        IntDetect::Dscp { value, mask } if h.dscp & mask == value => {
            match stack::recognise(bytes, at) {
                Some(v) => v,
                None => {
                    let ty = bytes::u8_at(bytes, at, "int.shim.type")?;
                    bytes::take(bytes, at, 8, "int.shim")?;
                    return Err(DecodeError::new(
                        at,
                        "int.shim.type",
                        u64::from(ty),
                        "an INT shim (Type 1 with MD Ver 0/1, or Type 0x1/0x3 with MD Ver 2) \
                         after the DSCP mark",
                    ));
                }
            }
        }
        IntDetect::Dscp { .. } => return Ok(()),
    };
    // A profile may name the version a Type 1 shim's stack really is (GEANT: MD Ver 0).
    let version = match (version, profile.int_md_version) {
        (
            IntVersion::V0_5 | IntVersion::V1_0,
            Some(forced @ (IntVersion::V0_5 | IntVersion::V1_0)),
        ) => forced,
        (v, _) => v,
    };
    let s = stack::parse(bytes, at, version, profile, &mut packet.hops)?;
    packet.int_version = Some(s.version);
    packet.source_only = s.source_only;
    if let Some(dport) = s.restore.dport {
        flow.dport = dport;
    }
    if let Some(proto) = s.restore.proto {
        flow.proto = proto;
        if proto == PROTO_TCP || proto == PROTO_UDP {
            // The original L4 header after the stack; cut short, the flow key is lost, the
            // stack stands.
            match bytes::take(bytes, s.end, 4, "l4.ports") {
                Ok(p) => {
                    flow.sport = u16::from_be_bytes([p[0], p[1]]);
                    flow.dport = u16::from_be_bytes([p[2], p[3]]);
                }
                Err(e) => {
                    packet.flow = None;
                    return Err(e);
                }
            }
        }
    }
    Ok(())
}

/// INT inside a GRE, VXLAN-GPE or Geneve tunnel: the stack, then the tunnelled packet's flow
/// key, which is the one the report is about (the tunnel's own is left out).
fn tunnelled(
    bytes: &[u8],
    t: &tunnel::Tunnel,
    profile: &DeviceProfile,
    packet: &mut InnerPacket,
) -> Result<(), DecodeError> {
    let body = (t.md, (t.length_at, t.length));
    let ts = metadata::timestamp_bytes(IntVersion::V2_1, profile.timestamp_bytes);
    packet.source_only = stack::v2_body(bytes, body, t.md_type, ts, profile, &mut packet.hops)?;
    packet.int_version = Some(IntVersion::V2_1);
    let Some((kind, at)) = t.payload else { return Ok(()) };
    packet.flow = None;
    let h = inner::parse(bytes.get(at..).unwrap_or_default(), kind).map_err(|e| e.shifted(at))?;
    if let Some(e) = h.l4_error {
        return Err(e.shifted(at));
    }
    packet.flow = h.flow;
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests;
