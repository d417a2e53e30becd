"""`burstlab study dc`: -j reaches the web-search part's worker pool, and the catalogue's
footer says how dc uses the CPUs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from burstlab.cli import build_app
from burstlab.report.dc import study as dc_study


def _all_but_websearch() -> dict[str, Any]:
    fit = {"phase1_bps": [2e9], "phase2_bps": [0.9e9]}
    return {"law1": fit, "law1_staggered": fit, "law2": {n: fit for n in ("3", "6", "9")},
            "law3": {kb: fit for kb in ("128", "256", "512")},
            "secn_peaks": {k: [40e3] for k in ("dctcp", "dctcp-k2", "dequeue", "s-ecn", "dctcp-36", "s-ecn-36")},
            "goodput": {k: 941.5e6 for k in dc_study.MARKING},
            "incast": {f"{k}-{n}": [0.01] for k in dc_study.MARKING for n in dc_study.INCAST_SENDERS}}


@pytest.mark.parametrize(("args", "jobs"), [(["-j", "3"], 3), ([], None)])
def test_study_dc_passes_jobs_to_the_web_search_workers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         args: list[str], jobs: int | None):
    (tmp_path / dc_study.STUDY_FILE).write_text(json.dumps(_all_but_websearch()))
    asked: list[tuple[float, int | None]] = []
    ws = {"qct_s": [0.5], "fct_s": {c: [0.5] for c in ("small", "medium", "large")}, "wall_s": 1.0}

    def websearch(seconds: float, *, jobs: int | None = None, sets: tuple[str, ...] = ()) -> dict[str, Any]:
        asked.append((seconds, jobs))
        return {f"{k}-{load}": ws for k in dc_study.MARKING for load in dc_study.LOADS}

    monkeypatch.setattr(dc_study, "websearch", websearch)
    ran = CliRunner().invoke(build_app(), ["study", "dc", "--out", str(tmp_path), "--json", *args])
    assert ran.exit_code == 0, ran.output
    assert asked == [(300.0, jobs)]  # the one missing part, at the paper's 5 min


def test_study_list_says_dc_runs_web_search_in_workers():
    listed = CliRunner().invoke(build_app(), ["study", "--list"])
    assert listed.exit_code == 0, listed.output
    assert "dc runs its parts one after another; web search uses one worker per CPU, or -j N" in listed.output
    assert "one process" not in listed.output
