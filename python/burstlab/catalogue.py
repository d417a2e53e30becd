"""The scenario catalogue that ships with burstlab: the TOML files in ``burstlab/scenarios/``.

They are package data, so they are there however burstlab was installed (a wheel, an editable
checkout); the repository's ``scenarios/`` is a link to the same folder, so the documented
``scenarios/...`` paths work from a checkout.

>>> from burstlab import catalogue
>>> "amlight-209ms-burst" in catalogue.names()
True
>>> catalogue.path("amlight/base-209ms").name
'base-209ms.toml'
"""

from __future__ import annotations

from pathlib import Path

from burstlab.errors import ScenarioError

__all__ = ["CATALOGUE", "names", "path", "text"]

#: The folder holding the catalogue's scenario files.
CATALOGUE: Path = Path(__file__).resolve().parent / "scenarios"


def names() -> list[str]:
    """Every scenario's name: its path below :data:`CATALOGUE` without ``.toml``
    (``"amlight-209ms-burst"``, ``"amlight/base-209ms"``), sorted."""
    return sorted(p.relative_to(CATALOGUE).with_suffix("").as_posix() for p in CATALOGUE.rglob("*.toml"))


def path(name: str) -> Path:
    """The file of the catalogue scenario ``name`` (``.toml`` and a leading ``scenarios/`` may
    be given); :class:`~burstlab.errors.ScenarioError` (kind ``"file"``) naming the catalogue
    when there is none."""
    stem = name.removeprefix("scenarios/").removesuffix(".toml")
    known = names()
    if stem not in known:
        raise ScenarioError(f"{name}: no scenario of that name in burstlab's catalogue ({CATALOGUE}); "
                            f"it has: {', '.join(known)}", "file")
    return CATALOGUE / f"{stem}.toml"


def text(name: str) -> str:
    """The TOML text of the catalogue scenario ``name``."""
    return path(name).read_text(encoding="utf-8")


if __name__ == "__main__":
    print("\n".join(names()))
