"""The AmLight study's own plots: FCT against burst duration per RTT, beside the seed's 7 s
target and next transfer window, and FCT by burst start and duration per CCA."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from burstlab.report import figures as F
from burstlab.report.amlight.findings import NEXT_WINDOW_209MS_S, RTT_209MS, TARGET_FCT_S
from burstlab.report.page import Chart, Key, Panel
from burstlab.report.units import format_duration

__all__ = ["fct_vs_duration", "fct_heatmaps"]


def fct_vs_duration(panels: Sequence[dict[str, Any]], stop_s: float) -> Chart:
    """One panel per ``{"title", "rtt_s", "lines": {cca: [(duration_s, fct_s)]}, "baselines":
    {cca: fct_s}}``: FCT vs burst duration (log x), the 7 s target, unfinished runs at ``stop``."""
    out = []
    ccas: set[str] = set()
    next_window = False
    for p in panels:
        fig, ax = F.panel()
        for cca, points in sorted(p["lines"].items()):
            ccas.add(cca)
            xs = [d * 1e3 for d, _ in points]
            ys = [stop_s if math.isinf(f) else f for _, f in points]
            ax.plot(xs, ys, "o-", color=F.cca_color(cca), ms=4)
            for x, (_, f) in zip(xs, points, strict=True):
                if math.isinf(f):
                    ax.plot([x], [stop_s], "^", color=F.cca_color(cca), ms=9)
        for cca, fct in sorted(p["baselines"].items()):
            ccas.add(cca)
            ax.axhline(fct, color=F.cca_color(cca), ls=":", lw=1.2)
        ax.axhline(TARGET_FCT_S, color="black", ls="--", lw=1)
        if math.isclose(p["rtt_s"], RTT_209MS):
            next_window = True
            ax.axhline(NEXT_WINDOW_209MS_S, color="#7f0000", ls="-.", lw=0.8)
        ax.set_xscale("log")
        ax.set_xlabel("burst duration (ms)")
        ax.set_ylabel("FCT (s)")
        baselines = ", ".join(f"{c} {f:.2f} s" for c, f in sorted(p["baselines"].items()))
        out.append(Panel(p["title"] + (f" · no burst: {baselines}" if baselines else ""), fig))
    F.share_y(p.fig for p in out)
    keys = [Key(c, F.cca_color(c), "-", marker=True) for c in sorted(ccas)]
    keys += [Key("same CCA, no burst", "#555555", ":"), Key("7 s target", "black", "--")]
    if next_window:
        keys.append(Key("next transfer window (29 s)", "#7f0000", "-."))
    return Chart(out, keys)


def fct_heatmaps(maps: Sequence[dict[str, Any]]) -> Chart:
    """One heat map per ``{"title", "starts", "durations", "fct": {(start, duration): fct}}``:
    median FCT by burst start (rows) and duration (columns), on one colour scale, values
    written in the cells."""
    finite = [f for m in maps for f in m["fct"].values() if not math.isinf(f)]
    vmax = max(finite, default=1.0)
    vmin = min(finite, default=0.0)
    out = []
    for m in maps:
        fig, ax = F.panel((F.PANEL_SIZE[0], 0.28 * len(m["starts"]) + 1.4))
        grid = [[m["fct"].get((s, d), math.nan) for d in m["durations"]] for s in m["starts"]]
        shown = [[vmax if math.isinf(v) else v for v in row] for row in grid]
        ax.imshow(shown, cmap="magma_r", vmin=vmin, vmax=vmax, aspect="auto")
        for i, row in enumerate(grid):
            for j, v in enumerate(row):
                if not math.isnan(v):
                    text = "DNF" if math.isinf(v) else f"{v:.1f}"
                    ax.text(j, i, text, ha="center", va="center", fontsize=7,
                            color="white" if (min(v, vmax) - vmin) > 0.55 * (vmax - vmin) else "black")
        ax.set_xticks(range(len(m["durations"])), [format_duration(d) for d in m["durations"]],
                      rotation=45, ha="right")
        ax.set_yticks(range(len(m["starts"])), [f"{s:g} s" for s in m["starts"]])
        ax.set_xlabel("burst duration")
        ax.set_ylabel("burst start")
        ax.grid(False)
        out.append(Panel(m["title"], fig))
    return Chart(out, caption=f"One colour scale: light {vmin:.1f} s to dark {vmax:.1f} s.")
