"""`burstlab decode` on report frames as deployments send them (issue 35): a fabric-tna report
under an MPLS label (leaf to spine), frames without a report counted by why on stderr, and the
D/Q/F flags, drop reason and INT version of each report in `--json`."""

from __future__ import annotations

import json
import struct
from pathlib import Path

from helpers import burstlab


def _pcap(frames: list[bytes]) -> bytes:
    """A little-endian microsecond pcap of Ethernet frames."""
    out = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)
    for k, f in enumerate(frames):
        out += struct.pack("<IIII", 1, k, len(f), len(f)) + f
    return out


def _fabric_tna_report_to_spine(drop: bool) -> bytes:
    """stratum/fabric-tna PTF `build_int_local_report(..., send_report_to_spine=True)`: Ethernet
    SWITCH_MAC → INT_COLLECTOR_MAC, MPLS label 200 TTL 64, IPv4 192.168.0.1 → 192.168.99.254,
    UDP 0 → 32766, TR v0.5 (NProto 2 switch-local, F; or NProto 1 drop, D, reason 71), switch 1,
    ports 1 → 2, then the routed packet 10.0.1.1:1234 → 10.0.2.1:80 UDP."""
    inner = (bytes.fromhex("000000000002" "00000000aa01" "0800")
             + bytes.fromhex("4500001c00010000" "3f110000" "0a000101" "0a000201")
             + bytes.fromhex("04d20050" "00080000"))
    if drop:
        report = bytes.fromhex("01800000" "00000005" "00000007") + bytes.fromhex("00000001" "00010002" "00470000")
    else:
        report = bytes.fromhex("02200000" "00000005" "00000007") + bytes.fromhex("00000001" "00010002" "0000000a" "00000009")
    udp = struct.pack(">HHHH", 0, 32766, 8 + len(report) + len(inner), 0) + report + inner
    ip = bytes.fromhex("4504") + struct.pack(">H", 20 + len(udp)) + bytes.fromhex(
        "000040004011" "0000" "c0a80001" "c0a863fe")
    return bytes.fromhex("001e67d2eeee" "00000000aa01" "8847" "000c8140") + ip + udp


def test_labelled_reports_decode_and_skipped_frames_are_counted(tmp_path: Path) -> None:
    arp = bytes.fromhex("ffffffffffff" "000000000001" "0806") + bytes(28)
    tcp = (bytes.fromhex("000000000002" "000000000001" "0800")
           + bytes.fromhex("45000028000100004006" "0000" "0a000001" "0a000002")
           + bytes.fromhex("00010002" "00000000" "00000000" "50100000" "00000000"))
    pcap = tmp_path / "fabric.pcap"
    pcap.write_bytes(_pcap([_fabric_tna_report_to_spine(False), arp, tcp,
                            _fabric_tna_report_to_spine(True)]))
    r = burstlab("decode", pcap, "--json")
    assert r.returncode == 0, r.stderr
    local, dropped = (json.loads(x) for x in r.stdout.splitlines())
    assert local["report_version"] == "0.5-fabric-tna" and local["switch_id"] == 1
    assert (local["flags"], local["drop_reason"], local["int_version"]) == ("F", None, None)
    assert local["hops"][0]["queue_occupancy_bytes"] == 10 * 80  # Tofino cells on 32766
    assert local["flow"] == {"src": "10.0.1.1", "dst": "10.0.2.1", "sport": 1234, "dport": 80, "proto": "udp"}
    assert (dropped["flags"], dropped["drop_reason"]) == ("D", 71)
    # The two frames without a report are said, by why, even with --json.
    assert "2 reports, 0 malformed, 0 suspect, from 4 frames; 2 skipped (1 not IP, 1 not UDP)" in r.stderr, r.stderr
    text = burstlab("decode", pcap)
    assert text.returncode == 0 and "2 skipped (1 not IP, 1 not UDP)" in text.stderr
    rows = {line.split()[0]: line.split() for line in text.stdout.splitlines()[1:]}
    # frame, ver, int, dqf, drop, switch: the dropped report's flags and reason are columns.
    assert rows["1"][1:6] == ["0.5-fabric-tna", "-", "F", "-", "1"], rows["1"]
    assert rows["4"][1:6] == ["0.5-fabric-tna", "-", "D", "71", "1"], rows["4"]
