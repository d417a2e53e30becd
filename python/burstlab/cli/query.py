"""``burstlab query``: SQL (DuckDB) over a sweep directory."""

from __future__ import annotations

import datetime as dt
import functools
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from burstlab.cli import status


def command(
    directory: Annotated[Path, typer.Argument(metavar="DIR", help="A sweep directory (burstlab sweep --out), or a collection's (burstlab collect --out: views reports, queue, bursts).")],
    sql: Annotated[str, typer.Argument(metavar="SQL", help="A DuckDB query over runs, flows, intervals, queue, drops, queries.")],
    json_: Annotated[bool, typer.Option("--json", help="Print the rows as one JSON array of objects.")] = False,
) -> None:
    """Query a sweep with SQL (DuckDB) and print the result as an aligned table or JSON.

    The views are runs (one row per run: run_id, one column per --grid path, rep, seed,
    status, error, wall_s, burstlab_version, started_at) and the record tables flows,
    intervals, queue, drops, queries (each row with run_id); join them USING (run_id). A grid
    path is a column name with dots: quote it, "topology.rtt". In the shell's single quotes, a
    string can be written $$tcp$$ (DuckDB's dollar quotes) instead of 'tcp'.

    Example: mean completion time of the TCP flows per congestion control and burst start:

        burstlab query sweeps/start 'SELECT "flow[0].cca", "burst[0].start",
            avg(fct_s) AS fct_s FROM runs JOIN flows USING (run_id)
            WHERE kind = $$tcp$$ GROUP BY ALL ORDER BY ALL'

    Every row is printed, at any size: the table is plain text (numbers right-aligned, NULL
    empty, then "N rows"), not fitted to the terminal, so a large result prints about as fast
    as with --json; pipe it to less -S to scroll.

    Exit status: 0 ok, 2 bad input (not a sweep directory, or SQL DuckDB refuses: its message
    is printed), 1 internal error, 141 the reader of stdout went away (burstlab query ... | head).
    """
    err = Console(stderr=True, highlight=False)
    raise typer.Exit(_query(directory, sql, json_, err))


def _query(directory: Path, sql: str, as_json: bool, err: Console) -> int:
    from burstlab.sweep.views import query

    with status.guarded("query", err):
        table = query(directory, sql)
    if as_json:
        sys.stdout.write(json.dumps(table.to_pylist(), default=_json_default) + "\n")
    else:
        for chunk in text_lines(table):
            sys.stdout.write(chunk)
    return status.SUCCESS


#: Rows formatted and written at a time: large results stream out in pieces of this size.
_CHUNK_ROWS = 8192


def text_lines(table: Any) -> Iterator[str]:
    """``table`` as aligned text, in pieces to write one after the other: a header, a rule, one
    line per row (numbers right-aligned, NULL empty), then "N rows". Plain text and no
    terminal-width fitting, so any size prints at the speed of formatting its values."""
    names = table.column_names
    cells = [[_cell(v) for v in table.column(i).to_pylist()] for i in range(len(names))]
    right = [field.type.id in _numeric_ids() for field in table.schema]
    widths = [max([len(name), *map(len, column)]) for name, column in zip(names, cells, strict=True)]

    def line(values: Sequence[str]) -> str:
        return "  ".join(v.rjust(w) if r else v.ljust(w)
                         for v, w, r in zip(values, widths, right, strict=True)).rstrip() + "\n"

    if names:
        yield line(names) + "  ".join("\u2500" * w for w in widths) + "\n"
    for start in range(0, table.num_rows, _CHUNK_ROWS):
        rows = zip(*(column[start:start + _CHUNK_ROWS] for column in cells), strict=True)
        yield "".join(map(line, rows))
    yield f"{table.num_rows} row{'' if table.num_rows == 1 else 's'}\n"


@functools.cache
def _numeric_ids() -> frozenset[int]:
    """Arrow's numeric type ids, computed on first use: pyarrow is imported by a query, not by
    every `burstlab` command that lists this verb."""
    import pyarrow as pa

    types = (pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(),
             pa.uint64(), pa.float16(), pa.float32(), pa.float64())
    return frozenset(t.id for t in types)



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
