"""A directory a command cannot write in, as a user meets one (a read-only mount, a directory
without write permission), for the tests of output locations.

Permission bits do not stop root, and the tests run as root in CI, so for root the command runs
in a mount namespace of its own where the directory is bind-mounted read-only (``unshare -m``):
a real read-only file system that only that command sees. Otherwise the directory loses its
write permission for the test's duration.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = ["ReadOnly", "read_only"]


class ReadOnly:
    """Runs commands that see ``dir`` read-only."""

    def __init__(self, directory: Path, via_namespace: bool):
        self.dir = directory
        self._via_namespace = via_namespace

    def run(self, *args: str | Path) -> subprocess.CompletedProcess[str]:
        argv = [str(a) for a in args]
        if self._via_namespace:
            # Bind the directory onto itself, then make that mount read-only, in a namespace
            # that ends with the command.
            script = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"'
            argv = ["unshare", "-m", "sh", "-c", script, "sh", str(self.dir), *argv]
        return subprocess.run(argv, capture_output=True, text=True, timeout=600)

    def burstlab(self, *args: str | Path) -> subprocess.CompletedProcess[str]:
        return self.run(sys.executable, "-m", "burstlab", *args)


def _namespace_reason(probe: Path) -> str | None:
    """Why a read-only bind mount cannot be made here, or None if it can."""
    if shutil.which("unshare") is None:
        return "root ignores permission bits, and `unshare` (util-linux) is not installed"
    ro = ReadOnly(probe, via_namespace=True)
    check = ro.run("sh", "-c", 'mkdir "$0/probe" 2>/dev/null && echo writable || echo read-only', probe)
    if check.returncode != 0:
        return f"root ignores permission bits, and a read-only bind mount failed: {check.stderr.strip()}"
    if check.stdout.strip() != "read-only":
        return "root ignores permission bits, and the read-only bind mount was still writable"
    return None


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[ReadOnly]:
    directory = tmp_path / "read-only"
    directory.mkdir()
    (directory / "keep.txt").write_text("the user's")
    if os.geteuid() == 0:
        reason = _namespace_reason(directory)
        if reason:
            pytest.skip(reason)
        yield ReadOnly(directory, via_namespace=True)
        return
    directory.chmod(0o555)
    try:
        yield ReadOnly(directory, via_namespace=False)
    finally:
        directory.chmod(0o755)
