"""`burstlab explain` on a stored real run: phases, the twin, --what-if, --emit-scenario (which
never replaces a file unless told), and the verb's modules kept out of `burstlab --version`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from burstlab.advise import explain as ex
from burstlab.advise import explain_iperf3, iperf3
from burstlab.advise.twin import WhatIfError, what_if_overrides
from burstlab.cli import build_app

DATA = Path(__file__).with_name("data")
LOSS = DATA / "local-3.12-tbf50mbit-16k.json"
RMEM = DATA / "local-3.12-rmem8k.json"
LOSS_FLAGS = ["--rate", "50mbit", "--tbf", "--buffer", "16384B"]


def _cli(*args: str):
    return CliRunner().invoke(build_app(), ["explain", *map(str, args)])


def test_the_stored_loss_run_is_explained_and_its_twin_matches():
    out = explain_iperf3(LOSS, rate="50mbit", tbf=True, buffer="16KiB")
    assert out["limit"] == ex.LOSS and out["phases"][0]["retransmits"] == out["retransmits"] == 2672
    assert out["match"]["within"], out["match"]
    assert 'tbf_rate = "50Mbps"' in out["scenario"] and 'tbf_limit = "16384B"' in out["scenario"]


def test_a_receive_window_phase_says_what_the_receiver_offered():
    out = explain_iperf3(RMEM, rate="1gbit", twin=False)
    assert out["limit"] == ex.RECEIVE_WINDOW
    assert "3.75 KiB" in out["summary"] and "cwnd of 201 KiB" in out["summary"]


def test_a_window_the_receiver_turns_round_slowly_is_named_in_a_note():
    # 3.75 KiB at ~220 Mbit/s is a window every ~137 us against an RTT of ~31 us.
    out = explain_iperf3(RMEM, rate="1gbit", twin=False)
    note = next(n for n in out["notes"] if "turned its window round" in n)
    assert "every 137 µs" in note and "RTT of 31 µs" in note
    turn, rtt = ex.window_turnaround(iperf3.load(RMEM), ex.classify(iperf3.load(RMEM), ex.Settings(rate_bps=1e9)))
    assert turn > ex.SLOW_TURNAROUND * rtt
    assert not any("turned its window" in n for n in explain_iperf3(LOSS, rate="50mbit", twin=False)["notes"])


def test_without_snd_wnd_the_rmem_flag_tells_the_receive_window():
    run = iperf3.load(RMEM)
    bare = [iv.__class__(**{**iv.__dict__, "snd_wnd_bytes": None}) for iv in run.intervals]
    run = run.__class__(**{**run.__dict__, "intervals": bare})
    assert ex.explain(run, ex.Settings(rate_bps=1e9)).limit == ex.SEND_BUFFER
    assert ex.explain(run, ex.Settings(rate_bps=1e9, tcp_rmem=(4096, 8192, 8192))).limit == ex.RECEIVE_WINDOW


def test_what_if_a_deeper_buffer_removes_most_retransmits():
    out = explain_iperf3(LOSS, rate="50mbit", tbf=True, buffer="16KiB", what_if=["buffer=256KiB"])
    (w,) = out["what_if"]
    assert w["set"] == {"topology.tbf_limit": "256KiB"}
    assert w["after"]["retransmits"] < w["before"]["retransmits"] / 4
    assert w["after"]["throughput_bps"] > w["before"]["throughput_bps"]


def test_what_if_keys():
    assert what_if_overrides("tcp_rmem=4096 131072 6291456", 2) == {
        "flow[0].tcp_rmem": "4096 131072 6291456", "flow[1].tcp_rmem": "4096 131072 6291456"}
    assert what_if_overrides("rtt=20ms", 1) == {"topology.rtt": "20ms"}
    assert what_if_overrides("flow[0].initcwnd=100", 1) == {"flow[0].initcwnd": "100"}
    with pytest.raises(WhatIfError, match="unknown key 'rmem'"):
        what_if_overrides("rmem=1", 1)
    with pytest.raises(WhatIfError, match="expected KEY=VALUE"):
        what_if_overrides("tcp_rmem", 1)


def test_emit_scenario_writes_the_twin_and_never_replaces_a_file_unasked(tmp_path):
    target = tmp_path / "twin.toml"
    first = _cli(LOSS, *LOSS_FLAGS, "--emit-scenario", target)
    assert first.exit_code == 0, first.output
    assert "tbf_limit" in target.read_text() and "twin:" in first.output and "matches" in first.output
    target.write_text("# mine\n")
    again = _cli(LOSS, *LOSS_FLAGS, "--emit-scenario", target)
    assert again.exit_code == 2 and "--overwrite" in again.output
    assert target.read_text() == "# mine\n"
    forced = _cli(LOSS, *LOSS_FLAGS, "--emit-scenario", target, "--overwrite")
    assert forced.exit_code == 0 and target.read_text().startswith('name = "twin of')
    # The emitted twin runs as any scenario does.
    import burstlab
    assert burstlab.run(str(target)).summary["flows"][0]["retransmits"] > 0


def test_json_and_a_bad_what_if(tmp_path):
    result = _cli(LOSS, *LOSS_FLAGS, "--json", "--what-if", "cca=cubic")
    assert result.exit_code == 0
    out = json.loads(result.stdout)
    assert out["what_if"][0]["set"] == {"flow[0].cca": "cubic"} and out["limit"] == ex.LOSS
    bad = _cli(LOSS, *LOSS_FLAGS, "--what-if", "nope=1")
    assert bad.exit_code == 2 and "unknown key 'nope'" in bad.output


def test_bad_flags_name_the_flag():
    assert "--rate '10Gbs'" in _cli(LOSS, "--rate", "10Gbs").output
    assert "--tcp-rmem" in _cli(LOSS, "--tcp-rmem", "1 2").output


def test_version_loads_no_advise_module():
    code = ("import sys\nfrom burstlab.cli import main\ntry:\n    main(['--version'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith('burstlab.advise') or m == 'burstlab.cli.explain'))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip().splitlines()[-1] == "[]", proc.stdout + proc.stderr


def test_a_rate_cap_the_run_sits_at_is_named_pacing():
    doc = json.loads(RMEM.read_text())
    doc["start"]["test_start"]["fqrate"] = 235_000_000  # iperf3 --fq-rate 235M, about what the run got
    run = iperf3.parse(json.dumps(doc))
    assert ex.explain(run, ex.Settings(rate_bps=1e9)).limit == ex.PACING
    # Far from the cap, the cap is not the limit.
    doc["start"]["test_start"]["fqrate"] = 900_000_000
    assert ex.explain(iperf3.parse(json.dumps(doc)), ex.Settings(rate_bps=1e9)).limit == ex.RECEIVE_WINDOW


def test_ss_snapshots_give_linuxs_own_account():
    from burstlab.advise import ss

    # local-ss-tin-rmem8k.txt: `ss -tin` on the sender of another run of the same set-up as
    # local-3.12-rmem8k.json (tcp_rmem 4096 8192 8192 through a 1 Gbit/s tbf).
    c = ss.load(DATA / "local-ss-tin-rmem8k.txt")
    assert c.peer.endswith(":5201") and c.bytes_acked > 10_000_000  # the data connection, not the control one
    assert (c.busy_ms, c.rwnd_limited_ms, c.sndbuf_limited_ms) == (656, 568, 0)
    out = explain_iperf3(RMEM, rate="1gbit", twin=False, ss=DATA / "local-ss-tin-rmem8k.txt")
    assert out["kernel"]["agrees"] and "86.6%" in out["kernel"]["note"]
    with pytest.raises(iperf3.Iperf3InputError, match="no connection found"):
        ss.parse("State Recv-Q Send-Q\n")


def test_html_page_is_self_contained_and_never_replaces_a_file_unasked(tmp_path):
    page = tmp_path / "run.html"
    result = _cli(LOSS, *LOSS_FLAGS, "--html", page, "--what-if", "buffer=256KiB")
    assert result.exit_code == 0, result.output
    text = page.read_text()
    assert text.startswith("<!DOCTYPE html>") and "<svg" in text and "http" not in text.replace("http://www.w3.org", "")
    assert "congestion window after loss" in text and "what if buffer=256KiB" in text and "Loss episodes" in text
    page.write_text("mine")
    assert _cli(LOSS, *LOSS_FLAGS, "--no-twin", "--html", page).exit_code == 2 and page.read_text() == "mine"


def test_a_rate_far_below_the_runs_is_named_and_a_twin_that_cannot_finish_says_so(tmp_path):
    out = explain_iperf3(LOSS, rate="10mbit", twin=False)
    assert any("above --rate 10 Mbit/s" in n for n in out["notes"])
    # A -t run's twin is measured over the run's seconds, as iperf3 measured it: it ends then,
    # and misses by what the rate given takes away.
    timed = explain_iperf3(LOSS, rate="1mbit")
    assert timed["twin"]["fct_s"] == pytest.approx(timed["seconds"])
    assert timed["twin"]["throughput_bps"] < 1.1e6 and not timed["match"]["within"]
    assert any("measured as iperf3 -t measures" in n for n in timed["notes"])
    # A run of -n bytes is timed to its last byte: a twin that cannot carry them says so.
    doc = json.loads(LOSS.read_text())
    doc["start"]["test_start"]["bytes"] = doc["end"]["sum_sent"]["bytes"]
    (sized := tmp_path / "n.json").write_text(json.dumps(doc))
    result = _cli(sized, "--rate", "1mbit")
    assert result.exit_code == 2 and "the twin did not finish" in result.output and "check --rate" in result.output


def test_a_busy_receiver_with_room_on_the_path_is_named_the_receiving_host():
    doc = json.loads(RMEM.read_text())
    for iv in doc["server_output_json"]["intervals"] + doc["intervals"]:
        for s in iv["streams"]:
            s.pop("snd_wnd", None)
    doc["end"]["cpu_utilization_percent"]["remote_total"] = 97.5
    out = ex.explain(iperf3.parse(json.dumps(doc)), ex.Settings(rate_bps=1e9))
    assert out.limit == ex.RECEIVING_HOST and "receiver CPU 98 %" in out.summary
    # The same run with its receiver idle leaves the sender's own buffer or application.
    doc["end"]["cpu_utilization_percent"]["remote_total"] = 20.0
    assert ex.explain(iperf3.parse(json.dumps(doc)), ex.Settings(rate_bps=1e9)).limit == ex.SEND_BUFFER


def test_the_twin_describes_the_receiving_host_as_given():
    # The host's rmem_max, not tcp_rmem's max, sets the window scale: 4 MiB gives scale 7 and
    # windows in 128-byte units, where tcp_rmem's 8 KiB alone gave none. The CPU profile and
    # the skb ratio reach every flow of the twin.
    out = explain_iperf3(RMEM, rate="1gbit", tbf=True, buffer="1MiB", tcp_rmem="4096 8192 8192", rmem_max="4MiB",
                         cpu="veth-this-machine", skb_scaling_ratio=177)
    flow = out["scenario"].split("[[flow]]")[1]
    for line in ("rmem_max = 4194304", 'cpu = "veth-this-machine"', "skb_scaling_ratio = 177"):
        assert line in flow, out["scenario"]
    bare = explain_iperf3(RMEM, rate="1gbit", tbf=True, buffer="1MiB", tcp_rmem="4096 8192 8192")
    assert "rmem_max" not in bare["scenario"] and "cpu" not in bare["scenario"]
    # A host that costs CPU carries less than the same host that never limits: with an 8 KiB
    # receive buffer over 60 µs the window is what moves data (4,224 B a turn, ~520 Mbit/s, under
    # the 1 Gbit/s tbf; at the run's own 30 µs the tbf bound both twins alike), and the CPU's
    # time lengthens each turn (512 against 521 Mbit/s).
    window_bound = dict(rate="1gbit", rtt="60us", tbf=True, buffer="1MiB", tcp_rmem="4096 8192 8192", rmem_max="4MiB",
                        skb_scaling_ratio=177)
    busy, free = explain_iperf3(RMEM, cpu="veth-this-machine", **window_bound), explain_iperf3(RMEM, **window_bound)
    assert 'cpu = "veth-this-machine"' not in free["scenario"]
    assert busy["twin"]["throughput_bps"] < 0.99 * free["twin"]["throughput_bps"] < 0.99e9


def test_an_unknown_cpu_profile_gets_one_line():
    result = _cli(RMEM, "--rate", "1gbit", "--cpu", "no-such-host")
    assert result.exit_code == 2, result.output
    assert "no-such-host" in result.output and result.output.strip().count("\n") == 0, result.output
