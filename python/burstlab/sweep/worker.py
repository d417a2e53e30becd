"""What runs on a worker (a local process or a Dask worker): one simulation, caught.

Only what is needed crosses the process boundary: the task in (scenario text and overrides),
the runs row and the Arrow tables out. The sweep's process is the only writer of the output
directory, so workers need no shared file system.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["RunTask", "RunOutcome", "run_task", "init_worker", "ignore_sigint", "die_with_parent"]

#: ``PR_SET_PDEATHSIG`` from <linux/prctl.h>: the signal the kernel sends a process when the
#: thread that created it exits.
_PR_SET_PDEATHSIG = 1


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


def init_worker(parent_pid: int) -> None:
    """Process-pool initializer: :func:`ignore_sigint` and :func:`die_with_parent`."""
    ignore_sigint()
    die_with_parent(parent_pid)


def ignore_sigint() -> None:
    """Process-pool initializer: Ctrl-C is the sweep process's to handle (it stops the pool);
    workers would otherwise each print a KeyboardInterrupt traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def die_with_parent(parent_pid: int) -> None:
    """End this worker when the sweep's process ``parent_pid`` dies, however it dies.

    Ctrl-C and SIGTERM let the sweep stop its pool, but SIGKILL does not: an idle worker would
    then wait forever on its task pipe (the sweep's pipe end is kept open by its siblings), and
    the workers hold multiprocessing's resource tracker open, which exits only once every
    holder of its pipe has gone. Linux only (``prctl``); elsewhere a killed sweep's workers
    still outlive it.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # a libc without prctl: nothing to arm
        return
    if prctl(_PR_SET_PDEATHSIG, ctypes.c_ulong(signal.SIGKILL), ctypes.c_ulong(0), ctypes.c_ulong(0),
             ctypes.c_ulong(0)) != 0:
        return
    # The sweep may have died before the signal was armed (the worker was re-parented then).
    if os.getppid() != parent_pid:
        os._exit(1)
