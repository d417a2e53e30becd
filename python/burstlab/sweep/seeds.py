"""Per-run seeds: derived from the sweep seed, the grid point and the repetition, so a rerun,
a resumed sweep and a Dask run all simulate each run with the same seed.

The derivation is SHA-256 (never Python's ``hash()``, which is salted per process) of a
versioned, NUL-separated text, truncated to 63 bits because the scenario's ``seed`` field is a
TOML integer in ``0..=i64::MAX`` (crates/sim/src/scenario/parse.rs).
"""

from __future__ import annotations

import hashlib

from burstlab.sweep.grid import Point

__all__ = ["run_seed", "SEED_MAX"]

#: Largest seed the scenario accepts: ``i64::MAX``.
SEED_MAX = 2**63 - 1

# Bump if the derivation ever changes: old sweeps then refuse to resume instead of mixing seeds.
_DOMAIN = b"burstlab.sweep.seed.v1"


def run_seed(sweep_seed: int, point: Point, rep: int) -> int:
    """The seed of repetition ``rep`` of ``point`` in a sweep seeded ``sweep_seed``."""
    text = b"\0".join((_DOMAIN, str(sweep_seed).encode(), point.canonical().encode(), str(rep).encode()))
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "big") & SEED_MAX
