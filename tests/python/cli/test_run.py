"""``burstlab run`` (mirrors python/burstlab/cli/run.py), run as a separate process."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
from typer.testing import CliRunner

from burstlab.cli import build_app, status
from helpers import OUTPUT_FILES, burstlab

SUMMARY_KEYS = {"scenario", "seed", "flows", "ports", "engine"}
FLOW_KEYS = {
    "flow_id", "kind", "cca", "src", "dst", "size_bytes", "delivered_bytes", "start_s", "fct_s",
    "sender_done_s", "retransmits", "timeouts", "loss_probes", "recoveries", "lost_retransmits",
    "recovery_timeouts", "acks", "max_cwnd_bytes", "active_s", "throughput_bps",
}
PORT_KEYS = {"node", "port", "drops", "max_queue_bytes", "mean_queue_bytes", "ecn_marks"}
ENGINE_KEYS = {"events", "wall_s", "events_per_s", "sim_time_s", "version"}


# ---- help --------------------------------------------------------------------------------------


def test_help_teaches_what_how_and_units():
    proc = burstlab("run", "--help")
    assert proc.returncode == status.SUCCESS
    text = " ".join(proc.stdout.split())  # undo the terminal wrapping
    for needle in ("--set", "--out", "--json", "--overwrite", "burstlab run scenarios/",
                   "Units", "Gbit/s", "209ms", "Exit status"):
        assert needle in text, needle


def test_root_help_lists_the_run_verb():
    proc = burstlab("--help")
    assert proc.returncode == status.SUCCESS
    assert "run" in proc.stdout and "Simulate a scenario" in proc.stdout


def test_version_flag_prints_the_version():
    import burstlab as package

    proc = burstlab("--version")
    assert (proc.returncode, proc.stdout.strip()) == (0, f"burstlab {package.__version__}")


# ---- --json ------------------------------------------------------------------------------------


def test_json_prints_exactly_one_object_with_the_documented_keys(small_scenario):
    proc = burstlab("run", small_scenario, "--json")
    assert proc.returncode == status.SUCCESS, proc.stderr
    summary = json.loads(proc.stdout)  # the whole of stdout is one JSON document
    assert proc.stdout.count("\n") == 1
    assert set(summary) == SUMMARY_KEYS
    assert summary["scenario"] == "small-cubic"
    assert len(summary["flows"]) == 1
    for flow in summary["flows"]:
        assert set(flow) == FLOW_KEYS
    for port in summary["ports"]:
        assert set(port) == PORT_KEYS
    assert set(summary["engine"]) == ENGINE_KEYS


def test_set_override_is_applied(small_scenario):
    proc = burstlab("run", small_scenario, "--json", "--set", "seed=42")
    assert proc.returncode == status.SUCCESS, proc.stderr
    assert json.loads(proc.stdout)["seed"] == 42


# ---- human output ------------------------------------------------------------------------------


def test_text_output_shows_flows_ports_and_engine_speed(small_scenario):
    proc = burstlab("run", small_scenario)
    assert proc.returncode == status.SUCCESS, proc.stderr
    for needle in ("small-cubic", "FCT s", "Gbit/s", "retx", "RTOs", "max cwnd", "drops",
                   "max queue", "mean queue", "ECN marks", "events/s"):
        assert needle in proc.stdout, needle


# ---- --out -------------------------------------------------------------------------------------


def test_out_writes_parquet_and_the_same_summary(small_scenario, tmp_path):
    out = tmp_path / "run"
    proc = burstlab("run", small_scenario, "--out", out, "--json")
    assert proc.returncode == status.SUCCESS, proc.stderr
    assert {p.name for p in out.iterdir()} == OUTPUT_FILES
    assert json.loads((out / "summary.json").read_text()) == json.loads(proc.stdout)
    flows = pq.read_table(out / "flows.parquet")
    assert flows.column_names[:3] == ["flow_id", "kind", "src"]
    assert flows.num_rows == 1


def test_out_earlier_output_is_not_clobbered(small_scenario, tmp_path):
    out = tmp_path / "run"
    assert burstlab("run", small_scenario, "--out", out, "--json").returncode == status.SUCCESS
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    proc = burstlab("run", small_scenario, "--out", out, "--set", "seed=2")
    assert proc.returncode == status.BAD_INPUT
    assert "already holds burstlab output" in proc.stderr and "--overwrite" in proc.stderr
    assert proc.stdout == ""
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_out_overwrite_replaces_burstlabs_files_and_keeps_the_others(small_scenario, tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    (out / "old.txt").write_text("old")
    assert burstlab("run", small_scenario, "--out", out, "--json").returncode == status.SUCCESS
    proc = burstlab("run", small_scenario, "--out", out, "--overwrite", "--json", "--set", "seed=2")
    assert proc.returncode == status.SUCCESS, proc.stderr
    assert {p.name for p in out.iterdir()} == OUTPUT_FILES | {"old.txt"}
    assert json.loads((out / "summary.json").read_text())["seed"] == 2
    assert (out / "old.txt").read_text() == "old"


# ---- bad input ---------------------------------------------------------------------------------


def test_bad_scenario_exits_2_names_the_field_and_writes_nothing(bad_scenario, tmp_path):
    out = tmp_path / "run"
    proc = burstlab("run", bad_scenario, "--out", out, "--json")
    assert proc.returncode == status.BAD_INPUT
    assert proc.stdout == ""
    assert "cca" in proc.stderr and "cubc" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.toml"]


def test_invalid_toml_exits_2(tmp_path):
    path = tmp_path / "broken.toml"
    path.write_text("name = \n[topology\n")
    proc = burstlab("run", path)
    assert proc.returncode == status.BAD_INPUT
    assert proc.stdout == "" and proc.stderr.strip()


def test_missing_scenario_file_exits_2(tmp_path):
    proc = burstlab("run", tmp_path / "nope.toml")
    assert proc.returncode == status.BAD_INPUT
    assert "nope.toml" in proc.stderr


def test_unknown_option_is_a_usage_error():
    proc = burstlab("run", "x.toml", "--frobnicate")
    assert proc.returncode == status.BAD_INPUT


# ---- internal errors ---------------------------------------------------------------------------


def test_internal_error_exits_1_with_a_traceback(small_scenario, monkeypatch):
    def broken_run(*args, **kwargs):
        raise RuntimeError("simulated bug")

    monkeypatch.setattr("burstlab.api.run", broken_run)
    result = CliRunner().invoke(build_app(), ["run", str(small_scenario), "--json"])
    assert result.exit_code == status.INTERNAL_ERROR
    assert "internal error" in result.stderr
    assert "simulated bug" in result.stderr
    assert result.stdout == ""
