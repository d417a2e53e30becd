"""A sweep's directory, written so that an interrupt at any instant leaves only whole runs.

Layout::

    DIR/sweep.json                    the definition (definition.py)
    DIR/status/run-000003.json        one per finished run (ok or error): its runs row
    DIR/<table>/run-000003.parquet    flows, intervals, queue, drops, queries of each ok run, with run_id
    DIR/runs.parquet                  the status files as one table, rebuilt from them

Every file is written to a temporary name in its directory and renamed into place (atomic on
POSIX). A run's table parts are renamed first and its status file last, so a run is done
exactly when its status file exists; parts without a status file (an interrupt between the
two) are removed when the sweep restarts.
"""

from __future__ import annotations

import json
import os
import tempfile
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from burstlab import arrow
from burstlab.api import TABLES

__all__ = ["SweepStore", "write_atomic", "RUNS_FILE", "STATUS_DIR"]

RUNS_FILE = "runs.parquet"
STATUS_DIR = "status"


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file in the same directory and a rename."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _write_parquet_atomic(table: pa.Table, path: Path) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        pq.write_table(table, tmp, compression="zstd")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def part_name(run_id: int) -> str:
    return f"run-{run_id:06d}"


class SweepStore:
    """Reads and writes the files of one sweep directory."""

    def __init__(self, out: Path):
        self.out = out

    def create(self) -> None:
        for sub in (STATUS_DIR, *TABLES):
            (self.out / sub).mkdir(parents=True, exist_ok=True)

    def finished(self) -> dict[int, dict[str, Any]]:
        """run_id -> runs row, for every run with a status file."""
        rows = {}
        for path in sorted((self.out / STATUS_DIR).glob("run-*.json")):
            row = json.loads(path.read_text(encoding="utf-8"))
            rows[int(row["run_id"])] = row
        return rows

    def remove_orphans(self, finished: Mapping[int, Any]) -> int:
        """Delete table parts of runs that have no status file, and temporary files left by an
        interrupted write; returns how many files went."""
        removed = 0
        for sub in (STATUS_DIR, *TABLES):
            for path in (self.out / sub).glob(".*.tmp"):
                path.unlink(missing_ok=True)
                removed += 1
        keep = {part_name(run_id) for run_id in finished}
        for table in TABLES:
            for path in (self.out / table).glob("run-*.parquet"):
                if path.stem not in keep:
                    path.unlink(missing_ok=True)
                    removed += 1
        return removed

    def record(self, row: Mapping[str, Any], tables: Mapping[str, pa.Table] | None) -> None:
        """Store one finished run: its tables (tagged with ``run_id``), then its status file."""
        run_id = int(row["run_id"])
        for name, table in (tables or {}).items():
            column = arrow.from_numpy(np.full(table.num_rows, run_id, dtype=np.int64))
            tagged = table.add_column(0, "run_id", column)
            _write_parquet_atomic(tagged, self.out / name / f"{part_name(run_id)}.parquet")
        data = (json.dumps(dict(row), sort_keys=True) + "\n").encode()
        write_atomic(self.out / STATUS_DIR / f"{part_name(run_id)}.json", data)

    def rebuild_runs(self, params: Sequence[str]) -> pa.Table:
        """Write ``runs.parquet`` from the status files and return it."""
        rows = sorted(self.finished().values(), key=lambda r: r["run_id"])
        columns: dict[str, pa.Array] = {"run_id": arrow.column([r["run_id"] for r in rows], pa.int64())}
        for path in params:
            columns[path] = _param_column([r["params"][path] for r in rows])
        columns["rep"] = arrow.column([r["rep"] for r in rows], pa.int64())
        columns["seed"] = arrow.column([r["seed"] for r in rows], pa.int64())
        columns["status"] = arrow.column([r["status"] for r in rows], pa.string())
        columns["error"] = arrow.column([r["error"] for r in rows], pa.string())
        columns["wall_s"] = arrow.column([r["wall_s"] for r in rows], pa.float64())
        columns["burstlab_version"] = arrow.column([r["burstlab_version"] for r in rows], pa.string())
        started = arrow.column([r["started_at"] for r in rows], pa.string())
        columns["started_at"] = started.cast(pa.timestamp("us", tz="UTC"))
        table = pa.table(columns)
        _write_parquet_atomic(table, self.out / RUNS_FILE)
        return table


def _param_column(values: list[str]) -> pa.Array:
    """A grid parameter as typed as its values allow: all TOML integers -> int64, numbers ->
    float64, booleans -> bool; anything else (``100ms``, ``reno``) stays the text given."""
    parsed = [_toml_scalar(v) for v in values]
    if parsed and all(type(p) is bool for p in parsed):
        return arrow.column(parsed, pa.bool_())
    if parsed and all(type(p) is int for p in parsed):
        return arrow.column(parsed, pa.int64())
    if parsed and all(type(p) in (int, float) for p in parsed):
        return arrow.column([float(p) for p in parsed], pa.float64())
    return arrow.column(values, pa.string())


def _toml_scalar(text: str) -> Any:
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text
