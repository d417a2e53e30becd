"""What every sweep gets, whatever it sweeps: each outcome (completion time, TCP goodput,
retransmissions, peak queue) against each grid axis, and a table of every grid point.

A chart holds one outcome; its panels, one per swept axis, share its y-scale. In a panel the
x positions are the axis's values in grid order; a line joins the medians of the runs at each
value, one line per value of the other swept axis with the fewest values (when it has at most
:data:`MAX_LINES`), the remaining axes and the repetitions pooled; dots are single runs.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from matplotlib.ticker import MaxNLocator

from burstlab.report import figures as F
from burstlab.report.data import RunData, SweepData
from burstlab.report.page import Chart, Key, Panel, Section, Table
from burstlab.sweep.grid import Axis, points

__all__ = ["GRID_SECTIONS", "METRICS", "Metric", "PointOutcome", "outcomes", "point_table", "point_outcomes",
           "MAX_LINES"]

GRID_SECTIONS = {
    "outcomes": "Outcomes by grid value",
    "points": "Every grid point",
}
#: Lines per panel at most; a colouring axis with more values is pooled instead.
MAX_LINES = 6


@dataclass(frozen=True)
class Metric:
    key: str
    title: str
    value: Callable[[RunData], float | None]
    unit: Callable[[float], tuple[float, str]]  # largest value -> (divisor, unit)
    count: bool = False  # whole numbers: integer ticks, and a scale from 0 to at least 1


def _seconds(_: float) -> tuple[float, str]:
    return 1.0, "s"


def _count(_: float) -> tuple[float, str]:
    return 1.0, ""


METRICS = (
    Metric("fct", "Completion time of the TCP transfers (the last to finish)", lambda r: r.fct_s, _seconds),
    Metric("goodput", "TCP goodput (bytes delivered over the transfers' span)", lambda r: r.goodput_bps,
           F.rate_unit),
    Metric("retransmits", "TCP retransmissions", lambda r: float(r.retransmits), _count, count=True),
    Metric("peak_queue", "Peak queue (the fullest queue's largest occupancy)",
           lambda r: float(r.peak_queue_bytes), F.bytes_unit),
)


def _label(metric: Metric, unit: str) -> str:
    names = {"fct": "FCT", "goodput": "goodput", "retransmits": "retransmissions", "peak_queue": "peak queue"}
    return f"{names[metric.key]} ({unit})" if unit else names[metric.key]


def outcomes(data: SweepData) -> Section:
    sec = Section("outcomes", GRID_SECTIONS["outcomes"])
    axes = data.swept_axes
    if not axes:
        sec.missing = "no grid axis takes two or more values; the table below has the runs."
        return sec
    if not data.runs:
        sec.missing = "no run finished ok."
        return sec
    skipped = []
    for metric in METRICS:
        values = [metric.value(r) for r in data.runs]
        if all(v is None for v in values):
            skipped.append(metric.key)
            continue
        div, unit = metric.unit(F.finite_max(v for v in values if v is not None))
        panels = [_panel(data, metric, axis, axes, div, unit) for axis in axes]
        F.share_y((p.fig for p in panels), min_top=1.0 if metric.count else None)
        sec.charts.append(Chart(panels, caption=metric.title))
    unfinished = any(r.fct_s is not None and math.isinf(r.fct_s) for r in data.runs)
    sec.note = ("Lines join the median over the runs at each value (the other axes' values and the "
                "repetitions pooled unless a line is drawn per value); dots are single runs."
                + (" A triangle at the top is a transfer unfinished at the scenario's stop." if unfinished else "")
                + (" No TCP transfer has a size, so there is no completion time." if "fct" in skipped else ""))
    return sec


def _colouring(axis: Axis, axes: Sequence[Axis]) -> Axis | None:
    others = [a for a in axes if a.path != axis.path and len(a.values) <= MAX_LINES]
    return min(others, key=lambda a: len(a.values)) if others else None


def _panel(data: SweepData, metric: Metric, axis: Axis, axes: Sequence[Axis], div: float, unit: str) -> Panel:
    by = _colouring(axis, axes)
    groups: list[str | None] = list(by.values) if by is not None else [None]
    cap = max(r.stop_s for r in data.runs) / div
    fig, ax = F.panel()
    keys = []
    for gi, g in enumerate(groups):
        color = _color(by, g, gi)
        offset = (gi - (len(groups) - 1) / 2) * 0.08 if len(groups) > 1 else 0.0
        xs, ys = [], []
        for xi, value in enumerate(axis.values):
            here = [metric.value(r) for r in data.runs
                    if r.params[axis.path] == value and (by is None or r.params[by.path] == g)]
            here_v = [v / div for v in here if v is not None]
            if not here_v:
                continue
            shown = [cap if math.isinf(v) else v for v in here_v]
            ax.plot([xi + offset] * len(shown), shown, "o", color=color, ms=3, alpha=0.35, lw=0)
            med = statistics.median(here_v)
            xs.append(xi + offset)
            ys.append(cap if math.isinf(med) else med)
            if math.isinf(med):
                ax.plot([xi + offset], [cap], "^", color=color, ms=8)
        ax.plot(xs, ys, "o-", color=color, lw=1.5, ms=4)
        if by is not None:
            keys.append(Key(f"{by.path}={g}", color, "-", marker=True))
    F.category_ticks(ax, list(axis.values), axis.path)
    if metric.count:
        ax.yaxis.set_major_locator(MaxNLocator(nbins="auto", steps=[1, 2, 2.5, 5, 10], integer=True))
    ax.set_ylabel(_label(metric, unit))
    return Panel(f"by {axis.path}", fig, keys)


def _color(by: Axis | None, value: str | None, i: int) -> str:
    if by is None or value is None:
        return "#333333"
    return F.cca_color(value) if by.path.endswith(".cca") else F.series_color(i)


@dataclass(frozen=True)
class PointOutcome:
    """One grid point: its swept values and the medians of its ok runs' outcomes (``None``
    where no run gives one; ``fct_s`` is ``inf`` when the median transfer did not finish)."""

    values: dict[str, str]
    runs_ok: int
    runs: int
    fct_s: float | None
    goodput_bps: float | None
    retransmits: float | None
    drops: float | None
    peak_queue_bytes: float | None

    def to_json(self) -> dict[str, object]:
        unfinished = self.fct_s is not None and math.isinf(self.fct_s)
        return {**self.values, "runs_ok": self.runs_ok, "runs": self.runs,
                "fct_s": None if unfinished else self.fct_s, "finished": not unfinished,
                "goodput_bps": self.goodput_bps, "retransmits": self.retransmits, "drops": self.drops,
                "peak_queue_bytes": self.peak_queue_bytes}


def point_outcomes(data: SweepData) -> list[PointOutcome]:
    """Every grid point, in grid order (also those whose runs all failed)."""
    by_point: dict[int, list[RunData]] = {}
    for r in data.runs:
        by_point.setdefault(r.point, []).append(r)
    swept = {a.path for a in data.swept_axes}
    out = []
    for p in points(data.axes):
        runs = by_point.get(p.index, [])
        out.append(PointOutcome(
            values={path: value for path, value in p.assignments if path in swept},
            runs_ok=len(runs), runs=data.reps,
            fct_s=_median([r.fct_s for r in runs]),
            goodput_bps=_median([r.goodput_bps for r in runs]),
            retransmits=_median([float(r.retransmits) for r in runs]),
            drops=_median([float(r.drops) for r in runs]),
            peak_queue_bytes=_median([float(r.peak_queue_bytes) for r in runs]),
        ))
    return out


def _median(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return float(statistics.median(present)) if present else None


def point_table(data: SweepData) -> Section:
    sec = Section("points", GRID_SECTIONS["points"])
    rows = point_outcomes(data)
    rate_div, rate_unit = F.rate_unit(F.finite_max(r.goodput_bps for r in rows))
    q_div, q_unit = F.bytes_unit(F.finite_max(r.peak_queue_bytes for r in rows))
    paths = [a.path for a in data.swept_axes]
    headers = [*paths, "runs ok", "FCT (s)", f"goodput ({rate_unit})", "retransmits", "drops", f"peak queue ({q_unit})"]
    table = []
    for r in rows:
        fct = None if r.fct_s is None else "unfinished" if math.isinf(r.fct_s) else round(r.fct_s, 3)
        table.append([
            *(r.values[p] for p in paths), f"{r.runs_ok}/{r.runs}", fct, _scaled(r.goodput_bps, rate_div, 2),
            _scaled(r.retransmits, 1, 0), _scaled(r.drops, 1, 0), _scaled(r.peak_queue_bytes, q_div, 2),
        ])
    sec.table = Table(headers, table, [False] * len(paths) + [True] * 6)
    sec.note = ("Medians over each point's repetitions. FCT: when the last sized TCP transfer finished; "
                "goodput: TCP bytes delivered over the time from the first TCP start to the last byte; "
                "drops: packets dropped anywhere, bursts' included; peak queue: the largest occupancy of "
                "any queue.")
    return sec


def _scaled(value: float | None, div: float, digits: int) -> float | None:
    if value is None:
        return None
    return round(value / div, digits) if digits else round(value / div)
