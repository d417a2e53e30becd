//! The world keeps burst sources in the order they first send, not by number
//! (`World::bursts`): each source's row must still be its own, in source-number order, with
//! every datagram counted for the source that sent it.
use burstlab_sim::{run, scenario};

/// Two `[[burst]]` tables whose sources interleave in sending order: the second starts first
/// and sends twice as often with smaller datagrams; the bottleneck carries them all.
const TWO_TABLES: &str = r#"
name = "burst-order"
stop = "30ms"
[topology]
bottleneck_rate = "100Gbps"
rtt = "100us"
buffer = "4MiB"
[[burst]]
sources = 40
rate = "100Mbps"
start = "2ms"
duration = "10ms"
packet_size = 1500
[[burst]]
sources = 25
rate = "200Mbps"
start = "1ms"
duration = "10ms"
packet_size = 500
"#;

#[test]
fn each_source_keeps_its_own_row_and_counts() {
    let out = run(&scenario::load(TWO_TABLES, &[]).unwrap());
    let rows = &out.summary.flows;
    assert_eq!(rows.len(), 65);
    let drops: u64 = out.summary.ports.iter().map(|p| p.drops).sum();
    assert_eq!(drops, 0, "the bottleneck has room for every datagram");
    for (k, f) in rows.iter().enumerate() {
        assert_eq!(f.flow_id as usize, k, "rows in source-number order");
        assert_eq!(f.kind, "udp");
        let (start, size) = if k < 40 { (0.002, 1500) } else { (0.001, 500) };
        assert_eq!(f.start_s, start, "source {k}'s start is its table's");
        // 10 ms at 100 or 200 Mbit/s: 83.3 datagrams of 1500 bytes or 500 of 500 bytes, give
        // or take one for the phase and the clock offset.
        let sent = f.size_bytes / size;
        let expected = if k < 40 { 83 } else { 500 };
        assert!(f.size_bytes % size == 0 && sent.abs_diff(expected) <= 1, "source {k}: {sent}");
        // Every datagram reached the sink and was counted for the source that sent it.
        assert_eq!(f.delivered_bytes, f.size_bytes, "source {k}");
    }
    let srcs: std::collections::HashSet<_> = rows.iter().map(|f| f.src.clone()).collect();
    assert_eq!(srcs.len(), 65, "each source on its own host");
}
