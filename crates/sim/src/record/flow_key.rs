//! Addresses for a simulated network: every node gets an IPv4 address and every flow a port
//! pair, so simulated packets carry the 5-tuple a real capture or INT report would, and a
//! 5-tuple found by the detector maps back to a `flow_id`.
//!
//! The one place this mapping lives: the `int` table, the `flows` table and the INT report
//! export all call these functions.
//!
//! - node `n` (host or switch) is `10.0.0.0 + n + 1`, so node 0 is `10.0.0.1` and no node is
//!   the network address `10.0.0.0` (RFC 1918 §3 private block `10/8`);
//! - flow `f` (TCP flows first, then UDP burst sources, as in the `flows` table) sends from
//!   port `10000 + f` to port 5201 (iperf3's default, used for TCP and UDP alike); replies
//!   (ACKs) swap the pair.

use crate::packet::{FlowId, NodeId};

/// `10.0.0.0`: the private block every node's address is taken from (RFC 1918 §3).
pub const NODE_NET_IPV4: u32 = 0x0A00_0000;
/// First source port: flow `f` sends from `FLOW_PORT_BASE + f` (our convention; clear of the
/// well-known range and of iperf3's 5201).
pub const FLOW_PORT_BASE: u16 = 10_000;
/// Flows beyond this many wrap their source port; keys then stay unique per source host only.
pub const FLOW_PORTS: u32 = (u16::MAX - FLOW_PORT_BASE) as u32 + 1;
/// iperf3's default server port (`iperf3 --help`: "-p, --port # server port to listen on/connect
/// to", default 5201).
pub const IPERF3_PORT: u16 = 5201;
/// IP protocol numbers (IANA "Assigned Internet Protocol Numbers"; RFC 790).
pub const IPPROTO_TCP: u8 = 6;
pub const IPPROTO_UDP: u8 = 17;

/// The IPv4 address of node `n`, as a host-order `u32`.
#[inline]
pub fn node_ipv4(n: NodeId) -> u32 {
    NODE_NET_IPV4 + n + 1
}

/// Dotted-quad spelling of a host-order IPv4 address.
pub fn format_ipv4(a: u32) -> String {
    std::net::Ipv4Addr::from(a).to_string()
}

/// (source port, destination port) of flow `f`'s data direction.
#[inline]
pub fn flow_ports(f: FlowId) -> (u16, u16) {
    (FLOW_PORT_BASE + (f % FLOW_PORTS) as u16, IPERF3_PORT)
}

/// A packet's flow key as a switch would parse it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FiveTuple {
    pub src_ip: u32,
    pub dst_ip: u32,
    pub src_port: u16,
    pub dst_port: u16,
    pub protocol: u8,
}

impl FiveTuple {
    /// The key of a packet of flow `f` going from node `src` to node `dst`; `reply` is true for
    /// the receiver-to-sender direction (ACKs), which swaps the ports.
    #[inline]
    pub fn of(f: FlowId, udp: bool, src: NodeId, dst: NodeId, reply: bool) -> FiveTuple {
        let (sport, dport) = flow_ports(f);
        let (src_port, dst_port) = if reply { (dport, sport) } else { (sport, dport) };
        FiveTuple {
            src_ip: node_ipv4(src),
            dst_ip: node_ipv4(dst),
            src_port,
            dst_port,
            protocol: if udp { IPPROTO_UDP } else { IPPROTO_TCP },
        }
    }

    /// The flow a key belongs to, in either direction (exact for runs of at most
    /// [`FLOW_PORTS`] flows); `None` for a key these rules never produce.
    pub fn flow_id(&self) -> Option<FlowId> {
        let ours = |p: u16| p.checked_sub(FLOW_PORT_BASE).map(FlowId::from);
        match (self.src_port, self.dst_port) {
            (s, IPERF3_PORT) => ours(s),
            (IPERF3_PORT, d) => ours(d),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_zero_is_10_0_0_1() {
        assert_eq!(format_ipv4(node_ipv4(0)), "10.0.0.1");
        assert_eq!(format_ipv4(node_ipv4(254)), "10.0.0.255");
        assert_eq!(format_ipv4(node_ipv4(255)), "10.0.1.0");
    }

    #[test]
    fn constants_pin_the_convention() {
        assert_eq!(IPERF3_PORT, 5201);
        assert_eq!((IPPROTO_TCP, IPPROTO_UDP), (6, 17));
        assert_eq!(FLOW_PORT_BASE, 10_000);
        assert_eq!(FLOW_PORTS, 55_536);
    }

    #[test]
    fn data_and_reply_keys_map_back_to_the_flow() {
        for f in [0, 1, 7, 55_535] {
            let data = FiveTuple::of(f, false, 3, 4, false);
            assert_eq!(data.flow_id(), Some(f));
            assert_eq!((data.src_port, data.dst_port), (10_000 + f as u16, 5201));
            let ack = FiveTuple::of(f, false, 4, 3, true);
            assert_eq!(ack.flow_id(), Some(f));
            assert_eq!((ack.src_ip, ack.dst_ip), (data.dst_ip, data.src_ip));
            assert_eq!((ack.src_port, ack.dst_port), (data.dst_port, data.src_port));
        }
        assert_eq!(FiveTuple::of(2, true, 0, 1, false).protocol, IPPROTO_UDP);
    }

    #[test]
    fn flow_ports_wrap_past_the_port_space() {
        assert_eq!(flow_ports(FLOW_PORTS), flow_ports(0));
        assert_eq!(flow_ports(FLOW_PORTS - 1).0, u16::MAX);
    }

    #[test]
    fn foreign_keys_map_to_no_flow() {
        let k = FiveTuple { src_ip: 1, dst_ip: 2, src_port: 443, dst_port: 51000, protocol: 6 };
        assert_eq!(k.flow_id(), None);
        let k = FiveTuple { src_port: 80, dst_port: IPERF3_PORT, ..k };
        assert_eq!(k.flow_id(), None);
    }
}
