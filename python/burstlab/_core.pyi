"""Type stub of ``burstlab._core``, the Rust extension (crates/bindings). Private: use
:func:`burstlab.run`."""

from collections.abc import Callable
from typing import Any, TypedDict

import numpy as np
import numpy.typing as npt

# A column as it crosses from Rust: a NumPy array (u64, i64, f64, bool), a list of optional
# strings, or a dictionary-encoded string column as (uint32 codes, distinct values).
RawColumn = (
    npt.NDArray[np.uint64]
    | npt.NDArray[np.int64]
    | npt.NDArray[np.float64]
    | npt.NDArray[np.bool_]
    | list[str | None]
    | tuple[npt.NDArray[np.uint32], list[str]]
)

class RawRun(TypedDict):
    summary_json: str
    tables: dict[str, dict[str, RawColumn]]

# An ``intervals`` row during a run: flow_id, t_start_s, t_end_s, bytes, bits_per_second,
# retransmits, cwnd_bytes, srtt_us, pacing_rate_bps.
RawIntervalRow = tuple[int, float, float, int, float, int, int, int, int]

def run(
    scenario_toml: str,
    overrides: list[str] = ...,
    progress: Callable[[float, list[RawIntervalRow]], object] | None = ...,
) -> RawRun:
    """Load, validate and simulate; returns ``{"summary_json": str, "tables": {...}}``.

    Raises :class:`burstlab.errors.ScenarioError`. Releases the GIL while simulating; every
    ~50 ms re-attaches to run the signal handlers (Ctrl-C raises ``KeyboardInterrupt`` and stops
    the run) and call ``progress(sim_time_s, rows)`` with the rows completed since its last
    call (and once at the end); an exception ``progress`` raises stops the run and propagates.
    """

def load_scenario(text: str, overrides: list[str] = ...) -> str:
    """Validate a scenario; returns the normalised scenario as JSON (with its ``telemetry``)."""

def check_scenario(text: str, overrides: list[str] = ...) -> str:
    """Validate a scenario as ``load_scenario`` does; returns only ``name``, ``streams`` and
    ``telemetry.int_ports`` as JSON (what ``burstlab run`` reads before the run)."""

def graph_view(text: str, overrides: list[str] = ...) -> str:
    """Validate a scenario; returns its expanded network as JSON (``burstlab.graph.Graph``)."""

def version() -> str:
    """Version of the simulator compiled into this module."""

# -- telemetry (crates/telemetry; burstlab.telemetry is the public front) ----------------------

class DecodeStats(TypedDict):
    frames: int
    reports: int
    malformed: int
    bytes: int
    warning: str | None

def decode_capture(
    path: str,
    profiles_toml: str | None,
    ports: list[int] | None,
    batch: Callable[[list[str], int, int], object],
) -> DecodeStats:
    """Decode every report in a capture; ``batch(json_lines, bytes_done, bytes_total)`` receives
    the ``burstlab decode --json`` lines. Raises ``TelemetryInputError``; an exception ``batch``
    raises, or Ctrl-C, stops the decoding and propagates."""

def detect_capture(
    path: str, egress: str | None, options_json: str, progress: Callable[[int, int], object] | None = ...
) -> str:
    """Detect bursts in a capture (or a pair); returns the ``burstlab detect --json`` text. Ctrl-C
    stops it (``KeyboardInterrupt``)."""

def detect_table(kind: str, columns: dict[str, RawColumn], options_json: str, input: str) -> str:
    """Detect bursts in a simulation's ``int`` or ``queue`` table."""

def write_int_pcap(path: str, columns: dict[str, RawColumn], version: str) -> int:
    """Write ``int`` rows as Telemetry Report packets (TR ``"1.0"`` or ``"2.0"``) into a pcap."""

# -- live collection (crates/telemetry/src/collect; burstlab.collect is the public front) --------

class Collector:
    """UDP sockets and the online pipeline of ``burstlab collect``."""

    def __init__(self, listen: list[str], options_json: str) -> None:
        """Bind every ``ADDR:PORT``; ``options_json`` holds ``detect``'s options plus
        ``max_queues``, ``max_flows`` and ``report_sample``. Raises ``TelemetryInputError``."""
    def addresses(self) -> list[str]: ...
    def poll(self, max_wait_s: float, max_rows: int) -> dict[str, Any]:
        """Receive for up to ``max_wait_s`` (0: what is queued) or ``max_rows`` rows; returns
        ``{"reports", "queue": {column: ndarray}, "flows", "versions", "bursts": [json],
        "counters", "received"}``. Ctrl-C raises ``KeyboardInterrupt``."""
    def finish(self) -> dict[str, Any]:
        """End the open bursts and return the last batch, as ``poll``'s."""
    def gauges(self) -> tuple[npt.NDArray[Any], npt.NDArray[Any], npt.NDArray[Any], npt.NDArray[Any], npt.NDArray[Any]]:
        """``(switch_id, port, queue_id, last_bytes, max_bytes)`` of every tracked queue."""
    def losses(self) -> list[tuple[int, int, int, int]]:
        """``(switch_id, hw_id, received, lost)`` per report stream."""

def replay(
    path: str, to: str, pace: str, value: float, ports: list[int] | None = ..., repeat: int = ...,
    progress: Callable[[int], object] | None = ...,
) -> dict[str, Any]:
    """Send a capture's report datagrams to ``to`` (pace ``"max"``, ``"capture"`` × value or
    ``"rate"`` value/s); returns ``{"frames", "sent", "bytes", "refused", "seconds"}``."""
