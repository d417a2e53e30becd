//! Egress-port queueing discipline: several byte-limited FIFO queues, a classifier, strict
//! priority or DRR scheduling, tail drop, and ECN marking by threshold or by slope (S-ECN,
//! [`slope`]).
//!
//! Every operation is O(1) amortised: classification is a 64-entry DSCP table (plus a flow map
//! only when a queue lists flows), strict priority finds the highest non-empty queue with one
//! `trailing_zeros` on a bitmap, and DRR keeps an active list of non-empty queues (Shreedhar &
//! Varghese, "Efficient fair queueing using deficit round robin", SIGCOMM 1995).
//!
//! Bytes are IP datagram bytes (`Packet::ip_bytes`), like a switch's buffer accounting.

pub mod slope;

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

pub use slope::SlopeForm;
use slope::SlopeMarker;

use crate::net::port::Pause;
use crate::net::tbf::TbfSpec;
use crate::packet::{Ecn, FlowId, Packet, PacketId, PacketPool};
use crate::record::DropReason;
use crate::time::Time;
use crate::units::Rate;

/// Most queues a port may have: the strict-priority bitmap is one `u64`. Switch ASICs expose
/// 8 queues per port (IEEE 802.1Q traffic classes), so this is no practical limit.
pub const MAX_QUEUES: usize = 64;

/// Number of DSCP values: the DSCP field is 6 bits (RFC 2474 §3).
pub const DSCP_VALUES: usize = 64;

/// Classifier table entry meaning "no queue lists this DSCP".
const UNLISTED: u8 = u8::MAX;

/// What happened to a packet offered to the port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Enqueued { queue: usize, ce_marked: bool },
    Dropped { queue: usize, reason: DropReason },
}

/// A packet taken out for transmission.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dequeued {
    pub id: PacketId,
    /// Its `ip_bytes`, as queued beside its id: the port starts it without reading it.
    pub ip_bytes: u32,
    pub queue: usize,
    pub ce_marked: bool,
}

/// Cumulative counters of one queue, or of the whole port.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueCounters {
    pub enqueued_packets: u64,
    pub enqueued_bytes: u64,
    pub dequeued_packets: u64,
    pub dequeued_bytes: u64,
    /// Tail drops (packets and their bytes).
    pub drops: u64,
    pub dropped_bytes: u64,
    /// Packets newly set to CE here (already-CE packets are not counted).
    pub ce_marks: u64,
    /// Highest occupancy seen, bytes. For the port: of the sum over queues, not a sum of maxima.
    pub max_bytes: u64,
}

/// One FIFO queue of the port. Laid out on cache lines (`repr(C, align(64))`): what every
/// enqueue and dequeue reads fills the first line, the counters they move the second, and
/// what only S-ECN and DRR queues use follows; in Rust's own order a packet's passage
/// touched three or four lines of it.
#[repr(C, align(64))]
struct Fifo {
    /// Each queued packet with its `ip_bytes`, so a dequeue (and DRR's look at the head) reads
    /// its size here, not from the packet in the pool: on the 128-host leaf-spine benchmark
    /// that read alone was 6.4 % of the cache misses (docs/performance.md).
    ids: VecDeque<(PacketId, u32)>,
    /// Bytes queued now: the sum of the sizes in `ids`.
    bytes: u64,
    buffer_bytes: u64,
    /// `ecn`'s K and rule, which every packet asks about, on this line.
    threshold_bytes: u64,
    marking: Marking,
    counters: QueueCounters,
    ecn: Option<EcnSpec>,
    /// The S-ECN marker, exactly when `marking` is `BySlope`. Boxed: only S-ECN queues read
    /// it, and inline it made every queue a cache line longer (256 bytes, not 192).
    slope: Option<Box<SlopeMarker>>,
    quantum: u64,
    /// DRR deficit counter, bytes.
    deficit: u64,
}

/// When a queue marks CE: its [`EcnSpec`]'s rule, in a byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Marking {
    Never,
    OnEnqueue,
    OnDequeue,
    BySlope,
}

impl Fifo {
    fn new(buffer_bytes: u64, quantum: u64, ecn: Option<EcnSpec>) -> Fifo {
        let slope = match ecn.map(|e| e.mode) {
            Some(EcnMode::Slope(form)) => Some(Box::new(SlopeMarker::new(form))),
            _ => None,
        };
        let marking = match ecn.map(|e| e.mode) {
            None => Marking::Never,
            Some(EcnMode::Enqueue) => Marking::OnEnqueue,
            Some(EcnMode::Dequeue) => Marking::OnDequeue,
            Some(EcnMode::Slope(_)) => Marking::BySlope,
        };
        Fifo {
            ids: VecDeque::new(),
            bytes: 0,
            buffer_bytes,
            threshold_bytes: ecn.map_or(0, |e| e.threshold_bytes),
            marking,
            quantum,
            deficit: 0,
            ecn,
            slope,
            counters: QueueCounters::default(),
        }
    }

    /// An S-ECN queue, whose marker sees every arrival.
    #[inline]
    fn slope_marks(&self) -> bool {
        self.marking == Marking::BySlope
    }

    /// Threshold marking: ECT(0)/ECT(1) become CE when `queue_bytes > K` (strictly). Not-ECT
    /// packets are left alone (RFC 3168 §5: only ECN-capable packets are marked instead of
    /// dropped, and this threshold never drops); already-CE packets are not newly marked.
    fn mark_if_above(&mut self, mode: Marking, queue_bytes: u64, packet: &mut Packet) -> bool {
        if self.marking != mode || queue_bytes <= self.threshold_bytes {
            return false;
        }
        self.set_ce(packet)
    }

    /// S-ECN at arrival: the threshold as in `Enqueue` mode, below it the slope rule. The
    /// marker decides for every packet; only ECT ones can carry the mark.
    fn mark_by_slope(&mut self, now: Time, packet: &mut Packet) -> bool {
        let (Some(spec), Some(slope)) = (self.ecn, &mut self.slope) else { return false };
        let above_k = self.bytes > spec.threshold_bytes;
        slope.decide(now, packet, above_k) && self.set_ce(packet)
    }

    /// ECT(0)/ECT(1) become CE and count as a mark; Not-ECT and CE packets are left alone.
    fn set_ce(&mut self, packet: &mut Packet) -> bool {
        match packet.ecn {
            Ecn::Ect0 | Ecn::Ect1 => {
                packet.ecn = Ecn::Ce;
                self.counters.ce_marks += 1;
                true
            }
            Ecn::NotEct | Ecn::Ce => false,
        }
    }
}

/// The queues of one egress port with their classifier and scheduler.
pub struct PortQueues {
    scheduler: Scheduler,
    queues: Vec<Fifo>,
    /// Bit `q` set ⇔ queue `q` holds packets (strict priority picks the lowest set bit).
    nonempty: u64,
    packets: usize,
    bytes: u64,
    total: QueueCounters,
    /// The classifier and DRR round of a strict-priority or DRR port; `None` for a FIFO,
    /// whose packets all join queue 0. Boxed: 130 bytes a FIFO port never reads, inline among
    /// the fields every packet does.
    multi: Option<Box<Multi>>,
}

/// What a port of several queues adds: where a packet goes, and DRR's round.
struct Multi {
    /// DSCP → first queue listing it, or `UNLISTED`.
    dscp_table: [u8; DSCP_VALUES],
    /// Flow → first queue listing it (empty unless a queue lists flows).
    flow_table: FxHashMap<FlowId, u8>,
    /// Queue for packets no list claims.
    default_queue: usize,
    /// DRR: non-empty queues in round-robin order; the front one is being served.
    active: VecDeque<usize>,
    /// DRR: the front of `active` already received its quantum for this turn.
    turn_started: bool,
}

impl Multi {
    /// The queue a packet belongs to.
    fn classify(&self, packet: &Packet) -> usize {
        let by_dscp = self.dscp_table.get(packet.dscp as usize).copied().unwrap_or(UNLISTED);
        let by_flow = if self.flow_table.is_empty() {
            UNLISTED
        } else {
            self.flow_table.get(&packet.flow).copied().unwrap_or(UNLISTED)
        };
        match by_dscp.min(by_flow) {
            UNLISTED => self.default_queue,
            q => q as usize,
        }
    }
}

impl PortQueues {
    /// Queues, classifier and scheduler as the scenario describes them.
    ///
    /// Panics on a spec the scenario parser must reject: no queue, more than [`MAX_QUEUES`],
    /// a DSCP above 63, or a zero DRR quantum (DRR would never serve that queue).
    pub fn new(spec: &PortSpec) -> PortQueues {
        let n = spec.queues.len();
        assert!(n >= 1, "port spec: expected at least one queue");
        assert!(n <= MAX_QUEUES, "port spec: {n} queues, expected at most {MAX_QUEUES}");
        if spec.scheduler == Scheduler::Drr {
            for (q, qs) in spec.queues.iter().enumerate() {
                assert!(qs.quantum_bytes > 0, "port spec: queues[{q}].quantum_bytes = 0 with DRR");
            }
        }
        let queues = spec
            .queues
            .iter()
            .map(|qs| Fifo::new(qs.buffer_bytes, u64::from(qs.quantum_bytes), qs.ecn))
            .collect();
        let mut port = PortQueues::with_queues(spec.scheduler, queues);
        if spec.scheduler != Scheduler::Fifo {
            port.build_classifier(&spec.queues);
        }
        port
    }

    /// Tells S-ECN queues the port's nominal rate, R in the slope rule. The port calls it once
    /// when it is built; other queues ignore it.
    pub fn set_line_rate(&mut self, rate: Rate) {
        for slope in self.queues.iter_mut().filter_map(|f| f.slope.as_mut()) {
            slope.set_rate(rate.bps());
        }
    }

    /// One tail-drop FIFO without ECN marking (a host NIC).
    pub fn fifo(buffer_bytes: u64) -> PortQueues {
        PortQueues::with_queues(Scheduler::Fifo, vec![Fifo::new(buffer_bytes, 0, None)])
    }

    fn with_queues(scheduler: Scheduler, queues: Vec<Fifo>) -> PortQueues {
        PortQueues {
            scheduler,
            queues,
            nonempty: 0,
            packets: 0,
            bytes: 0,
            total: QueueCounters::default(),
            multi: None,
        }
    }

    /// First queue listing a DSCP or flow wins; unclaimed packets go to the last queue with
    /// both lists empty, else to the last queue.
    fn build_classifier(&mut self, specs: &[QueueSpec]) {
        let mut m = Multi {
            dscp_table: [UNLISTED; DSCP_VALUES],
            flow_table: FxHashMap::default(),
            default_queue: 0,
            active: VecDeque::with_capacity(specs.len()),
            turn_started: false,
        };
        for (q, qs) in specs.iter().enumerate().rev() {
            // Walking backwards and overwriting leaves the lowest index in each entry.
            for &d in &qs.dscp {
                assert!((d as usize) < DSCP_VALUES, "port spec: queues[{q}].dscp {d} > 63");
                m.dscp_table[d as usize] = q as u8;
            }
            for &f in &qs.flows {
                m.flow_table.insert(f, q as u8);
            }
        }
        m.default_queue = specs
            .iter()
            .rposition(|qs| qs.dscp.is_empty() && qs.flows.is_empty())
            .unwrap_or(specs.len() - 1);
        self.multi = Some(Box::new(m));
    }

    /// The queue a packet belongs to: queue 0 on a FIFO port (the scenario model uses only
    /// it), else by the classifier.
    #[inline]
    pub fn classify(&self, packet: &Packet) -> usize {
        self.multi.as_ref().map_or(0, |m| m.classify(packet))
    }

    /// DRR's round; only a DRR port asks, and it has one.
    #[inline]
    fn drr(&mut self) -> &mut Multi {
        self.multi.as_deref_mut().expect("a DRR port has its classifier and round")
    }

    /// Offers a packet: tail drop if it does not fit its queue, else queue it, marking CE in
    /// `Enqueue` or `Slope` mode. A dropped packet stays in the pool: the caller records and
    /// frees it. The arrival time is the packet's `enqueued_at`, which the port sets.
    pub fn enqueue(&mut self, pool: &mut PacketPool, id: PacketId) -> Verdict {
        let packet = pool.get_mut(id);
        let queue = self.classify(packet);
        let size = u64::from(packet.ip_bytes);
        let now = packet.enqueued_at;
        let fifo = &mut self.queues[queue];
        // Tail drop: the packet must fit entirely, so occupancy == buffer is still accepted.
        if fifo.bytes + size > fifo.buffer_bytes {
            if fifo.slope_marks()
                && let Some(slope) = &mut fifo.slope
            {
                slope.missed(now);
            }
            fifo.counters.drops += 1;
            fifo.counters.dropped_bytes += size;
            self.total.drops += 1;
            self.total.dropped_bytes += size;
            return Verdict::Dropped { queue, reason: DropReason::QueueFull };
        }
        // DCTCP (Alizadeh et al., SIGCOMM 2010 §3.1; RFC 8257 §3.1): mark an arriving packet
        // when the instantaneous queue it joins, before adding it, exceeds K: `bytes > K`.
        let ce_marked = if fifo.slope_marks() {
            fifo.mark_by_slope(now, packet)
        } else {
            fifo.mark_if_above(Marking::OnEnqueue, fifo.bytes, packet)
        };
        let was_empty = fifo.ids.is_empty();
        fifo.ids.push_back((id, packet.ip_bytes));
        fifo.bytes += size;
        debug_assert!(fifo.bytes <= fifo.buffer_bytes);
        let c = &mut fifo.counters;
        c.enqueued_packets += 1;
        c.enqueued_bytes += size;
        c.max_bytes = c.max_bytes.max(fifo.bytes);
        if was_empty {
            self.nonempty |= 1 << queue;
            if self.scheduler == Scheduler::Drr {
                // Joins the round at the tail with deficit 0 (reset when it last emptied).
                self.drr().active.push_back(queue);
            }
        }
        self.packets += 1;
        self.bytes += size;
        self.total.enqueued_packets += 1;
        self.total.enqueued_bytes += size;
        self.total.ce_marks += u64::from(ce_marked);
        self.total.max_bytes = self.total.max_bytes.max(self.bytes);
        self.debug_check_totals();
        Verdict::Enqueued { queue, ce_marked }
    }

    /// Drops an arriving packet that a qdisc in front refused (a `tbf` dropping a whole skb),
    /// counted as a tail drop of the queue it would have joined.
    pub fn refuse(&mut self, pool: &PacketPool, id: PacketId) -> Verdict {
        let packet = pool.get(id);
        let queue = self.classify(packet);
        let size = u64::from(packet.ip_bytes);
        if let Some(slope) = &mut self.queues[queue].slope {
            slope.missed(packet.enqueued_at);
        }
        let c = &mut self.queues[queue].counters;
        c.drops += 1;
        c.dropped_bytes += size;
        self.total.drops += 1;
        self.total.dropped_bytes += size;
        Verdict::Dropped { queue, reason: DropReason::QueueFull }
    }

    /// The packet `dequeue` would take next, for a shaper that must first check its size.
    /// Only FIFO and strict priority know it without charging a DRR deficit.
    pub fn peek(&self) -> Option<PacketId> {
        assert!(self.scheduler != Scheduler::Drr, "a shaper needs a FIFO or strict-priority port");
        if self.packets == 0 {
            return None;
        }
        self.queues[self.nonempty.trailing_zeros() as usize].ids.front().map(|&(id, _)| id)
    }

    /// Lets a packet through a port with nothing queued, as `enqueue` then `dequeue` would,
    /// without queueing it: it alone would be queued and taken at once, so every counter moves
    /// as theirs would and the scheduler's state not at all (a DRR queue that empties keeps no
    /// deficit). Threshold ECN never marks it (the queue is empty before it and after it), and
    /// a packet larger than its queue's buffer is dropped there: `None` for those, for an
    /// S-ECN queue (its marker decides every arrival), and when packets are queued; the caller
    /// then takes the queue's way.
    #[inline]
    pub fn pass_through(&mut self, packet: &Packet) -> Option<usize> {
        if self.packets != 0 {
            return None;
        }
        let queue = match self.scheduler {
            Scheduler::Fifo => 0,
            Scheduler::Strict | Scheduler::Drr => self.classify(packet),
        };
        let size = u64::from(packet.ip_bytes);
        let fifo = &mut self.queues[queue];
        if fifo.slope_marks() || size > fifo.buffer_bytes {
            return None;
        }
        let c = &mut fifo.counters;
        (c.enqueued_packets, c.dequeued_packets) = (c.enqueued_packets + 1, c.dequeued_packets + 1);
        (c.enqueued_bytes, c.dequeued_bytes) = (c.enqueued_bytes + size, c.dequeued_bytes + size);
        c.max_bytes = c.max_bytes.max(size);
        let t = &mut self.total;
        (t.enqueued_packets, t.dequeued_packets) = (t.enqueued_packets + 1, t.dequeued_packets + 1);
        (t.enqueued_bytes, t.dequeued_bytes) = (t.enqueued_bytes + size, t.dequeued_bytes + size);
        t.max_bytes = t.max_bytes.max(size);
        Some(queue)
    }

    /// Takes the next packet to transmit, marking CE in `Dequeue` mode.
    pub fn dequeue(&mut self, pool: &mut PacketPool) -> Option<Dequeued> {
        if self.packets == 0 {
            return None;
        }
        let queue = match self.scheduler {
            Scheduler::Fifo | Scheduler::Strict => self.nonempty.trailing_zeros() as usize,
            Scheduler::Drr => self.drr_pick(),
        };
        let fifo = &mut self.queues[queue];
        let (id, ip_bytes) = fifo.ids.pop_front().expect("scheduler picked an empty queue");
        let size = u64::from(ip_bytes);
        fifo.bytes -= size;
        // Wu et al., CoNEXT 2012: compare at departure, so the queue seen is the packets
        // behind this one, including those that arrived after it: `bytes after removal > K`.
        // Only a queue that marks so reads the packet.
        let ce_marked = match fifo.marking {
            Marking::OnDequeue => {
                fifo.mark_if_above(Marking::OnDequeue, fifo.bytes, pool.get_mut(id))
            }
            _ => false,
        };
        fifo.counters.dequeued_packets += 1;
        fifo.counters.dequeued_bytes += size;
        if fifo.ids.is_empty() {
            self.nonempty &= !(1 << queue);
            if self.scheduler == Scheduler::Drr {
                // Shreedhar & Varghese: an emptied queue keeps no credit.
                fifo.deficit = 0;
                let m = self.multi.as_deref_mut().expect("a DRR port has its round");
                debug_assert_eq!(m.active.front(), Some(&queue));
                m.active.pop_front();
                m.turn_started = false;
            }
        }
        self.packets -= 1;
        self.bytes -= size;
        self.total.dequeued_packets += 1;
        self.total.dequeued_bytes += size;
        self.total.ce_marks += u64::from(ce_marked);
        self.debug_check_totals();
        Some(Dequeued { id, ip_bytes, queue, ce_marked })
    }

    /// DRR: the queue whose head packet goes next; charges the head to its deficit. Each turn
    /// adds one quantum; a head larger than the deficit ends the turn. A packet needs at most
    /// `ceil(size / quantum)` turns, so the loop is O(1) amortised for fixed quanta.
    fn drr_pick(&mut self) -> usize {
        loop {
            let m = self.multi.as_deref_mut().expect("a DRR port has its round");
            let queue = *m.active.front().expect("packets queued but no active DRR queue");
            let fifo = &mut self.queues[queue];
            if !m.turn_started {
                fifo.deficit += fifo.quantum;
                m.turn_started = true;
            }
            let (_, size) = *fifo.ids.front().expect("active DRR queue is empty");
            let size = u64::from(size);
            if size <= fifo.deficit {
                fifo.deficit -= size;
                return queue;
            }
            m.active.rotate_left(1);
            m.turn_started = false;
        }
    }

    /// O(queues) consistency check of the O(1) totals, in debug builds only.
    #[inline]
    fn debug_check_totals(&self) {
        #[cfg(debug_assertions)]
        if self.queues.len() <= 8 {
            debug_assert_eq!(self.bytes, self.queues.iter().map(|f| f.bytes).sum::<u64>());
            debug_assert_eq!(self.packets, self.queues.iter().map(|f| f.ids.len()).sum::<usize>());
        }
    }

    /// Bytes queued in the whole port.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Bytes queued in one queue.
    pub fn queue_bytes(&self, queue: usize) -> u64 {
        self.queues[queue].bytes
    }

    /// Packets queued in the whole port.
    pub fn packets(&self) -> usize {
        self.packets
    }

    /// Packets queued in one queue.
    pub fn queue_packets(&self, queue: usize) -> usize {
        self.queues[queue].ids.len()
    }

    /// Byte limit of one queue.
    pub fn buffer_bytes(&self, queue: usize) -> u64 {
        self.queues[queue].buffer_bytes
    }

    pub fn num_queues(&self) -> usize {
        self.queues.len()
    }

    pub fn scheduler(&self) -> Scheduler {
        self.scheduler
    }

    pub fn is_empty(&self) -> bool {
        self.packets == 0
    }

    /// Counters of one queue.
    pub fn counters(&self, queue: usize) -> &QueueCounters {
        &self.queues[queue].counters
    }

    /// Counters of the whole port.
    pub fn total(&self) -> &QueueCounters {
        &self.total
    }

    /// Full O(packets) audit: each queue's byte counter equals the sum of its packets' sizes
    /// and stays within its buffer, and the port totals add up. For tests and debug checks.
    pub fn audit(&self, pool: &PacketPool) -> Result<(), String> {
        let mut bytes = 0;
        for (q, fifo) in self.queues.iter().enumerate() {
            if let Some(&(id, size)) =
                fifo.ids.iter().find(|&&(id, size)| pool.get(id).ip_bytes != size)
            {
                let now = pool.get(id).ip_bytes;
                return Err(format!("queue {q}: packet {} queued as {size} B, now {now} B", id.0));
            }
            let sum: u64 = fifo.ids.iter().map(|&(_, size)| u64::from(size)).sum();
            if sum != fifo.bytes {
                return Err(format!("queue {q}: counter {} B, packets sum to {sum} B", fifo.bytes));
            }
            if fifo.bytes > fifo.buffer_bytes {
                return Err(format!(
                    "queue {q}: {} B > buffer {} B",
                    fifo.bytes, fifo.buffer_bytes
                ));
            }
            let c = &fifo.counters;
            if c.enqueued_bytes != c.dequeued_bytes + fifo.bytes {
                return Err(format!("queue {q}: enqueued {c:?} ≠ dequeued + {} B", fifo.bytes));
            }
            bytes += sum;
        }
        if bytes != self.bytes {
            return Err(format!("port: counter {} B, queues sum to {bytes} B", self.bytes));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Kind;
    use proptest::prelude::*;

    fn queue_spec(buffer_bytes: u64, quantum_bytes: u32) -> QueueSpec {
        QueueSpec { buffer_bytes, quantum_bytes, dscp: vec![], flows: vec![], ecn: None }
    }

    /// A queue that claims one DSCP.
    fn dscp_queue(buffer_bytes: u64, quantum_bytes: u32, dscp: u8) -> QueueSpec {
        QueueSpec { dscp: vec![dscp], ..queue_spec(buffer_bytes, quantum_bytes) }
    }

    /// Two DRR queues of equal quantum: queue 0 takes DSCP 1, queue 1 the rest.
    fn drr_pair(quantum_bytes: u32) -> PortQueues {
        let queues =
            vec![dscp_queue(1 << 20, quantum_bytes, 1), queue_spec(1 << 20, quantum_bytes)];
        port(Scheduler::Drr, queues)
    }

    fn port(scheduler: Scheduler, queues: Vec<QueueSpec>) -> PortQueues {
        PortQueues::new(&PortSpec { scheduler, queues, shaper: None, pauses: vec![] })
    }

    fn packet(pool: &mut PacketPool, bytes: u32, dscp: u8, flow: u32, ecn: Ecn) -> PacketId {
        let mut p = Packet::new(Kind::Udp, flow, 0, 1, bytes);
        p.dscp = dscp;
        p.ecn = ecn;
        pool.alloc(p)
    }

    fn offer(q: &mut PortQueues, pool: &mut PacketPool, bytes: u32, dscp: u8) -> Verdict {
        let id = packet(pool, bytes, dscp, 0, Ecn::Ect0);
        q.enqueue(pool, id)
    }

    fn drain_queues(q: &mut PortQueues, pool: &mut PacketPool, n: usize) -> Vec<usize> {
        (0..n).map(|_| q.dequeue(pool).expect("backlogged").queue).collect()
    }

    /// Empties the port; for each packet: (marked at departure, codepoint after departure).
    fn drain_ecn(q: &mut PortQueues, pool: &mut PacketPool) -> Vec<(bool, Ecn)> {
        let mut out = vec![];
        while let Some(d) = q.dequeue(pool) {
            out.push((d.ce_marked, pool.get(d.id).ecn));
        }
        out
    }

    // ---- Tail drop and FIFO order ----

    #[test]
    fn fifo_tail_drop_at_exact_limit() {
        let mut pool = PacketPool::default();
        let mut q = PortQueues::fifo(3000);
        assert!(matches!(offer(&mut q, &mut pool, 1500, 0), Verdict::Enqueued { .. }));
        // Exactly full (3000 + 0 > 3000 is false) is still accepted.
        assert!(matches!(offer(&mut q, &mut pool, 1500, 0), Verdict::Enqueued { .. }));
        assert_eq!(q.bytes(), 3000);
        // One byte over the limit is dropped.
        let v = offer(&mut q, &mut pool, 1, 0);
        assert_eq!(v, Verdict::Dropped { queue: 0, reason: DropReason::QueueFull });
        assert_eq!((q.total().drops, q.total().dropped_bytes), (1, 1));
        assert_eq!(q.counters(0).drops, 1);
        q.dequeue(&mut pool).unwrap();
        assert!(matches!(offer(&mut q, &mut pool, 1500, 0), Verdict::Enqueued { .. }));
        // A packet larger than an empty buffer never fits.
        let mut small = PortQueues::fifo(1499);
        assert!(matches!(offer(&mut small, &mut pool, 1500, 0), Verdict::Dropped { .. }));
        q.audit(&pool).unwrap();
    }

    #[test]
    fn fifo_preserves_arrival_order() {
        let mut pool = PacketPool::default();
        let mut q = PortQueues::fifo(1 << 20);
        let ids: Vec<_> = (0..50).map(|i| packet(&mut pool, 100 + i, 0, i, Ecn::NotEct)).collect();
        for &id in &ids {
            q.enqueue(&mut pool, id);
        }
        let out: Vec<_> = std::iter::from_fn(|| q.dequeue(&mut pool)).map(|d| d.id).collect();
        assert_eq!(out, ids);
        assert!(q.is_empty());
        assert_eq!(q.bytes(), 0);
    }

    #[test]
    fn fifo_scheduler_uses_only_queue_zero() {
        let mut pool = PacketPool::default();
        let high = dscp_queue(10_000, 0, 46);
        let mut q = port(Scheduler::Fifo, vec![queue_spec(10_000, 0), high]);
        let v = offer(&mut q, &mut pool, 100, 46);
        assert_eq!(v, Verdict::Enqueued { queue: 0, ce_marked: false });
    }

    // ---- Strict priority ----

    #[test]
    fn strict_starves_lower_while_higher_backlogged() {
        let mut pool = PacketPool::default();
        let high = dscp_queue(1 << 20, 0, 46);
        let mut q = port(Scheduler::Strict, vec![high, queue_spec(1 << 20, 0)]);
        for _ in 0..3 {
            offer(&mut q, &mut pool, 1500, 0);
        }
        for _ in 0..3 {
            offer(&mut q, &mut pool, 1500, 46);
        }
        // The high queue keeps being refilled: the low queue gets nothing meanwhile.
        for _ in 0..100 {
            assert_eq!(q.dequeue(&mut pool).unwrap().queue, 0);
            offer(&mut q, &mut pool, 1500, 46);
        }
        assert_eq!(drain_queues(&mut q, &mut pool, 6), [0, 0, 0, 1, 1, 1]);
        assert!(q.dequeue(&mut pool).is_none());
    }

    // ---- Deficit round robin ----

    /// Serves `rounds` packets with every queue kept backlogged; returns bytes sent per queue.
    fn drr_backlogged(quanta: &[u32], sizes: &[&[u32]], packets: usize) -> Vec<u64> {
        let mut pool = PacketPool::default();
        let specs = quanta
            .iter()
            .enumerate()
            .map(|(i, &quantum)| dscp_queue(1 << 24, quantum, i as u8))
            .collect();
        let mut q = port(Scheduler::Drr, specs);
        let mut next = vec![0; quanta.len()];
        let mut sent = vec![0u64; quanta.len()];
        for _ in 0..packets {
            for (i, cycle) in sizes.iter().enumerate() {
                while q.queue_packets(i) < 8 {
                    offer(&mut q, &mut pool, cycle[next[i] % cycle.len()], i as u8);
                    next[i] += 1;
                }
            }
            let d = q.dequeue(&mut pool).unwrap();
            sent[d.queue] += u64::from(pool.get(d.id).ip_bytes);
            pool.free(d.id);
        }
        q.audit(&pool).unwrap();
        sent
    }

    #[test]
    fn drr_shares_bytes_in_proportion_to_quanta() {
        let sent = drr_backlogged(&[1500, 3000], &[&[1500], &[1500]], 30_000);
        let ratio = sent[1] as f64 / sent[0] as f64;
        assert!((ratio - 2.0).abs() < 0.02, "ratio {ratio}");
    }

    #[test]
    fn drr_shares_bytes_not_packets_with_unequal_sizes() {
        let mixed: &[u32] = &[64, 576, 1500, 40, 1200, 900];
        let sent = drr_backlogged(&[1500, 3000], &[&[1500], mixed], 50_000);
        let ratio = sent[1] as f64 / sent[0] as f64;
        assert!((ratio - 2.0).abs() < 0.02, "ratio {ratio}");
        // Equal quanta: small packets get equal bytes, hence many more packets.
        let sent = drr_backlogged(&[1500, 1500], &[&[1500], &[64]], 50_000);
        let ratio = sent[1] as f64 / sent[0] as f64;
        assert!((ratio - 1.0).abs() < 0.01, "ratio {ratio}");
    }

    #[test]
    fn drr_large_packet_waits_for_deficit() {
        let mut pool = PacketPool::default();
        let mut q = drr_pair(500);
        offer(&mut q, &mut pool, 1500, 1);
        for _ in 0..4 {
            offer(&mut q, &mut pool, 500, 0);
        }
        // Queue 0 needs three turns (500, 1000, 1500 of deficit) before its packet fits.
        assert_eq!(drain_queues(&mut q, &mut pool, 5), [1, 1, 0, 1, 1]);
    }

    #[test]
    fn drr_emptied_queue_deficit_resets() {
        let mut pool = PacketPool::default();
        let mut q = drr_pair(3000);
        offer(&mut q, &mut pool, 100, 1);
        for _ in 0..10 {
            offer(&mut q, &mut pool, 1500, 0);
        }
        // Queue 0 sends 100 of its 3000 and empties: the 2900 left must not carry over.
        assert_eq!(drain_queues(&mut q, &mut pool, 1), [0]);
        for _ in 0..4 {
            offer(&mut q, &mut pool, 1000, 1);
        }
        // Queue 1: 2 × 1500; queue 0: 3 × 1000 (with carry-over it would send 4).
        assert_eq!(drain_queues(&mut q, &mut pool, 8), [1, 1, 0, 0, 0, 1, 1, 0]);
    }

    // ---- Classifier ----

    #[test]
    fn classifier_by_dscp_flow_and_default() {
        let mut by_dscp = queue_spec(1 << 20, 1500);
        by_dscp.dscp = vec![46, 34];
        let mut by_flow = queue_spec(1 << 20, 1500);
        by_flow.flows = vec![7];
        by_flow.dscp = vec![34];
        let mut last = dscp_queue(1 << 20, 1500, 10);
        last.flows = vec![3];
        let q = port(
            Scheduler::Strict,
            vec![by_dscp, queue_spec(1 << 20, 1500), by_flow, queue_spec(1 << 20, 1500), last],
        );
        let cls = |dscp, flow| {
            let mut p = Packet::new(Kind::Data, flow, 0, 1, 1500);
            p.dscp = dscp;
            q.classify(&p)
        };
        assert_eq!(cls(46, 0), 0);
        // DSCP 34 is listed by queues 0 and 2: the first wins.
        assert_eq!(cls(34, 7), 0);
        assert_eq!(cls(0, 7), 2);
        assert_eq!(cls(10, 0), 4);
        // DSCP 10 → queue 4, flow 7 → queue 2: the lower index wins.
        assert_eq!(cls(10, 7), 2);
        // Unclaimed: the last queue with both lists empty.
        assert_eq!(cls(0, 0), 3);
        // An invalid DSCP (> 63) matches nothing.
        assert_eq!(cls(64 + 46, 0), 3);
    }

    #[test]
    fn classifier_without_empty_queue_defaults_to_last() {
        let a = dscp_queue(1 << 20, 1500, 46);
        let mut b = queue_spec(1 << 20, 1500);
        b.flows = vec![1];
        let q = port(Scheduler::Drr, vec![a, b]);
        assert_eq!(q.classify(&Packet::new(Kind::Data, 9, 0, 1, 1500)), 1);
    }

    // ---- ECN threshold marking ----

    fn ecn_port(threshold_bytes: u64, mode: EcnMode) -> PortQueues {
        let mut s = queue_spec(1 << 20, 1500);
        s.ecn = Some(EcnSpec { threshold_bytes, mode });
        port(Scheduler::Fifo, vec![s])
    }

    #[test]
    fn ecn_enqueue_marks_strictly_above_threshold() {
        let mut pool = PacketPool::default();
        let mut q = ecn_port(3000, EcnMode::Enqueue);
        let marks: Vec<_> = (0..4)
            .map(|_| match offer(&mut q, &mut pool, 1500, 0) {
                Verdict::Enqueued { ce_marked, .. } => ce_marked,
                v => panic!("{v:?}"),
            })
            .collect();
        // Queue before arrival: 0, 1500, 3000 (= K, not above), 4500.
        assert_eq!(marks, [false, false, false, true]);
        assert_eq!((q.total().ce_marks, q.counters(0).ce_marks), (1, 1));
        let ecns: Vec<_> = drain_ecn(&mut q, &mut pool);
        // Enqueue mode never marks at departure.
        let (f, e, c) = (false, Ecn::Ect0, Ecn::Ce);
        assert_eq!(ecns, [(f, e), (f, e), (f, e), (f, c)]);
    }

    /// Five 1500-byte packets arrive back to back, then all leave: which carry CE at the end.
    fn ecn_marks(mode: EcnMode) -> Vec<bool> {
        let mut pool = PacketPool::default();
        let mut q = ecn_port(3000, mode);
        for _ in 0..5 {
            offer(&mut q, &mut pool, 1500, 0);
        }
        drain_ecn(&mut q, &mut pool).into_iter().map(|(_, ecn)| ecn == Ecn::Ce).collect()
    }

    #[test]
    fn ecn_enqueue_and_dequeue_modes_differ() {
        // Enqueue mode: arrivals see 0, 1500, 3000, 4500, 6000 ⇒ the last two are marked.
        assert_eq!(ecn_marks(EcnMode::Enqueue), [false, false, false, true, true]);
        // Dequeue mode: departures leave 6000, 4500, 3000, 1500, 0 behind ⇒ the first two.
        assert_eq!(ecn_marks(EcnMode::Dequeue), [true, true, false, false, false]);
    }

    #[test]
    fn ecn_dequeue_counts_later_arrivals() {
        let mut pool = PacketPool::default();
        let mut q = ecn_port(3000, EcnMode::Dequeue);
        // Arrives to an empty queue; 3 packets arrive behind it before it leaves.
        offer(&mut q, &mut pool, 1500, 0);
        for _ in 0..3 {
            offer(&mut q, &mut pool, 1500, 0);
        }
        let d = q.dequeue(&mut pool).unwrap();
        assert!(d.ce_marked);
        assert_eq!(pool.get(d.id).ecn, Ecn::Ce);
        assert_eq!(q.total().ce_marks, 1);
    }

    #[test]
    fn ecn_not_ect_never_marked_nor_dropped_by_threshold() {
        for mode in [EcnMode::Enqueue, EcnMode::Dequeue] {
            let mut pool = PacketPool::default();
            let mut q = ecn_port(0, mode);
            let mut ids = vec![];
            for ecn in [Ecn::NotEct, Ecn::NotEct, Ecn::Ce, Ecn::Ce, Ecn::Ect1, Ecn::Ect1] {
                let id = packet(&mut pool, 1500, 0, 0, ecn);
                assert!(matches!(q.enqueue(&mut pool, id), Verdict::Enqueued { .. }));
                ids.push(id);
            }
            while q.dequeue(&mut pool).is_some() {}
            let ecns: Vec<_> = ids.iter().map(|&id| pool.get(id).ecn).collect();
            // The last Ect1 leaves an empty queue behind (dequeue) or joined a non-empty one.
            let last = if mode == EcnMode::Enqueue { Ecn::Ce } else { Ecn::Ect1 };
            assert_eq!(ecns, [Ecn::NotEct, Ecn::NotEct, Ecn::Ce, Ecn::Ce, Ecn::Ce, last]);
            // Already-CE packets are not newly marked.
            let expected = if mode == EcnMode::Enqueue { 2 } else { 1 };
            assert_eq!(q.total().ce_marks, expected, "{mode:?}");
            assert_eq!(q.total().drops, 0);
        }
    }

    // ---- S-ECN ----

    /// A 1 Gbit/s S-ECN port with threshold K.
    fn slope_port(threshold_bytes: u64, form: SlopeForm) -> PortQueues {
        let mut s = queue_spec(6000, 1500);
        s.ecn = Some(EcnSpec { threshold_bytes, mode: EcnMode::Slope(form) });
        let mut q = port(Scheduler::Fifo, vec![s]);
        q.set_line_rate(Rate::from_gbps(1));
        q
    }

    /// Offers 1500-byte packets of codepoint `ecn` arriving `gap_ps` apart; whether each was
    /// marked (`None`: dropped).
    fn offer_at(
        q: &mut PortQueues,
        pool: &mut PacketPool,
        gap_ps: u64,
        ecn: &[Ecn],
    ) -> Vec<Option<bool>> {
        ecn.iter()
            .enumerate()
            .map(|(k, &e)| {
                let id = packet(pool, 1500, 0, 0, e);
                pool.get_mut(id).enqueued_at = Time(gap_ps * k as u64);
                match q.enqueue(pool, id) {
                    Verdict::Enqueued { ce_marked, .. } => Some(ce_marked),
                    Verdict::Dropped { .. } => None,
                }
            })
            .collect()
    }

    /// 1538 wire bytes at 1 Gbit/s.
    const LINE_GAP_PS: u64 = 12_304_000;

    #[test]
    fn slope_marks_a_fan_in_below_k_and_only_k_at_line_rate() {
        for form in [SlopeForm::Hardware, SlopeForm::Probabilistic { seed: 5 }] {
            let mut pool = PacketPool::default();
            // Two inputs at line rate (2R): every packet after the first, long before K.
            let mut q = slope_port(6000, form);
            let m = offer_at(&mut q, &mut pool, LINE_GAP_PS / 3, &[Ecn::Ect0; 4]);
            assert_eq!(m, [Some(false), Some(true), Some(true), Some(true)], "{form:?}");
            assert_eq!(q.total().ce_marks, 3);
            // One input at line rate: slope 0, so only the threshold marks (queue 0, 1500,
            // 3000 = K, 4500 before each arrival).
            let mut q = slope_port(3000, form);
            let m = offer_at(&mut q, &mut pool, LINE_GAP_PS, &[Ecn::Ect0; 4]);
            assert_eq!(m, [Some(false), Some(false), Some(false), Some(true)], "{form:?}");
        }
    }

    #[test]
    fn slope_dropped_arrivals_count_and_not_ect_is_never_marked() {
        let mut pool = PacketPool::default();
        let mut q = slope_port(6000, SlopeForm::Hardware);
        // 3R: every packet after the first is decided for a mark; Not-ECT and CE ones are left
        // alone (and not counted), and the 5th does not fit 6000 B.
        let ecn = [Ecn::NotEct, Ecn::NotEct, Ecn::Ect1, Ecn::Ce, Ecn::Ect0];
        let g = LINE_GAP_PS / 3;
        let m = offer_at(&mut q, &mut pool, g, &ecn);
        assert_eq!(m, [Some(false), Some(false), Some(true), Some(false), None]);
        assert_eq!((q.total().ce_marks, q.total().drops), (1, 1));
        // Then 1.4 R (p = 0.4: the hardware form marks the 3rd), timed from the dropped packet,
        // which did arrive. Timed from the last accepted one, the first interval would be
        // slower than R and the 3rd would not be marked.
        let gap = LINE_GAP_PS * 5 / 7;
        let marks: Vec<bool> = (0..3)
            .map(|k| {
                q.dequeue(&mut pool).unwrap();
                let id = packet(&mut pool, 1500, 0, 0, Ecn::Ect0);
                pool.get_mut(id).enqueued_at = Time(4 * g + gap * (k + 1));
                matches!(q.enqueue(&mut pool, id), Verdict::Enqueued { ce_marked: true, .. })
            })
            .collect();
        assert_eq!(marks, [false, false, true]);
    }

    #[test]
    fn a_queue_reads_one_line_counts_on_the_next_and_takes_three() {
        use std::mem::{align_of, offset_of, size_of};
        assert_eq!(align_of::<Fifo>(), 64);
        assert_eq!(offset_of!(Fifo, counters), 64);
        assert_eq!(size_of::<QueueCounters>(), 64);
        // 100,000 flows build about 400,000 queues: a fourth line each (an inline S-ECN
        // marker) costs 25 MB there.
        assert_eq!(size_of::<Fifo>(), 192);
    }

    #[test]
    fn a_queue_keeps_its_ecn_rule_and_only_an_s_ecn_queue_has_a_marker() {
        let forms = [SlopeForm::Hardware, SlopeForm::Probabilistic { seed: 7 }];
        let modes = [EcnMode::Enqueue, EcnMode::Dequeue].into_iter();
        for mode in modes.chain(forms.map(EcnMode::Slope)) {
            let f = Fifo::new(1 << 20, 0, Some(EcnSpec { threshold_bytes: 3000, mode }));
            assert_eq!(f.slope_marks(), f.slope.is_some(), "{mode:?}");
            assert_eq!(f.threshold_bytes, 3000);
        }
        assert!(!Fifo::new(1 << 20, 0, None).slope_marks());
    }

    #[test]
    fn counters_track_max_occupancy_per_queue_and_total() {
        let mut pool = PacketPool::default();
        let a = dscp_queue(4000, 1500, 1);
        let mut q = port(Scheduler::Strict, vec![a, queue_spec(4000, 1500)]);
        for _ in 0..3 {
            offer(&mut q, &mut pool, 1500, 1);
        }
        // The third 1500 B packet does not fit 4000 B; one of the two queued leaves.
        q.dequeue(&mut pool);
        for _ in 0..2 {
            offer(&mut q, &mut pool, 1000, 0);
        }
        assert_eq!(q.counters(0).max_bytes, 3000);
        assert_eq!(q.counters(0).drops, 1);
        assert_eq!(q.counters(1).max_bytes, 2000);
        // Port maximum is of the sum (1500 + 2000), not the largest single queue (3000).
        assert_eq!(q.total().max_bytes, 3500);
        assert_eq!((q.queue_packets(0), q.queue_packets(1), q.packets()), (1, 2, 3));
        assert_eq!(q.bytes(), 3500);
    }

    #[test]
    fn classifier_table_spans_six_bit_dscp() {
        assert_eq!(DSCP_VALUES, 1 << 6);
        let top = dscp_queue(1 << 20, 1500, 63);
        let q = port(Scheduler::Strict, vec![top, queue_spec(1 << 20, 1500)]);
        let mut p = Packet::new(Kind::Data, 0, 0, 1, 1500);
        p.dscp = 63;
        assert_eq!(q.classify(&p), 0);
    }

    #[test]
    fn strict_serves_all_max_queues() {
        assert_eq!(MAX_QUEUES, u64::BITS as usize);
        let mut pool = PacketPool::default();
        let specs = (0..MAX_QUEUES).map(|i| dscp_queue(1 << 20, 1500, i as u8)).collect();
        let mut q = port(Scheduler::Strict, specs);
        for dscp in (0..MAX_QUEUES as u8).rev() {
            offer(&mut q, &mut pool, 100, dscp);
        }
        let order = drain_queues(&mut q, &mut pool, MAX_QUEUES);
        assert_eq!(order, (0..MAX_QUEUES).collect::<Vec<_>>());
    }

    #[test]
    #[should_panic(expected = "at most 64")]
    fn spec_with_too_many_queues_rejected() {
        port(Scheduler::Strict, vec![queue_spec(1500, 1500); MAX_QUEUES + 1]);
    }

    #[test]
    #[should_panic(expected = "quantum_bytes = 0")]
    fn drr_spec_with_zero_quantum_rejected() {
        port(Scheduler::Drr, vec![queue_spec(1500, 1500), queue_spec(1500, 0)]);
    }

    // ---- Properties ----

    #[derive(Clone, Debug)]
    enum Op {
        Offer { bytes: u32, dscp: u8, flow: u32, ecn: u8 },
        Serve,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => (1u32..=9000, 0u8..8, 0u32..4, 0u8..4)
                .prop_map(|(bytes, dscp, flow, ecn)| Op::Offer { bytes, dscp, flow, ecn }),
            2 => Just(Op::Serve),
        ]
    }

    fn scheduler() -> impl Strategy<Value = Scheduler> {
        prop_oneof![Just(Scheduler::Fifo), Just(Scheduler::Strict), Just(Scheduler::Drr)]
    }

    /// A port of `sched` with one queue per `(buffer, quantum, K, ECN mode)`: queue `i` claims
    /// DSCP `i`, queue 1 also flow 3.
    fn random_port(sched: Scheduler, queues: &[(u64, u32, u64, u8)]) -> PortQueues {
        let specs: Vec<_> = (queues.iter().enumerate())
            .map(|(i, &(buffer, quantum, k, mode))| {
                let mut s = dscp_queue(buffer, quantum, i as u8);
                if i == 1 {
                    s.flows = vec![3];
                }
                let mode = [
                    EcnMode::Enqueue,
                    EcnMode::Dequeue,
                    EcnMode::Slope(SlopeForm::Hardware),
                    EcnMode::Slope(SlopeForm::Probabilistic { seed: 9 }),
                ][mode as usize];
                s.ecn = Some(EcnSpec { threshold_bytes: k, mode });
                s
            })
            .collect();
        let mut q = port(sched, specs);
        q.set_line_rate(Rate::from_gbps(1));
        q
    }

    #[test]
    fn pass_through_only_an_empty_port_and_not_past_the_buffer_or_an_s_ecn_queue() {
        let mut pool = PacketPool::default();
        let mut q = random_port(Scheduler::Strict, &[(3000, 1500, 0, 0), (3000, 1500, 0, 2)]);
        let small = packet(&mut pool, 1500, 0, 0, Ecn::Ect0);
        let large = packet(&mut pool, 4000, 0, 0, Ecn::Ect0);
        let slope = packet(&mut pool, 1500, 1, 0, Ecn::Ect0);
        assert_eq!(q.pass_through(pool.get(small)), Some(0));
        assert_eq!(pool.get(small).ecn, Ecn::Ect0, "K = 0 of an empty queue marks nothing");
        assert_eq!(q.pass_through(pool.get(large)), None);
        assert_eq!(q.pass_through(pool.get(slope)), None);
        assert!(matches!(q.enqueue(&mut pool, small), Verdict::Enqueued { .. }));
        assert_eq!(q.pass_through(pool.get(small)), None, "a packet is queued");
        let c = q.counters(0);
        assert_eq!((c.enqueued_packets, c.dequeued_packets, c.max_bytes), (2, 1, 1500));
    }

    proptest! {
        /// A packet let through an empty port leaves every counter, and what the port does
        /// next, as queueing it and taking it at once would.
        #[test]
        fn pass_through_is_enqueue_then_dequeue(
            sched in scheduler(),
            buffers in prop::collection::vec((1u64..40_000, 1u32..4000, 0u64..20_000, 0u8..4), 1..5),
            ops in prop::collection::vec(op(), 0..300),
        ) {
            let (mut a, mut b) = (random_port(sched, &buffers), random_port(sched, &buffers));
            let (mut pa, mut pb) = (PacketPool::default(), PacketPool::default());
            for (k, op) in ops.into_iter().enumerate() {
                match op {
                    Op::Offer { bytes, dscp, flow, ecn } => {
                        let ecn = [Ecn::NotEct, Ecn::Ect0, Ecn::Ect1, Ecn::Ce][ecn as usize];
                        let ia = packet(&mut pa, bytes, dscp, flow, ecn);
                        let ib = packet(&mut pb, bytes, dscp, flow, ecn);
                        pa.get_mut(ia).enqueued_at = Time(k as u64 * 5000);
                        pb.get_mut(ib).enqueued_at = Time(k as u64 * 5000);
                        let empty = a.is_empty();
                        let va = a.enqueue(&mut pa, ia);
                        let passed = b.pass_through(pb.get(ib));
                        if let Some(queue) = passed {
                            prop_assert!(empty);
                            prop_assert_eq!(va, Verdict::Enqueued { queue, ce_marked: false });
                            let d = a.dequeue(&mut pa).expect("just queued");
                            prop_assert_eq!((d.id, d.queue, d.ce_marked), (ia, queue, false));
                            pa.free(ia);
                            pb.free(ib);
                        } else {
                            let vb = b.enqueue(&mut pb, ib);
                            prop_assert_eq!(va, vb);
                            if let Verdict::Dropped { .. } = va {
                                pa.free(ia);
                                pb.free(ib);
                            }
                        }
                        prop_assert_eq!(pa.get(ia).ecn, pb.get(ib).ecn);
                    }
                    Op::Serve => {
                        let (da, db) = (a.dequeue(&mut pa), b.dequeue(&mut pb));
                        prop_assert_eq!(da.map(|d| (d.queue, d.ce_marked)), db.map(|d| (d.queue, d.ce_marked)));
                        if let (Some(da), Some(db)) = (da, db) {
                            pa.free(da.id);
                            pb.free(db.id);
                        }
                    }
                }
                prop_assert_eq!(a.total(), b.total());
                for i in 0..a.num_queues() {
                    prop_assert_eq!(a.counters(i), b.counters(i));
                    prop_assert_eq!(a.queue_bytes(i), b.queue_bytes(i));
                }
            }
        }

        #[test]
        fn port_conserves_bytes_and_respects_buffers(
            sched in scheduler(),
            buffers in prop::collection::vec((1u64..40_000, 1u32..4000, 0u64..20_000, 0u8..4), 1..5),
            ops in prop::collection::vec(op(), 0..400),
        ) {
            let mut q = random_port(sched, &buffers);
            let mut pool = PacketPool::default();
            let (mut offered, mut accepted, mut dropped, mut served) = (0u64, 0u64, 0u64, 0u64);
            for op in ops {
                match op {
                    Op::Offer { bytes, dscp, flow, ecn } => {
                        let ecn = [Ecn::NotEct, Ecn::Ect0, Ecn::Ect1, Ecn::Ce][ecn as usize];
                        let id = packet(&mut pool, bytes, dscp, flow, ecn);
                        // Arrivals at 1.6 R on average, so S-ECN sees every region.
                        pool.get_mut(id).enqueued_at = Time(offered * 5000);
                        offered += u64::from(bytes);
                        match q.enqueue(&mut pool, id) {
                            Verdict::Enqueued { .. } => accepted += u64::from(bytes),
                            Verdict::Dropped { .. } => { dropped += u64::from(bytes); pool.free(id); }
                        }
                    }
                    Op::Serve => match q.dequeue(&mut pool) {
                        Some(d) => {
                            let p = pool.get(d.id);
                            prop_assert!(!(d.ce_marked && p.ecn != Ecn::Ce));
                            served += u64::from(p.ip_bytes);
                            pool.free(d.id);
                        }
                        None => prop_assert!(q.is_empty()),
                    },
                }
                for i in 0..q.num_queues() {
                    prop_assert!(q.queue_bytes(i) <= q.buffer_bytes(i));
                }
                prop_assert_eq!(offered, accepted + dropped);
                prop_assert_eq!(accepted, served + q.bytes());
                prop_assert_eq!(q.total().dropped_bytes, dropped);
                prop_assert_eq!(q.total().enqueued_bytes, accepted);
                prop_assert_eq!(q.total().dequeued_bytes, served);
                prop_assert_eq!(pool.live(), q.packets());
                if let Err(e) = q.audit(&pool) { prop_assert!(false, "{}", e); }
            }
            // Every scheduler is work-conserving: draining empties the port.
            while let Some(d) = q.dequeue(&mut pool) { served += u64::from(pool.get(d.id).ip_bytes); }
            prop_assert_eq!(accepted, served);
            prop_assert!(q.is_empty() && q.bytes() == 0);
        }
    }
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

impl PortSpec {
    /// One FIFO of `buffer` bytes, no marking, no shaper.
    pub fn fifo(buffer: u64) -> PortSpec {
        PortSpec {
            scheduler: Scheduler::Fifo,
            queues: vec![QueueSpec {
                buffer_bytes: buffer,
                quantum_bytes: 0,
                dscp: vec![],
                flows: vec![],
                ecn: None,
            }],
            shaper: None,
            pauses: vec![],
        }
    }
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
    /// S-ECN (Shan et al., ICNP 2018 §IV): everything above K at arrival, and below K by the
    /// slope of the arrivals ([`slope`]).
    Slope(SlopeForm),
}
