"""iperf3's JSON across releases, and the one line each bad input gets.

Published fixtures under data/ (iperf3's own issue tracker, github.com/esnet/iperf):
* esnet-iperf-545-3.0.11-error.json: the whole output of iperf 3.0.11 for a run that could not
  connect, from issue #545 ("3.0.11 invalid JSON output when there is no route to host").
* esnet-iperf-1724-interval.json: one interval (a sender's stream with snd_wnd, and the sum)
  from issue #1724 ("Add RTT to Sum when using JSON").
* esnet-iperf-1684-interval.json: one omitted interval at 28.6 Gbit/s over loopback (pmtu 65535,
  rtt 51 µs) from pull request #1684 ("Add Time Flag For The Iperf Server Process").
* esnet-iperf-1908-3.19.1-reverse.json: the start record and the second interval of a client's
  `-R` run of iperf 3.19.1+ on macOS (the client receives: `sender: false`, no cwnd), the fields
  read here, from pull request #1908 ("Server JSON Output Does Not Report Client's Results").
* esnet-iperf-1098-json-stream-start.jsonl: the `start` event of `--json-stream` (iperf 3.9+),
  the fields read here, from pull request #1098 ("Implement streaming json output").
Behaviours published without a file: some 3.16-3.17 builds write -J twice (issue #1716, "JSON
data is output twice"); the tests double a local run to match.
Local fixtures (local-3.12-*) are whole runs of Debian's iperf 3.12 made on this project's
namespace dumbbell (tests/python/advise/realnet.py builds the same set-ups).
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

from burstlab.advise import iperf3
from burstlab.advise.iperf3 import Iperf3InputError

DATA = Path(__file__).with_name("data")


def _load(name: str) -> dict:
    return json.loads((DATA / name).read_text())


def test_published_3_0_11_aborted_run_names_iperf3s_error():
    with pytest.raises(Iperf3InputError) as e:
        iperf3.load(DATA / "esnet-iperf-545-3.0.11-error.json")
    assert "aborted" in str(e.value) and "No route to host" in str(e.value) and "\n" not in str(e.value)


def test_published_interval_with_snd_wnd_is_read_as_the_senders():
    iv = iperf3.read_interval(_load("esnet-iperf-1724-interval.json"), 0, "x", want_sender=True)
    assert (iv.cwnd_bytes, iv.snd_wnd_bytes, iv.rtt_us, iv.retransmits) == (139152, 3142272, 13505, 15)
    assert iv.bytes == 11927552 and iv.start_s == pytest.approx(1.001069) and not iv.omitted


def test_published_omitted_loopback_interval():
    iv = iperf3.read_interval(_load("esnet-iperf-1684-interval.json"), 0, "x", want_sender=True)
    assert iv.omitted and iv.rtt_us == 51 and iv.snd_wnd_bytes == 3145088 and iv.cwnd_bytes == 2029973
    assert iv.bits_per_second == pytest.approx(28.6e9, rel=1e-3)


def test_an_interval_from_before_3_1_has_no_sender_key_and_is_still_this_sides():
    raw = _load("esnet-iperf-1724-interval.json")
    for s in [*raw["streams"], raw["sum"]]:
        s.pop("sender")
        s.pop("snd_wnd", None)
    iv = iperf3.read_interval(raw, 0, "x", want_sender=True)
    assert iv.cwnd_bytes == 139152 and iv.snd_wnd_bytes is None


def test_a_whole_3_12_run_reads_both_hosts_fields():
    run = iperf3.load(DATA / "local-3.12-rmem8k.json")
    assert run.version == "iperf 3.12" and not run.reverse and run.num_streams == 1
    assert run.receiver_kernel and run.receiver_kernel.startswith("6.")
    # SO_RCVBUF of the receiver's socket is the server's tcp_rmem[1] (8192 in this set-up).
    assert run.rcvbuf_bytes == 8192 and run.sndbuf_bytes == 16384
    assert all(iv.snd_wnd_bytes == 3840 for iv in run.intervals)
    assert run.throughput_bps == pytest.approx(run.received_bytes * 8 / run.seconds)


def test_a_reverse_run_without_server_output_warns_that_the_senders_figures_are_missing():
    doc = _load("local-3.12-rmem8k.json")
    doc["start"]["test_start"]["reverse"] = 1
    del doc["server_output_json"]
    run = iperf3.parse(json.dumps(doc))
    assert run.reverse and any("--get-server-output" in w for w in run.warnings)


def _udp(doc: dict) -> dict:
    doc = copy.deepcopy(doc)
    doc["start"]["test_start"]["protocol"] = "UDP"
    return doc


@pytest.mark.parametrize("content, field", [
    ("", "empty file"),
    ("hello, not json\n", "not JSON"),
    ('{"a": 1}', "expected top-level 'start' and 'intervals'"),
    ((DATA / "esnet-iperf-545-3.0.11-error.json").read_text(), "error = 'error - unable to connect"),
    (json.dumps(_udp(json.loads((DATA / "local-3.12-rmem8k.json").read_text()))), "start.test_start.protocol = 'UDP'"),
    ('{"start": {"test_start": {}}, "intervals": [{"streams": [], "sum": {"start": 0}}], "end": {}}',
     "intervals[0].sum.end"),
])
def test_bad_inputs_get_one_line_naming_the_field_and_exit_2(tmp_path, content, field):
    path = tmp_path / "run.json"
    path.write_text(content)
    proc = subprocess.run([sys.executable, "-m", "burstlab", "explain", str(path), "--no-twin"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("burstlab explain: ") and field in lines[0], proc.stderr
    assert proc.stdout == ""


def test_a_reverse_run_reads_the_senders_streams_from_the_servers_output():
    # iperf3 -R --get-server-output: the server in the receiver namespace sent (not through the
    # tbf, which shapes the other direction); its streams carry the cwnd, RTT and retransmits.
    doc = _load("local-3.12-reverse.json")
    run = iperf3.parse(json.dumps(doc))
    server_streams = doc["server_output_json"]["intervals"][0]["streams"]
    assert run.reverse and not run.warnings
    assert run.intervals[0].cwnd_bytes == server_streams[0]["snd_cwnd"] and server_streams[0]["sender"]
    assert all(s["sender"] is False and "snd_cwnd" not in s for iv in doc["intervals"] for s in iv["streams"])
    assert run.min_rtt_us == doc["server_output_json"]["end"]["streams"][0]["sender"]["min_rtt"]


def test_published_3_19_reverse_run_without_server_output():
    doc = _load("esnet-iperf-1908-3.19.1-reverse.json")
    doc["end"] = {"sum_sent": {"seconds": 4.0, "bytes": 249561088},
                  "sum_received": {"seconds": 4.0, "bytes": 249561088}}
    run = iperf3.parse(json.dumps(doc))
    assert run.version == "iperf 3.19.1+" and run.reverse and run.target_bitrate_bps == 170e6
    assert run.fq_rate_bps is None and run.mss == 16332 and run.receiver_kernel is None  # macOS
    iv = run.intervals[0]
    assert (iv.bytes, iv.cwnd_bytes, iv.rtt_us) == (62390272, None, None)
    assert any("--get-server-output" in w for w in run.warnings)


def test_json_stream_events_read_as_the_document_of_minus_J():
    # Debian's 3.12 has no --json-stream: a local run is written as its events (pull request
    # #1098: one object per line, {"event": "start" | "interval" | "end", "data": ...}).
    doc = _load("local-3.12-rmem8k.json")
    events = [{"event": "start", "data": doc["start"]}, *({"event": "interval", "data": iv} for iv in doc["intervals"]),
              {"event": "end", "data": doc["end"]}]
    stream = iperf3.parse("\n".join(json.dumps(e, separators=(",", ":")) for e in events) + "\n")
    whole = iperf3.parse(json.dumps({k: v for k, v in doc.items() if k != "server_output_json"}))
    assert stream == whole and stream.intervals and stream.min_rtt_us and not stream.warnings


def test_a_json_stream_cut_after_its_start_gets_one_line():
    with pytest.raises(Iperf3InputError) as e:
        iperf3.load(DATA / "esnet-iperf-1098-json-stream-start.jsonl")
    assert "intervals = []" in str(e.value) and "\n" not in str(e.value)


def test_a_document_written_twice_is_read_once_with_a_warning():
    text = (DATA / "local-3.12-rmem8k.json").read_text()
    once, twice = iperf3.parse(text), iperf3.parse(text + text)
    assert twice.intervals == once.intervals and twice.throughput_bps == once.throughput_bps
    assert any("2 identical copies" in w and "#1716" in w for w in twice.warnings)
    with pytest.raises(Iperf3InputError, match=r"not JSON after 1 JSON value\(s\) \(line"):
        iperf3.parse(text + "\n{garbage")
