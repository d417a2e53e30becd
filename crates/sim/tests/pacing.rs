//! Pacing where Linux paces: `SO_MAX_PACING_RATE` turns on internal pacing and caps the rate;
//! unpaced CUBIC bursts at line rate.
use burstlab_sim::record::Column;
use burstlab_sim::{run, scenario};

const TEXT: &str = r#"
name = "pacing"
stop = "5s"
interval = "100ms"
[topology]
bottleneck_rate = "10Gbps"
host_rate = "10Gbps"
rtt = "1ms"
buffer = "16MB"
mtu = 1500
[[flow]]
cca = "cubic"
size = "100MB"
tcp_rmem = "4096 131072 33554432"
tcp_wmem = "4096 131072 33554432"
max_pacing_rate = "2Gbps"
"#;

#[test]
fn max_pacing_rate_caps_the_flow_at_that_rate() {
    let out = run(&scenario::load(TEXT, &[]).unwrap());
    let iv = out.table("intervals").unwrap();
    let Some(Column::F64(bps)) = iv.column("bits_per_second") else { panic!() };
    // Whole intervals after the first: payload at the pacing rate (2 Gbit/s of payload bytes).
    let steady: Vec<f64> = bps[1..bps.len() - 1].to_vec();
    for b in &steady {
        assert!((b / 2e9 - 1.0).abs() < 0.03, "{b}");
    }
    // Paced trains never build a queue at an uncongested 10G bottleneck.
    assert!(
        out.summary.ports[0].max_queue_bytes < 100_000,
        "{}",
        out.summary.ports[0].max_queue_bytes
    );
}

#[test]
fn fq_maxrate_above_the_32_bit_field_is_rejected_with_the_reason() {
    let text =
        TEXT.replace("max_pacing_rate = \"2Gbps\"", "qdisc = \"fq\"\nfq_maxrate = \"40Gbps\"");
    let err = scenario::load(&text, &[]).unwrap_err().to_string();
    assert!(err.contains("scenario.flow[0].fq_maxrate"), "{err}");
    assert!(err.contains("32-bit"), "{err}");
    assert!(err.contains("max_pacing_rate"), "{err}");
    let ok = TEXT.replace("max_pacing_rate = \"2Gbps\"", "qdisc = \"fq\"\nfq_maxrate = \"34Gbps\"");
    assert!(scenario::load(&ok, &[]).is_ok());
}

#[test]
fn fq_settings_without_fq_are_an_error() {
    let text = TEXT.replace("max_pacing_rate = \"2Gbps\"", "fq_maxrate = \"1Gbps\"");
    let err = scenario::load(&text, &[]).unwrap_err().to_string();
    assert!(err.contains("fq_maxrate") && err.contains("qdisc = \"fq\""), "{err}");
}

#[test]
fn fq_maxrate_paces_the_flow_at_its_cap() {
    let text =
        TEXT.replace("max_pacing_rate = \"2Gbps\"", "qdisc = \"fq\"\nfq_maxrate = \"1Gbps\"");
    let out = run(&scenario::load(&text, &[]).unwrap());
    let iv = out.table("intervals").unwrap();
    let Some(Column::F64(bps)) = iv.column("bits_per_second") else { panic!() };
    // fq charges 14 + 1500 bytes per 1448-byte segment against its 125 MB/s.
    let expect = 1e9 * 1448.0 / 1514.0;
    for b in &bps[2..bps.len() - 1] {
        assert!((b / expect - 1.0).abs() < 0.03, "{b} vs {expect}");
    }
    assert_eq!(out.summary.flows[0].retransmits, 0);
    assert!(out.summary.ports[0].max_queue_bytes < 100_000);
}

#[test]
fn a_run_cut_by_stop_with_packets_in_a_host_fq_accounts_for_them() {
    // The conservation check counts packets held in host fq queues too.
    let text = TEXT
        .replace("max_pacing_rate = \"2Gbps\"", "qdisc = \"fq\"\nfq_maxrate = \"1Gbps\"")
        .replace("stop = \"5s\"", "stop = \"50ms\"");
    let out = run(&scenario::load(&text, &[]).unwrap());
    assert!(out.summary.flows[0].fct_s.is_none());
}

#[test]
fn tsq_keeps_a_fast_flow_under_the_fq_flow_limit() {
    // BBR at 100 Gbit/s with jumbo frames through the host's fq (`flow_limit` 100 skbs). TSQ
    // holds at most 1 MiB below TCP, and the kernel frees a GSO skb (returning its bytes) only
    // after its last segment, so a throttled sender wakes to room for a whole skb: ~16 skbs
    // of 64 KiB sit in fq, never 100. Returning bytes per segment made 1-segment skbs, 117 of
    // them in 1 MiB, and flow_limit dropped hundreds of thousands of packets.
    let text = TEXT.replace("max_pacing_rate = \"2Gbps\"", "qdisc = \"fq\"");
    let sets = [
        "topology.bottleneck_rate=100Gbps",
        "topology.host_rate=100Gbps",
        "topology.rtt=20ms",
        "topology.buffer=64MiB",
        "topology.mtu=9000",
        "flow[0].cca=bbr",
        "flow[0].size=4GB",
        "flow[0].tcp_rmem=4096 131072 1073741824",
        "flow[0].rmem_max=2147483647",
        "flow[0].tcp_wmem=4096 16384 1073741824",
    ];
    let out = run(&scenario::load(&text, &sets.map(String::from)).unwrap());
    let host = out.summary.ports.iter().find(|p| p.node == "s0").map_or(0, |p| p.drops);
    assert_eq!(host, 0, "fq drops at the sender");
    assert_eq!(out.summary.flows[0].retransmits, 0);
    // 4 GB at ~100 Gbit/s after a BBR startup over 20 ms: well under a second.
    assert!(out.summary.flows[0].fct_s.unwrap() < 1.0, "{:?}", out.summary.flows[0].fct_s);
}

#[test]
fn a_full_fq_flow_holds_the_sender_back_instead_of_dropping() {
    // fq refuses an skb beyond `flow_limit`; Linux then keeps it in TCP and sends it later
    // (a local drop is not a loss). With a limit of 2 skbs the sender must wait, not lose.
    let text = TEXT.replace("max_pacing_rate = \"2Gbps\"", "qdisc = \"fq\"\nfq_flow_limit = 2");
    let out = run(&scenario::load(&text, &[]).unwrap());
    let host = out.summary.ports.iter().find(|p| p.node == "s0").map_or(0, |p| p.drops);
    assert_eq!(host, 0, "fq drops at the sender");
    assert_eq!(out.summary.flows[0].retransmits, 0);
    // 100 MB at 10 Gbit/s is 0.08 s of payload; two skbs in fq are still enough to keep
    // the NIC busy.
    assert!(out.summary.flows[0].fct_s.unwrap() < 0.2, "{:?}", out.summary.flows[0].fct_s);
}

/// Payload rate (bit/s, whole intervals after the first) of a flow paced at 100 Mbit/s over a
/// 20 µs path in skbs of 6 segments (`gso_max_size` 9000 B), whose host runs the pacing timer
/// `late` after each departure time.
fn paced_rate_with_late_timer(late: &str) -> f64 {
    let text = format!(
        r#"
name = "late-pacing"
stop = "3s"
interval = "100ms"
[topology]
bottleneck_rate = "10Gbps"
rtt = "20us"
buffer = "16MB"
mtu = 1500
[[flow]]
cca = "cubic"
size = "20MB"
max_pacing_rate = "100Mbps"
gso_max_size = "9000B"
pacing_latency = "{late}"
"#
    );
    let out = run(&scenario::load(&text, &[]).unwrap());
    let iv = out.table("intervals").unwrap();
    let Some(Column::F64(bps)) = iv.column("bits_per_second") else { panic!() };
    let steady = &bps[1..bps.len() - 1];
    steady.iter().sum::<f64>() / steady.len() as f64
}

#[test]
fn a_late_pacing_timer_is_credited_up_to_half_an_skb() {
    // Over a 20 µs path every ACK comes before the next departure time, so the timer sends
    // each skb: 6 segments, 8,688 B, 0.695 ms at the rate. `tcp_update_skb_after_send()` takes
    // the lateness off the next gap, up to half of it: 300 µs late costs nothing.
    let skb = 8688.0 * 8.0 / 100e6;
    let on_time = paced_rate_with_late_timer("0us");
    assert!((on_time / 100e6 - 1.0).abs() < 0.01, "{on_time}");
    let credited = paced_rate_with_late_timer("300us");
    assert!((credited / on_time - 1.0).abs() < 0.01, "{credited} vs {on_time}");
    // 1.5 ms late: each skb leaves 1.5 ms and half its own time after the one before.
    let late = paced_rate_with_late_timer("1500us");
    let expect = skb / (1.5e-3 + skb / 2.0);
    assert!((late / on_time / expect - 1.0).abs() < 0.01, "{late} vs {on_time}: {expect}");
}
