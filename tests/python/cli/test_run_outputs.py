"""``burstlab run``'s outputs: --overwrite replaces only burstlab's files; every location is
checked before the simulation starts, with one line and exit 2; nothing is half-written
(mirrors python/burstlab/cli/run.py and python/burstlab/outputs.py)."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from burstlab.cli import status
from helpers import OUTPUT_FILES, burstlab
from read_only import read_only  # noqa: F401 - a fixture

SCENARIOS = Path(__file__).resolve().parents[3] / "scenarios"
INT_SCENARIO = SCENARIOS / "int-burst.toml"
# Pcap global header magics, little-endian: microsecond and nanosecond timestamps.
PCAP_MAGICS = {bytes.fromhex("d4c3b2a1"), bytes.fromhex("4d3cb2a1")}


def one_line_refusal(proc, *needles: str) -> None:
    """Exit 2, one line on stderr naming each of ``needles``, and no simulation output: interval
    lines come as the run proceeds, so an empty stdout means the run never started."""
    assert proc.returncode == status.BAD_INPUT, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    assert proc.stdout == ""


# ---- --out and --overwrite ---------------------------------------------------------------------


def test_overwrite_keeps_the_users_files_and_the_directorys_mode(small_scenario, tmp_path):
    out = tmp_path / "results"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    (out / "plots").mkdir()
    (out / "plots" / "fct.png").write_bytes(b"png")
    out.chmod(0o751)

    first = burstlab("run", small_scenario, "--out", out)
    assert first.returncode == status.SUCCESS, first.stderr
    again = burstlab("run", small_scenario, "--out", out, "--overwrite", "--set", "seed=4")
    assert again.returncode == status.SUCCESS, again.stderr

    assert {p.name for p in out.iterdir()} == OUTPUT_FILES | {"notes.txt", "plots"}
    assert json.loads((out / "summary.json").read_text())["seed"] == 4
    assert (out / "notes.txt").read_text() == "mine"
    assert (out / "plots" / "fct.png").read_bytes() == b"png"
    assert stat.S_IMODE(out.stat().st_mode) == 0o751
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results", "small.toml"]  # nothing staged left


@pytest.mark.parametrize("name", ["summary.json", "intervals.parquet"])
def test_a_file_burstlab_did_not_write_is_refused_even_with_overwrite(small_scenario, tmp_path, name):
    out = tmp_path / "results"
    out.mkdir()
    (out / name).write_text("the user's own")
    proc = burstlab("run", small_scenario, "--out", out, "--overwrite")
    one_line_refusal(proc, f"--out {out}", name, "not written by burstlab")
    assert [p.name for p in out.iterdir()] == [name]
    assert (out / name).read_text() == "the user's own"


def test_out_under_a_file_is_refused_before_the_run(small_scenario, tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    proc = burstlab("run", small_scenario, "--out", tmp_path / "notes.txt" / "run")
    one_line_refusal(proc, "--out", "notes.txt is a file, not a directory")
    assert (tmp_path / "notes.txt").read_text() == "mine"


@pytest.mark.parametrize("where", [".", "runs/a"])
def test_a_read_only_out_is_refused_before_the_run(read_only, small_scenario, where):
    out = read_only.dir / where
    proc = read_only.burstlab("run", small_scenario, "--out", out)
    one_line_refusal(proc, f"--out {out}", f"cannot write in {read_only.dir}")
    assert [p.name for p in read_only.dir.iterdir()] == ["keep.txt"]
    assert not list(read_only.dir.parent.glob(".*.old")) and not list(read_only.dir.parent.glob(".*partial"))


# ---- --int-pcap --------------------------------------------------------------------------------


def test_int_pcap_without_int_ports_is_refused_before_the_run(small_scenario, tmp_path):
    out, pcap = tmp_path / "run", tmp_path / "int.pcap"
    proc = burstlab("run", small_scenario, "--out", out, "--int-pcap", pcap)
    one_line_refusal(proc, f"--int-pcap {pcap}", "int_ports", "small-cubic")
    assert not out.exists() and not pcap.exists()


def test_int_pcap_refuses_an_existing_file_without_overwrite(tmp_path):
    out, pcap = tmp_path / "run", tmp_path / "int.pcap"
    pcap.write_bytes(b"an earlier capture")
    proc = burstlab("run", INT_SCENARIO, "--out", out, "--int-pcap", pcap)
    one_line_refusal(proc, f"--int-pcap {pcap}", "exists", "--overwrite")
    assert pcap.read_bytes() == b"an earlier capture"
    assert not out.exists()


def test_int_pcap_with_overwrite_replaces_the_file(tmp_path):
    out, pcap = tmp_path / "run", tmp_path / "int.pcap"
    pcap.write_bytes(b"an earlier capture")
    proc = burstlab("run", INT_SCENARIO, "--out", out, "--int-pcap", pcap, "--overwrite", "--json")
    assert proc.returncode == status.SUCCESS, proc.stderr
    assert pcap.read_bytes()[:4] in PCAP_MAGICS
    assert {p.name for p in out.iterdir()} == OUTPUT_FILES
    assert sorted(p.name for p in tmp_path.iterdir()) == ["int.pcap", "run"]  # nothing staged left


def test_int_pcap_makes_its_directory_as_out_does(tmp_path):
    # The README's example: both outputs in a runs/ that does not exist yet.
    runs = tmp_path / "runs"
    proc = burstlab("run", INT_SCENARIO, "--out", runs / "int", "--int-pcap", runs / "int.pcap", "--json")
    assert proc.returncode == status.SUCCESS, proc.stderr
    assert sorted(p.name for p in runs.iterdir()) == ["int", "int.pcap"]


def test_int_pcap_under_a_file_is_refused_before_the_run(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    out, pcap = tmp_path / "run", tmp_path / "notes.txt" / "int.pcap"
    proc = burstlab("run", INT_SCENARIO, "--out", out, "--int-pcap", pcap)
    one_line_refusal(proc, "--int-pcap", "notes.txt is a file, not a directory")
    assert not out.exists()


def test_int_pcap_in_a_read_only_directory_is_refused_before_the_run(read_only, tmp_path):
    out, pcap = tmp_path / "run", read_only.dir / "int.pcap"
    proc = read_only.burstlab("run", INT_SCENARIO, "--out", out, "--int-pcap", pcap)
    one_line_refusal(proc, f"--int-pcap {pcap}", "cannot write in")
    assert not out.exists()


def test_a_bad_int_version_is_refused_before_the_run(tmp_path):
    proc = burstlab("run", INT_SCENARIO, "--int-pcap", tmp_path / "int.pcap", "--int-version", "3.0")
    one_line_refusal(proc, "--int-version 3.0", "1.0, 2.0")
    assert list(tmp_path.iterdir()) == []
