//! The incast (partition/aggregate) application: its settings, its progress through queries,
//! and its handlers: the world hands it its events and lets it act on its connections through
//! [`Conns`].

use crate::event::Event;
use crate::latency::Latency;
use crate::rng;
use crate::tcp::config::FlowSpec;
use crate::time::Time;

/// An incast (partition/aggregate) app: one receiver asks `senders` hosts at once for
/// `query_bytes / senders` bytes each over persistent connections, `queries` times; a query
/// completes when the last byte of the last response arrives.
#[derive(Clone, Debug, PartialEq)]
pub struct IncastSpec {
    pub senders: u32,
    /// Bytes per query, split equally among the senders.
    pub query_bytes: u64,
    pub queries: u32,
    /// Connections open at `start`; the first query follows once they are established.
    pub start: Time,
    /// Think time between one query's completion and the next request.
    pub gap: Time,
    /// Host CPU time per response: the senders start their responses one after another (in
    /// `serve_order`), each one `serve_time` after the previous one and the first one after the
    /// request arrives, as one server process serialized on its CPU (or on Python's GIL) does.
    /// Drawn afresh for each response when it is not fixed. 0: all at once.
    pub serve_time: Latency,
    /// Which sender answers first, second, ...
    pub serve_order: ServeOrder,
    /// All senders' connections leave one host (one NIC and qdisc), as in a test where one
    /// machine runs N server sockets; otherwise each sender is a host of its own.
    pub one_sender_host: bool,
    /// Every sender's TCP settings (`size` and `start` do not apply).
    pub tcp: FlowSpec,
}

/// The order in which an incast's senders start their responses within a query.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServeOrder {
    /// Sender 0 first, then 1, 2, ... in every query.
    Fixed,
    /// A fresh random order in every query, as the threads of one server process run in the
    /// order its scheduler picks: `burstlab validate`'s server at N = 8–32 keeps little of one
    /// query's order in the next (rank correlation 0.10–0.25, `response_order_corr` in
    /// docs/validation.md).
    Shuffled,
}

/// What an incast app does to its connections and the clock; the world provides it.
pub trait Conns {
    fn now(&self) -> Time;
    fn schedule(&mut self, at: Time, ev: Event);
    /// Connection `flow`'s receiving side sends the request: a segment that carries an ACK of
    /// the response before (the request's bytes are not simulated, its ACK is).
    fn send_request(&mut self, flow: usize);
    /// Connection `flow`'s sending side writes `bytes` of response.
    fn write(&mut self, flow: usize, bytes: u64);
    /// Connection `flow`'s sender's smoothed RTT, µs.
    fn srtt_us(&self, flow: usize) -> u32;
    /// Bytes connection `flow` has delivered to the receiving application in all.
    fn delivered(&self, flow: usize) -> u64;
}

/// An incast app's progress (see [`IncastSpec`]).
pub struct IncastApp {
    /// Its index among the scenario's incasts (its events name it).
    index: u32,
    /// Its senders' flow indices.
    pub flows: std::ops::Range<usize>,
    /// Bytes each sender returns per query.
    pub each: u64,
    queries: u32,
    gap: Time,
    /// The server's time per response, and the stream its draws come from.
    serve_time: Latency,
    serve_rng: rng::Stream,
    /// Who answers first, and the stream that shuffles them (its own, so that a shuffled run
    /// draws the same serve times as a fixed one).
    serve_order: ServeOrder,
    order_rng: rng::Stream,
    /// Queries completed.
    done: u32,
    /// Cumulative bytes each connection must have delivered for the current query.
    target: u64,
    /// Responses of the current query still incomplete.
    waiting: usize,
    /// Per sender: the target up to which its response was counted.
    counted: Vec<u64>,
    pub request_at: Time,
    /// The current query's senders' SRTTs (µs) as each started its response.
    srtt_at_response: Vec<u32>,
    /// The round trip the app plans with: its requests reach the senders half of it later.
    rtt: Time,
    /// The first request waits for the connections to be up, then this long: the receiving
    /// host's slowest answer to a handshake.
    handshake_upper: Time,
    start: Time,
}

impl IncastApp {
    /// App `k`, whose senders are connections `flows`, planning with round trip `rtt`.
    pub fn new(
        spec: &IncastSpec,
        flows: std::ops::Range<usize>,
        seed: u64,
        k: usize,
        rtt: Time,
    ) -> IncastApp {
        let n = flows.len();
        IncastApp {
            index: k as u32,
            flows,
            each: spec.query_bytes / spec.senders as u64,
            queries: spec.queries,
            gap: spec.gap,
            serve_time: spec.serve_time.clone(),
            serve_rng: rng::stream(seed, "serve-time", k as u64),
            serve_order: spec.serve_order,
            order_rng: rng::stream(seed, "serve-order", k as u64),
            done: 0,
            target: 0,
            waiting: 0,
            counted: vec![0; n],
            request_at: Time::ZERO,
            srtt_at_response: Vec::with_capacity(n),
            rtt,
            handshake_upper: spec.tcp.handshake_latency.upper(),
            start: spec.start,
        }
    }

    /// When the first request goes out: once the connections are up (a few RTTs after their
    /// SYNs, and the receiving host's slowest answer to a handshake).
    pub fn first_request(&self) -> Time {
        self.start + (self.rtt * 4).max(Time::from_ms(10)) + self.handshake_upper
    }

    /// `IncastRequest`: the receiver sends its request; the senders get it half an RTT later.
    pub fn on_request(&mut self, w: &mut impl Conns) {
        self.request_at = w.now();
        for fi in self.flows.clone() {
            w.send_request(fi);
        }
        w.schedule(w.now() + self.rtt / 2, Event::IncastWrite { app: self.index });
    }

    /// `IncastWrite`: the request arrived. The server answers its senders' requests one after
    /// another, in its `serve_order`, each response starting one `serve_time` after the
    /// previous one (the first, one after the request arrived); with no serve time all write
    /// at once.
    pub fn on_write(&mut self, w: &mut impl Conns) {
        let now = w.now();
        for (at, sender) in self.serve(now) {
            if at == now {
                self.on_serve(sender, w);
            } else {
                w.schedule(at, Event::IncastServe { app: self.index, sender });
            }
        }
    }

    /// `IncastServe`: sender `sender` starts its response.
    pub fn on_serve(&mut self, sender: u32, w: &mut impl Conns) {
        let fi = self.flows.start + sender as usize;
        self.response_starts(w.srtt_us(fi));
        w.write(fi, self.each);
    }

    /// Connection `fi`'s receiving application got data: the query, if that completes it
    /// (the next request is scheduled; `next_after` is `None` after the last query).
    pub fn on_delivered(&mut self, fi: usize, w: &mut impl Conns) -> Option<QueryDone> {
        let q = self.delivered(fi, w.delivered(fi))?;
        if let Some(gap) = q.next_after {
            w.schedule(w.now() + gap, Event::IncastRequest { app: self.index });
        }
        Some(q)
    }
}

/// A query that just completed.
pub struct QueryDone {
    /// Its index among the app's queries.
    pub index: u32,
    pub request_at: Time,
    /// Response bytes of the query, all senders' together.
    pub size_bytes: u64,
    /// The median SRTT its senders had as they started their responses, µs.
    pub median_srtt_us: f64,
    /// The think time before the next request; `None` after the last query.
    pub next_after: Option<Time>,
}

impl IncastApp {
    /// The request of a new query arrived at the senders at `now`: when each sender starts its
    /// response, in serve order (each one `serve_time` after the previous; the first, one after
    /// the request).
    fn serve(&mut self, now: Time) -> Vec<(Time, u32)> {
        self.target += self.each;
        self.waiting = self.flows.len();
        self.srtt_at_response.clear();
        let n = self.flows.len() as u32;
        let mut order: Vec<u32> = (0..n).collect();
        if self.serve_order == ServeOrder::Shuffled {
            self.order_rng.shuffle(&mut order);
        }
        let mut at = now;
        let mut starts = Vec::with_capacity(n as usize);
        for sender in order {
            at += self.serve_time.draw(&mut self.serve_rng);
            starts.push((at, sender));
        }
        starts
    }

    /// A sender starts its response with this SRTT (µs): what `tcp_info`'s `tcpi_rtt` reads
    /// then, the SRTT the last query left, which sets this one's loss-probe and RTO timers.
    fn response_starts(&mut self, srtt_us: u32) {
        self.srtt_at_response.push(srtt_us);
    }

    /// Connection `fi` has delivered `delivered` bytes in all: the query, if that completes it.
    fn delivered(&mut self, fi: usize, delivered: u64) -> Option<QueryDone> {
        let i = fi - self.flows.start;
        if self.waiting == 0 || delivered < self.target || self.counted[i] >= self.target {
            return None;
        }
        self.counted[i] = self.target;
        self.waiting -= 1;
        if self.waiting > 0 {
            return None;
        }
        let index = self.done;
        self.done += 1;
        Some(QueryDone {
            index,
            request_at: self.request_at,
            size_bytes: self.each * self.flows.len() as u64,
            median_srtt_us: median_us(&mut self.srtt_at_response),
            next_after: (self.done < self.queries).then_some(self.gap),
        })
    }
}

/// The median of SRTT samples in µs (the mean of the middle two for an even count, as
/// Python's `statistics.median`, which the validation harness applies to the kernel's).
fn median_us(v: &mut [u32]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_unstable();
    let mid = v.len() / 2;
    if v.len() % 2 == 1 { v[mid] as f64 } else { (v[mid - 1] as f64 + v[mid] as f64) / 2.0 }
}
