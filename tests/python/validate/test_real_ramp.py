"""scripts/real_ramp.py: reading the iperf3 server's intervals and folding them into seconds (the
network part needs root and runs by hand; docs/studies.md, GRNET note 3)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "real_ramp.py"
spec = importlib.util.spec_from_file_location("real_ramp", SCRIPT)
ramp = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ramp)

# iperf3 3.12's server text at -i 0.25, abridged: the units change from bits to K, M and G.
SERVER = """Accepted connection from 10.203.0.1, port 38974
[  5] local 10.203.0.2 port 5201 connected to 10.203.0.1 port 38978
[ ID] Interval           Transfer     Bitrate
[  5]   0.00-0.25   sec  0.00 Bytes  0.00 bits/sec
[  5]   0.25-0.50   sec  35.0 KBytes  1.15 Mbits/sec
[  5]   0.50-0.75   sec   350 KBytes  11.5 Kbits/sec
[  5]   0.75-1.00   sec  35.0 MBytes  1.00 Gbits/sec
[  5]   1.00-1.25   sec  29.6 MBytes   994 Mbits/sec
[  5]   1.25-1.40   sec  17.8 MBytes   992 Mbits/sec
- - - - - - - - - - - - - - - - - - - - - - - - -
[ ID] Interval           Transfer     Bitrate
[  5]   0.00-1.40   sec   310 MBytes   626 Mbits/sec                  receiver
"""


def test_server_rates_reads_each_interval_in_mbit_s_and_leaves_out_the_summary():
    assert ramp.server_rates(SERVER) == [0.0, 1.15, 0.0115, 1000.0, 994.0, 992.0]


def test_per_second_averages_four_quarter_seconds_and_drops_an_incomplete_second():
    rates = [0.0, 1.15, 0.0115, 1000.0, 994.0, 992.0]
    assert ramp.per_second(rates, 4) == [round((0.0 + 1.15 + 0.0115 + 1000.0) / 4, 1)]


# `ss -tmin` in a namespace during a 16 MiB run, abridged: the data stream, then iperf3's control
# connection (a few hundred bytes), which parse_ss leaves out.
SS = """State Recv-Q Send-Q Local Address:Port Peer Address:Port Process
ESTAB 0      4194304 10.203.0.1:38978 10.203.0.2:5201
\t skmem:(r0,rb87380,t0,tb16777216,f2608,w11646416,o0,bl0,d0) cubic wscale:8,8 rto:280 rtt:78.426/0.062 mss:1448 \
cwnd:9866 ssthresh:2510 bytes_acked:1891615054 segs_out:772527 data_segs_out:772527 send 1.46Gbps \
pacing_rate 2.78Gbps delivery_rate 837489912bps busy:19292ms rwnd_limited:12212ms(63.3%) unacked:5812 \
rcv_space:14480 rcv_ssthresh:42242 snd_wnd:8387328
ESTAB 0      0      10.203.0.1:38974 10.203.0.2:5201
\t skmem:(r0,rb131072,t0,tb87040,f0,w0,o0,bl0,d0) cubic wscale:8,8 rto:280 rtt:78.1/0.05 mss:1448 cwnd:10 \
bytes_acked:291 segs_out:12 busy:8ms rcv_ssthresh:64088 snd_wnd:64256
"""


def test_parse_ss_keeps_the_data_stream_with_its_chronographs_and_window():
    rows = ramp.parse_ss(SS)
    assert len(rows) == 1
    row = rows[0]
    assert row["rwnd_limited"] == "12212ms(63.3%)"
    assert row["snd_wnd"] == "8387328"
    assert row["cwnd"] == "9866"
    assert row["rtt"] == "78.426/0.062"
    assert row["pacing_rate"] == "2.78Gbps"
    assert "sndbuf_limited" not in row


def test_parse_rate_reads_tc_and_plain_units_and_names_a_bad_value():
    assert ramp.parse_rate("1gbit") == 1_000_000_000
    assert ramp.parse_rate("500mbit") == 500_000_000
    assert ramp.parse_rate("2.5G") == 2_500_000_000
    assert ramp.parse_rate("1000000") == 1_000_000
    with pytest.raises(ValueError, match="--line-rate 'fast'"):
        ramp.parse_rate("fast")


# One `ss -tinm` snapshot in the receiver's namespace during a scaled GRNET ramp, abridged: the data
# stream (DRS has grown sk_rcvbuf to 705128) and iperf3's control connection.
SAMPLE = """State Recv-Q Send-Q Local Address:Port Peer Address:Port Process
ESTAB 8948   0      10.203.0.2:5201 10.203.0.1:41270
\t skmem:(r17920,rb705128,t0,tb499200,f0,w0,o0,bl0,d0) cubic wscale:13,13 rto:1704 rtt:1500/750 ato:40 \
mss:8948 rcvmss:8948 advmss:8948 cwnd:10 bytes_received:93173 data_segs_in:12 rcv_rtt:1500.26 \
rcv_space:75240 rcv_ssthresh:71099 minrtt:1500 snd_wnd:40960
ESTAB 0      0      10.203.0.2:5201 10.203.0.1:41262
\t skmem:(r0,rb87380,t0,tb499200,f0,w0,o0,bl0,d0) cubic wscale:13,13 rto:1704 rtt:1500/750 mss:8948 \
cwnd:10 bytes_received:205 rcv_space:34742 rcv_ssthresh:34742 snd_wnd:40960
"""


def test_parse_ss_sample_reads_every_connection_with_its_receive_buffer_and_drs_state():
    rows = ramp.parse_ss_sample(SAMPLE)
    assert set(rows) == {"10.203.0.2:5201>10.203.0.1:41270", "10.203.0.2:5201>10.203.0.1:41262"}
    data = rows["10.203.0.2:5201>10.203.0.1:41270"]
    assert (data["rb"], data["r"]) == (705128, 17920)
    assert (data["rcv_space"], data["rcv_ssthresh"], data["bytes_received"]) == (75240, 71099, 93173)
    assert data["rcv_rtt"] == 1500.26
    assert data["snd_wnd"] == 40960


def test_sampler_series_keeps_the_streams_that_moved_the_most_bytes():
    sampler = ramp.Sampler("unused", 0.1, 0.0)
    data = "10.203.0.2:5201>10.203.0.1:41270"
    sampler.samples = [(0.1, ramp.parse_ss_sample(SAMPLE)),
                       (0.2, {"a>b": {"bytes_received": 10}, data: {"bytes_received": 9}}),
                       (0.3, {data: {"bytes_received": 9}})]
    series = sampler.series(1)
    # The third snapshot repeats the second's fields: left out.
    assert [(t, key) for t, key, _ in series] == [(0.1, data), (0.2, data)]


def _ramp_run(window_after_first_flight: int, space_grows_at: float) -> dict:
    """A 1.5 s ramp's sampled series: four segments arrive at 2.0 s and are acknowledged at 2.75 s;
    flights follow every 1.5 s and DRS first raises rcv_space at `space_grows_at`."""
    receiver = [[0.5, "r", {"bytes_received": 37, "rcv_space": 34742}],
                [2.0, "r", {"bytes_received": 17933, "rcv_space": 34742}],  # mid-flight
                [2.1, "r", {"bytes_received": 35829, "rcv_space": 34742}],
                [3.5, "r", {"bytes_received": 93173, "rcv_space": 34742}],
                [space_grows_at, "r", {"bytes_received": 200000, "rcv_space": 75240}]]
    sender = [[0.5, "s", {"bytes_acked": 38, "snd_wnd": 40960}],
              [2.75, "s", {"bytes_acked": 17934, "snd_wnd": 49152}],
              [2.8, "s", {"bytes_acked": 35830, "snd_wnd": window_after_first_flight}]]
    return {"ss_series": {"sender": sender, "receiver": receiver}}


@pytest.mark.parametrize(("window", "grows_at", "flight"), [(57344, 3.5, 1), (32768, 6.6, 3)])
def test_ramp_marks_read_the_whole_first_flights_window_and_the_flight_drs_first_grew(window, grows_at, flight):
    marks = ramp.ramp_marks(_ramp_run(window, grows_at), 1.5)
    assert marks == {"first_window": window, "drs_first_flight": flight}


def test_ramp_marks_without_a_series_are_none():
    assert ramp.ramp_marks({"ss_series": {}}, 1.5) == {"first_window": None, "drs_first_flight": None}
