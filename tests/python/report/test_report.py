"""``burstlab report`` on real (tiny) sweeps: a sweep of any scenario gets the generic sections and
no study findings; time series drawn on the intervals' own times; one y-scale per chart; SVG
that follows the page's width; the Markdown and JSON forms; the CLI's exits."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from burstlab.report import SECTIONS, Report, build, to_html, to_json
from burstlab.sweep import open_sweep, sweep
from helpers import burstlab

# A 4 MB transfer over a 1 Gbit/s, 2 ms dumbbell with 10 ms intervals, hit at 10 ms by a
# 2 x 600 Mbit/s burst that overfills the bottleneck's 100 kB buffer. Swept: two CCAs, no
# burst (1 ns sends nothing) or 20 ms: 4 runs of well under a second each.
TINY_BURST_SCENARIO = """\
name = "tiny-burst"
seed = 1
stop = "5s"
interval = "10ms"

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
GRID = {"flow[0].cca": ["htcp", "bbr"], "burst[0].duration": ["1ns", "20ms"]}


@pytest.fixture(scope="module")
def tiny_sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report") / "sweep"
    result = sweep(TINY_BURST_SCENARIO, grid=GRID, out=out, jobs=2)
    assert result.summary is not None and result.summary.ok == 4
    return out


@pytest.fixture(scope="module")
def tiny_report(tiny_sweep: Path) -> Report:
    return build(tiny_sweep)


def _segments(line) -> list[tuple[float, float, float]]:
    """The horizontal segments ``(x0, x1, y)`` a ``steps-post`` line draws."""
    assert line.get_drawstyle() == "steps-post"
    xs, ys = line.get_xdata(), line.get_ydata()
    return [(xs[k], xs[k + 1], ys[k]) for k in range(len(xs) - 1) if math.isfinite(ys[k])]


def _run_of(title: str) -> int:
    return int(re.match(r"run (\d+)", title).group(1))


# -- time series ---------------------------------------------------------------------------------

def test_timelines_draw_each_interval_over_its_own_times(tiny_sweep: Path, tiny_report: Report):
    report = tiny_report
    rate, cwnd = report.sections["timelines"].charts
    intervals = open_sweep(tiny_sweep).query(
        "SELECT run_id, t_start_s, t_end_s, bits_per_second, cwnd_bytes FROM intervals "
        "WHERE flow_id = 0 ORDER BY run_id, t_start_s").to_pylist()
    divisors = {"Gbit/s": 1e9, "Mbit/s": 1e6, "MiB": 2**20, "KiB": 2**10}
    checked = 0
    for chart, column in ((rate, "bits_per_second"), (cwnd, "cwnd_bytes")):
        for panel in chart.panels:
            rows = [r for r in intervals if r["run_id"] == _run_of(panel.title)]
            assert len(rows) >= 3  # 10 ms intervals of a transfer of tens of ms
            ax = panel.fig.axes[0]
            div = divisors[re.search(r"\((.+)\)", ax.get_ylabel()).group(1)]
            (line,) = ax.get_lines()
            expected = [(r["t_start_s"], r["t_end_s"], r[column] / div) for r in rows]
            # The first interval holds its own value (not 0) and the last one is drawn to its end.
            drawn = _segments(line)
            assert len(drawn) == len(expected)
            assert [x for seg in drawn for x in seg] == pytest.approx([x for seg in expected for x in seg])
            checked += 1
    assert checked == 8


def test_burst_shading_is_on_the_same_time_axis(tiny_sweep: Path, tiny_report: Report):
    report = tiny_report
    spans = {}
    for panel in report.sections["timelines"].charts[0].panels:
        patches = panel.fig.axes[0].patches
        spans[_run_of(panel.title)] = [(p.get_x(), p.get_x() + p.get_width()) for p in patches]
    runs = {r["run_id"]: r["burst[0].duration"] for r in open_sweep(tiny_sweep).runs.to_pylist()}
    for run_id, shaded in spans.items():
        # 20 ms from 10 ms; a 1 ns burst is no burst and shades nothing visible.
        if runs[run_id] == "20ms":
            assert shaded == [pytest.approx((0.010, 0.030))]
        else:
            assert all(x1 - x0 < 1e-6 for x0, x1 in shaded)


def test_timelines_show_four_runs_spanning_the_outcomes(tiny_sweep: Path, tiny_report: Report):
    report = tiny_report
    shown = [_run_of(p.title) for p in report.sections["timelines"].charts[0].panels]
    fct = {r["run_id"]: r["fct_s"] for r in open_sweep(tiny_sweep).query(
        "SELECT run_id, fct_s FROM flows WHERE flow_id = 0").to_pylist()}
    assert sorted(shown) == [0, 1, 2, 3]
    assert [fct[i] for i in shown] == sorted(fct.values())  # fastest first


# -- one y-scale per chart, figures that follow the page's width --------------------------------

def test_every_chart_has_one_y_scale(tiny_report: Report):
    report = tiny_report
    charts = [c for s in report.sections.values() for c in s.charts]
    assert len(charts) == 4 + 2 + 1  # four outcomes, throughput and cwnd, queue
    for chart in charts:
        limits = {p.fig.axes[0].get_ylim() for p in chart.panels}
        assert len(limits) == 1, chart.caption
        assert min(limits)[0] == 0
    # And the shared scale holds every panel's data: the highest throughput reaches the top.
    rate = report.sections["timelines"].charts[0]
    top = rate.panels[0].fig.axes[0].get_ylim()[1]
    peak = max(max(p.fig.axes[0].get_lines()[0].get_ydata()) for p in rate.panels)
    assert peak <= top < 1.2 * peak


def test_svg_scales_to_the_page_width(tiny_report: Report):
    page = to_html(tiny_report)
    plots = re.findall(r"<svg [^>]*class=\"plot\"[^>]*>", page)
    assert len(plots) == 4 * 2 + 4 * 2 + 4  # outcomes (2 axes each), throughput + cwnd, queue
    for head in plots:
        assert re.search(r'viewBox="0 0 [0-9.]+ [0-9.]+"', head)
        assert 'width="100%"' in head
        assert re.search(r'style="max-width:\d+px"', head)
        assert not re.search(r'(width|height)="[0-9.]+(pt|px)?"', head)
    assert '<meta name="viewport"' in page
    assert "grid-template-columns: repeat(auto-fill, minmax(min(100%" in page


# -- a sweep of any scenario: generic sections, no study ----------------------------------------

def test_generic_sweep_has_no_study_findings(tiny_report: Report):
    report = tiny_report
    assert report.study is None and report.notes == []
    assert list(report.sections) == list(SECTIONS)
    page = to_html(report)
    for key in SECTIONS:
        assert f'<section id="{key}">' in page
    assert "not run" not in page and "Findings" not in page and "AmLight" not in page
    # Nothing outside the file: no address at all, no external stylesheet, script or image.
    assert "http" not in page
    assert not re.search(r"<(script|link|img)\b", page)


def test_outcomes_one_chart_per_metric_one_panel_per_axis(tiny_report: Report):
    outcomes = tiny_report.sections["outcomes"]
    assert [c.caption.split(" (")[0] for c in outcomes.charts] == [
        "Completion time of the TCP transfers", "TCP goodput", "TCP retransmissions", "Peak queue"]
    for chart in outcomes.charts:
        assert [p.title for p in chart.panels] == ["by flow[0].cca", "by burst[0].duration"]
        # Each panel draws a line per value of the other axis.
        assert [k.label for k in chart.panels[0].keys] == ["burst[0].duration=1ns", "burst[0].duration=20ms"]
        assert [k.label for k in chart.panels[1].keys] == ["flow[0].cca=htcp", "flow[0].cca=bbr"]


def test_point_table_holds_each_runs_outcome(tiny_sweep: Path, tiny_report: Report):
    report = tiny_report
    table = report.sections["points"].table
    assert table.headers[:4] == ["flow[0].cca", "burst[0].duration", "runs ok", "FCT (s)"]
    flows = {r["run_id"]: r for r in open_sweep(tiny_sweep).query(
        "SELECT run_id, fct_s, retransmits FROM flows WHERE flow_id = 0").to_pylist()}
    drops = {r["run_id"]: r["n"] for r in open_sweep(tiny_sweep).query(
        "SELECT run_id, count(*) AS n FROM drops GROUP BY run_id").to_pylist()}
    assert [row[:2] for row in table.rows] == [["htcp", "1ns"], ["htcp", "20ms"], ["bbr", "1ns"], ["bbr", "20ms"]]
    for run_id, row in enumerate(table.rows):  # one rep: point i is run i
        assert row[2] == "1/1"
        assert row[3] == pytest.approx(flows[run_id]["fct_s"], abs=1e-3)
        assert row[5] == flows[run_id]["retransmits"]
        assert row[6] == drops.get(run_id, 0)


def test_json_of_a_generic_sweep(tiny_report: Report):
    obj = to_json(tiny_report)
    assert obj["study"] is None
    assert obj["runs"] == {"total": 4, "ok": 4, "error": 0}
    assert [(p["flow[0].cca"], p["burst[0].duration"]) for p in obj["grid_points"]] == [
        ("htcp", "1ns"), ("htcp", "20ms"), ("bbr", "1ns"), ("bbr", "20ms")]
    assert all(p["finished"] and p["fct_s"] > 0 for p in obj["grid_points"])
    json.dumps(obj, allow_nan=False)


def test_sections_missing_data_say_so(tmp_path: Path):
    # Reps but no grid axis: nothing to plot against; the table and time series remain.
    out = tmp_path / "s"
    sweep(TINY_BURST_SCENARIO, grid={}, reps=2, out=out, jobs=1)
    report = build(out)
    assert "no grid axis takes two or more values" in report.sections["outcomes"].missing
    assert len(report.sections["points"].table.rows) == 1
    assert report.sections["points"].table.rows[0][0] == "2/2"
    assert "Not in this sweep" in to_html(report)


# -- the CLI -----------------------------------------------------------------------------------

def test_cli_report_writes_page_and_json(tiny_sweep: Path, tmp_path: Path):
    page = tmp_path / "r.html"
    r = burstlab("report", tiny_sweep, "--out", page)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(page)
    assert page.read_text().startswith("<!DOCTYPE html>")
    assert [p.name for p in tmp_path.iterdir()] == ["r.html"]  # no temporary left beside it

    r = burstlab("report", tiny_sweep, "--format", "json")
    assert r.returncode == 0, r.stderr
    obj = json.loads(r.stdout)
    assert set(obj) == {"sweep", "scenario", "runs", "grid", "study", "notes", "grid_points", "sections"}
    assert set(obj["sections"]) == set(SECTIONS)
    assert burstlab("report", tiny_sweep, "--json").stdout == r.stdout


def test_cli_report_markdown(tiny_sweep: Path):
    r = burstlab("report", tiny_sweep, "--format", "md")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("# burstlab report: tiny-burst")
    assert "## Every grid point" in r.stdout
    assert "| flow[0].cca | burst[0].duration | runs ok |" in r.stdout
    assert "Findings" not in r.stdout and "not run" not in r.stdout


def test_cli_report_not_a_sweep(tmp_path: Path):
    r = burstlab("report", tmp_path)
    assert r.returncode == 2
    assert "not a sweep directory" in r.stderr
    assert not (tmp_path / "report.html").exists()


def test_cli_demo_help():
    r = burstlab("demo", "--help")
    assert r.returncode == 0
    assert "--jobs" in r.stdout and "--out" in r.stdout
    assert "AmLight" in r.stdout
