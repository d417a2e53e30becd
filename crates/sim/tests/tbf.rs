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
    let late_alone = lonely
        .replace("tbf_burst = \"16KB\"\n", "")
        .replace("tbf_limit = \"128KB\"", "tbf_watchdog_latency = \"20us\"");
    let err = scenario::load(&late_alone, &[]).unwrap_err().to_string();
    assert!(
        err.contains("scenario.topology.tbf_watchdog_latency") && err.contains("tbf_rate"),
        "{err}"
    );
    let not_a_time = TEXT.replace("tbf_limit", "tbf_watchdog_latency = \"soon\"\ntbf_limit");
    let err = scenario::load(&not_a_time, &[]).unwrap_err().to_string();
    assert!(
        err.contains("scenario.topology.tbf_watchdog_latency") && err.contains("soon"),
        "{err}"
    );
}

/// Packets a `tbf` of 1 Gbit/s passes from a 2 Gbit/s UDP source in 100 ms (1500-byte
/// datagrams, 16,667 sent), its bucket `burst`, its host running the watchdog `late`.
fn passed_with_late_watchdog(burst: &str, late: &str) -> u64 {
    let text = format!(
        r#"
name = "late-watchdog"
stop = "120ms"
[topology]
bottleneck_rate = "10Gbps"
rtt = "1ms"
mtu = 1500
clock_ppm = 0
tbf_rate = "1Gbps"
tbf_burst = "{burst}"
tbf_watchdog_latency = "{late}"
tbf_limit = "128KB"
[[burst]]
sources = 1
rate = "2Gbps"
start = "0s"
duration = "100ms"
packet_size = 1500
"#
    );
    let out = run(&scenario::load(&text, &[]).unwrap());
    16_667 - out.summary.ports[0].drops
}

#[test]
fn a_late_watchdog_costs_a_one_frame_bucket_its_lateness_and_a_deep_one_nothing() {
    // What the 128 KB queue (84 datagrams) still holds when the source stops leaves after it.
    let expect = |period_us: f64| 100_000.0 / period_us + 84.0;
    let within = |got: u64, want: f64| (got as f64 / want - 1.0).abs() < 0.01;
    // A bucket of one frame cannot save tokens while the dequeue runs late: each 1514-byte
    // frame takes its 12.112 µs plus the 6 µs (why `tc` wants a burst of at least rate / HZ).
    let exact = passed_with_late_watchdog("1514B", "0us");
    assert!(within(exact, expect(12.112)), "{exact}");
    let late = passed_with_late_watchdog("1514B", "6us");
    assert!(within(late, expect(18.112)), "{late}");
    // A 16 KB bucket (ten frames) keeps what the wait earned, and the frames leave together.
    let deep = passed_with_late_watchdog("16KB", "30us");
    assert!(within(deep, expect(12.112) + 10.0), "{deep}");
}
