//! The sending side of a TCP connection, as Linux decides (`net/ipv4/tcp_input.c` `tcp_ack()`,
//! `tcp_fastretrans_alert()`; `tcp_output.c` `tcp_write_xmit()`; `tcp_recovery.c` RACK;
//! `tcp_timer.c`). Read RFC 9293 (TCP), RFC 6675 (SACK recovery), RFC 8985 (RACK-TLP),
//! RFC 6937 (PRR) and RFC 6298 (RTO) first; where Linux and the RFCs differ we follow Linux
//! and say so.
//!
//! Sequence numbers are 64-bit byte offsets from 0 (the first payload byte); the SYN is not
//! counted. cwnd is in packets (`Sock::snd_cwnd`), as in Linux.

use std::cell::Cell;

use crate::host::tsq::Wmem;
use crate::packet::{Ecn, FlowId, Kind, NodeId, Packet, SeqRange};
use crate::tcp::cc::{
    self, AckSample, AnyCc, CaEvent, CaState, CongestionOps, RateSample, Sock,
    TCP_INFINITE_SSTHRESH,
};
use crate::tcp::config::{FlowSpec, HostQdisc};
use crate::tcp::rtt::RttEstimator;
use crate::tcp::rwnd::TCP_MSS_DEFAULT;
use crate::tcp::scoreboard::{AckDelta, RackAdvance, SKB_HEAD, Scoreboard, Segment, TxInfo};
use crate::tcp::write_queue::WriteQueue;
use crate::tcp::{SYN_BYTES, header_bytes, mss_from_mtu, timer_wheel};
use crate::time::Time;

/// `sysctl_tcp_pacing_ss_ratio` = 200 and `sysctl_tcp_pacing_ca_ratio` = 120 (percent,
/// `net/ipv4/tcp_ipv4.c`): `tcp_update_pacing_rate()` paces at 2× cwnd/srtt while
/// cwnd < ssthresh/2, else 1.2×.
pub const TCP_PACING_SS_RATIO: u64 = 200;
pub const TCP_PACING_CA_RATIO: u64 = 120;
/// `tcp_update_skb_after_send()` paces only once 10 data segments are out.
pub const PACING_FREE_SEGS: u64 = 10;

/// `sysctl_tcp_limit_output_bytes` (`net/ipv4/tcp_ipv4.c`): TCP Small Queues let at most this
/// many bytes of one socket wait in the qdisc and NIC — 1 MiB (16 × 64 KiB) in the kernels
/// of reference/linux-tcp.md §10.4 (later kernels raised it to 4 MiB).
pub const TCP_LIMIT_OUTPUT_BYTES: u64 = 1 << 20;

/// `net.ipv4.tcp_tso_win_divisor` default (`net/ipv4/tcp_ipv4.c`): a TSO skb is not deferred
/// once a third of the window may be sent.
pub const TCP_TSO_WIN_DIVISOR: u64 = 3;
/// `tcp_tso_should_defer()`: no deferral if nothing was sent for 1 ms (`NSEC_PER_MSEC`), nor
/// for an ACK due later than min(srtt/2, 1 ms).
pub const TSO_DEFER_MAX: Time = Time::from_ms(1);
/// `TCP_TIMEOUT_MIN_US` (`include/net/tcp.h`): 2 ms added to TLP and RACK timers.
pub const TCP_TIMEOUT_MIN: Time = Time::from_ms(2);
/// Linux `tp->reordering` initial value, `sysctl_tcp_reordering` = `TCP_FASTRETRANS_THRESH` = 3
/// (`include/net/tcp.h`): RFC 6675's DupThresh.
pub const TCP_FASTRETRANS_THRESH: u32 = 3;
/// `net.ipv4.tcp_max_reordering` default (`tcp_sk_init()` in `net/ipv4/tcp_ipv4.c`): the most
/// `tp->reordering` grows to, in packets.
pub const TCP_MAX_REORDERING: u32 = 300;
/// `MAX_TCP_HEADER` (`include/net/tcp.h`, x86_64 with 64-byte L1 cache lines): 320 bytes of
/// headroom counted per MSS when sizing the send buffer.
pub const MAX_TCP_HEADER: u64 = 320;
/// `SKB_DATA_ALIGN(sizeof(struct skb_shared_info))` = 320 and `SKB_DATA_ALIGN(sizeof(struct
/// sk_buff))` = 256 on x86_64 (`include/linux/skbuff.h`), used by `tcp_sndbuf_expand()`.
pub const SKB_SHINFO_BYTES: u64 = 320;
pub const SKB_STRUCT_BYTES: u64 = 256;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Closed,
    SynSent,
    Established,
    /// Every byte acknowledged.
    Done,
}

/// What the single retransmit timer slot is armed for (Linux `icsk_pending`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimerKind {
    Rto,
    /// Tail loss probe (`ICSK_TIME_LOSS_PROBE`).
    Tlp,
    /// RACK reordering timeout (`ICSK_TIME_REO_TIMEOUT`).
    Reo,
}

/// What `tcp_tso_segs()` depends on that moves: pacing rate (B/s), min RTT (µs), MSS.
type TsoInputs = (u64, u32, u32);

/// RACK state (`tp->rack`): the most recently sent segment known delivered.
#[derive(Clone, Copy, Debug, Default)]
struct Rack {
    xmit: Time,
    end: u64,
    rtt: Time,
    advanced: bool,
}

/// The constant parts of a CCA's table (`tcp_congestion_ops` flags and the socket's pacing
/// status), see [`TcpSender::cc_traits`].
#[derive(Clone, Copy, Debug)]
struct CcTraits {
    /// TCP paces internally ([`TcpSender::internal_pacing`]).
    internal_pacing: bool,
    /// The CCA sets the pacing rate itself (`CongestionOps::wants_pacing`).
    wants_pacing: bool,
    /// `cong_control` replaces the core's cwnd logic (`CongestionOps::has_cong_control`).
    has_cong_control: bool,
    /// `TCP_CONG_NEEDS_ECN` (`CongestionOps::needs_ecn`).
    needs_ecn: bool,
    /// `CongestionOps::sndbuf_expand`.
    sndbuf_expand: u32,
}

impl CcTraits {
    /// `cc`'s, on a host with `fq` (`fq_host`) or a socket with `SO_MAX_PACING_RATE` set
    /// (`max_pacing_rate` below `u64::MAX`).
    fn of(cc: &AnyCc, fq_host: bool, max_pacing_rate: u64) -> CcTraits {
        // `SK_PACING_NEEDED`: the CCA asks for it (BBR) or the application set
        // `SO_MAX_PACING_RATE`, which `sk_setsockopt()` turns into internal pacing — unless the
        // host runs `fq`, which then paces every flow from the departure times TCP stamps
        // (`SK_PACING_FQ`).
        let internal_pacing = !fq_host && (cc.wants_pacing() || max_pacing_rate != u64::MAX);
        CcTraits {
            internal_pacing,
            wants_pacing: cc.wants_pacing(),
            has_cong_control: cc.has_cong_control(),
            needs_ecn: cc.needs_ecn(),
            sndbuf_expand: cc.sndbuf_expand(),
        }
    }
}

/// Counters a run reports per flow.
#[derive(Clone, Copy, Debug, Default)]
pub struct SenderStats {
    /// Segments retransmitted (`tcpi_total_retrans`).
    pub retransmits: u64,
    /// RTO expirations.
    pub timeouts: u64,
    /// Tail loss probes sent (`LINUX_MIB_TCPLOSSPROBES`).
    pub loss_probes: u64,
    /// Segments the receiver reported received twice (`tcpi_dsack_dups`).
    pub dsack_dups: u64,
    /// Reordering detected from SACKs and cumulative ACKs (`LINUX_MIB_TCPSACKREORDER`).
    pub reorder_events: u64,
    /// Fast-recovery episodes entered (`tcp_enter_recovery()`: `LINUX_MIB_TCPSACKRECOVERY`).
    pub recoveries: u64,
    /// RTOs that fired in fast recovery, the first of a series (`tcp_retransmit_timer()` with
    /// `icsk_retransmits == 0`: `LINUX_MIB_TCPSACKRECOVERYFAIL`): a lost retransmission that
    /// nothing sent after it could reveal.
    pub recovery_timeouts: u64,
    pub max_cwnd: u32,
    pub syn_at: Option<Time>,
    pub done_at: Option<Time>,
}

pub struct TcpSender {
    pub flow: FlowId,
    pub src: NodeId,
    pub dst: NodeId,
    pub state: State,
    pub tp: Sock,
    pub cc: AnyCc,
    pub rtt: RttEstimator,
    board: Scoreboard,
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// End of the last short segment sent (`tp->snd_sml`), for Minshall's Nagle.
    snd_sml: u64,
    /// Peer's advertised window, bytes beyond `snd_una`.
    snd_wnd: u64,
    /// The largest window the peer advertised (`tp->max_window`); set by
    /// [`TcpSender::set_max_window`], which keeps `size_goal` with it.
    max_window: u64,
    /// [`TcpSender::xmit_size_goal`] for the current `max_window`: asked several times per
    /// skb, it moves with nothing else (the MSS and `gso_max_size` are set once).
    size_goal: u64,
    size: Option<u64>,
    wmem: [u64; 3],
    /// `sk_sndbuf`, bytes; grows with cwnd up to `tcp_wmem[2]`.
    sndbuf: u64,
    /// Bytes the application has copied into the socket (`tp->write_seq`), see `app_send()`.
    written: u64,
    /// The application was refused memory and sleeps in `sk_stream_wait_memory()`
    /// (`SOCK_NOSPACE`): it neither tops up the tail skb nor starts one until woken.
    write_blocked: bool,
    initcwnd: u32,
    /// Recovery point (`high_seq`).
    high_seq: u64,
    prr_delivered: u32,
    prr_out: u32,
    tlp_high_seq: Option<u64>,
    /// `tcp_tso_should_defer()` waited for cwnd: the flow counts as cwnd-limited.
    defer_cwnd_limited: bool,
    /// The skbs of written, unsent data; what is sent is cut from them, never joined.
    write_queue: WriteQueue,
    /// Where the skbs `send_train()` built without pacing start (new data), for `group_skbs()`.
    train_skb_starts: Vec<u64>,
    /// The last probe retransmitted data (`tp->tlp_retrans`).
    tlp_retrans: bool,
    /// RTOs since `snd_una` last moved (`icsk_retransmits`).
    rto_retransmits: u32,
    /// `TCP_ECN_QUEUE_CWR`: set CWR on the next new data segment.
    cwr_pending: bool,
    /// The sending host runs `fq`: pacing by departure-time stamps (`SK_PACING_FQ`).
    fq_host: bool,
    /// What the CCA's table says of itself, read on every ACK and skb and the same for the
    /// connection's life once `init` has run (DCTCP falls back to Reno there): kept here so
    /// the hot path does not dispatch for it.
    cc_traits: CcTraits,
    /// What the socket has below TCP in its host (`sk_wmem_alloc`), which its host counts
    /// down as its NIC frees each skb: TCP Small Queues' account.
    pub tsq: Wmem,
    /// Earliest departure of the next burst (`tp->tcp_wstamp_ns`) under internal pacing.
    next_send: Time,
    /// A pacing hrtimer is waiting for `next_send`.
    pace_at: Option<Time>,
    /// Data segments sent, retransmissions included (`tp->data_segs_out`).
    data_segs_out: u64,
    rack: Rack,
    cwnd_usage_seq: u64,
    timer: Option<(TimerKind, Time)>,
    /// `tp->reord_seen`: reordering was detected at least this many times; from then on RACK
    /// waits its reordering window even in recovery.
    reord_seen: u32,
    /// `tp->reordering`: the reordering degree in packets (DupThresh).
    reordering: u32,
    /// One jiffy when timers run on the kernel's timer wheel (`timers = "jiffies"`), else exact.
    jiffy: Option<Time>,
    rto_min: Time,
    /// `net.ipv4.tcp_early_retrans` is 3 or 4 ([`FlowSpec::loss_probe`]).
    loss_probe: bool,
    ecn_ok: bool,
    dscp: u8,
    /// Latest peer TSval, echoed in TSecr.
    ts_recent: Time,
    /// `tp->delivered_mstamp`: time of the latest delivery (rate sampling).
    delivered_time: Time,
    /// `tp->first_tx_mstamp`: send time of the most recently delivered segment.
    first_tx: Time,
    /// `tp->app_limited`: samples are app-limited until `delivered` passes this (0 = not).
    app_limited_until: u64,
    /// [`TcpSender::tso_segs`] and the inputs it was computed from.
    tso_memo: Cell<Option<(TsoInputs, u32)>>,
    pub stats: SenderStats,
}

impl TcpSender {
    pub fn new(flow: FlowId, src: NodeId, dst: NodeId, spec: &FlowSpec, mtu: u32) -> TcpSender {
        let mss = mss_from_mtu(mtu);
        let cc = cc::for_flow(spec).expect("scenario validation checks the CCA name");
        // `sk_pacing_status` != SK_PACING_NONE: fq on the host sets SK_PACING_FQ on the socket's
        // first skb (`fq_classify()`, sch_fq.c), SO_MAX_PACING_RATE sets SK_PACING_NEEDED
        // (`sk_setsockopt()`). CUBIC's HyStart reads it: a paced ACK train may span a whole
        // delay_min (`hystart_update()`), where an unpaced one ends by delay_min / 2.
        let paced = matches!(spec.qdisc, HostQdisc::Fq(_)) || spec.max_pacing_rate.is_some();
        let cc = match cc {
            AnyCc::Cubic(c) if paced => AnyCc::Cubic(cc::cubic::Cubic::new(cc::cubic::Params {
                paced: true,
                ..c.params().clone()
            })),
            cc => cc,
        };
        let mut tp = Sock::new(mss, spec.initcwnd, spec.hz);
        // On the jiffy wheel the route's rto_min counts in whole jiffies, as Linux's does.
        let rto_min = match spec.timer_jiffy() {
            Some(_) => timer_wheel::round_up_to_jiffies(spec.rto_min, spec.hz),
            None => spec.rto_min,
        };
        // A CCA that needs ECN negotiates it whatever the host's `tcp_ecn` (DCTCP).
        let ecn_ok = spec.ecn || cc.needs_ecn();
        tp.ecn_ok = ecn_ok;
        tp.gso_max_size = spec.gso_max_size;
        // Bits/s in the scenario, bytes/s in the socket.
        tp.max_pacing_rate = spec.max_pacing_rate.map_or(u64::MAX, |r| r.bps() / 8);
        let fq_host = matches!(spec.qdisc, HostQdisc::Fq(_));
        let cc_traits = CcTraits::of(&cc, fq_host, tp.max_pacing_rate);
        let size_goal = xmit_size_goal(tp.mss, tp.gso_max_size, 0);
        TcpSender {
            flow,
            src,
            dst,
            state: State::Closed,
            tp,
            cc,
            rtt: RttEstimator::new(rto_min),
            board: Scoreboard::default(),
            snd_una: 0,
            snd_nxt: 0,
            snd_sml: 0,
            snd_wnd: 0,
            max_window: 0,
            size_goal,
            size: spec.size_bytes,
            wmem: spec.tcp_wmem,
            sndbuf: spec.tcp_wmem[1],
            written: 0,
            write_blocked: false,
            initcwnd: spec.initcwnd,
            high_seq: 0,
            prr_delivered: 0,
            prr_out: 0,
            tlp_high_seq: None,
            defer_cwnd_limited: false,
            write_queue: WriteQueue::default(),
            train_skb_starts: Vec::new(),
            tlp_retrans: false,
            rto_retransmits: 0,
            cwr_pending: false,
            fq_host,
            cc_traits,
            tsq: Wmem::new(match &spec.qdisc {
                HostQdisc::Fq(fq) => fq.flow_limit as u64,
                _ => 0,
            }),
            next_send: Time::ZERO,
            pace_at: None,
            data_segs_out: 0,
            rack: Rack::default(),
            cwnd_usage_seq: 0,
            timer: None,
            reord_seen: 0,
            reordering: TCP_FASTRETRANS_THRESH,
            jiffy: spec.timer_jiffy(),
            rto_min,
            loss_probe: spec.loss_probe(),
            ecn_ok,
            dscp: spec.dscp,
            ts_recent: Time::ZERO,
            delivered_time: Time::ZERO,
            first_tx: Time::ZERO,
            app_limited_until: 0,
            tso_memo: Cell::new(None),
            stats: SenderStats::default(),
        }
    }

    pub fn mss(&self) -> u32 {
        self.tp.mss
    }

    /// When the retransmit timer slot (RTO, TLP or RACK reorder) is due, if armed.
    pub fn timer_deadline(&self) -> Option<Time> {
        self.timer.map(|(_, t)| t)
    }

    /// When the pacing timer lets the next train leave, if one is waiting.
    pub fn pace_deadline(&self) -> Option<Time> {
        self.pace_at
    }

    pub fn timer_kind(&self) -> Option<TimerKind> {
        self.timer.map(|(k, _)| k)
    }

    pub fn cwnd_bytes(&self) -> u64 {
        self.tp.snd_cwnd as u64 * self.tp.mss as u64
    }

    // ---- connection set-up ----

    /// Active open: send the SYN (RFC 9293 §3.5), first RTO `TCP_TIMEOUT_INIT`.
    pub fn open(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.state = State::SynSent;
        self.stats.syn_at.get_or_insert(now);
        self.send_syn(now, out);
    }

    fn send_syn(&mut self, now: Time, out: &mut Vec<Packet>) {
        let mut p = Packet::new(Kind::Syn, self.flow, self.src, self.dst, SYN_BYTES);
        p.ts_val = now;
        p.dscp = self.dscp;
        out.push(p);
        self.timer = Some((TimerKind::Rto, self.fires_at(now, self.rtt.rto())));
    }

    fn on_syn_ack(&mut self, now: Time, p: &Packet, out: &mut Vec<Packet>) {
        if self.state != State::SynSent {
            return; // a duplicate SYN-ACK
        }
        // The SYN-ACK samples the RTT (`tcp_ack_update_rtt()` with `FLAG_SYN_ACKED`), unless
        // the SYN was retransmitted and the echo is ambiguous — timestamps resolve it.
        self.rtt.on_sample(now - p.ts_ecr, 0, 0);
        self.rtt.reset_backoff();
        self.tp.srtt_us = self.rtt.srtt_us();
        self.note_min_rtt(now - p.ts_ecr);
        self.ts_recent = p.ts_val;
        // The window in a SYN-ACK is never scaled (RFC 7323 §2.2).
        self.snd_wnd = p.rwnd.min(65_535);
        self.set_max_window(self.snd_wnd);
        self.state = State::Established;
        self.tp.now = now;
        self.cc.init(&mut self.tp);
        self.cc_traits = CcTraits::of(&self.cc, self.fq_host, self.tp.max_pacing_rate);
        if self.tp.pacing_rate == 0 {
            self.update_pacing_rate();
        }
        self.sndbuf_expand();
        self.timer = None;
        self.app_send();
        self.xmit(now, out);
        // Nothing to send in a zero-length transfer: the handshake completes the flow. A
        // window too small for a segment (`tcp_rmem = "1 1 1"`) also sends nothing, but the
        // transfer is not done: it waits for the window, as Linux's does (`tcp_snd_wnd_test()`).
        if self.board.is_empty() && self.all_acked() {
            self.finish(now);
        }
    }

    // ---- ACK processing: `tcp_ack()` ----

    pub fn on_packet(&mut self, now: Time, p: &Packet, out: &mut Vec<Packet>) {
        self.tp.now = now;
        match p.kind {
            Kind::SynAck => self.on_syn_ack(now, p, out),
            Kind::Ack if matches!(self.state, State::Established) => self.on_ack(now, p, out),
            _ => {}
        }
    }

    fn on_ack(&mut self, now: Time, p: &Packet, out: &mut Vec<Packet>) {
        if p.ack > self.snd_nxt || p.ack < self.snd_una {
            return; // acks data never sent, or an old reordered ACK
        }
        self.ts_recent = p.ts_val;
        let prior_snd_una = self.snd_una;
        let prior_in_flight = self.board.in_flight();
        let prior_fack = self.board.highest_sack_seq(self.snd_una);

        let mut d = AckDelta::at(now, Time::from_us(self.tp.min_rtt_us as u64));
        self.board.cumulative_ack(p.ack, &mut d);
        let (dsack, blocks) = split_dsack(p.sack_blocks(), p.ack);
        self.board.sack(blocks, p.ack, &mut d);
        // A hole filled by an original segment: SACKed late, or cumulatively acked below an
        // earlier SACK (`tcp_sacktag_write_queue()`, `tcp_clean_rtx_queue()`).
        if let Some(low) = d.reord_sacked {
            self.check_sack_reordering(low, p.ack);
        }
        if let Some(low) = d.reord_acked.filter(|&low| low < prior_fack) {
            self.check_sack_reordering(low, p.ack);
        }
        // `tcp_dsack_seen()`: a D-SACK of at most one segment ending at `tlp_high_seq` says the
        // probe and the original both arrived (FLAG_DSACK_TLP).
        let dsack_tlp = dsack.is_some_and(|r| {
            r.end - r.start <= self.tp.mss as u64 && self.tlp_high_seq == Some(r.end)
        });
        // A spurious retransmission is delivered too (`tcp_dsack_seen()` adds it to
        // `sack_delivered`): PRR, cwnd growth and the rate sample count it.
        let dup_segs = dsack.map_or(0, |r| self.dsack_seen(r));
        self.snd_una = p.ack;
        self.snd_wnd = p.rwnd;
        if self.snd_wnd > self.max_window {
            self.set_max_window(self.snd_wnd);
        }
        let acked_sacked = d.delivered + dup_segs;
        self.tp.delivered += acked_sacked as u64;
        // ECN-Echo (RFC 3168 §6.1.2): counted into `delivered_ce` as `tcp_count_delivered()`
        // does, reported to the CCA, and answered with a CWR episode below.
        let ece = self.ecn_ok && p.ece;
        if ece {
            self.tp.delivered_ce += acked_sacked as u64;
        }
        if acked_sacked > 0 {
            self.delivered_time = now;
        }
        let snd_una_advanced = self.snd_una > prior_snd_una;

        if snd_una_advanced {
            self.rto_retransmits = 0;
        }
        // RTT (`tcp_clean_rtx_queue()`, `tcp_ack_update_rtt()`): the first newly acked segment,
        // unless the cumulative ACK covered a retransmission (Karn), else the first newly
        // SACKed one, else the timestamp echo. Any valid sample ends the RTO backoff
        // (RFC 6298 §5.7 as Linux reads it).
        let seq_rtt = (!d.cum_retrans_acked).then_some(d.first_ackt).flatten().map(|t| now - t);
        let sack_rtt = d.first_sackt.map(|t| now - t);
        let ts_rtt = (snd_una_advanced && p.ts_ecr > Time::ZERO).then(|| now - p.ts_ecr);
        let rtt_sample = seq_rtt.or(sack_rtt).or(ts_rtt);
        // The CCA's RTT, `ca_rtt_us`: of the last newly SACKed segment never retransmitted, else
        // of the last such one cumulatively acked, else the timestamp echo (Karn's rule as
        // `tcp_clean_rtx_queue()` and `tcp_ack_update_rtt()` apply it). It is the rate sample's
        // `rtt_us`, BBR's min RTT among them: a retransmission's send time would make an ACK
        // the original earned look one path RTT too fast.
        let ca_rtt = d
            .last_sackt
            .or((!d.cum_retrans_acked).then_some(d.last_ackt).flatten())
            .map(|t| now - t)
            .or(if seq_rtt.or(sack_rtt).is_none() { ts_rtt } else { None });
        if let Some(r) = rtt_sample {
            self.rtt.on_sample(r, self.snd_una, self.snd_nxt);
            self.rtt.reset_backoff();
            self.tp.srtt_us = self.rtt.srtt_us();
            self.note_min_rtt(ca_rtt.unwrap_or(r));
        }
        self.rack_advance(&d.rack);

        self.sync_sock();
        // `tcp_clean_rtx_queue()` reports every ACK, with the packets the cumulative ACK took off
        // the queue (SACKed earlier or not); H-TCP grows by that count.
        let sample = AckSample {
            pkts_acked: d.acked,
            rtt_us: ca_rtt.map_or(-1, |t| t.as_us() as i64),
            in_flight: prior_in_flight,
        };
        self.cc.pkts_acked(&mut self.tp, &sample);

        // `tcp_in_ack_event()` runs before the loss and ECN state changes of this ACK (and
        // before `tcp_process_tlp_ack()`): DCTCP's α is updated before a CWR it causes reads it
        // in `dctcp_ssthresh()`.
        let mut flags = 0;
        if snd_una_advanced {
            flags |= cc::ack_flags::WIN_UPDATE;
        }
        if ece {
            flags |= cc::ack_flags::ECE;
        }
        self.cc.in_ack_event(&mut self.tp, flags);

        // Loss detection and state (`tcp_fastretrans_alert()`).
        let mut newly_lost = 0;
        let mut rack_timer = false;
        let prior_retrans = self.board.retrans_out;
        if self.rack.advanced {
            self.rack.advanced = false;
            (newly_lost, rack_timer) = self.rack_mark_lost(now);
        }
        // `FLAG_LOST_RETRANS` (`tcp_identify_packet_loss()`): this ACK showed a retransmission
        // lost again.
        let lost_retrans = self.board.retrans_out < prior_retrans;
        self.process_tlp_ack(p.ack, snd_una_advanced, d.sacked > 0, dsack_tlp);
        self.update_state(ece, lost_retrans);
        // `FLAG_SET_XMIT_TIMER` (`tcp_clean_rtx_queue()`): data cumulatively acked, or a SACK of
        // an original sent before the head's last transmission — a SACK of data sent after it
        // must not keep pushing the RTO out in recovery. Not when RACK just armed its timer.
        let sacked_before_head =
            d.first_sackt.is_some_and(|t| self.board.head().is_some_and(|h| t < h.sent_at));
        if (snd_una_advanced || sacked_before_head) && !rack_timer {
            self.set_xmit_timer(now);
        }

        // cwnd (`tcp_cong_control()`).
        let rs = self.rate_sample(now, &d, acked_sacked, newly_lost, prior_in_flight, ca_rtt);
        self.sync_sock();
        // A CCA marks the flow app-limited by setting `tp.app_limited` (BBR in PROBE_RTT);
        // Linux's marker is the delivered count at which that ends.
        self.tp.app_limited = false;
        if self.cc.cong_control(&mut self.tp, &rs) {
            self.tp.pacing_rate = self.tp.pacing_rate.min(self.tp.max_pacing_rate);
            if self.tp.app_limited {
                self.app_limited_until = (self.tp.delivered + self.board.in_flight() as u64).max(1);
            }
        } else {
            if matches!(self.tp.ca_state, CaState::Recovery | CaState::Cwr) {
                self.cwnd_reduction(acked_sacked, newly_lost, snd_una_advanced);
            } else if snd_una_advanced || (self.reordering > TCP_FASTRETRANS_THRESH && d.sacked > 0)
            {
                // `tcp_may_raise_cwnd()`: an ACK of new data grows cwnd (`FLAG_DATA_ACKED`), and
                // once `tp->reordering` is above its default a SACK of new data does too
                // (`FLAG_FORWARD_PROGRESS`).
                self.cc.cong_avoid(&mut self.tp, acked_sacked);
            }
        }
        if !self.cc_traits.wants_pacing || self.tp.pacing_rate == 0 {
            self.update_pacing_rate();
        }
        self.stats.max_cwnd = self.stats.max_cwnd.max(self.tp.snd_cwnd);
        if snd_una_advanced {
            self.sndbuf_expand();
            // `tcp_check_space()`: freed skbs may wake the writer.
            self.app_send();
        }

        if self.all_acked() {
            self.finish(now);
            return;
        }
        self.xmit(now, out);
    }

    fn all_acked(&self) -> bool {
        self.size.is_some_and(|s| self.snd_una >= s)
    }

    fn finish(&mut self, now: Time) {
        self.state = State::Done;
        self.timer = None;
        self.pace_at = None;
        self.stats.done_at = Some(now);
    }

    /// The application writes `bytes` more (a persistent connection's next response): the
    /// transfer grows and sending resumes.
    pub fn app_write(&mut self, now: Time, bytes: u64, out: &mut Vec<Packet>) {
        if self.state == State::Established || self.state == State::Done {
            self.check_app_limited();
        }
        self.size = Some(self.size.unwrap_or(0) + bytes);
        if self.state == State::Done {
            self.state = State::Established;
        }
        if self.state == State::Established {
            self.tp.now = now;
            self.sndbuf_expand();
            self.app_send();
            self.xmit(now, out);
        }
    }

    /// `tcp_slow_start_after_idle_check()` → `tcp_cwnd_restart()` (RFC 5681 §4.1, as Linux
    /// does it with `tcp_slow_start_after_idle` = 1): after more than an RTO without sending,
    /// cwnd halves once per RTO idle, down to the initial window; CCAs with their own
    /// `cong_control` (BBR) are exempt.
    fn restart_after_idle(&mut self, now: Time) {
        if !self.board.is_empty() || self.cc_traits.has_cong_control || self.data_segs_out == 0 {
            return;
        }
        let rto = self.rtt.rto();
        let idle = now.saturating_sub(self.tp.lsndtime);
        if idle <= rto {
            return;
        }
        self.cc.cwnd_event(&mut self.tp, CaEvent::CwndRestart);
        // `tcp_current_ssthresh()`.
        self.tp.snd_ssthresh = if matches!(self.tp.ca_state, CaState::Cwr | CaState::Recovery) {
            self.tp.snd_ssthresh
        } else {
            self.tp.snd_ssthresh.max((self.tp.snd_cwnd >> 1) + (self.tp.snd_cwnd >> 2))
        };
        let restart = self.initcwnd.min(self.tp.snd_cwnd);
        let mut cwnd = self.tp.snd_cwnd;
        let mut delta = idle;
        while delta > rto && cwnd > restart {
            delta -= rto;
            cwnd >>= 1;
        }
        self.tp.snd_cwnd = cwnd.max(restart);
    }

    fn note_min_rtt(&mut self, r: Time) {
        let us = (r.as_us() as u32).max(1);
        if self.tp.min_rtt_us == 0 || us < self.tp.min_rtt_us {
            self.tp.min_rtt_us = us;
        }
    }

    /// Bring the socket fields CCAs read up to date before a hook call.
    fn sync_sock(&mut self) {
        self.tp.packets_out = self.board.packets_out();
        self.tp.in_flight = self.board.in_flight();
        self.tp.snd_una = self.snd_una;
        self.tp.snd_nxt = self.snd_nxt;
    }

    /// `tcp_rate_skb_sent()` (`net/ipv4/tcp_rate.c`): a send phase starts when nothing is in
    /// flight; the segment remembers the delivery state it left in.
    fn tx_info(&mut self, now: Time) -> TxInfo {
        if self.board.is_empty() {
            self.first_tx = now;
            self.delivered_time = now;
        }
        TxInfo {
            delivered: self.tp.delivered,
            delivered_mstamp: self.delivered_time,
            first_tx: self.first_tx,
            app_limited: self.app_limited_until > 0,
        }
    }

    /// `tcp_rate_skb_delivered()` + `tcp_rate_gen()`: the rate over the longer of the send
    /// phase and the ACK phase of the most recently sent segment this ACK delivered; a sample
    /// shorter than min RTT is discarded (it would overestimate bandwidth).
    fn rate_sample(
        &mut self,
        now: Time,
        d: &AckDelta,
        acked_sacked: u32,
        losses: u32,
        prior_in_flight: u32,
        ca_rtt: Option<Time>,
    ) -> RateSample {
        if self.app_limited_until > 0 && self.tp.delivered > self.app_limited_until {
            self.app_limited_until = 0;
        }
        let rtt_us = ca_rtt.map_or(-1, |t| t.as_us() as i64);
        let mut rs = RateSample {
            delivered: -1,
            interval_us: -1,
            rtt_us,
            losses,
            acked_sacked,
            prior_in_flight,
            ..Default::default()
        };
        let Some(seg) = d.rate_from else { return rs };
        if seg.tx.delivered_mstamp == Time::ZERO
            && seg.tx.delivered == 0
            && seg.tx.first_tx == Time::ZERO
        {
            return rs;
        }
        let snd = seg.sent_at.saturating_sub(seg.tx.first_tx);
        self.first_tx = seg.sent_at;
        let ack = now.saturating_sub(seg.tx.delivered_mstamp);
        let interval = snd.max(ack);
        rs.delivered = (self.tp.delivered - seg.tx.delivered) as i64;
        rs.prior_delivered = seg.tx.delivered;
        rs.is_app_limited = seg.tx.app_limited;
        if interval.as_us() < self.tp.min_rtt_us as u64 {
            return rs;
        }
        rs.interval_us = interval.as_us() as i64;
        rs
    }

    /// `tcp_rate_check_app_limited()`, which Linux runs as the application writes
    /// (`tcp_sendmsg()`): nothing more to send while cwnd has room (the application, or the
    /// send buffer, is the limit), so samples taken until this much has been delivered are
    /// marked app-limited.
    fn check_app_limited(&mut self) {
        let unsent = self.written().saturating_sub(self.snd_nxt);
        if unsent < self.tp.mss as u64
            && self.tsq.is_empty()
            && self.board.in_flight() < self.tp.snd_cwnd
            && self.board.lost_out <= self.board.retrans_out
        {
            self.app_limited_until = (self.tp.delivered + self.board.in_flight() as u64).max(1);
        }
    }

    // ---- RACK (`net/ipv4/tcp_recovery.c`) ----

    /// `tcp_rack_advance()`, the calls of one ACK together: remember the most recently sent
    /// delivered segment, and the RTT of the last one Linux looked at ([`RackAdvance`]).
    fn rack_advance(&mut self, adv: &RackAdvance) {
        let (Some((_, end, xmit)), Some(rtt)) = (adv.newest, adv.rtt()) else { return };
        self.rack.advanced = true;
        self.rack.rtt = rtt;
        if xmit > self.rack.xmit || (xmit == self.rack.xmit && end > self.rack.end) {
            self.rack.xmit = xmit;
            self.rack.end = end;
        }
    }

    /// `tcp_dsack_seen()`: the segments a D-SACK reports received twice, counted in
    /// `tcpi_dsack_dups`; 0 for a dubious one, longer than any window the peer offered or
    /// reporting more duplicates than were ever resent.
    fn dsack_seen(&mut self, r: SeqRange) -> u32 {
        let len = r.end.saturating_sub(r.start);
        if len == 0 || len > self.max_window {
            return 0;
        }
        let dup_segs = len.div_ceil(self.tp.mss as u64).max(1);
        self.stats.dsack_dups += dup_segs;
        if self.stats.dsack_dups > self.stats.retransmits {
            return 0;
        }
        dup_segs as u32
    }

    /// `tcp_check_sack_reordering()`: data below the highest SACK (`fack`) arrived late; raise
    /// `tp->reordering` to the distance, in packets, and remember it (`reord_seen`).
    fn check_sack_reordering(&mut self, low: u64, snd_una: u64) {
        let fack = self.board.highest_sack_seq(snd_una);
        if low >= fack {
            return;
        }
        let mss = self.tp.mss as u64;
        let metric = fack - low;
        if metric > self.reordering as u64 * mss {
            self.reordering = (metric.div_ceil(mss) as u32).min(TCP_MAX_REORDERING);
        }
        self.reord_seen += 1;
        self.stats.reorder_events += 1;
    }

    /// `tcp_rack_reo_wnd()`: before any reordering is seen, no wait once in recovery or once
    /// `tp->reordering` segments are SACKed; otherwise min RTT / 4, at most SRTT (RFC 8985
    /// §6.2).
    fn rack_reo_wnd(&self) -> Time {
        if self.reord_seen == 0
            && (self.tp.ca_state >= CaState::Recovery || self.board.sacked_out >= self.reordering)
        {
            return Time::ZERO;
        }
        let quarter = Time::from_us(self.tp.min_rtt_us as u64 / 4);
        quarter.min(Time::from_us(self.tp.srtt_us as u64))
    }

    /// `tcp_rack_detect_loss()`: marks lost what RACK finds lost; returns how many, and how
    /// long until the next segment still within its reordering window would be.
    fn rack_detect_loss(&mut self, now: Time) -> (u32, Option<Time>) {
        let reo = self.rack_reo_wnd();
        let (lost, wait) =
            self.board.rack_detect_loss(now, self.rack.xmit, self.rack.end, self.rack.rtt, reo);
        self.tp.lost += lost as u64;
        (lost, wait)
    }

    /// `tcp_rack_mark_lost()`: `tcp_rack_detect_loss()`, and the reordering timer armed for a
    /// segment still within its window. Returns the segments newly marked lost and whether
    /// the timer was armed.
    fn rack_mark_lost(&mut self, now: Time) -> (u32, bool) {
        let (lost, wait) = self.rack_detect_loss(now);
        if let Some(w) = wait {
            self.timer = Some((TimerKind::Reo, self.fires_at(now, w + TCP_TIMEOUT_MIN)));
        }
        (lost, wait.is_some())
    }

    /// `tcp_process_tlp_ack()`: a probe that retransmitted data and is followed by an ACK beyond
    /// it repaired a real loss, so the window is reduced once (CWR entered and left at once);
    /// a pure duplicate ACK means the original and the probe both arrived (Linux also uses the
    /// DSACK, which we do not model).
    fn process_tlp_ack(&mut self, ack: u64, una_advanced: bool, sacked: bool, dsack_tlp: bool) {
        let Some(h) = self.tlp_high_seq else { return };
        if ack < h {
            return;
        }
        if !self.tlp_retrans || dsack_tlp {
            // New data probed, or a D-SACK for the probe: nothing was lost.
            self.tlp_high_seq = None;
        } else if ack > h {
            self.init_cwnd_reduction();
            self.set_ca_state(CaState::Cwr);
            self.end_cwnd_reduction();
            self.set_ca_state(CaState::Open);
        } else if !una_advanced && !sacked {
            self.tlp_high_seq = None;
        }
    }

    // ---- congestion state machine ----

    fn set_ca_state(&mut self, s: CaState) {
        self.cc.set_state(&mut self.tp, s);
        self.tp.ca_state = s;
    }

    /// `tcp_fastretrans_alert()`: leave a finished episode; enter recovery on loss, or CWR on
    /// an ECN echo (`tcp_try_to_open()` → `tcp_enter_cwr()`, once per window).
    fn update_state(&mut self, ece: bool, lost_retrans: bool) {
        match self.tp.ca_state {
            // CWR is held until an ACK *above* high_seq: the ACK at high_seq may still carry
            // the ECE for which the CWR-flagged segment was the answer (`tcp_fastretrans_alert()`).
            CaState::Recovery if self.snd_una >= self.high_seq => {
                self.end_cwnd_reduction();
                self.set_ca_state(CaState::Open);
            }
            CaState::Cwr if self.snd_una > self.high_seq => {
                self.end_cwnd_reduction();
                self.set_ca_state(CaState::Open);
            }
            // `tcp_process_loss()` opens once everything sent before the RTO is ACKed (no undo
            // here). `tcp_fastretrans_alert()` then falls through to the states below — so
            // losses left start a recovery on this same ACK — and does so from Loss too when a
            // retransmission was lost again: a new recovery, with ssthresh taken again from
            // the cwnd of the slow start.
            CaState::Loss => {
                if self.snd_una >= self.high_seq {
                    self.set_ca_state(CaState::Open);
                } else if !lost_retrans {
                    return;
                }
            }
            _ => {}
        }
        if matches!(
            self.tp.ca_state,
            CaState::Open | CaState::Disorder | CaState::Cwr | CaState::Loss
        ) {
            if self.board.lost_out > 0 {
                self.enter_recovery();
            } else if ece && self.tp.ca_state != CaState::Cwr {
                self.init_cwnd_reduction();
                self.set_ca_state(CaState::Cwr);
            } else if self.tp.ca_state != CaState::Cwr {
                let s = if self.board.sacked_out > 0 || self.board.retrans_out > 0 {
                    CaState::Disorder
                } else {
                    CaState::Open
                };
                if s != self.tp.ca_state {
                    self.set_ca_state(s);
                }
            }
        }
    }

    /// `tcp_enter_recovery()`. From CWR the reduction already under way continues.
    fn enter_recovery(&mut self) {
        self.stats.recoveries += 1;
        if self.tp.ca_state != CaState::Cwr {
            self.init_cwnd_reduction();
        }
        self.set_ca_state(CaState::Recovery);
    }

    /// `tcp_init_cwnd_reduction()`; `tcp_ecn_queue_cwr()`: the next new data segment carries
    /// CWR, whatever caused the reduction.
    fn init_cwnd_reduction(&mut self) {
        self.cwr_pending = self.ecn_ok;
        self.high_seq = self.snd_nxt;
        self.tlp_high_seq = None;
        self.tp.snd_cwnd_cnt = 0;
        self.tp.prior_ssthresh = self.tp.snd_ssthresh;
        self.tp.prior_cwnd = self.tp.snd_cwnd;
        self.prr_delivered = 0;
        self.prr_out = 0;
        self.sync_sock();
        self.tp.snd_ssthresh = self.cc.ssthresh(&self.tp);
    }

    /// `tcp_end_cwnd_reduction()`: leave with cwnd = ssthresh. A CCA with its own
    /// `cong_control` (BBR) keeps its cwnd and gets no event: Linux returns first. Its ssthresh
    /// stays `TCP_INFINITE_SSTHRESH`, which would otherwise become the cwnd. (The kernel also
    /// requires `undo_marker` outside CWR; without undo, ours is always set in recovery.)
    fn end_cwnd_reduction(&mut self) {
        if self.cc_traits.has_cong_control {
            return;
        }
        if self.tp.snd_ssthresh < TCP_INFINITE_SSTHRESH {
            self.tp.snd_cwnd = self.tp.snd_ssthresh.max(1);
        }
        self.tp.snd_cwnd_cnt = 0;
        self.cc.cwnd_event(&mut self.tp, CaEvent::CompleteCwr);
    }

    /// PRR, `tcp_cwnd_reduction()` (RFC 6937 as Linux implements it; RecoverFS = prior_cwnd).
    fn cwnd_reduction(&mut self, newly_acked_sacked: u32, newly_lost: u32, una_advanced: bool) {
        if newly_acked_sacked == 0 || self.tp.prior_cwnd == 0 {
            return;
        }
        let in_flight = self.board.in_flight() as i64;
        let ssthresh = self.tp.snd_ssthresh as i64;
        let delta = ssthresh - in_flight;
        self.prr_delivered += newly_acked_sacked;
        let mut sndcnt: i64 = if delta < 0 {
            // Proportional rate reduction.
            let dividend =
                ssthresh as u64 * self.prr_delivered as u64 + self.tp.prior_cwnd as u64 - 1;
            (dividend / self.tp.prior_cwnd as u64) as i64 - self.prr_out as i64
        } else {
            // Slow-start reduction bound.
            let mut s =
                (self.prr_delivered as i64 - self.prr_out as i64).max(newly_acked_sacked as i64);
            if una_advanced && newly_lost == 0 {
                s += 1;
            }
            s.min(delta)
        };
        // Force a fast retransmit upon entering fast recovery.
        sndcnt = sndcnt.max(if self.prr_out > 0 { 0 } else { 1 });
        self.tp.snd_cwnd = (in_flight + sndcnt).max(1) as u32;
    }

    // ---- timers (`net/ipv4/tcp_timer.c`) ----

    /// Re-arm after an ACK: TLP in Open or CWR (`tcp_schedule_loss_probe()` probes an ECN
    /// flow's reduction too), else the RTO (`tcp_rearm_rto()`). A pending RACK reorder timer
    /// is kept.
    /// `tcp_set_xmit_timer()`: the loss probe if one may be armed, else the RTO.
    fn set_xmit_timer(&mut self, now: Time) {
        if !self.schedule_loss_probe(now, true) {
            self.rearm_rto(now);
        }
    }

    /// `tcp_rearm_rto()`: the RTO from now; while the loss probe or RACK's reordering timer is
    /// pending, from the head's last transmission (`tcp_rto_delta_us()`, at least 1 µs ahead),
    /// so a timer that stood in for the RTO does not push it out.
    fn rearm_rto(&mut self, now: Time) {
        if self.board.is_empty() {
            self.timer = None;
            return;
        }
        let rto = match self.timer_kind() {
            Some(TimerKind::Tlp | TimerKind::Reo) => {
                self.rto_delta(now).unwrap_or(Time::ZERO).max(Time::from_us(1))
            }
            _ => self.rtt.rto(),
        };
        self.timer = Some((TimerKind::Rto, self.fires_at(now, rto)));
    }

    /// `tcp_rto_delta_us()`: how far ahead the RTO counted from the head's last transmission
    /// lies; `None` once it has passed.
    fn rto_delta(&self, now: Time) -> Option<Time> {
        let head = self.board.head()?;
        Some((head.sent_at + self.rtt.rto()).saturating_sub(now)).filter(|&d| d > Time::ZERO)
    }

    /// `tcp_schedule_loss_probe()`: in Open or CWR with data out, PTO = 2·SRTT, + `tcp_rto_min`
    /// if one packet is out (room for a delayed ACK) else + 2 ms (RFC 8985 §7.2), no later than
    /// the RTO would fire: a whole RTO from now when an ACK advanced (`advancing_rto`), else
    /// what is left of it. Armed also while a probe is out; it then fires into the RTO
    /// (`tcp_send_loss_probe()`). Never with `tcp_early_retrans` other than 3 or 4. Returns
    /// whether it was armed.
    fn schedule_loss_probe(&mut self, now: Time, advancing_rto: bool) -> bool {
        if !self.loss_probe
            || self.board.is_empty()
            || !matches!(self.tp.ca_state, CaState::Open | CaState::Cwr)
        {
            return false;
        }
        let mut pto = match self.rtt.srtt() {
            Some(s) => {
                s * 2 + if self.board.packets_out() == 1 { self.rto_min } else { TCP_TIMEOUT_MIN }
            }
            None => self.rtt.rto(),
        };
        let rto_left = if advancing_rto { Some(self.rtt.rto()) } else { self.rto_delta(now) };
        if let Some(left) = rto_left {
            pto = pto.min(left);
        }
        self.timer = Some((TimerKind::Tlp, self.fires_at(now, pto)));
        true
    }

    /// When a retransmit-slot timer of `timeout` armed now fires (`inet_csk_reset_xmit_timer()`).
    fn fires_at(&self, now: Time, timeout: Time) -> Time {
        timer_wheel::fires_at(now, timeout, self.jiffy)
    }

    /// A timer fired at `now` (the world calls this only at or after the deadline).
    pub fn on_timer(&mut self, now: Time, out: &mut Vec<Packet>) {
        if self.pace_at.is_some_and(|t| t <= now) {
            self.pace_at = None;
            if self.state == State::Established {
                self.tp.now = now;
                self.xmit(now, out);
            }
        }
        let Some((kind, deadline)) = self.timer else { return };
        if now < deadline {
            return;
        }
        self.tp.now = now;
        // The loss probe and the reordering timer stay pending while they run
        // (`tcp_write_timer_handler()` clears `icsk_pending` for the RTO only): `tcp_rearm_rto()`
        // then counts from the head.
        if !matches!(kind, TimerKind::Tlp | TimerKind::Reo) || self.state != State::Established {
            self.timer = None;
        }
        match (self.state, kind) {
            (State::SynSent, _) => {
                // SYN retransmission with exponential backoff (`tcp_retransmit_timer()`).
                self.rtt.backoff();
                self.stats.retransmits += 1;
                self.send_syn(now, out);
            }
            (State::Established, TimerKind::Reo) => {
                // `tcp_rack_reo_timeout()`: if anything was marked lost, enter recovery from
                // any other state (Loss included) and let PRR send one packet — a CCA with its
                // own `cong_control` (BBR) keeps its cwnd — then resend. The timer is not armed
                // again: what is still within its window waits for an ACK or the RTO.
                let prior_in_flight = self.board.in_flight();
                let (lost, _) = self.rack_detect_loss(now);
                if self.board.in_flight() != prior_in_flight {
                    if self.tp.ca_state != CaState::Recovery {
                        self.enter_recovery();
                        if !self.cc_traits.has_cong_control {
                            self.cwnd_reduction(1, lost, false);
                        }
                    }
                    self.xmit(now, out);
                }
                if self.timer_kind() != Some(TimerKind::Rto) {
                    self.rearm_rto(now);
                }
            }
            (State::Established, TimerKind::Tlp) => self.send_loss_probe(now, out),
            (State::Established, TimerKind::Rto) => self.retransmit_timeout(now, out),
            _ => {}
        }
    }

    /// `tcp_send_loss_probe()`: new data if the windows allow, else the last segment again; at
    /// most one probe out, so a second one waits for the RTO counted from the head.
    fn send_loss_probe(&mut self, now: Time, out: &mut Vec<Packet>) {
        if self.tlp_high_seq.is_some() {
            self.rearm_rto(now);
            return;
        }
        let before = self.snd_nxt;
        if let Some(len) = self.next_new_len(false) {
            self.send_new_segment(now, len, out);
        }
        self.tlp_retrans = self.snd_nxt == before;
        if self.tlp_retrans
            && let Some(i) = self.board.len().checked_sub(1)
        {
            let at = self.departure(now);
            let tx = self.tx_info(at);
            let seg = self.board.probed(i, at, tx);
            self.resent(seg, now, out);
            // `tcp_send_loss_probe()` cuts the last segment off its skb (`tcp_fragment()`).
            let start = self.board.get(i).start;
            self.board.set_skb_head(start, true);
        }
        self.tlp_high_seq = Some(self.snd_nxt);
        self.stats.loss_probes += 1;
        // The probe went out: the RTO restarts from now.
        self.timer = None;
        self.rearm_rto(now);
    }

    /// `tcp_retransmit_timer()` → `tcp_enter_loss()`.
    fn retransmit_timeout(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.stats.timeouts += 1;
        if self.tp.ca_state == CaState::Recovery && self.rto_retransmits == 0 {
            self.stats.recovery_timeouts += 1;
        }
        // `tcp_enter_loss()` recomputes ssthresh on a first timeout, after the recovery point,
        // or on a new timeout after progress (`icsk_retransmits` is reset when snd_una moves).
        let fresh = self.tp.ca_state <= CaState::Disorder
            || self.snd_una >= self.high_seq
            || (self.tp.ca_state == CaState::Loss && self.rto_retransmits == 0);
        // A timeout after many duplicate ACKs says the reordering degree was over-estimated.
        if self.tp.ca_state <= CaState::Disorder && self.board.sacked_out >= TCP_FASTRETRANS_THRESH
        {
            self.reordering = self.reordering.min(TCP_FASTRETRANS_THRESH);
        }
        if fresh {
            self.tp.prior_ssthresh = self.tp.snd_ssthresh;
            self.tp.prior_cwnd = self.tp.snd_cwnd;
            self.sync_sock();
            self.tp.snd_ssthresh = self.cc.ssthresh(&self.tp);
            self.cc.cwnd_event(&mut self.tp, CaEvent::Loss);
        }
        self.cwr_pending = self.ecn_ok;
        self.tp.lost += self.board.mark_all_lost(now, self.rack.rtt) as u64;
        self.tp.snd_cwnd = self.board.in_flight() + 1;
        self.tp.snd_cwnd_cnt = 0;
        self.set_ca_state(CaState::Loss);
        self.high_seq = self.snd_nxt;
        self.tlp_high_seq = None;
        self.rtt.backoff();
        self.rto_retransmits += 1;
        self.xmit(now, out);
        self.timer = Some((TimerKind::Rto, self.fires_at(now, self.rtt.rto())));
    }

    // ---- transmission (`tcp_write_xmit()`, `tcp_xmit_retransmit_queue()`) ----

    /// `tcp_sndbuf_expand()`: room for twice the window of full-size skbs, within `tcp_wmem`.
    fn sndbuf_expand(&mut self) {
        let per_mss = (self.tp.mss as u64 + MAX_TCP_HEADER + SKB_SHINFO_BYTES).next_power_of_two()
            + SKB_STRUCT_BYTES;
        let segs =
            (self.tp.snd_cwnd.max(self.initcwnd).max(10)).max(TCP_FASTRETRANS_THRESH + 1) as u64;
        let want = (self.cc_traits.sndbuf_expand as u64 * segs * per_mss).min(self.wmem[2]);
        self.sndbuf = self.sndbuf.max(want);
    }

    /// Bytes the application has written into the socket so far (`app_send()`).
    fn written(&self) -> u64 {
        self.written
    }

    /// `tcp_sendmsg_locked()` for an application that writes all it has (iperf3
    /// memory-to-memory): it tops the tail skb up to `size_goal` without asking for memory,
    /// and starts a new skb only while `sk_stream_memory_free()` (`sk_wmem_queued <
    /// sk_sndbuf`, `include/net/sock.h`), which it then fills to `size_goal` too. So the queue
    /// runs past `sk_sndbuf` by up to one skb (65,160 B at MTU 1500, whatever the buffer).
    /// A refused writer sleeps, and wakes at the first ACK that leaves less than `sk_sndbuf`
    /// queued. Queued bytes are payload, not truesize; `sk_stream_write_space()`'s wake-up
    /// only at a third free is not modelled (docs/fidelity.md, "send buffer").
    fn app_send(&mut self) {
        let want = self.size.unwrap_or(u64::MAX);
        if self.write_blocked && self.written - self.snd_una >= self.sndbuf {
            return;
        }
        self.write_blocked = false;
        let goal = self.size_goal;
        while self.written < want {
            self.write_queue.sync(self.snd_nxt, self.written, goal);
            let copy = match self.write_queue.tail_room(self.snd_nxt, goal) {
                0 if self.written - self.snd_una >= self.sndbuf => {
                    self.write_blocked = true;
                    return;
                }
                0 => goal,
                room => room,
            };
            self.written = self.written.saturating_add(copy).min(want);
        }
    }

    /// The peer's largest window is now `w` (`tp->max_window`): the write queue's skbs may
    /// hold more.
    fn set_max_window(&mut self, w: u64) {
        self.max_window = w;
        self.size_goal = xmit_size_goal(self.tp.mss, self.tp.gso_max_size, w);
    }

    /// The write queue's head skb after what the application has written so far: its unsent
    /// bytes, and whether it is also the tail.
    fn write_queue_head(&mut self) -> Option<(u64, bool)> {
        let (nxt, written, goal) = (self.snd_nxt, self.written(), self.size_goal);
        self.write_queue.sync(nxt, written, goal);
        self.write_queue.head(nxt)
    }

    /// `tcp_write_xmit()` before it sends the head: `tcp_grow_skb()` tops it up from the next
    /// skb to `segs` segments (the quota).
    fn grow_write_queue_head(&mut self, segs: u32) {
        let want = segs as u64 * self.tp.mss as u64;
        if let Some((len, _)) = self.write_queue_head()
            && want > len
        {
            self.write_queue.grow_head(self.snd_nxt, want - len);
        }
    }

    /// Length of the next new segment, if one may leave now; `mid_skb`: it would continue an
    /// skb whose first segment already left. A full MSS within the peer's window
    /// (`tcp_snd_wnd_test()`) always may; the FIN-bearing end of the transfer too. A short one
    /// follows Nagle with Minshall's variant (`tcp_nagle_check()`, `tcp_minshall_check()`):
    /// held only while a short segment sent before is unacknowledged. Short for want of
    /// data, it is the tail skb (`tcp_nagle_test()`); short for want of window, it is the tail
    /// `tcp_mss_split_point()` cuts at the window's edge, so only within an skb whose first
    /// MSS fitted (`tcp_snd_wnd_test()`). With nothing in flight a window below one MSS still
    /// gets one short segment, where Linux waits for its probe timer (`tcp_write_wakeup()`).
    fn next_new_len(&self, mid_skb: bool) -> Option<u32> {
        let mss = self.tp.mss as u64;
        let avail = self.written().saturating_sub(self.snd_nxt);
        let room = (self.snd_una + self.snd_wnd).saturating_sub(self.snd_nxt);
        let len = avail.min(room).min(mss);
        // `tcp_minshall_check()`: after(snd_sml, snd_una) && !after(snd_sml, snd_nxt).
        let minshall = self.snd_sml > self.snd_una && self.snd_sml <= self.snd_nxt;
        let ok = len == mss
            || self.size.is_some_and(|s| self.snd_nxt + len == s)
            || self.board.is_empty()
            || !minshall && (avail <= room || mid_skb);
        (len > 0 && ok).then_some(len as u32)
    }

    /// TCP paces internally (`SK_PACING_NEEDED`, see [`CcTraits::of`]).
    fn internal_pacing(&self) -> bool {
        self.cc_traits.internal_pacing
    }

    /// `tcp_write_xmit()` and `tcp_xmit_retransmit_queue()`: lost segments first, then new
    /// data, while cwnd allows. Unpaced, everything leaves at once (the NIC serializes it back
    /// to back at `host_rate`). Paced, segments leave in TSO trains of `tcp_tso_autosize()`
    /// segments: with internal pacing each train waits for its earliest departure time
    /// (`tcp_pacing_check()`); with `fq` on the host TCP does not wait but stamps each train
    /// with that time (`skb->tstamp`) and fq holds it.
    fn xmit(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.restart_after_idle(now);
        let internal = self.internal_pacing();
        let paced = internal || self.fq_host;
        let mut sent = 0;
        loop {
            if internal && now < self.next_send && self.data_segs_out >= PACING_FREE_SEGS {
                self.pace_at = Some(self.next_send);
                break;
            }
            // One skb of at most `tcp_tso_autosize()` segments (`tcp_tso_segs()`); `send_train()`
            // holds new data to half of cwnd as well.
            let goal =
                if paced { self.tp.tso_autosize(self.cc.min_tso_segs(&self.tp)) } else { u32::MAX };
            let first = out.len();
            let edt = self.next_send.max(now);
            let (n, bytes, new) = self.send_train(now, goal, out);
            sent += new;
            if n == 0 || !paced {
                break;
            }
            if self.fq_host && self.data_segs_out > PACING_FREE_SEGS {
                for p in &mut out[first..] {
                    p.edt = edt;
                }
            }
            self.after_train(now, bytes);
        }
        // The application writes again as the send buffer drains, until it has written all it
        // has; after its last write nothing asks (a transfer's tail is not app-limited).
        if self.size.is_none_or(|s| self.written < s) {
            self.check_app_limited();
        }
        let cwnd_limited = self.board.in_flight() >= self.tp.snd_cwnd
            || std::mem::take(&mut self.defer_cwnd_limited);
        if sent > 0 || cwnd_limited {
            self.cwnd_validate(cwnd_limited);
        }
        // `tcp_write_xmit()`: new data sent arms the loss probe, within what is left of the RTO.
        if sent > 0 {
            self.schedule_loss_probe(now, false);
        }
    }

    /// `tcp_small_queue_check()`'s limit: sending stops while more than max(2 skbs, ~1 ms at
    /// the pacing rate) — at most `tcp_limit_output_bytes` — waits below TCP (or the host fq
    /// flow is full, `Wmem::full`); one segment may always go.
    fn tsq_limit(&self) -> u64 {
        // Before the first RTT sample the pacing rate is unbounded (`~0UL` in Linux).
        let rate_ms = match self.tp.pacing_rate {
            0 => u64::MAX,
            r => r >> self.tp.pacing_shift,
        };
        // `2 * skb->truesize`: two of the skbs this sender builds.
        let skb_segs = self.tso_segs().min((self.tp.snd_cwnd / 2).max(1)) as u64;
        let two = 2 * skb_segs * (self.tp.mss as u64 + header_bytes() as u64);
        // `tcp_limit_output_bytes` caps only a socket nobody paces (`SK_PACING_NONE`): with
        // internal pacing or fq the pacing rate already bounds what waits below TCP.
        let paced = self.fq_host || self.internal_pacing();
        if paced { two.max(rate_ms) } else { two.max(rate_ms).min(TCP_LIMIT_OUTPUT_BYTES) }
    }

    /// The TSQ tasklet (`tcp_tsq_handler()`): a sender stopped by TSQ sends again.
    pub fn tsq_resume(&mut self, now: Time, out: &mut Vec<Packet>) {
        if self.tsq.take_throttled() && self.state == State::Established {
            self.tp.now = now;
            self.xmit(now, out);
        }
    }

    /// Send up to `goal` segments while cwnd and TSQ allow; returns (segments, payload bytes,
    /// new segments). Unpaced, new data leaves skb by skb as `tcp_write_xmit()` sends it: each
    /// skb takes at most `tcp_cwnd_test()`'s quota, and before each one `tcp_tso_should_defer()`
    /// may hold the rest back for the next ACK — so a window that grew by one segment does not
    /// trail its skb with a one-segment skb while an ACK is due. Paced, the train is one skb:
    /// `tcp_write_xmit()` and `tcp_xmit_retransmit_queue()` ask `tcp_pacing_check()` before
    /// every skb, so the next one waits for its departure time.
    fn send_train(&mut self, now: Time, goal: u32, out: &mut Vec<Packet>) -> (u32, u64, u32) {
        let (mut n, mut bytes, mut new) = (0, 0u64, 0);
        let first = out.len();
        let paced = goal != u32::MAX;
        self.train_skb_starts.clear();
        self.write_queue_head();
        // Segments the unpaced skb being built may still take; 0 = the next one starts an skb.
        let mut skb_room = 0;
        let mut goal = goal;
        // TSQ's limit, asked before every segment, moves only with the pacing rate and cwnd:
        // within a train only a CCA's `TxStart` hook may move them (BBR re-paces), run when
        // a segment leaves with nothing in flight.
        let tsq = self.tsq.enabled();
        let mut tsq_limit = None;
        while n < goal
            && self.board.in_flight() < self.tp.snd_cwnd
            && !(tsq && self.tsq.full(*tsq_limit.get_or_insert_with(|| self.tsq_limit())))
        {
            if self.board.is_empty() {
                tsq_limit = None;
            }
            let lost = self.board.next_lost();
            if paced && n == 0 && lost.is_none() {
                // `tcp_cwnd_test()` holds an skb of new data to half of cwnd;
                // `tcp_xmit_retransmit_queue()` holds a retransmission only to what cwnd leaves.
                goal = goal.min((self.tp.snd_cwnd / 2).max(1));
                let room = self.tp.snd_cwnd.saturating_sub(self.board.in_flight());
                self.grow_write_queue_head(goal.min(room));
            }
            if paced && n > 0 && !self.joins_skb(&out[out.len() - 1], lost) {
                break;
            }
            if let Some(i) = lost {
                bytes += self.retransmit(i, now, out) as u64;
                // Retransmitting the head restarts the RTO (`tcp_xmit_retransmit_queue()`).
                if i == 0 && self.timer_kind() != Some(TimerKind::Reo) {
                    self.timer = Some((TimerKind::Rto, self.fires_at(now, self.rtt.rto())));
                }
                skb_room = 0;
            } else if let Some(len) = self.next_new_len(if paced { n > 0 } else { skb_room > 0 }) {
                if goal == u32::MAX {
                    if skb_room == 0 {
                        let quota = self.cwnd_quota();
                        self.grow_write_queue_head(quota);
                        if self.tso_should_defer(now) {
                            break;
                        }
                        // `tcp_mss_split_point()`: at most the quota, and never past the end
                        // of the write queue's head skb.
                        let mss = self.tp.mss as u64;
                        let head =
                            self.write_queue_head().map_or(1, |(bytes, _)| bytes.div_ceil(mss));
                        // Growing the head and deciding not to defer moved neither cwnd, what
                        // is in flight nor the TSO size: the quota is the one above.
                        debug_assert_eq!(quota, self.cwnd_quota());
                        skb_room = quota.min(head.max(1) as u32);
                        self.train_skb_starts.push(self.snd_nxt);
                    }
                    skb_room -= 1;
                }
                self.send_new_segment(now, len, out);
                bytes += len as u64;
                new += 1;
            } else {
                break;
            }
            n += 1;
        }
        self.group_skbs(&mut out[first..]);
        (n, bytes, new)
    }

    /// Whether new data at `seq` starts an skb: one `send_train()` began there, or one of the
    /// write queue.
    fn starts_new_skb(&self, seq: u64) -> bool {
        self.train_skb_starts.contains(&seq) || self.write_queue.starts_skb(seq)
    }

    /// Whether the segment sent next (the lost one at `lost`, else new data) continues the skb
    /// whose last segment is `last`, as [`TcpSender::group_skbs`] cuts skbs.
    fn joins_skb(&self, last: &Packet, lost: Option<usize>) -> bool {
        let (retrans, seq) = match lost {
            Some(i) if self.board.get(i).has(SKB_HEAD) => return false,
            Some(i) => (true, self.board.get(i).start),
            None if self.write_queue.starts_skb(self.snd_nxt) => return false,
            None => (false, self.snd_nxt),
        };
        retrans == last.retrans && seq == last.seq + last.payload as u64
    }

    /// `tcp_cwnd_test()`, capped at `tcp_tso_segs()` as `tcp_write_xmit()` caps it: the
    /// segments the next skb may take — half of cwnd "to have at least 2 GSO packets in
    /// flight", at most what cwnd leaves.
    fn cwnd_quota(&self) -> u32 {
        let room = self.tp.snd_cwnd.saturating_sub(self.board.in_flight());
        (self.tp.snd_cwnd / 2).max(1).min(room).min(self.tso_segs())
    }

    /// `tcp_tso_segs()`: the segments of a full TSO skb (`tcp_tso_autosize()`; before the first
    /// RTT sample the pacing rate is `~0UL`, so `gso_max_size`).
    ///
    /// Asked for every segment (TSQ's limit) and several times per skb, so it is kept for the
    /// inputs that move: the pacing rate, the min RTT and the MSS (`gso_max_size` and
    /// `pacing_shift` are set once; a CCA's `min_tso_segs()` reads the pacing rate only).
    fn tso_segs(&self) -> u32 {
        let key = (self.tp.pacing_rate, self.tp.min_rtt_us, self.tp.mss);
        if let Some((k, segs)) = self.tso_memo.get()
            && k == key
        {
            return segs;
        }
        let segs = match self.tp.pacing_rate {
            0 => (self.tp.gso_max_size / self.tp.mss.max(1)).max(1),
            _ => self.tp.tso_autosize(self.cc.min_tso_segs(&self.tp)),
        };
        self.tso_memo.set(Some((key, segs)));
        segs
    }

    /// `tcp_tso_should_defer()` (`net/ipv4/tcp_output.c`), for the skb at the send head: rather
    /// than send the few segments the window allows now, wait for the next ACK and send a
    /// bigger TSO skb — unless a full one fits, a third of the window (`tcp_tso_win_divisor`
    /// = 3) is open, nothing was sent for 1 ms, or the next ACK is due later than
    /// min(srtt/2, 1 ms). Not in recovery. Sets `defer_cwnd_limited` when the wait is for cwnd.
    fn tso_should_defer(&mut self, now: Time) -> bool {
        if self.tp.ca_state >= CaState::Recovery
            || now.saturating_sub(self.tp.lsndtime) > TSO_DEFER_MAX
        {
            return false;
        }
        let mss = self.tp.mss as u64;
        let max_segs = self.tso_segs() as u64;
        // The write queue's head skb, what of it is unsent.
        let Some((skb_len, is_tail)) = self.write_queue_head() else { return false };
        let in_flight = self.board.in_flight() as u64;
        let cwnd = self.tp.snd_cwnd as u64;
        if skb_len <= mss || cwnd <= in_flight {
            return false;
        }
        let send_win = (self.snd_una + self.snd_wnd).saturating_sub(self.snd_nxt);
        let cong_win = (cwnd - in_flight) * mss;
        let limit = send_win.min(cong_win);
        // A full TSO skb fits, or a skb in the middle of the queue, which gets no more data,
        // fits whole.
        if limit >= max_segs * mss || (!is_tail && limit >= skb_len) {
            return false;
        }
        if limit >= self.snd_wnd.min(cwnd * mss) / TCP_TSO_WIN_DIVISOR {
            return false;
        }
        let (Some(head), Some(srtt)) = (self.board.head(), self.rtt.srtt()) else { return false };
        let expected_ack = head.sent_at + srtt;
        if expected_ack.saturating_sub(now) > (srtt / 2).min(TSO_DEFER_MAX) {
            return false;
        }
        if cong_win < send_win {
            if cong_win <= skb_len {
                self.defer_cwnd_limited = true;
                return true;
            }
        } else if send_win <= skb_len {
            return true;
        }
        // The last bytes of a fixed-size transfer carry FIN: they never wait.
        self.size.is_none_or(|s| self.snd_nxt + skb_len < s)
    }

    /// Cut what one `send_train()` produced into the skbs Linux would have built: runs of
    /// contiguous segments, new data or retransmissions alike, of at most `tcp_tso_segs()`
    /// (`tcp_tso_autosize()`; before the first RTT sample the pacing rate is `~0UL`, so 64 KiB).
    /// New data also at most half of cwnd: `tcp_cwnd_test()` caps each skb's quota at cwnd / 2
    /// "to have at least 2 GSO packets in flight" (a window of 15 leaves as 7 + 7 + 1).
    /// Retransmitted segments stay within the skb they last left in ([`SKB_HEAD`]): Linux
    /// resends skbs as its retransmission queue holds them (`tcp_xmit_retransmit_queue()`), each
    /// cut only to what cwnd leaves (`__tcp_retransmit_skb()`), not to half of it.
    fn group_skbs(&mut self, train: &mut [Packet]) {
        let half_cwnd = (self.tp.snd_cwnd / 2).max(1);
        let rtx_segs = self.tso_segs().min(u16::MAX as u32) as usize;
        let new_segs = self.tso_segs().min(half_cwnd).min(u16::MAX as u32) as usize;
        // The train's new segments were the last pushed onto the scoreboard, in order.
        let new_in_train = train.iter().filter(|p| !p.retrans).count();
        let mut new_at = self.board.len().saturating_sub(new_in_train);
        let mut start = 0;
        while start < train.len() {
            let mut end = start + 1;
            while end < train.len()
                && end - start < if train[start].retrans { rtx_segs } else { new_segs }
                && train[end].retrans == train[start].retrans
                && train[end].seq == train[end - 1].seq + train[end - 1].payload as u64
                && !(train[end].retrans && self.board.is_skb_head(train[end].seq))
                && (train[end].retrans || !self.starts_new_skb(train[end].seq))
            {
                end += 1;
            }
            let skb = &mut train[start..end];
            let bytes = skb.iter().map(|p| p.ip_bytes).sum();
            let segs = skb.len() as u16;
            // Each segment was counted as an skb of its own when it was built.
            self.tsq.joined(segs);
            for (i, p) in skb.iter_mut().enumerate() {
                p.gso_segs = segs;
                p.gso_index = i as u16;
                p.gso_bytes = bytes;
            }
            for (i, p) in train[start..end].iter().enumerate() {
                if p.retrans {
                    self.board.set_skb_head(p.seq, i == 0);
                } else {
                    self.board.set_skb_head_near(new_at, p.seq, i == 0);
                    new_at += 1;
                }
            }
            // An skb resent in part is cut after what left (`tcp_fragment()`): its rest is an
            // skb of its own.
            let last = &train[end - 1];
            let next = last.seq + last.payload as u64;
            if train.get(end).is_none_or(|p| p.seq != next) {
                self.board.set_skb_head(next, true);
            }
            start = end;
        }
    }

    /// `tcp_update_skb_after_send()`: the next train may leave `bytes / pacing_rate` after this
    /// one; time the stamp had fallen behind the clock is credited, up to half the train.
    fn after_train(&mut self, now: Time, bytes: u64) {
        let prior = self.next_send;
        self.next_send = self.next_send.max(now);
        let rate = self.tp.pacing_rate;
        if rate == 0 || rate == u64::MAX || self.data_segs_out < PACING_FREE_SEGS {
            return;
        }
        let credit = self.next_send - prior;
        let len = Time((bytes as u128 * Time::PS_PER_S as u128 / rate as u128) as u64);
        self.next_send += len - (len / 2).min(credit);
    }

    /// `tcp_update_pacing_rate()`: 200 % (slow start below ssthresh/2) or 120 % of
    /// cwnd·mss/srtt, capped by `SO_MAX_PACING_RATE`. BBR sets its own rate instead.
    fn update_pacing_rate(&mut self) {
        if self.tp.srtt_us == 0 {
            return;
        }
        let ratio = if self.tp.snd_cwnd < self.tp.snd_ssthresh / 2 {
            TCP_PACING_SS_RATIO
        } else {
            TCP_PACING_CA_RATIO
        };
        let pkts = self.tp.snd_cwnd.max(self.board.packets_out()) as u64;
        // In 64 bits when the product fits (it does below ~10^13 bytes of window), the same
        // quotient without a 128-bit division on every ACK.
        let rate = match (self.tp.mss as u64 * pkts).checked_mul(ratio * 1_000_000) {
            Some(x) => u128::from(x / 100 / u64::from(self.tp.srtt_us)),
            None => {
                self.tp.mss as u128 * pkts as u128 * ratio as u128 * 1_000_000
                    / 100
                    / self.tp.srtt_us as u128
            }
        };
        self.tp.pacing_rate = (rate.min(u64::MAX as u128) as u64).min(self.tp.max_pacing_rate);
    }

    /// `tcp_cwnd_validate()`: track whether the last window was cwnd-limited.
    fn cwnd_validate(&mut self, is_cwnd_limited: bool) {
        let packets_out = self.board.packets_out();
        if self.snd_una >= self.cwnd_usage_seq
            || is_cwnd_limited
            || (!self.tp.is_cwnd_limited && packets_out > self.tp.max_packets_out)
        {
            self.tp.is_cwnd_limited = is_cwnd_limited;
            self.tp.max_packets_out = packets_out;
            self.cwnd_usage_seq = self.snd_nxt;
        }
    }

    /// A data segment stamped `at` (its TSval).
    fn data_packet(&mut self, at: Time, seq: u64, len: u32, retrans: bool) -> Packet {
        let mut p = Packet::new(Kind::Data, self.flow, self.src, self.dst, len + header_bytes());
        p.payload = len;
        p.seq = seq;
        p.ts_val = at;
        p.ts_ecr = self.ts_recent;
        p.retrans = retrans;
        p.dscp = self.dscp;
        self.tsq.handed_down(p.ip_bytes);
        // ECT on new data; on retransmissions only for a CCA that needs ECN (DCTCP):
        // RFC 3168 §6.1.5, `tcp_ecn_send()`. CWR on the first new segment after a reduction.
        if self.ecn_ok && (!retrans || self.cc_traits.needs_ecn) {
            p.ecn = Ecn::Ect0;
        }
        if self.ecn_ok && !retrans {
            p.cwr = std::mem::take(&mut self.cwr_pending);
        }
        p
    }

    /// Send `len` new bytes at `snd_nxt`, as [`TcpSender::next_new_len`] allowed.
    fn send_new_segment(&mut self, now: Time, len: u32, out: &mut Vec<Packet>) {
        let seq = self.snd_nxt;
        if self.board.is_empty() {
            self.tp.app_limited = self.app_limited_until != 0;
            self.cc.cwnd_event(&mut self.tp, CaEvent::TxStart);
        }
        let at = self.departure(now);
        let tx = self.tx_info(at);
        let first_out = self.board.is_empty();
        // An skb of its own until `group_skbs()` joins it to the one before.
        self.board.push(Segment { start: seq, len, sent_at: at, flags: SKB_HEAD, tx });
        // `tcp_event_new_data_sent()`: the first data out starts the RTO, and new data sent while
        // the loss probe is pending brings back the RTO under it.
        if first_out || self.timer_kind() == Some(TimerKind::Tlp) {
            self.rearm_rto(now);
        }
        self.snd_nxt += len as u64;
        // `tcp_minshall_update()`: a short skb's end is the one Nagle waits on.
        if len < self.tp.mss {
            self.snd_sml = self.snd_nxt;
        }
        self.tp.lsndtime = now;
        self.data_segs_out += 1;
        if matches!(self.tp.ca_state, CaState::Recovery | CaState::Cwr) {
            // `tcp_in_cwnd_reduction()`: PRR counts what leaves during CWR as well.
            self.prr_out += 1;
        }
        let p = self.data_packet(at, seq, len, false);
        out.push(hold_to(p, at, now));
    }

    /// Retransmit segment `i`; returns its payload length.
    fn retransmit(&mut self, i: usize, now: Time, out: &mut Vec<Packet>) -> u32 {
        let at = self.departure(now);
        let tx = self.tx_info(at);
        let seg = self.board.retransmitted(i, at, tx);
        // `tcp_xmit_retransmit_queue()` counts what PRR lets out; a loss probe is not counted.
        if matches!(self.tp.ca_state, CaState::Recovery | CaState::Cwr) {
            self.prr_out += 1;
        }
        self.resent(seg, now, out)
    }

    /// What every copy of a segment sent again does (`__tcp_retransmit_skb()`), a loss probe's
    /// included: `TCP_MIB_RETRANSSEGS` and the send clock.
    fn resent(&mut self, seg: Segment, now: Time, out: &mut Vec<Packet>) -> u32 {
        self.stats.retransmits += 1;
        // `tcp_event_data_sent()` runs for every data segment, retransmissions included.
        self.data_segs_out += 1;
        self.tp.lsndtime = now;
        let at = self.departure(now);
        let p = self.data_packet(at, seg.start, seg.len, true);
        out.push(hold_to(p, at, now));
        seg.len
    }

    /// `tp->tcp_wstamp_ns`: the time TCP stamps on what it sends now. With `fq` on the host it
    /// is the departure time fq holds the skb to, and `skb->skb_mstamp_ns` (the send time of
    /// RTT and RACK, rate samples and TSval) is that earliest departure time; otherwise, paced
    /// internally or not, the skb leaves now.
    fn departure(&self, now: Time) -> Time {
        if self.fq_host { self.next_send.max(now) } else { now }
    }

    /// Bytes in flight as the sender sees them (for records).
    pub fn in_flight_packets(&self) -> u32 {
        self.board.in_flight()
    }

    /// Retransmissions found lost again (`LINUX_MIB_TCPLOSTRETRANSMIT`).
    pub fn lost_retransmits(&self) -> u64 {
        self.board.lost_retransmits
    }

    #[cfg(test)]
    pub(crate) fn board(&self) -> &Scoreboard {
        &self.board
    }
}

/// `tcp_xmit_size_goal()`: the bytes one skb of the write queue holds, `sk_gso_max_size` less
/// `MAX_TCP_HEADER + 1` (`sk_setup_caps()`), bounded to half the largest window the peer
/// offered (`tcp_bound_to_half_wnd()`), in whole MSS and at least one.
fn xmit_size_goal(mss: u32, gso_max_size: u32, max_window: u64) -> u64 {
    let mss = mss as u64;
    let mut bytes = (gso_max_size as u64).saturating_sub(MAX_TCP_HEADER + 1);
    let cutoff = if max_window > TCP_MSS_DEFAULT as u64 { max_window >> 1 } else { max_window };
    if cutoff > 0 && bytes > cutoff {
        // Linux keeps at least `68 - tcp_header_len` bytes, less than any MSS, which the
        // rounding below keeps anyway.
        bytes = cutoff;
    }
    (bytes / mss).max(1) * mss
}

/// An skb stamped with a departure time ahead of `now` leaves no earlier: the stamp is its send
/// time for RTT, RACK and TSval, so fq must hold it there (`__tcp_transmit_skb()` sets
/// `skb->tstamp` to `tcp_wstamp_ns` for every skb, retransmissions and probes included). A
/// copy that left at once would be acknowledged before it was "sent".
fn hold_to(mut p: Packet, at: Time, now: Time) -> Packet {
    if at > now {
        p.edt = at;
    }
    p
}

/// RFC 2883 §4 (`tcp_check_dsack()`): the first SACK block reports a duplicate (D-SACK) when it
/// lies below the cumulative ACK or inside the second block. Returns it and the blocks that
/// report new data.
fn split_dsack(blocks: &[SeqRange], ack: u64) -> (Option<SeqRange>, &[SeqRange]) {
    match blocks {
        [first, rest @ ..]
            if first.start < ack
                || rest.first().is_some_and(|b| b.start <= first.start && first.end <= b.end) =>
        {
            (Some(*first), rest)
        }
        _ => (None, blocks),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::SeqRange;
    use crate::tcp::cc::TCP_MIN_TSO_SEGS;
    use crate::tcp::config::{FqParams, WindowModel};

    const MSS: u64 = 1448;

    fn spec(cca: &str, initcwnd: u32) -> FlowSpec {
        FlowSpec {
            size_bytes: Some(1_000 * MSS),
            window_model: WindowModel::AdvWinScale(1),
            initcwnd,
            hz: 1000,
            ..FlowSpec::linux_default(cca)
        }
    }

    /// A sender past its handshake at t = 10 ms (RTT sample 10 ms), with a 1 GB peer window.
    fn established(cca: &str, initcwnd: u32) -> (TcpSender, Vec<Packet>) {
        established_with(&spec(cca, initcwnd))
    }

    /// A sender for `sp` past its handshake at t = 10 ms; returns what it sent (the SYN left out).
    fn established_with(sp: &FlowSpec) -> (TcpSender, Vec<Packet>) {
        let mut s = TcpSender::new(0, 0, 1, sp, 1500);
        let mut out = Vec::new();
        s.open(Time::ZERO, &mut out);
        assert_eq!(out.pop().unwrap().kind, Kind::Syn);
        let mut sa = Packet::new(Kind::SynAck, 0, 1, 0, SYN_BYTES);
        sa.rwnd = 65_535;
        s.on_packet(Time::from_ms(10), &sa, &mut out);
        (s, out)
    }

    fn ack(ack: u64, sack: &[SeqRange], rwnd: u64) -> Packet {
        let mut p = Packet::new(Kind::Ack, 0, 1, 0, 52);
        p.ack = ack;
        p.rwnd = rwnd;
        for (i, b) in sack.iter().enumerate() {
            p.sack[i] = *b;
        }
        p.sack_len = sack.len() as u8;
        p
    }

    #[test]
    fn constants_match_linux() {
        assert_eq!(TCP_TIMEOUT_MIN, Time::from_ms(2));
        assert_eq!(TCP_FASTRETRANS_THRESH, 3);
        assert_eq!((MAX_TCP_HEADER, SKB_SHINFO_BYTES, SKB_STRUCT_BYTES), (320, 320, 256));
    }

    #[test]
    fn syn_sent_first_rto_is_one_second_then_backs_off() {
        let mut s = TcpSender::new(0, 0, 1, &spec("reno", 10), 1500);
        let mut out = Vec::new();
        s.open(Time::ZERO, &mut out);
        assert_eq!(s.timer_deadline(), Some(Time::from_secs(1)));
        s.on_timer(Time::from_secs(1), &mut out);
        assert_eq!(out.len(), 2, "the SYN is sent again");
        assert_eq!(s.timer_deadline(), Some(Time::from_secs(3)));
    }

    #[test]
    fn syn_sent_syn_ack_window_limits_the_first_flight() {
        // initcwnd 1000 but the SYN-ACK's unscaled 65535-byte window: 45 full segments and
        // the window's 375-byte tail (`tcp_mss_split_point()`; no short segment is unacked).
        let (s, out) = established("reno", 1000);
        assert_eq!(out.len(), 46);
        assert!(out.iter().all(|p| p.kind == Kind::Data));
        assert!(out[..45].iter().all(|p| p.payload == MSS as u32));
        assert_eq!(out[45].payload, 65_535 - 45 * MSS as u32);
        // First RTT sample R = 10 ms ⇒ RTO = 3R (Linux mdev = 2R).
        assert_eq!(s.rtt.rto(), Time::from_ms(30).max(Time::from_ms(210)));
    }

    #[test]
    fn established_slow_start_adds_every_acked_packet() {
        let (mut s, out) = established("reno", 10);
        assert_eq!(out.len(), 10);
        let mut out = Vec::new();
        s.on_packet(Time::from_ms(20), &ack(2 * MSS, &[], 1 << 20), &mut out);
        assert_eq!(s.tp.snd_cwnd, 12);
        // Two acked, cwnd +2: four new segments leave (two replace, two grow).
        assert_eq!(out.len(), 4);
    }

    #[test]
    fn established_never_sends_past_the_peer_window() {
        let (mut s, _) = established("reno", 10);
        let mut out = Vec::new();
        // The peer's window ends at 12 segments: only 2 new ones may leave despite cwnd 11.
        s.on_packet(Time::from_ms(20), &ack(MSS, &[], 11 * MSS), &mut out);
        assert_eq!(out.len(), 2);
        assert_eq!(s.snd_nxt, 12 * MSS);
    }

    #[test]
    fn tsq_caps_only_an_unpaced_socket_at_tcp_limit_output_bytes() {
        // `tcp_small_queue_check()`: limit = max(2 skbs, pacing rate >> 10), and the 1 MiB
        // `tcp_limit_output_bytes` only for `SK_PACING_NONE`. At 3.5 GB/s (28 Gbit/s) a paced
        // socket may hold ~3.4 MB below TCP; an unpaced one 1 MiB.
        assert_eq!(TCP_LIMIT_OUTPUT_BYTES, 1 << 20);
        for (cca, capped) in [("reno", true), ("bbr", false)] {
            let (mut s, _) = established(cca, 10);
            s.tsq = Wmem::new(0);
            s.tsq.enable();
            s.tp.pacing_rate = 3_500_000_000;
            s.tsq.handed_down(2 << 20);
            assert_eq!(s.tsq.full(s.tsq_limit()), capped, "{cca} with 2 MiB below TCP");
            s.tsq.handed_down(2 << 20);
            assert!(s.tsq.full(s.tsq_limit()), "{cca} with 4 MiB below TCP");
        }
    }

    #[test]
    fn tso_deferral_constants_match_linux() {
        assert_eq!((TCP_TSO_WIN_DIVISOR, TSO_DEFER_MAX), (3, Time::from_ms(1)));
    }

    #[test]
    fn tso_a_train_leaves_as_skbs_of_at_most_tso_segs() {
        // No RTT sample before the SYN-ACK: the pacing rate is ~0UL, so `tcp_tso_segs()` allows
        // 64 KiB (45 segments). But the application wrote its first bytes into skbs of half the
        // largest window the peer had offered, the SYN-ACK's unscaled 65,535 bytes
        // (`tcp_bound_to_half_wnd()`): 22 segments. `tcp_grow_skb()` tops the first up to the
        // quota of 45 from the second only, so the first flight of 45 leaves as 44 + 1, and the
        // second skb also carries the window's short tail (`tcp_mss_split_point()`).
        let (s, out) = established("reno", 1000);
        assert_eq!(out.len(), 46);
        let skbs: Vec<u16> = out.iter().filter(|p| p.gso_index == 0).map(|p| p.gso_segs).collect();
        assert_eq!(skbs, [44, 2]);
        assert_eq!(out[0].gso_bytes, 44 * (MSS as u32 + header_bytes()));
        assert_eq!(s.tso_segs(), 45);
        assert_eq!(s.size_goal, 22 * MSS);
    }

    /// `tso_segs()` is kept between calls: it must follow the pacing rate, the min RTT and
    /// the MSS, and BBR's minimum of 1 segment below 1.2 Mbit/s, as `tcp_tso_segs()` would.
    #[test]
    fn tso_segs_follows_the_pacing_rate_min_rtt_and_mss() {
        for cca in ["reno", "bbr"] {
            let (mut s, _) = established(cca, 10);
            for (rate, rtt, mss) in [
                (0, 10_000, 1448),
                (1_250_000_000, 10_000, 1448),
                (12_500_000, 10_000, 1448),
                (12_500_000, 1000, 1448),
                (12_500_000, 1000, 8948),
                (100_000, 1000, 8948),
                (1_250_000_000, 10_000, 1448),
            ] {
                (s.tp.pacing_rate, s.tp.min_rtt_us, s.tp.mss) = (rate, rtt, mss);
                let want = match rate {
                    0 => 65_536 / mss,
                    _ => s.tp.tso_autosize(s.cc.min_tso_segs(&s.tp)),
                };
                assert_eq!(s.tso_segs(), want, "{cca} at {rate} B/s, min RTT {rtt} us, MSS {mss}");
            }
        }
    }

    #[test]
    fn write_queue_skbs_hold_64_kib_less_headroom_within_half_the_peers_window() {
        // `tcp_xmit_size_goal()`: sk_gso_max_size (65,536 less MAX_TCP_HEADER + 1) in whole MSS,
        // 45 segments of 1448 or 7 of 8948 once the peer's window is large.
        let (mut s, _) = established("reno", 10);
        let mut out = Vec::new();
        s.on_packet(Time::from_ms(20), &ack(2 * MSS, &[], 1 << 30), &mut out);
        assert_eq!(s.size_goal, 45 * MSS);
        let gso = s.tp.gso_max_size;
        assert_eq!(xmit_size_goal(8948, gso, s.max_window), 7 * 8948);
        // A peer that never offered more than 20,000 bytes: skbs of half that, 1 MSS at least.
        s.set_max_window(20_000);
        assert_eq!(s.size_goal, 6 * 1448);
        assert_eq!(xmit_size_goal(8948, gso, 20_000), 8948);
        // Never below one MSS, however small the window (Linux's floor, 68 bytes less the TCP
        // header, is below any MSS).
        s.set_max_window(50);
        assert_eq!(s.size_goal, 1448);
    }

    /// `tcp_sendmsg_locked()` asks `sk_stream_memory_free()` before it allocates an skb, not
    /// as it fills one: with `tcp_wmem = 4096 8192 8192` the writer still queues a whole skb of
    /// `size_goal`, four times `sk_sndbuf`, and is refused only the next. Once ACKs leave less
    /// than `sk_sndbuf` queued it writes one more whole skb.
    #[test]
    fn send_buffer_runs_past_sk_sndbuf_by_one_skb() {
        let sp = FlowSpec { tcp_wmem: [4096, 8192, 8192], ..spec("reno", 10) };
        let (mut s, _) = established_with(&sp);
        assert_eq!(s.sndbuf, 8192);
        // The SYN-ACK's 65,535 bytes: half of it in whole MSS (tcp_bound_to_half_wnd()).
        assert_eq!((s.written, s.write_blocked), (22 * MSS, true));
        let (mut t, mut out) = (Time::from_ms(20), Vec::new());
        let mut queued = s.written - s.snd_una;
        while s.written == 22 * MSS {
            assert!(queued >= 8192, "refused with {queued} B queued");
            let next = (s.snd_una + MSS).min(s.snd_nxt);
            s.on_packet(t, &ack(next, &[], 1 << 30), &mut out);
            queued = 22 * MSS - s.snd_una;
            t += Time::from_us(10);
        }
        // Asleep, it left the unsent tail as it was, though the 1 GB window raised size_goal to
        // 45 MSS. Woken by the first ACK that left less than the buffer queued, it wrote one
        // skb of that goal, then was refused again.
        assert!(queued < 8192 && queued + MSS >= 8192, "{queued}");
        assert_eq!((s.written, s.write_blocked), (22 * MSS + 45 * MSS, true));
        s.app_send();
        assert_eq!(s.written, 67 * MSS);
    }

    #[test]
    fn new_data_is_cut_from_the_write_queues_skbs_never_joined_across_them() {
        // cwnd 40, a peer window of 1 GB: skbs of 45 segments wait in the write queue. A train
        // that starts 40 segments into the first one leaves as its last 5 and then the next
        // skb's head, not as one skb across the boundary.
        let (mut s, _) = established("reno", 10);
        s.tp.pacing_rate = 0;
        s.set_max_window(1 << 30);
        s.write_queue = WriteQueue::default();
        s.train_skb_starts.clear();
        s.write_queue.sync(0, 200 * MSS, s.size_goal);
        s.tp.snd_cwnd = 40;
        let mut train: Vec<Packet> =
            (40..52).map(|k| s.data_packet(Time::ZERO, k * MSS, MSS as u32, false)).collect();
        s.group_skbs(&mut train);
        let skbs: Vec<(u64, u16)> =
            train.iter().filter(|p| p.gso_index == 0).map(|p| (p.seq / MSS, p.gso_segs)).collect();
        assert_eq!(skbs, [(40, 5), (45, 7)]);
    }

    #[test]
    fn tso_an_skb_carries_at_most_half_of_cwnd() {
        // `tcp_cwnd_test()`: a window of 15 leaves as 7 + 7 + 1, as a capture of the kernel's
        // incast senders shows; 10 as 5 + 5. (No pacing rate yet: `tcp_tso_segs()` allows 45.)
        let (mut s, _) = established("reno", 10);
        s.tp.pacing_rate = 0;
        // Only the size limits: no write queue skb, no skb a train began, starts in this train.
        s.write_queue = WriteQueue::default();
        s.train_skb_starts.clear();
        for (cwnd, skbs) in [(15u32, vec![7u16, 7, 1]), (10, vec![5, 5]), (1, vec![1])] {
            s.tp.snd_cwnd = cwnd;
            let mut train: Vec<Packet> = (0..cwnd)
                .map(|k| s.data_packet(Time::ZERO, k as u64 * MSS, MSS as u32, false))
                .collect();
            s.group_skbs(&mut train);
            let sizes: Vec<u16> =
                train.iter().filter(|p| p.gso_index == 0).map(|p| p.gso_segs).collect();
            assert_eq!(sizes, skbs, "cwnd {cwnd}");
        }
    }

    /// Established with initcwnd 30, then ACKs of two segments every 50 µs from t = 20 ms
    /// (srtt 10 ms, so each ACK arrives when the head's ACK is due): what leaves per ACK.
    fn deferral_run(acks: usize, gap_us: u64) -> (TcpSender, Vec<usize>) {
        // A send buffer far larger than cwnd: the send head is always a full skb.
        let sp = FlowSpec { tcp_wmem: [4096, 64 << 20, 64 << 20], ..spec("reno", 30) };
        let (mut s, first) = established_with(&sp);
        assert_eq!(first.len(), 30);
        let mut sent = Vec::new();
        for k in 0..acks {
            let mut out = Vec::new();
            let t = Time::from_ms(20) + Time::from_us(k as u64 * gap_us);
            s.on_packet(t, &ack(2 * (k as u64 + 1) * MSS, &[], 1 << 30), &mut out);
            sent.push(out.len());
        }
        (s, sent)
    }

    #[test]
    fn tso_deferral_waits_for_a_full_tso_skb() {
        // The first ACK comes 10 ms after the last send: nothing recent, so its 4 free
        // segments leave. Afterwards each ACK frees 2 segments and adds 2 to cwnd (slow start):
        // 4 may leave, less than a full TSO skb (7 segments: 2·cwnd/srtt >> 10 ≈ 10 KB) and less
        // than cwnd / 3, and the head's ACK is due now, so TCP waits (`tcp_tso_should_defer()`)
        // and sends on the next ACK, when 8 are free: a skb of 7. The eighth segment waits as
        // well: `tcp_write_xmit()` asks before every skb, and one segment is no more worth
        // sending than four (so no skb of 1 trails the 7). The fourth ACK's quota is 5: the
        // last 3 of the write queue's first skb (22 segments, half the SYN-ACK's window),
        // grown by 2 from the next (`tcp_grow_skb()`), fit whole in the middle of the queue and
        // go at once; the next skb, of 45, waits for a full TSO skb.
        let (s, sent) = deferral_run(6, 50);
        assert_eq!(sent, [4, 0, 7, 5, 0, 8]);
        assert_eq!(s.tso_segs(), 8, "grown with cwnd by the end");
        // Deferring for cwnd keeps the flow cwnd-limited, so slow start goes on growing.
        assert!(s.tp.is_cwnd_limited);
        assert_eq!(s.tp.snd_cwnd, 42);
    }

    #[test]
    fn tso_no_deferral_after_a_millisecond_without_sending() {
        // ACKs 1.5 ms apart: the last send is always more than 1 ms old, so what each ACK
        // allows leaves, where ACKs 50 µs apart leave some with nothing.
        let (_, sent) = deferral_run(4, 1500);
        assert_eq!(sent, [4, 4, 4, 4]);
        assert!(deferral_run(4, 50).1.contains(&0));
    }

    #[test]
    fn established_tlp_is_armed_at_two_srtt_plus_2ms() {
        let (s, _) = established("reno", 10);
        assert_eq!(s.timer_kind(), Some(TimerKind::Tlp));
        assert_eq!(
            s.timer_deadline(),
            Some(Time::from_ms(10) + Time::from_ms(20) + TCP_TIMEOUT_MIN)
        );
    }

    fn sacked(start: u64, end: u64) -> SeqRange {
        SeqRange { start: start * MSS, end: end * MSS }
    }

    #[test]
    fn reordering_an_original_sacked_below_the_highest_sack_is_reordering() {
        // Ten segments leave at 10 ms. 8 and 9 are SACKed first: two SACKed, fewer than
        // `tp->reordering`, so RACK waits min RTT / 4 and nothing is marked lost yet. Then the
        // never-retransmitted segment 3 is SACKed below them: a hole filled by an original
        // (`tcp_check_sack_reordering()`), 10 − 3 = 7 packets deep.
        let (mut s, _) = established("reno", 10);
        let mut out = Vec::new();
        s.on_packet(Time::from_ms(20), &ack(0, &[sacked(8, 10)], 1 << 20), &mut out);
        assert!(out.iter().all(|p| p.seq >= 10 * MSS), "no retransmission yet");
        assert_eq!(s.timer_kind(), Some(TimerKind::Reo));
        assert_eq!((s.reord_seen, s.reordering), (0, TCP_FASTRETRANS_THRESH));
        s.on_packet(
            Time::from_us(20_001),
            &ack(0, &[sacked(3, 4), sacked(8, 10)], 1 << 20),
            &mut out,
        );
        assert_eq!((s.reord_seen, s.reordering, s.stats.reorder_events), (1, 7, 1));
    }

    #[test]
    fn recovery_on_the_reorder_timer_runs_prr_only_without_cong_control() {
        // Segments 8 and 9 SACKed: RACK waits min RTT / 4, then the reorder timer marks 0–7
        // lost and enters recovery. `tcp_rack_reo_timeout()` lets PRR set cwnd for reno, and
        // leaves a CCA with its own `cong_control` (BBR) its cwnd.
        for (cca, prr) in [("reno", true), ("bbr", false)] {
            let (mut s, _) = established(cca, 10);
            let mut out = Vec::new();
            s.on_packet(Time::from_ms(20), &ack(0, &[sacked(8, 10)], 1 << 20), &mut out);
            assert_eq!(s.timer_kind(), Some(TimerKind::Reo), "{cca}");
            let before = s.tp.snd_cwnd;
            let at = s.timer_deadline().unwrap();
            s.on_timer(at, &mut out);
            assert_eq!(s.tp.ca_state, CaState::Recovery, "{cca}");
            assert_eq!(s.tp.snd_cwnd != before, prr, "{cca}: cwnd {before} -> {}", s.tp.snd_cwnd);
        }
    }

    #[test]
    fn reordering_a_cumulative_ack_over_an_unsacked_original_is_reordering() {
        // Segment 9 SACKed; then the cumulative ACK reaches 9 without 0–8 ever being SACKed or
        // retransmitted: those originals arrived after a later one (`tcp_clean_rtx_queue()`).
        let (mut s, _) = established("reno", 10);
        let mut out = Vec::new();
        s.on_packet(Time::from_ms(20), &ack(0, &[sacked(9, 10)], 1 << 20), &mut out);
        s.on_packet(Time::from_us(20_001), &ack(9 * MSS, &[sacked(9, 10)], 1 << 20), &mut out);
        assert_eq!((s.reord_seen, s.reordering), (1, 10));
    }

    #[test]
    fn reordering_once_seen_rack_waits_even_in_recovery() {
        let (mut s, _) = established("reno", 10);
        s.tp.min_rtt_us = 8_000;
        s.tp.ca_state = CaState::Recovery;
        assert_eq!(s.rack_reo_wnd(), Time::ZERO, "no reordering seen: no wait in recovery");
        s.reord_seen = 1;
        assert_eq!(s.rack_reo_wnd(), Time::from_ms(2), "min RTT / 4");
    }

    #[test]
    fn reordering_default_and_cap_are_linuxs() {
        assert_eq!(TCP_MAX_REORDERING, 300);
        let (s, _) = established("reno", 10);
        assert_eq!((s.reord_seen, s.reordering), (0, 3));
    }

    #[test]
    fn jiffy_timers_fire_on_the_tick_after_the_rounded_up_expiry() {
        // HZ = 250: the same 22 ms probe armed at 10 ms is 6 jiffies (`usecs_to_jiffies()`
        // rounds up), expires at jiffy 2 + 6 = 8 and runs on the tick after, 36 ms.
        let sp =
            FlowSpec { hz: 250, timers: crate::tcp::config::Timers::Jiffies, ..spec("reno", 10) };
        let (s, _) = established_with(&sp);
        assert_eq!(s.timer_kind(), Some(TimerKind::Tlp));
        assert_eq!(s.timer_deadline(), Some(Time::from_ms(36)));
    }

    #[test]
    fn a_route_rto_min_counts_in_whole_jiffies_on_the_wheel() {
        // `ip route ... rto_min 5ms` at HZ = 250 floors the RTO at msecs_to_jiffies(5) = 2
        // jiffies = 8 ms, in the RTT estimator and in a lone packet's loss probe alike.
        let sp = FlowSpec {
            hz: 250,
            timers: crate::tcp::config::Timers::Jiffies,
            rto_min: Time::from_ms(5),
            ..spec("reno", 10)
        };
        let (s, _) = established_with(&sp);
        assert_eq!(s.rto_min, Time::from_ms(8));
        let exact = FlowSpec { rto_min: Time::from_ms(5), ..spec("reno", 10) };
        let (s, _) = established_with(&exact);
        assert_eq!(s.rto_min, Time::from_ms(5));
    }

    #[test]
    fn ecn_dctcp_updates_alpha_before_the_cwr_the_same_ack_starts() {
        // `tcp_in_ack_event()` (`dctcp_update_alpha()`) runs before `tcp_fastretrans_alert()`
        // enters CWR, so `dctcp_ssthresh()` cuts by the α this ACK's marks produced.
        let (mut s, _) = established("dctcp", 1000);
        let first_window = s.snd_nxt;
        let mut out = Vec::new();
        // The first window ends unmarked: α 1024 → 960; the next ends where the first did.
        s.on_packet(Time::from_ms(20), &ack(first_window - 5 * MSS, &[], 1 << 30), &mut out);
        let AnyCc::Dctcp(d) = &s.cc else { panic!("not dctcp") };
        assert_eq!(d.alpha(), 960);
        let cwnd = s.tp.snd_cwnd;
        // It ends with ECE on all 5: α 960 → 964, and that α makes ssthresh.
        let mut echo = ack(first_window, &[], 1 << 30);
        echo.ece = true;
        s.on_packet(Time::from_ms(21), &echo, &mut out);
        let AnyCc::Dctcp(d) = &s.cc else { panic!("not dctcp") };
        assert_eq!((d.alpha(), s.tp.ca_state), (964, CaState::Cwr));
        assert_eq!(s.tp.snd_ssthresh, cwnd - ((cwnd * 964) >> 11));
        assert_ne!(
            (cwnd * 964) >> 11,
            (cwnd * 960) >> 11,
            "{cwnd}: the test tells the orders apart"
        );
    }

    #[test]
    fn ecn_a_flow_in_cwr_still_arms_its_loss_probe() {
        // `tcp_schedule_loss_probe()` refuses only states other than Open and CWR: an ECN flow
        // whose tail is lost during its reduction probes at 2·SRTT, not at the RTO.
        let (mut s, _) = established("dctcp", 10);
        let mut out = Vec::new();
        let mut echo = ack(2 * MSS, &[], 1 << 20);
        echo.ece = true;
        s.on_packet(Time::from_ms(20), &echo, &mut out);
        assert_eq!(s.tp.ca_state, CaState::Cwr);
        assert_eq!(s.timer_kind(), Some(TimerKind::Tlp));
    }

    #[test]
    fn loss_ends_into_recovery_on_the_same_ack_when_losses_are_left() {
        // `tcp_process_loss()` opens once snd_una reaches high_seq, and `tcp_fastretrans_alert()`
        // falls through: segments 5–8, sent before the SACKed 9 and due by now, are lost, so
        // recovery starts on this ACK, not the next.
        let (mut s, _) = established("reno", 10);
        let mut out = Vec::new();
        s.tp.ca_state = CaState::Loss;
        s.high_seq = 5 * MSS;
        s.on_packet(Time::from_ms(20), &ack(5 * MSS, &[sacked(9, 10)], 1 << 20), &mut out);
        assert_eq!(s.tp.ca_state, CaState::Recovery);
        assert_eq!((s.board.lost_out, s.stats.recoveries), (4, 1));
        assert_eq!(out.first().map(|p| (p.seq, p.retrans)), Some((5 * MSS, true)));
    }

    #[test]
    fn loss_a_retransmission_lost_again_starts_a_recovery() {
        // After the RTO (cwnd 1, ssthresh 5) the head is resent and ACKed, slow start resends
        // 1 and 2; a SACK of 2 shows the resent 1 lost again (`FLAG_LOST_RETRANS`), and
        // `tcp_fastretrans_alert()` leaves Loss for Recovery: ssthresh again, from cwnd 2.
        let (mut s, _) = established("reno", 10);
        let mut out = Vec::new();
        s.retransmit_timeout(Time::from_ms(300), &mut out);
        assert_eq!((s.tp.ca_state, s.tp.snd_cwnd, s.tp.snd_ssthresh), (CaState::Loss, 1, 5));
        out.clear();
        s.on_packet(Time::from_ms(301), &ack(MSS, &[], 1 << 20), &mut out);
        assert_eq!(s.tp.ca_state, CaState::Loss);
        let resent: Vec<u64> = out.iter().filter(|p| p.retrans).map(|p| p.seq / MSS).collect();
        assert_eq!(resent, [1, 2]);
        out.clear();
        // 11 ms after they left: above the 10 ms min RTT, so RACK takes the SACK (Karn).
        s.on_packet(Time::from_ms(312), &ack(MSS, &[sacked(2, 3)], 1 << 20), &mut out);
        assert_eq!(s.board.lost_retransmits, 1);
        assert_eq!(s.tp.ca_state, CaState::Recovery);
        assert_eq!((s.tp.snd_ssthresh, s.stats.recoveries), (2, 1));
    }

    #[test]
    fn recovery_three_sacks_mark_the_hole_lost_and_prr_retransmits_it() {
        let (mut s, _) = established("reno", 10);
        let mut out = Vec::new();
        // Segment 0 lost; 1, 2, 3 SACKed.
        s.on_packet(
            Time::from_ms(20),
            &ack(0, &[SeqRange { start: MSS, end: 4 * MSS }], 1 << 20),
            &mut out,
        );
        assert_eq!(s.tp.ca_state, CaState::Recovery);
        assert_eq!(s.tp.snd_ssthresh, 5);
        assert_eq!(out.first().map(|p| (p.seq, p.retrans)), Some((0, true)));
        assert_eq!(s.stats.retransmits, 1);
        s.board().check();
        // The retransmission fills the hole: recovery ends at high_seq with cwnd = ssthresh,
        // then congestion avoidance counts only the newly delivered 0 and 4..9 (not the
        // SACKed 1..3 again): 7 packets at w = 5 ⇒ +1, 2 credits left.
        let mut out = Vec::new();
        s.on_packet(Time::from_ms(30), &ack(10 * MSS, &[], 1 << 20), &mut out);
        assert_eq!(s.tp.ca_state, CaState::Open);
        assert_eq!((s.tp.snd_cwnd, s.tp.snd_cwnd_cnt), (6, 2));
    }

    #[test]
    fn rack_rtt_is_the_last_advancing_segments_so_a_cumulative_ack_delays_the_loss() {
        // `tcp_rack_advance()` runs for the SACKed segments first, then for the ones the
        // cumulative ACK removes, and `rack.rtt_us` keeps the RTT of the last call: an ACK that
        // both advances `snd_una` over segments sent at 20 ms and SACKs three sent at 21 ms
        // measures 2 ms, so the hole sent at 21 ms is not yet overdue (Disorder). The next ACK,
        // SACKs only, measures from 21 ms and marks it lost. (RFC 8985 would take the newest's
        // RTT and mark it at once.) Seen in the kernel (6.18, cubic through 64 KB at MTU 9000):
        // after each of 40 such ACKs, Disorder with nothing lost and `rack.rtt_us` 678-792 µs,
        // where the ACK before had left 416-487.
        let (mut s, _) = established("reno", 10);
        let rwnd = 1 << 20;
        let mut out = Vec::new();
        s.on_packet(Time::from_ms(20), &ack(2 * MSS, &[], rwnd), &mut out);
        assert_eq!(out.iter().map(|p| p.seq / MSS).collect::<Vec<_>>(), [10, 11, 12, 13]);
        out.clear();
        s.on_packet(Time::from_ms(21), &ack(10 * MSS, &[], rwnd), &mut out);
        assert!(out.first().is_some_and(|p| p.seq == 14 * MSS) && out.len() >= 5);
        // Segment 14 (sent at 21 ms) missing, 15 up to `end` SACKed.
        let sacked =
            |end: u64| ack(14 * MSS, &[SeqRange { start: 15 * MSS, end: end * MSS }], rwnd);
        s.on_packet(Time::from_ms(22), &sacked(18), &mut out);
        assert_eq!(s.rack.rtt, Time::from_ms(2), "the RTT of segment 13, sent at 20 ms");
        assert_eq!((s.tp.ca_state, s.board().lost_out), (CaState::Disorder, 0));
        s.on_packet(Time::from_us(22_100), &sacked(19), &mut out);
        assert_eq!(s.rack.rtt, Time::from_us(1100), "the RTT of segment 18, sent at 21 ms");
        assert_eq!((s.tp.ca_state, s.board().lost_out), (CaState::Recovery, 1));
        s.board().check();
    }

    #[test]
    fn recovery_prr_paces_sending_to_ssthresh_over_recover_fs() {
        let (mut s, _) = established("reno", 40);
        let rwnd = 1 << 20;
        let mut checked = 0;
        // Segment 0 is lost; the rest of the window is SACKed one ACK at a time.
        for k in 1..40u64 {
            let mut o = Vec::new();
            s.on_packet(
                Time::from_ms(20) + Time::from_us(k),
                &ack(0, &[SeqRange { start: MSS, end: (k + 1) * MSS }], rwnd),
                &mut o,
            );
            if s.tp.ca_state == CaState::Recovery && s.in_flight_packets() > s.tp.snd_ssthresh {
                // RFC 6937 proportional part: prr_out = ceil(prr_delivered · ssthresh / RecoverFS).
                let want = (s.prr_delivered as u64 * s.tp.snd_ssthresh as u64)
                    .div_ceil(s.tp.prior_cwnd as u64);
                assert_eq!(s.prr_out as u64, want.max(1), "after ACK {k}");
                checked += 1;
            }
        }
        assert!(checked > 20, "{checked}");
    }

    /// A BBR sender whose initial window went out at 10 ms, its first segment lost: at 20 ms
    /// one ACK per µs SACKs segments 1 to `sacked`. Returns it, what it sent, and the rwnd.
    fn bbr_missing_its_first_segment(sacked: u64) -> (TcpSender, Vec<Packet>, u64) {
        let (mut s, _) = established("bbr", 40);
        let rwnd = 1 << 20;
        let mut o = Vec::new();
        for k in 1..=sacked {
            s.on_packet(
                Time::from_ms(20) + Time::from_us(k),
                &ack(0, &[SeqRange { start: MSS, end: (k + 1) * MSS }], rwnd),
                &mut o,
            );
        }
        (s, o, rwnd)
    }

    #[test]
    fn bbr_keeps_its_own_cwnd_when_recovery_ends() {
        // `tcp_end_cwnd_reduction()` returns at once for a CCA with `cong_control`: BBR's
        // ssthresh is TCP_INFINITE_SSTHRESH, and in STARTUP (below its target) BBR only adds to
        // the cwnd it finds, so cwnd = ssthresh would stay 2^31 − 1 packets.
        let (mut s, mut o, rwnd) = bbr_missing_its_first_segment(9);
        assert_eq!(s.tp.ca_state, CaState::Recovery);
        let high = s.high_seq;
        s.on_packet(Time::from_ms(30), &ack(high, &[], rwnd), &mut o);
        assert_eq!(s.tp.ca_state, CaState::Open);
        assert_eq!(s.tp.snd_ssthresh, TCP_INFINITE_SSTHRESH);
        assert!(s.tp.snd_cwnd < 1000, "cwnd {}", s.tp.snd_cwnd);
    }

    #[test]
    fn an_ack_the_original_earned_gives_bbr_no_rtt_of_the_retransmission() {
        // Of the initial window sent at 10 ms, segment 0 is lost (1-9 SACKed at 20 ms) and
        // resent in recovery; the ACK that then covers all of it comes 50 µs after the resend.
        // Karn: no RTT from a retransmitted segment, so the rate sample's `rtt_us` is -1 and
        // BBR's min RTT stays the path's 10 ms (it was 50 µs, and BBR's BDP with it).
        let (mut s, mut o, rwnd) = bbr_missing_its_first_segment(9);
        // RACK marks it lost a reordering window after its RTT; BBR then paces the resend.
        let next =
            |s: &TcpSender| [s.timer_deadline(), s.pace_deadline()].into_iter().flatten().min();
        let mut resent_at = None;
        while resent_at.is_none() {
            let t = next(&s).expect("a timer is armed");
            s.on_timer(t, &mut o);
            resent_at = o.iter().any(|p| p.seq == 0 && p.retrans).then_some(t);
        }
        let at = resent_at.unwrap() + Time::from_us(50);
        let high = s.high_seq;
        s.on_packet(at, &ack(high, &[], rwnd), &mut o);
        let AnyCc::Bbr(bbr) = &s.cc else { panic!("not bbr") };
        assert!(bbr.min_rtt_us() >= 9_000, "BBR min RTT {} us", bbr.min_rtt_us());
    }

    #[test]
    fn loss_rto_collapses_cwnd_and_backs_off() {
        let (mut s, _) = established("cubic", 10);
        let mut out = Vec::new();
        // Let the TLP fire (nothing new allowed: window full), then the RTO.
        s.snd_wnd = 10 * MSS;
        let tlp = s.timer_deadline().unwrap();
        s.on_timer(tlp, &mut out);
        assert_eq!(out.last().map(|p| (p.seq, p.retrans)), Some((9 * MSS, true)));
        assert_eq!(s.timer_kind(), Some(TimerKind::Rto));
        let rto = s.rtt.rto();
        let at = s.timer_deadline().unwrap();
        s.on_timer(at, &mut out);
        assert_eq!(s.tp.ca_state, CaState::Loss);
        // `tcp_enter_loss()`: cwnd = packets in flight + 1. The TLP's copy of segment 9 is not
        // a retransmission in flight (`__tcp_retransmit_skb()` marks it EVER_RETRANS only, not
        // SACKED_RETRANS) and left more than the RACK RTT ago, so the RTO marks it lost with
        // the rest: nothing in flight, cwnd 1. Then it retransmits the head.
        assert_eq!(s.tp.snd_cwnd, 1);
        assert_eq!(s.in_flight_packets(), 1);
        assert_eq!((s.board.lost_out, s.board.retrans_out), (10, 1));
        // cubic: max(cwnd × 717 / 1024, 2) = 7 of a cwnd of 10.
        assert_eq!(s.tp.snd_ssthresh, 10 * 717 / 1024);
        assert_eq!(s.stats.timeouts, 1);
        assert_eq!(out.last().map(|p| (p.seq, p.retrans)), Some((0, true)));
        assert_eq!(s.timer_deadline(), Some(at + rto * 2));
    }

    #[test]
    fn established_tlp_that_repairs_a_loss_halves_cwnd_once() {
        let (mut s, _) = established("reno", 10);
        let mut out = Vec::new();
        // Segments 0..8 arrive, 9 is lost; the peer's window allows nothing new.
        s.on_packet(Time::from_ms(20), &ack(9 * MSS, &[], MSS), &mut out);
        let tlp = s.timer_deadline().unwrap();
        assert_eq!(s.timer_kind(), Some(TimerKind::Tlp));
        s.on_timer(tlp, &mut out);
        assert_eq!(out.last().map(|p| (p.seq, p.retrans)), Some((9 * MSS, true)));
        // The probe fills the hole; then an ACK beyond it proves a real loss: one reduction.
        s.on_packet(tlp + Time::from_ms(10), &ack(10 * MSS, &[], 1 << 20), &mut out);
        assert!(s.tlp_high_seq.is_some());
        let cwnd = s.tp.snd_cwnd;
        s.on_packet(tlp + Time::from_ms(11), &ack(11 * MSS, &[], 1 << 20), &mut out);
        assert_eq!(s.tp.snd_cwnd, cwnd / 2);
        assert_eq!(s.tp.ca_state, CaState::Open);
        assert!(s.tlp_high_seq.is_none());
    }

    #[test]
    fn established_tlp_answered_by_a_pure_duplicate_means_no_loss() {
        let (mut s, _) = established("reno", 10);
        let mut out = Vec::new();
        s.on_packet(Time::from_ms(20), &ack(10 * MSS, &[], 0), &mut out);
        let cwnd = s.tp.snd_cwnd;
        // Nothing outstanding and a zero window: no timer; give the window back to probe.
        s.on_packet(Time::from_ms(21), &ack(10 * MSS, &[], MSS), &mut out);
        let tlp = s.timer_deadline().unwrap();
        s.on_timer(tlp, &mut out);
        // Original and probe both arrived: the probe's ACK is a pure duplicate.
        s.on_packet(tlp + Time::from_ms(10), &ack(11 * MSS, &[], MSS), &mut out);
        s.on_packet(tlp + Time::from_ms(11), &ack(11 * MSS, &[], MSS), &mut out);
        assert!(s.tlp_high_seq.is_none());
        assert!(s.tp.snd_cwnd >= cwnd);
    }

    /// Nine of ten segments acked at 20 ms and the peer's window ending at `snd_nxt`: one
    /// segment out, which a loss probe can only send again.
    fn one_out_window_full() -> TcpSender {
        let (mut s, _) = established("reno", 10);
        let mut out = Vec::new();
        s.on_packet(Time::from_ms(20), &ack(9 * MSS, &[], MSS), &mut out);
        assert!(out.is_empty(), "the window allows nothing new");
        s
    }

    #[test]
    fn established_tlp_answered_by_a_dsack_means_no_loss() {
        // One segment out and the peer's window ends at snd_nxt: the probe retransmits it. The
        // probe's duplicate arrives before the receiver acknowledged the original, so one ACK
        // both advances to the probe's end and D-SACKs the probe (`FLAG_DSACK_TLP`); without
        // the D-SACK the same ACK could be a repaired loss and the probe stays outstanding.
        for with_dsack in [true, false] {
            let mut s = one_out_window_full();
            let mut out = Vec::new();
            let tlp = s.timer_deadline().unwrap();
            s.on_timer(tlp, &mut out);
            assert!(s.tlp_retrans && s.tlp_high_seq == Some(10 * MSS));
            let blocks =
                if with_dsack { vec![SeqRange { start: 9 * MSS, end: 10 * MSS }] } else { vec![] };
            s.on_packet(tlp + Time::from_ms(10), &ack(10 * MSS, &blocks, MSS), &mut out);
            assert_eq!(s.tlp_high_seq.is_none(), with_dsack, "with D-SACK: {with_dsack}");
        }
    }

    #[test]
    fn a_dsack_counts_its_duplicate_as_delivered_unless_nothing_was_resent() {
        // `tcp_dsack_seen()`: a spurious retransmission is delivered (`sack_delivered`), for
        // PRR, cwnd growth and the rate sample; a D-SACK reporting more duplicates than were
        // ever resent is dubious and counts nothing (`tcpi_dsack_dups` still counts it).
        for probed in [true, false] {
            let mut s = one_out_window_full();
            let mut out = Vec::new();
            let mut at = Time::from_ms(25);
            if probed {
                at = s.timer_deadline().unwrap();
                s.on_timer(at, &mut out);
                assert_eq!(s.stats.retransmits, 1, "the loss probe resent the last segment");
            }
            let before = s.tp.delivered;
            let dsack = [SeqRange { start: 9 * MSS, end: 10 * MSS }];
            s.on_packet(at + Time::from_ms(10), &ack(10 * MSS, &dsack, MSS), &mut out);
            let dup = u64::from(probed);
            assert_eq!(s.tp.delivered - before, 1 + dup, "probed: {probed}");
            assert_eq!(s.stats.dsack_dups, 1);
        }
    }

    #[test]
    fn tlp_with_a_probe_out_fires_into_the_rto_counted_from_the_head() {
        // `tcp_schedule_loss_probe()` arms the probe on an advancing ACK even with a probe out;
        // `tcp_send_loss_probe()` then sends none and `tcp_rearm_rto()`, with the probe timer
        // pending, counts the RTO from the head's last transmission (`tcp_rto_delta_us()`),
        // not from the ACK.
        let (mut s, _) = established("reno", 10);
        let mut out = Vec::new();
        let probe_at = s.timer_deadline().unwrap();
        s.on_timer(probe_at, &mut out);
        assert!(s.tlp_high_seq.is_some(), "the first probe is out");
        let acked_at = probe_at + Time::from_ms(1);
        s.on_packet(acked_at, &ack(MSS, &[], 1 << 20), &mut out);
        assert_eq!(s.timer_kind(), Some(TimerKind::Tlp), "armed again with the probe out");
        let fires = s.timer_deadline().unwrap();
        let probes = s.stats.loss_probes;
        s.on_timer(fires, &mut out);
        assert_eq!(s.stats.loss_probes, probes, "at most one probe out");
        let head_sent = s.board().head().unwrap().sent_at;
        assert_eq!(head_sent, Time::from_ms(10));
        assert_eq!(s.timer_kind(), Some(TimerKind::Rto));
        assert_eq!(s.timer_deadline(), Some(head_sent + s.rtt.rto()));
        assert!(head_sent + s.rtt.rto() < acked_at + s.rtt.rto());
    }

    #[test]
    fn rto_a_sack_of_an_original_sent_before_the_head_was_resent_restarts_it() {
        // `FLAG_SET_XMIT_TIMER` on a SACK-only ACK (`tcp_clean_rtx_queue()`): in recovery the
        // head was resent at 20 ms; a SACK of an original that left at 10 ms restarts the RTO.
        // (A SACK of data sent after the head's retransmission does not; RACK then finds that
        // retransmission lost and resending it restarts the RTO anyway.)
        let (mut s, _) = established("reno", 10);
        let mut out = Vec::new();
        let sacks = |a: u64, b: u64| [SeqRange { start: a * MSS, end: b * MSS }];
        s.on_packet(Time::from_ms(20), &ack(0, &sacks(1, 5), 1 << 20), &mut out);
        assert_eq!(s.tp.ca_state, CaState::Recovery);
        assert_eq!(s.board().head().unwrap().sent_at, Time::from_ms(20), "the head was resent");
        assert_eq!(s.timer_deadline(), Some(Time::from_ms(20) + s.rtt.rto()));
        s.on_packet(Time::from_ms(25), &ack(0, &sacks(1, 8), 1 << 20), &mut out);
        assert_eq!(s.board().head().unwrap().sent_at, Time::from_ms(20), "not resent again");
        assert_eq!(s.timer_deadline(), Some(Time::from_ms(25) + s.rtt.rto()));
    }

    #[test]
    fn tlp_new_data_sent_arms_the_probe_again() {
        // `tcp_write_xmit()` calls `tcp_schedule_loss_probe()` after new data, whatever sent it
        // (here the application writing more), within what is left of the head's RTO.
        let sp = FlowSpec { size_bytes: Some(5 * MSS), ..spec("reno", 10) };
        let (mut s, sent) = established_with(&sp);
        assert_eq!(sent.len(), 5);
        assert_eq!(s.timer_kind(), Some(TimerKind::Tlp));
        let first = s.timer_deadline().unwrap();
        let mut out = Vec::new();
        let wrote_at = Time::from_ms(15);
        s.app_write(wrote_at, 5 * MSS, &mut out);
        assert_eq!(out.len(), 5, "cwnd lets five more go");
        assert_eq!(s.timer_kind(), Some(TimerKind::Tlp));
        assert_eq!(s.timer_deadline(), Some(first + (wrote_at - Time::from_ms(10))));
    }

    #[test]
    fn htcp_counts_what_the_cumulative_ack_covers_not_what_a_sack_delivers() {
        // `tcp_clean_rtx_queue()` passes `pkts_acked`, the packets the cumulative ACK took off
        // the queue: none for an ACK that only SACKs, and the SACKed ones once it covers them.
        // H-TCP's throughput sample (`packetcount`) sums it.
        let (mut s, _) = established("htcp", 10);
        let count = |s: &TcpSender| match &s.cc {
            AnyCc::Htcp(h) => h.packetcount(),
            _ => unreachable!("an H-TCP sender"),
        };
        let mut out = Vec::new();
        let sacked = [SeqRange { start: MSS, end: 3 * MSS }];
        s.on_packet(Time::from_ms(20), &ack(0, &sacked, 1 << 20), &mut out);
        assert_eq!(count(&s), 0, "a SACK moves nothing off the queue");
        s.on_packet(Time::from_ms(21), &ack(3 * MSS, &[], 1 << 20), &mut out);
        assert_eq!(count(&s), 3, "the cumulative ACK covers the two SACKed and the head");
    }

    #[test]
    fn fq_host_a_segment_is_sent_at_the_departure_time_fq_holds_it_to() {
        // With `fq` TCP stamps each skb with its earliest departure time (`tcp_wstamp_ns`), and
        // that is the skb's send time (`skb->skb_mstamp_ns`): its TSval and what RTT, RACK and
        // rate samples count from. A wait in fq is not path delay.
        let fq =
            HostQdisc::Fq(FqParams { maxrate_bytes_per_s: None, flow_limit: 100, quantum: None });
        let sp = FlowSpec { qdisc: fq, ..spec("cubic", 10) };
        let (mut s, _) = established_with(&sp);
        let mut out = Vec::new();
        let now = Time::from_ms(20);
        s.on_packet(now, &ack(10 * MSS, &[], 1 << 20), &mut out);
        let held: Vec<&Packet> = out.iter().filter(|p| p.edt > now).collect();
        assert!(held.len() >= 2, "fq holds the later trains: {} of {}", held.len(), out.len());
        assert!(held.iter().all(|p| p.ts_val == p.edt));
        let last = s.board().get(s.board().len() - 1);
        assert_eq!(last.sent_at, out.last().unwrap().edt);
    }

    #[test]
    fn app_limited_is_marked_as_the_application_writes_not_at_a_transfers_tail() {
        // `tcp_rate_check_app_limited()` runs in `tcp_sendmsg()`. After the application's last
        // write nothing asks, so the tail of a transfer is not app-limited; a response written
        // to an idle connection is.
        let sp = FlowSpec { size_bytes: Some(10 * MSS), ..spec("cubic", 10) };
        let (mut s, sent) = established_with(&sp);
        for p in &sent {
            s.tsq.done(p.ip_bytes, true, true);
        }
        let mut out = Vec::new();
        s.on_packet(Time::from_ms(20), &ack(2 * MSS, &[], 1 << 20), &mut out);
        assert!(out.is_empty(), "all ten are out, cwnd has room");
        assert_eq!(s.app_limited_until, 0, "the tail is not app-limited");
        s.on_packet(Time::from_ms(21), &ack(10 * MSS, &[], 1 << 20), &mut out);
        s.app_write(Time::from_ms(30), 5 * MSS, &mut out);
        assert!(s.app_limited_until > 0, "a write to an idle connection is app-limited");
    }

    #[test]
    fn dsack_is_the_first_block_below_the_ack_or_inside_the_second() {
        let r = |a: u64, b: u64| SeqRange { start: a, end: b };
        assert_eq!(split_dsack(&[r(10, 20)], 30), (Some(r(10, 20)), &[][..]));
        assert_eq!(split_dsack(&[r(40, 50), r(35, 60)], 30), (Some(r(40, 50)), &[r(35, 60)][..]));
        assert_eq!(split_dsack(&[r(40, 50), r(60, 70)], 30), (None, &[r(40, 50), r(60, 70)][..]));
    }

    /// A whole first flight lost; the loss probe (the last segment again, the peer's window
    /// being full) gets through and is SACKed `probe_rtt` after it left. Returns the sender
    /// and what it sent on that SACK.
    fn probe_sacked(handshake_rtt: Time, probe_rtt: Time) -> (TcpSender, Vec<Packet>) {
        let mut s = TcpSender::new(0, 0, 1, &spec("reno", 10), 1500);
        let mut out = Vec::new();
        s.open(Time::ZERO, &mut out);
        let mut sa = Packet::new(Kind::SynAck, 0, 1, 0, SYN_BYTES);
        sa.rwnd = 65_535;
        s.on_packet(handshake_rtt, &sa, &mut out);
        // Ten segments out; the window ends at snd_nxt, so the probe must resend the last one.
        s.on_packet(handshake_rtt, &ack(0, &[], 10 * MSS), &mut out);
        assert_eq!(s.timer_kind(), Some(TimerKind::Tlp));
        let tlp = s.timer_deadline().unwrap();
        s.on_timer(tlp, &mut out);
        assert_eq!(out.last().map(|p| (p.seq, p.retrans)), Some((9 * MSS, true)));
        out.clear();
        let sack = SeqRange { start: 9 * MSS, end: 10 * MSS };
        s.on_packet(tlp + probe_rtt, &ack(0, &[sack], 10 * MSS), &mut out);
        (s, out)
    }

    #[test]
    fn rack_a_probe_sacked_faster_than_the_min_rtt_proves_nothing_and_the_rto_must_come() {
        // `tcp_rack_advance()`: a retransmission SACKed within less than the min RTT may have
        // been the original arriving, so RACK does not move. A slow handshake (1 ms) set the
        // min RTT; the probe comes back in 100 µs: no loss is marked, the flow waits for its
        // RTO with nine segments missing. The same probe after a 50 µs handshake marks them
        // lost and starts recovery at once.
        let (slow, sent) = probe_sacked(Time::from_ms(1), Time::from_us(100));
        assert_eq!(slow.tp.min_rtt_us, 1000);
        assert_eq!((slow.board().lost_out, sent.len()), (0, 0));
        assert_eq!(slow.timer_kind(), Some(TimerKind::Rto));
        assert_eq!(slow.tp.ca_state, CaState::Disorder);

        let (fast, sent) = probe_sacked(Time::from_us(50), Time::from_us(100));
        assert_eq!(fast.board().lost_out, 9);
        assert_eq!(fast.tp.ca_state, CaState::Recovery);
        assert_eq!(fast.stats.recoveries, 1);
        assert_eq!(sent.first().map(|p| (p.seq, p.retrans)), Some((0, true)));
    }

    #[test]
    fn loss_rto_spares_segments_sent_within_the_rack_rtt() {
        let (mut s, _) = established("reno", 10);
        let mut out = Vec::new();
        // One ACK sets RACK's RTT to 10 ms; new segments leave at 20 ms.
        s.on_packet(Time::from_ms(20), &ack(MSS, &[], 1 << 20), &mut out);
        let rto = s.rtt.rto();
        // Pretend the RTO fires just 5 ms after the newest segments left.
        s.timer = Some((TimerKind::Rto, Time::from_ms(25)));
        let before = s.board().packets_out();
        s.on_timer(Time::from_ms(25), &mut out);
        // The head (sent at 0 ms) and the first flight are lost; the 20 ms ones are not yet.
        assert!(s.board().lost_out < before, "{} of {before}", s.board().lost_out);
        assert!(s.tp.snd_cwnd > 2);
        assert!(rto > Time::ZERO);
        s.board().check();
    }

    #[test]
    fn recovery_karn_rule_skips_rtt_from_a_cumulative_ack_over_a_retransmission() {
        let (mut s, _) = established("reno", 10);
        let mut out = Vec::new();
        s.on_packet(
            Time::from_ms(20),
            &ack(0, &[SeqRange { start: MSS, end: 4 * MSS }], 1 << 20),
            &mut out,
        );
        let srtt = s.rtt.srtt();
        // Much later the retransmission of 0 is acked together with 4..9 (never SACKed):
        // the 500 ms since their first send must not become an RTT sample.
        s.on_packet(Time::from_ms(510), &ack(10 * MSS, &[], 1 << 20), &mut out);
        assert_eq!(s.rtt.srtt(), srtt);
    }

    #[test]
    fn established_window_below_one_mss_still_moves_when_nothing_is_in_flight() {
        let (mut s, _) = established("reno", 10);
        let mut out = Vec::new();
        s.on_packet(Time::from_ms(20), &ack(10 * MSS, &[], 500), &mut out);
        // Nothing outstanding and a 500-byte window: Nagle lets one short segment go.
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].seq, out[0].payload), (10 * MSS, 500));
        // With that segment in flight, no further short segment leaves.
        let mut more = Vec::new();
        s.on_packet(Time::from_ms(21), &ack(10 * MSS, &[], 1000), &mut more);
        assert!(more.is_empty());
    }

    #[test]
    fn nagle_minshall_sends_a_windows_short_tail_once_the_last_short_one_is_acked() {
        // Linux's small-`tcp_rmem` offer (see rwnd's tests): 4,224 B with a 1,448 B MSS.
        let (mut s, _) = established("reno", 10);
        let lens = |out: &[Packet]| out.iter().map(|p| p.payload).collect::<Vec<_>>();
        let mut out = Vec::new();
        s.on_packet(Time::from_ms(20), &ack(10 * MSS, &[], 4224), &mut out);
        // `tcp_mss_split_point()` cuts the skb at the window's edge and keeps the 1,328 B tail:
        // `tcp_nagle_check()` holds it only while packets are out and `tcp_minshall_check()`
        // finds an earlier short segment unacked, and none was sent.
        assert_eq!(lens(&out), [1448, 1448, 1328]);
        let sml = 10 * MSS + 4224;
        assert_eq!(s.snd_nxt, sml);
        // The two full segments acked, the short one not: a window with room for a full
        // segment and 1,000 B more sends only the full one; the short tail waits.
        out.clear();
        s.on_packet(Time::from_ms(21), &ack(12 * MSS, &[], 3776), &mut out);
        assert_eq!(lens(&out), [1448]);
        // Its ACK (`snd_sml` no longer after `snd_una`) lets the next short tail go.
        out.clear();
        s.on_packet(Time::from_ms(22), &ack(sml, &[], 3776), &mut out);
        assert_eq!(lens(&out), [1448, 880]);
        assert_eq!(s.snd_nxt, sml + 3776);
    }

    #[test]
    fn paced_trains_leave_spaced_by_their_size_over_the_pacing_rate() {
        let mut sp = spec("cubic", 10);
        sp.max_pacing_rate = Some(crate::units::Rate::from_mbps(100));
        let (mut s, mut out) = established_with(&sp);
        // The first 10 segments are never paced (`data_segs_out < 10`).
        assert_eq!(out.len(), 10);
        // 200 % of cwnd·mss/srtt = 2.896 MB/s, below the 12.5 MB/s cap.
        assert_eq!(s.tp.pacing_rate, 2_896_000);
        out.clear();
        s.on_packet(Time::from_ms(20), &ack(2 * MSS, &[], 1 << 20), &mut out);
        let rate = s.tp.pacing_rate;
        let train = s.tp.tso_autosize(TCP_MIN_TSO_SEGS);
        assert_eq!(out.len() as u32, train);
        let first = s.pace_at.expect("the next train waits for the pacing timer");
        s.on_timer(first, &mut out);
        let second = s.pace_at.unwrap();
        let bytes = train as u128 * MSS as u128;
        assert_eq!(second - first, Time((bytes * Time::PS_PER_S as u128 / rate as u128) as u64));
        assert_eq!(out.len() as u32, 2 * train);
    }

    #[test]
    fn retransmissions_keep_the_skbs_their_segments_last_left_in() {
        // Linux resends skbs as its retransmission queue holds them (`tcp_xmit_retransmit_queue()`;
        // `__tcp_retransmit_skb()` merges only sub-MSS skbs): two lost skbs side by side leave as
        // two, even where one skb could carry them all.
        let (mut s, _) = established("reno", 10);
        // No pacing rate yet, so `tcp_tso_segs()` allows 45: only cwnd / 2 and the old skbs cut
        // (no write queue skb, no skb a train began, starts in this train).
        s.tp.pacing_rate = 0;
        s.write_queue = WriteQueue::default();
        s.train_skb_starts.clear();
        let send = |s: &mut TcpSender, from: u64, to: u64, retrans: bool| {
            let mut train: Vec<Packet> = (from..to)
                .map(|k| s.data_packet(Time::from_ms(30), k * MSS, MSS as u32, retrans))
                .collect();
            s.group_skbs(&mut train);
            train
                .iter()
                .filter(|p| p.gso_index == 0)
                .map(|p| (p.seq / MSS, p.gso_segs))
                .collect::<Vec<_>>()
        };
        s.tp.snd_cwnd = 10;
        assert_eq!(send(&mut s, 0, 10, false), [(0, 5), (5, 5)], "a window of 10 leaves as 5 + 5");
        s.tp.snd_cwnd = 40;
        assert_eq!(send(&mut s, 0, 10, true), [(0, 5), (5, 5)], "not as one skb of 10");
        // An skb resent in part is cut there (`tcp_fragment()`); its rest is an skb of its own.
        assert_eq!(send(&mut s, 0, 3, true), [(0, 3)]);
        assert_eq!(send(&mut s, 0, 10, true), [(0, 3), (3, 2), (5, 5)]);
        // New data is cut only by the size limits.
        s.tp.snd_cwnd = 40;
        assert_eq!(send(&mut s, 0, 10, false), [(0, 10)]);
        // Half of cwnd holds new data, not a retransmission: at cwnd 12 the skb of 10 is resent
        // whole (`__tcp_retransmit_skb()` cuts only to what cwnd leaves).
        s.tp.snd_cwnd = 12;
        assert_eq!(send(&mut s, 0, 10, true), [(0, 10)]);
        assert_eq!(send(&mut s, 0, 10, false), [(0, 6), (6, 4)]);
    }

    #[test]
    fn a_loss_probe_resends_the_last_segment_as_an_skb_of_its_own() {
        // `tcp_send_loss_probe()` with nothing new to send cuts the last segment off its skb.
        let mut sp = spec("reno", 10);
        sp.size_bytes = Some(10 * MSS);
        let (mut s, first) = established_with(&sp);
        assert_eq!(first.len(), 10);
        let mut out = Vec::new();
        let tlp = s.timer_deadline().expect("a loss probe is armed");
        s.on_timer(tlp, &mut out);
        assert_eq!(out.iter().map(|p| (p.seq / MSS, p.retrans)).collect::<Vec<_>>(), [(9, true)]);
        assert!(s.board().is_skb_head(9 * MSS));
    }

    #[test]
    fn paced_retransmission_is_one_old_skb_per_departure() {
        // Every segment lost (as after an RTO) and cwnd wide open: paced, the first departure
        // resends the first skb the segments left in, not the ten one skb could carry.
        let mut sp = spec("cubic", 10);
        sp.max_pacing_rate = Some(crate::units::Rate::from_mbps(1000));
        let mut s = TcpSender::new(0, 0, 1, &sp, 1500);
        let mut out = Vec::new();
        s.open(Time::ZERO, &mut out);
        let mut sa = Packet::new(Kind::SynAck, 0, 1, 0, SYN_BYTES);
        sa.rwnd = 65_535;
        out.clear();
        s.on_packet(Time::from_us(100), &sa, &mut out);
        let skbs = |out: &[Packet]| {
            out.iter()
                .filter(|p| p.gso_index == 0)
                .map(|p| (p.seq / MSS, p.gso_segs))
                .collect::<Vec<_>>()
        };
        assert_eq!(skbs(&out), [(0, 5), (5, 5)]);
        let now = Time::from_ms(2);
        s.board.mark_all_lost(now, Time::ZERO);
        s.tp.snd_cwnd = 40;
        out.clear();
        s.xmit(now, &mut out);
        assert!(out.iter().all(|p| p.retrans));
        assert_eq!(skbs(&out), [(0, 5)]);
        assert!(s.pace_at.is_some(), "the second skb waits for its slot");
        // A cwnd of 8 holds a retransmission to what it leaves, not to half of it
        // (`tcp_xmit_retransmit_queue()`): the first skb leaves whole (5, not 4), the second
        // at its slot cut to the 3 that remain (`__tcp_retransmit_skb()`, `tcp_fragment()`).
        s.board.mark_all_lost(now, Time::ZERO);
        s.tp.snd_cwnd = 8;
        s.next_send = now;
        out.clear();
        s.xmit(now, &mut out);
        assert_eq!(skbs(&out), [(0, 5)]);
        let slot = s.pace_at.take().expect("the second skb waits for its slot");
        out.clear();
        s.xmit(slot, &mut out);
        assert_eq!(skbs(&out), [(5, 3)]);
    }

    #[test]
    fn paced_each_skb_waits_for_its_own_departure_time() {
        // `tcp_xmit_retransmit_queue()` asks `tcp_pacing_check()` before every skb: two
        // separate holes leave as two skbs, the second one pacing slot after the first.
        let mut sp = spec("cubic", 10);
        sp.max_pacing_rate = Some(crate::units::Rate::from_mbps(100));
        let (mut s, _) = established_with(&sp);
        let mut out = Vec::new();
        let sacks =
            [SeqRange { start: 2 * MSS, end: 4 * MSS }, SeqRange { start: 6 * MSS, end: 10 * MSS }];
        let now = Time::from_ms(20);
        s.on_packet(now, &ack(0, &sacks, 1 << 20), &mut out);
        assert_eq!(s.tp.ca_state, CaState::Recovery);
        let seqs = |out: &[Packet]| {
            out.iter().map(|p| (p.seq / MSS, p.retrans, p.gso_segs)).collect::<Vec<_>>()
        };
        assert_eq!(seqs(&out), [(0, true, 2), (1, true, 2)], "the first hole only");
        let next = s.pace_at.expect("the second hole waits for the pacing timer");
        assert!(next > now);
        out.clear();
        s.on_timer(next, &mut out);
        assert_eq!(seqs(&out), [(4, true, 2), (5, true, 2)]);
    }

    #[test]
    fn ecn_one_reduction_per_window_even_if_the_ack_at_high_seq_still_echoes() {
        let mut sp = spec("reno", 10);
        sp.ecn = true;
        let (mut s, mut out) = established_with(&sp);
        let ece = |a: u64| {
            let mut p = ack(a, &[], 1 << 20);
            p.ece = true;
            p
        };
        s.on_packet(Time::from_ms(20), &ece(MSS), &mut out);
        assert_eq!(s.tp.ca_state, CaState::Cwr);
        let ssthresh = s.tp.snd_ssthresh;
        let high = s.high_seq;
        // The ACK exactly at high_seq still echoes CE: no second reduction, CWR continues.
        s.on_packet(Time::from_ms(21), &ece(high), &mut out);
        assert_eq!((s.tp.ca_state, s.tp.snd_ssthresh), (CaState::Cwr, ssthresh));
        // Beyond it, CWR ends with cwnd = ssthresh.
        s.on_packet(Time::from_ms(22), &ack(high + MSS, &[], 1 << 20), &mut out);
        assert_eq!((s.tp.ca_state, s.tp.snd_cwnd), (CaState::Open, ssthresh));
    }
}
