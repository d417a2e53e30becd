"""Device profile files: the example in docs/telemetry.md works as written; a wrong key is
refused with its name."""

from __future__ import annotations

import re
from pathlib import Path

from helpers import burstlab

REPO = Path(__file__).resolve().parents[3]


def _pcap(tmp_path: Path) -> Path:
    pcap = tmp_path / "r.pcap"
    r = burstlab("run", REPO / "scenarios" / "int-burst.toml", "--set", "telemetry.int_sample=5000",
                 "--set", "stop=850ms", "--int-pcap", pcap)
    assert r.returncode == 0, r.stderr
    return pcap


def test_documented_profile_example_loads_and_changes_units(tmp_path: Path) -> None:
    doc = (REPO / "docs" / "telemetry.md").read_text()
    example = re.search(r"### Device profiles.*?```toml\n(.*?)```", doc, re.S).group(1)
    profile = tmp_path / "devices.toml"
    profile.write_text(example + '\n[port.5900]\nbase = "spec"\n')
    pcap = _pcap(tmp_path)
    default = burstlab("decode", pcap, "--json")
    as_bytes = burstlab("decode", pcap, "--json", "--profile", profile)
    assert default.returncode == 0 and as_bytes.returncode == 0, as_bytes.stderr
    occ = lambda out: int(re.search(r'"queue_occupancy_bytes":(\d+)', out).group(1))  # noqa: E731
    # The same 80-byte cells read as bytes when the profile says the port reports bytes.
    assert occ(as_bytes.stdout) > 0
    assert occ(default.stdout) == 80 * occ(as_bytes.stdout)


def test_unknown_profile_key_is_refused_with_its_name(tmp_path: Path) -> None:
    profile = tmp_path / "bad.toml"
    profile.write_text('[port.5900]\nbase = "noviflow"\ncell_size = 80\n')
    r = burstlab("decode", _pcap(tmp_path), "--profile", profile)
    assert r.returncode == 2
    assert "port.5900.cell_size" in r.stderr, r.stderr
