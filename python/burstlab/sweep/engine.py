"""A sweep from definition to directory: check the definition, list the runs, skip those
already finished, submit the rest to an executor and store each as it completes."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import Executor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from burstlab import _core
from burstlab.errors import ScenarioError
from burstlab.sweep.definition import SweepDefinition
from burstlab.sweep.errors import SweepError
from burstlab.sweep.executors import sigint_held, stop_executor
from burstlab.sweep.grid import Axis, points
from burstlab.sweep.seeds import run_seed
from burstlab.sweep.store import SweepStore
from burstlab.sweep.worker import RunOutcome, RunTask, run_task

__all__ = ["plan", "execute", "Reporter", "SweepSummary", "check_definition"]

# ScenarioError kinds (crates/sim/src/scenario/error.rs ScenarioError::kind) that no grid
# value can cause or cure: the sweep itself is wrong. A "field" error (a value out of range)
# belongs to the grid point that has it and is recorded as that run's failure.
_DEFINITION_KINDS = ("io", "syntax", "unknown_key", "override")


class Reporter(Protocol):
    """Progress of a sweep: told the plan, then each finished run."""

    def start(self, total: int, done: int, where: str) -> None: ...

    def finished(self, row: dict[str, Any]) -> None: ...


@dataclass
class SweepSummary:
    out: str
    total: int
    ok: int = 0
    error: int = 0
    resumed: int = 0  # finished in an earlier invocation, not run again
    not_run: int = 0  # interrupted or lost (a worker died): a rerun completes them
    wall_s: float = 0.0
    failed_runs: list[int] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return dict(vars(self))


def check_definition(definition: SweepDefinition) -> None:
    """Refuse, before anything is written, a sweep whose scenario, ``--set`` or grid paths are
    wrong: each axis is applied once (with its first value) to the scenario."""
    for axis in definition.axes:
        if axis.path.removeprefix("scenario.") == "seed":
            raise SweepError("--grid seed: each run's seed is derived from --seed; use --reps for "
                             "repetitions and --seed to change them all")
    if any(o.split("=", 1)[0].strip().removeprefix("scenario.") == "seed" for o in definition.overrides):
        raise SweepError("--set seed: each run's seed is derived from --seed; pass --seed instead")
    if definition.reps < 1:
        raise SweepError(f"--reps {definition.reps}: expected at least 1")
    if not 0 <= definition.seed <= 2**63 - 1:
        raise SweepError(f"--seed {definition.seed}: expected 0 ..= 2^63-1")
    _load_or_raise(definition.scenario, list(definition.overrides), None)
    for axis in definition.axes:
        _load_or_raise(definition.scenario, [*definition.overrides, f"{axis.path}={axis.values[0]}"], axis)


def _load_or_raise(text: str, overrides: list[str], axis: Axis | None) -> None:
    try:
        _core.load_scenario(text, overrides)
    except ScenarioError as err:
        if err.kind not in _DEFINITION_KINDS:
            return
        if axis is not None and err.kind == "override":
            raise SweepError(f"--grid {axis.path}: {err.message.split(': ', 1)[-1]}") from None
        raise


def plan(definition: SweepDefinition) -> list[RunTask]:
    """Every run of the sweep, ``run_id = point * reps + rep``."""
    tasks = []
    for point in points(definition.axes):
        for rep in range(definition.reps):
            tasks.append(RunTask(
                run_id=point.index * definition.reps + rep,
                params=dict(point.assignments),
                rep=rep,
                seed=run_seed(definition.seed, point, rep),
                scenario=definition.scenario,
                overrides=(*definition.overrides, *point.overrides),
            ))
    return tasks


def execute(
    definition: SweepDefinition,
    out: Path,
    executor: Executor,
    where: str,
    reporter: Reporter | None = None,
) -> SweepSummary:
    """Run what is missing from ``out`` on ``executor``; ``runs.parquet`` is written at the start
    and rebuilt at the end, also when interrupted (then, the workers stopped, the exception
    propagates)."""
    t0 = time.perf_counter()
    tasks = plan(definition)
    store = SweepStore(out)
    out.mkdir(parents=True, exist_ok=True)
    definition.save_or_check(out)
    store.create()
    finished = store.finished()
    store.remove_orphans(finished)
    # runs.parquet now, so the directory can be queried while the sweep runs; this also pays
    # pyarrow's one-time start-up here rather than after a Ctrl-C.
    store.rebuild_runs([a.path for a in definition.axes])
    pending = [t for t in tasks if t.run_id not in finished]
    summary = SweepSummary(out=str(out), total=len(tasks), resumed=len(tasks) - len(pending))
    for row in finished.values():
        _count(summary, row)
    if reporter is not None:
        reporter.start(len(tasks), summary.resumed, where)
    try:
        # No list of the futures here: as_completed() lets go of each one it yields, so a
        # recorded run's tables are freed at once instead of piling up until the sweep ends.
        # The pool starts its workers as runs are submitted: with SIGINT held (sigint_held).
        with sigint_held():
            completed = as_completed([executor.submit(run_task, task) for task in pending])
        for future in completed:
            try:
                outcome: RunOutcome = future.result()
            except Exception:  # noqa: BLE001 - a lost worker: the run stays pending for a rerun
                continue
            store.record(outcome.row, outcome.tables)
            _count(summary, outcome.row)
            if reporter is not None:
                reporter.finished(outcome.row)
    except BaseException:
        # Ctrl-C: the workers go first, so the two cores are free for what follows.
        with _sigint_ignored():
            stop_executor(executor)
            _finish(summary, store, definition, t0)
        raise
    _finish(summary, store, definition, t0)
    return summary


def _finish(summary: SweepSummary, store: SweepStore, definition: SweepDefinition, t0: float) -> None:
    store.rebuild_runs([a.path for a in definition.axes])
    summary.not_run = summary.total - summary.ok - summary.error
    summary.failed_runs.sort()
    summary.wall_s = time.perf_counter() - t0


@contextmanager
def _sigint_ignored() -> Iterator[None]:
    """While a sweep stops on Ctrl-C (well under a second), a second Ctrl-C must not leave its
    workers running or runs.parquet stale, so it is ignored (only the main thread can)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.SIG_DFL if previous is None else previous)


def _count(summary: SweepSummary, row: dict[str, Any]) -> None:
    if row["status"] == "ok":
        summary.ok += 1
    else:
        summary.error += 1
        summary.failed_runs.append(int(row["run_id"]))
