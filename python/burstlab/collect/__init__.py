"""Live INT collection: ``burstlab collect`` and ``burstlab replay`` behind a Python API.

    from burstlab.collect import Collection, replay
    with Collection(["127.0.0.1:5900"], out="live", rise="200KB") as c:
        c.run(seconds=60)                      # or until Ctrl-C
    replay("int-reports.pcap", "127.0.0.1:5900", speed="max")

Reports are received, decoded and run through the burst detector, culprit/victim attribution and
report-loss accounting in Rust (``crates/telemetry/src/collect``) with the GIL released; Python
gets one batch of columns per poll (:data:`POLL_S`), stores it (:mod:`burstlab.collect.store`)
and exports it (:mod:`burstlab.collect.exports`), never touching a report on its own.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from burstlab.errors import TelemetryInputError

__all__ = ["Collection", "replay", "POLL_S", "DEFAULT_LISTEN"]

#: Where a collector listens unless told: loopback only, NoviFlow/AmLight's report port.
DEFAULT_LISTEN = "127.0.0.1:5900"
#: Longest a batch waits in Rust before Python stores it, unless told (``batch_s``).
POLL_S = 0.25
#: Longest a stopping collector keeps taking what waits in its sockets.
DRAIN_S = 2.0
#: Most rows (reports + queue samples) in one batch.
BATCH_ROWS = 1 << 18


class Collection:
    """A running collector: its sockets, its output directory and its exports."""

    def __init__(self, listen: Sequence[str] = (DEFAULT_LISTEN,), *, out: str | os.PathLike[str] | None = None,
                 rise: str | None = None, fall: str | None = None, buffer: str | None = None,
                 min_duration: str | None = None, merge_gap: str | None = None, top: int = 10,
                 profile: str | os.PathLike[str] | None = None, max_streams: int = 65_536, max_flows: int = 1_000_000,
                 sample_reports: int = 1, rotate_s: float = 10.0, rotate_bytes: int = 64 << 20,
                 metrics: str | None = None, influx: str | None = None, influx_db: str | None = None,
                 batch_s: float = POLL_S):
        from burstlab import __version__, _core
        from burstlab.telemetry import _profile_text

        if max_streams < 1:
            raise TelemetryInputError(f"--max-streams = {max_streams}: expected at least 1")
        if max_flows < 0:
            raise TelemetryInputError(f"--max-flows = {max_flows}: expected 0 or more")
        if sample_reports < 0:
            raise TelemetryInputError(f"--sample-reports = {sample_reports}: expected 0 (none) or more")
        if not 0 < batch_s <= 10:
            raise TelemetryInputError(f"--batch = {batch_s} s: expected more than 0 and at most 10")
        self.batch_s = batch_s
        if rotate_s <= 0:
            raise TelemetryInputError(f"--rotate = {rotate_s} s: expected more than 0")
        options = {"rise": rise, "fall": fall, "buffer": buffer, "min_duration": min_duration,
                   "merge_gap": merge_gap, "top": top, "profiles_toml": _profile_text(profile),
                   "max_queues": max_streams, "max_flows": max_flows, "report_sample": sample_reports}
        self.influx = None
        if influx:
            from burstlab.collect.exports import InfluxWriter

            try:
                self.influx = InfluxWriter(influx, influx_db)
            except ValueError as e:
                raise TelemetryInputError(str(e)) from None
        self.core = _core.Collector(list(listen), json.dumps(options))
        self.store = None
        if out is not None:
            from burstlab.collect.store import Store

            self.store = Store(out, rotate_s=rotate_s, rotate_bytes=rotate_bytes,
                               metadata={"burstlab.version": __version__, "burstlab.listen": ",".join(listen)})
        from burstlab.collect.exports import Snapshot

        self.snapshot = Snapshot()
        self.prometheus = None
        if metrics:
            from burstlab.collect.exports import PrometheusEndpoint

            host, port = _host_port(metrics, "--metrics")
            try:
                self.prometheus = PrometheusEndpoint(host, port)
            except OSError as e:
                raise TelemetryInputError(f"--metrics {metrics}: {e}") from None
        self.started = time.monotonic()
        self.closed = False

    def __enter__(self) -> Collection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def addresses(self) -> list[str]:
        """The bound ``ADDR:PORT``s (none once closed)."""
        return self.core.addresses() if self.core is not None else []

    def poll(self, max_wait_s: float | None = None) -> dict[str, Any]:
        """Receive one batch, store and export it; returns ``{"counters", "bursts"}`` with the
        bursts that ended in it (``burstlab detect --json``'s burst objects)."""
        wait = self.batch_s if max_wait_s is None else max_wait_s
        return self._handle(self.core.poll(wait, BATCH_ROWS))

    def run(self, seconds: float | None = None, on_batch: Callable[[dict[str, Any]], None] | None = None,
            stop: Callable[[], bool] | None = None) -> None:
        """Poll until ``seconds`` have passed (forever when ``None``), ``stop()`` says so (asked
        after each batch: a signal handler can set it without cutting a batch in two), or
        Ctrl-C raises ``KeyboardInterrupt``."""
        end = None if seconds is None else time.monotonic() + seconds
        while (end is None or time.monotonic() < end) and not (stop and stop()):
            wait = self.batch_s if end is None else max(0.0, min(self.batch_s, end - time.monotonic()))
            result = self.poll(wait)
            if on_batch:
                on_batch(result)

    def close(self) -> dict[str, Any]:
        """Close what is open: what waits in the sockets is taken, the bursts still open end
        here (as ``detect`` ends them at the end of a capture), the last rows are stored and the
        files renamed into place. Returns ``poll``'s shape with every burst that ended since
        the last poll."""
        if self.closed:
            return {"counters": self.snapshot.counters, "bursts": []}
        self.closed = True
        try:
            # What waits in the sockets is taken first (for at most DRAIN_S, should it keep coming).
            end = time.monotonic() + DRAIN_S
            bursts: list[dict[str, Any]] = []
            while self._drain_once(bursts) and time.monotonic() < end:
                pass
            result = self._handle(self.core.finish())
            result["bursts"] = bursts + result["bursts"]
        finally:
            self.core = None  # the sockets close with it: the ports are free again
            if self.store is not None:
                self.store.close()
            if self.prometheus is not None:
                self.prometheus.close()
            if self.influx is not None:
                self.influx.close()
        return result

    def _drain_once(self, bursts: list[dict[str, Any]]) -> bool:
        """Take what is queued now, without waiting, adding the bursts that ended to ``bursts``;
        whether anything was queued."""
        batch = self.core.poll(0.0, BATCH_ROWS)
        bursts.extend(self._handle(batch)["bursts"])
        return batch["received"] > 0

    def _handle(self, batch: dict[str, Any]) -> dict[str, Any]:
        from burstlab.collect.exports import Snapshot, add_bursts, influx_lines

        now_ns = time.time_ns()
        bursts = [json.loads(b) for b in batch["bursts"]]
        if self.store is not None:
            from burstlab.collect.store import bursts_table, queue_table, reports_table

            self.store.write("reports", reports_table(batch))
            self.store.write("queue", queue_table(batch))
            if bursts:
                self.store.write("bursts", bursts_table(bursts, now_ns))
            self.store.rotate_due()
        switch, port, queue, last, deepest = self.core.gauges()
        snapshot = Snapshot(
            counters=dict(batch["counters"]),
            queues={(int(s), int(p), int(q)): (int(n), int(m))
                    for s, p, q, n, m in zip(switch, port, queue, last, deepest, strict=True)},
            streams={(sw, hw): (n, lost) for sw, hw, n, lost in self.core.losses()},
            bursts=self.snapshot.bursts,
        )
        add_bursts(snapshot, bursts)
        self.snapshot = snapshot
        if self.prometheus is not None:
            self.prometheus.update(snapshot)
        if self.influx is not None:
            # A point overwrites another of the same series and time: a nanosecond apart each.
            self.influx.write(influx_lines(snapshot, bursts, now_ns, [now_ns + i for i in range(len(bursts))]))
        return {"counters": snapshot.counters, "bursts": bursts}


def _host_port(text: str, option: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65_535:
        raise TelemetryInputError(f"{option} = {text!r}: expected ADDR:PORT, e.g. 127.0.0.1:9590")
    return host.strip("[]") or "127.0.0.1", int(port)


def replay(capture: str | os.PathLike[str], to: str, *, speed: str = "1x", rate: float | None = None,
           ports: Sequence[int] | None = None, repeat: int = 1,
           on_progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Send the report datagrams of ``capture`` to ``to`` (``ADDR:PORT``): at the capture's pace
    times ``speed`` ("1x", "10x", "0.5x"), as fast as possible (``speed="max"``) or at ``rate``
    datagrams per second; ``repeat`` times over. Runs of equal-size datagrams go as one
    ``UDP_SEGMENT`` message each where the kernel can segment them. Returns ``{"frames", "sent",
    "bytes", "messages", "refused", "seconds"}``. Ctrl-C stops it (``KeyboardInterrupt``)."""
    from burstlab import _core

    path = Path(capture)
    if not path.is_file():
        raise TelemetryInputError(f"{path}: no such capture file")
    if repeat < 1:
        raise TelemetryInputError(f"--repeat = {repeat}: expected at least 1")
    if rate is not None:
        if not rate > 0:
            raise TelemetryInputError(f"--rate = {rate}: expected datagrams per second above 0")
        pace, value = "rate", float(rate)
    elif speed == "max":
        pace, value = "max", 0.0
    else:
        factor = speed[:-1] if speed.endswith("x") else ""
        try:
            value = float(factor)
        except ValueError:
            value = 0.0
        if not value > 0:
            raise TelemetryInputError(f"--speed = {speed!r}: expected a factor such as 1x, 10x, 0.5x, or max")
        pace = "capture"
    return _core.replay(str(path), to, pace, value, list(ports) if ports else None, repeat, on_progress)
