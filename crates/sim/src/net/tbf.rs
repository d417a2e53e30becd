//! A token-bucket shaper in front of a port's queue, as Linux `sch_tbf` (`net/sched/sch_tbf.c`)
//! runs it with its default `bfifo` child: packets wait in a byte-limited FIFO (`limit`) and
//! leave only when the bucket holds enough tokens for them; the bucket fills at `rate` up to
//! `burst` bytes and starts full.
//!
//! Like `sch_tbf`, tokens are kept as time (`psched_l2t_ns()`): a packet of L bytes needs L/rate
//! of accumulated time, the bucket holds at most burst/rate. The packet length charged is the
//! Ethernet frame without FCS (14 + IP bytes, `qdisc_pkt_len()` on an Ethernet device).
//!
//! On a software path (veth, a Linux router) TCP's GSO super-packets reach the qdisc whole, and
//! `sch_tbf` handles each as one unit ([`Tbf`]): `bfifo` admits or drops all its segments at
//! once (`bfifo_enqueue()`), and `tbf_dequeue()` waits for the tokens of the whole skb, then
//! releases it at once. Only an skb longer than `max_size` (the bucket) is cut into segments
//! first (`tbf_segment()`), each then on its own.
//!
//! When the head must wait for tokens, `tbf_dequeue()` arms the qdisc watchdog, an hrtimer, for
//! the time they will suffice (`qdisc_watchdog_schedule_ns()`, no slack). The host runs the
//! dequeue later than that: the timer's interrupt comes late and the `NET_TX` softirq it raises
//! runs later still ([`Tbf::watchdog`]). The tokens earned meanwhile let the next packets leave
//! together, so a busy `tbf` sends clumps, not an even stream.

use crate::latency::Latency;
use crate::packet::{FlowId, Packet};
use crate::rng;
use crate::time::Time;
use crate::units::Rate;

/// The random stream of a `tbf`'s watchdog latencies: (seed, this, port index).
pub const TBF_WATCHDOG_STREAM: &str = "tbf-watchdog";

/// Ethernet header bytes counted by `qdisc_pkt_len()` (no preamble, FCS or gap).
pub const L2_HEADER_BYTES: u32 = 14;

#[derive(Clone, Debug)]
pub struct TokenBucket {
    rate: Rate,
    /// Bucket size as time at `rate` (`q->buffer`).
    buffer: Time,
    /// Tokens (as time) at `t_c` (`q->tokens`).
    tokens: Time,
    /// Last update (`q->t_c`).
    t_c: Time,
}

impl TokenBucket {
    pub fn new(spec: &TbfSpec) -> TokenBucket {
        let buffer = spec.rate.serialization_time(spec.burst_bytes);
        TokenBucket { rate: spec.rate, buffer, tokens: buffer, t_c: Time::ZERO }
    }

    fn cost(&self, ip_bytes: u32) -> Time {
        self.frames_cost(frame_bytes(ip_bytes, 1))
    }

    fn frames_cost(&self, frame_bytes: u64) -> Time {
        self.rate.serialization_time(frame_bytes)
    }

    fn available(&self, now: Time) -> Time {
        (self.tokens + (now - self.t_c)).min(self.buffer)
    }

    /// Earliest time at or after `now` when a packet of `ip_bytes` may leave
    /// (`tbf_dequeue()`: otherwise the watchdog is set for the missing tokens).
    pub fn ready_at(&self, now: Time, ip_bytes: u32) -> Time {
        let have = self.available(now);
        let need = self.cost(ip_bytes);
        if have >= need { now } else { now + (need - have) }
    }

    /// The packet leaves at `now`: take its tokens.
    pub fn consume(&mut self, now: Time, ip_bytes: u32) {
        self.consume_frames(now, frame_bytes(ip_bytes, 1));
    }

    /// As [`TokenBucket::ready_at`], for `frame_bytes` of frames leaving together.
    pub fn frames_ready_at(&self, now: Time, frame_bytes: u64) -> Time {
        let have = self.available(now);
        let need = self.frames_cost(frame_bytes);
        if have >= need { now } else { now + (need - have) }
    }

    pub fn consume_frames(&mut self, now: Time, frame_bytes: u64) {
        let have = self.available(now);
        let need = self.frames_cost(frame_bytes);
        debug_assert!(have >= need, "tbf released a packet without tokens");
        self.tokens = have - need;
        self.t_c = now;
    }
}

/// `qdisc_pkt_len()` of `segs` segments carrying `ip_bytes` in all: one Ethernet header each
/// (`qdisc_pkt_len_init()` adds the headers of every GSO segment).
pub fn frame_bytes(ip_bytes: u32, segs: u16) -> u64 {
    ip_bytes as u64 + L2_HEADER_BYTES as u64 * segs as u64
}

/// Where the segments of one flow's current skb stand.
#[derive(Clone, Copy, Debug)]
struct Skb {
    flow: FlowId,
    /// Segments of it still to arrive (admission) or to leave (dequeue).
    left: u16,
    /// Its segments with an index below this one were admitted...
    admit_below: u16,
    /// ...and so was its last one (a short last segment may fit where a full one did not).
    admit_last: bool,
    /// Frame bytes held for admitted segments still to arrive.
    reserved: u64,
}

impl Skb {
    fn admits(&self, index: u16, segs: u16) -> bool {
        index < self.admit_below || (index + 1 == segs && self.admit_last)
    }
}

/// A `tbf` qdisc: the token bucket, the `bfifo` limit, and the skbs in transit through it.
#[derive(Clone, Debug)]
pub struct Tbf {
    pub bucket: TokenBucket,
    /// `bfifo` limit, frame bytes.
    limit: u64,
    /// `q->max_size`: the largest skb that can ever get its tokens: the burst tc was given, to the
    /// byte (`tbf_change()` takes TCA_TBF_BURST, which tc sends, over its 64 ns ticks).
    max_size: u64,
    /// Frame bytes queued (`sch->qstats.backlog`).
    backlog: u64,
    /// Skbs whose first segment was decided and whose others are still arriving.
    arriving: Vec<Skb>,
    /// Skbs whose first segment left with the tokens of all: the others follow freely.
    leaving: Vec<Skb>,
    /// Dropped skbs (`tc -s` "dropped" counts skbs, not segments).
    pub dropped_skbs: u64,
    /// How late the host runs the dequeue after the watchdog's time.
    watchdog_latency: Latency,
    watchdog_rng: rng::Stream,
    /// The watchdog armed: (the tokens' time, when the dequeue runs).
    armed: Option<(Time, Time)>,
}

/// What the qdisc decided for an arriving segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admit {
    Enqueue,
    Drop,
}

impl Tbf {
    /// `watchdog_rng` draws the watchdog's latencies (the run's seed and the port's index).
    pub fn new(spec: &TbfSpec, watchdog_rng: rng::Stream) -> Tbf {
        Tbf {
            bucket: TokenBucket::new(spec),
            limit: spec.limit_bytes,
            max_size: spec.burst_bytes,
            backlog: 0,
            arriving: Vec::new(),
            leaving: Vec::new(),
            dropped_skbs: 0,
            watchdog_latency: spec.watchdog_latency.clone(),
            watchdog_rng,
            armed: None,
        }
    }

    /// When the dequeue that waits for tokens due at `ready` runs: `ready` plus the host's
    /// latency, drawn once per arming. A watchdog already armed for that time stays as it is
    /// (`qdisc_watchdog_schedule_range_ns()` does not re-arm a timer set for the same expiry),
    /// so packets arriving meanwhile do not draw again.
    pub fn watchdog(&mut self, ready: Time) -> Time {
        if self.watchdog_latency.is_zero() {
            return ready;
        }
        match self.armed {
            Some((armed_for, runs_at)) if armed_for == ready => runs_at,
            _ => {
                let runs_at = ready + self.watchdog_latency.draw(&mut self.watchdog_rng);
                self.armed = Some((ready, runs_at));
                runs_at
            }
        }
    }

    /// A whole skb, or one cut into segments because it exceeds `max_size` (`tbf_segment()`).
    fn whole(&self, p: &Packet) -> bool {
        p.gso_segs > 1 && frame_bytes(p.gso_bytes, p.gso_segs) <= self.max_size
    }

    /// `tbf_enqueue()` → `bfifo_enqueue()` for one arriving segment. The first segment of an
    /// skb decides for all of them, and holds room for the rest: the kernel enqueues an skb at
    /// once, before the qdisc can dequeue anything, though our segments arrive one by one.
    pub fn admit(&mut self, p: &mut Packet) -> Admit {
        let size = frame_bytes(p.ip_bytes, 1);
        let (segs, index) = (p.gso_segs, p.gso_index);
        let cut = segs > 1 && !self.whole(p);
        let last_size = frame_bytes(p.gso_bytes.saturating_sub((segs as u32 - 1) * p.ip_bytes), 1);
        if cut {
            // Cut into lone segments (`tbf_segment()`): the receiver sees them so too.
            (p.gso_segs, p.gso_index, p.gso_bytes) = (1, 0, p.ip_bytes);
        }
        if let Some(i) = self.arriving.iter().position(|s| s.flow == p.flow) {
            if index > 0 {
                let skb = &mut self.arriving[i];
                let admitted = skb.admits(index, segs);
                if admitted {
                    skb.reserved -= size.min(skb.reserved);
                    self.backlog += size;
                }
                skb.left -= 1;
                if skb.left == 0 {
                    self.arriving.swap_remove(i);
                }
                // `tc -s` counts a whole skb's drop once, each dropped segment of a cut one.
                if !admitted && cut {
                    self.dropped_skbs += 1;
                }
                return if admitted { Admit::Enqueue } else { Admit::Drop };
            }
            // The rest of the flow's last skb never came (lost upstream): forget it.
            self.arriving.swap_remove(i);
        }
        let held: u64 = self.arriving.iter().map(|s| s.reserved).sum();
        let room = self.limit.saturating_sub(self.backlog + held);
        let skb = if !cut && segs > 1 && index == 0 {
            // `bfifo_enqueue()` of the whole skb: all its segments or none.
            let ok = frame_bytes(p.gso_bytes, segs) <= room;
            Skb {
                flow: p.flow,
                left: segs,
                admit_below: if ok { segs } else { 0 },
                admit_last: ok,
                reserved: 0,
            }
        } else if cut && index == 0 {
            // `tbf_segment()`: each segment in turn, while the limit has room for it.
            let full = (segs - 1).min((room / size).min(u16::MAX as u64) as u16);
            let admit_last = last_size <= room - full as u64 * size;
            Skb { flow: p.flow, left: segs, admit_below: full, admit_last, reserved: 0 }
        } else {
            // A lone packet, or a later segment whose skb's first one never came.
            let ok = size <= room;
            Skb { flow: p.flow, left: 1, admit_below: ok as u16, admit_last: ok, reserved: 0 }
        };
        let segs = skb.left;
        let admitted = skb.admits(0, segs);
        if segs > 1 {
            let mut rest = skb;
            rest.left -= 1;
            rest.reserved = (1..segs)
                .filter(|&i| skb.admits(i, segs))
                .map(|i| if i + 1 == segs { last_size } else { size })
                .sum();
            self.arriving.push(rest);
        }
        if admitted {
            self.backlog += size;
            Admit::Enqueue
        } else {
            // A whole skb is counted once, on its first segment.
            self.dropped_skbs += 1;
            Admit::Drop
        }
    }

    /// `tbf_dequeue()` for the head segment `p`: when it may leave. The first segment of a whole
    /// skb needs the tokens of all its segments; the others then follow without tokens.
    pub fn ready_at(&self, now: Time, p: &Packet) -> Time {
        if self.leaving.iter().any(|s| s.flow == p.flow && p.gso_index > 0) {
            return now;
        }
        if self.whole(p) && p.gso_index == 0 {
            return self.bucket.frames_ready_at(now, frame_bytes(p.gso_bytes, p.gso_segs));
        }
        self.bucket.ready_at(now, p.ip_bytes)
    }

    /// The head segment `p` leaves at `now` (after [`Tbf::ready_at`] allowed it).
    pub fn release(&mut self, now: Time, p: &Packet) {
        self.backlog -= frame_bytes(p.ip_bytes, 1);
        if let Some(i) = self.leaving.iter().position(|s| s.flow == p.flow) {
            if p.gso_index > 0 {
                let skb = &mut self.leaving[i];
                skb.left -= 1;
                if skb.left == 0 {
                    self.leaving.swap_remove(i);
                }
                return;
            }
            // A new skb of the flow while segments of its last one were dropped or cut.
            self.leaving.swap_remove(i);
        }
        if self.whole(p) && p.gso_index == 0 {
            self.bucket.consume_frames(now, frame_bytes(p.gso_bytes, p.gso_segs));
            self.leaving.push(Skb {
                flow: p.flow,
                left: p.gso_segs - 1,
                admit_below: p.gso_segs,
                admit_last: true,
                reserved: 0,
            });
        } else {
            self.bucket.consume(now, p.ip_bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bucket(rate_mbps: u64, burst: u64) -> TokenBucket {
        TokenBucket::new(&TbfSpec {
            rate: Rate::from_mbps(rate_mbps),
            burst_bytes: burst,
            limit_bytes: 100_000,
            watchdog_latency: Latency::ZERO,
        })
    }

    #[test]
    fn a_full_bucket_passes_a_burst_then_paces_at_the_rate() {
        let mut b = bucket(8, 3028); // 8 Mbit/s = 1 byte/µs; two 1514-byte frames of burst
        let now = Time::ZERO;
        for _ in 0..2 {
            assert_eq!(b.ready_at(now, 1500), now);
            b.consume(now, 1500);
        }
        // Empty: the third frame waits 1514 µs for its tokens.
        assert_eq!(b.ready_at(now, 1500), Time::from_us(1514));
        b.consume(Time::from_us(1514), 1500);
        assert_eq!(b.ready_at(Time::from_us(1514), 1500), Time::from_us(3028));
    }

    /// Segment `index` of a GSO skb of `segs` 1500-byte packets of `flow`.
    fn seg(flow: u32, segs: u16, index: u16) -> Packet {
        let mut p = Packet::new(crate::packet::Kind::Data, flow, 0, 1, 1500);
        (p.gso_segs, p.gso_index, p.gso_bytes) = (segs, index, 1500 * segs as u32);
        p
    }

    fn tbf_late(burst: u64, limit: u64, watchdog_latency: Latency) -> Tbf {
        let spec = TbfSpec {
            rate: Rate::from_mbps(8),
            burst_bytes: burst,
            limit_bytes: limit,
            watchdog_latency,
        };
        Tbf::new(&spec, rng::stream(1, TBF_WATCHDOG_STREAM, 0))
    }

    fn tbf(burst: u64, limit: u64) -> Tbf {
        tbf_late(burst, limit, Latency::ZERO)
    }

    #[test]
    fn the_watchdog_runs_the_dequeue_late_and_is_not_rearmed_for_the_same_time() {
        let ready = Time::from_us(1514);
        assert_eq!(tbf(5 * 1514, 10 * 1514).watchdog(ready), ready, "no latency: exact");
        let mut q = tbf_late(5 * 1514, 10 * 1514, Latency::Fixed(Time::from_us(17)));
        assert_eq!(q.watchdog(ready), ready + Time::from_us(17));
        // Measured latencies to draw from: arrivals that find the watchdog armed for the same
        // tokens do not draw again; the next wait for tokens does.
        let draws = Latency::Samples((1..=1000).map(Time::from_us).collect());
        let mut q = tbf_late(5 * 1514, 10 * 1514, draws);
        let first = q.watchdog(ready);
        assert!((0..50).all(|_| q.watchdog(ready) == first));
        let later = ready + Time::from_us(1514);
        let next: Vec<Time> = (0..50).map(|k| q.watchdog(later + Time::from_ps(k))).collect();
        assert!(next.iter().any(|t| *t - later != first - ready), "every arming draws afresh");
    }

    #[test]
    fn a_gso_skb_is_admitted_or_dropped_whole() {
        // limit 4 frames of 1514 B; bucket 5 frames.
        let mut q = tbf(5 * 1514, 4 * 1514);
        // 3 lone segments queued: a 2-segment skb no longer fits, a lone segment does.
        for _ in 0..3 {
            assert_eq!(q.admit(&mut seg(9, 1, 0)), Admit::Enqueue);
        }
        assert_eq!(q.admit(&mut seg(1, 2, 0)), Admit::Drop);
        assert_eq!(q.admit(&mut seg(1, 2, 1)), Admit::Drop, "its second segment shares its fate");
        assert_eq!(q.admit(&mut seg(2, 1, 0)), Admit::Enqueue);
        // Two drops of segments, one skb: `tc -s` counts skbs.
        assert_eq!(q.dropped_skbs, 1);
    }

    #[test]
    fn an_admitted_skb_holds_room_for_its_later_segments() {
        let mut q = tbf(5 * 1514, 4 * 1514);
        assert_eq!(q.admit(&mut seg(1, 3, 0)), Admit::Enqueue);
        // Another flow's packet arrives between the segments: 1 + 3 frames, it still fits...
        assert_eq!(q.admit(&mut seg(2, 1, 0)), Admit::Enqueue);
        // ...but a second one would take the room held for segments 1 and 2.
        assert_eq!(q.admit(&mut seg(3, 1, 0)), Admit::Drop);
        assert_eq!(q.admit(&mut seg(1, 3, 1)), Admit::Enqueue);
        assert_eq!(q.admit(&mut seg(1, 3, 2)), Admit::Enqueue);
    }

    #[test]
    fn an_skb_longer_than_the_bucket_is_cut_into_lone_segments() {
        // `tbf_segment()`: 6 frames > a 5-frame bucket; each segment is admitted on its own and
        // leaves the qdisc as a lone segment.
        let mut q = tbf(5 * 1514, 4 * 1514);
        let mut admitted = 0;
        for i in 0..6 {
            let mut p = seg(1, 6, i);
            if q.admit(&mut p) == Admit::Enqueue {
                admitted += 1;
            }
            assert_eq!((p.gso_segs, p.gso_index), (1, 0));
        }
        assert_eq!(admitted, 4, "the first four fit the limit");
        assert_eq!(q.dropped_skbs, 2);
    }

    #[test]
    fn an_skb_as_long_as_the_bucket_stays_whole_and_waits_for_a_full_bucket() {
        // `tbf_enqueue()` cuts only an skb longer than `max_size`, which `tbf_change()` sets to
        // the burst tc sends (TCA_TBF_BURST): `burst 15140` holds a 10-segment skb of 1514-byte
        // frames whole, and it leaves only on a full bucket.
        let mut q = tbf(10 * 1514, 40 * 1514);
        for i in 0..10 {
            let mut p = seg(1, 10, i);
            assert_eq!(q.admit(&mut p), Admit::Enqueue);
            assert_eq!((p.gso_segs, p.gso_index), (10, i), "not cut by tbf_segment()");
        }
        let mut lone = seg(2, 1, 0);
        assert_eq!(q.admit(&mut lone), Admit::Enqueue);
        let now = Time::ZERO;
        q.release(now, &seg(1, 10, 0));
        for i in 1..10 {
            q.release(now, &seg(1, 10, i));
        }
        // 8 Mbit/s = 1 byte/µs: the bucket is empty; a lone frame waits 1514 µs...
        assert_eq!(q.ready_at(now, &lone), Time::from_us(1514));
        // ...and the next 10-segment skb the whole bucket's 15,140 µs.
        assert_eq!(q.ready_at(now, &seg(3, 10, 0)), Time::from_us(15_140));
        // One byte less of bucket and the same skb is cut into lone segments.
        let mut q = tbf(10 * 1514 - 1, 40 * 1514);
        let mut p = seg(1, 10, 0);
        q.admit(&mut p);
        assert_eq!((p.gso_segs, p.gso_index), (1, 0));
    }

    #[test]
    fn a_cut_skb_is_admitted_as_it_arrives_whole() {
        // `tbf_segment()` enqueues all the segments before the qdisc dequeues any: room freed
        // while our segments arrive one by one does not admit more of them.
        let mut q = tbf(5 * 1514, 4 * 1514);
        let now = Time::ZERO;
        let mut p = seg(1, 6, 0);
        assert_eq!(q.admit(&mut p), Admit::Enqueue);
        assert_eq!(q.ready_at(now, &p), now);
        q.release(now, &p);
        let fates: Vec<Admit> = (1..6).map(|i| q.admit(&mut seg(1, 6, i))).collect();
        use Admit::*;
        assert_eq!(fates, [Enqueue, Enqueue, Enqueue, Drop, Drop]);
        assert_eq!(q.dropped_skbs, 2, "`tc -s` counts each dropped segment of a cut skb");
    }

    #[test]
    fn a_cut_skb_keeps_a_short_last_segment_that_still_fits() {
        // 5 full frames and a 114-byte last one (100 B of IP), limit 4 frames + 200 B:
        // segments 0..3 fit, 4 does not, 5 does (`bfifo_enqueue()` tries each in turn).
        let mut q = tbf(5 * 1514, 4 * 1514 + 200);
        let fates: Vec<Admit> = (0..6)
            .map(|i| {
                let mut p = seg(1, 6, i);
                p.gso_bytes = 5 * 1500 + 100;
                if i == 5 {
                    p.ip_bytes = 100;
                }
                q.admit(&mut p)
            })
            .collect();
        use Admit::*;
        assert_eq!(fates, [Enqueue, Enqueue, Enqueue, Enqueue, Drop, Enqueue]);
    }

    #[test]
    fn a_whole_skb_waits_for_all_its_tokens_then_leaves_at_once() {
        // 8 Mbit/s = 1 byte/µs. The bucket (5 frames) starts full; a 3-segment skb takes 4542
        // bytes of tokens at once, the next one must wait for 4542 - (7570 - 4542) = 1514 µs.
        let mut q = tbf(5 * 1514, 10 * 1514);
        let now = Time::ZERO;
        for i in 0..3 {
            q.admit(&mut seg(1, 3, i));
        }
        for i in 0..3 {
            q.admit(&mut seg(2, 3, i));
        }
        assert_eq!(q.ready_at(now, &seg(1, 3, 0)), now);
        q.release(now, &seg(1, 3, 0));
        for i in 1..3 {
            assert_eq!(q.ready_at(now, &seg(1, 3, i)), now, "the rest of the skb is paid for");
            q.release(now, &seg(1, 3, i));
        }
        assert_eq!(q.ready_at(now, &seg(2, 3, 0)), Time::from_us(1514));
    }

    #[test]
    fn tokens_never_exceed_the_burst() {
        let b = bucket(8, 2000);
        // After a long idle, still only 2000 bytes of tokens: a 1500-byte frame (1514 B) goes,
        // and a second would wait.
        let later = Time::from_secs(10);
        assert_eq!(b.ready_at(later, 1500), later);
        let mut b = b;
        b.consume(later, 1500);
        assert_eq!(b.ready_at(later, 1500), later + Time::from_us(1514 - (2000 - 1514)));
    }
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
