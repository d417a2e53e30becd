"""The Python API: run a scenario, get its records as Arrow tables, save them as Parquet.

>>> import burstlab
>>> result = burstlab.run("scenarios/amlight-209ms-burst.toml", set={"seed": 2})  # doctest: +SKIP
>>> result.summary["flows"][0]["fct_s"]                                             # doctest: +SKIP
>>> result.to_pandas("intervals").plot(x="t_end_s", y="bits_per_second")          # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from burstlab import _core
from burstlab.errors import OutputExistsError, ScenarioError

if TYPE_CHECKING:
    import pandas

__all__ = ["run", "RunResult", "TABLES"]

#: The tables every run produces, in the order the simulator returns them (DESIGN.md "Records").
TABLES = ("flows", "intervals", "queue", "drops", "queries", "int")

# Parquet schema metadata keys: where a file came from, so a lone file is still traceable.
_META_SCENARIO = b"burstlab.scenario"
_META_SEED = b"burstlab.seed"
_META_VERSION = b"burstlab.version"


def run(
    scenario: str | os.PathLike[str],
    *,
    set: Sequence[str] | Mapping[str, Any] | None = None,  # noqa: A002 - mirrors the CLI's --set
) -> RunResult:
    """Simulate a scenario and return its records.

    Parameters
    ----------
    scenario
        A path to a TOML scenario file (``str`` or ``os.PathLike``), or the TOML text itself (a
        ``str`` containing a newline or ``=``).
    set
        Overrides, like the CLI's ``--set``: a list of ``"path=value"`` strings, or a mapping
        ``{"topology.rtt": "209ms", "flow[0].cca": "reno"}``.

    Raises
    ------
    burstlab.errors.ScenarioError
        The scenario cannot be read or is invalid; the message names the field, the value and
        what was expected.

    Examples
    --------
    >>> r = burstlab.run("scenarios/amlight-209ms-burst.toml", set=["topology.rtt=100ms"])  # doctest: +SKIP
    >>> r.table("flows").column("fct_s")                                                     # doctest: +SKIP
    """
    text = read_scenario(scenario)
    raw = _core.run(text, overrides(set))
    return RunResult(json.loads(raw["summary_json"]), raw["tables"])


def read_scenario(scenario: str | os.PathLike[str]) -> str:
    """The TOML text of ``scenario`` (a path, or already the text)."""
    if isinstance(scenario, str) and ("\n" in scenario or "=" in scenario):
        return scenario
    path = Path(scenario)
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ScenarioError(f"{path}: no such scenario file", "file") from None
    except (OSError, UnicodeDecodeError) as err:
        raise ScenarioError(f"{path}: cannot read scenario file ({err})", "file") from None


def overrides(set: Sequence[str] | Mapping[str, Any] | None) -> list[str]:  # noqa: A002
    """``--set`` overrides as ``path=value`` strings. Mapping values are written the way a user
    types them on the command line: strings as-is (``"100Gbps"``), booleans ``true``/``false``,
    numbers in decimal, lists and tables as JSON (which is valid TOML for them)."""
    if set is None:
        return []
    if isinstance(set, str):
        return [set]
    if isinstance(set, Mapping):
        return [f"{path}={override_value(value)}" for path, value in set.items()]
    return [str(item) for item in set]


def override_value(value: Any) -> str:
    """``value`` as the text of a ``--set path=value`` override: strings pass through, booleans
    and numbers are written as TOML reads them."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return json.dumps(value)


class RunResult:
    """The records of one run.

    Attributes
    ----------
    summary
        The ``--json`` summary: ``scenario``, ``seed``, ``flows``, ``ports``, ``engine``.
    tables
        ``{name: pyarrow.Table}`` for ``flows``, ``intervals``, ``queue``, ``drops``; each table's
        schema metadata records the scenario name, seed and burstlab version.
    """

    def __init__(self, summary: dict[str, Any], raw_tables: Mapping[str, Mapping[str, Any]]):
        self.summary = summary
        metadata = {
            _META_SCENARIO: str(summary["scenario"]).encode(),
            _META_SEED: str(summary["seed"]).encode(),
            _META_VERSION: str(summary["engine"]["version"]).encode(),
        }
        self.tables: dict[str, pa.Table] = {
            name: to_arrow(columns).replace_schema_metadata(metadata)
            for name, columns in raw_tables.items()
        }

    def __repr__(self) -> str:
        rows = ", ".join(f"{name}={table.num_rows}" for name, table in self.tables.items())
        return f"RunResult(scenario={self.summary['scenario']!r}, seed={self.summary['seed']}, {rows})"

    def table(self, name: str) -> pa.Table:
        """The table ``name`` (one of :data:`TABLES`)."""
        try:
            return self.tables[name]
        except KeyError:
            known = ", ".join(self.tables)
            raise KeyError(f"no table {name!r}; this run has: {known}") from None

    def to_pandas(self, name: str) -> pandas.DataFrame:
        """The table ``name`` as a pandas DataFrame (needs pandas installed)."""
        return self.table(name).to_pandas()

    def write(self, out_dir: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
        """Write ``flows.parquet``, ``intervals.parquet``, ``queue.parquet``, ``drops.parquet``,
        ``queries.parquet`` and ``summary.json`` into ``out_dir``, all or nothing.

        The files are written into a temporary directory beside ``out_dir`` and renamed into
        place, so an interrupted or failed write leaves no partial output. An existing non-empty
        ``out_dir`` raises :class:`~burstlab.errors.OutputExistsError` unless ``overwrite``.
        """
        out = Path(out_dir)
        check_output_dir(out, overwrite=overwrite)
        out.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".partial", dir=out.parent))
        try:
            for name in TABLES:
                pq.write_table(self.table(name), staging / f"{name}.parquet", compression="zstd")
            (staging / "summary.json").write_text(
                json.dumps(self.summary, indent=2) + "\n", encoding="utf-8"
            )
            _replace_dir(staging, out)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        return out


def check_output_dir(out: Path, *, overwrite: bool) -> None:
    """Refuse ``out`` if it is a file, or a non-empty directory without ``overwrite``."""
    if out.exists() and not out.is_dir():
        raise OutputExistsError(f"{out}: exists and is not a directory")
    if not overwrite and out.is_dir() and any(out.iterdir()):
        raise OutputExistsError(
            f"{out}: directory is not empty; choose another directory or pass overwrite=True "
            "(CLI: --overwrite)"
        )


def _replace_dir(staging: Path, out: Path) -> None:
    """Rename ``staging`` to ``out``; an existing ``out`` is set aside first and removed only
    once the new one is in place (restored if the rename fails)."""
    if not out.exists():
        os.rename(staging, out)
        return
    aside = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".old", dir=out.parent))
    os.rename(out, aside / out.name)
    try:
        os.rename(staging, out)
    except BaseException:
        os.rename(aside / out.name, out)
        shutil.rmtree(aside, ignore_errors=True)
        raise
    shutil.rmtree(aside, ignore_errors=True)


def to_arrow(columns: Mapping[str, Any]) -> pa.Table:
    """A table from the columns ``_core`` returns (see ``_core.pyi`` ``RawColumn``)."""
    return pa.table({name: _to_arrow_array(raw) for name, raw in columns.items()})


def _to_arrow_array(raw: Any) -> pa.Array:
    if isinstance(raw, np.ndarray):
        return pa.array(raw)  # zero-copy for numeric dtypes
    if isinstance(raw, tuple):
        codes, values = raw
        # int32 indices: the Arrow default, read back identically by every Parquet reader.
        return pa.DictionaryArray.from_arrays(
            pa.array(codes.astype(np.int32, copy=False)), pa.array(values, type=pa.string())
        )
    return pa.array(raw, type=pa.string())
