"""The differential validation: the same set-up on real Linux (network namespaces, `tbf`) and in
the simulator, metric by metric, with the relative error and a tolerance.

The simulated twin of the real dumbbell: hosts on a fast veth-like path (10 Gbit/s, 10 µs RTT:
the real veth RTT is 4–8 µs), a `tbf` bottleneck with the same rate, burst and byte limit, the
namespaces' default sysctls (`tcp_rmem`, `tcp_wmem`, `rmem_max`; Linux ≥ 6.6 window model), and,
for incast, every server connection on one sender host as the real harness runs them. What the
hosts' CPUs do the twin takes from each case's real runs, as measured there: how long the
receiving application takes to read, how the incast server spaces its responses, and how long
each connection's handshake took (docs/validation.md, "What it measures").

Tolerances (issue 4): single-flow throughput and FCT within 5 %; incast median QCT within 15 %;
retransmits within 30 % where the real count is above 50; the onset of the incast collapse
(first N with ≥ 10 % of queries slower than 100 ms) the same within one step of the N list.
Where the real repeats of a case spread wider than that, the band they span (widened by the
same tolerance) is the tolerance: issue 4 asks for tolerances set from measured real-side noise.
"""

from __future__ import annotations

import datetime
import json
import os
import statistics
from collections.abc import Callable
from dataclasses import asdict, dataclass

import burstlab
from burstlab.advise.twin import rcvbuf_tuning
from burstlab.errors import BurstlabError, ReplayError
from burstlab.validate.real import SLOW_QUERY_S, incast, percentile, single_flow
from burstlab.validate.topology import MAX_MTU, MIN_MTU, DEFAULT_MTU, default_burst_bytes, frame_bytes
from burstlab.validate.topology import rate_bps as tc_rate_bps
from burstlab.validate.traffic import midpoint_quantiles

RATE = "1gbit"
RATE_BPS = 1_000_000_000
LIMIT_BYTES = 128 * 1024
BURST_BYTES = default_burst_bytes()
#: Tolerances (relative) per metric: issue 4's for throughput, FCT, retransmits and the median
#: QCT. It names the p99 QCT, timeouts and the stall fraction (the share of queries stalled past
#: 100 ms) for the report without a tolerance: the p99 is held to the median's, and the two
#: counts to the retransmits'. Where the real runs spread wider, their band decides (`_case`).
TOLERANCE = {
    "rate_fraction": 0.05,
    "fct_s": 0.05,
    "retrans_segs": 0.30,
    "qct_median_s": 0.15,
    "qct_p99_s": 0.15,
    "timeouts": 0.30,
    "frac_over_100ms": 0.30,
}
#: Defaults of the host parameters for a twin run without a real side (microseconds); a case's
#: twin takes what its real runs measured instead.
#: The incast server's time per response: one Python process answers the N requests one thread
#: at a time (the GIL), so responses start one after another (`serve_time_quantiles_us`).
SERVE_TIME_US = 90
#: The bulk receiver's gap between reads while data keeps arriving (`read_gap_us`). A slow reader
#: makes Linux stretch its ACKs: 1,300–3,000 ACKs for 34,500 segments, not one per two.
READ_GAP_US = 430
#: How long data waits for the incast aggregator, as an exponential's mean, where a run sampled
#: no waits (`twin_read_wait_us`).
READ_WAIT_US = 100
#: The least read latency an incast twin's aggregator is given (µs): the kernel's reader always
#: runs after the softirq that queued the data. A zero latency would make the twin's reader read
#: inside it (no slow reader at all: ACKs on arrival rather than at reads).
MIN_READ_WAIT_US = 1.0
#: The twin's path RTT (`rtt` in its topology): what a handshake takes there before the
#: receiving host adds its own latency.
TWIN_RTT_US = 10
#: A retransmit count is compared only above this many real retransmits.
MIN_RETRANS = 50
#: Timeouts are compared from this many per real run on: below it one RTO more or less is over
#: 20 % of the count.
MIN_TIMEOUTS = 5
#: Share of slow queries that marks the incast collapse.
ONSET_SHARE = 0.10

#: Incast variants: (case-name tag, route rto_min in seconds, route quickack).
DEFAULT_RTO = ("", None, False)
#: `ip route ... rto_min 5ms quickack 1`: the cure for the incast collapse (issue 4).
SHORT_RTO = ("rtomin5ms-", 0.005, True)
#: The single-flow cases, (cca, tbf limit in bytes), in the order they run.
FULL_SINGLE = tuple((cca, limit) for limit in (64 * 1024, 128 * 1024, 512 * 1024)
                    for cca in ("reno", "cubic", "bbr"))
#: The control: single flows through a 100 Mbit/s tbf, where a segment takes 121 µs to leave,
#: ten times what it takes at 1 Gbit/s, so that the hosts' scheduling (tens to hundreds of µs)
#: is small against the flow's own timing and the real runs agree with each other within a few
#: per cent. A miss here is the simulator's, not the host's. Shallow queues (16 and 32 KB hold
#: 10 and 21 segments, an skb is up to 11) make how the sender cuts its skbs decide the losses.
CONTROL_RATE = "100mbit"
CONTROL_SIZE = 10_000_000
FULL_CONTROL = tuple((cca, limit) for limit in (16 * 1024, 32 * 1024) for cca in ("reno", "cubic", "bbr"))
#: The jumbo control: the single flows of the matrix again, at 1 Gbit/s through the same tbf
#: limits, on links of 9000 bytes. A frame takes 72 µs to leave, six times a 1500-byte one, so
#: the hosts do a sixth of the per-packet work: the busiest CPU spends 2-15 % of the transfer in
#: softirq against 61-97 % at 1500 bytes, and the real runs agree with each other within a few
#: tens of per cent in retransmits where at 1500 bytes they spread 3-10x
#: (history/validation-notes.md, "A second control: 1 Gbit/s with jumbo frames"). The queues
#: hold 7, 14 and 58 frames.
JUMBO_MTU = 9000
FULL_JUMBO = FULL_SINGLE
FULL = {"single": FULL_SINGLE, "control": FULL_CONTROL, "jumbo": FULL_JUMBO, "incast_n": (1, 2, 4, 8, 16, 32),
        "queries": 50, "incast_variants": (DEFAULT_RTO, SHORT_RTO)}
#: The lean subset CI runs: one flow per CCA through 64 and 128 KB at 1 Gbit/s, the controls, and
#: incast at N = 1, 8 and 32. At 1 Gbit/s CI holds every rate and FCT, and the retransmits of reno
#: and cubic through 64 KB, where the kernel's runs agree with each other. The rest move with the
#: hosts: through 128 KB the twin's reno sits at the bottom of the kernel's spread, and the
#: kernel's cubic resent 102 in one sitting and 305-474 in every one of the next day (the twin
#: 198-246); the kernel's BBR keeps its window open behind a receiver that batches, and resends
#: 0.2-1.1x the twin's (docs/fidelity.md). CI holds all three CCAs' losses in the control, through
#: 16 and 32 KB at 100 Mbit/s, where a sender that cuts or paces its skbs unlike Linux's fails
#: issue 4's rule (history/validation-notes.md, "A host-insensitive control"), and through 128 KB at
#: 1 Gbit/s on links of MTU 9000, where the hosts do a sixth of the per-packet work.
QUICK = {"single": (("reno", 64 * 1024), ("cubic", 64 * 1024), ("bbr", 64 * 1024),
                    ("reno", 128 * 1024), ("cubic", 128 * 1024), ("bbr", 128 * 1024)),
         "control": (("reno", 16 * 1024), ("reno", 32 * 1024), ("cubic", 16 * 1024), ("cubic", 32 * 1024),
                     ("bbr", 16 * 1024), ("bbr", 32 * 1024)),
         "jumbo": (("reno", 128 * 1024), ("cubic", 128 * 1024), ("bbr", 128 * 1024)),
         "incast_n": (1, 8, 32), "queries": 50, "incast_variants": (DEFAULT_RTO,)}
#: Quick cases whose real runs agree with each other, run at most `STEADY_REPEAT` times however
#: many `--repeat` asks: in each of the 14 shipped full records (5 runs each) every run lay within
#: the fixed tolerance of the other runs' median on every metric CI holds of them, and the twin's
#: error was inside the fixed tolerance itself, so the runs' spread never widened the band (the
#: worst: reno 16 KB retransmits 4 % against 30 %, cubic 16 KB 22.7 %, BBR 32 KB 14.1 % and its
#: rate and FCT 1.2 % against 5 %; docs/validation.md, "Real Linux against itself"). Cubic
#: through 32 KB is not one: its twin was 31.5 % off in one sitting, inside only because the
#: runs spread.
STEADY_QUICK = frozenset({("reno", 16 * 1024, CONTROL_RATE), ("cubic", 16 * 1024, CONTROL_RATE),
                          ("bbr", 32 * 1024, CONTROL_RATE)})
STEADY_REPEAT = 5


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


def _twin_topology(limit_bytes: int, rate_bps: int = RATE_BPS,
                   tbf_watchdog_us: list[float] | None = None, mtu: int = DEFAULT_MTU) -> str:
    # veth: the real senders, router and receiver are namespaces joined by veth pairs, so GSO
    # skbs reach the tbf and the receiver whole (docs/fidelity.md, "Against real Linux").
    # The bucket is the burst tc was given, to the byte: tc sends it as TCA_TBF_BURST, and
    # tbf_change() (net/sched/sch_tbf.c) then takes it as max_size and the bucket as
    # psched_l2t_ns() of it, not the 64 ns ticks of TCA_TBF_PARMS (dmesg's "burst 1501 is lower
    # than device mtu" for `burst 1501` on 6.18; ticks would give 1496).
    late = f"tbf_watchdog_latency = {latency_toml(tbf_watchdog_us)}\n" if tbf_watchdog_us else ""
    return f"""
[topology]
bottleneck_rate = "10Gbps"
host_rate = "10Gbps"
rtt = "10us"
mtu = {mtu}
veth = true
tbf_rate = "{rate_bps // 1_000_000}Mbps"
tbf_burst = "{default_burst_bytes(mtu)}B"
tbf_limit = "{limit_bytes}B"
""" + late


#: The kernel under test runs its TCP timers on the jiffy wheel at HZ = 250 (`CONFIG_HZ`).
TWIN_TCP = 'timers = "jiffies"\nhz = 250\n'

#: The len/truesize ratio (of 256) this harness's veth receivers measured per MTU, traced on
#: 6.18 with `tcp:tcp_probe` (`tp->scaling_ratio` from the third data skb on, in every run):
#: what the twins of records made before each run measured its own (`scaling_ratio`) are given.
TRACED_SCALING_RATIO = {1500: 229, 9000: 248}

#: How late the receiving tool's first read of data comes (µs), the median of ten runs of five
#: cases (`first_read_us`: 780-2740 µs; a kernel trace of two more, 2.85 and 3.56 ms): what the
#: twins of records made before each run measured its own are given. A receiver that starts
#: reading late holds the sender to its first window and makes the first DRS sample large
#: (history/validation-notes.md, "The receiver's buffer as 6.18 tunes it").
TYPICAL_FIRST_READ_US = 1100.0


def receive_toml(scaling_ratio: int | None, kernel: str | None) -> str:
    """Flow fields for the receiving host's window: the skbs' measured ratio, and its kernel's
    buffer auto-tuning."""
    text = f"skb_scaling_ratio = {scaling_ratio}\n" if scaling_ratio else ""
    tuning = rcvbuf_tuning(kernel)
    return text + (f'rcvbuf_tuning = "{tuning}"\n' if tuning else "")


def pauses_toml(stalls_s: list[tuple[float, float]]) -> str:
    """`bottleneck_pauses` for `(start_s, length_s)` stalls, in whole ns, kept apart."""
    pairs, end = [], 0
    for start_s, length_s in stalls_s:
        start = max(end, round(start_s * 1e9))
        length = round(length_s * 1e9)
        if length > 0:
            pairs.append(f'["{start}ns", "{length}ns"]')
            end = start + length
    return f"bottleneck_pauses = [{', '.join(pairs)}]\n"


def buffers_toml(buffers: dict[str, list[int]] | None) -> str:
    """Flow fields for the hosts' socket-buffer sysctls (`Dumbbell.buffer_sysctls`); none
    without them (the simulator's defaults)."""
    if not buffers:
        return ""
    triple = lambda key: " ".join(str(v) for v in buffers[key])  # noqa: E731
    return (f'tcp_rmem = "{triple("tcp_rmem")}"\ntcp_wmem = "{triple("tcp_wmem")}"\n'
            f'rmem_max = {buffers["rmem_max"][0]}\n')


def sim_single_flow(cca: str, *, size_bytes: int = 50_000_000, limit_bytes: int = LIMIT_BYTES,
                    read_gap_us: int = READ_GAP_US,
                    host_stalls_s: list[tuple[float, float]] | None = None,
                    buffers: dict[str, list[int]] | None = None, rate_bps: int = RATE_BPS,
                    mtu: int = DEFAULT_MTU, read_hold_us: list[float] | None = None,
                    scaling_ratio: int | None = None, kernel: str | None = None,
                    first_read_us: float | None = None) -> dict:
    """The simulated twin of `real.single_flow` (same metric names); the receiving application
    reads `read_gap_us` after data arrives, as the real one was measured to, and the bottleneck
    pauses where the real hosts left the tbf idle (`host_stalls_s`, from the flow's connect on).
    `buffers` are the real hosts' socket-buffer sysctls (`Dumbbell.buffer_sysctls`); `rate_bps`
    is the tbf's rate and `mtu` the links'. `read_hold_us` are the real reader's holds of the
    socket (one drawn before each read ends; none: never held). `scaling_ratio` is the ratio the
    real receiver measured (`traffic.scaling_ratio_of`) and `kernel` its release
    (`rcvbuf_tuning`). `first_read_us` is how late its first read of data came."""
    text = f'name = "twin-{cca}"\nstop = "60s"\n' + _twin_topology(limit_bytes, rate_bps, mtu=mtu)
    if host_stalls_s:
        text += pauses_toml(host_stalls_s)
    text += f'[[flow]]\ncca = "{cca}"\nsize = "{size_bytes}B"\n' + TWIN_TCP + buffers_toml(buffers)
    text += receive_toml(scaling_ratio, kernel)
    text += f'read_latency = "{read_gap_us}us"\n'
    if read_hold_us and read_gap_us > 0:
        text += f"read_hold = {latency_toml(read_hold_us)}\n"
    if first_read_us and read_gap_us > 0:
        text += f"first_read_latency = {latency_toml(first_read_us)}\n"
    summary = burstlab.run(text).summary
    f = summary["flows"][0]
    goodput = f["delivered_bytes"] * 8 / f["fct_s"]
    mss = mtu - TCP_IP_OVERHEAD
    return {
        "fct_s": f["fct_s"],
        "goodput_bps": goodput,
        "rate_fraction": goodput * frame_bytes(mtu) / mss / rate_bps,
        "retrans_segs": f["retransmits"],
        "timeouts": f["timeouts"],
        **{k: f[k] for k in RECOVERY_COUNTERS},
        "qdisc_drops": _tbf_drops(summary),
        "acks": f["acks"],
        "read_gap_us": read_gap_us,
        "host_stall_ms": sum(length for _, length in host_stalls_s or []) * 1e3,
    }


#: IP and TCP headers with timestamps, 52 bytes: a full segment's payload is the MTU less these
#: (`tcp_mtu_to_mss()` less TCPOLEN_TSTAMP_ALIGNED), on both sides.
TCP_IP_OVERHEAD = 52
#: The simulator's loss-recovery counters, named as `real.recovery_counters` names the kernel's.
RECOVERY_COUNTERS = ("recoveries", "lost_retransmits", "recovery_timeouts")


def _tbf_drops(summary: dict) -> int:
    """Skbs the twin's `tbf` dropped, counted as `tc -s` counts them."""
    return sum(p.get("tbf_drops", 0) for p in summary["ports"])


def latency_toml(values_us: float | list[float]) -> str:
    """A scenario latency: one time, or the list of measured times the twin draws from."""
    if isinstance(values_us, list):
        return "[" + ", ".join(f'"{max(0.0, v):.1f}us"' for v in values_us) + "]"
    return f'"{max(0.0, values_us):.1f}us"'


def sim_incast(n: int, *, limit_bytes: int = LIMIT_BYTES, total_bytes: int = 1_000_000,
               queries: int = 50, rto_min: float | None = None, quickack: bool = False,
               cca: str = "cubic", serve_time_us: float | list[float] = SERVE_TIME_US,
               read_wait_us: float | list[float] = READ_WAIT_US,
               handshake_rtt_us: list[float] | None = None, repeat: int = 1,
               buffers: dict[str, list[int]] | None = None, serve_order: str = "shuffled",
               tbf_watchdog_us: list[float] | None = None, scaling_ratio: int | None = None,
               kernel: str | None = None) -> dict:
    """The simulated twin of `real.incast` (same metric names). Responses start one
    `serve_time_us` after another, as the real host serialises them (one time, or the measured
    steps to draw from), in a fresh order each query: the real server's threads keep almost
    nothing of one query's order in the next (`response_order_corr`, 0.10-0.25 at N = 8-32; see
    docs/validation.md). The aggregator reads `read_wait_us` after data arrives: a mean (drawn exponentially), or the measured waits to draw from. Each connection's
    handshake takes one of `handshake_rtt_us` (the real connections' first RTT samples), which
    sets its min RTT; by default the path's. The same latency, drawn afresh, holds a segment
    that reaches an idle receiver before its host hands it to TCP (`rx_coalesce`): a handshake
    is the one round trip the hosts make alone, and the receiving host takes that long for
    every packet, not for the SYN only (history/validation-notes.md, "The aggregator's ACKs"). The
    tbf runs late by one of `tbf_watchdog_us` each time it waits for tokens, as the real host's
    watchdog was measured to (`tbf_watchdog_latency`; none: on time). It answers `queries × repeat` queries, as many as
    `repeat` real runs together, so that its median and its share of slow queries are as steady
    as theirs; counts (retransmits, timeouts, drops ...) are per `queries`, as one real run's.
    `buffers` are the real hosts' socket-buffer sysctls (`Dumbbell.buffer_sysctls`);
    `scaling_ratio` and `kernel` the aggregator's, as for `sim_single_flow`."""
    text = f'name = "twin-incast-{n}"\nstop = "120s"\n' + _twin_topology(limit_bytes, tbf_watchdog_us=tbf_watchdog_us)
    text += f"""[[incast]]
senders = {n}
query_size = "{total_bytes}B"
queries = {queries * repeat}
one_sender_host = true
serve_time = {latency_toml(serve_time_us)}
serve_order = "{serve_order}"
[incast.tcp]
cca = "{cca}"
quickack = {str(quickack).lower()}
read_latency = {latency_toml(read_wait_us)}
""" + TWIN_TCP + buffers_toml(buffers) + receive_toml(scaling_ratio, kernel)
    if not isinstance(read_wait_us, list):
        text += 'read_latency_dist = "exponential"\n'
    if handshake_rtt_us:
        host = latency_toml([h - TWIN_RTT_US for h in handshake_rtt_us])
        text += f"handshake_latency = {host}\nrx_coalesce = {host}\n"
    if rto_min is not None:
        text += f'rto_min = "{round(rto_min * 1000)}ms"\n'
    r = burstlab.run(text)
    qct = r.table("queries").column("qct_s").to_pylist()
    if not qct:
        raise RuntimeError(f"the incast twin (N = {n}) completed no query before its stop; its scenario:\n{text}")
    flows = r.summary["flows"]
    def per_run(total: float) -> float:
        return total / repeat

    return {
        "qct_median_s": statistics.median(qct),
        "qct_p99_s": percentile(qct, 99),
        "frac_over_100ms": sum(t > SLOW_QUERY_S for t in qct) / len(qct),
        "retrans_segs": per_run(sum(f["retransmits"] for f in flows)),
        **{k: per_run(sum(f[k] for f in flows)) for k in ("timeouts", "loss_probes", "acks", *RECOVERY_COUNTERS)},
        "qdisc_drops": per_run(_tbf_drops(r.summary)),
        # As real.srtt_at_response: the queries table has each query's median already.
        "srtt_at_response_us": statistics.median(r.table("queries").column("srtt_at_response_us").to_pylist()),
    }


def _median_each(runs: list[dict]) -> dict:
    """Per metric, the median over the twin's runs."""
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


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


def onset_steps(real: int | None, sim: int | None, ns: list[int]) -> tuple[int, bool]:
    """How many steps of the grid `ns` apart the two onsets of the collapse are (no collapse
    counts as one step past the last N), and whether they agree: within one step, and a collapse
    on both sides or on neither. Issue 4: the collapse "must appear where real Linux shows it",
    so a twin that never collapses does not match a kernel that collapses at the grid's last N,
    though "none" would be only one step from it (the quick grid ends 8, 32)."""
    def step(n: int | None) -> int:
        return ns.index(n) if n is not None else len(ns)
    steps = abs(step(real) - step(sim))
    return steps, (real is None) == (sim is None) and steps <= 1


def self_agreement(values: list[float], tol: float) -> float | None:
    """Real Linux against itself: the share of runs within `tol` (relative) of the median of the
    other runs, `None` with fewer than three runs. Below 1, the fixed tolerance is narrower than
    the real side's own noise."""
    if len(values) < 3:
        return None
    hits = 0
    for i, v in enumerate(values):
        med = statistics.median(values[:i] + values[i + 1:])
        hits += abs(v - med) <= tol * abs(med) if med else v == med
    return hits / len(values)


#: `progress(done, total, label)`: told before each case's real runs start.
Progress = Callable[[int, int, str], None]


def single_setup(cca: str, limit_bytes: int, rate: str, size_bytes: int, mtu: int = DEFAULT_MTU) -> dict:
    """What a single-flow case sets up, as a record keeps it (`--detail`, `replay`). Records
    made before the jumbo control have no `mtu`: theirs was the default."""
    return {"kind": "single", "cca": cca, "limit_bytes": limit_bytes, "rate": rate, "size_bytes": size_bytes,
            "mtu": mtu}


def incast_setup(n: int, variant: tuple[str, float | None, bool], queries: int,
                 limit_bytes: int = LIMIT_BYTES, cca: str = "cubic") -> dict:
    """What an incast cell sets up: N, the route variant (tag, rto_min, quickack), queries per
    run, the tbf limit and the senders' CCA. Records made before the incast matrix have no
    `cca`: theirs was cubic."""
    tag, rto_min, quickack = variant
    return {"kind": "incast", "n": n, "limit_bytes": limit_bytes, "variant": tag, "rto_min": rto_min,
            "quickack": quickack, "queries": queries, "cca": cca}


def single_name(setup: dict) -> str:
    mtu = setup.get("mtu") or DEFAULT_MTU
    jumbo = f"-mtu{mtu}" if mtu != DEFAULT_MTU else ""
    return f"single-{setup['cca']}-{setup['rate']}-{setup['limit_bytes'] // 1024}KB{jumbo}"


def _cca_tag(cca: str | None) -> str:
    """The CCA in an incast case's name: none for cubic, the incast cells' CCA before the matrix."""
    return "" if cca in (None, "cubic") else f"{cca}-"


def incast_name(setup: dict) -> str:
    return f"incast-{_cca_tag(setup.get('cca'))}{setup['variant']}{setup['n']}-{setup['limit_bytes'] // 1024}KB"


#: The twins of one real run: its mean read gap moved by these many µs. The twin is chaotic in
#: the gap, and a gap measured as a mean over reads that vary by hundreds of µs does not pin it
#: to the µs: BBR through 16 KB at 100 Mbit/s falls into an RTO (−15 % of the rate) at 27 of 160
#: gaps of 400-559 µs, in clusters of 1-5 µs, so ten twins at ten real runs' gaps, which lie
#: within ±15 µs of each other, could land mostly in one (`scripts/twin_gap_sweep.py` maps it;
#: history/validation-notes.md, "A chaotic twin").
GAP_ENSEMBLE_US = (-8, -4, 0, 4, 8)


def hosts_keep_up(setup: dict) -> bool:
    """Whether a single-flow case is a control, where the hosts keep up with the flow: 100 Mbit/s,
    or links of MTU 9000. There the data arrives in skbs 0.5-1 ms apart and the receiving
    application sleeps until each one comes (its reads wait 20-40 µs, `read_wait_us`, while the
    330-370 µs between them are the flow's spacing, not the reader's). At 1 Gbit/s with 1500-byte
    frames the hosts' softirq work takes 61-97 % of a CPU and the reader falls behind: data keeps
    arriving between reads, so the gap between them is what it adds."""
    return setup["rate"] != RATE or (setup.get("mtu") or DEFAULT_MTU) != DEFAULT_MTU


def twin_read_latencies_us(setup: dict, host: dict) -> list[int]:
    """Per real run, the read latency its twins' receiving application is given (µs): the
    reader's wait for arrived data where the hosts keep up (`hosts_keep_up`), its gap between
    reads elsewhere. Replayed records made before the waits were kept per run give each run the
    median of the real runs' mean waits (`real_read_wait_us`)."""
    if hosts_keep_up(setup):
        return host["read_wait_us"]
    return host["read_gap_us"]


def twin_single(setup: dict, host: dict) -> dict:
    """The twin of a single-flow case: per real run, a twin at each of `GAP_ENSEMBLE_US` around
    that run's read latency (`twin_read_latencies_us`), with its stalls (`host`, as `twin_host`
    records them), and per metric the median over all of them. A single flow through a shallow
    queue is chaotic (cubic's retransmits range 179-400 over read gaps of 150-400 µs), so the
    twin's value is the median of an ensemble that gives each real run the same weight. A run
    whose reader kept up (latency 0: no reader gaps were measured) has no latency to move: its
    one twin counts as many times."""
    rate_bps = int(tc_rate_bps(setup["rate"]))

    mtu = setup.get("mtu") or DEFAULT_MTU

    def twin(gap: int, stalls: list, hold: list[float] | None, ratio: int | None, first: float) -> dict:
        return sim_single_flow(setup["cca"], size_bytes=setup["size_bytes"], limit_bytes=setup["limit_bytes"],
                               read_gap_us=gap, host_stalls_s=stalls, buffers=host["buffers"], rate_bps=rate_bps,
                               mtu=mtu, read_hold_us=hold, scaling_ratio=ratio, kernel=host.get("kernel"),
                               first_read_us=first)

    latencies = twin_read_latencies_us(setup, host)
    # Records made before the holds were measured have none: their twins' readers never hold.
    holds = host.get("read_hold_us") or [None] * len(latencies)
    # Nor a ratio or a first read per run: their twins take the ones measured here since.
    ratios = host.get("scaling_ratio") or [TRACED_SCALING_RATIO.get(mtu)] * len(latencies)
    firsts = host.get("first_read_us") or [TYPICAL_FIRST_READ_US] * len(latencies)
    runs = []
    for gap, stalls, hold, ratio, first in zip(latencies, host["host_stalls_s"], holds, ratios, firsts, strict=True):
        if gap > 0:
            # At least 1 µs: a read latency of 0 is a reader that keeps up, another model.
            runs += [twin(max(1, gap + shift), stalls, hold, ratio, first) for shift in GAP_ENSEMBLE_US]
        else:
            runs += [twin(0, stalls, None, ratio, first)] * len(GAP_ENSEMBLE_US)
    return _median_each(runs)


def twin_read_wait_us(run: dict) -> float:
    """The read latency an incast twin's aggregator is given, µs: the mean of the real
    aggregator's own share of its waits (`real.reader_waits_us`: what the bottleneck took to
    deliver the rest of a read is the twin's to make), at least MIN_READ_WAIT_US; READ_WAIT_US
    if the run sampled no waits."""
    if not run.get("wait_samples"):
        return READ_WAIT_US
    return max(MIN_READ_WAIT_US, run["reader_wait_us"])


def twin_incast(setup: dict, hosts: list[dict]) -> dict:
    """The twin of an incast cell: one simulated run per real run, given what that run's hosts
    did (`hosts`, as `twin_host` records them); per metric the median over them, and the share
    of slow queries pooled (their mean), as the real side pools its runs'."""
    # Records made before each run measured its ratio: the one traced here.
    sims = [sim_incast(setup["n"], limit_bytes=setup["limit_bytes"], queries=setup["queries"],
                       rto_min=setup["rto_min"], quickack=setup["quickack"], cca=setup.get("cca") or "cubic",
                       **{"scaling_ratio": TRACED_SCALING_RATIO[DEFAULT_MTU], **host}) for host in hosts]
    sim = _median_each(sims)
    sim["frac_over_100ms"] = statistics.fmean(s["frac_over_100ms"] for s in sims)
    return sim


#: The host profile of the no-measurement mode (`twin_incast_described`): what this kind of
#: machine does, calibrated once (2 CPUs, the hosts namespaces joined by veth pairs, the Python
#: traffic tool), not what any one run measured. Each value is the median, over the incast cells
#: of the newest full record shipped (`--replay latest`: cubic through 128 KB, N = 1-32, both route variants, five runs
#: each), of the per-run values `incast_twin_hosts` takes: the server's step between responses
#: (80-168 µs per run), the aggregator's own share of its waits (13-1,117 µs; it grows with N, the
#: profile keeps one mean), a handshake (19-129 µs) and the tbf watchdog's lateness (14-22 µs).
HOST_PROFILE = {"name": "veth-2cpu-python", "serve_time_us": 110.0, "read_wait_us": 110.0,
                "handshake_rtt_us": 45.0, "tbf_watchdog_us": 19.0}


def twin_incast_described(setup: dict, runs: int, *, buffers: dict[str, list[int]] | None = None,
                          kernel: str | None = None, profile: dict | None = None) -> dict:
    """The twin of an incast cell from what a user can describe: the set-up (tbf rate, burst,
    limit, MTU, CCA, rto_min, quickack; HZ = 250 jiffy timers), the hosts' socket-buffer sysctls
    and kernel release, and a host `profile` calibrated once for the kind of machine. No value any
    run measured. One simulation answers as many queries as the `runs` real runs together."""
    profile = profile or HOST_PROFILE
    return sim_incast(setup["n"], limit_bytes=setup["limit_bytes"], queries=setup["queries"], repeat=runs,
                      rto_min=setup["rto_min"], quickack=setup["quickack"], cca=setup.get("cca") or "cubic",
                      serve_time_us=profile["serve_time_us"], read_wait_us=profile["read_wait_us"],
                      handshake_rtt_us=[profile["handshake_rtt_us"]],
                      tbf_watchdog_us=[profile["tbf_watchdog_us"]], buffers=buffers,
                      scaling_ratio=TRACED_SCALING_RATIO[DEFAULT_MTU], kernel=kernel)


def incast_twin_hosts(runs: list[dict]) -> list[dict]:
    """What each real run's hosts did, as an incast twin takes it (µs): the server's steps and
    each connection's handshake as measured, and the aggregator's own share of its waits as an
    exponential of their mean (`real.reader_waits_us`)."""
    return [{"serve_time_us": r["serve_time_quantiles_us"] or SERVE_TIME_US,
             "read_wait_us": twin_read_wait_us(r),
             "handshake_rtt_us": r["handshake_rtt_us"],
             "buffers": r["host_buffers"],
             "tbf_watchdog_us": r["tbf_watchdog_quantiles_us"],
             "scaling_ratio": r["scaling_ratio"], "kernel": os.uname().release} for r in runs]


def single_not_compared(real: dict, sim: dict) -> dict[str, str]:
    """The metrics of a single-flow case that are left out, each with why: retransmits unless
    the real runs' median is above `MIN_RETRANS`, timeouts below `MIN_TIMEOUTS` (or where either
    side has none). Rate and FCT are always compared."""
    why = {}
    resent = real["retrans_segs"]["median"]
    if not resent > MIN_RETRANS:
        why["retrans_segs"] = f"the real runs' median {resent:g} is not above MIN_RETRANS = {MIN_RETRANS}"
    why.update(_timeouts_not_compared(real, sim))
    return why


def single_cases(name: str, real: dict, sim: dict) -> list[Case]:
    """Rate and FCT always; retransmits and timeouts unless `single_not_compared` says why not."""
    skipped = single_not_compared(real, sim)
    metrics = [m for m in ("rate_fraction", "fct_s", "retrans_segs", "timeouts") if m not in skipped]
    return [_case(name, m, real[m], sim[m]) for m in metrics]


def _timeouts_not_compared(real: dict, sim: dict) -> dict[str, str]:
    if "timeouts" not in real:
        return {"timeouts": "the real runs have no timeout count (a record made before they were counted)"}
    rtos = real["timeouts"]["median"]
    if rtos < MIN_TIMEOUTS:
        return {"timeouts": f"the real runs' median {rtos:g} is below MIN_TIMEOUTS = {MIN_TIMEOUTS}"}
    if "timeouts" not in sim:
        return {"timeouts": "the twin has no timeout count"}
    return {}


#: What an incast cell can be compared on, in the order its cases come.
INCAST_METRICS = ("qct_median_s", "qct_p99_s", "retrans_segs", "timeouts", "frac_over_100ms")


def incast_not_compared(real: dict, sim: dict) -> dict[str, str]:
    """The metrics of an incast cell that are left out, each with why: retransmits unless the
    real runs' median is above `MIN_RETRANS`, timeouts below `MIN_TIMEOUTS` per run, the stall
    fraction (`frac_over_100ms`) where the real runs do not collapse (below `ONSET_SHARE`). The
    median and p99 query completion times are always compared. Records made before all of these
    were compared hold every one of them, so they replay with them."""
    why = {}
    resent = real["retrans_segs"]["median"]
    if not resent > MIN_RETRANS:
        why["retrans_segs"] = f"the real runs' median {resent:g} is not above MIN_RETRANS = {MIN_RETRANS}"
    why.update(_timeouts_not_compared(real, sim))
    stalled = real["frac_over_100ms"]["mean"]
    if stalled < ONSET_SHARE:
        why["frac_over_100ms"] = (f"the real runs did not collapse: {stalled:.3g} of their queries took over "
                                  f"100 ms, below ONSET_SHARE = {ONSET_SHARE}")
    return why


def incast_cases(name: str, real: dict, sim: dict) -> list[Case]:
    """The cases of one incast cell (`incast_not_compared` says which are left out). The stall
    fraction is pooled over the real runs (their mean), as the twin's is, and as the onset takes
    it."""
    skipped = incast_not_compared(real, sim)
    cases = []
    for m in INCAST_METRICS:
        if m in skipped:
            continue
        summary = {**real[m], "median": real[m]["mean"]} if m == "frac_over_100ms" else real[m]
        cases.append(_case(name, m, summary, sim[m]))
    return cases


def onset_case(variant: str, cells: list[tuple[int, dict, dict]], limit_bytes: int = LIMIT_BYTES,
               cca: str | None = None) -> Case:
    """The onset of the collapse over one variant's cells `(n, real summary, twin)`: a share of
    queries pools over the runs (their mean: each run asks as many); the median of a few runs'
    shares would move in steps of one query."""
    cells = sorted(cells, key=lambda cell: cell[0])
    ns = [n for n, _, _ in cells]
    on_real = _onset({n: real["frac_over_100ms"]["mean"] for n, real, _ in cells})
    on_sim = _onset({n: sim["frac_over_100ms"] for n, _, sim in cells})
    steps, ok = onset_steps(on_real, on_sim, ns)
    return Case(f"incast-{_cca_tag(cca)}{variant}onset-{limit_bytes // 1024}KB", "onset_n", float(on_real or 0), float(on_sim or 0),
                float(steps), 1.0, ok)


def single_setups(*, quick: bool) -> list[dict]:
    """The single-flow cases of the matrix (or the quick subset), in the order they run."""
    plan = QUICK if quick else FULL
    singles = [single_setup(cca, limit, RATE, 50_000_000) for cca, limit in plan["single"]]
    singles += [single_setup(cca, limit, CONTROL_RATE, CONTROL_SIZE) for cca, limit in plan["control"]]
    singles += [single_setup(cca, limit, RATE, 50_000_000, JUMBO_MTU) for cca, limit in plan["jumbo"]]
    return singles


def single_repeat(setup: dict, quick: bool, repeat: int) -> int:
    """How many real runs a single-flow case gets: `repeat`, at most `STEADY_REPEAT` for the
    quick subset's steady cases."""
    steady = quick and (setup["cca"], setup["limit_bytes"], setup["rate"]) in STEADY_QUICK
    return min(repeat, STEADY_REPEAT) if steady else repeat


def compare(*, quick: bool = False, repeat: int = 3, progress: Progress | None = None) -> dict:
    """Run the matrix (or the quick subset) on both sides; `{"cases": [...], "detail": ...}`.
    The real value of a case is the median over `repeat` runs: one run disturbed by another job
    on this shared machine (a loss-based flow then loses 5–20 % of its rate) does not move it.
    The quick subset's steady cases (`STEADY_QUICK`) run at most `STEADY_REPEAT` times; each
    case's twin_host lists one entry per run it had.
    `detail` is the record `replay` reads: per case its set-up, the real runs' summary, what
    the twin was given (`twin_host`) and what it gave."""
    plan = QUICK if quick else FULL
    singles = single_setups(quick=quick)
    total = len(singles) + len(plan["incast_variants"]) * len(plan["incast_n"])
    done = 0

    def starting(label: str) -> None:
        nonlocal done
        if progress is not None:
            progress(done, total, label)
        done += 1

    cases: list[Case] = []
    raw: dict[str, dict] = {}
    for setup in singles:
        name = single_name(setup)
        starting(name)
        real = single_flow(setup["cca"], rate=setup["rate"], limit_bytes=setup["limit_bytes"],
                           size_bytes=setup["size_bytes"], burst_bytes=default_burst_bytes(setup["mtu"]),
                           mtu=setup["mtu"], repeat=single_repeat(setup, quick, repeat))
        rs, runs = real["summary"], real["runs"]
        # The controls' twins run without the hosts' stalls: the detector's bounds are set for
        # 1500-byte frames at 1 Gbit/s, and the flow's own gaps would pass for stalls at
        # 100 Mbit/s (an skb of 9 segments leaves in 1.09 ms) and with jumbo frames (one of 7
        # in 0.5 ms).
        stalls = not hosts_keep_up(setup)
        host = {"read_gap_us": [round(r["read_gap_us"]) for r in runs],
                "read_wait_us": [round(r["read_wait_us"]) for r in runs],
                "read_hold_us": [[round(v, 1) for v in r["read_hold_quantiles_us"]] for r in runs],
                "buffers": runs[0]["host_buffers"],
                "host_stalls_s": [r["host_stall_list"] if stalls else [] for r in runs],
                "host_stall_ms": [r["host_stall_ms"] for r in runs],
                "host_stalls_not_measured": sorted({r["host_stall_why"] for r in runs} - {""}),
                "scaling_ratio": [r["scaling_ratio"] for r in runs], "kernel": os.uname().release,
                "first_read_us": [round(r["first_read_us"], 1) for r in runs]}
        sim = twin_single(setup, host)
        metrics = single_cases(name, rs, sim)
        raw[name] = {"setup": setup, "real": rs, "sim": sim, "twin_host": host,
                     "not_compared": single_not_compared(rs, sim),
                     "real_vs_itself": {c.metric: self_agreement([r[c.metric] for r in runs], TOLERANCE[c.metric])
                                        for c in metrics}}
        cases += metrics
    for variant in plan["incast_variants"]:
        cells = []
        for n in plan["incast_n"]:
            setup = incast_setup(n, variant, plan["queries"])
            name = incast_name(setup)
            starting(name)
            real = incast(n, setup["limit_bytes"], queries=setup["queries"], burst_bytes=BURST_BYTES,
                          rto_min=setup["rto_min"], quickack=setup["quickack"], repeat=repeat)
            runs = real["runs"]
            # One twin per real run, given what that run's hosts did.
            hosts = incast_twin_hosts(runs)
            sim = twin_incast(setup, hosts)
            metrics = incast_cases(name, real["summary"], sim)
            raw[name] = {"setup": setup, "real": real["summary"], "sim": sim, "twin_host": hosts,
                         "not_compared": incast_not_compared(real["summary"], sim),
                         "real_vs_itself": {c.metric: self_agreement([r[c.metric] for r in runs], TOLERANCE[c.metric])
                                            for c in metrics}}
            cases += metrics
            cells.append((n, real["summary"], sim))
        cases.append(onset_case(variant[0], cells))
    recorded = {"date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "kernel": os.uname().release, "cpus": os.cpu_count(), "burstlab": burstlab.__version__,
                "quick": quick, "repeat": repeat}
    return {"recorded": recorded, "cases": [c.as_json() for c in cases], "detail": raw}


#: The incast matrix of the no-measurement mode (issue 36): each CCA through each tbf limit at
#: N = 1-32, with the default RTO and with `rto_min 5ms quickack 1`.
INCAST_MATRIX = {"ccas": ("cubic", "reno", "bbr"), "limits": (64 * 1024, 128 * 1024, 512 * 1024),
                 "incast_n": (1, 2, 4, 8, 16, 24, 32), "queries": 50, "incast_variants": (DEFAULT_RTO, SHORT_RTO)}


def incast_entry(real: dict) -> tuple[str, dict]:
    """A record's entry for one incast cell from `real.incast`'s result: its set-up, the real
    runs' summary and what each run's hosts did (`incast_twin_hosts`), so that the record replays
    with and without the hosts' measurements."""
    sc = real["scenario"]
    tag = next((t for t, rto_min, quickack in (DEFAULT_RTO, SHORT_RTO)
                if (rto_min, quickack) == (sc["rto_min"], sc["quickack"])), None)
    if tag is None:
        raise ValueError(f"incast cell with rto_min = {sc['rto_min']}, quickack = {sc['quickack']}: "
                         "expected one of the matrix's route variants (none, or 0.005 with quickack)")
    setup = incast_setup(sc["n"], (tag, sc["rto_min"], sc["quickack"]), sc["queries"], sc["limit_bytes"], sc["cca"])
    return incast_name(setup), {"setup": setup, "real": real["summary"], "twin_host": incast_twin_hosts(real["runs"])}


def described(detail: dict, *, kernel: str | None, progress: Progress | None = None) -> dict:
    """Compare the incast cells of `detail` (a record's, checked by `_replayable`) with twins
    built without any run's measurements (`twin_incast_described`), and per CCA, limit and
    route variant the onset of the collapse. Single-flow cases are left out: this mode is the
    incast matrix's. `{"cases": [...], "detail": ...}` as `replay` returns."""
    checked = [(name, *_replayable(name, entry)) for name, entry in detail.items()]
    checked = [c for c in checked if c[1]["kind"] == "incast"]
    if not checked:
        raise ReplayError("record: no incast cell to compare without host measurements "
                          "(the no-measurement mode covers incast only)")
    cases: list[Case] = []
    raw: dict[str, dict] = {}
    cells: dict[tuple[str, str, int], list[tuple[int, dict, dict]]] = {}
    for i, (name, setup, real, hosts) in enumerate(checked):
        if progress is not None:
            progress(i, len(checked), name)
        # The socket-buffer sysctls and the release are the hosts' configuration, not a measurement.
        buffers = hosts[0].get("buffers")
        try:
            sim = twin_incast_described(setup, len(hosts), buffers=buffers, kernel=hosts[0].get("kernel") or kernel)
        except (BurstlabError, ValueError, RuntimeError) as e:
            raise ReplayError(f'record: case "{name}": its twin cannot run: {e}') from None
        cells.setdefault((setup.get("cca") or "cubic", setup["variant"], setup["limit_bytes"]), []).append(
            (setup["n"], real, sim))
        if real["qct_median_s"]["median"] <= SLOW_QUERY_S:
            cases.append(described_median_case(name, real["qct_median_s"]["median"], sim["qct_median_s"]))
        raw[name] = {**detail[name], "sim": sim, "twin_host_profile": HOST_PROFILE}
    for (cca, variant, limit), group in cells.items():
        cases.append(median_onset_case(variant, group, limit, cca))
    return {"cases": [c.as_json() for c in cases], "detail": raw}


def replay_described(record: dict, *, progress: Progress | None = None) -> dict:
    """`described` over a record's incast cells (`burstlab validate --replay R
    --no-host-measurements`), its real side as recorded."""
    recorded = record.get("recorded") if isinstance(record, dict) else None
    kernel = recorded.get("kernel") if isinstance(recorded, dict) else None
    out = described(_record_detail(record), kernel=kernel, progress=progress)
    if isinstance(recorded, dict):
        out = {"recorded": recorded, "replayed": {"burstlab": burstlab.__version__, "host_measurements": False},
               **out}
    return out


def described_median_case(name: str, real: float, sim: float) -> Case:
    """Issue 36's rule for a cell the kernel has not collapsed in: the twin's median QCT within
    15 % of the real runs' median, not widened by their spread."""
    err = abs(sim - real) / real
    tol = TOLERANCE["qct_median_s"]
    return Case(name, "qct_median_s", real, sim, err, tol, err <= tol)


def median_onset_case(variant: str, cells: list[tuple[int, dict, dict]], limit_bytes: int,
                      cca: str | None) -> Case:
    """Issue 36's onset of the collapse: the first N whose median QCT exceeds 100 ms (the real
    runs' median; the twin's over all its queries), the same within one step of the N list."""
    cells = sorted(cells, key=lambda cell: cell[0])
    ns = [n for n, _, _ in cells]
    on_real = _onset_by({n: real["qct_median_s"]["median"] for n, real, _ in cells})
    on_sim = _onset_by({n: sim["qct_median_s"] for n, _, sim in cells})
    steps, ok = onset_steps(on_real, on_sim, ns)
    return Case(f"incast-{_cca_tag(cca)}{variant}onset-{limit_bytes // 1024}KB", "onset_median_n",
                float(on_real or 0), float(on_sim or 0), float(steps), 1.0, ok)


def _onset_by(medians: dict[int, float]) -> int | None:
    return next((n for n in sorted(medians) if medians[n] > SLOW_QUERY_S), None)


def compare_described(*, repeat: int = 3, progress: Progress | None = None) -> dict:
    """The incast matrix (`INCAST_MATRIX`) on real Linux, compared with twins that take no
    measurement of its runs (`described`). The record it returns holds each run's host
    measurements too, so that `replay` can run the measured twins of the same cells."""
    plan = INCAST_MATRIX
    cells = [(cca, limit, variant, n) for variant in plan["incast_variants"] for limit in plan["limits"]
             for cca in plan["ccas"] for n in plan["incast_n"]]
    detail: dict[str, dict] = {}
    loads = []
    for i, (cca, limit, (tag, rto_min, quickack), n) in enumerate(cells):
        if progress is not None:
            progress(i, len(cells), f"incast-{_cca_tag(cca)}{tag}{n}-{limit // 1024}KB")
        loads.append(os.getloadavg()[0])
        real = incast(n, limit, queries=plan["queries"], burst_bytes=BURST_BYTES, rto_min=rto_min,
                      quickack=quickack, cca=cca, repeat=repeat)
        name, entry = incast_entry(real)
        detail[name] = entry
    loads.append(os.getloadavg()[0])
    result = described(detail, kernel=os.uname().release)
    recorded = {"date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "kernel": os.uname().release, "cpus": os.cpu_count(), "burstlab": burstlab.__version__,
                "quick": False, "repeat": repeat, "matrix": "incast",
                "load": [round(min(loads), 1), round(max(loads), 1)], "sched": sched_policy()}
    return {"recorded": recorded, **result}


def sched_policy() -> str:
    """How this process is scheduled, for a record's header: a real side run under a real-time
    policy (`chrt -f 20 burstlab validate ...`) keeps its hosts' timing on a loaded machine, so
    a record says which it had."""
    names = {os.SCHED_OTHER: "SCHED_OTHER", os.SCHED_FIFO: "SCHED_FIFO", os.SCHED_RR: "SCHED_RR",
             os.SCHED_BATCH: "SCHED_BATCH", os.SCHED_IDLE: "SCHED_IDLE"}
    policy = os.sched_getscheduler(0)
    name = names.get(policy, f"policy {policy}")
    if policy in (os.SCHED_FIFO, os.SCHED_RR):
        name += f" {os.sched_getparam(0).sched_priority}"
    return name


def host_softirq_loads(result: dict) -> dict[str, dict[str, float]]:
    """Per tbf rate (and MTU, where not the default), per single-flow case: the median over its
    real runs of the busiest CPU's softirq share of the transfer (`host_softirq_load`,
    host_cpu.py). Cases whose record has none (the oldest records) are left out."""
    out: dict[str, dict[str, float]] = {}
    for name, entry in result.get("detail", {}).items():
        setup, real = entry.get("setup", {}), entry.get("real", {})
        load = real.get("host_softirq_load") if isinstance(real, dict) else None
        if setup.get("kind") == "single" and isinstance(load, dict) and _number(load.get("median")):
            mtu = setup.get("mtu") or DEFAULT_MTU
            key = str(setup.get("rate")) + (f" at MTU {mtu}" if mtu != DEFAULT_MTU else "")
            out.setdefault(key, {})[name] = load["median"]
    return out


def incast_srtts(result: dict) -> dict[str, tuple[float, float]]:
    """Per incast case: the SRTT its connections started their responses on (µs, median over
    the queries), the real runs' median and the twin's. Where the kernel's is the longer, more
    of its loss probes are armed a jiffy later (at HZ = 250 an SRTT above 1 ms arms the probe
    for two jiffies, not one). Cases whose record has no real value (the oldest) are left out."""
    out: dict[str, tuple[float, float]] = {}
    for name, entry in result.get("detail", {}).items():
        setup, real, sim = entry.get("setup", {}), entry.get("real", {}), entry.get("sim", {})
        if setup.get("kind") != "incast" or not isinstance(real, dict) or not isinstance(sim, dict):
            continue
        value = real.get("srtt_at_response_us")
        if isinstance(value, dict) and _number(value.get("median")) and _number(sim.get("srtt_at_response_us")):
            out[name] = (value["median"], sim["srtt_at_response_us"])
    return out


def record_json(result: dict) -> str:
    """A result of `compare` or `replay` as the record `--detail` writes: JSON with one case per
    line, so that two records diff case by case."""
    def block(items: list[str], open_: str, close: str) -> str:
        return open_ + "\n" + ",\n".join("  " + i for i in items) + "\n " + close
    parts = []
    for key, value in result.items():
        if key == "cases":
            body = block([json.dumps(c) for c in value], "[", "]")
        elif key == "detail":
            body = block([f"{json.dumps(name)}: {json.dumps(entry)}" for name, entry in value.items()], "{", "}")
        else:
            body = json.dumps(value)
        parts.append(f" {json.dumps(key)}: {body}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def replay(record: dict, *, progress: Progress | None = None) -> dict:
    """Run the twins of a recorded comparison again (`burstlab validate --detail`'s file) and
    compare them with the real runs it recorded: no root, no namespaces, and the same result for
    the same simulator, so a change to the simulator can be checked against real Linux it was
    never run beside. Returns `{"cases": [...], "detail": ...}` as `compare` does, the real side
    and the twins' inputs as recorded and the twins' values new. A record that cannot be
    replayed raises :class:`ReplayError` naming the case and the field."""
    detail = _record_detail(record)
    # Every case is checked before any twin runs: a bad record costs nothing and says where.
    checked = [(name, *_replayable(name, entry)) for name, entry in detail.items()]
    cases: list[Case] = []
    raw: dict[str, dict] = {}
    # Each incast variant's onset is over all its cells and follows the last of them.
    cells: dict[tuple[str, str, int], list[tuple[int, dict, dict]]] = {}
    last_cell: dict[str, tuple[str, str, int]] = {}
    # Records made before the twins were told the hosts' kernel have it in `recorded`.
    recorded = record.get("recorded")
    kernel = recorded.get("kernel") if isinstance(recorded, dict) else None
    for i, (name, setup, real, host) in enumerate(checked):
        if progress is not None:
            progress(i, len(checked), name)
        if isinstance(host, list):
            host = [{"kernel": kernel, **h} for h in host]
        else:
            host = {"kernel": kernel, **host}
        try:
            sim = twin_incast(setup, host) if setup["kind"] == "incast" else twin_single(setup, host)
        except (BurstlabError, ValueError, RuntimeError) as e:
            raise ReplayError(f'record: case "{name}": its twin cannot run: {e}') from None
        if setup["kind"] == "incast":
            key = (setup.get("cca") or "cubic", setup["variant"], setup["limit_bytes"])
            cells.setdefault(key, []).append((setup["n"], real, sim))
            last_cell = {k: v for k, v in last_cell.items() if v != key} | {name: key}
            cases += incast_cases(name, real, sim)
            skipped = incast_not_compared(real, sim)
        else:
            cases += single_cases(name, real, sim)
            skipped = single_not_compared(real, sim)
        raw[name] = {**detail[name], "sim": sim, "not_compared": skipped}
    # After the last case of each variant's last cell (a cell has several metrics).
    last_of = {c.name: i for i, c in enumerate(cases) if c.name in last_cell}
    ordered: list[Case] = []
    for i, c in enumerate(cases):
        ordered.append(c)
        if last_of.get(c.name) == i:
            cca, variant, limit = last_cell[c.name]
            ordered.append(onset_case(variant, cells[cca, variant, limit], limit, cca))
    cases = ordered
    out = {"cases": [c.as_json() for c in cases], "detail": raw}
    if isinstance(record.get("recorded"), dict):
        out = {"recorded": record["recorded"], "replayed": {"burstlab": burstlab.__version__}, **out}
    return out


def _number(v: object) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _numbers(v: object, *, empty: bool = False) -> bool:
    return isinstance(v, list) and (empty or bool(v)) and all(_number(x) for x in v)


def _count(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v > 0


def _buffers(v: object) -> bool:
    return v is None or (isinstance(v, dict) and all(_numbers(v.get(k)) for k in ("tcp_rmem", "tcp_wmem", "rmem_max"))
                         and len(v["tcp_rmem"]) == 3 and len(v["tcp_wmem"]) == 3)


def _ratio(v: object) -> bool:
    return v is None or (isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 255)


def _kernel(v: object) -> bool:
    return v is None or isinstance(v, str)


def _latency(v: object) -> bool:
    return _number(v) or _numbers(v)


def _stalls(v: object) -> bool:
    return isinstance(v, list) and all(isinstance(s, list) and len(s) == 2 and all(_number(x) for x in s) for s in v)


#: Per kind of case: each set-up field, what its value must be, and what to say if it is not.
_SETUP_FIELDS = {
    "single": {"cca": (lambda v: isinstance(v, str) and bool(v), "a congestion control's name"),
               "limit_bytes": (_count, "the tbf limit in bytes, above 0"),
               "rate": (lambda v: isinstance(v, str) and bool(v), 'the tbf rate as tc writes it ("1gbit")'),
               "size_bytes": (_count, "the flow's size in bytes, above 0"),
               "mtu": (lambda v: v is None or (_count(v) and MIN_MTU <= v <= MAX_MTU),
                       f"the links' MTU in bytes, {MIN_MTU}-{MAX_MTU} (or absent: {DEFAULT_MTU})")},
    "incast": {"n": (_count, "the number of senders, above 0"),
               "limit_bytes": (_count, "the tbf limit in bytes, above 0"),
               "variant": (lambda v: isinstance(v, str), 'the variant\'s tag ("" or "rtomin5ms-")'),
               "rto_min": (lambda v: v is None or (_number(v) and v > 0), "null or the route's rto_min in seconds"),
               "quickack": (lambda v: isinstance(v, bool), "true or false"),
               "queries": (_count, "queries per run, above 0"),
               "cca": (lambda v: v is None or (isinstance(v, str) and bool(v)),
                       "a congestion control's name (or absent: cubic)")},
}
#: The metrics a case's real summary needs.
_REAL_METRICS = {"single": ("rate_fraction", "fct_s", "retrans_segs"), "incast": ("qct_median_s", "frac_over_100ms")}
#: What the twin of each kind was given, per real run, and what each value must be.
_HOST_FIELDS = {
    "single": {"read_gap_us": (lambda v: _numbers(v) and min(v) >= 0, "the reader's gap per real run, in µs, 0 or more"),
               "host_stalls_s": (lambda v: isinstance(v, list) and all(_stalls(x) for x in v),
                                 "per real run a list of [start, length] stalls in seconds"),
               "buffers": (_buffers, "null or the hosts' tcp_rmem, tcp_wmem (3 numbers each) and rmem_max")},
    "incast": {"serve_time_us": (_latency, "a time in µs or a non-empty list of them"),
               "read_wait_us": (_latency, "a time in µs or a non-empty list of them"),
               "handshake_rtt_us": (lambda v: _numbers(v, empty=True), "a list of handshake times in µs"),
               "buffers": (_buffers, "null or the hosts' tcp_rmem, tcp_wmem (3 numbers each) and rmem_max")},
}
#: Host fields a twin takes where its record has them (older records were made without).
_OPTIONAL_HOST_FIELDS = {
    "single": {"read_wait_us": (lambda v: _numbers(v) and min(v) >= 0,
                                "the reader's wait for arrived data per real run, in µs, 0 or more"),
               "read_hold_us": (lambda v: isinstance(v, list)
                                and all(_numbers(x, empty=True) and min(x, default=0) >= 0 for x in v),
                                "per real run the reader's holds of the socket in µs, 0 or more "
                                "(a list, possibly empty)"),
               "scaling_ratio": (lambda v: isinstance(v, list) and all(_ratio(x) for x in v),
                                 "per real run the receiver's scaling ratio, 1-255 or null"),
               "first_read_us": (lambda v: _numbers(v) and min(v) >= 0,
                                 "per real run how late the first read came, in µs, 0 or more"),
               "kernel": (_kernel, 'the hosts\' kernel release ("6.18.44") or null')},
    "incast": {"tbf_watchdog_us": (lambda v: _numbers(v, empty=True) and min(v, default=0) >= 0,
                                   "the tbf watchdog's lateness quantiles in µs, 0 or more (or [])"),
               "scaling_ratio": (_ratio, "the aggregator's scaling ratio, 1-255 or null"),
               "kernel": (_kernel, 'the hosts\' kernel release ("6.18.44") or null')},
}


def real_read_wait_us(real: dict) -> int | None:
    """The median of the real runs' mean read waits (µs), for records that kept no wait per run;
    None in records older still, which measured no waits."""
    wait = real.get("read_wait_us")
    return round(wait["median"]) if isinstance(wait, dict) and _number(wait.get("median")) else None


def _record_detail(record: object) -> dict:
    """The record's cases, after checking the record's own verdicts (`cases`) if it has them."""
    detail = record.get("detail") if isinstance(record, dict) else None
    if not isinstance(detail, dict) or not detail:
        raise ReplayError('record: expected the JSON object `burstlab validate --detail` writes, '
                          'with a non-empty "detail" object of cases')
    verdicts = record.get("cases", [])
    if not isinstance(verdicts, list):
        raise ReplayError(f"record: cases = {_shown(verdicts)}: expected a list of the record's verdicts")
    for i, c in enumerate(verdicts):
        if not (isinstance(c, dict) and isinstance(c.get("name"), str) and isinstance(c.get("metric"), str)
                and _number(c.get("sim")) and isinstance(c.get("pass"), bool)):
            raise ReplayError(f"record: cases[{i}] = {_shown(c)}: expected a verdict with name, metric, sim and pass")
    return detail


def _shown(value: object) -> str:
    shown = json.dumps(value)
    return shown if len(shown) <= 60 else shown[:57] + "..."


def _replayable(name: str, entry: object) -> tuple[dict, dict, dict | list]:
    """The set-up, real summary and twin inputs of one recorded case, checked; for incast only
    the host fields its twin takes."""
    def fail(field: str, value: object, expected: str) -> ReplayError:
        return ReplayError(f'record: case "{name}": {field} = {_shown(value)}: expected {expected}')

    if not isinstance(entry, dict):
        raise fail("(case)", entry, "an object with setup, real and twin_host")
    setup = entry.get("setup")
    if not isinstance(setup, dict) or setup.get("kind") not in _SETUP_FIELDS:
        raise fail("setup", setup, 'an object with kind "single" or "incast" '
                   "(records written before burstlab could replay them have none)")
    kind = setup["kind"]
    for f, (ok, expected) in _SETUP_FIELDS[kind].items():
        if not ok(setup.get(f)):
            raise fail(f"setup.{f}", setup.get(f), expected)
    real = entry.get("real")
    for m in _REAL_METRICS[kind]:
        value = real.get(m) if isinstance(real, dict) else None
        if not isinstance(value, dict) or not all(_number(value.get(k)) for k in ("median", "min", "max", "mean")):
            raise fail(f"real.{m}", value, "the real runs' summary (median, min, max, mean)")
    host = entry.get("twin_host")
    hosts = host if kind == "incast" else [host]
    if not isinstance(hosts, list) or not hosts or not all(isinstance(h, dict) for h in hosts):
        raise fail("twin_host", host, "what the twin was given: " + ("a list, one object per real run"
                                                                     if kind == "incast" else "an object"))
    for i, h in enumerate(hosts):
        at = f"twin_host[{i}]" if kind == "incast" else "twin_host"
        for f, (ok, expected) in _HOST_FIELDS[kind].items():
            if not ok(h.get(f)):
                raise fail(f"{at}.{f}", h.get(f), expected)
        for f, (ok, expected) in _OPTIONAL_HOST_FIELDS[kind].items():
            if f in h and not ok(h[f]):
                raise fail(f"{at}.{f}", h[f], expected)
    if kind == "single":
        runs = len(host["read_gap_us"])
        if len(host["host_stalls_s"]) != runs:
            raise fail("twin_host.host_stalls_s", host["host_stalls_s"],
                       f"one list of stalls per real run ({runs}, as read_gap_us)")
        if "read_wait_us" not in host:
            wait = real_read_wait_us(real)
            host = {**host, "read_wait_us": host["read_gap_us"] if wait is None else [wait] * runs}
        elif len(host["read_wait_us"]) != runs:
            raise fail("twin_host.read_wait_us", host["read_wait_us"],
                       f"one wait per real run ({runs}, as read_gap_us)")
        if "read_hold_us" in host and len(host["read_hold_us"]) != runs:
            raise fail("twin_host.read_hold_us", host["read_hold_us"],
                       f"one list of holds per real run ({runs}, as read_gap_us)")
        for f, what in (("scaling_ratio", "ratio"), ("first_read_us", "first read")):
            if f in host and len(host[f]) != runs:
                raise fail(f"twin_host.{f}", host[f], f"one {what} per real run ({runs}, as read_gap_us)")
        return setup, real, host
    taken = (*_HOST_FIELDS["incast"], *_OPTIONAL_HOST_FIELDS["incast"])
    return setup, real, [{f: h[f] for f in taken if f in h} for h in hosts]
