"""scripts/calibrate_host_cpu.py: the fit's rule (1/T = a + c/MSS through the two FIT MTUs'
medians) and the shipped profile's agreement with the record it was fitted on."""

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


def test_the_shipped_profile_is_the_fit_of_its_record():
    # crates/sim/src/host/cpu.rs: VETH_RX_PACKET_PS = 462_385, VETH_COPY_RATE_BPS = 4_091_129_516.
    record = json.loads(SCRIPT.with_name("calibrate_host_cpu.session-c.json").read_text())
    a, c = cal.fit_costs(cal.medians(record, shaped=False))
    assert round(c * 1e12) == 462_385
    assert round(8 / a) == 4_091_129_516
