"""`ss -tin` snapshots taken on the sender during a run: Linux's own account of what limited it.

Since 4.10 `TCP_INFO` carries the sender's chronograph (`tcpi_busy_time`, `tcpi_rwnd_limited`,
`tcpi_sndbuf_limited`; `tcp_chrono_start()` in net/ipv4/tcp_output.c), which `ss -i` prints as
`busy:648ms rwnd_limited:532ms(82.1%) sndbuf_limited:12ms(4.1%)`: of the time the socket had
data in flight, how long the receiver's window and how long the send buffer held it. The counts
run from the connection's start, so the last snapshot of a connection covers the run.

A file may hold any number of snapshots (`while sleep 1; do ss -tin dst HOST; done > ss.txt`);
a connection is keyed by its address pair, and the one that sent most is the run's data
connection (iperf3 also opens a control connection).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from burstlab.advise.iperf3 import Iperf3InputError, read_text

_CONN = re.compile(r"^\S+\s+\d+\s+\d+\s+(\S+)\s+(\S+)")
_MS = re.compile(r"\b(busy|rwnd_limited|sndbuf_limited):(\d+)ms")
_FIELD = re.compile(r"\b(bytes_acked|bytes_retrans|cwnd|snd_wnd|mss):(\d+)")
_RTT = re.compile(r"\brtt:([\d.]+)/")


@dataclass(frozen=True)
class Chrono:
    """One connection's last snapshot."""

    local: str
    peer: str
    busy_ms: int
    rwnd_limited_ms: int
    sndbuf_limited_ms: int
    bytes_acked: int
    bytes_retrans: int
    cwnd_segments: int | None
    snd_wnd_bytes: int | None
    rtt_ms: float | None
    app_limited: bool

    @property
    def rwnd_share(self) -> float:
        return self.rwnd_limited_ms / self.busy_ms if self.busy_ms else 0.0

    @property
    def sndbuf_share(self) -> float:
        return self.sndbuf_limited_ms / self.busy_ms if self.busy_ms else 0.0


def load(path: str | Path) -> Chrono:
    return parse(read_text(path, f"--ss {path}"), f"--ss {path}")


def parse(text: str, where: str = "--ss") -> Chrono:
    """The data connection's last snapshot in `ss -tin` output."""
    last: dict[tuple[str, str], Chrono] = {}
    conn: tuple[str, str] | None = None
    for line in text.splitlines():
        head = _CONN.match(line)
        if head and not line.startswith((" ", "\t")):
            conn = (head.group(1), head.group(2))
            continue
        if conn is None or not line.startswith((" ", "\t")):
            continue
        ms = {k: int(v) for k, v in _MS.findall(line)}
        fields = {k: int(v) for k, v in _FIELD.findall(line)}
        rtt = _RTT.search(line)
        last[conn] = Chrono(conn[0], conn[1], ms.get("busy", 0), ms.get("rwnd_limited", 0),
                            ms.get("sndbuf_limited", 0), fields.get("bytes_acked", 0),
                            fields.get("bytes_retrans", 0), fields.get("cwnd"), fields.get("snd_wnd"),
                            float(rtt.group(1)) if rtt else None, " app_limited" in f" {line} ")
    if not last:
        raise Iperf3InputError(f"{where}: no connection found: expected the output of `ss -tin` "
                               "(a line per socket, its TCP_INFO on the next, indented)")
    return max(last.values(), key=lambda c: c.bytes_acked)
