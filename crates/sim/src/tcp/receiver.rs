//! The receiving side of a TCP connection: in-order delivery to the application, the
//! out-of-order queue and SACK blocks (RFC 2018), delayed ACKs and compressed SACKs as Linux
//! sends them (`net/ipv4/tcp_input.c` `__tcp_ack_snd_check()`, `tcp_event_data_recv()`), and
//! the advertised window ([`crate::tcp::rwnd`]).
//!
//! The application (iperf3's receiver) reads every in-order byte at once.

use crate::packet::{Ecn, FlowId, Kind, MAX_SACK_BLOCKS, NodeId, Packet, SeqRange};
use crate::tcp::config::FlowSpec;
use crate::tcp::rtt::TCP_RTO_MIN;
use crate::tcp::rwnd::{RcvBufTuning, RcvWindow, RcvWindowConfig};
use crate::tcp::sender::TCP_FASTRETRANS_THRESH;
use crate::tcp::{MAX_SKB_FRAGS, SYN_BYTES, TCP_TS_TICK, ack_bytes, mss_from_mtu, timer_wheel};
use crate::time::Time;

mod ofo;
mod rmem;
use ofo::OfoQueue;
use rmem::Rmem;
pub use rmem::RmemStats;

/// `TCP_ATO_MIN` = `TCP_DELACK_MIN` = HZ/25 = 40 ms (`include/net/tcp.h`): the delayed-ACK timeout.
pub const TCP_DELACK_MIN: Time = Time::from_ms(40);
/// `TCP_DELACK_MAX` = HZ/5 = 200 ms (`include/net/tcp.h`).
pub const TCP_DELACK_MAX: Time = Time::from_ms(200);
/// `TCP_MAX_QUICKACKS` = 16 (`include/net/tcp.h`): ACKs sent at once after the first data.
pub const TCP_MAX_QUICKACKS: u32 = 16;
/// `net.ipv4.tcp_pingpong_thresh` default 1 (`tcp_sk_init()` in `net/ipv4/tcp_ipv4.c`; the
/// constant `TCP_PINGPONG_THRESH` before it became a sysctl): after this many replies sent
/// within `ato` of received data a connection is interactive (`inet_csk_in_pingpong_mode()`).
pub const TCP_PINGPONG_THRESH: u8 = 1;
/// `net.ipv4.tcp_comp_sack_nr` default (`tcp_sk_init()`, `Documentation/networking/
/// ip-sysctl.rst`): at most 44 duplicate ACKs wait to go out as one; 0 turns SACK
/// compression off.
pub const TCP_COMP_SACK_NR: u32 = 44;
/// `net.ipv4.tcp_comp_sack_delay_ns` default, 1 ms ("to meet TSO autosizing period"): the cap
/// on the compression timer, which is otherwise 5 % of the RTT.
pub const TCP_COMP_SACK_DELAY: Time = Time::from_ms(1);
/// `net.ipv4.tcp_comp_sack_slack_ns` default, 100 µs: the compression hrtimer's slack
/// (`hrtimer_start_range_ns()`); alone on its CPU it fires at the end of the range.
pub const TCP_COMP_SACK_SLACK: Time = Time::from_us(100);

#[derive(Clone, Copy, Debug, Default)]
pub struct ReceiverStats {
    /// Bytes delivered in order to the application.
    pub delivered: u64,
    /// When the last byte of the transfer reached the application.
    pub done_at: Option<Time>,
    pub acks_sent: u64,
    pub dup_segments: u64,
}

/// How this receiver echoes CE marks (negotiated with `tcp_ecn`; DCTCP's receiver is part of
/// its congestion control in Linux).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum EcnEcho {
    Off,
    Classic { demand_cwr: bool },
    Dctcp { ce: bool, prior_rcv_nxt: u64 },
}

pub struct TcpReceiver {
    pub flow: FlowId,
    /// This host (the receiver) and its peer (the sender).
    pub node: NodeId,
    pub peer: NodeId,
    established: bool,
    pub rcv_nxt: u64,
    /// Out-of-order ranges above `rcv_nxt`, and their SACK blocks' order (RFC 2018 §4).
    ofo: OfoQueue,
    /// Receive memory charged per skb, when the host's skb size is given (`skb_truesize`).
    rmem: Option<Rmem>,
    win: RcvWindow,
    rcv_mss: u32,
    /// `rcv_nxt` when the last ACK was sent (`rcv_wup`).
    rcv_wup: u64,
    quick: u32,
    quickack_route: bool,
    delack: Option<Time>,
    /// One jiffy when timers run on the kernel's timer wheel, else exact timers.
    jiffy: Option<Time>,
    /// The application reads only when woken, `read_latency` after data is queued; in-order
    /// data waits unread in between (`FlowSpec::read_latency` > 0).
    slow_reader: bool,
    /// A segment shorter than `rcv_mss` arrived (`ICSK_ACK_PUSHED`): the read that drains it
    /// ACKs at once, unless the connection is interactive. A second one before an ACK went out
    /// (`ICSK_ACK_PUSHED2`) ACKs at the read either way. Sending an ACK clears both.
    pushed: bool,
    pushed2: bool,
    /// Replies the application sent within `ato` of received data (`icsk_ack.pingpong`); from
    /// `TCP_PINGPONG_THRESH` on the connection is interactive and sends no quick ACKs.
    pingpong: u8,
    /// An earlier segment of the GSO skb being received asked for an immediate ACK.
    skb_ack_now: bool,
    /// TCP is working through the socket's backlog for the reader that held it
    /// (`__release_sock()`): an ACK the data asks for waits for the release
    /// (`TCP_ACK_DEFERRED`, `net.ipv4.tcp_backlog_ack_defer` = 1, Linux ≥ 6.7); SACK
    /// compression's first duplicate ACKs do not (`__tcp_ack_snd_check()` jumps past the
    /// deferral to `send_now`).
    owned: bool,
    ack_deferred: bool,
    /// Data came since the last ACK went out (`inet_csk_ack_scheduled()`).
    ack_scheduled: bool,
    /// SACK compression (`tcp_comp_sack_nr`; 0 = off): duplicate ACKs sent at once for the
    /// current `rcv_nxt` (`dup_ack_counter`, for `compressed_ack_rcv_nxt`), ACKs held back
    /// since the last one sent (`compressed_ack`), and when the held-back ones go out.
    comp_sack_nr: u32,
    dup_ack_counter: u32,
    compressed_ack_rcv_nxt: u64,
    compressed_ack: u32,
    comp_sack_at: Option<Time>,
    /// A duplicate segment to report as the first SACK block of the next ACK (D-SACK, RFC 2883
    /// §4; `tcp_dsack_set()`, `net.ipv4.tcp_dsack` = 1).
    dsack: Option<SeqRange>,
    last_data_at: Option<Time>,
    /// Peer TSval to echo (`ts_recent`).
    ts_recent: Time,
    /// Receiver RTT estimate (`tp->rcv_rtt_est.rtt_us`).
    rcv_rtt: Option<Time>,
    /// 6.18's estimate also samples the time a window takes to arrive (`tcp_rcv_rtt_measure()`:
    /// `rcv_rtt_est.seq`, `.time`) and takes each echoed TSval tick once (`rcv_rtt_last_tsecr`).
    rtt_est_seq: u64,
    rtt_est_time: Option<Time>,
    rcv_rtt_last_tsecr: Option<u64>,
    size: Option<u64>,
    ecn: EcnEcho,
    pub stats: ReceiverStats,
}

impl TcpReceiver {
    pub fn new(flow: FlowId, node: NodeId, peer: NodeId, spec: &FlowSpec, mtu: u32) -> TcpReceiver {
        let advmss = mss_from_mtu(mtu);
        let cfg = RcvWindowConfig {
            tcp_rmem: spec.tcp_rmem,
            rmem_max: spec.rmem_max,
            model: spec.window_model,
            skb_ratio: spec.skb_scaling_ratio,
            tuning: spec.rcvbuf_tuning,
            initrwnd: spec.initrwnd,
            advmss,
        };
        TcpReceiver {
            flow,
            node,
            peer,
            established: false,
            rcv_nxt: 0,
            ofo: OfoQueue::default(),
            rmem: spec.skb_truesize.map(|t| Rmem::new(t as u64)),
            win: RcvWindow::new(&cfg),
            rcv_mss: advmss,
            rcv_wup: 0,
            quick: 0,
            quickack_route: spec.quickack,
            delack: None,
            jiffy: spec.timer_jiffy(),
            slow_reader: !spec.read_latency.is_zero(),
            pushed: false,
            pushed2: false,
            pingpong: 0,
            skb_ack_now: false,
            owned: false,
            ack_deferred: false,
            ack_scheduled: false,
            comp_sack_nr: spec.comp_sack_nr,
            dup_ack_counter: 0,
            compressed_ack_rcv_nxt: 0,
            compressed_ack: 0,
            comp_sack_at: None,
            dsack: None,
            last_data_at: None,
            ts_recent: Time::ZERO,
            rcv_rtt: None,
            rtt_est_seq: 0,
            rtt_est_time: None,
            rcv_rtt_last_tsecr: None,
            size: spec.size_bytes,
            ecn: if !spec.ecn
                && !crate::tcp::cc::by_name(&spec.cca)
                    .is_some_and(|c| crate::tcp::cc::CongestionOps::needs_ecn(&c))
            {
                EcnEcho::Off
            } else if spec.cca == "dctcp" {
                EcnEcho::Dctcp { ce: false, prior_rcv_nxt: 0 }
            } else {
                EcnEcho::Classic { demand_cwr: false }
            },
            stats: ReceiverStats::default(),
        }
    }

    pub fn window(&self) -> &RcvWindow {
        &self.win
    }

    /// When the delayed-ACK timer is due, if armed.
    /// The earlier of the delayed-ACK timer and the SACK-compression timer.
    pub fn delack_deadline(&self) -> Option<Time> {
        match (self.delack, self.comp_sack_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    pub fn on_packet(&mut self, now: Time, p: &Packet, out: &mut Vec<Packet>) {
        match p.kind {
            Kind::Syn => self.on_syn(now, p, out),
            Kind::Data => self.on_data(now, p, out),
            _ => {}
        }
    }

    /// Passive open: answer every SYN (a retransmitted one too) with a SYN-ACK carrying our
    /// window scale and an unscaled window (RFC 7323 §2.2).
    fn on_syn(&mut self, now: Time, p: &Packet, out: &mut Vec<Packet>) {
        self.established = true;
        self.ts_recent = p.ts_val;
        let mut a = Packet::new(Kind::SynAck, self.flow, self.node, self.peer, SYN_BYTES);
        a.rwnd = self.win.syn_window();
        a.ts_val = now;
        a.ts_ecr = p.ts_val;
        a.dscp = p.dscp;
        out.push(a);
    }

    fn on_data(&mut self, now: Time, p: &Packet, out: &mut Vec<Packet>) {
        if !self.established {
            return;
        }
        let (start, end) = (p.seq, p.seq + p.payload as u64);
        if !self.rmem_schedule(start, end) {
            return;
        }
        self.ack_scheduled = true;
        // Timestamps: remember the TSval of a segment at or before the last ACKed point, so a
        // delayed ACK echoes the first of the segments it covers (RFC 7323 §4.3,
        // `tcp_store_ts_recent()` with `!after(seq, rcv_wup)`).
        if start <= self.rcv_wup {
            self.ts_recent = p.ts_val;
        }
        if self.win.tuning() == RcvBufTuning::Linux6_18 {
            self.rcv_rtt_measure_ts(now, p);
        } else if p.ts_ecr > Time::ZERO && now > p.ts_ecr {
            let sample = now - p.ts_ecr;
            // `tcp_rcv_rtt_update()`: EWMA with gain 1/8.
            self.rcv_rtt = Some(match self.rcv_rtt {
                None => sample,
                Some(r) => Time((r.ps() * 7 + sample.ps()) / 8),
            });
        }
        let mut ack_now = self.quickack_route;
        let duplicate = end <= self.rcv_nxt;
        if duplicate {
            // A duplicate: ACK at once and enter quick-ack mode (`tcp_data_queue()`
            // out_of_window path, `tcp_send_dupack()`).
            self.stats.dup_segments += 1;
            self.enter_quickack_mode(TCP_MAX_QUICKACKS);
            self.dsack = Some(SeqRange { start, end });
            ack_now = true;
        } else if start <= self.rcv_nxt {
            self.event_data_recv(now);
            let had_ofo = !self.ofo.is_empty();
            // A window that grew asks for one quick ACK (`tcp_grow_window()`).
            if self.win.on_data(p.payload, self.held_with(p.payload as u64)) {
                self.quick = self.quick.max(1);
            }
            self.advance(end);
            if self.win.tuning() == RcvBufTuning::Linux6_18 {
                self.rcv_rtt_measure(now);
            }
            // Filling the last hole: ACK now (`tcp_data_queue()`, RFC 5681 §4.2). Filling one
            // of several moves `rcv_nxt`, which restarts SACK compression's count below, so
            // that ACK leaves at once too.
            ack_now |= had_ofo && self.ofo.is_empty();
            // A segment shorter than rcv_mss sets `ICSK_ACK_PUSHED`; once the application has
            // drained it, `tcp_cleanup_rbuf()` ACKs at once (the tail of a transfer).
            if self.slow_reader {
                if p.payload < self.rcv_mss {
                    self.pushed2 |= self.pushed;
                    self.pushed = true;
                }
            } else {
                ack_now |= p.payload < self.rcv_mss;
            }
        } else {
            // `tcp_sack_new_ofo_skb()`: data that extends no SACK block among the first two
            // (`TCP_SACK_BLOCKS_EXPECTED`) of the four remembered sends what compression held
            // back first, so that older blocks are not lost from the ACKs.
            if self.compressed_ack > 0 && self.sack_block_index(start, end).is_none_or(|i| i >= 2) {
                self.send_ack(now, out);
            }
            let truesize =
                self.rmem.as_ref().map_or(0, |m| m.truesize(end - start, self.win.rcv_mss()));
            self.ofo.insert(start, end, truesize);
            if let Some(m) = self.rmem.as_mut() {
                m.note_peak(&self.ofo);
            }
            let ofo_span = self.ofo.last_end().map_or(0, |e| e - self.rcv_nxt);
            if self.win.on_ofo_data(p.payload, self.held_bytes(), ofo_span) {
                self.quick = self.quick.max(1);
            }
            // Out-of-order data schedules an ACK (`tcp_data_queue_ofo()`; no quick-ack mode),
            // which SACK compression may hold back (below).
        }

        // After queueing, as `tcp_event_data_recv()` calls `tcp_ecn_check_ce()` (not for
        // out-of-window duplicates).
        if !duplicate {
            ack_now |= self.check_ce(now, p, out);
        }

        // A GSO skb that crossed a veth path whole is one receive event: one ACK decision, at
        // its last segment (`tcp_v4_rcv()` sees one skb).
        if p.gso_index + 1 < p.gso_segs {
            self.skb_ack_now |= ack_now;
            return;
        }
        ack_now |= std::mem::take(&mut self.skb_ack_now);
        // `__tcp_ack_snd_check()`: more than one full segment unacknowledged — and, with data
        // still unread, only if the window would advance — or quick-ack mode.
        let full_frame = self.rcv_nxt - self.rcv_wup > self.rcv_mss as u64
            && (!self.slow_reader
                || self.unread() == 0
                || self.win.would_offer(self.held_bytes()) >= self.win.rcv_wnd());
        if ack_now || full_frame || self.in_quickack_mode() {
            if self.owned {
                self.ack_deferred = true;
            } else {
                self.send_ack(now, out);
            }
        } else if !self.ofo.is_empty() {
            self.compress_sack(now, out);
        } else if self.delack.is_none() {
            self.delack = Some(timer_wheel::fires_at(now, TCP_DELACK_MIN, self.jiffy));
        }
    }

    /// `__tcp_ack_snd_check()` with data out of order (SACK compression, Linux ≥ 4.18): the
    /// first `TCP_FASTRETRANS_THRESH` duplicate ACKs for an `rcv_nxt` leave at once, for the
    /// sender's fast retransmit; later ones wait for a timer of 5 % of the RTT, at most
    /// `tcp_comp_sack_delay_ns`, plus its slack, or until `tcp_comp_sack_nr` are waiting. Any
    /// ACK sent meanwhile takes them along (`tcp_event_ack_sent()`). The RTT is the
    /// receiver's estimate (`rcv_rtt_est`); Linux takes the smaller of it and the socket's
    /// srtt, which for a receiver is its handshake's.
    fn compress_sack(&mut self, now: Time, out: &mut Vec<Packet>) {
        if self.comp_sack_nr == 0 || self.compressed_ack >= self.comp_sack_nr {
            return self.send_ack(now, out);
        }
        if self.compressed_ack_rcv_nxt != self.rcv_nxt {
            self.compressed_ack_rcv_nxt = self.rcv_nxt;
            self.dup_ack_counter = 0;
        }
        if self.dup_ack_counter < TCP_FASTRETRANS_THRESH {
            self.dup_ack_counter += 1;
            return self.send_ack(now, out);
        }
        self.compressed_ack += 1;
        if self.comp_sack_at.is_none() {
            let rtt = self.rcv_rtt.unwrap_or(Time::ZERO);
            let delay = TCP_COMP_SACK_DELAY.min(Time(rtt.ps() / 20));
            self.comp_sack_at = Some(now + delay + TCP_COMP_SACK_SLACK);
        }
    }

    /// ECN on a received data segment; returns whether it requires an immediate ACK.
    ///
    /// Classic (RFC 3168 §6.1.3, `__tcp_ecn_check_ce()`): a CE mark makes every ACK carry ECE
    /// until a segment with CWR arrives, and enters quick-ack mode for 2 ACKs. DCTCP
    /// (RFC 8257 §3.2, `dctcp_ece_ack_update()`): ECE mirrors the CE state of the data it
    /// acknowledges; when the state flips, a delayed ACK is sent first with the old state and
    /// the new state is ACKed at once.
    fn check_ce(&mut self, now: Time, p: &Packet, out: &mut Vec<Packet>) -> bool {
        let ce = p.ecn == Ecn::Ce;
        match self.ecn {
            EcnEcho::Off => false,
            EcnEcho::Classic { ref mut demand_cwr } => {
                // `tcp_ecn_accept_cwr()`: a CWR segment ends the echo and is ACKed at once.
                let cwr = p.cwr;
                if cwr {
                    *demand_cwr = false;
                }
                // Quick-ACK mode only when the echo starts, not on every CE.
                if ce && !*demand_cwr {
                    *demand_cwr = true;
                    self.enter_quickack_mode(2);
                }
                cwr
            }
            // A Not-ECT segment (a retransmission) changes no CE state (`INET_ECN_NOT_ECT`).
            EcnEcho::Dctcp { .. } if p.ecn == Ecn::NotEct => false,
            EcnEcho::Dctcp { ce: old, prior_rcv_nxt } => {
                let flip = ce != old;
                if flip && prior_rcv_nxt > self.rcv_wup && self.delack.is_some() {
                    self.send_ack_with(now, prior_rcv_nxt, old, out);
                }
                self.ecn = EcnEcho::Dctcp { ce, prior_rcv_nxt: self.rcv_nxt };
                flip
            }
        }
    }

    /// The ECE flag for the next ACK.
    fn ece(&self) -> bool {
        match self.ecn {
            EcnEcho::Off => false,
            EcnEcho::Classic { demand_cwr } => demand_cwr,
            EcnEcho::Dctcp { ce, .. } => ce,
        }
    }

    /// `tcp_event_data_recv()` (in-order data): the first data starts quick-ack mode; so does a
    /// silence longer than the receiver's RTO, which Linux reads as a sender that failed to
    /// restart its window.
    fn event_data_recv(&mut self, now: Time) {
        let rto = TCP_RTO_MIN + self.rcv_rtt.unwrap_or(Time::ZERO);
        match self.last_data_at {
            None => self.incr_quickack(TCP_MAX_QUICKACKS),
            Some(t) if now - t > rto => self.incr_quickack(TCP_MAX_QUICKACKS),
            _ => {}
        }
        self.last_data_at = Some(now);
    }

    /// `tcp_rcv_rtt_measure_ts()` as of 6.16: a full-sized segment that echoes a TSval tick
    /// not seen before gives a sample of the ticks since, in whole milliseconds (RFC 7323
    /// timestamps tick at `TCP_TS_HZ` = 1000); 0 ms is no sample ("tcp: remove zero TCP TS
    /// samples for autotuning"). Before this segment is queued, so the queue is as it was.
    fn rcv_rtt_measure_ts(&mut self, now: Time, p: &Packet) {
        if p.ts_ecr == Time::ZERO {
            return;
        }
        let tsecr = p.ts_ecr.ps() / TCP_TS_TICK.ps();
        if self.rcv_rtt_last_tsecr == Some(tsecr) {
            return;
        }
        self.rcv_rtt_last_tsecr = Some(tsecr);
        if (p.payload as u64) < self.win.rcv_mss() {
            return;
        }
        let ticks = (now.ps() / TCP_TS_TICK.ps()).saturating_sub(tsecr);
        if ticks > 0 {
            self.rcv_rtt_update(Time(ticks * TCP_TS_TICK.ps()), false);
        }
    }

    /// `tcp_rcv_rtt_measure()`: the time from one in-order segment to the first that reaches
    /// the window then offered beyond it, a sample that can only lower the estimate.
    fn rcv_rtt_measure(&mut self, now: Time) {
        if let Some(t) = self.rtt_est_time {
            if self.rcv_nxt < self.rtt_est_seq {
                return;
            }
            self.rcv_rtt_update((now - t).max(Time::from_us(1)), true);
        }
        self.rtt_est_seq = self.rcv_nxt + self.win.rcv_wnd();
        self.rtt_est_time = Some(now);
    }

    /// `tcp_rcv_rtt_update()` as of 6.16 ("tcp: always seek for minimal rtt in
    /// tcp_rcv_rtt_update()", "tcp: skip big rtt sample if receive queue is not empty"): a
    /// smaller sample is taken at once; a larger one only from timestamps with nothing left
    /// unread, as an EWMA of gain 1/8.
    fn rcv_rtt_update(&mut self, sample: Time, win_dep: bool) {
        self.rcv_rtt = Some(match self.rcv_rtt {
            Some(old) if sample >= old => {
                if win_dep || self.unread() > 0 {
                    return;
                }
                Time((old.ps() * 7 + sample.ps()) / 8)
            }
            _ => sample,
        });
    }

    /// The reader that held the socket lets go: TCP works through the backlog
    /// (`__release_sock()`) until `release_cb`.
    pub fn begin_backlog(&mut self) {
        self.owned = true;
    }

    /// `tcp_release_cb()`: the ACK the backlog's data deferred goes out, unless an ACK sent
    /// since (a duplicate ACK) already covered everything received.
    pub fn release_cb(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.owned = false;
        if std::mem::take(&mut self.ack_deferred) && self.ack_scheduled {
            self.send_ack(now, out);
        }
    }

    /// `tcp_enter_quickack_mode()`: `n` quick ACKs, and the connection is no longer interactive
    /// (`inet_csk_exit_pingpong_mode()`).
    fn enter_quickack_mode(&mut self, n: u32) {
        self.incr_quickack(n);
        self.pingpong = 0;
    }

    /// `inet_csk_in_pingpong_mode()`.
    fn in_pingpong(&self) -> bool {
        self.pingpong >= TCP_PINGPONG_THRESH
    }

    /// `tcp_in_quickack_mode()`: quick ACKs left, and the connection not interactive (the
    /// route's `quickack` ACKs every segment on its own, `ack_now`).
    fn in_quickack_mode(&self) -> bool {
        self.quick > 0 && !self.in_pingpong()
    }

    /// The application sent data on this connection: an incast aggregator's request. The
    /// segment carries an ACK of everything received (`tcp_event_ack_sent()`), and a reply
    /// within `ato` of the last data received counts toward interactive mode
    /// (`tcp_event_data_sent()`). Interactive, the connection sends no quick ACKs and does not
    /// ACK at the read that drains a short segment, so the last segment of a response is
    /// ACKed by the next request, or by the delayed-ACK timer. `ato` is taken at its floor,
    /// where data arriving faster than `TCP_ATO_MIN / 2` apart keeps it (`tcp_event_data_recv()`).
    pub fn on_app_send(&mut self, now: Time, out: &mut Vec<Packet>) {
        if self.last_data_at.is_some_and(|t| now - t < TCP_DELACK_MIN) {
            self.pingpong = self.pingpong.saturating_add(1);
        }
        if self.established && (self.rcv_nxt > self.rcv_wup || self.compressed_ack > 0) {
            self.send_ack(now, out);
        }
    }

    /// `tcp_incr_quickack()`: rcv_wnd / (2·rcv_mss) ACKs (2 if that is 0), at most `max`.
    fn incr_quickack(&mut self, max: u32) {
        let q = match (self.win.rcv_wnd() / (2 * self.rcv_mss as u64)) as u32 {
            0 => 2,
            q => q.min(max),
        };
        self.quick = self.quick.max(q);
    }

    fn advance(&mut self, end: u64) {
        let (prior_nxt, prior_ofo) = (self.rcv_nxt, self.ofo.truesize());
        // Pull in out-of-order ranges that are now contiguous.
        self.rcv_nxt = self.ofo.advance(self.rcv_nxt.max(end));
        if let Some(m) = self.rmem.as_mut() {
            // The arriving bytes' charge and the pulled ranges' join the receive queue.
            let new = m.truesize(end.saturating_sub(prior_nxt), self.win.rcv_mss());
            m.queue(new + prior_ofo - self.ofo.truesize(), &self.ofo);
        }
        if !self.slow_reader {
            self.stats.delivered = self.stats.delivered.max(self.rcv_nxt);
            if let Some(m) = self.rmem.as_mut() {
                m.read(u64::MAX, 0);
            }
        }
    }

    /// `tcp_try_rmem_schedule()` before new data is queued (out of order, or in order behind
    /// unread data; an empty receive queue takes it whatever the charge,
    /// `sk_forced_mem_schedule()`): `false` if it is dropped. A prune ends quick-ACK mode
    /// (`tcp_clamp_window()`).
    fn rmem_schedule(&mut self, start: u64, end: u64) -> bool {
        let (unread, rcv_mss) = (self.unread(), self.win.rcv_mss());
        let Some(m) = self.rmem.as_mut() else { return true };
        if end <= self.rcv_nxt || (start <= self.rcv_nxt && unread == 0) {
            return true;
        }
        let prunes = m.stats.prune_called;
        let ok = m.try_schedule(&mut self.ofo, &mut self.win, rcv_mss, unread);
        if m.stats.prune_called > prunes {
            self.quick = 0;
        }
        ok
    }

    /// What the receive-memory model counted, if it is on.
    pub fn rmem_stats(&self) -> Option<RmemStats> {
        self.rmem.as_ref().map(|m| RmemStats { rcvbuf_bytes: self.win.rcvbuf(), ..m.stats })
    }

    /// In-order bytes received (and acknowledged) but not read by the application yet.
    pub fn unread(&self) -> u64 {
        self.rcv_nxt - self.stats.delivered
    }

    /// Whether the application waits for data to read (a slow reader's wake-up is due).
    pub fn has_unread(&self) -> bool {
        self.slow_reader && self.unread() > 0
    }

    /// The application reads everything queued in order, and the window may grow (DRS). A
    /// slow reader's read is also where Linux ACKs what arrival did not (`tcp_cleanup_rbuf()`):
    /// an ACK is pending and more than one full segment is unacknowledged, or a pushed short
    /// segment was drained (on an interactive connection, only if two were), or the read at
    /// least doubles the window on offer.
    pub fn app_read(&mut self, now: Time, out: &mut Vec<Packet>) {
        let copied = self.rcv_nxt - self.stats.delivered;
        // DRS runs after each skb the read copies, on the clock of the last segment TCP
        // processed, so only the first skb of a read can find an RTT gone by: the queue's head,
        // up to `MAX_SKB_FRAGS` segments coalesced (`tcp_try_coalesce()`). The 6.6 model
        // samples the whole read (docs/fidelity.md).
        let first = match self.win.tuning() {
            RcvBufTuning::Linux6_18 => copied.min(MAX_SKB_FRAGS as u64 * self.win.rcv_mss()),
            RcvBufTuning::Linux6_6 => copied,
        };
        let ofo_span = self.ofo.last_end().map_or(0, |e| e - self.rcv_nxt);
        self.win.on_app_read(
            now,
            self.stats.delivered + first,
            copied - first,
            ofo_span,
            self.rcv_rtt,
        );
        if let Some(m) = self.rmem.as_mut() {
            m.read(copied, copied);
        }
        self.stats.delivered = self.rcv_nxt;
        if self.size.is_some_and(|s| self.stats.delivered >= s) {
            self.stats.done_at.get_or_insert(now);
        }
        // Even with everything acknowledged the read may reopen a window the unread data
        // closed: that update is the only ACK the sender will get.
        if !self.slow_reader || copied == 0 {
            return;
        }
        let scheduled = self.delack.is_some();
        let drained_push = self.pushed2 || (self.pushed && !self.in_pingpong());
        let mut time_to_ack =
            scheduled && (self.rcv_nxt - self.rcv_wup > self.rcv_mss as u64 || drained_push);
        if !time_to_ack {
            let offered = (self.win.rcv_wup() + self.win.rcv_wnd()).saturating_sub(self.rcv_nxt);
            if 2 * offered <= self.win.window_clamp() {
                let new_window = self.win.would_offer(self.held_bytes());
                time_to_ack = new_window > 0 && new_window >= 2 * offered;
            }
        }
        if time_to_ack {
            self.send_ack(now, out);
        }
    }

    /// Which of the SACK blocks Linux remembers (`TCP_NUM_SACKS` = 4, most recent first) data
    /// `start..end` would extend (`tcp_sack_extend()`: overlapping or adjacent); `None` if it
    /// starts a block of its own, or if no block is remembered yet (Linux then goes no
    /// further: a first block flushes nothing).
    fn sack_block_index(&self, start: u64, end: u64) -> Option<usize> {
        let mut n = 0;
        for (i, r) in self.ofo.recent_blocks().take(4).enumerate() {
            if r.start <= end && start <= r.end {
                return Some(i);
            }
            n = i + 1;
        }
        (n < 2).then_some(0)
    }

    /// Payload bytes held for the application but not readable yet (out of order). With the
    /// receive-memory model on, the payload the window model would charge what is allocated
    /// (`tcp_space()` subtracts `sk_rmem_alloc`).
    fn held_bytes(&self) -> u64 {
        self.held_with(0)
    }

    /// [`Self::held_bytes`] with `extra` bytes more just queued.
    fn held_with(&self, extra: u64) -> u64 {
        match &self.rmem {
            None => self.ofo.bytes() + self.unread() + extra,
            Some(m) => {
                let alloc = m.alloc(&self.ofo) + m.truesize(extra, self.win.rcv_mss());
                crate::tcp::rwnd::win_from_space(self.win.model(), alloc)
            }
        }
    }

    fn send_ack(&mut self, now: Time, out: &mut Vec<Packet>) {
        let ece = self.ece();
        self.send_ack_with(now, self.rcv_nxt, ece, out);
    }

    /// Send an ACK of `ack` (normally `rcv_nxt`; DCTCP may acknowledge the data before a CE
    /// flip separately) carrying `ece`.
    fn send_ack_with(&mut self, now: Time, ack: u64, ece: bool, out: &mut Vec<Packet>) {
        let mut a = Packet::new(Kind::Ack, self.flow, self.node, self.peer, 0);
        a.ece = ece;
        let mut n = 0;
        // A D-SACK goes first and is sent once (`tcp_sack_option` / `rx_opt.dsack`).
        if let Some(d) = self.dsack.take() {
            a.sack[0] = d;
            n = 1;
        }
        for r in self.ofo.recent_blocks().take(MAX_SACK_BLOCKS - n) {
            a.sack[n] = r;
            n += 1;
        }
        a.sack_len = n as u8;
        a.ip_bytes = ack_bytes(n as u32);
        a.ack = ack;
        a.rwnd = self.win.advertise(self.held_bytes(), ack);
        a.ts_val = now;
        a.ts_ecr = self.ts_recent;
        // `tcp_dec_quickack_mode()` (Linux ≥ 6.6, "tcp: fix quick-ack counting to count
        // actual ACKs of new data"): one quick ACK used per ACK sent while one was scheduled,
        // however much it covers; none for DCTCP's ACK of the data before a CE flip.
        if self.ack_scheduled && ack == self.rcv_nxt {
            self.quick = self.quick.saturating_sub(1);
        }
        self.rcv_wup = ack;
        self.delack = None;
        self.ack_scheduled = false;
        // `inet_csk_clear_xmit_timer(ICSK_TIME_DACK)` clears `icsk_ack.pending`.
        self.pushed = false;
        self.pushed2 = false;
        self.compressed_ack = 0;
        self.comp_sack_at = None;
        self.stats.acks_sent += 1;
        out.push(a);
    }

    /// The delayed-ACK or the SACK-compression timer fired. The latter sends what it held back
    /// (`tcp_compressed_ack_kick()`).
    pub fn on_delack(&mut self, now: Time, out: &mut Vec<Packet>) {
        if self.comp_sack_at.is_some_and(|t| t <= now) {
            self.comp_sack_at = None;
            if self.compressed_ack > 0 {
                return self.send_ack(now, out);
            }
        }
        match self.delack {
            Some(t) if t <= now => {
                if self.rcv_nxt > self.rcv_wup {
                    // `tcp_delack_timer_handler()`: a delayed ACK that had to wait for its
                    // timer ends interactive mode.
                    self.pingpong = 0;
                    self.send_ack(now, out);
                } else {
                    self.delack = None;
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::latency::Latency;
    use crate::tcp::config::WindowModel;

    fn spec() -> FlowSpec {
        FlowSpec {
            size_bytes: Some(1_000_000),
            window_model: WindowModel::AdvWinScale(1),
            ..FlowSpec::linux_default("reno")
        }
    }

    const MSS: u32 = 1448;

    fn established() -> TcpReceiver {
        let mut r = TcpReceiver::new(0, 1, 0, &spec(), 1500);
        let mut out = Vec::new();
        let mut syn = Packet::new(Kind::Syn, 0, 0, 1, SYN_BYTES);
        syn.ts_val = Time::from_us(1);
        r.on_packet(Time::from_us(10), &syn, &mut out);
        assert_eq!(out[0].kind, Kind::SynAck);
        r
    }

    /// An established receiver that has used its first quick ACKs on segments 0-15 (at 1 ms).
    fn past_quick_acks() -> TcpReceiver {
        let mut r = established();
        feed(&mut r, 0..16, Time::from_ms(1));
        r
    }

    fn data(seq: u64, len: u32) -> Packet {
        let mut p = Packet::new(Kind::Data, 0, 0, 1, len + 52);
        p.seq = seq;
        p.payload = len;
        p
    }

    /// Feed segments [k·MSS, (k+1)·MSS) for k in `ks`; returns the ACKs sent.
    fn feed(r: &mut TcpReceiver, ks: impl IntoIterator<Item = u64>, now: Time) -> Vec<Packet> {
        let mut out = Vec::new();
        for k in ks {
            r.on_packet(now, &data(k * MSS as u64, MSS), &mut out);
            r.app_read(now, &mut out);
        }
        out
    }

    #[test]
    fn constants_match_linux() {
        assert_eq!(TCP_DELACK_MIN, Time::from_ms(40));
        assert_eq!(TCP_DELACK_MAX, Time::from_ms(200));
        assert_eq!(TCP_MAX_QUICKACKS, 16);
        assert_eq!(TCP_PINGPONG_THRESH, 1);
        assert_eq!(
            (TCP_COMP_SACK_NR, TCP_COMP_SACK_DELAY, TCP_COMP_SACK_SLACK),
            (44, Time::from_ms(1), Time::from_us(100))
        );
    }

    /// A receiver past its quick-ACK phase with segment 16 lost: `n` segments behind the hole
    /// arrive 10 µs apart from t = 2 ms; returns it and the ACKs they drew at once.
    fn behind_a_hole(sp: &FlowSpec, n: u64) -> (TcpReceiver, Vec<Packet>) {
        let mut r = TcpReceiver::new(0, 1, 0, sp, 1500);
        let mut out = Vec::new();
        r.on_packet(Time::ZERO, &Packet::new(Kind::Syn, 0, 0, 1, SYN_BYTES), &mut out);
        feed(&mut r, 0..16, Time::from_ms(1));
        let mut out = Vec::new();
        for k in 0..n {
            r.on_packet(
                Time::from_ms(2) + Time::from_us(10 * k),
                &data((17 + k) * MSS as u64, MSS),
                &mut out,
            );
        }
        (r, out)
    }

    #[test]
    fn sack_compression_sends_three_dupacks_then_holds_the_rest_for_its_timer() {
        let (mut r, out) = behind_a_hole(&spec(), 10);
        // The first three duplicate ACKs leave at once, for the sender's fast retransmit.
        assert_eq!(out.len(), 3);
        assert!(out.iter().all(|a| a.ack == 16 * MSS as u64 && a.sack_len == 1));
        // The other seven wait: 5 % of the receiver's RTT (none measured here) plus the
        // hrtimer's 100 µs slack after the first of them (2.03 ms).
        let due = r.delack_deadline().unwrap();
        assert_eq!(due, Time::from_ms(2) + Time::from_us(30) + TCP_COMP_SACK_SLACK);
        let mut out = Vec::new();
        r.on_delack(due, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].sack[0], SeqRange { start: 17 * MSS as u64, end: 27 * MSS as u64 });
        // Filling the hole is ACKed at once, whatever compression held.
        let mut out = Vec::new();
        r.on_packet(due, &data(16 * MSS as u64, MSS), &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].ack, 27 * MSS as u64);
    }

    #[test]
    fn sack_compression_holds_at_most_tcp_comp_sack_nr_and_zero_turns_it_off() {
        // 3 at once, then 44 held, the 45th held-back one goes at once with them.
        let (_, out) = behind_a_hole(&spec(), 3 + TCP_COMP_SACK_NR as u64 + 1);
        assert_eq!(out.len(), 4);
        let off = FlowSpec { comp_sack_nr: 0, ..spec() };
        let (_, out) = behind_a_hole(&off, 10);
        assert_eq!(out.len(), 10, "every out-of-order segment ACKed at once");
    }

    #[test]
    fn a_third_sack_block_sends_what_compression_held() {
        // Holes at 16 and 20: segments 17-19 (three dupACKs) and 21-22 held back. Segment 24
        // opens a third block: the held-back ACK leaves first, with the two blocks it knew
        // (`tcp_sack_new_ofo_skb()`), and 24 itself is held again.
        let (mut r, _) = behind_a_hole(&spec(), 3);
        let mut out = Vec::new();
        for k in [21, 22, 24] {
            r.on_packet(Time::from_ms(3), &data(k * MSS as u64, MSS), &mut out);
        }
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].sack_len, 2);
        assert!(r.delack_deadline().is_some());
    }

    #[test]
    fn established_a_whole_gso_skb_gets_one_ack() {
        // On a veth path a 5-segment skb arrives whole: `tcp_v4_rcv()` sees one skb, so one
        // ACK for all five (segment by segment it would be two or more).
        let mut r = past_quick_acks();
        let mut out = Vec::new();
        for i in 0..5u16 {
            let mut p = data((16 + i as u64) * MSS as u64, MSS);
            (p.gso_segs, p.gso_index, p.gso_bytes) = (5, i, 5 * (MSS + 52));
            r.on_packet(Time::from_ms(2), &p, &mut out);
            r.app_read(Time::from_ms(2), &mut out);
        }
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!(out[0].ack, 21 * MSS as u64);
    }

    /// `n`-segment skb from segment `first` on, as the backlog hands it to TCP.
    fn skb(first: u64, n: u16) -> Vec<Packet> {
        (0..n)
            .map(|i| {
                let mut p = data((first + i as u64) * MSS as u64, MSS);
                (p.gso_segs, p.gso_index, p.gso_bytes) = (n, i, n as u32 * (MSS + 52));
                p
            })
            .collect()
    }

    #[test]
    fn backlog_acks_wait_for_the_release_but_duplicate_acks_do_not() {
        // Working through the backlog (`__release_sock()`), an ACK the data asks for is
        // deferred to `tcp_release_cb()`: in-order skbs and an out-of-order one behind them
        // (more than a full frame unacknowledged still asks for it) get one ACK, at the
        // release, that both advances and SACKs.
        let mut r = past_quick_acks();
        let now = Time::from_ms(2);
        let mut out = Vec::new();
        r.begin_backlog();
        for p in skb(16, 4).into_iter().chain(skb(21, 3)) {
            r.on_packet(now, &p, &mut out); // segment 20 lost
        }
        assert!(out.is_empty(), "deferred: {out:?}");
        r.release_cb(now, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].ack, out[0].sack_len), (20 * MSS as u64, 1));

        // With everything in order ACKed, SACK compression's first duplicate ACKs jump past
        // the deferral and leave at once; the release then has nothing left to ACK.
        let mut out = Vec::new();
        r.begin_backlog();
        for first in [25, 29] {
            for p in skb(first, 2) {
                r.on_packet(now, &p, &mut out); // segments 24 and 27, 28 lost
            }
        }
        assert_eq!(out.len(), 2, "{out:?}");
        assert!(out.iter().all(|a| a.ack == 20 * MSS as u64));
        r.release_cb(now, &mut out);
        assert_eq!(out.len(), 2);

        // Not owned any more: the next skb is ACKed as it comes.
        for p in skb(20, 4) {
            r.on_packet(now, &p, &mut out);
        }
        assert_eq!(out.len(), 3);
        assert_eq!(out[2].ack, 24 * MSS as u64);
    }

    #[test]
    fn quick_ack_mode_counts_acks_not_the_segments_they_cover() {
        // `tcp_dec_quickack_mode()` (Linux ≥ 6.6): each ACK sent for new data uses one quick
        // ACK, whether it covers one segment or a 4-segment skb. A duplicate segment gives 16
        // (`tcp_enter_quickack_mode()`), its own duplicate ACK uses one.
        let mut r = past_quick_acks();
        let now = Time::from_ms(2);
        let mut out = Vec::new();
        r.on_packet(now, &data(3 * MSS as u64, MSS), &mut out);
        assert_eq!(out.len(), 1);
        let mut acks = Vec::new();
        for k in 0..20 {
            for p in skb(16 + 4 * k, 4) {
                r.on_packet(now, &p, &mut acks);
            }
            r.app_read(now, &mut acks);
        }
        // 15 quick ACKs for the first 15 skbs; after that a 4-segment skb is still more than
        // one full frame, so every skb is ACKed either way: tell them apart by `quick` left.
        assert_eq!(acks.len(), 20);
        assert_eq!(r.quick, 0);
        let mut r = past_quick_acks();
        r.on_packet(now, &data(3 * MSS as u64, MSS), &mut out);
        for k in 0..5 {
            for p in skb(16 + 4 * k, 4) {
                r.on_packet(now, &p, &mut acks);
            }
        }
        // Segment by segment it would have used 1 + 5 · 4 = 21 ≥ 16.
        assert_eq!(r.quick, TCP_MAX_QUICKACKS - 1 - 5);
    }

    #[test]
    fn slow_reader_acks_at_its_reads_not_at_each_arrival() {
        // A reader that has not drained the queue: the window would not advance, so
        // `__tcp_ack_snd_check()` only schedules the ACK; the read sends one for everything
        // (`tcp_cleanup_rbuf()`), as Linux stretches ACKs behind a slow application.
        let sp = FlowSpec { read_latency: Latency::Fixed(Time::from_us(400)), ..spec() };
        let mut r = TcpReceiver::new(0, 1, 0, &sp, 1500);
        let mut out = Vec::new();
        r.on_packet(Time::from_us(10), &Packet::new(Kind::Syn, 0, 0, 1, SYN_BYTES), &mut out);
        out.clear();
        let now = Time::from_ms(1);
        for k in 0..16u64 {
            // Quick-ACK mode first, as for any receiver; the reads keep up meanwhile.
            r.on_packet(now, &data(k * MSS as u64, MSS), &mut out);
            r.app_read(now, &mut out);
        }
        assert_eq!(out.len(), 16, "quick ACKs");
        out.clear();
        let later = Time::from_ms(2);
        for k in 16..26u64 {
            r.on_packet(later, &data(k * MSS as u64, MSS), &mut out);
        }
        assert!(out.is_empty(), "nothing read, nothing ACKed: {out:?}");
        assert!(r.has_unread());
        assert!(r.delack_deadline().is_some(), "an ACK is scheduled");
        r.app_read(later + Time::from_us(400), &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].ack, 26 * MSS as u64);
        assert_eq!(r.stats.delivered, 26 * MSS as u64);
        assert!(!r.has_unread());
    }

    #[test]
    fn slow_reader_reopens_a_window_it_closed_even_with_everything_acked() {
        // `tcp_cleanup_rbuf()`: a read that frees lots of space sends a window update whether or
        // not data is unacknowledged. With every segment ACKed at arrival (quick-ACK route) the
        // unread data closes the window; without the update the sender would wait for ever.
        let sp = FlowSpec {
            read_latency: Latency::Fixed(Time::from_ms(1)),
            quickack: true,
            tcp_rmem: [4096, 16_384, 16_384],
            ..spec()
        };
        let mut r = TcpReceiver::new(0, 1, 0, &sp, 1500);
        let mut out = Vec::new();
        r.on_packet(Time::from_us(10), &Packet::new(Kind::Syn, 0, 0, 1, SYN_BYTES), &mut out);
        out.clear();
        let now = Time::from_ms(1);
        let mut k = 0u64;
        while out.last().is_none_or(|a: &Packet| a.rwnd >= MSS as u64) {
            r.on_packet(now, &data(k * MSS as u64, MSS), &mut out);
            k += 1;
            assert!(k < 64, "the window never closed: {out:?}");
        }
        let closed = *out.last().unwrap();
        assert_eq!(closed.ack, k * MSS as u64, "everything is acknowledged");
        out.clear();
        r.app_read(now + Time::from_ms(1), &mut out);
        assert_eq!(out.len(), 1, "the read must reopen the window");
        assert_eq!(out[0].ack, closed.ack);
        assert!(out[0].rwnd >= 2 * MSS as u64, "{} bytes offered", out[0].rwnd);
    }

    #[test]
    fn a_growing_window_is_announced_at_once_even_behind_a_slow_reader() {
        // `tcp_grow_window()` sets `icsk_ack.quick |= 1`: while `rcv_ssthresh` still grows, each
        // segment that raises it is ACKed at arrival, unread data or not. Once the unread data
        // leaves it no room, the slow reader's rule holds again: no ACK until the read.
        // A big buffer and a small first window (route `initrwnd 10`): room to grow into.
        let sp = FlowSpec {
            read_latency: Latency::Fixed(Time::from_ms(1)),
            tcp_rmem: [4096, 4 << 20, 4 << 20],
            initrwnd: 10,
            ..spec()
        };
        let mut r = TcpReceiver::new(0, 1, 0, &sp, 1500);
        let mut out = Vec::new();
        r.on_packet(Time::from_us(10), &Packet::new(Kind::Syn, 0, 0, 1, SYN_BYTES), &mut out);
        let now = Time::from_ms(1);
        let mut grown_acks = 0;
        for k in 0..2_000u64 {
            out.clear();
            let before = r.window().rcv_ssthresh();
            r.on_packet(now, &data(k * MSS as u64, MSS), &mut out);
            let grew = r.window().rcv_ssthresh() > before;
            if k < 16 {
                continue; // the connection's first quick ACKs
            }
            if grew {
                assert_eq!(out.len(), 1, "segment {k}: the grown window goes out at once");
                grown_acks += 1;
            } else {
                // No room left: this and the next segments wait for the read.
                let mut later = Vec::new();
                for j in 1..4 {
                    r.on_packet(now, &data((k + j) * MSS as u64, MSS), &mut later);
                }
                assert!(out.is_empty() && later.is_empty(), "segment {k}: {out:?} {later:?}");
                assert!(grown_acks > 100, "{grown_acks} grown windows announced");
                return;
            }
        }
        panic!("the unread data never stopped the window's growth");
    }

    #[test]
    fn slow_reader_unread_data_shrinks_the_offered_window() {
        let sp = FlowSpec { read_latency: Latency::Fixed(Time::from_us(400)), ..spec() };
        let mut r = TcpReceiver::new(0, 1, 0, &sp, 1500);
        let mut out = Vec::new();
        r.on_packet(Time::from_us(10), &Packet::new(Kind::Syn, 0, 0, 1, SYN_BYTES), &mut out);
        let now = Time::from_ms(1);
        for k in 0..16u64 {
            r.on_packet(now, &data(k * MSS as u64, MSS), &mut out);
        }
        // Sixteen quick ACKs went out with nothing read: the unread bytes are charged against the
        // buffer, so the right edge offered stays short of a reader that keeps up.
        let wins: Vec<u64> = out.iter().skip(1).map(|a| a.ack + a.rwnd).collect();
        let fast = {
            let mut f = established();
            feed(&mut f, 0..16, now).last().map(|a| a.ack + a.rwnd).unwrap()
        };
        assert!(*wins.last().unwrap() < fast, "{wins:?} vs {fast}");
    }

    #[test]
    fn syn_received_answers_with_an_unscaled_window() {
        let mut r = TcpReceiver::new(0, 1, 0, &spec(), 1500);
        let mut out = Vec::new();
        r.on_packet(Time::ZERO, &Packet::new(Kind::Syn, 0, 0, 1, SYN_BYTES), &mut out);
        assert!(out[0].rwnd <= 65_535);
        assert_eq!(out[0].ip_bytes, SYN_BYTES);
    }

    #[test]
    fn established_first_data_is_quick_acked() {
        let mut r = established();
        // The initial window (≈ 64 KB) allows 64088 / (2·1448) = 22 → 16 quick ACKs.
        let acks = feed(&mut r, 0..16, Time::from_ms(1));
        assert_eq!(acks.len(), 16);
        assert!(acks.iter().enumerate().all(|(k, a)| a.ack == (k as u64 + 1) * MSS as u64));
    }

    #[test]
    fn established_acks_every_second_full_segment_after_quick_mode() {
        let mut r = past_quick_acks();
        let acks = feed(&mut r, 16..26, Time::from_ms(2));
        assert_eq!(acks.len(), 5);
        assert_eq!(acks[0].ack, 18 * MSS as u64);
    }

    #[test]
    fn established_lone_segment_waits_for_the_delack_timer() {
        let mut r = past_quick_acks();
        let now = Time::from_ms(5);
        assert!(feed(&mut r, [16], now).is_empty());
        assert_eq!(r.delack_deadline(), Some(now + TCP_DELACK_MIN));
        let mut out = Vec::new();
        r.on_delack(now + TCP_DELACK_MIN, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].ack, 17 * MSS as u64);
        assert_eq!(r.delack_deadline(), None);
    }

    #[test]
    fn established_short_segment_is_acked_at_once() {
        let mut r = past_quick_acks();
        let mut out = Vec::new();
        r.on_packet(Time::from_ms(3), &data(16 * MSS as u64, 100), &mut out);
        assert_eq!(out.len(), 1);
    }

    // ---- Tests for the receive-memory model (`skb_truesize`, `tcp_prune_queue()`) ----

    /// A 256 KiB buffer that cannot grow, each full segment charged `truesize`; in order up to
    /// segment 16, which is lost.
    fn charged(truesize: u32, read_latency: Latency) -> TcpReceiver {
        let sp = FlowSpec {
            tcp_rmem: [4096, 256 << 10, 256 << 10],
            rmem_max: 256 << 10,
            skb_truesize: Some(truesize),
            read_latency,
            size_bytes: Some(100 << 20),
            ..spec()
        };
        let mut r = TcpReceiver::new(0, 1, 0, &sp, 1500);
        let mut out = Vec::new();
        r.on_packet(Time::from_us(10), &Packet::new(Kind::Syn, 0, 0, 1, SYN_BYTES), &mut out);
        feed(&mut r, 0..16, Time::from_ms(1));
        assert_eq!(r.window().rcvbuf(), 256 << 10);
        r
    }

    fn blocks(r: &TcpReceiver) -> Vec<(u64, u64)> {
        r.ofo.recent_blocks().map(|b| (b.start / MSS as u64, b.end / MSS as u64)).collect()
    }

    #[test]
    fn rmem_bloated_out_of_order_skbs_are_collapsed_before_anything_is_pruned() {
        // A page per 1448-byte frame (4096 B, 2.8x its payload, more than the 2x
        // tcp_adv_win_scale = 1 assumes): the 65th segment behind the hole finds the socket
        // over its 256 KiB buffer. `tcp_collapse_ofo_queue()` copies the range into compact
        // skbs (25 x 4352 B for 65 segments) and nothing is dropped.
        let mut r = charged(4096, Latency::ZERO);
        feed(&mut r, 17..117, Time::from_ms(2));
        let st = r.rmem_stats().unwrap();
        assert_eq!((st.prune_called, st.ofo_pruned, st.rcv_pruned_drops), (1, 0, 0));
        assert_eq!(r.ofo.bytes(), 100 * MSS as u64);
        assert_eq!(r.ofo.truesize(), 25 * rmem::COLLAPSED_SKB_TRUESIZE + 35 * 4096);
        assert_eq!(blocks(&r), [(17, 117)]);
        // The hole filled, everything is read and the charge is gone.
        feed(&mut r, [16], Time::from_ms(3));
        assert_eq!(r.rcv_nxt, 117 * MSS as u64);
        assert_eq!(r.rmem.as_ref().unwrap().alloc(&r.ofo), 0);
    }

    #[test]
    fn rmem_over_the_buffer_the_highest_out_of_order_data_is_pruned_and_sack_reset() {
        // Charged exactly what the window assumes (2x), so collapsing gains nothing; the queue
        // is fed past the window, as a peer would have to. The 92nd segment finds 91 x 2896 B
        // over the 256 KiB: `tcp_prune_ofo_queue()` drops the highest skbs until rcvbuf / 8 =
        // 32 KiB is freed, segments 96-107 (12 x 2896 B). The arriving segment 108 is then
        // queued, and the SACK state starts again from it (`tcp_sack_reset()`).
        let mut r = charged(2 * MSS, Latency::ZERO);
        feed(&mut r, 17..=107, Time::from_ms(2));
        assert_eq!(r.rmem_stats().unwrap().prune_called, 0);
        feed(&mut r, [108], Time::from_ms(2));
        let st = r.rmem_stats().unwrap();
        assert_eq!((st.prune_called, st.ofo_pruned, st.rcv_pruned_drops), (1, 1, 0));
        assert_eq!(st.ofo_pruned_bytes, 12 * MSS as u64);
        assert_eq!(blocks(&r), [(108, 109)]);
        assert!(r.rmem.as_ref().unwrap().alloc(&r.ofo) <= 256 << 10);
        // The sender resends 96: the range below reaches it and is reported again.
        feed(&mut r, [96], Time::from_ms(3));
        assert_eq!(blocks(&r), [(96 - 79, 97), (108, 109)]);
    }

    #[test]
    fn rmem_behind_a_reader_that_does_not_read_in_order_data_past_the_buffer_is_dropped() {
        // Nothing out of order to prune: once the unread data's charge is over the buffer,
        // each in-order segment is dropped (`TCPRcvQDrop`) and `rcv_nxt` stays.
        let mut r = charged(2 * MSS, Latency::Fixed(Time::from_ms(50)));
        let mut out = Vec::new();
        for k in 16..116u64 {
            r.on_packet(Time::from_ms(2), &data(k * MSS as u64, MSS), &mut out);
        }
        // 16 read already; 90 x 2896 B fit, the 91st is taken over the limit, 9 dropped.
        assert_eq!(r.rcv_nxt, 107 * MSS as u64);
        assert_eq!(r.rmem_stats().unwrap().rcv_pruned_drops, 9);
        r.app_read(Time::from_ms(52), &mut out);
        assert_eq!(r.rmem.as_ref().unwrap().alloc(&r.ofo), 0);
    }

    #[test]
    fn established_out_of_order_data_gets_sack_blocks_most_recent_first() {
        let mut r = established();
        feed(&mut r, 0..2, Time::from_ms(1));
        // Segments 3 and 6 arrive (2, 4, 5 lost): each is acked at once with SACK.
        let acks = feed(&mut r, [3, 6], Time::from_ms(2));
        assert_eq!(acks.len(), 2);
        let last = &acks[1];
        assert_eq!(last.ack, 2 * MSS as u64);
        let blocks = last.sack_blocks();
        assert_eq!(blocks.len(), 2);
        assert_eq!(blocks[0], SeqRange { start: 6 * MSS as u64, end: 7 * MSS as u64 });
        assert_eq!(blocks[1], SeqRange { start: 3 * MSS as u64, end: 4 * MSS as u64 });
        assert_eq!(last.ip_bytes, ack_bytes(2));
        // Filling 2 merges with 3; the ACK is immediate and reports only block 6.
        let fill = feed(&mut r, [2], Time::from_ms(3));
        assert_eq!(fill[0].ack, 4 * MSS as u64);
        assert_eq!(
            fill[0].sack_blocks(),
            &[SeqRange { start: 6 * MSS as u64, end: 7 * MSS as u64 }]
        );
    }

    #[test]
    fn established_duplicate_segment_is_acked_at_once() {
        let mut r = established();
        feed(&mut r, 0..20, Time::from_ms(1));
        let acks = feed(&mut r, [3], Time::from_ms(2));
        assert_eq!(acks.len(), 1);
        assert_eq!(r.stats.dup_segments, 1);
        assert_eq!(r.stats.delivered, 20 * MSS as u64);
        // RFC 2883: the ACK reports the duplicate as its first SACK block, below the ACK; the
        // next ACK no longer does.
        let dup = SeqRange { start: 3 * MSS as u64, end: 4 * MSS as u64 };
        assert_eq!(acks[0].sack_blocks(), &[dup]);
        let next = feed(&mut r, [20, 21], Time::from_ms(3));
        assert!(next.iter().all(|a| a.sack_blocks().is_empty()), "{next:?}");
    }

    #[test]
    fn established_application_sees_every_byte_once() {
        let mut r = established();
        let order = [0, 2, 1, 5, 4, 3, 3, 6, 0];
        feed(&mut r, order, Time::from_ms(1));
        assert_eq!(r.stats.delivered, 7 * MSS as u64);
        assert_eq!(r.rcv_nxt, 7 * MSS as u64);
    }

    /// A receiver that has taken 16 segments at 1 ms (its quick ACKs spent) and, if `reply_at`,
    /// sent a request then; the segments after a silence longer than the RTO then arrive at
    /// 300 ms, which asks for quick ACKs again (`tcp_event_data_recv()`).
    fn after_a_reply(reply_at: Option<Time>) -> (TcpReceiver, Vec<Packet>) {
        let mut r = past_quick_acks();
        let mut out = Vec::new();
        if let Some(t) = reply_at {
            r.on_app_send(t, &mut out);
        }
        (r, out)
    }

    #[test]
    fn a_reply_within_ato_makes_the_connection_interactive_and_quick_acks_stop() {
        // Not interactive: the silence brings quick ACKs back, one per segment.
        let (mut quiet, _) = after_a_reply(None);
        assert_eq!(feed(&mut quiet, 16..26, Time::from_ms(300)).len(), 10);
        // A request sent 2 ms after the last data (within `ato`, 40 ms): interactive
        // (`inet_csk_in_pingpong_mode()`), so `tcp_in_quickack_mode()` is false and only
        // every second full segment is ACKed.
        let (mut talker, out) = after_a_reply(Some(Time::from_ms(3)));
        assert!(out.is_empty(), "everything was ACKed: the request carries nothing new");
        assert_eq!(feed(&mut talker, 16..26, Time::from_ms(300)).len(), 5);
        // A request 50 ms after the data is no reply: the connection stays as it was.
        let (mut late, _) = after_a_reply(Some(Time::from_ms(51)));
        assert_eq!(feed(&mut late, 16..26, Time::from_ms(300)).len(), 10);
    }

    #[test]
    fn an_interactive_reader_leaves_a_short_tail_to_the_next_request() {
        // A slow reader that drains a response ending in a short segment: ACKed at the read
        // (`tcp_cleanup_rbuf()`, ICSK_ACK_PUSHED), unless the connection is interactive; then
        // the next request carries the ACK (`tcp_event_ack_sent()`).
        let tail = |interactive: bool| {
            let sp = FlowSpec { read_latency: Latency::Fixed(Time::from_us(50)), ..spec() };
            let mut r = TcpReceiver::new(0, 1, 0, &sp, 1500);
            let mut out = Vec::new();
            r.on_packet(Time::ZERO, &Packet::new(Kind::Syn, 0, 0, 1, SYN_BYTES), &mut out);
            feed(&mut r, 0..16, Time::from_ms(1));
            if interactive {
                r.on_app_send(Time::from_ms(2), &mut out);
            }
            let t = Time::from_ms(3);
            r.on_packet(t, &data(16 * MSS as u64, MSS), &mut out);
            r.on_packet(t, &data(17 * MSS as u64, MSS), &mut out);
            r.app_read(t + Time::from_us(50), &mut out);
            // The response's last segment, alone unacknowledged.
            out.clear();
            r.on_packet(t + Time::from_us(60), &data(18 * MSS as u64, 100), &mut out);
            r.app_read(t + Time::from_us(110), &mut out);
            (r, out)
        };
        let (_, acks) = tail(false);
        assert_eq!(acks.last().map(|a| a.ack), Some(18 * MSS as u64 + 100), "{acks:?}");
        let (mut r, acks) = tail(true);
        assert!(acks.is_empty(), "{acks:?}");
        assert!(r.delack_deadline().is_some(), "the delayed-ACK timer waits for it");
        let mut out = Vec::new();
        r.on_app_send(Time::from_ms(10), &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].ack, 18 * MSS as u64 + 100);
        assert_eq!(r.delack_deadline(), None);
    }

    #[test]
    fn a_delayed_ack_that_waits_for_its_timer_or_a_duplicate_ends_interactive_mode() {
        // `tcp_delack_timer_handler()`: the timer fired, so the peer was not answered in time.
        let (mut r, _) = after_a_reply(Some(Time::from_ms(3)));
        assert!(feed(&mut r, [16], Time::from_ms(5)).is_empty());
        let mut out = Vec::new();
        r.on_delack(Time::from_ms(5) + TCP_DELACK_MIN, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(feed(&mut r, 17..27, Time::from_ms(300)).len(), 10, "quick ACKs again");
        // `tcp_enter_quickack_mode()` on a duplicate segment.
        let (mut r, _) = after_a_reply(Some(Time::from_ms(3)));
        assert_eq!(feed(&mut r, [3], Time::from_ms(4)).len(), 1);
        assert_eq!(feed(&mut r, 16..26, Time::from_ms(300)).len(), 10, "quick ACKs again");
    }

    /// 6.18's receiver RTT (`tcp_rcv_rtt_measure()`, `tcp_rcv_rtt_measure_ts()`,
    /// `tcp_rcv_rtt_update()`): the time a window takes to arrive sets it; echoed timestamps
    /// count in whole milliseconds, each tick once, a tick of 0 not at all, and one above the
    /// estimate only with nothing left unread.
    #[test]
    fn linux_6_18_receiver_rtt_from_windows_and_millisecond_timestamps() {
        let sp = FlowSpec {
            rcvbuf_tuning: RcvBufTuning::Linux6_18,
            read_latency: Latency::Fixed(Time::from_us(400)),
            ..spec()
        };
        let mut r = TcpReceiver::new(0, 1, 0, &sp, 1500);
        let mut out = Vec::new();
        r.on_packet(Time::from_us(10), &Packet::new(Kind::Syn, 0, 0, 1, SYN_BYTES), &mut out);
        let at = |k: u64| Time::from_ms(1) + Time::from_us(10 * k);
        let seg = |k: u64, ts_ecr: Time| Packet { ts_ecr, ..data(k * MSS as u64, MSS) };
        r.on_packet(at(0), &seg(0, Time::ZERO), &mut out);
        r.app_read(at(0), &mut out);
        let reach = r.rtt_est_seq.div_ceil(MSS as u64) - 1;
        for k in 1..=reach {
            r.on_packet(at(k), &seg(k, Time::ZERO), &mut out);
            r.app_read(at(k), &mut out);
            assert_eq!(r.rcv_rtt.is_some(), k == reach, "segment {k} of {reach}");
        }
        let window = at(reach) - at(0);
        assert_eq!(r.rcv_rtt, Some(window));
        // Echoes of this millisecond's tick: 0 ms, no sample.
        let mut k = reach + 1;
        r.on_packet(at(k), &seg(k, Time::from_ms(1)), &mut out);
        r.app_read(at(k), &mut out);
        assert_eq!(r.rcv_rtt, Some(window));
        // A 2 ms echo with everything read: an EWMA step of 1/8, once per tick.
        let later = Time::from_ms(4) + Time::from_us(500);
        let ewma = Time((window.ps() * 7 + Time::from_ms(2).ps()) / 8);
        for _ in 0..2 {
            k += 1;
            r.on_packet(later, &seg(k, Time::from_us(2500)), &mut out);
            r.app_read(later, &mut out);
            assert_eq!(r.rcv_rtt, Some(ewma));
        }
        // A larger echo while data waits unread: skipped.
        k += 1;
        r.on_packet(later, &seg(k, Time::ZERO), &mut out);
        r.on_packet(Time::from_ms(5), &seg(k + 1, Time::from_us(3200)), &mut out);
        assert_eq!(r.rcv_rtt, Some(ewma));
    }

    #[test]
    fn quickack_route_acks_every_segment() {
        let mut s = spec();
        s.quickack = true;
        let mut r = TcpReceiver::new(0, 1, 0, &s, 1500);
        let mut out = Vec::new();
        r.on_packet(Time::ZERO, &Packet::new(Kind::Syn, 0, 0, 1, SYN_BYTES), &mut out);
        assert_eq!(feed(&mut r, 0..40, Time::from_ms(1)).len(), 40);
    }

    fn ecn_receiver(cca: &str) -> TcpReceiver {
        let mut sp = spec();
        sp.ecn = true;
        sp.cca = cca.into();
        let mut r = TcpReceiver::new(0, 1, 0, &sp, 1500);
        let mut out = Vec::new();
        r.on_packet(Time::ZERO, &Packet::new(Kind::Syn, 0, 0, 1, SYN_BYTES), &mut out);
        feed(&mut r, 0..16, Time::from_ms(1));
        r
    }

    fn marked(k: u64, ce: bool, cwr: bool) -> Packet {
        let mut p = data(k * MSS as u64, MSS);
        p.ecn = if ce { Ecn::Ce } else { Ecn::Ect0 };
        p.cwr = cwr;
        p
    }

    #[test]
    fn ecn_classic_echoes_ece_until_cwr() {
        let mut r = ecn_receiver("cubic");
        let mut out = Vec::new();
        r.on_packet(Time::from_ms(2), &marked(16, true, false), &mut out);
        // CE enters quick-ack mode: the mark is echoed at once.
        assert_eq!(out.last().map(|a| a.ece), Some(true));
        for k in 17..21 {
            r.on_packet(Time::from_ms(2), &marked(k, false, false), &mut out);
        }
        assert!(out.iter().all(|a| a.ece), "ECE persists until CWR");
        out.clear();
        r.on_packet(Time::from_ms(3), &marked(21, false, true), &mut out);
        r.on_packet(Time::from_ms(3), &marked(22, false, false), &mut out);
        assert_eq!(out.last().map(|a| a.ece), Some(false));
    }

    #[test]
    fn ecn_dctcp_acks_each_ce_flip_at_once_with_the_exact_state() {
        let mut r = ecn_receiver("dctcp");
        let mut out = Vec::new();
        // One unmarked segment waits for its partner (delayed ACK)…
        r.on_packet(Time::from_ms(2), &marked(16, false, false), &mut out);
        assert!(out.is_empty());
        // …then a CE segment flips the state: the pending ACK leaves first without ECE, and
        // the CE segment is ACKed at once with ECE.
        r.on_packet(Time::from_ms(2), &marked(17, true, false), &mut out);
        assert_eq!(out.len(), 2);
        assert_eq!((out[0].ack, out[0].ece), (17 * MSS as u64, false));
        assert_eq!((out[1].ack, out[1].ece), (18 * MSS as u64, true));
        // A second CE segment is no flip: normal delayed ACK rules, ECE still set.
        out.clear();
        r.on_packet(Time::from_ms(2), &marked(18, true, false), &mut out);
        r.on_packet(Time::from_ms(2), &marked(19, true, false), &mut out);
        assert_eq!(out.len(), 1);
        assert!(out[0].ece);
    }
}
