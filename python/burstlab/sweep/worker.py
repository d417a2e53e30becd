"""What runs on a worker (a local process or a Dask worker): one simulation, caught.

Only what is needed crosses the process boundary: the task in (scenario text and overrides),
the runs row and the Arrow tables out. The sweep's process is the only writer of the output
directory, so workers need no shared file system.
"""

from __future__ import annotations

import signal
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa

__all__ = ["RunTask", "RunOutcome", "run_task", "ignore_sigint"]


@dataclass(frozen=True)
class RunTask:
    run_id: int
    params: dict[str, str]
    rep: int
    seed: int
    scenario: str
    overrides: tuple[str, ...]


@dataclass(frozen=True)
class RunOutcome:
    """``row`` is the run's runs row; ``tables`` its records (``None`` when it failed)."""

    row: dict[str, Any]
    tables: dict[str, pa.Table] | None


def run_task(task: RunTask) -> RunOutcome:
    """Simulate ``task``. A scenario error (or any other exception) is the run's outcome,
    recorded with its message, not raised: one bad grid point must not stop a sweep."""
    from burstlab import _core
    from burstlab.api import run
    from burstlab.errors import BurstlabError

    started_at = datetime.now(UTC)
    t0 = time.perf_counter()
    tables, error = None, None
    try:
        result = run(task.scenario, set=[*task.overrides, f"seed={task.seed}"])
        tables = result.tables
    except BurstlabError as err:
        error = str(err)
    except Exception as err:  # noqa: BLE001 - a crash of one run is that run's result
        error = f"internal error: {type(err).__name__}: {err}"
    row = {
        "run_id": task.run_id,
        "params": task.params,
        "rep": task.rep,
        "seed": task.seed,
        "status": "ok" if error is None else "error",
        "error": error,
        "wall_s": time.perf_counter() - t0,
        "burstlab_version": _core.version(),
        "started_at": started_at.isoformat(),
    }
    return RunOutcome(row, tables)


def ignore_sigint() -> None:
    """Process-pool initializer: Ctrl-C is the sweep process's to handle (it stops the pool);
    workers would otherwise each print a KeyboardInterrupt traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
