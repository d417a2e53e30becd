"""How much of a run the hosts' CPUs spent on network work (softirq).

Every namespace's packets are processed in softirq context on the CPU that RPS picks for the
flow (topology.py), and the flow hash is the same in both directions, so one flow's whole path
(the router's forwarding and the tbf, the receiver's TCP, the ACKs back to the sender) runs on
one CPU. `/proc/stat` counts each CPU's softirq time, in USER_HZ ticks (10 ms at the usual 100).
The busiest CPU's softirq time over the run's transfer time says how near the hosts came to
being the bottleneck themselves: a 50 MB flow at 1 Gbit/s on this 2-core machine kept one CPU
in softirq for a median 61-97 % of its transfer, a 100 Mbit/s one for 2-7 % (docs/validation.md,
"Host softirq load").
"""

from __future__ import annotations

import os
from pathlib import Path

#: The kernel's per-CPU counters (`show_stat()` in fs/proc/stat.c).
PROC_STAT = Path("/proc/stat")
#: Column of `softirq` in a `cpuN` line, after the label: user nice system idle iowait irq softirq.
SOFTIRQ_COLUMN = 7


def softirq_seconds(text: str, ticks_per_s: int) -> dict[str, float]:
    """Softirq time per CPU (`cpu0`, `cpu1`, ...) in a /proc/stat text, in seconds. A line
    that is not a counter row of one CPU is skipped."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) <= SOFTIRQ_COLUMN or not fields[0].startswith("cpu") or not fields[0][3:].isdigit():
            continue
        try:
            out[fields[0]] = int(fields[SOFTIRQ_COLUMN]) / ticks_per_s
        except ValueError:
            continue
    return out


class SoftirqMeter:
    """Softirq time per CPU between `start()` and `busiest_share()`; `None` where /proc/stat
    cannot be read (the share is then not measured)."""

    def __init__(self, path: Path = PROC_STAT) -> None:
        self.path = path
        self.ticks_per_s = os.sysconf("SC_CLK_TCK")
        self.before: dict[str, float] | None = None

    def _read(self) -> dict[str, float] | None:
        try:
            return softirq_seconds(self.path.read_text(), self.ticks_per_s)
        except OSError:
            return None

    def start(self) -> None:
        self.before = self._read()

    def busiest_share(self, span_s: float) -> float | None:
        """The busiest CPU's softirq time since `start()` as a fraction of `span_s` (the
        transfer time the caller measured). One tick is 1/USER_HZ, so over a 0.45 s flow the
        share is known to ±2 %; it may read a little above 1."""
        after = self._read()
        if self.before is None or after is None or span_s <= 0:
            return None
        deltas = [after[cpu] - self.before[cpu] for cpu in after if cpu in self.before]
        return max(deltas) / span_s if deltas else None
