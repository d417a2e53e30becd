"""A sweep directory read into what a report needs: the sweep's definition (scenario, grid axes
in order, repetitions), one :class:`RunData` per ok run with that run's scenario as the loader
resolved it (the grid point's values and ``--set`` applied) and its outcome, and per-run time
series on demand.

Each run's scenario comes from the simulator's own loader (``_core.load_scenario``) fed the
same overrides the sweep gave the run, so a parameter the grid does not sweep (the RTT, a
burst's start) is known exactly, whatever unit or ``--set`` spelled it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from burstlab.report import stop
from burstlab.sweep.definition import DEFINITION_FILE, SweepDefinition
from burstlab.sweep.engine import plan
from burstlab.sweep.errors import SweepError
from burstlab.sweep.grid import Axis
from burstlab.sweep.views import connect

__all__ = ["FlowOutcome", "RunData", "SweepData", "load"]


@dataclass(frozen=True)
class FlowOutcome:
    """One TCP flow of a run (a row of its ``flows`` table)."""

    flow_id: int
    cca: str
    sized: bool  # the scenario gives it a size (iperf3 -n); unsized flows run until ``stop``
    start_s: float
    end_s: float  # last byte delivered; nan when it did not finish
    fct_s: float  # inf when a sized flow did not finish; nan for an unsized flow
    delivered_bytes: int
    retransmits: int


@dataclass(frozen=True, eq=False)
class RunData:
    """One ok run: where it sits in the grid, its resolved scenario, and what came out."""

    run_id: int
    point: int  # the grid point's index, in grid order
    rep: int
    params: dict[str, str]  # grid path -> value, as the grid spells it
    scenario: dict[str, Any]  # the loader's normalised scenario (times in s, rates in bit/s)
    flows: tuple[FlowOutcome, ...]  # TCP flows, by flow_id
    burst_bytes: int  # bytes the UDP (burst) sources got through
    drops: int  # packets dropped anywhere
    peak_queue_bytes: int  # the largest occupancy of any queue

    @property
    def stop_s(self) -> float:
        return float(self.scenario["stop_s"])

    @property
    def fct_s(self) -> float | None:
        """When the last sized TCP transfer completed (``inf``: one did not finish before
        ``stop``); ``None`` when the run has no sized TCP transfer."""
        sized = [f.fct_s for f in self.flows if f.sized]
        return max(sized) if sized else None

    @property
    def goodput_bps(self) -> float | None:
        """TCP bytes delivered, in bits, over the time from the first TCP start to the last
        TCP byte (to ``stop`` when a flow never finished)."""
        if not self.flows:
            return None
        start = min(f.start_s for f in self.flows)
        end = max(self.stop_s if math.isnan(f.end_s) else f.end_s for f in self.flows)
        if end <= start:
            return None
        return sum(f.delivered_bytes for f in self.flows) * 8 / (end - start)

    @property
    def retransmits(self) -> int:
        return sum(f.retransmits for f in self.flows)

    @property
    def end_s(self) -> float:
        """Where this run's time series end: the last TCP byte, or ``stop``."""
        fct = self.fct_s
        if fct is not None and not math.isinf(fct):
            return max(f.end_s for f in self.flows if f.sized)
        return self.stop_s

    @property
    def bursts(self) -> list[tuple[float, float]]:
        """``(start, end)`` of each ``[[burst]]`` of the scenario, in seconds."""
        return [(b["start_s"], b["start_s"] + b["duration_s"]) for b in self.scenario.get("bursts", [])]


@dataclass
class SweepData:
    """What a report reads from a sweep directory."""

    out: Path
    scenario: dict[str, Any]  # the sweep's scenario with its ``--set``, resolved
    axes: tuple[Axis, ...]  # the grid, in the order given
    reps: int
    total_runs: int  # finished runs (ok or error)
    error_runs: int
    runs: list[RunData]

    @property
    def scenario_name(self) -> str:
        return str(self.scenario.get("name") or self.out.name)

    @property
    def grid(self) -> dict[str, list[str]]:
        return {a.path: list(a.values) for a in self.axes}

    @property
    def swept_axes(self) -> list[Axis]:
        """The axes that take two or more values."""
        return [a for a in self.axes if len(a.values) >= 2]

    def swept(self, path: str) -> bool:
        """Whether ``path`` takes two or more values in the grid."""
        return any(a.path == path for a in self.swept_axes)

    def series(
        self, table: str, run_ids: Sequence[int], sql_select: str, where: str = "TRUE", group_by: str = "",
    ) -> dict[int, dict[str, list[Any]]]:
        """``{run_id: {column: values}}`` of ``SELECT run_id, <sql_select> FROM table WHERE
        <where> [GROUP BY run_id, <group_by>]`` for the given runs, rows ordered by their columns
        from the left. Empty when no run produced the table."""
        if not run_ids:
            return {}
        ids = ", ".join(str(int(i)) for i in run_ids)
        con = connect(self.out)
        try:
            rows, names = _fetch(con, f"SELECT run_id, {sql_select} FROM {table} WHERE run_id IN ({ids}) AND ({where}) "
                                 + (f"GROUP BY run_id, {group_by} " if group_by else "") + "ORDER BY ALL")
        finally:
            con.close()
        out: dict[int, dict[str, list[Any]]] = {}
        for row in rows:
            cols = out.setdefault(row[0], {name: [] for name in names[1:]})
            for name, value in zip(names[1:], row[1:], strict=True):
                cols[name].append(value)
        return out


def load(out: str | Path) -> SweepData:
    """Read the sweep in ``out`` (finished or not). Raises ``burstlab.sweep.SweepError`` when
    ``out`` is not a sweep directory or its definition cannot be read."""
    from burstlab import _core

    out = Path(out)
    con = connect(out)  # refuses a directory that is not a sweep, with the reason
    try:
        definition = _definition(out)
        status = dict(_fetch(con, "SELECT run_id, status FROM runs")[0])
        flows: dict[int, list[tuple[Any, ...]]] = {}
        for row in _fetch(con, "SELECT run_id, flow_id, kind, cca, start_s, end_s, fct_s, delivered_bytes, "
                               "retransmits FROM flows ORDER BY run_id, flow_id")[0]:
            flows.setdefault(row[0], []).append(row)
        drops = dict(_fetch(con, "SELECT run_id, count(*) FROM drops GROUP BY run_id")[0])
        peaks = dict(_fetch(con, "SELECT run_id, max(occupancy_bytes) FROM queue GROUP BY run_id")[0])
    finally:
        con.close()
    resolved: dict[int, dict[str, Any]] = {}
    runs = []
    for task in plan(definition):
        if status.get(task.run_id) != "ok" or task.run_id not in flows:
            continue
        point = task.run_id // definition.reps
        if point not in resolved:
            resolved[point] = json.loads(_core.load_scenario(definition.scenario, list(task.overrides)))
        scenario = resolved[point]
        runs.append(RunData(
            run_id=task.run_id, point=point, rep=task.rep, params=dict(task.params), scenario=scenario,
            flows=tuple(_tcp_flows(flows[task.run_id], scenario)),
            burst_bytes=sum(int(r[7] or 0) for r in flows[task.run_id] if r[2] == "udp"),
            drops=int(drops.get(task.run_id, 0)),
            peak_queue_bytes=int(peaks.get(task.run_id, 0) or 0),
        ))
    return SweepData(
        out=out,
        scenario=json.loads(_core.load_scenario(definition.scenario, list(definition.overrides))),
        axes=definition.axes,
        reps=definition.reps,
        total_runs=len(status),
        error_runs=sum(1 for s in status.values() if s != "ok"),
        runs=runs,
    )


def _definition(out: Path) -> SweepDefinition:
    path = out / DEFINITION_FILE
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return SweepDefinition(
            scenario=raw["scenario"],
            overrides=tuple(raw.get("set", [])),
            axes=tuple(Axis(a["path"], tuple(a["values"])) for a in raw["grid"]),
            reps=int(raw.get("reps", 1)),
            seed=int(raw.get("seed", 0)),
        )
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise SweepError(f"{path}: cannot read the sweep definition ({type(err).__name__}: {err})") from None


def _tcp_flows(rows: list[tuple[Any, ...]], scenario: dict[str, Any]) -> list[FlowOutcome]:
    """The TCP rows of one run's ``flows`` table; a flow is sized when its ``[[flow]]`` (the
    scenario's flows come first, in order) has a size."""
    declared = scenario.get("flows", [])
    out = []
    for _, flow_id, kind, cca, start, end, fct, delivered, retx in rows:
        if kind != "tcp":
            continue
        sized = flow_id < len(declared) and declared[flow_id].get("size_bytes") is not None
        fct_s = _float(fct)
        out.append(FlowOutcome(
            flow_id=int(flow_id), cca=str(cca), sized=sized, start_s=float(start), end_s=_float(end),
            fct_s=(math.inf if math.isnan(fct_s) else fct_s) if sized else math.nan,
            delivered_bytes=int(delivered or 0), retransmits=int(retx or 0),
        ))
    return out


def _float(value: Any) -> float:
    return math.nan if value is None else float(value)


def _fetch(con: duckdb.DuckDBPyConnection, sql: str) -> tuple[list[tuple[Any, ...]], list[str]]:
    """Rows and column names of ``sql``; no rows when the table it reads was produced by no run
    (it then has no view)."""
    stop.check()
    try:
        rel = con.sql(sql)
    except duckdb.CatalogException:
        return [], []
    return rel.fetchall(), list(rel.columns)
