"""Grid ranges ``start..stop/step`` with human units, expanded exactly.

``1.5s..7.5s/0.5s`` is ``1.5s, 2s, ..., 7.5s`` (13 values): the arithmetic is
:class:`decimal.Decimal`, never ``float``, so the stop is included exactly when
``start + k * step`` lands on it, and each value is written back in the unit of ``start``.
Units are the scenario loader's (crates/sim/src/scenario/units.rs): times, rates and sizes;
the three bounds must be of one kind (``500ms..2s/250ms`` is fine, ``1s..2Gbps/1s`` is not).
Plain numbers (``1..10/1``, ``0.1..0.5/0.1``) are allowed too.
"""

from __future__ import annotations

import re
from decimal import Decimal, localcontext

from burstlab.sweep.errors import SweepError

__all__ = ["expand_range", "looks_like_range", "MAX_RANGE_VALUES"]

#: A range longer than this is almost certainly a typo (``1..1000000/1``) and would write as
#: many runs; refuse it rather than start.
MAX_RANGE_VALUES = 100_000

# Factors to the base unit of each kind; same tables as crates/sim/src/scenario/units.rs
# (TIME_UNITS in ns here: every value is exact in Decimal anyway).
_TIME = {"ns": 1, "us": 1_000, "\u00b5s": 1_000, "\u03bcs": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
_RATE = {"bps": 1, "Kbps": 10**3, "Mbps": 10**6, "Gbps": 10**9, "Tbps": 10**12,
         "kbps": 10**3, "mbps": 10**6, "gbps": 10**9, "tbps": 10**12}
_SIZE = {"B": 1, "KB": 10**3, "kB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
         "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}
_KINDS = {"time": _TIME, "rate": _RATE, "size": _SIZE, "number": {"": 1}}

_QUANTITY = r"\s*(-?\d+(?:\.\d+)?)\s*([A-Za-z\u00b5\u03bc]*)\s*"
_RANGE = re.compile(rf"^{_QUANTITY}\.\.{_QUANTITY}/{_QUANTITY}$")


def looks_like_range(text: str) -> bool:
    """Whether ``text`` is meant as a range (has ``..`` outside quotes)."""
    return ".." in text and not text.lstrip().startswith(('"', "'"))


def expand_range(text: str) -> list[str]:
    """The values of the range ``text``, formatted in the unit of its start.

    Raises :class:`SweepError` naming the range and what was expected.
    """
    m = _RANGE.match(text)
    if m is None:
        raise SweepError(
            f"range {text!r}: expected start..stop/step, such as 1.5s..7.5s/0.5s or 1..10/1"
        )
    start, stop, step = (_quantity(text, m.group(i), m.group(i + 1)) for i in (1, 3, 5))
    kinds = {start[1], stop[1], step[1]}
    if len(kinds) != 1:
        raise SweepError(f"range {text!r}: start, stop and step must be of one kind, found {sorted(kinds)}")
    unit, factor = m.group(2), start[2]
    lo, hi, by = start[0], stop[0], step[0]
    if by <= 0:
        raise SweepError(f"range {text!r}: step must be positive")
    if hi < lo:
        raise SweepError(f"range {text!r}: stop is below start")
    count = int((hi - lo) // by) + 1
    if count > MAX_RANGE_VALUES:
        raise SweepError(f"range {text!r}: {count} values, more than {MAX_RANGE_VALUES}")
    # A plain-number range written with a decimal point stays a TOML float (``2.0``, not ``2``).
    as_float = start[1] == "number" and any("." in m.group(i) for i in (1, 3, 5))
    return [_format(lo + k * by, factor, as_float) + unit for k in range(count)]


def _quantity(text: str, number: str, unit: str) -> tuple[Decimal, str, int]:
    """(value in the kind's base unit, kind, factor of ``unit``)."""
    for kind, units in _KINDS.items():
        if unit in units:
            if kind != "number" and number.startswith("-"):
                raise SweepError(f"range {text!r}: {number}{unit} is negative")
            return Decimal(number) * units[unit], kind, units[unit]
    raise SweepError(
        f"range {text!r}: unknown unit {unit!r}; expected a time (ns, us, ms, s), "
        "a rate (bps, Kbps, Mbps, Gbps, Tbps) or a size (B, KB, MB, GB, KiB, MiB, GiB)"
    )


def _format(base: Decimal, factor: int, as_float: bool) -> str:
    """``base / factor`` as the shortest exact decimal: ``2.000`` -> ``2``, ``1.50`` -> ``1.5``."""
    with localcontext() as ctx:
        ctx.prec = 80  # dividing by 2**40 needs up to 40 fractional digits; all stay exact
        text = format((base / factor).normalize(ctx), "f")
    if as_float and "." not in text:
        text += ".0"
    return text
