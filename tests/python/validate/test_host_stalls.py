"""The hosts' stalls of the bottleneck, read from a tbf's enqueue and dequeue tracepoints."""

from burstlab.validate.compare import pauses_toml
from burstlab.validate.host_stalls import TbfTrace, stale_instances, tbf_stalls


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
