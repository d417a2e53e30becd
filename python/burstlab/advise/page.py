"""`burstlab explain`'s result as one self-contained HTML page, in the style of the sweep
reports (burstlab.report: the same stylesheet, sections, tables and inline SVG figures)."""

from __future__ import annotations

from typing import Any

from burstlab.advise.explain import LIMITS, fmt_rate
from burstlab.report import figures
from burstlab.report.page import Chart, Key, Panel, Section, Table
from burstlab.report.render import _CSS, _e, _section_html

#: One colour per limit, in the order explain lists them.
_LIMIT_COLORS = dict(zip(LIMITS, (figures.series_color(i) for i in range(len(LIMITS)))))


def to_html(result: dict[str, Any]) -> str:
    """The page for one `explain_iperf3` result."""
    from burstlab import __version__

    sections = [_timeline(result), _phases(result)]
    if result["losses"]:
        sections.append(_losses(result))
    if "twin" in result:
        sections.append(_twin(result))
    head = (f"<h1>burstlab explain: {_e(result['input'])}</h1>"
            f"<p class=small>{_e(result['version'])} · {result['streams']} stream(s) · {_e(result['cca'] or '?')} · "
            f"{_e(fmt_rate(result['throughput_bps']))} over {result['seconds']:.2f} s · burstlab {_e(__version__)}</p>"
            f"<p><b>{_e(result['summary'])}</b></p>"
            + "".join(f"<p class=note>{_e(n)}</p>" for n in result["notes"]))
    return ("<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>burstlab explain: {_e(result['input'])}</title><style>{_CSS}</style></head><body>"
            + head + "".join(_section_html(s) for s in sections) + "</body></html>\n")


def _timeline(r: dict[str, Any]) -> Section:
    ivs = r["intervals"]
    starts, ends = [iv["start_s"] for iv in ivs], [iv["end_s"] for iv in ivs]
    keys = [Key(limit, color, "area") for limit, color in _LIMIT_COLORS.items()
            if any(iv["limit"] == limit for iv in ivs)]

    def shaded(ax: Any) -> None:
        for iv in ivs:
            ax.axvspan(iv["start_s"], iv["end_s"], color=_LIMIT_COLORS[iv["limit"]], alpha=0.18, lw=0)
        ax.set_xlabel("time (s)")

    div, unit = figures.rate_unit(max(iv["bits_per_second"] for iv in ivs))
    fig, ax = figures.panel()
    ax.plot(*figures.steps(starts, ends, [iv["bits_per_second"] / div for iv in ivs]), drawstyle="steps-post",
            color="#222")
    ax.set_ylabel(unit)
    shaded(ax)
    panels = [Panel("throughput per interval, shaded by the limit named", fig)]
    windows = [(name, key, color) for name, key, color in (("cwnd", "cwnd_bytes", "#1f5fa8"),
                                                           ("receiver's window", "snd_wnd_bytes", "#c0392b"))
               if all(iv[key] is not None for iv in ivs)]
    if windows:
        top = max(iv[key] for _, key, _ in windows for iv in ivs)
        bdiv, bunit = figures.bytes_unit(top)
        fig, ax = figures.panel()
        for _, key, color in windows:
            ax.plot(*figures.steps(starts, ends, [iv[key] / bdiv for iv in ivs]), drawstyle="steps-post", color=color)
        ax.set_ylabel(bunit)
        shaded(ax)
        panels.append(Panel("windows at each interval's end", fig, [Key(n, c) for n, _, c in windows]))
    return Section("timeline", "Timeline", charts=[Chart(panels, keys)])


def _phases(r: dict[str, Any]) -> Section:
    rows = [[p["start_s"], p["end_s"], p["limit"], fmt_rate(p["mean_bps"]), p["retransmits"], p["evidence"]]
            for p in r["phases"]]
    return Section("phases", "Phases", table=Table(["from s", "to s", "limit", "rate", "retransmits", "evidence"],
                                                  rows, [True, True, False, True, True, False]))


def _losses(r: dict[str, Any]) -> Section:
    rows = [[e["start_s"], e["end_s"], e["retransmits"], e["cwnd_before_bytes"], e["cwnd_min_bytes"]] for e in r["losses"]]
    return Section("losses", "Loss episodes", table=Table(
        ["from s", "to s", "retransmits", "cwnd before (B)", "least cwnd (B)"], rows, [True] * 5))


def _twin(r: dict[str, Any]) -> Section:
    t, m = r["twin"], r["match"]
    rows = [["real run", fmt_rate(r["throughput_bps"]), r["seconds"], r["retransmits"]],
            ["twin", fmt_rate(t["throughput_bps"]), t["fct_s"], t["retransmits"]]]
    rows += [[f"what if {w['change']}", fmt_rate(w["after"]["throughput_bps"]), w["after"]["fct_s"],
              w["after"]["retransmits"]] for w in r["what_if"]]
    verdict = "matches" if m["within"] else "does not match"
    note = (f"The twin {verdict} the real run's throughput within {m['tolerance']:.0%} "
            f"({m['throughput_rel_error']:+.1%}). Its scenario:\n{r['scenario']}")
    return Section("twin", "Simulated twin and what-ifs", table=Table(
        ["", "throughput", "time s", "retransmits"], rows, [False, True, True, True]), note=note)
