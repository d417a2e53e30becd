//! Encoders for data packets carrying embedded INT, as devices emit them: used by tests, by
//! the simulator's INT export and by benchmarks. Written from the layouts in
//! int-telemetry.md §5–§7 and §9.2.

use super::inner::{self, PROTO_TCP, PROTO_UDP};
use super::metadata::{NOVIFLOW_INSTRUCTIONS, encode_hop, hop_bytes, timestamp_bytes};
use super::stack::{MD_BYTES_V1, MD_BYTES_V2, SHIM_BYTES, SHIM_TYPE_V1, SHIM_TYPE_V2_MD};
use crate::model::{FlowKey, Hop, InnerKind, IntVersion};
use crate::profile::DeviceProfile;
use std::net::IpAddr;

/// NoviFlow's sources set RemainingHopCnt to 10 and stop at 10 hops (int-telemetry.md §9.3:
/// the AmLight collector takes hops = 10 − RemainingHopCnt; §11).
pub const NOVIFLOW_MAX_HOPS: u8 = 10;

/// Largest shim Length: an 8-bit count of 4-byte words (every version's shim).
const MAX_LENGTH_WORDS: usize = 255;

/// One embedded INT stack to encode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IntStackSpec {
    pub version: IntVersion,
    /// Instruction bitmap, bit 0 = mask 0x8000.
    pub instructions: u16,
    /// The hop limit the INT source set: v0.5 MaxHopCnt; v1.0 / v2.1 RemainingHopCnt is
    /// written as `max_hops − hops.len()` (saturating).
    pub max_hops: u8,
    /// Newest hop first, as the stack is on the wire.
    pub hops: Vec<Hop>,
}

impl IntStackSpec {
    /// What a NoviFlow switch stack carries: INT v1.0, ins 0xFC00 (6 words per hop), hop
    /// latency unsupported and written as all ones (int-telemetry.md §9.2).
    pub fn noviflow(hops: &[Hop]) -> Self {
        let hops = hops.iter().map(|h| Hop { hop_latency_ns: None, ..*h }).collect();
        IntStackSpec {
            version: IntVersion::V1_0,
            instructions: NOVIFLOW_INSTRUCTIONS,
            max_hops: NOVIFLOW_MAX_HOPS,
            hops,
        }
    }

    fn hop_len(&self, profile: &DeviceProfile) -> usize {
        let ts = timestamp_bytes(self.version, profile.timestamp_bytes);
        hop_bytes(self.version, self.instructions, ts)
    }

    /// Words before the hops that the shim Length counts.
    fn overhead_words(&self) -> usize {
        match self.version {
            IntVersion::V0_5 => 4,
            IntVersion::V1_0 => 3,
            IntVersion::V2_1 => 3,
        }
    }

    /// Hops that fit the 8-bit shim Length; a device stops pushing metadata there too.
    fn hops_written(&self, profile: &DeviceProfile) -> usize {
        let words = self.hop_len(profile) / 4;
        let room = MAX_LENGTH_WORDS - self.overhead_words();
        room.checked_div(words).map_or(self.hops.len(), |fit| self.hops.len().min(fit))
    }

    /// Bytes [`IntStackSpec::encode`] appends.
    pub fn wire_bytes(&self, profile: &DeviceProfile) -> usize {
        let stack = self.hops_written(profile) * self.hop_len(profile);
        match self.version {
            IntVersion::V0_5 => SHIM_BYTES + MD_BYTES_V1 + stack + 4,
            IntVersion::V1_0 => SHIM_BYTES + MD_BYTES_V1 + stack,
            IntVersion::V2_1 => SHIM_BYTES + MD_BYTES_V2 + stack,
        }
    }

    /// Append shim, MD header, hops (and the v0.5 tail, which records the original L4
    /// protocol and destination port). Original DSCP fields are written as 0.
    pub fn encode(
        &self,
        orig_proto: u8,
        orig_dport: u16,
        profile: &DeviceProfile,
        out: &mut Vec<u8>,
    ) {
        let ts = timestamp_bytes(self.version, profile.timestamp_bytes);
        let hop_len = self.hop_len(profile);
        let hop_words = (hop_len / 4) as u8;
        let n = self.hops_written(profile);
        let length = (self.overhead_words() + n * hop_len / 4) as u8;
        let remaining = self.max_hops.saturating_sub(n.min(255) as u8);
        let ins = self.instructions.to_be_bytes();
        match self.version {
            IntVersion::V0_5 => {
                out.extend_from_slice(&[SHIM_TYPE_V1, 0, length, 0]);
                // Ver 0 | Rep C E = 0 | R:3 InsCnt:5 | MaxHopCnt | TotalHopCnt
                out.extend_from_slice(&[0x00, hop_words & 0x1F, self.max_hops, n as u8]);
                out.extend_from_slice(&[ins[0], ins[1], 0, 0]);
            }
            IntVersion::V1_0 => {
                out.extend_from_slice(&[SHIM_TYPE_V1, 0, length, 0]);
                // Ver 1 | Rep C E M Rsvd = 0 | HopML:5 | RemainingHopCnt
                out.extend_from_slice(&[0x10, 0, hop_words & 0x1F, remaining]);
                out.extend_from_slice(&[ins[0], ins[1], 0, 0]);
            }
            IntVersion::V2_1 => {
                // Type 1 (INT-MD) | NPT 0 (DSCP signalled) | Length (MD + stack) | DSCP 0
                out.extend_from_slice(&[SHIM_TYPE_V2_MD << 4, length, 0, 0]);
                out.extend_from_slice(&[0x20, 0, hop_words & 0x1F, remaining]);
                // Instruction bitmap | DS id | DS instruction | DS flags
                out.extend_from_slice(&[ins[0], ins[1], 0, 0, 0, 0, 0, 0]);
            }
        }
        for hop in self.hops.iter().take(n) {
            encode_hop(self.version, self.instructions, ts, profile.cell_bytes, hop, out);
        }
        if self.version == IntVersion::V0_5 {
            let d = orig_dport.to_be_bytes();
            out.extend_from_slice(&[orig_proto, d[0], d[1], 0]);
        }
    }
}

/// Append a data packet of `flow` carrying `int` (if any) and `payload_len` zero bytes.
///
/// `kind` = Ethernet writes an Ethernet header with one 802.1Q tag per entry of `vlans`
/// (AmLight's reported frames carry one, §9.1); the IP version follows the flow's addresses
/// (IPv6, with v4-mapped addresses, if the two differ). INT goes right after the TCP or UDP
/// header and the IP DSCP is set to `profile.int_dscp`; flows other than TCP/UDP get no L4
/// header and no INT. L4 checksums are left 0.
pub fn encode_inner(
    flow: &FlowKey,
    kind: InnerKind,
    vlans: &[u16],
    int: Option<&IntStackSpec>,
    payload_len: usize,
    profile: &DeviceProfile,
    out: &mut Vec<u8>,
) {
    let l4 = flow.proto == PROTO_TCP || flow.proto == PROTO_UDP;
    let int = int.filter(|_| l4);
    let int_len = int.map_or(0, |s| s.wire_bytes(profile));
    let l4_len = if l4 { inner::l4_bytes(flow.proto) } else { 0 };
    let ip_payload = l4_len + int_len + payload_len;
    let dscp = if int.is_some() { profile.int_dscp } else { 0 };
    let v4 = match (flow.src, flow.dst) {
        (IpAddr::V4(s), IpAddr::V4(d)) => Some((s, d)),
        _ => None,
    };
    if kind == InnerKind::Ethernet {
        inner::emit_ethernet(v4.is_none(), vlans, out);
    }
    match v4 {
        Some((s, d)) => inner::emit_ipv4(s, d, flow.proto, dscp, ip_payload, out),
        None => {
            let v6 = |a: IpAddr| match a {
                IpAddr::V4(a) => a.to_ipv6_mapped(),
                IpAddr::V6(a) => a,
            };
            inner::emit_ipv6(v6(flow.src), v6(flow.dst), flow.proto, dscp, ip_payload, out);
        }
    }
    if l4 {
        inner::emit_l4(flow, int_len + payload_len, out);
    }
    if let Some(s) = int {
        s.encode(flow.proto, flow.dport, profile, out);
    }
    out.resize(out.len() + payload_len, 0);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    fn udp_flow() -> FlowKey {
        FlowKey {
            src: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
            dst: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)),
            sport: 5001,
            dport: 5201,
            proto: PROTO_UDP,
        }
    }

    #[test]
    fn noviflow_one_hop_is_shim_length_9() {
        // §6: AmLight example, shim Length 9 for 1 hop (1 + 2 + 6).
        let spec = IntStackSpec::noviflow(&[Hop::default()]);
        let mut out = Vec::new();
        spec.encode(PROTO_UDP, 0, &DeviceProfile::noviflow(), &mut out);
        assert_eq!(out.len(), 36);
        assert_eq!(&out[..8], &[1, 0, 9, 0, 0x10, 0, 6, 9]);
        assert_eq!(&out[8..10], &[0xFC, 0x00]);
        assert_eq!(&out[20..24], &[0xFF; 4], "hop latency is all ones");
    }

    #[test]
    fn noviflow_drops_hop_latency() {
        let spec = IntStackSpec::noviflow(&[Hop { hop_latency_ns: Some(5), ..Hop::default() }]);
        assert_eq!(spec.hops[0].hop_latency_ns, None);
        assert_eq!(NOVIFLOW_MAX_HOPS, 10);
    }

    #[test]
    fn encode_stops_at_the_8_bit_length() {
        // 1-word hops: 252 fit beside v1.0's 3 header words.
        let spec = IntStackSpec {
            version: IntVersion::V1_0,
            instructions: 0x8000,
            max_hops: 255,
            hops: vec![Hop { switch_id: Some(1), ..Hop::default() }; 300],
        };
        let p = DeviceProfile::spec();
        let mut out = Vec::new();
        spec.encode(PROTO_UDP, 0, &p, &mut out);
        assert_eq!(out.len(), 255 * 4);
        assert_eq!(out.len(), spec.wire_bytes(&p));
        assert_eq!(out[2], 255);
    }

    #[test]
    fn encode_inner_sets_lengths_and_dscp() {
        let p = DeviceProfile::noviflow();
        let spec = IntStackSpec::noviflow(&[Hop::default(); 2]);
        let mut out = Vec::new();
        encode_inner(&udp_flow(), InnerKind::Ethernet, &[100], Some(&spec), 10, &p, &mut out);
        // 18 (Ethernet + tag) + 20 + 8 + 12 + 48 + 10
        assert_eq!(out.len(), 116);
        assert_eq!(&out[12..16], &[0x81, 0x00, 0x00, 100]);
        assert_eq!(out[19], 0x17 << 2);
        assert_eq!(u16::from_be_bytes([out[20], out[21]]), 98, "IPv4 total length");
        assert_eq!(u16::from_be_bytes([out[42], out[43]]), 78, "UDP length");
    }
}
