"""`burstlab tune` checked on real Linux: for each of explain's real set-ups (a shallow tbf
buffer, a small tcp_rmem, a small tcp_wmem; realnet.SETUPS) the host is measured as it is,
`tune` is asked about that path and that host, its advice is applied to the namespaces, and the
host is measured again. The advice must improve the transfer, the tuned host must carry at least
85 % of what tune's twin said, and the measured gain (throughput after / before, medians of
REPS two-second iperf3 runs each) must be within 15 % of the gain the twin predicted, the twin
measured as iperf3 -t measures (tune.replay_timed); where the
twin of the untuned host is known to miss (BEFORE_TWIN_MISSES, none now), that last check is an
expected failure that prints its figures. The window set-ups run over a 4 ms path (realnet's
delay line), as the small window's users mean it: the window, not the hosts' pace, binds.

What is applied, and how (this kernel has neither sch_fq nor sch_netem):
* each sysctl of the fragment, in the sender's and the receiver's namespaces (rmem_max and
  wmem_max are per namespace since 6.x);
* the congestion control with `iperf3 -C` (a namespace may only default to what the root
  allows, here reno and bbr; TCP_CONGESTION takes any loaded one);
* fq's `maxrate` as SO_MAX_PACING_RATE (`iperf3 --fq-rate`), which TCP's own pacing honours
  without fq; plain fq cannot be applied here and fails the test, named;
* initcwnd and initrwnd on the hosts' routes to each other.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
from typing import Any

import pytest

from burstlab.advise.explain import FULL_PATH
from burstlab.advise.tune import CCAS, replay_timed, tune
from burstlab.validate.topology import Dumbbell, run_cmd
from burstlab.validate.topology import rate_bps as tc_rate_bps
from realnet import SETUPS, iperf3_run, path_rtt_us

pytestmark = [pytest.mark.netns,
              pytest.mark.skipif(shutil.which("iperf3") is None, reason="needs iperf3 (scripts/setup.sh installs it)")]

#: Runs per side; their median is compared (a shared 2-core host moves single runs by 2x).
REPS = 3
#: The measured gain may differ from the predicted one by this share (issue 38).
GAIN_TOLERANCE = 0.15
#: The twin's hosts' links, relative to the tbf, as explain's tbf twin has them (twin.HOST_RATE_FACTOR).
HOST_FACTOR = 10


def _measure(name: str, advice: dict[str, Any] | None = None, args: tuple[str, ...] = ()) -> list[dict]:
    runs = []
    for _ in range(REPS):
        with SETUPS[name].dumbbell() as net:
            extra = [*args, *(_apply(net, advice) if advice else [])]
            runs.append(json.loads(iperf3_run(net, *extra)))
            if not runs[-1].get("end", {}).get("sum_received"):
                raise AssertionError(f"{name}: iperf3 {' '.join(extra)} ended without a result: {runs[-1].get('error')}")
    return runs


def _apply(net: Dumbbell, advice: dict[str, Any]) -> list[str]:
    """Apply `tune`'s kept advice to the dumbbell's hosts; the iperf3 client's extra arguments."""
    args: list[str] = []
    hosts = [net.sender_ns[0], net.receiver_ns]
    for key, value in advice["sysctl"].items():
        if key == "net.ipv4.tcp_congestion_control":
            args += ["-C", value]
        elif key == "net.core.default_qdisc":
            continue  # with the tc command below
        elif key == "net.ipv4.tcp_adv_win_scale" and not _exists(net, key):
            continue  # gone in 6.6+ (the advice says: kernels <= 6.5 only)
        else:
            for ns in hosts:
                run_cmd(["ip", "netns", "exec", ns, "sysctl", "-q", "-w", f"{key}={value}"])
    for cmd in advice["commands"]:
        if m := re.search(r"root fq maxrate (\S+)", cmd):
            args += ["--fq-rate", _iperf_rate(m.group(1))]
        elif "root fq" in cmd:
            raise AssertionError(f"tune advises plain fq ({cmd!r}) and this kernel has no sch_fq to apply it")
        elif m := re.search(r"initcwnd (\d+) initrwnd (\d+)", cmd):
            # Each host's route to the other (the dumbbell's hosts have no default route).
            for ns in hosts:
                route = next(line for line in net.routes(ns).splitlines() if " via " in line)
                run_cmd(["ip", "-n", ns, "route", "change", *route.split(), "initcwnd", m.group(1), "initrwnd", m.group(2)])
                assert f"initcwnd {m.group(1)}" in net.routes(ns), net.routes(ns)
        elif not cmd.startswith(("#", "modprobe")):
            raise AssertionError(f"tune's command {cmd!r} has no equivalent in this test")
    return args


def _exists(net: Dumbbell, key: str) -> bool:
    return run_cmd(["ip", "netns", "exec", net.sender_ns[0], "sysctl", "-n", key], check=False) != ""


def _iperf_rate(tc_rate: str) -> str:
    """tc's "45mbit" as iperf3's "45M" (bits per second)."""
    m = re.fullmatch(r"([\d.]+)([kmg]?)bit", tc_rate)
    assert m, tc_rate
    return f"{m.group(1)}{m.group(2).upper()}"


def _bps(run: dict) -> float:
    return run["end"]["sum_received"]["bits_per_second"]


def _host_now(name: str, before: list[dict], carried_bps: float) -> dict[str, Any]:
    """tune's description of the path and of the host as it is, from what a user has: the set-up
    (the tbf, the sysctls), the path's RTT (over a delay line, measured before the runs; over the
    bare veths, the least RTT the sender saw in the untuned runs' JSON), the JSON's CCA and
    kernel, and what the path carries with the buffers out of the way (`carried_bps`): the
    path's rate is the slower of the tbf and that, as `--rate`'s help asks."""
    setup = SETUPS[name]
    bottleneck, rate = setup.bottleneck, setup.rate
    with setup.dumbbell() as net:
        sysctls = net.buffer_sysctls()
        # The small tcp_wmem's runs see a larger min_rtt than the path's (4.7-4.85 ms against
        # 4.15-4.2): its bursts wait for the tbf's tokens.
        probed = path_rtt_us(net) if setup.one_way_us else None
    rtt_us = probed or statistics.median(s["sender"]["min_rtt"] for r in before for s in r["end"]["streams"])
    rate_bps = tc_rate_bps(rate) if carried_bps >= FULL_PATH * tc_rate_bps(rate) else carried_bps
    kernel = before[0]["start"]["system_info"].split()[2]
    available = run_cmd(["cat", "/proc/sys/net/ipv4/tcp_available_congestion_control"]).split()
    return dict(rate=f"{rate_bps / 1e6:.6g}Mbps", host_rate=f"{HOST_FACTOR * tc_rate_bps(rate) / 1e6:g}Mbps",
                rtt=f"{rtt_us}us", buffer=f"{bottleneck.limit_bytes}B", tbf=True,
                tcp_rmem=" ".join(map(str, sysctls["tcp_rmem"])), tcp_wmem=" ".join(map(str, sysctls["tcp_wmem"])),
                rmem_max=str(sysctls["rmem_max"][0]), cca=before[0]["end"]["sender_tcp_congestion"], kernel=kernel,
                ccas=[c for c in CCAS if c in available])


#: Where the measured gain is known to miss the prediction (docs/advice.md, "On real Linux"):
#: none. Over the bare veths (~30 µs RTT) the window set-ups missed, their hosts' pace moving
#: the real runs by more than the tolerance between sittings; over the 4 ms path each set-up's
#: gain was within 15 % in every sitting (the loss set-up's in each of fourteen, the window
#: set-ups' in each of the eight docs/advice.md lists, load 16-31).
BEFORE_TWIN_MISSES: set[str] = set()


@pytest.mark.parametrize("name", ["loss", "rmem", "wmem"])
def test_tunes_advice_improves_the_real_transfer_as_predicted(name):
    before = _measure(name)
    # What the path carries with both sockets' buffers set by the application, past the sysctls
    # (SO_SNDBUF/SO_RCVBUF, up to the namespaces' 4 MiB wmem_max/rmem_max), and the CCA tune
    # advises for the tbf's rate (bbr carries a fifth less than cubic here; on the shallow
    # buffer it is its loss, not the hosts, that holds bbr to 42 of 50 Mbit/s): on these 2 shared
    # cores the namespaces forward 0.85-4.3 Gbit/s of one stream, below the 10 Gbit/s tbf.
    cca = tune(**_host_now(name, before, float("inf")))["sysctl"]["net.ipv4.tcp_congestion_control"]
    carried = statistics.median(map(_bps, _measure(name, args=("-w", "2M", "-C", cca))))
    flags = _host_now(name, before, carried)
    advice = tune(**flags)
    after = _measure(name, advice)
    # The twin measured as the real runs are (iperf3 -t: what arrived in the run's seconds), not
    # over tune's transfer to its last byte, whose end a tail loss waiting for the RTO can
    # stretch (the loss set-up's bbr twin at rtt 277 us: 36.5 Mbit/s over the transfer, 43.0
    # over 2 s; at 250 or 300 us, 43.3-43.4 both ways).
    # The sender sends for its seconds, the receiver counts over its own (later when the
    # client's end-of-test message is late: explain_iperf3 does the same).
    seconds = statistics.median(r["end"]["sum_received"]["seconds"] for r in before + after)
    sending = min(seconds, statistics.median(r["end"]["sum_sent"]["seconds"] for r in before + after))
    timed = replay_timed(advice, sending, seconds)
    twin_before, twin_after = (timed[k]["throughput_bps"] for k in ("before", "after"))
    real_before, real_after = (statistics.median(map(_bps, runs)) for runs in (before, after))
    real, twin = real_after / real_before, twin_after / twin_before
    transfer = advice["after"]["no bursts"]["throughput_bps"] / advice["before"]["no bursts"]["throughput_bps"]
    figures = (f"{name}: tune {' '.join(f'{k}={v}' for k, v in flags.items())}; applied {advice['sysctl']} "
               f"{advice['commands']}; real before {[round(_bps(r) / 1e6, 1) for r in before]} Mbit/s, after "
               f"{[round(_bps(r) / 1e6, 1) for r in after]} Mbit/s: x{real:.2f} (carried with -w 2M: "
               f"{carried / 1e6:.0f} Mbit/s); twin over {seconds:.2f} s {twin_before / 1e6:.1f} -> "
               f"{twin_after / 1e6:.1f} Mbit/s: x{twin:.2f} (over tune's transfer x{transfer:.2f}); "
               f"load average {os.getloadavg()[0]:.1f}")
    print(figures)
    assert real > 1.0, f"the advice did not improve the transfer: {figures}"
    # The tuned host carries at least what tune said it would (the hosts' capacity is measured
    # before the advice is applied; on a loaded machine it drifts up as well as down).
    assert real_after >= (1 - GAIN_TOLERANCE) * twin_after, figures
    if abs(real / twin - 1) > GAIN_TOLERANCE:
        if name in BEFORE_TWIN_MISSES:
            pytest.xfail(f"the gain misses by the untuned twin ({twin_before / real_before - 1:+.0%} from the "
                         f"real run): {figures}")
        pytest.fail(f"measured gain x{real:.2f} is not within {GAIN_TOLERANCE:.0%} of the predicted x{twin:.2f}: "
                    f"{figures}")
