"""Telemetry from real or simulated networks: decode INT reports, find microbursts, name their
culprits and victims. The work happens in Rust (``crates/telemetry``); this module picks the
input's kind, reads simulator output, and shapes the answer.

    import burstlab.telemetry as tm
    result = tm.detect("int-reports.pcap")             # INT reports (UDP 5900, 32766, 8090, 1234)
    result = tm.detect("in.pcap", egress="out.pcap")   # one device's queue from two captures
    result = tm.detect("plain.pcap", link_rate="10Gbps")   # a plain capture: rate over windows
    result = tm.detect("runs/r1")                      # `burstlab run --out` with a [telemetry] section

``result`` is the ``burstlab detect --json`` object: ``{"input", "format", "reports",
"reports_lost", "malformed", "suspect_sequence", "suspect_occupancy", "samples", "bursts": [...],
"warnings": [...]}``. ``suspect_sequence`` counts reports whose number jumped more than 65,536
ahead with the next report not following on (a corrupt field: neither received nor lost);
``suspect_occupancy`` samples deeper than ``buffer`` (kept out of every burst).

A capture cut short inside its last record (as a capture stopped mid-write is) is read up to the
cut, as tcpdump reads it; the cut is named in ``warnings`` (``detect``), in the ``warning`` of
:func:`decode_lines`' counts, or as a :class:`UserWarning` (``decode``). Long passes run with
the GIL released and stop on Ctrl-C (``KeyboardInterrupt``) within a fraction of a second.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from burstlab.errors import TelemetryInputError

__all__ = ["decode", "detect", "write_int_pcap", "DEFAULT_PORTS"]

#: Report UDP ports decoded unless told otherwise (AmLight/NoviFlow, ONOS/fabric-tna, GEANT,
#: BPFCollector demos).
DEFAULT_PORTS = (5900, 32766, 8090, 1234)

Progress = Callable[[int, int], None]


def decode(
    path: str | os.PathLike[str],
    *,
    profile: str | os.PathLike[str] | None = None,
    ports: Sequence[int] | None = None,
    on_progress: Progress | None = None,
) -> Iterator[dict[str, Any]]:
    """Yield one dict per telemetry report in a pcap/pcapng capture (or ``{"frame", "error",
    "offset"}`` for one whose report header is malformed), in capture order: the keys
    ``burstlab decode --help`` lists, with ``flags`` (D/Q/F), ``drop_reason``, ``int_version``,
    every hop (the reporting switch's first), ``source_only`` and ``inner_error``. ``on_progress(done, total)`` is called
    with file bytes as the capture is read. A capture cut short inside its last record yields
    the reports before the cut and warns (:class:`UserWarning`) where it ends."""
    lines: list[str] = []
    stats = decode_lines(path, lines.extend, profile=profile, ports=ports, on_progress=on_progress)
    if stats["warning"]:
        warnings.warn(stats["warning"], stacklevel=2)
    for line in lines:
        yield json.loads(line)


def decode_lines(
    path: str | os.PathLike[str],
    write: Callable[[list[str]], None],
    *,
    profile: str | os.PathLike[str] | None = None,
    ports: Sequence[int] | None = None,
    on_progress: Progress | None = None,
) -> dict[str, int]:
    """Stream the JSON lines of :func:`decode` to ``write`` in batches as the capture is read (no
    dicts built; the CLI uses it). An exception ``write`` raises (a closed pipe) or Ctrl-C stops
    the decoding and propagates. Returns counts: frames, reports, malformed, ``skipped`` (the
    frames without a report, by why: ``unreadable``, ``not_ip``, ``not_udp``, ``other_port``),
    bytes, ``warning``: one line naming where a capture cut short ends, else ``None``;
    ``suspect_sequence`` (reports whose number jumped implausibly), ``implausible_records``
    (records with impossible lengths) and ``implausible``: one line naming the first one's
    offset, else ``None``."""
    from burstlab import _core

    src = _existing_file(path, "capture")

    def batch(lines: list[str], done: int, total: int) -> None:
        write(lines)
        if on_progress:
            on_progress(done, total)

    return _core.decode_capture(str(src), _profile_text(profile), list(ports) if ports else None, batch)


def detect(
    input: str | os.PathLike[str],  # noqa: A002 - the CLI's word
    *,
    egress: str | os.PathLike[str] | None = None,
    profile: str | os.PathLike[str] | None = None,
    ports: Sequence[int] | None = None,
    rise: str | None = None,
    fall: str | None = None,
    buffer: str | None = None,
    min_duration: str | None = None,
    merge_gap: str | None = None,
    link_rate: str | None = None,
    timescales: Sequence[str] | None = None,
    rate_threshold: float | None = None,
    top: int = 10,
    on_progress: Progress | None = None,
) -> dict[str, Any]:
    """Find the microbursts in ``input`` and attribute them (see the module docstring for the
    inputs). Thresholds take human units: ``rise="200KB"`` or ``rise="50%"`` (of ``buffer``),
    times ``"1ms"``, rates ``"10Gbps"``. Raises :class:`~burstlab.errors.TelemetryInputError`
    for an unreadable or malformed input and for inconsistent options; a capture cut short inside
    its last record is read up to the cut and named in ``result["warnings"]``."""
    from burstlab import _core

    options = {
        "rise": rise, "fall": fall, "buffer": buffer, "min_duration": min_duration,
        "merge_gap": merge_gap, "link_rate": link_rate,
        "timescales": list(timescales) if timescales else None,
        "rate_threshold": rate_threshold, "top": top,
        "profiles_toml": _profile_text(profile), "ports": list(ports) if ports else None,
    }
    src = Path(input)
    if src.is_dir():
        if egress is not None:
            raise TelemetryInputError(f"--egress applies to captures, but {src} is a simulation directory")
        return _detect_sim_dir(src, options)
    src = _existing_file(src, "input")
    egress_path = str(_existing_file(egress, "egress capture")) if egress is not None else None
    text = _core.detect_capture(str(src), egress_path, json.dumps(options),
                                (lambda done, total: on_progress(done, total)) if on_progress else None)
    return json.loads(text)


def _detect_sim_dir(directory: Path, options: dict[str, Any]) -> dict[str, Any]:
    """A `burstlab run --out` directory: the `int` table when the run recorded INT (packets,
    so culprits and victims), else the `queue` table (depth only, no attribution) with the
    drops of `drops.parquet` merged in, so each burst counts the drops on its queue."""
    import pyarrow.parquet as pq

    from burstlab import _core

    int_path, queue_path = directory / "int.parquet", directory / "queue.parquet"
    if int_path.exists() and pq.read_metadata(int_path).num_rows > 0:
        table, kind = pq.read_table(int_path), "int"
        columns = {name: _column_for_core(table.column(name)) for name in table.column_names}
    elif queue_path.exists():
        table, kind = pq.read_table(queue_path), "queue"
        columns = {name: _column_for_core(table.column(name)) for name in table.column_names}
        drops_path = directory / "drops.parquet"
        if drops_path.exists():
            columns = _with_drops(columns, pq.read_table(drops_path, columns=["t_s", "node", "port", "queue"]))
    else:
        raise TelemetryInputError(
            f"{directory}: expected a simulation output directory (burstlab run --out) with "
            "int.parquet or queue.parquet, found neither"
        )
    text = _core.detect_table(kind, columns, json.dumps(options), str(directory))
    return json.loads(text)


def _with_drops(queue: dict[str, Any], drops: Any) -> dict[str, Any]:
    """The queue table's columns with one row per drop added (``dropped`` True), in time order.
    A drop row carries its queue's last recorded occupancy, so it moves no threshold: it only
    counts in the burst it falls in. At equal times a drop follows the queue's record."""
    import numpy as np

    d = {name: _column_for_core(drops.column(name)) for name in drops.column_names}
    keys: dict[tuple[str, str, int], int] = {}

    def key_ids(cols: dict[str, Any]) -> np.ndarray:
        rows = zip(cols["node"], cols["port"], cols["queue"])
        return np.fromiter((keys.setdefault((n, p, int(q)), len(keys)) for n, p, q in rows),
                           dtype=np.int64, count=len(cols["node"]))

    t_q, k_q = np.asarray(queue["t_s"], dtype=np.float64), key_ids(queue)
    t_d, k_d = np.asarray(d["t_s"], dtype=np.float64), key_ids(d)
    occ_q = np.asarray(queue["occupancy_bytes"], dtype=np.uint64)
    occ_d = np.zeros(len(t_d), dtype=np.uint64)
    for key in np.unique(k_d):
        mine = np.flatnonzero(k_q == key)
        mine = mine[np.argsort(t_q[mine], kind="stable")]
        at = np.flatnonzero(k_d == key)
        # The last record of the same queue at or before each drop (0 when there is none).
        i = np.searchsorted(t_q[mine], t_d[at], side="right") - 1
        occ_d[at] = np.where(i >= 0, occ_q[mine[np.maximum(i, 0)]], 0) if len(mine) else 0
    dropped = np.concatenate([np.zeros(len(t_q), dtype=bool), np.ones(len(t_d), dtype=bool)])
    t = np.concatenate([t_q, t_d])
    order = np.lexsort((dropped, t))
    nodes, ports = queue["node"] + d["node"], queue["port"] + d["port"]
    queues = np.concatenate([np.asarray(queue["queue"], dtype=np.uint64), np.asarray(d["queue"], dtype=np.uint64)])
    return {
        "t_s": t[order],
        "node": [nodes[i] for i in order],
        "port": [ports[i] for i in order],
        "queue": queues[order],
        "occupancy_bytes": np.concatenate([occ_q, occ_d])[order],
        "dropped": dropped[order],
    }


def _column_for_core(column: Any) -> Any:
    """NumPy for numbers and booleans, a list of str for strings (dictionary columns decoded)."""
    import pyarrow as pa

    col = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if pa.types.is_dictionary(col.type):
        col = col.dictionary_decode()
    if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
        return col.to_pylist()
    return col.to_numpy(zero_copy_only=False)


def write_int_pcap(
    int_table: Any, path: str | os.PathLike[str], *, version: str = "1.0", switch_ids: dict[str, int] | None = None
) -> int:
    """Write a simulation's `int` rows as real Telemetry Report packets (TR ``"1.0"`` as AmLight's
    NoviFlow switches send them, or ``"2.0"``) in a pcap file; returns the number of reports."""
    from burstlab import _core

    columns = {name: _column_for_core(int_table.column(name)) for name in int_table.column_names}
    return _core.write_int_pcap(str(path), columns, version)


def _existing_file(path: str | os.PathLike[str] | None, what: str) -> Path:
    p = Path(path) if path is not None else None
    if p is None or not p.exists():
        raise TelemetryInputError(f"{what} {p}: no such file")
    if not p.is_file():
        raise TelemetryInputError(f"{what} {p}: expected a pcap or pcapng file, found a directory")
    return p


def _profile_text(profile: str | os.PathLike[str] | None) -> str | None:
    if profile is None:
        return None
    try:
        return Path(profile).read_text(encoding="utf-8")
    except OSError as exc:
        raise TelemetryInputError(f"profile {profile}: {exc.strerror or exc}") from exc
