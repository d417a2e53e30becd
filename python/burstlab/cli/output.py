"""How a verb that returns one result dict shows it: one JSON line with `--json`, else its
text view on a console wide enough for tables when stdout is not a terminal."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

from rich.console import Console

from burstlab.cli import status

#: A table piped to a file or `less` keeps its rows whole at this width.
PIPE_WIDTH = 160


def wide_console() -> Console:
    """stdout's console; piped, at least PIPE_WIDTH columns wide."""
    console = Console(highlight=False)
    if not console.is_terminal:
        console.width = max(console.width, PIPE_WIDTH)
    return console


def emit(result: dict[str, Any], as_json: bool, show: Callable[[dict[str, Any]], None]) -> int:
    """Print `result` as one JSON line or with `show`; the verb's exit status."""
    if as_json:
        sys.stdout.write(json.dumps(result) + "\n")
    else:
        show(result)
    return status.SUCCESS
