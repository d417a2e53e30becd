"""Telemetry that cannot be real (issue 41): one flipped bit in a report's sequence number or
occupancy is counted *suspect*, not folded into losses or bursts; `detect` and `decode` always
say how many reports were malformed or suspect, in text as in JSON; a record whose orig_len is
0 or 2^32 - 1 is reported with its byte offset."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pyarrow as pa

from burstlab.telemetry import write_int_pcap
from helpers import burstlab

REPORTS = 2_000
#: The 24-bit occupancy of a TR v1.0 report in 40-byte cells with bit 23 set, as the probe saw.
CORRUPT_OCCUPANCY = 671_088_640


def _capture(path: Path, *, flip_seq: int | None = None, corrupt_occupancy: int | None = None) -> Path:
    """2,000 TR v1.0 reports 1 µs apart from one port whose queue ramps to 1.6 MB and back twice."""
    k = np.arange(REPORTS, dtype=np.uint64)
    phase = k % 1_000
    occupancy = np.where(phase < 500, phase * 3_200, (1_000 - phase) * 3_200).astype(np.uint64)
    seq = k.copy()
    if flip_seq is not None:
        seq[flip_seq] ^= np.uint64(1 << 30)
    if corrupt_occupancy is not None:
        occupancy[corrupt_occupancy] = CORRUPT_OCCUPANCY

    def same(v: int) -> np.ndarray:
        return np.full(REPORTS, v, dtype=np.uint64)

    table = pa.table({
        "t_s": 1.0 + k.astype(np.float64) * 1e-6, "switch_id": same(1), "ingress_port": same(3),
        "egress_port": same(7), "queue_id": same(0), "queue_occupancy_bytes": occupancy,
        "hop_latency_ns": occupancy * 8 // 100, "src_ip": 0x0A00_0001 + k % 4, "dst_ip": same(0x0A01_0001),
        "src_port": same(10_000), "dst_port": same(5201), "protocol": same(6),
        "packet_bytes": same(1500), "dropped": np.zeros(REPORTS, dtype=bool), "report_seq": seq,
    })
    assert write_int_pcap(table, path) == REPORTS
    return path


def _records(data: bytes) -> list[int]:
    """File offsets of a little-endian pcap's record headers."""
    offsets, at = [], 24
    while at < len(data):
        offsets.append(at)
        at += 16 + struct.unpack_from("<I", data, at + 8)[0]
    return offsets


def _shape(result: dict) -> list[tuple[float, float, int]]:
    return [(b["start_s"], b["duration_s"], b["peak_bytes"]) for b in result["bursts"]]


def _detect_json(path: Path, *args: str) -> dict:
    r = burstlab("detect", path, "--buffer", "2MB", "--json", *args)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_flipped_sequence_bit_is_suspect_not_a_billion_lost(tmp_path: Path) -> None:
    clean = _detect_json(_capture(tmp_path / "clean.pcap"))
    flipped = _detect_json(_capture(tmp_path / "flip.pcap", flip_seq=1_000))
    assert (clean["reports_lost"], clean["suspect_sequence"]) == (0, 0)
    assert flipped["suspect_sequence"] == 1
    # Only the corrupt report's true number is missing; before the fix: 1,073,741,824.
    assert flipped["reports_lost"] == 1
    assert clean["bursts"] and _shape(flipped) == _shape(clean)
    text = burstlab("detect", tmp_path / "flip.pcap", "--buffer", "2MB")
    assert "1 reports lost, 0 malformed, 1 suspect (1 sequence jump" in text.stdout, text.stdout
    assert "1 reports carry a sequence number more than 65536 ahead" in text.stderr, text.stderr


def test_occupancy_beyond_the_buffer_is_suspect_not_a_burst_peak(tmp_path: Path) -> None:
    clean = _detect_json(_capture(tmp_path / "clean.pcap"))
    # Report 1,250 sits inside a burst (the queue at 800 kB): its peak must stay 1.6 MB.
    bad = _detect_json(_capture(tmp_path / "occ.pcap", corrupt_occupancy=1_250))
    assert bad["suspect_occupancy"] == 1
    assert clean["bursts"] and _shape(bad) == _shape(clean)
    assert max(b["peak_bytes"] for b in bad["bursts"]) <= 2_000_000
    assert any("deeper than the stated buffer" in w for w in bad["warnings"])


def test_every_report_malformed_is_said_in_text_and_json(tmp_path: Path) -> None:
    path = _capture(tmp_path / "bad.pcap")
    data = bytearray(path.read_bytes())
    for at in _records(bytes(data)):
        # The TR v1.0 header's version nibble, after Ethernet (14), IPv4 (20) and UDP (8).
        data[at + 16 + 42] = 0xF0
    path.write_bytes(bytes(data))
    got = _detect_json(path)
    assert (got["reports"], got["malformed"], got["bursts"]) == (0, REPORTS, [])
    assert any(f"all {REPORTS} report packets were malformed" in w for w in got["warnings"])
    text = burstlab("detect", path, "--buffer", "2MB")
    assert f"0 bursts from 0 reports, 0 reports lost, {REPORTS} malformed" in text.stdout, text.stdout
    decoded = burstlab("decode", path, "--json")
    assert f"0 reports, {REPORTS} malformed, 0 suspect" in decoded.stderr, decoded.stderr


def test_impossible_orig_len_is_reported_with_its_offset(tmp_path: Path) -> None:
    path = _capture(tmp_path / "len.pcap")
    clean = _shape(_detect_json(path))
    data = bytearray(path.read_bytes())
    third = _records(bytes(data))[2]
    for orig in (0, 0xFFFF_FFFF):
        struct.pack_into("<I", data, third + 12, orig)
        path.write_bytes(bytes(data))
        r = burstlab("decode", path)
        assert r.returncode == 0, r.stderr
        assert f"byte {third + 12}: orig_len = {orig}" in r.stderr, r.stderr
        assert "1 records with impossible lengths" in r.stderr, r.stderr
        got = _detect_json(path)
        assert any(f"byte {third + 12}" in w and "lengths no capture produces" in w for w in got["warnings"])
        assert _shape(got) == clean
