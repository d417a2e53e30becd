//! `[[flow]]` (TCP transfers with Linux host settings) and `[[burst]]` (constant-rate UDP
//! sources) entries.

use toml::Value;

use super::defaults::*;
use super::error::ScenarioError;
use super::fields::{Fields, RATE_EXPECTED, TIME_EXPECTED};
use super::model::*;
use super::units::{self, format_rate, format_time};
use crate::app::burst;
use crate::tcp::{cc, rwnd::TCP_DEFAULT_SCALING_RATIO};
use crate::time::Time;
use crate::units::Rate;

type Result<T> = std::result::Result<T, ScenarioError>;

const U32_MAX: i64 = u32::MAX as i64;

pub(crate) fn flow(q: &Fields, stop: Time) -> Result<FlowSpec> {
    let names: Vec<(&str, &str)> = cc::names().map(|n| (n, n)).collect();
    let cca = q.choice("cca", &names)?.unwrap_or(DEFAULT_CCA).to_owned();
    let size_bytes = q.size("size")?;
    q.ensure("size", size_bytes != Some(0), || {
        "a size above 0 such as \"2GiB\", or no size to send until stop".into()
    })?;
    let start = q.time("start")?.unwrap_or(Time::ZERO);
    check_start(q, start, stop)?;
    let tcp_rmem = mem_triple(q, "tcp_rmem", "4096 131072 6291456")?.unwrap_or(DEFAULT_TCP_RMEM);
    let tcp_wmem = mem_triple(q, "tcp_wmem", "4096 16384 4194304")?.unwrap_or(DEFAULT_TCP_WMEM);
    let rmem_max = q.size("rmem_max")?.unwrap_or(DEFAULT_RMEM_MAX);
    q.ensure("rmem_max", (1..=SYSCTL_INT_MAX).contains(&rmem_max), || {
        format!("net.core.rmem_max from 1 to {SYSCTL_INT_MAX} bytes")
    })?;
    let window_model = window_model(q)?;
    let skb_scaling_ratio = q.integer("skb_scaling_ratio", SCALING_RATIO_RANGE)?.map(|r| r as u8);
    q.ensure(
        "skb_scaling_ratio",
        skb_scaling_ratio.is_none() || matches!(window_model, WindowModel::ScalingRatio(_)),
        || "no skb_scaling_ratio with tcp_adv_win_scale (kernels <= 6.5 measure no ratio)".into(),
    )?;
    let skb_truesize = q.integer("skb_truesize", 1..=1 << 20)?.map(|t| t as u32);
    let rcvbuf_tuning = q
        .choice(
            "rcvbuf_tuning",
            &[("6.6", RcvBufTuning::Linux6_6), ("6.18", RcvBufTuning::Linux6_18)],
        )?
        .unwrap_or_default();
    let initcwnd = q.integer("initcwnd", 1..=U32_MAX)?.map_or(TCP_INIT_CWND, |v| v as u32);
    let initrwnd = q.integer("initrwnd", 0..=U32_MAX)?.map_or(0, |v| v as u32);
    let comp_sack_nr = q
        .integer("tcp_comp_sack_nr", 0..=255)?
        .map_or(crate::tcp::receiver::TCP_COMP_SACK_NR, |v| v as u32);
    let rto_min = q.time("rto_min")?.unwrap_or(TCP_RTO_MIN);
    q.ensure("rto_min", rto_min > Time::ZERO, || "a time above 0, such as \"200ms\"".into())?;
    let tcp_early_retrans = tcp_early_retrans(q)?;
    let read_latency = read_latency(q)?;
    let handshake_latency = q.latency("handshake_latency")?.unwrap_or(Latency::ZERO);
    let rx_coalesce = q.latency("rx_coalesce")?.unwrap_or(Latency::ZERO);
    let read_hold = q.latency("read_hold")?.unwrap_or(Latency::ZERO);
    q.ensure("read_hold", read_hold.is_zero() || !read_latency.is_zero(), || {
        "a hold only with a read_latency above 0 (a reader that reads as data arrives never \
         holds the socket in the simulator)"
            .into()
    })?;
    let first_read_latency = q.time("first_read_latency")?;
    q.ensure(
        "first_read_latency",
        first_read_latency.is_none() || !read_latency.is_zero(),
        || {
            "a first read's latency only with a read_latency above 0 (a reader that reads as data \
         arrives reads the first data at once too)"
                .into()
        },
    )?;
    let pacing_latency = q.latency("pacing_latency")?.unwrap_or(Latency::ZERO);
    Ok(FlowSpec {
        cca,
        size_bytes,
        start,
        tcp_rmem,
        tcp_wmem,
        rmem_max,
        window_model,
        skb_scaling_ratio,
        skb_truesize,
        rcvbuf_tuning,
        initcwnd,
        initrwnd,
        comp_sack_nr,
        rto_min,
        tcp_early_retrans,
        quickack: q.boolean("quickack")?.unwrap_or(false),
        ecn: q.boolean("ecn")?.unwrap_or(false),
        hz: q.integer_of("hz", HZ_CHOICES)?.map_or(DEFAULT_HZ, |v| v as u32),
        dctcp_shift_g: dctcp_shift_g(q)?,
        dctcp_alpha_on_init: dctcp_alpha_on_init(q)?,
        timers: q
            .choice("timers", &[("exact", Timers::Exact), ("jiffies", Timers::Jiffies)])?
            .unwrap_or(Timers::Exact),
        read_latency,
        first_read_latency,
        read_hold,
        handshake_latency,
        rx_coalesce,
        pacing_latency,
        dscp: q.integer("dscp", DSCP_RANGE)?.map_or(0, |v| v as u8),
        max_pacing_rate: q.rate("max_pacing_rate")?,
        gso_max_size: gso_max_size(q)?,
        qdisc: qdisc(q)?,
        nic_rate: q.rate("nic_rate")?,
        sender_cpu: cpu_end(q, "sender_cpu")?,
        receiver_cpu: cpu_end(q, "receiver_cpu")?,
    })
}

/// iperf3's most parallel streams (`-P`): `MAX_STREAMS` in iperf3's `src/iperf.h`.
pub const MAX_STREAMS: u32 = 128;

/// `streams` (iperf3 `-P`): how many connections a `[[flow]]` opens between its two hosts; a
/// `size` is the whole transfer's, so there must be a byte for each.
pub(crate) fn streams(q: &Fields) -> Result<u32> {
    let expected = format!("an integer from 1 to {MAX_STREAMS} (iperf3 -P)");
    let n = q.read("streams", &expected, |v| {
        v.as_integer().filter(|n| (1..=i64::from(MAX_STREAMS)).contains(n))
    })?;
    let n = n.map_or(1, |n| n as u32);
    let size = q.size("size")?;
    q.ensure("streams", size.is_none_or(|s| s >= u64::from(n)), || {
        format!("at most size = {} streams (one byte each at least)", size.unwrap_or(0))
    })?;
    Ok(n)
}

/// Each entry's flow `streams[i]` times, in order, with the entry's settings. A `size` is split
/// evenly (the first streams carry the remainder's bytes): iperf3 `-n` counts every stream's
/// bytes toward one total (`iperf_send()` in `src/iperf_api.c` stops at `test->bytes_sent >=
/// settings->bytes`), though it lets a faster stream send more than its share. A lone stream
/// is its entry, moved.
pub(crate) fn open_streams(entries: Vec<FlowSpec>, streams: &[u32]) -> Vec<FlowSpec> {
    let mut out = Vec::with_capacity(streams.iter().map(|&n| n as usize).sum());
    for (f, &n) in entries.into_iter().zip(streams) {
        if n == 1 {
            out.push(f);
            continue;
        }
        for k in 0..u64::from(n) {
            let size_bytes =
                f.size_bytes.map(|s| s / u64::from(n) + u64::from(k < s % u64::from(n)));
            out.push(FlowSpec { size_bytes, ..f.clone() });
        }
    }
    out
}

/// One end's CPU: its own key (`sender_cpu`, `receiver_cpu`), else `cpu`, which sets both.
fn cpu_end(q: &Fields, key: &str) -> Result<Option<Box<crate::host::cpu::HostCpuSpec>>> {
    Ok(match super::host_cpu::cpu(q, key)? {
        Some(spec) => Some(spec),
        None => super::host_cpu::cpu(q, "cpu")?,
    })
}

/// `dctcp_shift_g`: Linux's module parameter, which `dctcp_shift_g_set()` keeps in 0..=10.
fn dctcp_shift_g(q: &Fields) -> Result<u32> {
    use crate::tcp::cc::dctcp::{MAX_SHIFT_G, Params};
    let v = q.integer("dctcp_shift_g", 0..=i64::from(MAX_SHIFT_G))?;
    Ok(v.map_or(Params::default().shift_g, |v| v as u32))
}

/// `dctcp_alpha_on_init`: Linux's module parameter (a `uint`; `dctcp_init()` takes it up to
/// `DCTCP_MAX_ALPHA`, so a larger value starts α at 1).
fn dctcp_alpha_on_init(q: &Fields) -> Result<u32> {
    let v = q.integer("dctcp_alpha_on_init", 0..=i64::from(u32::MAX))?;
    Ok(v.map_or(crate::tcp::cc::dctcp::Params::default().alpha_on_init, |v| v as u32))
}

/// `tcp_early_retrans`: Linux's sysctl, which `proc_dointvec_minmax` keeps in 0..=4
/// (`net/ipv4/sysctl_net_ipv4.c`).
fn tcp_early_retrans(q: &Fields) -> Result<u8> {
    use crate::tcp::config::{DEFAULT_TCP_EARLY_RETRANS, TCP_EARLY_RETRANS_MAX};
    let expected = format!(
        "an integer from 0 to {TCP_EARLY_RETRANS_MAX} (net.ipv4.tcp_early_retrans: 0 disables \
         the tail loss probe, 3 or 4 enable it)"
    );
    let v = q.read("tcp_early_retrans", &expected, |v| {
        v.as_integer().filter(|i| (0..=i64::from(TCP_EARLY_RETRANS_MAX)).contains(i))
    })?;
    Ok(v.map_or(DEFAULT_TCP_EARLY_RETRANS, |v| v as u8))
}

/// `read_latency` (a time or a list of times) and `read_latency_dist`: "exponential" makes a
/// single time the mean of an exponential.
fn read_latency(q: &Fields) -> Result<Latency> {
    let latency = q.latency("read_latency")?.unwrap_or(Latency::ZERO);
    let exponential =
        q.choice("read_latency_dist", &[("fixed", false), ("exponential", true)])?.unwrap_or(false);
    if !exponential {
        return Ok(latency);
    }
    match latency {
        Latency::Fixed(mean) if mean > Time::ZERO => Ok(Latency::Exponential(mean)),
        _ => Err(q.error(
            "read_latency_dist",
            "\"fixed\", or \"exponential\" with one read_latency above 0 (its mean)",
        )),
    }
}

/// `gso_max_size`: at least one jumbo segment, at most BIG TCP's 512 KiB.
fn gso_max_size(q: &Fields) -> Result<u32> {
    let v = q.size("gso_max_size")?.unwrap_or(GSO_MAX_SIZE as u64);
    q.ensure("gso_max_size", (MIN_GSO_MAX_SIZE..=BIG_TCP_MAX_SIZE).contains(&v), || {
        format!("a size from {MIN_GSO_MAX_SIZE} B to {BIG_TCP_MAX_SIZE} B (64KiB by default; BIG TCP raises it)")
    })?;
    Ok(v as u32)
}

/// `fq`'s `maxrate` is a u32 of bytes/s (`TCA_FQ_FLOW_MAX_RATE`): 2^32 − 1 B/s ≈ 34.36 Gbit/s
/// is the most it can say ([`crate::host::fq::check_maxrate`]).
fn fq_maxrate(bps: u64) -> std::result::Result<u64, String> {
    crate::host::fq::check_maxrate(bps).map_err(|_| {
        format!(
            "a rate up to 34.36Gbps: fq's maxrate is a 32-bit count of bytes per second \
             (TCA_FQ_FLOW_MAX_RATE), so {} cannot be set; pace faster flows with \
             max_pacing_rate (SO_MAX_PACING_RATE, 64-bit) instead",
            format_rate(Rate(bps))
        )
    })
}

/// `qdisc = "pfifo_fast" | "fq"` with fq's `maxrate`, `flow_limit` and `quantum`.
pub(crate) fn qdisc(q: &Fields) -> Result<HostQdisc> {
    let kind = q.choice("qdisc", &[("pfifo_fast", false), ("fq", true)])?.unwrap_or(false);
    let fq_keys = ["fq_maxrate", "fq_flow_limit", "fq_quantum"];
    if !kind {
        if let Some(k) = fq_keys.iter().find(|k| q.has(k)) {
            return Err(q.error(k, "qdisc = \"fq\" on this flow, or no fq_* settings"));
        }
        return Ok(HostQdisc::PfifoFast);
    }
    let maxrate = match q.rate("fq_maxrate")? {
        None => None,
        Some(r) => Some(fq_maxrate(r.bps()).map_err(|why| q.error("fq_maxrate", why))?),
    };
    Ok(HostQdisc::Fq(FqParams {
        maxrate_bytes_per_s: maxrate,
        flow_limit: q
            .integer("fq_flow_limit", 1..=U32_MAX)?
            .map_or(crate::host::fq::DEFAULT_FLOW_LIMIT, |v| v as u32),
        // sch_fq's fq_change refuses 0 and anything above 1 MiB ("invalid quantum").
        quantum: q
            .integer("fq_quantum", 1..=i64::from(crate::host::fq::MAX_QUANTUM))?
            .map(|v| v as u32),
    }))
}

/// `tcp_adv_win_scale` selects the ≤ 6.5 kernel model; without it, the ≥ 6.6 `scaling_ratio`.
fn window_model(q: &Fields) -> Result<WindowModel> {
    let ratio = q.integer("scaling_ratio", SCALING_RATIO_RANGE)?;
    match q.integer("tcp_adv_win_scale", TCP_ADV_WIN_SCALE_RANGE)? {
        Some(_) if ratio.is_some() => Err(q.error(
            "scaling_ratio",
            "no scaling_ratio with tcp_adv_win_scale (the first is kernels >= 6.6, the second <= 6.5)",
        )),
        Some(scale) => Ok(WindowModel::AdvWinScale(scale as i32)),
        None => Ok(WindowModel::ScalingRatio(ratio.map_or(TCP_DEFAULT_SCALING_RATIO, |r| r as u8))),
    }
}

/// `net.ipv4.tcp_rmem`/`tcp_wmem`: the sysctl's own form `"min default max"` (integers of
/// bytes, as `sysctl -w` takes them) or an array of three sizes.
fn mem_triple(q: &Fields, key: &str, example: &str) -> Result<Option<[u64; 3]>> {
    let form = format!(
        "three byte counts \"min default max\" such as \"{example}\", or an array of three sizes"
    );
    let Some(parsed) = q.read(key, &form, |v| match v {
        Value::String(s) => {
            let parts: Vec<u64> =
                s.split_whitespace().map(str::parse).collect::<std::result::Result<_, _>>().ok()?;
            parts.try_into().ok()
        }
        Value::Array(items) => {
            let parts: Vec<u64> = items.iter().map(size_value).collect::<Option<_>>()?;
            parts.try_into().ok()
        }
        _ => None,
    })?
    else {
        return Ok(None);
    };
    let [min, default, max] = parsed;
    q.ensure(
        key,
        TCP_MEM_MIN <= min && min <= default && default <= max && max <= SYSCTL_INT_MAX,
        || format!("min <= default <= max, each from {TCP_MEM_MIN} to {SYSCTL_INT_MAX} bytes"),
    )?;
    Ok(Some(parsed))
}

/// One element of an array of sizes: bytes as an integer or a size string.
fn size_value(v: &Value) -> Option<u64> {
    match v {
        Value::Integer(i) => u64::try_from(*i).ok(),
        Value::String(s) => units::parse_size(s).ok(),
        _ => None,
    }
}

fn check_start(q: &Fields, start: Time, stop: Time) -> Result<()> {
    q.ensure("start", start < stop, || {
        format!("a start before scenario.stop ({})", format_time(stop))
    })
}

/// `[[incast]]`: senders, query size and count, timing, and the senders' `[incast.tcp]`
/// settings (the keys of a `[[flow]]` but `size` and `start`).
pub(crate) fn incast(q: &Fields, stop: Time) -> Result<IncastSpec> {
    let senders = q.required(
        "senders",
        q.integer("senders", 1..=4096)?,
        "a number of senders from 1 to 4096",
    )? as u32;
    let query_bytes = q.required("query_size", q.size("query_size")?, "a size such as \"1MB\"")?;
    q.ensure("query_size", query_bytes >= senders as u64, || {
        format!("at least one byte per sender ({senders})")
    })?;
    let queries = q.integer("queries", 1..=1_000_000)?.map_or(1, |v| v as u32);
    let start = q.time("start")?.unwrap_or(Time::ZERO);
    check_start(q, start, stop)?;
    let gap = q.time("gap")?.unwrap_or(Time::ZERO);
    let serve_time = q.latency("serve_time")?.unwrap_or(Latency::ZERO);
    let serve_order = q
        .choice("serve_order", &[("fixed", ServeOrder::Fixed), ("shuffled", ServeOrder::Shuffled)])?
        .unwrap_or(ServeOrder::Fixed);
    let t = q.table("tcp");
    if t.has("streams") {
        return Err(t.error("streams", "no streams here: the incast's senders are its streams"));
    }
    for key in ["size", "start"] {
        if t.has(key) {
            return Err(
                t.error(key, format!("no {key} here: the incast's query_size and start set it"))
            );
        }
    }
    let tcp = flow(&t, stop)?;
    let one_sender_host = q.boolean("one_sender_host")?.unwrap_or(false);
    Ok(IncastSpec {
        senders,
        query_bytes,
        queries,
        start,
        gap,
        serve_time,
        serve_order,
        one_sender_host,
        tcp,
    })
}

pub(crate) fn burst(b: &Fields, topology: &Topology, stop: Time) -> Result<BurstSpec> {
    let sources = b.integer("sources", 1..=U32_MAX)?.map_or(1, |v| v as u32);
    let rate = b.required("rate", b.rate("rate")?, RATE_EXPECTED)?;
    let link_rate = super::graph::burst_link_rate(b, topology)?;
    let link =
        if topology.graph.is_some() { "the source's link" } else { "topology.burst_link_rate" };
    b.ensure("rate", rate <= link_rate, || {
        format!("a rate no faster than {link} ({})", format_rate(link_rate))
    })?;
    let start = b.required("start", b.time("start")?, TIME_EXPECTED)?;
    check_start(b, start, stop)?;
    let duration = b.required("duration", b.time("duration")?, TIME_EXPECTED)?;
    b.ensure("duration", duration > Time::ZERO, || "a time above 0, such as \"100ms\"".into())?;
    let mtu = topology.mtu();
    let packet_size = b.size("packet_size")?.unwrap_or(u64::from(mtu));
    b.ensure("packet_size", (u64::from(MIN_BURST_PACKET)..=u64::from(mtu)).contains(&packet_size), || {
        format!("an IP packet size from {MIN_BURST_PACKET} (IPv4 + UDP headers) to the MTU ({mtu}) bytes")
    })?;
    let packet_size = packet_size as u32;
    let (jitter, clock_ppm) = burst_timing(b, rate, packet_size, link_rate, link)?;
    Ok(BurstSpec {
        sources,
        rate,
        start,
        duration,
        packet_size,
        dscp: b.integer("dscp", DSCP_RANGE)?.map_or(0, |v| v as u8),
        jitter,
        clock_ppm,
    })
}

/// `clock_ppm` (a number of ppm, integer or not) and `jitter` (a time no longer than the gap
/// the source's fastest clock leaves after one frame on its link); defaults in `app::burst`.
fn burst_timing(
    b: &Fields,
    rate: Rate,
    packet_size: u32,
    link_rate: Rate,
    link: &str,
) -> Result<(Time, f64)> {
    let clock_ppm = b.ppm("clock_ppm", MAX_BURST_CLOCK_PPM)?.unwrap_or(DEFAULT_BURST_CLOCK_PPM);
    let max = burst::max_jitter(rate, packet_size, link_rate, clock_ppm);
    let jitter = match b.time("jitter")? {
        None => burst::default_jitter(rate, packet_size, link_rate, clock_ppm),
        Some(j) => {
            b.ensure("jitter", j <= max, || {
                format!(
                    "a jitter of at most {} (the gap between datagrams at this rate and clock_ppm, less one \
                     frame's serialization on {link} {}), such as \"0s\"",
                    format_time(max),
                    format_rate(link_rate)
                )
            })?;
            j
        }
    };
    Ok((jitter, clock_ppm))
}
