//! The burst sources' timing model (`app/burst.rs`): the scenario keys `jitter` and
//! `clock_ppm` with their defaults and errors, determinism, and what the model changes on the
//! network — no source of a fan-in wins or loses every tail-drop race by arithmetic.
use burstlab_sim::app::burst::BurstSource;
use burstlab_sim::scenario::{self, Scenario, ScenarioError};
use burstlab_sim::{Rate, Time, run};

/// Five 2.5 Gbit/s sources of 9000-byte datagrams into a 10 Gbit/s port: 25 % overload, so a
/// fifth of the datagrams must be dropped, and only timing decides whose.
const FIVE: &str = r#"
name = "five-sources"
seed = 3
stop = "200ms"
[topology]
bottleneck_rate = "10Gbps"
host_rate = "10Gbps"
rtt = "1ms"
mtu = 9000
buffer = "1MiB"
[[burst]]
sources = 5
rate = "2500Mbps"
start = "10ms"
duration = "50ms"
packet_size = 9000
"#;

const PERFECT: [&str; 2] = ["burst[0].jitter=0s", "burst[0].clock_ppm=0"];

fn load(text: &str, sets: &[&str]) -> Result<Scenario, ScenarioError> {
    scenario::load(text, &sets.iter().map(|s| s.to_string()).collect::<Vec<_>>())
}

fn error(text: &str, sets: &[&str]) -> String {
    let e = load(text, sets).expect_err("scenario should be refused");
    assert_eq!(e.kind(), "field", "{e}");
    e.to_string()
}

/// Datagrams each source of `FIVE` lost, with `sets` applied.
fn lost_per_source(sets: &[&str]) -> Vec<u64> {
    let out = run(&load(FIVE, sets).unwrap());
    out.summary.flows.iter().map(|f| (f.size_bytes - f.delivered_bytes) / 9000).collect()
}

// ---- scenario keys ----

#[test]
fn keys_default_to_one_frame_of_jitter_and_20_ppm() {
    let s = load(FIVE, &[]).unwrap();
    // One 9038-byte frame at 10 Gbit/s.
    assert_eq!(s.bursts[0].jitter, Time(7_230_400));
    assert_eq!(s.bursts[0].clock_ppm, 20.0);
    let s = load(FIVE, &["burst[0].jitter=1us", "burst[0].clock_ppm=12.5"]).unwrap();
    assert_eq!((s.bursts[0].jitter, s.bursts[0].clock_ppm), (Time::from_us(1), 12.5));
    // The value docs/scenarios.md shows (one 9000-byte frame at 100 Gbit/s) reads back exactly.
    assert_eq!(load(FIVE, &["burst[0].jitter=723.04ns"]).unwrap().bursts[0].jitter, Time(723_040));
    let s = load(FIVE, &PERFECT).unwrap();
    assert_eq!((s.bursts[0].jitter, s.bursts[0].clock_ppm), (Time::ZERO, 0.0));
}

#[test]
fn keys_line_rate_source_defaults_to_no_jitter() {
    let s = load(FIVE, &["burst[0].rate=10Gbps"]).unwrap();
    assert_eq!(s.bursts[0].jitter, Time::ZERO);
    assert_eq!(
        error(FIVE, &["burst[0].rate=10Gbps", "burst[0].jitter=1ns"]),
        "scenario.burst[0].jitter = \"1ns\": expected a jitter of at most 0ns (the gap between datagrams \
         at this rate and clock_ppm, less one frame's serialization on topology.burst_link_rate 10Gbps), \
         such as \"0s\""
    );
}

#[test]
fn keys_jitter_longer_than_the_gap_is_refused() {
    // Gap 28.8 µs at 2.5 Gbit/s, 28.799424 µs at +20 ppm; less one 7.2304 µs frame.
    let m = error(FIVE, &["burst[0].jitter=25us"]);
    assert!(
        m.starts_with(
            "scenario.burst[0].jitter = \"25us\": expected a jitter of at most 21.569024us ("
        ),
        "{m}"
    );
    assert!(load(FIVE, &["burst[0].jitter=21.569024us"]).is_ok());
    assert!(error(FIVE, &["burst[0].jitter=-1us"]).contains("a time of 0 or more"));
    assert!(error(FIVE, &["burst[0].jitter=7"]).contains("a time such as"));
}

#[test]
fn keys_clock_ppm_outside_0_to_1000_is_refused() {
    let expected = "expected a clock offset bound in ppm from 0 to 1000, such as 20";
    let with = |v: &str| {
        FIVE.replace("packet_size = 9000", &format!("packet_size = 9000\nclock_ppm = {v}"))
    };
    assert_eq!(error(&with("-1"), &[]), format!("scenario.burst[0].clock_ppm = -1: {expected}"));
    assert_eq!(
        error(&with("1000.5"), &[]),
        format!("scenario.burst[0].clock_ppm = 1000.5: {expected}")
    );
    assert_eq!(
        error(&with("\"20ppm\""), &[]),
        format!("scenario.burst[0].clock_ppm = \"20ppm\": {expected}")
    );
    assert_eq!(load(&with("1000"), &[]).unwrap().bursts[0].clock_ppm, 1000.0);
}

// ---- determinism ----

#[test]
fn determinism_same_seed_same_departures_and_records() {
    let s = load(FIVE, &[]).unwrap();
    let departures = |seed: u64| -> Vec<Time> {
        (0..5)
            .flat_map(|i| {
                let b = BurstSource::new(&s.bursts[0], seed, i);
                (0..200).map(move |k| b.departure(k))
            })
            .collect()
    };
    assert_eq!(departures(3), departures(3));
    assert_ne!(departures(3), departures(4));
    let (a, b) = (run(&s), run(&s));
    assert_eq!(format!("{:?}", a.tables), format!("{:?}", b.tables));
}

#[test]
fn determinism_mean_rate_of_a_scenario_source_is_its_clock_rate() {
    let s = load(FIVE, &["burst[0].duration=100s", "stop=101s"]).unwrap();
    for i in 0..5 {
        let mut b = BurstSource::new(&s.bursts[0], s.seed, i);
        assert!(b.jitter > Time::ZERO && b.clock_ppb.abs() <= 20_000);
        while b.next_departure().is_some() {
            b.sent += 1;
        }
        let expected = 2.5e9 * 100.0 / 72_000.0 * (1.0 + b.clock_ppb as f64 * 1e-9);
        assert!(
            (b.sent as f64 / expected - 1.0).abs() < 1e-6,
            "source {i}: {} vs {expected}",
            b.sent
        );
        assert_eq!(b.rate, Rate::from_mbps(2500));
    }
}

// ---- tail-drop races ----

#[test]
fn races_perfect_clocks_lock_some_sources_out_of_every_drop() {
    // The artifact the timing model removes: with exact periods, the phases drawn at the start
    // decide the races for the whole burst, and some sources never lose a datagram.
    for seed in ["seed=1", "seed=2", "seed=3"] {
        let lost = lost_per_source(&[PERFECT[0], PERFECT[1], seed]);
        assert!(lost.iter().sum::<u64>() > 1000, "{seed}: {lost:?}");
        assert!(lost.contains(&0), "{seed}: {lost:?}");
    }
}

#[test]
fn races_default_timing_makes_every_source_lose_some() {
    for seed in ["seed=1", "seed=2", "seed=3"] {
        let lost = lost_per_source(&[seed]);
        let total: u64 = lost.iter().sum();
        // 25 % overload for 50 ms: about a fifth of 5 × 1736 datagrams, less what the buffer holds.
        assert!((1000..2000).contains(&total), "{seed}: {lost:?}");
        assert!(lost.iter().all(|l| *l > 0), "{seed}: {lost:?}");
    }
}

/// H-TCP retransmits on the AmLight set-up as first calibrated (unpaced, 64 MiB port buffer)
/// with a 100 ms burst at 4 s, until 5 s.
fn amlight_htcp_retx(sets: &[&str]) -> u64 {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/amlight/base-209ms.toml");
    let mut all = vec!["flow[0].cca=htcp", "flow[0].qdisc=pfifo_fast", "topology.buffer=64MiB"];
    all.extend_from_slice(&["burst[0].start=4s", "burst[0].duration=100ms", "stop=5s"]);
    all.extend_from_slice(sets);
    let text = std::fs::read_to_string(path).unwrap();
    run(&load(&text, &all).unwrap()).summary.flows[0].retransmits
}

#[test]
fn races_tcp_loss_does_not_hinge_on_one_datagram_size_once_clocks_differ() {
    // The 9000- vs 8990-byte swing (234 vs 14,989 H-TCP retransmits here, with the sources'
    // default timing) is a lock between the sender and the bottleneck, not among the sources:
    // both are exactly 100 Gbit/s with the same 9038-byte frames, so the sender's line-rate
    // train meets the port's departures at one fixed point of their common cycle and wins
    // every freed slot. A sender whose NIC clock is 20 ppm off (its link at 99.998 Gbit/s)
    // loses as much with either size: the loss no longer hinges on the datagram size.
    let slow_nic = "topology.host_rate=99.998Gbps";
    // Exact port clocks, so that this 20 ppm is the only offset between NIC and bottleneck.
    let exact = "topology.clock_ppm=0";
    let (a, b) = (
        amlight_htcp_retx(&[exact, slow_nic]),
        amlight_htcp_retx(&[exact, slow_nic, "burst[0].packet_size=8990"]),
    );
    assert!(a > 5_000 && b > 5_000, "9000 B: {a}, 8990 B: {b}");
    assert!(a.max(b) * 4 < a.min(b) * 5, "9000 B: {a}, 8990 B: {b}");
}

#[test]
fn records_a_full_queue_swinging_by_a_packet_or_two_adds_no_rows() {
    // 25 % overload for 50 ms holds the 1 MiB queue full through ~5,000 arrivals and
    // departures. The queue table shows the fill and the drain, not every swing (the step is
    // two 9000-byte packets); its peak is within that step of the port's true peak.
    let out = run(&load(FIVE, &[]).unwrap());
    let q = out.table("queue").unwrap();
    assert!(q.rows() < 100, "{} queue rows", q.rows());
    let Some(burstlab_sim::record::Column::U64(bytes)) = q.column("occupancy_bytes") else {
        panic!()
    };
    let peak = out.summary.ports[0].max_queue_bytes;
    let recorded = *bytes.iter().max().unwrap();
    assert!(recorded <= peak && peak - recorded <= 2 * 9000, "recorded {recorded}, peak {peak}");
    assert_eq!(*bytes.last().unwrap(), 0, "the drain to empty is recorded");
}
