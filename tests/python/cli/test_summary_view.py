"""burstlab.cli.summary_view: the numbers the human output shows."""

import pytest

from burstlab.api import IntervalRow
from burstlab.cli.summary_view import INTERVAL_HEADER, human_bytes, interval_line, iperf_units, seconds, throughput_gbps


@pytest.mark.parametrize(
    ("n", "text"),
    [(None, "–"), (0, "0 B"), (1023, "1023 B"), (1536, "1.50 KiB"), (13 * 2**30, "13.00 GiB"),
     (3 * 2**40, "3.00 TiB")],
)
def test_human_bytes_uses_binary_units(n, text):
    assert human_bytes(n) == text


def test_throughput_is_the_summarys_bits_per_second_in_gbps():
    # 13 GiB delivered in 100 s of activity.
    flow = {"delivered_bytes": 13 * 2**30, "fct_s": None, "throughput_bps": 13 * 2**30 * 8 / 100}
    assert throughput_gbps(flow) == pytest.approx(13 * 2**30 * 8 / 100 / 1e9)


def test_throughput_of_a_flow_that_never_started_is_unknown():
    assert throughput_gbps({"delivered_bytes": 0, "fct_s": None, "throughput_bps": None}) is None


def test_seconds_keeps_six_significant_digits():
    assert seconds(0.000123456789) == "0.000123457"
    assert seconds(52.123456789) == "52.1235"
    assert seconds(None) == "unfinished"


# ---- iperf3's interval lines -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "bits", "text"),
    [
        (0, False, "0.00 Byte"),
        (1023, False, "1023 Byte"),
        (1024, False, "1.00 KByte"),
        (1.25 * 2**30, False, "1.25 GByte"),
        (12.5 * 2**20, False, "12.5 MByte"),
        (500 * 2**20, False, " 500 MByte"),
        (9.42e9 / 8, True, "9.42 Gbit"),
        (99.96e6 / 8, True, " 100 Mbit"),
        (999, True, "7.99 Kbit"),
    ],
)
def test_iperf_units_follow_unit_snprintf(value, bits, text):
    # src/units.c: bytes in steps of 1024, bits of 1000, "%4.2f" below 9.995, "%4.1f" below
    # 99.95, else "%4.0f".
    assert iperf_units(value, bits=bits) == text


def test_interval_line_lines_up_under_iperf3s_header():
    row = IntervalRow(flow_id=0, t_start_s=1.0, t_end_s=2.0, bytes=1_178_599_424,
                      bits_per_second=9.4288e9, retransmits=37, cwnd_bytes=3 * 2**20, srtt_us=209_000,
                      pacing_rate_bps=0)
    line = interval_line(row)
    # As iperf3 3.x prints `[  5]   1.00-2.00   sec  1.10 GBytes  9.43 Gbits/sec   37   3.00 MBytes`.
    assert line == "[  0]   1.00-2.00   sec  1.10 GBytes  9.43 Gbits/sec   37   3.00 MBytes"
    assert INTERVAL_HEADER.index("Transfer") == line.index("1.10")
    assert INTERVAL_HEADER.index("Bitrate") == line.index("9.43")
