"""The sweep's runs reduced to what the AmLight study compares: the transfer's CCA, RTT, burst
start and duration, and its completion time and retransmissions.

The full study is two sweeps: its grid, one seed per point, and in the grid's subdirectory
:data:`SEEDS_DIR` a sweep of the points that findings judge one at a time (experiment A, 1.5 s
at 209 ms) at the demo's three seeds. :func:`with_seeds` reads both, the second sweep's runs
standing in for the grid's at its points (docs/amlight.md, "One seed or three").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from burstlab.report.data import SweepData

__all__ = ["Run", "study_runs", "with_seeds", "point_key", "CCA", "RTT", "BURST_START", "BURST_DURATION", "PATHS",
           "SEEDS_DIR"]

#: The grid paths the study varies (as `--grid` and runs.parquet name them).
CCA = "flow[0].cca"
RTT = "topology.rtt"
BURST_START = "burst[0].start"
BURST_DURATION = "burst[0].duration"
PATHS = (CCA, RTT, BURST_START, BURST_DURATION)
#: The subdirectory of the study's sweep that holds its repeated points (``--reps 3``).
SEEDS_DIR = "seeds"


@dataclass(frozen=True)
class Run:
    """One ok run of the study: the transfer (flow 0) against the first burst.

    ``duration_s`` is 0 for a run whose burst sent nothing (``burst[0].duration=1ns``, a
    scenario without a burst): a no-burst baseline. ``fct_s`` is ``inf`` when the transfer did
    not finish before the scenario's ``stop``. ``rep`` is the sweep repetition (0 in a sweep
    without ``--reps``): runs of one repetition form one whole copy of the grid.
    """

    run_id: int
    cca: str
    rtt_s: float
    start_s: float
    duration_s: float
    fct_s: float
    retransmits: int
    rep: int = 0
    #: "" for a run of the sweep itself, :data:`SEEDS_DIR` for one of its repeated points.
    part: str = ""

    @property
    def is_baseline(self) -> bool:
        return self.duration_s == 0

    @property
    def finished(self) -> bool:
        return not math.isinf(self.fct_s)


def point_key(r: Run) -> tuple[str, float, float, float]:
    """The grid point of ``r``: (CCA, RTT, burst start, burst duration), rounded to the nanosecond
    so that a value parsed from ``--grid`` and one read from the scenario file compare equal."""
    return r.cca, round(r.rtt_s, 9), round(r.start_s, 9), round(r.duration_s, 9)


def with_seeds(runs: list[Run], seeds: list[Run]) -> list[Run]:
    """``runs`` with the runs at each point of ``seeds`` replaced by those of ``seeds``: a point
    judged on three seeds is judged on those three, not on four (a median of four halves the
    two middle values, which for a two-valued point is a value no seed gave)."""
    repeated = {point_key(r) for r in seeds}
    return [r for r in runs if point_key(r) not in repeated] + seeds


def study_runs(data: SweepData, part: str = "") -> list[Run]:
    """Each ok run whose transfer (the first TCP flow) is sized, as a :class:`Run` of ``part``."""
    out = []
    for r in data.runs:
        transfer = r.flows[0] if r.flows else None
        if transfer is None or not transfer.sized:
            continue
        bursts = r.scenario.get("bursts", [])
        burst = bursts[0] if bursts else None
        out.append(Run(
            run_id=r.run_id,
            cca=transfer.cca,
            rtt_s=float(r.scenario["topology"].get("rtt_s", math.nan)),
            start_s=float(burst["start_s"]) if burst else math.nan,
            # A burst that delivered nothing is no burst, whatever its nominal duration.
            duration_s=float(burst["duration_s"]) if burst and r.burst_bytes > 0 else 0.0,
            fct_s=transfer.fct_s,
            retransmits=transfer.retransmits,
            rep=r.rep,
            part=part,
        ))
    return out
