"""Sweeps: run a scenario over a grid of ``--set`` values, repeated with derived seeds, on
local processes or a Dask cluster, resumable, with the records of all runs in one directory of
Parquet files queryable with SQL.

>>> from burstlab.sweep import sweep
>>> result = sweep(                                                          # doctest: +SKIP
...     "scenarios/amlight-209ms-burst.toml",
...     grid={"burst[0].start": "1.5s..7.5s/0.5s", "flow[0].cca": ["cubic", "reno"]},
...     reps=3, out="sweeps/burst-start")
>>> result.query("SELECT \\"flow[0].cca\\", avg(fct_s) FROM runs JOIN flows USING (run_id) "
...              "WHERE flows.kind = 'tcp' GROUP BY 1")                    # doctest: +SKIP

See docs/sweeps.md.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from burstlab.api import TABLES, overrides, read_scenario
from burstlab.sweep.definition import SweepDefinition
from burstlab.sweep.engine import Reporter, SweepSummary, check_definition, execute
from burstlab.sweep.errors import SweepError, SweepMismatchError
from burstlab.sweep.executors import open_executor
from burstlab.sweep.grid import axes_from_mapping
from burstlab.sweep.store import RUNS_FILE

# DuckDB is imported by the first query: a worker process imports this package to reach its
# task function (burstlab.sweep.worker), and has no use for it.
if TYPE_CHECKING:
    import duckdb
    import pyarrow as pa

__all__ = ["sweep", "SweepResult", "SweepSummary", "SweepError", "SweepMismatchError", "open_sweep"]


def sweep(
    scenario: str | os.PathLike[str],
    *,
    grid: Mapping[str, Any],
    out: str | os.PathLike[str],
    reps: int = 1,
    seed: int = 0,
    set: Sequence[str] | Mapping[str, Any] | None = None,  # noqa: A002 - mirrors the CLI's --set
    jobs: int | None = None,
    dask: Any = None,
    reporter: Reporter | None = None,
) -> SweepResult:
    """Run ``scenario`` at every point of ``grid``, ``reps`` times each, into ``out``.

    Parameters
    ----------
    scenario
        A scenario file path or its TOML text (as :func:`burstlab.run`).
    grid
        ``{path: values}``: a list of values (``["1ms", "10ms"]``, ``[1500, 9000]``) or a string
        as the CLI's ``--grid path=`` takes (``"1.5s..7.5s/0.5s"``, ``"cubic,reno"``).
    out
        The sweep directory. If it already holds this sweep, only the missing runs are run; if
        it holds a different one, :class:`SweepMismatchError`.
    reps, seed
        Repetitions per grid point; the sweep seed from which each run's seed is derived.
    set
        Overrides applied to every run, like :func:`burstlab.run`'s ``set``.
    jobs, dask
        Local worker processes (default: the usable CPUs), or a Dask scheduler address
        (``"tcp://host:8786"``) or ``distributed.Client`` to run on instead.

    A run that fails (an invalid grid value) is recorded with ``status = "error"`` and its
    message; the sweep goes on. ``KeyboardInterrupt`` stops it with every finished run kept.
    """
    definition = SweepDefinition(
        scenario=read_scenario(scenario),
        overrides=tuple(overrides(set)),
        axes=tuple(axes_from_mapping(grid)),
        reps=reps,
        seed=seed,
    )
    check_definition(definition)
    out_path = Path(out)
    with open_executor(jobs, dask) as (executor, where):
        summary = execute(definition, out_path, executor, where, reporter)
    return SweepResult(out_path, summary)


def open_sweep(out: str | os.PathLike[str]) -> SweepResult:
    """The results of the sweep in ``out`` (finished or not), without running anything."""
    return SweepResult(Path(out), None)


class SweepResult:
    """A sweep directory's results.

    Attributes
    ----------
    out
        The directory.
    summary
        Counts of this invocation (``ok``, ``error``, ``resumed``, ``not_run``), or ``None`` for
        :func:`open_sweep`.
    """

    def __init__(self, out: Path, summary: SweepSummary | None):
        self.out = out
        self.summary = summary

    def __repr__(self) -> str:
        return f"SweepResult({str(self.out)!r}, runs={self.runs.num_rows})"

    @property
    def runs(self) -> pa.Table:
        """One row per finished run: run_id, a column per grid path, rep, seed, status, error,
        wall_s, burstlab_version, started_at."""
        import pyarrow.parquet as pq

        if not (self.out / RUNS_FILE).is_file():
            raise SweepError(f"{self.out}: not a sweep directory (no {RUNS_FILE})")
        return pq.read_table(self.out / RUNS_FILE)

    def table(self, name: str) -> pa.Table:
        """The record table ``name`` (one of ``TABLES``) of all ok runs, with ``run_id``."""
        if name not in TABLES:
            raise KeyError(f"no table {name!r}; a sweep has: {', '.join(TABLES)}")
        return self.query(f"SELECT * FROM {name} ORDER BY run_id")

    def query(self, sql: str) -> pa.Table:
        """``sql`` over the views ``runs`` and one per record table (``flows``, ``intervals``, ``queue``, ``drops``, ``queries``)."""
        from burstlab.sweep.views import query

        return query(self.out, sql)

    def connect(self) -> duckdb.DuckDBPyConnection:
        """A DuckDB connection with those views, for interactive use."""
        from burstlab.sweep.views import connect

        return connect(self.out)
