"""What the collection tests share: captures of INT reports with known bursts and losses, free
ports, and `burstlab collect` run as users run it."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa

from burstlab.telemetry import write_int_pcap

#: 200 reports per ramp up and down; bursts open at this rise.
RISE = "400KB"


def ramp_table(n: int, *, switches: int = 2, lose_every: int = 0, t0_s: float = 1.0) -> pa.Table:
    """``n`` TR v1.0 reports 1 µs apart spread over ``switches`` switches × 2 ports, each queue
    ramping to 1.6 MB and back every 4,000 of its reports. Flows 10.0.0.1–2 fill the queue
    (only during its ramps), flow 10.0.0.9 is there all the time. With ``lose_every``, every
    that many reports of each switch never leave it (their sequence numbers are skipped)."""
    k = np.arange(n, dtype=np.uint64)
    queues = switches * 2
    per_queue = k // queues
    phase = per_queue % 4_000
    occupancy = np.where(phase < 2_000, phase * 800, (4_000 - phase) * 800).astype(np.uint64)
    in_ramp = (phase > 500) & (phase < 3_500)
    switch = 1 + (k % queues) // 2
    port = 1 + k % 2
    seq = k // switches  # per switch, one counter
    src = np.where(in_ramp, 0x0A00_0001 + per_queue % 2, 0x0A00_0009).astype(np.uint64)

    def same(v: int) -> np.ndarray:
        return np.full(n, v, dtype=np.uint64)

    table = pa.table({
        "t_s": t0_s + k.astype(np.float64) * 1e-6, "switch_id": switch, "ingress_port": same(9),
        "egress_port": port, "queue_id": same(0), "queue_occupancy_bytes": occupancy,
        "hop_latency_ns": occupancy * 8 // 100, "src_ip": src, "dst_ip": same(0x0A01_0001),
        "src_port": same(10_000), "dst_port": same(5201), "protocol": same(6),
        "packet_bytes": same(1500), "dropped": np.zeros(n, dtype=bool), "report_seq": seq,
    })
    if lose_every:
        table = table.filter(pa.array((seq % lose_every) != lose_every - 1))
    return table


def write_capture(path: Path, table: pa.Table) -> int:
    return write_int_pcap(table, path)


def noviflow_profile(path: Path, port: int) -> Path:
    """A profile file that reads reports arriving on ``port`` as AmLight's NoviFlow switches
    send them (80-byte cells), as on UDP 5900."""
    path.write_text(f'[port.{port}]\nbase = "noviflow"\n')
    return path


def free_port(kind: int = socket.SOCK_DGRAM) -> int:
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def collect_process(*args: str | Path, stdout=subprocess.PIPE) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "burstlab", "collect", *map(str, args)],
                            stdout=stdout, stderr=subprocess.PIPE, text=True)
