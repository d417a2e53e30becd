"""Fixtures of the telemetry tests: a small INT capture from the simulator."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import burstlab

SCENARIOS = Path(__file__).resolve().parents[3] / "scenarios"


@pytest.fixture(scope="session")
def sim_int_capture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """int-burst's INT reports (TR v1.0, one per frame) as `burstlab run --int-pcap` writes them:
    89 frames with a report every 5,000 packets and the run stopped at 850 ms."""
    pcap = tmp_path_factory.mktemp("sim-int") / "int.pcap"
    r = burstlab("run", SCENARIOS / "int-burst.toml", "--set", "telemetry.int_sample=5000",
                 "--set", "stop=850ms", "--int-pcap", pcap)
    assert r.returncode == 0, r.stderr
    return pcap
