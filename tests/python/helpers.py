"""Test helpers: one small scenario (the one place the tests spell the scenario format) and the
CLI run as users run it (a separate process, so stdout, stderr and the exit status are exactly
what a shell sees)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

# A 10 MB CUBIC transfer over a 1 Gbit/s, 1 ms-RTT dumbbell: finishes in well under a second of
# simulated time. The one place the tests spell the scenario format.
SMALL_SCENARIO = """\
name = "small-cubic"
seed = 1
stop = "5s"

[topology]
preset = "dumbbell"
bottleneck_rate = "1Gbps"
host_rate = "10Gbps"
rtt = "1ms"

[[flow]]
cca = "cubic"
size = "10MB"
"""

#: Facts of SMALL_SCENARIO the value tests check against.
SMALL_SIZE_BYTES = 10_000_000
SMALL_RTT_S = 0.001
SMALL_BOTTLENECK_BPS = 1e9

# The same scenario with a congestion control that does not exist: the loader must name the field.
BAD_CCA_SCENARIO = SMALL_SCENARIO.replace('cca = "cubic"', 'cca = "cubc"')


# The documented record columns (DESIGN.md "Records", crates/sim/src/record.rs).
FLOWS_COLUMNS = [
    "flow_id", "kind", "src", "dst", "src_ip", "dst_ip", "src_port", "dst_port", "path",
    "base_rtt_s", "cca", "size_bytes", "start_s", "end_s", "fct_s",
    "sender_done_s", "delivered_bytes", "retransmits", "timeouts", "loss_probes", "recoveries",
    "lost_retransmits", "recovery_timeouts", "max_cwnd_bytes",
]
INTERVALS_COLUMNS = [
    "flow_id", "t_start_s", "t_end_s", "bytes", "bits_per_second", "retransmits", "cwnd_bytes",
    "srtt_us",
    "pacing_rate_bps",
]
QUEUE_COLUMNS = ["t_s", "node", "port", "queue", "occupancy_bytes"]
DROPS_COLUMNS = ["t_s", "node", "port", "queue", "flow_id", "bytes", "reason"]
QUERIES_COLUMNS = ["app", "query", "request_s", "done_s", "qct_s", "srtt_at_response_us", "kind", "size_bytes",
                   "size_class"]
INT_COLUMNS = [
    "t_s", "switch_id", "switch", "ingress_port", "ingress_port_name", "egress_port",
    "egress_port_name", "queue_id", "queue_occupancy_bytes", "hop_latency_ns", "src_ip", "dst_ip",
    "src_port", "dst_port", "protocol", "flow_id", "packet_bytes", "dropped", "report_seq",
]
EXPECTED_COLUMNS = {
    "flows": FLOWS_COLUMNS,
    "intervals": INTERVALS_COLUMNS,
    "queue": QUEUE_COLUMNS,
    "drops": DROPS_COLUMNS,
    "queries": QUERIES_COLUMNS,
    "int": INT_COLUMNS,
}
OUTPUT_FILES = {
    "flows.parquet", "intervals.parquet", "queue.parquet", "drops.parquet", "queries.parquet",
    "int.parquet", "summary.json", ".burstlab-manifest.json",
}


def burstlab(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``burstlab ARGS...`` (as ``python -m burstlab``) and capture everything."""
    return subprocess.run(
        [sys.executable, "-m", "burstlab", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=600,
    )


def interrupt(proc: subprocess.Popen[str]) -> tuple[float, str, str]:
    """Send SIGINT as Ctrl-C does; returns (seconds until the process exited, the rest of its
    stdout, its stderr). Kills it if it has not exited within a minute."""
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    elapsed = time.monotonic() - sent
    out, err = proc.communicate()
    return elapsed, out or "", err
