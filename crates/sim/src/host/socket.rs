//! A host's TCP sockets: each end of a connection with the host-side state around it — the
//! sender's timers and its pacing timer's lateness, the receiver's delayed-ACK timer and the
//! application that reads it ([`Reader`]).

use crate::event::{Event, EventQueue};
use crate::host::rx::{Arrival, Reader};
use crate::latency::Latency;
use crate::packet::{FlowId, Kind, Packet};
use crate::rng;
use crate::tcp::config::FlowSpec;
use crate::tcp::receiver::TcpReceiver;
use crate::tcp::sender::TcpSender;
use crate::time::Time;

/// A connection's sending end on its host.
pub struct SenderSocket {
    pub tcp: TcpSender,
    /// The pending sender-timer event (earliest known), for lazy re-arming.
    pub timer_at: Option<Time>,
    pace_at: Option<Time>,
    /// How late the pacing timer runs the sender (`pacing_latency`), its draws, and the
    /// sender's departure time with when its timer runs.
    pacing_latency: Latency,
    pacing_rng: rng::Stream,
    pace_runs: Option<(Time, Time)>,
}

impl SenderSocket {
    /// Connection `flow`'s sender, its pacing-latency stream seeded from the run's `seed`.
    #[inline]
    pub fn new(tcp: TcpSender, spec: &FlowSpec, seed: u64, flow: FlowId) -> SenderSocket {
        SenderSocket {
            tcp,
            timer_at: None,
            pace_at: None,
            pacing_latency: spec.pacing_latency.clone(),
            pacing_rng: rng::stream(seed, "pacing-latency", u64::from(flow)),
            pace_runs: None,
        }
    }

    /// Lazy timers: push an event only when the deadline moved earlier than every pending one
    /// (a popped event whose deadline moved later re-arms itself). `None` if none was pushed;
    /// else whether the new event superseded a pending one.
    #[inline]
    pub fn arm_timer(&mut self, flow: FlowId, events: &mut EventQueue) -> Option<bool> {
        let d = self.tcp.timer_deadline()?;
        if self.timer_at.is_some_and(|t| t <= d) {
            return None;
        }
        events.push(d, Event::SenderTimer { flow });
        Some(self.timer_at.replace(d).is_some())
    }

    /// The pacing timer runs the sender late by one draw per departure time it is armed for
    /// (`tcp_pacing_check()` does not re-arm a queued timer).
    #[inline]
    pub fn arm_pace(&mut self, flow: FlowId, events: &mut EventQueue) {
        self.pace_runs = match (self.tcp.pace_deadline(), self.pace_runs) {
            (None, _) => None,
            (Some(d), Some((armed_for, at))) if armed_for == d => Some((d, at)),
            (Some(d), _) => Some((d, d + self.pacing_latency.draw(&mut self.pacing_rng))),
        };
        if let Some((_, at)) = self.pace_runs
            && self.pace_at.is_none_or(|t| at < t)
        {
            self.pace_at = Some(at);
            events.push(at, Event::PaceTimer { flow });
        }
    }

    /// A sender-timer event for `t` popped: when the sender's timers are due.
    #[inline]
    pub fn timer_popped(&mut self, t: Time) -> Option<Time> {
        if self.timer_at == Some(t) {
            self.timer_at = None;
        }
        self.tcp.timer_deadline()
    }

    /// A pacing-timer event for `t` popped: when the pacing timer runs the sender.
    #[inline]
    pub fn pace_popped(&mut self, t: Time) -> Option<Time> {
        if self.pace_at == Some(t) {
            self.pace_at = None;
        }
        self.pace_runs.map(|(_, at)| at)
    }
}

/// A connection's receiving end on its host: TCP, its delayed-ACK timer, and the host side of
/// the socket (its reader, backlog, batching, handshake).
pub struct ReceiverSocket {
    pub tcp: TcpReceiver,
    delack_at: Option<Time>,
    pub reader: Reader,
}

/// What became of a segment the receiving socket processed.
pub struct Received {
    /// The application read data now (a reader that reads every segment at once).
    pub read: bool,
}

impl ReceiverSocket {
    #[inline]
    pub fn new(tcp: TcpReceiver, reader: Reader) -> ReceiverSocket {
        ReceiverSocket { tcp, delack_at: None, reader }
    }

    /// A data segment of connection `flow` reached the host: TCP gets it now (true), or once
    /// the reader lets go of the socket, or with the host's next receive batch.
    #[inline]
    pub fn arrives(
        &mut self,
        now: Time,
        flow: FlowId,
        p: &Packet,
        events: &mut EventQueue,
    ) -> bool {
        match self.reader.data_arrives(now, p) {
            Arrival::Backlogged | Arrival::Batched { goes_up: None } => false,
            Arrival::Batched { goes_up: Some(at) } => {
                events.push(at, Event::RxBatch { flow });
                false
            }
            Arrival::Now => true,
        }
    }

    /// TCP processes `p`, and the application reads or is woken; what TCP sends goes to
    /// `out`. `None` if the host holds a SYN for its handshake latency.
    #[inline]
    pub fn receive(
        &mut self,
        now: Time,
        flow: FlowId,
        p: &Packet,
        events: &mut EventQueue,
        out: &mut Vec<Packet>,
    ) -> Option<Received> {
        if p.kind == Kind::Syn
            && let Some(answer) = self.reader.hold_syn(now, *p)
        {
            // The host answers later: the SYN waits until then.
            if let Some(at) = answer {
                events.push(at, Event::HandshakeAnswer { flow });
            }
            return None;
        }
        self.tcp.on_packet(now, p, out);
        let read_now = self.reader.reads_at_once();
        if p.kind == Kind::Data {
            if read_now {
                self.tcp.app_read(now, out);
            } else if let Some(at) = self.reader.wake(now, self.tcp.has_unread()) {
                // The application sleeps in recv(); data wakes it `read_latency` later.
                events.push(at, Event::AppRead { flow });
            }
        }
        Some(Received { read: read_now && p.kind == Kind::Data })
    }

    /// The host answers the SYN it held for its handshake latency.
    #[inline]
    pub fn handshake_answer(&mut self, now: Time, out: &mut Vec<Packet>) {
        if let Some(syn) = self.reader.take_syn() {
            self.tcp.on_packet(now, &syn, out);
        }
    }

    /// Push a delayed-ACK event when its deadline moved earlier than the pending one.
    #[inline]
    pub fn arm_delack(&mut self, flow: FlowId, events: &mut EventQueue) {
        if let Some(d) = self.tcp.delack_deadline()
            && self.delack_at.is_none_or(|t| d < t)
        {
            self.delack_at = Some(d);
            events.push(d, Event::DelAckTimer { flow });
        }
    }

    /// A delayed-ACK event for `t` popped: whether the delayed ACK is due at `now`.
    #[inline]
    pub fn delack_popped(&mut self, t: Time, now: Time) -> bool {
        if self.delack_at == Some(t) {
            self.delack_at = None;
        }
        self.tcp.delack_deadline().is_some_and(|d| d <= now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::Host;
    use crate::host::tsq::Resume;

    fn spec() -> FlowSpec {
        FlowSpec::linux_default("cubic")
    }

    /// Flow 0's sender on node 0, its SYN sent at `t = 0`.
    fn opened_sender() -> (SenderSocket, Vec<Packet>) {
        let mut snd = SenderSocket::new(TcpSender::new(0, 0, 1, &spec(), 1500), &spec(), 1, 0);
        let mut out = Vec::new();
        snd.tcp.open(Time::ZERO, &mut out);
        (snd, out)
    }

    // ---- the sender's timers ----

    #[test]
    fn sender_timer_is_pushed_once_per_earlier_deadline() {
        let (mut snd, _) = opened_sender();
        let deadline = snd.tcp.timer_deadline().expect("the SYN's retransmission timer");
        let mut events = EventQueue::default();
        assert_eq!(snd.arm_timer(0, &mut events), Some(false));
        // The same deadline again: the pending event covers it.
        assert_eq!(snd.arm_timer(0, &mut events), None);
        assert_eq!(events.len(), 1);
        assert_eq!(events.pop(), Some((deadline, Event::SenderTimer { flow: 0 })));
        // The popped event clears the pending mark, so the next arming pushes again.
        assert_eq!(snd.timer_popped(deadline), Some(deadline));
        assert_eq!(snd.arm_timer(0, &mut events), Some(false));
    }

    #[test]
    fn a_stale_sender_timer_event_leaves_the_live_one_pending() {
        let (mut snd, _) = opened_sender();
        let deadline = snd.tcp.timer_deadline().unwrap();
        let mut events = EventQueue::default();
        snd.arm_timer(0, &mut events);
        // An event for an earlier instant than the live one pops (superseded long ago).
        assert_eq!(snd.timer_popped(Time::from_ns(1)), Some(deadline));
        assert_eq!(snd.timer_at, Some(deadline));
        assert_eq!(snd.arm_timer(0, &mut events), None);
    }

    // ---- the receiving host ----

    #[test]
    fn a_host_with_handshake_latency_holds_the_syn_then_answers_it() {
        let (_, syn) = opened_sender();
        let mut rspec = spec();
        rspec.handshake_latency = Latency::Fixed(Time::from_ms(2));
        let rcv = TcpReceiver::new(0, 1, 0, &rspec, 1500);
        let mut sock = ReceiverSocket::new(rcv, Reader::new(&rspec, 1, 0));
        let (mut events, mut out) = (EventQueue::default(), Vec::new());
        let now = Time::from_us(5);
        assert!(sock.receive(now, 0, &syn[0], &mut events, &mut out).is_none());
        assert!(out.is_empty(), "no SYN-ACK before the host answers");
        let answer = now + Time::from_ms(2);
        assert_eq!(events.pop(), Some((answer, Event::HandshakeAnswer { flow: 0 })));
        sock.handshake_answer(answer, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].kind, Kind::SynAck);
    }

    #[test]
    fn a_host_answers_at_once_without_handshake_latency() {
        let (_, syn) = opened_sender();
        let rcv = TcpReceiver::new(0, 1, 0, &spec(), 1500);
        let mut sock = ReceiverSocket::new(rcv, Reader::new(&spec(), 1, 0));
        let (mut events, mut out) = (EventQueue::default(), Vec::new());
        let got = sock.receive(Time::ZERO, 0, &syn[0], &mut events, &mut out);
        assert!(got.is_some_and(|g| !g.read), "a SYN is not data the application reads");
        assert_eq!(out.iter().map(|p| p.kind).collect::<Vec<_>>(), [Kind::SynAck]);
        assert!(events.is_empty());
    }

    #[test]
    fn a_host_numbers_its_sockets_in_the_order_they_open() {
        let mut host = Host::new(3, Vec::new());
        let (a, _) = opened_sender();
        let (b, _) = opened_sender();
        assert_eq!((host.add_sender(a), host.add_sender(b)), (0, 1));
        let rcv = TcpReceiver::new(0, 3, 0, &spec(), 1500);
        assert_eq!(host.add_receiver(ReceiverSocket::new(rcv, Reader::new(&spec(), 1, 0))), 0);
        assert_eq!((host.node, host.senders.len(), host.receivers.len()), (3, 2, 1));
    }

    #[test]
    fn a_host_puts_tcp_small_queues_in_force_and_frees_what_its_nic_sent() {
        let mut host = Host::new(0, Vec::new());
        let (snd, _) = opened_sender();
        assert!(!snd.tcp.tsq.enabled(), "a socket alone has no NIC to report to it");
        let s = host.add_sender(snd);
        let tsq = &mut host.senders[s as usize].tcp.tsq;
        assert!(tsq.enabled());
        tsq.handed_down(1500);
        assert_eq!(host.nic_done(s, 1500, true, true), Resume::Now);
        assert!(host.senders[s as usize].tcp.tsq.is_empty());
    }
}
