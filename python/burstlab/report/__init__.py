"""Reports of AmLight-style microburst sweeps: one self-contained HTML page (inline SVG figures),
a Markdown summary or one JSON object, built from a sweep directory, with the AmLight study's
findings checked on our data.

>>> from burstlab.report import build, write
>>> report = build("burstlab-demo")                                  # doctest: +SKIP
>>> [(f.key, f.status) for f in report.findings]                     # doctest: +SKIP
>>> write(report, "report.html")                                     # doctest: +SKIP

See docs/amlight.md.
"""

from __future__ import annotations

import os
from pathlib import Path

from burstlab.report.build import SECTIONS, Report, build
from burstlab.report.findings import FINDINGS, Finding, check_all
from burstlab.report.render import dumps, to_html, to_json, to_markdown

__all__ = [
    "build", "write", "Report", "Finding", "FINDINGS", "SECTIONS", "check_all",
    "to_html", "to_markdown", "to_json", "dumps",
]


def write(report: Report, path: str | os.PathLike[str]) -> Path:
    """Write ``report`` as HTML to ``path`` (through a temporary name, so a reader never sees a
    half-written page)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.partial")
    tmp.write_text(to_html(report), encoding="utf-8")
    os.replace(tmp, path)
    return path
