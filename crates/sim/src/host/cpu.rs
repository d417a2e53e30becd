//! A host's CPU: what receiving and sending packets costs its cores, and its NIC's receive
//! rings, which drop what arrives while they are full. Off unless a scenario gives the host a
//! `cpu` ([`HostCpuSpec`]): then every packet that reaches the host waits in the ring of its
//! socket's core until that core's softirq polls it, and every data skb a socket sends waits
//! until the core has built it. Costs are charged in order, one piece of work at a time per
//! core; received work goes first (`NET_RX` softirq runs before the process that sends).
//!
//! - Receive: a NAPI poll takes up to [`NAPI_POLL_WEIGHT`] packets from the ring; GRO merges
//!   the in-order segments of one flow within the poll into skbs of up to `gro_max` bytes
//!   (`dev_gro_receive()`, `net/core/gro.c`; `gro_max_size`, 64 KiB by default). The poll
//!   costs `rx_packet` per packet, `rx_skb` per skb after GRO, its bytes at `rx_byte_rate`
//!   and its payload at `copy_rate` (the application's copy to user space, on the same core);
//!   TCP gets its skbs, each one receive event (one ACK decision), when the poll ends.
//! - Send: a TSO/GSO skb costs `tx_skb` and its payload at `tx_byte_rate` (the copy from user
//!   space and the checksum); its segments reach the qdisc when the core is done with it.
//!   Without TSO every segment is an skb. TSQ still counts them from when TCP sent them.
//! - A packet that finds its ring full is dropped and counted, as a NIC counts it
//!   (`rx_missed_errors` in `ethtool -S`, `rx_missed` in `ip -s link`).
//!
//! Costs are per core: socket `k` of a host (senders and receivers numbered apart) runs on
//! core `k % cores`, and its packets arrive on that core's ring (RSS by flow).

use std::collections::VecDeque;

use crate::packet::{Kind, Packet};
use crate::time::Time;
use crate::units::Rate;

/// Packets one NAPI poll takes from a ring: `NAPI_POLL_WEIGHT` (`include/linux/netdevice.h`).
pub const NAPI_POLL_WEIGHT: usize = 64;

/// GRO's default skb limit: `GRO_LEGACY_MAX_SIZE` = 65536 (`include/linux/netdevice.h`), the
/// default `gro_max_size` of a device.
pub const GRO_MAX_SIZE: u32 = 65_536;

/// A host's CPU and NIC receive rings, as a scenario sets them (`cpu = "profile"` or a table).
#[derive(Clone, Debug, PartialEq)]
pub struct HostCpuSpec {
    /// The profile this spec started from, if any (for the summary).
    pub profile: Option<String>,
    /// Cores the host's sockets are spread over; each has its own NIC receive queue and ring.
    pub cores: u32,
    /// Receive descriptors per ring (`ethtool -G rx`).
    pub ring: u32,
    /// GRO on (`ethtool -K gro`).
    pub gro: bool,
    /// Bytes (IP) GRO merges into one skb at most.
    pub gro_max: u32,
    /// TSO/GSO on: TCP hands the stack skbs of several segments.
    pub tso: bool,
    /// Softirq cost per received packet (driver, NAPI, GRO).
    pub rx_packet: Time,
    /// Softirq cost per skb after GRO (IP and TCP receive, the ACK it sends).
    pub rx_skb: Time,
    /// The rate at which a core does the per-byte receive work (checksum, memory); `None` = free.
    pub rx_byte_rate: Option<Rate>,
    /// The rate at which a core copies received payload to the application; `None` = free.
    pub copy_rate: Option<Rate>,
    /// Cost per skb sent (TCP output, qdisc, driver).
    pub tx_skb: Time,
    /// The rate at which a core does the per-byte send work (copy from user, checksum).
    pub tx_byte_rate: Option<Rate>,
}

impl HostCpuSpec {
    /// A spec that costs nothing: one core, a ring of 4096, GRO and TSO on.
    pub fn free() -> HostCpuSpec {
        HostCpuSpec {
            profile: None,
            cores: 1,
            ring: 4096,
            gro: true,
            gro_max: GRO_MAX_SIZE,
            tso: true,
            rx_packet: Time::ZERO,
            rx_skb: Time::ZERO,
            rx_byte_rate: None,
            copy_rate: None,
            tx_skb: Time::ZERO,
            tx_byte_rate: None,
        }
    }

    /// The named profile (sources and parameters in docs/scenarios.md, "Host CPU").
    pub fn profile(name: &str) -> Option<HostCpuSpec> {
        let spec = match name {
            // Fitted on this machine by scripts/calibrate_host_cpu.py (docs/fidelity.md).
            // veth hands skbs to the stack as they were sent, without GRO.
            VETH_THIS_MACHINE => HostCpuSpec {
                cores: 1,
                ring: 1024,
                gro: false,
                rx_packet: Time::from_ps(VETH_RX_PACKET_PS),
                rx_skb: Time::ZERO,
                copy_rate: Some(Rate(VETH_COPY_RATE_BPS)),
                ..HostCpuSpec::free()
            },
            // A tuned 100G data-transfer server (docs/scenarios.md cites each figure).
            SERVER_100G => server_core(),
            // A generic 10G server (the seed names no hardware): the same cores behind an Intel
            // 82599-class NIC with ixgbe's default ring, chosen before any comparison.
            SERVER_10G => HostCpuSpec { cores: 8, ring: IXGBE_DEFAULT_RXD, ..server_core() },
            _ => return None,
        };
        Some(HostCpuSpec { profile: Some(name.to_owned()), ..spec })
    }

    /// The seconds of one core a stream of `mss`-byte segments costs per payload byte at the
    /// receiver, with skbs of `skb_bytes` payload: the single-stream bound is its inverse.
    pub fn rx_seconds_per_byte(&self, mss: u32, skb_bytes: u32) -> f64 {
        let per = |t: Time, unit: u32| t.as_secs_f64() / f64::from(unit);
        let at = |r: Option<Rate>| r.map_or(0.0, |r| 8.0 / r.bps() as f64);
        per(self.rx_packet, mss)
            + per(self.rx_skb, skb_bytes)
            + at(self.rx_byte_rate) * f64::from(mss + 52) / f64::from(mss)
            + at(self.copy_rate)
    }
}

/// The profile fitted on this machine's veth.
pub const VETH_THIS_MACHINE: &str = "veth-this-machine";
/// A generic tuned 100G server.
pub const SERVER_100G: &str = "server-100g";
/// A generic 10G server.
pub const SERVER_10G: &str = "server-10g";
/// Every profile's name, for error messages and the docs.
pub const PROFILES: [&str; 3] = [VETH_THIS_MACHINE, SERVER_100G, SERVER_10G];

/// ixgbe's receive ring: `IXGBE_DEFAULT_RXD` = 512
/// (`drivers/net/ethernet/intel/ixgbe/ixgbe.h`).
pub const IXGBE_DEFAULT_RXD: u32 = 512;

/// The server core both `server-*` profiles share: 16 cores, mlx5's default ring of 1024
/// (`MLX5E_PARAMS_DEFAULT_LOG_RQ_SIZE` = 10, `drivers/net/ethernet/mellanox/mlx5/core/en.h`),
/// and the per-packet, per-skb and per-byte costs of docs/scenarios.md's sources.
fn server_core() -> HostCpuSpec {
    HostCpuSpec {
        cores: 16,
        ring: 1024,
        rx_packet: Time::from_ns(200),
        rx_skb: Time::from_us(1),
        rx_byte_rate: Some(Rate::from_gbps(140)),
        copy_rate: Some(Rate::from_gbps(84)),
        tx_skb: Time::from_us(1),
        tx_byte_rate: Some(Rate::from_gbps(84)),
        ..HostCpuSpec::free()
    }
}

/// `veth-this-machine`'s cost per segment and per byte: `scripts/calibrate_host_cpu.py fit` on
/// the unshaped runs at MTU 3000 and 16000 of `scripts/calibrate_host_cpu.session-f.json`
/// (iperf3 under SCHED_FIFO, load average 13.6-15.6 on 2 CPUs). Their medians put the larger
/// MTU slower, so the per-segment cost is 0 and the byte rate the median of the runs' (the
/// rule: docs/fidelity.md). veth hands each GSO skb to the peer whole (`veth_xmit()` →
/// `__netif_rx()`, `drivers/net/veth.c`), so no per-frame cost shows on this path.
const VETH_RX_PACKET_PS: u64 = 0;
const VETH_COPY_RATE_BPS: u64 = 9_478_687_884;

/// The time a core spends on `bytes` at `rate` (none if free), rounded up to a picosecond.
#[inline]
fn at_rate(bytes: u64, rate: Option<Rate>) -> Time {
    rate.map_or(Time::ZERO, |r| r.serialization_time(bytes))
}

/// What a core is doing until its current work ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Work {
    /// A NAPI poll: its skbs go up to TCP when it ends.
    Received,
    /// An skb being built: its segments go to the qdisc when it ends.
    Sent,
}

#[derive(Default)]
struct Core {
    ring: VecDeque<Packet>,
    tx: VecDeque<Packet>,
    /// The packets of the work in progress, and what they are.
    work: Vec<Packet>,
    doing: Option<Work>,
    busy: Time,
}

/// What became of a packet that reached the host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// The ring was full: dropped (`rx_missed`).
    Missed,
    /// In the ring; the core was idle and has started a poll that ends at this time.
    Polled(Time),
    /// In the ring, behind the core's current work.
    Queued,
}

/// A host's cores and rings while a run goes on.
pub struct HostCpu {
    pub spec: HostCpuSpec,
    cores: Vec<Core>,
    /// The port the host sends from: its NIC, which the `drops` table names for ring drops.
    pub nic_port: u32,
    pub stats: CpuStats,
}

/// What a host's CPU did in a run (the summary's `hosts`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuStats {
    /// Packets dropped at a full ring.
    pub rx_missed: u64,
    pub rx_packets: u64,
    /// Skbs TCP received after GRO.
    pub rx_skbs: u64,
    pub tx_skbs: u64,
}

impl HostCpu {
    pub fn new(spec: &HostCpuSpec, nic_port: u32) -> HostCpu {
        let cores = (0..spec.cores.max(1)).map(|_| Core::default()).collect();
        HostCpu { spec: spec.clone(), cores, nic_port, stats: CpuStats::default() }
    }

    /// The core of socket `index` (a sender's or a receiver's index on the host).
    #[inline]
    pub fn core_of(&self, index: u32) -> u32 {
        index % self.cores.len() as u32
    }

    /// The busiest core's busy time.
    pub fn busiest(&self) -> Time {
        self.cores.iter().map(|c| c.busy).max().unwrap_or(Time::ZERO)
    }

    /// Packet `p` reached the host for core `core`'s ring at `now`.
    pub fn arrive(&mut self, now: Time, core: u32, p: Packet) -> Arrival {
        let c = &mut self.cores[core as usize];
        if c.ring.len() >= self.spec.ring as usize {
            self.stats.rx_missed += 1;
            return Arrival::Missed;
        }
        c.ring.push_back(p);
        match self.start(now, core) {
            Some(end) => Arrival::Polled(end),
            None => Arrival::Queued,
        }
    }

    /// Data segment `p` of a socket on core `core` was sent by TCP at `now`: it waits for the
    /// core. Returns when the core's new work ends if it was idle and started.
    pub fn send(&mut self, now: Time, core: u32, p: Packet) -> Option<Time> {
        self.cores[core as usize].tx.push_back(p);
        self.start(now, core)
    }

    /// Core `core`'s work ended at `now`: what it was, with its packets in `into` (appended, in
    /// order), and when the next work it started ends, if any.
    pub fn finish(
        &mut self,
        now: Time,
        core: u32,
        into: &mut Vec<Packet>,
    ) -> (Option<Work>, Option<Time>) {
        let c = &mut self.cores[core as usize];
        let done = c.doing.take();
        into.append(&mut c.work);
        (done, self.start(now, core))
    }

    /// If core `core` is idle and has work, start it: a poll of its ring first, else the next
    /// skb to send. Returns when it ends.
    fn start(&mut self, now: Time, core: u32) -> Option<Time> {
        let spec = &self.spec;
        let c = &mut self.cores[core as usize];
        if c.doing.is_some() {
            return None;
        }
        let cost = if !c.ring.is_empty() {
            let n = c.ring.len().min(NAPI_POLL_WEIGHT);
            c.work.extend(c.ring.drain(..n));
            c.doing = Some(Work::Received);
            let skbs =
                if spec.gro { gro(&mut c.work, spec.gro_max) } else { skbs_as_sent(&c.work) };
            let ip: u64 = c.work.iter().map(|p| u64::from(p.ip_bytes)).sum();
            let payload: u64 = c.work.iter().map(|p| u64::from(p.payload)).sum();
            self.stats.rx_packets += n as u64;
            self.stats.rx_skbs += skbs;
            spec.rx_packet * n as u64
                + spec.rx_skb * skbs
                + at_rate(ip, spec.rx_byte_rate)
                + at_rate(payload, spec.copy_rate)
        } else if let Some(head) = c.tx.pop_front() {
            // One skb: the head and the rest of its GSO skb's segments, or the head alone
            // without TSO.
            c.work.push(head);
            while spec.tso
                && let Some(next) = c.tx.front()
                && continues_skb(c.work.last().expect("the head"), next)
            {
                c.work.push(c.tx.pop_front().expect("just looked"));
            }
            c.doing = Some(Work::Sent);
            self.stats.tx_skbs += 1;
            let payload: u64 = c.work.iter().map(|p| u64::from(p.payload)).sum();
            spec.tx_skb + at_rate(payload, spec.tx_byte_rate)
        } else {
            return None;
        };
        c.busy += cost;
        Some(now + cost)
    }
}

/// Whether `p` is the next segment of `prev`'s GSO skb, as TCP sent them.
#[inline]
fn continues_skb(prev: &Packet, p: &Packet) -> bool {
    p.flow == prev.flow && p.gso_index == prev.gso_index + 1 && p.gso_index < p.gso_segs
}

/// Skbs in a poll without GRO: each one as it arrived (a GSO skb that crossed a veth path
/// whole is one).
fn skbs_as_sent(polled: &[Packet]) -> u64 {
    polled.iter().filter(|p| p.gso_index == 0).count() as u64
}

/// GRO within one poll: consecutive in-order data segments of one flow with the same ECN
/// bits and flags join one skb of at most `max` IP bytes (`tcp_gro_receive()` flushes on a
/// sequence gap, a flag or an ECN change). Each skb is marked as a GSO skb (`gso_index` of
/// `gso_segs`), so TCP makes one ACK decision for it. Returns the number of skbs.
fn gro(polled: &mut [Packet], max: u32) -> u64 {
    let joins = |tail: &Packet, p: &Packet, bytes: u32| {
        tail.kind == Kind::Data
            && p.kind == Kind::Data
            && tail.flow == p.flow
            && tail.seq + u64::from(tail.payload) == p.seq
            && tail.ecn == p.ecn
            && (tail.ece, tail.cwr) == (p.ece, p.cwr)
            && bytes + p.ip_bytes <= max
    };
    let (mut skbs, mut start, mut bytes) = (0, 0, 0);
    for i in 0..=polled.len() {
        if i > start && i < polled.len() && joins(&polled[i - 1], &polled[i], bytes) {
            bytes += polled[i].ip_bytes;
            continue;
        }
        if i > start {
            let segs = (i - start) as u16;
            for (k, p) in polled[start..i].iter_mut().enumerate() {
                (p.gso_index, p.gso_segs, p.gso_bytes) = (k as u16, segs, bytes);
            }
            skbs += 1;
        }
        if i < polled.len() {
            start = i;
            bytes = polled[i].ip_bytes;
        }
    }
    skbs
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1448;

    fn seg(flow: u32, k: u64) -> Packet {
        let mut p = Packet::new(Kind::Data, flow, 0, 1, MSS + 52);
        (p.seq, p.payload) = (k * u64::from(MSS), MSS);
        p
    }

    fn cpu(spec: HostCpuSpec) -> HostCpu {
        HostCpu::new(&spec, 0)
    }

    // ---- GRO ----

    #[test]
    fn gro_merges_a_flows_in_order_segments_up_to_64_kib() {
        let mut polled: Vec<Packet> = (0..50).map(|k| seg(0, k)).collect();
        // 65536 / 1500 = 43 segments fit in the first skb.
        assert_eq!(gro(&mut polled, GRO_MAX_SIZE), 2);
        assert_eq!((polled[0].gso_segs, polled[42].gso_index), (43, 42));
        assert_eq!((polled[43].gso_index, polled[43].gso_segs), (0, 7));
        assert_eq!(polled[0].gso_bytes, 43 * 1500);
    }

    #[test]
    fn gro_splits_at_a_hole_another_flow_and_a_pure_ack() {
        let mut polled = vec![seg(0, 0), seg(0, 1), seg(0, 3), seg(1, 4), seg(1, 5)];
        polled.push(Packet::new(Kind::Ack, 1, 1, 0, 52));
        assert_eq!(gro(&mut polled, GRO_MAX_SIZE), 4);
        let sizes: Vec<u16> =
            polled.iter().filter(|p| p.gso_index == 0).map(|p| p.gso_segs).collect();
        assert_eq!(sizes, [2, 1, 2, 1]);
    }

    // ---- receive costs ----

    #[test]
    fn a_poll_costs_per_packet_per_skb_and_per_byte() {
        let spec = HostCpuSpec {
            rx_packet: Time::from_ns(100),
            rx_skb: Time::from_us(1),
            copy_rate: Some(Rate::from_gbps(8)),
            ..HostCpuSpec::free()
        };
        let mut c = cpu(spec);
        // The first segment starts a poll of one packet: 100 ns + 1 us + 1448 B at 1 GB/s.
        let end = match c.arrive(Time::ZERO, 0, seg(0, 0)) {
            Arrival::Polled(t) => t,
            other => panic!("an idle core polls at once, got {other:?}"),
        };
        assert_eq!(end, Time::from_ns(100 + 1_000 + 1_448));
        // Ten more queue behind it and make one GRO skb in the next poll.
        for k in 1..=10 {
            assert_eq!(c.arrive(Time::from_ns(10), 0, seg(0, k)), Arrival::Queued);
        }
        let mut out = Vec::new();
        let (done, next) = c.finish(end, 0, &mut out);
        assert_eq!((done, out.len()), (Some(Work::Received), 1));
        assert_eq!(next, Some(end + Time::from_ns(10 * 100 + 1_000 + 10 * 1_448)));
        assert_eq!((c.stats.rx_packets, c.stats.rx_skbs), (11, 2));
    }

    #[test]
    fn gro_lowers_the_cost_of_a_poll() {
        let spec = HostCpuSpec { rx_skb: Time::from_us(1), ..HostCpuSpec::free() };
        let poll = |gro: bool| {
            let mut c = cpu(HostCpuSpec { gro, ..spec.clone() });
            // A busy core: 64 segments wait for the next poll.
            c.send(Time::ZERO, 0, seg(9, 0));
            for k in 0..64 {
                c.arrive(Time::ZERO, 0, seg(0, k));
            }
            let (_, next) = c.finish(Time::ZERO, 0, &mut Vec::new());
            next.unwrap()
        };
        // 64 segments of 1500 B: two skbs with GRO (43 + 21), 64 without.
        assert_eq!(poll(true), Time::from_us(2));
        assert_eq!(poll(false), Time::from_us(64));
    }

    #[test]
    fn a_full_ring_drops_and_counts() {
        let spec = HostCpuSpec { ring: 4, rx_skb: Time::from_ms(1), ..HostCpuSpec::free() };
        let mut c = cpu(spec);
        // The first goes straight into a poll; four more fill the ring; the sixth is missed.
        let verdicts: Vec<Arrival> = (0..6).map(|k| c.arrive(Time::ZERO, 0, seg(0, k))).collect();
        assert_eq!(verdicts[0], Arrival::Polled(Time::from_ms(1)));
        assert!(verdicts[1..5].iter().all(|v| *v == Arrival::Queued));
        assert_eq!(verdicts[5], Arrival::Missed);
        assert_eq!(c.stats.rx_missed, 1);
    }

    #[test]
    fn received_work_goes_before_sent_work() {
        let spec = HostCpuSpec {
            rx_skb: Time::from_us(1),
            tx_skb: Time::from_us(5),
            ..HostCpuSpec::free()
        };
        let mut c = cpu(spec);
        assert_eq!(c.send(Time::ZERO, 0, seg(0, 0)), Some(Time::from_us(5)));
        c.send(Time::ZERO, 0, seg(0, 1));
        c.arrive(Time::ZERO, 0, Packet::new(Kind::Ack, 0, 1, 0, 52));
        let mut out = Vec::new();
        let (done, next) = c.finish(Time::from_us(5), 0, &mut out);
        assert_eq!((done, next), (Some(Work::Sent), Some(Time::from_us(6))));
        let (done, next) = c.finish(Time::from_us(6), 0, &mut out);
        assert_eq!((done, next), (Some(Work::Received), Some(Time::from_us(11))));
    }

    // ---- send costs ----

    #[test]
    fn a_tso_skb_costs_once_and_without_tso_each_segment_does() {
        let spec = HostCpuSpec { tx_skb: Time::from_us(2), ..HostCpuSpec::free() };
        let skb = |n: u16| -> Vec<Packet> {
            (0..n)
                .map(|k| {
                    let mut p = seg(0, u64::from(k));
                    (p.gso_index, p.gso_segs) = (k, n);
                    p
                })
                .collect()
        };
        for (tso, sent) in [(true, 10), (false, 1)] {
            let mut c = cpu(HostCpuSpec { tso, ..spec.clone() });
            c.cores[0].doing = Some(Work::Received); // busy: the skb queues whole
            for p in skb(10) {
                c.send(Time::ZERO, 0, p);
            }
            let (_, next) = c.finish(Time::ZERO, 0, &mut Vec::new());
            assert_eq!(next, Some(Time::from_us(2)));
            let mut out = Vec::new();
            c.finish(Time::from_us(2), 0, &mut out);
            assert_eq!(out.len(), sent, "tso {tso}");
        }
    }

    // ---- profiles ----

    #[test]
    fn every_profile_is_named_and_found() {
        for name in PROFILES {
            let spec = HostCpuSpec::profile(name).expect(name);
            assert_eq!(spec.profile.as_deref(), Some(name));
            assert!(spec.cores >= 1 && spec.ring >= 1);
        }
        assert!(HostCpuSpec::profile("server-1t").is_none());
    }

    #[test]
    fn veth_this_machine_bounds_a_stream_as_its_fit_says() {
        // No per-segment cost: 9.479 Gbit/s of payload at any MTU.
        let spec = HostCpuSpec::profile(VETH_THIS_MACHINE).unwrap();
        let gbps = |mss: u32| 8.0 / spec.rx_seconds_per_byte(mss, 65_000) / 1e9;
        assert!((gbps(1448) - 9.479).abs() < 0.001, "{}", gbps(1448));
        assert!((gbps(8948) - 9.479).abs() < 0.001, "{}", gbps(8948));
    }

    #[test]
    fn server_10g_is_server_100g_behind_an_ixgbe_ring() {
        let (ten, hundred) =
            (HostCpuSpec::profile(SERVER_10G).unwrap(), HostCpuSpec::profile(SERVER_100G).unwrap());
        assert_eq!((ten.cores, ten.ring), (8, 512));
        assert_eq!(
            (ten.rx_packet, ten.rx_skb, ten.copy_rate),
            (hundred.rx_packet, hundred.rx_skb, hundred.copy_rate)
        );
        // Its core receives one 1500-byte stream far above 10 Gbit/s: a 10G host is not CPU-bound.
        let gbps = 8.0 / ten.rx_seconds_per_byte(1448, 43 * 1448) / 1e9;
        assert!((25.0..27.0).contains(&gbps), "{gbps}");
    }

    #[test]
    fn server_100g_bounds_a_jumbo_stream_near_42_gbps() {
        // Cai et al., SIGCOMM 2021: one core receives a single jumbo-frame flow at ~42 Gbit/s
        // with TSO/GRO and aRFS; our profile's receive bound at MSS 8948 in 64 KB skbs.
        let spec = HostCpuSpec::profile(SERVER_100G).unwrap();
        let gbps = 8.0 / spec.rx_seconds_per_byte(8948, 62_636) / 1e9;
        assert!((38.0..46.0).contains(&gbps), "{gbps}");
    }
}
