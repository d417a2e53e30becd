//! A receiving application that reads only when it wakes (`read_latency`): Linux ACKs behind it
//! in stretches, and the transfer is done when the last byte is read, not when it arrives.
mod common;
use burstlab_sim::Time;
use burstlab_sim::scenario::{FlowSpec, Latency};
use common::*;

fn bulk(read_latency: Time) -> burstlab_sim::record::Output {
    bulk_with(Latency::Fixed(read_latency))
}

fn bulk_with(read_latency: Latency) -> burstlab_sim::record::Output {
    let f = FlowSpec { read_latency, ..flow("cubic", Some(20_000_000)) };
    run_on_1g_path(f, Time::from_secs(5))
}

#[test]
fn slow_reader_stretches_acks_and_still_delivers_every_byte() {
    let fast = bulk(Time::ZERO);
    let slow = bulk(Time::from_us(400));
    let (f, s) = (&fast.summary.flows[0], &slow.summary.flows[0]);
    // Conservation: every acknowledged byte was read (the engine also asserts it).
    assert_eq!(s.delivered_bytes, 20_000_000);
    // Immediate reads: an ACK per two full segments. Reads 400 us apart at 1 Gbit/s collect
    // about 50 KB, 34 segments, each: a few ACKs per read at most.
    let segs = 20_000_000 / 1448;
    assert!(f.acks * 3 > segs, "fast reader: {} ACKs for {segs} segments", f.acks);
    assert!(s.acks * 8 < segs, "slow reader: {} ACKs for {segs} segments", s.acks);
    // The last byte is read up to one wake-up after it arrived.
    let (ff, sf) = (f.fct_s.unwrap(), s.fct_s.unwrap());
    assert!(sf >= ff - 1e-4 && sf < ff + 0.02, "fct {ff} vs {sf}");
}

/// An application that starts reading 3 ms late: the sender fills the receive buffer's first
/// window and waits, so the transfer ends about that much later, every byte still read.
#[test]
fn a_reader_that_starts_late_holds_the_sender_for_as_long() {
    let prompt = bulk(Time::from_us(400));
    let late = run_on_1g_path(
        FlowSpec {
            read_latency: Latency::Fixed(Time::from_us(400)),
            first_read_latency: Some(Time::from_ms(3)),
            ..flow("cubic", Some(20_000_000))
        },
        Time::from_secs(5),
    );
    let (p, l) = (&prompt.summary.flows[0], &late.summary.flows[0]);
    assert_eq!(l.delivered_bytes, 20_000_000);
    let delay = l.fct_s.unwrap() - p.fct_s.unwrap();
    assert!((2.0e-3..3.6e-3).contains(&delay), "started 3 ms late, ended {delay} s later");
}

#[test]
fn slow_reader_is_deterministic() {
    let a = bulk(Time::from_us(250));
    let b = bulk(Time::from_us(250));
    assert_eq!(a.summary.flows[0].acks, b.summary.flows[0].acks);
    assert_eq!(a.summary.flows[0].fct_s, b.summary.flows[0].fct_s);
}

#[test]
fn exponential_read_latency_reads_as_often_on_average_and_stays_deterministic() {
    let fixed = bulk(Time::from_us(400));
    let exp = bulk_with(Latency::Exponential(Time::from_us(400)));
    let again = bulk_with(Latency::Exponential(Time::from_us(400)));
    let (f, e) = (&fixed.summary.flows[0], &exp.summary.flows[0]);
    assert_eq!(e.delivered_bytes, 20_000_000);
    assert_eq!((e.acks, e.fct_s), (again.summary.flows[0].acks, again.summary.flows[0].fct_s));
    // The same mean wake-up latency: a similar number of reads, hence of stretched ACKs (the
    // draws differ, so not the same number), and the same ACK-per-read regime as the fixed one.
    let segs = 20_000_000 / 1448;
    assert!(e.acks * 8 < segs, "{} ACKs for {segs} segments", e.acks);
    let ratio = e.acks as f64 / f.acks as f64;
    assert!((0.7..1.4).contains(&ratio), "exponential {} vs fixed {} ACKs", e.acks, f.acks);
    assert_ne!(e.acks, f.acks, "the latency is drawn, not fixed");
}

#[test]
fn measured_read_latencies_are_drawn_one_per_wake_up() {
    // One sample is a fixed latency; two around the same mean read about as often.
    let fixed = bulk(Time::from_us(400));
    let one = bulk_with(Latency::Samples(vec![Time::from_us(400)]));
    assert_eq!(
        (one.summary.flows[0].acks, one.summary.flows[0].fct_s),
        (fixed.summary.flows[0].acks, fixed.summary.flows[0].fct_s)
    );
    let two = bulk_with(Latency::Samples(vec![Time::from_us(200), Time::from_us(600)]));
    let ratio = two.summary.flows[0].acks as f64 / fixed.summary.flows[0].acks as f64;
    assert!(
        (0.7..1.4).contains(&ratio),
        "two samples {} vs fixed {} ACKs",
        two.summary.flows[0].acks,
        fixed.summary.flows[0].acks
    );
    assert_eq!(two.summary.flows[0].delivered_bytes, 20_000_000);
}
