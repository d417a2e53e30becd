"""The differential comparison: the simulated twins alone (no root needed), and one quick run
against the real kernel (netns)."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from burstlab.cli.validate import newest_record
from burstlab.validate import compare
from burstlab.validate.compare import (
    CONTROL_RATE, CONTROL_SIZE, TOLERANCE, _case, _onset, buffers_toml, latency_toml, onset_steps,
    MIN_READ_WAIT_US, READ_WAIT_US, sim_incast, sim_single_flow, single_setup, twin_read_wait_us, twin_single,
)
from burstlab.validate.real import reader_wait_summary, reader_waits_us

#: The test machine's socket-buffer sysctls (`Dumbbell.buffer_sysctls`).
KERNEL_BUFFERS = {"tcp_rmem": [4096, 131072, 33554432], "rmem_max": [4194304], "tcp_wmem": [4096, 16384, 4194304]}


def test_tolerance_is_the_issues_or_the_real_runs_spread_whichever_is_wider():
    steady = {"median": 100.0, "min": 100.0, "max": 100.0}
    assert _case("c", "retrans_segs", steady, 129.0).passed
    assert not _case("c", "retrans_segs", steady, 131.0).passed
    assert _case("c", "retrans_segs", steady, 131.0).tolerance == 0.30
    # Real repeats from 80 to 200: anything in [80 x 0.7, 200 x 1.3] looks like one more run.
    noisy = {"median": 100.0, "min": 80.0, "max": 200.0}
    above = _case("c", "retrans_segs", noisy, 259.0)
    assert above.passed and abs(above.tolerance - 1.6) < 1e-9 and abs(above.rel_error - 1.59) < 1e-9
    assert not _case("c", "retrans_segs", noisy, 261.0).passed
    assert _case("c", "retrans_segs", noisy, 57.0).passed
    assert not _case("c", "retrans_segs", noisy, 55.0).passed


def test_onsets_agree_within_one_step_and_only_if_both_sides_collapse():
    full, quick = [1, 2, 4, 8, 16, 32], [1, 8, 32]
    assert onset_steps(16, 16, full) == (0, True)
    assert onset_steps(16, 32, full) == (1, True)
    assert onset_steps(8, 32, full) == (2, False)
    assert onset_steps(None, None, full) == (0, True)
    # A twin that never collapses is one step past a kernel collapsing at 32, and still wrong.
    assert onset_steps(32, None, quick) == (1, False)
    assert onset_steps(None, 32, quick) == (1, False)
    assert onset_steps(16, None, full) == (2, False)


def test_latency_toml_is_a_time_or_a_list_of_times():
    assert latency_toml(90) == '"90.0us"'
    assert latency_toml([12.34, -1.0]) == '["12.3us", "0.0us"]'


def test_sim_incast_twin_takes_measured_handshakes_serve_steps_and_reads():
    # The receiving host's latency, as the handshakes measured it, holds every segment it hands
    # to TCP, not the SYN alone: the data's RTT samples grow with it. Given to the SYN alone it
    # set a min RTT no later packet came back under the path's, so every loss probe's SACK was
    # ambiguous (tcp_rack_advance) and the twin collapsed for it. The counts are per real run.
    common = dict(queries=20, serve_time_us=[60.0, 90.0, 300.0], read_wait_us=[20.0, 60.0, 200.0])
    # Ten segments a sender, so no queue hides the hosts' part of the RTT (with a 1 MB query the
    # tbf's queue, ~0.7 ms, makes the difference a coin flip of the run).
    small = dict(total_bytes=8 * 10 * 1448, **common)
    slow = sim_incast(8, handshake_rtt_us=[150.0], **small)
    fast = sim_incast(8, handshake_rtt_us=[10.0], **small)
    assert slow["srtt_at_response_us"] > fast["srtt_at_response_us"] + 100
    slow = sim_incast(32, handshake_rtt_us=[150.0], **common)
    fast = sim_incast(32, handshake_rtt_us=[10.0], **common)
    assert slow["frac_over_100ms"] <= fast["frac_over_100ms"]
    twice = sim_incast(32, handshake_rtt_us=[150.0], repeat=2, **common)
    assert twice["qdisc_drops"] == pytest.approx(slow["qdisc_drops"], rel=0.5), "per run, not summed"


def test_an_incast_twin_runs_its_tbf_as_late_as_the_real_one_was_measured(monkeypatch):
    # The real tbf ran 8-25 µs after its watchdog was due (p5-p95 of a run at N = 8); the
    # twin's draws one of those each time it waits for tokens.
    late = [8.1, 12.0, 13.4, 14.6, 15.5, 16.9, 18.4, 19.9, 21.6, 24.6]
    common = dict(queries=20, serve_time_us=[60.0, 90.0, 300.0], read_wait_us=[20.0, 60.0, 200.0])
    scenarios = []
    real_run = compare.burstlab.run
    monkeypatch.setattr(compare.burstlab, "run", lambda text: scenarios.append(text) or real_run(text))
    on_time = sim_incast(8, **common)
    clumped = sim_incast(8, tbf_watchdog_us=late, **common)
    assert "tbf_watchdog_latency" not in scenarios[0]
    assert 'tbf_watchdog_latency = ["8.1us", "12.0us", ' in scenarios[1]
    assert clumped != on_time
    assert clumped == sim_incast(8, tbf_watchdog_us=late, **common), "same inputs, same twin"


def test_an_n1_twin_given_the_readers_share_keeps_the_kernels_pace_and_one_given_the_whole_wait_does_not():
    """At N = 1 the kernel's aggregator, sharing a CPU with the path that sends each flight,
    reads a median 7-26 µs after the flight's last frame and finds the oldest byte 0.6-0.9 ms
    old, yet its queries take 8.4-8.6 ms, the tbf's pace (ftrace and tcpdump;
    history/validation-notes.md, "The twin's reader at N = 1"). A twin given the whole wait
    comes a flight late (12.8 ms against 8.5 in CI)."""
    flight = 1 + 69 * 1448
    held = [[850.0, flight]] * 40 + [[40.0, 1449]] * 10   # 850 µs: 836 of them the flight's arrival
    run = {"wait_samples": len(held), **reader_wait_summary(reader_waits_us(held, 1e9))}
    given = twin_read_wait_us(run)
    assert 10 < given < 40
    line_rate_s = 1_000_000 * 1514 / 1448 * 8 / 1e9
    paced = sim_incast(1, queries=30, read_wait_us=given)["qct_median_s"]
    late = sim_incast(1, queries=30, read_wait_us=statistics.fmean(w for w, _ in held))["qct_median_s"]
    assert paced < 1.05 * line_rate_s < 1.15 * line_rate_s < late, (paced, late)
    # A run that sampled no waits gets the default; one whose waits were all the bottleneck's
    # still reads after the data, never inside the softirq that queued it.
    assert twin_read_wait_us({"wait_samples": 0}) == READ_WAIT_US
    assert twin_read_wait_us({"wait_samples": 5, "reader_wait_us": 0.0}) == MIN_READ_WAIT_US


def test_sim_single_flow_twin_runs_near_the_shaped_rate():
    m = sim_single_flow("cubic", size_bytes=5_000_000)
    # tbf meters frames: goodput x 1514/1448 is the 1 Gbit/s rate
    # (the full tbf bucket at the start gives it a 15 KB head start, so a hair above 1 is fine)
    assert 0.85 < m["rate_fraction"] <= 1.01
    assert m["fct_s"] > 5_000_000 * 8 / 1e9
    # The tbf counts dropped skbs as tc does: at least one per loss episode, never more than
    # the segments lost (every one is retransmitted).
    assert 0 < m["qdisc_drops"] <= m["retrans_segs"]


def test_a_jumbo_twin_has_the_links_mtu_and_a_bucket_of_ten_jumbo_frames():
    text = compare._twin_topology(128 * 1024, mtu=9000)
    assert "mtu = 9000" in text
    assert f'tbf_burst = "{10 * 9014}B"' in text
    # A full segment carries 8948 bytes in a 9014-byte frame: goodput x 9014/8948 is the rate,
    # at most the tbf's, plus the ten frames a full bucket lets through at once.
    m = sim_single_flow("reno", size_bytes=5_000_000, mtu=9000, buffers=KERNEL_BUFFERS)
    assert 0.9 < m["rate_fraction"] <= 1 + 10 * 9014 / 5_000_000
    assert m["fct_s"] > (5_000_000 - 10 * 8948) * 8 / 1e9
    setup = single_setup("bbr", 128 * 1024, "1gbit", 50_000_000, mtu=9000)
    assert compare.single_name(setup) == "single-bbr-1gbit-128KB-mtu9000"
    # Records made before the jumbo control have no MTU: theirs was 1500, and their names stay.
    del setup["mtu"]
    assert compare.single_name(setup) == "single-bbr-1gbit-128KB"


def test_twin_takes_the_hosts_socket_buffers():
    assert buffers_toml(KERNEL_BUFFERS) == ('tcp_rmem = "4096 131072 33554432"\ntcp_wmem = "4096 16384 4194304"\n'
                                            'rmem_max = 4194304\n')
    assert buffers_toml(None) == ""
    # They reach the flow: a receive buffer capped at 64 KiB offers a window the link drains
    # long before the reader comes back (430 µs by default), so the twin runs far below the rate
    # it reaches with the kernel's buffers.
    small = dict(KERNEL_BUFFERS, tcp_rmem=[4096, 16384, 65536], rmem_max=[65536])
    free = sim_single_flow("cubic", size_bytes=3_000_000, buffers=KERNEL_BUFFERS)
    capped = sim_single_flow("cubic", size_bytes=3_000_000, buffers=small)
    assert free["rate_fraction"] > 0.85
    assert capped["rate_fraction"] < 0.7 * free["rate_fraction"]


def test_a_twin_takes_the_receivers_ratio_and_its_kernels_buffer_tuning(monkeypatch):
    assert [compare.rcvbuf_tuning(k) for k in ("6.18.44-fc-v595", "6.19.0", "7.1.2", "6.12.9", "6.6.0", "", None)] == \
        ["6.18", "6.18", "6.18", None, None, None, None]
    assert compare.receive_toml(229, "6.18.44") == 'skb_scaling_ratio = 229\nrcvbuf_tuning = "6.18"\n'
    assert compare.receive_toml(None, "6.12.1") == ""
    texts: list[str] = []
    run = compare.burstlab.run
    monkeypatch.setattr(compare.burstlab, "run", lambda text: (texts.append(text), run(text))[1])
    sim_single_flow("cubic", size_bytes=2_000_000, read_gap_us=300, scaling_ratio=229, kernel="6.18.44")
    assert 'skb_scaling_ratio = 229\nrcvbuf_tuning = "6.18"' in texts[-1]
    sim_incast(2, queries=2, scaling_ratio=229, kernel="6.18.44")
    assert 'skb_scaling_ratio = 229\nrcvbuf_tuning = "6.18"' in texts[-1]


def test_a_case_twin_gives_each_run_its_ratio_and_older_records_the_traced_one(monkeypatch):
    seen: list[tuple[int | None, str | None, float | None]] = []

    def twin(cca, *, scaling_ratio=None, kernel=None, first_read_us=None, **kw):
        seen.append((scaling_ratio, kernel, first_read_us))
        return {"rate_fraction": 1.0}

    monkeypatch.setattr(compare, "sim_single_flow", twin)
    host = {"read_gap_us": [300, 300], "read_wait_us": [30, 30], "host_stalls_s": [[]] * 2,
            "buffers": KERNEL_BUFFERS, "scaling_ratio": [229, 230], "kernel": "6.18.44",
            "first_read_us": [900.0, 2700.0]}
    for mtu in (1500, 9000):
        seen.clear()
        compare.twin_single(single_setup("cubic", 64 * 1024, "1gbit", 50_000_000, mtu=mtu), host)
        assert sorted(set(seen)) == [(229, "6.18.44", 900.0), (230, "6.18.44", 2700.0)]
        seen.clear()
        older = {k: v for k, v in host.items() if k not in ("scaling_ratio", "kernel", "first_read_us")}
        compare.twin_single(single_setup("cubic", 64 * 1024, "1gbit", 50_000_000, mtu=mtu), older)
        assert set(seen) == {(compare.TRACED_SCALING_RATIO[mtu], None, compare.TYPICAL_FIRST_READ_US)}


def test_a_twin_whose_reader_starts_late_reads_first_when_the_real_one_did(monkeypatch):
    """A receiving application that starts reading late holds the sender to its first window
    for as long: the twin's first read comes `first_read_us` after its first data, the others
    their read latency after."""
    texts: list[str] = []
    run = compare.burstlab.run
    monkeypatch.setattr(compare.burstlab, "run", lambda text: (texts.append(text), run(text))[1])
    late = sim_single_flow("cubic", size_bytes=2_000_000, read_gap_us=300, first_read_us=3000.0)
    assert 'first_read_latency = "3000.0us"' in texts[-1]
    prompt = sim_single_flow("cubic", size_bytes=2_000_000, read_gap_us=300)
    assert "first_read_latency" not in texts[-1]
    assert late["fct_s"] > prompt["fct_s"] + 2e-3, (late["fct_s"], prompt["fct_s"])
    sim_single_flow("cubic", size_bytes=2_000_000, read_gap_us=0, first_read_us=3000.0)
    assert "first_read_latency" not in texts[-1], "a reader that keeps up has no latency to replace"


def test_a_case_twin_does_not_hinge_on_a_microsecond_of_read_latency():
    """BBR through 16 KB at 100 Mbit/s is chaotic in the reader's latency: given the real
    reader's gaps (470-490 µs) a lone twin fell into an RTO (-15 % of the rate) at gaps a few µs
    from ones where it did not (spread 16 %, 0.647-0.771 at 6932a2f), and CI's live control failed
    on it. A case's twin, an ensemble around each real run's latency, gives the same rate
    wherever a sitting's latencies fall: three runs 5 µs apart, centred at each µs of the waits
    a control's twin is given now (20-40 µs, `hosts_keep_up`)."""
    setup = single_setup("bbr", 16 * 1024, CONTROL_RATE, CONTROL_SIZE)
    rates = [twin_single(setup, {"read_gap_us": [480] * 3, "read_wait_us": [c - 5, c, c + 5],
                                 "host_stalls_s": [[]] * 3, "buffers": KERNEL_BUFFERS})["rate_fraction"]
             for c in range(20, 41)]
    assert (max(rates) - min(rates)) / max(rates) < TOLERANCE["rate_fraction"], rates


def test_a_case_twin_moves_only_a_measured_read_latency(monkeypatch):
    """Each real run weighs the same in a case's twin; a run whose reader kept up (latency 0)
    does not get a slow reader of a few µs from the ensemble. A control's twin reads the real
    reader's waits for arrived data, a 1 Gbit/s twin at 1500 bytes its gaps between reads."""
    latencies: list[int] = []

    def twin(cca, *, read_gap_us, **kw):
        latencies.append(read_gap_us)
        return {"rate_fraction": 1.0 if read_gap_us == 0 else 0.5}

    monkeypatch.setattr(compare, "sim_single_flow", twin)
    host = {"read_gap_us": [0, 300, 0], "read_wait_us": [0, 30, 0], "host_stalls_s": [[]] * 3,
            "buffers": KERNEL_BUFFERS}
    for setup, used in ((single_setup("cubic", 128 * 1024, "1gbit", 50_000_000), 300),
                        (single_setup("cubic", 16 * 1024, CONTROL_RATE, CONTROL_SIZE), 30),
                        (single_setup("cubic", 128 * 1024, "1gbit", 50_000_000, mtu=9000), 30)):
        latencies.clear()
        assert compare.twin_single(setup, host)["rate_fraction"] == 1.0
        assert sorted(set(latencies)) == [0] + [used + s for s in compare.GAP_ENSEMBLE_US]


def test_a_case_twin_gives_each_runs_holds_to_its_own_twins(monkeypatch):
    """The reader's holds of the socket are measured per real run and go to that run's twins;
    a run whose reader kept up has no reader to hold, and an older record has no holds."""
    seen: list[tuple[int, list | None]] = []

    def twin(cca, *, read_gap_us, read_hold_us=None, **kw):
        seen.append((read_gap_us, read_hold_us))
        return {"rate_fraction": 1.0}

    monkeypatch.setattr(compare, "sim_single_flow", twin)
    setup = single_setup("cubic", 64 * 1024, "1gbit", 50_000_000)
    host = {"read_gap_us": [0, 300], "read_wait_us": [0, 30], "read_hold_us": [[5.0], [40.0, 600.0]],
            "host_stalls_s": [[]] * 2, "buffers": KERNEL_BUFFERS}
    compare.twin_single(setup, host)
    assert [h for g, h in seen if g == 0] == [None] and len(seen) == 1 + len(compare.GAP_ENSEMBLE_US)
    assert all(h == [40.0, 600.0] for g, h in seen if g > 0)
    seen.clear()
    compare.twin_single(setup, {k: v for k, v in host.items() if k != "read_hold_us"})
    assert all(h is None for _, h in seen)


def test_the_single_twin_holds_the_socket_only_behind_a_waiting_reader(monkeypatch):
    texts: list[str] = []
    run = compare.burstlab.run
    monkeypatch.setattr(compare.burstlab, "run", lambda text: (texts.append(text), run(text))[1])
    held = sim_single_flow("cubic", size_bytes=2_000_000, read_gap_us=300, read_hold_us=[20.0, 600.0])
    assert 'read_hold = ["20.0us", "600.0us"]' in texts[-1]
    free = sim_single_flow("cubic", size_bytes=2_000_000, read_gap_us=300)
    assert "read_hold" not in texts[-1]
    assert held["acks"] < free["acks"], (held["acks"], free["acks"])
    sim_single_flow("cubic", size_bytes=2_000_000, read_gap_us=0, read_hold_us=[20.0])
    assert "read_hold" not in texts[-1]


def test_gap_sweep_script_marks_every_gap_and_judges_sittings_both_ways():
    """`scripts/twin_gap_sweep.py`, behind history/validation-notes.md's "A chaotic twin" figures."""
    script = Path(__file__).parents[3] / "scripts" / "twin_gap_sweep.py"
    out = subprocess.run([sys.executable, str(script), "--floor", "0.711", "--gaps", "470:500", "--spreads", "3",
                          "--sittings", "5"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    strip = lines[1]
    assert len(strip) == 30 and set(strip) <= set(".xT"), strip
    assert lines[2].startswith(f"RTO at {strip.count('T')} of 30 gaps")
    row = lines[-1].split()
    assert row[0] == "3" and row[1].endswith("%") and row[2].endswith("%"), lines[-1]


def test_the_twins_bucket_is_the_burst_tc_was_given_to_the_byte():
    # tc sends the burst as TCA_TBF_BURST and tbf_change() keeps it as max_size (not the 1892
    # ticks of 64 ns, 15,136 B, that TCA_TBF_PARMS carries): ten 1514-byte frames fit, so a
    # 10-segment skb reaches the bucket whole instead of cut by tbf_segment().
    assert 'tbf_burst = "15140B"' in compare._twin_topology(128 * 1024)
    assert 'tbf_burst = "15140B"' in compare._twin_topology(64 * 1024, rate_bps=100_000_000)


def test_sim_incast_one_sender_takes_the_transfer_time():
    m = sim_incast(1, queries=5)
    # 1 MB through 1 Gbit/s of frames: 1e6 * 1514/1448 * 8 / 1e9 = 8.36 ms (+ the request).
    assert 0.0083 < m["qct_median_s"] < 0.0090
    assert m["frac_over_100ms"] == 0


@pytest.mark.netns
def test_validate_quick_json_has_the_documented_cases(tmp_path):
    detail = tmp_path / "detail.json"
    out = subprocess.run(
        # Ten real runs per case: the band a case's real runs span is the tolerance where it is
        # wider than the issue's, and on this shared machine one sitting's five runs of a single
        # flow spread 3-10x in retransmits (docs/validation.md); ten hold the band steadier. The
        # three steady controls run five (compare.STEADY_QUICK).
        [sys.executable, "-m", "burstlab", "validate", "--quick", "--repeat", "10", "--json",
         "--detail", str(detail)],
        capture_output=True, text=True, timeout=900,
    )
    assert out.returncode in (0, 1), out.stderr
    cases = json.loads(out.stdout)["cases"]
    keys = {"name", "metric", "real", "sim", "rel_error", "tolerance", "pass"}
    assert all(set(c) == keys for c in cases)
    det = json.loads(detail.read_text())["detail"]
    failures = held_case_failures(cases, det)
    _broken_twins_fail_on_the_same_real_runs(det)
    assert not failures, "\n".join(failures)


def held_case_failures(cases: list[dict], det: dict) -> list[str]:
    """What CI holds of a quick run's verdicts (`cases`) and record (`det`), one message per
    case that fails or was left out."""
    by = {(c["name"], c["metric"]): c for c in cases}
    failures: list[str] = []

    def check(name: str, metric: str) -> None:
        case = by.get((name, metric))
        if case is None:
            failures.append(_missing_case(det, name, metric))
        elif not case["pass"]:
            # The onset is over the cells and has no entry of its own in --detail.
            failures.append(f"{case}\n    host: {_host_context(det[name])}" if name in det else str(case))

    # Incast as issue 4 asks: the median query time at N = 1, 8 and 32 within 15 % (or the real
    # runs' spread), and the collapse (>= 10 % of queries over 100 ms) from the same N, one step
    # either way. The twin is given the hosts' measured latencies, not fitted to these numbers.
    for n in (1, 8, 32):
        check(f"incast-{n}-128KB", "qct_median_s")
    check("incast-onset-128KB", "onset_n")
    # Their retransmits within 30 % (or the band), the issue's rule for counts above 50: every
    # cell resends hundreds to thousands (the shipped record: N = 1, 8, 32 resent 272, 2,309 and
    # 3,949 against the twin's 327, 2,269 and 3,169). Where the collapse is, its timeouts and
    # its share of stalled queries too.
    for n in (1, 8, 32):
        check(f"incast-{n}-128KB", "retrans_segs")
    for metric in ("timeouts", "frac_over_100ms"):
        check("incast-32-128KB", metric)
    # One bulk flow through the tbf: throughput and FCT within the issue's 5 % (or the real runs'
    # spread widened by it).
    for limit in (64, 128):
        for cca in ("reno", "cubic", "bbr"):
            for metric in ("rate_fraction", "fct_s"):
                check(f"single-{cca}-1gbit-{limit}KB", metric)
    # Reno's and cubic's retransmits at 1 Gbit/s through 64 KB, where the kernel's runs agree
    # with each other (the shipped record: reno 142 against the twin's 155, cubic 516 against
    # 428, each well inside its band). Its weak side: behind a slow reader the kernel's reno
    # resends less and the twin's more, so a sitting of mostly slow readers can fail it (a
    # clean-clone CI run did: 238.5 against 144, band 61 %; history/validation-notes.md, "The
    # backlog's skbs, quick ACKs, and a reader locked to the window").
    # Through 128 KB they move with the hosts and are not held: the kernel's reno agrees with
    # its own median one run in five, and its cubic's median was 102 in one sitting and 305-474
    # in every sitting of the next day, while the twins resend 100-246 (docs/fidelity.md, "What
    # CI holds"; a clean-clone CI run failed reno there: real 295, twin 104.5, the band's floor
    # 108).
    for cca in ("reno", "cubic"):
        check(f"single-{cca}-1gbit-64KB", "retrans_segs")
    # BBR's retransmits at 1 Gbit/s are not held (its rate and FCT are, above): the kernel's BBR
    # is held by a cwnd its hosts' ACK batches inflate, and through 128 KB it has resent from a
    # fifth of the twin's to as many (the shipped record: 3,745 against 3,832), in regimes
    # nothing found so far tells apart, so a CI machine in the first would fail a correct twin
    # (history/validation-notes.md, "BBR at 1 Gbit/s").
    # The control, where this host's scheduling hardly matters: reno's retransmits through 16
    # and 32 KB (the shipped record: 667 and 286 against the twin's 673 and 327); a sender that
    # trails each skb with a one-segment skb resent 244 and 116 against the kernel's 656-689 and
    # 171-303. Their rate and FCT are not held: in some runs the kernel loses a retransmission
    # and waits out an RTO (+200 ms, 0-2 per run), which the twin repairs by RACK.
    for limit in (16, 32):
        check(f"single-reno-100mbit-{limit}KB", "retrans_segs")
    # Cubic's through 16 and 32 KB, where the hosts hardly matter (the shipped record: 206 and
    # 315 against the twin's 168 and 321).
    for limit in (16, 32):
        check(f"single-cubic-100mbit-{limit}KB", "retrans_segs")
    # BBR through 16 and 32 KB, everything: there BBR's policer mode, pacing and recovery decide
    # the losses, not the host (the shipped record: 3,740 and 1,425 retransmits against the
    # twin's 3,695 and 1,267; rates 0.776 and 0.997 against 0.783 and 0.994). A twin that sent
    # two or three paced skbs at once, or let a cut skb's segments into room the tbf freed while
    # they arrived, took 9 % longer through 16 KB; one that did not count a retransmission lost
    # again as a loss lost three times as many of its retransmissions again as the kernel.
    for limit in (16, 32):
        for metric in ("rate_fraction", "fct_s", "retrans_segs"):
            check(f"single-bbr-100mbit-{limit}KB", metric)
    # The jumbo control: the three CCAs through 128 KB at 1 Gbit/s on links of 9000 bytes,
    # everything. There the hosts do a sixth of the per-packet work and the kernel's runs agree
    # with each other (the shipped record: reno 156, cubic 148, BBR 630 retransmits against the
    # twin's 176, 166 and 660), so its losses are held at the issue's rate and queue, which the
    # hosts keep from it at 1500 bytes.
    for cca in ("reno", "cubic", "bbr"):
        for metric in ("rate_fraction", "fct_s", "retrans_segs"):
            check(f"single-{cca}-1gbit-128KB-mtu9000", metric)
    return failures


def _missing_case(det: dict, name: str, metric: str) -> str:
    """A held case the comparison left out, as a failure: which, and why (`not_compared`)."""
    if name not in det:
        return f"{name} {metric}: no such case in the verdicts or in --detail (it has {sorted(det)})"
    entry = det[name]
    # Records made before the reasons were kept: the same rule, from their real side and twin.
    rule = compare.incast_not_compared if entry["setup"]["kind"] == "incast" else compare.single_not_compared
    reasons = entry.get("not_compared") or rule(entry["real"], entry["sim"])
    why = reasons.get(metric, "compared, yet absent from the verdicts")
    return f"{name} {metric}: not compared: {why}\n    host: {_host_context(det[name])}"


def _host_context(case: dict) -> str:
    """What the hosts did in a case's real runs, for a failure's message: a slow host is the
    known cause of the single flows' and incast N = 1's misses."""
    h = case["twin_host"]
    if isinstance(h, dict):
        return f"stalled {[round(ms) for ms in h['host_stall_ms']]} ms per run (~0.5 s each)"
    return (f"the twins' aggregator was given {[round(x['read_wait_us']) for x in h]} µs per run "
            "(the real one's own share of its waits)")


def _single_twins(case: dict, cca: str, limit_bytes: int) -> dict:
    """A case's twin rebuilt from `--detail`, as `compare` builds it, with another congestion
    control or queue."""
    return twin_single({**case["setup"], "cca": cca, "limit_bytes": limit_bytes}, case["twin_host"])


def _broken_twins_fail_on_the_same_real_runs(det: dict) -> None:
    """The tolerances are not so wide that anything passes: twins broken on purpose, given the
    same hosts' measurements as the real ones, fail the same real runs."""
    # The wrong congestion control: cubic resends hundreds where BBR resends thousands.
    bbr = det["single-bbr-1gbit-64KB"]
    as_cubic = _single_twins(bbr, "cubic", 64 * 1024)
    assert not _case("c", "retrans_segs", bbr["real"]["retrans_segs"], as_cubic["retrans_segs"]).passed, as_cubic
    # Reno and cubic told apart by their losses alone: each one's twin resends what the other
    # kernel does not (through 64 KB reno resends about 150 and cubic about 500).
    for cca, other in (("reno", "cubic"), ("cubic", "reno")):
        case = det[f"single-{cca}-1gbit-64KB"]
        swapped = _single_twins(case, other, 64 * 1024)
        assert not _case("c", "retrans_segs", case["real"]["retrans_segs"], swapped["retrans_segs"]).passed, \
            (cca, swapped)
    # The wrong MTU: at 1500 bytes BBR through 128 KB resends thousands of segments, at 9000
    # some hundreds.
    jumbo = det["single-bbr-1gbit-128KB-mtu9000"]
    as_1500 = twin_single({**jumbo["setup"], "mtu": 1500}, jumbo["twin_host"])
    assert not _case("c", "retrans_segs", jumbo["real"]["retrans_segs"], as_1500["retrans_segs"]).passed, as_1500
    # The wrong queue: a 16 KB tbf limit starves reno's window.
    reno = det["single-reno-1gbit-128KB"]
    shallow = _single_twins(reno, "reno", 16 * 1024)
    assert not _case("c", "rate_fraction", reno["real"]["rate_fraction"], shallow["rate_fraction"]).passed, shallow
    # No 200 ms RTO floor: the twins never collapse, while the kernel does at N = 32.
    ns = [1, 8, 32]
    real_shares, floorless = {}, {}
    for n in ns:
        case = det[f"incast-{n}-128KB"]
        real_shares[n] = case["real"]["frac_over_100ms"]["mean"]
        sims = [sim_incast(n, queries=50, rto_min=0.005, **host) for host in case["twin_host"]]
        floorless[n] = statistics.fmean(s["frac_over_100ms"] for s in sims)
    assert not onset_steps(_onset(real_shares), _onset(floorless), ns)[1], (real_shares, floorless)
    # The wrong queue for incast: half or twice the 128 KB each miss some cell's retransmits (a
    # 64 KB queue resends 1.6x at N = 8; a 256 KB one a tenth at N = 1, half at N = 32).
    for limit in (64 * 1024, 256 * 1024):
        misses = []
        for n in ns:
            case = det[f"incast-{n}-128KB"]
            sims = [sim_incast(n, queries=50, limit_bytes=limit, **host) for host in case["twin_host"]]
            resent = statistics.median(s["retrans_segs"] for s in sims)
            if not _case("c", "retrans_segs", case["real"]["retrans_segs"], resent).passed:
                misses.append(n)
        assert misses, f"a {limit // 1024} KB incast queue passed every cell's retransmits"


def test_quick_runs_only_its_steady_controls_fewer_times():
    ten = {}
    for setup in compare.single_setups(quick=True):
        ten[compare.single_name(setup)] = compare.single_repeat(setup, True, 10)
    assert {n for n, r in ten.items() if r != 10} == {"single-reno-100mbit-16KB", "single-cubic-100mbit-16KB",
                                                      "single-bbr-100mbit-32KB"}
    assert {ten[n] for n in ("single-reno-100mbit-16KB", "single-bbr-100mbit-32KB")} == {compare.STEADY_REPEAT}
    # Fewer asked, fewer run; the full matrix runs every case as often as asked.
    steady = compare.single_setup("reno", 16 * 1024, CONTROL_RATE, CONTROL_SIZE)
    assert compare.single_repeat(steady, True, 3) == 3
    assert {compare.single_repeat(s, False, 10) for s in compare.single_setups(quick=False)} == {10}


#: The newest full record shipped: every case CI holds, with its real side and twin.
SHIPPED_RECORD = newest_record()


def test_a_cell_below_a_metrics_threshold_leaves_it_out_and_says_why():
    real = {"qct_median_s": {"median": 0.2, "min": 0.2, "max": 0.3, "mean": 0.22},
            "qct_p99_s": {"median": 0.4, "min": 0.3, "max": 0.5, "mean": 0.4},
            "retrans_segs": {"median": 50, "min": 40, "max": 60, "mean": 50},
            "timeouts": {"median": 4.5, "min": 2, "max": 9, "mean": 5},
            "frac_over_100ms": {"median": 0.1, "min": 0.0, "max": 0.2, "mean": 0.098}}
    sim = {"qct_median_s": 0.21, "qct_p99_s": 0.4, "retrans_segs": 55, "timeouts": 5, "frac_over_100ms": 0.12}
    assert [c.metric for c in compare.incast_cases("incast-32", real, sim)] == ["qct_median_s", "qct_p99_s"]
    why = compare.incast_not_compared(real, sim)
    assert why == {"retrans_segs": "the real runs' median 50 is not above MIN_RETRANS = 50",
                   "timeouts": "the real runs' median 4.5 is below MIN_TIMEOUTS = 5",
                   "frac_over_100ms": "the real runs did not collapse: 0.098 of their queries took over 100 ms, "
                                      "below ONSET_SHARE = 0.1"}
    # One over each threshold brings each back, in the cell's order.
    real |= {"retrans_segs": {**real["retrans_segs"], "median": 51}, "timeouts": {**real["timeouts"], "median": 5},
             "frac_over_100ms": {**real["frac_over_100ms"], "mean": 0.1}}
    assert compare.incast_not_compared(real, sim) == {}
    assert [c.metric for c in compare.incast_cases("incast-32", real, sim)] == list(compare.INCAST_METRICS)
    # A single flow's twin without a timeout count leaves them out, however many the kernel had.
    single = {"rate_fraction": real["qct_median_s"], "fct_s": real["qct_median_s"],
              "retrans_segs": real["retrans_segs"], "timeouts": real["timeouts"]}
    assert compare.single_not_compared(single, {"rate_fraction": 0.2, "fct_s": 0.2, "retrans_segs": 55}) == {
        "timeouts": "the twin has no timeout count"}


def test_a_held_case_left_out_fails_the_quick_run_by_name_and_reason_not_with_a_key_error():
    """A loaded machine's N = 32 that stayed under the thresholds leaves its timeouts and stall
    share out of the verdicts; the CI test said so with a bare KeyError. The shipped record, its
    incast-32 real side lowered as such a sitting's was, through the same rule."""
    record = json.loads(SHIPPED_RECORD.read_text())
    det = record["detail"]
    assert held_case_failures(record["cases"], det) == [], "the shipped record passes what CI holds"
    cell = det["incast-32-128KB"]
    cell["real"]["timeouts"] |= {"median": 3}
    cell["real"]["frac_over_100ms"] |= {"mean": 0.06}
    cases = [c for c in record["cases"] if c["name"] != "incast-32-128KB"]
    cases += [c.as_json() for c in compare.incast_cases("incast-32-128KB", cell["real"], cell["sim"])]
    failures = held_case_failures(cases, det)
    assert [f.splitlines()[0] for f in failures] == [
        "incast-32-128KB timeouts: not compared: the real runs' median 3 is below MIN_TIMEOUTS = 5",
        "incast-32-128KB frac_over_100ms: not compared: the real runs did not collapse: 0.06 of their queries "
        "took over 100 ms, below ONSET_SHARE = 0.1"]
    # A record that keeps its reasons is taken at its word; a case missing altogether is named.
    cell["not_compared"] = {"timeouts": "as recorded"}
    assert held_case_failures(cases, det)[0].startswith("incast-32-128KB timeouts: not compared: as recorded")
    del det["single-reno-100mbit-16KB"]
    assert any(f.startswith("single-reno-100mbit-16KB retrans_segs: no such case")
               for f in held_case_failures([c for c in cases if c["name"] != "single-reno-100mbit-16KB"], det))


def test_incast_srtts_pair_the_real_median_with_the_twin_where_both_are_known() -> None:
    def entry(kind: str, real: float | None, sim: float | None) -> dict:
        r = {"srtt_at_response_us": {"median": real, "min": real, "max": real}} if real is not None else {}
        return {"setup": {"kind": kind}, "real": r, "sim": {} if sim is None else {"srtt_at_response_us": sim}}

    result = {"detail": {"incast-16": entry("incast", 1048.0, 786.0), "incast-1": entry("incast", None, 101.0),
                         "single": entry("single", 900.0, 800.0), "odd": entry("incast", 500.0, None)}}
    assert compare.incast_srtts(result) == {"incast-16": (1048.0, 786.0)}
    assert compare.incast_srtts({}) == {}
