//! Receive batching (`rx_coalesce`): the receiving host hands data segments to TCP in batches,
//! the first of a batch waiting the whole delay, as NIC interrupt coalescing or a busy CPU's
//! softirq does. Data is late by at most that much, nothing is lost, and the ACK clock slows
//! only where the window is small against the delay.
mod common;
use burstlab_sim::Time;
use burstlab_sim::scenario::{FlowSpec, Latency};
use common::*;

fn single(size: u64, coalesce: Latency) -> burstlab_sim::record::FlowSummary {
    let f = FlowSpec { rx_coalesce: coalesce, ..flow("cubic", Some(size)) };
    run_on_1g_path(f, Time::from_secs(5)).summary.flows.remove(0)
}

#[test]
fn a_lone_segment_is_late_by_the_whole_delay() {
    // One segment: it reaches an idle receive path, waits 300 µs alone, and its ACK leaves
    // then. The handshake is not batched (only data is).
    let at_once = single(1000, Latency::ZERO);
    let batched = single(1000, Latency::Fixed(Time::from_us(300)));
    let shift = batched.fct_s.unwrap() - at_once.fct_s.unwrap();
    assert!((shift - 300e-6).abs() < 1e-9, "shift {shift}");
    assert_eq!(batched.delivered_bytes, 1000);
}

#[test]
fn a_bulk_flow_keeps_every_byte_and_the_link_rate() {
    // 5 MB through 1 Gbit/s with a 100 µs path: the window (6 MiB of tcp_rmem) covers the
    // extra 200 µs per round trip many times over, so batching costs only what it adds to the
    // first round trips, not the rate.
    let size = 5_000_000;
    let at_once = single(size, Latency::ZERO);
    let batched = single(size, Latency::Fixed(Time::from_us(200)));
    assert_eq!(batched.delivered_bytes, size);
    let (a, b) = (at_once.fct_s.unwrap(), batched.fct_s.unwrap());
    assert!(b > a, "batching cannot make it faster: {b} vs {a}");
    assert!(b < a * 1.05, "{b} vs {a}");
}

#[test]
fn one_sample_is_the_same_as_a_fixed_delay() {
    let fixed = single(300_000, Latency::Fixed(Time::from_us(150)));
    let drawn = single(300_000, Latency::Samples(vec![Time::from_us(150)]));
    assert_eq!(fixed.fct_s, drawn.fct_s);
    assert_eq!(fixed.acks, drawn.acks);
}
