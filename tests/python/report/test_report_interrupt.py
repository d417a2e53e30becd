"""Ctrl-C during ``burstlab report``: it stops within a second, says so in one line, exits 130,
and leaves the page as it was (the new one is written whole or not at all)."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from burstlab.report import build, stop, write
from burstlab.sweep import sweep
from helpers import SMALL_SCENARIO

# ``burstlab report`` as ``python -m burstlab`` runs it, except that it says "rendering" on stderr
# when it starts drawing the page's figures (the longest part), so the test knows the signal
# lands inside the report's own work rather than in Python's start-up.
_ANNOUNCING_CLI = """
import sys
import burstlab.report.figures as figures
_svg = figures.svg
def svg(fig):
    if not svg.said:
        svg.said = True
        sys.stderr.write("rendering\\n")
        sys.stderr.flush()
    return _svg(fig)
svg.said = False
figures.svg = svg
from burstlab.cli import main
sys.argv = ["burstlab", *sys.argv[1:]]
main()
"""


@pytest.fixture(scope="module")
def small_sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("interrupt") / "sweep"
    result = sweep(SMALL_SCENARIO, grid={"flow[0].cca": ["cubic", "reno"], "topology.rtt": ["1ms", "2ms"]},
                   out=out, jobs=2)
    assert result.summary is not None and result.summary.ok == 4
    return out


def test_sigint_while_rendering_stops_within_a_second(small_sweep: Path):
    page = small_sweep / "report.html"
    page.write_text("the previous report\n")
    proc = subprocess.Popen([sys.executable, "-c", _ANNOUNCING_CLI, "report", str(small_sweep)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        ready, _, _ = select.select([proc.stderr], [], [], 120)
        assert ready, "the report never started rendering"
        assert proc.stderr.readline() == "rendering\n"
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=30)
        elapsed = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    assert elapsed < 1.0
    assert stderr.splitlines() == [f"burstlab report: interrupted; {page} not written"]
    assert stdout == ""
    assert page.read_text() == "the previous report\n"
    assert not list(small_sweep.glob(".*partial*"))


def test_write_interrupted_between_write_and_rename_leaves_old_page(small_sweep: Path, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch):
    report = build(small_sweep)
    page = tmp_path / "report.html"
    page.write_text("old\n")

    def interrupted(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write(report, page)
    assert page.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]  # no temporary left behind
    monkeypatch.undo()
    write(report, page)
    assert page.read_text().startswith("<!DOCTYPE html>")
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]


def test_interrupt_dropped_inside_a_finalizer_is_raised_at_the_next_step(capfd: pytest.CaptureFixture[str]):
    # Python drops an exception raised in __del__ (or a weakref callback, as matplotlib has
    # many) and prints "Exception ignored"; the report must neither lose the Ctrl-C nor print that.
    class SignalledWhileFinalised:
        def __del__(self) -> None:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1.0)  # the handler runs here, inside __del__

    with stop.catching():
        SignalledWhileFinalised()  # finalised at once: the interrupt is dropped
        with pytest.raises(KeyboardInterrupt):
            stop.check()
    assert capfd.readouterr().err == ""
    stop.check()  # outside catching(): nothing pending
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
