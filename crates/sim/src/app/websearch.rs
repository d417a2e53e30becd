//! The web-search workload: flow sizes from the DCTCP paper's production cluster, arriving as a
//! Poisson process at a given load. A self-contained generator with its own config type; the
//! world will open a flow for each arrival it yields.
//!
//! Sizes: Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010, Figure 4 (background flow
//! sizes of a 6,000-server web-search cluster), as the piecewise-linear CDF that later work
//! ships: HPCC's `traffic_gen/WebSearch_distribution.txt` (alibaba-edu/High-Precision-
//! Congestion-Control @ 9cf8b9e), the same points pFabric and its successors use. The S-ECN
//! paper's benchmark (seeds/004 §IV-D) draws its background flows from this distribution.
//!
//! Between two points the CDF is linear in bytes, so sampling is inversion with linear
//! interpolation and the mean is the trapezoid sum, as HPCC's `custom_rand.py` computes them;
//! a draw is rounded down to whole bytes, at least 1.
//!
//! Arrivals: exponential gaps of mean `mean_size·8 / (load·rate)`, so the offered bytes per
//! second are `load·rate/8` (HPCC's `traffic_gen.py`, per sending host). Sizes and gaps come
//! from two streams of the run's seed, so a change of load keeps the sizes drawn.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};

use crate::app::incast::Conns;
use crate::event::Event;
use crate::net::port::PortId;
use crate::rng;
use crate::tcp::config::FlowSpec;
use crate::time::Time;
use crate::units::Rate;

/// The web-search flow-size CDF: (flow size in bytes, cumulative percent of flows).
/// HPCC `traffic_gen/WebSearch_distribution.txt` @ 9cf8b9e, after DCTCP (SIGCOMM 2010) Fig. 4.
pub const WEB_SEARCH_CDF: [(u64, f64); 12] = [
    (0, 0.0),
    (10_000, 15.0),
    (20_000, 20.0),
    (30_000, 30.0),
    (50_000, 40.0),
    (80_000, 53.0),
    (200_000, 60.0),
    (1_000_000, 70.0),
    (2_000_000, 80.0),
    (5_000_000, 90.0),
    (10_000_000, 97.0),
    (30_000_000, 100.0),
];

/// A setting the workload cannot run with: the field, its value, what was expected.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{field} = {value}: expected {expected}")]
pub struct WorkloadError {
    pub field: &'static str,
    pub value: String,
    pub expected: String,
}

/// A flow-size distribution as a piecewise-linear CDF.
#[derive(Clone, Debug, PartialEq)]
pub struct SizeCdf {
    /// (bytes, cumulative fraction), from (x₀, 0) to (xₙ, 1), both strictly increasing.
    points: Vec<(f64, f64)>,
}

impl SizeCdf {
    /// The DCTCP paper's web-search distribution ([`WEB_SEARCH_CDF`]).
    pub fn web_search() -> SizeCdf {
        SizeCdf::from_percent(&WEB_SEARCH_CDF).expect("the shipped CDF is valid")
    }

    /// A CDF from (bytes, cumulative percent) points, as the published files write them: the
    /// first at 0 %, the last at 100 %, sizes and percents strictly increasing.
    pub fn from_percent(points: &[(u64, f64)]) -> Result<SizeCdf, WorkloadError> {
        let err = |value: String, expected: &str| WorkloadError {
            field: "cdf",
            value,
            expected: expected.into(),
        };
        let (Some(first), Some(last)) = (points.first(), points.last()) else {
            return Err(err("[]".into(), "at least two (bytes, percent) points"));
        };
        if points.len() < 2 || first.1 != 0.0 || last.1 != 100.0 {
            return Err(err(
                format!("{points:?}"),
                "points from 0 % to 100 %, such as [(0, 0.0), (10000, 15.0), …, (30000000, 100.0)]",
            ));
        }
        if let Some(w) = points.windows(2).find(|w| w[1].0 <= w[0].0 || w[1].1 <= w[0].1) {
            return Err(err(
                format!("{:?} then {:?}", w[0], w[1]),
                "sizes and percents strictly increasing",
            ));
        }
        Ok(SizeCdf { points: points.iter().map(|&(x, p)| (x as f64, p / 100.0)).collect() })
    }

    /// Mean flow size in bytes: uniform within each segment (the trapezoid rule).
    pub fn mean(&self) -> f64 {
        self.points.windows(2).map(|w| (w[0].0 + w[1].0) / 2.0 * (w[1].1 - w[0].1)).sum()
    }

    /// The size below which a fraction `p` of flows fall (`p` in [0, 1]).
    pub fn quantile(&self, p: f64) -> f64 {
        let p = p.clamp(0.0, 1.0);
        let i = self.points.iter().position(|&(_, q)| q >= p).unwrap_or(self.points.len() - 1);
        if i == 0 {
            return self.points[0].0;
        }
        let ((x0, p0), (x1, p1)) = (self.points[i - 1], self.points[i]);
        x0 + (x1 - x0) * (p - p0) / (p1 - p0)
    }

    /// The fraction of all bytes carried by flows larger than `bytes`.
    pub fn byte_share_above(&self, bytes: f64) -> f64 {
        let tail: f64 = self
            .points
            .windows(2)
            .map(|w| {
                let ((x0, p0), (x1, p1)) = (w[0], w[1]);
                let lo = x0.max(bytes);
                if lo >= x1 {
                    return 0.0;
                }
                // The part of the segment above `bytes`, uniform in size.
                let q = (x1 - lo) / (x1 - x0) * (p1 - p0);
                (lo + x1) / 2.0 * q
            })
            .sum();
        tail / self.mean()
    }

    /// One flow size in whole bytes, at least 1.
    pub fn sample(&self, rng: &mut rng::Stream) -> u64 {
        let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        (self.quantile(u) as u64).max(1)
    }
}

/// A Poisson flow source at a share of a link's capacity.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowArrivalSpec {
    /// Offered load as a fraction of `rate`: the flows' bytes per second are `load·rate/8`.
    pub load: f64,
    /// The capacity the load is a fraction of (the sending host's link).
    pub rate: Rate,
    /// Arrivals fall in [start, stop).
    pub start: Time,
    pub stop: Time,
    pub sizes: SizeCdf,
}

/// One flow to open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowArrival {
    pub at: Time,
    pub size_bytes: u64,
}

/// The arrivals of one source, in time order (an iterator that ends at `stop`).
#[derive(Clone, Debug)]
pub struct Arrivals {
    sizes: SizeCdf,
    /// Mean gap between arrivals, seconds.
    mean_gap_s: f64,
    next: Time,
    stop: Time,
    size_rng: rng::Stream,
    gap_rng: rng::Stream,
}

impl Arrivals {
    /// Source `id` of a run seeded `seed`.
    pub fn new(spec: &FlowArrivalSpec, seed: u64, id: u64) -> Result<Arrivals, WorkloadError> {
        if !(spec.load.is_finite() && spec.load > 0.0) {
            return Err(WorkloadError {
                field: "load",
                value: spec.load.to_string(),
                expected: "a fraction of the link above 0, such as 0.4".into(),
            });
        }
        if spec.rate.bps() == 0 {
            return Err(WorkloadError {
                field: "rate",
                value: "0bps".into(),
                expected: "a rate above 0, such as \"1Gbps\"".into(),
            });
        }
        if spec.stop <= spec.start {
            return Err(WorkloadError {
                field: "stop",
                value: format!("{} s", spec.stop.as_secs_f64()),
                expected: format!("a time after start ({} s)", spec.start.as_secs_f64()),
            });
        }
        let bytes_per_s = spec.load * spec.rate.bps() as f64 / 8.0;
        let mut a = Arrivals {
            sizes: spec.sizes.clone(),
            mean_gap_s: spec.sizes.mean() / bytes_per_s,
            next: spec.start,
            stop: spec.stop,
            size_rng: rng::stream(seed, "websearch-size", id),
            gap_rng: rng::stream(seed, "websearch-gap", id),
        };
        // A Poisson process is memoryless: the first arrival is one gap after `start`.
        a.next = spec.start + a.gap();
        Ok(a)
    }

    /// Mean gap between arrivals, seconds.
    pub fn mean_gap_s(&self) -> f64 {
        self.mean_gap_s
    }

    /// When the next arrival comes, if before `stop`.
    pub fn peek(&self) -> Option<Time> {
        (self.next < self.stop).then_some(self.next)
    }

    fn gap(&mut self) -> Time {
        Time::from_secs_f64(self.gap_rng.exponential() * self.mean_gap_s)
    }
}

impl Iterator for Arrivals {
    type Item = FlowArrival;

    fn next(&mut self) -> Option<FlowArrival> {
        if self.next >= self.stop {
            return None;
        }
        let at = self.next;
        self.next = at + self.gap();
        Some(FlowArrival { at, size_bytes: self.sizes.sample(&mut self.size_rng) })
    }
}

// ---- The workload in a run ----

/// Size classes of background flows as the DCTCP and S-ECN papers plot their FCTs (S-ECN
/// Fig. 19: "large background flows in (10MB, ∞)"; DCTCP §4.3: small (0, 100 KB]).
pub const SMALL_MAX_BYTES: u64 = 100_000;
pub const LARGE_ABOVE_BYTES: u64 = 10_000_000;

/// The size class of a background flow of `bytes`: "small", "medium" or "large".
pub fn size_class(bytes: u64) -> &'static str {
    if bytes <= SMALL_MAX_BYTES {
        "small"
    } else if bytes <= LARGE_ABOVE_BYTES {
        "medium"
    } else {
        "large"
    }
}

/// `[[websearch]]`: the DCTCP paper's benchmark (as the S-ECN paper runs it, seeds/004 §IV-D)
/// among `hosts` hosts. Each host queries every other at Poisson times, each answering
/// `query_bytes / (hosts − 1)`; and each sends background flows of web-search sizes to
/// uniformly chosen others at `background.load` of `background.rate` (its link's, or the one
/// that loads the busiest link to `load`: [`LoadOf`]). All of it runs over persistent
/// connections opened at `background.start` (requests begin once they are up): one per (client, server) for the answers, and
/// `connections` per ordered pair for background flows, a flow taking an idle one (or, when
/// all are busy, the one with the fewest bytes outstanding, behind what it carries).
#[derive(Clone, Debug, PartialEq)]
pub struct WebSearchSpec {
    pub hosts: u32,
    /// The background flows' load, sizes and arrival window (`load` 0: none).
    pub background: FlowArrivalSpec,
    /// Queries per second each host sends (0: none); they arrive in the same window.
    pub queries_per_s: f64,
    /// Response bytes per query, split equally among the answering hosts.
    pub query_bytes: u64,
    /// Persistent connections per ordered host pair for background flows.
    pub connections: u32,
    /// What `background.load` is a share of; the scenario mapping sets `background.rate` from it.
    pub load_of: LoadOf,
    /// Every connection's TCP settings (`size` and `start` do not apply).
    pub tcp: FlowSpec,
}

/// What a web-search workload's background `load` is a share of.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LoadOf {
    /// Each sending host's own link: every host offers `load` of its link's rate (HPCC's
    /// `traffic_gen.py`; pFabric's and PIAS's ns-2 `spine_empirical.tcl`, `lambda =
    /// link_rate·load/meanFlowSize` per host over a fabric whose uplinks match its hosts). Where
    /// a rack's uplink is narrower than its hosts' links together, the uplink carries more.
    #[default]
    HostLink,
    /// The busiest link the background flows cross: every host offers the same rate, chosen so
    /// that the link whose share of that traffic is largest for its rate carries `load` of it
    /// ([`busiest_link_rate`]). On a fabric without oversubscription that is the host links,
    /// and the same as `HostLink`.
    BusiestLink,
}

/// The rate `load` is a share of for [`LoadOf::BusiestLink`], and the port of the busiest link.
/// Each host's background flows go to the other hosts uniformly and, within a pair, over its
/// `connections` equally (the app takes an idle one, so each carries about as much), so a host
/// sending `x` bit/s puts `x · share(p)` on port `p`, where `share(p)` sums `1/((n−1)·k)` over the
/// background connections whose forward route `routes[c]` crosses `p` (`routes` in
/// `spec.connections()` order). The busiest link is the one with the largest `share(p)/rate(p)`;
/// every host offering `load / max(share/rate)` loads it to exactly `load`. Data bytes only: the
/// ACKs coming back, and the queries' answers, are on top of it.
pub fn busiest_link_rate(
    spec: &WebSearchSpec,
    routes: &[&[PortId]],
    rate: impl Fn(PortId) -> Rate,
) -> (Rate, PortId) {
    let n = spec.hosts;
    let k = spec.connections;
    let per_connection = 1.0 / (f64::from(n - 1) * f64::from(k));
    let mut share: BTreeMap<PortId, f64> = BTreeMap::new();
    for a in 0..n {
        for b in (0..n).filter(|&b| b != a) {
            let first = spec.background_conn(a, b);
            for route in &routes[first..first + k as usize] {
                for &p in *route {
                    *share.entry(p).or_insert(0.0) += per_connection;
                }
            }
        }
    }
    let (port, per_bps) = share
        .iter()
        .map(|(&p, &s)| (p, s / rate(p).bps() as f64))
        .fold((0, 0.0), |best, x| if x.1 > best.1 { x } else { best });
    (Rate((1.0 / per_bps).round() as u64), port)
}

impl WebSearchSpec {
    /// The connections, as (sending host, receiving host) indices among `hosts`: first the
    /// answers to each client from each other host, then `connections` per ordered pair.
    pub fn connections(&self) -> Vec<(u32, u32)> {
        let n = self.hosts;
        let others = |h: u32| (0..n).filter(move |&o| o != h);
        let answers = (0..n).flat_map(|c| others(c).map(move |s| (s, c)));
        let k = self.connections;
        let background =
            (0..n).flat_map(|a| others(a).flat_map(move |b| (0..k).map(move |_| (a, b))));
        answers.chain(background).collect()
    }

    /// Connection of server `s`'s answers to client `c`.
    fn answer_conn(&self, c: u32, s: u32) -> usize {
        let n = self.hosts as usize;
        c as usize * (n - 1) + if s < c { s as usize } else { s as usize - 1 }
    }

    /// The first of the `connections` background connections from `a` to `b`.
    fn background_conn(&self, a: u32, b: u32) -> usize {
        let n = self.hosts as usize;
        let pair = a as usize * (n - 1) + if b < a { b as usize } else { b as usize - 1 };
        n * (n - 1) + pair * self.connections as usize
    }
}

/// What a completed request was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A query: its time runs from the request to the last byte of the last answer.
    Query,
    /// A background flow: from its arrival to its last byte at the receiving application.
    Background,
}

/// A request that just completed (a row of the `queries` table).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Completed {
    pub kind: Kind,
    /// Its index among the app's requests of its kind, in arrival order.
    pub index: u64,
    /// When it arrived (a query's request went out) and when it completed.
    pub start: Time,
    pub done: Time,
    pub size_bytes: u64,
}

/// A request in progress.
struct Job {
    completed: Completed,
    /// Connections still to deliver their part.
    waiting: u32,
}

/// A web-search workload's progress: its arrivals, the writes it has planned, and which
/// request each connection's bytes complete.
pub struct WebSearchApp {
    /// Its index among the scenario's web-search workloads (its events name it).
    index: u32,
    spec: WebSearchSpec,
    /// Its connections' flow indices.
    pub flows: std::ops::Range<usize>,
    /// Next arrival of each source: (time, source); sources `0..hosts` send queries,
    /// `hosts..2·hosts` background flows.
    next: BinaryHeap<Reverse<(Time, u32)>>,
    background: Vec<Arrivals>,
    query_gap: Vec<rng::Stream>,
    dst_rng: Vec<rng::Stream>,
    /// Answers to write once the request has crossed to the server: (at, connection, bytes),
    /// in time order (every request takes the same half round trip).
    writes: VecDeque<(Time, usize, u64)>,
    /// Half the round trip the app plans with: its requests reach the servers this later.
    half_rtt: Time,
    /// Per connection: bytes written in all, and the requests its bytes complete, as
    /// (cumulative bytes that complete it, job).
    written: Vec<u64>,
    pending: Vec<VecDeque<(u64, u32)>>,
    /// Per connection: the delivered bytes that complete its first pending request
    /// (`u64::MAX`: none). Every delivery on every connection asks; this dense copy answers the
    /// common "not yet" without touching the queues (3 % of a load-0.6 run went to that look-up).
    due: Vec<u64>,
    jobs: Vec<Option<Job>>,
    free: Vec<u32>,
    counts: [u64; 2],
    /// The wake-up scheduled last, if it is still ahead.
    armed: Option<Time>,
}

impl WebSearchApp {
    /// Workload `k` of a run seeded `seed`, whose connections are flows `flows`, planning with
    /// round trip `rtt`.
    pub fn new(
        spec: &WebSearchSpec,
        flows: std::ops::Range<usize>,
        seed: u64,
        k: usize,
        rtt: Time,
    ) -> Result<WebSearchApp, WorkloadError> {
        let n = spec.hosts;
        // Requests begin once the connections are up: a few round trips after their SYNs,
        // and the hosts' slowest answer to a handshake.
        let mut bg = spec.background.clone();
        bg.start += (rtt * 4).max(Time::from_ms(10)) + spec.tcp.handshake_latency.upper();
        let bg = &bg;
        let mut next = BinaryHeap::new();
        let mut background = Vec::new();
        let id = |h: u32| ((k as u64) << 32) | u64::from(h);
        for h in 0..n {
            // A run that stops before the connections are up has no background flow to start:
            // an empty workload, not an error (the scenario checked stop > start as written).
            if bg.load > 0.0 && bg.start < bg.stop {
                let a = Arrivals::new(bg, seed, id(h))?;
                if let Some(first) = a.peek() {
                    next.push(Reverse((first, n + h)));
                }
                background.push(a);
            }
        }
        let mut query_gap: Vec<rng::Stream> =
            (0..n).map(|h| rng::stream(seed, "websearch-query", id(h))).collect();
        if spec.queries_per_s > 0.0 {
            for (h, g) in query_gap.iter_mut().enumerate() {
                let at = bg.start + Time::from_secs_f64(g.exponential() / spec.queries_per_s);
                if at < bg.stop {
                    next.push(Reverse((at, h as u32)));
                }
            }
        }
        let conns = flows.len();
        Ok(WebSearchApp {
            index: k as u32,
            spec: spec.clone(),
            flows,
            next,
            background,
            query_gap,
            dst_rng: (0..n).map(|h| rng::stream(seed, "websearch-dst", id(h))).collect(),
            writes: VecDeque::new(),
            half_rtt: rtt / 2,
            written: vec![0; conns],
            pending: vec![VecDeque::new(); conns],
            due: vec![u64::MAX; conns],
            jobs: Vec::new(),
            free: Vec::new(),
            counts: [0; 2],
            armed: None,
        })
    }

    /// When the app first wakes: its first arrival (`None`: it has none).
    pub fn first_wake(&self) -> Option<Time> {
        self.next.peek().map(|Reverse((t, _))| *t)
    }

    /// `WebSearchWake`: start the requests that have arrived and write the answers whose
    /// request has reached its server; true once the workload is over.
    pub fn on_wake(&mut self, w: &mut impl Conns) -> bool {
        let now = w.now();
        if self.armed.is_some_and(|t| t <= now) {
            self.armed = None;
        }
        while let Some(&(at, conn, bytes)) = self.writes.front() {
            if at > now {
                break;
            }
            self.writes.pop_front();
            w.write(self.flows.start + conn, bytes);
        }
        while let Some(&Reverse((at, source))) = self.next.peek() {
            if at > now {
                break;
            }
            self.next.pop();
            if source < self.spec.hosts {
                self.query(source, now, w);
            } else {
                self.background_flow(source - self.spec.hosts, w);
            }
        }
        self.arm(w);
        self.is_over()
    }

    /// Connection `fi`'s receiving application got data: the requests that completes, and
    /// whether the workload is over.
    pub fn on_delivered(
        &mut self,
        fi: usize,
        w: &mut impl Conns,
        done: &mut Vec<Completed>,
    ) -> bool {
        let conn = fi - self.flows.start;
        let delivered = w.delivered(fi);
        if delivered < self.due[conn] {
            return self.is_over();
        }
        while let Some(&(upto, job)) = self.pending[conn].front() {
            if delivered < upto {
                self.due[conn] = upto;
                break;
            }
            self.pending[conn].pop_front();
            self.due[conn] = u64::MAX;
            let j = self.jobs[job as usize].as_mut().expect("a pending job is live");
            j.waiting -= 1;
            if j.waiting == 0 {
                done.push(Completed { done: w.now(), ..j.completed });
                self.jobs[job as usize] = None;
                self.free.push(job);
            }
        }
        self.is_over()
    }

    /// Nothing more will arrive and every request has completed.
    pub fn is_over(&self) -> bool {
        self.next.is_empty() && self.writes.is_empty() && self.free.len() == self.jobs.len()
    }

    /// Client `c` asks every other host; each answers half a round trip later.
    fn query(&mut self, c: u32, now: Time, w: &mut impl Conns) {
        let n = self.spec.hosts;
        let each = self.spec.query_bytes / u64::from(n - 1);
        let job = self.job(Kind::Query, now, self.spec.query_bytes, n - 1);
        for s in (0..n).filter(|&s| s != c) {
            let conn = self.spec.answer_conn(c, s);
            w.send_request(self.flows.start + conn);
            self.expect(conn, each, job);
            self.writes.push_back((now + self.half_rtt, conn, each));
        }
        let at = now
            + Time::from_secs_f64(
                self.query_gap[c as usize].exponential() / self.spec.queries_per_s,
            );
        if at < self.spec.background.stop {
            self.next.push(Reverse((at, c)));
        }
    }

    /// Host `a`'s next background flow starts, to a uniformly chosen other host.
    fn background_flow(&mut self, a: u32, w: &mut impl Conns) {
        let Some(f) = self.background[a as usize].next() else { return };
        if let Some(t) = self.background[a as usize].peek() {
            self.next.push(Reverse((t, self.spec.hosts + a)));
        }
        let n = u64::from(self.spec.hosts);
        let mut b = self.dst_rng[a as usize].below(n - 1) as u32;
        if b >= a {
            b += 1;
        }
        let first = self.spec.background_conn(a, b);
        let conns = first..first + self.spec.connections as usize;
        // An idle connection, else the one with the fewest bytes still to deliver.
        let conn = conns
            .min_by_key(|&c| {
                self.written[c] - w.delivered(self.flows.start + c).min(self.written[c])
            })
            .expect("at least one connection per pair");
        let job = self.job(Kind::Background, f.at, f.size_bytes, 1);
        self.expect(conn, f.size_bytes, job);
        w.write(self.flows.start + conn, f.size_bytes);
    }

    fn job(&mut self, kind: Kind, at: Time, size_bytes: u64, waiting: u32) -> u32 {
        let k = kind as usize;
        let completed = Completed { kind, index: self.counts[k], start: at, done: at, size_bytes };
        self.counts[k] += 1;
        let job = Some(Job { completed, waiting });
        match self.free.pop() {
            Some(i) => {
                self.jobs[i as usize] = job;
                i
            }
            None => {
                self.jobs.push(job);
                (self.jobs.len() - 1) as u32
            }
        }
    }

    /// Connection `conn` will carry `bytes` more, the last of which completes its part of `job`.
    fn expect(&mut self, conn: usize, bytes: u64, job: u32) {
        self.written[conn] += bytes;
        if self.pending[conn].is_empty() {
            self.due[conn] = self.written[conn];
        }
        self.pending[conn].push_back((self.written[conn], job));
    }

    /// Schedule the next wake-up unless one at or before it is already pending.
    fn arm(&mut self, w: &mut impl Conns) {
        let write = self.writes.front().map(|&(t, _, _)| t);
        let arrival = self.next.peek().map(|Reverse((t, _))| *t);
        let Some(t) = write.into_iter().chain(arrival).min() else { return };
        if self.armed.is_none_or(|a| t < a) {
            self.armed = Some(t);
            w.schedule(t, Event::WebSearchWake { app: self.index });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(load: f64, secs: u64) -> FlowArrivalSpec {
        FlowArrivalSpec {
            load,
            rate: Rate::from_gbps(1),
            start: Time::ZERO,
            stop: Time::from_secs(secs),
            sizes: SizeCdf::web_search(),
        }
    }

    // ---- The distribution ----

    #[test]
    fn web_search_mean_and_percentiles_are_the_published_cdfs() {
        let cdf = SizeCdf::web_search();
        // Σ (x₀ + x₁)/2 · Δp over the 11 segments: 1,711,250 B (HPCC's getAvg()).
        assert!((cdf.mean() - 1_711_250.0).abs() < 1e-6, "mean {}", cdf.mean());
        for (p, bytes) in [
            (0.15, 10_000.0),
            (0.5, 50_000.0 + 30_000.0 * 10.0 / 13.0),
            (0.6, 200_000.0),
            (0.9, 5_000_000.0),
            (0.99, 10_000_000.0 + 20_000_000.0 * 2.0 / 3.0),
            (1.0, 30_000_000.0),
        ] {
            let q = cdf.quantile(p);
            assert!((q / bytes - 1.0).abs() < 1e-9, "p{}: {q} B, expected {bytes} B", p * 100.0);
        }
        // DCTCP §2.2: most flows are small, most bytes are in the large ones — here 95.0 % of
        // the bytes are in the 30 % of flows above 1 MB.
        let share = cdf.byte_share_above(1e6);
        assert!((share - 1_625_000.0 / 1_711_250.0).abs() < 1e-12, "share {share}");
    }

    #[test]
    fn samples_follow_the_cdf() {
        let cdf = SizeCdf::web_search();
        let mut rng = rng::stream(3, "websearch-size", 0);
        let n = 200_000;
        let mut v: Vec<u64> = (0..n).map(|_| cdf.sample(&mut rng)).collect();
        assert!(v.iter().all(|&x| (1..=30_000_000).contains(&x)));
        // The sizes' standard deviation is ~3.5 MB: the mean's is ~8 KB here, 0.5 %.
        let mean = v.iter().sum::<u64>() as f64 / n as f64;
        assert!((mean / cdf.mean() - 1.0).abs() < 0.02, "sampled mean {mean}");
        v.sort_unstable();
        // Tolerances ≈ 4σ of each order statistic: √(p(1 − p)/n) over the CDF's density there.
        for (p, tol) in [(0.15, 0.06), (0.5, 0.02), (0.9, 0.04), (0.99, 0.03)] {
            let got = v[(p * n as f64) as usize] as f64;
            let want = cdf.quantile(p);
            assert!((got / want - 1.0).abs() < tol, "p{}: {got} B against {want} B", p * 100.0);
        }
        let small = v.iter().filter(|&&x| x <= 100_000).count() as f64 / n as f64;
        // P(size ≤ 100 KB) = 53 % + 7 % · 20/120.
        assert!((small - (0.53 + 0.07 / 6.0)).abs() < 0.005, "≤ 100 KB: {small}");
    }

    #[test]
    fn a_cdf_that_does_not_run_from_0_to_100_or_rise_is_refused() {
        let e = SizeCdf::from_percent(&[(0, 0.0), (10, 90.0)]).unwrap_err();
        assert_eq!(e.field, "cdf");
        assert!(e.to_string().contains("expected points from 0 % to 100 %"), "{e}");
        let e = SizeCdf::from_percent(&[(0, 0.0), (10, 50.0), (10, 100.0)]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "cdf = (10, 50.0) then (10, 100.0): expected sizes and percents strictly increasing"
        );
        assert!(SizeCdf::from_percent(&[]).is_err());
    }

    // ---- Arrivals ----

    #[test]
    fn arrivals_offer_the_load_as_a_poisson_process() {
        let (load, secs) = (0.4, 60);
        let a = Arrivals::new(&spec(load, secs), 7, 0).unwrap();
        // 0.4 Gbit/s = 50 MB/s over a 1.711 MB mean: one flow every 34.2 ms.
        let mean_gap = a.mean_gap_s();
        assert!((mean_gap - 1_711_250.0 / 50e6).abs() < 1e-12);
        let flows: Vec<FlowArrival> = a.collect();
        assert!(flows.windows(2).all(|w| w[0].at <= w[1].at));
        assert!(flows.iter().all(|f| f.at < Time::from_secs(secs)));
        // ~1,753 arrivals: a Poisson count's deviation is ~42, so 10 % is > 4σ.
        let expected = secs as f64 / mean_gap;
        let n = flows.len() as f64;
        assert!((n / expected - 1.0).abs() < 0.1, "{n} arrivals, expected {expected}");
        // Exponential gaps: coefficient of variation 1.
        let gaps: Vec<f64> = flows.windows(2).map(|w| (w[1].at - w[0].at).as_secs_f64()).collect();
        let m = gaps.iter().sum::<f64>() / gaps.len() as f64;
        let sd = (gaps.iter().map(|g| (g - m).powi(2)).sum::<f64>() / gaps.len() as f64).sqrt();
        assert!((sd / m - 1.0).abs() < 0.1, "gap CV {}", sd / m);
    }

    #[test]
    fn offered_bytes_match_the_load_over_a_long_run() {
        // ~26,000 flows of heavy-tailed sizes: the total's deviation is ~1.6 %.
        let (load, secs) = (0.6, 600);
        let flows: Vec<_> = Arrivals::new(&spec(load, secs), 11, 2).unwrap().collect();
        let bytes: u64 = flows.iter().map(|f| f.size_bytes).sum();
        let offered = bytes as f64 * 8.0 / secs as f64 / 1e9;
        assert!((offered / load - 1.0).abs() < 0.05, "offered {offered} of 1 Gbit/s");
    }

    #[test]
    fn arrivals_are_seeded_per_source_and_sizes_keep_across_loads() {
        let take = |load, seed, id| -> Vec<FlowArrival> {
            Arrivals::new(&spec(load, 5), seed, id).unwrap().take(50).collect()
        };
        assert_eq!(take(0.3, 1, 0), take(0.3, 1, 0));
        assert_ne!(take(0.3, 1, 0), take(0.3, 2, 0));
        assert_ne!(take(0.3, 1, 0), take(0.3, 1, 1));
        let sizes = |v: Vec<FlowArrival>| v.into_iter().map(|f| f.size_bytes).collect::<Vec<_>>();
        assert_eq!(sizes(take(0.3, 1, 0)), sizes(take(0.6, 1, 0)));
    }

    #[test]
    fn bad_settings_name_the_field() {
        let e = Arrivals::new(&spec(0.0, 5), 1, 0).unwrap_err();
        assert_eq!(e.to_string(), "load = 0: expected a fraction of the link above 0, such as 0.4");
        let e =
            Arrivals::new(&FlowArrivalSpec { rate: Rate(0), ..spec(0.5, 5) }, 1, 0).unwrap_err();
        assert_eq!(e.field, "rate");
        let e = Arrivals::new(&spec(0.5, 0), 1, 0).unwrap_err();
        assert_eq!(e.to_string(), "stop = 0 s: expected a time after start (0 s)");
    }

    // ---- The workload in a run ----

    /// A world that records what the app does and delivers what the test says.
    #[derive(Default)]
    struct Fake {
        now: Time,
        wakes: Vec<Time>,
        requests: Vec<usize>,
        writes: Vec<(Time, usize, u64)>,
        delivered: std::collections::HashMap<usize, u64>,
    }

    impl Conns for Fake {
        fn now(&self) -> Time {
            self.now
        }
        fn schedule(&mut self, at: Time, _: Event) {
            self.wakes.push(at);
        }
        fn send_request(&mut self, flow: usize) {
            self.requests.push(flow);
        }
        fn write(&mut self, flow: usize, bytes: u64) {
            self.writes.push((self.now, flow, bytes));
        }
        fn srtt_us(&self, _: usize) -> u32 {
            50
        }
        fn delivered(&self, flow: usize) -> u64 {
            self.delivered.get(&flow).copied().unwrap_or(0)
        }
    }

    fn workload(hosts: u32, load: f64, queries_per_s: f64, secs: u64) -> WebSearchSpec {
        WebSearchSpec {
            hosts,
            background: spec(load, secs),
            queries_per_s,
            query_bytes: 100_000,
            connections: 2,
            load_of: LoadOf::HostLink,
            tcp: FlowSpec::linux_default("dctcp"),
        }
    }

    /// The app over flows 100.., woken at each time it asks for until `until`.
    fn drive(spec: &WebSearchSpec, until: Time) -> (WebSearchApp, Fake) {
        let n = spec.connections().len();
        let mut app = WebSearchApp::new(spec, 100..100 + n, 5, 0, Time::from_us(50)).unwrap();
        let mut w = Fake::default();
        let mut at = app.first_wake();
        while let Some(t) = at.filter(|&t| t < until) {
            w.now = t;
            app.on_wake(&mut w);
            w.wakes.sort_unstable();
            at = w.wakes.iter().copied().find(|&x| x > t);
        }
        (app, w)
    }

    #[test]
    fn a_run_that_stops_before_the_connections_are_up_starts_no_flow() {
        // 10 ms of background: the planning delay (4 RTTs of 5 ms, and more) passes its stop.
        let mut s = workload(3, 0.4, 10.0, 1);
        s.background.stop = Time::from_ms(10);
        let n = s.connections().len();
        let app = WebSearchApp::new(&s, 100..100 + n, 5, 0, Time::from_ms(5)).unwrap();
        assert!(app.background.is_empty());
        assert_eq!(app.first_wake(), None, "no query or flow is planned");
    }

    #[test]
    fn connections_are_answers_then_background_pairs() {
        let s = workload(3, 0.3, 10.0, 1);
        let c = s.connections();
        // 3·2 answer connections (server → client), then 2 per ordered pair.
        assert_eq!(c.len(), 6 + 6 * 2);
        assert_eq!(&c[..6], &[(1, 0), (2, 0), (0, 1), (2, 1), (0, 2), (1, 2)]);
        for (cl, sv) in [(0, 1), (0, 2), (1, 0), (2, 1)] {
            assert_eq!(c[s.answer_conn(cl, sv)], (sv, cl));
        }
        for (a, b) in [(0, 2), (2, 0), (1, 2)] {
            let first = s.background_conn(a, b);
            assert_eq!(&c[first..first + 2], &[(a, b), (a, b)]);
        }
    }

    #[test]
    fn a_query_completes_when_its_last_answer_is_delivered() {
        // One host pair's worth of queries, no background: the first query's requests go out
        // on client's answer connections, the answers are written half an RTT later.
        let s = workload(3, 0.0, 1.0, 100);
        let n = s.connections().len();
        let mut app = WebSearchApp::new(&s, 100..100 + n, 5, 0, Time::from_us(50)).unwrap();
        let mut w = Fake { now: app.first_wake().unwrap(), ..Fake::default() };
        let request = w.now;
        app.on_wake(&mut w);
        assert_eq!(w.requests.len(), 2, "a query asks the two other hosts");
        assert!(w.writes.is_empty(), "answers wait for the request to cross");
        w.now = request + Time::from_us(25);
        app.on_wake(&mut w);
        assert_eq!(w.writes.len(), 2);
        assert!(w.writes.iter().all(|&(t, _, b)| t == request + Time::from_us(25) && b == 50_000));
        let (a, b) = (w.writes[0].1, w.writes[1].1);
        let mut done = Vec::new();
        w.now = request + Time::from_ms(1);
        w.delivered.insert(a, 50_000);
        app.on_delivered(a, &mut w, &mut done);
        assert!(done.is_empty(), "one answer of two is not a completed query");
        w.now = request + Time::from_ms(3);
        w.delivered.insert(b, 49_999);
        app.on_delivered(b, &mut w, &mut done);
        assert!(done.is_empty(), "the last byte is not there yet");
        w.delivered.insert(b, 50_000);
        app.on_delivered(b, &mut w, &mut done);
        // QCT: from the request to the last byte of the last answer.
        assert_eq!(
            done,
            [Completed {
                kind: Kind::Query,
                index: 0,
                start: request,
                done: request + Time::from_ms(3),
                size_bytes: 100_000
            }]
        );
    }

    #[test]
    fn queries_arrive_as_a_poisson_process_at_their_rate() {
        // 4 hosts × 50 queries/s × 20 s = 4,000 queries (σ ≈ 63): within 5 %.
        let s = workload(4, 0.0, 50.0, 20);
        let (_, w) = drive(&s, Time::from_secs(21));
        let queries = w.requests.len() as f64 / 3.0;
        assert!((queries / 4000.0 - 1.0).abs() < 0.05, "{queries} queries");
    }

    #[test]
    fn background_flows_offer_the_load_to_uniform_destinations() {
        // 3 hosts at 0.5 of 1 Gbit/s for 200 s: 37.5 GB offered (heavy-tailed: σ ≈ 3 %).
        let s = workload(3, 0.5, 0.0, 200);
        let (_, w) = drive(&s, Time::from_secs(201));
        let bytes: u64 = w.writes.iter().map(|&(_, _, b)| b).sum();
        let offered = bytes as f64 * 8.0 / 200.0 / 1e9 / 3.0;
        assert!((offered / 0.5 - 1.0).abs() < 0.1, "offered {offered} per host");
        // Each host sends to both others, about equally often.
        let conns = s.connections();
        let mut per_pair = std::collections::HashMap::new();
        for &(_, f, _) in &w.writes {
            *per_pair.entry(conns[f - 100]).or_insert(0u32) += 1;
        }
        assert_eq!(per_pair.len(), 6, "{per_pair:?}");
        let total: u32 = per_pair.values().sum();
        for (&pair, &k) in &per_pair {
            let share = k as f64 / total as f64;
            assert!((share - 1.0 / 6.0).abs() < 0.03, "{pair:?}: {share}");
        }
    }

    #[test]
    fn a_background_flow_takes_an_idle_connection_else_the_least_loaded() {
        let s = workload(2, 0.3, 0.0, 100);
        let n = s.connections().len();
        let mut app = WebSearchApp::new(&s, 0..n, 5, 0, Time::from_us(50)).unwrap();
        // Host 0's background connections to host 1 are 2 and 3.
        let mut w = Fake { now: Time::from_secs(1), ..Fake::default() };
        app.background_flow(0, &mut w);
        app.background_flow(0, &mut w);
        let first_two: Vec<usize> = w.writes.iter().map(|&(_, f, _)| f).collect();
        assert_eq!(first_two, [2, 3], "two flows, two idle connections");
        // Connection 2 has delivered all but 1 byte: the third flow queues behind it.
        w.delivered.insert(2, w.writes[0].2 - 1);
        w.delivered.insert(3, 0);
        app.background_flow(0, &mut w);
        assert_eq!(w.writes[2].1, if w.writes[1].2 > 1 { 2 } else { 3 });
        // Its completion waits for the bytes before it on that connection.
        let mut done = Vec::new();
        w.delivered.insert(2, w.writes[0].2);
        app.on_delivered(2, &mut w, &mut done);
        assert_eq!(done.len(), 1);
        assert_eq!(done[0].index, 0);
    }

    #[test]
    fn requests_queued_on_one_connection_complete_in_order_as_their_bytes_arrive() {
        let s = workload(2, 0.3, 0.0, 100);
        let n = s.connections().len();
        // Three flows from host 0 on its two connections to host 1 (2 and 3), neither of
        // which has delivered anything: the third queues behind the first, on connection 2.
        let start = || {
            let mut app = WebSearchApp::new(&s, 0..n, 5, 0, Time::from_us(50)).unwrap();
            let mut w = Fake { now: Time::from_secs(1), ..Fake::default() };
            for _ in 0..3 {
                app.background_flow(0, &mut w);
            }
            let conns: Vec<usize> = w.writes.iter().map(|&(_, f, _)| f).collect();
            assert_eq!(conns, [2, 3, 2]);
            (app, w)
        };
        let indices = |done: &[Completed]| done.iter().map(|c| c.index).collect::<Vec<_>>();
        let (mut app, mut w) = start();
        let (first, third) = (w.writes[0].2, w.writes[2].2);
        let mut done = Vec::new();
        for (bytes, expected) in [
            (first - 1, vec![]),
            (first + third - 1, vec![0]),
            (first + third - 1, vec![0]),
            (first + third, vec![0, 2]),
        ] {
            w.delivered.insert(2, bytes);
            app.on_delivered(2, &mut w, &mut done);
            assert_eq!(indices(&done), expected, "{bytes} of {first} + {third} bytes delivered");
        }
        // The same bytes delivered at once complete both, in order, in one call.
        let (mut app, mut w) = start();
        w.delivered.insert(2, first + third);
        let mut done = Vec::new();
        app.on_delivered(2, &mut w, &mut done);
        assert_eq!(indices(&done), [0, 2]);
    }

    // ---- What load is a share of ----

    /// The S-ECN testbed's shape: 4 racks of 3 hosts, every link 1 Gbit/s unless `uplink`. Port
    /// `h` is host h's link up, `12 + r` rack r's uplink, `16 + r` its downlink, `20 + h` the
    /// link down to host h; a route is its ports from the sender.
    fn racks_routes(spec: &WebSearchSpec) -> Vec<Vec<PortId>> {
        let rack = |h: u32| h / 3;
        (spec.connections().iter())
            .map(|&(a, b)| {
                if rack(a) == rack(b) {
                    vec![a, 20 + b]
                } else {
                    vec![a, 12 + rack(a), 16 + rack(b), 20 + b]
                }
            })
            .collect()
    }

    fn twelve_hosts(load: f64) -> WebSearchSpec {
        WebSearchSpec {
            connections: 8,
            load_of: LoadOf::BusiestLink,
            ..workload(12, load, 0.0, 60)
        }
    }

    #[test]
    fn busiest_link_load_is_the_rack_uplinks_on_an_oversubscribed_fabric() {
        let load = 0.6;
        let mut spec = twelve_hosts(load);
        let routes = racks_routes(&spec);
        let refs: Vec<&[PortId]> = routes.iter().map(Vec::as_slice).collect();
        let (rate, port) = busiest_link_rate(&spec, &refs, |_| Rate::from_gbps(1));
        // Each uplink carries its 3 hosts' flows to the 9 hosts of other racks: 27/11 of one
        // host's offer, so each host offers load · 11/27 Gbit/s.
        assert!((12..20).contains(&port), "busiest port {port}");
        assert!((rate.bps() as f64 - 1e9 * 11.0 / 27.0).abs() <= 1.0, "{rate:?}");
        // Analytically, from the arrival process the spec makes: flows per second per host
        // (1 / mean gap) times the CDF's mean size is the host's offer; the uplink carries 3
        // hosts' 9/11 of it, which is `load` of its 1 Gbit/s.
        spec.background.rate = rate;
        let a = Arrivals::new(&spec.background, 1, 0).unwrap();
        let host_bps = SizeCdf::web_search().mean() * 8.0 / a.mean_gap_s();
        let uplink = 3.0 * host_bps * 9.0 / 11.0 / 1e9;
        assert!((uplink - load).abs() < 1e-6, "uplink offered {uplink} of 1 Gbit/s");
        // And the host links, each carrying one host's offer, stay at 11/27 of the load.
        assert!((host_bps / 1e9 - load * 11.0 / 27.0).abs() < 1e-6, "host offered {host_bps}");
    }

    #[test]
    fn busiest_link_load_is_the_host_links_where_the_uplinks_keep_up() {
        // Uplinks of 4 Gbit/s carry 27/11 host links' worth at most: the host links are the
        // busiest, and the load is theirs, as LoadOf::HostLink has it.
        let spec = twelve_hosts(0.4);
        let routes = racks_routes(&spec);
        let refs: Vec<&[PortId]> = routes.iter().map(Vec::as_slice).collect();
        let rate =
            |p: PortId| if (12..20).contains(&p) { Rate::from_gbps(4) } else { Rate::from_gbps(1) };
        let (r, port) = busiest_link_rate(&spec, &refs, rate);
        assert_eq!(r, Rate::from_gbps(1));
        assert!(!(12..20).contains(&port), "busiest port {port}");
    }

    #[test]
    fn busiest_link_load_splits_a_pair_over_its_connections_routes() {
        // Two hosts, two connections from 0 to 1 over two parallel 1 Gbit/s links (ports 10 and
        // 11, as ECMP would spread them) after a 10 Gbit/s host link (port 0): each carries half.
        let spec = WebSearchSpec { load_of: LoadOf::BusiestLink, ..workload(2, 0.5, 0.0, 10) };
        let conns = spec.connections();
        let first = spec.background_conn(0, 1);
        let routes: Vec<Vec<PortId>> = (0..conns.len())
            .map(|c| match c {
                c if c == first => vec![0, 10],
                c if c == first + 1 => vec![0, 11],
                _ => vec![1, 12],
            })
            .collect();
        let refs: Vec<&[PortId]> = routes.iter().map(Vec::as_slice).collect();
        let rate = |p: PortId| if p == 0 { Rate::from_gbps(10) } else { Rate::from_gbps(1) };
        let (r, port) = busiest_link_rate(&spec, &refs, rate);
        // Host 1 → 0 runs over port 12 alone (1 Gbit/s), the busiest; host 0's 10 and 11 take
        // half each of the same offer.
        assert_eq!((r, port), (Rate::from_gbps(1), 1));
        // With host 1 silent (no routes), the parallel links are the busiest at half each.
        let only_forward: Vec<Vec<PortId>> = (0..conns.len())
            .map(|c| if c >= first && c < first + 2 { routes[c].clone() } else { vec![] })
            .collect();
        let refs: Vec<&[PortId]> = only_forward.iter().map(Vec::as_slice).collect();
        assert_eq!(busiest_link_rate(&spec, &refs, rate), (Rate::from_gbps(2), 10));
    }

    #[test]
    fn size_classes_are_the_papers() {
        assert_eq!(size_class(1), "small");
        assert_eq!(size_class(100_000), "small");
        assert_eq!(size_class(100_001), "medium");
        assert_eq!(size_class(10_000_000), "medium");
        assert_eq!(size_class(10_000_001), "large");
    }
}
