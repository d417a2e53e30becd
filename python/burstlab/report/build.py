"""From a sweep directory to a :class:`Report`: the findings, the numbers behind them, and each
section's figure or table, or the reason the sweep cannot give it."""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from burstlab.report import figures, seed
from burstlab.report.data import BURST_DURATION, BURST_START, Run, SweepData, load
from burstlab.report.findings import RTT_209MS, RTT_301MS, Finding, check_all
from burstlab.report.units import format_duration

__all__ = ["Report", "Section", "build", "SECTIONS"]

#: Section id -> title, in page order.
SECTIONS = {
    "findings": "Findings: the AmLight study checked on this sweep",
    "fct-duration": "FCT vs burst duration",
    "fct-heatmap": "FCT by burst start and duration",
    "retransmissions": "Retransmissions per burst start",
    "timelines": "Throughput and cwnd over time",
    "queue": "Bottleneck queue over time",
}

#: The seed's experiment A burst start per RTT (ms): 1.5 s at 209 ms, 3 s at 301 ms.
_START_A = {209: 1.5, 301: 3.0}
#: Timelines shown: at most this many runs.
_MAX_TIMELINES = 4
#: Queue samples are reduced to the maximum per bin of this width (s).
_QUEUE_BIN_S = 0.01


@dataclass
class Section:
    key: str
    title: str
    svg: str | None = None  # a figure
    table: list[dict[str, Any]] | None = None  # rows of a table
    note: str = ""  # how to read it
    missing: str = ""  # why the sweep cannot give it (then svg and table are None)


@dataclass
class Report:
    data: SweepData
    findings: list[Finding]
    sections: dict[str, Section] = field(default_factory=dict)

    @property
    def baselines(self) -> list[dict[str, Any]]:
        groups: dict[tuple[str, float], list[float]] = defaultdict(list)
        for r in self.data.runs:
            if r.is_baseline:
                groups[(r.cca, r.rtt_s)].append(r.fct_s)
        return [{"cca": c, "rtt_s": rtt, "fct_s": _finite(statistics.median(f)), "runs": len(f)}
                for (c, rtt), f in sorted(groups.items())]

    @property
    def points(self) -> list[dict[str, Any]]:
        """Median FCT and retransmits per (CCA, RTT, burst start, burst duration)."""
        return [
            {"cca": c, "rtt_s": rtt, "start_s": s, "duration_s": d,
             "fct_s": _finite(statistics.median(r.fct_s for r in g)),
             "retransmits": statistics.median(r.retransmits for r in g), "runs": len(g)}
            for (c, rtt, s, d), g in sorted(_groups(self.data.runs).items())
        ]


def _finite(x: float) -> float | None:
    return None if math.isinf(x) else x


def _groups(runs: Sequence[Run]) -> dict[tuple[str, float, float, float], list[Run]]:
    out: dict[tuple[str, float, float, float], list[Run]] = defaultdict(list)
    for r in runs:
        if not r.is_baseline:
            out[(r.cca, r.rtt_s, r.start_s, r.duration_s)].append(r)
    return dict(out)


def _ms(rtt_s: float) -> int:
    return round(rtt_s * 1e3)


def build(out: str | Path) -> Report:
    """The report of the sweep in ``out``."""
    data = load(out)
    report = Report(data, check_all(data.runs))
    for key, make in (
        ("fct-duration", _fct_duration), ("fct-heatmap", _fct_heatmap),
        ("retransmissions", _retransmissions), ("timelines", _timelines), ("queue", _queue),
    ):
        section = Section(key, SECTIONS[key])
        make(data, section)
        report.sections[key] = section
    return report


def _fct_duration(data: SweepData, sec: Section) -> None:
    if not data.swept(BURST_DURATION):
        sec.missing = "burst[0].duration is not swept (add --grid 'burst[0].duration=1ns,25ms,100ms,1000ms')."
        return
    groups = _groups(data.runs)
    panels = []
    for rtt in sorted({r.rtt_s for r in data.runs}):
        starts = sorted({s for (_, t, s, _) in groups if t == rtt})
        if not starts:
            continue
        start = _START_A.get(_ms(rtt), starts[0])
        start = start if start in starts else starts[0]
        lines: dict[str, list[tuple[float, float]]] = defaultdict(list)
        for (c, t, s, d), g in sorted(groups.items()):
            if t == rtt and s == start:
                lines[c].append((d, statistics.median(r.fct_s for r in g)))
        baselines = {c: statistics.median(r.fct_s for r in data.runs if r.is_baseline and r.cca == c and r.rtt_s == rtt)
                     for c in {r.cca for r in data.runs if r.is_baseline and r.rtt_s == rtt}}
        panels.append({"title": f"RTT {_ms(rtt)} ms, burst at {start:g} s", "rtt_s": rtt,
                       "lines": dict(lines), "baselines": {c: f for c, f in baselines.items() if not math.isinf(f)}})
    if not panels:
        sec.missing = "no run with a burst."
        return
    sec.svg = figures.svg(figures.fct_vs_duration(panels, data.stop_s))
    sec.note = ("Median FCT over repetitions. Dotted: the same CCA without a burst. Dashed: the seed's "
                "7 s target; dash-dot: the next transfer window at 29 s (209 ms). A triangle at the top "
                f"marks a transfer unfinished at the scenario's stop ({data.stop_s:g} s). The burst start "
                "shown is the seed's experiment A (1.5 s at 209 ms, 3 s at 301 ms) when swept.")


def _fct_heatmap(data: SweepData, sec: Section) -> None:
    if not (data.swept(BURST_START) and data.swept(BURST_DURATION)):
        sec.missing = "needs both burst[0].start and burst[0].duration swept."
        return
    maps = []
    for (c, rtt) in sorted({(r.cca, r.rtt_s) for r in data.runs if not r.is_baseline}):
        fct = {(s, d): statistics.median(r.fct_s for r in g)
               for (gc, t, s, d), g in _groups(data.runs).items() if gc == c and t == rtt}
        maps.append({"title": f"{c}, RTT {_ms(rtt)} ms", "starts": sorted({s for s, _ in fct}),
                     "durations": sorted({d for _, d in fct}), "fct": fct})
    sec.svg = figures.svg(figures.fct_heatmap(maps))
    sec.note = "Median FCT in seconds; DNF: not finished by the scenario's stop."


def _retransmissions(data: SweepData, sec: Section) -> None:
    by: dict[tuple[str, float, float], list[int]] = defaultdict(list)
    for r in data.runs:
        if not r.is_baseline:
            by[(r.cca, r.rtt_s, r.start_s)].append(r.retransmits)
    if not by:
        sec.missing = "no run with a burst."
        return
    rows = []
    for (c, rtt, s), retx in sorted(by.items()):
        theirs = seed.RETRANSMITS.get((c, _ms(rtt), s))
        rows.append({
            "cca": c, "rtt_ms": _ms(rtt), "start_s": s, "runs": len(retx),
            "median": float(np.median(retx)), "p95": float(np.percentile(retx, 95)),
            "seed_median": theirs[0] if theirs else None, "seed_p95": theirs[1] if theirs else None,
        })
    sec.table = rows
    sec.note = ("Retransmitted segments of the transfer per burst start, median and 95th percentile "
                "(linear interpolation) over every burst duration and repetition at that start, as the "
                "seed pooled them; the seed's columns are filled where its table has the same CCA, RTT "
                "and start (209/301 ms, 2–7.5 s).")


def _chosen_runs(data: SweepData) -> list[Run]:
    """Up to four runs worth looking at: at the study RTT (209 ms, else the first), per CCA the
    baseline and the burst run with the longest FCT."""
    rtts = sorted({r.rtt_s for r in data.runs})
    if not rtts:
        return []
    rtt = RTT_209MS if any(math.isclose(t, RTT_209MS) for t in rtts) else (
        RTT_301MS if any(math.isclose(t, RTT_301MS) for t in rtts) else rtts[0])
    chosen = []
    for c in sorted({r.cca for r in data.runs}):
        mine = [r for r in data.runs if r.cca == c and math.isclose(r.rtt_s, rtt)]
        base = [r for r in mine if r.is_baseline]
        burst = [r for r in mine if not r.is_baseline]
        if base:
            chosen.append(base[0])
        if burst:
            chosen.append(max(burst, key=lambda r: (r.fct_s, r.run_id)))
    return chosen[:_MAX_TIMELINES]


def _title(r: Run) -> str:
    burst = "no burst" if r.is_baseline else f"{format_duration(r.duration_s)} burst at {r.start_s:g} s"
    fct = "unfinished" if math.isinf(r.fct_s) else f"FCT {r.fct_s:.1f} s"
    return f"run {r.run_id}: {r.cca}, {_ms(r.rtt_s)} ms, {burst}\n{fct}, {r.retransmits:,} retx"


def _burst(r: Run) -> tuple[float, float] | None:
    return None if r.is_baseline else (r.start_s, r.duration_s)


def _timelines(data: SweepData, sec: Section) -> None:
    chosen = _chosen_runs(data)
    # flow 0 is the scenario's first [[flow]], the transfer (bursts are numbered after flows).
    series = data.series("intervals", [r.run_id for r in chosen],
                         "t_end_s, bits_per_second, cwnd_bytes", "flow_id = 0")
    runs = [{"title": _title(r), "cca": r.cca, "burst": _burst(r),
             "t": [0.0, *series[r.run_id]["t_end_s"]],
             "gbps": [0.0, *(b / 1e9 for b in series[r.run_id]["bits_per_second"])],
             "cwnd_mib": [0.0, *(c / 2**20 for c in series[r.run_id]["cwnd_bytes"])]}
            for r in chosen if r.run_id in series]
    if not runs:
        sec.missing = "no intervals recorded for the transfer."
        return
    sec.svg = figures.svg(figures.timelines(runs))
    sec.note = ("iperf3-style 1 s intervals of the transfer (flow 0): for each CCA its no-burst run and "
                "its burst run with the longest FCT. Shaded: the burst.")


def _queue(data: SweepData, sec: Section) -> None:
    chosen = _chosen_runs(data)
    series = data.series(
        "queue", [r.run_id for r in chosen],
        f"floor(t_s / {_QUEUE_BIN_S}) * {_QUEUE_BIN_S} AS t, node || ' ' || port AS port, "
        "max(occupancy_bytes) AS occ, arg_max(occupancy_bytes, t_s) AS last", group_by="t, node, port")
    runs = []
    for r in chosen:
        s = series.get(r.run_id)
        end = r.fct_s if r.finished else data.stop_s
        common = {"title": _title(r), "cca": r.cca, "burst": _burst(r), "end": end}
        if not s:  # no packet ever waited: the queue stayed empty
            runs.append({**common, "port": "no queue built up", "t": [0.0, end], "mib": [0.0, 0.0]})
            continue
        peak: dict[str, int] = defaultdict(int)
        for p, occ in zip(s["port"], s["occ"]):
            peak[p] = max(peak[p], occ)
        port = max(peak, key=lambda p: peak[p])  # the bottleneck: the port that queued most
        pts = [(t, o, last) for t, p, o, last in zip(s["t"], s["port"], s["occ"], s["last"]) if p == port]
        t = [0.0] + [x for x, _, _ in pts] + [pts[-1][0] + _QUEUE_BIN_S]
        # The last bin's maximum holds until the bin ends; then the last recorded occupancy.
        mib = [0.0] + [o / 2**20 for _, o, _ in pts] + [pts[-1][2] / 2**20]
        runs.append({**common, "port": port, "t": t, "mib": mib})
    if not runs:
        sec.missing = "no run to show."
        return
    sec.svg = figures.svg(figures.queue_timelines(runs))
    sec.note = (f"Occupancy of the port that queued most (the bottleneck), maximum per {_QUEUE_BIN_S * 1e3:g} ms, "
                "for the same runs. Shaded: the burst.")
