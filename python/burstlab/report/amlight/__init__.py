"""The AmLight microburst study ("Handling Microbursts @ AmLight"; docs/amlight.md): recognised
from the sweep's definition, then its findings checked on the sweep and its own sections added.

A sweep is the study when its scenario is one of the study's (``scenarios/amlight/base-*.toml``,
named in :data:`SCENARIOS`) and its grid sweeps nothing but the study's parameters
(:data:`~burstlab.report.amlight.runs.PATHS`): the findings compare runs that differ only in
those, so a grid that also varies, say, the buffer would pool runs the study keeps apart. A
sweep of the study in its subdirectory ``seeds/`` (the full study's repeated points) is read
with it: its runs stand in for the sweep's at its points.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from burstlab.report.amlight import sections
from burstlab.report.amlight.findings import NOT_RUN, Finding, check_all
from burstlab.report.amlight.runs import PATHS, SEEDS_DIR, Run, study_runs, with_seeds
from burstlab.report.data import RunData, SweepData, load
from burstlab.report.page import Section

__all__ = ["SCENARIOS", "StudyResult", "recognise", "study"]

#: The names (``name =``) of the study's scenario files.
SCENARIOS = ("amlight-base-209ms", "amlight-base-301ms")

INTRO = ("The seed is the AmLight study \"Handling Microbursts @ AmLight\" (2023): a 13 GB iperf3 "
         "transfer at 100 Gbit/s over 209 and 301 ms, hit by 4 × 25 Gbit/s bursts, with H-TCP and "
         "BBR; its target is 13 GB in under 7 s.")


@dataclass
class StudyResult:
    """The study's findings on a sweep, and the runs they were computed from."""

    runs: list[Run]
    findings: list[Finding]
    name: str = "amlight"
    title: str = "Findings: the AmLight study checked on this sweep"
    intro: str = INTRO
    #: Runs read from the sweep's ``seeds/`` part (0 without one).
    seeded_runs: int = 0

    @property
    def counts(self) -> dict[str, int]:
        return {s: sum(1 for f in self.findings if f.status == s) for s in ("pass", "fail", NOT_RUN)}

    @property
    def baselines(self) -> list[dict[str, Any]]:
        """Median FCT of the no-burst runs per (CCA, RTT); ``None`` when unfinished."""
        by: dict[tuple[str, float], list[float]] = defaultdict(list)
        for r in self.runs:
            if r.is_baseline:
                by[(r.cca, r.rtt_s)].append(r.fct_s)
        return [{"cca": c, "rtt_s": rtt, "fct_s": _finite(statistics.median(f)), "runs": len(f)}
                for (c, rtt), f in sorted(by.items())]

    @property
    def points(self) -> list[dict[str, Any]]:
        """Median FCT and retransmits per (CCA, RTT, burst start, burst duration), with their
        seed-to-seed spread (smallest and largest over the point's repetitions)."""
        return [
            {"cca": c, "rtt_s": rtt, "start_s": s, "duration_s": d,
             "fct_s": _finite(statistics.median(r.fct_s for r in g)),
             "fct_min_s": _finite(min(r.fct_s for r in g)), "fct_max_s": _finite(max(r.fct_s for r in g)),
             "retransmits": statistics.median(r.retransmits for r in g),
             "retransmits_min": min(r.retransmits for r in g), "retransmits_max": max(r.retransmits for r in g),
             "runs": len(g)}
            for (c, rtt, s, d), g in sorted(sections.groups(self.runs).items())
        ]


def _finite(x: float) -> float | None:
    return None if x == float("inf") else x


def recognise(data: SweepData) -> tuple[bool, str]:
    """Whether the sweep is the study; when its scenario is the study's but its grid is not,
    ``(False, why)`` for the page to say."""
    if data.scenario_name not in SCENARIOS:
        return False, ""
    other = [a.path for a in data.swept_axes if a.path not in PATHS]
    if other:
        return False, (f"The AmLight study's findings are not checked: this sweep of {data.scenario_name} "
                       f"also varies {', '.join(other)}, and the findings compare runs that differ only in "
                       f"{', '.join(PATHS)}.")
    return True, ""


def seeds_part(data: SweepData) -> list[Run]:
    """The runs of the study's repeated points, ``data.out/seeds`` (none when it is absent).
    A ``seeds/`` that is not a sweep of the study's scenario, or that sweeps other parameters,
    is refused: its runs would stand in for points they do not measure."""
    from burstlab.sweep import SweepError

    path = data.out / SEEDS_DIR
    if not path.is_dir():
        return []
    seeds = load(path)
    if seeds.scenario_name != data.scenario_name:
        raise SweepError(f"{path}: the repeated points of the study must be a sweep of {data.scenario_name}, "
                         f"found one of {seeds.scenario_name}")
    ok, why = recognise(seeds)
    if not ok:
        raise SweepError(f"{path}: {why or 'not a sweep of the AmLight study'}")
    if seeds.scenario != data.scenario:
        field, theirs, ours = _first_mismatch(seeds.scenario, data.scenario)
        raise SweepError(f"{path}: the repeated points must run the study's scenario with the same --set; "
                         f"its {field} = {theirs!r}, expected the study's {ours!r}")
    return study_runs(seeds, SEEDS_DIR)


_ABSENT = "(absent)"


def _first_mismatch(got: Any, expected: Any, field: str = "") -> tuple[str, Any, Any]:
    """The first leaf of two normalised scenarios that differs, as ``(field, got, expected)``
    with ``field`` spelled like ``flows[0].size_bytes``; the caller knows they differ."""
    if isinstance(got, dict) and isinstance(expected, dict):
        for key in sorted(set(got) | set(expected)):
            if got.get(key, _ABSENT) != expected.get(key, _ABSENT):
                return _first_mismatch(got.get(key, _ABSENT), expected.get(key, _ABSENT),
                                       f"{field}.{key}" if field else key)
    if isinstance(got, list) and isinstance(expected, list) and len(got) == len(expected):
        for i, (g, e) in enumerate(zip(got, expected)):
            if g != e:
                return _first_mismatch(g, e, f"{field}[{i}]")
    if isinstance(got, list) and isinstance(expected, list):
        return f"{field} (length)", len(got), len(expected)
    return field, got, expected


def study(data: SweepData) -> tuple[StudyResult, list[Section], list[RunData], dict[int, str]]:
    """The study on ``data`` (with its ``seeds/`` part, when it has one): its findings, its
    sections, and the runs (with titles) its time series show, all of ``data`` itself."""
    own = study_runs(data)
    seeded = seeds_part(data)
    runs = with_seeds(own, seeded)
    intro = INTRO
    if seeded:
        points = len({(r.cca, r.rtt_s, r.start_s, r.duration_s) for r in seeded})
        intro += (f" The {points} points of its {SEEDS_DIR}/ part ({len(seeded)} runs) are judged on the median "
                  "over their seeds, the rest on the sweep's one seed per point.")
    result = StudyResult(runs, check_all(runs), intro=intro, seeded_runs=len(seeded))
    secs = [sections.fct_duration(data, runs), sections.fct_heatmap(data, runs), sections.retransmissions(runs),
            sections.seed_spread(runs)]
    return result, secs, sections.chosen_runs(data, own), sections.title(own)
