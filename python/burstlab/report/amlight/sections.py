"""The AmLight study's sections: FCT against burst duration at the seed's experiment A start,
FCT by burst start and duration, retransmissions beside the seed's table, the seed-to-seed
spread of each repeated point, and which runs the time series show."""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from burstlab.report.amlight import figures, seed
from burstlab.report.amlight.findings import HURT, RTT_209MS, RTT_301MS, baseline_fct
from burstlab.report.amlight.runs import BURST_DURATION, BURST_START, Run
from burstlab.report.data import RunData, SweepData
from burstlab.report.page import Section, Table
from burstlab.report.units import format_duration

__all__ = ["STUDY_SECTIONS", "fct_duration", "fct_heatmap", "retransmissions", "seed_spread", "chosen_runs", "title",
           "groups"]

STUDY_SECTIONS = {
    "fct-duration": "FCT vs burst duration",
    "fct-heatmap": "FCT by burst start and duration",
    "retransmissions": "Retransmissions per burst start",
    "seed-spread": "Seed-to-seed spread per point",
}

#: The seed's experiment A burst start per RTT (ms): 1.5 s at 209 ms, 3 s at 301 ms.
_START_A = {209: 1.5, 301: 3.0}
#: Time series shown: at most this many runs.
_MAX_TIMELINES = 4


def groups(runs: Sequence[Run]) -> dict[tuple[str, float, float, float], list[Run]]:
    """Burst runs by (CCA, RTT, start, duration)."""
    out: dict[tuple[str, float, float, float], list[Run]] = defaultdict(list)
    for r in runs:
        if not r.is_baseline:
            out[(r.cca, r.rtt_s, r.start_s, r.duration_s)].append(r)
    return dict(out)


def _ms(rtt_s: float) -> int:
    return round(rtt_s * 1e3)


def fct_duration(data: SweepData, runs: Sequence[Run]) -> Section:
    sec = Section("fct-duration", STUDY_SECTIONS["fct-duration"])
    if not data.swept(BURST_DURATION):
        sec.missing = "burst[0].duration is not swept (add --grid 'burst[0].duration=1ns,25ms,100ms,1000ms')."
        return sec
    by = groups(runs)
    panels = []
    for rtt in sorted({r.rtt_s for r in runs}):
        starts = sorted({s for (_, t, s, _) in by if t == rtt})
        if not starts:
            continue
        start = _START_A.get(_ms(rtt), starts[0])
        start = start if start in starts else starts[0]
        lines: dict[str, list[tuple[float, float]]] = defaultdict(list)
        for (c, t, s, d), g in sorted(by.items()):
            if t == rtt and s == start:
                lines[c].append((d, statistics.median(r.fct_s for r in g)))
        baselines = {c: statistics.median(r.fct_s for r in runs if r.is_baseline and r.cca == c and r.rtt_s == rtt)
                     for c in {r.cca for r in runs if r.is_baseline and r.rtt_s == rtt}}
        panels.append({"title": f"RTT {_ms(rtt)} ms, burst at {start:g} s", "rtt_s": rtt,
                       "lines": dict(lines), "baselines": {c: f for c, f in baselines.items() if not math.isinf(f)}})
    if not panels:
        sec.missing = "no run with a burst."
        return sec
    stop_s = float(data.scenario["stop_s"])
    sec.charts = [figures.fct_vs_duration(panels, stop_s)]
    sec.note = ("Median FCT over repetitions. A triangle at the top marks a transfer unfinished at the "
                f"scenario's stop ({stop_s:g} s). The burst start shown is the seed's experiment A (1.5 s "
                "at 209 ms, 3 s at 301 ms) when swept.")
    return sec


def fct_heatmap(data: SweepData, runs: Sequence[Run]) -> Section:
    sec = Section("fct-heatmap", STUDY_SECTIONS["fct-heatmap"])
    if not (data.swept(BURST_START) and data.swept(BURST_DURATION)):
        sec.missing = "needs both burst[0].start and burst[0].duration swept."
        return sec
    by = groups(runs)
    maps = []
    for (c, rtt) in sorted({(r.cca, r.rtt_s) for r in runs if not r.is_baseline}):
        fct = {(s, d): statistics.median(r.fct_s for r in g)
               for (gc, t, s, d), g in by.items() if gc == c and t == rtt}
        maps.append({"title": f"{c}, RTT {_ms(rtt)} ms", "starts": sorted({s for s, _ in fct}),
                     "durations": sorted({d for _, d in fct}), "fct": fct})
    if not maps:
        sec.missing = "no run with a burst."
        return sec
    sec.charts = [figures.fct_heatmaps(maps)]
    sec.note = "Median FCT in seconds; DNF: not finished by the scenario's stop."
    return sec


def retransmissions(runs: Sequence[Run]) -> Section:
    sec = Section("retransmissions", STUDY_SECTIONS["retransmissions"])
    by: dict[tuple[str, float, float], list[int]] = defaultdict(list)
    for r in runs:
        if not r.is_baseline:
            by[(r.cca, r.rtt_s, r.start_s)].append(r.retransmits)
    if not by:
        sec.missing = "no run with a burst."
        return sec
    median = {k: float(np.median(v)) for k, v in by.items()}
    rows = []
    for (c, rtt, s), retx in sorted(by.items()):
        theirs = seed.RETRANSMITS.get((c, _ms(rtt), s))
        rows.append([c, _ms(rtt), s, len(retx), median[(c, rtt, s)], float(np.percentile(retx, 95)),
                     theirs[0] if theirs else None, theirs[1] if theirs else None,
                     _ratio(median[(c, rtt, s)], theirs[0] if theirs else None),
                     *_bbr_over_htcp(c, rtt, s, median)])
    sec.table = Table(["CCA", "RTT (ms)", "burst start (s)", "runs", "median", "p95", "seed median", "seed p95",
                       "median / seed", "BBR / H-TCP", "seed BBR / H-TCP"],
                      rows, [False] + [True] * 10,
                      ["cca", "rtt_ms", "start_s", "runs", "median", "p95", "seed_median", "seed_p95",
                       "median_over_seed", "bbr_over_htcp", "seed_bbr_over_htcp"])
    sec.note = ("Retransmitted segments of the transfer per burst start, median and 95th percentile "
                "(linear interpolation) over every burst duration and repetition at that start, as the "
                "seed pooled them; the seed's columns are filled where its table has the same CCA, RTT "
                "and start (209/301 ms, 2–7.5 s). median / seed: our median over the seed's (the error "
                "per mark); BBR / H-TCP: on BBR's rows, BBR's median over H-TCP's at the same RTT and "
                "start, ours and the seed's (the seed: 6–10× on average).")
    return sec


def seed_spread(runs: Sequence[Run]) -> Section:
    """Each burst point run on two or more seeds: its median FCT increase and the smallest and
    largest, and whether its seeds fall on both sides of the hurt line."""
    sec = Section("seed-spread", STUDY_SECTIONS["seed-spread"])
    rows = []
    for (c, rtt, s, d), g in sorted(groups(runs).items()):
        base = baseline_fct(runs, c, rtt)
        if len(g) < 2 or base is None:
            continue
        inc = sorted(r.fct_s / base - 1 for r in g)
        rows.append([c, _ms(rtt), s, format_duration(d), len(g), _pct_or_none(statistics.median(inc)),
                     _pct_or_none(inc[0]), _pct_or_none(inc[-1]),
                     "yes" if inc[0] < HURT <= inc[-1] else "no"])
    if not rows:
        sec.missing = ("no point was run on two or more seeds (the demo runs three per point; the full study's "
                       "seeds/ part three at the points judged one at a time).")
        return sec
    sec.table = Table(["CCA", "RTT (ms)", "burst start (s)", "burst", "runs", "median increase (%)",
                       "smallest (%)", "largest (%)", f"seeds both sides of {HURT:.0%}"],
                      rows, [False, True, True, False, True, True, True, True, False],
                      ["cca", "rtt_ms", "start_s", "duration", "runs", "increase_pct", "increase_min_pct",
                       "increase_max_pct", "two_sided"])
    sec.note = (f"FCT increase over the CCA's no-burst baseline, median and extremes over the point's seeds. "
                f"\"yes\" in the last column: some seeds hurt (≥ {HURT:.0%}) and some do not, so one seed alone "
                "would give either verdict there; the findings read the median.")
    return sec


def _pct_or_none(x: float) -> float | None:
    """``x`` as a percentage rounded to 0.1, ``None`` for an unfinished transfer."""
    return None if math.isinf(x) else round(x * 100, 1)


def _ratio(a: float | None, b: float | None) -> float | None:
    """``a / b`` rounded to 0.01, or ``None`` when either is missing or ``b`` is 0."""
    return None if a is None or not b else round(a / b, 2)


def _bbr_over_htcp(cca: str, rtt: float, start: float,
                   median: dict[tuple[str, float, float], float]) -> tuple[float | None, float | None]:
    """On a BBR row: BBR's median retransmits over H-TCP's at the same RTT and start, ours and
    the seed's; ``None`` elsewhere or where a side is missing or 0."""
    if cca != "bbr":
        return None, None
    ours = _ratio(median.get(("bbr", rtt, start)), median.get(("htcp", rtt, start)))
    b, h = (seed.RETRANSMITS.get((c, _ms(rtt), start)) for c in ("bbr", "htcp"))
    return ours, _ratio(b[0] if b else None, h[0] if h else None)


def chosen_runs(data: SweepData, runs: Sequence[Run]) -> list[RunData]:
    """Up to four runs worth looking at: at the study RTT (209 ms, else 301 ms, else the first),
    per CCA the baseline and the burst run with the longest FCT."""
    rtts = sorted({r.rtt_s for r in runs})
    if not rtts:
        return []
    rtt = next((t for want in (RTT_209MS, RTT_301MS) for t in rtts if math.isclose(t, want)), rtts[0])
    chosen = []
    for c in sorted({r.cca for r in runs}):
        mine = [r for r in runs if r.cca == c and math.isclose(r.rtt_s, rtt)]
        base = [r for r in mine if r.is_baseline]
        burst = [r for r in mine if not r.is_baseline]
        if base:
            chosen.append(base[0].run_id)
        if burst:
            chosen.append(max(burst, key=lambda r: (r.fct_s, r.run_id)).run_id)
    by_id = {r.run_id: r for r in data.runs}
    return [by_id[i] for i in chosen[:_MAX_TIMELINES]]


def title(runs: Sequence[Run]) -> dict[int, str]:
    """Per run id: ``run 6: htcp, 209 ms, 2 s burst at 1.5 s · FCT 38.5 s, 937 retx``."""
    out = {}
    for r in runs:
        burst = "no burst" if r.is_baseline else f"{format_duration(r.duration_s)} burst at {r.start_s:g} s"
        fct = "unfinished" if math.isinf(r.fct_s) else f"FCT {r.fct_s:.1f} s"
        out[r.run_id] = f"run {r.run_id}: {r.cca}, {_ms(r.rtt_s)} ms, {burst} · {fct}, {r.retransmits:,} retx"
    return out
