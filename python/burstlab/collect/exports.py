"""What a live collection exports: a Prometheus endpoint and InfluxDB 1.x line protocol.

Both read one :class:`Snapshot` the collection loop refreshes once per batch (never per report).

**Prometheus** (``--metrics ADDR:PORT``, loopback unless told): ``/metrics`` with

=====================================================  =======================================
``burstlab_queue_occupancy_bytes{switch_id,port,queue_id}``       last reported occupancy
``burstlab_queue_occupancy_max_bytes{switch_id,port,queue_id}``   deepest since the previous batch
``burstlab_reports_total``, ``burstlab_datagrams_total``           received
``burstlab_malformed_total``                                       datagrams that did not decode
``burstlab_overflow_total``                                        reports past the stream cap
``burstlab_flow_overflow_total``                                   reports past the flow cap
``burstlab_kernel_drops_total``                                    dropped by the kernel (socket full)
``burstlab_reports_received_total{switch_id,hw_id}``               per report stream
``burstlab_reports_lost_total``                                     sequence-number gaps, all streams
``burstlab_reports_lost_per_stream_total{switch_id,hw_id}``        the same per report stream
``burstlab_bursts_total{switch_id,port,queue_id}``                 bursts ended
``burstlab_burst_duration_seconds{switch_id,port,queue_id}``       histogram of their durations
=====================================================  =======================================

**InfluxDB 1.x** (``--influx http://HOST:8086/write?db=NAME`` or ``http://HOST:8086`` with
``--influx-db``): one POST per batch to ``/write?db=…&precision=ns``, from a thread of its own.
Points:

* ``queue_occ\\,sw\\=S\\,port\\=P\\,queue\\=Q value=<bytes>``: the measurement name AmLight's INT
  collector writes (``libs/xdp_code/InDBCollector.pyx``, github.com/amlight/int_collector: the
  tags are escaped into the name), so its Grafana dashboards find our queues; its ``value`` is
  the raw wire count (80-byte cells on NoviFlow), ours is bytes;
* ``burstlab_queue,switch_id=S,port=P,queue_id=Q occupancy_bytes=…i,max_bytes=…i``;
* ``burstlab_burst,switch_id=S,port=P,queue_id=Q start_s=…,duration_s=…,peak_bytes=…i,drops=…i,
  reports_lost=…i,top_culprit="…"`` when the collector saw it end (``start_s`` on the switch's
  clock);
* ``burstlab_collector reports=…i,malformed=…i,overflow=…i,flow_overflow=…i,kernel_drops=…i,
  reports_lost=…i``;
* ``burstlab_report_loss,switch_id=S,hw_id=H received=…i,lost=…i``.
"""

from __future__ import annotations

import http.client
import threading
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

#: Burst-duration histogram buckets, seconds: 10 µs to 1 s, the span of microbursts
#: (int-telemetry.md §14) and the bursts that outlast them.
DURATION_BUCKETS = (1e-5, 1e-4, 5e-4, 1e-3, 5e-3, 1e-2, 5e-2, 1e-1, 5e-1, 1.0)

#: Batches of InfluxDB points that may wait for the writer thread (4 s at the default 0.25 s).
INFLUX_BACKLOG = 16


@dataclass
class Snapshot:
    """Everything the exporters show, replaced as a whole once per batch."""

    counters: dict[str, int] = field(default_factory=dict)
    #: (switch_id, port, queue_id) -> (last_bytes, max_bytes)
    queues: dict[tuple[int, int, int], tuple[int, int]] = field(default_factory=dict)
    #: (switch_id, hw_id) -> (received, lost)
    streams: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict)
    #: (switch_id, port, queue_id) -> (count, sum of durations, per-bucket counts)
    bursts: dict[tuple[int, int, int], tuple[int, float, list[int]]] = field(default_factory=dict)


def add_bursts(snapshot: Snapshot, bursts: list[dict[str, Any]]) -> None:
    for b in bursts:
        key = (b["switch_id"], b["port"], b["queue_id"])
        count, total, buckets = snapshot.bursts.get(key, (0, 0.0, [0] * len(DURATION_BUCKETS)))
        buckets = [n + (b["duration_s"] <= le) for n, le in zip(buckets, DURATION_BUCKETS, strict=True)]
        snapshot.bursts[key] = (count + 1, total + b["duration_s"], buckets)


class PrometheusEndpoint:
    """``/metrics`` served by prometheus-client from a thread, reading the latest snapshot."""

    def __init__(self, host: str, port: int):
        from prometheus_client import start_http_server
        from prometheus_client.registry import CollectorRegistry

        self.snapshot = Snapshot()
        self._lock = threading.Lock()
        registry = CollectorRegistry(auto_describe=False)
        registry.register(self)  # type: ignore[arg-type]
        self.server, self.thread = start_http_server(port, addr=host, registry=registry)
        self.port = self.server.server_address[1]

    def update(self, snapshot: Snapshot) -> None:
        with self._lock:
            self.snapshot = snapshot

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def collect(self):  # prometheus-client's Collector protocol
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily

        with self._lock:
            s = self.snapshot
        q_labels = ["switch_id", "port", "queue_id"]
        last = GaugeMetricFamily("burstlab_queue_occupancy_bytes", "Last reported queue occupancy.", labels=q_labels)
        deepest = GaugeMetricFamily("burstlab_queue_occupancy_max_bytes",
                                    "Deepest reported queue occupancy since the previous batch.", labels=q_labels)
        for key, (now, top) in s.queues.items():
            labels = [str(k) for k in key]
            last.add_metric(labels, now)
            deepest.add_metric(labels, top)
        yield last
        yield deepest
        for name, what in (("reports", "Telemetry reports decoded."), ("datagrams", "UDP datagrams received."),
                           ("malformed", "Datagrams that did not decode."),
                           ("overflow", "Reports kept out of detection by the stream cap."),
                           ("flow_overflow", "Reports whose flow was left out of attribution by the flow cap."),
                           ("kernel_drops", "Buffers the kernel dropped, socket buffer full: datagrams, or coalesced runs of up to 64 (UDP GRO)."),
                           ("reports_lost", "Reports missing from their stream's sequence numbers.")):
            yield CounterMetricFamily(f"burstlab_{name}", what, value=s.counters.get(name, 0))
        received = CounterMetricFamily("burstlab_reports_received", "Reports received per report stream.",
                                       labels=["switch_id", "hw_id"])
        lost = CounterMetricFamily("burstlab_reports_lost_per_stream",
                                   "Reports missing per report stream (sequence gaps).", labels=["switch_id", "hw_id"])
        for (sw, hw), (n_received, n_lost) in s.streams.items():
            received.add_metric([str(sw), str(hw)], n_received)
            lost.add_metric([str(sw), str(hw)], n_lost)
        yield received
        yield lost
        bursts = CounterMetricFamily("burstlab_bursts", "Microbursts ended.", labels=q_labels)
        durations = HistogramMetricFamily("burstlab_burst_duration_seconds", "Durations of the ended bursts.",
                                          labels=q_labels)
        for key, (count, total, buckets) in s.bursts.items():
            labels = [str(k) for k in key]
            bursts.add_metric(labels, count)
            pairs = [(repr(le), n) for le, n in zip(DURATION_BUCKETS, buckets, strict=True)] + [("+Inf", count)]
            durations.add_metric(labels, pairs, sum_value=total)
        yield bursts
        yield durations


def _tag(value: Any) -> str:
    return str(value).replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=").replace(" ", "\\ ")


def _text(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def influx_lines(snapshot: Snapshot, bursts: list[dict[str, Any]], now_ns: int,
                 burst_end_ns: list[int]) -> list[str]:
    """The line-protocol points of one batch (see the module docstring)."""
    lines = []
    for (sw, port, q), (now, top) in snapshot.queues.items():
        lines.append(f"queue_occ\\,sw\\={sw}\\,port\\={port}\\,queue\\={q} value={now} {now_ns}")
        lines.append(f"burstlab_queue,switch_id={sw},port={port},queue_id={q} "
                     f"occupancy_bytes={now}i,max_bytes={top}i {now_ns}")
    for b, t in zip(bursts, burst_end_ns, strict=True):
        top = b["culprits"][0]["flow"] if b["culprits"] else ""
        lines.append(f"burstlab_burst,switch_id={b['switch_id']},port={b['port']},queue_id={b['queue_id']} "
                     f"start_s={b['start_s']!r},duration_s={b['duration_s']!r},peak_bytes={b['peak_bytes']}i,"
                     f"drops={b['drops']}i,"
                     f"reports_lost={b['reports_lost']}i,top_culprit={_text(top)} {t}")
    c = snapshot.counters
    lines.append("burstlab_collector " + ",".join(
        f"{k}={c.get(k, 0)}i"
        for k in ("reports", "malformed", "overflow", "flow_overflow", "kernel_drops", "reports_lost")
    ) + f" {now_ns}")
    for (sw, hw), (n_received, n_lost) in snapshot.streams.items():
        lines.append(f"burstlab_report_loss,switch_id={_tag(sw)},hw_id={_tag(hw)} "
                     f"received={n_received}i,lost={n_lost}i {now_ns}")
    return lines


class InfluxWriter:
    """POSTs line protocol to an InfluxDB 1.x ``/write`` endpoint (stdlib ``http.client``) from a
    thread of its own, so a slow or unreachable server never holds up the collection. At most
    :data:`INFLUX_BACKLOG` batches wait; one more is dropped and counted, as is a failed write:
    the Parquet files hold the data."""

    def __init__(self, url: str, database: str | None):
        import queue

        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"--influx = {url!r}: expected http://HOST:PORT[/write?db=NAME]")
        query = dict(urllib.parse.parse_qsl(parts.query))
        db = database or query.get("db")
        if not db:
            raise ValueError(f"--influx = {url!r}: no database; add ?db=NAME or give --influx-db NAME")
        self.https = parts.scheme == "https"
        self.host, self.port = parts.hostname, parts.port or 8086
        self.path = "/write?" + urllib.parse.urlencode({"db": db, "precision": "ns"})
        self.failed = 0
        self.last_error: str | None = None
        self._queue: queue.Queue[list[str] | None] = queue.Queue(maxsize=INFLUX_BACKLOG)
        self._thread = threading.Thread(target=self._run, name="influx-writer", daemon=True)
        self._thread.start()

    def write(self, lines: list[str]) -> None:
        """Queue one batch of points; dropped (and counted as failed) if the backlog is full."""
        import queue

        if not lines:
            return
        try:
            self._queue.put_nowait(lines)
        except queue.Full:
            self.failed += 1
            self.last_error = f"InfluxDB at {self.host}:{self.port} fell {INFLUX_BACKLOG} batches behind"

    def close(self, timeout: float = 10.0) -> None:
        """Send what is queued (for at most ``timeout`` seconds), then stop the thread."""
        try:
            self._queue.put(None, timeout=timeout)
        except Exception:  # noqa: BLE001 - a full queue at exit: the thread is a daemon
            return
        self._thread.join(timeout)

    def _run(self) -> None:
        while (lines := self._queue.get()) is not None:
            self._post(lines)

    def _post(self, lines: list[str]) -> None:
        cls = http.client.HTTPSConnection if self.https else http.client.HTTPConnection
        conn = cls(self.host, self.port, timeout=5)
        try:
            conn.request("POST", self.path, body="\n".join(lines).encode(),
                         headers={"Content-Type": "text/plain; charset=utf-8"})
            response = conn.getresponse()
            body = response.read()
            if response.status != 204:
                self.failed += 1
                self.last_error = f"InfluxDB answered {response.status}: {body[:200].decode(errors='replace')}"
        except OSError as e:
            self.failed += 1
            self.last_error = f"InfluxDB at {self.host}:{self.port}: {e}"
        finally:
            conn.close()
