"""``burstlab graph`` (mirrors python/burstlab/cli/graph.py and python/burstlab/graph.py): the
expanded network of a dumbbell, of a preset and of a graph, as text, JSON and DOT; base RTTs
that follow from the links; bad graphs refused with one line."""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from burstlab.cli import status
from burstlab.graph import expand
from helpers import SMALL_BOTTLENECK_BPS, SMALL_RTT_S, burstlab

REPO = Path(__file__).resolve().parents[3]

# 2 leaves x 2 spines x 2 hosts at 10 Gbit/s, 2:1 oversubscribed (5 Gbit/s fabric links), with
# one flow from each host of leaf0 to one of leaf1 and one inside leaf0.
LEAF_SPINE = """\
name = "small-fabric"
seed = 3

[topology]
preset = "leaf-spine"
leaves = 2
spines = 2
hosts_per_leaf = 2
host_rate = "10Gbps"
oversubscription = 2
link_delay = "3us"
buffer = "256KB"

[[flow]]
src = "h0"
dst = "h2"

[[flow]]
src = "h1"
dst = "h3"

[[flow]]
src = "h0"
dst = "h1"
"""

# Hops of different rates and delays, so that a base RTT's parts cannot stand in for each
# other: 10 Gbit/s and 5 us to each host, 1 Gbit/s and 100 us between the switches; MTU 9000.
CHAIN = """\
name = "chain"

[topology]
preset = "graph"
buffer = "1MB"
mtu = 9000

[[node]]
name = "h0"
[[node]]
name = "h1"
[[node]]
name = "sw0"
kind = "switch"
[[node]]
name = "sw1"
kind = "switch"

[[link]]
a = "h0"
b = "sw0"
rate = "10Gbps"
delay = "5us"

[[link]]
a = "sw0"
b = "sw1"
rate = "1Gbps"
delay = "100us"
[link.ab]
buffer = "64KB"

[[link]]
a = "h1"
b = "sw1"
rate = "10Gbps"
delay = "5us"

[[flow]]
src = "h0"
dst = "h1"

[[burst]]
src = "h1"
dst = "h0"
rate = "1Gbps"
start = "1ms"
duration = "1ms"
"""

# A pure ACK as the receivers send it, IPv4 + TCP + timestamps (docs/graphs.md "base RTT"),
# and the Ethernet framing every frame adds on the wire (header, FCS, preamble, gap:
# crates/sim/src/units.rs ETHERNET_OVERHEAD_BYTES).
ACK_IP_BYTES = 52
ETHERNET_OVERHEAD_BYTES = 38


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(text)
    return path


def _graph_json(path: Path, *args: str) -> dict:
    proc = burstlab("graph", path, "--format", "json", *args)
    assert proc.returncode == status.SUCCESS, proc.stderr
    return json.loads(proc.stdout)


def _expected_base_rtt_s(graph: dict, flow: dict) -> float:
    """Twice the summed one-way delays plus each hop's serialization of an MTU segment (out)
    and an ACK (back), from the JSON's own links (a host's hop at its NIC's rate where one is
    shown); a UDP source's one-way delay. Serialization rounds up to the picosecond, as the
    simulator's clock does."""
    links = {}
    for link in graph["links"]:
        links[(link["a"], link["b"])] = links[(link["b"], link["a"])] = link

    def one_way_ps(path: list[str], ip_bytes: int) -> int:
        total = 0
        for hop in zip(path, path[1:]):
            link = links[hop]  # a KeyError is a path that is not connected
            egress = link["ab"] if link["a"] == hop[0] else link["ba"]
            bps = egress.get("nic_rate_bps") or link["rate_bps"]
            total += round(link["delay_s"] * 1e12)
            total += math.ceil((ip_bytes + ETHERNET_OVERHEAD_BYTES) * 8 * 10**12 / bps)
        return total

    ps = one_way_ps(flow["path"], graph["mtu_bytes"])
    if flow["kind"] == "tcp":
        ps += one_way_ps(flow["ack_path"], ACK_IP_BYTES)
    return ps / 1e12


# ---- help ---------------------------------------------------------------------------------------


def test_help_gives_examples_one_per_line():
    proc = burstlab("graph", "--help")
    assert proc.returncode == status.SUCCESS
    # A line too long for the terminal goes on after a shell continuation (cli/help_text.py).
    examples: list[str] = []
    going_on = False
    for line in (line.strip() for line in proc.stdout.splitlines()):
        if going_on:
            examples[-1] += " " + line
        elif line.startswith("burstlab graph "):
            examples.append(line)
        going_on = bool(examples) and examples[-1].endswith("\\")
        if going_on:
            examples[-1] = examples[-1].removesuffix("\\").rstrip()
    assert len(examples) == 4, proc.stdout
    assert "burstlab graph scenarios/graphs/leaf-spine-incast.toml --format json" in examples
    assert "burstlab graph scenarios/graphs/racks-hidden-buffer.toml --format dot | dot -Tpng -o racks.png" in examples
    assert "Exit status" in proc.stdout


def test_the_verb_is_listed_with_its_one_line_summary():
    proc = burstlab("--help")
    assert "graph" in proc.stdout and "without running it" in proc.stdout


# ---- a dumbbell ---------------------------------------------------------------------------------


def test_dumbbell_text_shows_nodes_links_buffers_and_the_flow_path(small_scenario: Path):
    proc = burstlab("graph", small_scenario, "--set", "topology.buffer=256KB")
    assert proc.returncode == status.SUCCESS, proc.stderr
    out = proc.stdout
    assert "preset dumbbell" in out
    assert re.search(r"hosts\s+r0 s0$", out, re.M), out
    assert re.search(r"switches\s+swA swB$", out, re.M), out
    # The bottleneck: 1 Gbit/s, half the RTT each way, the buffer given on both sides.
    half_rtt_us = SMALL_RTT_S / 2 * 1e6
    assert re.search(rf"swA -- swB\s+1 Gbit/s\s+{half_rtt_us:g} us\s+256 KB\s+256 KB$", out, re.M), out
    # A host's egress is its qdisc, not a byte buffer.
    assert re.search(r"s0 -- swA\s+10 Gbit/s\s+0\s+host pfifo_fast\s+256 KB$", out, re.M), out
    assert re.search(r"^  0 tcp flow\[0\]: s0 > swA > swB > r0  base RTT 1\.\d+ ms$", out, re.M), out


def test_dumbbell_json_base_rtt_follows_from_its_links(small_scenario: Path):
    g = _graph_json(small_scenario)
    assert (g["scenario"], g["preset"]) == ("small-cubic", "dumbbell")
    kinds = {n["name"]: n["kind"] for n in g["nodes"]}
    assert kinds == {"s0": "host", "r0": "host", "swA": "switch", "swB": "switch"}
    (bottleneck,) = [link for link in g["links"] if {link["a"], link["b"]} == {"swA", "swB"}]
    assert bottleneck["rate_bps"] == SMALL_BOTTLENECK_BPS
    assert bottleneck["delay_s"] == pytest.approx(SMALL_RTT_S / 2)
    assert bottleneck["ab"]["port"] == "swA->swB" and bottleneck["ab"]["recorded"] is True
    (flow,) = g["flows"]
    assert flow["path"] == ["s0", "swA", "swB", "r0"] and flow["ack_path"] == flow["path"][::-1]
    assert flow["base_rtt_s"] == pytest.approx(_expected_base_rtt_s(g, flow), abs=2e-12)
    # Propagation alone would be the RTT; serialization adds to it.
    assert flow["base_rtt_s"] > SMALL_RTT_S


def test_dumbbell_dot_declares_every_node_and_link(small_scenario: Path):
    proc = burstlab("graph", small_scenario, "--format", "dot")
    assert proc.returncode == status.SUCCESS, proc.stderr
    dot = proc.stdout
    assert dot.startswith('graph "small-cubic" {') and dot.rstrip().endswith("}")
    for name, shape in (("s0", "box"), ("r0", "box"), ("swA", "ellipse"), ("swB", "ellipse")):
        assert re.search(rf'^  "{name}" \[shape={shape}\b', dot, re.M), name
    assert re.search(r'^  "swA" -- "swB" \[label="1 Gbit/s, 500 us", taillabel=', dot, re.M), dot


# ---- a leaf-spine preset ------------------------------------------------------------------------


def test_leaf_spine_json_expands_the_preset_and_routes_over_a_spine(tmp_path: Path):
    g = _graph_json(_write(tmp_path, "fabric", LEAF_SPINE))
    hosts = sorted(n["name"] for n in g["nodes"] if n["kind"] == "host")
    switches = sorted(n["name"] for n in g["nodes"] if n["kind"] == "switch")
    assert hosts == ["h0", "h1", "h2", "h3"]
    assert switches == ["leaf0", "leaf1", "spine0", "spine1"]
    assert len(g["links"]) == 4 + 2 * 2  # a link per host, one per leaf and spine
    for link in g["links"]:
        fabric = link["a"].startswith("spine") or link["b"].startswith("spine")
        assert link["rate_bps"] == (5e9 if fabric else 10e9), link
        assert link["delay_s"] == pytest.approx(3e-6)
    cross, _, local = g["flows"]
    assert cross["path"][:2] == ["h0", "leaf0"] and cross["path"][3:] == ["leaf1", "h2"]
    assert cross["path"][2] in ("spine0", "spine1")
    assert local["path"] == ["h0", "leaf0", "h1"]
    for flow in g["flows"]:
        assert flow["base_rtt_s"] == pytest.approx(_expected_base_rtt_s(g, flow), abs=2e-12), flow


def test_leaf_spine_text_and_dot(tmp_path: Path):
    path = _write(tmp_path, "fabric", LEAF_SPINE)
    text = burstlab("graph", path)
    assert text.returncode == status.SUCCESS, text.stderr
    assert "preset leaf-spine" in text.stdout and "nodes: 4 hosts, 4 switches" in text.stdout
    assert re.search(r"leaf0 -- spine0\s+5 Gbit/s\s+3 us\s+256 KB\s+256 KB$", text.stdout, re.M), text.stdout
    assert re.search(r"^  2 tcp flow\[2\]: h0 > leaf0 > h1  base RTT [\d.]+ us$", text.stdout, re.M), text.stdout
    dot = burstlab("graph", path, "--format", "dot")
    assert dot.returncode == status.SUCCESS, dot.stderr
    edges = re.findall(r'^  "(\w+)" -- "(\w+)" \[', dot.stdout, re.M)
    assert len(edges) == 8 and ("leaf1", "spine1") in edges, dot.stdout


def test_set_overrides_reach_the_expansion(tmp_path: Path):
    g = _graph_json(_write(tmp_path, "fabric", LEAF_SPINE), "--set", "topology.spines=3")
    assert sum(n["name"].startswith("spine") for n in g["nodes"]) == 3


# ---- a graph of hops of different rates ---------------------------------------------------------


def test_base_rtt_adds_delays_and_each_hops_serialization(tmp_path: Path):
    g = _graph_json(_write(tmp_path, "chain", CHAIN))
    assert g["mtu_bytes"] == 9000
    tcp, udp = g["flows"]
    assert tcp["kind"] == "tcp" and udp["kind"] == "udp" and udp["ack_path"] is None
    assert udp["path"] == ["h1", "sw1", "sw0", "h0"] and udp["entry"] == "burst[0]"
    # By hand: 2 x (5 + 100 + 5) us of propagation; 9038 bytes out at 10, 1, 10 Gbit/s; a
    # 90-byte ACK back at 10, 1, 10 Gbit/s.
    by_hand = 2 * 110e-6 + 9038 * 8 * (2 / 10e9 + 1 / 1e9) + 90 * 8 * (2 / 10e9 + 1 / 1e9)
    assert tcp["base_rtt_s"] == pytest.approx(by_hand, abs=1e-11)
    assert tcp["base_rtt_s"] == pytest.approx(_expected_base_rtt_s(g, tcp), abs=2e-12)
    assert udp["base_rtt_s"] == pytest.approx(_expected_base_rtt_s(g, udp), abs=2e-12)
    # Each direction its own port: the 64 KB one only at sw0 towards sw1.
    (middle,) = [link for link in g["links"] if link["a"] == "sw0"]
    assert (middle["ab"]["buffer_bytes"], middle["ba"]["buffer_bytes"]) == (64_000, 1_000_000)


# ---- a host's NIC rate ---------------------------------------------------------------------------

# CHAIN with every host's NIC at 100 Gbit/s but h0's own at 1 Gbit/s, below its 10 Gbit/s link.
NIC_OF_H0 = ('[[node]]\nname = "h0"\n',
             '[hosts]\nnic_rate = "100Gbps"\n\n[[node]]\nname = "h0"\nnic_rate = "1Gbps"\n')


def test_a_hosts_nic_rate_is_shown_at_its_end_of_the_link_and_marked_where_it_binds(tmp_path: Path):
    assert CHAIN.count(NIC_OF_H0[0]) == 1
    path = _write(tmp_path, "nic", CHAIN.replace(*NIC_OF_H0))
    g = _graph_json(path)
    links = {(link["a"], link["b"]): link for link in g["links"]}
    h0, h1 = links[("h0", "sw0")], links[("h1", "sw1")]
    # The links keep their rate; each host's egress shows the rate its NIC sends at.
    assert h0["rate_bps"] == h1["rate_bps"] == 10e9
    assert (h0["ab"]["nic_rate_bps"], h0["ab"]["nic_binds"]) == (1e9, True)
    assert (h1["ab"]["nic_rate_bps"], h1["ab"]["nic_binds"]) == (100e9, False)
    # The switches' ports towards the hosts serialize at the link's rate.
    assert "nic_rate_bps" not in h0["ba"] and "nic_rate_bps" not in h1["ba"]
    # The drawn rate is the one the simulator sends at: base RTTs follow from it.
    for flow in g["flows"]:
        assert flow["base_rtt_s"] == pytest.approx(_expected_base_rtt_s(g, flow), abs=2e-12), flow

    text = burstlab("graph", path)
    assert text.returncode == status.SUCCESS, text.stderr
    out = text.stdout
    assert re.search(r"^  h0 -- sw0\s+10 Gbit/s\s+5 us\s+host pfifo_fast, NIC 1 Gbit/s \(binds\)\s+1 MB$", out, re.M), out
    assert re.search(r"^  h1 -- sw1\s+10 Gbit/s\s+5 us\s+host pfifo_fast, NIC 100 Gbit/s\s+1 MB$", out, re.M), out
    assert "(binds): the host's NIC is slower than its link and caps what it sends" in out

    dot = burstlab("graph", path, "--format", "dot")
    assert dot.returncode == status.SUCCESS, dot.stderr
    assert '"h0" -- "sw0" [label="10 Gbit/s, 5 us", taillabel="NIC 1 Gbit/s (binds)", headlabel="1 MB"];' in dot.stdout
    assert '"h1" -- "sw1" [label="10 Gbit/s, 5 us", taillabel="NIC 100 Gbit/s", headlabel="1 MB"];' in dot.stdout


def test_without_nic_rate_no_nic_is_shown(tmp_path: Path):
    path = _write(tmp_path, "chain", CHAIN)
    g = _graph_json(path)
    hosts = [link[d] for link in g["links"] for d in ("ab", "ba") if link[d].get("qdisc")]
    assert len(hosts) == 2 and all(p["nic_rate_bps"] is None and p["nic_binds"] is False for p in hosts)
    out = burstlab("graph", path).stdout
    assert "NIC" not in out and "(binds)" not in out


def test_a_dumbbell_flows_nic_rate_is_its_sending_hosts(small_scenario: Path):
    proc = burstlab("graph", small_scenario, "--set", "flow[0].nic_rate=2Gbps", "--set", "topology.buffer=256KB")
    assert proc.returncode == status.SUCCESS, proc.stderr
    assert re.search(r"s0 -- swA\s+10 Gbit/s\s+0\s+host pfifo_fast, NIC 2 Gbit/s \(binds\)\s+256 KB$",
                     proc.stdout, re.M), proc.stdout
    # The receiver sends only ACKs, from its own NIC at the link's rate.
    assert re.search(r"swB -- r0\s+10 Gbit/s\s+0\s+256 KB\s+host pfifo_fast$", proc.stdout, re.M), proc.stdout


# ---- every shipped scenario ---------------------------------------------------------------------

SHIPPED = sorted(p.relative_to(REPO) for p in (REPO / "scenarios").rglob("*.toml"))


@pytest.mark.parametrize("scenario", SHIPPED, ids=str)
def test_every_shipped_scenario_expands_with_connected_paths(scenario: Path):
    g = expand(REPO / scenario).data
    assert g["flows"], "a shipped scenario has traffic"
    for flow in g["flows"]:
        assert flow["path"][0] == flow["src"] and flow["path"][-1] == flow["dst"]
        assert flow["base_rtt_s"] == pytest.approx(_expected_base_rtt_s(g, flow), abs=2e-12), flow


# ---- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("edit", "field", "value"),
    [
        (("[[link]]\na = \"h1\"\nb = \"sw1\"", "[[link]]\na = \"h1\"\nb = \"hX\""), "link[2].b", '"hX"'),
        (("[[flow]]\nsrc = \"h0\"\ndst = \"h1\"", '[[flow]]\nsrc = "h0"\ndst = "h1"\npath = ["h0", "sw1", "h1"]'),
         "flow[0].path[1]", '"sw1"'),
    ],
    ids=["unknown node in a link", "flow path not connected"],
)
def test_a_bad_graph_is_one_line_naming_the_field(tmp_path: Path, edit: tuple[str, str], field: str, value: str):
    assert CHAIN.count(edit[0]) == 1
    proc = burstlab("graph", _write(tmp_path, "bad", CHAIN.replace(*edit)))
    assert proc.returncode == status.BAD_INPUT
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"burstlab graph: scenario.{field} = {value}: expected "), lines[0]


def test_an_unknown_format_is_bad_input(small_scenario: Path):
    proc = burstlab("graph", small_scenario, "--format", "svg")
    assert proc.returncode == status.BAD_INPUT
    assert proc.stderr.strip() == "burstlab graph: --format svg: expected one of text, json, dot"


# ---- Graphviz, where installed (scripts/setup.sh does not install it) ---------------------------


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz `dot` is not installed")
@pytest.mark.parametrize("scenario", ["scenarios/amlight-209ms-burst.toml", "scenarios/graphs/leaf-spine-incast.toml"])
def test_dot_output_renders_with_graphviz(scenario: str, tmp_path: Path):
    proc = burstlab("graph", REPO / scenario, "--format", "dot")
    assert proc.returncode == status.SUCCESS, proc.stderr
    png = tmp_path / "g.png"
    rendered = subprocess.run(["dot", "-Tpng", "-o", str(png)], input=proc.stdout, text=True,
                              capture_output=True, timeout=120)
    assert rendered.returncode == 0 and rendered.stderr == "", rendered.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# ---- the drawings in docs/scenarios.md ----------------------------------------------------------


def _documented_drawings() -> list[tuple[str, str]]:
    """(scenario TOML, what `burstlab graph` prints) for each preset docs/scenarios.md draws."""
    doc = (REPO / "docs" / "scenarios.md").read_text()
    return re.findall(r"```toml\n(.*?)```\n\n```\n(scenario '.*?)```", doc, re.S)


def test_docs_show_each_preset_as_burstlab_graph_prints_it():
    drawings = _documented_drawings()
    presets = {expand(scenario).data["preset"] for scenario, _ in drawings}
    assert presets == {"dumbbell", "parking-lot", "leaf-spine", "racks"}
    for scenario, printed in drawings:
        assert expand(scenario).to_text() == printed
