"""Reports of sweeps: one self-contained HTML page (inline SVG figures that follow the page's
width), a Markdown summary or one JSON object, built from a sweep directory.

Every sweep gets its outcomes (completion time, goodput, retransmissions, queue) by grid value,
a table of every grid point and the time series of a few runs; a sweep of the AmLight study
also gets the study's findings checked on our data (:mod:`burstlab.report.amlight`).

>>> from burstlab.report import build, write
>>> report = build("burstlab-demo")                                  # doctest: +SKIP
>>> [(f.key, f.status) for f in report.study.findings]               # doctest: +SKIP
>>> write(report, "report.html")                                     # doctest: +SKIP

See docs/sweeps.md and docs/amlight.md.
"""

from __future__ import annotations

import os
from pathlib import Path

from burstlab.report import stop
from burstlab.report.build import SECTIONS, build
from burstlab.report.page import Report
from burstlab.report.render import dumps, to_html, to_json, to_markdown

__all__ = ["build", "write", "Report", "SECTIONS", "to_html", "to_markdown", "to_json", "dumps"]


def write(report: Report, path: str | os.PathLike[str]) -> Path:
    """Write ``report`` as HTML to ``path`` through a temporary name in the same directory, so
    that ``path`` is either the old page or the whole new one, also when interrupted."""
    path = Path(path)
    page = to_html(report)  # rendered before anything is written: the slow part
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.partial")
    try:
        tmp.write_text(page, encoding="utf-8")
        stop.check()
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path
