"""SIGKILL at random moments while a capture is replayed into `burstlab collect --out DIR`,
twenty times, restarting on the same DIR each time: every closed file reads back whole, the
reports on disk are exactly the first ones sent (a lost closed file would leave a hole), and
the reports sent but not on disk stay within the stated bound — the open window: a file closes
at the first poll after it is --rotate seconds old, so at most --rotate seconds plus one poll
(burstlab.collect.POLL_S) of reports, plus the poll in flight. The sender runs in this
process, so what it had sent when the collector died is known to one progress tick."""

from __future__ import annotations

import json
import os
import random
import signal
import threading
import time
from pathlib import Path

import pyarrow.parquet as pq

from burstlab.collect import POLL_S, replay
from collect_support import collect_process, free_port, noviflow_profile, ramp_table, write_capture

KILLS = 20
#: Slow enough that a collector on a busy two-core machine keeps up: nothing waits in the socket.
RATE = 5_000
ROTATE_S = 0.1
#: The replay says how far it got every 50 ms (crates/bindings/src/reattach.rs POLL_EVERY).
TICK_S = 0.05


class _Stop(Exception):
    pass


def _files(directory: Path) -> set[Path]:
    return set(directory.glob("part-*.parquet"))


def test_sigkill_loses_at_most_the_open_window_and_never_a_closed_file(tmp_path: Path):
    capture = tmp_path / "ramps.pcap"
    write_capture(capture, ramp_table(20_000, switches=1))
    out = tmp_path / "live"
    port = free_port()
    profile = noviflow_profile(tmp_path / "p.toml", port)
    rng = random.Random(35)
    bound = int(RATE * (ROTATE_S + 2 * POLL_S + TICK_S))
    seen: set[Path] = set()
    last_number = 0
    deficits = []
    for attempt in range(KILLS):
        proc = collect_process("--listen", f"127.0.0.1:{port}", "--profile", profile, "--out", out,
                               "--rotate", str(ROTATE_S), "--json", "--rise", "400KB")
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
        time.sleep(rng.uniform(0.5, 1.0))
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
