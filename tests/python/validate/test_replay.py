"""Replaying a record of real runs: the twins run again against what real Linux did, no root.

The record shipped with burstlab is the full matrix behind docs/fidelity.md's table. Replaying it
holds the simulator to every case real Linux was measured on, not only the lean subset CI can
afford to run for real, and the same simulator gives the same verdicts every time."""

from __future__ import annotations

import copy
import json
import pytest

import burstlab.validate.compare as compare
from burstlab.cli.validate import RECORDS, newest_record
from burstlab.errors import ReplayError
from burstlab.validate.compare import replay
from helpers import burstlab


@pytest.fixture(scope="module")
def record() -> dict:
    newest = newest_record()
    assert newest is not None, f"no record shipped in {RECORDS}"
    return json.loads(newest.read_text())


@pytest.fixture(scope="module")
def replayed(record: dict) -> dict:
    return replay(record)


def _subset(record: dict, keep) -> dict:
    # A copy: tests damage their subsets, and the record is shared by the module. Its header
    # says which kernel the hosts ran, which the twins follow.
    return {"recorded": record["recorded"],
            "detail": {name: copy.deepcopy(e) for name, e in record["detail"].items() if keep(name)}}


def _host(record: dict, host: dict) -> dict:
    """A twin_host as replay gives it to the twin: with the record's kernel if it has none."""
    return {"kernel": record["recorded"]["kernel"], **host}


def test_the_shipped_record_is_the_full_matrix(record: dict):
    names = set(record["detail"])
    for cca in ("reno", "cubic", "bbr"):
        for kb in (64, 128, 512):
            assert f"single-{cca}-1gbit-{kb}KB" in names
        for kb in (16, 32):
            assert f"single-{cca}-100mbit-{kb}KB" in names
    for variant in ("", "rtomin5ms-"):
        for n in (1, 2, 4, 8, 16, 32):
            assert f"incast-{variant}{n}-128KB" in names
    # Tolerances come from real noise: every case was run more than once.
    assert all(len(e["twin_host"]["read_gap_us"]) >= 3 for n, e in record["detail"].items() if n.startswith("single"))


def test_every_case_the_record_passed_still_passes(record: dict, replayed: dict):
    recorded = {(c["name"], c["metric"]): c for c in record["cases"]}
    now = {(c["name"], c["metric"]): c for c in replayed["cases"]}
    assert now.keys() == recorded.keys()
    regressed = [f"{name} {metric}: real {c['real']:.4g}, sim {c['sim']:.4g} (recorded {recorded[name, metric]['sim']:.4g}), "
                 f"error {c['rel_error']:.1%} > tolerance {c['tolerance']:.1%}"
                 for (name, metric), c in now.items() if recorded[name, metric]["pass"] and not c["pass"]]
    assert not regressed, ("the simulator no longer matches real Linux where it did when the record was made "
                           "(a fix elsewhere? re-run the real side: sudo burstlab validate --repeat 5 --detail ...):\n"
                           + "\n".join(regressed))


def test_replay_gives_the_same_result_every_time(record: dict, replayed: dict):
    small = _subset(record, lambda n: n in ("single-reno-100mbit-16KB", "incast-8-128KB"))
    again = replay(small)
    first = {(c["name"], c["metric"]): c for c in replayed["cases"]}
    # (The subset's onset is over one cell, so it is not the full record's.)
    cells = [c for c in again["cases"] if c["metric"] != "onset_n"]
    # The flow's rate, FCT and retransmits; the cell's median and p99 QCT and retransmits.
    assert len(cells) == 6
    for c in cells:
        assert c == first[c["name"], c["metric"]]


def test_replay_keeps_the_real_side_and_renews_the_twins(record: dict, replayed: dict):
    for name, entry in replayed["detail"].items():
        assert entry["real"] == record["detail"][name]["real"]
        assert entry["twin_host"] == record["detail"][name]["twin_host"]
    # The twin's values are what the simulator gives now, not the record's.
    name = "single-cubic-100mbit-32KB"
    setup, host = record["detail"][name]["setup"], record["detail"][name]["twin_host"]
    assert replayed["detail"][name]["sim"] == compare.twin_single(setup, _host(record, host))
    cell = record["detail"]["incast-rtomin5ms-4-128KB"]
    hosts = [_host(record, h) for h in cell["twin_host"]]
    assert replayed["detail"]["incast-rtomin5ms-4-128KB"]["sim"] == compare.twin_incast(cell["setup"], hosts)


def test_a_record_without_read_waits_per_run_replays_with_the_real_runs_median(record: dict):
    """Records made before the twin_host kept the reader's wait per real run: a control's twins
    each take the median of the real runs' mean waits."""
    name = "single-cubic-100mbit-32KB"
    old = _subset(record, lambda n: n == name)
    host = old["detail"][name]["twin_host"]
    host.pop("read_wait_us", None)
    wait = compare.real_read_wait_us(old["detail"][name]["real"])
    assert wait is not None and 10 < wait < 100
    waits = _host(record, {**host, "read_wait_us": [wait] * len(host["read_gap_us"])})
    assert replay(old)["detail"][name]["sim"] == compare.twin_single(old["detail"][name]["setup"], waits)


def test_onsets_follow_their_variants_cells_in_any_order(record: dict, replayed: dict):
    names = [c["name"] for c in replayed["cases"]]
    for variant in ("", "rtomin5ms-"):
        onset = names.index(f"incast-{variant}onset-128KB")
        assert names[onset - 1] == f"incast-{variant}32-128KB"
        # Once, after every metric of the last cell (a cell has several).
        assert names.count(f"incast-{variant}onset-128KB") == 1
        assert f"incast-{variant}32-128KB" not in names[onset + 1:]
    # The variants' cells shuffled among each other and the single flows: still one onset per
    # variant, over all its cells in order of N, after the last of them in the record.
    cells = [n for n in record["detail"] if n.startswith("incast") or n == "single-reno-100mbit-16KB"]
    shuffled = {"recorded": record["recorded"], "detail": {n: record["detail"][n] for n in cells[::-2] + cells[-2::-2]}}
    again = replay(shuffled)["cases"]
    onsets = [c for c in again if c["metric"] == "onset_n"]
    assert sorted(c["name"] for c in onsets) == ["incast-onset-128KB", "incast-rtomin5ms-onset-128KB"]
    full = {c["name"]: c for c in replayed["cases"] if c["metric"] == "onset_n"}
    assert all(c == full[c["name"]] for c in onsets)


def test_a_twin_with_the_wrong_queue_fails_the_replay(record: dict, monkeypatch):
    # A twin whose tbf holds twice the real limit loses far fewer segments in the control.
    control = _subset(record, lambda n: "100mbit" in n)
    topology = compare._twin_topology
    monkeypatch.setattr(compare, "_twin_topology",
                        lambda limit, rate=compare.RATE_BPS, **kw: topology(2 * limit, rate, **kw))
    broken = replay(control)["cases"]
    failed = {c["name"] for c in broken if c["metric"] == "retrans_segs" and not c["pass"]}
    assert {"single-reno-100mbit-16KB", "single-bbr-100mbit-16KB"} <= failed


@pytest.mark.parametrize("damage, expected", [
    (lambda r: r.pop("detail"), 'record: expected the JSON object `burstlab validate --detail` writes'),
    (lambda r: r["detail"]["incast-8-128KB"].pop("setup"), 'case "incast-8-128KB": setup = null'),
    (lambda r: r["detail"]["single-bbr-100mbit-16KB"]["setup"].pop("rate"), 'case "single-bbr-100mbit-16KB": setup.rate'),
    (lambda r: r["detail"]["single-bbr-100mbit-16KB"]["real"].pop("fct_s"), "real.fct_s = null: expected the real runs' summary"),
    (lambda r: r["detail"]["incast-8-128KB"]["twin_host"][1].pop("handshake_rtt_us"), "twin_host[1].handshake_rtt_us = null"),
    (lambda r: r["detail"]["single-reno-1gbit-64KB"]["twin_host"].update(read_gap_us=[]), "twin_host.read_gap_us = []"),
    (lambda r: r["detail"]["single-reno-1gbit-64KB"]["twin_host"].update(buffers="x"), 'twin_host.buffers = "x"'),
    (lambda r: r["detail"]["single-reno-1gbit-64KB"]["twin_host"]["read_gap_us"].__setitem__(0, -5),
     "twin_host.read_gap_us = [-5, "),
    (lambda r: r["detail"]["incast-8-128KB"]["setup"].update(rto_min=-1), "setup.rto_min = -1: expected null or"),
    (lambda r: r["detail"]["single-reno-1gbit-64KB"]["setup"].update(mtu=20),
     "setup.mtu = 20: expected the links' MTU in bytes, 68-65535"),
    # Optional (older records were made without it), but checked where it is.
    (lambda r: r["detail"]["incast-8-128KB"]["twin_host"][2].update(tbf_watchdog_us=[12.0, -3.0]),
     "twin_host[2].tbf_watchdog_us = [12.0, -3.0]: expected the tbf watchdog's lateness"),
    (lambda r: r["detail"]["single-reno-1gbit-64KB"]["twin_host"].update(read_wait_us=[30, -1, 30, 30, 30]),
     "twin_host.read_wait_us = [30, -1, 30, 30, 30]: expected the reader's wait for arrived data per real run"),
    (lambda r: r["detail"]["single-reno-1gbit-64KB"]["twin_host"].update(read_wait_us=[30]),
     "twin_host.read_wait_us = [30]: expected one wait per real run (5, as read_gap_us)"),
    (lambda r: r["detail"]["single-reno-1gbit-64KB"]["twin_host"].update(read_hold_us=[[12.0, -2.0], [], [], [], []]),
     "twin_host.read_hold_us = [[12.0, -2.0], [], [], [], []]: expected per real run the reader's holds"),
    (lambda r: r["detail"]["single-reno-1gbit-64KB"]["twin_host"].update(read_hold_us=[[12.0]]),
     "twin_host.read_hold_us = [[12.0]]: expected one list of holds per real run (5, as read_gap_us)"),
    (lambda r: r["detail"]["single-reno-1gbit-64KB"]["twin_host"].update(scaling_ratio=[229, 300, 229, 229, 229]),
     "twin_host.scaling_ratio = [229, 300, 229, 229, 229]: expected per real run the receiver's scaling ratio"),
    (lambda r: r["detail"]["single-reno-1gbit-64KB"]["twin_host"].update(scaling_ratio=[229]),
     "twin_host.scaling_ratio = [229]: expected one ratio per real run (5, as read_gap_us)"),
    (lambda r: r["detail"]["single-reno-1gbit-64KB"]["twin_host"].update(first_read_us=[900.0]),
     "twin_host.first_read_us = [900.0]: expected one first read per real run (5, as read_gap_us)"),
    (lambda r: r["detail"]["single-reno-1gbit-64KB"]["twin_host"].update(first_read_us=[900, -1, 900, 900, 900]),
     "twin_host.first_read_us = [900, -1, 900, 900, 900]: expected per real run how late the first read came"),
    (lambda r: r["detail"]["incast-8-128KB"]["twin_host"][0].update(scaling_ratio=0),
     "twin_host[0].scaling_ratio = 0: expected the aggregator's scaling ratio, 1-255 or null"),
    (lambda r: r["detail"]["incast-8-128KB"]["twin_host"][0].update(kernel=6.18),
     "twin_host[0].kernel = 6.18: expected the hosts' kernel release"),
    # The record's first case, so that the replay fails before any twin runs (each case's take
    # five simulations per real run).
    (lambda r: r["detail"]["single-reno-1gbit-64KB"]["setup"].update(cca="vegas"),
     'case "single-reno-1gbit-64KB": its twin cannot run: scenario.'),
    (lambda r: r["cases"][3].pop("metric"), "cases[3] = {"),
    (lambda r: r["detail"]["single-reno-1gbit-64KB"]["twin_host"]["host_stalls_s"].pop(),
     "expected one list of stalls per real run (5, as read_gap_us)"),
])
def test_a_record_that_cannot_be_replayed_is_named_field_by_field(record: dict, damage, expected):
    bad = copy.deepcopy(record)
    damage(bad)
    with pytest.raises(ReplayError) as err:
        replay(bad)
    assert expected in str(err.value)
    assert "\n" not in str(err.value)


def test_cli_replays_a_record_and_writes_nothing_for_a_bad_one(record: dict, tmp_path):
    small = _subset(record, lambda n: n.startswith("single-cubic-100mbit"))
    small["cases"] = []
    src = tmp_path / "record.json"
    src.write_text(json.dumps(small))
    out = tmp_path / "again.json"
    run = burstlab("validate", "--replay", src, "--json", "--detail", out)
    assert run.returncode in (0, 1), run.stderr
    cases = json.loads(run.stdout)["cases"]
    assert {c["name"] for c in cases} == {"single-cubic-100mbit-16KB", "single-cubic-100mbit-32KB"}
    assert run.returncode == (0 if all(c["pass"] for c in cases) else 1)
    assert json.loads(out.read_text())["detail"].keys() == small["detail"].keys()
    # A broken record: one line naming the case and field, exit 2, no --detail file.
    del small["detail"]["single-cubic-100mbit-16KB"]["twin_host"]
    src.write_text(json.dumps(small))
    out.unlink()
    run = burstlab("validate", "--replay", src, "--detail", out)
    assert run.returncode == 2
    assert run.stderr.strip().count("\n") == 0 and 'case "single-cubic-100mbit-16KB": twin_host' in run.stderr
    assert not out.exists()


def test_cli_replay_table_shows_the_records_twin_and_verdicts_that_moved(record: dict, tmp_path):
    small = _subset(record, lambda n: n == "single-reno-100mbit-16KB")
    small["cases"] = [dict(c, sim=-1.0, **{"pass": False}) for c in record["cases"]
                      if c["name"] == "single-reno-100mbit-16KB"]
    src = tmp_path / "record.json"
    src.write_text(json.dumps(small))
    run = burstlab("validate", "--replay", src)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "was" in run.stdout and "-1" in run.stdout
    assert run.stdout.count("pass (was FAIL)") == 3


def _replay_without(small: dict, measured: str, src) -> str:
    """Replay `small` with the real side's `measured` taken out of every case, as in the oldest
    records (which did not measure it); the replay's table."""
    for entry in small["detail"].values():
        entry["real"].pop(measured, None)
    src.write_text(json.dumps(small))
    run = burstlab("validate", "--replay", src)
    assert run.returncode in (0, 1), run.stderr
    return run.stdout


def test_cli_replay_ends_with_the_hosts_softirq_load_when_the_record_has_it(record: dict, tmp_path):
    small = _subset(record, lambda n: n.startswith("single-cubic-100mbit"))
    src = tmp_path / "record.json"
    assert "Hosts:" not in _replay_without(small, "host_softirq_load", src)
    for name, load in (("single-cubic-100mbit-16KB", 0.04), ("single-cubic-100mbit-32KB", 0.07)):
        small["detail"][name]["real"]["host_softirq_load"] = {"mean": load, "median": load, "min": load, "max": load}
    src.write_text(json.dumps(small))
    run = burstlab("validate", "--replay", src)
    assert "Hosts:" in run.stdout and "100mbit: 4%-7%" in run.stdout, run.stdout


def test_cli_replay_ends_with_the_incast_srtts_when_the_record_has_them(record: dict, tmp_path):
    small = _subset(record, lambda n: n in ("incast-1-128KB", "incast-8-128KB"))
    src = tmp_path / "record.json"
    assert "Incast SRTT" not in _replay_without(small, "srtt_at_response_us", src)
    real = {"mean": 1234.0, "median": 1234.0, "min": 1200.0, "max": 1300.0}
    small["detail"]["incast-8-128KB"]["real"]["srtt_at_response_us"] = real
    src.write_text(json.dumps(small))
    run = burstlab("validate", "--replay", src)
    line = run.stdout[run.stdout.index("Incast SRTT"):]
    # Only the case with a real value, and the twin's replayed value beside it.
    assert "incast-8-128KB 1,234/" in line and "incast-1-128KB" not in line, run.stdout


def test_latest_is_the_record_made_last_whatever_its_name():
    # "afternoon" sorts before "noon": the time inside the record decides.
    made = {p.name: json.loads(p.read_text())["recorded"]["date"] for p in RECORDS.glob("*.json")}
    assert made[newest_record().name] == max(made.values())
