"""`burstlab collect` fed by `burstlab replay` finds what `burstlab detect` finds in the same
capture: the same bursts (queue, start, end, peak, bytes, drops, reports), the same culprits and
the same report losses, burst by burst. Run as users run them: three processes, UDP between."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from collect_support import RISE, collect_process, free_port, noviflow_profile, ramp_table, write_capture
from helpers import burstlab

SCENARIOS = Path(__file__).resolve().parents[3] / "scenarios"


def collect_replayed(capture: Path, profile: Path, port: int, *options: str) -> list[dict]:
    """The JSON events of `collect` while `replay --speed max` sends ``capture`` to it."""
    proc = collect_process("--listen", f"127.0.0.1:{port}", "--profile", profile, "--json", *options)
    try:
        first = json.loads(proc.stdout.readline())
        assert first["event"] == "listening", first
        sent = burstlab("replay", capture, "--to", f"127.0.0.1:{port}", "--speed", "max", "--json")
        assert sent.returncode == 0, sent.stderr
        assert json.loads(sent.stdout)["refused"] == 0
        proc.send_signal(15)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    return [json.loads(line) for line in out.splitlines()]


def same_findings(detected: dict, events: list[dict]) -> None:
    bursts = [e for e in events if e["event"] == "burst"]
    summary = events[-1]
    assert summary["event"] == "summary"
    assert summary["kernel_drops"] == 0, "the socket dropped reports: the comparison would be void"
    assert (summary["reports"], summary["malformed"]) == (detected["reports"], detected["malformed"])
    assert summary["reports_lost"] == detected["reports_lost"]
    bursts.sort(key=lambda b: (b["start_s"], b["switch_id"], b["port"], b["queue_id"]))
    assert len(bursts) == len(detected["bursts"])
    for got, want in zip(bursts, detected["bursts"], strict=True):
        for key in ("switch_id", "port", "queue_id", "start_s", "end_s", "peak_bytes", "peak_s", "bytes",
                    "drops", "reports", "reports_lost", "definition"):
            assert got[key] == want[key], (key, got, want)
        assert [c["flow"] for c in got["culprits"]] == [c["flow"] for c in want["culprits"]]
        assert [c["bytes"] for c in got["culprits"]] == [c["bytes"] for c in want["culprits"]]
        # Victims are judged against the queue's latency baseline so far (detect: the whole
        # capture); on these captures, whose traffic outside bursts is steady, they agree too.
        assert [v["flow"] for v in got["victims"]] == [v["flow"] for v in want["victims"]]


def test_collect_fed_by_replay_finds_the_bursts_culprits_and_losses_detect_finds(tmp_path: Path):
    capture = tmp_path / "ramps.pcap"
    # Two switches, four queues, 30,000 reports; every 250th report of a switch is lost.
    write_capture(capture, ramp_table(30_000, lose_every=250))
    detected = json.loads(burstlab("detect", capture, "--rise", RISE, "--json").stdout)
    assert len(detected["bursts"]) >= 6 and detected["reports_lost"] > 50
    assert any(b["reports_lost"] > 0 for b in detected["bursts"])
    port = free_port()
    events = collect_replayed(capture, noviflow_profile(tmp_path / "p.toml", port), port, "--rise", RISE)
    same_findings(detected, events)
    culprits = {c["flow"].split(":")[0] for b in detected["bursts"] for c in b["culprits"]}
    assert culprits == {"10.0.0.1", "10.0.0.2"}


def test_a_simulated_networks_reports_give_the_same_bursts_live(tmp_path: Path):
    capture = tmp_path / "int.pcap"
    run = burstlab("run", SCENARIOS / "int-burst.toml", "--set", "telemetry.int_sample=50", "--set", "stop=900ms",
                   "--int-pcap", capture)
    assert run.returncode == 0, run.stderr
    detected = json.loads(burstlab("detect", capture, "--rise", "100KB", "--json").stdout)
    assert len(detected["bursts"]) == 2
    port = free_port()
    events = collect_replayed(capture, noviflow_profile(tmp_path / "p.toml", port), port, "--rise", "100KB")
    same_findings(detected, events)


@pytest.mark.parametrize("args, message", [
    (["--rise", "ten"], '--rise = "ten": expected a size'),
    (["--listen", "nowhere"], '--listen = "nowhere": expected ADDR:PORT'),
    (["--max-streams", "0"], "--max-streams = 0: expected at least 1"),
])
def test_bad_options_exit_2_with_one_line(args: list[str], message: str):
    r = burstlab("collect", *args, "--duration", "0.1")
    assert r.returncode == 2, r.stderr
    assert message in r.stderr and r.stderr.count("\n") == 1, r.stderr


def test_an_address_in_use_is_named(tmp_path: Path):
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        r = burstlab("collect", "--listen", f"127.0.0.1:{port}", "--duration", "0.1")
    assert r.returncode == 2
    assert f"--listen 127.0.0.1:{port}: " in r.stderr, r.stderr


def test_replay_of_a_missing_capture_exits_2(tmp_path: Path):
    r = burstlab("replay", tmp_path / "none.pcap", "--to", "127.0.0.1:9")
    assert (r.returncode, r.stderr.strip()) == (2, f"burstlab replay: {tmp_path / 'none.pcap'}: no such capture file")


@pytest.mark.parametrize("sig, code, said", [(2, 130, "interrupted"), (15, 0, "terminated (SIGTERM)")])
def test_ctrl_c_and_sigterm_close_the_files_with_everything_received(tmp_path: Path, sig: int, code: int, said: str):
    capture = tmp_path / "ramps.pcap"
    write_capture(capture, ramp_table(5_000))
    port = free_port()
    out = tmp_path / "live"
    proc = collect_process("--listen", f"127.0.0.1:{port}", "--out", out, "--rotate", "3600", "--json")
    try:
        assert json.loads(proc.stdout.readline())["event"] == "listening"
        assert burstlab("replay", capture, "--to", f"127.0.0.1:{port}", "--speed", "max").returncode == 0
        proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == code, stderr
    summary = json.loads(stdout.splitlines()[-1])
    assert (summary["stopped"], summary["reports"]) == (said, 5_000)
    import pyarrow.parquet as pq

    assert pq.read_table(out / "reports").num_rows == 5_000
    assert not list(out.glob("*/.part-*"))


def test_without_rise_or_buffer_collect_uses_detects_default_rule(tmp_path: Path):
    # detect's default rise is half each queue's deepest occupancy; collect's default is the
    # same rule, its bursts given when it stops.
    capture = tmp_path / "ramps.pcap"
    write_capture(capture, ramp_table(30_000, lose_every=250))
    detected = json.loads(burstlab("detect", capture, "--json").stdout)
    assert len(detected["bursts"]) >= 6
    assert {b["definition"]["rise_of_deepest"] for b in detected["bursts"]} == {0.5}
    port = free_port()
    events = collect_replayed(capture, noviflow_profile(tmp_path / "p.toml", port), port)
    same_findings(detected, events)
    assert events[-1]["settled"] == 0
