"""``burstlab run``'s report: iperf3-style interval lines as the run proceeds (``--interval``),
then a throughput for every flow and each port's peak and mean queue, drops and ECN marks
(mirrors python/burstlab/cli/run.py and summary_view.py)."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from burstlab.cli import status
from helpers import SMALL_SCENARIO, burstlab

SCENARIOS = Path(__file__).resolve().parents[3] / "scenarios"
INT_SCENARIO = SCENARIOS / "int-burst.toml"
HEADER = "[ ID] Interval           Transfer     Bitrate         Retr  Cwnd"
LINE = re.compile(r"^\[\s*(\d+)\]\s+([\d.]+)-([\d.]+)\s+sec\s+([\d.]+) (\w+)s\s+([\d.]+) (\w+)s/sec\s+(\d+)\s+")


def interval_lines(stdout: str) -> list[re.Match[str]]:
    return [m for m in map(LINE.match, stdout.splitlines()) if m]


# ---- interval lines ----------------------------------------------------------------------------


def test_interval_lines_come_while_the_run_proceeds():
    # Two terabyte transfers: minutes of simulation. Lines must arrive long before its end.
    # INT off: recording every bottleneck packet for 1000 s would hold ~500 M int rows (tens of
    # GB), which the memory budget rightly refuses; the interval lines do not depend on it.
    proc = subprocess.Popen(
        [sys.executable, "-m", "burstlab", "run", str(INT_SCENARIO), "--set", "flow[0].size=1TB",
         "--set", "flow[1].size=1TB", "--set", "stop=1000s", "--set", "telemetry.int_ports=[]"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().rstrip() == HEADER
        seen = [proc.stdout.readline() for _ in range(6)]
        assert all(LINE.match(line) for line in seen), seen
        assert proc.poll() is None  # still simulating
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
    assert proc.returncode == status.INTERRUPTED


def test_interval_lines_are_the_intervals_table(tmp_path):
    out = tmp_path / "run"
    proc = burstlab("run", INT_SCENARIO, "--out", out)
    assert proc.returncode == status.SUCCESS, proc.stderr
    assert proc.stdout.splitlines()[0] == HEADER
    lines = interval_lines(proc.stdout)
    table = pq.read_table(out / "intervals.parquet").to_pylist()
    assert len(lines) == len(table) > 10
    for m, row in zip(lines, table, strict=True):
        assert int(m[1]) == row["flow_id"]
        assert (m[2], m[3]) == (f"{row['t_start_s']:.2f}", f"{row['t_end_s']:.2f}")
        assert int(m[8]) == row["retransmits"]
        bitrate = float(m[6]) * {"bit": 1, "Kbit": 1e3, "Mbit": 1e6, "Gbit": 1e9}[m[7]]
        assert bitrate == pytest.approx(row["bits_per_second"], rel=0.01, abs=10)


def test_interval_option_sets_the_reporting_period(tmp_path):
    out = tmp_path / "run"
    proc = burstlab("run", INT_SCENARIO, "--interval", "0.25", "--out", out)
    assert proc.returncode == status.SUCCESS, proc.stderr
    spans = {(float(m[3]) - float(m[2])) for m in interval_lines(proc.stdout)[:4]}
    assert spans == {0.25}
    table = pq.read_table(out / "intervals.parquet")
    span = np.asarray(table["t_end_s"]) - np.asarray(table["t_start_s"])
    assert np.isclose(span[:4], 0.25).all()


def test_interval_option_is_checked_before_the_run(tmp_path):
    proc = burstlab("run", INT_SCENARIO, "--interval", "0.0001")
    assert proc.returncode == status.BAD_INPUT
    assert proc.stderr.strip().splitlines() == [
        "burstlab run: --interval 0.0001: expected a report interval of at least 0.001 seconds, "
        "such as 1 or 0.1"
    ]
    assert proc.stdout == ""


def test_json_output_has_no_interval_lines():
    proc = burstlab("run", INT_SCENARIO, "--json")
    assert proc.returncode == status.SUCCESS, proc.stderr
    json.loads(proc.stdout)  # the whole of stdout is the summary


# ---- summary -----------------------------------------------------------------------------------


def test_every_flow_has_a_throughput_over_its_active_time(tmp_path):
    # A 10 MB transfer, a flow without a size (it runs until `stop`), and a UDP burst.
    text = SMALL_SCENARIO.replace('stop = "5s"', 'stop = "1s"') + """
[[flow]]
cca = "reno"

[[burst]]
sources = 1
rate = "200Mbps"
start = "100ms"
duration = "50ms"
packet_size = 1500
"""
    path = tmp_path / "three.toml"
    path.write_text(text)
    summary = json.loads(burstlab("run", path, "--json").stdout)
    sized, unbounded, burst = summary["flows"]
    assert sized["active_s"] == sized["fct_s"]
    assert unbounded["fct_s"] is None and unbounded["active_s"] > 0.9  # first SYN to the 1 s stop
    assert burst["kind"] == "udp" and burst["active_s"] == 0.05
    for flow in (sized, unbounded, burst):
        assert flow["throughput_bps"] == flow["delivered_bytes"] * 8 / flow["active_s"]

    proc = burstlab("run", path)
    rows = [line.split() for line in proc.stdout.splitlines() if re.match(r"^\s+[012]\s+(cubic|reno|udp)", line)]
    assert len(rows) == 3
    for row, flow in zip(rows, summary["flows"], strict=True):
        assert f"{flow['throughput_bps'] / 1e9:.3f}" in row, row
    assert "unfinished" in " ".join(rows[1])
    assert "time active" in " ".join(proc.stdout.split())  # the caption says what it means


def test_ports_show_peak_and_time_weighted_mean_queue(tmp_path):
    out = tmp_path / "run"
    proc = burstlab("run", INT_SCENARIO, "--out", out, "--json")
    port = json.loads(proc.stdout)["ports"][0]
    assert port["drops"] > 0
    assert 0 < port["mean_queue_bytes"] < port["max_queue_bytes"]
    # The queue table holds the occupancy each time it moved by more than a step (two MTUs,
    # crates/sim/src/sim.rs record_queue): its step function's time-weighted mean is the
    # engine's to within that step.
    queue = pq.read_table(out / "queue.parquet")
    t = np.append(np.asarray(queue["t_s"]), json.loads(proc.stdout)["engine"]["sim_time_s"])
    level = np.asarray(queue["occupancy_bytes"], dtype=float)
    from_table = float(np.sum(level * np.diff(t)) / t[-1])
    assert abs(from_table - port["mean_queue_bytes"]) < 2 * 1500

    text = burstlab("run", INT_SCENARIO).stdout
    for needle in ("max queue", "mean queue", "drops", "ECN marks", "averaged over the run's time"):
        assert needle in " ".join(text.split()), needle
