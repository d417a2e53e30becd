"""Parquet storage of a live collection: one folder per table under the output directory, files
rotated by time and size, each written under a temporary name, synced and renamed, so a reader
(``burstlab query DIR``, DuckDB, pandas) only ever sees whole files.

    DIR/reports/part-000001.parquet   one row per report (every Nth with --sample-reports N)
    DIR/queue/part-000001.parquet     one row per queue sample (a hop with an occupancy)
    DIR/bursts/part-000001.parquet    one row per ended burst, with culprits and victims

Killed (SIGKILL, power loss), a collector loses the files still open: the rows since each
table's last rotation (a file is closed at the first batch after it is ``rotate_s`` old or
``rotate_bytes`` large: at most ``rotate_s`` plus one poll, :data:`burstlab.collect.POLL_S`, of
rows), and what was in flight (one poll, and the socket's buffer). A closed
file is never lost: it was synced before its rename, and the directory after. Restarted on the
same directory, the collector removes the unfinished files (``.part-*.tmp``, unreadable: their
footer was never written) and numbers its files after the last one there.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from burstlab.arrow import dictionary, from_numpy, strings

#: The tables, in the order their folders are listed.
TABLES = ("reports", "queue", "bursts")

_PART = re.compile(r"^part-(\d{6,})\.parquet$")
_TMP = re.compile(r"^\.part-(\d{6,})\.parquet\.tmp$")


def _masked(values: np.ndarray, missing: np.ndarray, arrow_type: pa.DataType) -> pa.Array:
    """``values`` as ``arrow_type`` with nulls where ``missing``, from the buffers (see
    burstlab.arrow: ``pyarrow.array()`` would import pandas in the collector, 1.5 s of CPU)."""
    values = np.ascontiguousarray(values)
    nulls = int(missing.sum())
    validity = pa.py_buffer(np.packbits(~missing, bitorder="little")) if nulls else None
    return pa.Array.from_buffers(arrow_type, len(values), [validity, pa.py_buffer(values)], null_count=nulls)


def _flows(codes: np.ndarray, flows: list[str]) -> pa.Array:
    return pa.DictionaryArray.from_arrays(_masked(codes.astype(np.int32), codes < 0, pa.int32()), strings(flows))


def _time(ns: np.ndarray) -> pa.Array:
    return from_numpy(ns.view(np.int64)).view(pa.timestamp("ns", tz="UTC"))


def reports_table(batch: dict[str, Any]) -> pa.Table:
    """The reports of one batch (columns from ``_core.Collector.poll``) as an Arrow table."""
    r = batch["reports"]
    reason = r["drop_reason"]
    return pa.table({
        "recv_time": _time(r["recv_ns"]),
        "switch_id": from_numpy(r["switch_id"]),
        "hw_id": from_numpy(r["hw_id"]),
        "seq": from_numpy(r["seq"]),
        "report_version": dictionary(r["version"], batch["versions"]),
        "dropped": from_numpy(r["dropped"]), "congested": from_numpy(r["congested"]),
        "tracked": from_numpy(r["tracked"]),
        "drop_reason": _masked(reason.astype(np.uint8), reason < 0, pa.uint8()),
        "flow": _flows(r["flow"], batch["flows"]),
        "packet_bytes": from_numpy(r["packet_bytes"]),
        "hops": from_numpy(r["hops"]),
    })


def queue_table(batch: dict[str, Any]) -> pa.Table:
    """The queue samples of one batch: ``t_ns`` on the switch's own timeline (device
    timestamps, 32-bit ones unwrapped), ``recv_time`` the collector's clock."""
    q = batch["queue"]
    latency = q["hop_latency_ns"]
    return pa.table({
        "t_ns": from_numpy(q["t_ns"]),
        "recv_time": _time(q["recv_ns"]),
        "switch_id": from_numpy(q["switch_id"]),
        "port": from_numpy(q["port"]),
        "queue_id": from_numpy(q["queue_id"]),
        "occupancy_bytes": from_numpy(q["occupancy_bytes"]),
        "hop_latency_ns": _masked(latency, latency < 0, pa.int64()),
        "flow": _flows(q["flow"], batch["flows"]),
        "packet_bytes": from_numpy(q["packet_bytes"]),
        "dropped": from_numpy(q["dropped"]),
    })


BURST_SCHEMA = pa.schema([
    ("detected_time", pa.timestamp("ns", tz="UTC")), ("switch_id", pa.uint32()), ("port", pa.uint32()),
    ("queue_id", pa.uint8()), ("start_s", pa.float64()), ("end_s", pa.float64()),
    ("duration_s", pa.float64()), ("peak_bytes", pa.uint64()), ("peak_s", pa.float64()),
    ("bytes", pa.uint64()), ("drops", pa.uint64()), ("reports", pa.uint64()),
    ("reports_lost", pa.uint64()), ("resolution_s", pa.float64()), ("top_culprit", pa.string()),
    ("culprits", pa.string()), ("victims", pa.string()), ("definition", pa.string()),
])


_NUMPY = {pa.uint8(): np.uint8, pa.uint32(): np.uint32, pa.uint64(): np.uint64, pa.float64(): np.float64}


def bursts_table(bursts: list[dict[str, Any]], detected_ns: int) -> pa.Table:
    """Ended bursts (``burstlab detect --json``'s burst objects); culprits, victims and the
    definition as JSON text, the top culprit's flow apart for queries."""
    columns = []
    for field in BURST_SCHEMA:
        name, kind = field.name, field.type
        if name in ("culprits", "victims", "definition"):
            columns.append(strings([json.dumps(b[name]) for b in bursts]))
        elif name == "top_culprit":
            columns.append(strings([b["culprits"][0]["flow"] if b["culprits"] else None for b in bursts]))
        elif name == "detected_time":
            columns.append(_time(np.full(len(bursts), detected_ns, dtype=np.int64)))
        else:
            columns.append(from_numpy(np.array([b[name] for b in bursts], dtype=_NUMPY[kind])))
    return pa.Table.from_arrays(columns, schema=BURST_SCHEMA)


def is_collect_dir(out: Path) -> bool:
    """Whether ``out`` is a ``burstlab collect --out`` directory (one of its table folders)."""
    return any((out / name).is_dir() for name in TABLES)


def create_views(con: Any, out: Path) -> None:
    """DuckDB views ``reports``, ``queue``, ``bursts`` over the closed files of ``out`` (the
    open ones are hidden: their names start with a dot)."""
    for name in TABLES:
        if any((out / name).glob("part-*.parquet")):
            pattern = "'" + str(out / name / "part-*.parquet").replace("'", "''") + "'"
            con.execute(f"CREATE VIEW {name} AS SELECT * FROM read_parquet({pattern}, union_by_name = true)")


class _Rotating:
    """One table's open file: rows appended as row groups, closed and renamed into place when
    it is old or large enough."""

    def __init__(self, folder: Path, metadata: dict[bytes, bytes]):
        self.folder = folder
        self.metadata = metadata
        self.writer: pq.ParquetWriter | None = None
        self.tmp: Path | None = None
        self.final: Path | None = None
        self.opened = 0.0
        self.rows = 0

    def write(self, table: pa.Table, number: int) -> None:
        if self.writer is None:
            self.final = self.folder / f"part-{number:06d}.parquet"
            self.tmp = self.folder / f".part-{number:06d}.parquet.tmp"
            schema = table.schema.with_metadata(self.metadata)
            self.writer = pq.ParquetWriter(self.tmp, schema, compression="zstd")
            self.opened = time.monotonic()
        self.writer.write_table(table)
        self.rows += table.num_rows

    def due(self, rotate_s: float, rotate_bytes: int) -> bool:
        if self.writer is None or self.tmp is None:
            return False
        return time.monotonic() - self.opened >= rotate_s or self.tmp.stat().st_size >= rotate_bytes

    def close(self) -> Path | None:
        """Finish the file: footer, fsync, rename, fsync the folder. Returns its name."""
        if self.writer is None or self.tmp is None or self.final is None:
            return None
        self.writer.close()
        _fsync(self.tmp)
        os.rename(self.tmp, self.final)
        _fsync(self.folder)
        final, self.writer, self.tmp, self.final, self.rows = self.final, None, None, None, 0
        return final


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class Store:
    """The output directory of ``burstlab collect``."""

    def __init__(self, out: str | os.PathLike[str], *, rotate_s: float, rotate_bytes: int,
                 metadata: dict[str, str]):
        self.out = Path(out)
        self.rotate_s = rotate_s
        self.rotate_bytes = rotate_bytes
        meta = {k.encode(): v.encode() for k, v in metadata.items()}
        self.removed: list[Path] = []
        last = 0
        for name in TABLES:
            folder = self.out / name
            folder.mkdir(parents=True, exist_ok=True)
            for entry in folder.iterdir():
                if m := _PART.match(entry.name):
                    last = max(last, int(m.group(1)))
                elif _TMP.match(entry.name):
                    # A file a killed collector left open: no footer, unreadable.
                    entry.unlink()
                    self.removed.append(entry)
        self.next_number = last + 1
        self.files = {name: _Rotating(self.out / name, {**meta, b"burstlab.table": name.encode()})
                      for name in TABLES}
        self.closed_files = 0

    def write(self, name: str, table: pa.Table) -> None:
        if table.num_rows == 0:
            return
        f = self.files[name]
        if f.writer is None:
            number, self.next_number = self.next_number, self.next_number + 1
        else:
            number = 0
        f.write(table, number)
        if f.due(self.rotate_s, self.rotate_bytes):
            self._close(f)

    def rotate_due(self) -> None:
        """Close the files that are old enough even when nothing new came."""
        for f in self.files.values():
            if f.due(self.rotate_s, self.rotate_bytes):
                self._close(f)

    def close(self) -> None:
        for f in self.files.values():
            self._close(f)

    def _close(self, f: _Rotating) -> None:
        if f.close() is not None:
            self.closed_files += 1
