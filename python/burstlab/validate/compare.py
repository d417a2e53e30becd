"""The differential validation: the same set-up on real Linux (network namespaces, `tbf`) and in
the simulator, metric by metric, with the relative error and a tolerance.

The simulated twin of the real dumbbell: hosts on a fast veth-like path (10 Gbit/s, 10 µs RTT:
the real veth RTT is 4–8 µs), a `tbf` bottleneck with the same rate, burst and byte limit, the
namespaces' default sysctls (`tcp_rmem`, `tcp_wmem`, `rmem_max`; Linux ≥ 6.6 window model), and,
for incast, every server connection on one sender host as the real harness runs them.

Tolerances (issue 4): single-flow throughput and FCT within 5 %; incast median QCT within 15 %;
retransmits within 30 % where the real count is above 50; the onset of the incast collapse
(first N with ≥ 10 % of queries slower than 100 ms) the same within one step of the N list.
Where the real repeats of a case spread wider than that, the band they span (widened by the
same tolerance) is the tolerance: issue 4 asks for tolerances set from measured real-side noise.
"""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass

import burstlab
from burstlab.validate.real import SLOW_QUERY_S, incast, percentile, single_flow
from burstlab.validate.topology import FRAME_BYTES

RATE = "1gbit"
RATE_BPS = 1_000_000_000
LIMIT_BYTES = 128 * 1024
BURST_BYTES = 15_140
#: Tolerances (relative) per metric.
TOLERANCE = {
    "rate_fraction": 0.05,
    "fct_s": 0.05,
    "retrans_segs": 0.30,
    "qct_median_s": 0.15,
}
#: Host CPU time per incast response on the real side: one Python process serves the N
#: connections, one thread at a time (the GIL), on two cores that also run every namespace's
#: softirq work, so responses start one after another. The real server reports when each
#: response starts (`response_gap_us`: (last − first) / (N − 1), median over queries), and the
#: twin of each case uses the value its real runs measured; this is the default without a real
#: side: 55–110 us at N = 8–32 on 2026-11-24 (docs/fidelity.md). Consecutive starts come in
#: clumps, so the median of single gaps (12–17 us in a tcpdump) understates the spread.
SERVE_TIME_US = 90
#: How long the real bulk receiver takes to come back for data while data keeps arriving
#: (`read_gap_us`: mean gap between its reads, pauses over 1 ms left out). A slow reader makes
#: Linux's receiver stretch its ACKs: the sender of a bulk flow saw 1,300–1,900 ACKs for 34,500
#: segments, not one per two segments. Its data waits about as long (a trace of
#: `sock:sk_data_ready` -> `sock:sock_recv_length`: mean 317–471 us, 2026-11-25). Each case's
#: twin uses what its real runs measured; this is the default without a real side.
READ_GAP_US = 430
#: How long data waits for the incast aggregator (`read_wait_us`: the real aggregator
#: timestamps the oldest unread byte of every 8th read, SO_TIMESTAMPNS). Not its gap between
#: reads of one connection: at N = 8 that gap (340 us) is mostly the connection's data not yet
#: being there, and the data waited 46–95 us; at N = 32 the select loop falls behind and data
#: waits 0.5–1.1 ms, longer than the gap (400 us). The waits are skewed like an exponential's
#: or more (a kernel trace: median 0.45–0.5 and p90 2.0–2.8 times the mean; an exponential's
#: are 0.69 and 2.3), so the twin draws each wake-up's latency from one with the measured mean.
#: The bulk receiver's waits are steadier (median 0.9 times the mean) and its twin's fixed: an
#: exponential one there starves a 64 KB flow to 80–88 % of the rate, the kernel's keeps 99 %.
#: The default without a real side.
READ_WAIT_US = 100
#: A retransmit count is compared only above this many real retransmits.
MIN_RETRANS = 50
#: Share of slow queries that marks the incast collapse.
ONSET_SHARE = 0.10

#: Incast variants: (case-name tag, route rto_min in seconds, route quickack).
DEFAULT_RTO = ("", None, False)
#: `ip route ... rto_min 5ms quickack 1`: the cure for the incast collapse (issue 4).
SHORT_RTO = ("rtomin5ms-", 0.005, True)
FULL = {"ccas": ("reno", "cubic", "bbr"), "limits": (64 * 1024, 128 * 1024, 512 * 1024),
        "incast_n": (1, 2, 4, 8, 16, 32), "queries": 50, "incast_variants": (DEFAULT_RTO, SHORT_RTO)}
QUICK = {"ccas": ("reno", "cubic", "bbr"), "limits": (128 * 1024,),
         "incast_n": (1, 8, 32), "queries": 50, "incast_variants": (DEFAULT_RTO,)}


@dataclass
class Case:
    name: str
    metric: str
    real: float
    sim: float
    rel_error: float
    tolerance: float
    passed: bool

    def as_json(self) -> dict:
        d = asdict(self)
        d["pass"] = d.pop("passed")
        return d


def kernel_tbf_burst(burst_bytes: int, rate_bps: int) -> int:
    """The bucket the kernel ends up with for `tc ... tbf rate R burst B`: tc turns B into a
    transmit time in psched ticks of 64 ns (`tc_calc_xmittime()`, truncated), and `sch_tbf`
    turns that back into bytes (`q->max_size = psched_ns_t2l()`). 15140 B at 1 Gbit/s: 1892
    ticks = 121,088 ns = 15,136 B (`tc -s` prints 15125b, rounding the time to whole us).
    A GSO skb longer than this is cut into segments before it is queued."""
    ticks = int(burst_bytes * 8 / rate_bps * 1e6 * 15.625)
    return ticks * 64 * rate_bps // 8 // 1_000_000_000


def _twin_topology(limit_bytes: int) -> str:
    # veth: the real senders, router and receiver are namespaces joined by veth pairs, so GSO
    # skbs reach the tbf and the receiver whole (docs/fidelity.md, "Against real Linux").
    return f"""
[topology]
bottleneck_rate = "10Gbps"
host_rate = "10Gbps"
rtt = "10us"
mtu = 1500
veth = true
tbf_rate = "1Gbps"
tbf_burst = "{kernel_tbf_burst(BURST_BYTES, RATE_BPS)}B"
tbf_limit = "{limit_bytes}B"
"""


#: The kernel under test runs its TCP timers on the jiffy wheel at HZ = 250 (`CONFIG_HZ`).
TWIN_TCP = 'timers = "jiffies"\nhz = 250\n'


def sim_single_flow(cca: str, *, size_bytes: int = 50_000_000, limit_bytes: int = LIMIT_BYTES,
                    read_gap_us: int = READ_GAP_US) -> dict:
    """The simulated twin of `real.single_flow` (same metric names); the receiving application
    reads `read_gap_us` after data arrives, as the real one was measured to."""
    text = f'name = "twin-{cca}"\nstop = "60s"\n' + _twin_topology(limit_bytes)
    text += f'[[flow]]\ncca = "{cca}"\nsize = "{size_bytes}B"\n' + TWIN_TCP
    text += f'read_latency = "{read_gap_us}us"\n'
    summary = burstlab.run(text).summary
    f = summary["flows"][0]
    goodput = f["delivered_bytes"] * 8 / f["fct_s"]
    mss = 1448
    return {
        "fct_s": f["fct_s"],
        "goodput_bps": goodput,
        "rate_fraction": goodput * FRAME_BYTES / mss / RATE_BPS,
        "retrans_segs": f["retransmits"],
        "timeouts": f["timeouts"],
        "qdisc_drops": _tbf_drops(summary),
        "acks": f["acks"],
        "read_gap_us": read_gap_us,
    }


def _tbf_drops(summary: dict) -> int:
    """Skbs the twin's `tbf` dropped, counted as `tc -s` counts them."""
    return sum(p.get("tbf_drops", 0) for p in summary["ports"])


def sim_incast(n: int, *, limit_bytes: int = LIMIT_BYTES, total_bytes: int = 1_000_000,
               queries: int = 50, rto_min: float | None = None, quickack: bool = False,
               cca: str = "cubic", serve_time_us: int = SERVE_TIME_US,
               read_wait_us: int = READ_WAIT_US) -> dict:
    """The simulated twin of `real.incast` (same metric names); responses start
    `serve_time_us` apart, as the real host serialises them, and the aggregator reads
    `read_wait_us` after data arrives."""
    text = f'name = "twin-incast-{n}"\nstop = "120s"\n' + _twin_topology(limit_bytes)
    text += f"""[[incast]]
senders = {n}
query_size = "{total_bytes}B"
queries = {queries}
one_sender_host = true
serve_time = "{serve_time_us}us"
[incast.tcp]
cca = "{cca}"
quickack = {str(quickack).lower()}
read_latency = "{read_wait_us}us"
read_latency_dist = "exponential"
""" + TWIN_TCP
    if rto_min is not None:
        text += f'rto_min = "{round(rto_min * 1000)}ms"\n'
    r = burstlab.run(text)
    qct = r.table("queries").column("qct_s").to_pylist()
    flows = r.summary["flows"]
    return {
        "qct_median_s": statistics.median(qct),
        "qct_p99_s": percentile(qct, 99),
        "frac_over_100ms": sum(t > SLOW_QUERY_S for t in qct) / len(qct),
        "retrans_segs": sum(f["retransmits"] for f in flows),
        "timeouts": sum(f["timeouts"] for f in flows),
        "loss_probes": sum(f["loss_probes"] for f in flows),
        "acks": sum(f["acks"] for f in flows),
        "serve_time_us": serve_time_us,
        "read_wait_us": read_wait_us,
        "qdisc_drops": _tbf_drops(r.summary),
    }


def _case(name: str, metric: str, real: dict[str, float], sim: float) -> Case:
    """Compare `sim` to the real runs' median. The tolerance is issue 4's, or wider where the
    real runs themselves spread wider: the simulated value passes if it lies within the range
    the real repeats covered, widened by the issue's tolerance on each side (the real side's
    measured noise sets the band, not a guess). The reported tolerance is that band's relative
    half-width on the side of the median the simulated value is on."""
    tol = TOLERANCE[metric]
    med = real["median"]
    if not med:
        return Case(name, metric, med, sim, 0.0 if sim == med else float("inf"), tol, sim == med)
    err = abs(sim - med) / abs(med)
    if sim >= med:
        band = (real["max"] * (1 + tol) - med) / med
    else:
        band = (med - real["min"] * (1 - tol)) / med
    band = max(tol, band)
    return Case(name, metric, med, sim, err, band, err <= band)


def _onset(shares: dict[int, float]) -> int | None:
    return next((n for n in sorted(shares) if shares[n] >= ONSET_SHARE), None)


def compare(*, quick: bool = False, repeat: int = 3) -> dict:
    """Run the matrix (or the quick subset) on both sides; `{"cases": [...], "detail": ...}`.
    The real value of a case is the median over `repeat` runs: one run disturbed by another job
    on this shared machine (a loss-based flow then loses 5–20 % of its rate) does not move it."""
    plan = QUICK if quick else FULL
    cases: list[Case] = []
    raw: dict[str, dict] = {}
    for limit in plan["limits"]:
        for cca in plan["ccas"]:
            real = single_flow(cca, rate=RATE, limit_bytes=limit, burst_bytes=BURST_BYTES, repeat=repeat)
            real_v = {k: v["median"] for k, v in real["summary"].items()}
            sim = sim_single_flow(cca, limit_bytes=limit, read_gap_us=round(real_v["read_gap_us"]))
            name = f"single-{cca}-1gbit-{limit // 1024}KB"
            raw[name] = {"real": real["summary"], "sim": sim}
            rs = real["summary"]
            cases.append(_case(name, "rate_fraction", rs["rate_fraction"], sim["rate_fraction"]))
            cases.append(_case(name, "fct_s", rs["fct_s"], sim["fct_s"]))
            if real_v["retrans_segs"] > MIN_RETRANS:
                cases.append(_case(name, "retrans_segs", rs["retrans_segs"], sim["retrans_segs"]))
    ns = list(plan["incast_n"])
    step = lambda n: ns.index(n) if n is not None else len(ns)  # noqa: E731
    for tag, rto_min, quickack in plan["incast_variants"]:
        shares_real, shares_sim = {}, {}
        for n in ns:
            real = incast(n, LIMIT_BYTES, queries=plan["queries"], burst_bytes=BURST_BYTES,
                          rto_min=rto_min, quickack=quickack, repeat=repeat)
            real_v = {k: v["median"] for k, v in real["summary"].items()}
            serve_us = round(real_v["response_gap_us"]) if n > 1 else SERVE_TIME_US
            # The twin answers as many queries as the real runs together, so that its median and
            # its share of slow queries are as steady as theirs.
            sim = sim_incast(n, queries=plan["queries"] * repeat, rto_min=rto_min, quickack=quickack,
                             serve_time_us=serve_us, read_wait_us=max(1, round(real_v["read_wait_us"])))
            name = f"incast-{tag}{n}-128KB"
            raw[name] = {"real": real["summary"], "sim": sim}
            cases.append(_case(name, "qct_median_s", real["summary"]["qct_median_s"], sim["qct_median_s"]))
            # A share of queries pools over the runs (their mean: each run asks as many); the
            # median of a few runs' shares moves in steps of one query.
            shares_real[n] = real["summary"]["frac_over_100ms"]["mean"]
            shares_sim[n] = sim["frac_over_100ms"]
        on_real, on_sim = _onset(shares_real), _onset(shares_sim)
        onset_ok = abs(step(on_real) - step(on_sim)) <= 1
        cases.append(Case(f"incast-{tag}onset-128KB", "onset_n", float(on_real or 0), float(on_sim or 0),
                          float(abs(step(on_real) - step(on_sim))), 1.0, onset_ok))
    return {"cases": [c.as_json() for c in cases], "detail": raw}
