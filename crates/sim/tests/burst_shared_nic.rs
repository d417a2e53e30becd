//! A burst source on a host that also runs a TCP socket shares that host's NIC port with the
//! socket: one wire, one packet at a time, in time order (issue 41: the generated-scenario
//! test's reproducer, which broke the event loop's time order).
use burstlab_sim::{run, scenario};

/// Leaf-spine of 1 leaf, 1 spine, 3 hosts; `flows` (TOML tables) and 1 Gbit/s burst sources on
/// `burst_src` (a TOML list of hosts) to h0 at 2.4 ms for 4 ms.
fn shared_nic(flows: &str, burst_src: &str) -> String {
    format!(
        r#"
name = "burst-shared-nic"
stop = "20ms"
[topology]
preset = "leaf-spine"
leaves = 1
spines = 1
hosts_per_leaf = 3
host_rate = "10Gbps"
fabric_rate = "10Gbps"
buffer = "256KB"
{flows}
[[burst]]
src = {burst_src}
dst = "h0"
rate = "1Gbps"
start = "2.4ms"
duration = "4ms"
packet_size = 1500
"#
    )
}

#[test]
fn burst_and_tcp_share_a_host_port_in_time_order() {
    for src in ["h1", "h2"] {
        // The engine's debug assertions (wire order of every port's pipe, event times never
        // going back) are on in test builds: a packet put on a busy wire fails them.
        let text = shared_nic("[[flow]]\nsrc = \"h2\"\ndst = \"h1\"", &format!("[\"{src}\"]"));
        let out = run(&scenario::load(&text, &[]).unwrap());
        let burst = out.summary.flows.iter().find(|f| f.kind == "udp").expect("the burst");
        let tcp = out.summary.flows.iter().find(|f| f.kind != "udp").expect("the flow");
        // 1 Gbit/s for 4 ms of 1500-byte datagrams: about 333 of them.
        let sent = burst.size_bytes / 1500;
        assert!((330..=336).contains(&sent), "burst from {src} sent {sent} datagrams");
        let drops: u64 = out.summary.ports.iter().map(|p| p.drops).sum();
        assert_eq!(
            burst.delivered_bytes, burst.size_bytes,
            "burst from {src}: every datagram sent arrives ({drops} drops in the run)"
        );
        assert!(tcp.delivered_bytes > 1_000_000, "the flow from h2 moved {}", tcp.delivered_bytes);
    }
}

#[test]
fn two_burst_sources_on_one_host_share_its_port() {
    // Neither source is alone on h1's link, so both go through its port's queue.
    let out = run(&scenario::load(&shared_nic("", "[\"h1\", \"h1\"]\nsources = 2"), &[]).unwrap());
    assert_eq!(out.summary.flows.len(), 2);
    for f in &out.summary.flows {
        assert!(f.size_bytes > 400_000, "{} sent {} bytes", f.src, f.size_bytes);
        assert_eq!(f.delivered_bytes, f.size_bytes, "every datagram of a source on h1 arrives");
    }
}
