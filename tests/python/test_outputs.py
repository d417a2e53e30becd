"""burstlab.outputs through ``RunResult.write``: burstlab replaces only what it wrote, keeps the
directory's other entries and mode, and writes all or nothing (mirrors python/burstlab/outputs.py)."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

import burstlab
from burstlab import outputs
from burstlab.errors import OutputExistsError, OutputLocationError
from helpers import OUTPUT_FILES, SMALL_SCENARIO
from read_only import read_only  # noqa: F401 - a fixture

MANIFEST = outputs.MANIFEST


@pytest.fixture(scope="module")
def result() -> burstlab.RunResult:
    return burstlab.run(SMALL_SCENARIO)


@pytest.fixture
def users_dir(tmp_path: Path) -> Path:
    """A directory of the user's: mode 0751, a file, and a sub-directory with a file."""
    d = tmp_path / "results"
    d.mkdir()
    (d / "notes.txt").write_text("mine")
    (d / "plots").mkdir()
    (d / "plots" / "fct.png").write_bytes(b"\x89PNG")
    d.chmod(0o751)
    return d


def users_entries_intact(d: Path) -> None:
    assert (d / "notes.txt").read_text() == "mine"
    assert (d / "plots" / "fct.png").read_bytes() == b"\x89PNG"
    assert stat.S_IMODE(d.stat().st_mode) == 0o751


def hidden_leftovers(d: Path) -> list[str]:
    """Staging or set-aside entries a write may have left (it must leave none)."""
    return [p.name for p in d.iterdir() if p.name.startswith(".") and p.name != MANIFEST]


# ---- where burstlab may write ---------------------------------------------------------------


def test_writes_beside_the_users_files_without_touching_them(result, users_dir):
    result.write(users_dir)
    assert {p.name for p in users_dir.iterdir()} == OUTPUT_FILES | {"notes.txt", "plots"}
    users_entries_intact(users_dir)
    assert hidden_leftovers(users_dir) == []


def test_manifest_names_every_file_with_its_size_and_digest(result, tmp_path):
    out = result.write(tmp_path / "run")
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["written_by"] == f"burstlab {burstlab.__version__}"
    assert set(manifest["files"]) == OUTPUT_FILES - {MANIFEST}
    for name, entry in manifest["files"].items():
        assert entry["bytes"] == (out / name).stat().st_size
        assert entry["sha256"] == outputs._sha256(out / name)


def test_a_new_directory_gets_the_umasks_mode_not_0700(result, tmp_path):
    old = os.umask(0o022)
    try:
        out = result.write(tmp_path / "deep" / "run")
    finally:
        os.umask(old)
    assert stat.S_IMODE(out.stat().st_mode) == 0o755
    assert stat.S_IMODE((tmp_path / "deep").stat().st_mode) == 0o755


# ---- overwrite ---------------------------------------------------------------------------------


def test_existing_output_needs_overwrite(result, users_dir):
    result.write(users_dir)
    before = {p.name: p.read_bytes() for p in users_dir.iterdir() if p.is_file()}
    with pytest.raises(OutputExistsError, match=r"already holds burstlab output .*overwrite=True"):
        result.write(users_dir)
    assert {p.name: p.read_bytes() for p in users_dir.iterdir() if p.is_file()} == before


def test_overwrite_replaces_burstlabs_files_only_and_keeps_the_mode(result, users_dir):
    result.write(users_dir)
    other = burstlab.run(SMALL_SCENARIO, set={"seed": 5})
    other.write(users_dir, overwrite=True)
    assert json.loads((users_dir / "summary.json").read_text())["seed"] == 5
    assert {p.name for p in users_dir.iterdir()} == OUTPUT_FILES | {"notes.txt", "plots"}
    users_entries_intact(users_dir)
    assert hidden_leftovers(users_dir) == []


@pytest.mark.parametrize("overwrite", [False, True])
@pytest.mark.parametrize("name", ["summary.json", "flows.parquet", MANIFEST])
def test_a_file_burstlab_did_not_write_is_refused_even_with_overwrite(result, users_dir, name, overwrite):
    (users_dir / name).write_text("the user's own")
    with pytest.raises(OutputExistsError, match=rf"{name} was not written by burstlab"):
        result.write(users_dir, overwrite=overwrite)
    assert (users_dir / name).read_text() == "the user's own"
    assert not (users_dir / "intervals.parquet").exists()
    users_entries_intact(users_dir)


def test_a_file_changed_since_burstlab_wrote_it_is_refused(result, users_dir):
    result.write(users_dir)
    summary = users_dir / "summary.json"
    summary.write_text(summary.read_text().replace('"seed": 1', '"seed": 1, "note": "checked"'))
    with pytest.raises(OutputExistsError, match="summary.json was not written by burstlab"):
        result.write(users_dir, overwrite=True)
    assert '"note": "checked"' in summary.read_text()


def test_a_symlink_under_burstlabs_name_is_refused(result, users_dir):
    result.write(users_dir)
    (users_dir / "queue.parquet").unlink()
    (users_dir / "queue.parquet").symlink_to(users_dir / "notes.txt")
    with pytest.raises(OutputExistsError, match="queue.parquet was not written by burstlab"):
        result.write(users_dir, overwrite=True)
    assert (users_dir / "queue.parquet").is_symlink()


# ---- locations that cannot be written ----------------------------------------------------------


def test_a_file_in_the_way_is_refused(result, tmp_path):
    (tmp_path / "run").write_text("a file")
    with pytest.raises(OutputExistsError, match="not a directory"):
        result.write(tmp_path / "run", overwrite=True)
    assert (tmp_path / "run").read_text() == "a file"


def test_a_path_under_a_file_is_refused_before_anything_is_made(result, tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(OutputLocationError, match=r"notes.txt is a file, not a directory"):
        result.write(tmp_path / "notes.txt" / "runs" / "a")
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


WRITE_INTO = """
import sys, burstlab
from burstlab.errors import OutputLocationError
result = burstlab.run(sys.argv[1])
try:
    result.write(sys.argv[2])
except OutputLocationError as err:
    print(err)
    sys.exit(3)
"""


@pytest.mark.parametrize("where", [".", "runs/a"])
def test_an_unwritable_directory_is_refused(read_only, small_scenario, where):
    out = read_only.dir / where
    proc = read_only.run(sys.executable, "-c", WRITE_INTO, small_scenario, out)
    assert proc.returncode == 3, proc.stderr
    assert f"out_dir {out}: cannot write in {read_only.dir}" in proc.stdout
    assert [p.name for p in read_only.dir.iterdir()] == ["keep.txt"]


# ---- all or nothing ----------------------------------------------------------------------------


def failing_on_call(n: int, exc: BaseException):
    """A ``pq.write_table`` stand-in that writes a stub and raises ``exc`` on call ``n``."""
    calls = []

    def write_table(table, where, **kwargs):
        calls.append(where)
        if len(calls) == n:
            raise exc
        Path(where).write_bytes(b"x")

    return write_table


@pytest.mark.parametrize("exc", [OSError("disk full"), KeyboardInterrupt()])
def test_a_failed_first_write_leaves_nothing(result, tmp_path, monkeypatch, exc):
    monkeypatch.setattr("pyarrow.parquet.write_table", failing_on_call(2, exc))
    with pytest.raises(type(exc)):
        result.write(tmp_path / "new" / "run")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("exc", [OSError("disk full"), KeyboardInterrupt()])
def test_a_failed_overwrite_keeps_the_previous_output(result, users_dir, monkeypatch, exc):
    result.write(users_dir)
    before = {p.name: p.read_bytes() for p in users_dir.iterdir() if p.is_file()}
    monkeypatch.setattr("pyarrow.parquet.write_table", failing_on_call(3, exc))
    with pytest.raises(type(exc)):
        result.write(users_dir, overwrite=True)
    assert {p.name: p.read_bytes() for p in users_dir.iterdir() if p.is_file()} == before
    assert hidden_leftovers(users_dir) == []


def test_a_rename_failing_midway_puts_the_previous_output_back(result, users_dir, monkeypatch):
    result.write(users_dir)
    before = {p.name: p.read_bytes() for p in users_dir.iterdir() if p.is_file()}
    real_rename = os.rename
    placed = []

    def rename(src, dst):
        # Fail on the third file moved from the staging directory into place.
        if ".burstlab-staging." in str(src):
            placed.append(dst)
            if len(placed) == 3:
                raise OSError("I/O error")
        real_rename(src, dst)

    monkeypatch.setattr(outputs.os, "rename", rename)
    with pytest.raises(OSError, match="I/O error"):
        burstlab.run(SMALL_SCENARIO, set={"seed": 9}).write(users_dir, overwrite=True)
    monkeypatch.undo()
    assert {p.name: p.read_bytes() for p in users_dir.iterdir() if p.is_file()} == before
    assert hidden_leftovers(users_dir) == []
    users_entries_intact(users_dir)
