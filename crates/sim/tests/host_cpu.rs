//! A host that costs CPU (`host::cpu`): a receiver whose core cannot keep up drops at its NIC
//! ring and TCP reacts as to any loss; a single stream runs at the lesser of the link and its
//! CPU bound; GRO lowers the per-packet cost; cores carry streams apart; no `cpu` changes
//! nothing.
use burstlab_sim::record::{Column, Output};
use burstlab_sim::scenario;

/// A 10 Gbit/s dumbbell at 100 us with 4 MB of buffer, one CUBIC stream until `stop`, the
/// flow's extra keys in `flow`.
fn run(flow: &str, stop: &str) -> Output {
    let text = format!(
        "name = \"cpu\"\nstop = \"{stop}\"\n[topology]\nbottleneck_rate = \"10Gbps\"\n\
         rtt = \"100us\"\nbuffer = \"4MB\"\n[[flow]]\ncca = \"cubic\"\n\
         tcp_rmem = \"4096 131072 33554432\"\nrmem_max = \"4MiB\"\n{flow}\n"
    );
    burstlab_sim::run(&scenario::load(&text, &[]).expect("a valid scenario"))
}

fn gbps(out: &Output) -> f64 {
    out.summary.flows[0].throughput_bps.unwrap() / 1e9
}

/// The `drops` table's reasons.
fn drop_reasons(out: &Output) -> Vec<String> {
    match out.table("drops").unwrap().column("reason").unwrap() {
        Column::Dict { codes, dict } => codes.iter().map(|&c| dict[c as usize].clone()).collect(),
        other => panic!("reason column {other:?}"),
    }
}

// ---- the single-stream bound ----

#[test]
fn a_stream_runs_at_its_receivers_copy_rate_when_that_is_below_the_link() {
    // Only the copy costs: the bound is copy_rate in payload bits. 2 s leaves slow start and
    // the ring's losses a few percent.
    let out = run("receiver_cpu = { copy_rate = \"4Gbps\", ring = 4096 }", "2s");
    let g = gbps(&out);
    assert!((3.8..=4.0).contains(&g), "{g} Gbit/s against a 4 Gbit/s copy");
}

#[test]
fn a_stream_runs_at_the_link_when_its_cpu_is_faster() {
    // A 20 Gbit/s copy on a 10 Gbit/s link: the link's goodput, as without a CPU.
    let with_cpu = gbps(&run("cpu = { copy_rate = \"20Gbps\" }", "2s"));
    let without = gbps(&run("", "2s"));
    assert!((with_cpu - without).abs() / without < 0.01, "{with_cpu} vs {without}");
    assert!(with_cpu > 9.0, "{with_cpu}");
}

#[test]
fn the_bound_adds_per_packet_and_per_skb_costs() {
    // 200 ns per packet, 2 us per GRO skb, 8 Gbit/s copy: per payload byte 200/1448 +
    // 2000/skb + 1 ns (6.6-6.8 Gbit/s, below the link). Skbs hold what one poll (64 packets) brings, at most 43 segments:
    // the bound lies between the 21-segment and the 43-segment figure.
    let per_byte = |segs: f64| 200.0 / 1448.0 + 2000.0 / (segs * 1448.0) + 1.0;
    let (lo, hi) = (8.0 / per_byte(21.0), 8.0 / per_byte(43.0));
    let g = gbps(&run(
        "receiver_cpu = { rx_packet = \"200ns\", rx_skb = \"2us\", copy_rate = \"8Gbps\" }",
        "2s",
    ));
    assert!(g <= hi && g >= lo * 0.97, "{g} Gbit/s, bound {lo:.2}-{hi:.2}");
}

// ---- the ring ----

#[test]
fn a_receiver_that_cannot_keep_up_drops_at_its_ring_and_tcp_recovers() {
    let out = run("receiver_cpu = { copy_rate = \"2Gbps\", ring = 256 }", "1s");
    let host = out.summary.hosts.iter().find(|h| h.node == "r0").expect("the receiver's CPU");
    assert!(host.rx_missed > 0, "a 10 Gbit/s sender overruns a 2 Gbit/s receiver's ring");
    let reasons = drop_reasons(&out);
    assert_eq!(reasons.iter().filter(|r| *r == "rx_missed").count() as u64, host.rx_missed);
    assert!(out.summary.ports.iter().all(|p| p.drops == 0), "the switch dropped nothing");
    let f = &out.summary.flows[0];
    assert!(f.retransmits > 0 && f.recoveries > 0, "TCP repairs ring drops: {f:?}");
    // ...and still runs near the CPU's rate, not the link's.
    let g = gbps(&out);
    assert!((1.6..=2.0).contains(&g), "{g}");
    assert!(host.busiest_core_share > 0.95, "{}", host.busiest_core_share);
}

#[test]
fn a_deep_enough_ring_holds_a_short_transfer_without_loss() {
    // 1 MB at once into a 1024-packet ring: the core is slow but every packet waits.
    let out = run("size = \"1MB\"\nreceiver_cpu = { copy_rate = \"2Gbps\", ring = 1024 }", "1s");
    assert_eq!(out.summary.hosts[0].rx_missed, 0);
    assert_eq!(out.summary.flows[0].retransmits, 0);
    assert_eq!(out.summary.flows[0].delivered_bytes, 1_000_000);
}

// ---- GRO ----

#[test]
fn gro_lowers_the_per_packet_cost() {
    // 3 us per skb: without GRO every packet is one (3.9 Gbit/s bound); with it the packets
    // that came during the last poll share one, so a busy core merges more (as NAPI does).
    let with = run("receiver_cpu = { rx_skb = \"3us\" }", "1s");
    let without = run("receiver_cpu = { rx_skb = \"3us\", gro = false }", "1s");
    let (h_with, h_without) = (&with.summary.hosts[0], &without.summary.hosts[0]);
    assert_eq!(h_without.rx_skbs, h_without.rx_packets);
    assert!(h_with.rx_packets > 2 * h_with.rx_skbs, "{h_with:?}");
    let (g_with, g_without) = (gbps(&with), gbps(&without));
    assert!(g_without < 4.0 && g_with > 9.0, "{g_with} with GRO, {g_without} without");
    // One ACK decision per GRO skb: fewer ACKs per packet than one per two segments.
    let acks_per_packet =
        |o: &Output| o.summary.flows[0].acks as f64 / o.summary.hosts[0].rx_packets as f64;
    assert!(acks_per_packet(&with) < 0.45, "{}", acks_per_packet(&with));
    assert!(acks_per_packet(&without) >= 0.49, "{}", acks_per_packet(&without));
}

// ---- the sender ----

#[test]
fn a_senders_per_skb_cost_bounds_it_and_tso_amortises_it() {
    // 5 us per skb: TSO skbs of up to 64 KB leave the bound far above the link; without TSO
    // every 1448-byte segment pays it (2.3 Gbit/s).
    let tso = gbps(&run("sender_cpu = { tx_skb = \"5us\" }", "1s"));
    let no_tso = gbps(&run("sender_cpu = { tx_skb = \"5us\", tso = false }", "1s"));
    assert!(tso > 9.0, "{tso}");
    assert!((2.0..=2.32).contains(&no_tso), "{no_tso}");
}

// ---- cores ----

/// Two senders into one receiving host whose CPU has `cores` cores.
fn two_into_one(cores: u32) -> Output {
    let mut text = String::from(
        "name = \"cores\"\nstop = \"1s\"\n[topology]\npreset = \"graph\"\nbuffer = \"4MB\"\n",
    );
    text += &format!(
        "[[node]]\nname = \"a\"\n[[node]]\nname = \"b\"\n[[node]]\nname = \"r\"\n\
         cpu = {{ copy_rate = \"3Gbps\", cores = {cores}, ring = 4096 }}\n\
         [[node]]\nname = \"sw\"\nkind = \"switch\"\n"
    );
    for h in ["a", "b", "r"] {
        text +=
            &format!("[[link]]\na = \"{h}\"\nb = \"sw\"\nrate = \"25Gbps\"\ndelay = \"25us\"\n");
    }
    for s in ["a", "b"] {
        text += &format!(
            "[[flow]]\nsrc = \"{s}\"\ndst = \"r\"\ntcp_rmem = \"4096 131072 33554432\"\n\
             rmem_max = \"4MiB\"\n"
        );
    }
    burstlab_sim::run(&scenario::load(&text, &[]).expect("a valid graph"))
}

#[test]
fn streams_on_two_cores_get_twice_one_cores_bound() {
    let total =
        |o: &Output| o.summary.flows.iter().map(|f| f.throughput_bps.unwrap()).sum::<f64>() / 1e9;
    let (one, two) = (two_into_one(1), two_into_one(2));
    let (g1, g2) = (total(&one), total(&two));
    assert!((2.7..=3.0).contains(&g1), "one core: {g1} Gbit/s");
    assert!((5.4..=6.0).contains(&g2), "two cores: {g2} Gbit/s");
    // A graph host's cpu is its own: only `r` has one, the senders (a, b) none.
    let hosts: Vec<&str> = one.summary.hosts.iter().map(|h| h.node.as_str()).collect();
    assert_eq!(hosts, ["r"]);
}

// ---- off ----

#[test]
fn without_cpu_there_is_no_host_summary_and_no_ring() {
    let out = run("", "200ms");
    assert!(out.summary.hosts.is_empty());
    let json = serde_json::to_string(&out.summary).unwrap();
    assert!(!json.contains("\"hosts\""), "the summary's JSON is unchanged without a CPU");
    assert!(drop_reasons(&out).iter().all(|r| r != "rx_missed"));
}

// ---- keys ----

#[test]
fn cpu_values_are_checked_with_the_field_named() {
    let err = |flow: &str| {
        let text = format!(
            "name = \"e\"\n[topology]\nbottleneck_rate = \"1Gbps\"\nrtt = \"1ms\"\n[[flow]]\n{flow}\n"
        );
        scenario::load(&text, &[]).unwrap_err().to_string()
    };
    let e = err("cpu = \"server-1t\"");
    assert!(e.starts_with("scenario.flow[0].cpu = \"server-1t\""), "{e}");
    assert!(e.contains("\"veth-this-machine\""), "{e}");
    let e = err("cpu = { corse = 2 }");
    assert_eq!(e, "scenario.flow[0].cpu.corse: unknown key; did you mean \"cores\"?");
    let e = err("receiver_cpu = { cores = 0 }");
    assert!(e.starts_with("scenario.flow[0].receiver_cpu.cores = 0"), "{e}");
    let e = err("cpu = { copy_rate = \"fast\" }");
    assert!(e.starts_with("scenario.flow[0].cpu.copy_rate = \"fast\""), "{e}");
    let e = err("cpu = 3");
    assert!(e.contains("a CPU profile"), "{e}");
}

#[test]
fn a_profile_takes_overrides_and_each_end_its_own() {
    let text = "name = \"p\"\n[topology]\nbottleneck_rate = \"1Gbps\"\nrtt = \"1ms\"\n[[flow]]\n\
                cpu = { profile = \"server-100g\", cores = 2 }\nreceiver_cpu = \"veth-this-machine\"\n";
    let scn = scenario::load(text, &[]).unwrap();
    let f = &scn.flows[0];
    let (snd, rcv) = (f.sender_cpu.as_deref().unwrap(), f.receiver_cpu.as_deref().unwrap());
    assert_eq!((snd.profile.as_deref(), snd.cores), (Some("server-100g"), 2));
    assert_eq!(rcv.profile.as_deref(), Some("veth-this-machine"));
}
