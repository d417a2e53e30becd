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
    # shim's length to zero words. The report header is whole, so the report stands (issue 35:
    # a fault in the reported packet loses only what lies behind it, here the INT stack) and
    # names the fault; a report whose own header is malformed is an error line.
    payload = 24 + 16 + 42
    shim = payload + 16 + 14 + 20 + 20  # TR header, inner Ethernet, IPv4, TCP (NoviFlow: before options)
    assert data[shim] == 1, "expected an INT v1.0 shim (type 1)"
    data[shim + 2] = 0
    order = "little" if data[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else "big"
    second = payload + 16 + int.from_bytes(data[32:36], order)  # after the first record's data
    assert data[second] >> 4 == 1, "expected a TR v1.0 header"
    data[second] = 0x30  # version nibble 3: no such Telemetry Report
    pcap.write_bytes(bytes(data))
    r = burstlab("decode", pcap, "--json")
    assert r.returncode == 0, r.stderr
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    first = lines[0]
    assert first["frame"] == 1 and first["hops"] == [] and first["flow"]["proto"] == "tcp", first
    assert first["inner_error"].startswith(f"byte {shim + 2 - payload}: int.shim.length = 0"), first
    assert set(lines[1]) == {"frame", "error", "offset"} and lines[1]["frame"] == 2, lines[1]
    assert lines[1]["offset"] == 0 and "report.version = 3" in lines[1]["error"]
    assert all("hops" in x for x in lines[2:]) and len(lines) > 10
    text = burstlab("decode", pcap)
    assert text.returncode == 0 and ", 1 malformed, " in text.stderr, text.stderr
    assert "reported packet not read whole: byte" in text.stdout


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
