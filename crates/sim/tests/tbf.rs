//! The `tbf` bottleneck (Linux `sch_tbf` with its bfifo): rate, burst and byte limit.
use burstlab_sim::record::Column;
use burstlab_sim::{run, scenario};

const TEXT: &str = r#"
name = "tbf"
stop = "4s"
interval = "250ms"
[topology]
bottleneck_rate = "10Gbps"
rtt = "1ms"
mtu = 1500
tbf_rate = "1Gbps"
tbf_burst = "16KB"
tbf_limit = "128KB"
[[flow]]
cca = "cubic"
size = "200MB"
"#;

#[test]
fn tbf_shapes_to_its_rate_counting_ethernet_headers() {
    let out = run(&scenario::load(TEXT, &[]).unwrap());
    let iv = out.table("intervals").unwrap();
    let Some(Column::F64(bps)) = iv.column("bits_per_second") else { panic!() };
    // tbf charges 14 + 1500 bytes per 1448 bytes of payload.
    let expect = 1e9 * 1448.0 / 1514.0;
    let steady = &bps[2..bps.len() - 1];
    let mean = steady.iter().sum::<f64>() / steady.len() as f64;
    assert!((mean / expect - 1.0).abs() < 0.02, "{mean} vs {expect}");
    let port = &out.summary.ports[0];
    // Tail drop at the 128 KB limit; the queue never exceeds it.
    assert!(port.drops > 0);
    assert!(port.max_queue_bytes <= 128_000);
}

#[test]
fn tbf_settings_are_checked() {
    let bad = TEXT.replace("tbf_burst = \"16KB\"", "tbf_burst = \"1000B\"");
    let err = scenario::load(&bad, &[]).unwrap_err().to_string();
    assert!(err.contains("scenario.topology.tbf_burst") && err.contains("1514"), "{err}");
    let lonely = TEXT.replace("tbf_rate = \"1Gbps\"\n", "");
    let err = scenario::load(&lonely, &[]).unwrap_err().to_string();
    assert!(err.contains("tbf_rate"), "{err}");
    let both = TEXT.replace("mtu = 1500", "mtu = 1500\nbuffer = \"1MB\"");
    assert!(scenario::load(&both, &[]).is_err());
}
