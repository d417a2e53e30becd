//! Packets: small fixed-size metadata, no payload bytes, allocated from a pool.
//!
//! A packet is addressed by a [`PacketId`] into the [`PacketPool`]; ports, links and queues move
//! ids, never the structs, and a freed slot is reused, so the steady state allocates nothing.

use crate::time::Time;

/// Index of a node (host or switch) in the topology.
pub type NodeId = u32;
/// Index of a flow in the scenario (TCP flows first, then burst sources).
pub type FlowId = u32;

/// IPv4 header without options (RFC 791 §3.1).
pub const IPV4_HEADER_BYTES: u32 = 20;
/// TCP header without options (RFC 9293 §3.1).
pub const TCP_HEADER_BYTES: u32 = 20;
/// TCP timestamps option as Linux sends it on every segment: NOP, NOP, kind 8 len 10
/// (RFC 7323 §3.2; `net/ipv4/tcp_output.c` `tcp_options_write()`), 12 bytes.
pub const TCP_TIMESTAMP_OPTION_BYTES: u32 = 12;
/// UDP header (RFC 768).
pub const UDP_HEADER_BYTES: u32 = 8;

/// [`Packet::hop`] of a packet with no step left to take.
pub const NO_HOP: u32 = u32::MAX;

/// What a packet carries. TCP control flags are folded into the kind the simulator acts on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Syn,
    SynAck,
    /// A TCP segment with payload (it also carries a cumulative ACK).
    Data,
    /// A pure TCP ACK.
    Ack,
    /// A UDP datagram of a burst source.
    Udp,
}

/// ECN codepoint in the IP header (RFC 3168 §5).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Ecn {
    #[default]
    NotEct,
    Ect0,
    Ect1,
    Ce,
}

/// Up to four SACK blocks, as many as fit in the TCP option space beside timestamps is three
/// (RFC 2018 §3); Linux sends at most `TCP_NUM_SACKS` = 4 without timestamps, 3 with them.
pub const MAX_SACK_BLOCKS: usize = 3;

/// A half-open byte range `[start, end)` of sequence space (64-bit, never wraps in a run).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SeqRange {
    pub start: u64,
    pub end: u64,
}

/// Laid out by hand (`repr(C)`): what a switch reads or writes of a packet (its route step,
/// size, arrival time, GSO position, kind, ECN and DSCP, flow) comes first, in 32 bytes, so a
/// hop through a switch touches one cache line of it, rarely two; what only the hosts read
/// follows. 144 bytes, no padding.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct Packet {
    // ---- read at every hop ----
    /// When the packet entered its current queue (for delay telemetry and sojourn checks).
    pub enqueued_at: Time,
    /// Its next step in the network's table of route steps (`net::topology::Network::hops`),
    /// [`NO_HOP`] before it is routed and after its last port.
    pub hop: u32,
    /// IP datagram length in bytes (headers + payload): what queues count.
    pub ip_bytes: u32,
    pub flow: FlowId,
    /// The GSO super-packet (`skb`) this segment was sent in: TCP hands the stack skbs of up
    /// to `tcp_tso_autosize()` segments, and a software path (veth, a Linux router) keeps them
    /// whole up to the qdisc. `gso_segs` segments in it, this one at `gso_index`, `gso_bytes`
    /// IP bytes in all. A lone segment is 1 / 0 / `ip_bytes`. Only a `tbf` port looks at it.
    pub gso_bytes: u32,
    pub gso_segs: u16,
    pub gso_index: u16,
    pub kind: Kind,
    pub ecn: Ecn,
    /// DSCP (RFC 2474), used by the queue classifier.
    pub dscp: u8,
    /// Retransmitted segment (for accounting only; the receiver never looks at it).
    pub retrans: bool,
    // ---- read by the hosts ----
    pub src: NodeId,
    pub dst: NodeId,
    /// TCP/UDP payload bytes.
    pub payload: u32,
    pub sack_len: u8,
    /// ECN-Echo flag (RFC 3168 §6.1.3).
    pub ece: bool,
    /// Congestion Window Reduced flag.
    pub cwr: bool,
    /// First payload byte (data), in 64-bit sequence space starting at 0 after the SYN.
    pub seq: u64,
    /// Cumulative acknowledgment: next byte expected (ACK and data). A UDP datagram has none,
    /// and carries here its source's position in the world's sources (`World::bursts`), so
    /// its sink counts it without looking its source up by flow id.
    pub ack: u64,
    /// Advertised receive window in bytes, already scaled.
    pub rwnd: u64,
    /// Timestamps option: TSval as the sender's time, TSecr echoes the peer's (RFC 7323 §3).
    pub ts_val: Time,
    pub ts_ecr: Time,
    /// Earliest departure time set by TCP pacing for an `fq` qdisc (`skb->tstamp`); zero = now.
    pub edt: Time,
    pub sack: [SeqRange; MAX_SACK_BLOCKS],
}

impl Packet {
    pub fn new(kind: Kind, flow: FlowId, src: NodeId, dst: NodeId, ip_bytes: u32) -> Packet {
        Packet {
            kind,
            flow,
            src,
            dst,
            ip_bytes,
            payload: 0,
            dscp: 0,
            ecn: Ecn::NotEct,
            seq: 0,
            ack: 0,
            rwnd: 0,
            sack: [SeqRange::default(); MAX_SACK_BLOCKS],
            sack_len: 0,
            ece: false,
            cwr: false,
            retrans: false,
            ts_val: Time::ZERO,
            ts_ecr: Time::ZERO,
            hop: NO_HOP,
            enqueued_at: Time::ZERO,
            edt: Time::ZERO,
            gso_segs: 1,
            gso_index: 0,
            gso_bytes: ip_bytes,
        }
    }

    #[inline]
    pub fn sack_blocks(&self) -> &[SeqRange] {
        &self.sack[..self.sack_len as usize]
    }
}

/// Handle of a packet in the pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PacketId(pub u32);

/// A slab of packets with a free list: `alloc` reuses freed slots before growing.
#[derive(Default)]
pub struct PacketPool {
    slots: Vec<Packet>,
    free: Vec<u32>,
    live: usize,
    peak: usize,
}

impl PacketPool {
    pub fn alloc(&mut self, p: Packet) -> PacketId {
        self.live += 1;
        self.peak = self.peak.max(self.live);
        if let Some(i) = self.free.pop() {
            self.slots[i as usize] = p;
            PacketId(i)
        } else {
            self.slots.push(p);
            PacketId((self.slots.len() - 1) as u32)
        }
    }

    #[inline]
    pub fn free(&mut self, id: PacketId) {
        self.live -= 1;
        self.free.push(id.0);
    }

    #[inline]
    pub fn get(&self, id: PacketId) -> &Packet {
        &self.slots[id.0 as usize]
    }

    #[inline]
    pub fn get_mut(&mut self, id: PacketId) -> &mut Packet {
        &mut self.slots[id.0 as usize]
    }

    /// Packets allocated and not yet freed.
    pub fn live(&self) -> usize {
        self.live
    }

    /// Most packets ever live at once.
    pub fn peak(&self) -> usize {
        self.peak
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_reuses_freed_slots() {
        let mut pool = PacketPool::default();
        let a = pool.alloc(Packet::new(Kind::Udp, 0, 0, 1, 100));
        pool.free(a);
        let b = pool.alloc(Packet::new(Kind::Udp, 1, 0, 1, 200));
        assert_eq!(a, b);
        assert_eq!(pool.get(b).ip_bytes, 200);
        assert_eq!(pool.live(), 1);
        assert_eq!(pool.peak(), 1);
    }

    #[test]
    fn what_a_switch_touches_sits_in_the_first_32_bytes() {
        use std::mem::offset_of;
        let hot = [
            offset_of!(Packet, enqueued_at) + 8,
            offset_of!(Packet, hop) + 4,
            offset_of!(Packet, ip_bytes) + 4,
            offset_of!(Packet, flow) + 4,
            offset_of!(Packet, gso_bytes) + 4,
            offset_of!(Packet, gso_segs) + 2,
            offset_of!(Packet, gso_index) + 2,
            offset_of!(Packet, kind) + 1,
            offset_of!(Packet, ecn) + 1,
            offset_of!(Packet, dscp) + 1,
        ];
        assert!(hot.iter().all(|&end| end <= 32), "{hot:?}");
        assert_eq!(std::mem::size_of::<Packet>(), 144, "padding crept in");
    }

    #[test]
    fn packet_metadata_stays_small() {
        // Pool memory scales with packets in flight (≈ 300 k at 100G × 209 ms with jumbo frames).
        assert!(std::mem::size_of::<Packet>() <= 160, "{}", std::mem::size_of::<Packet>());
    }
}
