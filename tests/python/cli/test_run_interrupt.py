"""Ctrl-C during ``burstlab run`` and ``burstlab.run()``: the real SIGINT, sent to a process in
the middle of a long simulation, stops it within a second with one line, exit 130, and nothing
written (mirrors python/burstlab/cli/run.py and crates/bindings/src/lib.rs ``run``)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import burstlab
from burstlab.cli import status
from helpers import interrupt

SCENARIOS = Path(__file__).resolve().parents[3] / "scenarios"

# int-burst (two CUBIC flows, INT at the bottleneck, a report every 100 ms of simulated time)
# with transfers of a terabyte: minutes of simulation, whose interval lines show it is under way.
LONG_RUN = [
    str(SCENARIOS / "int-burst.toml"),
    "--set", "flow[0].size=1TB", "--set", "flow[1].size=1TB", "--set", "stop=1000s",
    "--set", "telemetry.int_sample=1000",
]

#: The promise is 1 s; the engine looks at signals every 50 ms of wall time. The bound leaves
#: room for a loaded 2-core machine to schedule the process and for Python to exit.
STOP_WITHIN_S = 1.0


def start(argv: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for_line(proc: subprocess.Popen[str], needle: str, timeout: float = 120) -> list[str]:
    """Read stdout until a line containing ``needle``; the lines read. Kills the process if it
    has not come within ``timeout`` seconds."""
    watchdog = threading.Timer(timeout, proc.kill)
    watchdog.start()
    lines = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if needle in line:
                return lines
    finally:
        watchdog.cancel()
    raise AssertionError(f"no line with {needle!r} before the process ended: {lines}, {proc.stderr.read()}")


def test_ctrl_c_stops_run_within_a_second_and_writes_nothing(tmp_path):
    out, pcap = tmp_path / "runs" / "int", tmp_path / "runs" / "int.pcap"
    proc = start([sys.executable, "-m", "burstlab", "run", *LONG_RUN, "--out", str(out),
                  "--int-pcap", str(pcap)])
    wait_for_line(proc, " sec ")  # the simulation is under way
    elapsed, _, err = interrupt(proc)

    assert proc.returncode == status.INTERRUPTED, err
    assert err.strip().splitlines() == ["burstlab run: interrupted; nothing written"]
    assert elapsed < STOP_WITHIN_S, f"took {elapsed:.2f} s to stop"
    assert list(tmp_path.iterdir()) == []  # no --out, no pcap, no staging, no parent made


def test_ctrl_c_during_a_json_run_is_one_line_too(tmp_path):
    proc = start([sys.executable, "-m", "burstlab", "run", *LONG_RUN, "--json"])
    time.sleep(3)  # no interval lines with --json: give it time to start simulating
    assert proc.poll() is None, proc.communicate()
    elapsed, out, err = interrupt(proc)
    assert proc.returncode == status.INTERRUPTED, err
    assert out == ""
    assert err.strip().splitlines() == ["burstlab run: interrupted; nothing written"]
    assert elapsed < STOP_WITHIN_S, f"took {elapsed:.2f} s to stop"


API_RUN = """
import sys, burstlab

def progress(sim_time_s, rows):
    if rows:
        print("simulating", sim_time_s, flush=True)

try:
    burstlab.run(sys.argv[1], set=sys.argv[2:], progress=progress)
except KeyboardInterrupt:
    print("KeyboardInterrupt", flush=True)
    sys.exit(7)
"""


def test_ctrl_c_raises_keyboard_interrupt_from_the_python_api():
    overrides = [a for a in LONG_RUN[1:] if a != "--set"]
    proc = start([sys.executable, "-c", API_RUN, LONG_RUN[0], *overrides])
    wait_for_line(proc, "simulating")
    elapsed, out, err = interrupt(proc)
    assert (proc.returncode, out.splitlines()[-1]) == (7, "KeyboardInterrupt"), err
    assert err == ""  # no panic, no backtrace
    assert elapsed < STOP_WITHIN_S, f"took {elapsed:.2f} s to stop"


def test_an_exception_in_progress_stops_the_run():
    calls = []

    def progress(sim_time_s, rows):
        calls.append(sim_time_s)
        raise RuntimeError("stop here")

    started = time.monotonic()
    with pytest.raises(RuntimeError, match="stop here"):
        burstlab.run(SCENARIOS / "amlight-209ms-burst.toml", set={"flow[0].size": "1TiB"}, progress=progress)
    assert len(calls) == 1
    assert time.monotonic() - started < 10  # a terabyte at 100 Gbit/s would take minutes
