//! A receiving host that answers the handshake late (`handshake_latency`): the SYN waits, the
//! sender's first RTT sample (and so its min RTT) includes the wait, and the transfer starts
//! that much later.
mod common;
use burstlab_sim::record::Column;
use burstlab_sim::scenario::{self, FlowSpec, Latency};
use burstlab_sim::{Time, run};
use common::*;

fn single(handshake: Latency) -> burstlab_sim::record::Output {
    let f = FlowSpec { handshake_latency: handshake, ..flow("cubic", Some(100_000)) };
    run_on_1g_path(f, Time::from_secs(1))
}

#[test]
fn a_late_answer_to_the_handshake_delays_the_whole_transfer_by_it() {
    let at_once = single(Latency::ZERO).summary.flows[0].fct_s.unwrap();
    let late = single(Latency::Fixed(Time::from_us(250))).summary.flows[0].fct_s.unwrap();
    // The data leaves 250 µs later. The sender sizes and defers its first skbs from its first
    // RTT sample (350 µs instead of 100 µs: `tcp_tso_autosize()`, `tcp_tso_should_defer()`),
    // so the rest moves by a few µs less: not an exact shift, but within 10 % of one.
    let shift = late - at_once;
    assert!((225e-6..=250e-6).contains(&shift), "{late} vs {at_once}: shift {shift}");
}

#[test]
fn one_sample_is_the_same_as_a_fixed_latency() {
    let fixed = single(Latency::Fixed(Time::from_us(80)));
    let drawn = single(Latency::Samples(vec![Time::from_us(80)]));
    assert_eq!(fixed.summary.flows[0].fct_s, drawn.summary.flows[0].fct_s);
    assert_eq!(fixed.summary.flows[0].acks, drawn.summary.flows[0].acks);
}

fn queries(handshake: &str, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let text = format!(
        r#"
name = "incast-handshake"
seed = {seed}
stop = "10s"
[topology]
bottleneck_rate = "1Gbps"
host_rate = "1Gbps"
rtt = "20us"
buffer = "128KB"
mtu = 1500
[[incast]]
senders = 8
query_size = "400KB"
queries = 5
[incast.tcp]
cca = "cubic"
handshake_latency = {handshake}
"#
    );
    let out = run(&scenario::load(&text, &[]).unwrap());
    let q = out.table("queries").unwrap();
    let (Some(Column::F64(at)), Some(Column::F64(qct))) =
        (q.column("request_s"), q.column("qct_s"))
    else {
        panic!("queries table without request_s/qct_s")
    };
    (at.clone(), qct.clone())
}

#[test]
fn incast_connections_draw_their_answers_and_the_first_query_waits_for_the_slowest() {
    let drawn = r#"["30us", "3ms"]"#;
    assert_eq!(queries(drawn, 1), queries(drawn, 1), "same seed, same run");
    // The first request goes once the connections are up: 10 ms, plus the slowest answer.
    let (at_once, _) = queries(r#""0s""#, 1);
    let (late, _) = queries(drawn, 1);
    assert!((at_once[0] - 0.010).abs() < 1e-9, "{}", at_once[0]);
    assert!((late[0] - 0.013).abs() < 1e-9, "{}", late[0]);
}
