"""Fixtures shared by the Python tests; constants and the CLI runner are in helpers.py."""

from __future__ import annotations

import os
import subprocess
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


# -- real-kernel tests (marker `netns`): root and working `ip netns add`, else they skip --------
def _netns_unavailable() -> str | None:
    """Why namespaces cannot be used here, or None if they can."""
    if os.geteuid() != 0:
        return "needs root to create network namespaces"
    probe = f"bl-{os.getpid()}x999999-probe"
    try:
        add = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"`ip netns add` unusable: {exc}"
    if add.returncode != 0:
        return f"`ip netns add` failed: {add.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True, timeout=10)
    return None


@pytest.fixture(scope="session")
def netns_reason() -> str | None:
    return _netns_unavailable()


@pytest.fixture(autouse=True)
def _skip_without_netns(request: pytest.FixtureRequest, netns_reason: str | None) -> None:
    if request.node.get_closest_marker("netns") and netns_reason:
        pytest.skip(netns_reason)
