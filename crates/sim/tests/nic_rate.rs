//! A host's own NIC rate (`nic_rate`), apart from its link's: a 100 Gbit/s sender NIC into a
//! 10 Gbit/s path, in the dumbbell and in a graph.
use burstlab_sim::net::topology::Network;
use burstlab_sim::scenario::{self, Scenario};
use burstlab_sim::units::ETHERNET_OVERHEAD_BYTES;
use burstlab_sim::{Rate, run};

/// One 20 MB CUBIC transfer through a 10 Gbit/s dumbbell with 10 Gbit/s access links.
const DUMBBELL: &str = r#"
name = "nic"
stop = "5s"
[topology]
bottleneck_rate = "10Gbps"
rtt = "1ms"
buffer = "8MB"
clock_ppm = 0
[[flow]]
cca = "cubic"
size = "20MB"
"#;

fn load(text: &str, sets: &[&str]) -> Result<Scenario, scenario::ScenarioError> {
    scenario::load(text, &sets.iter().map(|s| s.to_string()).collect::<Vec<_>>())
}

fn rate_of(net: &Network, port: &str) -> Rate {
    net.ports.iter().find(|p| p.name == port).unwrap_or_else(|| panic!("no port {port}")).rate
}

/// Peak bytes queued at the bottleneck (`swA->swB`) and the flow's FCT.
fn bottleneck_peak_and_fct(s: &Scenario) -> (u64, f64) {
    let out = run(s);
    let port = out.summary.ports.iter().find(|p| p.port == "swA->swB").expect("bottleneck");
    (port.max_queue_bytes, out.summary.flows[0].fct_s.expect("the transfer completes"))
}

#[test]
fn a_100g_sender_nic_serializes_its_egress_at_100g_and_its_link_keeps_10g() {
    let s = load(DUMBBELL, &["flow[0].nic_rate=100Gbps"]).unwrap();
    assert_eq!(s.flows[0].nic_rate, Some(Rate::from_gbps(100)));
    let net = s.network();
    assert_eq!(rate_of(&net, "s0->swA"), Rate::from_gbps(100));
    assert_eq!(rate_of(&net, "swA->s0"), Rate::from_gbps(10));
    assert_eq!(rate_of(&net, "swA->swB"), Rate::from_gbps(10));
    // The base RTT's first hop serializes an MTU-sized segment at the NIC's rate.
    let wire = u64::from(1500 + ETHERNET_OVERHEAD_BYTES);
    let faster = Rate::from_gbps(10).serialization_time(wire)
        - Rate::from_gbps(100).serialization_time(wire);
    let plain = load(DUMBBELL, &[]).unwrap().network();
    assert_eq!(net.base_rtt[0] + faster, plain.base_rtt[0]);
}

#[test]
fn a_100g_sender_nic_into_a_10g_link_queues_its_trains_at_the_switch() {
    let nic_10g = load(DUMBBELL, &[]).unwrap();
    let nic_100g = load(DUMBBELL, &["flow[0].nic_rate=100Gbps"]).unwrap();
    let (peak_10g, fct_10g) = bottleneck_peak_and_fct(&nic_10g);
    let (peak_100g, fct_100g) = bottleneck_peak_and_fct(&nic_100g);
    // At the link's rate the sender's frames reach the 10G bottleneck no faster than it
    // drains them: about one frame waits. At 100G each TSO train arrives ten times faster
    // than it leaves, so most of every train waits at the switch.
    assert!(peak_10g <= 2 * 1538, "10G NIC: peak {peak_10g} B at the bottleneck");
    assert!(peak_100g >= 20 * peak_10g.max(1538), "100G NIC: peak {peak_100g} B");
    // Neither beats the 10G path: 20 MB take at least 16 ms on the wire.
    let floor = 20e6 * 8.0 / 10e9;
    assert!(fct_10g > floor && fct_100g > floor, "FCTs {fct_10g} s, {fct_100g} s");
}

const GRAPH: &str = r#"
name = "nic-graph"
stop = "1s"
[topology]
preset = "graph"
clock_ppm = 0
[hosts]
nic_rate = "25Gbps"
[[node]]
name = "h0"
[[node]]
name = "h1"
nic_rate = "100Gbps"
[[node]]
name = "sw"
kind = "switch"
[[link]]
a = "h0"
b = "sw"
rate = "10Gbps"
[[link]]
a = "sw"
b = "h1"
rate = "10Gbps"
[[flow]]
cca = "cubic"
src = "h1"
dst = "h0"
size = "1MB"
"#;

#[test]
fn a_graph_hosts_nic_rate_comes_from_its_node_or_from_hosts() {
    let net = load(GRAPH, &[]).unwrap().network();
    assert_eq!(rate_of(&net, "h0->sw"), Rate::from_gbps(25));
    assert_eq!(rate_of(&net, "h1->sw"), Rate::from_gbps(100));
    assert_eq!(rate_of(&net, "sw->h0"), Rate::from_gbps(10));
    assert_eq!(rate_of(&net, "sw->h1"), Rate::from_gbps(10));
}

#[test]
fn nic_rate_errors_name_the_field() {
    let e = load(DUMBBELL, &["flow[0].nic_rate=0Gbps"]).unwrap_err().to_string();
    assert_eq!(
        e,
        "scenario.flow[0].nic_rate = \"0Gbps\": expected a rate above 0, such as \"10Gbps\""
    );
    let e = load(GRAPH, &["flow[0].nic_rate=40Gbps"]).unwrap_err().to_string();
    assert!(e.starts_with("scenario.flow[0].nic_rate = \"40Gbps\": expected no nic_rate"), "{e}");
    assert!(e.contains("[hosts] or its [[node]]"), "{e}");
    let e = load(GRAPH, &["hosts.nic_rate=fast"]).unwrap_err().to_string();
    assert!(e.starts_with("scenario.hosts.nic_rate = \"fast\""), "{e}");
}
