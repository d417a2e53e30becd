"""``burstlab sweep`` and ``burstlab query`` as a user runs them (a subprocess), including a
real Ctrl-C and a real Dask cluster on loopback."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from helpers import burstlab

GRID = ["--grid", "topology.rtt=1ms,2ms", "--grid", "flow[0].cca=cubic,reno"]


def test_cli_sweep_then_query(small_scenario: Path, tmp_path: Path):
    out = tmp_path / "s"
    r = burstlab("sweep", small_scenario, *GRID, "--reps", "2", "--out", out, "-j", "2")
    assert r.returncode == 0, r.stderr
    assert f"8 runs: 8 ok, 0 failed; results in {out}/" in r.stdout
    # Each run's seed is printed (and stored).
    seeds = pq.read_table(out / "runs.parquet").column("seed").to_pylist()
    for seed in seeds:
        assert f"seed={seed}" in r.stderr

    q = burstlab("query", out, 'SELECT "flow[0].cca" AS cca, count(*) AS n FROM runs JOIN flows '
                 "USING (run_id) GROUP BY 1 ORDER BY 1", "--json")
    assert q.returncode == 0, q.stderr
    assert json.loads(q.stdout) == [{"cca": "cubic", "n": 4}, {"cca": "reno", "n": 4}]

    table = burstlab("query", out, "SELECT run_id, status, started_at FROM runs ORDER BY run_id")
    assert table.returncode == 0
    assert "8 rows" in table.stdout and "started_at" in table.stdout


def test_cli_sweep_failed_point_exit_1_with_pointer(small_scenario: Path, tmp_path: Path):
    out = tmp_path / "s"
    r = burstlab("sweep", small_scenario, "--grid", "topology.mtu=1500,100", "--out", out, "--json")
    assert r.returncode == 1
    summary = json.loads(r.stdout)
    assert (summary["ok"], summary["error"], summary["failed_runs"]) == (1, 1, [1])
    assert r.stderr == ""  # --json: no progress, no log
    human = burstlab("sweep", small_scenario, "--grid", "topology.mtu=1500,100", "--out", out)
    assert human.returncode == 1
    assert "1 failed" in human.stdout and "failed run_id: 1" in human.stdout
    assert "WHERE status = 'error'" in human.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--grid", "topology.mtux=1500"], "did you mean"),
        (["--grid", "topology.rtt=1ms..3ms"], "expected start..stop/step"),
        (["--grid", "topology.rtt=1ms", "--grid", "topology.rtt=2ms"], "given twice"),
        (["--grid", "topology.rtt=1ms", "--jobs", "2", "--dask", "tcp://127.0.0.1:1"], "exclude"),
    ],
)
def test_cli_sweep_bad_input_exit_2(small_scenario: Path, tmp_path: Path, args, message):
    r = burstlab("sweep", small_scenario, *args, "--out", tmp_path / "s")
    assert r.returncode == 2
    assert message in r.stderr
    assert not (tmp_path / "s").exists()


def test_cli_sweep_changed_definition_exit_2(small_scenario: Path, tmp_path: Path):
    out = tmp_path / "s"
    assert burstlab("sweep", small_scenario, "--grid", "topology.rtt=1ms", "--out", out).returncode == 0
    r = burstlab("sweep", small_scenario, "--grid", "topology.rtt=1ms", "--seed", "9", "--out", out)
    assert r.returncode == 2
    assert "holds a different sweep (seed: was 0, now 9)" in r.stderr


def test_cli_query_bad_sql_and_bad_dir_exit_2(small_scenario: Path, tmp_path: Path):
    out = tmp_path / "s"
    burstlab("sweep", small_scenario, "--grid", "topology.rtt=1ms", "--out", out)
    r = burstlab("query", out, "SELEC 1")
    assert r.returncode == 2 and "syntax error" in r.stderr.lower()
    r = burstlab("query", tmp_path, "SELECT 1")
    assert r.returncode == 2 and "not a sweep directory" in r.stderr


def test_cli_sweep_sigint_then_rerun_completes_only_missing(small_scenario: Path, tmp_path: Path):
    out = tmp_path / "s"
    # -X faulthandler: a sweep that does not stop prints every thread's stack on SIGABRT below.
    args = [sys.executable, "-X", "faulthandler", "-m", "burstlab", "sweep", str(small_scenario), "--grid",
            "topology.rtt=1ms..40ms/1ms", "--reps", "3", "--out", str(out), "-j", "1"]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    status_dir = out / "status"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list(status_dir.glob("run-*.json"))) < 3:
        time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    try:
        _, stderr = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        # On a loaded CI machine it once ran on past 60 s; say where it was.
        proc.send_signal(signal.SIGABRT)
        _, stderr = proc.communicate(timeout=30)
        pytest.fail(f"the sweep did not stop within 60 s of SIGINT; its threads then:\n{stderr[-6000:]}")
    assert proc.returncode == 130, stderr
    assert "interrupted" in stderr
    done = {p.name: p.stat().st_mtime_ns for p in status_dir.glob("run-*.json")}
    assert 3 <= len(done) < 120
    first = {r["run_id"]: r["started_at"] for r in pq.read_table(out / "runs.parquet").to_pylist()}
    assert len(first) == len(done)

    r = burstlab("sweep", small_scenario, "--grid", "topology.rtt=1ms..40ms/1ms", "--reps", "3",
                 "--out", out, "-j", "1", "--json")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert (summary["resumed"], summary["ok"]) == (len(done), 120)
    rows = pq.read_table(out / "runs.parquet").to_pylist()
    assert [row["run_id"] for row in rows] == list(range(120))
    for row in rows:
        if row["run_id"] in first:
            assert row["started_at"] == first[row["run_id"]]
    for name, mtime in done.items():
        assert (status_dir / name).stat().st_mtime_ns == mtime


def test_cli_sweep_on_dask_local_cluster_matches_local_run(small_scenario: Path, tmp_path: Path):
    distributed = pytest.importorskip("distributed")
    grid = ["--grid", "topology.rtt=1ms,3ms", "--reps", "2", "--seed", "11"]
    local = burstlab("sweep", small_scenario, *grid, "--out", tmp_path / "local", "-j", "1")
    assert local.returncode == 0, local.stderr
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None) as cluster:
        r = burstlab("sweep", small_scenario, *grid, "--out", tmp_path / "dask",
                     "--dask", cluster.scheduler_address)
    assert r.returncode == 0, r.stderr
    assert "Dask scheduler tcp://127.0.0.1:" in r.stderr
    columns = ["run_id", "topology.rtt", "rep", "seed", "status"]
    a = pq.read_table(tmp_path / "local" / "runs.parquet").select(columns)
    b = pq.read_table(tmp_path / "dask" / "runs.parquet").select(columns)
    assert a.num_rows == 4 and a.equals(b)
    for table in ("flows", "intervals", "queue", "drops"):
        for run_id in range(4):
            part = f"{table}/run-{run_id:06d}.parquet"
            assert pq.read_table(tmp_path / "dask" / part).equals(pq.read_table(tmp_path / "local" / part))
