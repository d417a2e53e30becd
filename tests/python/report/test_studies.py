"""The catalogue studies (python/burstlab/report/studies/): every part loads, the findings'
arithmetic, a reduced study run end to end, parallel streams through the API, and the
`burstlab study` command."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

import burstlab
from burstlab import _core, catalogue
from burstlab.cli import build_app
from burstlab.errors import BurstlabError
from burstlab.report import studies
from burstlab.report.studies import core, grnet
from burstlab.report.studies.core import FAIL, NOT_RUN, PASS, Part, Study


@pytest.mark.parametrize("name", studies.names())
def test_every_part_loads_at_every_grid_point(name: str):
    study = studies.get(name)
    assert study.parts and study.runs == sum(p.runs for p in study.parts)
    for part in study.parts:
        if part.optional and core.unavailable(part):
            continue  # a key this burstlab lacks (the host CPU model's): the study skips the part
        text = catalogue.text(part.scenario)
        points = [[]]
        for path, values in part.grid.items():
            points = [p + [f"{path}={v}"] for p in points for v in values]
        for point in points:
            _core.load_scenario(text, list(part.set) + point)  # raises on a bad key or value


def test_catalogue_lists_every_study_with_its_seed_and_runs():
    entries = studies.catalogue()
    assert [e.name for e in entries] == ["amlight", "amlight-full", "esnet", "htc24", "grnet", "dc"]
    assert [e.seed[:3] for e in entries] == ["000", "000", "002", "001", "003", "004"]
    assert all(e.runs > 0 and e.cpu_s > 0 for e in entries)
    # amlight: the demo's 2 CCAs x 5 starts x 7 durations, three seeds each.
    assert entries[0].runs == 2 * 5 * 7 * 3 == 210
    # amlight-full: 2 RTTs x 2 CCAs x 7 durations x 13 starts, and experiment A's 14 points at
    # the demo's three seeds.
    assert entries[1].runs == 2 * 2 * 7 * 13 + 2 * 7 * 3 == 406
    assert entries[1].command == "burstlab demo --full"
    assert entries[4].runs == studies.get("grnet").runs == 10
    # dc: 20 seeds or start times for each of the 8 slope-law fan-ins, 6 peak runs, 2 goodput,
    # 7 incast sizes over 20 seeds and 5 web-search loads, each with both markings.
    assert entries[5].runs == 8 * 20 + 6 + 2 + 2 * (7 * 20 + 5) == 458
    assert not any(e.cpu_estimated for e in entries)  # every study's CPU time is measured


def test_unknown_study_names_the_catalogue():
    with pytest.raises(BurstlabError, match="study 'nope': no such study; the catalogue has esnet, htc24, grnet"):
        studies.get("nope")


@pytest.mark.parametrize(("theirs", "ours", "tolerance", "status", "error"), [
    (10.0, 10.4, 0.05, PASS, "+4.0%"),
    (10.0, 9.4, 0.05, FAIL, "-6.0%"),
    (10.0, None, 0.05, NOT_RUN, ""),
])
def test_compare_sets_error_and_status(theirs, ours, tolerance, status, error):
    f = core.compare("k", "claim", theirs, ours, tolerance, unit=str, why="cause")
    assert (f.status, f.error) == (status, error)
    assert f.why == {PASS: "", FAIL: "cause", NOT_RUN: "no run"}[status]


@pytest.mark.parametrize(("ours", "status", "error"), [
    ([2.0, 3.0], PASS, "inside"),
    ([3.2], PASS, "6.7% outside"),     # 3.2 is 6.7 % above 3.0: within the 10 % widening
    ([1.7], FAIL, "15.0% outside"),    # 1.7 is 15 % below 2.0
    ([], NOT_RUN, ""),
])
def test_within_measures_the_distance_outside_the_range(ours, status, error):
    f = core.within("k", "claim", 2.0, 3.0, ours, 0.10, unit=str)
    assert (f.status, f.error) == (status, error)


def test_grnet_bounds_to_the_digit_and_the_seeds_odd_window():
    bounds = grnet._bounds()
    assert [b.ours for b in bounds] == ["3,145.73 Mbit/s", "2,097.15 Mbit/s", "8,388.61 Mbit/s", "7,255.01 Mbit/s"]
    assert [b.status for b in bounds] == [PASS, PASS, PASS, FAIL]
    # The seed's fourth window (131,070 KiB) is 2 KiB under rmem/2: with it, its own digits.
    assert "131,070 KiB" in bounds[3].why and "7,254.90 Mbit/s" in bounds[3].why


def test_reduced_study_runs_checks_and_writes_its_findings(tmp_path: Path):
    part = Part("ramp", "grnet/ramp", {grnet.RTT: ["0.15ms"]}, ("stop=1s",))
    study = Study("grnet", "t", "003", "n", (part,), grnet.check)
    result = core.run(study, tmp_path, jobs=1)
    by_key = {f.key: f for f in result.findings}
    at_once = by_key["at-once-015ms"]
    assert at_once.status == PASS, at_once
    assert float(at_once.ours.split()[0]) == pytest.approx(9.90, abs=0.03)
    # The parts this reduced study did not run are not run, never fail.
    assert by_key["ramp-plateau"].status == NOT_RUN and by_key["default-buffers"].status == NOT_RUN
    saved = json.loads((tmp_path / "findings.json").read_text())
    assert saved["counts"] == result.counts and saved["runs"] == 1
    assert "| 0.15 ms: 9.92 Gbit/s from the first second | 9.92 Gbit/s |" in (tmp_path / "findings.md").read_text()


def test_streams_share_hosts_and_sum_like_iperf3():
    text = catalogue.text("grnet/dc")
    result = burstlab.run(text, set={"flow[0].streams": "3", "stop": "2s"})
    assert json.loads(_core.load_scenario(text, ["flow[0].streams=3"]))["streams"] == [3]
    flows = result.to_pandas("flows")
    tcp = flows[flows["kind"] == "tcp"]
    assert len(tcp) == 3 and set(tcp["src"]) == {"s0"} and set(tcp["dst"]) == {"r0"}
    # Three 3 MiB windows at 7.8 ms (9.7 Gbit/s) fill most of the 10 Gbit/s link's payload
    # (9.41 Gbit/s at MTU 1500) once grown: the second second's [SUM].
    intervals = result.to_pandas("intervals")
    sums = intervals.groupby("t_start_s")["bits_per_second"].sum()
    assert sums.iloc[1] == pytest.approx(10e9 * 1448 / 1538, rel=0.03)
    each = intervals[intervals["t_start_s"] == sums.index[1]]["bits_per_second"]
    assert len(each) == 3 and math.isclose(each.sum(), sums.iloc[1], rel_tol=1e-12)


def test_study_command_lists_and_refuses_unknown_names():
    runner = CliRunner()
    listed = runner.invoke(build_app(), ["study"])
    assert listed.exit_code == 0, listed.output
    lines = listed.output.splitlines()
    assert lines[0].split() == ["study", "seed", "runs", "CPU", "time", "command"]
    assert [line.split()[0] for line in lines[1:7]] == ["amlight", "amlight-full", "esnet", "htc24", "grnet", "dc"]
    assert lines[2].split()[-3:] == ["burstlab", "demo", "--full"]
    assert "(estimate)" not in listed.output and lines[6].split()[-3:] == ["burstlab", "study", "dc"]
    bad = runner.invoke(build_app(), ["study", "nope"])
    assert bad.exit_code == 2
    assert "no such study" in bad.output


def test_study_dc_runs_the_parts_its_directory_lacks_and_prints_the_findings(tmp_path: Path):
    from burstlab.report.dc import study as dc_study

    # Every part but goodput (two short runs) as an interrupted study left them: the rerun resumes.
    fit = {"phase1_bps": [2e9], "phase2_bps": [0.9e9]}
    ws = {"qct_s": [0.5], "fct_s": {c: [0.5] for c in ("small", "medium", "large")}, "wall_s": 1.0}
    done = {"law1": fit, "law1_staggered": fit, "law2": {n: fit for n in ("3", "6", "9")},
            "law3": {kb: fit for kb in ("128", "256", "512")},
            "secn_peaks": {k: [40e3] for k in ("dctcp", "dctcp-k2", "dequeue", "s-ecn", "dctcp-36", "s-ecn-36")},
            "incast": {f"{k}-{n}": [0.01] for k in dc_study.MARKING for n in dc_study.INCAST_SENDERS},
            "websearch": {f"{k}-{load}": ws for k in dc_study.MARKING for load in dc_study.LOADS},
            "websearch_seconds": 1.0}
    (tmp_path / dc_study.STUDY_FILE).write_text(json.dumps(done))
    ran = CliRunner().invoke(build_app(), ["study", "dc", "--out", str(tmp_path), "--json"])
    assert ran.exit_code == 0, ran.output
    saved = dc_study.load_study(tmp_path)
    assert set(saved["goodput"]) == {"dctcp", "s-ecn"} and saved["law1"] == fit  # the rest kept as they were
    by_key = {f["key"]: f for f in json.loads(ran.stdout)["findings"]}
    # The three long flows' goodput on the 1 Gbit/s testbed twin: 941.5 Mbit/s (docs/dc.md).
    assert by_key["goodput-dctcp"]["status"] == PASS, by_key["goodput-dctcp"]
    assert by_key["law1"]["ours"].startswith("0.900 Gbit/s")
    assert json.loads((tmp_path / "findings.json").read_text()) == json.loads(ran.stdout)
    assert (tmp_path / "findings.md").read_text().startswith("# Findings: the S-ECN paper's data-centre study")
