"""Load benchmark of live collection (docs/performance.md, "Live collection (issue 35)"):
`burstlab replay --speed max` into `burstlab collect` on loopback for a fixed time.

    python scripts/bench_collect.py --seconds 60 [--out DIR] [--reports 400000]

Both run as users run them, as two processes. A capture of TR v1.0 reports (four queues
ramping into bursts, tests/python/collect/collect_support.py) is replayed pass after pass until
the time is up (the sender runs in this process and counts what it sent); the collector then
stops (SIGTERM) and prints its counts.

The sender sends runs of equal-size reports as one UDP_SEGMENT message each and the collector's
socket asks for UDP GRO, so on loopback each message reaches the socket as one buffer, or is
dropped by the kernel as one (its drop counter counts buffers). Hence the check: buffers lost
inside the collector = messages sent − kernel drops − buffers received (it must be 0); then
the reports in the dropped buffers are sent − decoded. Printed besides: reports/s over the
run, both processes' CPU seconds (the collector's user and system apart, from /proc), reports
per CPU-second of each process (what a core of its own would sustain), the collector's peak
RSS (VmHWM) and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "python" / "collect"))

from collect_support import RISE, noviflow_profile, ramp_table, write_capture  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> tuple[float, float]:
    """User and system CPU seconds of ``pid`` (utime, stime of /proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) / CLK_TCK, int(fields[12]) / CLK_TCK


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--reports", type=int, default=400_000, help="reports in the capture replayed")
    parser.add_argument("--out", type=Path, help="collect --out DIR (default: no storage)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-collect-"))
    capture = work / "ramps.pcap"
    write_capture(capture, ramp_table(args.reports))
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    profile = noviflow_profile(work / "p.toml", port)
    cmd = [sys.executable, "-m", "burstlab", "collect", "--listen", f"127.0.0.1:{port}", "--profile", str(profile),
           "--rise", RISE, "--json", "--max-streams", "1024"]
    if args.out:
        cmd += ["--out", str(args.out)]
    # Events go to a file: a pipe nobody reads would stop the collector once 64 KiB are waiting.
    events = work / "events.jsonl"
    collector = subprocess.Popen(cmd, stdout=events.open("w"), text=True)
    while not events.exists() or not events.read_text().strip():
        time.sleep(0.05)
    assert json.loads(events.read_text().splitlines()[0])["event"] == "listening"
    rss_peak = 0.0
    done = threading.Event()

    def watch() -> None:
        nonlocal rss_peak
        while not done.wait(1.0):
            rss_peak = max(rss_peak, peak_rss_mb(collector.pid))

    threading.Thread(target=watch, daemon=True).start()
    from burstlab.collect import replay

    start = time.monotonic()
    c0 = cpu_seconds(collector.pid)
    s0 = os.times()
    sent = messages = 0
    # Pass after pass (0.1-0.5 s each at the rates seen) until the time is up.
    while time.monotonic() - start < args.seconds:
        one = replay(capture, f"127.0.0.1:{port}", speed="max")
        sent += one["sent"]
        messages += one["messages"]
    s1 = os.times()
    sender_cpu = (s1.user - s0.user) + (s1.system - s0.system)
    elapsed = time.monotonic() - start
    time.sleep(1.0)  # the collector empties its socket
    c1 = cpu_seconds(collector.pid)
    collector_user, collector_sys = c1[0] - c0[0], c1[1] - c0[1]
    collector_cpu = collector_user + collector_sys
    rss_peak = max(rss_peak, peak_rss_mb(collector.pid))
    collector.send_signal(signal.SIGTERM)
    collector.wait(timeout=60)
    done.set()
    summary = json.loads(events.read_text().strip().splitlines()[-1])
    print(json.dumps({
        "seconds": round(elapsed, 1),
        "reports_decoded": summary["reports"],
        "reports_per_s": round(summary["reports"] / elapsed),
        "kernel_drops": summary["kernel_drops"],
        "sent": sent,
        "sent_per_s": round(sent / elapsed),
        "messages_sent": messages,
        "buffers_received": summary["buffers"],
        "buffers_lost_in_collector": messages - summary["kernel_drops"] - summary["buffers"],
        "reports_in_dropped_buffers": sent - summary["datagrams"],
        "malformed": summary["malformed"],
        "bursts": summary["bursts"],
        "collector_cpu_s": round(collector_cpu, 1),
        "collector_user_s": round(collector_user, 1),
        "collector_sys_s": round(collector_sys, 1),
        "collector_reports_per_cpu_s": round(summary["reports"] / max(collector_cpu, 1e-9)),
        "sender_cpu_s": round(sender_cpu, 1),
        "sender_reports_per_cpu_s": round(sent / max(sender_cpu, 1e-9)),
        "collector_peak_rss_mb": round(rss_peak, 1),
        "load_average": os.getloadavg(),
    }, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
