//! The scenario generator of `generated_scenarios.rs`: TOML scenarios drawn from the schema's
//! real ranges (docs/scenarios.md), mostly ones the validator accepts, some just past a bound.
//!
//! Every choice consumes one integer of proptest's draws; a draw past the end reads 0, and 0
//! always picks the simplest option (absent, the default, the smallest value), so proptest's
//! shrinking of the draws (fewer, smaller) shrinks the scenario towards the least that fails.

use burstlab_sim::app::burst::MAX_CLOCK_PPM as MAX_BURST_CLOCK_PPM;
use burstlab_sim::net::clock::MAX_PORT_CLOCK_PPM;
use burstlab_sim::scenario::units::{format_rate, format_size, format_time};
use burstlab_sim::tcp::rwnd::SYSCTL_INT_MAX;
use burstlab_sim::{Rate, Time};
use toml::{Table, Value};

const PS_PER_S: u64 = Time::PS_PER_S;
const US: u64 = Time::PS_PER_US;
const MS: u64 = Time::PS_PER_MS;
const GBPS: u64 = 1_000_000_000;
const MIB: u64 = 1 << 20;
const U32_MAX: u64 = u32::MAX as u64;
/// The largest time a scenario can state: 64-bit picoseconds (`units::parse_time`).
const MAX_STOP_PS: u64 = 18_000_000 * PS_PER_S;

/// One generated scenario, shown as its TOML text when a case fails.
#[derive(Clone)]
pub struct Case {
    pub toml: String,
    /// The generated tree, for checking that an error names a field it holds.
    pub root: Table,
}

impl std::fmt::Debug for Case {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "\n{}", self.toml)
    }
}

/// The draws a scenario is made from, read one choice at a time.
pub struct Draws<'a> {
    d: &'a [u32],
    at: usize,
}

impl Draws<'_> {
    fn raw(&mut self) -> u32 {
        let v = self.d.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        v
    }

    /// 0 to `n` − 1.
    fn below(&mut self, n: u64) -> u64 {
        if n <= 1 { 0 } else { ((u128::from(self.raw()) * u128::from(n)) >> 32) as u64 }
    }

    fn chance(&mut self, percent: u32) -> bool {
        self.raw() % 100 >= 100 - percent.min(100)
    }

    fn pick<'t, T>(&mut self, items: &'t [T]) -> &'t T {
        &items[self.below(items.len() as u64) as usize]
    }

    /// A size as a unit string or, one time in four, a bare integer of bytes.
    fn size(&mut self, bytes: u64) -> Value {
        match i64::try_from(bytes) {
            Ok(i) if self.chance(25) => Value::Integer(i),
            _ => Value::String(format_size(bytes)),
        }
    }

    /// [`Draws::log`] as a [`Draws::size`].
    fn log_size(&mut self, lo: u64, hi: u64) -> Value {
        let bytes = self.log(lo, hi);
        self.size(bytes)
    }

    /// `lo` to `hi` (both at least 1), log-uniform between, and each end exactly one time in 16:
    /// the bounds are where validators and estimates go wrong.
    fn log(&mut self, lo: u64, hi: u64) -> u64 {
        let lo = lo.max(1);
        let hi = hi.max(lo);
        match self.below(16) {
            0 => lo,
            1 => hi,
            _ => {
                let f = f64::from(self.raw()) / f64::from(u32::MAX);
                let (a, b) = ((lo as f64).ln(), (hi as f64).ln());
                ((a + f * (b - a)).exp() as u64).clamp(lo, hi)
            }
        }
    }
}

fn time(ps: u64) -> Value {
    Value::String(format_time(Time(ps)))
}

fn rate(bps: u64) -> Value {
    Value::String(format_rate(Rate(bps)))
}

fn int(v: u64) -> Value {
    Value::Integer(i64::try_from(v).unwrap_or(i64::MAX))
}

/// A latency: one time, or (one time in four) a list of times to draw from.
fn latency(g: &mut Draws) -> Value {
    let one = |g: &mut Draws| if g.chance(10) { 0 } else { g.log(1_000, 20 * MS) };
    if g.chance(25) {
        let n = 1 + g.below(4);
        Value::Array((0..n).map(|_| time(one(g))).collect())
    } else {
        time(one(g))
    }
}

/// Ascending `[start, length]` pairs.
fn pauses(g: &mut Draws, stop: u64) -> Value {
    let mut at = 0u64;
    let mut out = Vec::new();
    for _ in 0..1 + g.below(3) {
        at = at.saturating_add(g.log(1, stop.max(2)));
        let length = g.log(1, 10 * MS);
        out.push(Value::Array(vec![time(at), time(length)]));
        at = at.saturating_add(length);
    }
    Value::Array(out)
}

/// What traffic may name: hosts (graph topologies) with the rate of their first link, the
/// switch ports INT may record, the MTU and the fastest a dumbbell's burst source may send.
struct Net {
    hosts: Vec<(String, u64)>,
    switch_ports: Vec<String>,
    mtu: u64,
    burst_link_bps: u64,
    graph: bool,
}

/// The traffic counts, drawn before the topology: queues may name flow indices.
struct Counts {
    flows: u64,
    incasts: Vec<u64>,
    bursts: u64,
}

impl Counts {
    fn tcp(&self) -> u64 {
        self.flows + self.incasts.iter().sum::<u64>()
    }
}

/// One scenario from `d`.
pub fn scenario(d: &[u32]) -> Case {
    let g = &mut Draws { d, at: 0 };
    let mut root = if g.chance(6) { cap_edge(g) } else { any(g) };
    if g.chance(1) {
        // A typo of a real key: the validator names it and suggests the key.
        root.insert("intreval".into(), time(MS));
    }
    let toml = toml::to_string(&root).expect("a generated tree serialises");
    Case { toml, root }
}

/// Slow unsized flows reported every few milliseconds for long enough that the `intervals`
/// table passes its cap (a quarter of the budget) while the estimate stays within the budget:
/// the cap's edge, cheaply (a few packets a millisecond).
fn cap_edge(g: &mut Draws) -> Table {
    let mut root = Table::new();
    root.insert("name".into(), Value::String("cap-edge".into()));
    let budget = g.log(24 * MIB, 128 * MIB);
    root.insert("memory_budget".into(), int(budget));
    let flows = 1 + g.below(3);
    let interval = MS * (1 + g.below(3));
    root.insert("interval".into(), time(interval));
    // Rows from a fifth to four fifths of what the budget holds: the cap is a quarter.
    let rows = (budget - 16 * MIB) / 144 * (1 + g.below(4)) / 5 / flows;
    root.insert("stop".into(), time(rows * interval));
    let mut t = Table::new();
    t.insert("bottleneck_rate".into(), rate(g.log(1_000, 2_000_000)));
    t.insert("rtt".into(), time(g.log(MS, 100 * MS)));
    root.insert("topology".into(), Value::Table(t));
    let names: Vec<&str> = burstlab_sim::tcp::cc::names().collect();
    let flow = |g: &mut Draws| {
        Value::Table(
            [("cca".to_owned(), Value::String((*g.pick(&names)).into()))].into_iter().collect(),
        )
    };
    root.insert("flow".into(), Value::Array((0..flows).map(|_| flow(g)).collect()));
    root
}

/// Any scenario the schema describes.
fn any(g: &mut Draws) -> Table {
    let mut root = Table::new();
    root.insert("name".into(), Value::String(if g.chance(1) { "" } else { "gen" }.into()));
    if g.chance(30) {
        let seed = match g.below(4) {
            0 => 0,
            1 => 1,
            2 => u64::from(g.raw()),
            _ => i64::MAX as u64,
        };
        root.insert("seed".into(), int(seed));
    }
    // Mostly short runs (they run to the end in the test's event limit), some up to the
    // longest time a scenario can state.
    let stop = if g.chance(15) { g.log(US, MAX_STOP_PS) } else { g.log(US, 2 * PS_PER_S) };
    root.insert("stop".into(), time(stop));
    if g.chance(40) {
        let ms = if g.chance(3) { 999 * US } else { g.log(MS, 10 * PS_PER_S) };
        root.insert("interval".into(), time(ms));
    }
    // Always set: the machine's default share (half its memory) would let the generator
    // reach allocations this shared test machine cannot serve.
    let budget = if g.chance(5) { g.log(MIB, 20 * MIB) } else { g.log(20 * MIB, 1 << 30) };
    root.insert("memory_budget".into(), g.size(budget));

    let counts = counts(g);
    let net = match g.below(20) {
        0..=8 => dumbbell(g, &mut root, &counts, stop),
        9..=11 => leaf_spine(g, &mut root, &counts, stop),
        12..=13 => racks(g, &mut root, &counts, stop),
        14..=15 => parking_lot(g, &mut root, &counts, stop),
        _ => graph(g, &mut root, &counts, stop),
    };
    traffic(g, &mut root, &counts, &net, stop);
    if g.chance(20) {
        let mut t = Table::new();
        if !net.switch_ports.is_empty() {
            let n = 1 + g.below(3);
            let mut ports: Vec<Value> = (0..n)
                .map(|_| Value::String(g.pick(&net.switch_ports).clone()))
                .collect::<Vec<_>>();
            ports.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
            ports.dedup();
            if g.chance(4) {
                ports.push(Value::String("swA:no-such-port".into()));
            }
            t.insert("int_ports".into(), Value::Array(ports));
        }
        if g.chance(50) {
            t.insert("int_sample".into(), int(g.log(1, U32_MAX)));
        }
        root.insert("telemetry".into(), Value::Table(t));
    }
    root
}

fn counts(g: &mut Draws) -> Counts {
    let mut flows = match g.below(100) {
        0..=9 => 0,
        10..=74 => 1 + g.below(4),
        75..=94 => g.log(5, 64),
        _ => g.log(65, 4000),
    };
    let mut incasts = Vec::new();
    if g.chance(15) {
        for _ in 0..1 + u64::from(g.chance(20)) {
            incasts.push(if g.chance(85) { g.log(1, 64) } else { g.log(1, 4096) });
        }
    }
    let bursts = if g.chance(35) { 1 + g.below(3) } else { 0 };
    if flows == 0 && incasts.is_empty() && bursts == 0 && !g.chance(10) {
        flows = 1;
    }
    Counts { flows, incasts, bursts }
}

/// An MTU: the default mostly, else the bounds and the common jumbo sizes.
fn mtu(g: &mut Draws, t: &mut Table) -> u64 {
    if !g.chance(25) {
        return 1500;
    }
    let m = if g.chance(5) { 575 } else { *g.pick(&[576u64, 1500, 9000, 65_535, 1280]) };
    t.insert("mtu".into(), int(m));
    m
}

/// The keys of one egress port (`[topology]`, a `[[link]]`, `[link.ab]`): buffer, scheduler
/// and queues, ECN marking, tbf shaping, pauses and the port's clock.
fn port_keys(g: &mut Draws, t: &mut Table, mtu: u64, counts: &Counts, stop: u64, pauses_key: &str) {
    let mut buffer = 16 * MIB;
    if g.chance(8) {
        t.insert("tbf_rate".into(), rate(g.log(1_000_000, 100 * GBPS)));
        let burst = g.log(mtu + 14, 16 * MIB);
        t.insert("tbf_burst".into(), g.size(burst));
        buffer = g.log(mtu, 64 * MIB);
        t.insert("tbf_limit".into(), g.size(buffer));
        if g.chance(30) {
            t.insert("tbf_watchdog_latency".into(), latency(g));
        }
    } else {
        if g.chance(60) {
            buffer = match g.below(100) {
                0..=3 => g.log(1, mtu),
                4..=13 => g.log(mtu, 1 << 30),
                _ => g.log(mtu, 64 * MIB),
            };
            t.insert("buffer".into(), g.size(buffer));
        }
        if g.chance(25) {
            let scheduler = *g.pick(&["strict", "drr"]);
            t.insert("scheduler".into(), Value::String(scheduler.into()));
            let n = 1 + g.below(4);
            let queues = (0..n).map(|i| Value::Table(queue(g, i, n, mtu, counts))).collect();
            t.insert("queue".into(), Value::Array(queues));
        } else if g.chance(3) {
            // fifo serves one queue: two entries are refused.
            let two = (0..2).map(|i| Value::Table(queue(g, i, 2, mtu, counts))).collect();
            t.insert("queue".into(), Value::Array(two));
        }
    }
    if g.chance(20) {
        t.insert("ecn_threshold".into(), g.log_size(1, buffer));
        if g.chance(60) {
            let mode = *g.pick(&["enqueue", "dequeue", "s-ecn", "s-ecn-hardware"]);
            t.insert("ecn_mode".into(), Value::String(mode.into()));
        }
    }
    if g.chance(5) {
        t.insert(pauses_key.into(), pauses(g, stop));
    }
    if g.chance(15) {
        t.insert("clock_ppm".into(), Value::Float(g.below(1001) as f64 * MAX_PORT_CLOCK_PPM / 1e3));
    }
}

/// Queue `i` of `n`: its own buffer, DRR quantum, and a disjoint share of DSCPs and flows.
fn queue(g: &mut Draws, i: u64, n: u64, mtu: u64, counts: &Counts) -> Table {
    let mut q = Table::new();
    let mut buffer = 16 * MIB;
    if g.chance(40) {
        buffer = g.log(mtu, 256 * MIB);
        q.insert("buffer".into(), g.size(buffer));
    }
    if g.chance(30) {
        q.insert("quantum".into(), int(g.log(1, U32_MAX)));
    }
    if g.chance(50) {
        let dscp: Vec<Value> = (0..64).filter(|d| d % n == i && g.chance(30)).map(int).collect();
        q.insert("dscp".into(), Value::Array(dscp));
    }
    if g.chance(30) && counts.tcp() > 0 {
        let flows = (0..counts.tcp().min(64)).filter(|f| f % n == i && g.chance(50)).map(int);
        q.insert("flows".into(), Value::Array(flows.collect()));
    }
    if g.chance(20) {
        q.insert("ecn_threshold".into(), g.log_size(1, buffer));
    }
    q
}

fn dumbbell(g: &mut Draws, root: &mut Table, counts: &Counts, stop: u64) -> Net {
    let mut t = Table::new();
    let bottleneck = g.log(1_000, 400 * GBPS);
    t.insert("bottleneck_rate".into(), rate(bottleneck));
    let mut host = bottleneck;
    if g.chance(30) {
        host = g.log(1_000_000, 400 * GBPS);
        t.insert("host_rate".into(), rate(host));
    }
    let mut burst_link = host;
    if g.chance(20) {
        burst_link = g.log(1_000_000, 1_000 * GBPS);
        t.insert("burst_link_rate".into(), rate(burst_link));
    }
    t.insert("rtt".into(), time(g.log(1_000, PS_PER_S)));
    let mtu = mtu(g, &mut t);
    if g.chance(15) {
        t.insert("veth".into(), Value::Boolean(true));
    }
    port_keys(g, &mut t, mtu, counts, stop, "bottleneck_pauses");
    root.insert("topology".into(), Value::Table(t));
    let mut switch_ports = vec!["swA:swA->swB".to_owned(), "swB:swB->swA".to_owned()];
    if counts.flows > 0 {
        switch_ports.extend(["swB:swB->r0".to_owned(), "swA:swA->s0".to_owned()]);
    }
    Net { hosts: vec![], switch_ports, mtu, burst_link_bps: burst_link, graph: false }
}

/// The `[topology]` keys every graph preset shares: MTU, switch ports, link delay, recording.
fn graph_common(g: &mut Draws, t: &mut Table, counts: &Counts, stop: u64) -> u64 {
    let mtu = mtu(g, t);
    port_keys(g, t, mtu, counts, stop, "pauses");
    if g.chance(30) {
        t.insert("link_delay".into(), time(g.log(1, 10 * MS)));
    }
    if g.chance(10) {
        t.insert("record".into(), Value::Boolean(false));
    }
    mtu
}

/// A preset's size: small mostly (they run), now and then anywhere in 1..=4096 (most of
/// those are refused by the budget before they expand).
fn preset_count(g: &mut Draws, small: u64) -> u64 {
    if g.chance(8) { g.log(1, 4096) } else { 1 + g.below(small) }
}

fn leaf_spine(g: &mut Draws, root: &mut Table, counts: &Counts, stop: u64) -> Net {
    let mut t = Table::new();
    t.insert("preset".into(), Value::String("leaf-spine".into()));
    let (leaves, spines, per) = (preset_count(g, 4), preset_count(g, 4), preset_count(g, 8));
    t.insert("leaves".into(), int(leaves));
    t.insert("spines".into(), int(spines));
    t.insert("hosts_per_leaf".into(), int(per));
    let mut host_bps = 10 * GBPS;
    if g.chance(40) {
        host_bps = g.log(1_000_000, 400 * GBPS);
        t.insert("host_rate".into(), rate(host_bps));
    }
    if g.chance(20) {
        t.insert("fabric_rate".into(), rate(g.log(1_000_000, 400 * GBPS)));
    } else if g.chance(20) {
        let ratio = if g.chance(5) { 0.5 } else { 1.0 + g.below(8) as f64 / 2.0 };
        t.insert("oversubscription".into(), Value::Float(ratio));
    }
    let mtu = graph_common(g, &mut t, counts, stop);
    root.insert("topology".into(), Value::Table(t));
    let hosts = (0..(leaves * per).min(4096)).map(|h| (format!("h{h}"), host_bps)).collect();
    let mut switch_ports = Vec::new();
    for l in 0..leaves.min(4) {
        for s in 0..spines.min(4) {
            switch_ports.push(format!("leaf{l}:leaf{l}->spine{s}"));
            switch_ports.push(format!("spine{s}:spine{s}->leaf{l}"));
        }
        switch_ports.push(format!("leaf{l}:leaf{l}->h{}", l * per));
    }
    host_keys_table(g, root);
    Net { hosts, switch_ports, mtu, burst_link_bps: host_bps, graph: true }
}

fn racks(g: &mut Draws, root: &mut Table, counts: &Counts, stop: u64) -> Net {
    let mut t = Table::new();
    t.insert("preset".into(), Value::String("racks".into()));
    let (racks, per) = (preset_count(g, 4), preset_count(g, 4));
    t.insert("racks".into(), int(racks));
    t.insert("hosts_per_rack".into(), int(per));
    let mut host_bps = GBPS;
    if g.chance(40) {
        host_bps = g.log(1_000_000, 400 * GBPS);
        t.insert("host_rate".into(), rate(host_bps));
    }
    if g.chance(30) {
        t.insert("uplink_rate".into(), rate(g.log(1_000_000, 400 * GBPS)));
    }
    let mtu = graph_common(g, &mut t, counts, stop);
    root.insert("topology".into(), Value::Table(t));
    let hosts = (0..(racks * per).min(4096)).map(|h| (format!("h{h}"), host_bps)).collect();
    let mut switch_ports = Vec::new();
    for r in 0..racks.min(4) {
        switch_ports.push(format!("tor{r}:tor{r}->agg"));
        switch_ports.push(format!("agg:agg->tor{r}"));
        switch_ports.push(format!("tor{r}:tor{r}->h{}", r * per));
    }
    host_keys_table(g, root);
    Net { hosts, switch_ports, mtu, burst_link_bps: host_bps, graph: true }
}

fn parking_lot(g: &mut Draws, root: &mut Table, counts: &Counts, stop: u64) -> Net {
    let mut t = Table::new();
    t.insert("preset".into(), Value::String("parking-lot".into()));
    let (hops, per) = (preset_count(g, 4), preset_count(g, 3));
    t.insert("hops".into(), int(hops));
    t.insert("hosts_per_switch".into(), int(per));
    let bottleneck = g.log(1_000, 400 * GBPS);
    t.insert("bottleneck_rate".into(), rate(bottleneck));
    let mut host_bps = bottleneck;
    if g.chance(40) {
        host_bps = g.log(1_000_000, 400 * GBPS);
        t.insert("host_rate".into(), rate(host_bps));
    }
    let mtu = graph_common(g, &mut t, counts, stop);
    root.insert("topology".into(), Value::Table(t));
    let switches = (hops + 1).min(64);
    let hosts =
        (0..switches).flat_map(|i| (0..per.min(64)).map(move |k| (format!("h{i}_{k}"), host_bps)));
    let switch_ports = (0..hops.min(4)).map(|i| format!("sw{i}:sw{i}->sw{}", i + 1)).collect();
    host_keys_table(g, root);
    Net { hosts: hosts.collect(), switch_ports, mtu, burst_link_bps: host_bps, graph: true }
}

/// `[hosts]`: every host's settings, now and then.
fn host_keys_table(g: &mut Draws, root: &mut Table) {
    if g.chance(25) {
        let mut h = Table::new();
        host_keys(g, &mut h, Role::Host);
        root.insert("hosts".into(), Value::Table(h));
    }
}

/// `preset = "graph"`: hosts and switches joined by a spanning tree of links and a few more.
fn graph(g: &mut Draws, root: &mut Table, counts: &Counts, stop: u64) -> Net {
    let mut t = Table::new();
    t.insert("preset".into(), Value::String("graph".into()));
    let mtu = mtu(g, &mut t);
    if g.chance(30) {
        t.insert("buffer".into(), g.log_size(mtu, 64 * MIB));
    }
    root.insert("topology".into(), Value::Table(t));
    let n_hosts = if g.chance(5) { g.log(2, 2000) } else { 2 + g.below(6) };
    let n_switches = if g.chance(5) { g.log(1, 200) } else { g.below(4) };
    let mut nodes = Vec::new();
    for i in 0..n_hosts {
        let mut n = Table::new();
        n.insert("name".into(), Value::String(format!("h{i}")));
        if i < 8 && g.chance(15) {
            host_keys(g, &mut n, Role::Host);
        }
        nodes.push(Value::Table(n));
    }
    for j in 0..n_switches {
        let mut n = Table::new();
        n.insert("name".into(), Value::String(format!("sw{j}")));
        n.insert("kind".into(), Value::String("switch".into()));
        if g.chance(1) {
            n.insert("cca".into(), Value::String("reno".into()));
        }
        nodes.push(Value::Table(n));
    }
    root.insert("node".into(), Value::Array(nodes));

    let mut links = Vec::new();
    let mut first_rate: Vec<Option<u64>> = vec![None; n_hosts as usize];
    let mut switch_ports = Vec::new();
    let mut link = |g: &mut Draws, a: String, b: String| {
        let mut l = Table::new();
        let bps = g.log(1_000, 400 * GBPS);
        l.insert("a".into(), Value::String(a.clone()));
        l.insert("b".into(), Value::String(b.clone()));
        l.insert("rate".into(), rate(bps));
        if g.chance(70) {
            l.insert("delay".into(), time(g.log(1, 100 * MS)));
        }
        if g.chance(25) {
            port_keys(g, &mut l, mtu, counts, stop, "pauses");
        }
        for (from, to, dir) in [(&a, &b, "ab"), (&b, &a, "ba")] {
            if from.starts_with("sw") {
                switch_ports.push(format!("{from}:{from}->{to}"));
                if g.chance(10) {
                    let mut d = Table::new();
                    port_keys(g, &mut d, mtu, counts, stop, "pauses");
                    l.insert(dir.into(), Value::Table(d));
                }
            }
        }
        for end in [&a, &b] {
            if let Some(h) = end.strip_prefix('h').and_then(|i| i.parse::<usize>().ok()) {
                first_rate[h].get_or_insert(bps);
            }
        }
        links.push(Value::Table(l));
    };
    for j in 1..n_switches {
        let to = g.below(j);
        link(g, format!("sw{j}"), format!("sw{to}"));
    }
    for i in 0..n_hosts {
        if n_switches > 0 {
            let to = g.below(n_switches);
            link(g, format!("h{i}"), format!("sw{to}"));
        } else if i > 0 {
            link(g, format!("h{i}"), format!("h{}", i - 1));
        }
    }
    if g.chance(20) {
        // An extra link: a second path (ECMP), or a host with two links.
        let a = g.below(n_hosts);
        let b = if n_switches > 0 { format!("sw{}", g.below(n_switches)) } else { "h0".into() };
        link(g, format!("h{a}"), b);
    }
    if g.chance(3) {
        // Disconnected: the node exists but no link reaches it.
        root.get_mut("node").and_then(Value::as_array_mut).expect("nodes").push(Value::Table(
            [("name".to_owned(), Value::String("island".into()))].into_iter().collect(),
        ));
    }
    root.insert("link".into(), Value::Array(links));
    host_keys_table(g, root);
    let hosts =
        (0..n_hosts as usize).map(|i| (format!("h{i}"), first_rate[i].unwrap_or(1_000))).collect();
    Net { hosts, switch_ports, mtu, burst_link_bps: 0, graph: true }
}

/// Where host settings are written: a `[[flow]]` (its size and start too), an incast's
/// `[incast.tcp]`, or a host (`[hosts]`, a `[[node]]`) in a graph.
#[derive(Clone, Copy, PartialEq)]
enum Role {
    DumbbellFlow,
    GraphFlow,
    IncastTcp,
    Host,
}

/// A `tcp_rmem`/`tcp_wmem` triple: the sysctl's string form or an array of sizes.
fn triple(g: &mut Draws) -> Value {
    let mut v = [g.log(1, SYSCTL_INT_MAX), g.log(1, SYSCTL_INT_MAX), g.log(1, SYSCTL_INT_MAX)];
    if !g.chance(3) {
        v.sort_unstable();
    }
    if g.chance(50) {
        Value::String(format!("{} {} {}", v[0], v[1], v[2]))
    } else {
        Value::Array(v.iter().map(|&b| g.size(b)).collect())
    }
}

/// A flow's or host's settings, each key now and then, from its real range.
fn host_keys(g: &mut Draws, t: &mut Table, role: Role) {
    if g.chance(80) {
        let names: Vec<&str> = burstlab_sim::tcp::cc::names().collect();
        t.insert("cca".into(), Value::String((*g.pick(&names)).into()));
    }
    let p = 6;
    if g.chance(p) {
        t.insert("tcp_rmem".into(), triple(g));
    }
    if g.chance(p) {
        t.insert("tcp_wmem".into(), triple(g));
    }
    if g.chance(p) {
        t.insert("rmem_max".into(), int(g.log(1, SYSCTL_INT_MAX)));
    }
    let adv = g.chance(p);
    if adv {
        t.insert("tcp_adv_win_scale".into(), Value::Integer(g.below(63) as i64 - 31));
    } else if g.chance(p) {
        t.insert("scaling_ratio".into(), int(1 + g.below(255)));
    }
    if g.chance(if adv { 1 } else { 4 }) {
        t.insert("skb_scaling_ratio".into(), int(1 + g.below(255)));
    }
    if g.chance(p) {
        t.insert("rcvbuf_tuning".into(), Value::String((*g.pick(&["6.6", "6.18"])).into()));
    }
    if g.chance(p) {
        // ip-route's initcwnd is a u32, bounded only by `snd_cwnd_clamp` (`tcp_init_cwnd()`).
        t.insert("initcwnd".into(), int(g.log(1, u32::MAX as u64)));
    }
    if g.chance(p) {
        t.insert("initrwnd".into(), int(g.log(1, U32_MAX) - 1));
    }
    if g.chance(p) {
        t.insert("tcp_comp_sack_nr".into(), int(g.below(256)));
    }
    if g.chance(p) {
        t.insert("rto_min".into(), time(g.log(US, 2 * PS_PER_S)));
    }
    for key in ["quickack", "ecn"] {
        if g.chance(p) {
            t.insert(key.into(), Value::Boolean(true));
        }
    }
    if g.chance(p) {
        t.insert("hz".into(), int(*g.pick(&[100, 250, 300, 1000])));
    }
    if g.chance(p) {
        t.insert("dctcp_shift_g".into(), int(g.below(11)));
    }
    if g.chance(p) {
        t.insert("timers".into(), Value::String((*g.pick(&["exact", "jiffies"])).into()));
    }
    if g.chance(8) {
        let reading = latency(g);
        let single = reading.as_str().is_some_and(|s| s != "0s");
        t.insert("read_latency".into(), reading);
        if single && g.chance(30) {
            t.insert("read_latency_dist".into(), Value::String("exponential".into()));
        }
        if g.chance(30) {
            t.insert("first_read_latency".into(), time(g.log(1_000, 10 * MS)));
        }
        if g.chance(30) {
            t.insert("read_hold".into(), latency(g));
        }
    }
    for key in ["handshake_latency", "rx_coalesce", "pacing_latency"] {
        if g.chance(p) {
            t.insert(key.into(), latency(g));
        }
    }
    if g.chance(p) {
        t.insert("dscp".into(), int(g.below(64)));
    }
    if g.chance(p) {
        t.insert("max_pacing_rate".into(), rate(g.log(1_000, 400 * GBPS)));
    }
    if g.chance(p) {
        t.insert("gso_max_size".into(), g.log_size(9000, 512 << 10));
    }
    // A graph's flows take their qdisc and NIC from their host.
    if role != Role::GraphFlow {
        if g.chance(10) {
            t.insert("qdisc".into(), Value::String((*g.pick(&["fq", "pfifo_fast"])).into()));
            if t.get("qdisc").and_then(Value::as_str) == Some("fq") {
                if g.chance(30) {
                    t.insert("fq_maxrate".into(), rate(g.log(1_000, 34 * GBPS)));
                }
                if g.chance(30) {
                    t.insert("fq_flow_limit".into(), int(g.log(1, U32_MAX)));
                }
                if g.chance(30) {
                    // sch_fq takes up to 1 MiB; now and then a value past it.
                    let hi = if g.chance(5) { U32_MAX } else { 1 << 20 };
                    t.insert("fq_quantum".into(), int(g.log(1, hi)));
                }
            }
        }
        if g.chance(p) {
            t.insert("nic_rate".into(), rate(g.log(1_000_000, 400 * GBPS)));
        }
    }
}

/// A host of `hosts` other than `other`, where there is one (one time in a hundred, any).
fn other_of(g: &mut Draws, hosts: &[(String, u64)], other: &Value) -> Value {
    let n = hosts.len() as u64;
    let i = g.below(n);
    match other.as_str() {
        Some(o) if n > 1 && hosts[i as usize].0 == o && !g.chance(1) => {
            Value::String(hosts[((i + 1 + g.below(n - 1)) % n) as usize].0.clone())
        }
        _ => Value::String(hosts[i as usize].0.clone()),
    }
}

/// `[[flow]]`, `[[incast]]` and `[[burst]]` entries for `net`.
fn traffic(g: &mut Draws, root: &mut Table, counts: &Counts, net: &Net, stop: u64) {
    let host = |g: &mut Draws| Value::String(g.pick(&net.hosts).0.clone());
    let other_host = |g: &mut Draws, other: &Value| other_of(g, &net.hosts, other);
    let ends = |g: &mut Draws, t: &mut Table| {
        if net.graph && !net.hosts.is_empty() {
            let src = host(g);
            t.insert("dst".into(), other_host(g, &src));
            t.insert("src".into(), src);
        }
    };
    // Many flows repeat a few templates: their count, not their variety, is the point.
    let role = if net.graph { Role::GraphFlow } else { Role::DumbbellFlow };
    let templates: Vec<Table> = (0..counts.flows.min(4))
        .map(|_| {
            let mut t = Table::new();
            host_keys(g, &mut t, role);
            t
        })
        .collect();
    let mut flows = Vec::new();
    for i in 0..counts.flows {
        let mut f = templates[(i % 4) as usize].clone();
        if i < 8 || g.chance(5) {
            // Mostly sized (a sized flow ends), small more often than large.
            if !g.chance(15) {
                let big = if g.chance(20) { 13 << 30 } else { 10 * MIB };
                f.insert("size".into(), g.log_size(1, big));
            }
            if g.chance(30) {
                let start = if g.chance(1) { stop } else { g.below(stop) };
                f.insert("start".into(), time(start));
            }
        } else {
            f.insert("size".into(), Value::String("10KB".into()));
        }
        ends(g, &mut f);
        if net.graph && g.chance(1) {
            let path = [f.get("src").cloned(), f.get("dst").cloned()];
            f.insert("path".into(), Value::Array(path.into_iter().flatten().collect()));
        }
        flows.push(Value::Table(f));
    }
    if !flows.is_empty() {
        root.insert("flow".into(), Value::Array(flows));
    }

    let mut incasts = Vec::new();
    for &senders in &counts.incasts {
        let mut q = Table::new();
        q.insert("senders".into(), int(senders));
        let bytes = if g.chance(3) { senders - 1 } else { g.log(senders, 100_000_000) };
        q.insert("query_size".into(), g.size(bytes.max(1)));
        if g.chance(50) {
            q.insert("queries".into(), int(g.log(1, 1_000_000)));
        }
        if g.chance(30) {
            q.insert("start".into(), time(g.below(stop)));
        }
        if g.chance(30) {
            q.insert("gap".into(), time(g.log(1, 100 * MS)));
        }
        if g.chance(30) {
            q.insert("serve_time".into(), latency(g));
        }
        if g.chance(30) {
            q.insert("serve_order".into(), Value::String((*g.pick(&["fixed", "shuffled"])).into()));
        }
        if !net.graph && g.chance(30) {
            q.insert("one_sender_host".into(), Value::Boolean(true));
        }
        if net.graph && !net.hosts.is_empty() {
            let dst = host(g);
            q.insert(
                "src".into(),
                Value::Array((0..senders).map(|_| other_host(g, &dst)).collect()),
            );
            q.insert("dst".into(), dst);
        }
        if g.chance(50) {
            let mut t = Table::new();
            let role = if net.graph { Role::GraphFlow } else { Role::IncastTcp };
            host_keys(g, &mut t, role);
            q.insert("tcp".into(), Value::Table(t));
        }
        incasts.push(Value::Table(q));
    }
    if !incasts.is_empty() {
        root.insert("incast".into(), Value::Array(incasts));
    }

    let mut bursts = Vec::new();
    for _ in 0..counts.bursts {
        let mut b = Table::new();
        // A graph names a host per source: keep those lists short.
        let sources = match g.below(20) {
            0..=15 => 1 + g.below(64),
            16..=18 => g.log(1, if net.graph { 256 } else { 100_000 }),
            _ => g.log(1, if net.graph { 256 } else { U32_MAX }),
        };
        if sources > 1 || g.chance(30) {
            b.insert("sources".into(), int(sources));
        }
        let mut link = net.burst_link_bps;
        if net.graph && !net.hosts.is_empty() {
            let dst = host(g);
            let names: Vec<Value> = (0..sources).map(|_| other_host(g, &dst)).collect();
            let rate_of = |v: &Value| net.hosts.iter().find(|h| Some(h.0.as_str()) == v.as_str());
            link = names.iter().filter_map(rate_of).map(|h| h.1).min().unwrap_or(1_000);
            let src = if names.len() == 1 && g.chance(50) {
                names[0].clone()
            } else {
                Value::Array(names)
            };
            b.insert("src".into(), src);
            b.insert("dst".into(), dst);
        }
        let bps = if g.chance(3) { link.saturating_mul(2) } else { g.log(1_000, link) };
        b.insert("rate".into(), rate(bps.max(1)));
        b.insert("start".into(), time(g.below(stop)));
        b.insert("duration".into(), time(g.log(1, stop)));
        if g.chance(40) {
            b.insert("packet_size".into(), int(g.log(28, net.mtu)));
        }
        if g.chance(10) {
            b.insert("dscp".into(), int(g.below(64)));
        }
        if g.chance(8) {
            b.insert("jitter".into(), time(if g.chance(50) { 0 } else { g.log(1, MS) }));
        }
        if g.chance(15) {
            let ppm = g.below(1001) as f64 * MAX_BURST_CLOCK_PPM / 1e3;
            b.insert("clock_ppm".into(), Value::Float(ppm));
        }
        bursts.push(Value::Table(b));
    }
    if !bursts.is_empty() {
        root.insert("burst".into(), Value::Array(bursts));
    }
}
