//! BBR v1 in the full simulator: it finds the bottleneck rate, keeps the queue short, and dips
//! to 4 packets in PROBE_RTT about every 10 s (Linux `tcp_bbr.c`; ns-3/NeST show the same dips).
use burstlab_sim::record::Column;
use burstlab_sim::{run, scenario};

const TEXT: &str = r#"
name = "bbr"
stop = "25s"
interval = "50ms"
[topology]
bottleneck_rate = "100Mbps"
host_rate = "1Gbps"
rtt = "20ms"
buffer = "1MB"
mtu = 1500
[[flow]]
cca = "bbr"
tcp_rmem = "4096 131072 16777216"
tcp_wmem = "4096 131072 16777216"
"#;

#[test]
fn bbr_fills_the_link_and_probes_min_rtt_every_ten_seconds() {
    let out = run(&scenario::load(TEXT, &[]).unwrap());
    let iv = out.table("intervals").unwrap();
    let Some(Column::F64(t0)) = iv.column("t_start_s") else { panic!() };
    let Some(Column::F64(bps)) = iv.column("bits_per_second") else { panic!() };
    let Some(Column::U64(cwnd)) = iv.column("cwnd_bytes") else { panic!() };
    let Some(Column::U64(pacing)) = iv.column("pacing_rate_bps") else { panic!() };
    // Throughput: the link carries 100 Mbit/s of frames, 1448/1538 of it payload.
    let payload = 100e6 * 1448.0 / 1538.0;
    let busy: Vec<f64> = bps.iter().zip(t0).filter(|(_, t)| **t > 2.0).map(|(b, _)| *b).collect();
    let mean = busy.iter().sum::<f64>() / busy.len() as f64;
    assert!(mean > 0.9 * payload && mean < 1.01 * payload, "{mean}");
    // PROBE_RTT: cwnd at 4 packets in some interval near 10 s and near 20 s, not in between.
    let low = |from: f64, to: f64| {
        cwnd.iter().zip(t0).any(|(c, t)| *t >= from && *t < to && *c <= 4 * 1448)
    };
    assert!(low(9.5, 11.5), "no PROBE_RTT near 10 s: {cwnd:?}");
    assert!(low(19.5, 21.5), "no PROBE_RTT near 20 s");
    assert!(!low(12.0, 19.0), "PROBE_RTT between the 10 s marks");
    // BBR paces (it asks for internal pacing): the rate is near the bottleneck, not 2x cwnd/srtt.
    let p = pacing[pacing.len() / 2] as f64;
    assert!(p > 0.5 * 100e6 && p < 1.5 * 100e6, "pacing {p}");
    // A short queue: well under the 1 MB buffer, no loss.
    assert_eq!(out.summary.ports[0].drops, 0);
}
