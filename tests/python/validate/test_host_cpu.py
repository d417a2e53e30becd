"""The hosts' softirq load: /proc/stat parsed per CPU, a share of the transfer time."""

from __future__ import annotations

from pathlib import Path

import pytest

from burstlab.validate.compare import host_softirq_loads
from burstlab.validate.host_cpu import SoftirqMeter, softirq_seconds

STAT = """cpu  4705 150 1120 1000000 50 0 2590 0 0 0
cpu0 2300 100 600 500000 20 0 2500 0 0 0
cpu1 2405 50 520 500000 30 0 90 0 0 0
intr 114930548 113199788 3 0 5 263 0 4 [...]
ctxt 1990473
"""


def test_softirq_seconds_reads_the_seventh_column_of_each_cpu() -> None:
    # The all-CPU line and the other counters are not CPUs.
    assert softirq_seconds(STAT, 100) == {"cpu0": 25.0, "cpu1": 0.9}
    assert softirq_seconds("cpu0 1 2 3\ncpuX 1 2 3 4 5 6 7 8\n", 100) == {}


def test_the_busiest_cpu_over_the_transfer(tmp_path: Path) -> None:
    stat = tmp_path / "stat"
    stat.write_text(STAT)
    meter = SoftirqMeter(stat)
    meter.start()
    # cpu0 ran 0.45 s more of softirq, cpu1 0.02 s, over a 0.5 s transfer.
    stat.write_text(STAT.replace(" 2500 ", " 2545 ").replace(" 90 ", " 92 "))
    assert meter.busiest_share(0.5) == pytest.approx(0.9)


def test_no_share_without_the_counters(tmp_path: Path) -> None:
    meter = SoftirqMeter(tmp_path / "missing")
    meter.start()
    assert meter.busiest_share(0.5) is None


def test_the_report_takes_the_median_load_of_single_flows_by_rate() -> None:
    def entry(kind: str, rate: str | None, load: float | None) -> dict:
        real = {"host_softirq_load": {"median": load, "min": load, "max": load}} if load is not None else {}
        return {"setup": {"kind": kind, "rate": rate}, "real": real}

    result = {"detail": {"a": entry("single", "1gbit", 0.95), "b": entry("single", "100mbit", 0.2),
                         "c": entry("incast", None, 0.7), "d": entry("single", "1gbit", None)}}
    assert host_softirq_loads(result) == {"1gbit": {"a": 0.95}, "100mbit": {"b": 0.2}}
