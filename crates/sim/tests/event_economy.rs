//! What the engine saves without changing a result: a burst source alone on its link hands
//! each datagram to the far end at its arrival (one event, `app/burst.rs`), and a packet that
//! meets no queue crosses a port in one event (`net/port.rs`, cut-through). The timing stays
//! the same; the shipped scenarios' summaries are checked to the byte by
//! `scripts/golden_summaries.sh`.
use burstlab_sim::app::burst::BurstSource;
use burstlab_sim::packet::{Kind, NO_HOP, Packet};
use burstlab_sim::scenario::{self, Scenario};
use burstlab_sim::{Time, run};

/// One 10 Gbit/s source on its own 2 ms access link, through two switches to its sink over
/// idle 100 Gbit/s links: nothing ever queues. Without a jitter and a clock offset its
/// datagrams are 7.2 µs apart, so about 278 are on the access link at once.
fn path(stop: &str, sets: &[&str]) -> Scenario {
    let text = format!(
        r#"
name = "one-source"
stop = "{stop}"
[topology]
preset = "graph"
mtu = 9000
[[node]]
name = "src"
[[node]]
name = "a"
kind = "switch"
[[node]]
name = "b"
kind = "switch"
[[node]]
name = "sink"
[[link]]
a = "src"
b = "a"
rate = "100Gbps"
delay = "2ms"
[[link]]
a = "a"
b = "b"
rate = "100Gbps"
delay = "1ms"
[[link]]
a = "b"
b = "sink"
rate = "100Gbps"
delay = "0s"
[[burst]]
src = "src"
dst = "sink"
rate = "10Gbps"
start = "1ms"
duration = "10ms"
packet_size = 9000
"#
    );
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    scenario::load(&text, &sets).unwrap()
}

/// Datagrams of the scenario's only source that have left it by `t`.
fn departed_by(scn: &Scenario, t: Time) -> u64 {
    let mut b = BurstSource::new(&scn.bursts[0], scn.seed, 0);
    while b.next_departure().is_some_and(|d| d <= t) {
        b.sent += 1;
    }
    b.sent
}

#[test]
fn datagrams_still_on_the_sources_link_at_stop_count_as_sent() {
    // Stopped 6 ms in: 5 ms of the burst have left the source, the last 2 ms of them are
    // still on its link, and 3 ms have reached the sink.
    let scn = path("6ms", &[]);
    let out = run(&scn);
    let f = &out.summary.flows[0];
    let sent = departed_by(&scn, Time::from_ms(6));
    assert_eq!(f.size_bytes, sent * 9000);
    // 10 Gbit/s for 5 ms of 72,000-bit datagrams: 694.4.
    assert!((694..=695).contains(&sent), "{sent} datagrams sent");
    let delivered = f.delivered_bytes / 9000;
    // On the wire for 3 ms and a few serializations; the ones that left in the first 2 ms
    // arrived (277.8 of them), those on either long link did not.
    assert!((270..=280).contains(&delivered), "{delivered} datagrams delivered");
}

#[test]
fn a_whole_burst_is_sent_and_delivered() {
    let scn = path("1s", &[]);
    let f = &run(&scn).summary.flows[0];
    let all = departed_by(&scn, Time::from_secs(1));
    // 10 ms at 10 Gbit/s: 1,388.9 datagrams.
    assert!((1388..=1389).contains(&all), "{all}");
    assert_eq!((f.size_bytes, f.delivered_bytes), (all * 9000, all * 9000));
}

#[test]
fn a_datagram_through_idle_ports_costs_one_event_per_link() {
    // The source's link, then two idle switch ports: three links, three events a datagram
    // (it was six: an emission, and a serialization end and an arrival per link).
    let scn = path("1s", &["burst[0].jitter=0s", "burst[0].clock_ppm=0"]);
    let out = run(&scn);
    let n = out.summary.flows[0].delivered_bytes / 9000;
    assert_eq!(n, departed_by(&scn, Time::from_secs(1)));
    assert_eq!(out.summary.engine.events, 3 * n);
    // Serialized by switch A's port and switch B's; the source's own link has no port at work.
    assert_eq!(out.packet_hops, 2 * n);
}

#[test]
fn a_datagram_that_comes_as_the_wire_frees_goes_straight_on() {
    // 962-byte datagrams are 1,000-byte frames: at 96.2 Gbit/s a source sends one every
    // 80 ns, exactly the time its frame takes on a 100 Gbit/s port. Each reaches switch A at
    // the very picosecond the one before it leaves the wire, so it never waits, and it still
    // costs one event per link.
    let sets = [
        "burst[0].rate=96.2Gbps",
        "burst[0].packet_size=962",
        "burst[0].clock_ppm=0",
        "topology.clock_ppm=0",
    ];
    let scn = path("1s", &sets);
    assert_eq!(scn.bursts[0].jitter, Time::ZERO);
    let out = run(&scn);
    let f = &out.summary.flows[0];
    assert_eq!(f.size_bytes, f.delivered_bytes);
    let n = f.delivered_bytes / 962;
    // 10 ms every 80 ns.
    assert_eq!(n, 125_000);
    assert_eq!(out.summary.engine.events, 3 * n);
    let ports = &out.summary.ports;
    assert!(ports.iter().all(|p| p.max_queue_bytes <= 962), "{ports:?}");
}

#[test]
fn the_shared_route_steps_walk_every_flows_route() {
    // A leaf-spine with ECMP: many routes share their tails, and each flow's packets must still
    // take its own ports, both ways.
    let path =
        concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/graphs/leaf-spine-incast.toml");
    let net = scenario::load_file(std::path::Path::new(path), &[]).unwrap().network();
    assert!(
        net.hops.len() < net.routes.iter().map(|(_, r)| r.forward.len() + r.reverse.len()).sum()
    );
    for (f, (src, r)) in net.routes.iter().enumerate() {
        let dst = net.ports[*r.forward.last().unwrap() as usize].peer;
        for (from, ports) in [(*src, &r.forward), (dst, &r.reverse)] {
            let mut p = Packet::new(Kind::Ack, f as u32, from, 0, 52);
            p.hop = net.first_hop(f as u32, from);
            let walked: Vec<u32> = ports.iter().map(|_| net.take_step(&mut p)).collect();
            assert_eq!(&walked, ports, "flow {f} from node {from}");
            assert_eq!(p.hop, NO_HOP);
            for (k, &port) in ports.iter().enumerate() {
                assert_eq!(net.next_port(f as u32, from, k as u8), port);
            }
        }
    }
}
