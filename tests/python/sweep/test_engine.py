"""Sweeps through the Python API: the stored tables, failures, resume and refusal."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from burstlab.errors import ScenarioError
from burstlab.sweep import SweepError, SweepMismatchError, open_sweep, sweep
from burstlab.sweep.store import STATUS_DIR
from helpers import EXPECTED_COLUMNS, SMALL_SCENARIO

GRID = {"topology.rtt": ["1ms", "2ms"], "flow[0].cca": "cubic,reno"}
RUNS_COLUMNS = ["run_id", "topology.rtt", "flow[0].cca", "rep", "seed", "status", "error", "wall_s",
                "burstlab_version", "started_at"]


class StopAfter:
    """A reporter that presses Ctrl-C after ``k`` runs finished."""

    def __init__(self, k: int):
        self.k, self.seen = k, 0

    def start(self, total, done, where):
        pass

    def finished(self, row):
        self.seen += 1
        if self.seen == self.k:
            raise KeyboardInterrupt


def test_sweep_2x2x2_runs_rows_and_tagged_flows(tmp_path: Path):
    result = sweep(SMALL_SCENARIO, grid=GRID, reps=2, out=tmp_path / "s", jobs=2, seed=5)
    runs = result.runs
    assert runs.column_names == RUNS_COLUMNS
    assert runs.num_rows == 8
    assert runs.column("run_id").to_pylist() == list(range(8))
    assert runs.column("status").to_pylist() == ["ok"] * 8
    assert runs.column("rep").to_pylist() == [0, 1] * 4
    assert runs.column("topology.rtt").to_pylist() == ["1ms"] * 4 + ["2ms"] * 4
    assert runs.column("flow[0].cca").to_pylist() == ["cubic", "cubic", "reno", "reno"] * 2
    assert len(set(runs.column("seed").to_pylist())) == 8
    assert result.summary.ok == 8 and result.summary.resumed == 0

    flows = result.table("flows")
    assert flows.column_names == ["run_id", *EXPECTED_COLUMNS["flows"]]
    assert sorted(set(flows.column("run_id").to_pylist())) == list(range(8))
    # Each run's part file holds only its own rows, and the run's seed in its metadata.
    part = pq.read_table(tmp_path / "s" / "flows" / "run-000005.parquet")
    assert set(part.column("run_id").to_pylist()) == {5}
    assert part.schema.metadata[b"burstlab.seed"] == str(runs.column("seed")[5].as_py()).encode()
    # The RTT really varied: the 2 ms runs take longer than the 1 ms ones.
    fct = result.query("SELECT \"topology.rtt\" AS rtt, min(fct_s) AS fct FROM runs JOIN flows "
                       "USING (run_id) GROUP BY 1 ORDER BY 1").to_pydict()
    assert fct["rtt"] == ["1ms", "2ms"] and fct["fct"][0] < fct["fct"][1]
    for name in ("intervals", "queue", "drops"):
        assert result.table(name).column_names[0] == "run_id"


def test_sweep_same_seed_same_results_across_directories(tmp_path: Path):
    grid = {"topology.rtt": ["1ms"]}
    a = sweep(SMALL_SCENARIO, grid=grid, reps=2, out=tmp_path / "a", jobs=1, seed=3)
    b = sweep(SMALL_SCENARIO, grid=grid, reps=2, out=tmp_path / "b", jobs=1, seed=3)
    assert a.runs.column("seed") == b.runs.column("seed")
    assert a.table("flows").equals(b.table("flows"))
    assert a.table("intervals").equals(b.table("intervals"))


def test_sweep_bad_point_fails_only_that_point(tmp_path: Path):
    result = sweep(SMALL_SCENARIO, grid={"topology.mtu": [1500, 100]}, out=tmp_path / "s", jobs=1)
    rows = result.runs.to_pylist()
    assert [r["status"] for r in rows] == ["ok", "error"]
    assert rows[0]["error"] is None
    assert "topology.mtu = 100" in rows[1]["error"] and "576" in rows[1]["error"]
    assert result.summary.error == 1 and result.summary.failed_runs == [1]
    # The failed run has no records; the good one has.
    assert set(result.table("flows").column("run_id").to_pylist()) == {0}


@pytest.mark.parametrize(
    ("grid", "kwargs", "message"),
    [
        ({"topology.mtux": [1500]}, {}, 'unknown key "topology.mtux"; did you mean "topology.mtu"'),
        ({"flow[3].cca": ["reno"]}, {}, "past the end of flow"),
        ({"seed": [1, 2]}, {}, "--grid seed"),
        ({"topology.rtt": ["1ms"]}, {"set": ["seed=4"]}, "--set seed"),
        ({"topology.rtt": ["1ms"]}, {"reps": 0}, "--reps 0"),
    ],
)
def test_sweep_bad_definition_refused_before_writing(tmp_path: Path, grid, kwargs, message):
    with pytest.raises(SweepError, match=message):
        sweep(SMALL_SCENARIO, grid=grid, out=tmp_path / "s", jobs=1, **kwargs)
    assert not (tmp_path / "s").exists()


def test_sweep_bad_scenario_raises_scenario_error(tmp_path: Path):
    with pytest.raises(ScenarioError):
        sweep(SMALL_SCENARIO + "bogus = \n", grid={"topology.rtt": ["1ms"]}, out=tmp_path / "s", jobs=1)
    assert not (tmp_path / "s").exists()


def test_sweep_changed_definition_refused(tmp_path: Path):
    out = tmp_path / "s"
    sweep(SMALL_SCENARIO, grid={"topology.rtt": ["1ms"]}, out=out, jobs=1)
    before = (out / "sweep.json").read_text()
    for change in ({"grid": {"topology.rtt": ["2ms"]}}, {"grid": {"topology.rtt": ["1ms"]}, "reps": 2},
                   {"grid": {"topology.rtt": ["1ms"]}, "seed": 1}):
        with pytest.raises(SweepMismatchError, match="holds a different sweep"):
            sweep(SMALL_SCENARIO, out=out, jobs=1, **change)
    with pytest.raises(SweepMismatchError, match="scenario text differs"):
        sweep(SMALL_SCENARIO.replace('"10MB"', '"20MB"'), grid={"topology.rtt": ["1ms"]}, out=out, jobs=1)
    assert (out / "sweep.json").read_text() == before


def test_sweep_into_foreign_nonempty_directory_refused(tmp_path: Path):
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "notes.txt").write_text("mine")
    with pytest.raises(SweepError, match="not empty"):
        sweep(SMALL_SCENARIO, grid={"topology.rtt": ["1ms"]}, out=tmp_path / "s", jobs=1)


def test_sweep_interrupted_resumes_only_missing_runs(tmp_path: Path):
    out = tmp_path / "s"
    with pytest.raises(KeyboardInterrupt):
        sweep(SMALL_SCENARIO, grid=GRID, reps=2, out=out, jobs=1, reporter=StopAfter(3))
    first = {r["run_id"]: r for r in open_sweep(out).runs.to_pylist()}
    assert len(first) == 3  # runs.parquet was rebuilt on the way out
    status_files = {p.name: p.stat().st_mtime_ns for p in (out / STATUS_DIR).iterdir()}
    assert len(status_files) == 3

    result = sweep(SMALL_SCENARIO, grid=GRID, reps=2, out=out, jobs=1)
    assert result.summary.resumed == 3 and result.summary.ok == 8 and result.summary.not_run == 0
    rows = {r["run_id"]: r for r in result.runs.to_pylist()}
    assert sorted(rows) == list(range(8))
    for run_id, row in first.items():  # not re-run: same start time, status file untouched
        assert rows[run_id]["started_at"] == row["started_at"]
    for name, mtime in status_files.items():
        assert (out / STATUS_DIR / name).stat().st_mtime_ns == mtime
    assert sorted(set(result.table("flows").column("run_id").to_pylist())) == list(range(8))

    again = sweep(SMALL_SCENARIO, grid=GRID, reps=2, out=out, jobs=1)
    assert again.summary.resumed == 8
    assert again.runs.equals(result.runs)


def test_sweep_orphan_parts_removed_on_restart(tmp_path: Path):
    out = tmp_path / "s"
    sweep(SMALL_SCENARIO, grid={"topology.rtt": ["1ms", "2ms"]}, out=out, jobs=1)
    # An interrupt between a run's parts and its status file: the run is not done.
    (out / STATUS_DIR / "run-000001.json").unlink()
    (out / "flows" / ".run-000001.parquet.x.tmp").write_bytes(b"partial")
    before = pq.read_table(out / "flows" / "run-000000.parquet")
    result = sweep(SMALL_SCENARIO, grid={"topology.rtt": ["1ms", "2ms"]}, out=out, jobs=1)
    assert result.summary.resumed == 1 and result.summary.ok == 2
    assert not list((out / "flows").glob(".*.tmp"))
    assert pq.read_table(out / "flows" / "run-000000.parquet").equals(before)
    assert json.loads((out / STATUS_DIR / "run-000001.json").read_text())["status"] == "ok"


def test_sweep_query_bad_sql_names_duckdb_error(tmp_path: Path):
    result = sweep(SMALL_SCENARIO, grid={"topology.rtt": ["1ms"]}, out=tmp_path / "s", jobs=1)
    with pytest.raises(SweepError, match="nope"):
        result.query("SELECT nope FROM runs")


def test_sweep_frees_each_runs_tables_once_recorded(tmp_path: Path):
    # A long sweep must not hold every finished run's record tables until its end: a 364-run
    # study of a shallow buffer (hundreds of thousands of drop rows a run) grew the sweep
    # process to 23 GB and the kernel killed it. No outcome may outlive its recording.
    import gc
    from concurrent.futures import ThreadPoolExecutor

    from burstlab.sweep.definition import SweepDefinition
    from burstlab.sweep.engine import execute
    from burstlab.sweep.grid import axes_from_mapping
    from burstlab.sweep.worker import RunOutcome

    class RecordedStillAlive:
        recorded: set[int] = set()
        kept: set[int] = set()

        def start(self, total, done, where):
            pass

        def finished(self, row):
            gc.collect()
            alive = {o.row["run_id"] for o in gc.get_objects() if isinstance(o, RunOutcome)}
            RecordedStillAlive.kept |= alive & RecordedStillAlive.recorded
            RecordedStillAlive.recorded.add(row["run_id"])

    definition = SweepDefinition(scenario=SMALL_SCENARIO, overrides=(),
                                 axes=tuple(axes_from_mapping({"flow[0].cca": "cubic,reno,htcp,bbr,dctcp,bbr3"})),
                                 reps=2, seed=0)
    with ThreadPoolExecutor(1) as pool:
        summary = execute(definition, tmp_path / "s", pool, "1 thread", RecordedStillAlive())
    assert summary.ok == 12 and len(RecordedStillAlive.recorded) == 12
    assert RecordedStillAlive.kept == set(), f"runs kept after being recorded: {RecordedStillAlive.kept}"
