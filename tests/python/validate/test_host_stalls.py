"""The hosts' stalls of the bottleneck, read from a tbf's enqueue and dequeue tracepoints."""

import subprocess

import pytest

from burstlab.validate.compare import pauses_toml
from burstlab.validate.host_stalls import (TRACEFS, TbfTrace, mount_tracefs, stale_instances,
                                            tbf_stalls, watchdog_lateness_us, watchdog_symbol,
                                            within)


def _line(t: float, kind: str, packets: int = 1) -> str:
    tail = f" txq_state=0x0 packets={packets} skbaddr=00000000deadbeef" if kind == "dequeue" else \
        " skbaddr=00000000deadbeef"
    return (f"          python-4242    [001] b.s1.  {t:.6f}: qdisc_{kind}: {kind} ifindex=2 qdisc "
            f"handle=0x1A20000 parent=0xFFFFFFFF{tail}")


def _trace(events: list[tuple[float, str]]) -> str:
    head = "# tracer: nop\n#\n"
    return head + "\n".join(_line(100.0 + t, k) for t, k in events) + "\n"


def test_a_stall_is_an_empty_tbf_with_nothing_offered_from_a_dequeue_to_the_next_enqueue():
    ev = [(0.0, "enqueue"), (0.00001, "dequeue")]
    # Steady traffic: each skb offered 12 µs after the last left.
    t = 0.00001
    while t < 0.030:
        ev += [(t + 0.000012, "enqueue"), (t + 0.000013, "dequeue")]
        t += 0.000013
    ev += [(0.0315, "enqueue"), (0.0315, "dequeue")]    # 1.5 ms with nothing offered: a stall
    ev += [(0.0316, "enqueue"), (0.0317, "enqueue"), (0.0329, "dequeue")]  # queued: not one
    ev += [(0.03305, "enqueue"), (0.03305, "dequeue")]  # 150 µs: the flow's own rhythm
    ev += [(0.06305, "enqueue"), (0.06305, "dequeue")]  # 30 ms: TCP's (a timeout), not the host's
    stalls = tbf_stalls(_trace(ev))
    assert len(stalls) == 1
    start, length = stalls[0]
    assert abs(start - 0.030) < 2e-5 and abs(length - 0.0015) < 2e-5, stalls


def test_stalls_in_the_first_round_trips_and_empty_dequeues_do_not_count():
    ev = [(0.0, "enqueue"), (0.00001, "dequeue"), (0.003, "enqueue"), (0.003, "dequeue")]
    assert tbf_stalls(_trace(ev)) == []           # within the first 10 ms: the handshake's
    text = _trace([(0.0, "enqueue"), (0.011, "dequeue"), (0.013, "enqueue"), (0.013, "dequeue")])
    text += _line(100.0115, "dequeue", packets=0) + "\n"   # found nothing: not a departure
    assert [round(x * 1e3, 3) for x in tbf_stalls(text)[0]] == [11.0, 2.0]


def test_pauses_stay_apart_after_rounding_to_ns():
    text = pauses_toml([(0.0100000004, 0.0015000004), (0.0115000001, 0.0002), (0.02, 0.0)])
    assert text == 'bottleneck_pauses = [["10000000ns", "1500000ns"], ["11500000ns", "200000ns"]]\n'


def test_without_tracefs_there_are_no_stalls_and_the_reason_is_kept(tmp_path):
    with TbfTrace("burstlab-test", 0x1A20000, root=tmp_path) as tr:
        pass
    assert tr.stalls() is None and "tracefs" in tr.why


def test_stale_instances_are_ours_whose_run_is_gone(tmp_path):
    for name in ("burstlab-101x0", "burstlab-202x3", "burstlab-notarun", "someone-101x0"):
        (tmp_path / "instances" / name).mkdir(parents=True)
    stale = stale_instances(lambda pid: pid == 202, root=tmp_path)
    assert [d.name for d in stale] == ["burstlab-101x0"]
    assert stale_instances(lambda pid: True, root=tmp_path / "nowhere") == []


def test_stalls_count_from_the_flows_own_connect() -> None:
    # A refused SYN at 0 and another at 10.2 ms (the tool retries every 10 ms until the receiver
    # listens), the flow's SYN at 20.5 ms, then a 2 ms stall 15 ms into the flow.
    ev = [(0.0, "enqueue"), (0.0, "dequeue"), (0.0102, "enqueue"), (0.0102, "dequeue"),
          (0.0205, "enqueue"), (0.0205, "dequeue"), (0.0355, "enqueue"), (0.0355, "dequeue"),
          (0.0375, "enqueue"), (0.0375, "dequeue")]
    # From the first enqueue, the gap after the second refused SYN reads as a 10.3 ms stall.
    assert [round(x * 1e3, 1) for x in tbf_stalls(_trace(ev))[0]] == [10.2, 10.3]
    # From the flow's connect (the trace's clock, 100 s + 20.5 ms): only the flow's stall.
    assert [[round(x * 1e3, 1) for x in st] for st in tbf_stalls(_trace(ev), 100.0205)] == [[15.0, 2.0]]


def test_only_the_stalls_before_the_last_byte_are_the_flows() -> None:
    # A stall across the end is cut there; one after it (the close) is dropped.
    stalls = [(0.020, 0.002), (0.449, 0.003), (0.455, 0.010)]
    assert within(stalls, 0.450) == [(0.020, 0.002), (0.449, pytest.approx(0.001))]
    assert within(stalls, 1.0) == stalls
    assert within([], 0.45) == []


@pytest.mark.netns
def test_a_missing_tracefs_is_mounted_for_the_trace():
    """A fresh CI sandbox may start without tracefs: the trace mounts it rather than run the
    twin without the hosts' stalls."""
    if (TRACEFS / "instances").is_dir():
        gone = subprocess.run(["umount", str(TRACEFS)], capture_output=True, text=True)
        if gone.returncode != 0:
            pytest.skip(f"tracefs is in use, cannot unmount it to test: {gone.stderr.strip()}")
    assert not (TRACEFS / "instances").is_dir()
    with TbfTrace("burstlab-mounttest", 0x1A20000) as tr:
        assert tr.dir.is_dir(), tr.why
    assert tr.why == "" and tr.stalls() == []
    assert not tr.dir.exists() and mount_tracefs() == ""


def _timer(t: float, event: str, ns: int) -> str:
    field = f"expires={ns} softexpires={ns} mode=ABS|PINNED was_armed=0" if event == "hrtimer_start" \
        else f"now={ns}"
    return (f"          <idle>-0       [001] d.h1.  {t:.6f}: {event}: hrtimer=00000000c0ffee00 "
            f"function=qdisc_watchdog {field}")


def test_the_watchdogs_lateness_is_its_interrupts_plus_the_wait_for_the_dequeue():
    # Armed for 100.000100 s. Its interrupt ran 9 µs late, the dequeue that sent came 6 µs after
    # it: 15 µs. The next firing's dequeue found nothing yet (packets=0), then sent 4 µs after
    # its interrupt (5 µs late): 9 µs. The third is left out: a packet arrived before the tbf
    # sent, and its own qdisc_run() may have been the one that did.
    lines = ["# tracer: nop",
             _timer(100.000050, "hrtimer_start", 100_000_100_000),
             _timer(100.000109, "hrtimer_expire_entry", 100_000_109_000),
             _line(100.000115, "dequeue"),
             _timer(100.000116, "hrtimer_start", 100_000_200_000),
             _timer(100.000205, "hrtimer_expire_entry", 100_000_205_000),
             _line(100.000207, "dequeue", packets=0),
             _line(100.000209, "dequeue"),
             _timer(100.000210, "hrtimer_start", 100_000_300_000),
             _timer(100.000320, "hrtimer_expire_entry", 100_000_320_000),
             _line(100.000321, "enqueue"),
             _line(100.000322, "dequeue"),
             # An interrupt that reads before its own expiry: another watchdog's, left out.
             _timer(100.000330, "hrtimer_start", 100_000_400_000),
             _timer(100.000385, "hrtimer_expire_entry", 100_000_385_000),
             _line(100.000390, "dequeue")]
    late = watchdog_lateness_us("\n".join(lines))
    assert [round(x, 3) for x in late] == [15.0, 9.0]


def test_the_watchdogs_address_comes_from_kallsyms_and_a_hidden_one_is_none(tmp_path):
    syms = tmp_path / "kallsyms"
    syms.write_text("ffffffff81000000 T _stext\nffffffff81edc850 t qdisc_watchdog\n")
    assert watchdog_symbol(syms) == 0xffffffff81edc850
    syms.write_text("0000000000000000 t qdisc_watchdog\n")   # kptr_restrict, not root
    assert watchdog_symbol(syms) is None
    assert watchdog_symbol(tmp_path / "missing") is None
