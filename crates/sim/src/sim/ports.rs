//! The world hands ports their events: a serialization done, a packet at the far end of a
//! link, a shaper's wake-up. A switch forwards what arrives; a host takes it (`hosts.rs`).

use super::{NO_HOST, World};
use crate::app::burst::{BurstSource, NO_PORT, SourceLink};
use crate::event::Event;
use crate::net::port::{Offer, PortId, Start};
use crate::net::topology::{Network, NodeKind};
use crate::packet::{Kind, NO_HOP, NodeId, Packet, PacketId};
use crate::record::int::Hop;

impl World<'_> {
    #[inline]
    pub(super) fn tx_done(&mut self, pid: PortId) {
        let now = self.now;
        let port = &mut self.net.ports[pid as usize];
        if port.finish_tx(now) {
            let head = port.pipe.front().unwrap().0;
            self.events.push(head, Event::Arrival { port: pid });
        }
        let (_, sent) = *port.pipe.back().expect("just put on the wire");
        let (node, skb_end, recorded) = (port.node, port.tx_skb_end, port.recorded);
        let start = self.start_next(pid);
        self.schedule_start(pid, start);
        if recorded {
            self.record_queue(pid);
        }
        if self.host_of[node as usize] != NO_HOST {
            self.nic_done(node, sent, skb_end, true);
        }
    }

    #[inline]
    pub(super) fn arrival(&mut self, pid: PortId) {
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
    #[inline]
    fn deliver(&mut self, node: NodeId, id: PacketId) {
        // `host_of`, 4 bytes a node, stays in the cache; `net.nodes` (name and qdisc spec)
        // missed it (1.3 % of the leaf-spine benchmark's last-level read misses).
        if self.host_of[node as usize] == NO_HOST {
            let pid = self.net.take_step(self.pool.get_mut(id));
            self.offer(pid, id);
            return;
        }
        let p = *self.pool.get(id);
        self.pool.free(id);
        if p.kind == Kind::Udp {
            self.bursts[p.ack as usize].received += 1;
            return;
        }
        self.host_receives(node, p);
    }

    #[inline]
    pub(super) fn offer(&mut self, pid: PortId, id: PacketId) {
        let now = self.now;
        let node = self.net.ports[pid as usize].node;
        match self.enqueue(pid, id) {
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
                // A segment dropped by its own host's qdisc (fq limits) leaves TSQ's count too.
                self.nic_done(node, id, p.gso_index + 1 >= p.gso_segs, false);
                self.pool.free(id);
                self.drops.push(now, pid, queue, &p, reason);
            }
        }
        if self.net.ports[pid as usize].recorded {
            self.record_queue(pid);
        }
    }

    #[inline]
    fn schedule_start(&mut self, pid: PortId, start: Start) {
        match start {
            Start::Sending(done) => {
                if let Some(int) = &mut self.int {
                    int.egress(self.now, pid, &self.net.ports[pid as usize], &self.pool);
                }
                let port = &mut self.net.ports[pid as usize];
                // A host's data segment needs its TxDone: TCP Small Queues get its bytes back
                // when it has left the NIC (`nic_done`). A host's `fq` decides when its next
                // packet starts.
                let h = self.host_of[port.node as usize];
                let host_held = h != NO_HOST
                    && (port.in_tx.is_some_and(|id| self.pool.get(id).kind == Kind::Data)
                        || self.hosts[h as usize].qdisc(pid).is_some());
                if !host_held && port.can_cut_through() {
                    if port.cut_through() {
                        let head = port.pipe.front().unwrap().0;
                        self.events.push(head, Event::Arrival { port: pid });
                    }
                } else {
                    self.events.push(done, Event::TxDone { port: pid });
                }
            }
            Start::Wait(at) => self.events.push(at, Event::PortWake { port: pid }),
            Start::Nothing => {}
        }
    }

    /// A shaper's tokens for the head packet are due.
    #[inline]
    pub(super) fn port_wake(&mut self, pid: PortId) {
        let now = self.now;
        let port = &mut self.net.ports[pid as usize];
        if port.wake_at.is_some_and(|t| t <= now) {
            port.wake_at = None;
        }
        let start = self.start_next(pid);
        self.schedule_start(pid, start);
        if self.net.ports[pid as usize].recorded {
            self.record_queue(pid);
        }
    }

    #[inline]
    fn record_queue(&mut self, pid: PortId) {
        let port = &self.net.ports[pid as usize];
        let fq = match self.host_of[port.node as usize] {
            NO_HOST => None,
            h => self.hosts[h as usize].qdisc(pid),
        };
        self.queue.record(self.now, pid, port, fq);
    }

    /// Packets a socket on host `node` produced leave by the host's first port on their route.
    #[inline]
    pub(super) fn send_all(&mut self, node: NodeId, out: &mut Vec<Packet>) {
        for mut p in out.drain(..) {
            debug_assert_eq!(p.src, node);
            p.hop = self.net.first_hop(p.flow, p.src);
            let pid = self.net.take_step(&mut p);
            let id = self.pool.alloc(p);
            self.offer(pid, id);
        }
    }

    /// A burst source's next datagram leaves it or, for a source alone on its link, reaches
    /// the link's far end.
    #[inline]
    pub(super) fn burst_emit(&mut self, si: u32) {
        let k = si as usize;
        let Some(link) = self.bursts[k].link else { return self.burst_depart(si) };
        let n_tcp = self.flows.len();
        let b = &mut self.bursts[k];
        let p = datagram(b, si, n_tcp, link.src, link.sink, link.then);
        b.sent += 1;
        let next = b.next_departure();
        let id = self.pool.alloc(p);
        if let Some(int) = &mut self.int {
            int.arrived(id, link.up);
        }
        // The next arrival is scheduled when the link's own would have been: before this
        // datagram is handed on if the next one has left already (the link's arrival chain),
        // after it otherwise (at its departure, after everything scheduled now).
        let early = next.filter(|&t| t <= self.now);
        if let Some(t) = early {
            self.events.push(t + link.lead, Event::BurstEmit { source: si });
        }
        if link.next == NO_PORT {
            self.deliver(link.sink, id);
        } else {
            self.offer(link.next, id);
        }
        match next {
            Some(_) if early.is_some() => {}
            Some(t) => self.events.push(t + link.lead, Event::BurstEmit { source: si }),
            None => self.active -= 1,
        }
    }

    /// A datagram of a source that shares its link leaves its host now: it joins the host's
    /// NIC port like a socket's packet, so the port's one wire sends one packet at a time, in
    /// time order (put straight on the wire, it overlapped a segment being sent).
    #[inline(never)]
    fn burst_depart(&mut self, si: u32) {
        let n_tcp = self.flows.len();
        let b = &mut self.bursts[si as usize];
        let (src, _, sink) = self.net.burst_hosts[b.index as usize];
        let hop = self.net.first_hop((n_tcp + b.index as usize) as u32, src);
        let mut p = datagram(b, si, n_tcp, src, sink, hop);
        b.sent += 1;
        let next = b.next_departure();
        let pid = self.net.take_step(&mut p);
        let id = self.pool.alloc(p);
        self.offer(pid, id);
        match next {
            Some(t) => self.events.push(t, Event::BurstEmit { source: si }),
            None => self.active -= 1,
        }
    }
}

/// The next datagram of source `b`, at `slot` in `World::bursts` after `n_tcp` TCP flows,
/// whose next step at the far end of its link is `hop`.
#[inline]
fn datagram(
    b: &BurstSource,
    slot: u32,
    n_tcp: usize,
    src: NodeId,
    sink: NodeId,
    hop: u32,
) -> Packet {
    let flow = (n_tcp + b.index as usize) as u32;
    let mut p = Packet::new(Kind::Udp, flow, src, sink, b.packet_size);
    // The sink counts it by its source's slot, read from the datagram (`Packet::ack`).
    p.ack = u64::from(slot);
    p.payload = b.packet_size - crate::packet::IPV4_HEADER_BYTES - crate::packet::UDP_HEADER_BYTES;
    p.dscp = b.dscp;
    p.hop = hop;
    p
}

/// Give each burst source its link if it has it to itself: no other source and no TCP flow
/// leaves by it (`n_tcp` TCP flows come first in `net.routes`). On a shared link the
/// datagrams join its port's queue with the others' packets (`burst_depart`).
pub(super) fn attach_source_links(net: &Network, n_tcp: usize, bursts: &mut [BurstSource]) {
    let mut users = vec![0u32; net.ports.len()];
    for (_, r) in &net.routes[..n_tcp] {
        for first in [r.forward.first(), r.reverse.first()].into_iter().flatten() {
            users[*first as usize] += 1;
        }
    }
    for &(_, up, _) in &net.burst_hosts {
        users[up as usize] += 1;
    }
    for b in bursts.iter_mut() {
        let k = b.index as usize;
        let (src, up, sink) = net.burst_hosts[k];
        if users[up as usize] != 1 {
            continue;
        }
        let port = &net.ports[up as usize];
        let second = net.hops[net.first_hop((n_tcp + k) as u32, src) as usize].next;
        let (next, then) = match net.nodes[port.peer as usize].kind {
            NodeKind::Switch => (net.hops[second as usize].port, net.hops[second as usize].next),
            NodeKind::Host => (NO_PORT, NO_HOP),
        };
        let lead = port.serialization(b.packet_size) + port.delay;
        b.link = Some(SourceLink { lead, up, next, then, src, sink });
    }
}
