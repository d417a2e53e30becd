"""scripts/calibrate_host_cpu.py `sessions`: the test of a session effect against the runs' own
spread, and how often a median of n runs lands within the tolerance."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "calibrate_host_cpu.py"
spec = importlib.util.spec_from_file_location("calibrate_host_cpu_sessions", SCRIPT)
cal = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cal)


def test_sessions_apart_by_more_than_their_spread_have_an_effect():
    # Two sessions 30 % apart, each within ±2 %: the split is no accident of the runs.
    a = [10.0, 10.1, 9.9, 10.2, 9.8, 10.0, 10.1, 9.9, 10.0, 10.2]
    b = [7.0, 7.1, 6.9, 7.0, 7.1, 6.9, 7.0, 7.1, 6.9, 7.0]
    assert cal.session_effect({"a": a, "b": b}, trials=2000) < 0.01


def test_sessions_that_interleave_show_no_effect():
    # The same wide spread in both (the runs in rank order dealt alternately): no effect to find.
    ranked = [6.0, 6.5, 7.0, 7.5, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0]
    assert cal.session_effect({"a": ranked[0::2], "b": ranked[1::2]}, trials=2000) > 0.2


def test_within_tolerance_is_certain_without_spread_and_rare_with_a_wide_one():
    assert cal.within_tolerance([9.5] * 12, 5) == 1.0
    # Half the runs at half the median, half at twice it: a 5-run median rarely lands near it.
    wide = [5.0] * 10 + [20.0] * 10
    assert cal.within_tolerance(wide, 5, trials=5000) < 0.05


def test_sessions_prints_each_record_and_the_pooled_figures(tmp_path, capsys):
    def record(rates):
        return {"runs": [{"mtu": 1500, "shaped": False, "received_bps": r * 1e9, "load1": 3.0} for r in rates]}
    paths = []
    for name, rates in (("x", [9.0, 10.0, 11.0]), ("y", [8.0, 9.5, 12.0])):
        p = tmp_path / f"calibrate_host_cpu.session-{name}.json"
        p.write_text(json.dumps(record(rates)))
        paths.append(str(p))
    assert cal.main(["sessions", *paths]) == 0
    out = capsys.readouterr().out
    assert "| session-x | 3 | 3.0-3.0 | 10.00 (3) |" in out
    assert "| session-y | 3 | 3.0-3.0 | 9.50 (3) |" in out
    assert "MTU 1500: pooled median 9.75 Gbit/s of 6 runs" in out
