"""``burstlab report``: an AmLight-style report (HTML page, Markdown or JSON) of a sweep."""

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
    """Report on a sweep of the AmLight microburst study: FCT vs burst duration per CCA and RTT,
    FCT by burst start x duration, retransmissions beside the seed study's table, throughput,
    cwnd and queue timelines of chosen runs, and a findings table that checks each of the
    study's findings on this sweep (pass, fail, or "not run" when the sweep lacks its inputs).

    The sweep's grid may include flow[0].cca, burst[0].duration (1ns = no burst: the baseline),
    burst[0].start and topology.rtt; sections the grid cannot give say so. Example:

        burstlab report burstlab-demo --out report.html

    The HTML page is one self-contained file (figures inlined as SVG, no network needed).
    --format md prints the findings and key numbers as Markdown; --format json (or --json)
    prints one JSON object (keys: sweep, scenario, runs, grid, findings, summary, baselines,
    points, retransmissions, sections). With md or json, --out also writes the page.

    Exit status: 0 ok, 2 DIR is not a sweep directory, 1 internal error.
    """
    err = Console(stderr=True, highlight=False)
    raise typer.Exit(_report(sweep_dir, out, Format.json if json_ else format_, err))


def _report(sweep_dir: Path, out: Path | None, fmt: Format, err: Console) -> int:
    from burstlab.report import build, dumps, to_markdown, write

    with status.guarded("report", err):
        report = build(sweep_dir)
        if fmt is Format.html or out is not None:
            path = write(report, out if out is not None else sweep_dir / "report.html")
            if fmt is Format.html:
                typer.echo(str(path))
    if fmt is Format.md:
        sys.stdout.write(to_markdown(report))
    elif fmt is Format.json:
        sys.stdout.write(dumps(report) + "\n")
    return status.SUCCESS
