"""What every catalogue study shares: its parts (catalogue scenarios swept over a few values),
running them into one directory, and a findings table that sets each seed figure beside ours
with the error and pass/fail.

A study's parameters come from its seed's own statements or from published hardware facts,
named in each scenario file's header; its tolerances are fixed here before any run. A finding
that fails says why, from what the runs measured.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from burstlab.report.data import RunData, SweepData

__all__ = ["Part", "Study", "Finding", "StudyResult", "run", "findings", "compare", "within",
           "relation", "not_run", "rate_bps", "interval_sums", "swing", "PASS", "FAIL", "NOT_RUN"]

PASS, FAIL, NOT_RUN = "pass", "fail", "not run"


@dataclass(frozen=True)
class Part:
    """One sweep of a study: catalogue scenario ``scenario`` with ``set`` over ``grid``."""

    key: str  # its subdirectory of the study's directory
    scenario: str  # catalogue name, e.g. "grnet/dc"
    grid: Mapping[str, Sequence[str]]
    set: Sequence[str] = ()
    #: Run only where this burstlab accepts ``set`` (a key another part of burstlab adds, such as
    #: the host CPU model's ``cpu``); otherwise skipped, its findings "not run" with the reason.
    optional: bool = False
    #: An optional part's measured CPU seconds (a study's own ``cpu_s`` counts the others).
    cpu_s: float = 0.0

    @property
    def runs(self) -> int:
        return math.prod(len(v) for v in self.grid.values())


@dataclass(frozen=True)
class Finding:
    """One seed figure beside ours."""

    key: str
    claim: str  # the seed's finding, in words
    theirs: str  # the seed's figure
    ours: str  # ours ("" when not run)
    error: str  # ours against theirs ("" when it is a relation, not a number)
    status: str  # "pass", "fail" or "not run"
    check: str  # what passes
    why: str = ""  # for a fail or a not-run: the measured cause, or what is missing

    def to_json(self) -> dict[str, str]:
        return asdict(self)


@dataclass(frozen=True)
class Study:
    """A seed's study: its parts and how its findings are checked on their sweeps."""

    name: str
    title: str
    seed: str  # the seed document
    needs: str  # what the findings need of the path and the host, chosen before comparing
    parts: tuple[Part, ...]
    check: Callable[[Mapping[str, SweepData]], list[Finding]]
    #: CPU seconds of all runs, measured on the 2-core development machine (docs/studies.md).
    cpu_s: float = 0.0

    @property
    def runs(self) -> int:
        return sum(p.runs for p in self.parts)


@dataclass
class StudyResult:
    study: Study
    out: Path
    findings: list[Finding] = field(default_factory=list)
    failed_runs: int = 0
    skipped: dict[str, str] = field(default_factory=dict)  # optional part -> why it was not run

    @property
    def counts(self) -> dict[str, int]:
        return {s: sum(1 for f in self.findings if f.status == s) for s in (PASS, FAIL, NOT_RUN)}

    def to_json(self) -> dict[str, Any]:
        return {"study": self.study.name, "seed": self.study.seed, "needs": self.study.needs,
                "runs": self.study.runs, "failed_runs": self.failed_runs, "skipped": self.skipped,
                "counts": self.counts,
                "findings": [f.to_json() for f in self.findings]}

    def to_markdown(self) -> str:
        lines = [f"# {self.study.title}", "", f"Seed: {self.study.seed}.", "", f"Needs: {self.study.needs}", "",
                 "| finding | seed | ours | error | status | check |", "|---|---|---|---|---|---|"]
        for f in self.findings:
            status = f.status + (f" ({f.why})" if f.why else "")
            lines.append(f"| {_cell(f.claim)} | {_cell(f.theirs)} | {_cell(f.ours)} | {_cell(f.error)} | "
                         f"{_cell(status)} | {_cell(f.check)} |")
        c = self.counts
        lines += [f"\nPart {k} not run: {why}" for k, why in self.skipped.items()]
        lines += ["", f"{c[PASS]} pass, {c[FAIL]} fail, {c[NOT_RUN]} not run; {self.study.runs} runs "
                      f"({self.failed_runs} failed) in {self.out}/"]
        return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def run(study: Study, out: Path, *, jobs: int | None = None, reporter: Any = None) -> StudyResult:
    """Run every part of ``study`` into ``out/<part>/`` (finished runs are kept and resumed),
    then check its findings and write ``out/findings.md`` and ``out/findings.json``."""
    from burstlab import catalogue
    from burstlab.sweep import sweep

    failed = 0
    skipped = {}
    for part in study.parts:
        if part.optional and (why := unavailable(part)):
            skipped[part.key] = why
            continue
        result = sweep(catalogue.text(part.scenario), grid=dict(part.grid), set=list(part.set),
                       out=out / part.key, jobs=jobs, reporter=reporter)
        summary = result.summary
        failed += (summary.error + summary.not_run) if summary is not None else 0
    result = findings(study, out)
    result.failed_runs = failed
    result.skipped = skipped
    (out / "findings.md").write_text(result.to_markdown(), encoding="utf-8")
    (out / "findings.json").write_text(json.dumps(result.to_json(), indent=1) + "\n", encoding="utf-8")
    return result


def unavailable(part: Part) -> str:
    """Why this burstlab cannot run ``part`` (its scenario with its ``set`` does not load), or ""."""
    from burstlab import _core, catalogue
    from burstlab.errors import ScenarioError

    try:
        _core.load_scenario(catalogue.text(part.scenario), list(part.set))
    except ScenarioError as e:
        return str(e)
    return ""


def findings(study: Study, out: Path) -> StudyResult:
    """The findings of ``study`` on the sweeps already in ``out`` (none is run)."""
    from burstlab.report.data import load

    data = {p.key: load(out / p.key) for p in study.parts if (out / p.key / "sweep.json").exists()}
    return StudyResult(study, out, study.check(data))


# --- one run's numbers ---------------------------------------------------------------------

def params_of(data: SweepData, **want: str) -> RunData | None:
    """The first ok run of ``data`` whose grid values are ``want`` (paths with ``[``, ``]`` and
    ``.`` spelled as ``flow0_cca`` are not needed: pass a dict through ``**{"flow[0].cca": ...}``)."""
    for r in data.runs:
        if all(r.params.get(k) == v for k, v in want.items()):
            return r
    return None


def rate_bps(run: RunData) -> float:
    """Every TCP flow's delivered bits over the run's TCP time (the streams' sum)."""
    return run.goodput_bps or 0.0


def interval_sums(data: SweepData, run: RunData) -> list[tuple[float, float]]:
    """``(t_start_s, bits_per_second)`` of the sum over the run's TCP flows (its streams), per
    interval, in time order: iperf3's ``[SUM]`` lines."""
    rows = data.series("intervals", [run.run_id], "t_start_s, t_end_s, sum(bytes) AS bytes",
                       group_by="t_start_s, t_end_s").get(run.run_id)
    if not rows:
        return []
    return [(t0, b * 8 / (t1 - t0)) for t0, t1, b in zip(rows["t_start_s"], rows["t_end_s"], rows["bytes"],
                                                         strict=True) if t1 > t0]


def swing(data: SweepData | None, run: RunData | None, after_s: float = 5.0) -> str:
    """The run's lowest and highest per-second [SUM] from ``after_s`` on (past its ramp)."""
    sums = [b for t, b in interval_sums(data, run) if t >= after_s] if data and run else []
    return f"{min(sums) / 1e9:.2f}–{max(sums) / 1e9:.2f} Gbit/s per second" if sums else "no intervals"


# --- findings -----------------------------------------------------------------------------

def _gbps(bps: float) -> str:
    return f"{bps / 1e9:.2f} Gbit/s"


def not_run(key: str, claim: str, theirs: str, check: str, missing: str) -> Finding:
    return Finding(key, claim, theirs, "", "", NOT_RUN, check, missing)


def compare(key: str, claim: str, theirs: float, ours: float | None, tolerance: float, *,
            unit: Callable[[float], str] = _gbps, why: str = "", missing: str = "") -> Finding:
    """Ours against the seed's number: passes within ``tolerance`` (a fraction) of it."""
    check = f"within ±{tolerance:.0%} of the seed"
    if ours is None:
        return not_run(key, claim, unit(theirs), check, missing or "no run")
    err = ours / theirs - 1
    ok = abs(err) <= tolerance
    return Finding(key, claim, unit(theirs), unit(ours), f"{err:+.1%}", PASS if ok else FAIL, check,
                   "" if ok else why)


def within(key: str, claim: str, lo: float, hi: float, ours: Sequence[float], tolerance: float, *,
           unit: Callable[[float], str] = _gbps, why: str = "", missing: str = "") -> Finding:
    """Our values against the seed's range ``[lo, hi]``: each must lie in it, widened by
    ``tolerance``; the error is the farthest one's distance outside the range."""
    theirs = f"{unit(lo)} – {unit(hi)}"
    check = f"each of ours within the range ±{tolerance:.0%}"
    if not ours:
        return not_run(key, claim, theirs, check, missing or "no run")
    err = max((max(lo - v, v - hi, 0.0) / (lo if v < lo else hi)) for v in ours)
    ok = err <= tolerance
    return Finding(key, claim, theirs, ", ".join(unit(v) for v in ours),
                   "inside" if err == 0 else f"{err:.1%} outside", PASS if ok else FAIL, check,
                   "" if ok else why)


def relation(key: str, claim: str, theirs: str, ours: str, holds: bool | None, check: str, *,
             why: str = "", missing: str = "") -> Finding:
    """A finding that is a relation between our runs (``holds``; ``None``: not run)."""
    if holds is None:
        return not_run(key, claim, theirs, check, missing or "no run")
    return Finding(key, claim, theirs, ours, "", PASS if holds else FAIL, check, "" if holds else why)


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values))
