"""The report's figures, drawn with matplotlib's object API (no pyplot state, no display) and
returned as SVG text to inline in the HTML page."""

from __future__ import annotations

import io
import re
import math
from collections.abc import Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")
from matplotlib.figure import Figure  # noqa: E402 - after choosing the backend

from burstlab.report.findings import NEXT_WINDOW_209MS_S, RTT_209MS, TARGET_FCT_S  # noqa: E402
from burstlab.report.units import format_duration  # noqa: E402

__all__ = ["svg", "fct_vs_duration", "fct_heatmap", "timelines", "queue_timelines", "cca_color"]

_COLORS = {"htcp": "#d62728", "bbr": "#1f77b4", "bbr3": "#17becf", "cubic": "#2ca02c", "reno": "#9467bd"}
_OTHER = ("#8c564b", "#e377c2", "#7f7f7f", "#bcbd22")
_NAMESPACES = re.compile(r' xmlns(?::xlink)?="[^"]*"')
_BURST_SHADE = {"color": "#ff9900", "alpha": 0.25, "lw": 0}

matplotlib.rcParams.update({
    "svg.fonttype": "none",  # text stays text: smaller files, selectable labels
    "svg.hashsalt": "burstlab",  # stable ids: the same sweep gives the same page
    "font.size": 9,
    "axes.grid": True,
    "grid.alpha": 0.3,
})


def cca_color(cca: str) -> str:
    return _COLORS.get(cca, _OTHER[sum(map(ord, cca)) % len(_OTHER)])


def svg(fig: Figure) -> str:
    """``fig`` as inline SVG text (no XML prolog, no date)."""
    buf = io.StringIO()
    # No RDF metadata block: the page should name no outside address.
    fig.savefig(buf, format="svg", bbox_inches="tight",
                metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    text = buf.getvalue()
    text = text[text.index("<svg"):]
    # Inline in HTML the namespaces are implied (the HTML parser knows svg and xlink:href).
    return _NAMESPACES.sub("", text)


def fct_vs_duration(panels: Sequence[dict[str, Any]], stop_s: float) -> Figure:
    """One panel per ``{"title", "rtt_s", "lines": {cca: [(duration_s, fct_s)]}, "baselines":
    {cca: fct_s}}``; FCT vs burst duration (log x), the 7 s target, unfinished runs at ``stop``."""
    fig = Figure(figsize=(7.0 * len(panels), 3.6), layout="constrained")
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    for ax, panel in zip(axes, panels):
        for cca, points in sorted(panel["lines"].items()):
            xs = [d * 1e3 for d, _ in points]
            ys = [stop_s if math.isinf(f) else f for _, f in points]
            ax.plot(xs, ys, "o-", color=cca_color(cca), label=cca)
            for x, (_, f) in zip(xs, points):
                if math.isinf(f):
                    ax.plot([x], [stop_s], "^", color=cca_color(cca), ms=9)
        for cca, fct in sorted(panel["baselines"].items()):
            ax.axhline(fct, color=cca_color(cca), ls=":", lw=1.2, label=f"{cca} no burst ({fct:.2f} s)")
        ax.axhline(TARGET_FCT_S, color="black", ls="--", lw=1, label="7 s target")
        if math.isclose(panel["rtt_s"], RTT_209MS):
            ax.axhline(NEXT_WINDOW_209MS_S, color="#7f0000", ls="-.", lw=0.8, label="next window (29 s)")
        ax.set_xscale("log")
        ax.set_xlabel("burst duration (ms)")
        ax.set_ylabel("FCT (s)")
        ax.set_ylim(bottom=0)
        ax.set_title(panel["title"])
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig


def fct_heatmap(maps: Sequence[dict[str, Any]]) -> Figure:
    """One heat map per ``{"title", "starts", "durations", "fct": {(start, duration): fct}}``:
    median FCT by burst start (rows) and duration (columns), values written in the cells."""
    fig = Figure(figsize=(4.6 * len(maps), 0.35 * max(len(m["starts"]) for m in maps) + 2.0), layout="constrained")
    axes = fig.subplots(1, len(maps), squeeze=False)[0]
    finite = [f for m in maps for f in m["fct"].values() if not math.isinf(f)]
    vmax = max(finite, default=1.0)
    vmin = min(finite, default=0.0)
    for ax, m in zip(axes, maps):
        grid = [[m["fct"].get((s, d), math.nan) for d in m["durations"]] for s in m["starts"]]
        shown = [[vmax if math.isinf(v) else v for v in row] for row in grid]
        image = ax.imshow(shown, cmap="magma_r", vmin=vmin, vmax=vmax, aspect="auto")
        for i, row in enumerate(grid):
            for j, v in enumerate(row):
                if not math.isnan(v):
                    text = "DNF" if math.isinf(v) else f"{v:.1f}"
                    ax.text(j, i, text, ha="center", va="center", fontsize=7,
                            color="white" if (min(v, vmax) - vmin) > 0.55 * (vmax - vmin) else "black")
        ax.set_xticks(range(len(m["durations"])), [format_duration(d) for d in m["durations"]], rotation=45)
        ax.set_yticks(range(len(m["starts"])), [f"{s:g} s" for s in m["starts"]])
        ax.set_xlabel("burst duration")
        ax.set_ylabel("burst start")
        ax.set_title(m["title"])
        ax.grid(False)
    fig.colorbar(image, ax=list(axes), label="median FCT (s)")
    return fig


def _shade(ax: Any, burst: tuple[float, float] | None) -> None:
    if burst is not None:
        ax.axvspan(burst[0], burst[0] + burst[1], **_BURST_SHADE)


def timelines(runs: Sequence[dict[str, Any]]) -> Figure:
    """Per run (a column: ``{"title", "burst": (start, duration) | None, "t", "gbps",
    "cwnd_mib"}``): per-second throughput (top) and cwnd (bottom), burst shaded."""
    fig = Figure(figsize=(3.6 * len(runs), 4.6), layout="constrained")
    axes = fig.subplots(2, len(runs), squeeze=False, sharex="col")
    for col, run in enumerate(runs):
        top, bottom = axes[0][col], axes[1][col]
        top.step(run["t"], run["gbps"], where="post", color=cca_color(run["cca"]))
        bottom.step(run["t"], run["cwnd_mib"], where="post", color=cca_color(run["cca"]))
        for ax in (top, bottom):
            _shade(ax, run["burst"])
            ax.set_ylim(bottom=0)
        top.set_title(run["title"], fontsize=8)
        bottom.set_xlabel("time (s)")
        if col == 0:
            top.set_ylabel("throughput (Gbit/s)")
            bottom.set_ylabel("cwnd (MiB)")
    return fig


def queue_timelines(runs: Sequence[dict[str, Any]]) -> Figure:
    """Per run (``{"title", "burst", "t", "mib", "port", "end"}``): bottleneck queue occupancy
    (10 ms maxima) from 0 to ``end`` (the FCT), burst shaded."""
    fig = Figure(figsize=(3.6 * len(runs), 2.6), layout="constrained")
    axes = fig.subplots(1, len(runs), squeeze=False)[0]
    top = max((max(run["mib"]) for run in runs), default=0.0) * 1.08 or 1.0
    for ax, run in zip(axes, runs):
        _shade(ax, run["burst"])
        ax.fill_between(run["t"], run["mib"], step="post", color=cca_color(run["cca"]), alpha=0.7)
        ax.set_title(f"{run['title']}\n{run['port']}", fontsize=8)
        ax.set_xlabel("time (s)")
        ax.set_xlim(0, run["end"])
        ax.set_ylim(0, top)  # one scale for every run, also those whose queue stayed empty
    axes[0].set_ylabel("queue (MiB, max per 10 ms)")
    return fig
