"""scripts/amlight_candidates.py: each run's line splits the flow's drops at the burst's start
and one base RTT after it, with the study's seed for the point (issue 39's experiments)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "amlight_candidates.py"


@pytest.fixture(scope="module")
def candidates():
    spec = importlib.util.spec_from_file_location("amlight_candidates", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_burst_run_splits_its_drops_at_the_burst_and_one_rtt_later(candidates):
    # A 2 GiB transfer (the base's 13 GiB takes several CPU-seconds) meets a 500 ms burst at
    # 2 s: nothing is dropped before it, some in its first RTT (sent before any loss could be
    # known) and some after (sent while the burst went on); every dropped segment of a
    # completed transfer was sent again at least once.
    line = candidates.one(("bbr", "2s", "500ms", ["flow[0].size=2GiB"]))
    assert line["seed"] == candidates.study_seed("bbr", "2s", "500ms")
    assert line["fct_s"] is not None
    assert line["drops_before"] == 0
    assert line["drops_first_rtt"] > 0
    assert line["drops_after"] > 0
    dropped = line["drops_before"] + line["drops_first_rtt"] + line["drops_after"]
    assert line["retransmits"] >= dropped
    assert line["lost_retransmits"] <= line["retransmits"]


def test_a_run_without_a_burst_drops_nothing(candidates):
    line = candidates.one(("htcp", "2s", "1ns", ["flow[0].size=2GiB"]))
    assert (line["drops_before"], line["drops_first_rtt"], line["drops_after"]) == (0, 0, 0)
    assert line["retransmits"] == 0
