"""burstlab: detect, explain and mitigate microbursts.

A packet-level simulator whose TCP makes the decisions a current Linux host makes, fast enough
to replay a 100 Gbit/s, 200 ms-RTT transfer hit by a microburst in seconds; records come back as
Arrow tables.

>>> import burstlab
>>> result = burstlab.run("scenarios/amlight-209ms-burst.toml")  # doctest: +SKIP
>>> result.table("flows")                                         # doctest: +SKIP
"""

from burstlab import _core
from burstlab.api import TABLES, RunResult, run
from burstlab.errors import BurstlabError, OutputExistsError, ScenarioError

__version__: str = _core.version()

__all__ = [
    "run",
    "RunResult",
    "TABLES",
    "BurstlabError",
    "ScenarioError",
    "OutputExistsError",
    "__version__",
]
