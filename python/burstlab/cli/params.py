"""The parameters several verbs share, declared once so their names, metavars and help agree."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

#: The scenario a verb reads: a TOML file, or a name in burstlab's catalogue.
Scenario = Annotated[
    Path,
    typer.Argument(
        metavar="SCENARIO.toml",
        help="Scenario file (TOML), or the name of one in burstlab's catalogue "
        "(amlight-209ms-burst; python -m burstlab.catalogue lists them).",
    ),
]

#: ``--set PATH=VALUE`` overrides, as ``burstlab.run(set=...)`` takes them.
Overrides = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        metavar="PATH=VALUE",
        help="Override one scenario field, e.g. --set topology.rtt=100ms (repeatable).",
    ),
]
