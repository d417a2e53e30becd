"""Durations printed for people."""

from __future__ import annotations

import math

__all__ = ["format_duration"]


def format_duration(s: float) -> str:
    """``0.025`` -> ``"25 ms"``, ``1.5`` -> ``"1.5 s"``, ``0`` -> ``"none"``."""
    if s == 0:
        return "none"
    if math.isinf(s):
        return "∞"
    if s < 1:
        return f"{s * 1e3:g} ms"
    return f"{s:g} s"
