"""A capture cut inside its last record, as one stopped mid-write is, read as tcpdump reads the
same file: `decode` and `detect` give every whole record before the cut (as many as tcpdump
prints) and one warning line naming the record's byte offset and what it needed; pcap and
pcapng, cut in the record's header or its data. A length that cannot be right in the middle of
a file is still an error naming its offset."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import time
from pathlib import Path

import pytest

import burstlab.telemetry as tm
from capture_files import pcap_records, to_pcapng
from helpers import burstlab

pytestmark = pytest.mark.skipif(shutil.which("tcpdump") is None, reason="tcpdump not installed (scripts/setup.sh)")


def tcpdump_reads(path: Path) -> tuple[int, str]:
    """How many packets `tcpdump -r` prints from ``path``, and what it says on stderr."""
    r = subprocess.run(["tcpdump", "-r", str(path), "-nn"], capture_output=True, text=True, timeout=60)
    return len(r.stdout.splitlines()), r.stderr


def cut_copies(capture: Path, tmp_path: Path) -> list[tuple[Path, int]]:
    """Copies of the capture, pcap and pcapng, each cut inside its last record: 1, 7 and 15
    bytes into the record header (pcapng: 1, 7, 11 into the block header), 3 bytes past it,
    halfway through and one byte short of the end; with the last record's offset."""
    pcap = capture.read_bytes()
    ng, epbs = to_pcapng(pcap)
    copies = []
    for name, data, last, header in (("pcap", pcap, pcap_records(pcap)[-1], 16), ("pcapng", ng, epbs[-1], 12)):
        for into in (1, 7, header - 1, header + 3, (len(data) - last) // 2, len(data) - last - 1):
            path = tmp_path / f"cut-{into}.{name}"
            path.write_bytes(data[:last + into])
            copies.append((path, last))
    return copies


def test_whole_capture_reads_as_tcpdump_reads_it(sim_int_capture: Path) -> None:
    frames, err = tcpdump_reads(sim_int_capture)
    assert frames > 50 and "truncated" not in err
    r = burstlab("decode", sim_int_capture, "--json")
    assert r.returncode == 0 and r.stderr == ""
    assert len(r.stdout.splitlines()) == frames  # one report a frame


def test_api_reads_every_cut_up_to_the_cut_as_tcpdump(sim_int_capture: Path, tmp_path: Path) -> None:
    whole, _ = tcpdump_reads(sim_int_capture)
    for path, last in cut_copies(sim_int_capture, tmp_path):
        frames, err = tcpdump_reads(path)
        assert frames == whole - 1 and "truncated" in err, (path, err)
        lines: list[str] = []
        stats = tm.decode_lines(path, lines.extend)
        assert (stats["frames"], stats["reports"], len(lines)) == (frames, frames, frames), path
        assert stats["bytes"] == last
        assert f"byte {last}: " in stats["warning"] and "\n" not in stats["warning"], stats["warning"]
        result = tm.detect(path)
        assert result["reports"] == frames
        assert result["warnings"] == [stats["warning"]]
        with pytest.warns(UserWarning, match=f"byte {last}: "):
            assert len(list(tm.decode(path))) == frames


@pytest.mark.parametrize("fmt", ["pcap", "pcapng"])
def test_cli_decode_and_detect_warn_once_on_a_cut_capture(sim_int_capture: Path, tmp_path: Path, fmt: str) -> None:
    data = sim_int_capture.read_bytes()
    last = pcap_records(data)[-1]
    if fmt == "pcapng":
        data, blocks = to_pcapng(data)
        last = blocks[-1]
    path = tmp_path / f"stopped.{fmt}"
    path.write_bytes(data[:last + 13])  # inside the record header (pcap) / the block (pcapng)
    frames, _ = tcpdump_reads(path)

    r = burstlab("decode", path, "--json")
    assert r.returncode == 0, r.stderr
    assert len(r.stdout.splitlines()) == frames
    (line,) = r.stderr.splitlines()
    assert line.startswith(f"burstlab decode: warning: {path}: ")
    assert f"(byte {last}: pcap" in line and "expected" in line, line

    r = burstlab("detect", path, "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["reports"] == frames
    (line,) = r.stderr.splitlines()
    assert line.startswith(f"burstlab detect: warning: {path}: ") and f"(byte {last}: " in line


def test_an_impossible_length_mid_file_is_still_an_error_at_its_offset(sim_int_capture: Path, tmp_path: Path) -> None:
    pcap = bytearray(sim_int_capture.read_bytes())
    tenth = pcap_records(bytes(pcap))[9]
    pcap[tenth + 8:tenth + 12] = struct.pack("<I", 0x7FFF_FFF0)
    path = tmp_path / "corrupt.pcap"
    path.write_bytes(bytes(pcap))
    for verb in ("decode", "detect"):
        r = burstlab(verb, path, "--json")
        assert r.returncode == 2, r.stdout
        assert f"byte {tenth + 8}: incl_len = {0x7FFF_FFF0}" in r.stderr, r.stderr
        # decode prints the reports before the error, as tcpdump prints the packets before it.
        assert len(r.stdout.splitlines()) == (9 if verb == "decode" else 0)


@pytest.mark.skipif(os.geteuid() != 0, reason="capturing on the loopback interface needs root")
def test_a_tcpdump_capture_killed_mid_write(tmp_path: Path) -> None:
    """tcpdump writes its capture in page-sized chunks: killed, the file usually ends inside a
    record. Whatever the cut, burstlab reads the frames tcpdump reads, and warns when it does."""
    sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sink.bind(("127.0.0.1", 0))
    port = sink.getsockname()[1]
    path = tmp_path / "lo.pcap"
    dump = subprocess.Popen(["tcpdump", "-i", "lo", "-nn", "-s", "0", "-Z", "root", "-w", str(path),
                             "udp", "and", "dst", "port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert dump.stderr is not None
        assert "listening on" in dump.stderr.readline()
        send = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        for k in range(3000):
            send.sendto(bytes(200 + k * 37 % 1200), ("127.0.0.1", port))
            if k % 200 == 0:
                time.sleep(0.005)  # let the socket buffer drain
        time.sleep(0.3)
    finally:
        dump.send_signal(signal.SIGKILL)
        dump.wait(timeout=10)
        sink.close()
    frames, err = tcpdump_reads(path)
    assert frames > 1000, err
    r = burstlab("decode", path)
    assert r.returncode == 0, r.stderr
    assert f"from {frames} frames" in r.stderr
    assert (" warning: " in r.stderr) == ("truncated" in err), (r.stderr, err)
    assert tm.detect(path, link_rate="10Gbps")["samples"] == frames
