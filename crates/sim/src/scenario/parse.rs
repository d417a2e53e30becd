//! From a checked TOML tree to [`Scenario`]: the root fields and the topology. Flows and bursts
//! are in `traffic.rs`.

use toml::Table;

use super::defaults::*;
use super::error::ScenarioError;
use super::fields::{Fields, RATE_EXPECTED, TIME_EXPECTED};
use super::model::*;
use super::schema;
use super::telemetry;
use super::traffic;
use super::units::format_size;
use crate::time::Time;

type Result<T> = std::result::Result<T, ScenarioError>;

/// Validates `root` (overrides already applied) into a [`Scenario`].
pub(crate) fn scenario(root: &Table) -> Result<Scenario> {
    schema::check_keys(root, schema::ROOT, "scenario")?;
    let f = Fields::new(root, "scenario");
    let name = f.required("name", f.string("name")?, "a name such as \"grnet-8ms\"")?;
    f.ensure("name", !name.trim().is_empty(), || "a non-empty name such as \"grnet-8ms\"".into())?;
    let seed = f.integer("seed", 0..=i64::MAX)?.map_or(1, |s| s as u64);
    let stop = f.time("stop")?.unwrap_or(DEFAULT_STOP);
    f.ensure("stop", stop > Time::ZERO, || "a time above 0, such as \"60s\"".into())?;
    let interval = f.time("interval")?.unwrap_or(DEFAULT_INTERVAL);
    f.ensure("interval", interval >= MIN_INTERVAL, || {
        "an interval of at least 1ms, such as \"1s\"".into()
    })?;

    // Sized exactly: collected from `Result`s, 100,000 entries grew by doubling to room for
    // 131,072 (another 11 MB).
    let flow_tables = f.tables("flow");
    let mut entries = Vec::with_capacity(flow_tables.len());
    for q in &flow_tables {
        entries.push(traffic::flow(q, stop)?);
    }
    let streams = flow_tables.iter().map(traffic::streams).collect::<Result<Vec<_>>>()?;
    drop(flow_tables);
    let flows = traffic::open_streams(entries, &streams);
    let incasts =
        f.tables("incast").iter().map(|q| traffic::incast(q, stop)).collect::<Result<Vec<_>>>()?;
    let websearches = (f.tables("websearch").iter())
        .map(|q| super::websearch::websearch(q, stop))
        .collect::<Result<Vec<_>>>()?;
    let tcp_flows = flows.len()
        + incasts.iter().map(|i| i.senders as usize).sum::<usize>()
        + websearches.iter().map(|w| w.connections().len()).sum::<usize>();
    let mut topology = topology(&f, &f.table("topology"), tcp_flows)?;
    seed_slope_marking(&mut topology, seed);
    let bursts = f
        .tables("burst")
        .iter()
        .map(|b| traffic::burst(b, &topology, stop))
        .collect::<Result<Vec<_>>>()?;
    if !websearches.is_empty() && topology.graph.is_none() {
        return Err(f.error("websearch", "a graph topology (a preset other than the dumbbell)"));
    }
    if flows.is_empty() && incasts.is_empty() && websearches.is_empty() && bursts.is_empty() {
        return Err(f.error(
            "flow",
            "at least one [[flow]], [[incast]] or [[burst]] (nothing to simulate)",
        ));
    }
    let mut scn = Scenario {
        name: name.to_owned(),
        seed,
        stop,
        interval,
        topology,
        flows,
        streams,
        incasts,
        websearches,
        bursts,
        telemetry: Telemetry::default(),
        memory_budget: super::budget::budget(&f)?.bytes,
    };
    if scn.topology.graph.is_some() {
        super::graph::attach(&f, &mut scn)?;
    }
    // INT port names are checked on the built network: refuse first a run over its budget
    // (INT rows counted from the names as written), so a network too large is never built.
    scn.telemetry = telemetry::unchecked(&f.table("telemetry"))?;
    super::budget::check(&scn, &f)?;
    // Last: INT port names are checked against the network the rest of the scenario builds.
    scn.telemetry = telemetry::telemetry(&f.table("telemetry"), &scn)?;
    Ok(scn)
}

const SCHEDULERS: &[(&str, Scheduler)] =
    &[("fifo", Scheduler::Fifo), ("strict", Scheduler::Strict), ("drr", Scheduler::Drr)];
/// S-ECN's probabilistic form gets the run's seed from [`seed_slope_marking`].
const ECN_MODES: &[(&str, EcnMode)] = &[
    ("enqueue", EcnMode::Enqueue),
    ("dequeue", EcnMode::Dequeue),
    ("s-ecn", EcnMode::Slope(SlopeForm::Probabilistic { seed: 0 })),
    ("s-ecn-hardware", EcnMode::Slope(SlopeForm::Hardware)),
];

/// Gives every S-ECN queue's draws the run's seed: ports are parsed before it is in reach.
fn seed_slope_marking(topology: &mut Topology, seed: u64) {
    let links = topology.graph.iter_mut().flat_map(|g| g.graph.links.iter_mut());
    let ports = std::iter::once(&mut topology.dumbbell.bottleneck)
        .chain(links.flat_map(|l| [&mut l.ab.port, &mut l.ba.port]));
    for q in ports.flat_map(|p| p.queues.iter_mut()) {
        if let Some(EcnSpec {
            mode: EcnMode::Slope(SlopeForm::Probabilistic { seed: s }), ..
        }) = &mut q.ecn
        {
            *s = seed;
        }
    }
}

/// `tbf_rate`, `tbf_burst`, `tbf_limit`: a Linux `tbf` qdisc on the bottleneck
/// (`tc qdisc add dev X root tbf rate R burst B limit L`); `tbf_watchdog_latency`, how late its
/// host runs it when it waits for tokens (a time, or measured times to draw from).
fn tbf(t: &Fields, mtu: u32) -> Result<Option<TbfSpec>> {
    let Some(rate) = t.rate("tbf_rate")? else {
        let keys = ["tbf_burst", "tbf_limit", "tbf_watchdog_latency"];
        if let Some(k) = keys.into_iter().find(|k| t.has(k)) {
            return Err(t.error(k, "a tbf_rate with it, or no tbf settings"));
        }
        return Ok(None);
    };
    let frame = u64::from(mtu) + 14;
    let burst_bytes = t.required("tbf_burst", t.size("tbf_burst")?, "a size such as \"16KB\"")?;
    // sch_tbf refuses a bucket that cannot hold one frame: such packets would never leave.
    t.ensure("tbf_burst", burst_bytes >= frame, || {
        format!("a burst of at least one frame ({frame} bytes at MTU {mtu})")
    })?;
    let limit_bytes = t.required("tbf_limit", t.size("tbf_limit")?, "a size such as \"128KB\"")?;
    let watchdog_latency = t.latency("tbf_watchdog_latency")?.unwrap_or(Latency::ZERO);
    Ok(Some(TbfSpec { rate, burst_bytes, limit_bytes, watchdog_latency }))
}

/// `[topology]` keys only the dumbbell reads, and keys only graph topologies read.
const DUMBBELL_KEYS: [&str; 3] = ["rtt", "burst_link_rate", "bottleneck_pauses"];
const GRAPH_KEYS: [&str; 13] = [
    "leaves",
    "spines",
    "hosts_per_leaf",
    "fabric_rate",
    "oversubscription",
    "racks",
    "hosts_per_rack",
    "uplink_rate",
    "hops",
    "hosts_per_switch",
    "link_delay",
    "record",
    "pauses",
];

fn topology(root: &Fields, t: &Fields, flow_count: usize) -> Result<Topology> {
    let preset = t.choice("preset", &Preset::ALL)?.unwrap_or(Preset::Dumbbell);
    let (theirs, whose) = match preset {
        Preset::Dumbbell => (&GRAPH_KEYS[..], "graph presets"),
        _ => (&DUMBBELL_KEYS[..], "the dumbbell"),
    };
    if let Some(k) = theirs.iter().find(|k| t.has(k)) {
        return Err(
            t.error(k, format!("no {k} with preset = \"{}\" (a key of {whose})", preset.name()))
        );
    }
    if preset == Preset::Dumbbell {
        for key in ["node", "link", "hosts"] {
            if root.has(key) {
                return Err(root.error(
                    key,
                    "preset = \"graph\" in [topology] with [[node]], [[link]] and [hosts]",
                ));
            }
        }
        super::graph::refuse_attach_keys(&root.tables("flow"))?;
        super::graph::refuse_attach_keys(&root.tables("incast"))?;
        super::graph::refuse_attach_keys(&root.tables("burst"))?;
    } else {
        return super::graph::topology(root, t, preset, flow_count);
    }
    let bottleneck_rate =
        t.required("bottleneck_rate", t.rate("bottleneck_rate")?, RATE_EXPECTED)?;
    let host_rate = t.rate("host_rate")?.unwrap_or(bottleneck_rate);
    let burst_link_rate = t.rate("burst_link_rate")?.unwrap_or(host_rate);
    let rtt = t.required("rtt", t.time("rtt")?, TIME_EXPECTED)?;
    t.ensure("rtt", rtt > Time::ZERO, || "a time above 0, such as \"8ms\"".into())?;
    let (mtu, clock_ppm, veth) = interfaces(t)?;
    let bottleneck = port_spec(t, mtu, flow_count, "bottleneck_pauses", DEFAULT_BUFFER)?;
    Ok(Topology {
        preset,
        dumbbell: Dumbbell {
            bottleneck_rate,
            host_rate,
            burst_link_rate,
            rtt,
            mtu,
            clock_ppm,
            veth,
            bottleneck,
        },
        graph: None,
    })
}

/// A switch egress port's keys in `t`: buffer, scheduler, `[[…queue]]` entries, ECN marking,
/// `tbf_*` shaping and pauses (under `pauses_key`).
pub(crate) fn port_spec(
    t: &Fields,
    mtu: u32,
    flow_count: usize,
    pauses_key: &str,
    default_buffer: u64,
) -> Result<PortSpec> {
    let shaper = tbf(t, mtu)?;
    // With tbf, the queue is tbf's bfifo: its `limit` is the buffer.
    let buffer = match &shaper {
        Some(s) => s.limit_bytes,
        None => t.size("buffer")?.unwrap_or(default_buffer),
    };
    check_buffer(t, buffer, mtu)?;
    let ecn = ecn(t, None, buffer)?;
    let scheduler = t.choice("scheduler", SCHEDULERS)?.unwrap_or(Scheduler::Fifo);

    let entries = t.tables("queue");
    let queues = if entries.is_empty() {
        vec![QueueSpec {
            buffer_bytes: buffer,
            quantum_bytes: mtu,
            dscp: vec![],
            flows: vec![],
            ecn,
        }]
    } else {
        let mut queues = Vec::with_capacity(entries.len());
        for q in &entries {
            queues.push(queue(q, ecn, buffer, mtu, flow_count, &queues)?);
        }
        queues
    };
    if scheduler == Scheduler::Fifo && queues.len() > 1 {
        let n = queues.len();
        return Err(t.error(
            "scheduler",
            format!(
                "\"strict\" or \"drr\" with {n} [[topology.queue]] entries (fifo serves one queue)"
            ),
        ));
    }
    if shaper.is_some() && (scheduler != Scheduler::Fifo || t.has("buffer")) {
        return Err(t.error(
            if t.has("buffer") { "buffer" } else { "scheduler" },
            "no buffer or scheduler with tbf_rate: tbf queues in one FIFO of tbf_limit bytes",
        ));
    }
    let pauses = t.pauses(pauses_key)?;
    Ok(PortSpec { scheduler, queues, shaper, pauses })
}

/// A queue must hold at least one full-size packet, or tail drop would refuse every MTU packet.
fn check_buffer(t: &Fields, buffer: u64, mtu: u32) -> Result<()> {
    t.ensure("buffer", buffer >= u64::from(mtu), || {
        format!("a buffer that holds at least one {mtu}-byte packet (the MTU), such as \"16MiB\"")
    })
}

/// The ECN marking of a queue table `t`, inheriting threshold and mode from `parent`.
fn ecn(t: &Fields, parent: Option<EcnSpec>, buffer: u64) -> Result<Option<EcnSpec>> {
    let threshold = t.size("ecn_threshold")?;
    let mode = t.choice("ecn_mode", ECN_MODES)?;
    let threshold_bytes = match (threshold, parent) {
        (Some(k), _) => k,
        (None, Some(p)) => p.threshold_bytes,
        (None, None) if mode.is_some() => {
            return Err(
                t.error("ecn_mode", "no ecn_mode without an ecn_threshold such as \"100KB\"")
            );
        }
        (None, None) => return Ok(None),
    };
    t.ensure("ecn_threshold", threshold_bytes <= buffer, || {
        format!("a threshold no larger than the queue's buffer ({})", format_size(buffer))
    })?;
    let mode = mode.or(parent.map(|p| p.mode)).unwrap_or(EcnMode::Enqueue);
    Ok(Some(EcnSpec { threshold_bytes, mode }))
}

fn queue(
    q: &Fields,
    parent: Option<EcnSpec>,
    buffer: u64,
    mtu: u32,
    flow_count: usize,
    earlier: &[QueueSpec],
) -> Result<QueueSpec> {
    let buffer_bytes = q.size("buffer")?.unwrap_or(buffer);
    check_buffer(q, buffer_bytes, mtu)?;
    let quantum = q.size("quantum")?.unwrap_or(u64::from(mtu));
    q.ensure("quantum", (1..=u64::from(u32::MAX)).contains(&quantum), || {
        "a DRR quantum from 1 byte to 4GiB, such as \"9000B\"".into()
    })?;
    let dscp: Vec<u8> =
        q.integers("dscp", DSCP_RANGE)?.unwrap_or_default().into_iter().map(|d| d as u8).collect();
    let flows_expected =
        format!("an array of flow indices below {flow_count} (the number of [[flow]] entries)");
    let flows = q
        .integers("flows", 0..=flow_count as i64 - 1)
        .map_err(|_| q.error("flows", &flows_expected))?;
    let flows: Vec<u32> = flows.unwrap_or_default().into_iter().map(|i| i as u32).collect();
    for (j, other) in earlier.iter().enumerate() {
        q.ensure("dscp", !dscp.iter().any(|d| other.dscp.contains(d)), || {
            format!("DSCP values not already given to topology.queue[{j}]")
        })?;
        q.ensure("flows", !flows.iter().any(|f| other.flows.contains(f)), || {
            format!("flow indices not already given to topology.queue[{j}]")
        })?;
    }
    let ecn = ecn(q, parent, buffer_bytes)?;
    Ok(QueueSpec { buffer_bytes, quantum_bytes: quantum as u32, dscp, flows, ecn })
}

/// The `[topology]` keys every kind of network shares: the MTU, the bound of the ports' clocks,
/// and whether hosts are joined by veth pairs.
pub(super) fn interfaces(t: &Fields) -> Result<(u32, f64, bool)> {
    let mtu = t.size("mtu")?.unwrap_or(u64::from(DEFAULT_MTU));
    t.ensure("mtu", (u64::from(MIN_MTU)..=u64::from(MAX_MTU)).contains(&mtu), || {
        format!("an MTU from {MIN_MTU} (the RFC 791 minimum) to {MAX_MTU} bytes")
    })?;
    let mtu = mtu as u32;
    let clock_ppm = t.ppm("clock_ppm", MAX_PORT_CLOCK_PPM)?.unwrap_or(DEFAULT_PORT_CLOCK_PPM);
    let veth = t.boolean("veth")?.unwrap_or(false);
    Ok((mtu, clock_ppm, veth))
}
