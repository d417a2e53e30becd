"""Exceptions raised by burstlab.

Every error burstlab raises on purpose derives from :class:`BurstlabError`, so one ``except``
catches them all; each also derives from the closest built-in class (``ValueError``,
``FileExistsError``) so generic handlers keep working.
"""

from __future__ import annotations

__all__ = [
    "BurstlabError",
    "ScenarioError",
    "MemoryBudgetError",
    "OutputExistsError",
    "OutputLocationError",
    "TelemetryInputError",
    "ReplayError",
]


class BurstlabError(Exception):
    """Base class of all burstlab errors."""


class ScenarioError(BurstlabError, ValueError):
    """A scenario (file, text or ``--set`` override) is wrong.

    ``str(err)`` is one line naming the field, the value and what was expected, e.g.
    ``scenario.flows[0].cca = "cubc": expected one of "cubic", "reno"``. ``kind`` is a short
    machine-readable tag (``"syntax"``, ``"unknown_field"``, ``"invalid_value"``, ...) chosen by
    the simulator's scenario loader; ``"file"`` when the scenario file cannot be read.
    """

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind

    def __reduce__(self):  # keep the kind when pickled to a sweep worker and back
        return (type(self), (self.message, self.kind))


class MemoryBudgetError(ScenarioError):
    """A scenario whose run would hold more memory than its budget, refused before anything is
    built (kind ``"memory_budget"``): ``str(err)`` is one line naming the field that drives the
    estimate, its value, what it makes the run hold, the estimate and the budget. The budget is
    the scenario's ``memory_budget`` (``--set memory_budget=32GiB``), or half of this machine's
    memory; docs/reliability.md lists what is counted."""


class OutputExistsError(BurstlabError, FileExistsError):
    """An output location is taken: burstlab's own files without ``overwrite``, a file that
    burstlab did not write under one of its names (refused even with ``overwrite``), or a file
    where a directory is expected. Nothing was written."""


class OutputLocationError(BurstlabError, OSError):
    """An output location cannot be written: a directory burstlab may not create files in (a
    read-only file system, no permission), or a path under a file. Found before any work is
    done; nothing was written."""


class TelemetryInputError(BurstlabError, ValueError):
    """A capture, simulation directory, profile or detector option given to ``decode``/``detect``
    is unusable. ``str(err)`` is one line naming the file (and byte offset or field), the value
    and what was expected."""


class ReplayError(BurstlabError, ValueError):
    """A record ``burstlab validate --replay`` cannot run: not the JSON ``--detail`` writes, or a
    case without what its twin needs. ``str(err)`` is one line naming the case and the field,
    the value and what was expected."""
