"""`burstlab tune`'s outputs: the text with its fragment and commands, --json, and --html (which
never replaces a file unless told)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from burstlab.cli import build_app

SMALL = ["--rate", "1Gbps", "--rtt", "5ms", "--size", "20MB"]


def _cli(*args: str):
    return CliRunner().invoke(build_app(), ["tune", *map(str, args)])


def test_text_json_and_html_say_the_same_advice(tmp_path):
    page = tmp_path / "tune.html"
    text = _cli(*SMALL, "--html", page)
    assert text.exit_code == 0, text.output
    r = json.loads(_cli(*SMALL, "--json").stdout)
    for key, value in r["sysctl"].items():
        assert f"{key} = {value}" in text.stdout and f"<td>{key}</td><td>{value}</td>" in page.read_text()
    for cmd in r["commands"]:
        assert cmd in text.stdout
    assert r["sysctl_conf"].startswith("# burstlab tune") and text.stdout.count("sysctl --system") == 1
    # Linux's defaults are the first "before"; every simulated row chains on the one kept before it.
    kept = [row for row in r["changes"] if row["simulated"] and row["kept"]]
    assert kept[0]["before"] == r["before"] and kept[-1]["after"] == r["after"]
    assert all(a["after"] == b["before"] for a, b in zip(kept, kept[1:]))


def test_html_refuses_an_existing_file_without_overwrite(tmp_path):
    page = tmp_path / "tune.html"
    page.write_text("mine")
    r = _cli(*SMALL, "--html", page)
    assert r.exit_code == 2 and "--html" in r.stderr and "--overwrite" in r.stderr
    assert page.read_text() == "mine"
    assert _cli(*SMALL, "--html", page, "--overwrite").exit_code == 0
    assert page.read_text().startswith("<!DOCTYPE html>")
