"""SIGKILL at random moments while a capture is replayed into `burstlab collect --out DIR`,
twenty times, restarting on the same DIR each time: every closed file reads back whole, the
reports on disk are exactly the first ones sent (a lost closed file would leave a hole), and
the reports sent but not on disk stay within the stated bound — the open window: a file closes
at the first batch after it is --rotate seconds old, so at most --rotate + --batch seconds of
reports, plus the batch in flight (--batch), plus what waited in the socket (read from
/proc/net/udp just before the kill). The sender runs in this process, so what it had sent when
the collector died is known to one progress tick."""

from __future__ import annotations

import json
import os
import random
import signal
import sys
import threading
import time
from pathlib import Path

import pyarrow.parquet as pq

from burstlab.collect import replay
from collect_support import collect_process, free_port, noviflow_profile, ramp_table, write_capture

KILLS = 20
#: Slow enough that a collector on a busy two-core machine keeps up: nothing waits in the socket.
RATE = 5_000
ROTATE_S = 0.05
BATCH_S = 0.05
#: The replay says how far it got every 50 ms (crates/bindings/src/reattach.rs POLL_EVERY).
TICK_S = 0.05
#: A loaded two-core machine may run the collector's next batch this late.
SCHEDULING_S = 0.15


def _socket_backlog_bytes(port: int) -> int:
    """The bytes (socket memory: truesize) waiting in the receive queue of the loopback UDP
    socket bound to ``port`` (/proc/net/udp, rx_queue)."""
    for line in Path("/proc/net/udp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[1] == f"0100007F:{port:04X}":
            return int(fields[4].split(":")[1], 16)
    return 0


#: `UDP_GRO` at level `SOL_UDP` (include/uapi/linux/udp.h), which the collector's sockets set.
UDP_GRO = 104


def _bytes_per_queued_datagram(capture: Path) -> float:
    """The least one of the capture's datagrams costs in a socket's receive queue (truesize),
    on a socket that asks for UDP GRO as the collector's do: sent as fast as possible, runs of
    them share one buffer, so the backlog divided by this over-counts what waits, never under."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as rx:
        rx.setsockopt(socket.SOL_UDP, UDP_GRO, 1)
        rx.bind(("127.0.0.1", 0))
        port = rx.getsockname()[1]
        replay(capture, f"127.0.0.1:{port}", speed="max")
        # The queue holds what fits in its buffer: count what it holds, not what was sent.
        backlog = _socket_backlog_bytes(port)
        received = 0
        rx.setblocking(False)
        try:
            while True:
                data, ancillary, _, _ = rx.recvmsg(65_536, socket.CMSG_SPACE(4))
                segment = next((int.from_bytes(d[:4], sys.byteorder) for level, kind, d in ancillary
                                if level == socket.SOL_UDP and kind == UDP_GRO), 0)
                received += -(-len(data) // segment) if segment else 1
        except BlockingIOError:
            pass
    assert received > 0
    return backlog / received


class _Stop(Exception):
    pass


def _files(directory: Path) -> set[Path]:
    return set(directory.glob("part-*.parquet"))


def test_sigkill_loses_at_most_the_open_window_and_never_a_closed_file(tmp_path: Path):
    capture = tmp_path / "ramps.pcap"
    write_capture(capture, ramp_table(20_000, switches=1))
    per_datagram = _bytes_per_queued_datagram(capture)
    out = tmp_path / "live"
    port = free_port()
    profile = noviflow_profile(tmp_path / "p.toml", port)
    rng = random.Random(35)
    window = int(RATE * (ROTATE_S + 2 * BATCH_S + TICK_S + SCHEDULING_S))
    seen: set[Path] = set()
    last_number = 0
    deficits = []
    for attempt in range(KILLS):
        proc = collect_process("--listen", f"127.0.0.1:{port}", "--profile", profile, "--out", out,
                               "--rotate", str(ROTATE_S), "--batch", str(BATCH_S), "--json", "--rise", "400KB")
        line = proc.stdout.readline()
        assert json.loads(line)["event"] == "listening", proc.stderr.read()
        # The files the killed collector left open are gone (unreadable: no footer).
        assert not list(out.glob("*/.part-*.tmp"))
        killed = threading.Event()
        sent = {"at_kill": 0}

        def progress(n: int) -> None:
            if killed.is_set():
                # The first tick after the kill: nothing sent later reached the collector.
                sent["at_kill"] = n
                raise _Stop

        sender = threading.Thread(target=lambda: _send(capture, port, progress), daemon=True)
        sender.start()
        time.sleep(rng.uniform(0.4, 0.8))
        waiting = _socket_backlog_bytes(port) / per_datagram
        os.kill(proc.pid, signal.SIGKILL)
        killed.set()
        sender.join(timeout=30)
        proc.wait(timeout=10)
        assert proc.returncode == -signal.SIGKILL
        new = _files(out / "reports") - seen
        seen |= new
        seqs = []
        for path in sorted(new):
            number = int(path.stem.split("-")[1])
            assert number > last_number, "a restarted collector numbers its files after the last one"
            table = pq.read_table(path)  # reads back whole: the footer is there
            assert table.num_rows == pq.read_metadata(path).num_rows > 0
            seqs.extend(table.column("seq").to_pylist())
        last_number = max([last_number, *(int(p.stem.split("-")[1]) for p in new)])
        # The first reports sent, with no hole: no closed file went missing.
        assert sorted(seqs) == list(range(len(seqs))), f"kill {attempt}: a hole in the reports on disk"
        deficit = sent["at_kill"] - len(seqs)
        bound = window + int(waiting)
        assert 0 <= deficit <= bound, f"kill {attempt}: {deficit} reports sent and not on disk > {bound}"
        deficits.append(deficit)
    # Each closed table folder still reads whole as one dataset, as `burstlab query` reads it.
    for name in ("reports", "queue"):
        files = sorted((out / name).glob("part-*.parquet"))
        assert files and sum(pq.read_metadata(f).num_rows for f in files) > 0
    # Most runs closed files before they were killed: the check above had closed files to lose.
    assert len(seen) >= KILLS // 2
    assert max(deficits) > 0


def _send(capture: Path, port: int, progress) -> None:
    try:
        replay(capture, f"127.0.0.1:{port}", rate=RATE, on_progress=progress)
    except _Stop:
        pass
