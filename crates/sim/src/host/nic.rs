//! A host's NIC: the egress port it feeds (`net::port`, which serializes at the NIC's rate)
//! and the root qdisc in front of it. With `fq` ([`Fq`]) the host's packets wait in the
//! qdisc and the port asks it for the next one each time it is free to send, as a driver asks
//! `dev_queue_xmit()`'s qdisc; without, the port's own deep FIFO is the host's `pfifo_fast`.

use crate::host::fq::{Fq, FqSpec, FqVerdict, Next};
use crate::net::port::{Offer, Port, PortId, Start};
use crate::packet::{PacketId, PacketPool};
use crate::time::Time;

/// One of a host's NICs.
pub struct Nic {
    /// The egress port it feeds.
    pub port: PortId,
    /// Its `fq` root qdisc; `None`: the port's FIFO. Boxed: most hosts run none.
    pub fq: Option<Box<Fq>>,
}

impl Nic {
    /// The NIC feeding `port`, with the `fq` that `spec` describes, if any.
    pub fn new(port: PortId, spec: Option<&FqSpec>) -> Nic {
        Nic { port, fq: spec.map(|f| Box::new(Fq::new(f))) }
    }

    /// The host hands packet `id` to this NIC's qdisc at `now`; the port starts sending if it
    /// is idle. The port's counters count the qdisc's drops and peak as its own.
    pub fn offer(
        &mut self,
        port: &mut Port,
        now: Time,
        pool: &mut PacketPool,
        id: PacketId,
    ) -> Offer {
        let Some(fq) = &mut self.fq else { return port.offer(now, pool, id) };
        pool.get_mut(id).enqueued_at = now;
        let edt = pool.get(id).edt;
        match fq.enqueue(pool, id, edt, now) {
            FqVerdict::Dropped(why) => {
                port.stats.drops += 1;
                port.stats.dropped_bytes += pool.get(id).ip_bytes as u64;
                Offer::Dropped { queue: 0, reason: why.into() }
            }
            FqVerdict::Enqueued => {
                port.stats.max_queue_bytes = port.stats.max_queue_bytes.max(fq.bytes());
                Offer::Queued { queue: 0, start: dequeue(fq, port, now, pool) }
            }
        }
    }

    /// The port is free (a serialization ended, or a wake-up came): start its next packet.
    pub fn start_next(&mut self, port: &mut Port, now: Time, pool: &mut PacketPool) -> Start {
        match &mut self.fq {
            Some(fq) => dequeue(fq, port, now, pool),
            None => port.start_next(now, pool),
        }
    }

    /// Packets waiting in the qdisc, if it is the host's own (`fq`); the port counts its FIFO.
    pub fn qdisc_packets(&self) -> usize {
        self.fq.as_ref().map_or(0, |f| f.packets())
    }
}

/// If the port may start a packet, `fq`'s next one starts, or the qdisc's watchdog asks for a
/// wake-up when a paced flow's next packet is due.
#[inline]
fn dequeue(fq: &mut Fq, port: &mut Port, now: Time, pool: &mut PacketPool) -> Start {
    if let Err(busy) = port.may_start(now) {
        return busy;
    }
    match fq.dequeue(pool, now) {
        Next::Packet(id) => port.transmit(now, pool, id),
        Next::Wait(t) => port.wake(t),
        Next::Empty => Start::Nothing,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::port::test_port;
    use crate::packet::{Kind, Packet};

    fn packet(pool: &mut PacketPool, flow: u32, edt: Time) -> PacketId {
        let mut p = Packet::new(Kind::Data, flow, 0, 1, 1500);
        p.edt = edt;
        pool.alloc(p)
    }

    fn queued(o: Offer) -> Start {
        match o {
            Offer::Queued { start, .. } => start,
            Offer::Dropped { reason, .. } => panic!("dropped: {reason:?}"),
        }
    }

    // ---- a NIC with fq ----

    #[test]
    fn fq_nic_holds_a_paced_packet_until_its_departure_time() {
        let (mut port, mut pool) = (test_port(), PacketPool::default());
        let mut nic = Nic::new(0, Some(&FqSpec::linux_default(1500)));
        let (now, edt) = (Time::from_us(10), Time::from_us(30));
        let id = packet(&mut pool, 0, edt);
        // The qdisc's watchdog asks the port to wake at the EDT; nothing is on the wire.
        assert_eq!(queued(nic.offer(&mut port, now, &mut pool, id)), Start::Wait(edt));
        assert_eq!((port.in_tx, nic.qdisc_packets(), port.queues.packets()), (None, 1, 0));
        port.wake_at = None;
        let end = edt + Time(1_230_400);
        assert_eq!(nic.start_next(&mut port, edt, &mut pool), Start::Sending(end));
        assert_eq!((port.in_tx, nic.qdisc_packets()), (Some(id), 0));
    }

    #[test]
    fn fq_nic_queues_behind_a_busy_port_in_the_qdisc_not_the_port() {
        let (mut port, mut pool) = (test_port(), PacketPool::default());
        let mut nic = Nic::new(0, Some(&FqSpec::linux_default(1500)));
        let now = Time::from_us(10);
        let first = packet(&mut pool, 0, Time::ZERO);
        let end = now + Time(1_230_400);
        assert_eq!(queued(nic.offer(&mut port, now, &mut pool, first)), Start::Sending(end));
        let second = packet(&mut pool, 1, Time::ZERO);
        assert_eq!(queued(nic.offer(&mut port, now, &mut pool, second)), Start::Nothing);
        assert_eq!((nic.qdisc_packets(), port.queues.packets()), (1, 0));
        // The port counts the qdisc's peak as its own.
        assert_eq!(port.stats.max_queue_bytes, 1500);
        port.finish_tx(end);
        assert_eq!(
            nic.start_next(&mut port, end, &mut pool),
            Start::Sending(end + Time(1_230_400))
        );
        assert_eq!(port.in_tx, Some(second));
    }

    #[test]
    fn fq_nic_drops_over_its_flow_limit_and_the_port_counts_it() {
        let (mut port, mut pool) = (test_port(), PacketPool::default());
        let spec = FqSpec { flow_limit: 1, ..FqSpec::linux_default(1500) };
        let mut nic = Nic::new(0, Some(&spec));
        let now = Time::from_us(10);
        // One on the wire, one in the flow's queue: the third exceeds `flow_plimit`.
        for _ in 0..2 {
            let id = packet(&mut pool, 0, Time::ZERO);
            queued(nic.offer(&mut port, now, &mut pool, id));
        }
        let id = packet(&mut pool, 0, Time::ZERO);
        assert!(matches!(
            nic.offer(&mut port, now, &mut pool, id),
            Offer::Dropped { queue: 0, .. }
        ));
        assert_eq!((port.stats.drops, port.stats.dropped_bytes), (1, 1500));
    }

    // ---- a NIC without a qdisc of its own ----

    #[test]
    fn pfifo_nic_queues_in_the_port_fifo_and_ignores_departure_times() {
        let (mut port, mut pool) = (test_port(), PacketPool::default());
        let mut nic = Nic::new(0, None);
        let now = Time::from_us(10);
        let first = packet(&mut pool, 0, Time::from_us(30));
        let end = now + Time(1_230_400);
        assert_eq!(queued(nic.offer(&mut port, now, &mut pool, first)), Start::Sending(end));
        let second = packet(&mut pool, 0, Time::ZERO);
        assert_eq!(queued(nic.offer(&mut port, now, &mut pool, second)), Start::Nothing);
        assert_eq!((nic.qdisc_packets(), port.queues.packets()), (0, 1));
    }
}
