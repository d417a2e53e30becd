"""End to end on a real capture made here: two namespaces, a tbf bottleneck with a small byte
limit, a UDP burst above the shaped rate next to a TCP flow, captured with tcpdump on both sides
of the router (issue 6). `detect` must find the burst, name the UDP flow as culprit and the TCP
flow as victim, and count exactly the drops `tc -s` reports."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from burstlab.validate.capture import capture_burst
from burstlab.validate.topology import list_namespaces
from helpers import burstlab

pytestmark = [
    pytest.mark.netns,
    pytest.mark.skipif(shutil.which("tcpdump") is None, reason="tcpdump not installed (scripts/setup.sh)"),
]


@pytest.fixture(scope="module")
def capture(tmp_path_factory: pytest.TempPathFactory):
    before = set(list_namespaces())
    cap = capture_burst(tmp_path_factory.mktemp("cap"))
    assert set(list_namespaces()) == before, "the experiment left namespaces behind"
    return cap


def _detect(*args) -> dict:
    r = burstlab("detect", *args, "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.parametrize("options", [["--buffer", "64KB", "--rise", "50%"], []])
def test_two_sided_capture_finds_the_burst_its_culprit_its_victim_and_the_drops(capture, options) -> None:
    got = _detect(capture.ingress_pcap, "--egress", capture.egress_pcap, *options)
    assert got["format"] == "capture-pair"
    bursts = got["bursts"]
    # The burst lasts 100 ms at the sender; the queue stays full a little longer. The sending
    # tool can stall for ~10 ms mid-burst (one capture here: 8-13 ms, twice), long enough for the
    # 64 KB queue to drain at 50 Mbit/s: the queue then holds the burst in two to four pieces.
    assert 1 <= len(bursts) <= 4, [(b["start_s"], b["duration_s"]) for b in bursts]
    assert 0.08 <= bursts[-1]["end_s"] - bursts[0]["start_s"] <= 0.3, bursts
    assert all(b["culprits"][0]["flow"] == capture.udp_flow for b in bursts), [b["culprits"] for b in bursts]
    # The TCP flow is a victim: its packets wait behind the burst (the full 64 KB queue adds
    # ~10 ms at 50 Mbit/s), or the tbf drops them and the flow stalls in recovery instead (one
    # CI run: 16 drops and only 0.6 ms of extra delay).
    victims = [v for b in bursts for v in b["victims"] if _is_tcp(capture, v["flow"])]
    assert victims and max(v["delay_s"] > 0.001 or v["drops"] > 0 for v in victims), victims
    # Every packet tbf dropped entered and never left: the reconstruction finds each one.
    assert sum(b["drops"] for b in bursts) == capture.tbf["drops"] > 0


def test_plain_capture_rate_detector_names_the_udp_culprit_and_the_retransmitting_tcp_victim(capture) -> None:
    # The router's entering side: the burst arrives at 3x the shaped rate. On 10 ms windows the
    # window-limited TCP flow alone stays near 1x (on 100 µs windows its own trains are hot).
    got = _detect(capture.ingress_pcap, "--link-rate", "50Mbps", "--timescale", "10ms", "--rate-threshold", "1.5")
    assert got["format"] == "plain-capture"
    longest = max(got["bursts"], key=lambda b: b["duration_s"])
    assert 0.08 <= longest["duration_s"] <= 0.2
    assert longest["culprits"][0]["flow"] == capture.udp_flow
    assert longest["culprits"][0]["share"] > 0.8
    # One role per flow and burst, at every timescale of the defaults as well.
    defaults = _detect(capture.ingress_pcap, "--link-rate", "50Mbps", "--top", "100")
    for b in got["bursts"] + defaults["bursts"]:
        assert not {c["flow"] for c in b["culprits"]} & {v["flow"] for v in b["victims"]}, b
    # TCP repairs the tbf's drops of its segments: retransmissions inside or right after the
    # burst. How many of its segments were dropped, the two-sided reconstruction says.
    pair = _detect(capture.ingress_pcap, "--egress", capture.egress_pcap, "--buffer", "64KB", "--rise", "50%")
    tcp_drops = sum(v["drops"] for b in pair["bursts"] for v in b["victims"] if _is_tcp(capture, v["flow"]))
    retransmits = sum(v["retransmits"] for v in longest["victims"] if _is_tcp(capture, v["flow"]))
    assert retransmits >= min(tcp_drops, 1), (tcp_drops, longest["victims"])


def _is_tcp(capture, flow: str) -> bool:
    prefix, suffix = capture.tcp_flow.split("*")
    return flow.startswith(prefix) and flow.endswith(suffix)


def test_plain_capture_without_a_link_rate_says_what_is_missing(capture) -> None:
    r = burstlab("detect", capture.ingress_pcap)
    assert r.returncode == 2
    assert "no telemetry report" in r.stderr and "--link-rate" in r.stderr
