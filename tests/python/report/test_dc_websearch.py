"""The data-centre study's web-search part (burstlab.report.dc.study.websearch): its runs in
worker processes, side by side, measure what each run measures alone."""

from __future__ import annotations

from burstlab.report.dc import study


def _without_wall(runs: dict) -> dict:
    return {k: {f: v for f, v in r.items() if f != "wall_s"} for k, r in runs.items()}


def test_websearch_runs_side_by_side_measure_what_each_measures_alone():
    # 0.3 s at load 0.6: ~300 queries and a few dozen background flows per marking.
    two = study.websearch(0.3, loads=(0.6,), jobs=2)
    assert list(two) == ["dctcp-0.6", "s-ecn-0.6"]
    one = study.websearch(0.3, loads=(0.6,), jobs=1)
    assert _without_wall(two) == _without_wall(one)
    alone = study._websearch_run(0.6, "s-ecn", 0.3)
    assert _without_wall({"s-ecn-0.6": alone})["s-ecn-0.6"] == _without_wall(two)["s-ecn-0.6"]
    for key, run in two.items():
        assert len(run["qct_s"]) > 100, f"{key}: {len(run['qct_s'])} queries completed"
        assert run["fct_s"]["small"], f"{key}: no small background flow completed"
    assert two["dctcp-0.6"]["qct_s"] != two["s-ecn-0.6"]["qct_s"], "the markings ran alike"
