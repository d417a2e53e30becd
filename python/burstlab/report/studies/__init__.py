"""The catalogue's studies: each reproduces one seed document's findings from a few catalogue
scenarios and sets the seed's figures beside ours (docs/studies.md).

>>> from burstlab.report import studies
>>> [s.name for s in studies.catalogue()]
['amlight', 'amlight-full', 'esnet', 'htc24', 'grnet', 'dc']
>>> studies.get("grnet").runs
10

``burstlab study NAME`` runs one (``burstlab study`` lists them); the AmLight study is
``burstlab demo``, reported by :mod:`burstlab.report.amlight`.
"""

from __future__ import annotations

import importlib
import math
from dataclasses import dataclass

from burstlab.errors import BurstlabError
from burstlab.report.studies.core import Study, StudyResult, findings, run, unavailable

__all__ = ["Entry", "catalogue", "get", "names", "run", "findings", "Study", "StudyResult"]

#: Study name -> the module defining its ``STUDY``.
MODULES = {
    "esnet": "burstlab.report.studies.esnet",
    "htc24": "burstlab.report.studies.htc24",
    "grnet": "burstlab.report.studies.grnet",
}


@dataclass(frozen=True)
class Entry:
    """One line of the catalogue."""

    name: str
    seed: str
    runs: int  # the runs this burstlab can run
    cpu_s: float  # measured CPU seconds of those runs
    command: str
    skipped_runs: int = 0  # runs of optional parts this burstlab cannot run (a key it lacks)
    cpu_estimated: bool = False  # cpu_s is partly an estimate, not all measured


def names() -> list[str]:
    return list(MODULES)


def get(name: str) -> Study:
    """The study ``name``; :class:`~burstlab.errors.BurstlabError` naming the known ones."""
    if name not in MODULES:
        raise BurstlabError(f"study {name!r}: no such study; the catalogue has {', '.join(MODULES)} "
                            "(and amlight, run by `burstlab demo`, and dc, by `burstlab study dc`)")
    study: Study = importlib.import_module(MODULES[name]).STUDY
    return study


#: The AmLight demo's CPU time per run: its 210 runs took 365 CPU-seconds at b28626e
#: (docs/performance.md, "The AmLight study").
AMLIGHT_CPU_S_PER_RUN = 365.0 / 210
#: The full AmLight study's CPU time (``burstlab demo --full``): its 364-run grid and 42-run seeds/
#: part took 618 + 67 CPU-seconds at b28626e (docs/performance.md).
AMLIGHT_FULL_CPU_S = 618.0 + 67.0


def catalogue() -> list[Entry]:
    """Every study, the AmLight demo and full study first."""
    from burstlab.cli.demo import DEMO_GRID, DEMO_REPS, FULL_GRID, SEEDS_GRID

    seed = "000 (AmLight, \"Handling Microbursts @ AmLight\")"
    runs = math.prod(len(v) for v in DEMO_GRID.values()) * DEMO_REPS
    full = (math.prod(len(v) for v in FULL_GRID.values())
            + math.prod(len(v) for v in SEEDS_GRID.values()) * DEMO_REPS)
    out = [Entry("amlight", seed, runs, round(runs * AMLIGHT_CPU_S_PER_RUN), "burstlab demo"),
           Entry("amlight-full", seed, full, AMLIGHT_FULL_CPU_S, "burstlab demo --full")]
    for name in MODULES:
        s = get(name)
        optional = [(p, not unavailable(p)) for p in s.parts if p.optional]
        skipped = sum(p.runs for p, ok in optional if not ok)
        cpu_s = s.cpu_s + sum(p.cpu_s for p, ok in optional if ok)
        out.append(Entry(s.name, s.seed, s.runs - skipped, cpu_s, f"burstlab study {s.name}", skipped))
    from burstlab.report import dc  # not a sweep study: its own runner (burstlab.report.dc)

    out.append(Entry("dc", dc.SEED, dc.study.runs(), dc.CPU_S, "burstlab study dc"))
    return out
