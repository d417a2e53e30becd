//! The world and its event loop: one `match` over [`Event`], each arm a small function.

use std::ops::ControlFlow;
use std::time::Instant;

use crate::app::burst::BurstSource;
use crate::app::incast::{Conns, IncastApp};
use crate::event::{Event, EventQueue};
use crate::host::rx::{Arrival, Reader};
use crate::latency::Latency;
use crate::net::port::{Offer, PortId, Start};
use crate::net::topology::{Network, NodeKind};
use crate::observe::{Cancelled, OBSERVE_EVERY, Observer};
use crate::packet::{Kind, NodeId, Packet, PacketId, PacketPool};
use crate::record::drops::Drops;
use crate::record::int::{Hop, IntRecorder};
use crate::record::intervals::{FlowInterval, Intervals, SenderView};
use crate::record::queries::Queries;
use crate::record::queue::QueueRecorder;
use crate::record::{self, Output, Summary};
use crate::rng;
use crate::scenario::Scenario;
use crate::tcp::config::FlowSpec;
use crate::tcp::receiver::TcpReceiver;
use crate::tcp::sender::{State, TcpSender};
use crate::time::Time;

/// One TCP flow: both endpoints and its reporting state.
struct Flow {
    snd: TcpSender,
    rcv: TcpReceiver,
    start: Time,
    size: Option<u64>,
    /// The incast app this connection serves, if any.
    app: Option<usize>,
    /// Pending timer events (earliest known), for lazy re-arming.
    snd_timer_at: Option<Time>,
    pace_at: Option<Time>,
    delack_at: Option<Time>,
    /// How late the pacing timer runs the sender (`pacing_latency`), its draws, and the
    /// sender's departure time with when its timer runs.
    pacing_latency: Latency,
    pacing_rng: rng::Stream,
    pace_runs: Option<(Time, Time)>,
    /// The receiving host's side of the socket: its reader, backlog, batching, handshake.
    reader: Reader,
    /// Its open `intervals` row.
    iv: FlowInterval,
}

pub struct World<'s> {
    scn: &'s Scenario,
    now: Time,
    events: EventQueue,
    pool: PacketPool,
    net: Network,
    flows: Vec<Flow>,
    incasts: Vec<IncastApp>,
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
    /// Sender-timer events superseded by an earlier deadline since the last sweep.
    stale_sender_timers: usize,
}

/// Superseded sender-timer events are swept out of the event heap once they are more than this
/// share of it (amortised O(1) per event). Linux's loss probe, re-armed after new data within
/// what is left of the head's RTO, moves a few µs earlier on many ACKs as the SRTT falls; each
/// move leaves one behind, and every event pays for a deeper heap.
const STALE_SENDER_TIMER_SHARE: usize = 8;

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
    pub fn new(scn: &'s Scenario) -> World<'s> {
        let net = scn.network();
        let mtu = scn.topology.mtu;
        // [[flow]] transfers first, then every incast's senders: connections that open empty
        // (size 0) and carry each query's response when the app writes it.
        let mut specs: Vec<(FlowSpec, Option<usize>)> =
            scn.flows.iter().map(|f| (f.clone(), None)).collect();
        let mut incasts = Vec::new();
        for (k, inc) in scn.incasts.iter().enumerate() {
            let first = specs.len();
            for _ in 0..inc.senders {
                let mut spec = inc.tcp.clone();
                spec.size_bytes = Some(0);
                spec.start = inc.start;
                specs.push((spec, Some(k)));
            }
            // The RTT the app plans with: the dumbbell's, or its connections' longest
            // propagation RTT in a graph.
            let rtt = match scn.topology.graph {
                None => scn.topology.rtt,
                Some(_) => {
                    (first..specs.len()).map(|f| net.propagation_rtt[f]).max().unwrap_or(Time::ZERO)
                }
            };
            incasts.push(IncastApp::new(inc, first..specs.len(), scn.seed, k, rtt));
        }
        let flows: Vec<Flow> = specs
            .iter()
            .enumerate()
            .map(|(i, (spec, app))| {
                let (s, r) = net.flow_hosts[i];
                let mut snd = TcpSender::new(i as u32, s, r, spec, mtu);
                snd.enable_tsq();
                let mut rcv_spec = spec.clone();
                if app.is_some() {
                    rcv_spec.size_bytes = None;
                }
                Flow {
                    snd,
                    rcv: TcpReceiver::new(i as u32, r, s, &rcv_spec, mtu),
                    start: spec.start,
                    size: if app.is_some() { None } else { spec.size_bytes },
                    app: *app,
                    snd_timer_at: None,
                    pace_at: None,
                    delack_at: None,
                    pacing_latency: spec.pacing_latency.clone(),
                    pacing_rng: rng::stream(scn.seed, "pacing-latency", i as u64),
                    pace_runs: None,
                    reader: Reader::new(spec, scn.seed, i as u64),
                    iv: FlowInterval::new(spec.start, app.is_none()),
                }
            })
            .collect();
        let bursts: Vec<BurstSource> = scn
            .bursts
            .iter()
            .flat_map(|b| (0..b.sources).map(move |_| b))
            .enumerate()
            .map(|(k, b)| BurstSource::new(b, scn.seed, k as u64))
            .collect();
        let deepest = match &scn.topology.graph {
            None => scn.topology.bottleneck.queues.iter().map(|q| q.buffer_bytes).max(),
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
        let queue = QueueRecorder::new(&net, scn.topology.mtu, deepest);
        let drops = Drops::new(&net);
        let int = IntRecorder::new(&net, &scn.telemetry).map(Box::new);
        let mut w = World {
            scn,
            now: Time::ZERO,
            events: EventQueue::default(),
            stale_sender_timers: 0,
            pool: PacketPool::default(),
            net,
            active: scn.flows.len() + incasts.len() + bursts.len(),
            incasts,
            flows,
            bursts,
            intervals: Intervals::default(),
            iv_observed: 0,
            queue,
            drops,
            queries: Queries::default(),
            int,
            out: Vec::new(),
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
        for (i, b) in w.bursts.iter().enumerate() {
            if let Some(t) = b.next_departure() {
                w.events.push(t, Event::BurstEmit { source: i as u32 });
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
                Event::Interval { flow } => self.interval(flow),
                Event::BurstEmit { source } => self.burst_emit(source),
                Event::IncastRequest { app } => self.with_incast(app, |a, w| a.on_request(w)),
                Event::IncastWrite { app } => self.with_incast(app, |a, w| a.on_write(w)),
                Event::IncastServe { app, sender } => {
                    self.with_incast(app, |a, w| a.on_serve(sender, w))
                }
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
    fn observe_intervals(&mut self, obs: &mut dyn Observer) {
        for i in self.iv_observed..self.intervals.len() {
            obs.interval(&self.intervals.row(i));
        }
        self.iv_observed = self.intervals.len();
    }

    // ---- ports and links ----

    fn tx_done(&mut self, pid: PortId) {
        let now = self.now;
        let port = &mut self.net.ports[pid as usize];
        if port.finish_tx(now, &self.pool) {
            let head = port.pipe.front().unwrap().0;
            self.events.push(head, Event::Arrival { port: pid });
        }
        let (_, sent) = *port.pipe.back().expect("just put on the wire");
        let (node, skb_end) = (port.node, port.tx_skb_end);
        let start = port.start_next(now, &mut self.pool);
        let recorded = port.recorded;
        self.schedule_start(pid, start);
        if recorded {
            self.record_queue(pid);
        }
        self.tsq_completion(node, sent, skb_end);
    }

    /// The flow whose sender on `node` owns data packet `id`, if any.
    fn sender_of(&self, node: NodeId, id: PacketId) -> Option<usize> {
        let p = self.pool.get(id);
        let fi = p.flow as usize;
        (p.kind == Kind::Data && fi < self.flows.len() && self.flows[fi].snd.src == node)
            .then_some(fi)
    }

    /// A sender's segment left its host NIC: once its skb is done, TCP Small Queues may let
    /// the sender send more.
    fn tsq_completion(&mut self, node: NodeId, id: PacketId, skb_end: bool) {
        let Some(fi) = self.sender_of(node, id) else { return };
        if self.flows[fi].snd.nic_done(self.pool.get(id).ip_bytes, skb_end) {
            self.tsq_resume(fi as u32);
        }
    }

    /// The TSQ tasklet: a throttled sender sends again.
    fn tsq_resume(&mut self, fi: u32) {
        self.flow_acts(fi as usize, |f, now, out| {
            f.snd.tsq_resume(now, out);
            f.snd.src
        });
    }

    fn arrival(&mut self, pid: PortId) {
        let port = &mut self.net.ports[pid as usize];
        let (t, id) = port.pipe.pop_front().expect("Arrival with an empty pipe");
        debug_assert_eq!(t, self.now);
        let peer = port.peer;
        if let Some(&(next, _)) = port.pipe.front() {
            self.events.push(next, Event::Arrival { port: pid });
        }
        if let Some(int) = &mut self.int {
            int.arrived(id, pid);
        }
        self.deliver(peer, id);
    }

    /// A packet reached `node`: forward it (switch) or hand it to its endpoint (host).
    fn deliver(&mut self, node: NodeId, id: PacketId) {
        if self.net.nodes[node as usize].kind == NodeKind::Switch {
            let p = self.pool.get_mut(id);
            let pid = self.net.next_port(p.flow, p.src, p.hop);
            p.hop += 1;
            self.offer(pid, id);
            return;
        }
        let p = *self.pool.get(id);
        self.pool.free(id);
        if p.kind == Kind::Udp {
            self.bursts[p.flow as usize - self.flows.len()].received += 1;
            return;
        }
        let fi = p.flow as usize;
        let f = &mut self.flows[fi];
        if p.kind != Kind::Data || node == f.snd.src {
            self.receive(node, p);
            return;
        }
        match f.reader.data_arrives(self.now, p) {
            Arrival::Backlogged | Arrival::Batched { goes_up: None } => {}
            Arrival::Batched { goes_up: Some(at) } => {
                self.events.push(at, Event::RxBatch { flow: fi as u32 });
            }
            Arrival::Now(p) => self.receive(node, p),
        }
    }

    /// The reader lets go of the socket (`__release_sock()`): TCP processes the backlog's skbs
    /// in order, each with its own ACK decision, and sends the ACK they deferred when done
    /// (`tcp_release_cb()`). The read then takes what was queued before them, and after
    /// (`tcp_recvmsg()` flushes the backlog when it has copied the queue).
    fn release_backlog(&mut self, fi: usize) {
        let Some(held) = self.flows[fi].reader.release() else { return };
        self.flows[fi].rcv.begin_backlog();
        let node = self.flows[fi].rcv.node;
        for p in held {
            self.receive(node, p);
        }
        self.flow_acts(fi, |f, now, out| {
            f.rcv.release_cb(now, out);
            f.rcv.node
        });
    }

    /// The receiving host hands a batch of data segments to TCP, in the order they arrived.
    fn rx_batch(&mut self, fi: u32) {
        let f = &mut self.flows[fi as usize];
        let node = f.rcv.node;
        let held = f.reader.take_batch();
        for p in held {
            self.receive(node, p);
        }
    }

    /// TCP at `node` processes packet `p`.
    fn receive(&mut self, node: NodeId, p: Packet) {
        let fi = p.flow as usize;
        let now = self.now;
        let mut out = std::mem::take(&mut self.out);
        let f = &mut self.flows[fi];
        if node == f.snd.src {
            let was_done = f.snd.state == State::Done;
            f.snd.on_packet(now, &p, &mut out);
            if !was_done && f.snd.state == State::Done {
                self.flow_done(fi);
            }
        } else {
            if p.kind == Kind::Syn
                && let Some(answer) = f.reader.hold_syn(now, p)
            {
                // The host answers later: the SYN waits until then.
                if let Some(at) = answer {
                    self.events.push(at, Event::HandshakeAnswer { flow: fi as u32 });
                }
                self.out = out;
                return;
            }
            f.rcv.on_packet(now, &p, &mut out);
            if p.kind == Kind::Data {
                if f.reader.reads_at_once() {
                    f.rcv.app_read(now, &mut out);
                } else if let Some(at) = f.reader.wake(now, f.rcv.has_unread()) {
                    // The application sleeps in recv(); data wakes it `read_latency` later.
                    self.events.push(at, Event::AppRead { flow: fi as u32 });
                }
            }
        }
        let app = self.flows[fi].app;
        let read_now = self.flows[fi].reader.reads_at_once();
        self.send_all(node, &mut out);
        self.out = out;
        self.sync_timers(fi);
        if let (Some(k), Kind::Data, true) = (app, p.kind, read_now) {
            self.incast_progress(fi, k);
        }
    }

    /// The receiving host answers a SYN it held for its handshake latency.
    fn handshake_answer(&mut self, fi: u32) {
        self.flow_acts(fi as usize, |f, now, out| {
            if let Some(syn) = f.reader.take_syn() {
                f.rcv.on_packet(now, &syn, out);
            }
            f.rcv.node
        });
    }

    /// A slow reader wakes and reads everything queued in order; the read may send an ACK.
    fn app_read(&mut self, fi: u32) {
        let fi = fi as usize;
        self.release_backlog(fi);
        self.flow_acts(fi, |f, now, out| {
            f.reader.read_done();
            f.rcv.app_read(now, out);
            f.rcv.node
        });
        if let Some(k) = self.flows[fi].app {
            self.incast_progress(fi, k);
        }
        if std::mem::take(&mut self.flows[fi].reader.done_unread) {
            self.flow_done(fi);
        }
    }

    fn offer(&mut self, pid: PortId, id: PacketId) {
        let now = self.now;
        let port = &mut self.net.ports[pid as usize];
        let node = port.node;
        match port.offer(now, &mut self.pool, id) {
            Offer::Queued { start, .. } => self.schedule_start(pid, start),
            Offer::Dropped { queue, reason } => {
                let p = *self.pool.get(id);
                if let Some(int) = &mut self.int
                    && int.enabled(pid)
                {
                    let occupancy_bytes = self.net.ports[pid as usize].queues.queue_bytes(queue);
                    int.record(
                        id,
                        &p,
                        Hop { now, port: pid, queue, occupancy_bytes, arrived: None },
                    );
                }
                // A segment dropped by its own host's qdisc (fq limits) leaves TSQ's count too;
                // like `tcp_wfree()`, the sender is woken later, never inside this send.
                if let Some(fi) = self.sender_of(node, id) {
                    self.flows[fi].snd.nic_done(p.ip_bytes, p.gso_index + 1 >= p.gso_segs);
                    self.events.push(now, Event::TsqResume { flow: fi as u32 });
                }
                self.pool.free(id);
                self.drops.push(now, pid, queue, &p, reason);
            }
        }
        if self.net.ports[pid as usize].recorded {
            self.record_queue(pid);
        }
    }

    fn schedule_start(&mut self, pid: PortId, start: Start) {
        match start {
            Start::Sending(done) => {
                self.events.push(done, Event::TxDone { port: pid });
                if let Some(int) = &mut self.int {
                    int.egress(self.now, pid, &self.net.ports[pid as usize], &self.pool);
                }
            }
            Start::Wait(at) => self.events.push(at, Event::PortWake { port: pid }),
            Start::Nothing => {}
        }
    }

    /// A shaper's tokens for the head packet are due.
    fn port_wake(&mut self, pid: PortId) {
        let now = self.now;
        let port = &mut self.net.ports[pid as usize];
        if port.wake_at.is_some_and(|t| t <= now) {
            port.wake_at = None;
        }
        let start = port.start_next(now, &mut self.pool);
        self.schedule_start(pid, start);
        if self.net.ports[pid as usize].recorded {
            self.record_queue(pid);
        }
    }

    fn record_queue(&mut self, pid: PortId) {
        self.queue.record(self.now, pid, &self.net.ports[pid as usize]);
    }

    fn send_all(&mut self, node: NodeId, out: &mut Vec<Packet>) {
        for mut p in out.drain(..) {
            debug_assert_eq!(p.src, node);
            let pid = self.net.next_port(p.flow, p.src, 0);
            p.hop = 1;
            let id = self.pool.alloc(p);
            self.offer(pid, id);
        }
    }

    // ---- TCP flows ----

    fn flow_start(&mut self, fi: u32) {
        self.flow_acts(fi as usize, |f, now, out| {
            f.snd.open(now, out);
            f.snd.src
        });
    }

    /// Flow `fi`'s sender or receiver acts now (`act` says from which node): send what it
    /// produced, then re-arm the flow's timers.
    fn flow_acts(
        &mut self,
        fi: usize,
        act: impl FnOnce(&mut Flow, Time, &mut Vec<Packet>) -> NodeId,
    ) {
        let mut out = std::mem::take(&mut self.out);
        let node = act(&mut self.flows[fi], self.now, &mut out);
        self.send_all(node, &mut out);
        self.out = out;
        self.sync_timers(fi);
    }

    /// Lazy timers: push an event only when the deadline moved earlier than every pending one;
    /// a popped event whose deadline moved later re-arms itself.
    fn sync_timers(&mut self, fi: usize) {
        let f = &mut self.flows[fi];
        if let Some(d) = f.snd.timer_deadline()
            && f.snd_timer_at.is_none_or(|t| d < t)
        {
            if f.snd_timer_at.replace(d).is_some() {
                self.stale_sender_timers += 1;
            }
            self.events.push(d, Event::SenderTimer { flow: fi as u32 });
            if self.stale_sender_timers * STALE_SENDER_TIMER_SHARE > self.events.len() {
                self.sweep_stale_sender_timers();
            }
        }
        let f = &mut self.flows[fi];
        // The pacing timer runs the sender late by one draw per departure time it is armed for
        // (`tcp_pacing_check()` does not re-arm a queued timer).
        f.pace_runs = match (f.snd.pace_deadline(), f.pace_runs) {
            (None, _) => None,
            (Some(d), Some((armed_for, at))) if armed_for == d => Some((d, at)),
            (Some(d), _) => Some((d, d + f.pacing_latency.draw(&mut f.pacing_rng))),
        };
        if let Some((_, at)) = f.pace_runs
            && f.pace_at.is_none_or(|t| at < t)
        {
            f.pace_at = Some(at);
            self.events.push(at, Event::PaceTimer { flow: fi as u32 });
        }
        if let Some(d) = f.rcv.delack_deadline()
            && f.delack_at.is_none_or(|t| d < t)
        {
            f.delack_at = Some(d);
            self.events.push(d, Event::DelAckTimer { flow: fi as u32 });
        }
    }

    /// Drop the sender-timer events an earlier deadline superseded: a flow's live one is at
    /// `snd_timer_at`, and one at any other time would pop to find nothing due.
    fn sweep_stale_sender_timers(&mut self) {
        let flows = &self.flows;
        self.events.retain(|t, e| match e {
            Event::SenderTimer { flow } => flows[flow as usize].snd_timer_at == Some(t),
            _ => true,
        });
        self.stale_sender_timers = 0;
    }

    fn sender_timer(&mut self, fi: u32, t: Time) {
        let fi = fi as usize;
        let f = &mut self.flows[fi];
        if f.snd_timer_at == Some(t) {
            f.snd_timer_at = None;
        }
        let due = f.snd.timer_deadline();
        self.fire_sender(fi, due);
    }

    fn pace_timer(&mut self, fi: u32, t: Time) {
        let fi = fi as usize;
        let f = &mut self.flows[fi];
        if f.pace_at == Some(t) {
            f.pace_at = None;
        }
        let due = f.pace_runs.map(|(_, at)| at);
        self.fire_sender(fi, due);
    }

    /// Run the sender's due timers if `deadline` has come, then re-arm.
    fn fire_sender(&mut self, fi: usize, deadline: Option<Time>) {
        let f = &mut self.flows[fi];
        if deadline.is_some_and(|d| d <= self.now) {
            let mut out = std::mem::take(&mut self.out);
            f.snd.on_timer(self.now, &mut out);
            let node = f.snd.src;
            self.send_all(node, &mut out);
            self.out = out;
        }
        self.sync_timers(fi);
    }

    fn delack_timer(&mut self, fi: u32, t: Time) {
        let fi = fi as usize;
        let f = &mut self.flows[fi];
        if f.delack_at == Some(t) {
            f.delack_at = None;
        }
        if f.rcv.delack_deadline().is_some_and(|d| d <= self.now) {
            let mut out = std::mem::take(&mut self.out);
            f.rcv.on_delack(self.now, &mut out);
            let node = f.rcv.node;
            self.send_all(node, &mut out);
            self.out = out;
        }
        self.sync_timers(fi);
    }

    fn flow_done(&mut self, fi: usize) {
        if self.flows[fi].app.is_some() {
            return; // a persistent incast connection between responses
        }
        if self.flows[fi].rcv.has_unread() {
            self.flows[fi].reader.done_unread = true; // done when the application has read it all
            return;
        }
        self.close_interval(fi);
        self.active -= 1;
    }

    // ---- incast apps ----

    /// Hand incast app `k` an event; it acts on its connections through the world.
    fn with_incast<R>(&mut self, k: u32, f: impl FnOnce(&mut IncastApp, &mut Self) -> R) -> R {
        let mut apps = std::mem::take(&mut self.incasts);
        let r = f(&mut apps[k as usize], self);
        self.incasts = apps;
        r
    }

    /// A receiver of incast app `k` got data: count the response if it is now complete.
    fn incast_progress(&mut self, fi: usize, k: usize) {
        let Some(q) = self.with_incast(k as u32, |a, w| a.on_delivered(fi, w)) else { return };
        self.queries.push(k, &q, self.now);
        if q.next_after.is_none() {
            self.active -= 1;
        }
    }

    /// iperf3-style interval report of one flow (sender's view: bytes newly acknowledged).
    fn close_interval(&mut self, fi: usize) {
        let f = &mut self.flows[fi];
        let view = SenderView {
            acked: f.snd.snd_una,
            retransmits: f.snd.stats.retransmits,
            cwnd_bytes: f.snd.cwnd_bytes(),
            srtt_us: f.snd.rtt.srtt_us() as u64,
            pacing_rate: f.snd.tp.pacing_rate,
            done: f.snd.state == State::Done,
        };
        self.intervals.close(fi, &mut f.iv, self.now, view);
    }

    fn interval(&mut self, fi: u32) {
        let fi = fi as usize;
        if !self.flows[fi].iv.open {
            return;
        }
        self.close_interval(fi);
        self.events.push(self.now + self.scn.interval, Event::Interval { flow: fi as u32 });
    }

    // ---- burst sources ----

    fn burst_emit(&mut self, si: u32) {
        let src_index = si as usize;
        let (src, up, sink) = self.net.burst_hosts[src_index];
        let flow = (self.flows.len() + src_index) as u32;
        let b = &mut self.bursts[src_index];
        let mut p = Packet::new(Kind::Udp, flow, src, sink, b.packet_size);
        p.payload =
            b.packet_size - crate::packet::IPV4_HEADER_BYTES - crate::packet::UDP_HEADER_BYTES;
        p.dscp = b.dscp;
        p.hop = 1;
        b.sent += 1;
        let next = b.next_departure();
        // The datagram left its host now and reaches switch A one serialization later.
        let link = &self.net.ports[up as usize];
        let at_switch = self.now + link.serialization(p.ip_bytes) + link.delay;
        let id = self.pool.alloc(p);
        link_arrival(&mut self.net, &mut self.events, up, at_switch, id);
        match next {
            Some(t) => self.events.push(t, Event::BurstEmit { source: si }),
            None => self.active -= 1,
        }
    }

    // ---- invariants and output ----

    /// Every packet ever allocated is delivered, dropped, or still in a queue or on a wire.
    fn check_conservation(&self) {
        let in_net: usize = self
            .net
            .ports
            .iter()
            .map(|p| {
                p.queues.packets()
                    + p.fq.as_ref().map_or(0, |f| f.packets())
                    + p.in_tx.is_some() as usize
                    + p.pipe.len()
            })
            .sum();
        assert_eq!(in_net, self.pool.live(), "packets leaked or double-freed");
        for f in &self.flows {
            // Each byte reaches the application exactly once, and never beyond what was sent.
            assert!(f.rcv.stats.delivered <= f.snd.snd_nxt);
            if let Some(size) = f.size {
                assert!(f.rcv.stats.delivered <= size);
                if f.snd.state == State::Done {
                    assert_eq!(
                        f.rcv.stats.delivered, size,
                        "flow {} acked bytes never delivered",
                        f.snd.flow
                    );
                }
            }
        }
    }

    /// Each table from its builder, and the summary.
    fn finish(self, wall_s: f64) -> Output {
        let World {
            scn,
            now,
            events,
            net,
            flows,
            bursts,
            intervals,
            queue,
            drops,
            queries,
            int,
            ..
        } = self;
        let n_tcp = flows.len();
        let fs: Vec<_> = (flows.iter().enumerate())
            .map(|(i, f)| record::flows::tcp(&net, i, (&f.snd, &f.rcv), f.start, f.size, now))
            .chain(
                bursts
                    .iter()
                    .enumerate()
                    .map(|(k, b)| record::flows::udp(&net, n_tcp + k, k, b, now)),
            )
            .collect();
        let summary = Summary {
            scenario: scn.name.clone(),
            seed: scn.seed,
            flows: fs.clone(),
            ports: record::summary::ports(&net, &queue, now),
            engine: record::summary::engine(events.popped(), wall_s, now),
        };
        let tables = vec![
            record::flows::table(&fs, &net),
            intervals.finish(),
            queue.finish(),
            drops.finish(),
            queries.finish(),
            IntRecorder::finish(int.map(|b| *b)),
        ];
        Output { summary, tables }
    }
}

impl Conns for World<'_> {
    fn now(&self) -> Time {
        self.now
    }

    fn schedule(&mut self, at: Time, ev: Event) {
        self.events.push(at, ev);
    }

    fn send_request(&mut self, fi: usize) {
        self.flow_acts(fi, |f, now, out| {
            f.rcv.on_app_send(now, out);
            f.rcv.node
        });
    }

    fn write(&mut self, fi: usize, bytes: u64) {
        self.flow_acts(fi, |f, now, out| {
            f.snd.app_write(now, bytes, out);
            f.snd.src
        });
    }

    fn srtt_us(&self, fi: usize) -> u32 {
        self.flows[fi].snd.rtt.srtt_us()
    }

    fn delivered(&self, fi: usize) -> u64 {
        self.flows[fi].rcv.stats.delivered
    }
}

/// Put a packet on a port's wire so that it arrives at `at` (sources that bypass their NIC
/// queue). Arrivals stay in order because a source's departures are increasing.
fn link_arrival(net: &mut Network, events: &mut EventQueue, pid: PortId, at: Time, id: PacketId) {
    let port = &mut net.ports[pid as usize];
    debug_assert!(port.pipe.back().is_none_or(|&(t, _)| t <= at));
    let was_empty = port.pipe.is_empty();
    port.pipe.push_back((at, id));
    if was_empty {
        events.push(at, Event::Arrival { port: pid });
    }
}
