"""From a sweep directory to a :class:`~burstlab.report.page.Report`.

Every sweep gets the same sections: its outcomes against each grid axis, a table of every grid
point, and the time series of a few runs. A sweep that is a known study (the AmLight study,
:mod:`burstlab.report.amlight`, is the one there is) also gets that study's findings and its
own sections, and its time series show the runs the study points at.
"""

from __future__ import annotations

from pathlib import Path

from burstlab.report import amlight, grid, timelines
from burstlab.report.data import load
from burstlab.report.page import Report

__all__ = ["build", "SECTIONS"]

#: Section id -> title of the sections every report has, in page order.
SECTIONS = {"outcomes": grid.GRID_SECTIONS["outcomes"], **timelines.TIMELINE_SECTIONS,
            "points": grid.GRID_SECTIONS["points"]}


def build(out: str | Path) -> Report:
    """The report of the sweep in ``out``."""
    data = load(out)
    report = Report(data)
    is_study, why_not = amlight.recognise(data)
    chosen = timelines.generic_choice(data)
    titles = {r.run_id: timelines.run_title(data, r) for r in chosen}
    note = ("iperf3-style intervals of each TCP flow (each value drawn over its own interval) in up to "
            "four runs that span the outcomes: the fastest, the slowest and two between.")
    if is_study:
        report.study, study_sections, chosen, titles = amlight.study(data)
        for sec in study_sections:
            report.sections[sec.key] = sec
        note = ("iperf3-style intervals of the transfer (each value drawn over its own interval): for each "
                "CCA its no-burst run and its burst run with the longest FCT.")
    elif why_not:
        report.notes.append(why_not)
    for sec in (
        grid.outcomes(data),
        timelines.timelines(data, chosen, lambda r: titles[r.run_id], note),
        timelines.queue(data, chosen, lambda r: titles[r.run_id]),
        grid.point_table(data),
    ):
        report.sections[sec.key] = sec
    return report
