"""The AmLight study is recognised from the sweep's definition (its scenario and its grid's
axes), and only then gets its findings and its own sections, beside the generic ones."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from burstlab.report import SECTIONS, Report, build, to_html, to_json, to_markdown
from burstlab.report.amlight import SCENARIOS, _first_mismatch, recognise
from burstlab.report.amlight.findings import FINDINGS
from burstlab.report.amlight.runs import study_runs
from burstlab.report.data import SweepData
from burstlab.sweep import SweepError, sweep
from burstlab.sweep.grid import Axis

BASE_209MS = Path(__file__).resolve().parents[4] / "scenarios" / "amlight" / "base-209ms.toml"


@pytest.fixture(scope="module")
def amlight_sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The study's scenario, shrunk to a 200 MB transfer (about 2.5 s at 209 ms), swept over the
    study's CCAs and burst durations (1 ns: the baseline) with its 1.5 s burst start."""
    out = tmp_path_factory.mktemp("amlight") / "sweep"
    result = sweep(BASE_209MS, grid={"flow[0].cca": ["htcp", "bbr"], "burst[0].duration": ["1ns", "100ms"]},
                   set={"flow[0].size": "200MB", "stop": "20s"}, out=out, jobs=2)
    assert result.summary is not None and result.summary.ok == 4
    return out


@pytest.fixture(scope="module")
def amlight_report(amlight_sweep: Path) -> Report:
    return build(amlight_sweep)


def test_study_recognised_with_findings_and_its_sections(amlight_report: Report):
    report = amlight_report
    assert report.study is not None and report.study.name == "amlight"
    status = {f.key: f.status for f in report.study.findings}
    assert len(status) == len(FINDINGS) == 12
    # What this sweep has (209 ms, both CCAs, baselines and bursts at 1.5 s) is checked ...
    for key in ("baseline_209ms", "htcp_every_burst_hurts", "bbr_handles_100ms", "htcp_cascade",
                "bbr_no_cascade", "bbr_retransmits_more"):
        assert status[key] in ("pass", "fail"), key
    # ... and what it lacks is not run.
    assert status["baseline_301ms"] == status["rtt301_misses_target"] == "not run"
    # The study's sections first, then every sweep's.
    assert list(report.sections) == ["fct-duration", "fct-heatmap", "retransmissions", "seed-spread", *SECTIONS]
    assert "no point was run on two or more seeds" in report.sections["seed-spread"].missing
    assert "burst[0].start" in report.sections["fct-heatmap"].missing  # one start: no heat map
    page = to_html(report)
    assert '<section id="findings">' in page and "AmLight" in page
    assert page.count("<td class=notrun>not run</td>") == list(status.values()).count("not run")


def test_study_runs_read_the_resolved_scenario(amlight_sweep: Path):
    from burstlab.report.data import load

    runs = study_runs(load(amlight_sweep))
    assert len(runs) == 4
    # Neither the RTT nor the burst start is swept: both come from the scenario file.
    assert {r.rtt_s for r in runs} == {0.209} and {r.start_s for r in runs} == {1.5}
    # 1 ns sends nothing: those runs are the baselines.
    assert sorted((r.cca, r.duration_s) for r in runs) == [("bbr", 0.0), ("bbr", 0.1), ("htcp", 0.0), ("htcp", 0.1)]
    assert all(r.finished for r in runs)


def test_study_timelines_show_baseline_and_worst_per_cca(amlight_report: Report):
    titles = [p.title for p in amlight_report.sections["timelines"].charts[0].panels]
    assert len(titles) == 4
    assert [bool(re.search(r"no burst", t)) for t in titles] == [True, False, True, False]
    assert [t.split(", ")[0].split(": ")[1] for t in titles] == ["bbr", "bbr", "htcp", "htcp"]


def test_study_json_and_markdown(amlight_report: Report):
    obj = to_json(amlight_report)
    assert set(obj["study"]) == {"name", "findings", "summary", "baselines", "points", "retransmissions"}
    assert sum(obj["study"]["summary"].values()) == 12
    assert [(b["cca"], b["runs"]) for b in obj["study"]["baselines"]] == [("bbr", 1), ("htcp", 1)]
    assert len(obj["study"]["points"]) == 2 and len(obj["grid_points"]) == 4
    assert {r["start_s"] for r in obj["study"]["retransmissions"]} == {1.5}
    md = to_markdown(amlight_report)
    assert "## Findings (" in md and "| finding | seed | ours | result |" in md
    assert "## Every grid point" not in md and "grid_points" in md  # the summary stays short


# -- the full study's repeated points: a seeds/ sweep inside the study's ----------------------------

SHRUNK = {"flow[0].size": "200MB", "stop": "20s"}


def test_seeds_part_stands_in_for_the_grids_runs_at_its_points(amlight_sweep: Path, tmp_path: Path):
    full = tmp_path / "full"
    shutil.copytree(amlight_sweep, full)
    seeds = sweep(BASE_209MS, grid={"flow[0].cca": ["bbr"], "burst[0].duration": ["100ms"]}, set=SHRUNK, reps=2,
                  out=full / "seeds", jobs=2)
    assert seeds.summary is not None and seeds.summary.ok == 2
    report = build(full)
    assert report.study is not None and report.study.seeded_runs == 2
    # BBR's 100 ms point is judged on its two seeds, the other three points on the grid's one.
    runs = {(p["cca"], p["duration_s"]): p["runs"] for p in report.study.points}
    assert runs == {("bbr", 0.1): 2, ("htcp", 0.1): 1}
    assert "seeds/ part (2 runs)" in report.study.intro
    spread = report.sections["seed-spread"].table
    assert spread is not None and [(r["cca"], r["runs"]) for r in spread.to_json()] == [("bbr", 2)]
    handles = next(f for f in report.study.findings if f.key == "bbr_handles_100ms")
    assert "(seeds " in handles.ours and handles.ours.endswith("of 2 pass")
    # The time series show the study's own runs, not the seeds/ part's (their run ids overlap).
    assert len(report.sections["timelines"].charts[0].panels) == 4


def test_seeds_part_of_another_setup_is_refused(amlight_sweep: Path, tmp_path: Path):
    full = tmp_path / "full"
    shutil.copytree(amlight_sweep, full)
    sweep(BASE_209MS, grid={"flow[0].cca": ["bbr"]}, set={**SHRUNK, "flow[0].size": "100MB"}, out=full / "seeds",
          jobs=1)
    # The error names the one field that differs, its value and the study's, not the whole flow list.
    with pytest.raises(SweepError, match=r"seeds: the repeated points must run the study's scenario with the same "
                                         r"--set; its flows\[0\]\.size_bytes = 100000000, expected the study's "
                                         r"200000000$"):
        build(full)


@pytest.mark.parametrize(("got", "expected", "mismatch"), [
    ({"stop_s": 20.0, "flows": [{"cca": "bbr"}]}, {"stop_s": 20.0, "flows": [{"cca": "htcp"}]},
     ("flows[0].cca", "bbr", "htcp")),
    ({"topology": {"rtt_s": 0.209}}, {"topology": {"rtt_s": 0.209, "veth": False}},
     ("topology.veth", "(absent)", False)),
    ({"streams": [1]}, {"streams": [1, 1]}, ("streams (length)", 1, 2)),
])
def test_seeds_mismatch_names_the_first_differing_field(got: dict, expected: dict, mismatch: tuple):
    assert _first_mismatch(got, expected) == mismatch


# -- recognising the study from the sweep's definition --------------------------------------------

def _data(name: str, *axes: tuple[str, tuple[str, ...]]) -> SweepData:
    return SweepData(out=Path("s"), scenario={"name": name}, axes=tuple(Axis(p, v) for p, v in axes),
                     reps=1, total_runs=0, error_runs=0, runs=[])


@pytest.mark.parametrize("name", SCENARIOS)
def test_recognise_the_studys_scenarios_over_its_parameters(name: str):
    assert recognise(_data(name, ("flow[0].cca", ("htcp", "bbr")), ("topology.rtt", ("209ms", "301ms")),
                           ("burst[0].start", ("1.5s", "2s")), ("burst[0].duration", ("1ns", "25ms")))) == (True, "")
    # A parameter held at one value in the grid is no more than a --set.
    assert recognise(_data(name, ("topology.buffer", ("16MiB",)), ("flow[0].cca", ("htcp", "bbr"))))[0]


def test_recognise_refuses_other_scenarios_silently():
    # The flagship CUBIC scenario has the study's paths but is not the study.
    assert recognise(_data("amlight-209ms-burst", ("flow[0].cca", ("htcp", "bbr")))) == (False, "")
    assert recognise(_data("tiny-burst", ("burst[0].duration", ("1ns", "20ms")))) == (False, "")


def test_recognise_refuses_the_study_varied_in_something_else_and_says_why():
    ok, why = recognise(_data("amlight-base-209ms", ("flow[0].cca", ("htcp", "bbr")),
                              ("topology.buffer", ("1MiB", "16MiB"))))
    assert not ok
    assert "also varies topology.buffer" in why and "findings are not checked" in why
