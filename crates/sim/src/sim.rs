//! The world and its event loop: pop an event and hand it to its port (`ports.rs`), host
//! (`hosts.rs`) or app; build the tables from their recorders (`record/`) at the end.

mod hosts;
mod ports;

use std::ops::ControlFlow;
use std::time::Instant;

use crate::app::burst::BurstSource;
use crate::app::incast::{Conns, IncastApp};
use crate::app::websearch::WebSearchApp;
use crate::event::{Event, EventQueue};
use crate::host::nic::Nic;
use crate::host::rx::Reader;
use crate::host::socket::{ReceiverSocket, SenderSocket};
use crate::host::{Host, SocketRef};
use crate::net::graph::NodeKind;
use crate::net::port::PortId;
use crate::net::topology::Network;
use crate::observe::{Cancelled, OBSERVE_EVERY, Observer};
use crate::packet::{Packet, PacketPool};
use crate::record::drops::Drops;
use crate::record::int::IntRecorder;
use crate::record::intervals::{FlowInterval, Intervals};
use crate::record::queries::Queries;
use crate::record::queue::QueueRecorder;
use crate::record::{self, Output, RowCap, Summary};
use crate::scenario::Scenario;
use crate::tcp::config::FlowSpec;
use crate::tcp::receiver::TcpReceiver;
use crate::tcp::sender::{State, TcpSender};
use crate::time::Time;

/// One TCP flow: its two sockets, on two hosts, and its row of the tables.
struct Flow {
    snd: SocketRef,
    rcv: SocketRef,
    start: Time,
    size: Option<u64>,
    /// The incast app this connection serves, if any.
    app: Option<usize>,
    /// Its open `intervals` row.
    iv: FlowInterval,
}

/// `World::host_of` of a switch.
const NO_HOST: u32 = u32::MAX;

pub struct World<'s> {
    scn: &'s Scenario,
    now: Time,
    events: EventQueue,
    pool: PacketPool,
    net: Network,
    hosts: Vec<Host>,
    /// Per node: its index in `hosts`, or [`NO_HOST`] for a switch.
    host_of: Vec<u32>,
    flows: Vec<Flow>,
    incasts: Vec<IncastApp>,
    /// Web-search workloads; their connections' `Flow::app` is `incasts.len()` + their index.
    websearches: Vec<WebSearchApp>,
    /// Burst sources in the order of their first event (ties by `index`), not by their
    /// number: equal-period sources then send in the order they are stored, so the per-datagram
    /// walk over their state is sequential, which the prefetcher follows at 100,000 sources
    /// (docs/performance.md, "Memory and scale"). Events and datagrams name a source by its
    /// position here.
    bursts: Vec<BurstSource>,
    /// Flows and burst sources not finished yet; the run ends when both are zero and the last
    /// packet has left the network (or at `stop`).
    active: usize,
    intervals: Intervals,
    /// `intervals` rows already handed to the observer.
    iv_observed: usize,
    queue: QueueRecorder,
    drops: Drops,
    queries: Queries,
    /// The `int` table's recorder; `None` (one predictable branch per hook) when INT is off.
    int: Option<Box<IntRecorder>>,
    out: Vec<Packet>,
    /// The packets a host's core finished with (`host::cpu`), handed on from here.
    cpu_done: Vec<Packet>,
    /// Sender-timer events superseded by an earlier deadline since the last sweep.
    stale_sender_timers: usize,
}

/// Run a scenario to its end and return its records.
pub fn run(scn: &Scenario) -> Output {
    match run_observed(scn, &mut ()) {
        Ok(output) => output,
        Err(Cancelled { .. }) => unreachable!("the unit observer never stops a run"),
    }
}

/// [`run`], with `obs` shown each `intervals` row as it is completed and asked every
/// [`OBSERVE_EVERY`] events whether to go on; the records are the same as [`run`]'s.
pub fn run_observed(scn: &Scenario, obs: &mut dyn Observer) -> Result<Output, Cancelled> {
    let wall = Instant::now();
    let mut w = World::new(scn);
    if w.run_loop(obs).is_break() {
        return Err(Cancelled { at: w.now });
    }
    w.observe_intervals(obs);
    w.check_conservation();
    Ok(w.finish(wall.elapsed().as_secs_f64()))
}

impl<'s> World<'s> {
    #[inline(never)]
    pub fn new(scn: &'s Scenario) -> World<'s> {
        let net = scn.network();
        // [[flow]] transfers first, then every incast's senders: connections that open empty
        // (size 0) and carry each query's response when the app writes it. Each connection
        // borrows its settings (the scenario's, or its app's one copy), not a clone each.
        let app_spec =
            |tcp: &FlowSpec, start: Time| FlowSpec { size_bytes: Some(0), start, ..tcp.clone() };
        let app_specs: Vec<FlowSpec> = (scn.incasts.iter().map(|i| app_spec(&i.tcp, i.start)))
            .chain(scn.websearches.iter().map(|w| app_spec(&w.tcp, w.background.start)))
            .collect();
        let n_specs = scn.flows.len()
            + scn.incasts.iter().map(|i| i.senders as usize).sum::<usize>()
            + scn.websearches.iter().map(|w| w.connections().len()).sum::<usize>();
        let mut specs: Vec<(&FlowSpec, Option<usize>)> = Vec::with_capacity(n_specs);
        specs.extend(scn.flows.iter().map(|f| (f, None)));
        let mut incasts = Vec::new();
        for (k, inc) in scn.incasts.iter().enumerate() {
            let first = specs.len();
            specs.extend(std::iter::repeat_n((&app_specs[k], Some(k)), inc.senders as usize));
            // The RTT the app plans with: the dumbbell's, or its connections' longest
            // propagation RTT in a graph.
            let rtt = match scn.topology.graph {
                None => scn.topology.dumbbell.rtt,
                Some(_) => {
                    (first..specs.len()).map(|f| net.propagation_rtt[f]).max().unwrap_or(Time::ZERO)
                }
            };
            incasts.push(IncastApp::new(inc, first..specs.len(), scn.seed, k, rtt));
        }
        let mut websearches = Vec::new();
        for (k, ws) in scn.websearches.iter().enumerate() {
            let (first, app) = (specs.len(), incasts.len() + k);
            let n = ws.connections().len();
            specs.extend(std::iter::repeat_n((&app_specs[app], Some(app)), n));
            let rtt = (first..specs.len()).map(|f| net.propagation_rtt[f]).max();
            let app =
                WebSearchApp::new(ws, first..specs.len(), scn.seed, k, rtt.unwrap_or_default());
            websearches.push(app.expect("the scenario checked the workload"));
        }
        let (hosts, host_of, flows) = open_sockets(&net, &specs, scn.topology.mtu(), scn.seed);
        let mut bursts: Vec<BurstSource> = scn
            .bursts
            .iter()
            .flat_map(|b| (0..b.sources).map(move |_| b))
            .enumerate()
            .map(|(k, b)| BurstSource::new(b, scn.seed, k as u64))
            .collect();
        ports::attach_source_links(&net, specs.len(), &mut bursts);
        // Cached: a source's first event costs a 128-bit division and a jitter draw, and
        // `sort_by_key` would compute it on every comparison (3.4 M times for 100,000 sources).
        bursts.sort_by_cached_key(|b| (b.next_event().unwrap_or(Time::MAX), b.index));
        let deepest = match &scn.topology.graph {
            None => scn.topology.dumbbell.bottleneck.queues.iter().map(|q| q.buffer_bytes).max(),
            Some(g) => g
                .graph
                .links
                .iter()
                .flat_map(|l| [&l.ab, &l.ba])
                .filter(|d| d.recorded)
                .flat_map(|d| d.port.queues.iter().map(|q| q.buffer_bytes))
                .max(),
        }
        .unwrap_or(0);
        let caps = crate::scenario::budget::row_caps(scn.memory_budget);
        let mut w = World {
            scn,
            now: Time::ZERO,
            events: EventQueue::default(),
            stale_sender_timers: 0,
            pool: PacketPool::default(),
            queue: QueueRecorder::new(&net, scn.topology.mtu(), deepest, RowCap::new(caps.queue)),
            drops: Drops::new(RowCap::new(caps.drops)),
            int: IntRecorder::new(&net, &scn.telemetry, RowCap::new(caps.int)).map(Box::new),
            net,
            active: scn.flows.len() + incasts.len() + websearches.len() + bursts.len(),
            hosts,
            host_of,
            incasts,
            websearches,
            flows,
            bursts,
            intervals: Intervals::new(RowCap::new(caps.intervals)),
            iv_observed: 0,
            queries: Queries::default(),
            out: Vec::new(),
            cpu_done: Vec::new(),
        };
        for (i, f) in w.flows.iter().enumerate() {
            w.events.push(f.start, Event::FlowStart { flow: i as u32 });
            if f.iv.open {
                w.events.push(f.start + scn.interval, Event::Interval { flow: i as u32 });
            }
        }
        for (k, app) in w.incasts.iter().enumerate() {
            w.events.push(app.first_request(), Event::IncastRequest { app: k as u32 });
        }
        for (k, app) in w.websearches.iter().enumerate() {
            match app.first_wake() {
                Some(t) => w.events.push(t, Event::WebSearchWake { app: k as u32 }),
                None => w.active -= 1,
            }
        }
        // Pushed by source number, as before they were sorted: ties pop in push order.
        for slot in w.bursts_by_index() {
            if let Some(t) = w.bursts[slot].next_event() {
                w.events.push(t, Event::BurstEmit { source: slot as u32 });
            } else {
                w.active -= 1;
            }
        }
        w
    }

    fn run_loop(&mut self, obs: &mut dyn Observer) -> ControlFlow<()> {
        let mut until_observed = OBSERVE_EVERY;
        while self.active > 0 || self.pool.live() > 0 {
            let Some((t, ev)) = self.events.pop() else { break };
            if t > self.scn.stop {
                self.now = self.scn.stop;
                break;
            }
            debug_assert!(t >= self.now, "time went backwards: {t} < {}", self.now);
            self.now = t;
            match ev {
                Event::TxDone { port } => self.tx_done(port),
                Event::Arrival { port } => self.arrival(port),
                Event::PortWake { port } => self.port_wake(port),
                Event::FlowStart { flow } => self.flow_start(flow),
                Event::SenderTimer { flow } => self.sender_timer(flow, t),
                Event::PaceTimer { flow } => self.pace_timer(flow, t),
                Event::TsqResume { flow } => self.tsq_resume(flow),
                Event::DelAckTimer { flow } => self.delack_timer(flow, t),
                Event::AppRead { flow } => self.app_read(flow),
                Event::HandshakeAnswer { flow } => self.handshake_answer(flow),
                Event::RxBatch { flow } => self.rx_batch(flow),
                Event::HostCpu { host, core } => self.host_cpu(host, core),
                Event::Interval { flow } => self.interval(flow),
                Event::BurstEmit { source } => self.burst_emit(source),
                Event::IncastRequest { app } => self.with_incast(app, |a, w| a.on_request(w)),
                Event::IncastWrite { app } => self.with_incast(app, |a, w| a.on_write(w)),
                Event::IncastServe { app, sender } => {
                    self.with_incast(app, |a, w| a.on_serve(sender, w))
                }
                Event::WebSearchWake { app } => self.websearch(app as usize, None),
            }
            until_observed -= 1;
            if until_observed == 0 {
                until_observed = OBSERVE_EVERY;
                self.observe_intervals(obs);
                obs.poll(self.now)?;
            }
        }
        ControlFlow::Continue(())
    }

    /// Hand the `intervals` rows completed since the last call to `obs`.
    #[inline(never)]
    fn observe_intervals(&mut self, obs: &mut dyn Observer) {
        for i in self.iv_observed..self.intervals.len() {
            obs.interval(&self.intervals.row(i));
        }
        self.iv_observed = self.intervals.len();
    }

    /// Hand incast app `k` an event; it acts on its connections through the world.
    #[inline(never)]
    fn with_incast<R>(&mut self, k: u32, f: impl FnOnce(&mut IncastApp, &mut Self) -> R) -> R {
        let mut apps = std::mem::take(&mut self.incasts);
        let r = f(&mut apps[k as usize], self);
        self.incasts = apps;
        r
    }

    /// A receiver of incast app `k` got data: count the response if it is now complete.
    #[inline(never)]
    fn incast_progress(&mut self, fi: usize, k: usize) {
        if k >= self.incasts.len() {
            return self.websearch(k - self.incasts.len(), Some(fi));
        }
        let Some(q) = self.with_incast(k as u32, |a, w| a.on_delivered(fi, w)) else { return };
        self.queries.push(k, &q, self.now);
        if q.next_after.is_none() {
            self.active -= 1;
        }
    }

    /// Hand web-search workload `k` its wake-up, or connection `fi`'s delivery; record the
    /// requests that completes.
    #[inline(never)]
    fn websearch(&mut self, k: usize, fi: Option<usize>) {
        let mut apps = std::mem::take(&mut self.websearches);
        let mut done = Vec::new();
        let app = &mut apps[k];
        let was_over = app.is_over();
        let over = match fi {
            None => app.on_wake(self),
            Some(fi) => app.on_delivered(fi, self, &mut done),
        };
        self.websearches = apps;
        for c in &done {
            self.queries.push_websearch(k, c);
        }
        if over && !was_over {
            self.active -= 1;
        }
    }

    /// The positions in `bursts` of source 0, 1, 2, ...
    fn bursts_by_index(&self) -> Vec<usize> {
        let mut slots = vec![0; self.bursts.len()];
        for (slot, b) in self.bursts.iter().enumerate() {
            slots[b.index as usize] = slot;
        }
        slots
    }

    /// Every packet ever allocated is delivered, dropped, or still in a queue or on a wire.
    #[inline(never)]
    fn check_conservation(&self) {
        let in_net: usize = (self.net.ports.iter())
            .map(|p| p.queues.packets() + p.in_tx.is_some() as usize + p.pipe.len())
            .sum();
        let in_qdiscs: usize =
            self.hosts.iter().flat_map(|h| &h.nics).map(|n| n.qdisc_packets()).sum();
        let in_net = in_net + in_qdiscs;
        assert_eq!(in_net, self.pool.live(), "packets leaked or double-freed");
        for (fi, f) in self.flows.iter().enumerate() {
            let (snd, rcv) = self.ends(fi);
            // Each byte reaches the application exactly once, and never beyond what was sent.
            // Acknowledged bytes a slow reader has not read yet at `stop` wait in its queue.
            assert!(rcv.stats.delivered <= snd.snd_nxt);
            if let Some(size) = f.size {
                assert!(rcv.stats.delivered <= size);
                if snd.state == State::Done {
                    let held = rcv.stats.delivered + rcv.unread();
                    assert_eq!(held, size, "flow {fi} acked bytes never delivered");
                }
            }
        }
    }

    /// Each table from its builder, and the summary. The sockets, the largest part of a run
    /// of many flows, are dropped once their rows are taken, before the tables are built; the
    /// flows' rows are built once, for the summary, and the `flows` table reads them there.
    #[inline(never)]
    fn finish(mut self, wall_s: f64) -> Output {
        let now = self.now;
        let n_tcp = self.flows.len();
        let packet_hops = self.net.ports.iter().map(|p| p.stats.tx_packets).sum();
        let mut fs = Vec::with_capacity(n_tcp + self.bursts.len());
        fs.extend((0..n_tcp).map(|i| {
            let f = &self.flows[i];
            record::flows::tcp(&self.net, i, self.ends(i), f.start, f.size, now)
        }));
        let net = &self.net;
        for b in self.bursts_by_index().into_iter().map(|s| &self.bursts[s]) {
            let k = b.index as usize;
            fs.push(record::flows::udp(net, n_tcp + k, k, b, now));
        }
        let hosts = record::summary::hosts(&self.hosts, net, now);
        let engine = record::summary::engine(self.events.popped(), wall_s, now);
        drop((
            std::mem::take(&mut self.hosts),
            std::mem::take(&mut self.flows),
            std::mem::take(&mut self.bursts),
            std::mem::take(&mut self.events),
            std::mem::take(&mut self.pool),
        ));
        let caps = [
            ("queue", self.queue.cap),
            ("drops", self.drops.cap),
            ("int", self.int.as_ref().map_or_else(RowCap::default, |r| r.cap)),
            ("intervals", self.intervals.cap),
        ];
        let rows_not_kept =
            caps.iter().filter(|(_, c)| c.not_kept > 0).map(|&(t, c)| (t, c.not_kept)).collect();
        let summary = Summary {
            scenario: self.scn.name.clone(),
            seed: self.scn.seed,
            flows: fs,
            ports: record::summary::ports(net, &self.queue, now),
            engine,
            rows_not_kept,
            hosts,
        };
        let tables = vec![
            record::flows::table(&summary.flows, net),
            self.intervals.finish(),
            self.queue.finish(net),
            self.drops.finish(net),
            self.queries.finish(),
            IntRecorder::finish(self.int.map(|b| *b)),
        ];
        Output { summary, tables, packet_hops }
    }
}

/// Every host's sockets: each flow's sender on its source host, its receiver on its
/// destination host; and each flow's pair of sockets.
fn open_sockets(
    net: &Network,
    specs: &[(&FlowSpec, Option<usize>)],
    mtu: u32,
    seed: u64,
) -> (Vec<Host>, Vec<u32>, Vec<Flow>) {
    // Hosts and their NICs allocated exactly: grown by doubling, 200,003 hosts took room for
    // 262,144, and a one-NIC host room for four NICs.
    let mut host_of = vec![NO_HOST; net.nodes.len()];
    let mut nic_counts = vec![0usize; net.nodes.len()];
    for p in &net.ports {
        nic_counts[p.node as usize] += 1;
    }
    let n_hosts = net.nodes.iter().filter(|n| n.kind == NodeKind::Host).count();
    let mut hosts = Vec::with_capacity(n_hosts);
    for (i, n) in net.nodes.iter().enumerate() {
        if n.kind == NodeKind::Host {
            host_of[i] = hosts.len() as u32;
            hosts.push(Host::new(i as u32, Vec::with_capacity(nic_counts[i])));
        }
    }
    // A NIC, with the host's qdisc, on each port a host sends from.
    for (pid, p) in net.ports.iter().enumerate() {
        let h = host_of[p.node as usize];
        if h != NO_HOST {
            let nic = Nic::new(pid as PortId, net.nodes[p.node as usize].fq.as_ref());
            hosts[h as usize].nics.push(nic);
        }
    }
    // Each host's sockets allocated exactly: pushed one by one, a lone receiver got room for
    // four (3.5 KB, 2.6 KB of it unused: 260 MB at 100,000 flows).
    let mut counts = vec![(0usize, 0usize); hosts.len()];
    for &(s, r) in &net.flow_hosts[..specs.len()] {
        counts[host_of[s as usize] as usize].0 += 1;
        counts[host_of[r as usize] as usize].1 += 1;
    }
    for (h, (s, r)) in hosts.iter_mut().zip(counts) {
        h.senders.reserve_exact(s);
        h.receivers.reserve_exact(r);
    }
    let flows = (specs.iter().enumerate())
        .map(|(i, &(spec, app))| {
            let (s, r) = net.flow_hosts[i];
            let snd = TcpSender::new(i as u32, s, r, spec, mtu);
            // An app's connection has no size for its receiver to finish at.
            let rcv = match app {
                None => TcpReceiver::new(i as u32, r, s, spec, mtu),
                Some(_) => {
                    let spec = FlowSpec { size_bytes: None, ..spec.clone() };
                    TcpReceiver::new(i as u32, r, s, &spec, mtu)
                }
            };
            let reader = Reader::new(spec, seed, i as u64);
            let (hs, hr) = (host_of[s as usize], host_of[r as usize]);
            let snd = SenderSocket::new(snd, spec, seed, i as u32);
            let snd = SocketRef { host: hs, index: hosts[hs as usize].add_sender(snd) };
            let rcv = ReceiverSocket::new(rcv, reader);
            let rcv = SocketRef { host: hr, index: hosts[hr as usize].add_receiver(rcv) };
            hosts[hs as usize].use_cpu(spec.sender_cpu.as_deref(), net.next_port(i as u32, s, 0));
            hosts[hr as usize].use_cpu(spec.receiver_cpu.as_deref(), net.next_port(i as u32, r, 0));
            Flow {
                snd,
                rcv,
                start: spec.start,
                size: if app.is_some() { None } else { spec.size_bytes },
                app,
                iv: FlowInterval::new(spec.start, app.is_none()),
            }
        })
        .collect();
    (hosts, host_of, flows)
}

impl Conns for World<'_> {
    fn now(&self) -> Time {
        self.now
    }

    fn schedule(&mut self, at: Time, ev: Event) {
        self.events.push(at, ev);
    }

    fn send_request(&mut self, fi: usize) {
        self.receiver_acts(fi, |r, now, out| r.tcp.on_app_send(now, out));
    }

    fn write(&mut self, fi: usize, bytes: u64) {
        self.sender_acts(fi, |s, now, out| s.app_write(now, bytes, out));
    }

    fn srtt_us(&self, fi: usize) -> u32 {
        self.ends(fi).0.rtt.srtt_us()
    }

    fn delivered(&self, fi: usize) -> u64 {
        let r = self.flows[fi].rcv;
        self.hosts[r.host as usize].receivers[r.index as usize].tcp.stats.delivered
    }
}
