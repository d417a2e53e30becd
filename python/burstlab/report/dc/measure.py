"""What the data-centre study reads from a run: the queue's rising phases at a port and their
slopes, a port's peak, goodput, and completion-time statistics from the ``queries`` table.

A *phase* (seeds/004 §III, Fig. 5) is one rise of the queue, a round of packets arriving faster
than the port sends. We find them as the legs of a zigzag over the per-packet occupancy: a turn
is kept only when the queue moves back by more than :data:`TURN_BYTES` (three full-size
packets), so the ±1-packet steps of each enqueue and dequeue inside a rise do not split it.
Phase k's slope is its rise over its duration, in bit/s; phase 1 starts with the query.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["TURN_BYTES", "Leg", "rising_legs", "phase_slopes", "phase_fit", "hidden_buffer_bound", "percentile",
           "mean", "reduction"]

#: A zigzag turn: the queue moves back by more than three 1500-byte packets (a choice, stated in
#: docs/dc.md, made before the study's figures were looked at).
TURN_BYTES = 3 * 1500


@dataclass(frozen=True)
class Leg:
    """One rise of the queue: from a trough at ``t0`` (``q0`` bytes) to a peak at ``t1``."""

    t0: float
    q0: float
    t1: float
    q1: float

    @property
    def slope_bps(self) -> float:
        return (self.q1 - self.q0) * 8 / (self.t1 - self.t0) if self.t1 > self.t0 else math.nan


def rising_legs(t: Sequence[float], q: Sequence[float], turn: float = TURN_BYTES) -> list[Leg]:
    """The rises of the occupancy ``q`` (bytes) at times ``t`` (s, ascending): trough to peak,
    turns kept only where the series moves back by more than ``turn`` bytes."""
    legs: list[Leg] = []
    if len(t) < 2:
        return legs
    rising = True
    lo_t, lo_q = t[0], q[0]  # the trough the current rise started from
    ext_t, ext_q = t[0], q[0]  # the current extreme (peak when rising, trough when falling)
    for ti, qi in zip(t, q, strict=True):
        if rising:
            if qi >= ext_q:
                ext_t, ext_q = ti, qi
            elif ext_q - qi > turn:
                if ext_q - lo_q > turn:
                    legs.append(Leg(lo_t, lo_q, ext_t, ext_q))
                rising, ext_t, ext_q = False, ti, qi
        else:
            if qi <= ext_q:
                ext_t, ext_q = ti, qi
            elif qi - ext_q > turn:
                rising, lo_t, lo_q = True, ext_t, ext_q
                ext_t, ext_q = ti, qi
    if rising and ext_q - lo_q > turn:
        legs.append(Leg(lo_t, lo_q, ext_t, ext_q))
    return legs


def phase_slopes(t: Sequence[float], q: Sequence[float], start: float, end: float) -> list[float]:
    """Slopes (bit/s) of the queue's rises between ``start`` and ``end``, in order."""
    pairs = [(ti, qi) for ti, qi in zip(t, q, strict=True) if start <= ti <= end]
    if not pairs:
        return []
    ts, qs = zip(*pairs, strict=True)
    return [leg.slope_bps for leg in rising_legs(ts, qs)]


def hidden_buffer_bound(a_bps: float, r_bps: float) -> float:
    """Law 3's ceiling on phase 2's slope, 2aR/(a + R) (seeds/004 §III-C): ``a`` the first
    round's arrival rate, ``R`` the port's."""
    return 2 * a_bps * r_bps / (a_bps + r_bps)


def mean(values: Sequence[float]) -> float:
    return statistics.fmean(values) if values else math.nan


def percentile(values: Sequence[float], p: float) -> float:
    """The ``p``-th percentile (0-100), linear between order statistics (numpy's default)."""
    if not values:
        return math.nan
    v = sorted(values)
    k = (len(v) - 1) * p / 100
    f = math.floor(k)
    c = min(f + 1, len(v) - 1)
    return v[f] + (v[c] - v[f]) * (k - f)


def reduction(before: float, after: float) -> float:
    """How much lower ``after`` is than ``before``, in percent (negative: higher)."""
    return (1 - after / before) * 100 if before else math.nan


def phase_fit(t: Sequence[float], q: Sequence[float], start: float, end: float,
              first_round_bytes: float) -> tuple[float, float] | None:
    """Slopes (bit/s) of phase 1 and phase 2 of the queue's rise between ``start`` and ``end``:
    phase 1 from the first record until the queue holds ``first_round_bytes`` (the senders'
    initial windows) more than at ``start``, phase 2 from there until it first reaches 90 % of
    its rise to the peak, each a least-squares line. ``None`` when the queue never holds the first round."""
    pts = [(ti, qi) for ti, qi in zip(t, q, strict=True) if start <= ti <= end]
    if len(pts) < 4:
        return None
    # Background flows may hold a queue already: the rounds add to what is there at the start.
    base = pts[0][1]
    peak = max(qi for _, qi in pts)
    i0 = next((i for i, (_, qi) in enumerate(pts) if qi >= base + first_round_bytes), None)
    if i0 is None or peak <= base + first_round_bytes:
        return None
    i1 = next(i for i, (_, qi) in enumerate(pts) if qi >= base + 0.9 * (peak - base))
    if i1 <= i0 + 1:
        return None
    return _fit(pts[: i0 + 1]) * 8, _fit(pts[i0 : i1 + 1]) * 8


def _fit(pts: Sequence[tuple[float, float]]) -> float:
    """Least-squares slope of ``pts`` (bytes per second)."""
    n = len(pts)
    if n < 2:
        return math.nan
    mt = sum(t for t, _ in pts) / n
    mq = sum(q for _, q in pts) / n
    var = sum((t - mt) ** 2 for t, _ in pts)
    return sum((t - mt) * (q - mq) for t, q in pts) / var if var else math.nan
