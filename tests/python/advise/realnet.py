"""Real iperf3 (Debian's `iperf3`) through a tbf in network namespaces
(validate.topology.Dumbbell): the three set-ups `explain` and `tune` are checked on, and one
run of iperf3 between the dumbbell's sender and receiver."""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from burstlab.validate.topology import Bottleneck, DelayLine, Dumbbell, HostTuning

SMALL = (4096, 8192, 8192)
#: The delay line's source (scripts/delayline.c); the window set-ups need gcc to build it.
DELAY_LINE_SOURCE = Path(__file__).resolve().parents[3] / "scripts" / "delayline.c"


@dataclass(frozen=True)
class Setup:
    bottleneck: Bottleneck
    tuning: HostTuning
    #: The path's rate as a user would give it (`--rate`): the tbf's.
    rate: str
    #: The delay line's one-way delay (0: the veths alone, ~30 µs of RTT).
    one_way_us: int = 0

    def dumbbell(self) -> Dumbbell:
        delay = DelayLine(str(delay_line()), self.one_way_us) if self.one_way_us else None
        return Dumbbell(senders=1, bottleneck=self.bottleneck, tuning=self.tuning, delay=delay)


#: The window set-ups' one-way delay: a 4 ms path (4.15-4.2 ms measured: the line adds ~0.1 ms),
#: over which the small window, not the hosts' pace, binds the flow. Over the bare veths (~30 µs)
#: an 8 KB buffer turned round as fast as the hosts could, and the real runs moved by -21 % to
#: +46 % from one sitting to the next (docs/advice.md, "What the twin matches").
WINDOW_ONE_WAY_US = 2000
#: 200 Mbit/s: the tuned flows' rate, which the delay line (16.7 kpps of 1,500-byte frames each
#: way) and the hosts carry with room to spare; the small tcp_rmem carries 5.5 Mbit/s over 4 ms,
#: the small tcp_wmem 85.
WINDOW_PATH = Bottleneck(rate="200mbit", limit_bytes=1 << 20)
SETUPS = {
    # 16 KiB of queue at 50 Mbit/s holds 11 frames: CUBIC/BBR overrun it and lose.
    "loss": Setup(Bottleneck(rate="50mbit", limit_bytes=16 * 1024), HostTuning(), "50mbit"),
    # A 1 MiB queue the window set-ups never fill.
    "rmem": Setup(WINDOW_PATH, HostTuning(rmem=SMALL), "200mbit", WINDOW_ONE_WAY_US),
    "wmem": Setup(WINDOW_PATH, HostTuning(wmem=SMALL), "200mbit", WINDOW_ONE_WAY_US),
}


@functools.cache
def delay_line() -> Path:
    """scripts/delayline.c compiled (once per source text) with gcc."""
    if shutil.which("gcc") is None:
        raise RuntimeError("the window set-ups' delay line needs gcc (scripts/setup.sh installs it)")
    source = DELAY_LINE_SOURCE.read_bytes()
    binary = Path(tempfile.gettempdir()) / f"burstlab-delayline-{hashlib.sha256(source).hexdigest()[:12]}"
    if not binary.exists():
        built = binary.with_name(f"{binary.name}.{os.getpid()}.part")  # two sessions may build at once
        proc = subprocess.run(["gcc", "-O2", "-Wall", "-o", str(built), str(DELAY_LINE_SOURCE)],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"gcc {DELAY_LINE_SOURCE}: exit {proc.returncode}: {proc.stderr.strip()}")
        built.replace(binary)
    return binary


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
    snapshots, pressed, start = [], 0, time.monotonic()
    # During the test (its JSON comes at the end, read below): whether the machine's TCP memory is
    # under pressure, every 0.1 s, and with `ss_to` the sender's own account, as a user would take
    # it, `ss -tin` every half second.
    while client.poll() is None and time.monotonic() < start + seconds + 1:
        pressed += tcp_memory_pressed()
        if ss_to is not None and len(snapshots) <= (time.monotonic() - start) * 2:
            snapshots.append(subprocess.run(["ip", "netns", "exec", net.sender_ns[0], "ss", "-tin", "dst",
                                             net.receiver_addr], capture_output=True, text=True).stdout)
        time.sleep(0.1)
    if ss_to is not None:
        ss_to.write_text("".join(snapshots))
    out, err = client.communicate(timeout=seconds + 20)
    server.communicate(timeout=10)
    if client.returncode != 0 and not out.strip():
        raise RuntimeError(f"iperf3 -c {' '.join(args)}: exit {client.returncode}: {err.strip()}")
    if pressed:
        raise RuntimeError(f"iperf3 -c {' '.join(args)} ran under TCP memory pressure ({pressed} of its 0.1 s "
                           f"checks; now {tcp_memory()}): Linux stops growing receive windows then (a loss run's "
                           "receiver offered 6 KiB), so it measured the machine's other sockets, not the set-up")
    return out


def tcp_memory_pressed() -> bool:
    """Whether the machine's TCP memory (shared by every namespace) is above `tcp_mem`'s pressure
    threshold: `/proc/net/protocols`' "press" column (tcp_memory_pressure), under which Linux
    grows no receive window (tcp_grow_window(), tcp_clamp_window()). Another process's large
    socket buffers (a long-RTT run with 256 MiB `tcp_rmem`) put every namespace there."""
    for line in Path("/proc/net/protocols").read_text().splitlines():
        if line.split()[:1] == ["TCP"]:
            return line.split()[4] == "yes"
    return False


def tcp_memory() -> str:
    """The machine's TCP memory (shared by every namespace) against tcp_mem, in pages."""
    sockstat = Path("/proc/net/sockstat").read_text().splitlines()
    used = next(line.split()[-1] for line in sockstat if line.startswith("TCP:"))  # "... mem PAGES"
    low, pressure, high = Path("/proc/sys/net/ipv4/tcp_mem").read_text().split()
    return f"{used} pages of TCP memory in use, tcp_mem {low} {pressure} {high} (pressure above {pressure})"



#: A port the probe's listener takes on the receiver (iperf3 has PORT).
PROBE_PORT = 5299
_LISTEN = f"""
import socket, time
s = socket.socket()
s.bind(("0.0.0.0", {PROBE_PORT}))
s.listen(64)
print("listening", flush=True)
time.sleep(60)
"""
#: The sender's kernel's own measure of each handshake (tcp_info's tcpi_rtt, in µs, right after
#: connect(): the SYN's round trip, what `ss -ti` shows for a fresh connection), the least of
#: `argv[2]` connections, so that no process's wake-up is counted.
_HANDSHAKES = f"""
import socket, struct, sys, time
rtts = []
for _ in range(int(sys.argv[2])):
    c = socket.create_connection((sys.argv[1], {PROBE_PORT}), timeout=5)
    rtts.append(struct.unpack_from("I", c.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104), 68)[0])
    c.close()
    time.sleep(0.02)
print(min(rtts))
"""


def path_rtt_us(net: Dumbbell, tries: int = 10) -> int:
    """The path's round-trip time, as a user measures it before a transfer: the least handshake
    RTT of `tries` TCP connections from the sender to the receiver, in microseconds."""
    import sys

    listener = net.spawn(net.receiver_ns, [sys.executable, "-c", _LISTEN])
    try:
        if listener.stdout is None or listener.stdout.readline().strip() != "listening":
            raise RuntimeError(f"the probe's listener did not start: {listener.communicate(timeout=5)[1].strip()}")
        proc = subprocess.run(["ip", "netns", "exec", net.sender_ns[0], sys.executable, "-c", _HANDSHAKES,
                               net.receiver_addr, str(tries)], capture_output=True, text=True, timeout=30)
    finally:
        listener.kill()
        listener.communicate(timeout=5)
    if proc.returncode != 0 or not proc.stdout.strip().isdigit():
        raise RuntimeError(f"the handshake probe to {net.receiver_addr}:{PROBE_PORT}: exit {proc.returncode}: "
                           f"{proc.stdout.strip()} {proc.stderr.strip()}")
    return int(proc.stdout)
