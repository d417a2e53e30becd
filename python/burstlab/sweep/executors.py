"""Where runs execute: a local process pool, or a Dask cluster. Both are a
:class:`concurrent.futures.Executor`, so the sweep has one code path."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
from collections.abc import Iterator
from concurrent.futures import Executor, ProcessPoolExecutor
from contextlib import contextmanager
from typing import Any

from burstlab.sweep.errors import SweepError
from burstlab.sweep.worker import init_worker

__all__ = ["open_executor", "default_jobs", "stop_executor", "sigint_held"]


def default_jobs() -> int:
    """CPUs this process may use (the affinity mask a batch scheduler sets, else the count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


@contextmanager
def open_executor(jobs: int | None = None, dask: Any = None) -> Iterator[tuple[Executor, str]]:
    """An executor and a one-line description of it.

    ``dask`` is a scheduler address (``"tcp://10.0.0.5:8786"``) or a ``distributed.Client``;
    otherwise ``jobs`` local processes (default: :func:`default_jobs`). Leaving the block
    normally waits for the runs; leaving it by an exception (Ctrl-C) cancels what has not
    started and stops the workers.
    """
    if dask is not None:
        with _dask_executor(dask) as pair:
            yield pair
        return
    if jobs is not None and jobs < 1:
        raise SweepError(f"--jobs {jobs}: expected at least 1")
    n = jobs or default_jobs()
    # "spawn": the sweep process has threads (progress display), and forking a threaded
    # process can deadlock the child. Made with SIGINT held: multiprocessing's resource tracker
    # starts here. Workers die with this process, even by SIGKILL (die_with_parent: strictly, with
    # the thread that submits the runs, which outlives the pool).
    with sigint_held():
        pool = ProcessPoolExecutor(n, mp_context=multiprocessing.get_context("spawn"), initializer=init_worker,
                                   initargs=(os.getpid(),))
    try:
        yield pool, f"{n} local process{'es' if n > 1 else ''}"
    except BaseException:
        stop_executor(pool)
        raise
    pool.shutdown(wait=True)


@contextmanager
def sigint_held() -> Iterator[None]:
    """Hold Ctrl-C while processes are started, and raise it (``KeyboardInterrupt``) when the
    block ends: never lost, never in the middle of starting a process.

    The terminal's Ctrl-C goes to the whole process group, but it is the sweep's to handle (it
    ends its workers). A process inherits its parent's signal mask through fork and exec, so
    with SIGINT blocked here the pool's workers are born deaf to it; and a Ctrl-C that arrives
    meanwhile (through another thread, which Python also acts on) is only noted, since one
    raised between starting a worker and handing it its bootstrap would leave that worker
    running with a traceback and a semaphore behind."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    noted: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: noted.append(signum))
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        signal.signal(signal.SIGINT, signal.SIG_DFL if previous is None else previous)
    if noted:
        raise KeyboardInterrupt


def stop_executor(executor: Executor) -> None:
    """Cancel the runs not started and end the running ones now (Ctrl-C): their results would
    be discarded anyway (a run is recorded only when it completes), and a run can take minutes.
    Safe to call more than once."""
    if isinstance(executor, ProcessPoolExecutor):
        _stop_pool(executor)
    else:
        executor.shutdown(wait=False)  # Dask's executor cancels its futures on wait=False


def _stop_pool(pool: ProcessPoolExecutor) -> None:
    """End the pool's workers at once (SIGTERM, then SIGKILL for one that lingers).

    A worker ended while writing a result leaves half a message in the result pipe, and
    CPython's manager thread then blocks reading the rest; the interpreter joins that thread
    at exit, so the sweep would never exit. The parent holds the pipe's last write end:
    closing it once the workers are gone turns the wait into an end-of-file, which the
    manager treats as a broken pool and stops."""
    processes = list((getattr(pool, "_processes", None) or {}).values())  # CPython's pool keeps them here
    result_queue = getattr(pool, "_result_queue", None)
    manager = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        process.terminate()
    for process in processes:
        process.join(timeout=1)
        if process.is_alive():
            process.kill()
            process.join()
    writer = getattr(result_queue, "_writer", None)
    if writer is not None and not writer.closed:
        writer.close()
    # The manager thread then closes the pool's queues, which can release their semaphores; let
    # it finish before the CLI ends the process (at once, after Ctrl-C), or a semaphore can be
    # unlinked but not yet unregistered, and multiprocessing's resource tracker warns of a leak.
    if manager is not None and manager is not threading.current_thread():
        manager.join(timeout=2)


@contextmanager
def _dask_executor(dask: Any) -> Iterator[tuple[Executor, str]]:
    from distributed import Client

    if isinstance(dask, Client):
        client, owned = dask, False
    else:
        try:
            client, owned = Client(str(dask), timeout="30s"), True
        except (OSError, TimeoutError, ValueError) as err:
            raise SweepError(f"--dask {dask}: cannot connect to the scheduler ({err})") from None
    executor = client.get_executor(pure=False)
    workers = len(client.scheduler_info().get("workers", {}))
    try:
        yield executor, f"Dask scheduler {client.scheduler.address} ({workers} workers)"
    except BaseException:
        stop_executor(executor)
        raise
    else:
        executor.shutdown(wait=True)
    finally:
        if owned:
            client.close()
