"""scripts/calibrate_host_cpu.py: the fit's rule (8/T = a + c/MSS through the FIT MTUs' pooled
medians, c at least 0) and the shipped profile's agreement with the records it was fitted on."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "calibrate_host_cpu.py"
spec = importlib.util.spec_from_file_location("calibrate_host_cpu", SCRIPT)
cal = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cal)


def test_fit_recovers_the_costs_of_a_synthetic_machine():
    a, c = 1.5e-9, 300e-9  # seconds per byte, per segment
    med = {m: 8 / (a + c / cal.mss(m)) for m in cal.FIT_MTUS}
    got_a, got_c = cal.fit_costs(med)
    assert got_a == pytest.approx(a, rel=1e-9)
    assert got_c == pytest.approx(c, rel=1e-9)


def test_the_fit_never_sees_the_check_mtus():
    assert not set(cal.FIT_MTUS) & set(cal.CHECK_MTUS)


def test_a_negative_per_segment_cost_is_zero_and_the_rate_the_runs_median():
    runs = [{"mtu": m, "shaped": False, "received_bps": bps}
            for m, bps in ((3000, 5e9), (3000, 4e9), (16000, 3e9), (16000, 3.5e9))]
    a, c, k = cal.fit_profile([{"runs": runs}])
    assert (c, k) == (0.0, 0.0)
    assert a == pytest.approx((8 / 4e9 + 8 / 3.5e9) / 2)  # the median of 8/T over the four runs


def test_the_shipped_profile_is_the_fit_of_its_records():
    # crates/sim/src/host/cpu.rs: VETH_RX_PACKET_PS = 0, VETH_COPY_RATE_BPS = 9_478_687_884.
    record = json.loads(SCRIPT.with_name("calibrate_host_cpu.session-f.json").read_text())
    assert {r["fifo"] for r in record["runs"]} == {10}  # measured under SCHED_FIFO
    a, c, k = cal.fit_profile([record])
    assert (round(c * 1e12), round(k * 1e12)) == (0, 0)
    assert round(8 / a) == 9_478_687_884


STAT = """cpu  4122942 607958 590529 1061280 6407 0 130431 10624 0 0
cpu0 2061471 303979 295264 530640 3203 0 65215 5312 0 0
intr 1 2 3
"""


def test_cpu_ticks_reads_the_aggregate_line_by_field():
    t = cal.cpu_ticks(STAT)
    assert (t["user"], t["system"], t["softirq"], t["steal"]) == (4122942, 590529, 130431, 10624)
    with pytest.raises(ValueError, match="aggregate 'cpu' line"):
        cal.cpu_ticks("cpu0 1 2 3 4 5 6 7 8\n")


def test_kernel_cpu_takes_off_what_the_other_load_took_at_its_baseline_rate():
    before = (10.0, {"system": 100, "irq": 0, "softirq": 50})
    after = (12.0, {"system": 250, "irq": 0, "softirq": 150})
    # 250 ticks at USER_HZ 100 = 2.5 CPU-s in 2 s; the other load took 0.2 CPU-s/s of it.
    used, ours = cal.kernel_cpu_s(before, after, 0.2, 100)
    assert (used, ours) == (pytest.approx(2.5), pytest.approx(2.1))
    assert cal.kernel_cpu_s(before, after, 5.0, 100)[1] == 0.0  # never below nothing


def test_fifo_replaces_nice():
    assert cal.priority(-20, None) == ["nice", "-n", "-20"]
    assert cal.priority(-20, 10) == ["chrt", "-f", "10"]


def test_spread_is_min_and_max_about_the_median():
    assert cal.spread([8.0, 10.0, 15.0]) == "-20/+50 %"


def test_cpu_per_byte_takes_the_unshaped_runs_that_measured_it():
    record = {"runs": [{"mtu": 1500, "shaped": False, "cpu_ns_per_byte": 1.2},
                       {"mtu": 1500, "shaped": True, "cpu_ns_per_byte": 11.0},
                       {"mtu": 1500, "shaped": False},  # a session from before the CPU was recorded
                       {"mtu": 9000, "shaped": False, "cpu_ns_per_byte": 1.3}]}
    assert cal.cpu_per_byte(record, 1500) == [1.2]
    assert cal.cpu_per_byte(record, 3000) == []
