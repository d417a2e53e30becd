//! Graph topologies: `[topology] preset = "graph"` with `[[node]]` and `[[link]]` tables, or a
//! preset that expands to a graph (`parking-lot`, `leaf-spine`, `racks`); `[hosts]` gives
//! every host's defaults; flows, incasts and bursts name their hosts (`src`, `dst`, `path`).
//!
//! ```toml
//! [topology]
//! preset = "graph"
//! buffer = "1MB"                 # every switch port's default
//!
//! [hosts]
//! qdisc = "fq"                   # every host's, unless its [[node]] says otherwise
//!
//! [[node]]
//! name = "h0"                    # kind = "host" by default
//! [[node]]
//! name = "sw"
//! kind = "switch"
//!
//! [[link]]
//! a = "h0"
//! b = "sw"
//! rate = "10Gbps"
//! delay = "5us"
//! buffer = "512KB"               # port keys for both directions...
//! [link.ba]                      # ...or per direction (all of that direction's port keys)
//! buffer = "2MB"
//! ecn_threshold = "100KB"
//! ```

use toml::Value;

use super::budget;
use super::defaults::*;
use super::error::ScenarioError;
use super::fields::{Fields, RATE_EXPECTED};
use super::model::*;
use super::parse::port_spec;
use super::traffic;
use crate::app::websearch::{LoadOf, busiest_link_rate};
use crate::net::graph::{Attach, DirSpec, Graph, LinkSpec, NodeKind, NodeSpec};
use crate::net::port::PortId;
use crate::net::presets::{
    self, Common, leaf_spine::LeafSpine, parking_lot::ParkingLot, racks::Racks,
};
use crate::net::topology::{self, GraphTopology};
use crate::time::Time;
use crate::units::Rate;

type Result<T> = std::result::Result<T, ScenarioError>;

/// Keys of one port (a link's, or one direction's).
pub(crate) const PORT_KEYS: [&str; 12] = [
    "buffer",
    "scheduler",
    "ecn_threshold",
    "ecn_mode",
    "tbf_rate",
    "tbf_burst",
    "tbf_limit",
    "tbf_watchdog_latency",
    "pauses",
    "clock_ppm",
    "record",
    "queue",
];

/// A flow's settings its receiving host gives (the rest come from its sending host).
const RECEIVER_KEYS: [&str; 16] = [
    "tcp_rmem",
    "rmem_max",
    "tcp_adv_win_scale",
    "scaling_ratio",
    "skb_scaling_ratio",
    "skb_truesize",
    "rcvbuf_tuning",
    "initrwnd",
    "tcp_comp_sack_nr",
    "quickack",
    "read_latency",
    "read_latency_dist",
    "first_read_latency",
    "read_hold",
    "handshake_latency",
    "rx_coalesce",
];

/// A host's qdisc keys: a flow takes its sending host's.
const QDISC_KEYS: [&str; 4] = ["qdisc", "fq_maxrate", "fq_flow_limit", "fq_quantum"];

/// Keys that name hosts, refused outside graph topologies.
const ATTACH_KEYS: [&str; 3] = ["src", "dst", "path"];

const HOST_EXPECTED: &str = "the name of a host";

/// Default one-way delay of a preset's links (our choice: a few hundred metres of fibre or a
/// switch's cut-through latency, the order of a data-centre hop).
const DEFAULT_LINK_DELAY: Time = Time::from_us(1);

/// The topology of a graph `preset` in `[topology]` `t` (traffic attaches later, in
/// [`attach`]).
pub(crate) fn topology(
    root: &Fields,
    t: &Fields,
    preset: Preset,
    flow_count: usize,
) -> Result<Topology> {
    let (mtu, clock_ppm, veth) = super::parse::interfaces(t)?;
    let buffer = t.size("buffer")?.unwrap_or(DEFAULT_BUFFER);
    let hosts = root.table("hosts");
    let host_qdisc = traffic::qdisc(&hosts)?;
    // A host's settings are a flow's: check them where they are written.
    let stop = root.time("stop")?.unwrap_or(DEFAULT_STOP);
    traffic::flow(&hosts, stop)?;
    for n in root.tables("node") {
        traffic::flow(&n, stop)?;
    }
    let switch_port = port_spec(t, mtu, flow_count, "pauses", DEFAULT_BUFFER)?;
    let common = Common {
        switch_port,
        link_delay: t.time("link_delay")?.unwrap_or(DEFAULT_LINK_DELAY),
        mtu,
        clock_ppm,
        veth,
        host_fq: super::network::host_fq(&host_qdisc, mtu),
        record_switch_ports: t.boolean("record")?.unwrap_or(true),
    };
    let count = |key: &str, default: u32| -> Result<u32> {
        Ok(t.integer(key, 1..=4096)?.map_or(default, |v| v as u32))
    };
    let host_rate = t.rate("host_rate")?;
    let graph = match preset {
        Preset::Graph => {
            for key in ["host_rate", "link_delay"] {
                if t.has(key) {
                    return Err(t.error(
                        key,
                        "no such key with preset = \"graph\" (set it on each [[link]])",
                    ));
                }
            }
            let (nodes, links) = (root.tables("node").len(), root.tables("link").len());
            let value = format!("{links} entries");
            budget::check_graph(root, root, "link", value, nodes as u64, links as u64)?;
            explicit(root, mtu, clock_ppm, veth, buffer, flow_count, &host_qdisc)?
        }
        Preset::LeafSpine => {
            let (hosts_per_leaf, spines) = (count("hosts_per_leaf", 16)?, count("spines", 4)?);
            let host_rate = host_rate.unwrap_or(Rate::from_gbps(10));
            let fabric_rate = match (t.rate("fabric_rate")?, t.has("oversubscription")) {
                (Some(_), true) => {
                    return Err(t.error(
                        "oversubscription",
                        "no oversubscription with fabric_rate (one sets the other)",
                    ));
                }
                (Some(r), false) => r,
                (None, _) => {
                    let ratio = over(t)?.unwrap_or(1.0);
                    LeafSpine::fabric_rate_for(hosts_per_leaf, spines, host_rate, ratio)
                }
            };
            let p = LeafSpine {
                leaves: count("leaves", 8)?,
                spines,
                hosts_per_leaf,
                host_rate,
                fabric_rate,
            };
            let (leaves, hosts) = (u64::from(p.leaves), u64::from(p.hosts_per_leaf));
            let nodes = u64::from(spines) + leaves * (1 + hosts);
            let links = leaves * (u64::from(spines) + hosts);
            budget::check_graph(root, t, "hosts_per_leaf", hosts.to_string(), nodes, links)?;
            presets::leaf_spine::graph(&p, &common)
        }
        Preset::Racks => {
            let d = Racks::seed_testbed();
            let host_rate = host_rate.unwrap_or(d.host_rate);
            let p = Racks {
                racks: count("racks", d.racks)?,
                hosts_per_rack: count("hosts_per_rack", d.hosts_per_rack)?,
                host_rate,
                uplink_rate: t.rate("uplink_rate")?.unwrap_or(host_rate),
            };
            let (racks, hosts) = (u64::from(p.racks), u64::from(p.hosts_per_rack));
            let (nodes, links) = (1 + racks * (1 + hosts), racks * (1 + hosts));
            budget::check_graph(root, t, "hosts_per_rack", hosts.to_string(), nodes, links)?;
            presets::racks::graph(&p, &common)
        }
        Preset::ParkingLot => {
            let rate = t.required("bottleneck_rate", t.rate("bottleneck_rate")?, RATE_EXPECTED)?;
            let p = ParkingLot {
                hops: count("hops", 3)?,
                hosts_per_switch: count("hosts_per_switch", 2)?,
                rate,
                host_rate: host_rate.unwrap_or(rate),
            };
            let (switches, hosts) = (u64::from(p.hops) + 1, u64::from(p.hosts_per_switch));
            let (nodes, links) = (switches * (1 + hosts), switches - 1 + switches * hosts);
            budget::check_graph(root, t, "hosts_per_switch", hosts.to_string(), nodes, links)?;
            presets::parking_lot::graph(&p, &common)
        }
        Preset::Dumbbell => unreachable!("the dumbbell has its own keys"),
    };
    let fastest = graph.links.iter().map(|l| l.rate).max().unwrap_or(Rate(1));
    Ok(Topology {
        preset,
        dumbbell: Dumbbell {
            bottleneck_rate: fastest,
            host_rate: fastest,
            burst_link_rate: fastest,
            rtt: Time::ZERO,
            mtu,
            clock_ppm,
            veth,
            bottleneck: PortSpec::fifo(buffer),
        },
        graph: Some(GraphTopology { graph, tcp: vec![], udp: vec![], nic_rates: vec![] }),
    })
}

/// `oversubscription`: host capacity over uplink capacity at each leaf, at least 1.
fn over(t: &Fields) -> Result<Option<f64>> {
    let Some(v) = t.read("oversubscription", "a ratio of at least 1 such as 3", |v| match v {
        Value::Integer(i) => Some(*i as f64),
        Value::Float(f) => Some(*f),
        _ => None,
    })?
    else {
        return Ok(None);
    };
    t.ensure("oversubscription", v >= 1.0 && v.is_finite(), || {
        "a ratio of at least 1 such as 3".into()
    })?;
    Ok(Some(v))
}

/// `[[node]]` and `[[link]]`.
fn explicit(
    root: &Fields,
    mtu: u32,
    clock_ppm: f64,
    veth: bool,
    buffer: u64,
    flow_count: usize,
    host_qdisc: &HostQdisc,
) -> Result<Graph> {
    let mut nodes = Vec::new();
    for n in root.tables("node") {
        let name = n.required("name", n.string("name")?, "a node name such as \"h0\"")?;
        let kind = n
            .choice("kind", &[("host", NodeKind::Host), ("switch", NodeKind::Switch)])?
            .unwrap_or(NodeKind::Host);
        if kind == NodeKind::Switch
            && let Some(k) = n.keys().find(|k| *k != "name" && *k != "kind")
        {
            return Err(
                n.error(k, "no host settings on a switch (its ports' keys are on its links)")
            );
        }
        let own = QDISC_KEYS.iter().any(|k| n.has(k));
        let qdisc = if own { traffic::qdisc(&n)? } else { host_qdisc.clone() };
        let fq = match kind {
            NodeKind::Host => super::network::host_fq(&qdisc, mtu),
            NodeKind::Switch => None,
        };
        nodes.push(NodeSpec { name: name.to_owned(), kind, fq });
    }
    if nodes.is_empty() {
        return Err(root.error("node", "[[node]] entries naming the graph's hosts and switches"));
    }
    let mut links = Vec::new();
    for l in root.tables("link") {
        let a = l.required("a", l.string("a")?, "the name of a [[node]]")?;
        let b = l.required("b", l.string("b")?, "the name of a [[node]]")?;
        let rate = l.required("rate", l.rate("rate")?, RATE_EXPECTED)?;
        let delay = l.time("delay")?.unwrap_or(Time::ZERO);
        let link_buffer = l.size("buffer")?.unwrap_or(buffer);
        let dir = |key: &str| -> Result<DirSpec> {
            let d = l.table(key);
            let own = PORT_KEYS.iter().any(|k| d.has(k));
            let f = if own { &d } else { &l };
            Ok(DirSpec {
                port: port_spec(f, mtu, flow_count, "pauses", link_buffer)?,
                clock_ppm: f.ppm("clock_ppm", MAX_PORT_CLOCK_PPM)?,
                recorded: f.boolean("record")?.unwrap_or(true),
            })
        };
        // A host's side of a link is its qdisc: only its clock is the link's to set.
        let is_host = |name: &str| nodes.iter().any(|n| n.name == name && n.kind == NodeKind::Host);
        for (end, key) in [(a, "ab"), (b, "ba")] {
            let d = l.table(key);
            if is_host(end)
                && let Some(k) = d.keys().find(|k| *k != "clock_ppm")
            {
                return Err(d.error(
                    k,
                    format!(
                        "no port keys on host {end}'s side but clock_ppm (a host's egress is its \
                         qdisc: [hosts] or its [[node]])"
                    ),
                ));
            }
        }
        let (ab, ba) = (dir("ab")?, dir("ba")?);
        links.push(LinkSpec { a: a.to_owned(), b: b.to_owned(), rate, delay, ab, ba });
    }
    // Hosts' own ports are their qdiscs: only switch ports are recorded.
    for link in &mut links {
        for (from, d) in [(&link.a, &mut link.ab), (&link.b, &mut link.ba)] {
            if nodes.iter().any(|n| &n.name == from && n.kind == NodeKind::Host) {
                d.recorded = false;
            }
        }
    }
    Ok(Graph { nodes, links, mtu, clock_ppm, veth })
}

/// The settings of a connection from `src` to `dst` whose entry is `own`, read as a flow's. A
/// bad value is reported where it is written: the entry, the host's `[[node]]`, or `[hosts]`.
fn connection(root: &Fields, src: &str, dst: &str, own: &Fields, stop: Time) -> Result<FlowSpec> {
    let merged = settings(root, src, dst, own.table_ref());
    let at = own.path("");
    traffic::flow(&Fields::new(&merged, at.trim_end_matches('.')), stop).map_err(|e| {
        let ScenarioError::Field { path, value, expected } = e else { return e };
        let rest = path.strip_prefix(&at).unwrap_or(&path);
        let key = rest.split('[').next().unwrap_or(rest);
        let host = if RECEIVER_KEYS.contains(&key) { dst } else { src };
        let node = (root.tables("node").iter())
            .position(|n| n.string("name").ok().flatten() == Some(host) && n.has(key));
        let path = match node {
            _ if own.has(key) || !path.starts_with(&at) => path.clone(),
            Some(j) => format!("scenario.node[{j}].{rest}"),
            None if root.table("hosts").has(key) => format!("scenario.hosts.{rest}"),
            None => path.clone(),
        };
        ScenarioError::Field { path, value, expected }
    })
}

/// A connection's settings from `src` to `dst`: `[hosts]`, then the sending host's own keys
/// but the receiver's, then the receiving host's receiver keys, then the entry's own.
fn settings(root: &Fields, src: &str, dst: &str, own: &toml::Table) -> toml::Table {
    let mut t = root.table("hosts").table_ref().clone();
    let nodes = root.tables("node");
    let node = |name: &str| nodes.iter().find(|n| n.string("name").ok().flatten() == Some(name));
    for (host, receiving) in [(src, false), (dst, true)] {
        let Some(n) = node(host) else { continue };
        for (k, v) in n.table_ref() {
            if k != "name" && k != "kind" && RECEIVER_KEYS.contains(&k.as_str()) == receiving {
                t.insert(k.clone(), v.clone());
            }
        }
    }
    // A host's `cpu` is its own: the sending host's reaches the flow as `cpu`, the receiving
    // host's (or every host's) as `receiver_cpu`.
    let hosts_cpu = root.table("hosts").table_ref().get("cpu");
    if let Some(v) = node(dst).and_then(|n| n.table_ref().get("cpu")).or(hosts_cpu) {
        t.insert("receiver_cpu".into(), v.clone());
    }
    for (k, v) in own {
        t.insert(k.clone(), v.clone());
    }
    for k in ["src", "dst", "path"] {
        t.remove(k);
    }
    t
}

/// Refuse host names outside a graph topology.
pub(crate) fn refuse_attach_keys(entries: &[Fields]) -> Result<()> {
    for e in entries {
        if let Some(k) = ATTACH_KEYS.iter().find(|k| e.has(k)) {
            return Err(e.error(
                k,
                "no host names with the dumbbell (its hosts are implied); set topology.preset = \
                 \"graph\" or a graph preset to name hosts",
            ));
        }
    }
    Ok(())
}

/// A list of host names: one string, or an array of them.
fn names(f: &Fields, key: &str) -> Result<Option<Vec<String>>> {
    match f.string(key) {
        Ok(Some(s)) => Ok(Some(vec![s.to_owned()])),
        Ok(None) => Ok(None),
        Err(_) => {
            Ok(f.strings(key, HOST_EXPECTED)?.map(|v| v.into_iter().map(str::to_owned).collect()))
        }
    }
}

fn one(f: &Fields, key: &str) -> Result<String> {
    f.required(key, f.string(key)?, HOST_EXPECTED).map(str::to_owned)
}

/// Attach every flow, incast and burst to its hosts, give each TCP flow its sender host's
/// qdisc, and route them all: the first problem (an unknown host, no route, a broken `path`)
/// is the error.
pub(crate) fn attach(root: &Fields, scn: &mut Scenario) -> Result<()> {
    let gt = scn.topology.graph.as_mut().expect("a graph topology");
    let qdisc_of = |name: &str| -> HostQdisc {
        gt.graph.nodes.iter().find(|n| n.name == name).and_then(|n| n.fq.clone()).map_or(
            HostQdisc::PfifoFast,
            |fq| {
                HostQdisc::Fq(FqParams {
                    maxrate_bytes_per_s: fq.maxrate,
                    flow_limit: fq.flow_limit,
                    quantum: Some(fq.quantum),
                })
            },
        )
    };
    let stop = scn.stop;
    let mut tcp = Vec::new();
    // Each flow is built again from its hosts' settings: the first build goes now, not after.
    let mut flows = Vec::with_capacity(std::mem::take(&mut scn.flows).len());
    for (i, f) in root.tables("flow").iter().enumerate() {
        if let Some(k) = QDISC_KEYS.iter().find(|k| f.has(k)) {
            return Err(f.error(
                k,
                "no qdisc on a flow in a graph: set it on the host ([hosts] or its [[node]])",
            ));
        }
        if f.has("nic_rate") {
            return Err(f.error(
                "nic_rate",
                "no nic_rate on a flow in a graph: set it on the host ([hosts] or its [[node]])",
            ));
        }
        let src = one(f, "src")?;
        let path = f.strings("path", "node names from src to dst")?;
        let mut spec = connection(root, &src, &one(f, "dst")?, f, stop)?;
        spec.qdisc = qdisc_of(&src);
        let streams = scn.streams.get(i).copied().unwrap_or(1);
        flows.extend(traffic::open_streams(vec![spec], &[streams]));
        let attach = Attach {
            field: format!("scenario.flow[{i}]"),
            src,
            dst: one(f, "dst")?,
            path: path.map(|p| p.into_iter().map(str::to_owned).collect()),
        };
        tcp.extend(std::iter::repeat_n(attach, streams as usize));
    }
    scn.flows = flows;
    for (k, (q, inc)) in root.tables("incast").iter().zip(scn.incasts.iter_mut()).enumerate() {
        let t = q.table("tcp");
        if let Some(key) = QDISC_KEYS.iter().find(|key| t.has(key)) {
            return Err(t.error(key, "no qdisc on an incast in a graph: set it on the hosts"));
        }
        if t.has("nic_rate") {
            return Err(
                t.error("nic_rate", "no nic_rate on an incast in a graph: set it on the hosts")
            );
        }
        let senders =
            q.required("src", names(q, "src")?, "an array of host names, one per sender")?;
        q.ensure("src", senders.len() == inc.senders as usize, || {
            format!("{} host names, one per sender (incast.senders)", inc.senders)
        })?;
        let dst = one(q, "dst")?;
        // One socket configuration for all senders: the first sender's host's.
        inc.tcp = connection(root, &senders[0], &dst, &t, stop)?;
        inc.tcp.qdisc = qdisc_of(&senders[0]);
        for s in senders {
            tcp.push(Attach {
                field: format!("scenario.incast[{k}]"),
                src: s,
                dst: dst.clone(),
                path: None,
            });
        }
    }
    // Where each workload's connections start among the TCP flows, for `load_of`.
    let mut websearch_flows = Vec::with_capacity(scn.websearches.len());
    for (k, (q, ws)) in root.tables("websearch").iter().zip(scn.websearches.iter_mut()).enumerate()
    {
        websearch_flows.push(tcp.len());
        let field = format!("scenario.websearch[{k}]");
        let hosts = q.strings("hosts", HOST_EXPECTED)?.expect("parsed before");
        let t = q.table("tcp");
        if let Some(key) = QDISC_KEYS.iter().chain(&["nic_rate"]).find(|key| t.has(key)) {
            return Err(
                t.error(key, "no qdisc or nic_rate on a workload in a graph: set it on the hosts")
            );
        }
        ws.tcp = connection(root, hosts[0], hosts[1], &t, stop)?;
        ws.tcp.qdisc = qdisc_of(hosts[0]);
        ws.background.rate = host_link_rate(q, "hosts", &hosts, &gt.graph)?;
        for (s, r) in ws.connections() {
            let (src, dst) = (hosts[s as usize].to_owned(), hosts[r as usize].to_owned());
            tcp.push(Attach { field: field.clone(), src, dst, path: None });
        }
    }
    let mut udp = Vec::new();
    for (i, (b, spec)) in root.tables("burst").iter().zip(&scn.bursts).enumerate() {
        let sources = b.required("src", names(b, "src")?, "a host name, or one per source")?;
        b.ensure("src", sources.len() == spec.sources as usize, || {
            format!("{} host names, one per source (burst.sources)", spec.sources)
        })?;
        let dst = one(b, "dst")?;
        for s in sources {
            udp.push(Attach {
                field: format!("scenario.burst[{i}]"),
                src: s,
                dst: dst.clone(),
                path: None,
            });
        }
    }
    gt.tcp = tcp;
    gt.udp = udp;
    gt.nic_rates = nic_rates(root, &gt.graph)?;
    let net = topology::from_graph(gt, scn.seed).map_err(|e| ScenarioError::Field {
        path: if e.field.starts_with("scenario.") {
            e.field
        } else {
            format!("scenario.{}", e.field)
        },
        value: Some(e.value),
        expected: e.expected,
    })?;
    for (ws, first) in scn.websearches.iter_mut().zip(websearch_flows) {
        if ws.load_of == LoadOf::BusiestLink {
            let routes: Vec<&[PortId]> = (first..first + ws.connections().len())
                .map(|f| net.routes[f].1.forward.as_slice())
                .collect();
            let rate = |p: PortId| gt.graph.links[p as usize / 2].rate;
            ws.background.rate = busiest_link_rate(ws, &routes, rate).0;
        }
    }
    Ok(())
}

/// Each host's NIC rate where one is set: its [[node]]'s `nic_rate`, else `[hosts]`'.
fn nic_rates(root: &Fields, graph: &Graph) -> Result<Vec<(String, Rate)>> {
    let every = root.table("hosts").rate("nic_rate")?;
    let nodes = root.tables("node");
    let mut rates = Vec::new();
    for n in graph.nodes.iter().filter(|n| n.kind == NodeKind::Host) {
        let own = nodes.iter().find(|t| t.string("name").ok().flatten() == Some(n.name.as_str()));
        let rate = match own {
            Some(t) if t.has("nic_rate") => t.rate("nic_rate")?,
            _ => every,
        };
        if let Some(r) = rate {
            rates.push((n.name.clone(), r));
        }
    }
    Ok(rates)
}

/// The slowest of the links at `hosts` (`f.key`'s names).
fn host_link_rate(f: &Fields, key: &str, hosts: &[&str], graph: &Graph) -> Result<Rate> {
    let mut rate: Option<Rate> = None;
    for s in hosts {
        let r = graph.links.iter().find(|l| &l.a == s || &l.b == s).map(|l| l.rate);
        let Some(r) = r else {
            return Err(f.error(key, format!("{HOST_EXPECTED} with a link (\"{s}\" has none)")));
        };
        rate = Some(rate.map_or(r, |x: Rate| x.min(r)));
    }
    Ok(rate.expect("at least one host"))
}

/// The rate of the first link at host `src` of burst `b` (graph topologies), for the burst's
/// rate and timing checks.
pub(crate) fn burst_link_rate(b: &Fields, topology: &Topology) -> Result<Rate> {
    let Some(gt) = &topology.graph else { return Ok(topology.dumbbell.burst_link_rate) };
    let sources = b.required("src", names(b, "src")?, "a host name, or one per source")?;
    let mut rate: Option<Rate> = None;
    for s in &sources {
        let r = gt.graph.links.iter().find(|l| &l.a == s || &l.b == s).map(|l| l.rate);
        let Some(r) = r else {
            return Err(b.error("src", format!("{HOST_EXPECTED} with a link (\"{s}\" has none)")));
        };
        rate = Some(rate.map_or(r, |x: Rate| x.min(r)));
    }
    Ok(rate.expect("src names at least one host"))
}
