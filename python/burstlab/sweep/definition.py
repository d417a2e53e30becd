"""``sweep.json``: what a sweep is (scenario text, base overrides, grid, reps, seed), written
when the sweep starts so that a rerun into the same directory resumes the *same* sweep and
refuses a different one."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from burstlab.sweep.errors import SweepError, SweepMismatchError
from burstlab.sweep.grid import Axis
from burstlab.sweep.store import write_atomic

__all__ = ["SweepDefinition", "DEFINITION_FILE"]

DEFINITION_FILE = "sweep.json"
_FORMAT = 1


@dataclass(frozen=True)
class SweepDefinition:
    scenario: str
    overrides: tuple[str, ...]
    axes: tuple[Axis, ...]
    reps: int
    seed: int

    def to_json(self) -> dict[str, Any]:
        return {
            "format": _FORMAT,
            "scenario": self.scenario,
            "set": list(self.overrides),
            "grid": [{"path": a.path, "values": list(a.values)} for a in self.axes],
            "reps": self.reps,
            "seed": self.seed,
        }

    def save_or_check(self, out: Path) -> None:
        """Write ``out/sweep.json``, or check that the one there describes this sweep."""
        path = out / DEFINITION_FILE
        mine = self.to_json()
        try:
            theirs = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            if out.is_dir() and any(out.iterdir()):
                raise SweepError(f"{out}: directory is not empty and holds no {DEFINITION_FILE}; "
                                 "choose an empty or new directory") from None
            write_atomic(path, (json.dumps(mine, indent=2) + "\n").encode())
            return
        except (OSError, ValueError) as err:
            raise SweepError(f"{path}: cannot read the sweep definition ({err})") from None
        if theirs != mine:
            raise SweepMismatchError(
                f"{out} holds a different sweep ({_first_difference(theirs, mine)}); "
                "rerun with the same scenario, --set, --grid, --reps and --seed to resume, "
                "or choose another --out"
            )


def _first_difference(theirs: dict[str, Any], mine: dict[str, Any]) -> str:
    for key in mine:
        if theirs.get(key) != mine[key]:
            if key == "scenario":
                return "the scenario text differs"
            return f"{key}: was {json.dumps(theirs.get(key))}, now {json.dumps(mine[key])}"
    return "format differs"
