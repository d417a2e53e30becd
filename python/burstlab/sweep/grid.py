"""The grid of a sweep: ``--grid path=v1,v2,...`` axes and their Cartesian product.

A value is what ``--set`` takes (a TOML scalar such as ``3``, ``true``, ``"x"``, or bare text
such as ``100ms``, ``reno``) or a range ``start..stop/step`` (:mod:`burstlab.sweep.ranges`).
Commas inside brackets or quotes do not split, so ``[46, 10]`` is one value.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from burstlab.api import override_value
from burstlab.sweep.errors import SweepError
from burstlab.sweep.ranges import expand_range, looks_like_range

__all__ = ["Axis", "Point", "parse_grid_arg", "axes_from_mapping", "points"]

_OPEN, _CLOSE = "[{", "]}"


@dataclass(frozen=True)
class Axis:
    """One swept path and its values, in the order given."""

    path: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class Point:
    """One grid point: a value per axis, as ``--set`` overrides."""

    index: int
    assignments: tuple[tuple[str, str], ...]

    @property
    def overrides(self) -> list[str]:
        return [f"{path}={value}" for path, value in self.assignments]

    def canonical(self) -> str:
        """The point as ``path=value`` lines: what its seed and identity derive from."""
        return "\n".join(self.overrides)


def parse_grid_arg(arg: str) -> Axis:
    """``"topology.rtt=1ms,5ms..20ms/5ms"`` -> ``Axis("topology.rtt", ("1ms", "5ms", ...))``."""
    path, sep, raw = arg.partition("=")
    path = path.strip()
    if not sep or not path:
        raise SweepError(f"--grid {arg!r}: expected path=v1,v2,... such as topology.rtt=1ms,10ms")
    return _axis(path, _split(raw, arg))


def axes_from_mapping(grid: Mapping[str, Any]) -> list[Axis]:
    """The Python API's ``grid={path: values}``: ``values`` is a list of scalars, or a string
    as written after ``--grid path=``."""
    axes = []
    for path, values in grid.items():
        if isinstance(values, str):
            axes.append(parse_grid_arg(f"{path}={values}"))
        elif isinstance(values, Iterable):
            axes.append(_axis(str(path), [override_value(v) for v in values]))
        else:
            axes.append(_axis(str(path), [override_value(values)]))
    return axes


def points(axes: Sequence[Axis]) -> Iterator[Point]:
    """The Cartesian product, the first axis varying slowest (like nested loops in order)."""
    _check_unique([a.path for a in axes], "grid path", "given twice")
    combos = itertools.product(*(a.values for a in axes))
    for index, values in enumerate(combos):
        yield Point(index, tuple(zip((a.path for a in axes), values, strict=True)))


def _axis(path: str, items: list[str]) -> Axis:
    values: list[str] = []
    for item in items:
        item = item.strip()
        if not item:
            raise SweepError(f"--grid {path}: empty value (two commas in a row, or a trailing comma?)")
        if not looks_like_range(item):
            values.append(item)
            continue
        try:
            values.extend(expand_range(item))
        except SweepError as err:
            raise SweepError(f"--grid {path}: {err}") from None
    _check_unique(values, f"--grid {path}: value", "appears twice (its runs would be identical)")
    return Axis(path, tuple(values))


def _check_unique(items: Sequence[str], what: str, problem: str) -> None:
    seen: set[str] = set()
    for item in items:
        if item in seen:
            raise SweepError(f"{what} {item!r} {problem}")
        seen.add(item)


def _split(raw: str, arg: str) -> list[str]:
    """Split on commas outside brackets and quotes."""
    items, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(raw):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(raw[start:i])
            start = i + 1
    if quote or depth:
        raise SweepError(f"--grid {arg!r}: unbalanced quote or bracket")
    items.append(raw[start:])
    return items
