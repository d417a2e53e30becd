//! Marks TCP retransmissions and duplicate ACKs in a capture, per flow direction.
//!
//! Retransmission: a segment that occupies sequence space (payload, SYN or FIN) starting before
//! the highest sequence number this direction has already sent. Duplicate ACK: RFC 5681 §2's
//! definition, checked from the wire: (a) the peer has unacknowledged data, (b) no data,
//! (c) neither SYN nor FIN, (d) the same acknowledgment number as the previous ACK of this
//! direction, (e) the same advertised window.

use super::packet::{L4, PacketRecord, TcpFlags};
use crate::model::FlowKey;
use rustc_hash::FxHashMap;

/// What a segment is, as far as loss recovery goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TcpMark {
    None,
    /// It re-sends sequence space this direction already sent.
    Retransmission,
    /// The `nth` consecutive duplicate of the previous ACK (3 triggers fast retransmit,
    /// RFC 5681 §3.2).
    DupAck {
        nth: u32,
    },
}

/// Per-direction state.
#[derive(Clone, Copy, Debug)]
struct Direction {
    /// One past the highest sequence number sent so far (Linux's `snd_nxt` as seen on the wire).
    high_end: u32,
    last_ack: Option<(u32, u16)>,
    dup_acks: u32,
}

/// Marks segments of every TCP flow it is shown, in capture order.
#[derive(Debug, Default)]
pub struct TcpMarker {
    dirs: FxHashMap<FlowKey, Direction>,
}

/// `a` is before `b` in sequence space: `include/net/tcp.h before()`, signed 32-bit difference,
/// so comparisons hold across the 2^32 wrap.
fn before(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

fn reverse(f: &FlowKey) -> FlowKey {
    FlowKey { src: f.dst, dst: f.src, sport: f.dport, dport: f.sport, proto: f.proto }
}

impl TcpMarker {
    pub fn new() -> Self {
        TcpMarker::default()
    }

    /// Classifies `rec` and updates its direction's state. Non-TCP records are `None`.
    pub fn observe(&mut self, rec: &PacketRecord) -> TcpMark {
        let (Some(flow), L4::Tcp { seq, ack, flags, window, payload_len }) = (&rec.flow, &rec.l4)
        else {
            return TcpMark::None;
        };
        let (seq, ack, flags, window) = (*seq, *ack, *flags, *window);
        let seg_len = payload_len
            .wrapping_add(u32::from(flags.has(TcpFlags::SYN)))
            .wrapping_add(u32::from(flags.has(TcpFlags::FIN)));
        let seg_end = seq.wrapping_add(seg_len);
        // (a): unknown when the other direction was never seen (a one-sided capture); then
        // the ACK stream alone decides.
        let peer_outstanding =
            self.dirs.get(&reverse(flow)).is_none_or(|p| before(ack, p.high_end));
        let d = self.dirs.entry(*flow).or_insert(Direction {
            high_end: seq,
            last_ack: None,
            dup_acks: 0,
        });
        if flags.has(TcpFlags::RST) {
            return TcpMark::None;
        }
        let mut mark = TcpMark::None;
        if seg_len > 0 {
            if before(seq, d.high_end) {
                mark = TcpMark::Retransmission;
            }
            if before(d.high_end, seg_end) {
                d.high_end = seg_end;
            }
        }
        if flags.has(TcpFlags::ACK) {
            let same = d.last_ack == Some((ack, window));
            if seg_len == 0 && same && peer_outstanding {
                d.dup_acks += 1;
                mark = TcpMark::DupAck { nth: d.dup_acks };
            } else if !same {
                d.dup_acks = 0;
            }
            d.last_ack = Some((ack, window));
        }
        mark
    }

    /// Flow directions tracked so far.
    pub fn directions(&self) -> usize {
        self.dirs.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{IpAddr, Ipv4Addr};

    const A: [u8; 4] = [10, 0, 0, 1];
    const B: [u8; 4] = [10, 0, 0, 2];

    /// A TCP record from `from` to the other host.
    fn seg(
        from: [u8; 4],
        seq: u32,
        ack: u32,
        flags: u8,
        window: u16,
        payload_len: u32,
    ) -> PacketRecord {
        let to = if from == A { B } else { A };
        let (sport, dport) = if from == A { (5001, 80) } else { (80, 5001) };
        PacketRecord {
            ts_ns: 0,
            interface: 0,
            wire_len: 54 + payload_len,
            flow: Some(FlowKey {
                src: IpAddr::V4(Ipv4Addr::from(from)),
                dst: IpAddr::V4(Ipv4Addr::from(to)),
                sport,
                dport,
                proto: 6,
            }),
            ip_id: None,
            l4: L4::Tcp { seq, ack, flags: TcpFlags(flags), window, payload_len },
            fingerprint: 0,
        }
    }

    const ACK: u8 = TcpFlags::ACK;

    // ---- retransmissions ----

    #[test]
    fn established_resent_segment_is_a_retransmission() {
        let mut m = TcpMarker::new();
        let marks: Vec<_> = [
            seg(A, 1000, 1, ACK, 100, 1000),
            seg(A, 2000, 1, ACK, 100, 1000),
            seg(A, 3000, 1, ACK, 100, 1000),
            seg(A, 2000, 1, ACK, 100, 1000), // resent
            seg(A, 4000, 1, ACK, 100, 1000),
            seg(A, 4500, 1, ACK, 100, 1000), // half old, half new: still a re-send
        ]
        .iter()
        .map(|s| m.observe(s))
        .collect();
        use TcpMark::{None as N, Retransmission as R};
        assert_eq!(marks, vec![N, N, N, R, N, R]);
    }

    #[test]
    fn syn_sent_repeated_syn_is_a_retransmission() {
        let mut m = TcpMarker::new();
        assert_eq!(m.observe(&seg(A, 7, 0, TcpFlags::SYN, 100, 0)), TcpMark::None);
        assert_eq!(m.observe(&seg(A, 7, 0, TcpFlags::SYN, 100, 0)), TcpMark::Retransmission);
        // The first data byte follows the SYN's sequence number: new data.
        assert_eq!(m.observe(&seg(A, 8, 1, ACK, 100, 10)), TcpMark::None);
    }

    #[test]
    fn established_sequence_wrap_is_not_a_retransmission() {
        let mut m = TcpMarker::new();
        let start = u32::MAX - 1499;
        assert_eq!(m.observe(&seg(A, start, 1, ACK, 100, 1000)), TcpMark::None);
        assert_eq!(m.observe(&seg(A, start.wrapping_add(1000), 1, ACK, 100, 1000)), TcpMark::None);
        assert_eq!(m.observe(&seg(A, 500, 1, ACK, 100, 1000)), TcpMark::None);
        assert_eq!(
            m.observe(&seg(A, start.wrapping_add(1000), 1, ACK, 100, 1000)),
            TcpMark::Retransmission
        );
        assert!(before(u32::MAX, 0) && !before(0, u32::MAX));
    }

    // ---- duplicate ACKs ----

    #[test]
    fn established_three_dup_acks_are_numbered() {
        let mut m = TcpMarker::new();
        m.observe(&seg(A, 1000, 1, ACK, 100, 1000));
        m.observe(&seg(A, 2000, 1, ACK, 100, 1000));
        m.observe(&seg(A, 3000, 1, ACK, 100, 1000));
        m.observe(&seg(A, 4000, 1, ACK, 100, 1000));
        assert_eq!(m.observe(&seg(B, 1, 2000, ACK, 500, 0)), TcpMark::None);
        let dups: Vec<_> = (0..3).map(|_| m.observe(&seg(B, 1, 2000, ACK, 500, 0))).collect();
        assert_eq!(
            dups,
            vec![
                TcpMark::DupAck { nth: 1 },
                TcpMark::DupAck { nth: 2 },
                TcpMark::DupAck { nth: 3 }
            ]
        );
        assert_eq!(m.observe(&seg(A, 2000, 1, ACK, 100, 1000)), TcpMark::Retransmission);
        // The ACK advances: the count starts again.
        assert_eq!(m.observe(&seg(B, 1, 5000, ACK, 500, 0)), TcpMark::None);
        assert_eq!(m.directions(), 2);
    }

    #[test]
    fn established_window_update_is_not_a_dup_ack() {
        let mut m = TcpMarker::new();
        m.observe(&seg(A, 1000, 1, ACK, 100, 5000));
        m.observe(&seg(B, 1, 2000, ACK, 500, 0));
        // RFC 5681 §2 (e): the window changed.
        assert_eq!(m.observe(&seg(B, 1, 2000, ACK, 600, 0)), TcpMark::None);
        // (b): data with the same ACK is not a duplicate ACK.
        assert_eq!(m.observe(&seg(B, 1, 2000, ACK, 600, 10)), TcpMark::None);
        assert_eq!(m.observe(&seg(B, 11, 2000, ACK, 600, 0)), TcpMark::DupAck { nth: 1 });
    }

    #[test]
    fn established_nothing_outstanding_means_no_dup_ack() {
        let mut m = TcpMarker::new();
        m.observe(&seg(A, 1000, 1, ACK, 100, 1000));
        m.observe(&seg(B, 1, 2000, ACK, 500, 0));
        // RFC 5681 §2 (a): everything A sent is acknowledged; a repeat is a keepalive answer.
        assert_eq!(m.observe(&seg(B, 1, 2000, ACK, 500, 0)), TcpMark::None);
    }

    #[test]
    fn one_sided_capture_still_counts_dup_acks() {
        let mut m = TcpMarker::new();
        m.observe(&seg(B, 1, 2000, ACK, 500, 0));
        assert_eq!(m.observe(&seg(B, 1, 2000, ACK, 500, 0)), TcpMark::DupAck { nth: 1 });
        let mut rst = seg(B, 1, 2000, ACK | TcpFlags::RST, 500, 0);
        assert_eq!(m.observe(&rst), TcpMark::None);
        rst.l4 = L4::Other;
        assert_eq!(m.observe(&rst), TcpMark::None);
    }
}
