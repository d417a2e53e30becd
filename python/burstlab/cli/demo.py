"""``burstlab demo``: a reduced AmLight microburst study, swept and reported."""

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
#: no-burst baseline (a 1 ns burst sends nothing), at five of the full study's burst starts,
#: every other one from 1.5 s to 5.5 s: three inside both timing findings' early windows
#: (H-TCP [1.5, 4] s, BBR [1.5, 3.5] s) and two inside both late ones, so each side of each
#: comparison is sampled rather than one late start against three early ones.
#: 2 x 5 x 7 = 70 points of the 209 ms scenario.
DEMO_GRID: dict[str, list[str]] = {
    "flow[0].cca": ["htcp", "bbr"],
    "burst[0].start": ["1.5s", "2.5s", "3.5s", "4.5s", "5.5s"],
    "burst[0].duration": ["1ns", "25ms", "50ms", "100ms", "500ms", "1000ms", "2000ms"],
}
#: Repetitions (seeds) per demo point: the findings compare medians over them, and each finding
#: is also judged on every seed alone, so a verdict one seed would flip is seen as such.
DEMO_REPS = 3

#: --full: the seed's experiment B at both RTTs, every burst start from 1.5 s to 7.5 s, one seed
#: per point: 2 x 2 x 7 x 13 = 364 runs. The axes keep the order of the documented
#: `burstlab sweep` command (docs/amlight.md), from which each run's seed derives.
FULL_GRID: dict[str, list[str]] = {
    "topology.rtt": ["209ms", "301ms"],
    "flow[0].cca": DEMO_GRID["flow[0].cca"],
    "burst[0].duration": DEMO_GRID["burst[0].duration"],
    "burst[0].start": [f"{s / 2:g}s" for s in range(3, 16)],
}
#: The full study's repeated points (its seeds/ part): the points findings judge one at a time,
#: experiment A's (1.5 s at 209 ms), at the demo's seeds. The demo's grid with its one start keeps
#: each point's seed the demo's (burstlab.sweep.seeds: a seed derives from the point's
#: `path=value` lines and the repetition). 2 x 1 x 7 x 3 = 42 runs.
SEEDS_GRID: dict[str, list[str]] = {
    "flow[0].cca": DEMO_GRID["flow[0].cca"],
    "burst[0].start": ["1.5s"],
    "burst[0].duration": DEMO_GRID["burst[0].duration"],
}

#: --quick: both CCAs without a burst and with a 100 ms one at 1.5 s (the seed's experiment A),
#: 4 runs: the whole path (sweep, report, seven of the findings) to check an installation.
QUICK_GRID: dict[str, list[str]] = {
    "flow[0].cca": ["htcp", "bbr"],
    "burst[0].start": ["1.5s"],
    "burst[0].duration": ["1ns", "100ms"],
}


def command(
    out: Annotated[
        Path | None,
        typer.Option("--out", metavar="DIR", show_default=False,
                     help="Sweep directory (reruns resume) [default: burstlab-demo; burstlab-demo-quick with --quick, "
                          "burstlab-study with --full]."),
    ] = None,
    jobs: Annotated[
        int | None, typer.Option("--jobs", "-j", metavar="N", help="Local worker processes [default: CPU count].")
    ] = None,
    quick: Annotated[
        bool, typer.Option("--quick", help="4 runs instead of 210 (H-TCP and BBR, no burst and 100 ms at 1.5 s).")
    ] = False,
    full: Annotated[
        bool, typer.Option("--full", help="The full study: 364 runs at 209 and 301 ms, one seed per point, and its "
                                          "experiment A points at the demo's three seeds (42 more) in DIR/seeds.")
    ] = False,
) -> None:
    """Run a reduced AmLight microburst study and write its report.

    A 13 GiB transfer over 209 ms at 100 Gbit/s (scenarios/amlight/base-209ms.toml) with
    H-TCP and BBR, hit by a 4 x 25 Gbit/s burst of 25 ms to 2 s (and none, the baseline) at
    1.5, 2.5, 3.5, 4.5 and 5.5 s, three seeds each: 210 runs, about six minutes of CPU time:
    at least three minutes on two cores, more on a machine busy with other work. Findings use
    the median over seeds and say on how many seeds alone each passes.
    --quick runs 4 runs, one seed (15 s of CPU time), to check an installation. --full runs
    the full study: every start from 1.5 s to 7.5 s at 209 and 301 ms, one seed per point,
    and the points at 1.5 s, 209 ms again on the demo's three seeds (DIR/seeds): 406 runs,
    about 11½ minutes of CPU time (685 CPU-seconds at b28626e: docs/performance.md).

        burstlab demo                # into ./burstlab-demo/
        burstlab demo --out /tmp/d -j 4
        burstlab demo --quick        # into ./burstlab-demo-quick/
        burstlab demo --full         # into ./burstlab-study/

    Prints the report's path (DIR/report.html, one self-contained page) and the findings
    table. Interrupted (Ctrl-C)? Run it again: finished runs are kept. Exit status: 0 ok,
    1 some runs failed, 2 bad input, 130 interrupted.
    """
    err = Console(stderr=True, highlight=False)
    if quick and full:
        err.print("burstlab demo: --quick and --full: choose one", markup=False)
        raise typer.Exit(status.BAD_INPUT)
    if full:
        from burstlab.report.amlight.runs import SEEDS_DIR

        parts = [(Path(), FULL_GRID, 1), (Path(SEEDS_DIR), SEEDS_GRID, DEMO_REPS)]
        raise typer.Exit(_demo(out or Path("burstlab-study"), jobs, parts, err))
    if out is None:
        out = Path("burstlab-demo-quick" if quick else "burstlab-demo")
    raise typer.Exit(_demo(out, jobs, [(Path(), QUICK_GRID if quick else DEMO_GRID, 1 if quick else DEMO_REPS)], err))


def scenario_text() -> str:
    """The demo's scenario, amlight/base-209ms from the catalogue that ships with burstlab."""
    from burstlab import catalogue

    return catalogue.text(DEMO_SCENARIO)


def _demo(out: Path, jobs: int | None, parts: list[tuple[Path, dict[str, list[str]], int]], err: Console) -> int:
    """Sweep each part (a subdirectory of ``out``, its grid, its repetitions), then report ``out``."""
    from burstlab.cli.sweep import _Reporter
    from burstlab.report import build, stop, to_markdown, write
    from burstlab.sweep import sweep

    started = time.monotonic()
    total = resumed = failed = not_run = ok = 0
    with status.guarded("demo", err, interrupted=f"finished runs are kept in {out}/, run it again to complete them"):
        for sub, grid, reps in parts:
            reporter = _Reporter(err, progress=err.is_terminal, log=not err.is_terminal)
            with reporter:
                result = sweep(scenario_text(), grid=grid, out=out / sub, reps=reps, jobs=jobs, reporter=reporter)
            summary = result.summary
            assert summary is not None
            total, resumed, failed = total + summary.total, resumed + summary.resumed, failed + summary.error
            not_run, ok = not_run + summary.not_run, ok + summary.ok
        # matplotlib can swallow a Ctrl-C while it draws; stop.catching keeps it for the next step.
        with stop.catching():
            report = build(out)
            page = write(report, out / "report.html")
    sys.stdout.write(to_markdown(report))
    sys.stdout.write(f"\nreport: {page}\n")
    unfinished = f", {not_run} not finished (run it again)" if not_run else ""
    err.print(f"demo: {total} runs ({resumed} resumed, {failed} failed{unfinished}) "
              f"in {time.monotonic() - started:.0f} s", markup=False)
    return status.SUCCESS if ok == total else 1
