"""``burstlab demo``: a reduced AmLight microburst study, swept and reported in a few minutes."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from burstlab.cli import status

#: The catalogue scenario the demo sweeps (scenarios/amlight/base-209ms.toml).
DEMO_SCENARIO = "amlight/base-209ms"

#: The reduced study: the seed's two CCAs, its burst durations from 25 ms to 2 s plus a
#: no-burst baseline (a 1 ns burst sends nothing), at four burst starts from slow start to
#: steady state. 2 x 7 x 4 = 56 runs of the 209 ms scenario.
DEMO_GRID: dict[str, list[str]] = {
    "flow[0].cca": ["htcp", "bbr"],
    "burst[0].start": ["1.5s", "2.5s", "3.5s", "5s"],
    "burst[0].duration": ["1ns", "25ms", "50ms", "100ms", "500ms", "1000ms", "2000ms"],
}


def command(
    out: Annotated[Path, typer.Option("--out", metavar="DIR", help="Sweep directory (reruns resume).")] = Path(
        "burstlab-demo"),
    jobs: Annotated[
        int | None, typer.Option("--jobs", "-j", metavar="N", help="Local worker processes [default: CPU count].")
    ] = None,
) -> None:
    """Run a reduced AmLight microburst study and write its report: a 13 GiB transfer over
    209 ms at 100 Gbit/s (scenarios/amlight/base-209ms.toml) with H-TCP and BBR, hit by a
    4 x 25 Gbit/s burst of 25 ms to 2 s (and none, the baseline) at 1.5, 2.5, 3.5 and 5 s:
    56 runs, a minute or two on two cores.

        burstlab demo                # into ./burstlab-demo/
        burstlab demo --out /tmp/d -j 4

    Prints the report's path (DIR/report.html, one self-contained page) and the findings
    table. Interrupted? Run it again: finished runs are kept. Exit status: 0 ok, 1 some runs
    failed, 2 bad input, 130 interrupted.
    """
    err = Console(stderr=True, highlight=False)
    raise typer.Exit(_demo(out, jobs, err))


def scenario_text() -> str:
    """The demo's scenario, amlight/base-209ms from the catalogue that ships with burstlab."""
    from burstlab import catalogue

    return catalogue.text(DEMO_SCENARIO)


def _demo(out: Path, jobs: int | None, err: Console) -> int:
    from burstlab.cli.sweep import _Reporter
    from burstlab.report import build, to_markdown, write
    from burstlab.sweep import sweep

    started = time.monotonic()
    reporter = _Reporter(err, progress=err.is_terminal, log=not err.is_terminal)
    with status.guarded("demo", err, interrupted=f"finished runs are kept in {out}/, run it again to complete them"):
        with reporter:
            result = sweep(scenario_text(), grid=DEMO_GRID, out=out, jobs=jobs, reporter=reporter)
        report = build(out)
        page = write(report, out / "report.html")
    summary = result.summary
    assert summary is not None
    sys.stdout.write(to_markdown(report))
    sys.stdout.write(f"\nreport: {page}\n")
    err.print(f"demo: {summary.total} runs ({summary.resumed} resumed, {summary.error} failed) "
              f"in {time.monotonic() - started:.0f} s", markup=False)
    return status.SUCCESS if summary.ok == summary.total else 1
