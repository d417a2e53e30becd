"""What the `burstlab` command and a sweep cost outside the simulator, in CPU time (the machine
is shared: wall times are printed with the load average, for what they are worth).

    python scripts/cli_overhead.py startup [--repeat N]    # burstlab --version, --help, VERB --help
    python scripts/cli_overhead.py sweep [--full]           # a sweep's cost per run outside _core.run

``startup`` runs each command N times in a fresh interpreter and prints the least and the median
CPU time (user + system of the child), beside ``python -c pass``, the floor any command pays.

``sweep`` runs the demo's sweep (--quick's 4 runs, or with --full all 56) in this process through
burstlab.sweep's own engine and store, with an executor that runs each task where it is
submitted, so that ``_core.run``'s CPU time can be taken from the total: what remains is what a
run costs outside the engine (scenario load, Arrow tables, Parquet files, status file, runs
table). Then it starts the local process pool a sweep uses and runs one small task on each
worker: the pool's start-up, paid once per sweep.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import Executor, Future
from pathlib import Path


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def startup(repeat: int) -> None:
    from burstlab.cli import VERBS

    env = {**os.environ, "TERMINAL_WIDTH": "100"}
    commands: list[list[str]] = [["-c", "pass"], ["-m", "burstlab", "--version"], ["-m", "burstlab", "--help"]]
    commands += [["-m", "burstlab", verb, "--help"] for verb in VERBS]
    print(f"# {repeat} runs each; {_load()}")
    print(f"{'command':32s} {'cpu min':>8s} {'cpu median':>11s} {'wall min':>9s} {'wall median':>12s}")
    for args in commands:
        cpu, wall = [], []
        for _ in range(repeat):
            c0, t0 = _children_cpu(), time.perf_counter()
            subprocess.run([sys.executable, *args], env=env, stdout=subprocess.DEVNULL, check=True)
            wall.append(time.perf_counter() - t0)
            cpu.append(_children_cpu() - c0)
        label = "python -c pass" if args[0] == "-c" else "burstlab " + " ".join(args[2:])
        print(f"{label:32s} {min(cpu):8.3f} {statistics.median(cpu):11.3f} {min(wall):9.3f} "
              f"{statistics.median(wall):12.3f}")
    print(f"# {_load()}")


class _HereExecutor(Executor):
    """Runs each task when it is submitted, in this process."""

    def submit(self, fn, /, *args, **kwargs):  # type: ignore[override]
        future: Future = Future()
        future.set_result(fn(*args, **kwargs))
        return future


def sweep(full: bool) -> None:
    from burstlab import _core
    from burstlab.cli.demo import DEMO_GRID, QUICK_GRID, scenario_text
    from burstlab.sweep.definition import SweepDefinition
    from burstlab.sweep.engine import check_definition, execute
    from burstlab.sweep.executors import open_executor
    from burstlab.sweep.grid import axes_from_mapping
    from burstlab.sweep.worker import RunTask, run_task

    engine_cpu = 0.0
    simulate = _core.run

    def timed_run(*args, **kwargs):
        nonlocal engine_cpu
        c0 = time.process_time()
        try:
            return simulate(*args, **kwargs)
        finally:
            engine_cpu += time.process_time() - c0

    tiny = scenario_text().replace('size = "13GiB"', 'size = "10MB"')
    # One run first, so that the one-time imports (pyarrow, and pandas, which pyarrow loads when
    # it first builds an array) are not counted as a run's.
    run_task(RunTask(0, {}, 0, 1, tiny, ()))
    _core.run = timed_run
    grid = DEMO_GRID if full else QUICK_GRID
    definition = SweepDefinition(scenario=scenario_text(), overrides=(), axes=tuple(axes_from_mapping(grid)),
                                 reps=1, seed=0)
    with tempfile.TemporaryDirectory(prefix="burstlab-overhead-") as tmp:
        out = Path(tmp) / "sweep"
        print(f"# in-process sweep of the demo grid ({'full' if full else '--quick'}); {_load()}")
        c0, t0 = time.process_time(), time.perf_counter()
        check_definition(definition)
        summary = execute(definition, out, _HereExecutor(), "this process")
        cpu, wall = time.process_time() - c0, time.perf_counter() - t0
        _core.run = simulate
        runs = summary.total
        assert summary.ok == runs, summary
        outside = cpu - engine_cpu
        print(f"runs {runs}: CPU {cpu:.2f} s, of which _core.run {engine_cpu:.2f} s; outside the engine "
              f"{outside:.3f} s in all, {outside / runs:.3f} s per run (wall {wall:.1f} s)")
        shutil.rmtree(out)

    jobs = 2
    print(f"# a local pool of {jobs} workers, started and given one small run each; {_load()}")
    task = RunTask(0, {}, 0, 1, tiny, ())
    c0, t0 = _children_cpu(), time.perf_counter()
    with open_executor(jobs) as (executor, _where):
        futures = [executor.submit(run_task, task) for _ in range(jobs)]
        for future in futures:
            assert future.result().row["status"] == "ok"
    started = time.perf_counter() - t0
    print(f"workers' CPU (start-up, imports, one small run each) {_children_cpu() - c0:.2f} s; "
          f"wall {started:.2f} s")
    print(f"# {_load()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    p = sub.add_parser("startup", help="burstlab --version, --help and VERB --help")
    p.add_argument("--repeat", type=int, default=5)
    p = sub.add_parser("sweep", help="a sweep's cost per run outside the engine")
    p.add_argument("--full", action="store_true", help="all 56 runs of the demo, not --quick's 4")
    args = parser.parse_args()
    if args.what == "startup":
        startup(args.repeat)
    else:
        sweep(args.full)


if __name__ == "__main__":
    main()
