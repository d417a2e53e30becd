//! A TCP connection's settings: the Linux sysctls, route options and host behaviour a
//! `[[flow]]` sets, with Linux's defaults.

use crate::latency::Latency;
use crate::time::Time;
use crate::units::Rate;

/// `net.ipv4.tcp_rmem` on a host with ≥ 4 GiB of RAM: `tcp_init()` (`net/ipv4/tcp.c`) sets
/// min = `PAGE_SIZE`, default = 131072, max = max(131072, min(6 MiB, memory share));
/// documented in `Documentation/networking/ip-sysctl.rst`.
pub const DEFAULT_TCP_RMEM: [u64; 3] = [4096, 131_072, 6_291_456];

/// `net.ipv4.tcp_wmem`: `tcp_init()` sets min = `PAGE_SIZE`, default = 16 KiB,
/// max = max(64 KiB, min(4 MiB, memory share)).
pub const DEFAULT_TCP_WMEM: [u64; 3] = [4096, 16_384, 4_194_304];

/// `net.core.rmem_max` = `SK_RMEM_MAX` (`include/net/sock.h`): 256 packets of
/// `SKB_TRUESIZE(256)` = 832 bytes on x86-64.
pub const DEFAULT_RMEM_MAX: u64 = 212_992;

/// `net.ipv4.tcp_congestion_control`: `CONFIG_DEFAULT_TCP_CONG` defaults to `"cubic"`
/// (`net/ipv4/Kconfig`, since 2.6.19).
pub const DEFAULT_CCA: &str = "cubic";

/// `net.ipv4.tcp_early_retrans`'s default: 3, TLP on (`Documentation/networking/ip-sysctl.rst`;
/// `tcp_sk_init()` in `net/ipv4/tcp_ipv4.c` sets it).
pub const DEFAULT_TCP_EARLY_RETRANS: u8 = 3;

/// `net.ipv4.tcp_early_retrans`'s range: `proc_dointvec_minmax` between `SYSCTL_ZERO` and
/// `SYSCTL_FOUR` (`net/ipv4/sysctl_net_ipv4.c`).
pub const TCP_EARLY_RETRANS_MAX: u8 = 4;

/// `CONFIG_HZ=250` in Debian's and Ubuntu's generic kernel configs.
pub const DEFAULT_HZ: u32 = 250;

/// Receive-window model of the receiving host's kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowModel {
    /// Kernels ≤ 6.5: `tcp_win_from_space()` with `tcp_adv_win_scale`.
    AdvWinScale(i32),
    /// Kernels ≥ 6.6: `space * scaling_ratio >> 8`.
    ScalingRatio(u8),
}

/// Which kernel's receive-buffer auto-tuning (`net.ipv4.tcp_moderate_rcvbuf`, dynamic
/// right-sizing) the receiving host runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RcvBufTuning {
    /// Linux 6.6–6.15 `tcp_rcv_space_adjust()`: once per receiver RTT, from the bytes the
    /// application read, `rcvwin = 2·copied + 16·advmss`, grown for a sender in slow start.
    #[default]
    Linux6_6,
    /// Linux 6.18 `tcp_rcvbuf_grow()`: once per receiver RTT from what was read less what is
    /// still queued, `rcvwin = 2·copied` grown for slow start, and at every out-of-order
    /// segment from the span the out-of-order queue covers.
    Linux6_18,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FlowSpec {
    pub cca: String,
    /// Bytes to send (iperf3 `-n`); `None` = send until `stop`.
    pub size_bytes: Option<u64>,
    pub start: Time,
    /// Receiver `net.ipv4.tcp_rmem` (min, default, max), bytes.
    pub tcp_rmem: [u64; 3],
    /// Sender `net.ipv4.tcp_wmem` (min, default, max), bytes.
    pub tcp_wmem: [u64; 3],
    /// Receiver `net.core.rmem_max`, bytes (bounds the window scale, like `tcp_rmem[2]`).
    pub rmem_max: u64,
    pub window_model: WindowModel,
    /// The len/truesize ratio (of 256) of the receiving host's skbs, which Linux ≥ 6.6 measures
    /// from the first full-sized segment (`tcp_measure_rcv_mss()`) and sizes the window with
    /// from then on; `None` = the window keeps `window_model`'s ratio.
    pub skb_scaling_ratio: Option<u8>,
    /// What the receiving host charges a full-sized segment's skb (`skb->truesize`), bytes;
    /// `Some` turns on the receive-memory model (`tcp_prune_queue()`, `tcp/receiver/rmem.rs`).
    pub skb_truesize: Option<u32>,
    /// The receiving host's receive-buffer auto-tuning.
    pub rcvbuf_tuning: RcvBufTuning,
    /// `ip route … initcwnd` (packets); default `TCP_INIT_CWND` = 10.
    pub initcwnd: u32,
    /// `ip route … initrwnd` (packets); 0 = kernel default.
    pub initrwnd: u32,
    /// `net.ipv4.tcp_comp_sack_nr` of the receiving host; 0 turns SACK compression off.
    pub comp_sack_nr: u32,
    /// `ip route … rto_min`; default `TCP_RTO_MIN` = 200 ms.
    pub rto_min: Time,
    /// The sender's `net.ipv4.tcp_early_retrans` (0-4): `tcp_schedule_loss_probe()`
    /// (`net/ipv4/tcp_output.c`) arms the tail loss probe only at 3 or 4; 0 is a host before
    /// TLP (Linux < 3.10), whose tail loss waits for the RTO. See [`FlowSpec::loss_probe`].
    pub tcp_early_retrans: u8,
    /// `ip route … quickack 1`: the receiver never delays ACKs.
    pub quickack: bool,
    /// `net.ipv4.tcp_ecn` negotiated on both ends.
    pub ecn: bool,
    /// Kernel `HZ` of the sender (CCAs count jiffies).
    pub hz: u32,
    /// The sender's `tcp_dctcp` module parameter `dctcp_shift_g`: DCTCP's EWMA gain is
    /// g = 1/2^shift_g (Linux: 4, g = 1/16; the S-ECN paper runs g = 1/8, 3). At most 10.
    pub dctcp_shift_g: u32,
    /// The sender's `tcp_dctcp` module parameter `dctcp_alpha_on_init`: DCTCP's α at the
    /// connection's start, in 1/1024 (Linux: 1024; above 1024 acts as 1024).
    pub dctcp_alpha_on_init: u32,
    /// How the hosts' TCP timers (RTO, loss probe, RACK reorder, delayed ACK) fire.
    pub timers: Timers,
    /// How long the receiving application takes to wake and read once data is queued; zero =
    /// it reads every segment as it arrives.
    pub read_latency: Latency,
    /// How long after data first arrives the receiving application first reads, if that
    /// differs from `read_latency` (an application still starting up: the validation's
    /// receiving tool, 0.7-6 ms, median 1.1 ms); `None` = as any other read.
    pub first_read_latency: Option<Time>,
    /// How long the application holds the socket before each read ends: `tcp_recvmsg()` runs
    /// under `lock_sock()`, and segments that arrive meanwhile wait in the socket's backlog,
    /// where `tcp_add_backlog()` joins them into one skb, and are processed when the read
    /// lets go (`__release_sock()`), with one ACK for all of them (`tcp_backlog_ack_defer`,
    /// Linux 6.7+). A busy host holds it long: a 1 Gbit/s flow of 1500-byte frames had half
    /// its bytes processed from the backlog. Zero = never held.
    pub read_hold: Latency,
    /// How long the receiving host takes to answer the connection's handshake. The sender's
    /// first RTT sample, and with it its min RTT, includes it (`tcp_synack_rtt_meas()`).
    pub handshake_latency: Latency,
    /// Receive batching on the receiving host: a data segment that reaches an idle receive
    /// path waits this long, and every one that arrives meanwhile is handed to TCP with it
    /// (NIC interrupt coalescing, `ethtool -C rx-usecs`; the NAPI softirq of a busy CPU). Zero
    /// = each segment as it arrives.
    pub rx_coalesce: Latency,
    /// How late the sending host runs TCP after the pacing timer's time (`pacing_latency`):
    /// the soft hrtimer behind `tcp_pacing_check()` fires late on a busy or virtual host. An
    /// ACK that comes after the departure time sends at once, as in Linux. Zero = on time.
    pub pacing_latency: Latency,
    pub dscp: u8,
    /// `SO_MAX_PACING_RATE` (iperf3 `--fq-rate`): caps the pacing rate and turns on TCP's
    /// internal pacing, as `sk_setsockopt()` does.
    pub max_pacing_rate: Option<Rate>,
    /// The sender's `gso_max_size`, bytes (64 KiB; BIG TCP raises it).
    pub gso_max_size: u32,
    /// The sender host's egress qdisc.
    pub qdisc: HostQdisc,
    /// The sender host's NIC rate where it differs from its link's: its egress port
    /// serializes at this rate; the link's other direction keeps the link's rate.
    pub nic_rate: Option<Rate>,
    /// The sending and the receiving host's CPU (`crate::host::cpu`); `None` = infinite.
    pub sender_cpu: Option<Box<crate::host::cpu::HostCpuSpec>>,
    pub receiver_cpu: Option<Box<crate::host::cpu::HostCpuSpec>>,
}

impl FlowSpec {
    /// A flow of `cca` between hosts with Linux's default settings (the parser's defaults):
    /// `tcp_rmem`/`tcp_wmem` defaults, `rmem_max` 212992, the ≥ 6.6 window model, IW 10,
    /// `rto_min` 200 ms, HZ 250, no ECN, pacing or fq; sends until the scenario stops.
    pub fn linux_default(cca: &str) -> FlowSpec {
        use crate::tcp::cc::GSO_MAX_SIZE;
        use crate::tcp::{TCP_INIT_CWND, rtt::TCP_RTO_MIN};
        FlowSpec {
            cca: cca.to_owned(),
            size_bytes: None,
            start: Time::ZERO,
            tcp_rmem: DEFAULT_TCP_RMEM,
            tcp_wmem: DEFAULT_TCP_WMEM,
            rmem_max: DEFAULT_RMEM_MAX,
            window_model: WindowModel::ScalingRatio(crate::tcp::rwnd::TCP_DEFAULT_SCALING_RATIO),
            skb_scaling_ratio: None,
            skb_truesize: None,
            rcvbuf_tuning: RcvBufTuning::Linux6_6,
            initcwnd: TCP_INIT_CWND,
            initrwnd: 0,
            comp_sack_nr: crate::tcp::receiver::TCP_COMP_SACK_NR,
            rto_min: TCP_RTO_MIN,
            tcp_early_retrans: DEFAULT_TCP_EARLY_RETRANS,
            quickack: false,
            ecn: false,
            hz: DEFAULT_HZ,
            dctcp_shift_g: crate::tcp::cc::dctcp::Params::default().shift_g,
            dctcp_alpha_on_init: crate::tcp::cc::dctcp::Params::default().alpha_on_init,
            timers: Timers::Exact,
            read_latency: Latency::ZERO,
            first_read_latency: None,
            read_hold: Latency::ZERO,
            handshake_latency: Latency::ZERO,
            rx_coalesce: Latency::ZERO,
            pacing_latency: Latency::ZERO,
            dscp: 0,
            max_pacing_rate: None,
            gso_max_size: GSO_MAX_SIZE,
            qdisc: HostQdisc::PfifoFast,
            nic_rate: None,
            sender_cpu: None,
            receiver_cpu: None,
        }
    }
}

impl FlowSpec {
    /// Whether the sender arms tail loss probes: `tcp_schedule_loss_probe()` returns false
    /// unless `sysctl_tcp_early_retrans` is 3 or 4 (`net/ipv4/tcp_output.c`).
    pub fn loss_probe(&self) -> bool {
        matches!(self.tcp_early_retrans, 3 | 4)
    }

    /// The jiffy the hosts' TCP timers tick in, or `None` for exact timers.
    pub fn timer_jiffy(&self) -> Option<Time> {
        match self.timers {
            Timers::Exact => None,
            Timers::Jiffies => Some(crate::tcp::timer_wheel::jiffy(self.hz)),
        }
    }
}

/// How TCP timers fire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timers {
    /// At the exact time they were armed for.
    Exact,
    /// As Linux's: whole jiffies of `hz`, on the timer wheel's ticks
    /// ([`crate::tcp::timer_wheel`]); a short probe fires 1–2 jiffies after it was armed.
    Jiffies,
}

/// A sending host's root qdisc.
#[derive(Clone, Debug, PartialEq)]
pub enum HostQdisc {
    /// `pfifo_fast`: one FIFO, no pacing of its own.
    PfifoFast,
    /// `fq` (`net/sched/sch_fq.c`): per-flow queues, EDT pacing, optional per-flow `maxrate`.
    Fq(FqParams),
}

#[derive(Clone, Debug, PartialEq)]
pub struct FqParams {
    /// `maxrate`: per-flow rate cap in bytes/s (a 32-bit field in Linux).
    pub maxrate_bytes_per_s: Option<u64>,
    /// `flow_limit`, packets per flow.
    pub flow_limit: u32,
    /// `quantum`, bytes; `None` = Linux's default (2 × MTU).
    pub quantum: Option<u32>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn early_retrans_defaults_to_linuxs_3_and_probes_only_at_3_or_4() {
        let f = FlowSpec::linux_default("cubic");
        assert_eq!(f.tcp_early_retrans, 3);
        assert!(f.loss_probe());
        let probes: Vec<bool> = (0..=TCP_EARLY_RETRANS_MAX)
            .map(|v| FlowSpec { tcp_early_retrans: v, ..f.clone() }.loss_probe())
            .collect();
        assert_eq!(probes, [false, false, false, true, true]);
    }
}
