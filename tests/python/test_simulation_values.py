"""What the simulator must get right for SMALL_SCENARIO (a 10 MB CUBIC flow, 1 Gbit/s, 1 ms RTT,
no competing traffic), checked through the Python API. These assert analytic bounds and
invariants, so they hold only against the real simulator, not a stand-in."""

from __future__ import annotations

import numpy as np
import pytest

import burstlab
from helpers import SMALL_BOTTLENECK_BPS, SMALL_RTT_S, SMALL_SCENARIO, SMALL_SIZE_BYTES


@pytest.fixture(scope="module")
def result() -> burstlab.RunResult:
    return burstlab.run(SMALL_SCENARIO)


@pytest.fixture(scope="module")
def flow(result) -> dict:
    (flow,) = result.summary["flows"]
    return flow


def test_finished_flow_delivers_exactly_its_size(flow):
    assert flow["size_bytes"] == SMALL_SIZE_BYTES
    assert flow["delivered_bytes"] == SMALL_SIZE_BYTES
    assert flow["fct_s"] is not None


def test_fct_exceeds_handshake_plus_serialisation(flow):
    # SYN/SYN-ACK costs one RTT before data; the payload alone needs size*8/rate at the bottleneck.
    assert flow["fct_s"] > SMALL_RTT_S + SMALL_SIZE_BYTES * 8 / SMALL_BOTTLENECK_BPS


def test_goodput_never_exceeds_the_bottleneck(flow):
    assert flow["delivered_bytes"] * 8 / flow["fct_s"] < SMALL_BOTTLENECK_BPS


def test_sender_done_is_not_before_delivery(flow):
    # The last ACK reaches the sender after the receiver got the last byte.
    assert flow["sender_done_s"] >= flow["fct_s"]


def test_flows_table_agrees_with_summary(result, flow):
    row = result.table("flows").to_pylist()[0]
    for key in ("flow_id", "size_bytes", "delivered_bytes", "retransmits", "timeouts", "fct_s"):
        assert row[key] == flow[key]


def test_intervals_add_up_to_the_delivered_bytes(result, flow):
    intervals = result.table("intervals")
    assert sum(intervals.column("bytes").to_pylist()) == flow["delivered_bytes"]
    start = intervals.column("t_start_s").to_numpy()
    end = intervals.column("t_end_s").to_numpy()
    assert np.all(end > start)
    rate = intervals.column("bits_per_second").to_numpy()
    expected = intervals.column("bytes").to_numpy() * 8 / (end - start)
    np.testing.assert_allclose(rate, expected, rtol=1e-9)


def test_same_seed_gives_identical_records(result):
    again = burstlab.run(SMALL_SCENARIO)
    for name in burstlab.TABLES:
        assert again.table(name).equals(result.table(name))


def test_same_seed_writes_byte_identical_parquet(result, tmp_path):
    burstlab.run(SMALL_SCENARIO).write(tmp_path / "a")
    burstlab.run(SMALL_SCENARIO).write(tmp_path / "b")
    for name in burstlab.TABLES:
        a = (tmp_path / "a" / f"{name}.parquet").read_bytes()
        b = (tmp_path / "b" / f"{name}.parquet").read_bytes()
        assert a == b, name
