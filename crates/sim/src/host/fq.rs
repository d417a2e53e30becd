//! Linux's `fq` qdisc on a host's egress: per-flow queues served by deficit round robin, with
//! per-flow pacing from earliest-departure times (EDT, `skb->tstamp`) and from `maxrate`.
//!
//! Follows `net/sched/sch_fq.c` @ torvalds/linux 01857fc712f6 (`fq_enqueue`, `fq_dequeue`,
//! `fq_check_throttled`, `fq_init`), one band (all packets have priority 0, which the default
//! priomap puts in band 1 alone, so the band round robin never changes the order).
//!
//! The host's NIC ([`crate::host::nic`]) drives it as a driver drives a qdisc: after an
//! enqueue into an idle port and after each serialization ends it asks [`Fq::dequeue`];
//! [`Next::Wait`] is the qdisc watchdog (Linux arms an hrtimer at `time_next_delayed_flow`), so
//! the port schedules a wake-up at that time.
//!
//! Lengths: Linux charges credit and paces by `qdisc_pkt_len(skb)`, the frame with its MAC
//! header and without FCS, so here `ip_bytes + ETH_HLEN`. [`Fq::bytes`] counts IP bytes, like
//! [`crate::net::queue::PortQueues::bytes`].

use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, VecDeque};

use rustc_hash::FxHashMap;

use crate::packet::{FlowId, PacketId, PacketPool};
use crate::time::Time;

/// Ethernet MAC header: `ETH_HLEN` (`include/uapi/linux/if_ether.h`). It is part of
/// `skb->len` at the qdisc and of `psched_mtu()` (`dev->mtu + dev->hard_header_len`).
pub const ETH_HLEN: u32 = 14;

/// Default total packet limit, `sch->limit = 10000` (`fq_init`).
pub const DEFAULT_LIMIT: u32 = 10_000;

/// Default per-flow packet limit, `q->flow_plimit = 100` (`fq_init`).
pub const DEFAULT_FLOW_LIMIT: u32 = 100;

/// Largest quantum `fq_change` accepts: `quantum > 0 && quantum <= (1 << 20)`.
pub const MAX_QUANTUM: u32 = 1 << 20;

/// A flow detached longer than this gets at least one quantum of credit when it comes back:
/// `q->flow_refill_delay = msecs_to_jiffies(40)` (`fq_init`), tested in `fq_enqueue`.
pub const FLOW_REFILL_DELAY: Time = Time::from_ms(40);

/// Packets with an EDT further than this in the future are dropped (`q->horizon` = 10 s and
/// `q->horizon_drop = 1` in `fq_init`; `fq_packet_beyond_horizon`).
pub const HORIZON: Time = Time::from_secs(10);

/// Non-EDT packets of flows paced at or below this rate get no DRR credit (so one packet per
/// turn): `q->low_rate_threshold = 550000 / 8` bytes/s (`fq_init`, used in `fq_dequeue`).
pub const LOW_RATE_THRESHOLD: u64 = 550_000 / 8;

/// A pacing gap is clamped to one second (`fq_dequeue`: `if (len > NSEC_PER_SEC)`).
pub const MAX_PACING_DELAY_NS: u64 = 1_000_000_000;

/// `maxrate` value meaning "no limit": `fq_change` maps a `TCA_FQ_FLOW_MAX_RATE` of `~0U` to
/// `~0UL`, so 2^32 − 1 bytes/s is unlimited, not a cap.
pub const MAXRATE_UNLIMITED: u64 = u32::MAX as u64;

const NS_PER_S: u64 = 1_000_000_000;

/// Configuration of one `fq` instance (`tc qdisc add dev … root fq …`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FqSpec {
    /// DRR credit added per round, bytes (Linux default `2 * psched_mtu(dev)`).
    pub quantum: u32,
    /// Credit of a new flow, bytes (Linux default `10 * psched_mtu(dev)`).
    pub initial_quantum: u32,
    /// Packets per flow before `fq_enqueue` drops (default 100).
    pub flow_limit: u32,
    /// Packets in the qdisc before `fq_enqueue` drops (default 10000).
    pub limit: u32,
    /// Per-flow rate cap, bytes/s (`tc … fq maxrate`; `TCA_FQ_FLOW_MAX_RATE`, a u32).
    pub maxrate: Option<u64>,
}

impl FqSpec {
    /// The parameters `fq_init` picks for a device of this IP MTU with an Ethernet header:
    /// MTU 1500 gives quantum 3028 and initial quantum 15140, as `tc -s qdisc show` prints.
    pub fn linux_default(mtu: u32) -> FqSpec {
        let psched_mtu = mtu + ETH_HLEN;
        FqSpec {
            quantum: 2 * psched_mtu,
            initial_quantum: 10 * psched_mtu,
            flow_limit: DEFAULT_FLOW_LIMIT,
            limit: DEFAULT_LIMIT,
            maxrate: None,
        }
    }

    /// The checks `fq_change` and its netlink policy make, as messages naming the field.
    pub fn validate(&self) -> Result<(), String> {
        if self.quantum == 0 || self.quantum > MAX_QUANTUM {
            return Err(format!(
                "fq.quantum = {}: expected 1..={MAX_QUANTUM} bytes (sch_fq.c fq_change: \"invalid quantum\")",
                self.quantum
            ));
        }
        if self.initial_quantum > i32::MAX as u32 {
            return Err(format!(
                "fq.initial_quantum = {}: expected at most {} (TCA_FQ_INITIAL_QUANTUM range is INT_MAX)",
                self.initial_quantum,
                i32::MAX
            ));
        }
        if let Some(rate) = self.maxrate {
            check_maxrate_bytes(rate)?;
        }
        Ok(())
    }
}

/// Why `fq_enqueue` refused a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FqDrop {
    /// The flow already holds `flow_limit` packets (`stat_flows_plimit`).
    FlowLimit,
    /// The qdisc already holds `limit` packets (`stat_band_drops`).
    Limit,
    /// The EDT lies more than [`HORIZON`] ahead (`stat_horizon_drops`).
    Horizon,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FqVerdict {
    Enqueued,
    /// Not queued: the caller records and frees the packet.
    Dropped(FqDrop),
}

/// What the qdisc gives a port that asks for a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    Packet(PacketId),
    /// Packets are queued but none may leave before this time: ask again then.
    Wait(Time),
    Empty,
}

/// Cumulative counters, named after `tc -s qdisc show` fields where Linux has one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FqStats {
    pub enqueued: u64,
    pub dequeued: u64,
    pub flows_plimit: u64,
    pub limit_drops: u64,
    pub horizon_drops: u64,
    /// Times a flow was put on the throttled tree.
    pub throttled: u64,
    /// Pacing gaps clamped to one second.
    pub pkts_too_long: u64,
}

/// `fq_maxrate` from a rate in bits/s as `tc` parses it (`get_rate`: bits / 8, rounded down),
/// rejecting rates that the 32-bit attribute cannot hold.
pub fn check_maxrate(bits_per_second: u64) -> Result<u64, String> {
    check_maxrate_bytes(bits_per_second / 8).map_err(|why| {
        format!("fq maxrate = {bits_per_second} bit/s ({} bytes/s): {why}", bits_per_second / 8)
    })
}

fn check_maxrate_bytes(bytes_per_second: u64) -> Result<u64, String> {
    if bytes_per_second > MAXRATE_UNLIMITED {
        return Err(format!(
            "fq's maxrate is a 32-bit bytes-per-second field (TCA_FQ_FLOW_MAX_RATE, \
             net/sched/sch_fq.c), so it cannot exceed {MAXRATE_UNLIMITED} bytes/s \
             (about 34.36 Gbit/s); to pace a faster flow set the socket's max_pacing_rate \
             (SO_MAX_PACING_RATE, 64-bit) instead, e.g. iperf3 --fq-rate"
        ));
    }
    Ok(bytes_per_second)
}

/// A queued packet. Linux keeps `time_to_send` in the skb's qdisc control block.
#[derive(Clone, Copy, Debug)]
struct Queued {
    time_to_send: Time,
    /// Arrival order, to keep equal times first-in first-out.
    seq: u64,
    id: PacketId,
    ip_bytes: u32,
    /// The sender gave an EDT (`skb->tstamp != 0`): only `maxrate` paces it further.
    edt: bool,
    /// First segment of its GSO skb: Linux queues skbs, so only these count against the
    /// packet limits.
    skb_head: bool,
}

impl Queued {
    fn key(&self) -> (Time, u64) {
        (self.time_to_send, self.seq)
    }
}

impl PartialEq for Queued {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}
impl Eq for Queued {}
impl PartialOrd for Queued {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Queued {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key().cmp(&other.key())
    }
}

/// A flow's packets in `time_to_send` order (`flow_queue_add`): a FIFO while times do not
/// decrease (the common case, O(1)), and a sorted side structure for packets that arrive with
/// an earlier time than the tail (Linux's `t_root` rb-tree). `fq_peek` takes the earlier head,
/// the FIFO on ties; that is the order of (time, arrival), which the `Ord` of `Queued` is.
#[derive(Default)]
struct FlowQueue {
    fifo: VecDeque<Queued>,
    sorted: BinaryHeap<Reverse<Queued>>,
}

impl FlowQueue {
    #[cfg(test)]
    fn len(&self) -> usize {
        self.fifo.len() + self.sorted.len()
    }

    fn push(&mut self, q: Queued) {
        match self.fifo.back() {
            Some(tail) if q.time_to_send < tail.time_to_send => self.sorted.push(Reverse(q)),
            _ => self.fifo.push_back(q),
        }
    }

    fn peek(&self) -> Option<&Queued> {
        match (self.fifo.front(), self.sorted.peek()) {
            (Some(head), Some(Reverse(s))) => Some(if s < head { s } else { head }),
            (head, s) => head.or(s.map(|r| &r.0)),
        }
    }

    fn pop(&mut self) -> Option<Queued> {
        let from_sorted = match (self.fifo.front(), self.sorted.peek()) {
            (Some(head), Some(Reverse(s))) => s < head,
            (None, _) => true,
            (Some(_), None) => false,
        };
        if from_sorted { self.sorted.pop().map(|r| r.0) } else { self.fifo.pop_front() }
    }
}

/// Which scheduling structure holds a flow; a flow is in exactly one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FlowState {
    /// On no list (`fq_flow_set_detached`), since the given time (Linux: `f->age`).
    Detached(Time),
    New,
    Old,
    /// On the throttled tree (`q->delayed`) until its `time_next_packet`.
    Throttled,
}

struct Flow {
    queue: FlowQueue,
    /// Skbs queued (`qlen`): what `flow_limit` bounds.
    skbs: usize,
    /// The head of the skb now arriving was dropped: drop the rest of it too.
    dropping: bool,
    /// DRR credit, bytes; may go negative (Linux `int credit`).
    credit: i64,
    /// Earliest time the flow may send again; `Time::ZERO` = never paced (Linux 0).
    time_next_packet: Time,
    state: FlowState,
}

/// The `fq` qdisc of one host egress port.
pub struct Fq {
    quantum: i64,
    initial_quantum: i64,
    flow_limit: usize,
    limit: usize,
    /// `None` = unlimited (`~0UL`).
    maxrate: Option<u64>,
    flows: Vec<Flow>,
    /// Lookup only, never iterated: scheduling order never depends on hashing.
    index: FxHashMap<FlowId, u32>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    /// Throttled flows by (`time_next_packet`, insertion): `fq_flow_set_throttled` inserts
    /// equal times to the right, so they leave first-in first-out, as here.
    throttled: BinaryHeap<Reverse<(Time, u64, u32)>>,
    throttle_seq: u64,
    packet_seq: u64,
    packets: usize,
    /// Skbs queued (`sch->q.qlen`): what `limit` bounds.
    skbs: usize,
    bytes: u64,
    stats: FqStats,
}

impl Fq {
    /// Panics on a spec that [`FqSpec::validate`] rejects (the scenario parser reports those).
    pub fn new(spec: &FqSpec) -> Fq {
        if let Err(e) = spec.validate() {
            panic!("{e}");
        }
        Fq {
            quantum: i64::from(spec.quantum),
            initial_quantum: i64::from(spec.initial_quantum),
            flow_limit: spec.flow_limit as usize,
            limit: spec.limit as usize,
            maxrate: spec.maxrate.filter(|&r| r != MAXRATE_UNLIMITED),
            flows: Vec::new(),
            index: FxHashMap::default(),
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            throttled: BinaryHeap::new(),
            throttle_seq: 0,
            packet_seq: 0,
            packets: 0,
            skbs: 0,
            bytes: 0,
            stats: FqStats::default(),
        }
    }

    /// `fq_enqueue`. `time_to_send` is the packet's EDT (`skb->tstamp`) or `Time::ZERO` for a
    /// packet without one, which may leave now. A dropped packet stays in the pool.
    pub fn enqueue(
        &mut self,
        pool: &PacketPool,
        id: PacketId,
        time_to_send: Time,
        now: Time,
    ) -> FqVerdict {
        let packet = pool.get(id);
        // The later segments of a GSO skb share its fate: Linux enqueues the skb whole.
        let head = packet.gso_index == 0;
        let f = self.classify(packet.flow, now);
        if !head && self.flows[f as usize].dropping {
            return FqVerdict::Dropped(FqDrop::FlowLimit);
        }
        if head {
            let drop = if self.skbs >= self.limit {
                self.stats.limit_drops += 1;
                Some(FqDrop::Limit)
            } else if time_to_send != Time::ZERO && time_to_send > now + HORIZON {
                self.stats.horizon_drops += 1;
                Some(FqDrop::Horizon)
            } else if self.flows[f as usize].skbs >= self.flow_limit {
                self.stats.flows_plimit += 1;
                Some(FqDrop::FlowLimit)
            } else {
                None
            };
            self.flows[f as usize].dropping = drop.is_some() && packet.gso_segs > 1;
            if let Some(why) = drop {
                return FqVerdict::Dropped(why);
            }
            self.flows[f as usize].skbs += 1;
            self.skbs += 1;
        }
        let edt = time_to_send != Time::ZERO;
        let flow = &mut self.flows[f as usize];
        if let FlowState::Detached(since) = flow.state {
            flow.state = FlowState::New;
            self.new_flows.push_back(f);
            // A flow idle for a while starts its turn with at least a quantum.
            if now > since + FLOW_REFILL_DELAY {
                flow.credit = flow.credit.max(self.quantum);
            }
        }
        flow.queue.push(Queued {
            time_to_send: if edt { time_to_send } else { now },
            seq: self.packet_seq,
            id,
            ip_bytes: packet.ip_bytes,
            edt,
            skb_head: head,
        });
        self.packet_seq += 1;
        self.packets += 1;
        self.bytes += u64::from(packet.ip_bytes);
        self.stats.enqueued += 1;
        FqVerdict::Enqueued
    }

    /// The flow of a packet, created detached with the initial quantum (`fq_classify`).
    fn classify(&mut self, key: FlowId, now: Time) -> u32 {
        if let Some(&f) = self.index.get(&key) {
            return f;
        }
        let f = self.flows.len() as u32;
        self.flows.push(Flow {
            queue: FlowQueue::default(),
            skbs: 0,
            dropping: false,
            credit: self.initial_quantum,
            time_next_packet: Time::ZERO,
            state: FlowState::Detached(now),
        });
        self.index.insert(key, f);
        f
    }

    /// `fq_dequeue`: new flows before old ones, DRR by credit, throttled flows wait on the tree.
    pub fn dequeue(&mut self, pool: &PacketPool, now: Time) -> Next {
        if self.packets == 0 {
            return Next::Empty;
        }
        self.check_throttled(now);
        loop {
            let (f, from_new) = match (self.new_flows.front(), self.old_flows.front()) {
                (Some(&f), _) => (f, true),
                (None, Some(&f)) => (f, false),
                (None, None) => break,
            };
            let flow = &mut self.flows[f as usize];
            if flow.credit <= 0 {
                flow.credit += self.quantum;
                self.pop_list_head(from_new);
                self.push_old(f);
                continue;
            }
            let Some(&head) = flow.queue.peek() else {
                self.pop_list_head(from_new);
                if from_new {
                    // Force a pass through the old list, so a flow cannot starve the others
                    // by emptying and returning as new.
                    self.push_old(f);
                } else {
                    self.flows[f as usize].state = FlowState::Detached(now);
                }
                continue;
            };
            let time_next_packet = head.time_to_send.max(flow.time_next_packet);
            if now < time_next_packet {
                flow.time_next_packet = time_next_packet;
                self.pop_list_head(from_new);
                self.set_throttled(f);
                continue;
            }
            let q = flow.queue.pop().expect("peeked");
            debug_assert_eq!(q.id, head.id);
            debug_assert_eq!(pool.get(q.id).ip_bytes, q.ip_bytes, "packet resized while queued");
            let plen = u64::from(q.ip_bytes + ETH_HLEN);
            flow.credit -= plen as i64;
            self.packets -= 1;
            if q.skb_head {
                flow.skbs -= 1;
                self.skbs -= 1;
            }
            self.bytes -= u64::from(q.ip_bytes);
            self.stats.dequeued += 1;
            self.pace(f, plen, q.edt, now);
            return Next::Packet(q.id);
        }
        let Reverse((t, _, _)) =
            self.throttled.peek().expect("packets queued on no list and no throttled flow");
        Next::Wait(*t)
    }

    /// Sets the flow's `time_next_packet` after it sent a packet of `plen` bytes (the tail of
    /// `fq_dequeue`). EDT packets are paced only by `maxrate`; packets without EDT are paced at
    /// `min(socket pacing rate, maxrate)` once per quantum, the socket's rate being unset here.
    fn pace(&mut self, f: u32, plen: u64, edt: bool, now: Time) {
        let flow = &mut self.flows[f as usize];
        let mut plen = plen;
        if !edt {
            if self.maxrate.is_some_and(|r| r <= LOW_RATE_THRESHOLD) {
                flow.credit = 0;
            } else {
                plen = plen.max(self.quantum as u64);
                if flow.credit > 0 {
                    return;
                }
            }
        }
        let Some(rate) = self.maxrate else { return };
        // A rate of 0 skips the division: the gap is plen seconds, clamped to one.
        let mut delay_ns = (plen * NS_PER_S).checked_div(rate).unwrap_or(plen * NS_PER_S);
        if delay_ns > MAX_PACING_DELAY_NS {
            delay_ns = MAX_PACING_DELAY_NS;
            self.stats.pkts_too_long += 1;
        }
        let mut delay = Time::from_ns(delay_ns);
        // Linux: "account for schedule/timers drifts": a late dequeue shortens the next gap by
        // the lateness, by at most half the gap.
        if flow.time_next_packet != Time::ZERO {
            let late = now.saturating_sub(flow.time_next_packet);
            delay -= late.min(Time::from_ns(delay_ns / 2));
        }
        flow.time_next_packet = now + delay;
    }

    /// `fq_check_throttled`: flows whose time has come go to the tail of the old list, earliest
    /// first.
    fn check_throttled(&mut self, now: Time) {
        while let Some(&Reverse((t, _, f))) = self.throttled.peek() {
            if t > now {
                break;
            }
            self.throttled.pop();
            self.push_old(f);
        }
    }

    fn set_throttled(&mut self, f: u32) {
        let flow = &mut self.flows[f as usize];
        flow.state = FlowState::Throttled;
        self.throttled.push(Reverse((flow.time_next_packet, self.throttle_seq, f)));
        self.throttle_seq += 1;
        self.stats.throttled += 1;
    }

    fn pop_list_head(&mut self, from_new: bool) {
        if from_new {
            self.new_flows.pop_front();
        } else {
            self.old_flows.pop_front();
        }
    }

    fn push_old(&mut self, f: u32) {
        self.flows[f as usize].state = FlowState::Old;
        self.old_flows.push_back(f);
    }

    /// Packets queued.
    pub fn packets(&self) -> usize {
        self.packets
    }

    /// IP bytes queued.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Packets refused by `enqueue`, all reasons.
    pub fn drops(&self) -> u64 {
        self.stats.flows_plimit + self.stats.limit_drops + self.stats.horizon_drops
    }

    pub fn stats(&self) -> FqStats {
        self.stats
    }

    /// Flows waiting on the throttled tree (`tc -s` "throttled" in the flows line).
    pub fn throttled_flows(&self) -> usize {
        self.throttled.len()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeSet, HashMap};

    use proptest::prelude::*;

    use super::*;
    use crate::packet::{Kind, Packet};

    const T0: Time = Time::from_us(1);

    fn spec() -> FqSpec {
        FqSpec::linux_default(1500)
    }

    fn packet(pool: &mut PacketPool, flow: FlowId, ip_bytes: u32) -> PacketId {
        pool.alloc(Packet::new(Kind::Data, flow, 0, 1, ip_bytes))
    }

    /// Enqueues `n` packets of `ip_bytes` for `flow` at `now`, with EDT `tts` (or none if 0).
    fn push_at(
        fq: &mut Fq,
        pool: &mut PacketPool,
        flow: FlowId,
        ip_bytes: u32,
        n: usize,
        tts: Time,
        now: Time,
    ) {
        for _ in 0..n {
            let id = packet(pool, flow, ip_bytes);
            assert_eq!(fq.enqueue(pool, id, tts, now), FqVerdict::Enqueued);
        }
    }

    /// Enqueues `n` packets without EDT.
    fn push(fq: &mut Fq, pool: &mut PacketPool, flow: FlowId, ip_bytes: u32, n: usize, now: Time) {
        push_at(fq, pool, flow, ip_bytes, n, Time::ZERO, now);
    }

    fn with_maxrate(bytes_per_second: u64) -> Fq {
        let maxrate = Some(bytes_per_second);
        Fq::new(&FqSpec { maxrate, ..spec() })
    }

    /// Dequeues until empty like an infinitely fast port that sleeps on `Wait`: returns
    /// (departure time, packet) for each packet, freed.
    fn drain_ids(fq: &mut Fq, pool: &mut PacketPool, mut now: Time) -> Vec<(Time, PacketId)> {
        let mut out = vec![];
        loop {
            match fq.dequeue(pool, now) {
                Next::Packet(id) => {
                    out.push((now, id));
                    pool.free(id);
                }
                Next::Wait(t) => {
                    assert!(t > now, "Wait({t}) at {now}");
                    now = t;
                }
                Next::Empty => return out,
            }
        }
    }

    /// As [`drain_ids`], with the packets' flows.
    fn drain(fq: &mut Fq, pool: &mut PacketPool, now: Time) -> Vec<(Time, FlowId)> {
        let out = drain_ids(fq, pool, now);
        out.into_iter().map(|(t, id)| (t, pool.get(id).flow)).collect()
    }

    fn flows_of(out: &[(Time, FlowId)]) -> Vec<FlowId> {
        out.iter().map(|&(_, f)| f).collect()
    }

    impl Fq {
        fn credit(&self, key: FlowId) -> i64 {
            self.flows[self.index[&key] as usize].credit
        }
        fn state(&self, key: FlowId) -> FlowState {
            self.flows[self.index[&key] as usize].state
        }
    }

    // ---- Linux constants ----

    #[test]
    fn defaults_match_fq_init() {
        // `tc -s qdisc show` on a 1500-byte Ethernet device: "quantum 3028b initial_quantum 15140b".
        let s = FqSpec::linux_default(1500);
        assert_eq!((s.quantum, s.initial_quantum), (3028, 15140));
        assert_eq!((s.flow_limit, s.limit, s.maxrate), (100, 10_000, None));
        assert_eq!(FqSpec::linux_default(9000).quantum, 18_028);
        assert_eq!(ETH_HLEN, 14);
        assert_eq!(MAX_QUANTUM, 1_048_576);
        assert_eq!(FLOW_REFILL_DELAY, Time::from_ms(40));
        assert_eq!(HORIZON, Time::from_secs(10));
        assert_eq!(LOW_RATE_THRESHOLD, 68_750);
        assert_eq!(MAX_PACING_DELAY_NS, 1_000_000_000);
        assert_eq!(MAXRATE_UNLIMITED, 4_294_967_295);
    }

    #[test]
    fn spec_validation_names_field() {
        let mut s = spec();
        s.quantum = 0;
        assert!(s.validate().unwrap_err().starts_with("fq.quantum = 0"));
        s.quantum = MAX_QUANTUM;
        assert!(s.validate().is_ok());
        s.quantum = MAX_QUANTUM + 1;
        assert!(s.validate().is_err());
        let mut s = spec();
        s.initial_quantum = 1 << 31;
        assert!(s.validate().unwrap_err().contains("INT_MAX"));
        s.initial_quantum = 0;
        s.maxrate = Some(MAXRATE_UNLIMITED + 1);
        assert!(s.validate().unwrap_err().contains("TCA_FQ_FLOW_MAX_RATE"));
    }

    // ---- maxrate: the 32-bit field ----

    #[test]
    fn maxrate_40g_rejected_with_explanation() {
        let e = check_maxrate(40_000_000_000).unwrap_err();
        assert!(e.starts_with("fq maxrate = 40000000000 bit/s (5000000000 bytes/s)"), "{e}");
        for needed in ["32-bit bytes-per-second", "TCA_FQ_FLOW_MAX_RATE", "34.36 Gbit/s"] {
            assert!(e.contains(needed), "{e}");
        }
        assert!(e.contains("max_pacing_rate") && e.contains("SO_MAX_PACING_RATE, 64-bit"), "{e}");
    }

    #[test]
    fn maxrate_boundary_is_u32_bytes() {
        assert_eq!(check_maxrate(34_000_000_000), Ok(4_250_000_000));
        // tc's get_rate divides by 8 and truncates: 2^35 − 1 bit/s is still 2^32 − 1 bytes/s.
        assert_eq!(check_maxrate(8 * 4_294_967_295), Ok(4_294_967_295));
        assert_eq!(check_maxrate((1 << 35) - 1), Ok(4_294_967_295));
        assert!(check_maxrate(1 << 35).is_err());
        assert_eq!(check_maxrate(7), Ok(0));
    }

    #[test]
    fn maxrate_all_ones_means_unlimited() {
        // fq_change: a TCA_FQ_FLOW_MAX_RATE of ~0U is "no limit", so no packet is delayed.
        let mut pool = PacketPool::default();
        let mut fq = with_maxrate(MAXRATE_UNLIMITED);
        push_at(&mut fq, &mut pool, 1, 1486, 5, T0, T0);
        let out = drain(&mut fq, &mut pool, T0);
        assert!(out.iter().all(|&(t, _)| t == T0), "{out:?}");
        assert_eq!(fq.stats().throttled, 0);
    }

    // ---- Pacing ----

    #[test]
    fn maxrate_edt_packets_spaced_by_len_over_rate() {
        // 10 Gbit/s = 1.25e9 B/s; a 1486 B datagram is a 1500 B frame: 1200 ns apart.
        let mut pool = PacketPool::default();
        let mut fq = with_maxrate(1_250_000_000);
        push_at(&mut fq, &mut pool, 1, 1486, 50, T0, T0);
        let out = drain(&mut fq, &mut pool, T0);
        assert_eq!(out.len(), 50);
        for (i, &(t, _)) in out.iter().enumerate() {
            assert_eq!(t, T0 + Time::from_ns(1200) * i as u64);
        }
        assert_eq!(fq.stats().throttled, 49);
    }

    #[test]
    fn maxrate_late_dequeue_shortens_next_gap_by_at_most_half() {
        let mut pool = PacketPool::default();
        let mut fq = with_maxrate(1_250_000_000);
        push_at(&mut fq, &mut pool, 1, 1486, 4, T0, T0);
        let gap = Time::from_ns(1200);
        assert!(matches!(fq.dequeue(&pool, T0), Next::Packet(_)));
        assert_eq!(fq.dequeue(&pool, T0), Next::Wait(T0 + gap));
        // The port was busy: 100 ns late. The next departure is still due at T0 + 2 gaps.
        let late = T0 + gap + Time::from_ns(100);
        assert!(matches!(fq.dequeue(&pool, late), Next::Packet(_)));
        assert_eq!(fq.dequeue(&pool, late), Next::Wait(T0 + gap * 2));
        // 1000 ns late: the credit for lateness is capped at half a gap (600 ns).
        let later = T0 + gap * 2 + Time::from_ns(1000);
        assert!(matches!(fq.dequeue(&pool, later), Next::Packet(_)));
        assert_eq!(fq.dequeue(&pool, later), Next::Wait(later + Time::from_ns(600)));
    }

    #[test]
    fn maxrate_non_edt_paced_per_quantum() {
        // Without EDT, fq paces a flow only once its credit is spent, by max(len, quantum):
        // 3028 B at 3.028e9 B/s is 1 µs. Initial credit 15140 = 10 frames of 1514 B.
        let mut pool = PacketPool::default();
        let mut fq = with_maxrate(3_028_000_000);
        push(&mut fq, &mut pool, 1, 1500, 20, T0);
        let times: Vec<_> = drain(&mut fq, &mut pool, T0).iter().map(|&(t, _)| t).collect();
        let mut expected = vec![T0; 10];
        for i in 1..=5 {
            expected.extend([T0 + Time::from_us(i); 2]);
        }
        assert_eq!(times, expected);
    }

    #[test]
    fn maxrate_below_low_rate_threshold_paces_every_packet() {
        // At or below 550 kbit/s a non-EDT flow loses its credit: each packet waits len/rate.
        let mut pool = PacketPool::default();
        let mut fq = with_maxrate(LOW_RATE_THRESHOLD);
        push(&mut fq, &mut pool, 1, 1361, 3, T0);
        let times: Vec<_> = drain(&mut fq, &mut pool, T0).iter().map(|&(t, _)| t).collect();
        // 1375 B at 68750 B/s = 20 ms.
        assert_eq!(times, [T0, T0 + Time::from_ms(20), T0 + Time::from_ms(40)]);
    }

    #[test]
    fn maxrate_gap_clamped_to_one_second() {
        let mut pool = PacketPool::default();
        let mut fq = with_maxrate(1000);
        push_at(&mut fq, &mut pool, 1, 1986, 2, T0, T0);
        let times: Vec<_> = drain(&mut fq, &mut pool, T0).iter().map(|&(t, _)| t).collect();
        // 2000 B at 1000 B/s would be 2 s.
        assert_eq!(times, [T0, T0 + Time::from_secs(1)]);
        assert_eq!(fq.stats().pkts_too_long, 2);
    }

    // ---- EDT ----

    #[test]
    fn edt_packet_not_released_before_its_time() {
        let mut pool = PacketPool::default();
        let mut fq = Fq::new(&spec());
        let at = T0 + Time::from_us(5);
        let id = packet(&mut pool, 1, 1500);
        fq.enqueue(&pool, id, at, T0);
        assert_eq!(fq.dequeue(&pool, T0), Next::Wait(at));
        assert_eq!(fq.throttled_flows(), 1);
        assert_eq!(fq.dequeue(&pool, at - Time(1)), Next::Wait(at));
        assert_eq!(fq.dequeue(&pool, at), Next::Packet(id));
        assert_eq!(fq.dequeue(&pool, at), Next::Empty);
    }

    #[test]
    fn edt_earliest_flow_leaves_first_and_eligible_flows_are_not_held() {
        let mut pool = PacketPool::default();
        let mut fq = Fq::new(&spec());
        for (flow, us) in [(1, 30), (2, 10), (3, 20)] {
            let id = packet(&mut pool, flow, 1500);
            fq.enqueue(&pool, id, T0 + Time::from_us(us), T0);
        }
        // A packet without EDT passes the throttled ones at once.
        push(&mut fq, &mut pool, 4, 1500, 1, T0);
        let out = drain(&mut fq, &mut pool, T0);
        let us = Time::from_us;
        assert_eq!(out, [(T0, 4), (T0 + us(10), 2), (T0 + us(20), 3), (T0 + us(30), 1)]);
    }

    #[test]
    fn edt_out_of_order_within_flow_sorted_by_time_then_arrival() {
        let mut pool = PacketPool::default();
        let mut fq = Fq::new(&spec());
        let mut ids = vec![];
        for us in [10, 30, 20, 20, 5] {
            let id = packet(&mut pool, 1, 100 + us);
            fq.enqueue(&pool, id, T0 + Time::from_us(us as u64), T0);
            ids.push(id);
        }
        let order: Vec<_> = drain_ids(&mut fq, &mut pool, T0)
            .iter()
            .map(|&(_, id)| ids.iter().position(|&x| x == id).unwrap())
            .collect();
        assert_eq!(order, [4, 0, 2, 3, 1]);
    }

    #[test]
    fn edt_beyond_horizon_dropped() {
        let mut pool = PacketPool::default();
        let mut fq = Fq::new(&spec());
        let id = packet(&mut pool, 1, 1500);
        assert_eq!(fq.enqueue(&pool, id, T0 + HORIZON, T0), FqVerdict::Enqueued);
        let id = packet(&mut pool, 1, 1500);
        assert_eq!(
            fq.enqueue(&pool, id, T0 + HORIZON + Time(1), T0),
            FqVerdict::Dropped(FqDrop::Horizon)
        );
        assert_eq!((fq.packets(), fq.drops(), fq.stats().horizon_drops), (1, 1, 1));
    }

    // ---- DRR ----

    #[test]
    fn drr_new_flows_get_initial_quantum_then_quantum_per_round() {
        let mut pool = PacketPool::default();
        let mut fq = Fq::new(&spec());
        push(&mut fq, &mut pool, 1, 1500, 20, T0);
        push(&mut fq, &mut pool, 2, 1500, 20, T0);
        let order = flows_of(&drain(&mut fq, &mut pool, T0));
        // 15140 = 10 frames of 1514 B, then 3028 = 2 frames per round.
        let mut expected = [vec![1; 10], vec![2; 10]].concat();
        for _ in 0..5 {
            expected.extend([1, 1, 2, 2]);
        }
        assert_eq!(order, expected);
    }

    #[test]
    fn drr_new_flow_served_before_old_flows() {
        let mut pool = PacketPool::default();
        let mut fq = Fq::new(&spec());
        push(&mut fq, &mut pool, 1, 1500, 40, T0);
        for _ in 0..11 {
            let Next::Packet(id) = fq.dequeue(&pool, T0) else { panic!() };
            pool.free(id);
        }
        // Flow 1 is now on the old list mid-turn; flow 2 arrives new with 15140 of credit.
        assert_eq!(fq.state(1), FlowState::Old);
        push(&mut fq, &mut pool, 2, 1500, 12, T0);
        let order = flows_of(&drain(&mut fq, &mut pool, T0));
        assert_eq!(order[..10], [2; 10]);
        assert_eq!(order[10..13], [1, 2, 2]);
    }

    #[test]
    fn drr_round_robin_follows_arrival_not_flow_id() {
        // Flow ids in no sorted or hash order: the service order is first come, and the same
        // inputs give the same order every time.
        let keys = [1_000_003, 7, 42, u32::MAX, 0, 65_536];
        let run = || {
            let mut pool = PacketPool::default();
            let mut fq = Fq::new(&FqSpec { initial_quantum: 1514, quantum: 1514, ..spec() });
            for &k in &keys {
                push(&mut fq, &mut pool, k, 1500, 3, T0);
            }
            flows_of(&drain(&mut fq, &mut pool, T0))
        };
        let order = run();
        assert_eq!(order, [keys, keys, keys].concat());
        assert_eq!(order, run());
    }

    #[test]
    fn drr_backlogged_flows_share_bytes_equally() {
        let mut pool = PacketPool::default();
        let mut fq = Fq::new(&spec());
        let sizes: [&[u32]; 2] = [&[1500], &[64, 576, 1500, 40, 1200, 900]];
        let mut next = [0usize; 2];
        let mut sent = [0u64; 2];
        for _ in 0..30_000 {
            for (flow, cycle) in sizes.iter().enumerate() {
                while fq.flows.get(flow).is_none_or(|f| f.queue.len() < 8) {
                    let id = packet(&mut pool, flow as FlowId, cycle[next[flow] % cycle.len()]);
                    fq.enqueue(&pool, id, Time::ZERO, T0);
                    next[flow] += 1;
                }
            }
            let Next::Packet(id) = fq.dequeue(&pool, T0) else { panic!() };
            let p = pool.get(id);
            sent[p.flow as usize] += u64::from(p.ip_bytes + ETH_HLEN);
            pool.free(id);
        }
        let ratio = sent[1] as f64 / sent[0] as f64;
        assert!((ratio - 1.0).abs() < 0.01, "ratio {ratio}");
    }

    #[test]
    fn drr_emptied_new_flow_passes_through_old_list_then_detaches() {
        let mut pool = PacketPool::default();
        let mut fq = Fq::new(&spec());
        push(&mut fq, &mut pool, 1, 1500, 1, T0);
        push(&mut fq, &mut pool, 2, 1500, 30, T0);
        assert_eq!(fq.state(1), FlowState::New);
        let Next::Packet(_) = fq.dequeue(&pool, T0) else { panic!() };
        // Next call: flow 1 is empty at the head of the new list and moves to the old list.
        let Next::Packet(_) = fq.dequeue(&pool, T0) else { panic!() };
        assert_eq!(fq.state(1), FlowState::Old);
        for _ in 0..10 {
            fq.dequeue(&pool, T0);
        }
        // Flow 2 spent its initial quantum and joined the old list behind flow 1, which is
        // reached empty and detached.
        assert_eq!(fq.state(1), FlowState::Detached(T0));
        assert_eq!(fq.state(2), FlowState::Old);
    }

    #[test]
    fn drr_detached_flow_refilled_only_after_refill_delay() {
        for (gap, credit) in [(FLOW_REFILL_DELAY, 140), (FLOW_REFILL_DELAY + Time(1), 3028)] {
            let mut pool = PacketPool::default();
            let mut fq = Fq::new(&spec());
            // Two jumbo frames: 15140 − 2 × 9014 = −2888, +3028 on the way to the old list.
            push(&mut fq, &mut pool, 1, 9000, 2, T0);
            push(&mut fq, &mut pool, 2, 1500, 30, T0);
            for _ in 0..13 {
                fq.dequeue(&pool, T0);
            }
            assert_eq!(fq.state(1), FlowState::Detached(T0));
            assert_eq!(fq.credit(1), 140);
            push(&mut fq, &mut pool, 1, 1500, 1, T0 + gap);
            assert_eq!(fq.state(1), FlowState::New);
            assert_eq!(fq.credit(1), credit, "after {gap}");
        }
    }

    #[test]
    fn drr_idle_qdisc_leaves_lists_untouched() {
        // fq_dequeue returns at once when qlen is 0: the emptied flow stays listed, so a
        // packet arriving later gets neither the new list nor a refill.
        let mut pool = PacketPool::default();
        let mut fq = Fq::new(&spec());
        push(&mut fq, &mut pool, 1, 1500, 1, T0);
        drain(&mut fq, &mut pool, T0);
        assert_eq!(fq.state(1), FlowState::New);
        assert_eq!(fq.dequeue(&pool, T0), Next::Empty);
        assert_eq!(fq.state(1), FlowState::New);
    }

    // ---- Limits ----

    #[test]
    fn limit_flow_limit_drops_only_that_flow() {
        let mut pool = PacketPool::default();
        let mut fq = Fq::new(&FqSpec { flow_limit: 3, ..spec() });
        push(&mut fq, &mut pool, 1, 1500, 3, T0);
        let id = packet(&mut pool, 1, 1500);
        assert_eq!(fq.enqueue(&pool, id, Time::ZERO, T0), FqVerdict::Dropped(FqDrop::FlowLimit));
        push(&mut fq, &mut pool, 2, 1500, 3, T0);
        assert_eq!((fq.packets(), fq.bytes(), fq.drops()), (6, 9000, 1));
        assert_eq!(fq.stats().flows_plimit, 1);
    }

    #[test]
    fn limit_flow_limit_counts_skbs_not_segments() {
        // Linux fq queues skbs: three 4-segment GSO skbs are 3 of the flow's 3, not 12; the
        // fourth skb is dropped whole, its later segments with it.
        let mut pool = PacketPool::default();
        let mut fq = Fq::new(&FqSpec { flow_limit: 3, ..spec() });
        let offer = |fq: &mut Fq, pool: &mut PacketPool, index: u16| {
            let id = packet(pool, 1, 1500);
            let p = pool.get_mut(id);
            (p.gso_segs, p.gso_index, p.gso_bytes) = (4, index, 6000);
            fq.enqueue(pool, id, Time::ZERO, T0)
        };
        for _ in 0..3 {
            for i in 0..4 {
                assert_eq!(offer(&mut fq, &mut pool, i), FqVerdict::Enqueued);
            }
        }
        for i in 0..4 {
            assert_eq!(offer(&mut fq, &mut pool, i), FqVerdict::Dropped(FqDrop::FlowLimit));
        }
        assert_eq!((fq.packets(), fq.stats().flows_plimit), (12, 1));
    }

    #[test]
    fn limit_total_drops_any_flow() {
        let mut pool = PacketPool::default();
        let mut fq = Fq::new(&FqSpec { limit: 5, ..spec() });
        push(&mut fq, &mut pool, 1, 1500, 3, T0);
        push(&mut fq, &mut pool, 2, 1000, 2, T0);
        let id = packet(&mut pool, 3, 1500);
        assert_eq!(fq.enqueue(&pool, id, Time::ZERO, T0), FqVerdict::Dropped(FqDrop::Limit));
        assert_eq!((fq.packets(), fq.bytes(), fq.drops()), (5, 6500, 1));
        // Room again after one departure.
        fq.dequeue(&pool, T0);
        assert_eq!(fq.enqueue(&pool, id, Time::ZERO, T0), FqVerdict::Enqueued);
    }

    // ---- Properties ----

    #[derive(Clone, Debug)]
    enum Op {
        Enqueue { flow: FlowId, ip_bytes: u32, edt_ns: Option<u64> },
        Dequeue,
        Advance { ns: u64 },
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (0u32..5, 40u32..=9000, prop::option::of(0u64..50_000))
                .prop_map(|(flow, ip_bytes, edt_ns)| Op::Enqueue { flow, ip_bytes, edt_ns }),
            3 => Just(Op::Dequeue),
            1 => (0u64..20_000).prop_map(|ns| Op::Advance { ns }),
        ]
    }

    /// An `Fq` beside a model of it: per flow, the (time_to_send, arrival) of queued packets.
    struct Checker {
        spec: FqSpec,
        fq: Fq,
        pool: PacketPool,
        now: Time,
        model: HashMap<FlowId, BTreeSet<(Time, u64)>>,
        meta: HashMap<PacketId, (FlowId, Time, u64)>,
        arrivals: u64,
        /// What happened, for the determinism check: (time, flow or a marker).
        log: Vec<(u64, u32)>,
    }

    const WAIT: u32 = u32::MAX;
    const DROP: u32 = u32::MAX - 1;

    impl Checker {
        fn new(spec: &FqSpec) -> Checker {
            Checker {
                spec: spec.clone(),
                fq: Fq::new(spec),
                pool: PacketPool::default(),
                now: T0,
                model: HashMap::new(),
                meta: HashMap::new(),
                arrivals: 0,
                log: vec![],
            }
        }

        fn offer(
            &mut self,
            flow: FlowId,
            ip_bytes: u32,
            edt_ns: Option<u64>,
        ) -> Result<(), TestCaseError> {
            let id = packet(&mut self.pool, flow, ip_bytes);
            let edt = edt_ns.map_or(Time::ZERO, |ns| self.now + Time::from_ns(ns));
            let before = (self.fq.packets(), self.fq.bytes());
            match self.fq.enqueue(&self.pool, id, edt, self.now) {
                FqVerdict::Enqueued => {
                    let tts = if edt == Time::ZERO { self.now } else { edt };
                    self.meta.insert(id, (flow, tts, self.arrivals));
                    self.model.entry(flow).or_default().insert((tts, self.arrivals));
                    self.arrivals += 1;
                }
                FqVerdict::Dropped(why) => {
                    let queued = self.model.get(&flow).map_or(0, |s| s.len());
                    match why {
                        FqDrop::Limit => prop_assert_eq!(before.0, self.spec.limit as usize),
                        FqDrop::FlowLimit => prop_assert_eq!(queued, self.spec.flow_limit as usize),
                        FqDrop::Horizon => prop_assert!(false, "no EDT beyond 50 µs"),
                    }
                    prop_assert_eq!(before, (self.fq.packets(), self.fq.bytes()));
                    self.pool.free(id);
                    self.log.push((self.now.ps(), DROP));
                }
            }
            Ok(())
        }

        /// One dequeue; returns the time to wait for, if told to.
        fn serve(&mut self) -> Result<Option<Time>, TestCaseError> {
            let now = self.now;
            match self.fq.dequeue(&self.pool, now) {
                Next::Packet(id) => {
                    let (flow, tts, seq) =
                        self.meta.remove(&id).expect("dequeued twice or never queued");
                    prop_assert!(tts <= now, "released at {} before {}", now, tts);
                    // The flow's earliest (time, arrival) leaves: fq_peek's order.
                    let first = self.model.get_mut(&flow).unwrap().pop_first().unwrap();
                    prop_assert_eq!(first, (tts, seq));
                    self.log.push((now.ps(), flow));
                    self.pool.free(id);
                    Ok(None)
                }
                Next::Wait(t) => {
                    prop_assert!(t > now && self.fq.packets() > 0);
                    self.log.push((t.ps(), WAIT));
                    Ok(Some(t))
                }
                Next::Empty => {
                    prop_assert_eq!(self.fq.packets(), 0);
                    Ok(None)
                }
            }
        }

        fn check_totals(&self) -> Result<(), TestCaseError> {
            prop_assert_eq!(self.pool.live(), self.fq.packets());
            prop_assert_eq!(self.meta.len(), self.fq.packets());
            let bytes: u64 =
                self.meta.keys().map(|&id| u64::from(self.pool.get(id).ip_bytes)).sum();
            prop_assert_eq!(bytes, self.fq.bytes());
            prop_assert!(self.fq.packets() <= self.spec.limit as usize);
            prop_assert!(self.model.values().all(|s| s.len() <= self.spec.flow_limit as usize));
            Ok(())
        }
    }

    /// Runs `ops`, checking invariants, then drains; returns the log.
    fn run(spec: &FqSpec, ops: &[Op]) -> Result<Vec<(u64, u32)>, TestCaseError> {
        let mut c = Checker::new(spec);
        for op in ops {
            match *op {
                Op::Enqueue { flow, ip_bytes, edt_ns } => c.offer(flow, ip_bytes, edt_ns)?,
                Op::Dequeue => {
                    c.serve()?;
                }
                Op::Advance { ns } => c.now += Time::from_ns(ns),
            }
            c.check_totals()?;
        }
        // Whatever is queued leaves, each packet once.
        let mut steps = 0;
        while c.fq.packets() > 0 {
            if let Some(t) = c.serve()? {
                c.now = t;
            }
            steps += 1;
            prop_assert!(steps < 100_000, "drain did not finish");
        }
        c.check_totals()?;
        prop_assert!(c.meta.is_empty() && c.pool.live() == 0 && c.fq.bytes() == 0);
        prop_assert_eq!(c.fq.stats().enqueued, c.fq.stats().dequeued);
        Ok(c.log)
    }

    proptest! {
        #[test]
        fn fq_every_packet_leaves_once_or_is_dropped(
            quantum in 1u32..20_000,
            initial_quantum in 0u32..40_000,
            flow_limit in 1u32..12,
            limit in 1u32..40,
            maxrate in prop::option::of(prop_oneof![Just(LOW_RATE_THRESHOLD), 100_000u64..4_000_000_000]),
            ops in prop::collection::vec(op(), 0..300),
        ) {
            let spec = FqSpec { quantum, initial_quantum, flow_limit, limit, maxrate };
            let first = run(&spec, &ops)?;
            // Same inputs, same departures and wake-ups, in the same order.
            prop_assert_eq!(first, run(&spec, &ops)?);
        }
    }
}
