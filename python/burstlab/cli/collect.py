"""``burstlab collect``: receive INT reports over UDP and find the microbursts as they happen."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from burstlab.cli import status


def command(
    listen: Annotated[list[str] | None, typer.Option("--listen", metavar="ADDR:PORT", help="Where to receive reports (repeatable). Default 127.0.0.1:5900; another address only when given.")] = None,
    out: Annotated[Path | None, typer.Option("--out", metavar="DIR", help="Store reports, queue samples and bursts here as Parquet (goes on where a previous run stopped).")] = None,
    rise: Annotated[str | None, typer.Option("--rise", metavar="SIZE|PCT", help='Burst starts when a queue reaches this: "200KB", or "50%" of --buffer. Default: 25% of --buffer; without it, as detect: half each queue\'s deepest occupancy, so bursts come at the end.')] = None,
    fall: Annotated[str | None, typer.Option("--fall", metavar="SIZE|PCT", help="Burst ends below this. Default: half the rise.")] = None,
    buffer: Annotated[str | None, typer.Option("--buffer", metavar="SIZE", help='Queue buffer size, e.g. "64MiB".')] = None,
    min_duration: Annotated[str | None, typer.Option("--min-duration", metavar="TIME", help='Shorter bursts are discarded. Default "0s".')] = None,
    merge_gap: Annotated[str | None, typer.Option("--merge-gap", metavar="TIME", help='A re-rise this soon after the fall continues the burst. Default "1ms".')] = None,
    top: Annotated[int, typer.Option("--top", metavar="K", help="Culprits and victims kept per burst.")] = 10,
    profile: Annotated[Path | None, typer.Option("--profile", metavar="FILE", help="Device profiles (TOML), as for `burstlab decode`.")] = None,
    metrics: Annotated[str | None, typer.Option("--metrics", metavar="ADDR:PORT", help="Serve Prometheus metrics here, e.g. 127.0.0.1:9590.")] = None,
    influx: Annotated[str | None, typer.Option("--influx", metavar="URL", help="Write to InfluxDB 1.x, e.g. http://127.0.0.1:8086/write?db=int.")] = None,
    influx_db: Annotated[str | None, typer.Option("--influx-db", metavar="NAME", help="InfluxDB database, when --influx has no ?db=.")] = None,
    rotate: Annotated[float, typer.Option("--rotate", metavar="SECONDS", help="Close each Parquet file after this long.")] = 10.0,
    rotate_size: Annotated[str, typer.Option("--rotate-size", metavar="SIZE", help="... or once it is this large.")] = "64MB",
    batch: Annotated[float, typer.Option("--batch", metavar="SECONDS", help="Longest received reports wait before they are stored and exported; also what a SIGKILL loses beyond the open files.")] = 0.25,
    sample_reports: Annotated[int, typer.Option("--sample-reports", metavar="N", help="Store one report in N in the reports table (0: none). Queue samples and detection see them all.")] = 1,
    max_streams: Annotated[int, typer.Option("--max-streams", metavar="N", help="Most (switch, port, queue) triples tracked; reports past it are counted as overflow.")] = 65_536,
    max_flows: Annotated[int, typer.Option("--max-flows", metavar="N", help="Most (queue, flow) pairs remembered for culprits and victims; past it a sample keeps its occupancy but not its flow.")] = 1_000_000,
    duration: Annotated[float | None, typer.Option("--duration", metavar="SECONDS", help="Stop after this long (default: run until Ctrl-C or SIGTERM).")] = None,
    json_: Annotated[bool, typer.Option("--json", help="Print one JSON object per event on stdout: listening, each burst as it ends, then a summary.")] = False,
) -> None:
    """Collect INT reports over UDP: store them, detect microbursts with their culprits and victims, export metrics.

    Reports arrive in batches (recvmmsg), are decoded (every report version and device profile
    `burstlab decode` knows) and go through the same detector, attribution and report-loss
    accounting as `burstlab detect`, per (switch, port, queue), as they come. A burst is reported
    when its queue's next sample comes a merge gap after its fall; the bursts still open when
    the collector stops end there, as at the end of a capture. Without --rise or --buffer the
    rise is detect's default, half each queue's deepest occupancy, which is known only at the
    end: those bursts come when the collector stops, or, once 1,048,576 samples wait, at
    thresholds fixed from the deepest occupancy so far (counted as `settled`). Give --buffer or
    --rise to see bursts as they end.

    **Storage** (--out DIR): DIR/reports, DIR/queue and DIR/bursts hold Parquet files, each closed
    after --rotate seconds or --rotate-size and renamed into place, so DuckDB or pandas can read
    them while collection runs. Killed (SIGKILL), the collector loses the files still open: at
    most --rotate seconds of rows per table plus two --batch intervals (0.25 s each), and what
    waits in the socket; never a closed file. Started again on the same DIR it goes on.

    **Exports**: --metrics serves Prometheus (queue occupancy per switch/port/queue, reports,
    malformed, lost reports per switch, bursts, burst durations); --influx writes InfluxDB 1.x
    line protocol, with AmLight's collector's `queue_occ` measurement among others
    (docs/telemetry.md has the mapping and a Grafana recipe).

    **Memory** stays bounded: at most --max-streams queues (and switches) are tracked; reports
    that would add more are counted as overflow, stored, and kept out of detection. At most
    --max-flows (queue, flow) pairs are remembered for attribution; a sample past it keeps its
    occupancy, not its flow (counted as flow_overflow).

    On a terminal a status line shows reports/s, bursts and loss; --json prints events instead.

        burstlab collect --out live --rise 200KB
        burstlab collect --listen 0.0.0.0:5900 --metrics 127.0.0.1:9590 --influx http://127.0.0.1:8086/write?db=int
        burstlab replay int-reports.pcap --to 127.0.0.1:5900 --speed max

    Exit status: 0 stopped (--duration, SIGTERM), 130 Ctrl-C (the files are closed first in
    both cases), 2 bad options or an address in use, 1 internal error.
    """
    from rich.console import Console

    err = Console(stderr=True, highlight=False)
    raise typer.Exit(_collect(listen or ["127.0.0.1:5900"], out, rise, fall, buffer, min_duration, merge_gap, top,
                              profile, metrics, influx, influx_db, rotate, rotate_size, sample_reports,
                              max_streams, max_flows, batch, duration, json_, err))


def _collect(listen, out, rise, fall, buffer, min_duration, merge_gap, top, profile, metrics, influx,
             influx_db, rotate, rotate_size, sample_reports, max_streams, max_flows, batch, duration,
             as_json, err) -> int:
    import signal

    from burstlab.collect import Collection

    with status.guarded("collect", err):
        rotate_bytes = _size(rotate_size)
        collection = Collection(listen, out=out, rise=rise, fall=fall, buffer=buffer,
                                min_duration=min_duration, merge_gap=merge_gap, top=top, profile=profile,
                                max_streams=max_streams, max_flows=max_flows, batch_s=batch, sample_reports=sample_reports, rotate_s=rotate,
                                rotate_bytes=rotate_bytes, metrics=metrics, influx=influx, influx_db=influx_db)
    if collection.store is not None and collection.store.removed:
        err.print(f"burstlab collect: removed {len(collection.store.removed)} unfinished files a killed "
                  "collector left open", markup=False)
    # SIGTERM (systemd, docker stop) and Ctrl-C stop it after the batch under way, so no batch
    # is cut in two: files closed, status 0 (SIGTERM) or 130 (Ctrl-C).
    # A second Ctrl-C does not wait: KeyboardInterrupt at once.
    signals: list[int] = []

    def on_signal(signum: int, frame: object) -> None:
        if signum == signal.SIGINT and signal.SIGINT in signals:
            raise KeyboardInterrupt
        signals.append(signum)

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    line = _StatusLine(err) if err.is_terminal and not as_json else None
    if as_json:
        _emit_json({"event": "listening", "addresses": collection.addresses, "metrics": metrics})
    else:
        err.print(f"burstlab collect: listening on {', '.join(collection.addresses)}"
                  + (f", metrics on {metrics}" if metrics else ""), markup=False)
        if rise is None and buffer is None:
            err.print("burstlab collect: no --buffer or --rise: bursts start at half each queue's deepest "
                      "occupancy, as in detect, which is known only at the end; give the queues' --buffer "
                      "(rise 25% of it) or a --rise to see bursts as they end", markup=False)

    def on_batch(result: dict[str, Any]) -> None:
        if as_json:
            for b in result["bursts"]:
                _emit_json({"event": "burst", **b})
        if line:
            line.update(result["counters"])

    stopped, code = "stopped", status.SUCCESS
    with status.guarded("collect", err):
        try:
            collection.run(duration, on_batch, stop=lambda: bool(signals))
        finally:
            last = collection.close()
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            on_batch(last)
            if line:
                line.end()
    if signals and signals[0] == signal.SIGINT:
        stopped, code = "interrupted", status.INTERRUPTED
    elif signals:
        stopped = "terminated (SIGTERM)"
    counters = last["counters"]
    if as_json:
        _emit_json({"event": "summary", "stopped": stopped, **counters})
    else:
        closed = "; files closed" if collection.store is not None else ""
        err.print(f"burstlab collect: {stopped}{closed}; {_summary(counters)}", markup=False, soft_wrap=True)
    if collection.influx is not None and collection.influx.failed:
        err.print(f"burstlab collect: {collection.influx.failed} InfluxDB writes failed; last: "
                  f"{collection.influx.last_error}", markup=False, soft_wrap=True)
    return code


def _size(text: str) -> int:
    from burstlab.errors import TelemetryInputError

    units = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "KIB": 2**10, "MIB": 2**20, "GIB": 2**30}
    t = text.strip().upper()
    number = t.rstrip("KMGIB")
    try:
        value = float(number) * units[t[len(number):]]
    except (ValueError, KeyError):
        raise TelemetryInputError(f'--rotate-size = {text!r}: expected a size such as "64MB"') from None
    if value < 1:
        raise TelemetryInputError(f"--rotate-size = {text!r}: expected more than 0 bytes")
    return int(value)


def _emit_json(event: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def _summary(c: dict[str, int]) -> str:
    return (f"{c.get('reports', 0)} reports, {c.get('bursts', 0)} bursts, {c.get('reports_lost', 0)} reports lost, "
            f"{c.get('malformed', 0)} malformed, {c.get('overflow', 0)} over the stream cap, "
            f"{c.get('flow_overflow', 0)} over the flow cap, "
            f"{c.get('kernel_drops', 0)} dropped by the kernel")


class _StatusLine:
    """One line rewritten in place on the terminal: reports/s, bursts, loss."""

    def __init__(self, err):
        self.err = err
        self.last = (time.monotonic(), 0)
        self.shown = 0.0

    def update(self, c: dict[str, int]) -> None:
        now = time.monotonic()
        if now - self.shown < 0.5:
            return
        t0, n0 = self.last
        rate = (c.get("reports", 0) - n0) / max(now - t0, 1e-9)
        self.last, self.shown = (now, c.get("reports", 0)), now
        text = (f"{rate:,.0f} reports/s, {c.get('reports', 0):,} reports, {c.get('bursts', 0)} bursts, "
                f"{c.get('reports_lost', 0)} lost, {c.get('malformed', 0)} malformed, "
                f"{c.get('kernel_drops', 0)} kernel drops")
        self.err.file.write("\r\x1b[2K" + text)
        self.err.file.flush()

    def end(self) -> None:
        self.err.file.write("\r\x1b[2K")
        self.err.file.flush()
