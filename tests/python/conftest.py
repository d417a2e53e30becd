"""Fixtures shared by the Python tests; constants and the CLI runner are in helpers.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import BAD_CCA_SCENARIO, SMALL_SCENARIO


@pytest.fixture
def small_scenario(tmp_path: Path) -> Path:
    path = tmp_path / "small.toml"
    path.write_text(SMALL_SCENARIO)
    return path


@pytest.fixture
def bad_scenario(tmp_path: Path) -> Path:
    path = tmp_path / "bad.toml"
    path.write_text(BAD_CCA_SCENARIO)
    return path
