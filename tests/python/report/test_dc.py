"""The data-centre study's measurements and findings (burstlab.report.dc): the phase slopes
on series whose slopes are known, the slope laws on a small simulated fan-in, and the findings'
pass/fail/not-run logic."""

from __future__ import annotations

import json
import math
import re

import pytest

from burstlab.report import dc
from burstlab.report.dc import measure, study
from burstlab.report.dc.findings import FAIL, NOT_RUN, PASS, check_all

R = 1e9  # bit/s


def _fluid(first_round: float, a: float, rounds: float, t0: float = 0.0, dt: float = 12e-6):
    """A queue fed at ``a`` until it holds ``first_round`` bytes, then at 2R (one ACK at R
    releases two packets, drained at R: slope R) to ``rounds`` bytes; sampled every ``dt``."""
    t, q, x = [], [], 0.0
    s = t0
    while x < rounds:
        t.append(s)
        q.append(x)
        rate = (a - R) if x < first_round else R
        x += rate / 8 * dt
        s += dt
    return t, q


def test_phase_fit_recovers_both_slopes_of_a_fluid_fan_in():
    t, q = _fluid(40_500, 3e9, 400_000)
    p1, p2 = measure.phase_fit(t, q, 0.0, t[-1], 40_500)
    assert p1 == pytest.approx(2e9, rel=0.02)
    assert p2 == pytest.approx(R, rel=0.02)


def test_phase_fit_counts_the_rounds_above_a_standing_queue():
    t, q = _fluid(27_000, 3e9, 300_000)
    q = [x + 200_000 for x in q]  # background flows held 200 KB before the query
    p1, p2 = measure.phase_fit(t, q, 0.0, t[-1], 27_000)
    assert p2 == pytest.approx(R, rel=0.02)
    assert measure.phase_fit(t, q, 0.0, t[-1], 500_000) is None, "the first round never queued"


def test_rising_legs_split_at_a_fall_of_more_than_three_packets():
    t = [i * 1e-5 for i in range(9)]
    q = [0, 3000, 6000, 9000, 3000, 3000, 9000, 12000, 10500]
    legs = measure.rising_legs(t, q)
    assert [(leg.q0, leg.q1) for leg in legs] == [(0, 9000), (3000, 12000)]
    assert legs[0].slope_bps == pytest.approx(9000 * 8 / 3e-5)


def test_the_hidden_buffer_bound_is_below_twice_the_port():
    assert measure.hidden_buffer_bound(R, R) == pytest.approx(R)
    assert measure.hidden_buffer_bound(3 * R, R) == pytest.approx(1.5 * R)
    assert measure.hidden_buffer_bound(1e15, R) < 2 * R


def test_percentile_and_reduction():
    assert measure.percentile([1, 2, 3, 4, 5], 50) == 3
    assert measure.percentile(list(range(101)), 99) == pytest.approx(99)
    assert measure.reduction(100, 80) == pytest.approx(20)
    assert measure.reduction(100, 120) == pytest.approx(-20)


def test_a_fan_in_from_three_racks_rises_at_their_uplinks_less_the_port_then_at_the_port():
    # The study's synchronous fan-in on new connections (18 senders on 9 hosts): the first round
    # arrives over three racks' 1 Gbit/s uplinks at once, so phase 1 rises at a - R = 3R - R = 2R;
    # in phase 2 every departure is clocked by an ACK that leaves the port at R and releases two
    # packets, so the queue rises at 2R - R = R (Law 1).
    r = study._run(study._text("law1-fan-in.toml"), [])
    t, q = study._queue(r)
    rows = list(study._queries(r).itertuples())
    assert len(rows) == 1
    p1, p2 = measure.phase_fit(t, q, rows[0].request_s, rows[0].done_s, 54 * 1500)
    assert p1 == pytest.approx(2 * R, rel=0.05)
    assert p2 == pytest.approx(R, rel=0.1)


def test_findings_pass_fail_and_not_run(tmp_path):
    d = {"law1": {"phase1_bps": [2e9] * 3, "phase2_bps": [1.0e9, 1.01e9, 1.005e9]},
         "goodput": {"dctcp": 941.48e6, "s-ecn": 900e6}}
    by = {f.key: f for f in check_all(d)}
    assert by["law1"].status == PASS and by["law1"].ours.startswith("1.005 Gbit/s")
    assert by["goodput-dctcp"].status == PASS
    assert by["goodput-s-ecn"].status == FAIL
    assert by["law2-3"].status == NOT_RUN and by["ws-qct-mean"].status == NOT_RUN
    (tmp_path / study.STUDY_FILE).write_text(json.dumps(d))
    assert dc.is_study(tmp_path)
    md = dc.to_markdown(tmp_path)
    assert "| 3 long flows' goodput (DCTCP+S-ECN) | 941.5 Mbit/s | 900.0 Mbit/s | -4.41 % | fail |" in md
    assert json.loads(dc.to_json(tmp_path))["findings"][0]["key"] == "law1"


def test_websearch_findings_read_reductions_per_load():
    run = lambda qct, small: {"qct_s": qct, "fct_s": {"small": small, "medium": [1.0], "large": [2.0]}}
    d = {"websearch": {f"{k}-{load}": run([1.0] * 99 + [10.0], [0.1]) if k == "dctcp"
                       else run([0.8] * 99 + [8.0], [0.09]) for k in ("dctcp", "s-ecn") for load in study.LOADS}}
    by = {f.key: f for f in check_all(d)}
    assert by["ws-qct-mean"].status == PASS, by["ws-qct-mean"]
    assert "0.2: -20.0 %" in by["ws-qct-mean"].ours
    assert by["ws-small-mean"].status == PASS
    assert not math.isnan(measure.mean([1.0]))


_FIGURE = re.compile(r"\d+(?:\.\d+)?")


def _figures_not_from(text: str, *sources: str) -> list[str]:
    """The figures in ``text`` that none of ``sources`` carries."""
    known = {x for s in sources for x in _FIGURE.findall(s)}
    return [x for x in _FIGURE.findall(text) if x not in known]


def test_a_cause_carries_no_figure_the_run_did_not_produce():
    # Every known miss fails on this study; a cause may repeat a figure of its own row (the claim,
    # the paper's, ours) but no other: one run's figures are not another's.
    d = {"law2": {n: {"phase1_bps": [1e9], "phase2_bps": [0.123e9]} for n in ("3", "6", "9")},
         "law3": {kb: {"phase1_bps": [1e9], "phase2_bps": [1.987e9]} for kb in ("128", "256", "512")},
         "secn_peaks": {k: [987e3] for k in ("dctcp", "dctcp-k2", "dequeue", "s-ecn", "dctcp-36", "s-ecn-36")},
         "incast": {f"{k}-{n}": [0.0123] for k in ("dctcp", "s-ecn") for n in study.INCAST_SENDERS},
         "websearch": {f"{k}-{load}": {"qct_s": [0.5], "fct_s": {"small": [0.5], "medium": [0.5],
                                                               "large": [0.5 if k == "dctcp" else 4.5]}}
                       for k in ("dctcp", "s-ecn") for load in study.LOADS}}
    failed = [f for f in check_all(d, dc.WHY) if f.status == FAIL]
    assert {f.key for f in failed} >= set(dc.WHY), set(dc.WHY) - {f.key for f in failed}
    for f in failed:
        assert bool(f.why) == (f.key in dc.WHY), f.key
        assert _figures_not_from(f.why, f.claim, f.theirs, f.ours) == [], (f.key, f.why)
    # The check catches what it is for: a shipped run's slope quoted as a cause.
    law3 = next(f for f in failed if f.key == "law3-128")
    assert _figures_not_from("19 of 20 runs rise at 1.01 Gbit/s", law3.claim, law3.theirs, law3.ours) == \
        ["19", "20", "1.01"]


def test_a_fit_without_a_slope_is_written_as_null_and_read_as_a_miss(tmp_path, monkeypatch):
    monkeypatch.setitem(study.PARTS, "law1", lambda: {"phase1_bps": [math.nan, 2e9],
                                                      "phase2_bps": [math.inf, 1.005e9]})
    path = study.run_study(tmp_path, parts=["law1"], progress=lambda _: None)
    text = path.read_text()
    assert "NaN" not in text and "Infinity" not in text
    assert json.loads(text)["law1"] == {"phase1_bps": [None, 2e9], "phase2_bps": [None, 1.005e9]}
    law1 = next(f for f in dc.findings(tmp_path) if f.key == "law1")
    assert law1.status == PASS and law1.ours.startswith("1.005 Gbit/s") and "(1 runs)" in law1.ours


def test_websearch_run_counts_answers_and_background_apart():
    # Three hosts: the app opens the 3·2 answer connections first, then the background pairs'.
    def flow(src, dst, rtos, sent):
        return {"src": src, "dst": dst, "timeouts": rtos, "retransmits": 2 * rtos, "delivered_bytes": sent}
    hosts = ("h0", "h1", "h2")
    answers = [flow(s, c, 1, 10) for c in hosts for s in hosts if s != c]
    background = [flow(a, b, 5, 1000) for a in hosts for b in hosts if a != b]
    got = study._websearch_tcp({"flows": answers + background,
                                "ports": [{"port": "tor0->agg", "drops": 3, "ecn_marks": 40}]})
    assert got["tcp"]["answers"] == {"timeouts": 6, "retransmits": 12, "delivered_bytes": 60}
    assert got["tcp"]["background"] == {"timeouts": 30, "retransmits": 60, "delivered_bytes": 6000}
    assert got["ports"] == {"tor0->agg": {"drops": 3, "ecn_marks": 40}}


def test_websearch_misses_carry_what_their_own_runs_measured():
    def run(rtos, delivered, large):
        tcp = {"answers": {"timeouts": rtos, "retransmits": 5 * rtos, "delivered_bytes": 1},
               "background": {"timeouts": 3 * rtos, "retransmits": 0, "delivered_bytes": delivered}}
        return {"qct_s": [1.0], "fct_s": {"small": [0.5], "medium": [1.5], "large": [large]}, "tcp": tcp}
    w = {f"{k}-{load}": run(7, 4000, 2.0) if k == "dctcp" else run(11, 3000, 4.0)
         for k in ("dctcp", "s-ecn") for load in study.LOADS}
    by = {f.key: f for f in check_all({"websearch": w, "websearch_seconds": 2.0}, dc.WHY)}
    large = by["ws-large"]
    assert large.status == FAIL and large.why.startswith(dc.WHY["ws-large"])
    # S-ECN delivered 3000 of DCTCP's 4000 bytes; in flight (0.5 + 1.5 + 2) / 2 s against (0.5 + 1.5 + 4) / 2 s.
    assert "these runs: background bytes delivered, S-ECN against DCTCP, 0.2: -25.0 %" in large.why
    assert "0.6: 2.0 -> 3.0" in large.why
    mean = by["ws-qct-mean"]
    assert mean.status == FAIL, mean
    assert "0.2: 7 (35) / 11 (55) on the answers, 21 (0) / 33 (0) on the background" in mean.why
    # Runs from before these fields carry the mechanism alone.
    old = {k: {f: v for f, v in r.items() if f != "tcp"} for k, r in w.items()}
    by_old = {f.key: f for f in check_all({"websearch": old, "websearch_seconds": 2.0}, dc.WHY)}
    assert by_old["ws-large"].why == dc.WHY["ws-large"]


def test_the_hosts_dctcp_starts_alpha_where_the_scenario_says():
    # The study's hosts start alpha at 0 (the DCTCP patch for Linux 2.6.38.3): the first marks cut
    # nothing, so the first query's queue peaks higher than with Linux's default alpha of 1.
    text = study._text("secn-fan-in.toml")
    short = ["incast[0].queries=1", "incast[0].query_size=2MB", "stop=1s"]
    ours = study._peaks(study._run(text, short))
    linux = study._peaks(study._run(text, [*short, "hosts.dctcp_alpha_on_init=1024"]))
    assert ours == study._peaks(study._run(text, [*short, "hosts.dctcp_alpha_on_init=0"]))
    assert ours[0] > linux[0]


def test_every_s_ecn_part_runs_the_hardware_form(monkeypatch):
    # What each part actually hands the simulator: every part runs S-ECN in its NetFPGA form and
    # none in the probabilistic one (a part that dropped MARKING would have no hardware run).
    real, sets = study._run, []

    def recording(text, s):
        sets.append((part, list(s)))
        return real(text, s)

    monkeypatch.setattr(study, "_run", recording)
    for part, run in (("secn_peaks", study.secn_peaks), ("goodput", study.goodput),
                      ("incast", lambda: study.incast(reps=1))):
        run()
    part = "websearch"
    study._websearch_run(0.2, "s-ecn", 0.05)
    modes = {p: {x for q, s in sets if q == p for x in s if x.startswith("topology.ecn_mode=")}
             for p in ("secn_peaks", "goodput", "incast", "websearch")}
    for p, m in modes.items():
        assert "topology.ecn_mode=s-ecn-hardware" in m and "topology.ecn_mode=s-ecn" not in m, (p, m)


@pytest.mark.parametrize("value", ["-1", '"zero"'])
def test_a_bad_dctcp_alpha_on_init_names_the_key_the_value_and_the_range(value):
    from burstlab import _core
    from burstlab.errors import BurstlabError

    with pytest.raises(BurstlabError) as e:
        _core.load_scenario(study._text("secn-fan-in.toml"), [f"hosts.dctcp_alpha_on_init={value}"])
    msg = str(e.value)
    assert len(msg.splitlines()) == 1, msg
    assert f"hosts.dctcp_alpha_on_init = {value}" in msg and "expected an integer from 0 to" in msg, msg


def test_the_incast_miss_carries_what_its_own_runs_lost():
    runs = {"drops": [3, 0], "timeouts": [0, 1], "loss_probes": [2, 0]}
    quiet = {"drops": [0, 0], "timeouts": [0, 0], "loss_probes": [0, 0]}
    d = {"incast": {**{f"{k}-{n}": [0.0086] for k in ("dctcp", "s-ecn") for n in study.INCAST_SENDERS},
                    "losses": {f"{k}-{n}": runs if k == "dctcp" else quiet
                               for k in ("dctcp", "s-ecn") for n in study.INCAST_SENDERS}}}
    f = next(f for f in check_all(d, dc.WHY) if f.key == "incast")
    assert f.status == FAIL and f.why.startswith(dc.WHY["incast"])
    assert "24: 3 / 1 / 2 (1 of 2 runs) against 0 / 0 / 0 (0 of 2 runs)" in f.why
    # Runs from before the loss counts carry the mechanism alone.
    del d["incast"]["losses"]
    assert next(f for f in check_all(d, dc.WHY) if f.key == "incast").why == dc.WHY["incast"]


def test_every_part_runs_hosts_without_the_loss_probe():
    # The paper's testbed is one set of Linux 2.6.38 hosts, before TLP (3.10): every scenario
    # of the study turns it off, and the key reaches the senders: an incast of 24 DCTCP senders
    # that drops at the port then waits for RTOs, where Linux's default (3) probes.
    import tomllib

    for path in sorted(study.SCENARIO_DIR.glob("*.toml")):
        assert tomllib.loads(path.read_text())["hosts"]["tcp_early_retrans"] == 0, path.name
    text = study._senders(study._text("incast.toml"), [study.SERVERS[i % 9] for i in range(24)])
    ours = study._run(text, ["seed=1"]).summary["flows"]
    linux = study._run(text, ["seed=1", "hosts.tcp_early_retrans=3"]).summary["flows"]
    assert sum(f["loss_probes"] for f in ours) == 0 and sum(f["timeouts"] for f in ours) > 0
    assert sum(f["loss_probes"] for f in linux) > 0


def test_a_study_part_run_with_overrides_applies_and_records_them(tmp_path, monkeypatch):
    import burstlab

    real, seen = burstlab.run, []

    def recording(text, *, set=None, **kw):  # noqa: A002 - burstlab.run's own keyword
        seen.append(list(set or []))
        return real(text, set=set, **kw)

    monkeypatch.setattr(burstlab, "run", recording)
    study.run_study(tmp_path, parts=["goodput"], sets=["hosts.rto_min=200ms"], progress=lambda _: None)
    assert seen and all(s[-1] == "hosts.rto_min=200ms" for s in seen), seen
    assert study.load_study(tmp_path)["set"] == {"goodput": ["hosts.rto_min=200ms"]}
    # The next run's overrides are its own: none leak from the last, and the record follows.
    seen.clear()
    study.run_study(tmp_path, parts=["goodput"], progress=lambda _: None)
    assert seen and all("hosts.rto_min=200ms" not in s for s in seen), seen
    assert study.load_study(tmp_path)["set"] == {}
