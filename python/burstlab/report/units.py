"""Times as the scenario loader writes them (``"25ms"``, ``"1.5s"``), read back as seconds, and
printed for people."""

from __future__ import annotations

import math
import re

__all__ = ["seconds", "format_duration"]

# The loader's time units (crates/sim/src/scenario/units.rs, TIME_UNITS and TIME_ALIASES): ns, us
# (also micro sign and Greek mu), ms, s. A bare number is taken as seconds.
_UNIT_S = {"ns": 1e-9, "us": 1e-6, "\u00b5s": 1e-6, "\u03bcs": 1e-6, "ms": 1e-3, "s": 1.0}
_TIME = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(ns|us|\u00b5s|\u03bcs|ms|s)?\s*$")


def seconds(value: object) -> float:
    """``value`` (``"209ms"``, ``"1.5s"``, ``2``, ``0.5``) in seconds.

    Raises ``ValueError`` for anything else, naming the value.
    """
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a time")
    if isinstance(value, (int, float)):
        return float(value)
    match = _TIME.match(str(value))
    if match is None:
        raise ValueError(f"{value!r} is not a time such as \"100ms\"")
    return float(match.group(1)) * _UNIT_S[match.group(2) or "s"]


def format_duration(s: float) -> str:
    """``0.025`` -> ``"25 ms"``, ``1.5`` -> ``"1.5 s"``, ``0`` -> ``"none"``."""
    if s == 0:
        return "none"
    if math.isinf(s):
        return "∞"
    if s < 1:
        return f"{s * 1e3:g} ms"
    return f"{s:g} s"
