"""The Python API: run a scenario, get its records as Arrow tables, save them as Parquet.

>>> import burstlab
>>> result = burstlab.run("scenarios/amlight-209ms-burst.toml", set={"seed": 2})  # doctest: +SKIP
>>> result.summary["flows"][0]["fct_s"]                                             # doctest: +SKIP
>>> result.to_pandas("intervals").plot(x="t_end_s", y="bits_per_second")          # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from burstlab import _core, outputs
from burstlab.errors import ScenarioError

# pyarrow and numpy are imported where a run's tables are made or written, not here: reading,
# checking and loading a scenario (what a CLI verb does before it runs anything, and what
# `burstlab run` with a wrong --set does before it exits) should not wait for them.
if TYPE_CHECKING:
    import pandas
    import pyarrow as pa

__all__ = ["run", "RunResult", "IntervalRow", "TABLES", "OUTPUT_FILES"]

#: The tables every run produces, in the order the simulator returns them (DESIGN.md "Records").
TABLES = ("flows", "intervals", "queue", "drops", "queries", "int")

#: What :meth:`RunResult.write` puts in its directory, besides its manifest
#: (:data:`burstlab.outputs.MANIFEST`).
OUTPUT_FILES = (*(f"{name}.parquet" for name in TABLES), "summary.json")


class IntervalRow(NamedTuple):
    """One row of the ``intervals`` table, as :func:`run` hands it to ``progress`` during the
    run (iperf3's interval report: bytes acknowledged in the interval, and the sender's state
    at its end)."""

    flow_id: int
    t_start_s: float
    t_end_s: float
    bytes: int
    bits_per_second: float
    retransmits: int
    cwnd_bytes: int
    srtt_us: int
    pacing_rate_bps: int


#: ``progress(sim_time_s, rows)``: the simulation clock, and the rows completed since the last call.
Progress = Callable[[float, list[IntervalRow]], object]

# Parquet schema metadata keys: where a file came from, so a lone file is still traceable.
_META_SCENARIO = b"burstlab.scenario"
_META_SEED = b"burstlab.seed"
_META_VERSION = b"burstlab.version"


def run(
    scenario: str | os.PathLike[str],
    *,
    set: Sequence[str] | Mapping[str, Any] | None = None,  # noqa: A002 - mirrors the CLI's --set
    progress: Progress | None = None,
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
    progress
        Called as ``progress(sim_time_s, rows)`` every ~50 ms of wall time while the run
        proceeds, and once at its end, with the :class:`IntervalRow` s completed since the last
        call: every row of the ``intervals`` table, in order. It cannot change the results; an
        exception it raises stops the run and propagates.

    Raises
    ------
    burstlab.errors.ScenarioError
        The scenario cannot be read or is invalid; the message names the field, the value and
        what was expected.
    KeyboardInterrupt
        Ctrl-C (SIGINT) stops the simulation within ~50 ms; no result is returned.

    Examples
    --------
    >>> r = burstlab.run("scenarios/amlight-209ms-burst.toml", set=["topology.rtt=100ms"])  # doctest: +SKIP
    >>> r.table("flows").column("fct_s")                                                     # doctest: +SKIP
    """
    text = read_scenario(scenario)
    if progress is None:
        raw = _core.run(text, overrides(set))
    else:

        def on_rows(sim_time_s: float, rows: list[tuple]) -> None:
            progress(sim_time_s, [IntervalRow._make(r) for r in rows])

        raw = _core.run(text, overrides(set), on_rows)
    return RunResult(json.loads(raw["summary_json"]), raw["tables"])


def load(
    scenario: str | os.PathLike[str],
    *,
    set: Sequence[str] | Mapping[str, Any] | None = None,  # noqa: A002 - as run()
) -> dict[str, Any]:
    """Validate ``scenario`` with its overrides without running it; returns the normalised
    scenario (what the simulator will run, in seconds, bits per second and bytes)."""
    return json.loads(_core.load_scenario(read_scenario(scenario), overrides(set)))


def read_scenario(scenario: str | os.PathLike[str]) -> str:
    """The TOML text of ``scenario``: a path, the name of a scenario in burstlab's catalogue
    (``"amlight-209ms-burst"``, for a path that does not exist), or already the text."""
    if isinstance(scenario, str) and ("\n" in scenario or "=" in scenario):
        return scenario
    path = Path(scenario)
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        from burstlab import catalogue

        name = os.fspath(scenario)
        if name.removesuffix(".toml") in catalogue.names():
            return catalogue.text(name)
        raise ScenarioError(f"{path}: no such scenario file, nor a name in burstlab's catalogue "
                            "(python -m burstlab.catalogue lists them)", "file") from None
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
        ``queries.parquet``, ``int.parquet`` and ``summary.json`` into ``out_dir``, all or
        nothing, with a manifest (``.burstlab-manifest.json``) naming what was written.

        ``out_dir`` may be new or hold other files, which are never touched; its own mode is
        kept. Files are staged beside their place and renamed into it, so a failed or
        interrupted write leaves no partial output.

        Raises
        ------
        burstlab.errors.OutputExistsError
            ``out_dir`` already holds burstlab output and ``overwrite`` is false; or a file
            under one of these names that burstlab did not write (not in the manifest, or
            changed since), refused even with ``overwrite``; or ``out_dir`` is a file.
        burstlab.errors.OutputLocationError
            ``out_dir`` cannot be written (read-only, no permission, or under a file).
        """
        return self._write(
            Path(out_dir), overwrite=overwrite, label="out_dir", overwrite_flag="overwrite=True"
        )

    def _write(self, out: Path, *, overwrite: bool, label: str, overwrite_flag: str) -> Path:
        """:meth:`write`, its messages naming the option as the caller knows it (``--out``)."""
        files = {
            **{f"{name}.parquet": self._parquet_writer(name) for name in TABLES},
            "summary.json": self._summary_writer(),
        }
        return outputs.write_output_dir(
            out, files, overwrite=overwrite, label=label, overwrite_flag=overwrite_flag
        )

    def _parquet_writer(self, name: str) -> outputs.Writer:
        import pyarrow.parquet as pq

        table = self.table(name)
        return lambda path: pq.write_table(table, path, compression="zstd")

    def _summary_writer(self) -> outputs.Writer:
        text = json.dumps(self.summary, indent=2) + "\n"
        return lambda path: path.write_text(text, encoding="utf-8")


def check_output_dir(
    out: Path, *, overwrite: bool, label: str = "out_dir", overwrite_flag: str = "overwrite=True"
) -> None:
    """Raise as :meth:`RunResult.write` would for ``out``, before any work is done."""
    outputs.check_output_dir(
        out, OUTPUT_FILES, overwrite=overwrite, label=label, overwrite_flag=overwrite_flag
    )


def to_arrow(columns: Mapping[str, Any]) -> pa.Table:
    """A table from the columns ``_core`` returns (see ``_core.pyi`` ``RawColumn``)."""
    import pyarrow as pa

    return pa.table({name: _to_arrow_array(raw) for name, raw in columns.items()})


def _to_arrow_array(raw: Any) -> pa.Array:
    # burstlab.arrow, not pyarrow.array(): the latter imports pandas (a third of a second).
    import numpy as np

    from burstlab import arrow

    if isinstance(raw, np.ndarray):
        return arrow.from_numpy(raw)  # zero-copy for numeric dtypes
    if isinstance(raw, tuple):
        codes, values = raw
        return arrow.dictionary(codes, values)
    return arrow.strings(raw)
