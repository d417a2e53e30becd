"""burstlab: detect, explain and mitigate microbursts.

A packet-level simulator whose TCP makes the decisions a current Linux host makes, fast enough
to replay a 100 Gbit/s, 200 ms-RTT transfer hit by a microburst in seconds; records come back as
Arrow tables.

>>> import burstlab
>>> result = burstlab.run("scenarios/amlight-209ms-burst.toml")  # doctest: +SKIP
>>> result.table("flows")                                         # doctest: +SKIP

The names below are loaded when first used, so that ``import burstlab`` (and the ``burstlab``
command, which imports it) does not pay for pyarrow and numpy, or even the simulator, until
something needs them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from burstlab.errors import BurstlabError, OutputExistsError, ScenarioError

if TYPE_CHECKING:
    from burstlab.api import TABLES, RunResult, run

    __version__: str

__all__ = [
    "run",
    "RunResult",
    "TABLES",
    "BurstlabError",
    "ScenarioError",
    "OutputExistsError",
    "__version__",
]

#: Attributes of :mod:`burstlab.api` re-exported here, imported on first access.
_FROM_API = ("run", "RunResult", "TABLES")


def __getattr__(name: str) -> Any:
    if name in _FROM_API:
        from burstlab import api

        value = getattr(api, name)
    elif name == "__version__":
        from burstlab import _core

        value = _core.version()
    else:
        raise AttributeError(f"module 'burstlab' has no attribute {name!r}")
    globals()[name] = value  # later lookups find it without calling __getattr__
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
