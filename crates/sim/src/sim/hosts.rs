//! The world hands hosts their events: packets that reached them, their sockets' timers,
//! their readers' wake-ups; what a socket sends goes out through the host's NIC and its qdisc
//! to the ports (`ports.rs`).

use super::{NO_HOST, World};
use crate::event::Event;
use crate::host::cpu::{Arrival, Work};
use crate::host::socket::{ReceiverSocket, SenderSocket};
use crate::host::tsq::Resume;
use crate::net::port::{Offer, PortId, Start};
use crate::packet::{Kind, NodeId, Packet, PacketId};
use crate::record::DropReason;
use crate::record::intervals::SenderView;
use crate::tcp::receiver::TcpReceiver;
use crate::tcp::sender::{State, TcpSender};
use crate::time::Time;

/// Superseded sender-timer events are swept out of the event heap once they are more than this
/// share of it (amortised O(1) per event). Linux's loss probe, re-armed after new data within
/// what is left of the head's RTO, moves a few µs earlier on many ACKs as the SRTT falls; each
/// move leaves one behind, and every event pays for a deeper heap.
const STALE_SENDER_TIMER_SHARE: usize = 8;

impl World<'_> {
    /// Flow `fi`'s sending socket.
    #[inline]
    pub(super) fn snd(&mut self, fi: usize) -> &mut SenderSocket {
        let s = self.flows[fi].snd;
        &mut self.hosts[s.host as usize].senders[s.index as usize]
    }

    /// Flow `fi`'s receiving socket.
    #[inline]
    pub(super) fn rcv(&mut self, fi: usize) -> &mut ReceiverSocket {
        let r = self.flows[fi].rcv;
        &mut self.hosts[r.host as usize].receivers[r.index as usize]
    }

    /// Flow `fi`'s two ends (its sender's, its receiver's TCP).
    #[inline]
    pub(super) fn ends(&self, fi: usize) -> (&TcpSender, &TcpReceiver) {
        let (s, r) = (self.flows[fi].snd, self.flows[fi].rcv);
        let snd = &self.hosts[s.host as usize].senders[s.index as usize].tcp;
        let rcv = &self.hosts[r.host as usize].receivers[r.index as usize].tcp;
        (snd, rcv)
    }

    /// Port `pid` is free to send: it starts its next packet, from its host's qdisc if it is a
    /// host's NIC.
    #[inline]
    pub(super) fn start_next(&mut self, pid: PortId) -> Start {
        let (now, port) = (self.now, &mut self.net.ports[pid as usize]);
        let h = self.host_of[port.node as usize];
        if h == NO_HOST {
            return port.start_next(now, &mut self.pool);
        }
        let nic = self.hosts[h as usize].nic(pid).expect("a host's port has its NIC");
        nic.start_next(port, now, &mut self.pool)
    }

    /// Packet `id` joins port `pid`'s queue, or its host's qdisc if it is a host's NIC.
    #[inline]
    pub(super) fn enqueue(&mut self, pid: PortId, id: PacketId) -> Offer {
        let (now, port) = (self.now, &mut self.net.ports[pid as usize]);
        let h = self.host_of[port.node as usize];
        if h == NO_HOST {
            return port.offer(now, &mut self.pool, id);
        }
        let nic = self.hosts[h as usize].nic(pid).expect("a host's port has its NIC");
        nic.offer(port, now, &mut self.pool, id)
    }

    /// Data packet `id` left `node`'s NIC (`sent`) or its qdisc dropped it: if it is one of the
    /// host's segments, TCP Small Queues get its bytes back once its skb is done. A sent one
    /// may wake its sender now; after a drop, like `tcp_wfree()`, the sender is woken later,
    /// never inside the send that dropped it.
    #[inline]
    pub(super) fn nic_done(&mut self, node: NodeId, id: PacketId, skb_end: bool, sent: bool) {
        if self.host_of[node as usize] == NO_HOST {
            return; // a switch's port: no socket's packet leaves its host here
        }
        let p = self.pool.get(id);
        let (fi, ip_bytes) = (p.flow as usize, p.ip_bytes);
        if p.kind != Kind::Data || fi >= self.flows.len() {
            return;
        }
        // Only the flow's sending host counts its segments below TCP.
        let s = self.flows[fi].snd;
        let host = &mut self.hosts[s.host as usize];
        if host.node != node {
            return;
        }
        match host.nic_done(s.index, ip_bytes, skb_end, sent) {
            Resume::Now => self.tsq_resume(fi as u32),
            Resume::Later => self.events.push(self.now, Event::TsqResume { flow: fi as u32 }),
            Resume::No => {}
        }
    }

    /// The TSQ tasklet: a throttled sender sends again.
    #[inline]
    pub(super) fn tsq_resume(&mut self, fi: u32) {
        self.sender_acts(fi as usize, |s, now, out| s.tsq_resume(now, out));
    }

    /// A packet of a TCP flow reached host `node`: its CPU, if it has one, takes it from its
    /// NIC's ring later (or the ring drops it); else the host takes it now.
    #[inline]
    pub(super) fn host_receives(&mut self, node: NodeId, p: Packet) {
        let h = self.host_of[node as usize];
        if self.hosts[h as usize].cpu.is_none() {
            return self.host_takes(node, &p);
        }
        let now = self.now;
        let core = self.core_of(h, node, p.flow as usize);
        let cpu = self.hosts[h as usize].cpu.as_deref_mut().expect("checked");
        match cpu.arrive(now, core, p) {
            Arrival::Polled(end) => self.events.push(end, Event::HostCpu { host: h, core }),
            Arrival::Queued => {}
            Arrival::Missed => self.drops.push(now, cpu.nic_port, 0, &p, DropReason::RxMissed),
        }
    }

    /// The core of host `h` (at `node`) that serves flow `fi`'s socket there.
    #[inline]
    fn core_of(&self, h: u32, node: NodeId, fi: usize) -> u32 {
        let host = &self.hosts[h as usize];
        let f = &self.flows[fi];
        let sock = if host.node == self.hosts[f.snd.host as usize].node { f.snd } else { f.rcv };
        debug_assert_eq!(self.hosts[sock.host as usize].node, node);
        host.cpu.as_deref().map_or(0, |c| c.core_of(sock.index))
    }

    /// Core `core` of host `h` ended its work: a poll's packets go up to TCP, an skb's
    /// segments to the host's qdisc.
    pub(super) fn host_cpu(&mut self, h: u32, core: u32) {
        let (now, node) = (self.now, self.hosts[h as usize].node);
        let mut done = std::mem::take(&mut self.cpu_done);
        let cpu =
            self.hosts[h as usize].cpu.as_deref_mut().expect("a HostCpu event's host has a CPU");
        let (work, next) = cpu.finish(now, core, &mut done);
        if let Some(end) = next {
            self.events.push(end, Event::HostCpu { host: h, core });
        }
        match work {
            Some(Work::Received) => {
                for p in done.drain(..) {
                    self.host_takes(node, &p);
                }
            }
            Some(Work::Sent) => self.send_all(node, &mut done),
            None => {}
        }
        self.cpu_done = done;
    }

    /// What a socket on host `node` sent: data waits for the host's CPU, if it has one, to
    /// build its skbs; the rest (ACKs, handshakes: their cost is the receive's) leaves now.
    #[inline]
    fn host_sends(&mut self, node: NodeId, out: &mut Vec<Packet>) {
        let h = self.host_of[node as usize];
        if self.hosts[h as usize].cpu.is_some() {
            let now = self.now;
            out.retain(|p| {
                if p.kind != Kind::Data {
                    return true;
                }
                let core = self.core_of(h, node, p.flow as usize);
                let cpu = self.hosts[h as usize].cpu.as_deref_mut().expect("checked");
                if let Some(end) = cpu.send(now, core, *p) {
                    self.events.push(end, Event::HostCpu { host: h, core });
                }
                false
            });
        }
        self.send_all(node, out);
    }

    /// A packet of a TCP flow is taken by host `node`'s stack.
    #[inline]
    fn host_takes(&mut self, node: NodeId, p: &Packet) {
        let fi = p.flow as usize;
        let (now, flow) = (self.now, p.flow);
        if p.kind != Kind::Data {
            self.receive(node, p);
            return;
        }
        debug_assert_ne!(node, self.hosts[self.flows[fi].snd.host as usize].node);
        let events = &mut self.events;
        let r = self.flows[fi].rcv;
        let sock = &mut self.hosts[r.host as usize].receivers[r.index as usize];
        if sock.arrives(now, flow, p, events) {
            self.receive(node, p);
        }
    }

    /// The reader lets go of the socket (`__release_sock()`): TCP processes the backlog's skbs
    /// in order, each with its own ACK decision, and sends the ACK they deferred when done
    /// (`tcp_release_cb()`). The read then takes what was queued before them, and after
    /// (`tcp_recvmsg()` flushes the backlog when it has copied the queue).
    #[inline]
    fn release_backlog(&mut self, fi: usize) {
        let Some(held) = self.rcv(fi).reader.release() else { return };
        let sock = self.rcv(fi);
        sock.tcp.begin_backlog();
        let node = sock.tcp.node;
        for p in &held {
            self.receive(node, p);
        }
        self.receiver_acts(fi, |r, now, out| r.tcp.release_cb(now, out));
    }

    /// The receiving host hands a batch of data segments to TCP, in the order they arrived.
    #[inline]
    pub(super) fn rx_batch(&mut self, fi: u32) {
        let sock = self.rcv(fi as usize);
        let node = sock.tcp.node;
        let held = sock.reader.take_batch();
        for p in &held {
            self.receive(node, p);
        }
    }

    /// TCP at `node` processes packet `p`.
    #[inline]
    fn receive(&mut self, node: NodeId, p: &Packet) {
        let fi = p.flow as usize;
        let now = self.now;
        let mut out = std::mem::take(&mut self.out);
        let mut read = false;
        // A packet reaches its destination: the SYN and data the receiver's host, the SYN-ACK
        // and ACKs the sender's.
        let at_sender = matches!(p.kind, Kind::SynAck | Kind::Ack);
        debug_assert_eq!(at_sender, node == self.hosts[self.flows[fi].snd.host as usize].node);
        if at_sender {
            let snd = &mut self.snd(fi).tcp;
            let was_done = snd.state == State::Done;
            snd.on_packet(now, p, &mut out);
            if !was_done && snd.state == State::Done {
                self.flow_done(fi);
            }
        } else {
            let r = self.flows[fi].rcv;
            let sock = &mut self.hosts[r.host as usize].receivers[r.index as usize];
            match sock.receive(now, p.flow, p, &mut self.events, &mut out) {
                Some(got) => read = got.read,
                None => {
                    self.out = out;
                    return;
                }
            }
        }
        self.host_sends(node, &mut out);
        self.out = out;
        if at_sender {
            self.sync_sender_timers(fi)
        } else {
            self.sync_delack(fi)
        }
        if let (Some(k), true) = (self.flows[fi].app, read) {
            self.incast_progress(fi, k);
        }
    }

    /// The receiving host answers a SYN it held for its handshake latency.
    #[inline]
    pub(super) fn handshake_answer(&mut self, fi: u32) {
        self.receiver_acts(fi as usize, |r, now, out| r.handshake_answer(now, out));
    }

    /// A slow reader wakes and reads everything queued in order; the read may send an ACK.
    #[inline]
    pub(super) fn app_read(&mut self, fi: u32) {
        let fi = fi as usize;
        self.release_backlog(fi);
        self.receiver_acts(fi, |r, now, out| {
            r.reader.read_done();
            r.tcp.app_read(now, out);
        });
        if let Some(k) = self.flows[fi].app {
            self.incast_progress(fi, k);
        }
        if std::mem::take(&mut self.rcv(fi).reader.done_unread) {
            self.flow_done(fi);
        }
    }

    #[inline]
    pub(super) fn flow_start(&mut self, fi: u32) {
        self.sender_acts(fi as usize, |s, now, out| s.open(now, out));
    }

    /// Flow `fi`'s sender acts now: send what it produced, then re-arm the flow's timers.
    #[inline]
    pub(super) fn sender_acts(
        &mut self,
        fi: usize,
        act: impl FnOnce(&mut TcpSender, Time, &mut Vec<Packet>),
    ) {
        let mut out = std::mem::take(&mut self.out);
        let now = self.now;
        let snd = &mut self.snd(fi).tcp;
        act(snd, now, &mut out);
        let node = snd.src;
        self.host_sends(node, &mut out);
        self.out = out;
        self.sync_sender_timers(fi);
    }

    /// Flow `fi`'s receiving socket acts now: send what it produced, then re-arm the flow's
    /// timers.
    #[inline]
    pub(super) fn receiver_acts(
        &mut self,
        fi: usize,
        act: impl FnOnce(&mut ReceiverSocket, Time, &mut Vec<Packet>),
    ) {
        let mut out = std::mem::take(&mut self.out);
        let now = self.now;
        let sock = self.rcv(fi);
        act(sock, now, &mut out);
        let node = sock.tcp.node;
        self.host_sends(node, &mut out);
        self.out = out;
        self.sync_delack(fi);
    }

    /// Re-arm flow `fi`'s sender timers (retransmit slot, pacing) after its sender acted. Each
    /// end re-arms only its own: the other's deadlines cannot have moved, as only its own
    /// events act on it.
    #[inline]
    fn sync_sender_timers(&mut self, fi: usize) {
        let flow = fi as u32;
        let s = self.flows[fi].snd;
        let snd = &mut self.hosts[s.host as usize].senders[s.index as usize];
        let superseded = snd.arm_timer(flow, &mut self.events);
        snd.arm_pace(flow, &mut self.events);
        // The sweep keeps every other event where it was, the pacing timer's too.
        if let Some(superseded) = superseded {
            self.stale_sender_timers += superseded as usize;
            if self.stale_sender_timers * STALE_SENDER_TIMER_SHARE > self.events.len() {
                self.sweep_stale_sender_timers();
            }
        }
    }

    /// Re-arm flow `fi`'s delayed-ACK timer after its receiver acted.
    #[inline]
    fn sync_delack(&mut self, fi: usize) {
        let r = self.flows[fi].rcv;
        self.hosts[r.host as usize].receivers[r.index as usize]
            .arm_delack(fi as u32, &mut self.events);
    }

    /// Drop the sender-timer events an earlier deadline superseded: a flow's live one is at
    /// its socket's `timer_at`, and one at any other time would pop to find nothing due.
    #[inline]
    fn sweep_stale_sender_timers(&mut self) {
        let (flows, hosts) = (&self.flows, &self.hosts);
        self.events.retain(|t, e| match e {
            Event::SenderTimer { flow } => {
                let s = flows[flow as usize].snd;
                hosts[s.host as usize].senders[s.index as usize].timer_at == Some(t)
            }
            _ => true,
        });
        self.stale_sender_timers = 0;
    }

    #[inline]
    pub(super) fn sender_timer(&mut self, fi: u32, t: Time) {
        let due = self.snd(fi as usize).timer_popped(t);
        self.fire_sender(fi as usize, due);
    }

    #[inline]
    pub(super) fn pace_timer(&mut self, fi: u32, t: Time) {
        let due = self.snd(fi as usize).pace_popped(t);
        self.fire_sender(fi as usize, due);
    }

    /// Run the sender's due timers if `deadline` has come, then re-arm.
    #[inline]
    fn fire_sender(&mut self, fi: usize, deadline: Option<Time>) {
        if deadline.is_some_and(|d| d <= self.now) {
            self.sender_acts(fi, |s, now, out| s.on_timer(now, out));
        } else {
            self.sync_sender_timers(fi);
        }
    }

    #[inline]
    pub(super) fn delack_timer(&mut self, fi: u32, t: Time) {
        let fi = fi as usize;
        let now = self.now;
        if self.rcv(fi).delack_popped(t, now) {
            self.receiver_acts(fi, |r, now, out| r.tcp.on_delack(now, out));
        } else {
            self.sync_delack(fi);
        }
    }

    #[inline]
    fn flow_done(&mut self, fi: usize) {
        if self.flows[fi].app.is_some() {
            return; // a persistent incast connection between responses
        }
        let sock = self.rcv(fi);
        if sock.tcp.has_unread() {
            sock.reader.done_unread = true; // done when the application has read it all
            return;
        }
        self.close_interval(fi);
        self.active -= 1;
    }

    /// iperf3-style interval report of one flow (sender's view: bytes newly acknowledged).
    #[inline]
    fn close_interval(&mut self, fi: usize) {
        let s = self.flows[fi].snd;
        let snd = &self.hosts[s.host as usize].senders[s.index as usize].tcp;
        let view = SenderView {
            acked: snd.snd_una,
            retransmits: snd.stats.retransmits,
            cwnd_bytes: snd.cwnd_bytes(),
            srtt_us: snd.rtt.srtt_us() as u64,
            pacing_rate: snd.tp.pacing_rate,
            done: snd.state == State::Done,
        };
        self.intervals.close(fi, &mut self.flows[fi].iv, self.now, view);
    }

    #[inline]
    pub(super) fn interval(&mut self, fi: u32) {
        let fi = fi as usize;
        if !self.flows[fi].iv.open {
            return;
        }
        self.close_interval(fi);
        self.events.push(self.now + self.scn.interval, Event::Interval { flow: fi as u32 });
    }
}
