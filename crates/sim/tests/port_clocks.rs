//! Per-port clock offsets (`net/clock.rs`): the `[topology] clock_ppm` key with its default and
//! errors, determinism, every port's effective rate within the bound, exact rates with
//! `clock_ppm = 0`, and what it removes — the lock between an unpaced sender's line-rate train
//! and an equally fast bottleneck.
use burstlab_sim::scenario::{self, Scenario, ScenarioError};
use burstlab_sim::{Rate, Time, run};

/// 64 flows (each with a sender and a receiver host) and a burst: 2 + 4 × 64 + 2 + 2 × 4 ports.
const MANY: &str = r#"
name = "many-ports"
seed = 11
stop = "10ms"
[topology]
bottleneck_rate = "10Gbps"
rtt = "1ms"
mtu = 9000
[[burst]]
sources = 4
rate = "1Gbps"
start = "1ms"
duration = "1ms"
packet_size = 9000
"#;

fn load(text: &str, sets: &[&str]) -> Result<Scenario, ScenarioError> {
    scenario::load(text, &sets.iter().map(|s| s.to_string()).collect::<Vec<_>>())
}

fn many(sets: &[&str]) -> Scenario {
    let flows: String = (0..64).map(|_| "[[flow]]\ncca = \"cubic\"\nsize = \"90KB\"\n").collect();
    load(&format!("{MANY}{flows}"), sets).unwrap()
}

fn error(text: &str, sets: &[&str]) -> String {
    let e = load(text, sets).expect_err("scenario should be refused");
    assert_eq!(e.kind(), "field", "{e}");
    e.to_string()
}

// ---- the scenario key ----

#[test]
fn keys_clock_ppm_defaults_to_20_and_reads_back() {
    assert_eq!(many(&[]).topology.dumbbell.clock_ppm, 20.0);
    assert_eq!(many(&["topology.clock_ppm=0"]).topology.dumbbell.clock_ppm, 0.0);
    assert_eq!(many(&["topology.clock_ppm=2.5"]).topology.dumbbell.clock_ppm, 2.5);
    assert_eq!(many(&["topology.clock_ppm=1000"]).topology.dumbbell.clock_ppm, 1000.0);
}

#[test]
fn keys_clock_ppm_outside_0_to_1000_is_refused() {
    let expected = "expected a clock offset bound in ppm from 0 to 1000, such as 20";
    let with = |v: &str| MANY.replace("mtu = 9000", &format!("mtu = 9000\nclock_ppm = {v}"));
    assert_eq!(error(&with("-1"), &[]), format!("scenario.topology.clock_ppm = -1: {expected}"));
    assert_eq!(
        error(&with("1000.5"), &[]),
        format!("scenario.topology.clock_ppm = 1000.5: {expected}")
    );
    assert_eq!(
        error(&with("\"20ppm\""), &[]),
        format!("scenario.topology.clock_ppm = \"20ppm\": {expected}")
    );
    assert!(error(MANY, &["topology.clock_ppm=-0.5"]).ends_with(expected));
}

// ---- determinism and the drawn offsets ----

#[test]
fn determinism_same_seed_same_offsets_and_records() {
    let ppbs = |sets: &[&str]| -> Vec<i64> {
        many(sets).network().ports.iter().map(|p| p.clock.ppb).collect()
    };
    assert_eq!(ppbs(&[]), ppbs(&[]));
    assert_ne!(ppbs(&[]), ppbs(&["seed=12"]));
    let s = many(&[]);
    let (a, b) = (run(&s), run(&s));
    assert_eq!(format!("{:?}", a.summary.flows), format!("{:?}", b.summary.flows));
    assert_eq!(format!("{:?}", a.summary.ports), format!("{:?}", b.summary.ports));
}

#[test]
fn offsets_every_port_within_bound_and_zero_mean() {
    let net = many(&[]).network();
    assert_eq!(net.ports.len(), 2 + 4 * 64 + 2 + 2 * 4);
    for p in &net.ports {
        // The port's serialization of a 9000-byte packet (9038-byte frame) is its nominal one
        // scaled by 1 / (1 + offset), within 1 ps of rounding, and the offset within ±20 ppm.
        assert!(p.clock.ppb.abs() <= 20_000, "{}: {} ppb", p.name, p.clock.ppb);
        let nominal = p.rate.serialization_time(9038).ps() as f64;
        let ser = p.serialization(9000).ps() as f64;
        let expected = nominal / (1.0 + p.clock.ppb as f64 * 1e-9);
        assert!((ser - expected).abs() <= 1.0, "{}: {ser} vs {expected}", p.name);
        let eff = p.clock.effective_bps(p.rate) / p.rate.bps() as f64 - 1.0;
        assert!(eff.abs() <= 20e-6 + 1e-12, "{}: {eff}", p.name);
    }
    // Uniform on ±20 ppm: sd 11.5 ppm, so the mean of 274 ports has sd 0.7 ppm.
    let mean = net.ports.iter().map(|p| p.clock.ppb).sum::<i64>() as f64 / net.ports.len() as f64;
    assert!(mean.abs() < 3_000.0, "mean offset {mean} ppb");
    // Offsets are drawn per port, not per link or per node: both ends of a link differ.
    assert!(net.ports.chunks(2).all(|pair| pair[0].clock.ppb != pair[1].clock.ppb));
}

#[test]
fn offsets_follow_the_bound() {
    let bound = |ppm: &str| {
        let net = many(&[&format!("topology.clock_ppm={ppm}")]).network();
        net.ports.iter().map(|p| p.clock.ppb.abs()).max().unwrap()
    };
    // Near the bound (274 uniform draws), never past it.
    assert!((4_800..=5_000).contains(&bound("5")), "{}", bound("5"));
    assert!((95_000..=100_000).contains(&bound("100")), "{}", bound("100"));
}

#[test]
fn exact_clock_ppm_0_gives_nominal_serialization() {
    let net = many(&["topology.clock_ppm=0"]).network();
    for p in &net.ports {
        assert_eq!(p.clock.ppb, 0, "{}", p.name);
        for ip_bytes in [40, 1500, 9000] {
            assert_eq!(
                p.serialization(ip_bytes),
                p.rate.serialization_time(ip_bytes as u64 + 38),
                "{}",
                p.name
            );
        }
    }
    // 9038-byte frame at 10 Gbit/s: 7.2304 µs to the picosecond.
    assert_eq!(net.ports[net.bottleneck as usize].serialization(9000), Time(7_230_400));
    assert_eq!(net.ports[net.bottleneck as usize].rate, Rate::from_gbps(10));
}

// ---- the sender/bottleneck lock ----

/// Flow 0's retransmits on the AmLight set-up as first calibrated (an unpaced sender, a
/// 64 MiB port buffer: the set-up the lock was found on) with a 100 ms burst at 4 s, until 5 s.
fn amlight_retx(cca: &str, sets: &[&str]) -> u64 {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/amlight/base-209ms.toml");
    let cca = format!("flow[0].cca={cca}");
    let mut all = vec![cca.as_str(), "flow[0].qdisc=pfifo_fast", "topology.buffer=64MiB"];
    all.extend_from_slice(&["burst[0].start=4s", "burst[0].duration=100ms", "stop=5s"]);
    all.extend_from_slice(sets);
    let text = std::fs::read_to_string(path).unwrap();
    run(&load(&text, &all).unwrap()).summary.flows[0].retransmits
}

#[test]
fn lock_exact_clocks_make_loss_hinge_on_the_datagram_size() {
    // The artifact: sender NIC and bottleneck both exactly 100 Gbit/s with 9038-byte frames,
    // so the sender's line-rate train meets the port's departures at one fixed point of their
    // common cycle for the whole burst. 9000-byte burst datagrams free exactly one TCP
    // segment's room and the train wins most slots; 8990-byte ones do not (over 4x fewer
    // retransmits at 9000 bytes, as asserted).
    let exact = "topology.clock_ppm=0";
    let a = amlight_retx("htcp", &[exact]);
    let b = amlight_retx("htcp", &[exact, "burst[0].packet_size=8990"]);
    assert!(a * 4 < b, "9000 B: {a}, 8990 B: {b}");
}

#[test]
fn lock_port_clocks_make_loss_independent_of_the_datagram_size() {
    // With each port on its own ±20 ppm clock the train's phase against the bottleneck slips
    // through every alignment within a burst (at 20 ppm apart, one 723 ns slot per 36 ms), so
    // the datagram size no longer decides the loss: thousands lost either way, within 2× at
    // each seed. Equal frame sizes still free exactly one segment's room per departure, which
    // keeps the 9000-byte runs the higher ones.
    for seed in ["seed=1", "seed=2", "seed=4"] {
        let a = amlight_retx("htcp", &[seed]);
        let b = amlight_retx("htcp", &[seed, "burst[0].packet_size=8990"]);
        assert!(a > 5_000 && b > 5_000, "{seed}: 9000 B: {a}, 8990 B: {b}");
        assert!(a.max(b) < 2 * a.min(b), "{seed}: 9000 B: {a}, 8990 B: {b}");
    }
}
