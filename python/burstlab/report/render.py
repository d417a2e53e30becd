"""A :class:`~burstlab.report.page.Report` as one self-contained HTML page (inline SVG and CSS,
nothing fetched, figures that follow the page's width), a Markdown summary, or one JSON object."""

from __future__ import annotations

import html
import json
import math
from typing import Any

from burstlab.report import figures
from burstlab.report.amlight.findings import HURT, NOT_RUN, Finding
from burstlab.report.grid import point_outcomes
from burstlab.report.page import Chart, Key, Report, Section, Table

__all__ = ["to_html", "to_markdown", "to_json", "dumps"]

_CSS = """
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 1.5em auto; max-width: 1320px;
       color: #222; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: .2em; overflow-wrap: anywhere; }
h2 { font-size: 1.25em; margin-top: 2em; border-bottom: 1px solid #ddd; }
nav { font-size: 13px; color: #555; } nav a { color: #1f5fa8; text-decoration: none; margin-right: .9em; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; margin: .6em 0; font-size: 13px; }
th, td { border: 1px solid #ccc; padding: .25em .6em; vertical-align: top; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
th { background: #f3f3f3; }
.pass { background: #dff3df; color: #1a5e1a; font-weight: 600; }
.fail { background: #fbe0e0; color: #8a1414; font-weight: 600; }
.notrun { background: #eee; color: #555; }
.missing { color: #8a5a00; background: #fff6e0; padding: .4em .7em; border-left: 3px solid #e0a000; }
.note { color: #555; font-size: 13px; max-width: 60em; }
.small { color: #666; font-size: 12px; overflow-wrap: anywhere; }
figure { margin: 1em 0 1.4em; }
figcaption { font-weight: 600; font-size: 14px; margin-bottom: .3em; }
.panels { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 280px), 1fr)); gap: .8em 1.4em; }
.panel { min-width: 0; display: flex; flex-direction: column; }
.panel svg.plot { display: block; width: 100%; height: auto; margin-top: auto; }  /* plots align at the bottom */
.ptitle { font-size: 12px; color: #333; margin: 0 0 .2em; overflow-wrap: anywhere; }
.keys { font-size: 12px; color: #333; margin: .1em 0 .4em; }
.key { display: inline-block; margin-right: 1em; white-space: nowrap; }
.key svg { vertical-align: middle; margin-right: .3em; }
"""

_DASHES = {"-": "", "--": "5 3", ":": "1.5 2.5", "-.": "6 2 1.5 2"}


def _e(text: Any) -> str:
    return html.escape(str(text))


def _status_class(status: str) -> str:
    return {"pass": "pass", "fail": "fail"}.get(status, "notrun")


def _findings_html(findings: list[Finding], counts: dict[str, int]) -> str:
    rows = []
    for f in findings:
        ours = _e(f.ours) if f.status != NOT_RUN else f"<span class=small>{_e(f.missing)}</span>"
        rows.append(
            f"<tr><td>{_e(f.claim)}<div class=small>check: {_e(f.check)}</div></td>"
            f"<td>{_e(f.theirs)}</td><td>{ours}</td>"
            f"<td class={_status_class(f.status)}>{_e(f.status)}</td></tr>"
        )
    return (
        f"<p>{counts['pass']} pass, {counts['fail']} fail, {counts[NOT_RUN]} not run. A burst <em>hurts</em> "
        f"when it raises the median FCT by ≥ {HURT:.0%} over the same CCA and RTT without a burst (its "
        "<em>baseline</em>); otherwise it is <em>handled</em>. Repetitions are reduced to their median. "
        "A finding whose inputs this sweep lacks is <em>not run</em>, and says what is missing.</p>"
        "<div class=scroll><table><tr><th>seed finding (and our check)</th><th>seed</th><th>ours</th>"
        "<th>result</th></tr>" + "".join(rows) + "</table></div>"
    )


def _cell(v: Any) -> str:
    if v is None:
        return "–"
    if isinstance(v, bool) or not isinstance(v, int | float):
        return _e(v)
    if isinstance(v, int) or float(v).is_integer() or abs(v) >= 100:
        return f"{v:,.0f}"
    return f"{v:.1f}" if abs(v) >= 10 else f"{v:.3g}"


def _table_html(t: Table) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in t.headers)
    body = "".join(
        "<tr>" + "".join(f"<td class=num>{_cell(v)}</td>" if num else f"<td>{_cell(v)}</td>"
                         for v, num in zip(row, t.numeric, strict=True)) + "</tr>"
        for row in t.rows)
    return f"<div class=scroll><table><tr>{head}</tr>{body}</table></div>"


def _swatch(k: Key) -> str:
    if k.style == "area":
        mark = f'<rect x="2" y="1" width="18" height="10" fill="{k.color}" fill-opacity="0.35"/>'
    else:
        dash = _DASHES.get(k.style, "")
        mark = (f'<line x1="1" y1="6" x2="21" y2="6" stroke="{k.color}" stroke-width="2"'
                + (f' stroke-dasharray="{dash}"' if dash else "") + "/>")
        if k.marker:
            mark += f'<circle cx="11" cy="6" r="3" fill="{k.color}"/>'
    return f'<span class=key><svg width="22" height="12" viewBox="0 0 22 12">{mark}</svg>{_e(k.label)}</span>'


def _keys_html(keys: list[Key]) -> str:
    return f"<div class=keys>{''.join(_swatch(k) for k in keys)}</div>" if keys else ""


def _chart_html(chart: Chart) -> str:
    panels = "".join(
        f"<div class=panel><p class=ptitle>{_e(p.title)}</p>{_keys_html(p.keys)}{figures.svg(p.fig)}</div>"
        for p in chart.panels)
    caption = f"<figcaption>{_e(chart.caption)}</figcaption>" if chart.caption else ""
    return f"<figure>{caption}{_keys_html(chart.keys)}<div class=panels>{panels}</div></figure>"


def _section_html(sec: Section) -> str:
    parts = [f'<section id="{_e(sec.key)}"><h2>{_e(sec.title)}</h2>']
    if sec.missing:
        parts.append(f"<p class=missing>Not in this sweep: {_e(sec.missing)}</p>")
    else:
        parts += [_chart_html(c) for c in sec.charts]
        if sec.table is not None:
            parts.append(_table_html(sec.table))
        if sec.note:
            parts.append(f"<p class=note>{_e(sec.note)}</p>")
    parts.append("</section>")
    return "".join(parts)


def _grid_text(report: Report) -> str:
    return "; ".join(f"{p} = {', '.join(map(str, v))}" for p, v in report.data.grid.items()) or "none"


def _baselines_text(report: Report) -> str:
    assert report.study is not None
    return ", ".join(
        f"{b['cca']} {b['rtt_s'] * 1e3:g} ms: " + ("unfinished" if b["fct_s"] is None else f"{b['fct_s']:.2f} s")
        for b in report.study.baselines) or "none in this sweep"


def to_html(report: Report) -> str:
    """The whole report as one HTML page that needs nothing else to display."""
    from burstlab import __version__

    d = report.data
    toc = ([("findings", report.study.title)] if report.study else []) + [
        (k, s.title) for k, s in report.sections.items()]
    header = (
        f"<h1>burstlab report: {_e(d.scenario_name)}</h1>"
        f"<p class=small>sweep {_e(d.out)} · {d.total_runs} runs ({d.error_runs} failed) · "
        f"{d.reps} repetition(s) per point · burstlab {_e(__version__)}</p>"
        f"<p>Grid: {_e(_grid_text(report))}.</p>"
        + "".join(f"<p class=missing>{_e(n)}</p>" for n in report.notes)
        + "<nav>" + "".join(f'<a href="#{_e(k)}">{_e(t)}</a>' for k, t in toc) + "</nav>"
    )
    body = []
    if report.study is not None:
        s = report.study
        body.append(
            f'<section id="findings"><h2>{_e(s.title)}</h2><p class=note>{_e(s.intro)}</p>'
            f"<p>No-burst baseline FCT: {_e(_baselines_text(report))}.</p>"
            f"{_findings_html(s.findings, s.counts)}</section>")
    body += [_section_html(sec) for sec in report.sections.values()]
    return (
        "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>burstlab report: {_e(d.scenario_name)}</title><style>{_CSS}</style></head><body>"
        + header + "".join(body) + "</body></html>\n"
    )


def _md_cell(v: Any) -> str:
    return _cell(v).replace("|", "\\|")


def to_markdown(report: Report) -> str:
    """As Markdown: a study's findings (when the sweep is one), else every grid point's outcome."""
    d = report.data
    lines = [
        f"# burstlab report: {d.scenario_name}",
        "",
        f"Sweep `{d.out}`: {d.total_runs} runs ({d.error_runs} failed); grid: {_grid_text(report)}.",
    ]
    for note in report.notes:
        lines += ["", note]
    s = report.study
    if s is not None:
        c = s.counts
        lines += [
            "", f"No-burst baseline FCT: {_baselines_text(report)}.", "",
            f"## Findings ({c['pass']} pass, {c['fail']} fail, {c[NOT_RUN]} not run)", "",
            "| finding | seed | ours | result |", "|---|---|---|---|",
        ]
        for f in s.findings:
            ours = f.ours if f.status != NOT_RUN else f"({f.missing})"
            lines.append(f"| {f.claim} | {f.theirs} | {ours} | **{f.status}** |")
        points = s.points
        if points:
            lines += ["", "## Longest FCT per CCA", ""]
            for cca in sorted({p["cca"] for p in points}):
                p = max((p for p in points if p["cca"] == cca),
                        key=lambda p: math.inf if p["fct_s"] is None else p["fct_s"])
                fct = "unfinished" if p["fct_s"] is None else f"{p['fct_s']:.2f} s"
                lines.append(f"- {cca}: {fct} ({p['duration_s'] * 1e3:g} ms burst at {p['start_s']:g} s, "
                             f"RTT {p['rtt_s'] * 1e3:g} ms, {p['retransmits']:,.0f} retransmits)")
    table = report.sections["points"].table
    if s is not None:  # the findings are the summary; the page and the JSON have every point
        lines += ["", f"Every grid point's outcome: the page's last table, or `burstlab report {d.out} --json` "
                  "(grid_points)."]
    elif table is not None:
        lines += ["", f"## {report.sections['points'].title}", "",
                  "| " + " | ".join(table.headers) + " |", "|" + "---|" * len(table.headers)]
        lines += ["| " + " | ".join(_md_cell(v) for v in row) + " |" for row in table.rows]
    return "\n".join(lines) + "\n"


def to_json(report: Report) -> dict[str, Any]:
    """The report's numbers as one JSON-ready object (unfinished FCTs are ``null``)."""
    d = report.data
    s = report.study
    study = None
    if s is not None:
        retx = report.sections.get("retransmissions")
        study = {
            "name": s.name,
            "findings": [f.to_json() for f in s.findings],
            "summary": s.counts,
            "baselines": s.baselines,
            "points": s.points,
            "retransmissions": retx.table.to_json() if retx is not None and retx.table is not None else [],
        }
    return {
        "sweep": str(d.out),
        "scenario": d.scenario_name,
        "runs": {"total": d.total_runs, "ok": len(d.runs), "error": d.error_runs},
        "grid": d.grid,
        "study": study,
        "notes": report.notes,
        "grid_points": [p.to_json() for p in point_outcomes(d)],
        "sections": {k: {"available": not sec.missing, "missing": sec.missing} for k, sec in report.sections.items()},
    }


def dumps(report: Report) -> str:
    return json.dumps(to_json(report), indent=2, allow_nan=False)
