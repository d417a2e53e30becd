"""`burstlab run` on a flow of parallel streams (`streams`, iperf3 -P): a line per stream and
interval, then iperf3's [SUM] line of the interval (python/burstlab/cli/run.py)."""

from __future__ import annotations

from typer.testing import CliRunner

import burstlab
from burstlab import catalogue
from burstlab.cli import build_app
from burstlab.cli.summary_view import iperf_units


def test_each_interval_of_a_multi_stream_flow_ends_with_its_sum():
    sets = ["flow[0].streams=3", "stop=2s", "topology.mtu=9000"]
    out = CliRunner().invoke(build_app(), ["run", "grnet/dc", *(a for s in sets for a in ("--set", s))])
    assert out.exit_code == 0, out.output
    lines = [line for line in out.output.splitlines() if line.startswith("[")]
    assert [line[:5] for line in lines[1:9]] == ["[  0]", "[  1]", "[  2]", "[SUM]"] * 2
    # The [SUM] is the three streams' bytes of the interval, as the intervals table has them.
    rows = burstlab.run(catalogue.text("grnet/dc"), set=sets).to_pandas("intervals")
    for line, t0 in zip((lines[4], lines[8]), (0.0, 1.0), strict=True):
        total = int(rows[rows["t_start_s"] == t0]["bytes"].sum())
        assert f"  {iperf_units(total, bits=False)}s  " in line, line
        assert line.startswith(f"[SUM] {t0:6.2f}-{t0 + 1:<6.2f} sec")


def test_single_stream_flows_get_no_sum():
    out = CliRunner().invoke(build_app(), ["run", "grnet/dc", "--set", "stop=1s", "--set", "topology.mtu=9000"])
    assert out.exit_code == 0, out.output
    assert "[SUM]" not in out.output
