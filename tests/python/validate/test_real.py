"""Real-side scenarios on this kernel: rates near the shaped rate, incast numbers that add up."""

from __future__ import annotations

import pytest

from burstlab.validate import real
from burstlab.validate.real import incast, percentile, single_flow, summarize
from burstlab.validate.topology import DEFAULT_BURST_BYTES, FRAME_BYTES


def test_a_held_readers_share_of_a_wait_leaves_out_what_the_bottleneck_took_to_deliver_the_read():
    per_byte_us = FRAME_BYTES / 1448 * 8 / 1e9 * 1e6
    flight = 1 + 69 * 1448  # a read of 69 full frames after the oldest byte: 835.7 µs at 1 Gbit/s
    shares = real.reader_waits_us([[900.0, flight], [600.0, flight], [40.0, 1], [90.0, 8 * 1448]], 1e9)
    assert shares[0] == pytest.approx(900.0 - 69 * 1448 * per_byte_us) and 60 < shares[0] < 70
    # Held off until the whole flight had come: none of it was the reader's.
    assert shares[1] == 0.0
    # A one-byte read, and a few KB of one connection among many (85 µs of frames, well under
    # HELD_SPAN_US): the reader came that long after the oldest byte, all of it its own.
    assert shares[2] == 40.0 and shares[3] == 90.0
    # The line between them: a read of HELD_SPAN_US of frames is held.
    at = 1 + round(real.HELD_SPAN_US / per_byte_us) + 1
    assert real.reader_waits_us([[400.0, at]], 1e9)[0] < 400.0 - real.HELD_SPAN_US + 1
    assert real.reader_wait_summary(shares)["reader_wait_us"] == pytest.approx(sum(shares) / 4)
    assert real.reader_wait_summary([]) == {"reader_wait_us": 0.0, "reader_wait_quantiles_us": []}


def test_aggregator_cost_is_per_query_and_sets_cpu_beside_the_querys_time() -> None:
    asked = {"query_cpu_us": [2_000.0, 6_000.0, 3_000.0], "qct_s": [0.010, 0.012, 0.003],
             "query_reads": [100, 300, 120], "query_wakes": [90, 200, 100]}
    cost = real.aggregator_cost(asked)
    assert cost["aggregator_cpu_us"] == 3_000.0
    # Shares 0.2, 0.5 and 1.0: the median is the second query's, not total CPU over total time.
    assert cost["aggregator_busy"] == pytest.approx(0.5)
    assert (cost["reads_per_query"], cost["wakes_per_query"]) == (120, 100)


def test_percentile_nearest_rank() -> None:
    values = [float(v) for v in range(1, 51)]
    assert percentile(values, 99) == 50.0   # ceil(0.99 * 50) = 50th value
    assert percentile(values, 50) == 25.0
    assert percentile([3.0], 99) == 3.0
    with pytest.raises(ValueError):
        percentile([], 50)


def test_summarize_mean_and_relative_spread() -> None:
    s = summarize([{"x": 1.0, "tag": "a"}, {"x": 3.0, "tag": "b"}])
    assert s["x"]["mean"] == 2.0 and s["x"]["rel_spread"] == 1.0
    assert s["x"]["std"] == pytest.approx(2 ** 0.5)
    assert "tag" not in s


def test_response_spread_reports_the_first_delay_and_every_gap() -> None:
    # Two queries sent at 0 and 1000 us; three responses each (one list per connection).
    sent = [0, 1_000_000]
    starts = [[100_000, 1_050_000], [130_000, 1_060_000], [190_000, 1_400_000]]
    s = real.response_spread(sent, starts)
    assert s["first_response_us"] == pytest.approx(75.0)        # median of 100 and 50
    assert s["response_gap_us"] == pytest.approx((45 + 175) / 2)  # (190-100)/2 and (400-50)/2
    steps = sorted([100.0, 30.0, 60.0, 50.0, 10.0, 340.0])
    assert min(s["serve_time_quantiles_us"]) >= steps[0] and max(s["serve_time_quantiles_us"]) <= steps[-1]
    assert len(s["serve_time_quantiles_us"]) == 100
    # Connection 0, 1, 2 answered in that order both times.
    assert s["response_order_corr"] == 1.0


def test_order_correlation_tells_a_server_that_keeps_its_order_from_one_that_does_not() -> None:
    # Three queries of four connections; each list is one connection's start times.
    same = [[10, 110, 210], [20, 120, 220], [30, 130, 230], [40, 140, 240]]
    assert real.order_correlation(same) == 1.0
    # The second query reverses the first, the third reverses it back: rho = -1 both times.
    flipped = [[10, 140, 210], [20, 130, 220], [30, 120, 230], [40, 110, 240]]
    assert real.order_correlation(flipped) == -1.0
    # One swap of neighbours (d = 1, 1): 1 - 6 * 2 / (4 * 15) = 0.8, both times.
    swap = [[10, 120, 210], [20, 110, 220], [30, 130, 230], [40, 140, 240]]
    assert real.order_correlation(swap) == pytest.approx(0.8)
    assert real.order_correlation([[1, 2], [3, 4]]) is None  # too few connections
    assert real.order_correlation([[1], [2], [3]]) is None   # one query


def test_srtt_at_response_is_the_median_over_queries_of_each_querys_median() -> None:
    # Three connections (one list each, k-th value = query k); the third missed query 2.
    srtts = [[100, 900, 1000], [200, 1100, 1200], [300, 1000]]
    # Per query: 200, 1000, 1100 (the middle two of 1000 and 1200); their median is 1000.
    assert real.at_response(srtts) == 1000
    assert real.at_response([[500], [700]]) == 600
    assert real.at_response([]) == 0.0


@pytest.mark.netns
def test_single_cubic_flow_reaches_shaped_rate() -> None:
    r = single_flow("cubic", rate="1gbit", limit_bytes=128 * 1024, size_bytes=50_000_000, repeat=3)
    # On a shared 2-core machine a run loses 3-15 % of the rate, sometimes 25 %, to stretches in
    # which the hosts' softirq work waited for a CPU and the tbf stood empty (docs/validation.md,
    # "Host stalls"; one CI run lost 108 ms of 0.55 s to them, a rate of 0.76). The
    # kernel's capability is its rate over the time the hosts did not stall, best of three: a
    # tbf shaping at a wrong rate, or a path that cannot fill it, still fails.
    def unstalled(run: dict) -> float:
        # As a fraction of the transfer, so that no stall divides by exactly 1.0 (rate * fct / fct
        # can come out one ulp below the rate).
        stalled = (run["host_stall_ms"] or 0.0) / 1e3 / run["fct_s"]
        return run["rate_fraction"] / (1.0 - stalled)

    # pytest cuts a long assertion message short; a failing test's output is shown whole.
    brief = [{k: run.get(k) for k in ("rate_fraction", "fct_s", "host_stalls", "host_stall_ms", "host_stall_why",
                                      "retrans_segs", "qdisc_drops", "min_rtt_us", "srtt_us", "host_softirq_load")}
             | {"unstalled": unstalled(run)} for run in r["runs"]]
    print("runs:", *brief, sep="\n  ")
    # Without tracefs (`host_stall_why` says so) nothing is subtracted: the old bar of 0.90.
    floor = 0.93 if all(run["host_stall_ms"] is not None for run in r["runs"]) else 0.90
    assert max(unstalled(run) for run in r["runs"]) >= floor, brief
    for run in r["runs"]:
        # Nor may any run beat the shaped rate, counted over the time the tbf was not left idle,
        # by more than a bucket's worth per stall (each refills it: 15 KB in 121 us at 1 Gbit/s),
        # 2 % besides. A stall is time the tbf sent nothing, and only those before the last byte
        # count (`host_stalls.within`; counting those after it, a CI run read 1.07 here).
        refills = (run["host_stalls"] or 0) * DEFAULT_BURST_BYTES * 8 / 1e9
        assert run["rate_fraction"] <= unstalled(run) <= 1.02 + refills / run["fct_s"], brief
        assert run["retrans_segs"] >= run["qdisc_drops"], brief
        # No delay on the path itself.
        assert run["min_rtt_us"] < 200, brief
        # The hosts' network work shows on one CPU (host_cpu.py): a flow at 1 Gbit/s kept it in
        # softirq for 42-101 % of the transfer in a sitting of `--repeat 5` (docs/validation.md,
        # "Host softirq load"); a meter reading the wrong column or CPU would see the idle one, ~0.
        assert run["host_softirq_load"] is None or run["host_softirq_load"] > 0.2, brief
    # A smoothed RTT of the 128 KB tbf queue (it drains in ~1 ms at 1 Gbit/s) plus the receiving
    # host's batches, which held data up to ~2.5 ms more (srtt 1-3.7 ms; history/validation-notes.md,
    # "What the remaining misses have in common"), in the best of three: the srtt is read at the
    # end, and a stall of the hosts there can leave it high (12.8 ms in one CI run). A
    # queue the limit did not bound (pfifo's 1000 packets: 12 ms) holds every run's up.
    assert min(run["srtt_us"] for run in r["runs"]) < 6_000, brief


def test_bbr_at_response_pools_as_the_srtt_does_and_counts_probing_starts() -> None:
    # Two connections, two queries each; bytes/s, and gains of 256.
    served = {"bbr_bw_at_response_Bps": [[100e6, 150e6], [120e6, 130e6]],
              "bbr_gain_at_response": [[320, 256], [320, 192]]}
    got = real.bbr_at_response(served)
    # Per query 110e6 and 140e6 B/s; their median 125e6 B/s is 1 Gbit/s. Two starts of four probe.
    assert got == {"bbr_bw_at_response_bps": 1e9, "bbr_probing_at_response": 0.5}
    # Another CCA's server reads no BBR state: no figure rather than a zero.
    assert real.bbr_at_response({"bbr_bw_at_response_Bps": [[], []], "bbr_gain_at_response": [[], []]}) == {}
    assert real.bbr_at_response({}) == {}


@pytest.mark.netns
def test_incast_reads_bbrs_own_bandwidth_estimate_as_responses_start() -> None:
    r = incast(1, 128 * 1024, cca="bbr", queries=10)
    run = r["runs"][0]
    # Through a 1 Gbit/s tbf BBR's estimate is of the order of the rate (the bucket's burst can
    # lift a sample above it), not a hundredth of it nor a hundred times it.
    assert 1e8 < run["bbr_bw_at_response_bps"] < 1e10, run
    assert 0.0 <= run["bbr_probing_at_response"] <= 1.0
    assert "bbr_bw_at_response_bps" not in incast(1, 128 * 1024, queries=3)["runs"][0]


@pytest.mark.netns
@pytest.mark.parametrize("n", [1, 8])
def test_incast_numbers_are_sane(n: int) -> None:
    total = 1_000_000
    r = incast(n, 128 * 1024, total_bytes=total, queries=20)
    run = r["runs"][0]
    # A query cannot beat the tbf: its frames minus one bucket's worth at 1 Gbit/s.
    floor = ((total * FRAME_BYTES / 1448) - DEFAULT_BURST_BYTES) * 8 / 1e9
    assert floor <= run["qct_median_s"] <= run["qct_p99_s"] <= run["qct_max_s"] < 5
    assert 0.0 <= run["frac_over_100ms"] <= 1.0
    assert run["retrans_segs"] >= run["qdisc_drops"] >= 0
    # The kernel's SRTT as the responses start: at least the path's (tens of µs), and nowhere
    # near a second (it would be µs read as ms, or another field).
    assert 5 <= run["srtt_at_response_us"] < 200_000, run
    # Every 8th read samples a wait; the aggregator's own share of it is never more than it.
    assert run["wait_samples"] > 0 and 0 <= run["reader_wait_us"] <= run["read_wait_us"], run
    # The aggregator reads each response at least once, and cannot spend more CPU than there is.
    assert run["reads_per_query"] >= n and 0 < run["aggregator_busy"] <= 1.1, run
    # Many slow queries need the 200 ms minimum RTO to fire. One or two need not: a CI run saw
    # one query of 20 over 100 ms at N = 1 with no timeout at all, a stall of the shared host.
    if run["frac_over_100ms"] > 0.1:
        assert run["timeouts"] > 0, run
