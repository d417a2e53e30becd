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


def _bmv2_int_mx_report(node: int, egress_port: int, egress_us: int, inner_macs: str, ttl: int) -> bytes:
    """The report INT node `node` of laofan13/P4-INT's bmv2 INT-MX program (`int-mx/` @ 920dbc6)
    sends to 10.0.0.2:1234, written from its header definitions (`int_headers.p4`,
    `Int_Deparser`) with the values of its captures `int-mx/pcap/s{node}-cpu-eth0_out.pcap`:
    TR v2.0 group header under version nibble 1 (hw_id 1, seq 0), one individual report (RepType
    1, InType 4, Report Length 0, F and I), the cloned packet 10.0.1.1:64057 → 10.0.3.3:8080 UDP,
    an INT-MX shim (Type 3, Length 14) and header (bitmap 0xFF00), then the node's own 11 words:
    ports 0 → `egress_port`, hop latency and egress timestamp `egress_us` µs, queue 0 empty."""
    hop = (struct.pack(">IHHII", node, 0, egress_port, egress_us, 0) + struct.pack(">QQ", 0, egress_us)
           + struct.pack(">III", 0, egress_port, 0))
    int_mx = bytes.fromhex("300e0000" "20000000" "ff000000" "00000000") + hop
    udp = struct.pack(">HHHH", 64057, 8080, 8 + len(int_mx) + 14, 0x5DFF) + int_mx
    ip = bytes.fromhex("455c0066" "00010000") + bytes([ttl, 17]) + bytes(2) + bytes([10, 0, 1, 1, 10, 0, 3, 3])
    inner = bytes.fromhex(inner_macs) + bytes.fromhex("0800") + ip + udp
    payload = struct.pack(">II", (1 << 28) | (1 << 22), node) + bytes.fromhex("14000030") + bytes(8) + inner
    outer_udp = struct.pack(">HHHH", 1234, 1234, 8 + len(payload), 0) + payload
    outer_ip = bytes.fromhex("4500") + struct.pack(">H", 20 + len(outer_udp)) + bytes.fromhex(
        "00000000401100000a0000010a000002")
    return bytes.fromhex("00010a00030a" "00010a000307" "0800") + outer_ip + outer_udp


def test_bmv2_int_mx_reports_decode_with_their_profile(tmp_path: Path) -> None:
    pcap = tmp_path / "bmv2-int-mx.pcap"
    pcap.write_bytes(_pcap([
        _bmv2_int_mx_report(1, 3, 0x02B18C35, "ffffffffffff" "00000a000101", 64),
        _bmv2_int_mx_report(2, 3, 0x02ADCC22, "00010a000305" "ffffffffffff", 63),
        _bmv2_int_mx_report(3, 4, 0x02A7E6C7, "00010a000307" "00010a000305", 62),
    ]))
    # As the spec reads version nibble 1, every report is a malformed TR v1.0 header.
    plain = burstlab("decode", pcap, "--json")
    assert plain.returncode == 0, plain.stderr
    errors = [json.loads(x)["error"] for x in plain.stdout.splitlines()]
    assert len(errors) == 3 and all("tr_v1_0.length = 0" in e for e in errors), errors
    profile = tmp_path / "bmv2.toml"
    profile.write_text('[port.1234]\nbase = "bmv2-int-mx"\n')
    r = burstlab("decode", pcap, "--json", "--profile", profile)
    assert r.returncode == 0, r.stderr
    reports = [json.loads(x) for x in r.stdout.splitlines()]
    assert [x["switch_id"] for x in reports] == [1, 2, 3]
    for x, port, us in zip(reports, [3, 3, 4], [0x02B18C35, 0x02ADCC22, 0x02A7E6C7]):
        assert (x["report_version"], x["hw_id"], x["seq"], x["flags"], x["int_version"]) == ("2.0", 1, 0, "F", "2.1")
        assert x["flow"] == {"src": "10.0.1.1", "dst": "10.0.3.3", "sport": 64057, "dport": 8080, "proto": "udp"}
        (hop,) = x["hops"]
        assert (hop["switch_id"], hop["egress_port"], hop["queue_occupancy_bytes"]) == (x["switch_id"], port, 0)
        assert hop["egress_ts"] == us * 1000, "bmv2 µs in ns"
        assert hop["hop_latency_ns"] is None, "45 s of ns does not fit 32 bits"
    detect = burstlab("detect", pcap, "--json", "--profile", profile)
    assert detect.returncode == 0, detect.stderr
    out = json.loads(detect.stdout)
    assert (out["reports"], out["malformed"]) == (3, 0)
