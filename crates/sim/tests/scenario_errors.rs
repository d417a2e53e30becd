//! Scenario loading end to end: one test per error kind, each checking that the one-line
//! message names the path, the value and what was expected; the shipped examples; the defaults.

use std::path::{Path, PathBuf};

use burstlab_sim::scenario::{
    self, EcnMode, Latency, Preset, RcvBufTuning, Scenario, ScenarioError, Scheduler, ServeOrder,
    WindowModel, defaults,
};
use burstlab_sim::tcp::rwnd::TCP_DEFAULT_SCALING_RATIO;
use burstlab_sim::{Rate, Time};

const BASE: &str = r#"
name = "t"

[topology]
bottleneck_rate = "10Gbps"
rtt = "8ms"

[[flow]]
cca = "cubic"
"#;

fn sets(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

fn load(text: &str, args: &[&str]) -> Result<Scenario, ScenarioError> {
    scenario::load(text, &sets(args))
}

/// The error of `BASE` with `args` applied, checked to be of `kind` and one line long.
fn error(text: &str, args: &[&str], kind: &str) -> String {
    let e = load(text, args).expect_err("scenario should be refused");
    let message = e.to_string();
    assert_eq!(e.kind(), kind, "{message}");
    assert!(!message.contains('\n'), "not one line: {message}");
    message
}

fn scenarios_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios")
}

// --- one test per error kind ---

#[test]
fn unknown_key_suggests_nearest() {
    let text = BASE.replace("rtt = \"8ms\"", "rtt = \"8ms\"\nbufer = \"16MiB\"");
    assert_eq!(
        error(&text, &[], "unknown_key"),
        "scenario.topology.bufer: unknown key; did you mean \"buffer\"?"
    );
}

#[test]
fn unknown_top_level_key_without_near_match() {
    let text = format!("colour = \"red\"\n{BASE}");
    assert_eq!(error(&text, &[], "unknown_key"), "scenario.colour: unknown key");
}

#[test]
fn wrong_size_unit() {
    let text = BASE.replace("cca = \"cubic\"", "cca = \"cubic\"\nsize = \"13GB!\"");
    assert_eq!(
        error(&text, &[], "field"),
        "scenario.flow[0].size = \"13GB!\": expected a size such as \"13GiB\" or \"500MB\""
    );
}

#[test]
fn wrong_rate_unit() {
    let m = error(BASE, &["topology.host_rate=100Gbs"], "field");
    assert_eq!(
        m,
        "scenario.topology.host_rate = \"100Gbs\": expected a rate such as \"10Gbps\" or \"500Mbps\""
    );
}

#[test]
fn negative_rate() {
    let m = error(BASE, &["topology.bottleneck_rate=-10Gbps"], "field");
    assert_eq!(
        m,
        "scenario.topology.bottleneck_rate = \"-10Gbps\": expected a rate above 0, such as \"10Gbps\""
    );
}

#[test]
fn zero_rate() {
    let text = format!("{BASE}\n[[burst]]\nrate = \"0Gbps\"\nstart = \"1s\"\nduration = \"1ms\"\n");
    let m = error(&text, &[], "field");
    assert_eq!(
        m,
        "scenario.burst[0].rate = \"0Gbps\": expected a rate above 0, such as \"10Gbps\""
    );
}

#[test]
fn negative_time() {
    let m = error(BASE, &["flow[0].start=-1s"], "field");
    assert_eq!(
        m,
        "scenario.flow[0].start = \"-1s\": expected a time of 0 or more, such as \"8ms\""
    );
}

#[test]
fn buffer_smaller_than_one_packet() {
    let m = error(BASE, &["topology.buffer=1KB"], "field");
    assert_eq!(
        m,
        "scenario.topology.buffer = \"1KB\": expected a buffer that holds at least one 1500-byte packet (the MTU), such as \"16MiB\""
    );
}

#[test]
fn mtu_below_rfc791_minimum() {
    let m = error(BASE, &["topology.mtu=500"], "field");
    assert_eq!(
        m,
        "scenario.topology.mtu = 500: expected an MTU from 576 (the RFC 791 minimum) to 65535 bytes"
    );
}

#[test]
fn burst_packet_larger_than_mtu() {
    let text = format!(
        "{BASE}\n[[burst]]\nrate = \"1Gbps\"\nstart = \"1s\"\nduration = \"1ms\"\npacket_size = 9000\n"
    );
    let m = error(&text, &[], "field");
    assert_eq!(
        m,
        "scenario.burst[0].packet_size = 9000: expected an IP packet size from 28 (IPv4 + UDP headers) to the MTU (1500) bytes"
    );
}

#[test]
fn unknown_cca_lists_the_registered_names() {
    let m = error(BASE, &["flow[0].cca=bbr9"], "field");
    assert!(m.starts_with("scenario.flow[0].cca = \"bbr9\": expected one of "), "{m}");
    for name in burstlab_sim::tcp::cc::names() {
        assert!(m.contains(&format!("\"{name}\"")), "{name} missing from: {m}");
    }
}

#[test]
fn tcp_rmem_bad_form() {
    let m = error(BASE, &["flow[0].tcp_rmem=4096 131072"], "field");
    assert_eq!(
        m,
        "scenario.flow[0].tcp_rmem = \"4096 131072\": expected three byte counts \"min default max\" such as \"4096 131072 6291456\", or an array of three sizes"
    );
    let m = error(BASE, &["flow[0].tcp_wmem=[4096, \"x\", 1]"], "field");
    assert!(
        m.starts_with("scenario.flow[0].tcp_wmem = [4096, \"x\", 1]: expected three byte counts"),
        "{m}"
    );
}

#[test]
fn tcp_rmem_bad_ordering_and_bounds() {
    let m = error(BASE, &["flow[0].tcp_rmem=4096 8192 1024"], "field");
    assert_eq!(
        m,
        "scenario.flow[0].tcp_rmem = \"4096 8192 1024\": expected min <= default <= max, each from 1 to 2147483647 bytes"
    );
    let m = error(BASE, &["flow[0].tcp_rmem=4096 131072 4294967296"], "field");
    assert!(m.contains("2147483647"), "{m}");
    let m = error(BASE, &["flow[0].tcp_rmem=0 131072 6291456"], "field");
    assert!(m.contains("each from 1"), "{m}");
}

#[test]
fn override_unknown_path() {
    let m = error(BASE, &["topology.bufer=32MiB"], "override");
    assert_eq!(
        m,
        "--set topology.bufer=32MiB: unknown key \"topology.bufer\"; did you mean \"topology.buffer\"?"
    );
}

#[test]
fn override_index_out_of_range() {
    let m = error(BASE, &["flow[1].cca=reno"], "override");
    assert_eq!(m, "--set flow[1].cca=reno: index 1 is past the end of flow (length 1)");
}

#[test]
fn toml_syntax_error_names_line() {
    let text = "name = \"t\"\n[topology]\nrtt = 8ms\n";
    let m = error(text, &[], "syntax");
    assert!(m.starts_with("scenario is not valid TOML at line 3, column "), "{m}");
}

#[test]
fn missing_required_field() {
    let text = BASE.replace("rtt = \"8ms\"", "");
    let m = error(&text, &[], "field");
    assert_eq!(m, "scenario.topology.rtt is missing: expected a time such as \"8ms\" or \"1.5s\"");
    let m = error(&BASE.replace("name = \"t\"", ""), &[], "field");
    assert!(m.starts_with("scenario.name is missing: expected a name"), "{m}");
}

#[test]
fn nothing_to_simulate() {
    let text = BASE.replace("[[flow]]\ncca = \"cubic\"", "");
    let m = error(&text, &[], "field");
    assert_eq!(
        m,
        "scenario.flow is missing: expected at least one [[flow]], [[incast]] or [[burst]] (nothing to simulate)"
    );
}

#[test]
fn io_error_names_the_file() {
    let e = scenario::load_file(Path::new("/nonexistent/burstlab.toml"), &[]).unwrap_err();
    assert_eq!(e.kind(), "io");
    assert!(e.to_string().starts_with("cannot read scenario /nonexistent/burstlab.toml: "), "{e}");
}

// --- cross-field rules ---

#[test]
fn adv_win_scale_and_scaling_ratio_conflict() {
    let m = error(BASE, &["flow[0].tcp_adv_win_scale=1", "flow[0].scaling_ratio=65"], "field");
    assert!(
        m.starts_with(
            "scenario.flow[0].scaling_ratio = 65: expected no scaling_ratio with tcp_adv_win_scale"
        ),
        "{m}"
    );
    let m = error(BASE, &["flow[0].tcp_adv_win_scale=32"], "field");
    assert_eq!(m, "scenario.flow[0].tcp_adv_win_scale = 32: expected an integer from -31 to 31");
}

#[test]
fn adv_win_scale_accepts_linux_sysctl_range() {
    for (v, want) in [("0", 0), ("-31", -31), ("31", 31), ("1", 1)] {
        let s = load(BASE, &[&format!("flow[0].tcp_adv_win_scale={v}")]).unwrap();
        assert_eq!(s.flows[0].window_model, WindowModel::AdvWinScale(want));
    }
    let s = load(BASE, &["flow[0].scaling_ratio=128"]).unwrap();
    assert_eq!(s.flows[0].window_model, WindowModel::ScalingRatio(128));
}

#[test]
fn receive_side_of_a_kernel_is_chosen_by_name() {
    let s =
        load(BASE, &["flow[0].skb_scaling_ratio=229", "flow[0].rcvbuf_tuning=\"6.18\""]).unwrap();
    assert_eq!(s.flows[0].skb_scaling_ratio, Some(229));
    assert_eq!(s.flows[0].rcvbuf_tuning, RcvBufTuning::Linux6_18);
    let d = load(BASE, &[]).unwrap();
    assert_eq!(
        (d.flows[0].skb_scaling_ratio, d.flows[0].rcvbuf_tuning),
        (None, RcvBufTuning::Linux6_6)
    );
    let m = error(BASE, &["flow[0].rcvbuf_tuning=\"6.12\""], "field");
    assert_eq!(m, "scenario.flow[0].rcvbuf_tuning = \"6.12\": expected one of \"6.6\", \"6.18\"");
    let m = error(BASE, &["flow[0].tcp_adv_win_scale=1", "flow[0].skb_scaling_ratio=229"], "field");
    assert!(
        m.starts_with("scenario.flow[0].skb_scaling_ratio = 229: expected no skb_scaling_ratio"),
        "{m}"
    );
    let m = error(BASE, &["flow[0].skb_scaling_ratio=0"], "field");
    assert!(
        m.starts_with("scenario.flow[0].skb_scaling_ratio = 0: expected an integer from 1"),
        "{m}"
    );
}

#[test]
fn hz_must_be_a_kernel_choice() {
    let m = error(BASE, &["flow[0].hz=200"], "field");
    assert_eq!(m, "scenario.flow[0].hz = 200: expected one of 100, 250, 300, 1000");
}

#[test]
fn timers_are_exact_or_jiffies() {
    let m = error(BASE, &["flow[0].timers=\"ticks\""], "field");
    assert_eq!(m, "scenario.flow[0].timers = \"ticks\": expected one of \"exact\", \"jiffies\"");
    let s = load(BASE, &["flow[0].timers=\"jiffies\"", "flow[0].hz=1000"]).unwrap();
    assert_eq!(s.flows[0].timer_jiffy(), Some(Time::from_ms(1)));
    assert_eq!(load(BASE, &[]).unwrap().flows[0].timer_jiffy(), None, "exact by default");
}

#[test]
fn read_latency_is_a_time() {
    let m = error(BASE, &["flow[0].read_latency=\"fast\""], "field");
    assert!(m.starts_with("scenario.flow[0].read_latency = \"fast\": expected "), "{m}");
    let s = load(BASE, &["flow[0].read_latency=\"400us\""]).unwrap();
    assert_eq!(s.flows[0].read_latency, Latency::Fixed(Time::from_us(400)));
}

#[test]
fn read_latency_dist_is_fixed_or_an_exponential_with_a_mean() {
    let m = error(BASE, &["flow[0].read_latency_dist=\"gauss\""], "field");
    assert_eq!(
        m,
        "scenario.flow[0].read_latency_dist = \"gauss\": expected one of \"fixed\", \"exponential\""
    );
    // An exponential of mean zero is no latency at all: say so rather than ignore it.
    let m = error(BASE, &["flow[0].read_latency_dist=\"exponential\""], "field");
    assert!(
        m.starts_with("scenario.flow[0].read_latency_dist = \"exponential\": expected "),
        "{m}"
    );
    assert!(m.contains("one read_latency above 0"), "{m}");
    // A list of samples is a distribution already; it has no single mean.
    let m = error(
        BASE,
        &["flow[0].read_latency=[\"20us\", \"1ms\"]", "flow[0].read_latency_dist=\"exponential\""],
        "field",
    );
    assert!(m.contains("one read_latency above 0"), "{m}");
    let s = load(
        BASE,
        &["flow[0].read_latency=\"400us\"", "flow[0].read_latency_dist=\"exponential\""],
    )
    .unwrap();
    assert_eq!(s.flows[0].read_latency, Latency::Exponential(Time::from_us(400)));
    assert_eq!(load(BASE, &[]).unwrap().flows[0].read_latency, Latency::ZERO, "none by default");
}

#[test]
fn latencies_are_a_time_or_a_list_of_times_to_draw_from() {
    let s = load(
        BASE,
        &["flow[0].read_latency=[\"20us\", \"1.5ms\"]", "flow[0].handshake_latency=\"40us\""],
    )
    .unwrap();
    assert_eq!(
        s.flows[0].read_latency,
        Latency::Samples(vec![Time::from_us(20), Time::from_us(1500)])
    );
    assert_eq!(s.flows[0].handshake_latency, Latency::Fixed(Time::from_us(40)));
    assert_eq!(
        load(BASE, &[]).unwrap().flows[0].handshake_latency,
        Latency::ZERO,
        "answers at once by default"
    );
    let s = load(BASE, &["flow[0].rx_coalesce=[\"50us\", \"400us\"]"]).unwrap();
    assert_eq!(
        s.flows[0].rx_coalesce,
        Latency::Samples(vec![Time::from_us(50), Time::from_us(400)])
    );
    assert_eq!(
        load(BASE, &[]).unwrap().flows[0].rx_coalesce,
        Latency::ZERO,
        "no receive batching by default"
    );
    let m = error(BASE, &["flow[0].rx_coalesce=\"later\""], "field");
    assert!(m.starts_with("scenario.flow[0].rx_coalesce = \"later\": expected a time"), "{m}");
    // A bad element is named by its index; an empty list has nothing to draw.
    let m = error(BASE, &["flow[0].handshake_latency=[\"20us\", \"soon\"]"], "field");
    assert_eq!(
        m,
        "scenario.flow[0].handshake_latency[1] = \"soon\": expected a time such as \"8ms\" or \"1.5s\""
    );
    let m = error(BASE, &["flow[0].read_latency=[]"], "field");
    assert!(m.starts_with("scenario.flow[0].read_latency = []: expected a time such as \"400us\", or a non-empty array"), "{m}");
    // A reader's hold of the socket: times like the latencies, and only for a reader that waits.
    let s =
        load(BASE, &["flow[0].read_latency=\"300us\"", "flow[0].read_hold=[\"20us\", \"600us\"]"])
            .unwrap();
    assert_eq!(s.flows[0].read_hold, Latency::Samples(vec![Time::from_us(20), Time::from_us(600)]));
    assert_eq!(load(BASE, &[]).unwrap().flows[0].read_hold, Latency::ZERO, "never held by default");
    let m = error(BASE, &["flow[0].read_hold=\"100us\""], "field");
    assert!(m.starts_with("scenario.flow[0].read_hold = \"100us\": expected a hold only with a read_latency above 0"), "{m}");
    // A first read later than the others: a time, only for a reader that waits.
    let s = load(BASE, &["flow[0].read_latency=\"300us\"", "flow[0].first_read_latency=\"3ms\""])
        .unwrap();
    assert_eq!(s.flows[0].first_read_latency, Some(Time::from_ms(3)));
    let m = error(BASE, &["flow[0].first_read_latency=\"3ms\""], "field");
    assert!(m.starts_with("scenario.flow[0].first_read_latency = \"3ms\": expected a first read's latency only with a read_latency above 0"), "{m}");
}

#[test]
fn start_after_stop_is_refused() {
    let m = error(BASE, &["stop=10s", "flow[0].start=10s"], "field");
    assert_eq!(m, "scenario.flow[0].start = \"10s\": expected a start before scenario.stop (10s)");
}

#[test]
fn interval_below_one_ms() {
    let m = error(BASE, &["interval=500us"], "field");
    assert!(
        m.starts_with("scenario.interval = \"500us\": expected an interval of at least 1ms"),
        "{m}"
    );
}

#[test]
fn burst_faster_than_its_link() {
    let text =
        format!("{BASE}\n[[burst]]\nrate = \"40Gbps\"\nstart = \"1s\"\nduration = \"1ms\"\n");
    let m = error(&text, &[], "field");
    assert_eq!(
        m,
        "scenario.burst[0].rate = \"40Gbps\": expected a rate no faster than topology.burst_link_rate (10Gbps)"
    );
}

#[test]
fn fifo_with_several_queues_is_refused() {
    let text = format!("{BASE}\n[[topology.queue]]\ndscp = [46]\n[[topology.queue]]\n");
    let m = error(&text, &[], "field");
    assert!(
        m.starts_with(
            "scenario.topology.scheduler is missing: expected \"strict\" or \"drr\" with 2"
        ),
        "{m}"
    );
}

#[test]
fn queue_flow_index_must_exist() {
    let text = format!("{BASE}\n[[topology.queue]]\nflows = [1]\n");
    let m = error(&text, &[], "field");
    assert_eq!(
        m,
        "scenario.topology.queue[0].flows = [1]: expected an array of flow indices below 1 (the number of [[flow]] entries)"
    );
}

#[test]
fn ecn_mode_without_threshold() {
    let m = error(BASE, &["topology.ecn_mode=dequeue"], "field");
    assert!(m.starts_with("scenario.topology.ecn_mode = \"dequeue\": expected no ecn_mode without an ecn_threshold"), "{m}");
}

#[test]
fn override_value_is_validated_like_the_file() {
    let m = error(BASE, &["seed=-1"], "field");
    assert_eq!(m, "scenario.seed = -1: expected an integer from 0 to 9223372036854775807");
}

// --- what loads ---

#[test]
fn defaults_fill_every_optional_field() {
    let s = load(BASE, &[]).unwrap();
    assert_eq!(s.seed, 1);
    assert_eq!(s.stop, Time::from_secs(60));
    assert_eq!(s.interval, Time::from_secs(1));
    let t = &s.topology.dumbbell;
    assert_eq!(s.topology.preset, Preset::Dumbbell);
    assert_eq!(t.bottleneck_rate, Rate::from_gbps(10));
    assert_eq!(t.host_rate, Rate::from_gbps(10));
    assert_eq!(t.burst_link_rate, Rate::from_gbps(10));
    assert_eq!(t.rtt, Time::from_ms(8));
    assert_eq!(t.mtu, 1500);
    assert_eq!(t.bottleneck.scheduler, Scheduler::Fifo);
    assert_eq!(t.bottleneck.queues.len(), 1);
    let q = &t.bottleneck.queues[0];
    assert_eq!((q.buffer_bytes, q.quantum_bytes, q.ecn), (16 << 20, 1500, None));
    let f = &s.flows[0];
    assert_eq!(f.cca, "cubic");
    assert_eq!(f.size_bytes, None);
    assert_eq!(f.start, Time::ZERO);
    assert_eq!(f.tcp_rmem, [4096, 131_072, 6_291_456]);
    assert_eq!(f.tcp_wmem, [4096, 16_384, 4_194_304]);
    assert_eq!(f.rmem_max, 212_992);
    assert_eq!(f.window_model, WindowModel::ScalingRatio(TCP_DEFAULT_SCALING_RATIO));
    assert_eq!((f.initcwnd, f.initrwnd), (10, 0));
    assert_eq!(f.rto_min, Time::from_ms(200));
    assert_eq!((f.quickack, f.ecn, f.hz, f.dscp), (false, false, 250, 0));
    assert!(s.bursts.is_empty());
}

#[test]
fn host_and_burst_link_rates_inherit_in_order() {
    let s = load(BASE, &["topology.host_rate=25Gbps"]).unwrap();
    assert_eq!(s.topology.dumbbell.host_rate, Rate::from_gbps(25));
    assert_eq!(s.topology.dumbbell.burst_link_rate, Rate::from_gbps(25));
}

#[test]
fn queues_inherit_buffer_and_ecn_from_topology() {
    let text = format!(
        "{BASE}\n[[topology.queue]]\ndscp = [46]\nflows = [0]\necn_mode = \"dequeue\"\n[[topology.queue]]\nbuffer = \"8MiB\"\nquantum = \"3000B\"\n"
    );
    let s = load(
        &text,
        &["topology.scheduler=drr", "topology.ecn_threshold=100KB", "topology.mtu=9000"],
    )
    .unwrap();
    let qs = &s.topology.dumbbell.bottleneck.queues;
    assert_eq!(s.topology.dumbbell.bottleneck.scheduler, Scheduler::Drr);
    assert_eq!((qs[0].buffer_bytes, qs[0].quantum_bytes), (16 << 20, 9000));
    assert_eq!((qs[0].dscp.as_slice(), qs[0].flows.as_slice()), (&[46u8][..], &[0u32][..]));
    assert_eq!(qs[0].ecn.map(|e| (e.threshold_bytes, e.mode)), Some((100_000, EcnMode::Dequeue)));
    assert_eq!((qs[1].buffer_bytes, qs[1].quantum_bytes), (8 << 20, 3000));
    assert_eq!(qs[1].ecn.map(|e| (e.threshold_bytes, e.mode)), Some((100_000, EcnMode::Enqueue)));
}

#[test]
fn tcp_rmem_array_of_sizes_equals_sysctl_form() {
    let a = load(BASE, &["flow[0].tcp_rmem=[\"4KiB\", \"128KiB\", \"6MiB\"]"]).unwrap();
    let b = load(BASE, &["flow[0].tcp_rmem=4096 131072 6291456"]).unwrap();
    assert_eq!(a.flows[0].tcp_rmem, b.flows[0].tcp_rmem);
}

#[test]
fn every_example_scenario_loads() {
    let mut count = 0;
    for entry in std::fs::read_dir(scenarios_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let s = scenario::load_file(&path, &[])
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert_eq!(path.file_stem().unwrap().to_str(), Some(s.name.as_str()));
            count += 1;
        }
    }
    assert!(count >= 3, "found {count} scenarios");
}

#[test]
fn grnet_example_is_the_rmem_limited_transfer() {
    let s = scenario::load_file(&scenarios_dir().join("grnet-8ms.toml"), &[]).unwrap();
    assert_eq!(s.stop, Time::from_secs(30));
    assert_eq!(s.topology.dumbbell.burst_link_rate, Rate::from_gbps(40));
    assert_eq!(s.topology.mtu(), 9000);
    let f = &s.flows[0];
    assert_eq!(f.size_bytes, Some(2 << 30));
    assert_eq!(f.tcp_rmem[2], 6 << 20);
    assert_eq!(f.window_model, WindowModel::AdvWinScale(1));
    assert!(s.bursts.is_empty());
}

#[test]
fn amlight_example_is_benchmark_r1() {
    let s = scenario::load_file(&scenarios_dir().join("amlight-209ms-burst.toml"), &[]).unwrap();
    let t = &s.topology.dumbbell;
    assert_eq!((t.bottleneck_rate, t.host_rate), (Rate::from_gbps(100), Rate::from_gbps(100)));
    assert_eq!((t.rtt, t.mtu), (Time::from_ms(209), 9000));
    assert_eq!(t.bottleneck.queues[0].buffer_bytes, 64 << 20);
    let f = &s.flows[0];
    assert_eq!((f.cca.as_str(), f.size_bytes, f.initcwnd), ("cubic", Some(13 << 30), 1000));
    assert_eq!(f.tcp_rmem, [4096, 131_072, 1 << 30]);
    assert_eq!(f.tcp_wmem, [4096, 131_072, 1 << 30]);
    assert_eq!(f.rmem_max, defaults::SYSCTL_INT_MAX);
    let b = &s.bursts[0];
    assert_eq!((b.sources, b.rate), (4, Rate::from_gbps(25)));
    assert_eq!(
        (b.start, b.duration, b.packet_size),
        (Time::from_secs(2), Time::from_ms(100), 9000)
    );
    assert_eq!(s.stop, Time::from_secs(60));
}

#[test]
fn incast_example_buffer_is_below_one_bdp() {
    let s = scenario::load_file(&scenarios_dir().join("incast-small-buffer.toml"), &[]).unwrap();
    let t = &s.topology.dumbbell;
    let bdp = t.bottleneck_rate.bytes_in(t.rtt);
    assert_eq!(bdp, 125_000);
    assert!(t.bottleneck.queues[0].buffer_bytes < bdp);
    let ccas: Vec<&str> = s.flows.iter().map(|f| f.cca.as_str()).collect();
    assert!(ccas.contains(&"reno") && ccas.contains(&"cubic") && ccas.len() >= 3);
}

#[test]
fn overrides_apply_in_order_to_examples() {
    let path = scenarios_dir().join("amlight-209ms-burst.toml");
    let s = scenario::load_file(
        &path,
        &sets(&["burst[0].start=2.5s", "flow.0.cca=reno", "topology.buffer=32MiB"]),
    )
    .unwrap();
    assert_eq!(s.bursts[0].start, Time::from_ms(2500));
    assert_eq!(s.flows[0].cca, "reno");
    assert_eq!(s.topology.dumbbell.bottleneck.queues[0].buffer_bytes, 32 << 20);
}

#[test]
fn incast_serve_order_is_fixed_unless_shuffled_is_asked_for() {
    let incast = format!("{BASE}\n[[incast]]\nsenders = 4\nquery_size = \"1MB\"\n");
    let s = load(&incast, &[]).unwrap();
    assert_eq!(s.incasts[0].serve_order, ServeOrder::Fixed);
    let s = load(&incast, &["incast[0].serve_order=\"shuffled\""]).unwrap();
    assert_eq!(s.incasts[0].serve_order, ServeOrder::Shuffled);
    let m = error(&incast, &["incast[0].serve_order=\"random\""], "field");
    assert_eq!(
        m,
        "scenario.incast[0].serve_order = \"random\": expected one of \"fixed\", \"shuffled\""
    );
}

/// `net.ipv4.tcp_early_retrans` (the tail loss probe's switch; `crates/sim/tests/early_retrans.rs`
/// pins what the sender does with it): Linux's default 3, set per flow or from `[hosts]`.
#[test]
fn tcp_early_retrans_defaults_to_3_and_reaches_the_flow_from_hosts() {
    assert_eq!(load(BASE, &[]).unwrap().flows[0].tcp_early_retrans, 3);
    let text = format!("{BASE}tcp_early_retrans = 0\n");
    assert_eq!(load(&text, &[]).unwrap().flows[0].tcp_early_retrans, 0);
    let racks = r#"
name = "t"
[topology]
preset = "racks"
racks = 2
hosts_per_rack = 1
[hosts]
tcp_early_retrans = 4
[[flow]]
src = "h0"
dst = "h1"
"#;
    assert_eq!(load(racks, &[]).unwrap().flows[0].tcp_early_retrans, 4);
}

#[test]
fn tcp_early_retrans_outside_0_to_4_is_refused_naming_key_value_and_range() {
    for bad in ["5", "-1", "\"3\""] {
        let text = format!("{BASE}tcp_early_retrans = {bad}\n");
        let m = error(&text, &[], "field");
        assert!(m.contains("flow[0].tcp_early_retrans"), "{m}");
        assert!(m.contains(bad), "{m}");
        assert!(m.contains("an integer from 0 to 4"), "{m}");
    }
}
