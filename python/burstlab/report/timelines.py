"""Time series of a few chosen runs: each TCP flow's iperf3-style interval throughput and cwnd,
and the occupancy of the queue that filled most, with the scenario's bursts shaded.

Every interval's value is drawn over that interval's own ``[t_start_s, t_end_s]``, on the same
time axis as the burst shading, so a drop in throughput lines up with the burst that caused it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from burstlab.report import figures as F
from burstlab.report.data import RunData, SweepData
from burstlab.report.page import Chart, Key, Panel, Section

__all__ = ["TIMELINE_SECTIONS", "timelines", "queue", "generic_choice", "run_title", "MAX_RUNS", "MAX_FLOWS"]

TIMELINE_SECTIONS = {
    "timelines": "Throughput and cwnd over time",
    "queue": "Queue over time",
}
#: Runs shown side by side.
MAX_RUNS = 4
#: TCP flows drawn per run (the first ones by flow id).
MAX_FLOWS = 8
#: Queue samples are reduced to the maximum per bin; a run is cut into this many bins.
_QUEUE_BINS = 500


def generic_choice(data: SweepData) -> list[RunData]:
    """Up to four runs spanning the outcomes: the fastest, the slowest and two between, by the
    time the transfers took (unfinished last), or by TCP goodput (highest first) when no flow
    has a size."""
    runs = list(data.runs)
    if not runs:
        return []
    if any(r.fct_s is not None for r in runs):
        runs.sort(key=lambda r: (math.inf if r.fct_s is None else r.fct_s, r.run_id))
    else:
        runs.sort(key=lambda r: (-(r.goodput_bps or 0.0), r.run_id))
    picks = sorted({round(i * (len(runs) - 1) / (MAX_RUNS - 1)) for i in range(MAX_RUNS)})
    return [runs[i] for i in picks]


def run_title(data: SweepData, r: RunData) -> str:
    """``run 7: flow[0].cca=bbr, topology.rtt=2ms · FCT 0.28 s, 258 retx`` (swept values only)."""
    values = ", ".join(f"{a.path}={r.params[a.path]}" for a in data.swept_axes)
    fct = r.fct_s
    outcome = ("" if fct is None else "unfinished" if math.isinf(fct) else f"FCT {fct:.3g} s")
    outcome = ", ".join(x for x in (outcome, f"{r.retransmits:,} retx") if x)
    return f"run {r.run_id}" + (f": {values}" if values else "") + f" · {outcome}"


def timelines(data: SweepData, chosen: Sequence[RunData], title: Callable[[RunData], str],
              note: str) -> Section:
    sec = Section("timelines", TIMELINE_SECTIONS["timelines"])
    drawn = {r.run_id: {f.flow_id for f in r.flows[:MAX_FLOWS]} for r in chosen}
    flow_ids = ", ".join(str(i) for i in sorted(set().union(*drawn.values()))) or "NULL"
    series = data.series("intervals", [r.run_id for r in chosen],
                         "flow_id, t_start_s, t_end_s, bits_per_second, cwnd_bytes", f"flow_id IN ({flow_ids})")
    for run_id, s in series.items():
        keep = [i for i, f in enumerate(s["flow_id"]) if f in drawn[run_id]]
        series[run_id] = {c: [v[i] for i in keep] for c, v in s.items()}
    shown = [r for r in chosen if series.get(r.run_id, {}).get("flow_id")]
    if not shown:
        sec.missing = "no intervals recorded for a TCP flow."
        return sec
    one_flow = all(len(r.flows) == 1 for r in shown)
    rate_div, rate_unit = F.rate_unit(F.finite_max(v for r in shown for v in series[r.run_id]["bits_per_second"]))
    cwnd_div, cwnd_unit = F.bytes_unit(F.finite_max(v for r in shown for v in series[r.run_id]["cwnd_bytes"]))
    rate, cwnd = [], []
    keys: dict[str, Key] = {}
    for r in shown:
        s = series[r.run_id]
        flows = _by_flow(s)
        figs = []
        for column, div, ylabel in (("bits_per_second", rate_div, f"throughput ({rate_unit})"),
                                    ("cwnd_bytes", cwnd_div, f"cwnd ({cwnd_unit})")):
            fig, ax = F.panel()
            F.shade_bursts(ax, r.bursts)
            for flow_id, rows in flows.items():
                cca = _cca(r, flow_id)
                color = F.cca_color(cca) if one_flow else F.series_color(flow_id)
                label = cca if one_flow else f"flow {flow_id}"
                keys.setdefault(label, Key(label, color))
                x, y = F.steps(rows["t_start_s"], rows["t_end_s"], [v / div for v in rows[column]])
                ax.plot(x, y, drawstyle="steps-post", color=color, lw=1.3, label=label)
            ax.set_xlim(0, max(r.end_s, max(rows["t_end_s"][-1] for rows in flows.values())))
            ax.set_xlabel("time (s)")
            ax.set_ylabel(ylabel)
            figs.append(fig)
        rate.append(Panel(title(r), figs[0]))
        cwnd.append(Panel(title(r), figs[1]))
    for chart in (rate, cwnd):
        F.share_y(p.fig for p in chart)
    burst_key = [Key("burst", F.BURST_SHADE["color"], "area")] if any(r.bursts for r in shown) else []
    sec.charts = [Chart(rate, [*keys.values(), *burst_key], "Throughput per interval"),
                  Chart(cwnd, [*keys.values(), *burst_key], "cwnd at the end of each interval")]
    sec.note = note + (" Shaded: the bursts." if burst_key else "")
    return sec


def queue(data: SweepData, chosen: Sequence[RunData], title: Callable[[RunData], str]) -> Section:
    sec = Section("queue", TIMELINE_SECTIONS["queue"])
    if not chosen:
        sec.missing = "no run to show."
        return sec
    peaks = data.series("queue", [r.run_id for r in chosen],
                        "node || ' ' || port AS port, max(occupancy_bytes) AS peak", group_by="node, port")
    shown = []
    for r in chosen:
        p = peaks.get(r.run_id)
        if p and max(p["peak"]) > 0:
            port = p["port"][max(range(len(p["port"])), key=lambda i: (p["peak"][i], p["port"][i]))]
            t, occ = _queue_bins(data, r.run_id, port, r.end_s)
            shown.append((r, port.split(" ", 1)[-1], t, occ))
        else:  # no packet ever waited
            shown.append((r, "no queue built up", [0.0, r.end_s], [0, 0]))
    div, unit = F.bytes_unit(max(max(occ) for *_, occ in shown))
    panels = []
    for r, name, t, occ in shown:
        fig, ax = F.panel()
        F.shade_bursts(ax, r.bursts)
        ax.fill_between(t, [o / div for o in occ], step="post", color=_run_color(r), alpha=0.7, lw=0)
        ax.set_xlim(0, r.end_s)
        ax.set_xlabel("time (s)")
        ax.set_ylabel(f"queue ({unit})")
        panels.append(Panel(f"{title(r)} · {name}", fig))
    F.share_y(p.fig for p in panels)
    keys = [Key("burst", F.BURST_SHADE["color"], "area")] if any(r.bursts for r in chosen) else []
    sec.charts = [Chart(panels, keys)]
    sec.note = ("Occupancy of the queue that filled most in each run (usually the bottleneck), the "
                f"maximum over each 1/{_QUEUE_BINS} of the run, for the same runs."
                + (" Shaded: the bursts." if keys else ""))
    return sec


def _queue_bins(data: SweepData, run_id: int, port: str, end: float) -> tuple[list[float], list[int]]:
    """Occupancy of ``port`` from 0 to ``end``, as the maximum per bin."""
    width = max(end / _QUEUE_BINS, 1e-6)
    quoted = port.replace("'", "''")
    s = data.series("queue", [run_id],
                    f"floor(t_s / {width!r}) * {width!r} AS t, max(occupancy_bytes) AS occ, "
                    "arg_max(occupancy_bytes, t_s) AS last",
                    f"node || ' ' || port = '{quoted}'", group_by="t").get(run_id)
    if not s:
        return [0.0, end], [0, 0]
    # Each bin's maximum holds until the bin ends; after the last, the last recorded occupancy
    # (the table records every change) until the run's end.
    t = [0.0, *s["t"], s["t"][-1] + width, max(end, s["t"][-1] + width)]
    occ = [0, *s["occ"], s["last"][-1], s["last"][-1]]
    return t, occ


def _by_flow(s: dict[str, list[Any]]) -> dict[int, dict[str, list[float]]]:
    flows: dict[int, dict[str, list[float]]] = {}
    columns = ("flow_id", "t_start_s", "t_end_s", "bits_per_second", "cwnd_bytes")
    rows = sorted(zip(*(s[c] for c in columns), strict=True))
    for flow_id, t0, t1, bps, cwnd in rows:
        f = flows.setdefault(flow_id, {"t_start_s": [], "t_end_s": [], "bits_per_second": [], "cwnd_bytes": []})
        f["t_start_s"].append(t0)
        f["t_end_s"].append(t1)
        f["bits_per_second"].append(float(bps))
        f["cwnd_bytes"].append(float(cwnd))
    return flows


def _cca(r: RunData, flow_id: int) -> str:
    return next((f.cca for f in r.flows if f.flow_id == flow_id), "?")


def _run_color(r: RunData) -> str:
    return F.cca_color(r.flows[0].cca) if len(r.flows) == 1 else F.series_color(0)
