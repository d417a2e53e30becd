"""Real iperf3 (Debian's `iperf3`) through a tbf in network namespaces
(validate.topology.Dumbbell): the three set-ups `explain` and `tune` are checked on, and one
run of iperf3 between the dumbbell's sender and receiver."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from burstlab.validate.topology import Bottleneck, Dumbbell, HostTuning

SMALL = (4096, 8192, 8192)
SETUPS = {
    # 16 KiB of queue at 50 Mbit/s holds 11 frames: CUBIC/BBR overrun it and lose.
    "loss": (Bottleneck(rate="50mbit", limit_bytes=16 * 1024), HostTuning(), "50mbit"),
    # A 1 MiB queue the window set-ups never fill. An 8 KB buffer carries about 2 Gbit/s
    # over the namespaces' ~30 µs RTT on a quiet host, so their path is 10 Gbit/s: at 1 Gbit/s the
    # path, not the buffer, bound the flow (934 Mbit/s) whenever the host was not loaded.
    "rmem": (Bottleneck(rate="10gbit", limit_bytes=1 << 20), HostTuning(rmem=SMALL), "10gbit"),
    "wmem": (Bottleneck(rate="10gbit", limit_bytes=1 << 20), HostTuning(wmem=SMALL), "10gbit"),
}
PORT = "5201"
#: Both iperf3 ends run under SCHED_FIFO (chrt -f), as the runs that fitted the host profile
#: `veth-this-machine` did (scripts/calibrate_host_cpu.py --fifo): on this shared 2-core machine
#: the other engineers' builds otherwise set the hosts' pace. Priority 20, above the calibration
#: runs' 10, so that one of those running beside a test does not pace it. Each run is 2 s.
FIFO = ["chrt", "-f", "20"]


def iperf3_run(net: Dumbbell, *args: str, seconds: int = 2, ss_to: Path | None = None) -> str:
    """iperf3 -J from the first sender to the receiver for `seconds` (intervals of 0.25 s, with the
    server's output); with `ss_to`, the sender's `ss -tin` every half second written there."""
    server = net.spawn(net.receiver_ns, [*FIFO, "iperf3", "-s", "-1", "-J", "-p", PORT])
    deadline = time.monotonic() + 5
    while PORT not in subprocess.run(["ip", "netns", "exec", net.receiver_ns, "ss", "-ltn"],
                                     capture_output=True, text=True).stdout:
        if time.monotonic() > deadline:
            raise RuntimeError("iperf3 -s did not listen within 5 s")
        time.sleep(0.05)
    client = net.spawn(net.sender_ns[0], [*FIFO, "iperf3", "-c", net.receiver_addr, "-p", PORT, "-J", "-t", str(seconds),
                                          "-i", "0.25", "--get-server-output", *args])
    snapshots = []
    while ss_to is not None and client.poll() is None:
        # The sender's own account, as a user would take it: `ss -tin` every half second.
        snapshots.append(subprocess.run(["ip", "netns", "exec", net.sender_ns[0], "ss", "-tin", "dst", net.receiver_addr],
                                        capture_output=True, text=True).stdout)
        time.sleep(0.5)
    if ss_to is not None:
        ss_to.write_text("".join(snapshots))
    out, err = client.communicate(timeout=seconds + 20)
    server.communicate(timeout=10)
    if client.returncode != 0 and not out.strip():
        raise RuntimeError(f"iperf3 -c {' '.join(args)}: exit {client.returncode}: {err.strip()}")
    return out
