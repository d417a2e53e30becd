"""Sweep fixtures: worker processes (local pools, Dask workers, the CLI in a subprocess) must
import the burstlab under test, whichever checkout the editable install points at."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import burstlab


@pytest.fixture(autouse=True)
def _workers_import_this_burstlab(monkeypatch: pytest.MonkeyPatch) -> None:
    package_root = str(Path(burstlab.__file__).resolve().parents[1])
    rest = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", package_root + (os.pathsep + rest if rest else ""))
