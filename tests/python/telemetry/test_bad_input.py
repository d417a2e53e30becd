"""Bad input to `decode`/`detect`: one clear error naming the file, byte offset or option, the
value and what was expected; exit 2; a malformed report inside a good capture is listed, not
fatal."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from helpers import burstlab

REPO = Path(__file__).resolve().parents[3]


def test_not_a_capture_names_the_byte_offset(tmp_path: Path) -> None:
    f = tmp_path / "x.pcap"
    f.write_bytes(b"this is not a pcap file at all")
    r = burstlab("decode", f)
    assert r.returncode == 2
    assert "byte 0" in r.stderr and str(f) in r.stderr


def test_cut_record_is_a_warning_naming_its_file_offset(tmp_path: Path) -> None:
    # A capture stopped mid-write: read up to the cut, as tcpdump reads it (test_cut_capture.py).
    header = struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 1)
    record = struct.pack("<IIII", 0, 0, 100, 100) + bytes(40)  # says 100 bytes, has 40
    f = tmp_path / "cut.pcap"
    f.write_bytes(header + record)
    r = burstlab("decode", f, "--json")
    assert r.returncode == 0 and r.stdout == "", r.stderr
    assert "byte 24: pcap record data = 56, expected 116 bytes" in r.stderr, r.stderr


def test_malformed_report_is_a_json_error_line_and_decoding_goes_on(tmp_path: Path) -> None:
    pcap = tmp_path / "r.pcap"
    ok = burstlab("run", REPO / "scenarios" / "int-burst.toml", "--set", "telemetry.int_sample=5000",
                  "--set", "stop=850ms", "--int-pcap", pcap)
    assert ok.returncode == 0, ok.stderr
    data = bytearray(pcap.read_bytes())
    # First record: 24-byte file header, 16-byte record header, 14 Ethernet + 20 IPv4 + 8 UDP,
    # then the TR v1.0 header; its INT shim sits behind the reported packet's headers. Cut the
    # shim's length to zero words.
    payload = 24 + 16 + 42
    shim = payload + 16 + 14 + 20 + 20  # TR header, inner Ethernet, IPv4, TCP (NoviFlow: before options)
    assert data[shim] == 1, "expected an INT v1.0 shim (type 1)"
    data[shim + 2] = 0
    pcap.write_bytes(bytes(data))
    r = burstlab("decode", pcap, "--json")
    assert r.returncode == 0, r.stderr
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    assert set(lines[0]) == {"frame", "error", "offset"} and lines[0]["frame"] == 1
    assert lines[0]["offset"] == shim + 2 - payload, lines[0]
    assert "shim" in lines[0]["error"]
    assert all("hops" in x for x in lines[1:]) and len(lines) > 10


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--rise", "50%"], "--rise"),
        (["--rise", "lots"], "--rise"),
        (["--buffer", "64KB", "--rise", "20%", "--fall", "30%"], "--fall"),
        (["--min-duration", "soon"], "--min-duration"),
    ],
)
def test_bad_detector_options_name_the_option(tmp_path: Path, args: list[str], needle: str) -> None:
    pcap = tmp_path / "r.pcap"
    ok = burstlab("run", REPO / "scenarios" / "int-burst.toml", "--set", "telemetry.int_sample=5000",
                  "--set", "stop=850ms", "--int-pcap", pcap)
    assert ok.returncode == 0, ok.stderr
    r = burstlab("detect", pcap, *args)
    assert r.returncode == 2, r.stdout
    assert needle in r.stderr, r.stderr


def test_missing_input_and_empty_simulation_directory(tmp_path: Path) -> None:
    r = burstlab("detect", tmp_path / "nope.pcap")
    assert r.returncode == 2 and "no such file" in r.stderr
    r = burstlab("detect", tmp_path)
    assert r.returncode == 2 and "int.parquet or queue.parquet" in r.stderr
