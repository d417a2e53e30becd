"""The real side of the differential validation: scenarios run on this machine's Linux TCP.

    python -m burstlab.validate.real single-flow --cca cubic --repeat 3
    python -m burstlab.validate.real incast --n 8 --limit-bytes 131072 --repeat 3
    python -m burstlab.validate.real lean --repeat 3      # a lean subset, for the real side's noise

Each repeat builds a fresh dumbbell (fresh namespaces: zeroed MIB counters, empty qdisc, no
cached route metrics), runs our traffic tool in it and tears it down. Results are plain dicts:
`runs` (one metrics dict per repeat) and `summary` (per metric: mean, std, min, max and the
relative spread (max - min) / mean). Needs root.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path

from burstlab.validate.host_cpu import SoftirqMeter
from burstlab.validate.host_stalls import INSTANCE_PREFIX, TbfTrace, within
from burstlab.validate.topology import (
    DEFAULT_MTU,
    FRAME_BYTES,
    Bottleneck,
    Dumbbell,
    HostTuning,
    default_burst_bytes,
    frame_bytes,
    rate_bps,
)
from burstlab.validate.traffic import midpoint_quantiles

#: The traffic tool runs as a script, not `-m`, so it does not import burstlab (or its Rust
#: extension) in every namespace process.
TRAFFIC = Path(__file__).with_name("traffic.py")
PORT = 5001
#: Query completion times above this count as "slow" (a 200 ms minimum RTO would put every
#: query that suffers one timeout above it; a sub-ms RTT path without loss is far below).
SLOW_QUERY_S = 0.100


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile: the smallest value with at least p % of the values at or below it
    (p99 of 50 queries is the 50th smallest, i.e. the maximum)."""
    if not values:
        raise ValueError("percentile of no values")
    ordered = sorted(values)
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[rank - 1]


def summarize(runs: list[dict[str, float]]) -> dict[str, dict[str, float]]:
    """Per numeric metric over repeats: mean, median, std (sample; 0 for one run), min, max,
    rel_spread."""
    out: dict[str, dict[str, float]] = {}
    for key in runs[0]:
        vals = [float(r[key]) for r in runs if isinstance(r.get(key), (int, float))]
        if len(vals) != len(runs):
            continue
        mean = statistics.fmean(vals)
        out[key] = {"mean": mean, "median": statistics.median(vals),
                    "std": statistics.stdev(vals) if len(vals) > 1 else 0.0,
                    "min": min(vals), "max": max(vals),
                    "rel_spread": (max(vals) - min(vals)) / mean if mean else 0.0}
    return out


def _traffic(python: str, *args: str) -> list[str]:
    return [python, str(TRAFFIC), *args]


def _collect(procs, timeout: float) -> list[dict]:
    """Wait for every process; any failure raises with the process's stderr."""
    results = []
    for proc in procs:
        try:
            out, err = proc.communicate(timeout=timeout)
        except Exception:
            proc.kill()
            raise
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(proc.args)} exited {proc.returncode}: {err.strip()}")
        results.append(json.loads(out))
    return results


def watchdog_summary(trace: TbfTrace) -> dict:
    """How late the host ran the tbf after its watchdog was due (host_stalls.py): the median and
    the midpoint quantiles over the run's firings, µs; None and [] where it was not traced."""
    late = trace.watchdog_lateness() or []
    return {"tbf_watchdog_median_us": statistics.median(late) if late else None,
            "tbf_watchdog_quantiles_us": midpoint_quantiles(late)}


def _one_single_flow(cca: str, bottleneck: Bottleneck, tuning: HostTuning, size_bytes: int,
                     timeout: float, mtu: int = DEFAULT_MTU) -> dict[str, float]:
    py = sys.executable
    with Dumbbell(senders=1, bottleneck=bottleneck, tuning=tuning, mtu=mtu) as net:
        buffers = net.buffer_sysctls()
        softirq = SoftirqMeter()
        softirq.start()
        rx = net.spawn(net.receiver_ns, _traffic(py, "--timeout", str(timeout), "bulk-recv",
                                                 "--port", str(PORT)))
        tx = net.spawn(net.sender_ns[0], _traffic(py, "--timeout", str(timeout), "bulk-send",
                                                  "--host", net.receiver_addr, "--port", str(PORT),
                                                  "--bytes", str(size_bytes), "--cca", cca))
        with TbfTrace(f"{INSTANCE_PREFIX}{net.run}", net.tbf_handle) as trace:
            net.on_close(trace.close)
            recv, send = _collect([rx, tx], timeout + 5)
        softirq_load = softirq.busiest_share(recv["fct_s"])
        q = net.qdisc_stats()
    # From the flow's own connect (the trace's clock is CLOCK_MONOTONIC, as the tool's) to its
    # last byte read.
    stalls = trace.stalls(recv["connect_ns"] / 1e9)
    if stalls is not None:
        stalls = within(stalls, recv["fct_s"])
    if send["cca"] != cca:
        raise RuntimeError(f"asked for {cca}, the kernel used {send['cca']}")
    info = send["tcp_info"]
    return {
        "fct_s": recv["fct_s"],
        "goodput_bps": recv["goodput_bps"],
        # tbf meters Ethernet frames: a full segment of snd_mss payload bytes is a full frame
        # of the MTU, so the payload goodput scales by frame / mss to compare with the rate.
        "rate_fraction": recv["goodput_bps"] * frame_bytes(mtu) / info["snd_mss"] / rate_bps(bottleneck.rate),
        "sender_done_s": send["acked_s"],
        "retrans_segs": send["mib"]["Tcp.RetransSegs"],
        "timeouts": send["mib"]["TcpExt.TCPTimeouts"],
        **recovery_counters(send["mib"]),
        "total_retrans": info["total_retrans"],
        "qdisc_drops": q["drops"],
        "srtt_us": info["rtt_us"],
        "min_rtt_us": info["min_rtt_us"],
        "snd_cwnd": info["snd_cwnd"],
        # The receiving application's read cadence and the ACKs it let through (stretch ACKs).
        "read_gap_us": recv["read_gap_us"],
        "read_wait_us": recv["read_wait_us"],
        # How late the application's first read of data came (traffic.bulk_recv).
        "first_read_us": recv["first_read_us"],
        # How long a read held the socket (sampled reads): what came meanwhile waited in its
        # backlog and was processed, with one ACK, when the read let go.
        "read_hold_us": recv["read_hold_us"],
        "read_hold_quantiles_us": recv["read_hold_quantiles_us"],
        "read_wait_median_us": recv["read_wait_median_us"],
        "read_wait_quantiles_us": recv["read_wait_quantiles_us"],
        "reader_gap_quantiles_us": recv["reader_gap_quantiles_us"],
        "acks": send["mib"]["Tcp.InSegs"],
        # Where the hosts left the tbf idle (host_stalls.py): their count and total, and the
        # list the twin pauses its bottleneck for ([start, length] in s; None: not measured).
        "host_stalls": None if stalls is None else len(stalls),
        "host_stall_ms": None if stalls is None else sum(length for _, length in stalls) * 1e3,
        "host_stall_list": stalls,
        "host_stall_why": trace.why,
        **watchdog_summary(trace),
        "host_buffers": buffers,
        # The len/truesize ratio the receiver sized its window with (traffic.scaling_ratio_of).
        "scaling_ratio": recv["scaling_ratio"],
        # The busiest CPU's softirq time over the transfer (host_cpu.py): near 1, the hosts'
        # network work, not the tbf, was the slower server.
        "host_softirq_load": softirq_load,
    }


def recovery_counters(mib: dict[str, int]) -> dict[str, int]:
    """The sender's loss-recovery counters, under the names the simulator reports them by."""
    return {"recoveries": mib["TcpExt.TCPSackRecovery"],
            "lost_retransmits": mib["TcpExt.TCPLostRetransmit"],
            "recovery_timeouts": mib["TcpExt.TCPSackRecoveryFail"],
            "reorder_events": mib["TcpExt.TCPSACKReorder"]}


def single_flow(cca: str, *, rate: str = "1gbit", limit_bytes: int = 128 * 1024,
                size_bytes: int = 50_000_000, burst_bytes: int | None = None,
                rmem: tuple[int, int, int] | None = None, wmem: tuple[int, int, int] | None = None,
                mtu: int = DEFAULT_MTU, repeat: int = 1, timeout: float = 60.0) -> dict:
    """One `cca` flow of `size_bytes` through a tbf of `rate`/`limit_bytes`, `repeat` times, on
    links of `mtu` bytes (the bucket, unless given, ten full frames of it).

    There is no emulated delay (no netem on this kernel): the base RTT is the veth path's, tens of
    µs, and what the flow sees above that is queueing in the tbf."""
    bottleneck = Bottleneck(rate=rate, limit_bytes=limit_bytes, burst_bytes=burst_bytes or default_burst_bytes(mtu))
    tuning = HostTuning(cca=cca, rmem=rmem, wmem=wmem)
    runs = [_one_single_flow(cca, bottleneck, tuning, size_bytes, timeout, mtu) for _ in range(repeat)]
    return {"scenario": {"kind": "single_flow", "cca": cca, "rate": rate, "limit_bytes": limit_bytes,
                         "burst_bytes": bottleneck.burst_bytes, "size_bytes": size_bytes, "mtu": mtu},
            "runs": runs, "summary": summarize(runs)}


def _one_incast(n: int, bottleneck: Bottleneck, tuning: HostTuning, total_bytes: int, queries: int,
                timeout: float) -> dict[str, float]:
    py = sys.executable
    with Dumbbell(senders=1, bottleneck=bottleneck, tuning=tuning) as net:
        buffers = net.buffer_sysctls()
        softirq = SoftirqMeter()
        softirq.start()
        serve = net.spawn(net.sender_ns[0], _traffic(py, "--timeout", str(timeout), "incast-serve",
                                                     "--port", str(PORT), "--conns", str(n),
                                                     "--cca", tuning.cca or ""))
        query = net.spawn(net.receiver_ns, _traffic(py, "--timeout", str(timeout), "incast-query",
                                                    "--host", net.sender_addr(0), "--port", str(PORT),
                                                    "--conns", str(n),
                                                    "--bytes-per-sender", str(total_bytes // n),
                                                    "--queries", str(queries)))
        with TbfTrace(f"{INSTANCE_PREFIX}{net.run}", net.tbf_handle) as trace:
            net.on_close(trace.close)
            served, asked = _collect([serve, query], timeout + 5)
        softirq_load = softirq.busiest_share(sum(asked["qct_s"]))
        q = net.qdisc_stats()
    if tuning.cca and served["cca"] != tuning.cca:
        raise RuntimeError(f"asked for {tuning.cca}, the kernel used {served['cca']}")
    qct = asked["qct_s"]
    spread = response_spread(asked["query_sent_ns"], served["response_starts_ns"])
    return {
        "qct_median_s": statistics.median(qct),
        "qct_p99_s": percentile(qct, 99),
        "qct_max_s": max(qct),
        "frac_over_100ms": sum(t > SLOW_QUERY_S for t in qct) / len(qct),
        "retrans_segs": served["mib"]["Tcp.RetransSegs"],
        "timeouts": served["mib"]["TcpExt.TCPTimeouts"],
        "loss_probes": served["mib"]["TcpExt.TCPLossProbes"],
        **recovery_counters(served["mib"]),
        "total_retrans": served["total_retrans"],
        "qdisc_drops": q["drops"],
        "acks": served["mib"]["Tcp.InSegs"],
        "read_gap_us": asked["read_gap_us"],
        "read_wait_us": asked["read_wait_us"],
        "read_wait_median_us": asked["read_wait_median_us"],
        "read_wait_quantiles_us": asked["read_wait_quantiles_us"],
        "wait_samples": asked["wait_samples"],
        **reader_wait_summary(reader_waits_us(asked["read_waits_us_bytes"], rate_bps(bottleneck.rate))),
        "handshake_rtt_us": served["handshake_rtt_us"],
        "handshake_rtt_median_us": statistics.median(served["handshake_rtt_us"] or [0]),
        "wake_gap_us": asked["wake_gap_us"],
        **watchdog_summary(trace),
        "host_buffers": buffers,
        "scaling_ratio": asked["scaling_ratio"],
        # Over the queries' own time, not the gaps between them.
        "host_softirq_load": softirq_load,
        "srtt_at_response_us": at_response(served["srtt_at_response_us"]),
        # The same median of medians, in bits/s: the rates the last response left this one.
        "pacing_at_response_bps": 8 * at_response(served["pacing_at_response_Bps"]),
        "delivery_at_response_bps": 8 * at_response(served["delivery_at_response_Bps"]),
        **bbr_at_response(served),
        **spread,
        **aggregator_cost(asked),
    }


def aggregator_cost(asked: dict) -> dict[str, float]:
    """What a query costs the aggregator itself, each the median over the queries: its CPU
    time (user and system, µs), that time as a share of the query's completion time (near 1:
    the aggregator, not the network, sets the pace), and its reads and wake-ups."""
    cpu, qct = asked["query_cpu_us"], asked["qct_s"]
    return {"aggregator_cpu_us": statistics.median(cpu),
            "aggregator_busy": statistics.median(c / (t * 1e6) for c, t in zip(cpu, qct)),
            "reads_per_query": statistics.median(asked["query_reads"]),
            "wakes_per_query": statistics.median(asked["query_wakes"])}


#: Payload of a full frame: a 1500-byte MTU less 40 bytes of IP and TCP headers and 12 of TCP
#: timestamps (RFC 7323 §3).
MSS_BYTES = 1448
#: A sampled read whose bytes took the bottleneck at least this long to deliver was held off
#: until they had come (`reader_waits_us`). At N = 1 a third of the reads are such (a median
#: 0.6–0.9 ms); at N = 8 1–1.5 % of them, at N = 32 none (p99 220–320 µs: a few KB of one
#: connection among many).
HELD_SPAN_US = 300.0


def reader_waits_us(samples: list[list[float]], rate_bps_: float) -> list[float]:
    """The aggregator's own share of each sampled wait (`[wait_us, bytes]`, traffic.wait_summary).

    A read whose bytes (`bytes − 1` after the oldest, in full frames at `rate_bps_`) took the
    bottleneck at least HELD_SPAN_US to deliver was held off until they had all come, and its
    wait measures their delivery too: its share is the wait less that span, never below 0. At
    N = 1 the reader is held so: it shares a CPU with the path that sends each flight, runs a
    median 7 µs after the flight's last frame arrives, and finds the oldest byte 0.6–0.9 ms old
    (history/validation-notes.md, "The twin's reader at N = 1"). The twin's bottleneck makes
    that span itself; given the whole wait as its reader's latency, the N = 1 twin came a flight late and
    took 12.8 ms against the kernel's 8.5. Any other read's wait is all the reader's: it came
    that long after the oldest byte, as the twin's reader does."""
    per_byte_us = FRAME_BYTES / MSS_BYTES * 8 / rate_bps_ * 1e6
    shares = []
    for w, k in samples:
        span = (k - 1) * per_byte_us
        shares.append(max(0.0, w - span) if span >= HELD_SPAN_US else w)
    return shares


def reader_wait_summary(waits: list[float]) -> dict:
    """Mean and quantiles of `reader_waits_us`, as `reader_wait_us` and
    `reader_wait_quantiles_us` (0 and [] without samples)."""
    return {"reader_wait_us": statistics.fmean(waits) if waits else 0.0,
            "reader_wait_quantiles_us": midpoint_quantiles(waits)}


#: `bbr_pacing_gain[0]` (net/ipv4/tcp_bbr.c): BBR_UNIT * 5 / 4, the gain of PROBE_BW's probing phase.
BBR_PROBE_GAIN = 320


def bbr_at_response(served: dict) -> dict[str, float]:
    """BBR's own state as the responses start (`TCP_CC_INFO`; none for other CCAs): its
    bandwidth estimate in bits/s, taken over connections and queries as `at_response` does,
    and the share of response starts at the probing gain 5/4 (`bbr_pacing_gain[0]`, 320 of 256),
    which the last response's ACKs leave and the idle restart does not reset."""
    bw = served.get("bbr_bw_at_response_Bps") or []
    gains = [g for conn in served.get("bbr_gain_at_response") or [] for g in conn]
    if not any(bw) or not gains:
        return {}
    return {"bbr_bw_at_response_bps": 8 * at_response(bw),
            "bbr_probing_at_response": sum(g == BBR_PROBE_GAIN for g in gains) / len(gains)}


def at_response(per_conn: list[list[int]]) -> float:
    """What the connections started their responses on (the SRTT, `tcpi_rtt` µs, as the twin's
    `queries` table reports it; or the pacing or delivery rate): per query the median over the
    connections, then the median over the queries. Each connection answers every query in turn,
    so its k-th value is query k's."""
    per_query = []
    for k in range(max((len(s) for s in per_conn), default=0)):
        values = [s[k] for s in per_conn if len(s) > k]
        per_query.append(statistics.median(values))
    return statistics.median(per_query) if per_query else 0.0


def response_spread(sent_ns: list[int], starts_ns: list[list[int]]) -> dict:
    """How the server host spread its responses over each query, in microseconds: the median,
    over queries, of the first response's delay after the query left the aggregator and of the
    mean gap between consecutive response starts ((last − first) / (N − 1)); and the quantiles
    of every single step (the first delay and each gap), the server's time per response. And
    how much of one query's order of answering the next keeps (`order_correlation`)."""
    firsts, gaps, steps = [], [], []
    for k, t0 in enumerate(sent_ns):
        ts = sorted(s[k] for s in starts_ns if len(s) > k)
        if not ts:
            continue
        firsts.append((ts[0] - t0) / 1e3)
        steps += [firsts[-1], *((b - a) / 1e3 for a, b in zip(ts, ts[1:]))]
        if len(ts) > 1:
            gaps.append((ts[-1] - ts[0]) / (len(ts) - 1) / 1e3)
    return {"first_response_us": statistics.median(firsts) if firsts else 0.0,
            "response_gap_us": statistics.median(gaps) if gaps else 0.0,
            "serve_time_quantiles_us": midpoint_quantiles(steps),
            "response_order_corr": order_correlation(starts_ns)}


def order_correlation(starts_ns: list[list[int]]) -> float | None:
    """The median, over pairs of consecutive queries, of Spearman's rank correlation between
    the orders in which the connections started their responses (one list of start times per
    connection): 1 if the server answers in the same order every query, about 0 if each
    query's order is new. None with fewer than 3 connections or 2 queries. At N = 8–32 this host's
    server gives 0.10–0.25, so the twin shuffles its order afresh each query."""
    n, queries = len(starts_ns), min((len(s) for s in starts_ns), default=0)
    if n < 3 or queries < 2:
        return None
    ranks = []
    for k in range(queries):
        order = sorted(range(n), key=lambda i: starts_ns[i][k])
        rank = [0] * n
        for position, conn in enumerate(order):
            rank[conn] = position
        ranks.append(rank)
    # Spearman's rho of two rankings without ties: 1 - 6 Σd² / (n (n² - 1)).
    rhos = [1 - 6 * sum((a - b) ** 2 for a, b in zip(r, s)) / (n * (n * n - 1)) for r, s in zip(ranks, ranks[1:])]
    return statistics.median(rhos)


def incast(n: int, limit_bytes: int, *, total_bytes: int = 1_000_000, queries: int = 50,
           rto_min: float | None = None, quickack: bool = False, cca: str = "cubic",
           rate: str = "1gbit", burst_bytes: int | None = None, repeat: int = 1,
           timeout: float = 60.0) -> dict:
    """`n` senders answer `queries` queries of `total_bytes` (total_bytes // n each) at once
    through a tbf of `rate`/`limit_bytes`. `rto_min` (seconds, whole ms) and `quickack` are route
    attributes on the hosts' routes."""
    if n < 1 or total_bytes < n:
        raise ValueError(f"need n >= 1 and total_bytes >= n, got n={n}, total_bytes={total_bytes}")
    bottleneck = Bottleneck(rate=rate, limit_bytes=limit_bytes,
                            **({"burst_bytes": burst_bytes} if burst_bytes else {}))
    tuning = HostTuning(cca=cca, rto_min=rto_min, quickack=quickack)
    runs = [_one_incast(n, bottleneck, tuning, total_bytes, queries, timeout) for _ in range(repeat)]
    return {"scenario": {"kind": "incast", "n": n, "cca": cca, "rate": rate, "limit_bytes": limit_bytes,
                         "burst_bytes": bottleneck.burst_bytes, "total_bytes": total_bytes,
                         "queries": queries, "rto_min": rto_min, "quickack": quickack},
            "runs": runs, "summary": summarize(runs)}


#: The lean subset for measuring the real side's noise (its sittings:
#: history/validation-harness-notes.md).
LEAN_CCAS = ("reno", "cubic", "bbr")
LEAN_INCAST_N = (1, 8, 32)


def lean(repeat: int = 3, limit_bytes: int = 128 * 1024) -> list[dict]:
    results = [single_flow(c, limit_bytes=limit_bytes, repeat=repeat) for c in LEAN_CCAS]
    results += [incast(n, limit_bytes, repeat=repeat) for n in LEAN_INCAST_N]
    return results


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m burstlab.validate.real",
                                description="Run validation scenarios on the real Linux kernel.")
    sub = p.add_subparsers(dest="what", required=True)
    s = sub.add_parser("single-flow")
    s.add_argument("--cca", default="cubic")
    s.add_argument("--rate", default="1gbit")
    s.add_argument("--limit-bytes", type=int, default=128 * 1024)
    s.add_argument("--size-bytes", type=int, default=50_000_000)
    s.add_argument("--mtu", type=int, default=DEFAULT_MTU, help="every veth's MTU (default %(default)s)")
    s.add_argument("--repeat", type=int, default=1)
    i = sub.add_parser("incast")
    i.add_argument("--n", type=int, required=True)
    i.add_argument("--limit-bytes", type=int, default=128 * 1024)
    i.add_argument("--total-bytes", type=int, default=1_000_000)
    i.add_argument("--queries", type=int, default=50)
    i.add_argument("--rto-min", type=float, help="seconds, whole milliseconds (route rto_min)")
    i.add_argument("--quickack", action="store_true")
    i.add_argument("--cca", default="cubic")
    i.add_argument("--repeat", type=int, default=1)
    c = sub.add_parser("cleanup", help="remove bl-* namespaces and burstlab-* ftrace instances left by crashed runs")
    c.add_argument("--all", action="store_true", help="also those of live runs")
    ln = sub.add_parser("lean")
    ln.add_argument("--repeat", type=int, default=3)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    a = _parse_args(argv)
    if a.what == "single-flow":
        out: object = single_flow(a.cca, rate=a.rate, limit_bytes=a.limit_bytes,
                                  size_bytes=a.size_bytes, mtu=a.mtu, repeat=a.repeat)
    elif a.what == "incast":
        out = incast(a.n, a.limit_bytes, total_bytes=a.total_bytes, queries=a.queries,
                     rto_min=a.rto_min, quickack=a.quickack, cca=a.cca, repeat=a.repeat)
    elif a.what == "cleanup":
        from burstlab.validate.topology import cleanup_stale

        out = {"removed": cleanup_stale(all_runs=a.all)}
    else:
        out = lean(a.repeat)
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
