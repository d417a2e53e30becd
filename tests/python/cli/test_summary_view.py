"""burstlab.cli.summary_view: the numbers the human output shows."""

import pytest

from burstlab.cli.summary_view import human_bytes, seconds, throughput_gbps


@pytest.mark.parametrize(
    ("n", "text"),
    [(None, "–"), (0, "0 B"), (1023, "1023 B"), (1536, "1.50 KiB"), (13 * 2**30, "13.00 GiB"),
     (3 * 2**40, "3.00 TiB")],
)
def test_human_bytes_uses_binary_units(n, text):
    assert human_bytes(n) == text


def test_throughput_is_delivered_bits_over_fct_in_gbps():
    # 13 GiB in 100 s = 13 * 2^30 * 8 / 100 / 1e9 Gbit/s.
    flow = {"delivered_bytes": 13 * 2**30, "fct_s": 100.0}
    assert throughput_gbps(flow) == pytest.approx(13 * 2**30 * 8 / 100 / 1e9)


def test_throughput_of_an_unfinished_flow_is_unknown():
    assert throughput_gbps({"delivered_bytes": 5, "fct_s": None}) is None


def test_seconds_keeps_six_significant_digits():
    assert seconds(0.000123456789) == "0.000123457"
    assert seconds(52.123456789) == "52.1235"
    assert seconds(None) == "unfinished"
