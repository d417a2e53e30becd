//! N-to-1 incast with persistent connections: the classic collapse to the 200 ms RTO floor
//! when synchronized responses overflow a shallow buffer, and its cure with `rto_min 5ms`
//! (Vasudevan et al., SIGCOMM 2009; issue 4's scenario pairs).
use burstlab_sim::record::Column;
use burstlab_sim::{run, scenario};

fn qcts(senders: u32, extra: &str) -> Vec<f64> {
    let text = format!(
        r#"
name = "incast"
stop = "30s"
[topology]
bottleneck_rate = "1Gbps"
host_rate = "1Gbps"
rtt = "100us"
buffer = "128KB"
mtu = 1500
[[incast]]
senders = {senders}
query_size = "1MB"
queries = 20
[incast.tcp]
cca = "cubic"
{extra}
"#
    );
    let out = run(&scenario::load(&text, &[]).unwrap());
    let q = out.table("queries").unwrap();
    let Some(Column::F64(qct)) = q.column("qct_s") else { panic!() };
    assert_eq!(qct.len(), 20, "every query completes");
    qct.clone()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[test]
fn incast_one_sender_takes_the_transfer_time() {
    // 1 MB at 1 Gbit/s (1448 payload bytes per 1538 on the wire) ≈ 8.5 ms, plus the request.
    let m = median(qcts(1, ""));
    assert!(m > 0.0085 && m < 0.012, "median QCT {m}");
}

#[test]
fn incast_collapses_to_the_rto_floor_and_rto_min_5ms_cures_it() {
    let slow = qcts(32, "");
    let stalled = slow.iter().filter(|q| **q > 0.1).count();
    assert!(stalled >= 2, "expected RTO stalls with 32 senders: {slow:?}");
    assert!(slow.iter().any(|q| *q > 0.2), "a stall lasts at least the 200 ms RTO floor");
    let fast = qcts(32, "rto_min = \"5ms\"\nquickack = true");
    assert!(fast.iter().all(|q| *q < 0.1), "no 100 ms stalls with rto_min 5ms: {fast:?}");
}

/// QCTs of `queries` tiny queries (4 senders × 1000 B, no queueing), with `serve_time`.
fn tiny_qcts(serve_time: &str) -> Vec<f64> {
    let text = format!(
        r#"
name = "incast-serve"
stop = "10s"
[topology]
bottleneck_rate = "1Gbps"
host_rate = "1Gbps"
rtt = "100us"
buffer = "1MB"
mtu = 1500
[[incast]]
senders = 4
query_size = "4000B"
queries = 5
serve_time = "{serve_time}"
one_sender_host = true
[incast.tcp]
cca = "cubic"
"#
    );
    let out = run(&scenario::load(&text, &[]).unwrap());
    let q = out.table("queries").unwrap();
    let Some(Column::F64(qct)) = q.column("qct_s") else { panic!() };
    qct.clone()
}

#[test]
fn incast_serve_time_starts_the_responses_one_after_another() {
    // The 4th response starts 3 × 1 ms after the request, so every query ends 3 ms later
    // than with all four written at once — less the ~26 µs the 4th response then waited
    // behind the other three at the sender's 1G NIC.
    let at_once = tiny_qcts("0s");
    let served = tiny_qcts("1ms");
    for (a, b) in at_once.iter().zip(&served) {
        assert!((0.00295..=0.003).contains(&(b - a)), "{a} vs {b}");
    }
}
