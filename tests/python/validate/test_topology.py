"""Dumbbell lifecycle on the real kernel: built as asked, and gone afterwards whatever happens."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import burstlab.validate
from burstlab.validate.host_stalls import TRACEFS, mount_tracefs
from burstlab.validate.topology import (
    Bottleneck,
    Dumbbell,
    HostTuning,
    cleanup_stale,
    list_namespaces,
    rate_bps,
    rto_min_route_value,
    run_cmd,
)

PYTHONPATH = str(Path(burstlab.validate.__file__).parents[2])


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    stat = Path(f"/proc/{pid}/stat")
    return not stat.exists() or stat.read_text().split(") ")[-1].startswith("Z")


def _assert_torn_down(namespaces: list[str], pids: list[int]) -> None:
    left = set(namespaces) & set(list_namespaces())
    assert not left, f"namespaces left behind: {left}"
    assert all(_gone(p) for p in pids), f"processes left behind: {[p for p in pids if not _gone(p)]}"


# -- pure helpers (no kernel) ---------------------------------------------------------------------
def test_rto_min_whole_milliseconds() -> None:
    assert rto_min_route_value(0.005) == "5ms"
    assert rto_min_route_value(0.2) == "200ms"
    with pytest.raises(ValueError):
        rto_min_route_value(0.0005)  # RTAX_RTO_MIN is stored in ms
    with pytest.raises(ValueError):
        rto_min_route_value(0.0055)


def test_rate_tc_units() -> None:
    assert rate_bps("1gbit") == 1e9
    assert rate_bps("500mbit") == 5e8
    assert rate_bps("1000000bit") == 1e6
    with pytest.raises(ValueError):
        rate_bps("1gbps")


def test_tuning_sysctls_and_route_attrs() -> None:
    t = HostTuning(cca="cubic", rmem=(4096, 131072, 6291456), rto_min=0.01, quickack=True)
    assert t.sysctls() == ["net.ipv4.tcp_no_metrics_save=1", "net.ipv4.tcp_rmem=4096 131072 6291456"]
    assert t.route_attrs() == ["rto_min", "10ms", "quickack", "1"]
    assert Bottleneck("1gbit", 15140, 131072).tc_args() == [
        "tbf", "rate", "1gbit", "burst", "15140", "limit", "131072"]


def test_dumbbell_refuses_an_mtu_no_link_takes() -> None:
    with pytest.raises(ValueError, match="mtu must be in 68..65535 bytes, got 65536"):
        Dumbbell(mtu=65536)


# -- real kernel --------------------------------------------------------------------------------------
@pytest.mark.netns
def test_dumbbell_built_as_asked_then_gone() -> None:
    root_before = Path("/proc/sys/net/ipv4/tcp_no_metrics_save").read_text()
    tuning = HostTuning(cca="reno", wmem=(4096, 16384, 4194304), rto_min=0.005, quickack=True)
    with Dumbbell(senders=2, bottleneck=Bottleneck("500mbit", 15140, 65536), tuning=tuning) as net:
        names = net.namespaces
        assert set(names) <= set(list_namespaces())
        assert len(names) == 4 and all(n.startswith(f"bl-{os.getpid()}x") for n in names)
        qd = json.loads(run_cmd(["tc", "-j", "-n", net.router_ns, "qdisc", "show", "dev", "rr0"]))
        tbf = next(q for q in qd if q["kind"] == "tbf")
        assert tbf["root"] and tbf["options"]["rate"] == 500_000_000 // 8  # tc reports bytes/s
        for ns in net.sender_ns:
            assert "rto_min lock 5ms quickack 1" in net.routes(ns)
            assert net.sysctl(ns, "net.ipv4.tcp_no_metrics_save") == "1"
            assert net.sysctl(ns, "net.ipv4.tcp_wmem").split() == ["4096", "16384", "4194304"]
            assert net.sysctl(ns, "net.ipv4.tcp_congestion_control") == "reno"
        # What the twin is given is what these hosts have (the sender's wmem as set above).
        buffers = net.buffer_sysctls()
        assert buffers["tcp_wmem"] == [4096, 16384, 4194304]
        assert buffers["tcp_rmem"] == [int(v) for v in net.sysctl(net.receiver_ns, "net.ipv4.tcp_rmem").split()]
        assert len(buffers["tcp_rmem"]) == 3 and len(buffers["rmem_max"]) == 1
        assert "quickack 1" in net.routes(net.receiver_ns)
        assert net.sysctl(net.router_ns, "net.ipv4.ip_forward") == "1"
        # Only our traffic crosses the tbf: no link speaks IPv6 (solicitations, MLD reports).
        if Path("/proc/sys/net/ipv6").exists():
            links = [(ns, "s0") for ns in net.sender_ns] + [(net.receiver_ns, "r0"), (net.router_ns, "rr0"),
                                                            (net.router_ns, "rs0"), (net.router_ns, "rs1")]
            assert all(net.sysctl(ns, f"net.ipv6.conf.{dev}.disable_ipv6") == "1" for ns, dev in links)
        sleeper = net.spawn(net.receiver_ns, ["sleep", "30"])
    _assert_torn_down(names, [sleeper.pid])
    assert Path("/proc/sys/net/ipv4/tcp_no_metrics_save").read_text() == root_before


@pytest.mark.netns
def test_dumbbell_links_take_the_mtu_asked_for() -> None:
    with Dumbbell(mtu=9000) as net:
        links = [(net.sender_ns[0], "s0"), (net.router_ns, "rs0"), (net.router_ns, "rr0"), (net.receiver_ns, "r0")]
        for ns, dev in links:
            shown = json.loads(run_cmd(["ip", "-j", "-n", ns, "link", "show", dev]))
            assert shown[0]["mtu"] == 9000, (ns, dev)


@pytest.mark.netns
def test_dumbbell_torn_down_after_exception() -> None:
    with pytest.raises(RuntimeError, match="boom"):
        with Dumbbell() as net:
            names = net.namespaces
            sleeper = net.spawn(net.sender_ns[0], ["sleep", "30"])
            raise RuntimeError("boom")
    _assert_torn_down(names, [sleeper.pid])


_CHILD = textwrap.dedent("""
    import json, sys, time
    from burstlab.validate.host_stalls import INSTANCE_PREFIX, TbfTrace
    from burstlab.validate.topology import Dumbbell
    with Dumbbell() as net:
        p = net.spawn(net.receiver_ns, ["sleep", "30"])
        with TbfTrace(INSTANCE_PREFIX + net.run, net.tbf_handle) as trace:
            net.on_close(trace.close)
            print(json.dumps({"ns": net.namespaces, "pid": p.pid, "trace": str(trace.dir),
                              "traced": not trace.why}), flush=True)
            time.sleep(30)
""")


@pytest.mark.netns
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_dumbbell_torn_down_when_child_run_signalled(sig: signal.Signals) -> None:
    env = {**os.environ, "PYTHONPATH": PYTHONPATH}
    child = subprocess.Popen([sys.executable, "-c", _CHILD], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env)
    try:
        info = json.loads(child.stdout.readline())
        child.send_signal(sig)
        child.wait(timeout=15)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    # The handler re-raises: SIGTERM kills; SIGINT becomes KeyboardInterrupt, which CPython
    # ends, uncaught, by re-killing itself with SIGINT. Either way the caller sees the signal.
    assert child.returncode == -sig
    if sig == signal.SIGINT:
        assert "KeyboardInterrupt" in child.stderr.read()
    _assert_torn_down(info["ns"], [info["pid"]])
    # The run's ftrace instance goes too: SIGTERM ends the process before any `with` exits, so
    # the dumbbell's teardown removes it.
    assert info["traced"], "no ftrace instance to check (tracefs not mounted?)"
    assert not Path(info["trace"]).exists(), f"ftrace instance left behind: {info['trace']}"


@pytest.mark.netns
def test_cleanup_stale_removes_dead_runs_only() -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = f"bl-{dead.pid}x0-s0"
    run_cmd(["ip", "netns", "add", stale])
    # A SIGKILLed run's ftrace instance, and a live one of ours.
    assert mount_tracefs() == ""
    instances = TRACEFS / "instances"
    stale_trace, live_trace = instances / f"burstlab-{dead.pid}x0", instances / f"burstlab-{os.getpid()}x999"
    stale_trace.mkdir()
    live_trace.mkdir()
    try:
        with Dumbbell() as net:
            removed = cleanup_stale()
            assert stale in removed
            assert f"tracefs instance {stale_trace.name}" in removed
            assert not set(net.namespaces) & set(removed)
            assert set(net.namespaces) <= set(list_namespaces())
        assert not stale_trace.exists() and live_trace.exists()
    finally:
        run_cmd(["ip", "netns", "del", stale], check=False)
        for d in (stale_trace, live_trace):
            if d.exists():
                d.rmdir()
    assert stale not in list_namespaces()
