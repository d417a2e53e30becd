"""``burstlab sweep``: run a scenario over a grid of values, resumably, locally or on Dask."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from burstlab.cli import params, status

#: Some runs failed (each is recorded with its message in runs.parquet), or the sweep was
#: interrupted before every run finished.
SOME_FAILED = 1


def command(
    scenario: params.Scenario,
    grid: Annotated[
        list[str],
        typer.Option(
            "--grid",
            metavar="PATH=V1,V2,...",
            help="Sweep one field over values and ranges start..stop/step, "
            "e.g. --grid 'burst[0].start=1.5s..7.5s/0.5s' (repeatable: the grid is the product).",
        ),
    ],
    out: Annotated[Path, typer.Option("--out", metavar="DIR", help="Sweep directory (created; reruns resume).")],
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", metavar="PATH=VALUE", help="Override a field in every run (repeatable)."),
    ] = None,
    reps: Annotated[int, typer.Option("--reps", metavar="N", help="Runs per grid point, each with its own seed.")] = 1,
    seed: Annotated[int, typer.Option("--seed", metavar="S", help="Sweep seed; each run's seed derives from it.")] = 0,
    jobs: Annotated[
        int | None, typer.Option("--jobs", "-j", metavar="N", help="Local worker processes [default: CPU count].")
    ] = None,
    dask: Annotated[
        str | None,
        typer.Option("--dask", metavar="ADDRESS", help="Run on this Dask scheduler, e.g. tcp://10.1.2.3:8786."),
    ] = None,
    json_: Annotated[bool, typer.Option("--json", help="No progress; print one JSON summary on stdout.")] = False,
) -> None:
    """Run a scenario at every point of a grid of --set values, --reps times each, and store
    every run's records in one directory of Parquet files you can query with `burstlab query`.

    Example: when does a 100 ms burst hurt, for CUBIC and Reno, 3 seeds each (78 runs):

        burstlab sweep scenarios/amlight-209ms-burst.toml --grid 'burst[0].start=1.5s..7.5s/0.5s' --grid 'flow[0].cca=cubic,reno' --reps 3 --out sweeps/start

    Each run's seed is derived from --seed, its grid values and its repetition, so a rerun
    gives the same results. Ctrl-C keeps finished runs; run the same command again to complete
    the rest (a different sweep in the same --out is refused). A run that fails (an invalid
    value) is recorded with status "error" and its message, and the sweep goes on.

    Output: DIR/runs.parquet (run_id, one column per --grid path, rep, seed, status, error,
    wall_s, burstlab_version, started_at), DIR/{flows,intervals,queue,drops}/run-*.parquet
    (each row with run_id), DIR/sweep.json (the definition).

    Exit status: 0 every run ok, 1 some runs failed or did not finish, 2 bad input (scenario,
    --grid, --set, --out; nothing is run), 130 interrupted.
    """
    err = Console(stderr=True, highlight=False)
    raise typer.Exit(_sweep(scenario, grid, out, set_ or [], reps, seed, jobs, dask, json_, err))


def _sweep(
    scenario: Path, grid: list[str], out: Path, overrides: list[str], reps: int, seed: int,
    jobs: int | None, dask: str | None, as_json: bool, err: Console,
) -> int:
    from burstlab.sweep import sweep
    from burstlab.sweep.grid import parse_grid_arg

    if jobs is not None and dask is not None:
        err.print("burstlab sweep: --jobs and --dask exclude each other (Dask workers set the parallelism)")
        return status.BAD_INPUT
    reporter = _Reporter(err, progress=not as_json and err.is_terminal, log=not as_json)
    with status.guarded("sweep", err, interrupted=f"finished runs are kept in {out}/, run the same command again to complete the rest"):
        axes = {axis.path: list(axis.values) for axis in map(parse_grid_arg, grid)}
        if len(axes) != len(grid):
            raise _duplicate_path(grid)
        with reporter:
            result = sweep(scenario, grid=axes, out=out, reps=reps, seed=seed, set=overrides,
                           jobs=jobs, dask=dask, reporter=reporter)

    summary = result.summary
    assert summary is not None
    if as_json:
        sys.stdout.write(json.dumps(summary.to_json()) + "\n")
    else:
        Console(highlight=False).print(_summary_line(summary), markup=False, soft_wrap=True)
    return status.SUCCESS if summary.ok == summary.total else SOME_FAILED


def _duplicate_path(grid: list[str]) -> Exception:
    from burstlab.sweep.errors import SweepError

    paths = [g.partition("=")[0].strip() for g in grid]
    dup = next(p for p in paths if paths.count(p) > 1)
    return SweepError(f"--grid {dup}: given twice; list all its values in one --grid")


def _summary_line(s: Any) -> str:
    line = f"{s.total} runs: {s.ok} ok, {s.error} failed"
    if s.resumed:
        line += f" ({s.resumed} from an earlier invocation)"
    if s.not_run:
        line += f", {s.not_run} not finished (rerun the same command to complete them)"
    line += f"; results in {s.out}/"
    if s.error:
        shown = ", ".join(map(str, s.failed_runs[:10])) + (", ..." if len(s.failed_runs) > 10 else "")
        line += (f"\nfailed run_id: {shown}; see their messages with: burstlab query {s.out} "
                 "\"SELECT run_id, error FROM runs WHERE status = 'error'\"")
    return line


class _Reporter:
    """A progress bar with ETA on stderr when it is a terminal; one line per finished run
    (its grid values, seed, status) above the bar, or alone in a log file."""

    def __init__(self, err: Console, *, progress: bool, log: bool):
        self.err, self.show_bar, self.log = err, progress, log
        self.progress: Any = None
        self.task: Any = None

    def __enter__(self) -> _Reporter:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.progress is not None:
            self.progress.stop()

    def start(self, total: int, done: int, where: str) -> None:
        if self.log:
            resumed = f", {done} already done" if done else ""
            self.err.print(f"sweep: {total} runs{resumed}, on {where}", markup=False)
        if not self.show_bar:
            return
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                                   TimeElapsedColumn, TimeRemainingColumn)

        self.progress = Progress(
            TextColumn("sweep"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[failed]} failed"),
            TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), console=self.err, transient=True,
        )
        self.progress.start()
        self.task = self.progress.add_task("runs", total=total - done, failed=0)

    def finished(self, row: dict[str, Any]) -> None:
        if self.log:
            values = " ".join(f"{k}={v}" for k, v in row["params"].items())
            tail = "ok" if row["status"] == "ok" else f"error: {row['error']}"
            console = self.progress.console if self.progress is not None else self.err
            console.print(f"run {row['run_id']} {values} rep={row['rep']} seed={row['seed']} "
                          f"{row['wall_s']:.2f}s {tail}", markup=False, soft_wrap=True, highlight=False)
        if self.progress is not None:
            failed = self.progress.tasks[0].fields["failed"] + (row["status"] != "ok")
            self.progress.update(self.task, advance=1, failed=failed)
