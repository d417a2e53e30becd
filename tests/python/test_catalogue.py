"""The scenario catalogue shipped as package data (python/burstlab/catalogue.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

import burstlab
from burstlab import catalogue
from burstlab.errors import ScenarioError

REPO = Path(__file__).resolve().parents[2]


def test_the_catalogue_is_inside_the_package_and_the_repo_links_to_it():
    assert catalogue.CATALOGUE == Path(burstlab.__file__).resolve().parent / "scenarios"
    # Every documented `scenarios/...` path of a checkout reads the packaged files.
    assert (REPO / "scenarios").resolve() == catalogue.CATALOGUE
    files = sorted(p.relative_to(catalogue.CATALOGUE).as_posix() for p in catalogue.CATALOGUE.rglob("*.toml"))
    assert [f"{n}.toml" for n in catalogue.names()] == files
    assert {"amlight-209ms-burst", "amlight/base-209ms", "int-burst"} <= set(catalogue.names())


@pytest.mark.parametrize("name", ["amlight/base-209ms", "amlight/base-209ms.toml", "scenarios/amlight/base-209ms.toml"])
def test_a_scenario_by_name_runs_as_its_file(name: str):
    assert catalogue.path(name) == catalogue.CATALOGUE / "amlight" / "base-209ms.toml"
    assert catalogue.text(name) == (REPO / "scenarios" / "amlight" / "base-209ms.toml").read_text()


def test_an_unknown_name_lists_the_catalogue():
    with pytest.raises(ScenarioError) as err:
        catalogue.path("amlight-209ms")
    assert err.value.kind == "file"
    assert "amlight-209ms: no scenario of that name" in str(err.value)
    assert "amlight-209ms-burst" in str(err.value)
