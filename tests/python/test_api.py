"""burstlab.api: run, RunResult, write (mirrors python/burstlab/api.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import burstlab
from burstlab import api
from burstlab.errors import OutputExistsError, ScenarioError
from helpers import BAD_CCA_SCENARIO, EXPECTED_COLUMNS, FLOWS_COLUMNS, OUTPUT_FILES, SMALL_SCENARIO

@pytest.fixture(scope="module")
def result() -> burstlab.RunResult:
    return burstlab.run(SMALL_SCENARIO)


def assert_has_columns(table: pa.Table, expected: list[str]) -> None:
    # The documented columns, in order; later schema additions may follow them.
    assert table.column_names[: len(expected)] == expected


# ---- run ---------------------------------------------------------------------------------------


def test_run_returns_the_four_tables_as_arrow(result):
    assert list(result.tables) == list(burstlab.TABLES)
    for name, columns in EXPECTED_COLUMNS.items():
        assert isinstance(result.table(name), pa.Table)
        assert_has_columns(result.table(name), columns)


def test_run_accepts_a_path_a_str_path_and_text(small_scenario):
    by_path = burstlab.run(small_scenario)
    by_str = burstlab.run(str(small_scenario))
    by_text = burstlab.run(SMALL_SCENARIO)
    for r in (by_path, by_str, by_text):
        assert r.summary["scenario"] == "small-cubic"
        assert r.table("flows").num_rows == 1


def test_run_set_list_and_dict_override_the_seed():
    assert burstlab.run(SMALL_SCENARIO, set=["seed=42"]).summary["seed"] == 42
    assert burstlab.run(SMALL_SCENARIO, set={"seed": 43}).summary["seed"] == 43


def test_run_bad_scenario_raises_scenario_error_naming_the_field():
    with pytest.raises(ScenarioError) as info:
        burstlab.run(BAD_CCA_SCENARIO)
    assert "cca" in str(info.value)
    assert "cubc" in str(info.value)
    assert "\n" not in str(info.value)


def test_run_missing_file_raises_scenario_error(tmp_path):
    with pytest.raises(ScenarioError) as info:
        burstlab.run(tmp_path / "nope.toml")
    assert info.value.kind == "file"
    assert "nope.toml" in str(info.value)


def test_load_scenario_returns_normalised_json():
    scenario = json.loads(burstlab._core.load_scenario(SMALL_SCENARIO, ["seed=9"]))
    assert scenario["seed"] == 9
    assert scenario["name"] == "small-cubic"
    assert scenario["flows"][0]["size_bytes"] == 10_000_000


# ---- overrides ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (None, []),
        ("seed=3", ["seed=3"]),
        (["topology.rtt=209ms", "seed=3"], ["topology.rtt=209ms", "seed=3"]),
        ({"topology.rtt": "209ms"}, ["topology.rtt=209ms"]),
        ({"flow[0].ecn": True, "seed": 7, "x": 0.5}, ["flow[0].ecn=true", "seed=7", "x=0.5"]),
        ({"flow[0].tcp_rmem": [4096, 131072, 6291456]}, ["flow[0].tcp_rmem=[4096, 131072, 6291456]"]),
    ],
)
def test_overrides_are_written_like_the_command_line(given, expected):
    assert api.overrides(given) == expected


# ---- RunResult ---------------------------------------------------------------------------------


def test_result_schema_metadata_names_scenario_seed_and_version(result):
    for table in result.tables.values():
        meta = table.schema.metadata
        assert meta[b"burstlab.scenario"] == b"small-cubic"
        assert meta[b"burstlab.seed"] == b"1"
        assert meta[b"burstlab.version"] == burstlab.__version__.encode()


def test_result_string_columns_are_strings_or_dictionaries(result):
    assert pa.types.is_string(result.table("flows").schema.field("cca").type)
    node = result.table("queue").schema.field("node").type
    assert pa.types.is_string(node) or (
        pa.types.is_dictionary(node) and pa.types.is_string(node.value_type)
    )


def test_result_unknown_table_lists_the_known_ones(result):
    with pytest.raises(KeyError, match="flows, intervals, queue, drops"):
        result.table("bursts")


def test_result_to_pandas_matches_the_arrow_table(result):
    df = result.to_pandas("flows")
    assert isinstance(df, pd.DataFrame)
    assert list(df.columns[: len(FLOWS_COLUMNS)]) == FLOWS_COLUMNS
    assert len(df) == result.table("flows").num_rows


# ---- write -------------------------------------------------------------------------------------


def test_write_round_trips_through_parquet(result, tmp_path):
    out = result.write(tmp_path / "run")
    assert {p.name for p in out.iterdir()} == OUTPUT_FILES
    for name, columns in EXPECTED_COLUMNS.items():
        table = pq.read_table(out / f"{name}.parquet")
        assert_has_columns(table, columns)
        assert table.num_rows == result.table(name).num_rows
        assert table.schema.metadata[b"burstlab.scenario"] == b"small-cubic"
    assert json.loads((out / "summary.json").read_text()) == result.summary


def test_write_into_an_empty_existing_dir(result, tmp_path):
    (tmp_path / "run").mkdir()
    result.write(tmp_path / "run")
    assert {p.name for p in (tmp_path / "run").iterdir()} == OUTPUT_FILES


def test_write_leaves_other_files_alone(result, tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    result.write(out)
    assert {p.name for p in out.iterdir()} == OUTPUT_FILES | {"notes.txt"}
    assert (out / "notes.txt").read_text() == "keep me"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]  # no staging left behind


def test_write_refuses_earlier_output_without_overwrite(result, tmp_path):
    out = result.write(tmp_path / "run")
    with pytest.raises(OutputExistsError, match="overwrite"):
        result.write(out)
    result.write(out, overwrite=True)
    assert {p.name for p in out.iterdir()} == OUTPUT_FILES
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


def test_write_failure_midway_leaves_no_partial_output(result, tmp_path, monkeypatch):
    calls = []

    def failing_write_table(table, where, **kwargs):
        calls.append(where)
        if len(calls) == 2:
            raise OSError("disk full")
        Path(where).write_bytes(b"x")

    monkeypatch.setattr("pyarrow.parquet.write_table", failing_write_table)
    with pytest.raises(OSError, match="disk full"):
        result.write(tmp_path / "run")
    assert list(tmp_path.iterdir()) == []


def test_write_refuses_a_file_in_the_way(result, tmp_path):
    (tmp_path / "run").write_text("a file")
    with pytest.raises(OutputExistsError, match="not a directory"):
        result.write(tmp_path / "run", overwrite=True)


def test_a_catalogue_name_reads_the_scenario_shipped_under_it(tmp_path, monkeypatch):
    from burstlab.api import read_scenario

    monkeypatch.chdir(tmp_path)  # no scenarios/ folder here: the name alone must find it
    shipped = (Path(burstlab.__file__).parent / "scenarios" / "int-burst.toml").read_text()
    assert read_scenario("int-burst") == shipped
    assert read_scenario(Path("amlight/base-209ms.toml")).startswith("#")
    with pytest.raises(ScenarioError, match="nor a name in burstlab's catalogue"):
        read_scenario("no-such-scenario")
