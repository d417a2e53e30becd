"""scripts/real_ramp.py: reading the iperf3 server's intervals and folding them into seconds (the
network part needs root and runs by hand; docs/studies.md, GRNET note 3)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

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
