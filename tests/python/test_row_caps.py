"""Record tables capped within the memory budget (issue 41): a run whose settings the estimate
accepts but whose ``intervals`` table outgrows its share (a quarter of the budget, 144 bytes a
row) keeps that many rows and counts the rest in the summary's ``rows_not_kept``, through the
API and through ``burstlab run`` (mirrors crates/sim/tests/row_caps.rs)."""

from __future__ import annotations

import json

import burstlab
from helpers import burstlab as burstlab_cli

# An unsized flow reported every millisecond for 200 s: 200,000 interval rows.
LONG_1MS = """
name = "capped"
stop = "200s"
interval = "1ms"
[topology]
bottleneck_rate = "1Mbps"
rtt = "10ms"
[[flow]]
cca = "cubic"
"""
ROWS = 200_000
# A quarter of 64 MiB at 144 bytes a row (crates/sim/src/scenario/budget.rs, row_caps).
CAP_64MIB = (64 << 20) // 4 // 144


def test_the_api_keeps_the_cap_and_counts_the_rest():
    capped = burstlab.run(LONG_1MS, set=["memory_budget=64MiB"])
    assert capped.tables["intervals"].num_rows == CAP_64MIB
    assert capped.summary["rows_not_kept"] == {"intervals": ROWS - CAP_64MIB}
    full = burstlab.run(LONG_1MS, set=["memory_budget=1GiB"])
    assert full.tables["intervals"].num_rows == ROWS
    assert "rows_not_kept" not in full.summary
    # Capping changes what is kept, not what is simulated.
    assert capped.summary["flows"] == full.summary["flows"]


def test_burstlab_run_warns_once_on_stderr_and_keeps_stdout_json(tmp_path):
    path = tmp_path / "capped.toml"
    path.write_text(LONG_1MS)
    proc = burstlab_cli("run", path, "--json", "--set", "memory_budget=64MiB")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["rows_not_kept"] == {"intervals": ROWS - CAP_64MIB}
    warnings = [line for line in proc.stderr.splitlines() if "warning" in line]
    assert warnings == [
        f"burstlab run: warning: rows not kept past their table's cap (a quarter of the memory "
        f"budget each): intervals {ROWS - CAP_64MIB:,}; a larger memory_budget keeps them"
    ]


def test_burstlab_run_says_nothing_when_every_row_was_kept(tmp_path):
    path = tmp_path / "full.toml"
    path.write_text(LONG_1MS.replace('"200s"', '"2s"'))
    proc = burstlab_cli("run", path, "--json", "--set", "memory_budget=64MiB")
    assert proc.returncode == 0, proc.stderr
    assert "rows_not_kept" not in json.loads(proc.stdout)
    assert "warning" not in proc.stderr
