"""Type stub of ``burstlab._core``, the Rust extension (crates/bindings). Private: use
:func:`burstlab.run`."""

from typing import TypedDict

import numpy as np
import numpy.typing as npt

# A column as it crosses from Rust: a NumPy array (u64, i64, f64, bool), a list of optional
# strings, or a dictionary-encoded string column as (uint32 codes, distinct values).
RawColumn = (
    npt.NDArray[np.uint64]
    | npt.NDArray[np.int64]
    | npt.NDArray[np.float64]
    | npt.NDArray[np.bool_]
    | list[str | None]
    | tuple[npt.NDArray[np.uint32], list[str]]
)

class RawRun(TypedDict):
    summary_json: str
    tables: dict[str, dict[str, RawColumn]]

def run(scenario_toml: str, overrides: list[str] = ...) -> RawRun:
    """Load, validate and simulate; returns ``{"summary_json": str, "tables": {...}}``.

    Raises :class:`burstlab.errors.ScenarioError`. Releases the GIL while simulating.
    """

def load_scenario(text: str, overrides: list[str] = ...) -> str:
    """Validate a scenario; returns the normalised scenario as JSON."""

def version() -> str:
    """Version of the simulator compiled into this module."""
