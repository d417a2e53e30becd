"""What a report is made of, before it is rendered: sections holding charts (panels that share
one y-scale), tables and notes, or the reason the sweep cannot give them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from burstlab.report.amlight import StudyResult
    from burstlab.report.data import SweepData

__all__ = ["Panel", "Key", "Chart", "Table", "Section", "Report"]


@dataclass(frozen=True)
class Key:
    """A legend entry, drawn in the page above the panels it explains."""

    label: str
    color: str
    style: str = "-"  # matplotlib line style: "-", "--", ":", "-.", or "area" for a shaded span
    marker: bool = False


@dataclass
class Panel:
    """One plot: a matplotlib figure of one axes, titled in the page (where text wraps), with
    the legend entries that are its own."""

    title: str
    fig: Figure
    keys: list[Key] = field(default_factory=list)


@dataclass
class Chart:
    """Panels of one quantity on one y-scale (or one colour scale), side by side on a wide page
    and one under another on a narrow one."""

    panels: list[Panel]
    keys: list[Key] = field(default_factory=list)
    caption: str = ""


@dataclass
class Table:
    headers: list[str]  # as the page shows them
    rows: list[list[Any]]
    numeric: list[bool]  # per column: right-aligned figures
    keys: list[str] | None = None  # the columns' names in JSON, when not the headers

    def to_json(self) -> list[dict[str, Any]]:
        return [dict(zip(self.keys or self.headers, row, strict=True)) for row in self.rows]


@dataclass
class Section:
    key: str
    title: str
    charts: list[Chart] = field(default_factory=list)
    table: Table | None = None
    note: str = ""  # how to read it
    missing: str = ""  # why the sweep cannot give it (then nothing else is shown)


@dataclass
class Report:
    data: SweepData
    sections: dict[str, Section] = field(default_factory=dict)
    study: StudyResult | None = None  # the study this sweep is, with its findings
    notes: list[str] = field(default_factory=list)  # said once, under the page's heading
