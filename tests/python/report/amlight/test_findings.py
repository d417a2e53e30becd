"""Each finding's check on hand-made runs: a case that passes, one that fails, and "not run"
when its inputs are absent."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import replace

import pytest

from burstlab.report.amlight import findings as F
from burstlab.report.amlight.runs import Run, point_key, with_seeds
from burstlab.report.units import format_duration

RTT = F.RTT_209MS


def runs(*specs: tuple[str, float, float, float, float] | tuple[str, float, float, float, float, int],
         rtt: float = RTT) -> list[Run]:
    """(cca, start, duration, fct[, retransmits]) -> runs at ``rtt``; duration 0 = baseline."""
    out = []
    for i, spec in enumerate(specs):
        cca, start, duration, fct, *rest = spec
        out.append(Run(i, cca, rtt, start, duration, fct, rest[0] if rest else 0))
    return out


def base(cca: str, fct: float, rtt: float = RTT) -> list[Run]:
    return runs((cca, 1.5, 0.0, fct), rtt=rtt)


def at_a(cca: str, fcts: dict[float, float]) -> list[Run]:
    return runs(*((cca, 1.5, d, f) for d, f in fcts.items()))


def status(check, rs: Iterable[Run]) -> str:
    return check(list(rs)).status


def test_baseline_209_within_ten_percent():
    check = F.FINDINGS[0]
    assert status(check, base("htcp", 6.43) + base("bbr", 6.64)) == "pass"
    assert status(check, base("htcp", 7.88) + base("bbr", 6.64)) == "fail"  # 21 % off
    assert status(check, base("htcp", 6.43, rtt=F.RTT_301MS)) == "not run"


def test_baseline_301_checks_each_cca_present():
    check = F.FINDINGS[1]
    assert status(check, base("htcp", 9.24, rtt=F.RTT_301MS)) == "pass"
    assert status(check, base("bbr", 12.25, rtt=F.RTT_301MS)) == "fail"


def test_htcp_every_burst_hurts():
    b = base("htcp", 6.5)
    assert status(F.check_htcp_every_burst_hurts, b + at_a("htcp", {0.025: 7.2, 1.0: 30.0})) == "pass"
    # 25 ms raises the FCT by 7 %: handled, so "every duration hurts" fails.
    result = F.check_htcp_every_burst_hurts(b + at_a("htcp", {0.025: 6.955, 1.0: 30.0}))
    assert result.status == "fail" and "handled: 25 ms" in result.ours
    assert status(F.check_htcp_every_burst_hurts, at_a("htcp", {0.025: 7.2})) == "not run"  # no baseline


def test_htcp_every_burst_hurts_counts_unfinished_as_hurt():
    rs = base("htcp", 6.5) + at_a("htcp", {0.025: math.inf})
    assert status(F.check_htcp_every_burst_hurts, rs) == "pass"


def test_bbr_handles_100ms():
    b = base("bbr", 6.5)
    assert status(F.check_bbr_handles_100ms, b + at_a("bbr", {0.025: 6.6, 0.1: 7.1, 1.0: 20.0})) == "pass"
    assert status(F.check_bbr_handles_100ms, b + at_a("bbr", {0.025: 6.6, 0.1: 7.2})) == "fail"
    # Only bursts longer than 100 ms: nothing to check.
    assert status(F.check_bbr_handles_100ms, b + at_a("bbr", {0.5: 6.6})) == "not run"


def test_tolerance_is_longest_prefix_of_handled_durations():
    assert F.tolerance({0.025: 0.0, 0.1: 0.05, 0.5: 0.2, 1.0: 0.0}) == (0.1, True)
    assert F.tolerance({0.025: 0.5, 0.1: 0.0}) == (0.025, False)


def test_bbr_more_tolerant():
    b = base("htcp", 6.5) + base("bbr", 6.5)
    hurt_all = {0.025: 8.0, 0.5: 30.0}
    # H-TCP hurt from 25 ms, BBR fine to 500 ms: >= 20x (a lower bound).
    result = F.check_bbr_more_tolerant(b + at_a("htcp", hurt_all) + at_a("bbr", {0.025: 6.5, 0.5: 6.9}))
    assert result.status == "pass" and result.ours.startswith("≥ 20×")
    # BBR fine only to 25 ms while H-TCP is too: ratio 1.
    assert status(F.check_bbr_more_tolerant,
                  b + at_a("htcp", {0.025: 6.5, 0.5: 30.0}) + at_a("bbr", {0.025: 6.5, 0.5: 9.0})) == "fail"
    assert status(F.check_bbr_more_tolerant, b + at_a("htcp", hurt_all)) == "not run"  # no BBR bursts


def test_cascade_checks():
    assert status(F.check_htcp_cascade, at_a("htcp", {1.0: 29.5})) == "pass"
    assert status(F.check_htcp_cascade, at_a("htcp", {1.0: 28.9})) == "fail"
    assert status(F.check_bbr_no_cascade, at_a("bbr", {2.0: 25.0})) == "pass"
    assert status(F.check_bbr_no_cascade, at_a("bbr", {2.0: math.inf})) == "fail"
    assert status(F.check_bbr_no_cascade, at_a("htcp", {2.0: 25.0})) == "not run"


def timing(cca: str, early_fct: float, late_fct: float, early_start: float, late_start: float) -> list[Run]:
    return base(cca, 6.5) + runs((cca, early_start, 0.1, early_fct), (cca, late_start, 0.1, late_fct))


def test_htcp_hurt_early():
    check = F.FINDINGS[7]
    assert check([]).key == "htcp_hurt_early"
    assert status(check, timing("htcp", 20, 7, 2.0, 5.0)) == "pass"
    assert status(check, timing("htcp", 7, 20, 2.0, 5.0)) == "fail"
    # Both starts in the early window: nothing to compare.
    assert status(check, timing("htcp", 20, 7, 2.0, 3.0)) == "not run"


def test_bbr_hurt_late():
    check = F.FINDINGS[8]
    assert check([]).key == "bbr_hurt_late"
    assert status(check, timing("bbr", 7, 20, 2.0, 4.5)) == "pass"
    assert status(check, timing("bbr", 20, 7, 2.0, 4.5)) == "fail"
    # 6 s is after the late window (3.5, 5.5]: the late side is empty.
    assert status(check, timing("bbr", 7, 20, 2.0, 6.0)) == "not run"


def test_few_early_retx_cost_more():
    rs = runs(("htcp", 2.0, 0.1, 40.0, 15), ("htcp", 4.0, 0.1, 9.0, 32_939))
    result = F.check_few_early_retx_cost_more(rs)
    assert result.status == "pass" and "15 retx at 2 s" in result.ours
    # More retransmits early *and* a longer FCT: the usual story, not the seed's finding.
    assert status(F.check_few_early_retx_cost_more, runs(("htcp", 2.0, 0.1, 40.0, 900), ("htcp", 4.0, 0.1, 9.0, 10))) == "fail"
    assert status(F.check_few_early_retx_cost_more, runs(("htcp", 2.0, 0.1, 40.0, 15))) == "not run"


def test_bbr_retransmits_more():
    pair = lambda h, b: runs(("htcp", 2.0, 0.1, 9.0, h), ("bbr", 2.0, 0.1, 9.0, b))  # noqa: E731
    assert status(F.check_bbr_retransmits_more, pair(100, 600)) == "pass"
    assert status(F.check_bbr_retransmits_more, pair(100, 599)) == "fail"
    assert status(F.check_bbr_retransmits_more, pair(0, 0)) == "fail"
    # Points run by one CCA only are not compared.
    assert status(F.check_bbr_retransmits_more, runs(("htcp", 2.0, 0.1, 9.0, 1), ("bbr", 3.0, 0.1, 9.0, 9))) == "not run"


def test_301ms_misses_target():
    far = lambda h, b: runs(("htcp", 3.0, 0.0, h), ("bbr", 3.0, 0.1, b), rtt=F.RTT_301MS)  # noqa: E731
    assert status(F.check_301ms_misses_target, far(9.8, 10.0)) == "pass"
    assert status(F.check_301ms_misses_target, far(9.8, 6.9)) == "fail"
    assert status(F.check_301ms_misses_target, base("htcp", 9.8, rtt=F.RTT_301MS)) == "not run"


def test_check_all_never_fails_on_an_empty_sweep():
    assert {f.status for f in F.check_all([])} == {"not run"}
    assert all(f.missing for f in F.check_all([]))


def test_seed_constants():
    # seed-targets.md §1: the 7 s target, the 29 s next window at 209 ms, the two RTTs.
    assert (F.TARGET_FCT_S, F.NEXT_WINDOW_209MS_S, F.RTT_209MS, F.RTT_301MS) == (7.0, 29.0, 0.209, 0.301)
    assert F.HURT == 0.10


@pytest.mark.parametrize("s, text", [(0.025, "25 ms"), (1.5, "1.5 s"), (0.0, "none"), (math.inf, "∞")])
def test_format_duration(s, text):
    assert format_duration(s) == text


def test_seed_retransmit_table():
    from burstlab.report.amlight.seed import RETRANSMITS

    assert len(RETRANSMITS) == 2 * 2 * 12
    assert RETRANSMITS[("htcp", 209, 2.0)] == (15, 10_882)
    assert RETRANSMITS[("htcp", 209, 4.0)] == (32_939, 41_649)
    assert RETRANSMITS[("bbr", 301, 7.5)] == (42_217, 295_720)


def with_rep(rs: list[Run], rep: int) -> list[Run]:
    return [replace(r, rep=rep) for r in rs]


def test_check_all_judges_each_seed_alone():
    # Three seeds of the same points: the median FCT of the 25 ms burst (8.0 s) hurts, but on
    # seed 1 alone it is handled (6.6 s): the verdict passes on 2 of 3 seeds, and says so.
    reps = [with_rep(base("htcp", 6.5) + at_a("htcp", {0.025: f, 1.0: 30.0}), k)
            for k, f in enumerate((8.0, 6.6, 9.0))]
    found = {f.key: f for f in F.check_all([r for rs in reps for r in rs])}
    every = found["htcp_every_burst_hurts"]
    assert every.status == "pass" and every.per_seed == ("pass", "fail", "pass")
    assert every.ours.endswith("; seeds: 2 of 3 pass")
    # Not run stays not run, with no per-seed verdicts.
    assert found["baseline_301ms"].status == "not run" and found["baseline_301ms"].per_seed == ()


def test_check_all_without_repetitions_has_no_per_seed_verdicts():
    found = {f.key: f for f in F.check_all(base("htcp", 6.5) + at_a("htcp", {0.025: 8.0}))}
    assert found["htcp_every_burst_hurts"].per_seed == () and "seeds" not in found["htcp_every_burst_hurts"].ours


def test_retransmissions_table_sets_ours_beside_the_seed_per_mark():
    from burstlab.report.amlight.sections import retransmissions

    rs = runs(("htcp", 4.0, 0.1, 7.0, 30_000), ("htcp", 4.0, 0.5, 7.5, 36_000),
              ("bbr", 4.0, 0.1, 7.0, 60_000), ("bbr", 4.0, 0.5, 7.5, 72_000))
    rows = {r["cca"]: r for r in retransmissions(rs).table.to_json()}
    # Seed at 4 s, 209 ms: H-TCP median 32,939, BBR 188,826.
    assert rows["htcp"]["median"] == 33_000 and rows["htcp"]["median_over_seed"] == round(33_000 / 32_939, 2)
    assert rows["bbr"]["median_over_seed"] == round(66_000 / 188_826, 2)
    assert rows["bbr"]["bbr_over_htcp"] == 2.0
    assert rows["bbr"]["seed_bbr_over_htcp"] == round(188_826 / 32_939, 2)
    assert rows["htcp"]["bbr_over_htcp"] is None


# -- the full study's repeated points: one seed per point, three at experiment A ----------------

def full_study_shape(main_500ms: float, seeds_500ms: tuple[float, float, float]) -> list[Run]:
    """Both CCAs' baselines and bursts at 1.5 s and 4.5 s, one seed each (the grid), then
    experiment A's points (1.5 s) again at three seeds (the seeds/ part), merged."""
    grid = (base("htcp", 6.5) + base("bbr", 6.6) + runs(("htcp", 4.5, 0.0, 6.5), ("bbr", 4.5, 0.0, 6.6))
            + at_a("htcp", {0.025: 28.0, 0.5: 36.0, 1.0: 37.0}) + at_a("bbr", {0.025: 6.8, 0.5: main_500ms, 1.0: 12.0})
            + runs(("htcp", 4.5, 0.5, 7.2), ("bbr", 4.5, 0.5, 7.3)))
    seeds = [replace(r, rep=k, part="seeds", fct_s=seeds_500ms[k] if (r.cca, r.duration_s) == ("bbr", 0.5) else r.fct_s)
             for k in range(3)
             for r in base("htcp", 6.5) + base("bbr", 6.6) + at_a("htcp", {0.025: 28.0, 0.5: 36.0, 1.0: 37.0})
             + at_a("bbr", {0.025: 6.8, 0.5: 0.0, 1.0: 12.0})]
    return with_seeds(grid, seeds)


def test_with_seeds_stands_the_repeated_runs_in_for_the_grids_at_their_points():
    merged = full_study_shape(10.1, (7.1, 7.2, 10.1))
    at = lambda cca, s, d: sorted(r.fct_s for r in merged if point_key(r) == (cca, RTT, s, d))  # noqa: E731
    # The grid's one run at BBR's 500 ms burst at 1.5 s is gone; the three seeds are there.
    assert at("bbr", 1.5, 0.5) == [7.1, 7.2, 10.1]
    # The baseline at 1.5 s is repeated too; the one at 4.5 s stays the grid's.
    assert len(at("bbr", 1.5, 0.0)) == 3 and len(at("bbr", 4.5, 0.0)) == 1
    assert at("bbr", 4.5, 0.5) == [7.3]


def test_seed_copies_hold_each_seed_at_the_repeated_points_and_the_grid_elsewhere():
    merged = full_study_shape(10.1, (7.1, 7.2, 10.1))
    copies = F.seed_copies(merged)
    assert len(copies) == 3
    for k, copy in enumerate(copies):
        bbr_500 = [r.fct_s for r in copy if point_key(r) == ("bbr", RTT, 1.5, 0.5)]
        assert bbr_500 == [(7.1, 7.2, 10.1)[k]]
        # The point run once is in every copy.
        assert [r.fct_s for r in copy if point_key(r) == ("bbr", RTT, 4.5, 0.5)] == [7.3]
    assert F.seed_copies(base("htcp", 6.5) + at_a("htcp", {0.025: 8.0})) == []


def test_two_valued_point_is_judged_on_its_median_with_its_spread_shown():
    # BBR's 500 ms burst at 1.5 s: +8 % on two seeds, +53 % on the third (the study's figures).
    # The grid's one seed there was hurt; the median over the three seeds is handled.
    merged = full_study_shape(10.1, (7.13, 7.17, 10.1))
    found = {f.key: f for f in F.check_all(merged)}
    tolerant = found["bbr_more_tolerant"]
    assert tolerant.status == "pass" and tolerant.per_seed == ("pass", "pass", "fail")
    assert "500 ms +8.6 % (seeds +8.0 % to +53.0 %)" in tolerant.ours and tolerant.ours.endswith("seeds: 2 of 3 pass")
    # Hurt on the median: the same finding fails, and says on how many seeds alone it passes.
    hurt = {f.key: f for f in F.check_all(full_study_shape(7.13, (7.13, 10.1, 10.1)))}["bbr_more_tolerant"]
    assert hurt.status == "fail" and hurt.per_seed == ("pass", "fail", "fail")
    # A finding that reads no repeated point gives the same verdict on every copy.
    assert found["bbr_retransmits_more"].per_seed in (("fail",) * 3, ("pass",) * 3)


def test_cascade_names_its_longest_point_and_its_seeds():
    merged = full_study_shape(10.1, (7.1, 7.2, 10.1))
    found = {f.key: f for f in F.check_all(merged)}
    assert found["htcp_cascade"].ours.startswith("max 37.00 s (1 s) (seeds 37.00 s to 37.00 s)")
    # One run per point: no spread to show.
    assert F.check_htcp_cascade(at_a("htcp", {1.0: 29.5})).ours == "max 29.50 s (1 s)"
