"""The report's plots, drawn with matplotlib's object API (no pyplot state, no display): one
small figure per panel, so the page can lay panels side by side or one under another as its
width allows, and each panel returned as SVG text that scales to the width it is given."""

from __future__ import annotations

import io
import math
import re
from collections.abc import Iterable, Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")
from matplotlib.figure import Figure  # noqa: E402 - after choosing the backend

from burstlab.report import stop  # noqa: E402

__all__ = [
    "svg", "panel", "share_y", "cca_color", "series_color", "shade_bursts", "steps", "rate_unit",
    "bytes_unit", "finite_max", "category_ticks", "BURST_SHADE", "PANEL_SIZE",
]

_COLORS = {"htcp": "#d62728", "bbr": "#1f77b4", "bbr3": "#17becf", "cubic": "#2ca02c", "reno": "#9467bd",
           "dctcp": "#ff7f0e"}
_OTHER = ("#8c564b", "#e377c2", "#7f7f7f", "#bcbd22")
#: Colours of lines that are not CCAs (grid values, flows), in order (matplotlib's tab10).
_SERIES = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf")
_NAMESPACES = re.compile(r' xmlns(?::xlink)?="[^"]*"')
_SIZE_ATTRS = re.compile(r' (width|height)="([0-9.]+)pt"')
BURST_SHADE = {"color": "#ff9900", "alpha": 0.25, "lw": 0}
#: A panel's size in inches: about 340 px wide at the page's scale, so 9 pt text stays legible
#: when a narrow screen shows one panel per row.
PANEL_SIZE = (3.6, 2.5)

matplotlib.rcParams.update({
    "svg.fonttype": "none",  # text stays text: smaller files, selectable labels
    "svg.hashsalt": "burstlab",  # stable ids: the same sweep gives the same page
    "font.size": 9,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
})


def cca_color(cca: str) -> str:
    return _COLORS.get(cca, _OTHER[sum(map(ord, cca)) % len(_OTHER)])


def series_color(i: int) -> str:
    return _SERIES[i % len(_SERIES)]


def panel(size: tuple[float, float] = PANEL_SIZE) -> tuple[Figure, Any]:
    """A new figure with one axes."""
    stop.check()
    fig = Figure(figsize=size, layout="constrained")
    return fig, fig.subplots()


def share_y(figs: Iterable[Figure], bottom: float | None = 0.0, min_top: float | None = None) -> None:
    """Put every figure's axes on one y-range: the union of their own (from ``bottom``, up to at
    least ``min_top``)."""
    axes = [ax for fig in figs for ax in fig.axes]
    if not axes:
        return
    low = min(ax.get_ylim()[0] for ax in axes) if bottom is None else bottom
    high = max(ax.get_ylim()[1] for ax in axes)
    if min_top is not None and high < min_top:
        high = min_top
    if not high > low:
        high = low + 1.0
    for ax in axes:
        ax.set_ylim(low, high)


def svg(fig: Figure) -> str:
    """``fig`` as inline SVG text (no XML prolog, no date) with a viewBox and no fixed size: it
    takes the width its container gives it, up to its natural width, and keeps its shape."""
    stop.check()
    buf = io.StringIO()
    # No RDF metadata block: the page should name no outside address.
    fig.savefig(buf, format="svg", bbox_inches="tight",
                metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    text = buf.getvalue()
    text = text[text.index("<svg"):]
    # Inline in HTML the namespaces are implied (the HTML parser knows svg and xlink:href).
    text = _NAMESPACES.sub("", text)
    head_end = text.index(">")
    head, rest = text[:head_end], text[head_end:]
    sizes = dict(_SIZE_ATTRS.findall(head))
    width_px = float(sizes.get("width", 0)) * 4 / 3  # CSS px are 3/4 pt
    head = _SIZE_ATTRS.sub("", head)
    style = f' style="max-width:{width_px:.0f}px"' if width_px else ""
    return f'{head} class="plot" width="100%"{style}{rest}'


def shade_bursts(ax: Any, bursts: Sequence[tuple[float, float]]) -> None:
    for start, end in bursts:
        if end > start:
            ax.axvspan(start, end, **BURST_SHADE)


def steps(t_start: Sequence[float], t_end: Sequence[float], values: Sequence[float]) -> tuple[list[float], list[float]]:
    """Points for a ``drawstyle="steps-post"`` line on which each value spans its own interval
    ``[t_start, t_end]``: the start times, then the last end (repeating the last value), with a
    break (nan) wherever an interval does not begin where the previous one ended."""
    xs: list[float] = []
    ys: list[float] = []
    for i, (s, v) in enumerate(zip(t_start, values, strict=True)):
        if i and not math.isclose(s, t_end[i - 1], rel_tol=0, abs_tol=1e-9):
            xs.append(t_end[i - 1])
            ys.append(math.nan)
        xs.append(s)
        ys.append(v)
    if xs:
        xs.append(t_end[-1])
        ys.append(ys[-1])
    return xs, ys


def rate_unit(max_bps: float) -> tuple[float, str]:
    """``(divisor, unit)`` for bit rates up to ``max_bps``."""
    for div, unit in ((1e9, "Gbit/s"), (1e6, "Mbit/s"), (1e3, "kbit/s")):
        if max_bps >= div:
            return div, unit
    return 1.0, "bit/s"


def bytes_unit(max_bytes: float) -> tuple[float, str]:
    """``(divisor, unit)`` for byte counts up to ``max_bytes``."""
    for div, unit in ((2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")):
        if max_bytes >= div:
            return div, unit
    return 1.0, "bytes"


def finite_max(values: Iterable[float | None], default: float = 0.0) -> float:
    return max((v for v in values if v is not None and math.isfinite(v)), default=default)


def category_ticks(ax: Any, labels: Sequence[str], name: str) -> None:
    """Label positions 0..n-1 with ``labels``, thinned to about eight so they stay legible."""
    step = max(1, math.ceil(len(labels) / 8))
    slanted = max(map(len, labels), default=0) > 5
    ax.set_xticks(range(0, len(labels), step), [labels[i] for i in range(0, len(labels), step)],
                  rotation=30 if slanted else 0, ha="right" if slanted else "center")
    ax.set_xlim(-0.5, len(labels) - 0.5)
    ax.set_xlabel(name)

