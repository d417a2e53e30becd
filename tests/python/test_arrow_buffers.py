"""burstlab.arrow: arrays made from their buffers are the ones pyarrow.array() makes (the same
Arrow IPC bytes), and making a run's tables, writing them and a sweep's store load no pandas."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from burstlab import arrow

HERE = Path(__file__).resolve().parent


def _ipc(array: pa.Array) -> bytes:
    table = pa.table({"c": array})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def _same(ours: pa.Array, reference: pa.Array) -> None:
    assert ours.type == reference.type
    assert ours.null_count == reference.null_count
    assert _ipc(ours) == _ipc(reference)


NUMERIC = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
           np.float32, np.float64]


@pytest.mark.parametrize("dtype", NUMERIC)
@pytest.mark.parametrize("n", [0, 1, 9, 1000])
def test_numbers_are_pyarrows(dtype, n: int):
    values = (np.arange(n) * 7 % 251).astype(dtype)
    if values.dtype.kind == "f" and n:
        values[0] = np.nan  # a value, not a null, as pyarrow.array() has it
    _same(arrow.from_numpy(values), pa.array(values))


@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 17, 1000])
def test_booleans_are_packed_as_pyarrow_packs_them(n: int):
    values = (np.arange(n) % 3 == 1)
    _same(arrow.from_numpy(values), pa.array(values))


def test_a_strided_or_byte_swapped_array_is_read_as_its_values():
    values = np.arange(20, dtype=np.int64)
    _same(arrow.from_numpy(values[::3]), pa.array(values[::3]))
    swapped = values.astype(">i8")
    assert arrow.from_numpy(swapped).to_pylist() == values.tolist()


def test_an_array_not_of_numbers_is_refused_by_name():
    with pytest.raises(TypeError, match="dtype object"):
        arrow.from_numpy(np.array(["a"], dtype=object))
    with pytest.raises(ValueError, match=r"shape \(2, 2\)"):
        arrow.from_numpy(np.zeros((2, 2)))


@pytest.mark.parametrize("values", [[], ["a"], ["", None, "ä€😀", "swA:swA->swB", None], [None], [None] * 9])
def test_strings_and_nulls_are_pyarrows(values: list[str | None]):
    _same(arrow.strings(values), pa.array(values, type=pa.string()))


def test_a_dictionary_column_is_pyarrows():
    codes, values = np.array([2, 0, 0, 1], dtype=np.uint32), ["queue_full", "red", "ecn"]
    reference = pa.DictionaryArray.from_arrays(pa.array(codes.astype(np.int32)), pa.array(values, type=pa.string()))
    _same(arrow.dictionary(codes, values), reference)


@pytest.mark.parametrize(("values", "arrow_type"), [
    ([1, 2, 2**63 - 1], pa.int64()), ([0.5, float("nan")], pa.float64()), ([True, False, True], pa.bool_()),
    (["ok", None], pa.string()), ([], pa.int64()),
])
def test_a_list_column_is_pyarrows(values: list, arrow_type: pa.DataType):
    _same(arrow.column(values, arrow_type), pa.array(values, type=arrow_type))


def test_a_column_of_another_type_is_refused():
    with pytest.raises(TypeError, match="column type int32"):
        arrow.column([1], pa.int32())


_NO_PANDAS = """
import json, sys, tempfile
from pathlib import Path
from helpers import SMALL_SCENARIO
import burstlab
from burstlab.sweep.store import SweepStore
from burstlab.sweep.worker import RunTask, run_task

result = burstlab.run(SMALL_SCENARIO)
out = Path(tempfile.mkdtemp())
result.write(out / "run")
outcome = run_task(RunTask(3, {"topology.rtt": "1ms"}, 0, 7, SMALL_SCENARIO, ()))
store = SweepStore(out / "sweep")
store.create()
store.record(outcome.row, outcome.tables)
runs = store.rebuild_runs(["topology.rtt"])
print(json.dumps({"pandas": "pandas" in sys.modules, "rows": runs.num_rows,
                  "flows": result.table("flows").num_rows, "status": outcome.row["status"]}))
"""


def test_a_run_its_files_and_a_sweeps_store_load_no_pandas():
    r = subprocess.run([sys.executable, "-c", _NO_PANDAS], capture_output=True, text=True, cwd=HERE, timeout=300)
    assert r.returncode == 0, r.stderr
    seen = json.loads(r.stdout.splitlines()[-1])
    assert seen == {"pandas": False, "rows": 1, "flows": 1, "status": "ok"}
