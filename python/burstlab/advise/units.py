"""Flag values with human units, read as scenario files read them (README, "Scenario files"):
rates "10Gbps" or tc's "1gbit", times "20ms", sizes "16KB" (10^3) or "16KiB" (2^10), and
`tcp_rmem`-style triples "4096 131072 6291456"."""

from __future__ import annotations

import re

from burstlab.errors import BurstlabError


class FlagError(BurstlabError, ValueError):
    """A flag's value is not in the expected unit; the message names the flag."""


_NUMBER = r"(\d+(?:\.\d+)?(?:e[+-]?\d+)?)"
_RATE = {"bps": 1, "kbps": 1e3, "mbps": 1e6, "gbps": 1e9, "tbps": 1e12,
         "bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9, "tbit": 1e12}
_TIME = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
_SIZE = {"": 1, "b": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30}


def _parse(flag: str, text: str, units: dict, example: str) -> float:
    m = re.fullmatch(_NUMBER + r"\s*([a-zµ]*)", text.strip().lower())
    if m is None or m.group(2) not in units:
        raise FlagError(f"{flag} {text!r}: expected a value such as {example!r}")
    return float(m.group(1)) * units[m.group(2)]


def rate_bps(flag: str, text: str) -> float:
    value = _parse(flag, text, _RATE, "10Gbps")
    if value <= 0:
        raise FlagError(f"{flag} {text!r}: expected a rate above zero, such as '10Gbps'")
    return value


def seconds(flag: str, text: str) -> float:
    value = _parse(flag, text, _TIME, "20ms")
    if value <= 0:
        raise FlagError(f"{flag} {text!r}: expected a time above zero, such as '20ms'")
    return value


def size_bytes(flag: str, text: str) -> int:
    return int(_parse(flag, text, _SIZE, "16KiB"))


def triple(flag: str, text: str) -> tuple[int, int, int]:
    """`tcp_rmem`'s form: three byte counts, min <= default <= max."""
    parts = text.split()
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        raise FlagError(f"{flag} {text!r}: expected three byte counts 'min default max', such as '4096 131072 6291456'")
    low, mid, high = (int(p) for p in parts)
    if not low <= mid <= high:
        raise FlagError(f"{flag} {text!r}: expected min <= default <= max")
    return low, mid, high
