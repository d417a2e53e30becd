//! The router's shared cost fields (`net::route`) against the router they replaced — one
//! Dijkstra from every destination host over every node — written out again here: on random
//! graphs whose hosts hang off one switch (by one or parallel links) the two give the same
//! ports for every flow, ECMP picks included; and a host linked to two switches is never a
//! way through, which the old router could make it.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use burstlab_sim::net::graph::{Attach, DirSpec, Graph, LinkSpec, NodeKind, NodeSpec, Router};
use burstlab_sim::net::topology::{self, GraphTopology};
use burstlab_sim::record::flow_key::FiveTuple;
use burstlab_sim::rng;
use burstlab_sim::scenario::PortSpec;
use burstlab_sim::{Rate, Time};

type Cost = (u32, u64);

/// The previous router: costs towards `dst` over all nodes, hosts other than `dst` not
/// expanded; a walk over every link of each node, in port order.
struct Reference<'g> {
    g: &'g Graph,
    out: Vec<Vec<(u32, u32)>>,
    salt: Vec<u64>,
}

impl<'g> Reference<'g> {
    fn new(g: &'g Graph, seed: u64) -> Reference<'g> {
        let index = |name: &str| g.nodes.iter().position(|n| n.name == name).unwrap() as u32;
        let mut out = vec![Vec::new(); g.nodes.len()];
        for (l, link) in g.links.iter().enumerate() {
            let (a, b) = (index(&link.a), index(&link.b));
            out[a as usize].push((2 * l as u32, b));
            out[b as usize].push((2 * l as u32 + 1, a));
        }
        let salt = (0..g.nodes.len()).map(|n| rng::stream(seed, "ecmp", n as u64).next_u64());
        Reference { g, out, salt: salt.collect() }
    }

    fn hop(&self, port: u32) -> Cost {
        (1, self.g.links[port as usize / 2].delay.ps())
    }

    fn costs_to(&self, dst: u32) -> Vec<Option<Cost>> {
        let mut cost = vec![None; self.g.nodes.len()];
        let mut heap = BinaryHeap::new();
        cost[dst as usize] = Some((0, 0));
        heap.push(Reverse(((0u32, 0u64), dst)));
        while let Some(Reverse((c, n))) = heap.pop() {
            if cost[n as usize].is_some_and(|k| k < c) {
                continue;
            }
            if n != dst && self.g.nodes[n as usize].kind == NodeKind::Host {
                continue;
            }
            for &(port, m) in &self.out[n as usize] {
                let h = self.hop(port);
                let next = (c.0 + h.0, c.1 + h.1);
                if cost[m as usize].is_none_or(|k| next < k) {
                    cost[m as usize] = Some(next);
                    heap.push(Reverse((next, m)));
                }
            }
        }
        cost
    }

    fn walk(&self, flow: u32, src: u32, dst: u32, reply: bool) -> Option<Vec<u32>> {
        let cost = self.costs_to(dst);
        cost[src as usize]?;
        let (from, to) = if reply { (dst, src) } else { (src, dst) };
        let key = FiveTuple::of(flow, false, from, to, reply);
        let tuple = (u64::from(key.src_ip) << 32 | u64::from(key.dst_ip))
            ^ (u64::from(key.src_port) << 24 | u64::from(key.dst_port) << 8)
            ^ u64::from(key.protocol);
        let (mut path, mut at) = (Vec::new(), src);
        while at != dst {
            let here = cost[at as usize].unwrap();
            let candidates: Vec<(u32, u32)> = self.out[at as usize]
                .iter()
                .copied()
                .filter(|&(port, m)| {
                    let h = self.hop(port);
                    cost[m as usize].is_some_and(|c| (c.0 + h.0, c.1 + h.1) == here)
                })
                .collect();
            let pick = if candidates.len() == 1 {
                0
            } else {
                (rng::hash(self.salt[at as usize], tuple) % candidates.len() as u64) as usize
            };
            path.push(candidates[pick].0);
            at = candidates[pick].1;
        }
        Some(path)
    }
}

fn dir() -> DirSpec {
    DirSpec { port: PortSpec::fifo(1 << 20), clock_ppm: None, recorded: false }
}

fn link(a: &str, b: &str, delay_us: u64) -> LinkSpec {
    LinkSpec {
        a: a.into(),
        b: b.into(),
        rate: Rate::from_gbps(10),
        delay: Time::from_us(delay_us),
        ab: dir(),
        ba: dir(),
    }
}

fn node(name: String, kind: NodeKind) -> NodeSpec {
    NodeSpec { name, kind, fq: None }
}

/// `switches` switches joined by a random spanning tree plus as many random extra links,
/// delays from {1, 2} µs so that equal costs abound; `hosts` hosts, each on one switch, some
/// by two parallel links of different delays.
fn random_graph(seed: u64, switches: u64, hosts: u64) -> Graph {
    let mut r = rng::stream(seed, "test-graph", 0);
    let mut g = Graph { nodes: vec![], links: vec![], mtu: 1500, clock_ppm: 0.0, veth: false };
    for s in 0..switches {
        g.nodes.push(node(format!("s{s}"), NodeKind::Switch));
        if s > 0 {
            let to = r.below(s);
            g.links.push(link(&format!("s{s}"), &format!("s{to}"), 1 + r.below(2)));
        }
    }
    for _ in 0..switches {
        let (a, b) = (r.below(switches), r.below(switches));
        if a != b {
            g.links.push(link(&format!("s{a}"), &format!("s{b}"), 1 + r.below(2)));
        }
    }
    for h in 0..hosts {
        let s = format!("s{}", r.below(switches));
        g.nodes.push(node(format!("h{h}"), NodeKind::Host));
        g.links.push(link(&format!("h{h}"), &s, 1 + r.below(2)));
        if r.below(4) == 0 {
            g.links.push(link(&s, &format!("h{h}"), 1 + r.below(3)));
        }
    }
    g
}

#[test]
fn fields_route_every_flow_as_the_per_destination_search_did() {
    for seed in 1..=12 {
        let graph = random_graph(seed, 3 + seed % 9, 24);
        let mut r = rng::stream(seed, "test-flows", 0);
        let tcp: Vec<Attach> = (0..60)
            .map(|i| {
                let src = r.below(24);
                let dst = (src + 1 + r.below(23)) % 24;
                Attach {
                    field: format!("flow[{i}]"),
                    src: format!("h{src}"),
                    dst: format!("h{dst}"),
                    path: None,
                }
            })
            .collect();
        let resolved = graph.resolve().unwrap();
        let routes = Router::new(&resolved, seed).route_all(&tcp, &[]).unwrap();
        let reference = Reference::new(&graph, seed);
        let mut multipath = 0;
        for (i, (src, dst, route)) in routes.iter().enumerate() {
            let f = i as u32;
            assert_eq!(Some(route.forward.clone()), reference.walk(f, *src, *dst, false));
            assert_eq!(Some(route.reverse.clone()), reference.walk(f, *dst, *src, true));
            multipath += usize::from(route.forward.len() > 2);
        }
        assert!(multipath > 0, "seed {seed}: every flow stayed on one switch");
    }
}

#[test]
fn a_host_on_two_switches_is_never_a_way_through() {
    // h0 - a - x - b - h1, and m on both a and b: a → m → b costs 2 hops like a → x → b, so
    // the per-destination search counted m among a's next hops.
    let mut g = Graph { nodes: vec![], links: vec![], mtu: 1500, clock_ppm: 0.0, veth: false };
    for s in ["a", "x", "b"] {
        g.nodes.push(node(s.into(), NodeKind::Switch));
    }
    for h in ["h0", "h1", "m"] {
        g.nodes.push(node(h.into(), NodeKind::Host));
    }
    for (a, b) in [("h0", "a"), ("a", "x"), ("x", "b"), ("b", "h1"), ("a", "m"), ("m", "b")] {
        g.links.push(link(a, b, 1));
    }
    let host = |n: u32| g.nodes[n as usize].kind == NodeKind::Host;
    let resolved = g.resolve().unwrap();
    let reference = Reference::new(&g, 1);
    let tcp: Vec<Attach> = (0..64)
        .map(|i| Attach {
            field: format!("flow[{i}]"),
            src: "h0".into(),
            dst: "h1".into(),
            path: None,
        })
        .collect();
    let routes = Router::new(&resolved, 1).route_all(&tcp, &[]).unwrap();
    let ends = |port: u32| {
        let l = &g.links[port as usize / 2];
        let idx = |name: &str| g.nodes.iter().position(|n| n.name == name).unwrap() as u32;
        if port.is_multiple_of(2) { idx(&l.b) } else { idx(&l.a) }
    };
    let old_transits = (0..64u32)
        .filter(|&f| {
            let p = reference.walk(f, 3, 4, false).unwrap();
            p[..p.len() - 1].iter().any(|&port| host(ends(port)))
        })
        .count();
    assert!(old_transits > 0, "the old search never picked m: the case tests nothing");
    for (_, _, route) in &routes {
        let (fwd, rev) = (&route.forward, &route.reverse);
        assert_eq!(fwd.len(), 4);
        for path in [fwd, rev] {
            assert!(!path[..path.len() - 1].iter().any(|&port| host(ends(port))), "{path:?}");
        }
    }
}

#[test]
fn first_error_is_the_first_entry_s_whatever_its_kind() {
    // flow[0] is fine, flow[1] has no route, flow[2] names an unknown host: flow[1]'s error
    // comes first, as when flows were routed one after another.
    let mut g = random_graph(3, 4, 6);
    g.nodes.push(node("lonely".into(), NodeKind::Host));
    let at = |i: usize, src: &str, dst: &str| Attach {
        field: format!("flow[{i}]"),
        src: src.into(),
        dst: dst.into(),
        path: None,
    };
    let tcp = [at(0, "h0", "h1"), at(1, "h2", "lonely"), at(2, "h3", "nowhere")];
    let e = topology::from_graph(
        &GraphTopology { graph: g.clone(), tcp: tcp.to_vec(), udp: vec![], nic_rates: vec![] },
        1,
    )
    .err()
    .unwrap();
    assert_eq!(
        e.to_string(),
        "flow[1].dst = \"lonely\": expected a host that h2 can reach (no route)"
    );
    let tcp = [at(0, "h0", "nowhere"), at(1, "h2", "lonely")];
    let e = topology::from_graph(
        &GraphTopology { graph: g, tcp: tcp.to_vec(), udp: vec![], nic_rates: vec![] },
        1,
    )
    .err()
    .unwrap();
    assert_eq!(
        e.to_string(),
        "flow[0].dst = \"nowhere\": expected the name of a host (unknown node)"
    );
}
