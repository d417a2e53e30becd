//! A bottleneck's queue, reconstructed from the packets seen entering and leaving it (two
//! captures, or two interfaces of one): int-telemetry.md §16.1 "cumulative(in) − cumulative(out)".
//!
//! Each leaving packet is matched to the earliest unmatched entering packet with the same
//! 5-tuple and fingerprint (IP id, TCP seq/ack, UDP payload bytes) that entered at most
//! `drop_horizon_ns` before. Its observation gives the hop latency (leave − enter) and the
//! occupancy left behind it: the bytes that entered by then and neither left nor were dropped.
//! An entering packet with no match although the leaving capture runs past its entry plus the
//! horizon was dropped; its observation is stamped at entry with the occupancy it found.

use super::packet::PacketRecord;
use crate::model::FlowKey;
use crate::observation::{Observation, QueueKey};
use rustc_hash::{FxHashMap, FxHasher};
use std::convert::Infallible;
use std::hash::{Hash, Hasher};
use std::ops::ControlFlow;

/// The reconstruction and what could not be placed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QueueTrace {
    /// Departures and drops in time order.
    pub observations: Vec<Observation>,
    /// Leaving packets with no entering twin (they came from elsewhere, or the ingress
    /// capture missed them).
    pub unmatched_departures: u64,
    /// Entering packets that had not left when the leaving capture ended, too recent to call
    /// dropped.
    pub undecided: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fate {
    Queued,
    Left(u64),
}

struct Arrival {
    ts_ns: u64,
    bytes: u32,
    flow: Option<FlowKey>,
    /// Next arrival with the same identity, in entry order (`u32::MAX` ends the chain).
    next: u32,
    fate: Fate,
}

const END: u32 = u32::MAX;

fn identity(rec: &PacketRecord) -> u64 {
    let mut h = FxHasher::default();
    rec.flow.hash(&mut h);
    h.write_u64(rec.fingerprint);
    h.finish()
}

/// Packets between two calls of a reconstruction's `poll`: a few milliseconds of work.
pub const POLL_PACKETS: usize = 1 << 12;

/// `poll()` every [`POLL_PACKETS`] steps of a loop; its `Break` ends the loop.
#[inline]
fn every<B>(i: usize, poll: &mut impl FnMut() -> ControlFlow<B>) -> ControlFlow<B> {
    if i.is_multiple_of(POLL_PACKETS) { poll() } else { ControlFlow::Continue(()) }
}

/// Rebuilds the queue between `entering` and `leaving` (each in any order; sorted here).
pub fn reconstruct_queue(
    entering: impl IntoIterator<Item = PacketRecord>,
    leaving: impl IntoIterator<Item = PacketRecord>,
    key: QueueKey,
    drop_horizon_ns: u64,
) -> QueueTrace {
    let never = || ControlFlow::<Infallible>::Continue(());
    match reconstruct_queue_with(entering, leaving, key, drop_horizon_ns, never) {
        ControlFlow::Continue(trace) => trace,
        ControlFlow::Break(never) => match never {},
    }
}

/// [`reconstruct_queue`] that calls `poll` every [`POLL_PACKETS`] packets of each step (a
/// reconstruction of millions of packets takes seconds) and gives up when it breaks.
pub fn reconstruct_queue_with<B>(
    entering: impl IntoIterator<Item = PacketRecord>,
    leaving: impl IntoIterator<Item = PacketRecord>,
    key: QueueKey,
    drop_horizon_ns: u64,
    mut poll: impl FnMut() -> ControlFlow<B>,
) -> ControlFlow<B, QueueTrace> {
    let mut ins: Vec<(u64, u64, u32, Option<FlowKey>)> = Vec::new();
    for (i, r) in entering.into_iter().enumerate() {
        every(i, &mut poll)?;
        ins.push((r.ts_ns, identity(&r), r.wire_len, r.flow));
    }
    ins.sort_by_key(|a| a.0);
    poll()?;
    let mut outs: Vec<(u64, u64)> = Vec::new();
    for (i, r) in leaving.into_iter().enumerate() {
        every(i, &mut poll)?;
        outs.push((r.ts_ns, identity(&r)));
    }
    outs.sort_by_key(|d| d.0);
    poll()?;

    // Chains of same-identity arrivals in entry order: (first unmatched, last).
    let mut chains: FxHashMap<u64, (u32, u32)> = FxHashMap::default();
    let mut arrivals = Vec::with_capacity(ins.len().min(END as usize));
    for (i, &(ts_ns, id, bytes, flow)) in ins.iter().enumerate().take(END as usize) {
        every(i, &mut poll)?;
        let i = i as u32;
        arrivals.push(Arrival { ts_ns, bytes, flow, next: END, fate: Fate::Queued });
        match chains.get_mut(&id) {
            Some((_, tail)) => {
                arrivals[*tail as usize].next = i;
                *tail = i;
            }
            None => {
                chains.insert(id, (i, i));
            }
        }
    }

    let mut trace = QueueTrace::default();
    for (i, &(t, id)) in outs.iter().enumerate() {
        every(i, &mut poll)?;
        let Some((head, _)) = chains.get_mut(&id) else {
            trace.unmatched_departures += 1;
            continue;
        };
        // Arrivals older than the horizon stay queued: they are the drops.
        while *head != END && arrivals[*head as usize].ts_ns.saturating_add(drop_horizon_ns) < t {
            *head = arrivals[*head as usize].next;
        }
        match arrivals.get_mut(*head as usize) {
            Some(a) if a.ts_ns <= t => {
                a.fate = Fate::Left(t);
                *head = a.next;
            }
            _ => trace.unmatched_departures += 1,
        }
    }

    let last_departure = outs.last().map_or(0, |d| d.0);
    trace.observations =
        sweep(&arrivals, last_departure, drop_horizon_ns, key, &mut trace.undecided, &mut poll)?;
    ControlFlow::Continue(trace)
}

/// Orders entries, drops and departures in time and accumulates the occupancy.
fn sweep<B>(
    arrivals: &[Arrival],
    last_departure: u64,
    horizon: u64,
    key: QueueKey,
    undecided: &mut u64,
    poll: &mut impl FnMut() -> ControlFlow<B>,
) -> ControlFlow<B, Vec<Observation>> {
    // (time, rank, arrival index): at one instant entries come first, then drops, then
    // departures, so an observation sees every packet that entered by its time.
    const ENTER: u8 = 0;
    const DROP: u8 = 1;
    const LEAVE: u8 = 2;
    let mut events: Vec<(u64, u8, u32)> = Vec::with_capacity(arrivals.len() * 2);
    for (i, a) in arrivals.iter().enumerate() {
        every(i, poll)?;
        let i = i as u32;
        match a.fate {
            Fate::Left(t) => {
                events.push((a.ts_ns, ENTER, i));
                events.push((t, LEAVE, i));
            }
            Fate::Queued if a.ts_ns.saturating_add(horizon) <= last_departure => {
                events.push((a.ts_ns, DROP, i));
            }
            Fate::Queued => *undecided += 1,
        }
    }
    events.sort_unstable();
    poll()?;
    let mut occupancy: u64 = 0;
    let mut out = Vec::with_capacity(events.len() / 2 + 1);
    for (k, (t, rank, i)) in events.into_iter().enumerate() {
        every(k, poll)?;
        let a = &arrivals[i as usize];
        let bytes = u64::from(a.bytes);
        let (latency, dropped) = match rank {
            ENTER => {
                occupancy += bytes;
                continue;
            }
            DROP => (None, true),
            _ => {
                occupancy = occupancy.saturating_sub(bytes);
                (Some(t.saturating_sub(a.ts_ns)), false)
            }
        };
        out.push(Observation {
            t_ns: t,
            queue: key,
            occupancy_bytes: occupancy,
            flow: a.flow,
            packet_bytes: a.bytes,
            hop_latency_ns: latency,
            dropped,
            report: None,
        });
    }
    ControlFlow::Continue(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::packet::L4;
    use std::net::{IpAddr, Ipv4Addr};

    const KEY: QueueKey = QueueKey { switch_id: 1, port: 2, queue_id: 0 };
    const BYTES: u32 = 1000;

    fn flow() -> FlowKey {
        FlowKey {
            src: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
            dst: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)),
            sport: 4000,
            dport: 5000,
            proto: 17,
        }
    }

    fn pkt(ts_ns: u64, id: u64) -> PacketRecord {
        PacketRecord {
            ts_ns,
            interface: 0,
            wire_len: BYTES,
            flow: Some(flow()),
            ip_id: Some(id as u32),
            l4: L4::Other,
            fingerprint: id,
        }
    }

    /// Packet i enters at i µs, 2× the 2 µs-per-packet departure rate; the switch holds 4
    /// packets (the one in service included) and tail-drops. Worked by hand:
    /// departures at 2, 4, …, 18 µs carry p0–p6, p8, p10; p7, p9, p11 find 4 packets and
    /// are dropped; p12 enters an empty queue at 30 µs and leaves at 32 µs.
    fn two_to_one() -> (Vec<PacketRecord>, Vec<PacketRecord>) {
        let entering: Vec<_> = (0..12).map(|i| pkt(i * 1000, i)).chain([pkt(30_000, 12)]).collect();
        let served = [0, 1, 2, 3, 4, 5, 6, 8, 10];
        let mut leaving: Vec<_> =
            served.iter().enumerate().map(|(k, &i)| pkt(2000 * (k as u64 + 1), i)).collect();
        leaving.push(pkt(32_000, 12));
        (entering, leaving)
    }

    #[test]
    fn two_to_one_gives_the_analytic_occupancy_latency_and_drops() {
        let (entering, mut leaving) = two_to_one();
        leaving.reverse(); // any order in
        let t = reconstruct_queue(entering, leaving, KEY, 10_000);
        let departures: Vec<_> = t
            .observations
            .iter()
            .filter(|o| !o.dropped)
            .map(|o| (o.t_ns, o.hop_latency_ns.unwrap(), o.occupancy_bytes))
            .collect();
        assert_eq!(
            departures,
            vec![
                (2000, 2000, 2000),
                (4000, 3000, 3000),
                (6000, 4000, 4000),
                (8000, 5000, 4000),
                (10_000, 6000, 4000),
                (12_000, 7000, 3000),
                (14_000, 8000, 2000),
                (16_000, 8000, 1000),
                (18_000, 8000, 0),
                (32_000, 2000, 0),
            ]
        );
        let drops: Vec<_> = t
            .observations
            .iter()
            .filter(|o| o.dropped)
            .map(|o| (o.t_ns, o.occupancy_bytes))
            .collect();
        assert_eq!(drops, vec![(7000, 4000), (9000, 4000), (11_000, 4000)]);
        assert!(t.observations.windows(2).all(|w| w[0].t_ns <= w[1].t_ns));
        assert!(
            t.observations
                .iter()
                .all(|o| o.queue == KEY && o.packet_bytes == BYTES && o.flow == Some(flow()))
        );
        assert_eq!((t.unmatched_departures, t.undecided), (0, 0));
    }

    #[test]
    fn two_to_one_occupancy_is_entered_minus_left_minus_dropped() {
        // The invariant behind the numbers above, at every departure.
        let (entering, leaving) = two_to_one();
        let t = reconstruct_queue(entering.clone(), leaving.clone(), KEY, 10_000);
        let dropped = [7_000u64, 9_000, 11_000];
        for o in t.observations.iter().filter(|o| !o.dropped) {
            let entered = entering
                .iter()
                .filter(|p| p.ts_ns <= o.t_ns && !dropped.contains(&p.ts_ns))
                .count();
            let left = leaving.iter().filter(|p| p.ts_ns <= o.t_ns).count();
            assert_eq!(o.occupancy_bytes, (entered - left) as u64 * u64::from(BYTES));
        }
    }

    #[test]
    fn short_leaving_capture_leaves_recent_arrivals_undecided() {
        let (entering, leaving) = two_to_one();
        // The egress capture stops at 18 µs: p7 (7 µs) is past the 10 µs horizon and dropped;
        // p9, p11 and p12 are not yet 10 µs old when it stops.
        let leaving: Vec<_> = leaving.into_iter().filter(|p| p.ts_ns <= 18_000).collect();
        let t = reconstruct_queue(entering, leaving, KEY, 10_000);
        assert_eq!(t.undecided, 3);
        assert_eq!(t.observations.iter().filter(|o| o.dropped).count(), 1);
    }

    #[test]
    fn departure_without_an_entry_is_counted_not_matched() {
        let entering = vec![pkt(0, 1)];
        // id 9 never entered; id 1 leaving before it entered cannot match either.
        let leaving = vec![pkt(500, 9), pkt(1000, 1)];
        let t = reconstruct_queue(entering.clone(), leaving, KEY, 10_000);
        assert_eq!(t.unmatched_departures, 1);
        assert_eq!(t.observations.len(), 1);
        let t = reconstruct_queue(vec![pkt(2000, 1)], vec![pkt(1000, 1)], KEY, 10_000);
        assert_eq!((t.unmatched_departures, t.undecided), (1, 1));
    }

    #[test]
    fn same_identity_packets_match_first_in_first_out_within_the_horizon() {
        // Two identical packets (no IP id, say IPv6 retransmissions): the first was dropped,
        // the copy sent 50 µs later leaves at 52 µs. The horizon keeps the copy's match.
        let entering = vec![pkt(0, 3), pkt(50_000, 3)];
        let leaving = vec![pkt(52_000, 3)];
        let t = reconstruct_queue(entering, leaving, KEY, 10_000);
        let o: Vec<_> =
            t.observations.iter().map(|o| (o.t_ns, o.dropped, o.hop_latency_ns)).collect();
        assert_eq!(o, vec![(0, true, None), (52_000, false, Some(2000))]);
    }

    // ---- polling ----

    /// `n` packets 1 µs apart each leaving 2 µs after it entered.
    fn steady(n: u64) -> (Vec<PacketRecord>, Vec<PacketRecord>) {
        let entering: Vec<_> = (0..n).map(|i| pkt(i * 1000, i)).collect();
        let leaving = (0..n).map(|i| pkt(i * 1000 + 2000, i)).collect();
        (entering, leaving)
    }

    #[test]
    fn a_poll_that_never_breaks_changes_nothing_and_runs_every_poll_packets() {
        let n = 3 * POLL_PACKETS as u64;
        let (entering, leaving) = steady(n);
        let mut polls = 0;
        let polled = reconstruct_queue_with(entering.clone(), leaving.clone(), KEY, 10_000, || {
            polls += 1;
            ControlFlow::<()>::Continue(())
        });
        assert_eq!(
            polled,
            ControlFlow::Continue(reconstruct_queue(entering, leaving, KEY, 10_000))
        );
        // Five passes over n items (entering, leaving, chains, matching, events), one over the
        // 2n events, one poll per POLL_PACKETS items of each, and one after each of three sorts.
        assert_eq!(polls, 5 * 3 + 6 + 3);
    }

    #[test]
    fn a_poll_that_breaks_stops_the_reconstruction_there() {
        let (entering, leaving) = steady(10 * POLL_PACKETS as u64);
        let mut polls = 0;
        let stopped = reconstruct_queue_with(entering, leaving, KEY, 10_000, || {
            polls += 1;
            if polls == 25 { ControlFlow::Break("stop") } else { ControlFlow::Continue(()) }
        });
        assert_eq!(stopped, ControlFlow::Break("stop"));
        assert_eq!(polls, 25);
    }
}
