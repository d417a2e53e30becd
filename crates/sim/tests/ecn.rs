//! ECN end to end: switches mark CE above K, receivers echo ECE, senders reduce once per window
//! (RFC 3168) — so an ECN flow keeps the queue near K instead of filling the buffer.
use burstlab_sim::{run, scenario};

const TEXT: &str = r#"
name = "ecn"
stop = "5s"
[topology]
bottleneck_rate = "1Gbps"
host_rate = "10Gbps"
rtt = "2ms"
buffer = "2MB"
mtu = 1500
ecn_threshold = "30KB"
[[flow]]
cca = "cubic"
size = "50MB"
ecn = true
"#;

#[test]
fn ecn_flow_keeps_the_queue_near_the_threshold_without_drops() {
    let out = run(&scenario::load(TEXT, &[]).unwrap());
    let port = &out.summary.ports[0];
    let f = &out.summary.flows[0];
    assert!(port.ecn_marks > 0);
    assert_eq!(port.drops, 0);
    assert_eq!(f.retransmits, 0);
    assert_eq!(f.delivered_bytes, 50_000_000);
    // Slow start overshoots once; after that the queue stays within a few windows of K.
    assert!(port.max_queue_bytes < 600_000, "max queue {}", port.max_queue_bytes);
    // 50 MB at 1 Gbit/s is 0.4 s. The 10G sender's TSO skbs (TSO deferral gathers up to a
    // third of cwnd, `tcp_tso_should_defer()`) arrive at line rate and cross K = 30 KB every
    // round, so CUBIC's window settles well below the BDP: 1.57 s, a quarter of the link —
    // the case for DCTCP and for pacing — yet never a drop.
    let fct = f.fct_s.unwrap();
    assert!((0.8..2.0).contains(&fct), "fct {fct}");
}

#[test]
fn without_ecn_the_same_flow_fills_the_buffer() {
    let out = run(&scenario::load(TEXT, &["flow[0].ecn=false".into()]).unwrap());
    let port = &out.summary.ports[0];
    assert_eq!(port.ecn_marks, 0);
    assert!(port.max_queue_bytes > 1_500_000, "max queue {}", port.max_queue_bytes);
}
