//! Seed 000's headline on the AmLight set-up (209 ms, 100G bottleneck shared with a
//! 4 × 25 Gbit/s burst, MTU 9000, initcwnd 1000): a burst early in the transfer costs BBR far
//! less completion time than H-TCP, and BBR retransmits more.
//!
//! Where each half of that holds, and why (measured; docs/fidelity.md "Seed 000 direction"):
//! - A **100 ms** burst at 2 s costs neither CCA a retransmission on the calibrated set-up
//!   (64 MiB buffer): at 2 s BBR is still in STARTUP at ~1.5 Gbit/s (bw estimate 0.5 Gbit/s,
//!   cwnd 3,700 packets), so it adds ~19 MB to the queue in 100 ms, and H-TCP's window train
//!   fits the buffer too. The seed's own medians at 2 s are 15 (H-TCP) and 21 (BBR): few for
//!   both. With a 16 MiB buffer the FCT half holds at 2 s (first test) but not the
//!   retransmission half.
//! - The seed's retransmission table pools burst durations (25 ms–2 s); its 2 s row's p95
//!   (H-TCP 10,882, BBR 343,757) and its 40 s H-TCP FCT "at the 2-second mark" are the long
//!   bursts. With a long burst at 2 s both halves hold on the calibrated set-up (second test):
//!   BBR keeps pacing through the burst and loses a share of what it sends until its policer
//!   model (`lt_bw`, ~2 Gbit/s here) holds it for 48 rounds; H-TCP leaves slow start with a
//!   window of a few thousand packets and regrows it slowly at 209 ms. Since the burst sources
//!   have jitter and clock offsets (`app/burst.rs`), and every port its own clock
//!   (`net/clock.rs`), the retransmission half holds for the 2000 ms burst (BBR 13,749 vs
//!   H-TCP 11,867) but not for 1000 ms (8,832 vs 9,148).
use burstlab_sim::{run, scenario};

/// (FCT s, retransmits) of flow 0 in `file` (under `scenarios/`) with `sets` applied.
fn fct_retx(file: &str, sets: &[String]) -> (f64, u64) {
    let path = format!("{}/../../scenarios/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(path).unwrap();
    let out = run(&scenario::load(&text, sets).unwrap());
    let f = &out.summary.flows[0];
    (f.fct_s.expect("finishes"), f.retransmits)
}

#[test]
fn amlight_burst_at_2s_costs_bbr_far_less_than_htcp() {
    // A 16 MiB bottleneck buffer: the burst overflows it while the flow is ramping up.
    let at = |cca: &str| fct_retx("amlight-209ms-burst.toml", &[format!("flow[0].cca={cca}"), "topology.buffer=16MiB".into()]);
    let (htcp, htcp_retx) = at("htcp");
    let (bbr, _) = at("bbr");
    assert!(htcp_retx > 0, "the burst must cause loss");
    assert!(bbr < 10.0, "BBR FCT {bbr}");
    assert!(htcp > 2.0 * bbr, "H-TCP {htcp} s vs BBR {bbr} s");
}

#[test]
fn amlight_calibrated_long_burst_at_2s_bbr_finishes_sooner() {
    for duration in ["1000ms", "2000ms"] {
        let at = |cca: &str| {
            let sets = [format!("flow[0].cca={cca}"), "burst[0].start=2s".into(), format!("burst[0].duration={duration}")];
            fct_retx("amlight/base-209ms.toml", &sets)
        };
        let ((htcp, htcp_retx), (bbr, bbr_retx)) = (at("htcp"), at("bbr"));
        // The seed's finding: H-TCP's FCT runs past 29 s, BBR's never does.
        assert!(htcp > 2.0 * bbr, "{duration}: H-TCP {htcp} s vs BBR {bbr} s");
        assert!(bbr < 29.0, "{duration}: BBR {bbr} s");
        assert!(htcp_retx > 0, "{duration}: the burst must cost H-TCP a loss");
        // The retransmission half holds for the 2 s burst only. At 1000 ms BBR retransmitted
        // more (12,147 vs 9,401) only with perfectly clocked burst sources and ports; with the
        // default burst timing and port clocks it retransmits fewer (8,832 vs 9,148 at seed 1,
        // 8,946 vs 12,428 at seed 2, 8,196 vs 13,554 at seed 3): docs/fidelity.md.
        if duration == "2000ms" {
            assert!(bbr_retx > htcp_retx, "{duration}: BBR retransmits {bbr_retx}, H-TCP {htcp_retx}");
        }
    }
}
