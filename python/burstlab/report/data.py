"""A sweep directory read into what the report needs: one :class:`Run` per ok run with the
transfer's outcome and the four study parameters (CCA, RTT, burst start, burst duration), and
per-run time series on demand.

A parameter the grid does not sweep is read from the sweep's scenario (``sweep.json``) with its
``--set`` overrides applied, so every run knows its RTT and burst even when only one is swept.
"""

from __future__ import annotations

import json
import math
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from burstlab.report.units import seconds
from burstlab.sweep.definition import DEFINITION_FILE
from burstlab.sweep.views import connect

__all__ = [
    "Run", "SweepData", "load", "CCA", "RTT", "BURST_START", "BURST_DURATION", "STUDY_PATHS",
]

#: The grid paths the report understands (as `--grid` and runs.parquet name them).
CCA = "flow[0].cca"
RTT = "topology.rtt"
BURST_START = "burst[0].start"
BURST_DURATION = "burst[0].duration"
STUDY_PATHS = (CCA, RTT, BURST_START, BURST_DURATION)


@dataclass(frozen=True)
class Run:
    """One ok run of the sweep, reduced to the study's inputs and outcome.

    ``duration_s`` is 0 for a run whose burst sent nothing (``burst[0].duration=1ns``, a
    scenario without a burst): a no-burst baseline. ``fct_s`` is ``inf`` when the transfer did
    not finish before the scenario's ``stop``.
    """

    run_id: int
    cca: str
    rtt_s: float
    start_s: float
    duration_s: float
    fct_s: float
    retransmits: int

    @property
    def is_baseline(self) -> bool:
        return self.duration_s == 0

    @property
    def finished(self) -> bool:
        return not math.isinf(self.fct_s)


@dataclass
class SweepData:
    """What the report reads from a sweep directory."""

    out: Path
    scenario_name: str
    grid: dict[str, list[Any]]
    reps: int
    total_runs: int
    error_runs: int
    stop_s: float
    runs: list[Run]

    def swept(self, path: str) -> bool:
        """Whether ``path`` takes two or more values in the grid."""
        return len(self.grid.get(path, [])) >= 2

    def series(
        self, table: str, run_ids: Sequence[int], sql_select: str, where: str = "TRUE", group_by: str = "",
    ) -> dict[int, dict[str, list[Any]]]:
        """``{run_id: {column: values}}`` of ``SELECT run_id, <sql_select> FROM table WHERE
        <where> [GROUP BY run_id, <group_by>]`` for the given runs, ordered by the first selected
        column. Empty when no run produced the table."""
        if not run_ids:
            return {}
        con = connect(self.out)
        try:
            ids = ", ".join(str(int(i)) for i in run_ids)
            try:
                rel = con.sql(f"SELECT run_id, {sql_select} FROM {table} "
                              f"WHERE run_id IN ({ids}) AND ({where}) "
                              + (f"GROUP BY run_id, {group_by} " if group_by else "")
                              + "ORDER BY run_id, 2")
            except duckdb.CatalogException:
                return {}
            rows = rel.fetchall()
            names = rel.columns[1:]
        finally:
            con.close()
        out: dict[int, dict[str, list[Any]]] = {}
        for row in rows:
            cols = out.setdefault(row[0], {name: [] for name in names})
            for name, value in zip(names, row[1:]):
                cols[name].append(value)
        return out


def load(out: str | Path) -> SweepData:
    """Read the sweep in ``out`` (finished or not). Raises ``burstlab.sweep.SweepError`` when
    ``out`` is not a sweep directory."""
    out = Path(out)
    con = connect(out)
    definition = json.loads((out / DEFINITION_FILE).read_text(encoding="utf-8"))
    scenario = tomllib.loads(definition["scenario"])
    fixed = _fixed_values(scenario, definition.get("set", []))
    grid = {axis["path"]: list(axis["values"]) for axis in definition["grid"]}
    try:
        # Only plain columns: fetching the started_at timestamp would need pytz.
        wanted = ["run_id", "status", *(p for p in STUDY_PATHS if p in grid)]
        columns = ", ".join('"' + c.replace('"', '""') + '"' for c in wanted)
        runs_rel = con.sql(f"SELECT {columns} FROM runs ORDER BY run_id")
        names = runs_rel.columns
        run_rows = [dict(zip(names, row)) for row in runs_rel.fetchall()]
        outcome = _outcomes(con)
    finally:
        con.close()
    runs = []
    for row in run_rows:
        if row["status"] != "ok" or row["run_id"] not in outcome:
            continue
        fct, retx, cca, burst_bytes = outcome[row["run_id"]]
        value = {path: row.get(path, fixed.get(path)) for path in STUDY_PATHS}
        duration = seconds(value[BURST_DURATION]) if value[BURST_DURATION] is not None else 0.0
        runs.append(Run(
            run_id=int(row["run_id"]),
            cca=str(cca),
            rtt_s=seconds(value[RTT]),
            start_s=seconds(value[BURST_START]) if value[BURST_START] is not None else math.nan,
            # A burst that delivered nothing is no burst, whatever its nominal duration.
            duration_s=duration if burst_bytes > 0 else 0.0,
            fct_s=math.inf if fct is None else float(fct),
            retransmits=int(retx or 0),
        ))
    return SweepData(
        out=out,
        scenario_name=str(scenario.get("name", out.name)),
        grid=grid,
        reps=int(definition.get("reps", 1)),
        total_runs=len(run_rows),
        error_runs=sum(1 for row in run_rows if row["status"] != "ok"),
        stop_s=seconds(fixed.get("stop", "60s")),
        runs=runs,
    )


def _outcomes(con: duckdb.DuckDBPyConnection) -> dict[int, tuple[Any, Any, Any, int]]:
    """``run_id -> (fct_s, retransmits, cca, burst bytes delivered)`` of the first TCP flow."""
    try:
        rows = con.sql("""
            SELECT run_id,
                   arg_min(fct_s, flow_id) FILTER (WHERE kind = 'tcp'),
                   arg_min(retransmits, flow_id) FILTER (WHERE kind = 'tcp'),
                   arg_min(cca, flow_id) FILTER (WHERE kind = 'tcp'),
                   coalesce(sum(delivered_bytes) FILTER (WHERE kind = 'udp'), 0)
            FROM flows GROUP BY run_id
        """).fetchall()
    except duckdb.CatalogException:  # no ok run: no flows view
        return {}
    return {r[0]: (r[1], r[2], r[3], int(r[4])) for r in rows if r[3] is not None}


def _fixed_values(scenario: dict[str, Any], overrides: Iterable[str]) -> dict[str, Any]:
    """The burst and RTT paths' values (and ``stop``) in the scenario text with ``--set``
    applied. (The CCA is read from each run's flows table instead.)"""
    flows = scenario.get("flow") or [{}]
    bursts = scenario.get("burst") or [{}]
    values: dict[str, Any] = {
        RTT: scenario.get("topology", {}).get("rtt"),
        BURST_START: bursts[0].get("start"),
        BURST_DURATION: bursts[0].get("duration"),
        "stop": scenario.get("stop", "60s"),
    }
    for item in overrides:
        path, _, value = item.partition("=")
        if path.strip() in values:
            values[path.strip()] = value.strip().strip('"')
    return values
