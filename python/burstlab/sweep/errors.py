"""Errors of a sweep's *definition* (as opposed to a failed run, which is recorded, not raised)."""

from __future__ import annotations

from burstlab.errors import BurstlabError

__all__ = ["SweepError", "SweepMismatchError"]


class SweepError(BurstlabError, ValueError):
    """The sweep itself is wrong: a ``--grid`` with bad range syntax, an unknown grid path, a
    duplicated value. Nothing is run. The CLI exits with status 2."""


class SweepMismatchError(SweepError):
    """The output directory holds a different sweep (``sweep.json`` differs), so resuming into
    it would mix results of two definitions."""
