"""The data-centre study's findings (seed-targets.md §5, seeds/004): each of the paper's figures
beside ours, with the error and a pass or fail, computed from a study file
(:mod:`burstlab.report.dc.study`). A part the file lacks is ``"not run"``, never a fail.

Tolerances, chosen before the figures were computed: slopes and peaks within 15 % of the
paper's (its testbed's hosts are not ours: see :data:`TOLERANCE`), goodput within 0.5 %, the
percentage reductions within their own stated ranges widened by 5 points.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from burstlab.report.dc import measure
from burstlab.report.dc.study import INCAST_SENDERS, LOADS, RATE_BPS, cv

__all__ = ["Finding", "check_all", "TOLERANCE", "PASS", "FAIL", "NOT_RUN"]

PASS, FAIL, NOT_RUN = "pass", "fail", "not run"
#: Relative error within which a slope or a queue peak matches the paper's.
TOLERANCE = 0.15
#: Points by which a reduction may fall outside the paper's range.
POINTS = 5.0


@dataclass(frozen=True)
class Finding:
    key: str
    claim: str
    theirs: str
    ours: str
    error: str
    status: str
    why: str = ""  # for a miss: the measured cause, as far as we know it

    def to_json(self) -> dict[str, str]:
        return asdict(self)


def _gbps(x: float) -> str:
    return f"{x / 1e9:.3f} Gbit/s"


def _kb(x: float) -> str:
    return f"{x / 1e3:.1f} KB"


def _rel(ours: float, theirs: float) -> tuple[str, bool]:
    err = ours / theirs - 1
    return f"{err * 100:+.1f} %", abs(err) <= TOLERANCE


def _finite(values: list[float | None]) -> list[float]:
    """The measured values of a list whose misses the study file holds as null."""
    return [x for x in values if x is not None and math.isfinite(x)]


def _not_run(key: str, claim: str, theirs: str) -> Finding:
    return Finding(key, claim, theirs, "", "", NOT_RUN)


def law1(d: dict[str, Any]) -> list[Finding]:
    claim = "Law 1: with no background flow, phase 2 rises at the port speed"
    if "law1" not in d:
        return [_not_run("law1", claim, "1.005 Gbit/s, CV 0.018")]
    s = _finite(d["law1"]["phase2_bps"])
    m = measure.mean(s)
    err, ok = _rel(m, 1.005e9)
    return [Finding("law1", claim, "1.005 Gbit/s, CV 0.018", f"{_gbps(m)}, CV {cv(s):.3f} ({len(s)} runs)",
                    err, PASS if ok else FAIL)]


def law1_staggered(d: dict[str, Any]) -> list[Finding]:
    claim = "asynchronous fan-in (18 flows started within 2 ms): phase 2 still at the port speed"
    if "law1_staggered" not in d:
        return [_not_run("law1-staggered", claim, "1 Gbit/s (Fig. 7)")]
    s = _finite(d["law1_staggered"]["phase2_bps"])
    m = measure.mean(s)
    err, ok = _rel(m, RATE_BPS)
    return [Finding("law1-staggered", claim, "1 Gbit/s (Fig. 7)", f"{_gbps(m)}, CV {cv(s):.3f} ({len(s)} runs)",
                    err, PASS if ok else FAIL)]


def law2(d: dict[str, Any]) -> list[Finding]:
    out = []
    for n, theirs in (("3", 0.613e9), ("6", 0.622e9), ("9", 0.641e9)):
        claim = f"Law 2: {n} background flows at the same hop: phase 2 slower than the port"
        if "law2" not in d:
            out.append(_not_run(f"law2-{n}", claim, _gbps(theirs)))
            continue
        s = _finite(d["law2"][n]["phase2_bps"])
        m = measure.mean(s)
        err, ok = _rel(m, theirs)
        out.append(Finding(f"law2-{n}", claim, _gbps(theirs), f"{_gbps(m)} ({len(s)} of the runs)", err,
                           PASS if ok and m < RATE_BPS else FAIL))
    return out


def law3(d: dict[str, Any]) -> list[Finding]:
    out = []
    for kb, theirs in (("128", 0.804e9), ("256", 1.009e9), ("512", 1.170e9)):
        claim = f"Law 3: {kb} KB hidden buffer: phase 2 within 2aR/(a + R)"
        if "law3" not in d:
            out.append(_not_run(f"law3-{kb}", claim, _gbps(theirs)))
            continue
        r = d["law3"][kb]
        s = _finite(r["phase2_bps"])
        a = [x + RATE_BPS for x in _finite(r["phase1_bps"])]
        m = measure.mean(s)
        bound = measure.hidden_buffer_bound(measure.mean(a), RATE_BPS) if a else 2 * RATE_BPS
        err, ok = _rel(m, theirs)
        out.append(Finding(f"law3-{kb}", claim, _gbps(theirs),
                           f"{_gbps(m)} (bound {_gbps(bound)}, {len(s)} of the runs)", err,
                           PASS if ok and m <= bound else FAIL))
    return out


def peaks(d: dict[str, Any]) -> list[Finding]:
    rows = (("dctcp", "DCTCP's queue peak with 9 senders (K = 32 KB)", 104e3),
            ("dctcp-k2", "DCTCP with K = 2 KB still peaks high", 65.7e3),
            ("dequeue", "DCTCP with dequeue marking", 74e3))
    out = []
    p = d.get("secn_peaks")
    for key, claim, theirs in rows:
        if p is None:
            out.append(_not_run(f"peak-{key}", claim, _kb(theirs)))
            continue
        ours = p[key][0]  # the first query: fresh connections, as the paper's runs
        err, ok = _rel(ours, theirs)
        out.append(Finding(f"peak-{key}", claim, _kb(theirs), _kb(ours), err, PASS if ok else FAIL))
    claim = "DCTCP+S-ECN's queue peak with 9 senders is under 47 KB"
    if p is None:
        out.append(_not_run("peak-s-ecn", claim, "< 47 KB"))
    else:
        ours = p["s-ecn"][0]
        out.append(Finding("peak-s-ecn", claim, "< 47 KB", _kb(ours), f"{(ours / 47e3 - 1) * 100:+.1f} %",
                           PASS if ours < 47e3 else FAIL))
    claim = "with 36 senders S-ECN lowers the maximum queue by 20.7 %"
    if p is None:
        out.append(_not_run("peak-36", claim, "-20.7 %"))
    else:
        red = measure.reduction(max(p["dctcp-36"]), max(p["s-ecn-36"]))
        out.append(Finding("peak-36", claim, "-20.7 %", f"-{red:.1f} % ({_kb(max(p['dctcp-36']))} -> "
                           f"{_kb(max(p['s-ecn-36']))})", f"{red - 20.7:+.1f} points",
                           PASS if abs(red - 20.7) <= POINTS else FAIL))
    return out


def goodput(d: dict[str, Any]) -> list[Finding]:
    out = []
    for key, theirs in (("dctcp", 941.4e6), ("s-ecn", 941.5e6)):
        claim = f"3 long flows' goodput ({'DCTCP' if key == 'dctcp' else 'DCTCP+S-ECN'})"
        if "goodput" not in d:
            out.append(_not_run(f"goodput-{key}", claim, "941.4 Mbit/s"))
            continue
        ours = d["goodput"][key]
        err = ours / theirs - 1
        out.append(Finding(f"goodput-{key}", claim, f"{theirs / 1e6:.1f} Mbit/s", f"{ours / 1e6:.1f} Mbit/s",
                           f"{err * 100:+.2f} %", PASS if abs(err) <= 0.005 else FAIL))
    return out


def incast(d: dict[str, Any]) -> list[Finding]:
    claim = "incast, 128 KB ports: DCTCP+S-ECN's QCT much lower than DCTCP's from 19 to 32 senders"
    if "incast" not in d:
        return [_not_run("incast", claim, "lower at 19-32")]
    i = d["incast"]
    cells = []
    better = True
    for n in INCAST_SENDERS:
        a, b = measure.mean(i[f"dctcp-{n}"]), measure.mean(i[f"s-ecn-{n}"])
        cells.append(f"{n}: {a * 1e3:.1f}->{b * 1e3:.1f} ms")
        if 19 <= n <= 32 and not b < 0.8 * a:
            better = False
    return [Finding("incast", claim, "lower at 19-32", "; ".join(cells), "", PASS if better else FAIL)]


def websearch(d: dict[str, Any]) -> list[Finding]:
    keys = (("qct-mean", "web search: mean QCT lower with S-ECN", (12, 27)),
            ("qct-p99", "web search: 99th percentile QCT lower with S-ECN", (6, 62)),
            ("small-mean", "web search: small background flows' mean FCT lower (5.1 % at 0.2 to 82.5 % at 0.6)",
             (5.1, 82.5)))
    w = d.get("websearch")
    out = []
    for key, claim, (lo, hi) in keys:
        theirs = f"-{lo}...{hi} %"
        if w is None:
            out.append(_not_run(f"ws-{key}", claim, theirs))
            continue
        reds = []
        for load in LOADS:
            a, b = w.get(f"dctcp-{load}"), w.get(f"s-ecn-{load}")
            if a is None or b is None:
                continue
            stat: Callable[[dict[str, Any]], float] = {
                "qct-mean": lambda r: measure.mean(r["qct_s"]),
                "qct-p99": lambda r: measure.percentile(r["qct_s"], 99),
                "small-mean": lambda r: measure.mean(r["fct_s"]["small"]),
            }[key]
            reds.append((load, measure.reduction(stat(a), stat(b))))
        ok = bool(reds) and all(lo - POINTS <= r <= hi + POINTS for _, r in reds)
        ours = ", ".join(f"{load}: {-r:+.1f} %" for load, r in reds)
        out.append(Finding(f"ws-{key}", claim, theirs, f"{ours} ({d.get('websearch_seconds', '?')} s each)", "",
                           PASS if ok else FAIL))
    claim = "web search: large background flows (> 10 MB) slightly slower with S-ECN"
    if w is None:
        out.append(_not_run("ws-large", claim, "slightly worse"))
    else:
        reds = [(load, measure.reduction(measure.mean(w[f"dctcp-{load}"]["fct_s"]["large"]),
                                         measure.mean(w[f"s-ecn-{load}"]["fct_s"]["large"])))
                for load in LOADS if f"dctcp-{load}" in w and f"s-ecn-{load}" in w]
        ok = bool(reds) and all(-25 <= r <= POINTS for _, r in reds)
        out.append(Finding("ws-large", claim, "slightly worse", ", ".join(f"{lo}: {-r:+.1f} %" for lo, r in reds),
                           "", PASS if ok else FAIL))
    return out


def _pairs(w: dict[str, Any]) -> list[tuple[float, dict[str, Any], dict[str, Any]]]:
    return [(load, w[f"dctcp-{load}"], w[f"s-ecn-{load}"]) for load in LOADS
            if f"dctcp-{load}" in w and f"s-ecn-{load}" in w]


def in_flight(run: dict[str, Any], seconds: float) -> float:
    """Background flows in flight on average over a run (Little's law: their completion times
    summed over the run's length; the flows still running at its end are not counted)."""
    return sum(sum(v) for v in run["fct_s"].values()) / seconds


def websearch_measured(d: dict[str, Any]) -> dict[str, str]:
    """What the web-search runs in ``d`` measured behind each miss, per load: RTOs and retransmits
    on the queries' answer connections and on the background's, the background bytes S-ECN delivered against
    DCTCP's, and the background flows in flight. Empty for runs that predate these fields."""
    w, seconds = d.get("websearch"), d.get("websearch_seconds")
    if not w or not seconds:
        return {}
    pairs = [(lo, a, b) for lo, a, b in _pairs(w) if "tcp" in a and "tcp" in b]
    if not pairs:
        return {}
    def tcp(run: dict[str, Any], conns: str, key: str) -> float:
        return run["tcp"][conns][key]

    def losses(run: dict[str, Any], conns: str) -> str:
        return f"{tcp(run, conns, 'timeouts')} ({tcp(run, conns, 'retransmits')})"

    rtos = "; ".join(f"{lo}: {losses(a, 'answers')} / {losses(b, 'answers')} on the answers, "
                     f"{losses(a, 'background')} / {losses(b, 'background')} on the background"
                     for lo, a, b in pairs)
    more = [(lo, -measure.reduction(tcp(a, "background", "delivered_bytes"), tcp(b, "background", "delivered_bytes")))
            for lo, a, b in pairs]
    carried = ", ".join(f"{lo}: {x:+.1f} %" for lo, x in more)
    flight = ", ".join(f"{lo}: {in_flight(a, seconds):.1f} -> {in_flight(b, seconds):.1f}" for lo, a, b in pairs)
    timeouts = f"RTOs (retransmits), DCTCP / S-ECN, {rtos}"
    slower = (f"background bytes delivered, S-ECN against DCTCP, {carried}; background flows in flight, "
              f"DCTCP -> S-ECN, {flight}")
    return {"ws-qct-mean": timeouts, "ws-qct-p99": timeouts, "ws-small-mean": slower, "ws-large": slower}


def incast_measured(d: dict[str, Any]) -> dict[str, str]:
    """What the incast runs in ``d`` lost per marking at each sender count: drops at the port,
    RTOs and loss probes summed over the runs, and how many of the runs sent a loss probe at
    all. Empty for runs that predate these fields."""
    losses = d.get("incast", {}).get("losses")
    if not losses:
        return {}

    def lost(key: str) -> str:
        x = losses[key]
        probed = sum(p > 0 for p in x["loss_probes"])
        return f"{sum(x['drops'])} / {sum(x['timeouts'])} / {sum(x['loss_probes'])} ({probed} of {len(x['drops'])} runs)"

    cells = "; ".join(f"{n}: {lost(f'dctcp-{n}')} against {lost(f's-ecn-{n}')}" for n in INCAST_SENDERS
                      if f"dctcp-{n}" in losses and f"s-ecn-{n}" in losses)
    return {"incast": f"drops / RTOs / loss probes (runs with a probe), DCTCP against S-ECN, {cells}"}


def check_all(d: dict[str, Any], why: dict[str, str] | None = None) -> list[Finding]:
    """Every finding on study data ``d``; ``why`` adds the measured cause of each known miss,
    followed by what this study's own runs measured behind it where they record it."""
    found = [*law1(d), *law1_staggered(d), *law2(d), *law3(d), *peaks(d), *goodput(d), *incast(d), *websearch(d)]
    why = why or {}
    measured = {**websearch_measured(d), **incast_measured(d)}

    def cause(key: str) -> str:
        text = why.get(key, "")
        return f"{text}; these runs: {measured[key]}" if text and key in measured else text

    return [Finding(**{**f.to_json(), "why": cause(f.key)}) if f.status == FAIL else f for f in found]
