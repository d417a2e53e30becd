"""SQL over a sweep directory: DuckDB views ``runs``, ``flows``, ``intervals``, ``queue``,
``drops`` over its Parquet files, read in place (nothing is loaded until a query needs it)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa

from burstlab.api import TABLES
from burstlab.sweep.definition import DEFINITION_FILE
from burstlab.sweep.errors import SweepError
from burstlab.sweep.store import RUNS_FILE

__all__ = ["connect", "query", "VIEWS"]

#: The view names, ``runs`` first.
VIEWS = ("runs", *TABLES)


def connect(out: str | Path) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with the sweep's tables as views. A record table no run
    produced (every run failed) has no view."""
    out = Path(out)
    from burstlab.collect.store import create_views, is_collect_dir

    if not (out / DEFINITION_FILE).is_file() and is_collect_dir(out):
        con = duckdb.connect(":memory:")  # a `burstlab collect --out` directory
        create_views(con, out)
        return con
    if not (out / DEFINITION_FILE).is_file() or not (out / RUNS_FILE).is_file():
        raise SweepError(f"{out}: not a sweep directory (no {DEFINITION_FILE} or {RUNS_FILE})")
    con = duckdb.connect(":memory:")
    con.execute(f"CREATE VIEW runs AS SELECT * FROM read_parquet({_literal(out / RUNS_FILE)})")
    for name in TABLES:
        if any((out / name).glob("run-*.parquet")):
            pattern = _literal(out / name / "run-*.parquet")
            con.execute(f"CREATE VIEW {name} AS SELECT * FROM read_parquet({pattern}, union_by_name = true)")
    return con


def query(out: str | Path, sql: str) -> pa.Table:
    """The result of ``sql`` over the sweep in ``out``, as an Arrow table.

    Raises :class:`SweepError` with DuckDB's message when the SQL is wrong.
    """
    con = connect(out)
    try:
        relation = con.sql(sql)
        # A statement without a result (CREATE, SET) returns None.
        return pa.table({}) if relation is None else relation.arrow().read_all()
    except duckdb.Error as err:
        raise SweepError(str(err)) from None
    finally:
        con.close()


def _literal(path: Path) -> str:
    """``path`` as an SQL string literal (quotes doubled)."""
    return "'" + str(path).replace("'", "''") + "'"
