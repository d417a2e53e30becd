//! CUBIC behind a host `fq` is a paced socket (`sk_pacing_status` = SK_PACING_FQ), so HyStart's
//! ACK-train test waits for a train as long as the whole delay_min (`hystart_update()` in
//! `tcp_cubic.c` halves the threshold only for SK_PACING_NONE). Paced at 200 % of cwnd/srtt,
//! a slow-start round's train lasts srtt/2 until the window reaches the path's BDP, so slow
//! start must run to the BDP; judging the paced train by the unpaced delay_min/2 threshold
//! ended it at about 60 segments and left CUBIC to climb for hundreds of milliseconds.
use burstlab_sim::{run, scenario};

const TEXT: &str = r#"
name = "fq-hystart"
stop = "5s"
interval = "100ms"
[topology]
bottleneck_rate = "10Gbps"
host_rate = "10Gbps"
rtt = "8ms"
buffer = "16MiB"
mtu = 9000
[[flow]]
cca = "cubic"
size = "200MB"
tcp_rmem = "4096 131072 67108864"
tcp_wmem = "4096 16384 67108864"
qdisc = "fq"
"#;

/// 10 Gbit/s × 8 ms.
const BDP_BYTES: f64 = 10e9 * 0.008 / 8.0;

#[test]
fn cubic_behind_fq_leaves_slow_start_at_the_bdp_not_before() {
    let out = run(&scenario::load(TEXT, &[]).unwrap());
    let f = &out.summary.flows[0];
    assert_eq!(f.retransmits, 0);
    // Slow start from 10 segments to the BDP takes log2(10 MB / 89 KB) ≈ 7 RTTs (56 ms); then
    // 200 MB at 10 Gbit/s take 160 ms, plus the handshake and the last ACK's RTT.
    let ideal = 0.008 + 7.0 * 0.008 + 200e6 * 8.0 / 10e9 + 0.008;
    let fct = f.fct_s.expect("the transfer completes");
    let max_cwnd = f.max_cwnd_bytes.expect("a TCP flow reports its largest cwnd");
    eprintln!("fct {fct} ideal {ideal} max_cwnd {max_cwnd}");
    assert!(max_cwnd as f64 >= BDP_BYTES, "max cwnd {max_cwnd} < BDP {BDP_BYTES}");
    assert!(fct < ideal * 1.25, "FCT {fct} s, ideal {ideal} s");
}
