"""SIGKILL of a sweep (python/burstlab/sweep/worker.py's die_with_parent): nothing can be
cleaned up, but its worker processes and multiprocessing's resource tracker must not outlive
it (they used to idle on for good, holding the output open), and the same command run again
resumes it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from helpers import SMALL_SCENARIO, burstlab

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux only")

#: Two short runs (recorded before the kill) and two of several seconds each (running at it).
GRID = ["--grid", "flow[0].size=1MB,2MB,4GB,5GB", "--set", "stop=300s"]
#: What the issue asks.
GONE_WITHIN_S = 5.0


def _children(pid: int) -> dict[int, bytes]:
    """The processes whose parent is ``pid``, with their command lines."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and _ppid(int(entry.name)) == pid:
            found[int(entry.name)] = _cmdline(int(entry.name))
    return found


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _stat(pid: int) -> list[str] | None:
    """``/proc/PID/stat``'s fields after the command name (state first), or None if gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def _ppid(pid: int) -> int | None:
    fields = _stat(pid)
    return int(fields[1]) if fields else None


def _alive(pid: int) -> bool:
    """A zombie counts as gone: it holds no file and runs nothing, and a container's PID 1 may
    never reap the orphans it inherits."""
    fields = _stat(pid)
    return fields is not None and fields[0] != "Z"


def test_sigkill_leaves_no_process_and_rerun_resumes(tmp_path: Path):
    scenario = tmp_path / "small.toml"
    scenario.write_text(SMALL_SCENARIO)
    out = tmp_path / "s"
    args = [sys.executable, "-m", "burstlab", "sweep", str(scenario), *GRID, "--out", str(out), "-j", "2"]
    with open(tmp_path / "stderr.txt", "w") as stderr:
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=stderr)
    children: dict[int, bytes] = {}
    try:
        # The two short runs recorded, both workers inside a long one.
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and len(list((out / "status").glob("run-*.json"))) < 2:
            time.sleep(0.02)
        children = _children(proc.pid)
        workers = {pid for pid, cmdline in children.items() if b"spawn_main" in cmdline}
        trackers = {pid for pid, cmdline in children.items() if b"resource_tracker" in cmdline}
        assert proc.poll() is None, "the sweep finished before the kill: make its runs longer"
        assert len(workers) == 2 and len(trackers) == 1, children
        t0 = time.monotonic()
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        pids = workers | trackers
        while time.monotonic() - t0 < GONE_WITHIN_S and any(_alive(pid) for pid in pids):
            time.sleep(0.01)
        elapsed = time.monotonic() - t0
        left = {pid: children[pid].replace(b"\0", b" ").decode() for pid in pids if _alive(pid)}
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid, cmdline in children.items():  # what a failure leaves behind is not left to idle on
            if _alive(pid) and _cmdline(pid) == cmdline:
                os.kill(pid, signal.SIGKILL)
    assert not left, f"alive {GONE_WITHIN_S} s after SIGKILL of the sweep: {left}"
    print(f"workers and resource tracker gone {elapsed:.3f} s after SIGKILL")

    # A run is done exactly when its status file exists (runs.parquet is rebuilt at the end).
    done = {p.name: p.stat().st_mtime_ns for p in (out / "status").glob("run-*.json")}
    assert 2 <= len(done) < 4, done
    r = burstlab("sweep", scenario, *GRID, "--out", out, "-j", "2", "--json")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert (summary["resumed"], summary["ok"]) == (len(done), 4), summary
    assert [row["run_id"] for row in pq.read_table(out / "runs.parquet").to_pylist()] == [0, 1, 2, 3]
    for name, mtime in done.items():  # resumed, not run again
        assert (out / "status" / name).stat().st_mtime_ns == mtime
