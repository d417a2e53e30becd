"""``burstlab query``: SQL (DuckDB) over a sweep directory."""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from burstlab.cli import status


def command(
    directory: Annotated[Path, typer.Argument(metavar="DIR", help="A sweep directory (burstlab sweep --out).")],
    sql: Annotated[str, typer.Argument(metavar="SQL", help="A DuckDB query over runs, flows, intervals, queue, drops, queries.")],
    json_: Annotated[bool, typer.Option("--json", help="Print the rows as one JSON array of objects.")] = False,
) -> None:
    """Query a sweep with SQL. The views are runs (one row per run: run_id, one column per
    --grid path, rep, seed, status, error, wall_s, burstlab_version, started_at) and the record
    tables flows, intervals, queue, drops, queries (each row with run_id); join them USING (run_id).
    A grid path is a column name with dots: quote it, "topology.rtt".

    Example: mean completion time of the TCP flows per congestion control and burst start:

        burstlab query sweeps/start 'SELECT "flow[0].cca", "burst[0].start", avg(fct_s) AS fct_s FROM runs JOIN flows USING (run_id) WHERE kind = '"'"'tcp'"'"' GROUP BY ALL ORDER BY ALL'

    Exit status: 0 ok, 2 bad input (not a sweep directory, or SQL DuckDB refuses: its message
    is printed), 1 internal error.
    """
    err = Console(stderr=True, highlight=False)
    raise typer.Exit(_query(directory, sql, json_, err))


def _query(directory: Path, sql: str, as_json: bool, err: Console) -> int:
    from burstlab.sweep.views import query

    with status.guarded("query", err):
        table = query(directory, sql)
    rows = table.to_pylist()
    if as_json:
        sys.stdout.write(json.dumps(rows, default=_json_default) + "\n")
        return status.SUCCESS
    from rich import box
    from rich.table import Table

    view = Table(box=box.SIMPLE_HEAD, pad_edge=False, caption=f"{len(rows)} rows", caption_justify="left")
    for field in table.schema:
        numeric = field.type.id in _NUMERIC_IDS
        view.add_column(field.name, justify="right" if numeric else "left")
    for row in rows:
        view.add_row(*(_cell(v) for v in row.values()))
    console = Console(highlight=False)
    if not console.is_terminal:
        console.width = max(console.width, 160)  # a log file has no right margin to respect
    console.print(view)
    return status.SUCCESS


def _numeric_ids() -> frozenset[int]:
    import pyarrow as pa

    types = (pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(),
             pa.uint64(), pa.float16(), pa.float32(), pa.float64())
    return frozenset(t.id for t in types)


_NUMERIC_IDS = _numeric_ids()


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def _json_default(value: Any) -> Any:
    """JSON for what Arrow gives beyond JSON's types: timestamps as ISO 8601, decimals as
    numbers, bytes as text."""
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    try:
        return float(value)
    except (TypeError, ValueError):
        return str(value)
