"""`burstlab tune`'s arithmetic, without simulating: the kernel's half-window accounting against
GRNET's table, the initcwnd bound, fq's 32-bit maxrate, and bad flags named."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from burstlab.advise import tune as tn
from burstlab.cli import build_app

MiB = 1 << 20


# GRNET's window-limited bounds, window = rmem max / 2 (tcp_adv_win_scale 1): seed 003,
# /work/shared/reference/seed-targets.md §4. The 256 MiB row's window is 131,070 KiB in the
# seed (65535 x 2 KiB), 2 KiB under half, so it holds to 2e-5.
@pytest.mark.parametrize(("buffer", "rtt_s", "mbit_s", "rel"), [
    (6291456, 0.008, 3145.73, 1e-6),
    (6291456, 0.012, 2097.15, 1e-6),
    (16 * MiB, 0.008, 8388.61, 1e-6),
    (256 * MiB, 0.148, 7254.90, 2e-5),
])
def test_window_bound_reproduces_grnets_table(buffer, rtt_s, mbit_s, rel):
    assert tn.window_bound_bps(buffer, rtt_s) / 1e6 == pytest.approx(mbit_s, rel=rel, abs=0.005)


def test_buffers_hold_twice_the_window_per_stream_rounded_to_a_power_of_two():
    f = tn.figures(10e9, 0.008, 1500, streams=1)
    assert f["bdp_bytes"] == 10_000_000 and f["buffer_bytes"] == 32 * MiB
    # Four streams share the BDP: each socket needs a quarter, never less than Linux's default.
    assert tn.figures(10e9, 0.008, 1500, streams=4)["buffer_bytes"] == 8 * MiB
    assert tn.figures(1e9, 0.001, 1500, streams=1)["buffer_bytes"] == tn.LINUX_TCP_RMEM[2]
    # tcp_rmem's max is an int sysctl.
    assert tn.figures(400e9, 0.3, 9000, streams=1)["buffer_bytes"] == tn.SYSCTL_INT_MAX
    assert tn.figures(400e9, 0.3, 9000, streams=1)["window_capped"]


def _change(changes, name):
    return next(c for c in changes if c.name == name)


def test_initcwnd_is_the_window_in_segments_capped_at_amlights_1000():
    _, changes = tn.plan(100e9, 0.209, 9000, 100e9, 1, "eth0")
    c = _change(changes, "initcwnd")
    assert c.twin["initcwnd"] == c.twin["initrwnd"] == "1000"
    # The receiver's first window needs initrwnd segments of room: 2 x 1000 x 8948 B -> 32 MiB.
    assert c.sysctl["net.ipv4.tcp_rmem"].split()[1] == str(32 * MiB)
    # A short path whose window is under 1000 segments starts at its window.
    _, changes = tn.plan(1e9, 0.010, 1500, 1e9, 1, "eth0")
    assert _change(changes, "initcwnd").twin["initcwnd"] == str(-(-1_250_000 // 1448))


def test_pacing_above_fqs_32_bit_maxrate_goes_through_so_max_pacing_rate():
    # 2^32 - 1 bytes/s (TCA_FQ_FLOW_MAX_RATE, net/sched/sch_fq.c) is 34.36 Gbit/s.
    assert tn.FQ_MAXRATE_MAX_BPS / 1e9 == pytest.approx(34.36, abs=0.005)
    _, changes = tn.plan(100e9, 0.05, 9000, 400e9, 1, "eth0")
    fq = _change(changes, "fq and pacing")
    assert "fq_maxrate" not in fq.twin and fq.twin["max_pacing_rate"] == "90000Mbps"
    assert "SO_MAX_PACING_RATE" in fq.commands[0] and fq.commands[1] == "tc qdisc replace dev eth0 root fq"
    _, changes = tn.plan(25e9, 0.05, 9000, 100e9, 1, "ens1")
    fq = _change(changes, "fq and pacing")
    assert fq.commands == ["tc qdisc replace dev ens1 root fq maxrate 22.5gbit"]


def test_no_pacing_when_the_host_does_not_outrun_the_path():
    _, changes = tn.plan(10e9, 0.05, 1500, 10e9, 1, "eth0")
    assert _change(changes, "fq").twin == {"qdisc": "fq"}


@pytest.mark.parametrize(("args", "flag"), [
    (["--rate", "10Gbps", "--rtt", "8"], "--rtt '8'"),
    (["--rate", "fast", "--rtt", "8ms"], "--rate 'fast'"),
    (["--rate", "10Gbps", "--rtt", "8ms", "--burst", "5Gbps"], "--burst '5Gbps'"),
    (["--rate", "10Gbps", "--rtt", "8ms", "--burst", "5Gbps:soon"], "--burst '5Gbps:soon'"),
    (["--rate", "10Gbps", "--rtt", "8ms", "--host-rate", "1Gbps"], "--host-rate '1Gbps'"),
    (["--rate", "10Gbps", "--rtt", "8ms", "--streams", "0"], "--streams 0"),
    (["--rate", "10Gbps", "--rtt", "8ms", "--streams", "1000"], "--streams 1000"),
    (["--rate", "10Gbps", "--rtt", "8ms", "--mtu", "100"], "--mtu 100"),
    (["--rate", "10Gbps", "--rtt", "8ms", "--size", "10B"], "--size '10B'"),
])
def test_a_bad_flag_gets_one_line_naming_it_and_exit_2(args, flag):
    r = CliRunner().invoke(build_app(), ["tune", *args])
    assert r.exit_code == 2
    lines = r.stderr.strip().splitlines() if r.stderr_bytes is not None else r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"burstlab tune: {flag}"), lines


def test_esnet_host_tuning_page_paces_a_10g_host_sending_to_1g():
    # http://fasterdata.es.net/host-tuning/ ("Packet Pacing"): "When sending from a 10G host to a
    # 1G host, it is easy to overrun the receiver, leading to packet loss and TCP backing off",
    # answered by tc at the source. tune paces each stream below the 1G receiver.
    _, changes = tn.plan(1e9, 0.05, 1500, 10e9, 1, "eth0")
    fq = _change(changes, "fq and pacing")
    assert fq.commands == ["tc qdisc replace dev eth0 root fq maxrate 900mbit"]
    assert fq.sysctl == {"net.core.default_qdisc": "fq"}
    # Two streams share the receiver: each gets under half.
    _, changes = tn.plan(1e9, 0.05, 1500, 10e9, 2, "eth0")
    assert _change(changes, "fq and pacing").twin["fq_maxrate"] == "450Mbps"


# ESnet's standard Linux hosts (https://fasterdata.es.net/host-tuning/linux/, as public copies of
# the page quote it), "for friendliness to single and parallel stream tools": a 10G NIC on paths
# up to 100 ms gets tcp_rmem = 4096 87380 33554432 and tcp_wmem = 4096 65536 33554432; a 10G NIC
# up to 200 ms or a 40G NIC up to 50 ms 4096 87380 67108864 / 4096 65536 67108864. Those maxima
# are tune's for eight parallel streams. ESnet's rmem_max/wmem_max (64 and 128 MiB) are twice
# them, room for a tool's own -w; tune's are the maxima themselves.
@pytest.mark.parametrize(("rate", "rtt_s", "tcp_max"), [
    (10e9, 0.100, 33554432),
    (10e9, 0.200, 67108864),
    (40e9, 0.050, 67108864),
])
def test_esnet_standard_hosts_autotuning_maxima_for_eight_streams(rate, rtt_s, tcp_max):
    _, changes = tn.plan(rate, rtt_s, 9000, rate, 8, "eth0")
    sysctl = _change(changes, "socket buffers").sysctl
    assert int(sysctl["net.ipv4.tcp_rmem"].split()[2]) == tcp_max
    assert int(sysctl["net.ipv4.tcp_wmem"].split()[2]) == tcp_max
    assert int(sysctl["net.core.rmem_max"]) == int(sysctl["net.core.wmem_max"]) == tcp_max
    # ESnet: "recommended for hosts with jumbo frames enabled": tcp_mtu_probing = 1.
    assert tn.mtu_change(9000, "eth0").sysctl == {"net.ipv4.tcp_mtu_probing": "1"}
