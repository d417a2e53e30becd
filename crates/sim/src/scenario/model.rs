//! The typed scenario: what the parser produces and the simulator consumes. Every quantity is
//! already in engine units (picoseconds, bits per second, bytes).

use crate::time::Time;
use crate::units::Rate;

#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    pub name: String,
    pub seed: u64,
    /// Simulated time at which the run ends, whatever is still in flight.
    pub stop: Time,
    /// Period of the `intervals` table (iperf3 `-i`), 1 s by default, ≥ 1 ms.
    pub interval: Time,
    pub topology: Topology,
    pub flows: Vec<FlowSpec>,
    /// N-to-1 query apps; their senders' flows are numbered after `flows`.
    pub incasts: Vec<IncastSpec>,
    pub bursts: Vec<BurstSpec>,
    /// `[telemetry]`: which switch ports export INT metadata (the `int` table).
    pub telemetry: Telemetry,
}

/// The `[telemetry]` section: INT at chosen switch ports (off by default).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Telemetry {
    /// Switch egress ports that record INT metadata, by the `queue` table's node and port names.
    pub int_ports: Vec<IntPort>,
    /// Record 1 in `int_sample` packets per port (the 1st, the (N+1)th, …); 1 = every packet.
    pub int_sample: u32,
}

impl Default for Telemetry {
    fn default() -> Telemetry {
        Telemetry { int_ports: Vec::new(), int_sample: 1 }
    }
}

/// A switch egress port, named as in the `queue` table (`node = "swA"`, `port = "swA->swB"`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IntPort {
    pub node: String,
    pub port: String,
}

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
    /// query's order in the next (rank correlation 0.10–0.25, docs/validation-notes.md).
    Shuffled,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preset {
    /// Sender hosts — switch A ==bottleneck== switch B — receiver hosts; burst sources on their
    /// own ports of switch A, fanning in to the bottleneck egress queue.
    Dumbbell,
    /// `[[node]]` and `[[link]]` tables (`net::graph`).
    Graph,
    /// A chain of switches with hosts on each (`net::presets::parking_lot`).
    ParkingLot,
    /// Leaves, spines and hosts per leaf (`net::presets::leaf_spine`).
    LeafSpine,
    /// Hosts in racks behind ToRs under one aggregation switch (`net::presets::racks`).
    Racks,
}

impl Preset {
    pub const ALL: [(&'static str, Preset); 5] = [
        ("dumbbell", Preset::Dumbbell),
        ("graph", Preset::Graph),
        ("parking-lot", Preset::ParkingLot),
        ("leaf-spine", Preset::LeafSpine),
        ("racks", Preset::Racks),
    ];

    /// The scenario's spelling.
    pub fn name(self) -> &'static str {
        Preset::ALL.iter().find(|(_, p)| *p == self).map(|(n, _)| *n).expect("listed")
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Topology {
    pub preset: Preset,
    pub bottleneck_rate: Rate,
    /// Rate of every host NIC and access link.
    pub host_rate: Rate,
    /// Rate of the links that bring burst sources into switch A (default: `host_rate`).
    pub burst_link_rate: Rate,
    /// Base round-trip propagation time between a sender and its receiver.
    pub rtt: Time,
    /// IP MTU of every interface, bytes.
    pub mtu: u32,
    /// Bound of every port's clock offset, ppm (`net::clock`); 0 gives exact link rates.
    pub clock_ppm: f64,
    /// Hosts and switches are Linux network namespaces joined by veth pairs: TCP's GSO skbs
    /// stay whole up to the `tbf` qdisc and into the receiver, which ACKs each as one
    /// (docs/fidelity.md). Otherwise NICs cut them into frames on the wire.
    pub veth: bool,
    /// Bottleneck egress port: scheduler and queues.
    pub bottleneck: PortSpec,
    /// The network as a graph with the traffic attached (every preset but the dumbbell, which
    /// the fields above describe).
    pub graph: Option<crate::net::topology::GraphTopology>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct PortSpec {
    pub scheduler: Scheduler,
    /// At least one queue. With `Strict`, index 0 is the highest priority.
    pub queues: Vec<QueueSpec>,
    /// A `tbf` shaper in front of the (single, FIFO) queue, whose buffer is then tbf's `limit`.
    pub shaper: Option<TbfSpec>,
    /// Intervals in which the port starts no packet, ascending and apart.
    pub pauses: Vec<Pause>,
}

/// `[start, end)`: the port starts no packet (one already on the wire finishes). A host that
/// did not run its qdisc in time — the validation twin replays the real `tbf`'s late dequeues —
/// or a link paused by its far end (IEEE 802.1Qbb PFC). A `tbf` keeps earning tokens meanwhile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pause {
    pub start: Time,
    pub end: Time,
}

/// Linux `tc qdisc … tbf rate R burst B limit L`.
#[derive(Clone, Debug, PartialEq)]
pub struct TbfSpec {
    pub rate: Rate,
    /// Bucket size, bytes (at least one frame).
    pub burst_bytes: u64,
    /// Bytes that may wait for tokens (the bfifo child's limit).
    pub limit_bytes: u64,
    /// How late the host runs the qdisc after the watchdog's time (`tbf_watchdog_latency`):
    /// the hrtimer's interrupt and the `NET_TX` softirq it raises are not instant. Zero: exact.
    pub watchdog_latency: Latency,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheduler {
    /// One FIFO (only queue 0 is used).
    Fifo,
    /// Strict priority: the lowest-index non-empty queue is served first.
    Strict,
    /// Deficit round robin (Shreedhar & Varghese 1996) with per-queue quantum in bytes.
    Drr,
}

#[derive(Clone, Debug, PartialEq)]
pub struct QueueSpec {
    /// Byte limit of the queue (tail drop above it).
    pub buffer_bytes: u64,
    /// DRR quantum in bytes.
    pub quantum_bytes: u32,
    /// Classifier: packets whose DSCP is listed go here.
    pub dscp: Vec<u8>,
    /// Classifier: packets of these flow ids go here.
    pub flows: Vec<u32>,
    pub ecn: Option<EcnSpec>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EcnSpec {
    /// Mark CE when the instantaneous queue exceeds K bytes.
    pub threshold_bytes: u64,
    pub mode: EcnMode,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EcnMode {
    /// Compare the queue with K when the packet arrives (DCTCP paper, RFC 8257 §3.1).
    Enqueue,
    /// Compare when the packet leaves (Wu et al., CoNEXT 2012).
    Dequeue,
}

/// Receive-window model of the receiving host's kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowModel {
    /// Kernels ≤ 6.5: `tcp_win_from_space()` with `tcp_adv_win_scale`.
    AdvWinScale(i32),
    /// Kernels ≥ 6.6: `space * scaling_ratio >> 8`.
    ScalingRatio(u8),
}

/// Which kernel's receive-buffer auto-tuning (`net.ipv4.tcp_moderate_rcvbuf`, dynamic
/// right-sizing) the receiving host runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RcvBufTuning {
    /// Linux 6.6–6.15 `tcp_rcv_space_adjust()`: once per receiver RTT, from the bytes the
    /// application read, `rcvwin = 2·copied + 16·advmss`, grown for a sender in slow start.
    #[default]
    Linux6_6,
    /// Linux 6.18 `tcp_rcvbuf_grow()`: once per receiver RTT from what was read less what is
    /// still queued, `rcvwin = 2·copied` grown for slow start, and at every out-of-order
    /// segment from the span the out-of-order queue covers.
    Linux6_18,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FlowSpec {
    pub cca: String,
    /// Bytes to send (iperf3 `-n`); `None` = send until `stop`.
    pub size_bytes: Option<u64>,
    pub start: Time,
    /// Receiver `net.ipv4.tcp_rmem` (min, default, max), bytes.
    pub tcp_rmem: [u64; 3],
    /// Sender `net.ipv4.tcp_wmem` (min, default, max), bytes.
    pub tcp_wmem: [u64; 3],
    /// Receiver `net.core.rmem_max`, bytes (bounds the window scale, like `tcp_rmem[2]`).
    pub rmem_max: u64,
    pub window_model: WindowModel,
    /// The len/truesize ratio (of 256) of the receiving host's skbs, which Linux ≥ 6.6 measures
    /// from the first full-sized segment (`tcp_measure_rcv_mss()`) and sizes the window with
    /// from then on; `None` = the window keeps `window_model`'s ratio.
    pub skb_scaling_ratio: Option<u8>,
    /// The receiving host's receive-buffer auto-tuning.
    pub rcvbuf_tuning: RcvBufTuning,
    /// `ip route … initcwnd` (packets); default `TCP_INIT_CWND` = 10.
    pub initcwnd: u32,
    /// `ip route … initrwnd` (packets); 0 = kernel default.
    pub initrwnd: u32,
    /// `net.ipv4.tcp_comp_sack_nr` of the receiving host; 0 turns SACK compression off.
    pub comp_sack_nr: u32,
    /// `ip route … rto_min`; default `TCP_RTO_MIN` = 200 ms.
    pub rto_min: Time,
    /// `ip route … quickack 1`: the receiver never delays ACKs.
    pub quickack: bool,
    /// `net.ipv4.tcp_ecn` negotiated on both ends.
    pub ecn: bool,
    /// Kernel `HZ` of the sender (CCAs count jiffies).
    pub hz: u32,
    /// How the hosts' TCP timers (RTO, loss probe, RACK reorder, delayed ACK) fire.
    pub timers: Timers,
    /// How long the receiving application takes to wake and read once data is queued; zero =
    /// it reads every segment as it arrives.
    pub read_latency: Latency,
    /// How long after data first arrives the receiving application first reads, if that
    /// differs from `read_latency` (an application still starting up: the validation's
    /// receiving tool, 0.7-6 ms, median 1.1 ms); `None` = as any other read.
    pub first_read_latency: Option<Time>,
    /// How long the application holds the socket before each read ends: `tcp_recvmsg()` runs
    /// under `lock_sock()`, and segments that arrive meanwhile wait in the socket's backlog,
    /// where `tcp_add_backlog()` joins them into one skb, and are processed when the read
    /// lets go (`__release_sock()`), with one ACK for all of them (`tcp_backlog_ack_defer`,
    /// Linux 6.7+). A busy host holds it long: a 1 Gbit/s flow of 1500-byte frames had half
    /// its bytes processed from the backlog. Zero = never held.
    pub read_hold: Latency,
    /// How long the receiving host takes to answer the connection's handshake. The sender's
    /// first RTT sample, and with it its min RTT, includes it (`tcp_synack_rtt_meas()`).
    pub handshake_latency: Latency,
    /// Receive batching on the receiving host: a data segment that reaches an idle receive
    /// path waits this long, and every one that arrives meanwhile is handed to TCP with it
    /// (NIC interrupt coalescing, `ethtool -C rx-usecs`; the NAPI softirq of a busy CPU). Zero
    /// = each segment as it arrives.
    pub rx_coalesce: Latency,
    /// How late the sending host runs TCP after the pacing timer's time (`pacing_latency`):
    /// the soft hrtimer behind `tcp_pacing_check()` fires late on a busy or virtual host. An
    /// ACK that comes after the departure time sends at once, as in Linux. Zero = on time.
    pub pacing_latency: Latency,
    pub dscp: u8,
    /// `SO_MAX_PACING_RATE` (iperf3 `--fq-rate`): caps the pacing rate and turns on TCP's
    /// internal pacing, as `sk_setsockopt()` does.
    pub max_pacing_rate: Option<Rate>,
    /// The sender's `gso_max_size`, bytes (64 KiB; BIG TCP raises it).
    pub gso_max_size: u32,
    /// The sender host's egress qdisc.
    pub qdisc: HostQdisc,
}

impl FlowSpec {
    /// A flow of `cca` between hosts with Linux's default settings (the parser's defaults):
    /// `tcp_rmem`/`tcp_wmem` defaults, `rmem_max` 212992, the ≥ 6.6 window model, IW 10,
    /// `rto_min` 200 ms, HZ 250, no ECN, pacing or fq; sends until the scenario stops.
    pub fn linux_default(cca: &str) -> FlowSpec {
        use super::defaults::*;
        FlowSpec {
            cca: cca.to_owned(),
            size_bytes: None,
            start: Time::ZERO,
            tcp_rmem: DEFAULT_TCP_RMEM,
            tcp_wmem: DEFAULT_TCP_WMEM,
            rmem_max: DEFAULT_RMEM_MAX,
            window_model: WindowModel::ScalingRatio(crate::tcp::rwnd::TCP_DEFAULT_SCALING_RATIO),
            skb_scaling_ratio: None,
            rcvbuf_tuning: RcvBufTuning::Linux6_6,
            initcwnd: TCP_INIT_CWND,
            initrwnd: 0,
            comp_sack_nr: crate::tcp::receiver::TCP_COMP_SACK_NR,
            rto_min: TCP_RTO_MIN,
            quickack: false,
            ecn: false,
            hz: DEFAULT_HZ,
            timers: Timers::Exact,
            read_latency: Latency::ZERO,
            first_read_latency: None,
            read_hold: Latency::ZERO,
            handshake_latency: Latency::ZERO,
            rx_coalesce: Latency::ZERO,
            pacing_latency: Latency::ZERO,
            dscp: 0,
            max_pacing_rate: None,
            gso_max_size: GSO_MAX_SIZE,
            qdisc: HostQdisc::PfifoFast,
        }
    }
}

/// How TCP timers fire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timers {
    /// At the exact time they were armed for.
    Exact,
    /// As Linux's: whole jiffies of `hz`, on the timer wheel's ticks
    /// ([`crate::tcp::timer_wheel`]); a short probe fires 1–2 jiffies after it was armed.
    Jiffies,
}

/// How long a host takes to do something (wake its application, answer a handshake): the same
/// every time, or drawn afresh each time from the run's seed.
#[derive(Clone, Debug, PartialEq)]
pub enum Latency {
    Fixed(Time),
    /// Exponential with this mean: a host that shares its CPU comes back mostly quickly and
    /// now and then late.
    Exponential(Time),
    /// One of these, each equally likely: a measured distribution (samples, or quantiles at
    /// equal steps of probability). Never empty.
    Samples(Vec<Time>),
}

impl Latency {
    pub const ZERO: Latency = Latency::Fixed(Time::ZERO);

    /// One draw: the fixed time, or a fresh one from `rng`.
    pub fn draw(&self, rng: &mut crate::rng::Stream) -> Time {
        match self {
            Latency::Fixed(t) => *t,
            Latency::Exponential(mean) => {
                Time((mean.ps() as f64 * rng.exponential()).round() as u64)
            }
            Latency::Samples(v) => v[rng.below(v.len() as u64) as usize],
        }
    }

    /// The longest a draw takes (an exponential's 20 means: longer once in 5·10⁸ draws).
    pub fn upper(&self) -> Time {
        match self {
            Latency::Fixed(t) => *t,
            Latency::Exponential(mean) => *mean * 20,
            Latency::Samples(v) => v.iter().copied().max().unwrap_or(Time::ZERO),
        }
    }

    /// No latency at all: the host acts at once.
    pub fn is_zero(&self) -> bool {
        match self {
            Latency::Fixed(t) | Latency::Exponential(t) => *t == Time::ZERO,
            Latency::Samples(v) => v.iter().all(|t| *t == Time::ZERO),
        }
    }
}

impl FlowSpec {
    /// The jiffy the hosts' TCP timers tick in, or `None` for exact timers.
    pub fn timer_jiffy(&self) -> Option<Time> {
        match self.timers {
            Timers::Exact => None,
            Timers::Jiffies => Some(crate::tcp::timer_wheel::jiffy(self.hz)),
        }
    }
}

/// A sending host's root qdisc.
#[derive(Clone, Debug, PartialEq)]
pub enum HostQdisc {
    /// `pfifo_fast`: one FIFO, no pacing of its own.
    PfifoFast,
    /// `fq` (`net/sched/sch_fq.c`): per-flow queues, EDT pacing, optional per-flow `maxrate`.
    Fq(FqParams),
}

#[derive(Clone, Debug, PartialEq)]
pub struct FqParams {
    /// `maxrate`: per-flow rate cap in bytes/s (a 32-bit field in Linux).
    pub maxrate_bytes_per_s: Option<u64>,
    /// `flow_limit`, packets per flow.
    pub flow_limit: u32,
    /// `quantum`, bytes; `None` = Linux's default (2 × MTU).
    pub quantum: Option<u32>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct BurstSpec {
    /// Number of sources, each on its own port of switch A.
    pub sources: u32,
    /// Sending rate of each source (IP bytes).
    pub rate: Rate,
    pub start: Time,
    pub duration: Time,
    /// IP datagram size, bytes.
    pub packet_size: u32,
    pub dscp: u8,
    /// Bound of each datagram's departure jitter (uniform in `[0, jitter]`, no drift);
    /// `app::burst` explains the timing model.
    pub jitter: Time,
    /// Bound of each source's clock offset in ppm (each draws its own, uniform in ±bound).
    pub clock_ppm: f64,
}
