"""`burstlab validate --no-host-measurements`: incast twins from what a user can describe.

A twin in this mode is built from the set-up and one host profile only (issue 36, item 4): the
real runs' own measured latencies must not reach it, and its verdicts are issue 36's (median QCT
within 15 % of the kernel's where the kernel has not collapsed, not widened by the runs' spread;
the first N whose median QCT exceeds 100 ms within one step)."""

from __future__ import annotations

import copy
import json
import re

import pytest

from burstlab.cli.validate import newest_record
from burstlab.errors import ReplayError
from burstlab.validate import compare
from burstlab.validate.compare import described, described_median_case, incast_entry, median_onset_case
from helpers import burstlab


@pytest.fixture(scope="module")
def record() -> dict:
    newest = newest_record()
    assert newest is not None
    return json.loads(newest.read_text())


def _one_cell(record: dict, name: str, queries: int = 6) -> dict:
    entry = copy.deepcopy(record["detail"][name])
    entry["setup"]["queries"] = queries  # a few queries: the property holds for any number
    return {"recorded": record["recorded"], "cases": [], "detail": {name: entry}}


def test_no_measured_latency_reaches_the_twin(record: dict):
    cell = _one_cell(record, "incast-8-128KB")
    other = copy.deepcopy(cell)
    for host in other["detail"]["incast-8-128KB"]["twin_host"]:
        # Measured latencies ten times as long: a twin that took them would move.
        host["serve_time_us"] = 1000.0
        host["read_wait_us"] = 5000.0
        host["handshake_rtt_us"] = [900.0] * 8
        host["tbf_watchdog_us"] = [400.0]
    a = compare.replay_described(cell)["detail"]["incast-8-128KB"]["sim"]
    b = compare.replay_described(other)["detail"]["incast-8-128KB"]["sim"]
    assert a == b
    # ... while the measured replay of the same two records does move.
    measured_a = compare.replay(cell)["detail"]["incast-8-128KB"]["sim"]["qct_median_s"]
    measured_b = compare.replay(other)["detail"]["incast-8-128KB"]["sim"]["qct_median_s"]
    assert measured_b > measured_a * 1.1


def test_the_profile_reaches_the_twin(record: dict, monkeypatch):
    cell = _one_cell(record, "incast-1-128KB")
    base = compare.replay_described(cell)["detail"]["incast-1-128KB"]["sim"]["qct_median_s"]
    slow = {**compare.HOST_PROFILE, "read_wait_us": 3000.0}
    monkeypatch.setattr(compare, "HOST_PROFILE", slow)
    assert compare.replay_described(cell)["detail"]["incast-1-128KB"]["sim"]["qct_median_s"] > base * 1.2


def test_the_median_is_held_to_15_percent_whatever_the_runs_spread():
    assert described_median_case("c", 0.010, 0.0114).passed
    assert not described_median_case("c", 0.010, 0.0116).passed
    assert not described_median_case("c", 0.010, 0.0084).passed


def _cells(medians_real: dict[int, float], medians_sim: dict[int, float]) -> list:
    return [(n, {"qct_median_s": {"median": medians_real[n]}}, {"qct_median_s": medians_sim[n]}) for n in medians_real]


@pytest.mark.parametrize("sim, steps, ok", [
    ({1: 0.01, 8: 0.02, 16: 0.2, 32: 0.2}, 0, True),     # the kernel's onset, N = 16
    ({1: 0.01, 8: 0.2, 16: 0.2, 32: 0.2}, 1, True),      # one step early
    ({1: 0.01, 8: 0.02, 16: 0.02, 32: 0.2}, 1, True),    # one step late
    ({1: 0.2, 8: 0.2, 16: 0.2, 32: 0.2}, 2, False),      # two steps early
    ({1: 0.01, 8: 0.02, 16: 0.02, 32: 0.02}, 2, False),  # never collapses
])
def test_the_onset_is_the_first_n_whose_median_exceeds_100ms(sim, steps, ok):
    real = {1: 0.01, 8: 0.03, 16: 0.13, 32: 0.09}  # the first N over 100 ms counts, not a later dip
    c = median_onset_case("", _cells(real, sim), 64 * 1024, "reno")
    assert (c.name, c.metric, c.real) == ("incast-reno-onset-64KB", "onset_median_n", 16.0)
    assert (c.rel_error, c.passed) == (steps, ok)


def test_a_collapsed_cell_is_left_to_the_onset(record: dict):
    cell = _one_cell(record, "incast-32-128KB")
    entry = cell["detail"]["incast-32-128KB"]
    entry["real"]["qct_median_s"] = {**entry["real"]["qct_median_s"], "median": 0.2}
    out = described(cell["detail"], kernel=None)
    assert [(c["name"], c["metric"]) for c in out["cases"]] == [("incast-onset-128KB", "onset_median_n")]


def test_single_flows_are_not_this_modes(record: dict):
    singles = {n: e for n, e in record["detail"].items() if n.startswith("single")}
    with pytest.raises(ReplayError, match="incast only"):
        described(singles, kernel=None)


def _real(cca: str, limit: int, n: int, rto_min, quickack) -> dict:
    run = {"serve_time_quantiles_us": [90.0], "reader_wait_us": 80.0, "wait_samples": 10, "handshake_rtt_us": [40.0],
           "host_buffers": None, "tbf_watchdog_quantiles_us": [], "scaling_ratio": 229}
    return {"scenario": {"n": n, "cca": cca, "limit_bytes": limit, "rto_min": rto_min, "quickack": quickack,
                         "queries": 50},
            "summary": {}, "runs": [run]}


def test_a_matrix_cell_is_named_by_its_cca_limit_and_variant():
    name, entry = incast_entry(_real("reno", 64 * 1024, 8, 0.005, True))
    assert name == "incast-reno-rtomin5ms-8-64KB"
    assert entry["setup"]["cca"] == "reno" and entry["setup"]["limit_bytes"] == 64 * 1024
    # cubic keeps the names of the records made before the matrix
    assert incast_entry(_real("cubic", 128 * 1024, 8, None, False))[0] == "incast-8-128KB"
    with pytest.raises(ValueError, match="rto_min = 0.01"):
        incast_entry(_real("reno", 64 * 1024, 8, 0.01, False))


def test_cli_replays_without_host_measurements(record: dict, tmp_path):
    f = tmp_path / "cell.json"
    f.write_text(json.dumps(_one_cell(record, "incast-1-128KB")))
    r = burstlab("validate", "--replay", str(f), "--no-host-measurements", "--json")
    metrics = [(c["name"], c["metric"]) for c in json.loads(r.stdout)["cases"]]
    assert metrics == [("incast-1-128KB", "qct_median_s"), ("incast-onset-128KB", "onset_median_n")]
    assert r.returncode == 0, r.stderr


def test_the_shipped_incast_matrix_is_whole_and_states_its_load():
    from burstlab.cli.validate import INCAST_RECORDS

    path = newest_record(INCAST_RECORDS)
    assert path is not None, f"no incast matrix shipped in {INCAST_RECORDS}"
    rec = json.loads(path.read_text())
    names = set(rec["detail"])
    for cca in compare.INCAST_MATRIX["ccas"]:
        for kb in (64, 128, 512):
            for tag in ("", "rtomin5ms-"):
                for n in compare.INCAST_MATRIX["incast_n"]:
                    assert f"incast-{'' if cca == 'cubic' else cca + '-'}{tag}{n}-{kb}KB" in names
    low, high = rec["recorded"]["load"]
    assert 0 <= low <= high
    # `--replay latest` stays the full matrix behind docs/fidelity.md's main table.
    assert newest_record() != path


@pytest.fixture(scope="module")
def matrix() -> dict:
    from burstlab.cli.validate import INCAST_RECORDS

    return json.loads(newest_record(INCAST_RECORDS).read_text())


def test_the_shipped_incast_matrix_was_recorded_on_hosts_that_kept_up(record: dict, matrix: dict):
    # A matrix whose hosts were loaded carries the load in every median (the one recorded at load
    # 12-27 took 33.5 ms for the 1 MB query the full record took 8.6 ms for), and the medians
    # are what issue 36 judges. The cells both records hold must agree where nothing collapses.
    for name in ("incast-1-128KB", "incast-2-128KB", "incast-rtomin5ms-1-128KB"):
        full = record["detail"][name]["real"]["qct_median_s"]["median"]
        here = matrix["detail"][name]["real"]["qct_median_s"]["median"]
        assert abs(here - full) / full < 0.05, (name, here, full)
    # ... and the aggregator, alone with one sender, read within 100 us of each arrival in every run.
    assert all(h["read_wait_us"] < 100 for h in matrix["detail"]["incast-1-128KB"]["twin_host"])


def test_what_the_shipped_matrix_passed_without_measurements_still_passes(matrix: dict):
    # The two rows whose onsets sit at the collapse's edge (reno through 64 KB one step late;
    # BBR through 128 KB, the kernel's onset at N = 8): a simulator change that moves them shows.
    keep = re.compile(r"incast-(reno-\d+-64KB|bbr-\d+-128KB)")
    sub = {"recorded": matrix["recorded"],
           "detail": {n: e for n, e in matrix["detail"].items() if keep.fullmatch(n)}}
    out = compare.replay_described(sub)
    now = {(c["name"], c["metric"]): c["pass"] for c in out["cases"]}
    assert ("incast-bbr-onset-128KB", "onset_median_n") in now and ("incast-reno-onset-64KB", "onset_median_n") in now
    # What these rows pass at the simulator's current rules. The record's own twins (recorded
    # with the matrix) also passed reno N = 4 through 64 KB and BBR N = 4 through 128 KB; the
    # twins built from every commit since 3cb6436 miss them (16 % and 35 %; neither the
    # send-buffer nor the Nagle/Minshall rule moves them; both pass at the twin's seed 2 or 3:
    # docs/fidelity.md). A change that moves a row in this list must say why, here and there.
    passing = {("incast-reno-onset-64KB", "onset_median_n"), ("incast-bbr-onset-128KB", "onset_median_n")}
    passing |= {(f"incast-reno-{n}-64KB", "qct_median_s") for n in (1, 2, 8)}
    passing |= {(f"incast-bbr-{n}-128KB", "qct_median_s") for n in (1, 2)}
    lost = sorted(k for k in passing if not now[k])
    assert not lost, f"passed at the current rules, fail now: {lost}"


def test_a_live_run_records_the_matrix_and_judges_it_without_measurements(monkeypatch):
    # The real side stubbed (it needs root): one cell of reno through 64 KB at N = 2.
    asked = []

    def fake_incast(n, limit_bytes, *, queries, burst_bytes, rto_min, quickack, cca, repeat):
        asked.append((cca, limit_bytes, n, rto_min, quickack, repeat))
        real = _real(cca, limit_bytes, n, rto_min, quickack)
        stat = lambda v: {"mean": v, "median": v, "min": v, "max": v}  # noqa: E731
        real["scenario"]["queries"] = 4
        real["summary"] = {"qct_median_s": stat(0.009), "frac_over_100ms": stat(0.0)}
        return real

    monkeypatch.setattr(compare, "incast", fake_incast)
    monkeypatch.setitem(compare.INCAST_MATRIX, "ccas", ("reno",))
    monkeypatch.setitem(compare.INCAST_MATRIX, "limits", (64 * 1024,))
    monkeypatch.setitem(compare.INCAST_MATRIX, "incast_n", (2,))
    monkeypatch.setitem(compare.INCAST_MATRIX, "incast_variants", (compare.SHORT_RTO,))
    out = compare.compare_described(repeat=2)
    assert asked == [("reno", 64 * 1024, 2, 0.005, True, 2)]
    low, high = out["recorded"]["load"]  # the 1-minute load average over the sitting
    assert out["recorded"]["matrix"] == "incast" and 0 <= low <= high
    assert out["recorded"]["sched"] == compare.sched_policy()
    entry = out["detail"]["incast-reno-rtomin5ms-2-64KB"]
    assert entry["twin_host"][0]["read_wait_us"] == 80.0  # kept for a measured replay, not used here
    assert [(c["name"], c["metric"]) for c in out["cases"]] == [
        ("incast-reno-rtomin5ms-2-64KB", "qct_median_s"), ("incast-reno-rtomin5ms-onset-64KB", "onset_median_n")]
