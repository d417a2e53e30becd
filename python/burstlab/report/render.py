"""A :class:`~burstlab.report.build.Report` as one self-contained HTML page (inline SVG and CSS,
nothing fetched), a Markdown summary, or one JSON object."""

from __future__ import annotations

import html
import json
import math
from typing import Any

from burstlab.report.build import SECTIONS, Report, Section
from burstlab.report.findings import HURT, NOT_RUN, Finding

__all__ = ["to_html", "to_markdown", "to_json", "dumps"]

_CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto; max-width: 1200px; color: #222; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: .2em; } h2 { font-size: 1.25em; margin-top: 2em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: .6em 0; font-size: 13px; }
th, td { border: 1px solid #ccc; padding: .25em .6em; vertical-align: top; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
th { background: #f3f3f3; }
.pass { background: #dff3df; color: #1a5e1a; font-weight: 600; }
.fail { background: #fbe0e0; color: #8a1414; font-weight: 600; }
.notrun { background: #eee; color: #555; }
.missing { color: #8a5a00; background: #fff6e0; padding: .4em .7em; border-left: 3px solid #e0a000; }
.note { color: #555; font-size: 13px; }
.small { color: #666; font-size: 12px; }
figure { margin: .5em 0; overflow-x: auto; } figure svg { max-width: 100%; height: auto; }
"""


def _e(text: Any) -> str:
    return html.escape(str(text))


def _status_class(status: str) -> str:
    return {"pass": "pass", "fail": "fail"}.get(status, "notrun")


def _counts(findings: list[Finding]) -> dict[str, int]:
    return {s: sum(1 for f in findings if f.status == s) for s in ("pass", "fail", NOT_RUN)}


def _findings_html(findings: list[Finding]) -> str:
    rows = []
    for f in findings:
        ours = _e(f.ours) if f.status != NOT_RUN else f"<span class=small>{_e(f.missing)}</span>"
        rows.append(
            f"<tr><td>{_e(f.claim)}<div class=small>check: {_e(f.check)}</div></td>"
            f"<td>{_e(f.theirs)}</td><td>{ours}</td>"
            f"<td class={_status_class(f.status)}>{_e(f.status)}</td></tr>"
        )
    c = _counts(findings)
    return (
        f"<p>{c['pass']} pass, {c['fail']} fail, {c['not run']} not run. A burst <em>hurts</em> when "
        f"it raises the median FCT by ≥ {HURT:.0%} over the same CCA and RTT without a burst (its "
        "<em>baseline</em>); otherwise it is <em>handled</em>. Repetitions are reduced to their median. "
        "A finding whose inputs this sweep lacks is <em>not run</em>, and says what is missing.</p>"
        "<table><tr><th>seed finding (and our check)</th><th>seed</th><th>ours</th><th>result</th></tr>"
        + "".join(rows) + "</table>"
    )


def _num(v: Any) -> str:
    if v is None:
        return "–"
    if isinstance(v, float) and v.is_integer() or isinstance(v, int):
        return f"{int(v):,}"
    return f"{v:,.1f}"


def _retx_html(rows: list[dict[str, Any]]) -> str:
    head = ("<tr><th>CCA</th><th>RTT (ms)</th><th>burst start (s)</th><th>runs</th><th>median</th>"
            "<th>p95</th><th>seed median</th><th>seed p95</th></tr>")
    body = "".join(
        f"<tr><td>{_e(r['cca'])}</td><td class=num>{r['rtt_ms']}</td><td class=num>{r['start_s']:g}</td>"
        f"<td class=num>{r['runs']}</td><td class=num>{_num(r['median'])}</td><td class=num>{_num(r['p95'])}</td>"
        f"<td class=num>{_num(r['seed_median'])}</td><td class=num>{_num(r['seed_p95'])}</td></tr>"
        for r in rows
    )
    return f"<table>{head}{body}</table>"


def _section_html(sec: Section) -> str:
    parts = [f'<section id="{sec.key}"><h2>{_e(sec.title)}</h2>']
    if sec.missing:
        parts.append(f"<p class=missing>Not in this sweep: {_e(sec.missing)}</p>")
    else:
        if sec.svg:
            parts.append(f"<figure>{sec.svg}</figure>")
        if sec.table is not None:
            parts.append(_retx_html(sec.table))
        if sec.note:
            parts.append(f"<p class=note>{_e(sec.note)}</p>")
    parts.append("</section>")
    return "".join(parts)


def _grid_text(report: Report) -> str:
    return "; ".join(f"{p} = {', '.join(map(str, v))}" for p, v in report.data.grid.items())


def to_html(report: Report) -> str:
    """The whole report as one HTML page that needs nothing else to display."""
    from burstlab import __version__

    d = report.data
    baselines = ", ".join(
        f"{b['cca']} {b['rtt_s'] * 1e3:g} ms: " + ("unfinished" if b["fct_s"] is None else f"{b['fct_s']:.2f} s")
        for b in report.baselines) or "none in this sweep"
    header = (
        f"<h1>burstlab report: {_e(d.scenario_name)}</h1>"
        f"<p class=small>sweep {_e(d.out)} · {d.total_runs} runs ({d.error_runs} failed) · "
        f"{d.reps} repetition(s) per point · burstlab {_e(__version__)}</p>"
        f"<p>Grid: {_e(_grid_text(report))}.<br>No-burst baseline FCT: {_e(baselines)}.</p>"
        "<p class=note>The seed is the AmLight study \"Handling Microbursts @ AmLight\" (2023): a 13 GB "
        "iperf3 transfer at 100 Gbit/s over 209 and 301 ms, hit by 4 × 25 Gbit/s bursts, with H-TCP and "
        "BBR; its target is 13 GB in under 7 s.</p>"
    )
    body = [f'<section id="findings"><h2>{_e(SECTIONS["findings"])}</h2>{_findings_html(report.findings)}</section>']
    body += [_section_html(report.sections[k]) for k in SECTIONS if k in report.sections]
    return (
        "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
        f"<title>burstlab report: {_e(d.scenario_name)}</title><style>{_CSS}</style></head><body>"
        + header + "".join(body) + "</body></html>\n"
    )


def to_markdown(report: Report) -> str:
    """Findings and key numbers as Markdown."""
    d = report.data
    c = _counts(report.findings)
    lines = [
        f"# burstlab report: {d.scenario_name}",
        "",
        f"Sweep `{d.out}`: {d.total_runs} runs ({d.error_runs} failed); grid: {_grid_text(report)}.",
        "",
        "No-burst baseline FCT: " + (", ".join(
            f"{b['cca']} at {b['rtt_s'] * 1e3:g} ms "
            + ("unfinished" if b["fct_s"] is None else f"{b['fct_s']:.2f} s") for b in report.baselines)
            or "none in this sweep") + ".",
        "",
        f"## Findings ({c['pass']} pass, {c['fail']} fail, {c['not run']} not run)",
        "",
        "| finding | seed | ours | result |",
        "|---|---|---|---|",
    ]
    for f in report.findings:
        ours = f.ours if f.status != NOT_RUN else f"({f.missing})"
        lines.append(f"| {f.claim} | {f.theirs} | {ours} | **{f.status}** |")
    worst = [p for p in report.points if p["fct_s"] is None or p["fct_s"] > 0]
    if worst:
        lines += ["", "## Longest FCT per CCA", ""]
        for cca in sorted({p["cca"] for p in worst}):
            p = max((p for p in worst if p["cca"] == cca), key=lambda p: math.inf if p["fct_s"] is None else p["fct_s"])
            fct = "unfinished" if p["fct_s"] is None else f"{p['fct_s']:.2f} s"
            lines.append(f"- {cca}: {fct} ({p['duration_s'] * 1e3:g} ms burst at {p['start_s']:g} s, "
                         f"RTT {p['rtt_s'] * 1e3:g} ms, {p['retransmits']:,.0f} retransmits)")
    return "\n".join(lines) + "\n"


def to_json(report: Report) -> dict[str, Any]:
    """The report's numbers as one JSON-ready object (unfinished FCTs are ``null``)."""
    d = report.data
    return {
        "sweep": str(d.out),
        "scenario": d.scenario_name,
        "runs": {"total": d.total_runs, "ok": len(d.runs), "error": d.error_runs},
        "grid": d.grid,
        "findings": [f.to_json() for f in report.findings],
        "summary": _counts(report.findings),
        "baselines": report.baselines,
        "points": report.points,
        "retransmissions": report.sections["retransmissions"].table or [],
        "sections": {k: {"available": not s.missing, "missing": s.missing} for k, s in report.sections.items()},
    }


def dumps(report: Report) -> str:
    return json.dumps(to_json(report), indent=2, allow_nan=False)
