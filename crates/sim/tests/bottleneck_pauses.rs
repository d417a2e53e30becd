//! `bottleneck_pauses`: intervals in which the bottleneck starts no packet (a host that did not
//! run its qdisc in time, a PFC pause). The link loses exactly that time, no more.
use burstlab_sim::record::{Column, Output};
use burstlab_sim::{run, scenario};

fn scenario_with(pauses: &str) -> String {
    format!(
        r#"
name = "pauses"
stop = "4s"
interval = "5ms"
[topology]
bottleneck_rate = "10Gbps"
rtt = "100us"
mtu = 1500
clock_ppm = 0
veth = true
tbf_rate = "1Gbps"
tbf_burst = "16KB"
tbf_limit = "128KB"
{pauses}
[[flow]]
cca = "cubic"
size = "20MB"
"#
    )
}

fn go(pauses: &str) -> Output {
    run(&scenario::load(&scenario_with(pauses), &[]).unwrap())
}

fn fct(out: &Output) -> f64 {
    out.summary.flows[0].fct_s.expect("the flow completes")
}

#[test]
fn a_paused_bottleneck_delivers_nothing_and_the_flow_loses_the_pause() {
    let free = go("");
    let paused = go(r#"bottleneck_pauses = [["40ms", "20ms"], ["100ms", "3ms"]]"#);
    // Nothing leaves the tbf inside the 20 ms pause: the 5 ms rows wholly inside it are empty.
    let iv = paused.table("intervals").unwrap();
    let Some(Column::F64(start)) = iv.column("t_start_s") else { panic!("no t_start_s") };
    let Some(Column::F64(bps)) = iv.column("bits_per_second") else { panic!("no bits_per_second") };
    let inside: Vec<f64> = start
        .iter()
        .zip(bps)
        .filter(|(s, _)| **s >= 0.0455 && **s + 0.005 <= 0.0595)
        .map(|(_, b)| *b)
        .collect();
    assert!(!inside.is_empty() && inside.iter().all(|b| *b == 0.0), "{inside:?}");
    // cubic keeps the 128 KB queue full, so the link idles only while paused; afterwards the
    // bucket's 16 KB (128 µs at 1 Gbit/s), earned while paused, leave at once.
    let lost = fct(&paused) - fct(&free);
    let bucket = 16_000.0 * 8.0 / 1e9;
    assert!(lost <= 0.023 + 1e-6 && lost >= 0.023 - 2.0 * bucket - 50e-6, "lost {lost} s");
}

#[test]
fn pauses_after_the_flow_change_nothing() {
    let free = go("");
    let late = go(r#"bottleneck_pauses = [["3s", "100ms"]]"#);
    assert_eq!(fct(&free), fct(&late));
    assert_eq!(free.summary.flows[0].retransmits, late.summary.flows[0].retransmits);
}

#[test]
fn bad_pauses_name_the_pair_and_say_what_was_expected() {
    let err = |p: &str| scenario::load(&scenario_with(p), &[]).unwrap_err().to_string();
    let e = err(r#"bottleneck_pauses = [["40ms", "20ms"], ["50ms", "1ms"]]"#);
    assert!(e.contains("scenario.topology.bottleneck_pauses[1]") && e.contains("60.000ms"), "{e}");
    let e = err(r#"bottleneck_pauses = [["40ms", "0s"]]"#);
    assert!(e.contains("bottleneck_pauses[0]") && e.contains("longer than 0"), "{e}");
    let e = err(r#"bottleneck_pauses = [["40ms"]]"#);
    assert!(e.contains("bottleneck_pauses[0]") && e.contains("[start, length]"), "{e}");
    let e = err(r#"bottleneck_pauses = "40ms""#);
    assert!(e.contains("scenario.topology.bottleneck_pauses") && e.contains("pairs"), "{e}");
    let e = err(r#"bottleneck_pauses = [["40ms", "-1ms"]]"#);
    assert!(e.contains("bottleneck_pauses[0]"), "{e}");
}
