"""`burstlab demo --full`: the full AmLight study's grid is the documented sweep's, and its
repeated points (the seeds/ part) run on the demo's own seeds, so that both judge experiment A's
points on the same three runs (docs/amlight.md, "One seed or three")."""

from __future__ import annotations

from pathlib import Path

from burstlab.cli.demo import DEMO_GRID, DEMO_REPS, FULL_GRID, SEEDS_GRID
from burstlab.sweep.grid import axes_from_mapping, parse_grid_arg, points
from burstlab.sweep.seeds import run_seed


def _seeds(grid: dict[str, list[str]], reps: int) -> dict[tuple[tuple[str, str], ...], list[int]]:
    return {tuple(sorted(p.assignments)): [run_seed(0, p, k) for k in range(reps)]
            for p in points(axes_from_mapping(grid))}


def test_full_grid_is_the_documented_sweep_in_its_order():
    # docs/amlight.md, "The full study": each run's seed derives from its point's lines in this order.
    documented = [parse_grid_arg(a) for a in (
        "topology.rtt=209ms,301ms", "flow[0].cca=htcp,bbr",
        "burst[0].duration=1ns,25ms,50ms,100ms,500ms,1000ms,2000ms", "burst[0].start=1.5s..7.5s/0.5s")]
    assert [(a.path, list(a.values)) for a in documented] == list(FULL_GRID.items())
    assert len(list(points(axes_from_mapping(FULL_GRID)))) == 364


def test_seeds_part_runs_the_demos_seeds_at_experiment_a():
    demo = _seeds(DEMO_GRID, DEMO_REPS)
    repeated = _seeds(SEEDS_GRID, DEMO_REPS)
    assert len(repeated) == 14  # both CCAs, the baseline and six durations, at 1.5 s
    assert all(("burst[0].start", "1.5s") in point for point in repeated)
    for point, seeds in repeated.items():
        assert seeds == demo[point], point
    # The grid's own seed at those points is another one: the seeds/ part replaces it.
    full = _seeds(FULL_GRID, 1)
    point = (("burst[0].duration", "500ms"), ("burst[0].start", "1.5s"), ("flow[0].cca", "bbr"))
    assert full[tuple(sorted((*point, ("topology.rtt", "209ms"))))][0] not in demo[point]


def test_quick_and_full_together_are_refused(tmp_path):
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "burstlab", "demo", "--quick", "--full"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "--quick and --full: choose one" in r.stderr
    assert not any(tmp_path.iterdir())  # nothing written


def test_full_runs_its_parts_into_one_study_and_reports_it(tmp_path, monkeypatch, capsys):
    # The two-part path of `burstlab demo --full`, on the study's scenario shrunk to a 200 MB
    # transfer: the grid into DIR, the repeated points into DIR/seeds, one report over both.
    from rich.console import Console

    from burstlab.cli import demo

    text = demo.scenario_text().replace('size = "13GiB"', 'size = "200MB"').replace('stop = "80s"', 'stop = "20s"')
    assert 'size = "200MB"' in text and 'stop = "20s"' in text
    monkeypatch.setattr(demo, "scenario_text", lambda: text)
    grid = {"flow[0].cca": ["htcp", "bbr"], "burst[0].duration": ["1ns", "100ms"]}
    seeds = {"flow[0].cca": ["bbr"], "burst[0].duration": ["100ms"]}
    out = tmp_path / "study"
    code = demo._demo(out, 2, [(Path(), grid, 1), (Path("seeds"), seeds, 2)], Console(stderr=True))
    assert code == 0
    assert (out / "sweep.json").is_file() and (out / "seeds" / "sweep.json").is_file()
    printed = capsys.readouterr()
    assert "demo: 6 runs (0 resumed, 0 failed)" in printed.err
    # BBR's 100 ms point is judged on its two seeds, and says so.
    assert "(seeds " in printed.out and "of 2 pass" in printed.out
