"""``burstlab query`` (python/burstlab/cli/query.py): the text table, and a large result printed
about as fast as with --json."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path

import pyarrow as pa
import pytest
from rich.console import Console

from burstlab.cli import query as cli_query
from helpers import SMALL_SCENARIO, burstlab


def test_text_table_aligns_numbers_right_text_left_and_null_empty():
    table = pa.table({
        "run_id": pa.array([0, 12], pa.int64()),
        "cca": pa.array(["cubic", None], pa.string()),
        "fct_s": pa.array([0.0889397123, 10.5], pa.float64()),
    })
    text = "".join(cli_query.text_lines(table))
    assert text.splitlines() == [
        "run_id  cca        fct_s",
        "──────  ─────  ─────────",
        "     0  cubic  0.0889397",
        "    12              10.5",
        "2 rows",
    ]


def test_text_of_no_columns_and_one_row():
    assert "".join(cli_query.text_lines(pa.table({}))) == "0 rows\n"
    assert "".join(cli_query.text_lines(pa.table({"one": [1]}))).endswith("\n1 row\n")


def test_a_large_result_streams_in_pieces():
    table = pa.table({"i": pa.array(range(30_000), pa.int64())})
    pieces = list(cli_query.text_lines(table))
    # Header, then the rows in chunks, then the count: never one string of the whole table.
    assert len(pieces) >= 30_000 // cli_query._CHUNK_ROWS + 2
    assert sum(p.count("\n") for p in pieces) == 30_000 + 3


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("q")
    (root / "small.toml").write_text(SMALL_SCENARIO)
    r = burstlab("sweep", root / "small.toml", "--grid", "topology.rtt=1ms,2ms", "--out", root / "s", "-j", "1", "--json")
    assert r.returncode == 0, r.stderr
    return root / "s"


def test_30k_rows_print_about_as_fast_as_json(sweep_dir: Path, monkeypatch: pytest.MonkeyPatch):
    sql = ('SELECT r.run_id, i.range AS i, i.range * 1.5e-3 AS t_s, r."topology.rtt" AS rtt, '
           "r.started_at FROM runs r, range(15000) i ORDER BY ALL")
    err = Console(stderr=True)

    def timed(as_json: bool) -> tuple[float, str]:
        out = io.StringIO()
        monkeypatch.setattr("sys.stdout", out)
        t0 = time.perf_counter()
        assert cli_query._query(sweep_dir, sql, as_json, err) == 0
        return time.perf_counter() - t0, out.getvalue()

    timed(True)  # warm DuckDB and pyarrow once, so neither side pays it
    json_s, json_out = min(timed(True) for _ in range(2))
    text_s, text_out = min(timed(False) for _ in range(2))
    assert len(json.loads(json_out)) == 30_000
    assert text_out.count("\n") == 30_000 + 3 and text_out.endswith("30000 rows\n")
    # The table printed through rich took 30 times as long as --json; plain text is of a kind
    # with it (a ratio: the machine is shared and noisy).
    assert text_s < 3 * json_s + 0.5, (text_s, json_s)
