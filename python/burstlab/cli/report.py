"""``burstlab report``: the report of a sweep (HTML page, Markdown or JSON)."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from burstlab.cli import status


class Format(str, Enum):
    html = "html"
    md = "md"
    json = "json"


def command(
    sweep_dir: Annotated[Path, typer.Argument(metavar="DIR", help="A sweep directory (burstlab sweep --out DIR).")],
    out: Annotated[
        Path | None,
        typer.Option("--out", metavar="FILE", help="HTML page to write [default: DIR/report.html for --format html]."),
    ] = None,
    format_: Annotated[
        Format, typer.Option("--format", help="html: write the page; md, json: print a summary on stdout.")
    ] = Format.html,
    json_: Annotated[bool, typer.Option("--json", help="Same as --format json.")] = False,
) -> None:
    """Report on a sweep: its outcomes (completion time, TCP goodput, retransmissions, peak
    queue) against each grid axis, throughput, cwnd and queue over time in a few runs, and a
    table of every grid point. A sweep of the AmLight microburst study (scenario
    scenarios/amlight/base-*.toml, grid over flow[0].cca, burst[0].duration, burst[0].start,
    topology.rtt) also gets the study's findings checked on it and its own figures.

        burstlab report sweeps/rtt
        burstlab report burstlab-demo --out report.html
        burstlab report burstlab-demo --format md

    The HTML page is one self-contained file (figures inlined as SVG that follow the page's
    width, no network needed), written whole or not at all. --format md prints the study's
    findings, or for any other sweep every grid point, as Markdown; --format json (or --json)
    prints one JSON object (keys: sweep, scenario, runs, grid, study, notes, grid_points,
    sections). With md or json, --out also writes the page.

    Exit status: 0 ok, 2 DIR is not a sweep directory, 130 interrupted (nothing written),
    1 internal error.
    """
    err = Console(stderr=True, highlight=False)
    raise typer.Exit(_report(sweep_dir, out, Format.json if json_ else format_, err))


def _report(sweep_dir: Path, out: Path | None, fmt: Format, err: Console) -> int:
    writes_page = fmt is Format.html or out is not None
    page = out if out is not None else sweep_dir / "report.html"
    with status.guarded("report", err, interrupted=f"{page} not written" if writes_page else "nothing written"):
        from burstlab.report import build, dc, dumps, stop, to_markdown, write

        if dc.is_study(sweep_dir):  # the data-centre study's directory (python -m burstlab.report.dc DIR)
            sys.stdout.write(dc.report(sweep_dir, out, fmt.value))
            return status.SUCCESS

        with stop.catching():
            report = build(sweep_dir)
            text = to_markdown(report) if fmt is Format.md else dumps(report) + "\n" if fmt is Format.json else ""
            path = write(report, page) if writes_page else None
        if fmt is Format.html:
            typer.echo(str(path))
        sys.stdout.write(text)
    return status.SUCCESS
