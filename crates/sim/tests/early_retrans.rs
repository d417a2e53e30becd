//! `net.ipv4.tcp_early_retrans` as a host key: Linux's default 3 arms the tail loss probe,
//! 0 (a host before TLP, Linux < 3.10) leaves a tail loss to the RTO
//! (`tcp_schedule_loss_probe()`, `net/ipv4/tcp_output.c`).

use burstlab_sim::Time;
use burstlab_sim::packet::{Kind, Packet, SeqRange};
use burstlab_sim::scenario::{FlowSpec, WindowModel};
use burstlab_sim::tcp::SYN_BYTES;
use burstlab_sim::tcp::sender::{TcpSender, TimerKind};

const MSS: u64 = 1448;

/// A sender of ten segments with `tcp_early_retrans = early_retrans`, past its handshake at
/// 10 ms (RTT sample 10 ms), its ten segments sent.
fn sender(early_retrans: u8) -> TcpSender {
    let spec = FlowSpec {
        size_bytes: Some(10 * MSS),
        window_model: WindowModel::AdvWinScale(1),
        tcp_early_retrans: early_retrans,
        ..FlowSpec::linux_default("reno")
    };
    let mut s = TcpSender::new(0, 0, 1, &spec, 1500);
    let mut out = Vec::new();
    s.open(Time::ZERO, &mut out);
    let mut sa = Packet::new(Kind::SynAck, 0, 1, 0, SYN_BYTES);
    sa.rwnd = 65_535;
    s.on_packet(Time::from_ms(10), &sa, &mut out);
    s
}

fn ack(ack: u64, sack: &[SeqRange]) -> Packet {
    let mut p = Packet::new(Kind::Ack, 0, 1, 0, 52);
    p.ack = ack;
    p.rwnd = 1 << 20;
    for (i, b) in sack.iter().enumerate() {
        p.sack[i] = *b;
    }
    p.sack_len = sack.len() as u8;
    p
}

/// [`sender`] whose segments 0-7 are acknowledged at 20 ms: 8 and 9, the transfer's tail, are
/// lost.
fn tail_lost(early_retrans: u8) -> (TcpSender, Vec<Packet>) {
    let mut s = sender(early_retrans);
    let mut out = Vec::new();
    s.on_packet(Time::from_ms(20), &ack(8 * MSS, &[]), &mut out);
    (s, out)
}

/// The last retransmission in `out`, as a segment number.
fn last_resent(out: &[Packet]) -> Option<u64> {
    out.iter().rev().find(|p| p.retrans).map(|p| p.seq / MSS)
}

#[test]
fn tail_loss_at_3_is_recovered_by_the_probe_without_an_rto() {
    let (mut s, mut out) = tail_lost(3);
    assert_eq!(s.timer_kind(), Some(TimerKind::Tlp));
    let pto = s.timer_deadline().unwrap();
    // 2·SRTT + 2 ms with two packets out, far before the 200 ms RTO floor.
    assert!(pto < Time::from_ms(20 + 200), "probe at {pto:?}");
    s.on_timer(pto, &mut out);
    assert_eq!(s.stats.loss_probes, 1);
    assert_eq!(last_resent(&out), Some(9), "the probe resends the last segment");
    // The probe's SACK reveals 8 lost: RACK resends it at once.
    let sacked = SeqRange { start: 9 * MSS, end: 10 * MSS };
    s.on_packet(pto + Time::from_ms(10), &ack(8 * MSS, &[sacked]), &mut out);
    assert_eq!(last_resent(&out), Some(8));
    s.on_packet(pto + Time::from_ms(20), &ack(10 * MSS, &[]), &mut out);
    assert_eq!(s.stats.timeouts, 0);
    assert!(s.stats.done_at.is_some_and(|t| t < Time::from_ms(20 + 200)));
}

#[test]
fn tail_loss_at_0_waits_for_the_rto() {
    let (mut s, mut out) = tail_lost(0);
    assert_eq!(s.timer_kind(), Some(TimerKind::Rto));
    let rto = s.timer_deadline().unwrap();
    assert!(rto >= Time::from_ms(20 + 200), "RTO at {rto:?}, before the 200 ms floor");
    s.on_timer(rto, &mut out);
    assert_eq!((s.stats.loss_probes, s.stats.timeouts), (0, 1));
    assert_eq!(last_resent(&out), Some(8), "the RTO resends the head");
}

#[test]
fn tail_loss_at_1_2_4_probes_as_linux_does() {
    // `tcp_schedule_loss_probe()`: `early_retrans != 3 && early_retrans != 4` returns false.
    for (v, probes) in [(1, false), (2, false), (4, true)] {
        let armed = tail_lost(v).0.timer_kind() == Some(TimerKind::Tlp);
        assert_eq!(armed, probes, "tcp_early_retrans = {v}");
    }
}
