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


def test_the_before_is_the_host_as_it_is_and_its_buffers_are_not_lowered():
    # An 8 KiB receive buffer at 5 ms holds the flow far below the path; 32 MiB (a 6.18 host's
    # tcp_rmem max) is above what 1 Gbit/s x 5 ms needs, and stays.
    small = json.loads(_cli(*SMALL, "--tcp-rmem", "4096 8192 8192", "--cca", "bbr", "--ccas", "cubic,bbr", "--json").stdout)
    linux = json.loads(_cli(*SMALL, "--json").stdout)
    assert small["host"]["cca"] == "bbr" and small["host"]["tcp_rmem"] == [4096, 8192, 8192]
    assert small["before"]["no bursts"]["throughput_bps"] < 0.2 * linux["before"]["no bursts"]["throughput_bps"]
    assert small["after"]["no bursts"]["throughput_bps"] > 5 * small["before"]["no bursts"]["throughput_bps"]
    cc = next(row for row in small["changes"] if row["change"] == "congestion control")
    assert "htcp" not in cc["why"] and "cubic" in cc["why"] and "bbr" in cc["why"]
    big = json.loads(_cli(*SMALL, "--tcp-rmem", "4096 131072 33554432", "--json").stdout)
    assert big["sysctl"]["net.ipv4.tcp_rmem"].endswith(" 33554432") and big["sysctl"]["net.core.rmem_max"] == "33554432"


def test_bad_host_flags_get_one_line():
    for args, named in ((["--ccas", "cubic,vegas"], "--ccas 'cubic,vegas'"), (["--cca", "vegas"], "--cca 'vegas'"),
                        (["--tcp-wmem", "4096 8192"], "--tcp-wmem '4096 8192'"),
                        (["--kernel", "latest"], "--kernel 'latest'")):
        r = _cli(*SMALL, *args)
        assert r.exit_code == 2 and named in r.stderr and r.stderr.count("\n") == 1, r.stderr
