"""``burstlab report`` on a real (tiny) sweep: every section, inline SVG, nothing fetched, the
findings the sweep cannot check shown as "not run", the Markdown and JSON forms."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from burstlab.report import SECTIONS, build, to_html
from burstlab.sweep import sweep
from helpers import burstlab

# A 4 MB transfer over a 1 Gbit/s, 2 ms dumbbell, hit at 10 ms by a 2 x 600 Mbit/s burst that
# overfills the bottleneck's 100 kB buffer. Swept: two CCAs, no burst (1 ns sends nothing) or
# 20 ms, two starts: 8 runs of well under a second each.
TINY_BURST_SCENARIO = """\
name = "tiny-burst"
seed = 1
stop = "5s"

[topology]
bottleneck_rate = "1Gbps"
host_rate = "10Gbps"
rtt = "2ms"
buffer = "100kB"

[[flow]]
cca = "htcp"
size = "4MB"

[[burst]]
sources = 2
rate = "600Mbps"
start = "10ms"
duration = "20ms"
"""
GRID = {
    "flow[0].cca": ["htcp", "bbr"],
    "burst[0].duration": ["1ns", "20ms"],
    "burst[0].start": ["5ms", "15ms"],
}


@pytest.fixture(scope="module")
def tiny_sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report") / "sweep"
    result = sweep(TINY_BURST_SCENARIO, grid=GRID, out=out, jobs=2)
    assert result.summary is not None and result.summary.ok == 8
    return out


def test_html_has_every_section_inline_and_offline(tiny_sweep: Path):
    page = to_html(build(tiny_sweep))
    for key in SECTIONS:
        assert f'<section id="{key}">' in page
    # Figures are inline SVG: FCT vs duration, heat map, timelines, queue.
    assert page.count("<svg") == 4
    # Nothing outside the file: no address at all, no external stylesheet, script or image.
    assert "http" not in page
    assert not re.search(r"<(script|link|img)\b", page)


def test_html_findings_without_inputs_are_not_run(tiny_sweep: Path):
    report = build(tiny_sweep)
    status = {f.key: f.status for f in report.findings}
    # The tiny sweep has neither 209 ms nor 301 ms runs: every finding tied to those RTTs lacks
    # its inputs; the RTT-free retransmit comparison does run.
    for key in ("baseline_209ms", "baseline_301ms", "htcp_every_burst_hurts", "bbr_handles_100ms",
                "bbr_more_tolerant", "htcp_cascade", "bbr_no_cascade", "rtt301_misses_target"):
        assert status[key] == "not run", key
    assert status["bbr_retransmits_more"] in ("pass", "fail")
    page = to_html(report)
    assert page.count("<td class=notrun>not run</td>") == list(status.values()).count("not run")
    assert "no no-burst baseline run at 209 ms" in page


def test_cli_report_writes_page_and_json(tiny_sweep: Path, tmp_path: Path):
    page = tmp_path / "r.html"
    r = burstlab("report", tiny_sweep, "--out", page)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(page)
    assert page.read_text().startswith("<!DOCTYPE html>")

    r = burstlab("report", tiny_sweep, "--format", "json")
    assert r.returncode == 0, r.stderr
    obj = json.loads(r.stdout)
    assert set(obj) == {"sweep", "scenario", "runs", "grid", "findings", "summary", "baselines",
                        "points", "retransmissions", "sections"}
    assert obj["runs"] == {"total": 8, "ok": 8, "error": 0}
    assert set(obj["sections"]) == set(SECTIONS) - {"findings"}
    assert sum(obj["summary"].values()) == len(obj["findings"])
    # Two CCAs x one RTT: the four baseline runs reduce to two baselines; 2 x 2 burst points.
    assert len(obj["baselines"]) == 2 and len(obj["points"]) == 4
    assert set(obj["findings"][0]) == {"key", "claim", "check", "theirs", "ours", "status", "missing"}
    assert burstlab("report", tiny_sweep, "--json").stdout == r.stdout


def test_cli_report_markdown(tiny_sweep: Path):
    r = burstlab("report", tiny_sweep, "--format", "md")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("# burstlab report: tiny-burst")
    assert "| finding | seed | ours | result |" in r.stdout
    assert "**not run**" in r.stdout


def test_sections_missing_data_say_so(tmp_path: Path):
    # Only the CCA swept: no duration axis, no heat map; the page says why instead of failing.
    out = tmp_path / "s"
    sweep(TINY_BURST_SCENARIO, grid={"flow[0].cca": ["htcp", "bbr"]}, out=out, jobs=1)
    report = build(out)
    assert "burst[0].duration is not swept" in report.sections["fct-duration"].missing
    assert report.sections["fct-heatmap"].missing
    assert "Not in this sweep" in to_html(report)


def test_cli_report_not_a_sweep(tmp_path: Path):
    r = burstlab("report", tmp_path)
    assert r.returncode == 2
    assert "not a sweep directory" in r.stderr


def test_cli_demo_help():
    r = burstlab("demo", "--help")
    assert r.returncode == 0
    assert "--jobs" in r.stdout and "--out" in r.stdout
    assert "AmLight" in r.stdout
