//! A reader that holds the socket before each read ends (`read_hold`): segments that arrive
//! meanwhile wait in the backlog and are processed when the read lets go, as one skb with one
//! ACK decision (`tcp_add_backlog()`, `__release_sock()`, `tcp_backlog_ack_defer`). Nothing is
//! lost or read out of order, and the receiver ACKs less.
mod common;
use burstlab_sim::Time;
use burstlab_sim::record::FlowSummary;
use burstlab_sim::scenario::{FlowSpec, Latency};
use common::*;

const SIZE: u64 = 20_000_000;
const READ_LATENCY: Time = Time::from_us(300);

fn bulk(hold: Latency) -> FlowSummary {
    let f = FlowSpec {
        read_latency: Latency::Fixed(READ_LATENCY),
        read_hold: hold,
        ..flow("cubic", Some(SIZE))
    };
    run_on_1g_path(f, Time::from_secs(5)).summary.flows.remove(0)
}

#[test]
fn a_held_socket_delivers_every_byte_with_fewer_acks() {
    let free = bulk(Latency::ZERO);
    let held = bulk(Latency::Fixed(Time::from_us(150)));
    assert_eq!(held.delivered_bytes, SIZE);
    assert!(held.acks < free.acks, "held {} ACKs, free {}", held.acks, free.acks);
}

#[test]
fn a_hold_as_long_as_the_wait_leaves_about_one_ack_per_read_and_its_backlog() {
    // Held from the moment a read is due: every segment after the one that woke the reader
    // waits for the read, so each read brings at most the backlog's ACK and its own (and the
    // delayed-ACK timer cannot fire in 300 µs). Reads are 300 µs apart at most as often as the
    // transfer lasts.
    let held = bulk(Latency::Fixed(Time::from_ms(10)));
    assert_eq!(held.delivered_bytes, SIZE);
    let reads = (held.fct_s.unwrap() / READ_LATENCY.as_secs_f64()).ceil() as u64;
    assert!(held.acks <= 2 * reads + 20, "{} ACKs for at most {reads} reads", held.acks);
}

#[test]
fn no_hold_is_the_reader_without_one() {
    let a = bulk(Latency::ZERO);
    let b = bulk(Latency::Samples(vec![Time::ZERO]));
    assert_eq!((a.acks, a.fct_s, a.retransmits), (b.acks, b.fct_s, b.retransmits));
}

#[test]
fn holds_drawn_from_samples_are_deterministic() {
    let holds = || Latency::Samples(vec![Time::from_us(20), Time::from_us(600)]);
    let (a, b) = (bulk(holds()), bulk(holds()));
    assert_eq!((a.acks, a.fct_s, a.retransmits), (b.acks, b.fct_s, b.retransmits));
}
