//! Seed 000's headline on the AmLight set-up (209 ms, 100G bottleneck shared with a
//! 4 × 25 Gbit/s burst, MTU 9000, initcwnd 1000): a burst early in the transfer costs BBR far
//! less completion time than H-TCP, and BBR retransmits more.
//!
//! On the calibrated set-up (`scenarios/amlight/base-209ms.toml`: host fq, 1 MiB port buffer;
//! docs/amlight.md) both halves hold for a 100 ms burst at 2 s over seeds 1–5: BBR finishes in
//! about 7 s, H-TCP in about 26 s, and BBR resends more at every seed. The burst fills the
//! port's queue within 25 ms, so both flows lose part of what they send while it lasts. H-TCP
//! leaves slow start with a window of a few thousand packets and regrows it slowly at 209 ms;
//! BBR keeps its bandwidth estimate and pacing, loses more, and is back at full rate within a
//! few rounds. The seed's medians at the 2 s mark are 15 (H-TCP) and 21 (BBR), pooled over
//! burst durations.
use burstlab_sim::{run, scenario};

/// (FCT s, retransmits) of flow 0 of the calibrated 209 ms scenario with `sets` applied.
fn fct_retx(sets: &[String]) -> (f64, u64) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/amlight/base-209ms.toml");
    let text = std::fs::read_to_string(path).unwrap();
    let out = run(&scenario::load(&text, sets).unwrap());
    let f = &out.summary.flows[0];
    (f.fct_s.expect("finishes"), f.retransmits)
}

fn at_2s(cca: &str, duration: &str) -> (f64, u64) {
    fct_retx(&[
        format!("flow[0].cca={cca}"),
        "burst[0].start=2s".into(),
        format!("burst[0].duration={duration}"),
    ])
}

#[test]
fn amlight_100ms_burst_at_2s_costs_bbr_far_less_and_bbr_retransmits_more() {
    let ((htcp, htcp_retx), (bbr, bbr_retx)) = (at_2s("htcp", "100ms"), at_2s("bbr", "100ms"));
    let (base, _) = fct_retx(&["flow[0].cca=bbr".into(), "burst[0].duration=1ns".into()]);
    assert!(htcp_retx > 0, "the burst must cost H-TCP a loss");
    // BBR within 10 % of its own baseline (6.64 s); H-TCP takes four times as long.
    assert!(bbr < 1.1 * base, "BBR {bbr} s vs its baseline {base} s");
    assert!(htcp > 3.0 * bbr, "H-TCP {htcp} s vs BBR {bbr} s");
    assert!(bbr_retx > htcp_retx, "BBR retransmits {bbr_retx}, H-TCP {htcp_retx}");
}

#[test]
fn amlight_long_bursts_at_2s_push_htcp_past_the_next_window_but_not_bbr() {
    for duration in ["1000ms", "2000ms"] {
        let ((htcp, _), (bbr, _)) = (at_2s("htcp", duration), at_2s("bbr", duration));
        // The seed: H-TCP's FCT runs past the next transfer window at 29 s, BBR's never does.
        assert!(htcp > 29.0, "{duration}: H-TCP {htcp} s");
        assert!(bbr < 29.0 && htcp > 2.0 * bbr, "{duration}: H-TCP {htcp} s vs BBR {bbr} s");
    }
}
