"""The twin measured as `iperf3 -t` measures a run (twin.replay(seconds=...), tune.replay_timed):
what arrived in the run's seconds, not a transfer timed to its last byte."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from burstlab.advise import iperf3
from burstlab.advise import twin as tw
from burstlab.advise.tune import replay_timed, tune
from burstlab.errors import BurstlabError

#: The shallow-buffer set-up of the real tests (tests/python/advise/realnet.py, "loss"): a 50 Mbit/s
#: tbf with a 16 KiB limit between veth hosts, one cubic flow.
PATH = tw.Path(50e6, 300e-6, 1500, 16384, tbf=True)


def _toml(size: int) -> str:
    return tw.dumbbell_toml("timed", PATH, tw.Hosts(cca="cubic"), streams=1, bytes_each=size, cca="cubic", stop_s=60)


def test_a_timed_twin_keeps_sending_for_the_whole_time():
    # 500 kB take about 0.1 s at 50 Mbit/s: timed to its end, the transfer is all slow start and
    # one flight; measured over 0.5 s as iperf3 -t 0.5 would, the flow sends all along.
    short = _toml(500_000)
    by_transfer = tw.replay(short)
    timed = tw.replay(short, seconds=0.5)
    assert by_transfer.fct_s < 0.2
    assert timed.fct_s == 0.5
    # The tbf passes at most its rate and a bucket: what arrived in 0.5 s is more than the 500 kB.
    assert 500_000 * 8 / 0.5 < timed.throughput_bps <= 50e6 * 1.05
    assert timed.throughput_bps > 0.85 * 50e6


def test_a_timed_twin_counts_what_arrived_by_then():
    toml = _toml(10_000_000)
    one, two = tw.replay(toml, seconds=1.0), tw.replay(toml, seconds=2.0)
    # The same run stopped later: more bytes by 2 s than by 1 s, at about the same rate.
    assert two.throughput_bps * 2.0 > one.throughput_bps * 1.0
    assert two.throughput_bps == pytest.approx(one.throughput_bps, rel=0.05)


def test_a_timed_twin_refuses_a_time_that_is_not_positive():
    with pytest.raises(BurstlabError, match=r"seconds=0: expected a positive time"):
        tw.replay(_toml(1_000_000), seconds=0)


def test_tunes_timed_replay_is_its_before_and_after_twins():
    result = tune(rate="50Mbps", host_rate="500Mbps", rtt="300us", buffer="16384B", tbf=True, cca="bbr",
                  ccas=["cubic", "bbr"])
    assert result["sysctl"]["net.ipv4.tcp_congestion_control"] == "cubic"
    assert result["twin_sets"]["before"] == {}
    assert result["twin_sets"]["after"]["flow[0].cca"] == "cubic"
    timed = replay_timed(result, 2.0)
    # Before: bbr overruns the 11-frame queue and loses; after: cubic fills the tbf.
    assert timed["before"]["retransmits"] > timed["after"]["retransmits"]
    assert timed["after"]["throughput_bps"] > timed["before"]["throughput_bps"]
    assert timed["after"]["throughput_bps"] == pytest.approx(
        tw.replay(result["scenario"], result["twin_sets"]["after"], seconds=2.0).throughput_bps)


def test_a_run_of_t_seconds_is_told_from_one_of_n_bytes(tmp_path):
    local = Path(__file__).parent / "data" / "local-3.12-tbf50mbit-16k.json"
    assert iperf3.load(local).time_limited
    doc = json.loads(local.read_text())
    doc["start"]["test_start"]["bytes"] = 10_000_000
    (sized := tmp_path / "n.json").write_text(json.dumps(doc))
    assert not iperf3.load(sized).time_limited


def test_a_timed_twin_divides_by_the_receivers_seconds_when_they_outlast_the_senders():
    toml = _toml(10_000_000)
    sent, late = tw.replay(toml, seconds=1.0), tw.replay(toml, seconds=1.0, over_s=1.25)
    # The same bytes, counted over a receiver's clock that ran on a quarter second.
    assert late.throughput_bps == pytest.approx(sent.throughput_bps / 1.25)
    assert late.fct_s == 1.25
    with pytest.raises(BurstlabError, match=r"over_s=0.5: expected at least seconds=1.0"):
        tw.replay(toml, seconds=1.0, over_s=0.5)


def test_explain_sends_for_the_senders_seconds_and_counts_over_the_receivers(tmp_path):
    from burstlab.advise import explain_iperf3

    local = Path(__file__).parent / "data" / "local-3.12-tbf50mbit-16k.json"
    doc = json.loads(local.read_text())
    flags = dict(rate="50Mbps", rtt="300us", tbf=True, buffer="16384B")
    on_time = explain_iperf3(local, **flags)
    # The server's clock ran on 10 % longer (its end-of-test message arrived late), the bytes the same.
    received = doc["end"]["sum_received"]
    received["bits_per_second"] /= 1.1
    received["seconds"] *= 1.1
    (late := tmp_path / "late.json").write_text(json.dumps(doc))
    out = explain_iperf3(late, **flags)
    assert out["throughput_bps"] == pytest.approx(on_time["throughput_bps"] / 1.1)
    assert out["twin"]["throughput_bps"] == pytest.approx(on_time["twin"]["throughput_bps"] / 1.1, rel=1e-6)
    assert any(f"sent for {doc['end']['sum_sent']['seconds']:.2f} s" in n for n in out["notes"]), out["notes"]
