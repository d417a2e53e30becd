"""iperf3's JSON (`iperf3 -c HOST -J`, with `--get-server-output` when present) read into the
sender's view of a TCP test, across the 3.x releases distributions ship.

What changed between releases and is handled here:

* `sender` in each interval's stream appears in 3.1; before, a client's intervals are its own
  side's (the sender's unless `test_start.reverse`).
* `snd_cwnd`, `rtt`, `rttvar`, `pmtu` in the sender's streams (3.1+, Linux `TCP_INFO`);
  `snd_wnd` (the peer's advertised window) from 3.10.
* `sndbuf_actual` / `rcvbuf_actual` in `start` from 3.6; `target_bitrate` and `fq_rate` later.
* With `-R` the client receives: the sender's streams (with cwnd and rtt) are then in
  `server_output_json`, present only with `--get-server-output`.
* `--json-stream` (esnet/iperf pull request #1098; not in Debian's 3.12) writes one line per event
  (`{"event": "start" | "interval" | "end" | "error", "data": ...}`): read as the document -J
  would have written.
* Some 3.16-3.17 builds write the whole -J document twice (esnet/iperf issue #1716): the first
  copy is read and a warning says so.

A file that is not iperf3's JSON, an aborted run (iperf3 writes its reason in `error`), a UDP
test (no congestion window to explain) and an empty file each raise one
:class:`Iperf3InputError` naming the field and what was expected.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from burstlab.errors import BurstlabError


class Iperf3InputError(BurstlabError, ValueError):
    """The input is not a usable iperf3 TCP result; the message names the field."""


@dataclass(frozen=True)
class Interval:
    """One reporting interval of the sending side (summed over streams where there are several).
    Fields iperf3 did not report are None."""

    start_s: float
    end_s: float
    bytes: int
    bits_per_second: float
    retransmits: int | None
    #: Sum over streams of `snd_cwnd` (bytes).
    cwnd_bytes: int | None
    #: Sum over streams of `snd_wnd`, the receiver's advertised window (bytes); iperf3 >= 3.10.
    snd_wnd_bytes: int | None
    #: Mean over streams of the smoothed RTT at the interval's end (µs).
    rtt_us: float | None
    omitted: bool


@dataclass(frozen=True)
class Iperf3Run:
    """The sender's side of an iperf3 TCP test."""

    path: str
    version: str
    num_streams: int
    reverse: bool
    intervals: list[Interval]
    #: Whole-test figures: bytes the sender sent and the receiver received, and the test's length.
    sent_bytes: int
    received_bytes: int
    seconds: float
    retransmits: int | None
    #: Per the sender's end-of-test record (µs); None before 3.1 or off Linux.
    min_rtt_us: float | None
    mean_rtt_us: float | None
    max_cwnd_bytes: int | None
    max_snd_wnd_bytes: int | None
    pmtu: int | None
    mss: int | None
    cca: str | None
    #: SO_SNDBUF of the sender's and SO_RCVBUF of the receiver's data socket as created (the
    #: `tcp_wmem[1]` / `tcp_rmem[1]` defaults unless `-w` set them); None where not reported.
    sndbuf_bytes: int | None
    rcvbuf_bytes: int | None
    #: `-w` as given (0: not given).
    sock_bufsize: int
    #: `--fq-rate` / `-b` as given, bits/s (0 or None: not given).
    fq_rate_bps: float | None
    target_bitrate_bps: float | None
    #: CPU use in per cent of one host's CPUs: the sender's and the receiver's.
    sender_cpu_percent: float | None
    receiver_cpu_percent: float | None
    #: The receiving host's kernel release from `system_info` ("6.18.44-..."), where Linux.
    receiver_kernel: str | None = None
    #: A run of `-t` seconds (test_start's `bytes` and `blocks` 0), not of `-n` bytes or `-k` blocks.
    time_limited: bool = False
    #: How long the sender sent (`sum_sent.seconds`); the receiver's `seconds` run on until the
    #: client's end-of-test message reaches the server, which can be later (None: not given).
    sent_seconds: float | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def throughput_bps(self) -> float:
        """What the receiver got, over the test's length (iperf3's `sum_received`)."""
        return self.received_bytes * 8 / self.seconds if self.seconds > 0 else 0.0


def load(path: str | Path) -> Iperf3Run:
    """Read iperf3 `-J` output from `path` (see :func:`parse`)."""
    return parse(read_text(path, str(path)), str(path))


def read_text(path: str | Path, label: str) -> str:
    """The text of an input file; one line naming it (`label`) when it cannot be read."""
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise Iperf3InputError(f"{label}: cannot read: {exc.strerror or exc}") from None


def parse(text: str, where: str = "<input>") -> Iperf3Run:
    """Parse the text of one iperf3 `-J` result; raise :class:`Iperf3InputError` with one line
    naming the field when it is not a completed TCP test."""
    if not text.strip():
        raise Iperf3InputError(f"{where}: empty file: expected iperf3's JSON output (iperf3 -c HOST -J)")
    doc, warnings = _document(text, where)
    if not isinstance(doc, dict) or "start" not in doc or "intervals" not in doc:
        found = sorted(doc)[:6] if isinstance(doc, dict) else type(doc).__name__
        raise Iperf3InputError(f"{where}: not iperf3 JSON: expected top-level 'start' and 'intervals', found {found}")
    if doc.get("error"):
        raise Iperf3InputError(f"{where}: the iperf3 run was aborted: error = {str(doc['error']).strip()!r}")
    start = _obj(doc, "start", where)
    test = _obj(start, "test_start", where, "start.")
    protocol = str(test.get("protocol", "TCP"))
    if protocol.upper() != "TCP":
        raise Iperf3InputError(f"{where}: start.test_start.protocol = {protocol!r}: expected 'TCP' "
                               "(a UDP test has no congestion window or receive window to explain)")
    reverse = bool(test.get("reverse", 0))
    client_is_sender = not reverse
    server = doc.get("server_output_json") if isinstance(doc.get("server_output_json"), dict) else None
    sender_doc = doc if client_is_sender else server
    if sender_doc is None:
        warnings.append("a reverse (-R) test without --get-server-output: the client received, so "
                        "cwnd, RTT and retransmits (the sender's) are missing")
        sender_doc = doc
    raw = sender_doc.get("intervals")
    if not isinstance(raw, list) or not raw:
        raise Iperf3InputError(f"{where}: intervals = {raw!r}: expected at least one interval (a run that "
                               "ended before its first report)")
    intervals = [read_interval(iv, i, where, want_sender=sender_doc is not doc or client_is_sender)
                 for i, iv in enumerate(raw)]
    end = _obj(doc, "end", where)
    sent = end.get("sum_sent") or {}
    received = end.get("sum_received") or {}
    if not sent and not received:
        raise Iperf3InputError(f"{where}: end.sum_sent and end.sum_received missing: expected a completed TCP test")
    sender_end = _sender_end(end, server, client_is_sender)
    seconds = float(received.get("seconds") or sent.get("seconds") or intervals[-1].end_s)
    return Iperf3Run(
        path=where,
        version=str(start.get("version", "iperf 3.0 or earlier")),
        num_streams=int(test.get("num_streams", 1)),
        reverse=reverse,
        intervals=intervals,
        sent_bytes=int(sent.get("bytes", received.get("bytes", 0))),
        received_bytes=int(received.get("bytes", sent.get("bytes", 0))),
        seconds=seconds,
        retransmits=_int(sent.get("retransmits")) if client_is_sender else
        _int((server or {}).get("end", {}).get("sum_sent", {}).get("retransmits")),
        min_rtt_us=_mean_of(sender_end, "min_rtt"),
        mean_rtt_us=_mean_of(sender_end, "mean_rtt"),
        max_cwnd_bytes=_sum_of(sender_end, "max_snd_cwnd"),
        max_snd_wnd_bytes=_sum_of(sender_end, "max_snd_wnd"),
        pmtu=_first_stream_field(raw, "pmtu"),
        mss=_int(start.get("tcp_mss_default", start.get("tcp_mss"))),
        cca=end.get("sender_tcp_congestion"),
        sndbuf_bytes=_int(start.get("sndbuf_actual")) if client_is_sender else _server_start(server, "sndbuf_actual"),
        rcvbuf_bytes=_server_start(server, "rcvbuf_actual") if client_is_sender else _int(start.get("rcvbuf_actual")),
        sock_bufsize=int(start.get("sock_bufsize", 0) or 0),
        fq_rate_bps=_float(test.get("fqrate", start.get("fq_rate"))),
        target_bitrate_bps=_float(test.get("target_bitrate", start.get("target_bitrate"))),
        sender_cpu_percent=_cpu(end, "host_total" if client_is_sender else "remote_total"),
        receiver_cpu_percent=_cpu(end, "remote_total" if client_is_sender else "host_total"),
        receiver_kernel=_kernel(server if client_is_sender and server else doc),
        time_limited=not _int(test.get("bytes")) and not _int(test.get("blocks")),
        sent_seconds=_float(sent.get("seconds")) or None,
        warnings=warnings,
    )


def _document(text: str, where: str) -> tuple[Any, list[str]]:
    """The one -J document in `text`: itself, the first of repeated copies, or the events of
    `--json-stream` put together; with the warnings it deserves."""
    decoder = json.JSONDecoder()
    values, at = [], 0
    while True:
        try:
            value, at = decoder.raw_decode(text, at)
        except json.JSONDecodeError as exc:
            after = f" after {len(values)} JSON value(s)" if values else ""
            raise Iperf3InputError(f"{where}: not JSON{after} (line {exc.lineno}, column {exc.colno}: {exc.msg}): "
                                   "expected iperf3's JSON output (iperf3 -c HOST -J)") from None
        values.append(value)
        while at < len(text) and text[at].isspace():
            at += 1
        if at == len(text):
            break
    if all(isinstance(v, dict) and "event" in v and "data" in v for v in values):
        return _from_events(values), []
    if len(values) == 1:
        return values[0], []
    copies = "identical copies" if all(v == values[0] for v in values) else "documents"
    return values[0], [f"the file holds {len(values)} {copies} (some iperf3 3.16-3.17 builds write -J twice, "
                       "esnet/iperf#1716): the first is read"]


def _from_events(events: list[dict]) -> dict:
    """The -J document of `--json-stream`'s events (start, interval..., end, or error)."""
    doc: dict[str, Any] = {"intervals": []}
    for e in events:
        kind, data = e.get("event"), e.get("data")
        if kind == "interval":
            doc["intervals"].append(data)
        elif kind in ("start", "end", "error", "server_output_json"):
            doc[kind] = data
    return doc


def _kernel(doc: dict) -> str | None:
    """The release in `start.system_info` (`uname -a`: "Linux HOST RELEASE ..."), if Linux."""
    start = doc.get("start")
    info = start.get("system_info") if isinstance(start, dict) else None
    parts = info.split() if isinstance(info, str) else []
    return parts[2] if len(parts) > 2 and parts[0] == "Linux" else None


def _obj(parent: dict, key: str, where: str, prefix: str = "") -> dict:
    value = parent.get(key)
    if not isinstance(value, dict):
        raise Iperf3InputError(f"{where}: {prefix}{key} = {_short(value)}: expected an object, as iperf3 -J writes")
    return value


def _short(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _float(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value else None


def read_interval(iv: Any, i: int, where: str, *, want_sender: bool) -> Interval:
    """`intervals[i]` of a document: the streams of the sending side (`want_sender`) summed."""
    name = f"intervals[{i}]"
    if not isinstance(iv, dict):
        raise Iperf3InputError(f"{where}: {name} = {_short(iv)}: expected an object with 'streams' and 'sum'")
    streams = iv.get("streams")
    total = iv.get("sum")
    if not isinstance(streams, list) or not isinstance(total, dict):
        raise Iperf3InputError(f"{where}: {name}: expected 'streams' (a list) and 'sum' (an object)")
    for key in ("start", "end", "bytes", "bits_per_second"):
        value = total.get(key)
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
            raise Iperf3InputError(f"{where}: {name}.sum.{key} = {_short(value)}: expected a number")
    # Before 3.1 there is no `sender` key: every stream is this side's.
    mine = [s for s in streams if isinstance(s, dict) and s.get("sender", want_sender) == want_sender] or \
        [s for s in streams if isinstance(s, dict)]
    rtts = [float(s["rtt"]) for s in mine if isinstance(s.get("rtt"), (int, float)) and s["rtt"] > 0]
    return Interval(
        start_s=float(total["start"]),
        end_s=float(total["end"]),
        bytes=int(total["bytes"]),
        bits_per_second=float(total["bits_per_second"]),
        retransmits=_int(total.get("retransmits")),
        cwnd_bytes=_sum_streams(mine, "snd_cwnd"),
        snd_wnd_bytes=_sum_streams(mine, "snd_wnd"),
        rtt_us=sum(rtts) / len(rtts) if rtts else None,
        omitted=bool(total.get("omitted", False)),
    )


def _sum_streams(streams: list[dict], key: str) -> int | None:
    values = [s.get(key) for s in streams]
    if not values or any(not isinstance(v, (int, float)) for v in values):
        return None
    return int(sum(values))


def _sender_end(end: dict, server: dict | None, client_is_sender: bool) -> list[dict]:
    source = end if client_is_sender else (server or {}).get("end", {})
    streams = source.get("streams") if isinstance(source, dict) else None
    return [s["sender"] for s in streams or [] if isinstance(s, dict) and isinstance(s.get("sender"), dict)]


def _mean_of(records: list[dict], key: str) -> float | None:
    values = [float(r[key]) for r in records if isinstance(r.get(key), (int, float)) and r[key] > 0]
    return sum(values) / len(values) if values else None


def _sum_of(records: list[dict], key: str) -> int | None:
    values = [int(r[key]) for r in records if isinstance(r.get(key), (int, float))]
    return sum(values) if values else None


def _first_stream_field(raw: list, key: str) -> int | None:
    for iv in raw:
        for s in iv.get("streams", []) if isinstance(iv, dict) else []:
            if isinstance(s, dict) and isinstance(s.get(key), (int, float)):
                return int(s[key])
    return None


def _server_start(server: dict | None, key: str) -> int | None:
    start = (server or {}).get("start")
    return _int(start.get(key)) if isinstance(start, dict) else None


def _cpu(end: dict, key: str) -> float | None:
    cpu = end.get("cpu_utilization_percent")
    return _float(cpu.get(key)) if isinstance(cpu, dict) else None
