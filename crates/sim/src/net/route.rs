//! Static routing over a resolved [`Graph`](crate::net::graph::Graph): each flow's ports from
//! its source to its destination and back, by least cost (hops, then summed propagation delay),
//! equal-cost next hops picked by a hash of the packet's 5-tuple salted per node and run seed.
//!
//! Hosts never forward, so the cost from a switch to a host `d` depends only on `d`'s links:
//! the switches it hangs off and what each link costs. Hosts with the same links share one
//! cost field over the switches, computed once by a Dijkstra through switches only. The
//! router sorts the walks by that key and keeps one field at a time, so memory is linear in
//! nodes, links and flows (a field per destination host over all nodes was quadratic: 10k
//! dumbbell flows held 9 GB), and a walk through a switch looks at its links to switches and
//! to the destination only, not at its thousands of hosts.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rustc_hash::FxHashMap;

use crate::net::graph::{Attach, GraphError, NodeKind, Resolved, err};
use crate::net::port::PortId;
use crate::packet::NodeId;
use crate::record::flow_key::FiveTuple;
use crate::rng;

/// Routing cost: hops first, then summed one-way propagation delay (ps).
type Cost = (u32, u64);

fn add(a: Cost, b: Cost) -> Cost {
    (a.0 + b.0, a.1 + b.1)
}

/// Each flow's route: ports from its source to its destination and back.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Route {
    pub forward: Vec<PortId>,
    pub reverse: Vec<PortId>,
}

/// Where a walk ends: the switches its destination host is linked to, each with its cheapest
/// link's cost, sorted. Hosts with equal keys share a cost field.
type Key = Vec<(u32, Cost)>;

/// One hop-by-hop walk to compute: flow `flow`'s packets from `from` to `to` (`reply` for the
/// ACK direction).
struct Walk {
    entry: usize,
    from: NodeId,
    to: NodeId,
    reply: bool,
    key: u32,
}

/// Routes attachments (`field` names them in errors, e.g. `flow[3]`); the `udp` ones for their
/// 5-tuples.
pub struct Router<'r, 'g> {
    g: &'r Resolved<'g>,
    /// Each node's ECMP salt.
    salt: Vec<u64>,
    /// Per node: its index among the switches (`u32::MAX` for a host).
    switch_index: Vec<u32>,
    /// Per switch (by index): (port, neighbour switch) of each link to another switch.
    fabric: Vec<Vec<(PortId, NodeId)>>,
}

impl<'r, 'g> Router<'r, 'g> {
    pub fn new(g: &'r Resolved<'g>, seed: u64) -> Router<'r, 'g> {
        let nodes = &g.graph.nodes;
        let salt =
            (0..nodes.len()).map(|n| rng::stream(seed, "ecmp", n as u64).next_u64()).collect();
        let mut switch_index = vec![u32::MAX; nodes.len()];
        let mut fabric = Vec::new();
        for (n, node) in nodes.iter().enumerate() {
            if node.kind == NodeKind::Switch {
                switch_index[n] = fabric.len() as u32;
                let links =
                    g.out[n].iter().filter(|&&(_, m)| nodes[m as usize].kind == NodeKind::Switch);
                fabric.push(links.copied().collect());
            }
        }
        Router { g, salt, switch_index, fabric }
    }

    fn is_switch(&self, n: NodeId) -> bool {
        self.switch_index[n as usize] != u32::MAX
    }

    fn hop(&self, port: PortId) -> Cost {
        (1, self.g.graph.links[port as usize / 2].delay.ps())
    }

    /// The host named `name` at `field`.
    fn host(&self, field: String, name: &str) -> Result<NodeId, GraphError> {
        let n = self
            .g
            .node(name)
            .ok_or_else(|| err(field.clone(), name, "the name of a host (unknown node)"))?;
        if self.is_switch(n) {
            return Err(err(field, name, "a host, not a switch"));
        }
        Ok(n)
    }

    /// Route every attachment, `tcp` ones then `udp` ones (flow id = index in that order): the
    /// sender host, the receiver host and the route of each. The error is the first entry's
    /// first problem, as if they were routed one after another.
    pub fn route_all(
        &self,
        tcp: &[Attach],
        udp: &[Attach],
    ) -> Result<Vec<(NodeId, NodeId, Route)>, GraphError> {
        let entries = || tcp.iter().map(|a| (a, false)).chain(udp.iter().map(|a| (a, true)));
        let mut routes = Vec::with_capacity(tcp.len() + udp.len());
        let mut walks = Vec::new();
        let mut keys: FxHashMap<Key, u32> = FxHashMap::default();
        let mut key_of_host: FxHashMap<NodeId, u32> = FxHashMap::default();
        let mut first_error = None;
        for (i, (at, udp)) in entries().enumerate() {
            match self.plan(i, at, udp, &mut walks, &mut keys, &mut key_of_host) {
                Ok(r) => routes.push(r),
                Err(e) => {
                    first_error = Some(e);
                    break;
                }
            }
        }
        // One field at a time: walks grouped by their destination's key.
        walks.sort_unstable_by_key(|w: &Walk| w.key);
        let mut keys: Vec<(Key, u32)> = keys.into_iter().collect();
        keys.sort_unstable_by_key(|(_, id)| *id);
        let mut unreachable = vec![false; routes.len()];
        let mut next = 0;
        while next < walks.len() {
            let key = walks[next].key;
            let field = self.field(&keys[key as usize].0);
            while next < walks.len() && walks[next].key == key {
                let w = &walks[next];
                let (_, _, route) = &mut routes[w.entry];
                let udp = w.entry >= tcp.len();
                match self.walk(w.entry as u32, udp, w.from, w.to, w.reply, &field) {
                    Some(path) if w.reply => route.reverse = path,
                    Some(path) => route.forward = path,
                    // Links are symmetric: a reply is unreachable only when its data is.
                    None => unreachable[w.entry] = true,
                }
                next += 1;
            }
        }
        for (i, ((at, _), (_, _, route))) in entries().zip(&routes).enumerate() {
            let field = at.field.as_str();
            if unreachable[i] {
                return Err(err(
                    format!("{field}.dst"),
                    &at.dst,
                    format!("a host that {} can reach (no route)", at.src),
                ));
            }
            // A packet counts its hops in a byte.
            if route.forward.len() > usize::from(u8::MAX) {
                return Err(err(format!("{field}.dst"), &at.dst, "a route of at most 255 hops"));
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(routes),
        }
    }

    /// Check entry `i`'s hosts and path; an explicit path is its route, a routed one is left
    /// to the walks it adds.
    fn plan(
        &self,
        i: usize,
        at: &Attach,
        udp: bool,
        walks: &mut Vec<Walk>,
        keys: &mut FxHashMap<Key, u32>,
        key_of_host: &mut FxHashMap<NodeId, u32>,
    ) -> Result<(NodeId, NodeId, Route), GraphError> {
        let field = at.field.as_str();
        let src = self.host(format!("{field}.src"), &at.src)?;
        let dst = self.host(format!("{field}.dst"), &at.dst)?;
        if src == dst {
            return Err(err(format!("{field}.dst"), &at.dst, "a host other than src"));
        }
        if let Some(names) = &at.path {
            return Ok((src, dst, self.explicit(field, names, src, dst)?));
        }
        let mut key = |host: NodeId| {
            *key_of_host.entry(host).or_insert_with(|| {
                let k = self.key(host);
                let n = keys.len() as u32;
                *keys.entry(k).or_insert(n)
            })
        };
        walks.push(Walk { entry: i, from: src, to: dst, reply: false, key: key(dst) });
        if !udp {
            walks.push(Walk { entry: i, from: dst, to: src, reply: true, key: key(src) });
        }
        Ok((src, dst, Route::default()))
    }

    /// Host `d`'s key: the switches it is linked to, each with its cheapest link.
    fn key(&self, d: NodeId) -> Key {
        let mut k: Key = Vec::new();
        for &(port, m) in &self.g.out[d as usize] {
            let s = self.switch_index[m as usize];
            if s == u32::MAX {
                continue;
            }
            let c = self.hop(port);
            match k.iter_mut().find(|(t, _)| *t == s) {
                Some((_, best)) => *best = (*best).min(c),
                None => k.push((s, c)),
            }
        }
        k.sort_unstable();
        k
    }

    /// Each switch's cost (by switch index) to reach a host with links `key`, through switches
    /// only (Dijkstra from the host's switches; links are symmetric).
    fn field(&self, key: &Key) -> Vec<Option<Cost>> {
        let mut cost = vec![None; self.fabric.len()];
        let mut heap = BinaryHeap::new();
        for &(s, c) in key {
            cost[s as usize] = Some(c);
            heap.push(Reverse((c, s)));
        }
        while let Some(Reverse((c, s))) = heap.pop() {
            if cost[s as usize].is_some_and(|k| k < c) {
                continue;
            }
            for &(port, m) in &self.fabric[s as usize] {
                let next = add(c, self.hop(port));
                let mi = self.switch_index[m as usize] as usize;
                if cost[mi].is_none_or(|k| next < k) {
                    cost[mi] = Some(next);
                    heap.push(Reverse((next, mi as u32)));
                }
            }
        }
        cost
    }

    /// The ports of the links between `a` and `b`, as they leave `a`, in port order.
    fn links_between(&self, a: NodeId, b: NodeId, into: &mut Vec<(PortId, NodeId)>) {
        let (oa, ob) = (&self.g.out[a as usize], &self.g.out[b as usize]);
        if oa.len() <= ob.len() {
            into.extend(oa.iter().filter(|&&(_, m)| m == b));
        } else {
            // The same link's other direction (ports come in pairs).
            into.extend(ob.iter().filter(|&&(_, m)| m == a).map(|&(p, _)| (p ^ 1, b)));
        }
    }

    /// Node `n`'s cost to reach host `dst`, whose field is `field`: a switch's from the field,
    /// a host's over its own links (it starts a walk, and never forwards one).
    fn cost(&self, n: NodeId, dst: NodeId, field: &[Option<Cost>]) -> Option<Cost> {
        if n == dst {
            return Some((0, 0));
        }
        let s = self.switch_index[n as usize];
        if s != u32::MAX {
            return field[s as usize];
        }
        let mut best: Option<Cost> = None;
        for &(port, m) in &self.g.out[n as usize] {
            let via = if m == dst { Some((0, 0)) } else { self.switch_cost(m, field) };
            if let Some(c) = via.map(|c| add(c, self.hop(port)))
                && best.is_none_or(|b| c < b)
            {
                best = Some(c);
            }
        }
        best
    }

    fn switch_cost(&self, n: NodeId, field: &[Option<Cost>]) -> Option<Cost> {
        let s = self.switch_index[n as usize];
        if s == u32::MAX { None } else { field[s as usize] }
    }

    /// Hop by hop from `src` to `dst` over least-cost next hops, hashing among equal ones;
    /// `None` if `dst` cannot be reached.
    fn walk(
        &self,
        flow: u32,
        udp: bool,
        src: NodeId,
        dst: NodeId,
        reply: bool,
        field: &[Option<Cost>],
    ) -> Option<Vec<PortId>> {
        let mut here = self.cost(src, dst, field)?;
        let (from, to) = if reply { (dst, src) } else { (src, dst) };
        let key = FiveTuple::of(flow, udp, from, to, reply);
        let tuple = (u64::from(key.src_ip) << 32 | u64::from(key.dst_ip))
            ^ (u64::from(key.src_port) << 24 | u64::from(key.dst_port) << 8)
            ^ u64::from(key.protocol);
        let mut path = Vec::new();
        let mut at = src;
        let mut candidates = Vec::new();
        while at != dst {
            candidates.clear();
            // Least-cost next hops: a switch on, or `dst` itself; never another host.
            let fabric: &[(PortId, NodeId)] = match self.switch_index[at as usize] {
                u32::MAX => &self.g.out[at as usize],
                s => &self.fabric[s as usize],
            };
            for &(port, m) in fabric {
                if self.is_switch(m)
                    && self.switch_cost(m, field).is_some_and(|c| add(c, self.hop(port)) == here)
                {
                    candidates.push((port, m));
                }
            }
            let switches = candidates.len();
            self.links_between(at, dst, &mut candidates);
            let mut i = 0;
            candidates.retain(|&(port, _)| {
                i += 1;
                i <= switches || self.hop(port) == here
            });
            // In port order, as they are listed at `at`.
            if switches > 0 && candidates.len() > switches {
                candidates.sort_unstable_by_key(|&(port, _)| port);
            }
            let pick = if candidates.len() == 1 {
                0
            } else {
                (rng::hash(self.salt[at as usize], tuple) % candidates.len() as u64) as usize
            };
            let (port, m) = candidates[pick];
            path.push(port);
            here = self.cost(m, dst, field).expect("on a least-cost path");
            at = m;
        }
        Some(path)
    }

    /// The ports along `names`, which must run from `src` to `dst` over links.
    fn explicit(
        &self,
        field: &str,
        names: &[String],
        src: NodeId,
        dst: NodeId,
    ) -> Result<Route, GraphError> {
        let g = self.g;
        let expect_end = |i: usize, want: NodeId| -> Result<(), GraphError> {
            let name = &names[i];
            let want_name = &g.graph.nodes[want as usize].name;
            if g.node(name) != Some(want) {
                let end = if i == 0 { "src" } else { "dst" };
                return Err(err(
                    format!("{field}.path[{i}]"),
                    name,
                    format!("the flow's {end} \"{want_name}\" (a path runs from src to dst)"),
                ));
            }
            Ok(())
        };
        if names.len() < 2 {
            return Err(err(
                format!("{field}.path"),
                &names.join(","),
                "at least two node names, from src to dst",
            ));
        }
        expect_end(0, src)?;
        expect_end(names.len() - 1, dst)?;
        let mut forward = Vec::with_capacity(names.len() - 1);
        let mut reverse = Vec::with_capacity(names.len() - 1);
        for i in 1..names.len() {
            let at = format!("{field}.path[{i}]");
            let here = g.node(&names[i - 1]).expect("checked at the previous step");
            let next = g
                .node(&names[i])
                .ok_or_else(|| err(at.clone(), &names[i], "the name of a node (unknown node)"))?;
            if i < names.len() - 1 && g.graph.nodes[next as usize].kind == NodeKind::Host {
                return Err(err(at, &names[i], "a switch (hosts do not forward)"));
            }
            let Some(&(port, _)) = g.out[here as usize].iter().find(|&&(_, m)| m == next) else {
                return Err(err(
                    at,
                    &names[i],
                    format!("a node linked to \"{}\" (the path is not connected)", names[i - 1]),
                ));
            };
            forward.push(port);
            // The same link's other direction (ports come in pairs).
            reverse.push(port ^ 1);
        }
        reverse.reverse();
        Ok(Route { forward, reverse })
    }
}
