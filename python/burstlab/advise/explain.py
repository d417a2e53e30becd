"""What limited an iperf3 transfer, phase by phase, from the sender's intervals.

Each interval gets one limit, read from what Linux reports through `TCP_INFO`:

* **slow start**: no loss has cut the window yet, and the congestion window still grows by half or more per
  interval;
* **loss**: retransmits in the interval: the congestion window after loss holds the rate;
* **pacing**: a rate cap was asked for (`--fq-rate`, `-b`, or the host's fq `maxrate` given as
  a flag) and the throughput sits at it;
* **receive window**: the receiver's advertised window (`snd_wnd`, iperf3 >= 3.10; else the
  `tcp_rmem` flag) is below the congestion window, so the sender cannot use its cwnd;
* **path**: the throughput is at the path's rate (`--rate`): the bottleneck is full;
* **send buffer**: none of the above, yet the throughput is below the path: Linux grows the
  cwnd only while it limits (`tcp_is_cwnd_limited()`, net/ipv4/tcp_cong.c), so a flat cwnd
  with no loss, a window the receiver keeps open and room on the path leaves the sender's own
  socket buffer (`tcp_wmem`) or application;
* **receiving host**: as send buffer, but the receiver's CPU was busy (>= 90 %) while the
  window it offered stayed below the congestion window some of the time.

Consecutive intervals with one limit form a phase. Loss episodes are runs of intervals with
retransmits.
"""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass, field

from burstlab.advise.iperf3 import Interval, Iperf3Run

SLOW_START = "slow start"
LOSS = "congestion window after loss"
PACING = "pacing or maxrate"
RECEIVE_WINDOW = "receive window"
PATH = "path rate"
SEND_BUFFER = "send buffer"
RECEIVING_HOST = "receiving host"
LIMITS = (SLOW_START, LOSS, PACING, RECEIVE_WINDOW, PATH, SEND_BUFFER, RECEIVING_HOST)

#: Throughput at or above this share of the path rate counts as a full path.
FULL_PATH = 0.90
#: Throughput within this share of a requested cap counts as held at it.
AT_CAP = 0.10
#: Slow start doubles the cwnd per RTT; over an interval of many RTTs it at least grows by this.
SLOW_START_GROWTH = 1.5
#: Retransmits of this share of an interval's segments limit it even under a flat cwnd.
LOSS_SHARE = 0.01
#: A receiving host this busy (per cent of one CPU, iperf3's `remote_total`) can be the limit.
BUSY_CPU = 90.0
#: A window turned round this many RTTs or more is held by the receiving host, not the path.
SLOW_TURNAROUND = 1.5


@dataclass(frozen=True)
class Settings:
    """What the user says about the hosts and path (flags); None: not known."""

    rate_bps: float | None = None
    tcp_rmem: tuple[int, int, int] | None = None
    tcp_wmem: tuple[int, int, int] | None = None
    maxrate_bps: float | None = None


@dataclass
class Phase:
    limit: str
    start_s: float
    end_s: float
    mean_bps: float
    retransmits: int
    evidence: str


@dataclass
class LossEpisode:
    start_s: float
    end_s: float
    retransmits: int
    cwnd_before_bytes: int | None
    cwnd_min_bytes: int | None


@dataclass
class Explanation:
    limit: str
    summary: str
    phases: list[Phase]
    losses: list[LossEpisode]
    throughput_bps: float
    notes: list[str] = field(default_factory=list)

    def as_json(self) -> dict:
        return asdict(self)


def classify(run: Iperf3Run, settings: Settings = Settings()) -> list[str]:
    """One limit per interval of `run` (see the module's list)."""
    limits: list[str] = []
    lost = False
    cap = _cap_bps(run, settings)
    peak = 0
    for i, iv in enumerate(run.intervals):
        if _loss_limits(iv, peak, run):
            lost = True
            limits.append(LOSS)
            continue
        peak = max(peak, iv.cwnd_bytes or 0)
        prev = run.intervals[i - 1].cwnd_bytes if i else None
        if not lost and iv.cwnd_bytes and (prev is None or iv.cwnd_bytes >= SLOW_START_GROWTH * prev) \
                and (settings.rate_bps is None or iv.bits_per_second < FULL_PATH * settings.rate_bps):
            limits.append(SLOW_START)
            continue
        if cap and abs(iv.bits_per_second - cap) <= AT_CAP * cap:
            limits.append(PACING)
            continue
        rwnd = _rwnd(iv, run, settings)
        if settings.rate_bps and iv.bits_per_second >= FULL_PATH * settings.rate_bps:
            limits.append(PATH)
        elif rwnd is not None and iv.cwnd_bytes is not None and rwnd < iv.cwnd_bytes:
            limits.append(RECEIVE_WINDOW)
        elif (run.receiver_cpu_percent or 0) >= BUSY_CPU:
            limits.append(RECEIVING_HOST)
        else:
            limits.append(SEND_BUFFER)
    return limits


def _loss_limits(iv: Interval, peak_cwnd: int, run: Iperf3Run) -> bool:
    """Retransmits limit an interval when they cut the cwnd (below 90 % of its peak so far) or
    are 1 % of its segments or more. A few retransmits under a flat cwnd are tail-loss probes
    or reordering that Linux undid, not a limit."""
    if not iv.retransmits:
        return False
    if iv.cwnd_bytes is not None and iv.cwnd_bytes < 0.9 * peak_cwnd:
        return True
    return iv.retransmits >= LOSS_SHARE * iv.bytes / mss_of(run)


def mss_of(run: Iperf3Run) -> int:
    """The segment size: iperf3's `tcp_mss_default`, else the path MTU less 52 bytes of IP and
    TCP headers with timestamps, else 1448."""
    return run.mss or (run.pmtu - 52 if run.pmtu else 1448)


def explain(run: Iperf3Run, settings: Settings = Settings()) -> Explanation:
    """The phases of `run`, its loss episodes and the limit that held it longest."""
    limits = classify(run, settings)
    phases: list[Phase] = []
    group: list[Interval] = []
    for iv, limit in zip(run.intervals, limits):
        if group and limit != phases[-1].limit:
            group = []
        if not group:
            phases.append(Phase(limit, iv.start_s, iv.end_s, 0.0, 0, ""))
        group.append(iv)
        _fill(phases[-1], group, run, settings)
    losses = loss_episodes(run.intervals)
    # The limit of the most time, slow start aside unless it is all there is.
    spans: dict[str, float] = {}
    for p in phases:
        spans[p.limit] = spans.get(p.limit, 0.0) + p.end_s - p.start_s
    steady = {k: v for k, v in spans.items() if k != SLOW_START} or spans
    limit = max(steady, key=steady.get)
    top = next(p for p in sorted(phases, key=lambda p: p.start_s - p.end_s) if p.limit == limit)
    summary = f"{_headline(limit)}: {top.evidence}"
    notes = list(run.warnings)
    if not any(iv.snd_wnd_bytes is not None for iv in run.intervals) and settings.tcp_rmem is None:
        notes.append(f"{run.version} reports no snd_wnd (iperf3 < 3.10) and no --tcp-rmem was given: "
                     "a receive-window limit cannot be told from a send-buffer one")
    turn = window_turnaround(run, limits)
    if turn is not None and turn[0] > SLOW_TURNAROUND * turn[1]:
        notes.append(f"the receiver turned its window round every {fmt_time_us(turn[0])} (the window offered over "
                     f"the rate) against an RTT of {fmt_time_us(turn[1])}: its application's reads, not the path, "
                     "set the pace; the twin's receiver reads at once")
    if settings.rate_bps is None:
        notes.append("no --rate given: a full path cannot be told from a limit at the hosts")
    elif run.throughput_bps > (1 + AT_CAP) * settings.rate_bps:
        notes.append(f"the run's {fmt_rate(run.throughput_bps)} is above --rate {fmt_rate(settings.rate_bps)}: "
                     "the rate given is not this path's bottleneck")
    return Explanation(limit, summary, phases, losses, run.throughput_bps, notes)


def window_turnaround(run: Iperf3Run, limits: list[str]) -> tuple[float, float] | None:
    """The median time (µs) the receiver took to hand back its window, `snd_wnd` x 8 over the
    interval's rate, and the median RTT, over the intervals the receive window limited; None
    without snd_wnd (iperf3 < 3.10) or such intervals."""
    pairs = [(iv.snd_wnd_bytes * 8 / iv.bits_per_second * 1e6, iv.rtt_us) for iv, limit in zip(run.intervals, limits)
             if limit == RECEIVE_WINDOW and iv.snd_wnd_bytes and iv.bits_per_second > 0 and iv.rtt_us]
    if not pairs:
        return None
    return statistics.median(p[0] for p in pairs), statistics.median(p[1] for p in pairs)


def loss_episodes(intervals: list[Interval]) -> list[LossEpisode]:
    """Runs of consecutive intervals with retransmits, with the cwnd before and at its least."""
    episodes: list[LossEpisode] = []
    for i, iv in enumerate(intervals):
        if not iv.retransmits:
            continue
        if episodes and episodes[-1].end_s == iv.start_s:
            e = episodes[-1]
            e.end_s, e.retransmits = iv.end_s, e.retransmits + iv.retransmits
            e.cwnd_min_bytes = _min(e.cwnd_min_bytes, iv.cwnd_bytes)
        else:
            before = intervals[i - 1].cwnd_bytes if i else None
            episodes.append(LossEpisode(iv.start_s, iv.end_s, iv.retransmits, before, iv.cwnd_bytes))
    return episodes


def _min(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else min(a, b)


def _cap_bps(run: Iperf3Run, settings: Settings) -> float | None:
    caps = [c for c in (run.fq_rate_bps, run.target_bitrate_bps, settings.maxrate_bps) if c]
    return min(caps) * max(1, run.num_streams if run.fq_rate_bps else 1) if caps else None


def _rwnd(iv: Interval, run: Iperf3Run, settings: Settings) -> float | None:
    if iv.snd_wnd_bytes is not None:
        return iv.snd_wnd_bytes
    if settings.tcp_rmem is not None:
        # The window is at most about half the buffer (tcp_adv_win_scale = 1 before 6.6; the
        # measured len/truesize ratio since, near 229/256 on common NICs): the smaller bound.
        return settings.tcp_rmem[2] / 2 * run.num_streams
    return None


def _fill(phase: Phase, group: list[Interval], run: Iperf3Run, settings: Settings) -> None:
    phase.end_s = group[-1].end_s
    span = phase.end_s - phase.start_s
    phase.mean_bps = sum(iv.bytes for iv in group) * 8 / span if span > 0 else 0.0
    phase.retransmits = sum(iv.retransmits or 0 for iv in group)
    phase.evidence = _evidence(phase, group, run, settings)


def _evidence(phase: Phase, group: list[Interval], run: Iperf3Run, settings: Settings) -> str:
    rate = fmt_rate(phase.mean_bps)
    cwnds = [iv.cwnd_bytes for iv in group if iv.cwnd_bytes is not None]
    wnds = [iv.snd_wnd_bytes for iv in group if iv.snd_wnd_bytes is not None]
    rtts = [iv.rtt_us for iv in group if iv.rtt_us is not None]
    rtt = f", RTT {fmt_time_us(sum(rtts) / len(rtts))}" if rtts else ""
    path = f" of the path's {fmt_rate(settings.rate_bps)}" if settings.rate_bps else ""
    # Retransmits that did not limit (a flat cwnd): named, not blamed.
    loss = f"{phase.retransmits:,} retransmits under a steady cwnd" if phase.retransmits else "no loss"
    if phase.limit == SLOW_START:
        grown = f"cwnd grew to {fmt_bytes(cwnds[-1])}" if cwnds else "the window grew"
        return f"{rate}{path}; {grown}, {loss}{rtt}"
    if phase.limit == LOSS:
        low = f"; cwnd as low as {fmt_bytes(min(cwnds))}" if cwnds else ""
        offered = f" while the receiver offered {fmt_bytes(max(wnds))}" if wnds else ""
        return f"{phase.retransmits:,} retransmits, {rate}{path}{low}{offered}{rtt}"
    if phase.limit == PACING:
        return f"{rate}, at the requested cap of {fmt_rate(_cap_bps(run, settings) or 0)}"
    if phase.limit == RECEIVE_WINDOW:
        wnd = f"the receiver offered {fmt_bytes(min(wnds))}" if wnds else \
            f"tcp_rmem max {fmt_bytes(settings.tcp_rmem[2])} (flag) allows about {fmt_bytes(settings.tcp_rmem[2] // 2)}"
        cw = f" against a cwnd of {fmt_bytes(max(cwnds))}" if cwnds else ""
        return f"{wnd}{cw}: {rate}{path}, {loss}{rtt}"
    if phase.limit == PATH:
        return f"{rate}{path}: the bottleneck is full, {loss}{rtt}"
    cw = f"cwnd flat at {fmt_bytes(max(cwnds))}" if cwnds else "no cwnd reported"
    wnd = f", the receiver offered {fmt_bytes(min(wnds))}" if wnds else ""
    if phase.limit == RECEIVING_HOST:
        return f"{rate}{path}; {cw}{wnd}; receiver CPU {run.receiver_cpu_percent:.0f} %"
    buf = ""
    if settings.tcp_wmem is not None:
        buf = f"; tcp_wmem max {fmt_bytes(settings.tcp_wmem[2])} (flag)"
    elif run.sndbuf_bytes:
        buf = f"; the send socket started with {fmt_bytes(run.sndbuf_bytes)}"
    return f"{rate}{path}, {loss}; {cw}{wnd}: neither window was reached{buf}{rtt}"


def _headline(limit: str) -> str:
    return {
        SLOW_START: "Slow start: the transfer ended before the window opened",
        LOSS: "Limited by the congestion window after loss",
        PACING: "Limited by pacing (a rate cap)",
        RECEIVE_WINDOW: "Limited by the receiver's window (tcp_rmem)",
        PATH: "Limited by the path: the bottleneck ran full",
        SEND_BUFFER: "Limited by the sender's socket buffer (tcp_wmem) or application",
        RECEIVING_HOST: "Limited by the receiving host",
    }[limit]


def fmt_rate(bps: float | None) -> str:
    if not bps:
        return "0 bit/s"
    for unit, scale in (("Gbit/s", 1e9), ("Mbit/s", 1e6), ("kbit/s", 1e3)):
        if bps >= scale:
            return f"{bps / scale:.3g} {unit}"
    return f"{bps:.0f} bit/s"


def fmt_bytes(n: float) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n:.0f} B"


def fmt_time_us(us: float) -> str:
    return f"{us / 1000:.3g} ms" if us >= 1000 else f"{us:.0f} µs"
