"""Our traffic tool, run inside a namespace: bulk sender/receiver and incast query/serve.

    ip netns exec NS python3 -m burstlab.validate.traffic bulk-recv --port 5001
    ip netns exec NS python3 -m burstlab.validate.traffic bulk-send --host 10.202.0.2 --port 5001 --bytes 50000000

Standard library only and free of package-relative imports, so `real.py` runs it as a plain
script (`python3 .../traffic.py`), which starts in ~50 ms without importing burstlab's extension.
Each invocation prints exactly one JSON object on stdout. Times come from CLOCK_MONOTONIC, which
network namespaces share, so a sender's and a receiver's timestamps are comparable.

Every loop is bounded: sockets carry a timeout, connect retries stop at a deadline.
"""

from __future__ import annotations

import argparse
import json
import selectors
import socket
import statistics
import struct
import sys
import threading
import time
from pathlib import Path

# -- struct tcp_info ---------------------------------------------------------------------------
#: Byte offsets in `struct tcp_info`, include/uapi/linux/tcp.h (stable ABI: fields are only ever
#: appended). Eight __u8 fields (state, ca_state, retransmits, probes, backoff, options, wscale
#: bitfields, app_limited bitfield) fill bytes 0-7; __u32 fields follow from offset 8; the first
#: __u64 (tcpi_pacing_rate) lands at 104, already 8-aligned.
TCP_INFO_FIELDS: dict[str, tuple[int, str]] = {
    "state": (0, "B"),            # TCP_ESTABLISHED == 1
    "ca_state": (1, "B"),         # TCP_CA_Open/Disorder/CWR/Recovery/Loss
    "retransmits": (2, "B"),      # icsk_retransmits: consecutive RTOs now, not a total
    "backoff": (4, "B"),          # icsk_backoff
    "rto_us": (8, "I"),           # icsk_rto, µs
    "snd_mss": (16, "I"),
    "unacked": (24, "I"),         # packets_out
    "lost": (32, "I"),
    "rtt_us": (68, "I"),          # srtt >> 3, µs
    "rttvar_us": (72, "I"),
    "snd_ssthresh": (76, "I"),
    "snd_cwnd": (80, "I"),        # packets
    "total_retrans": (100, "I"),  # tp->total_retrans, segments over the connection's life
    "pacing_rate_Bps": (104, "Q"),  # sk_pacing_rate, bytes/s (tcp_update_pacing_rate(), or the CCA's)
    "bytes_acked": (120, "Q"),
    "bytes_received": (128, "Q"),
    "segs_out": (136, "I"),
    "min_rtt_us": (148, "I"),
    "delivery_rate_Bps": (160, "Q"),
    "busy_time_us": (168, "Q"),       # time with data in flight
    "rwnd_limited_us": (176, "Q"),    # ... of which limited by the receive window
    "sndbuf_limited_us": (184, "Q"),  # ... of which limited by the send buffer
    "bytes_retrans": (208, "Q"),
}
#: `tcpi_min_rtt` before any RTT sample (`~0U`, `minmax` reset in `tcp_init_sock()`).
NO_RTT_US = 0xFFFFFFFF
#: Bytes we ask for; older kernels return less and the missing fields are reported as None.
TCP_INFO_LEN = 232
#: Linux socket option numbers (include/uapi/linux/tcp.h); Python's socket module may lack some.
TCP_INFO = getattr(socket, "TCP_INFO", 11)
TCP_CONGESTION = getattr(socket, "TCP_CONGESTION", 13)
#: getsockopt gives `tp->window_clamp`.
TCP_WINDOW_CLAMP = getattr(socket, "TCP_WINDOW_CLAMP", 10)


def parse_tcp_info(raw: bytes) -> dict[str, int | None]:
    """Decode the fields of TCP_INFO_FIELDS from the bytes getsockopt returned."""
    out: dict[str, int | None] = {}
    for name, (offset, fmt) in TCP_INFO_FIELDS.items():
        size = struct.calcsize(fmt)
        out[name] = struct.unpack_from("=" + fmt, raw, offset)[0] if offset + size <= len(raw) else None
    return out


def tcp_info(sock: socket.socket) -> dict[str, int | None]:
    return parse_tcp_info(sock.getsockopt(socket.IPPROTO_TCP, TCP_INFO, TCP_INFO_LEN))


def scaling_ratio_of(rcvbuf: int, window_clamp: int) -> int | None:
    """The `scaling_ratio` (of 256) a receiving socket sizes its window with. Linux ≥ 6.6
    measures it as the len/truesize of a full-sized skb (`tcp_measure_rcv_mss()`) and from then
    on keeps `window_clamp = rcvbuf · ratio >> 8` (`tcp_set_window_clamp()`,
    `tcp_rcvbuf_grow()`), so the two give it back. None when no ratio does: the socket still has
    the clamp `tcp_init_buffer_space()` set, or a user's."""
    return next((r for r in range(1, 256) if (rcvbuf * r) >> 8 == window_clamp), None)


def receive_scaling_ratio(sock: socket.socket) -> int | None:
    """`scaling_ratio_of` a connected socket's `SO_RCVBUF` and `TCP_WINDOW_CLAMP`."""
    return scaling_ratio_of(sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF),
                            sock.getsockopt(socket.IPPROTO_TCP, TCP_WINDOW_CLAMP))


#: What the server reads before each response: up to the delivery rate, one short getsockopt.
_AT_RESPONSE = ("rtt_us", "pacing_rate_Bps", "delivery_rate_Bps")
_AT_RESPONSE_LEN = max(TCP_INFO_FIELDS[k][0] + struct.calcsize(TCP_INFO_FIELDS[k][1]) for k in _AT_RESPONSE)


#: `TCP_CC_INFO` (include/uapi/linux/tcp.h): the CCA's own state. BBR answers with `struct
#: tcp_bbr_info` (include/uapi/linux/inet_diag.h, filled by `bbr_get_info()`): five __u32,
#: bbr_bw_lo and bbr_bw_hi (its bandwidth estimate, bytes/s), bbr_min_rtt (µs), bbr_pacing_gain
#: and bbr_cwnd_gain (of 256). Other CCAs answer with less (cubic and reno: nothing).
TCP_CC_INFO = getattr(socket, "TCP_CC_INFO", 26)
_BBR_INFO = struct.Struct("=5I")


def parse_bbr_info(raw: bytes) -> tuple[int, int, int] | None:
    """BBR's bandwidth estimate (bytes/s), min RTT (µs) and pacing gain (of 256) from what
    getsockopt(TCP_CC_INFO) gave; None if the answer is too short to be BBR's."""
    if len(raw) < _BBR_INFO.size:
        return None
    bw_lo, bw_hi, min_rtt_us, pacing_gain, _ = _BBR_INFO.unpack_from(raw)
    return bw_lo | bw_hi << 32, min_rtt_us, pacing_gain


def bbr_at_response(sock: socket.socket) -> tuple[int, int, int] | None:
    """`parse_bbr_info` of the socket's `TCP_CC_INFO`: one more short getsockopt."""
    return parse_bbr_info(sock.getsockopt(socket.IPPROTO_TCP, TCP_CC_INFO, _BBR_INFO.size))


def at_response(sock: socket.socket) -> tuple[int, int, int]:
    """`tcpi_rtt` (SRTT, µs), `tcpi_pacing_rate` and `tcpi_delivery_rate` (bytes/s): one short
    getsockopt, cheap enough to read before every response without moving when it starts. The
    pacing rate is what the CCA left after the last response (BBR's: its gain times its
    bandwidth estimate), the delivery rate the last sample's."""
    raw = sock.getsockopt(socket.IPPROTO_TCP, TCP_INFO, _AT_RESPONSE_LEN)
    return tuple(struct.unpack_from("=" + TCP_INFO_FIELDS[k][1], raw, TCP_INFO_FIELDS[k][0])[0]
                 for k in _AT_RESPONSE)


# -- namespace MIB counters --------------------------------------------------------------------
def read_mib(root: Path = Path("/proc/net")) -> dict[str, int]:
    """`/proc/net/snmp` and `/proc/net/netstat` of the calling process's namespace, as
    {"Tcp.RetransSegs": n, "TcpExt.TCPTimeouts": n, ...}: each file is pairs of lines, a header
    line of names and a line of values, both prefixed with the group ("TcpExt:")."""
    mib: dict[str, int] = {}
    for name in ("snmp", "netstat"):
        lines = (root / name).read_text().splitlines()
        for head, vals in zip(lines[::2], lines[1::2]):
            group, _, names = head.partition(":")
            _, _, values = vals.partition(":")
            for key, value in zip(names.split(), values.split()):
                try:
                    mib[f"{group}.{key}"] = int(value)
                except ValueError:
                    pass
    return mib


#: Counters every report carries, zero or not (so downstream code can index them).
MIB_KEYS = ("Tcp.RetransSegs", "Tcp.OutSegs", "TcpExt.TCPTimeouts", "TcpExt.TCPLossProbes",
            "TcpExt.TCPFastRetrans", "TcpExt.TCPSlowStartRetrans", "TcpExt.TCPSpuriousRTOs",
            "TcpExt.TCPSynRetrans", "TcpExt.DelayedACKs", "TcpExt.TCPSackRecovery",
            "TcpExt.TCPLostRetransmit", "TcpExt.TCPSackRecoveryFail", "TcpExt.TCPSACKReorder")


def mib_delta(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    """Counter increase; the fixed MIB_KEYS always, plus every other counter that moved.
    Gauges (Tcp.CurrEstab, RtoMin…) are skipped: they are not monotone."""
    gauges = {"Tcp.CurrEstab", "Tcp.RtoAlgorithm", "Tcp.RtoMin", "Tcp.RtoMax", "Tcp.MaxConn"}
    out = {k: after.get(k, 0) - before.get(k, 0) for k in MIB_KEYS}
    for k, v in after.items():
        if k not in gauges and k not in out and v != before.get(k, 0):
            out[k] = v - before.get(k, 0)
    return out


# -- helpers ------------------------------------------------------------------------------------
#: A pause between reads longer than this is the data stalling, not the reader being slow.
READ_STALL_US = 1000.0


def mean_gap_us(gaps_us: list[float]) -> float:
    """Mean time between consecutive reads, microseconds, over the gaps of at most
    READ_STALL_US: how long the application takes to come back while data keeps arriving
    (0 without such gaps)."""
    busy = [g for g in gaps_us if g <= READ_STALL_US]
    return statistics.fmean(busy) if busy else 0.0


def gaps_us(times_ns: list[int]) -> list[float]:
    return [(b - a) / 1e3 for a, b in zip(times_ns, times_ns[1:])]


#: A gap between reads is the reader's when the read after it found at least this share of what
#: the flow delivers on average in that time: data kept coming, the application did not.
READER_GAP_SHARE = 0.5


def reader_gaps_us(times_ns: list[int], sizes: list[int]) -> list[float]:
    """The gaps between consecutive reads that the reader made, microseconds: those after which
    it found data enough for the flow's mean rate over at least READER_GAP_SHARE of the gap.
    The rest are the data stalling (a loss being repaired, the sender's window), which the
    twin's network makes on its own."""
    if len(times_ns) < 2 or times_ns[-1] <= times_ns[0]:
        return []
    rate = sum(sizes[1:]) / (times_ns[-1] - times_ns[0])  # bytes per ns
    return [(b - a) / 1e3 for a, b, k in zip(times_ns, times_ns[1:], sizes[1:])
            if k >= READER_GAP_SHARE * rate * (b - a)]


#: SO_TIMESTAMPNS (asm-generic/socket.h; Python's socket module does not export it): each
#: recvmsg() carries, as SCM_TIMESTAMPNS, the CLOCK_REALTIME arrival of the last skb it copied.
SO_TIMESTAMPNS = 35
_TIMESPEC = struct.Struct("@qq")
#: One read in this many first takes a single byte, whose timestamp is the arrival of the oldest
#: unread data: how long data waited for the application. Not every read: the extra recvmsg()
#: slows the reader it measures (every read probed: the N = 32 aggregator's wait 0.5 -> 1.1 ms).
WAIT_SAMPLE = 8


def read_wait_us(sock: socket.socket, buf: bytearray) -> tuple[int, float | None]:
    """Read one byte and return it with how long it had waited in the socket, microseconds
    (None without a timestamp). The byte is the oldest unread one: in-order data that arrived
    first, or the retransmission that made it readable, so the wait counts from when the data
    became readable, as the application's latency does. Linux gives an skb that later data was
    coalesced into the newer stamp (`tcp_try_coalesce()`), which shortens the wait: against a
    kernel trace of one bulk flow (`sock:sk_data_ready` to `sock:sock_recv_length`) the stamps
    gave a mean of 122 µs where the trace gave 193 (docs/validation.md, `read_wait_us`)."""
    k, anc, _flags, _addr = sock.recvmsg_into([memoryview(buf)[:1]], _TIMESPEC.size * 4)
    # After the call: a blocking read returns when data comes, and its stamp is then.
    t_ns = time.time_ns()
    for level, kind, data in anc:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(data) >= _TIMESPEC.size:
            sec, nsec = _TIMESPEC.unpack_from(data)
            return k, (t_ns - sec * 1_000_000_000 - nsec) / 1e3
    return k, None


def sampled_read(sock: socket.socket, buf: bytearray, n: int, reads: int,
                 waits: list[tuple[float, int]], prev_ns: int | None,
                 holds: list[float] | None = None) -> int:
    """Read up to `n` bytes as one application read; on every WAIT_SAMPLE-th read (`reads` counts
    them) first take one byte with its arrival stamp and append how long it waited, with how many
    bytes the read took in all, to `waits`.

    `prev_ns` is when this socket was last read (monotonic). Every read takes all there is, so
    a byte that waited longer than that was not readable then: it sat out of order behind a
    loss, and its wait is the loss recovery's, not the application's. Such samples are left
    out (Linux also gives a hole-filling skb the older stamps of the data it joins,
    `tcp_try_coalesce()`).

    With `holds`, the sampled read's second part, which takes what is queued without waiting
    for more, is timed and its µs appended: how long a read holds the socket (`lock_sock()` in
    `tcp_recvmsg()`, copying and then processing what queued in the backlog meanwhile)."""
    if reads % WAIT_SAMPLE:
        return sock.recv_into(buf, n)
    k, wait = read_wait_us(sock, buf)
    since_prev_us = (time.monotonic_ns() - prev_ns) / 1e3 if prev_ns is not None else float("inf")
    if k and n > k:
        t0 = time.monotonic_ns()
        try:
            k += sock.recv_into(buf, n - k, socket.MSG_DONTWAIT)
            if holds is not None:
                holds.append((time.monotonic_ns() - t0) / 1e3)
        except BlockingIOError:
            pass  # that byte was all there was
    if wait is not None and wait <= since_prev_us:
        waits.append((wait, k))
    return k


#: How a measured hold distribution is handed on: this many midpoint quantiles. The holds are
#: two populations (a read that copies at once, 5-50 µs; one the host's other work interrupts,
#: 400-900 µs at 1 Gbit/s and 1500 bytes), which twenty slices of 5 % keep apart.
HOLD_QUANTILES = 20


#: How a measured wait distribution is handed on: this many quantiles, at the midpoints of equal
#: probability slices (0.5 %, 1.5 %, ... 99.5 %). Drawn uniformly, they stand for the samples,
#: tail included, in a hundred numbers.
WAIT_QUANTILES = 100


def midpoint_quantiles(values: list[float], k: int = WAIT_QUANTILES) -> list[float]:
    """The `k` midpoint quantiles of `values` (linear interpolation between order statistics);
    empty without values."""
    if not values:
        return []
    xs = sorted(values)
    out = []
    for i in range(k):
        pos = (i + 0.5) / k * (len(xs) - 1)
        lo = int(pos)
        hi = min(lo + 1, len(xs) - 1)
        out.append(xs[lo] + (xs[hi] - xs[lo]) * (pos - lo))
    return out


def wait_summary(samples: list[tuple[float, int]]) -> dict:
    """How long data waited for the application: mean, median, the quantiles, the sample count,
    and the samples themselves as `[wait_us, bytes the read took]` (`real.reader_waits_us`)."""
    waits = [w for w, _ in samples]
    return {"read_wait_us": statistics.fmean(waits) if waits else 0.0,
            "read_wait_median_us": statistics.median(waits) if waits else 0.0,
            "read_wait_quantiles_us": midpoint_quantiles(waits), "wait_samples": len(waits),
            "read_waits_us_bytes": [[w, k] for w, k in samples]}


_HEADER = struct.Struct("!QQ")   # bulk: payload bytes, sender's connect-start monotonic ns
_REQUEST = struct.Struct("!Q")   # incast: bytes wanted from this sender (0 = goodbye)
_CHUNK = 1 << 20
_ZEROS = memoryview(bytes(_CHUNK))


def connect(host: str, port: int, deadline: float, cca: str | None) -> tuple[socket.socket, int]:
    """Connect, retrying while the peer is not listening yet; returns the socket and the monotonic
    ns at the start of the attempt that succeeded (the flow's start)."""
    while True:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if cca:
            sock.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, cca.encode())
        sock.settimeout(max(0.1, deadline - time.monotonic()))
        t0 = time.monotonic_ns()
        try:
            sock.connect((host, port))
            return sock, t0
        except (ConnectionRefusedError, socket.timeout):
            sock.close()
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.01)


def listener(port: int, backlog: int, timeout: float, cca: str | None = None) -> socket.socket:
    """A listening socket; with `cca`, every connection it accepts runs that algorithm. It is
    set before `listen()`: a connection that arrived in between would get the namespace's
    default (here the root's, bbr, which a namespace cannot change to cubic)."""
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if cca:
        srv.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, cca.encode())  # inherited by accept
    srv.bind(("0.0.0.0", port))
    srv.listen(backlog)
    srv.settimeout(timeout)
    return srv


def recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError(f"peer closed after {len(buf)} of {n} bytes")
        buf += chunk
    return bytes(buf)


def send_zeros(sock: socket.socket, n: int) -> None:
    while n > 0:
        k = min(n, _CHUNK)
        sock.sendall(_ZEROS[:k])
        n -= k


def cca_of(sock: socket.socket) -> str:
    return sock.getsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, 16).split(b"\0", 1)[0].decode()


# -- bulk ---------------------------------------------------------------------------------------
def bulk_recv(port: int, timeout: float) -> dict:
    """Accept one flow, read it to the end, acknowledge with one byte. FCT runs from the sender's
    first connect attempt to the last payload byte read here."""
    with listener(port, 4, timeout) as srv:
        conn, peer = srv.accept()
    with conn:
        conn.settimeout(timeout)
        size, t_connect = _HEADER.unpack(recv_exact(conn, _HEADER.size))
        t_header = time.monotonic_ns()
        buf = bytearray(_CHUNK)
        got, t_first = 0, None
        read_ns: list[int] = []
        read_bytes: list[int] = []
        waits: list[tuple[float, int]] = []
        holds: list[float] = []
        conn.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        while got < size:
            k = sampled_read(conn, buf, min(_CHUNK, size - got), len(read_ns), waits,
                             read_ns[-1] if read_ns else None, holds)
            if k == 0:
                raise ConnectionError(f"sender closed after {got} of {size} bytes")
            read_ns.append(time.monotonic_ns())
            read_bytes.append(k)
            if t_first is None:
                t_first = read_ns[-1]
            got += k
        t_last = time.monotonic_ns()
        conn.sendall(b"\x01")
        info = tcp_info(conn)
        ratio = receive_scaling_ratio(conn)
        conn.recv(1)  # wait for the sender's close, bounded by the timeout
    fct = (t_last - t_connect) / 1e9
    return {"mode": "bulk-recv", "peer": peer[0], "bytes": got, "fct_s": fct,
            "connect_ns": t_connect,
            "first_byte_s": ((t_first or t_last) - t_connect) / 1e9, "reads": len(read_ns),
            # From the header (the flow's first segment) to the first read of data: how late
            # this application starts reading.
            "first_read_us": ((t_first or t_last) - t_header) / 1e3,
            "read_gap_us": mean_gap_us(gaps_us(read_ns)), **wait_summary(waits),
            "read_hold_us": statistics.fmean(holds) if holds else 0.0,
            "read_hold_quantiles_us": midpoint_quantiles(holds, HOLD_QUANTILES),
            "reader_gap_quantiles_us": midpoint_quantiles(reader_gaps_us(read_ns, read_bytes)),
            "goodput_bps": got * 8 / fct if fct > 0 else None, "tcp_info": info, "scaling_ratio": ratio}


def bulk_send(host: str, port: int, size: int, cca: str | None, timeout: float,
              sndbuf: int | None = None) -> dict:
    """Send `size` bytes; done when the receiver's one-byte acknowledgement arrives. `sndbuf`
    (SO_SNDBUF, bytes) caps what the socket keeps unacknowledged, so the flow stays a small,
    window-limited occupant of the bottleneck queue."""
    mib0 = read_mib()
    sock, t_connect = connect(host, port, time.monotonic() + timeout, cca)
    if sndbuf is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, sndbuf)
    with sock:
        sock.settimeout(timeout)
        t_est = time.monotonic_ns()
        sock.sendall(_HEADER.pack(size, t_connect))
        send_zeros(sock, size)
        t_sent = time.monotonic_ns()
        if recv_exact(sock, 1) != b"\x01":
            raise ConnectionError("bad acknowledgement from receiver")
        t_done = time.monotonic_ns()
        info = tcp_info(sock)
        cca_used = cca_of(sock)
    return {"mode": "bulk-send", "bytes": size, "cca": cca_used,
            "connect_s": (t_est - t_connect) / 1e9, "send_done_s": (t_sent - t_connect) / 1e9,
            "acked_s": (t_done - t_connect) / 1e9, "tcp_info": info,
            "mib": mib_delta(mib0, read_mib())}


# -- UDP burst ----------------------------------------------------------------------------------
def udp_sink(port: int, duration: float) -> dict:
    """Count the datagrams that arrive on `port` for `duration` seconds (keeps the receiver from
    answering the burst with ICMP port-unreachable)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("", port))
        sock.settimeout(0.05)
        got = count = 0
        end = time.monotonic() + duration
        while time.monotonic() < end:
            try:
                got += len(sock.recv(65536))
                count += 1
            except TimeoutError:
                pass
    return {"mode": "udp-sink", "datagrams": count, "bytes": got}


def udp_burst(host: str, port: int, rate_bps: float, duration: float, size: int,
              delay: float) -> dict:
    """After `delay` s, send `size`-byte datagrams at `rate_bps` (payload bits) for `duration` s,
    on a schedule that catches up when the loop falls behind (a constant-rate burst source, as
    the seeds' traffic generator)."""
    payload = bytes(size)
    interval = size * 8 / rate_bps
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.connect((host, port))
        sport = sock.getsockname()[1]
        time.sleep(delay)
        t0 = time.monotonic()
        sent = 0
        while True:
            now = time.monotonic()
            if now - t0 >= duration:
                break
            due = int((now - t0) / interval) + 1
            while sent < due:
                try:
                    sock.send(payload)
                except (BlockingIOError, ConnectionRefusedError):
                    pass
                sent += 1
        t1 = time.monotonic()
    return {"mode": "udp-burst", "sport": sport, "datagrams": sent, "bytes": sent * size,
            "start_mono_s": t0, "end_mono_s": t1}


# -- incast -------------------------------------------------------------------------------------
def incast_serve(port: int, conns: int, cca: str | None, timeout: float) -> dict:
    """Accept `conns` connections; answer each request of n bytes with n bytes, until the
    aggregator says goodbye. One thread per connection: sendall releases the GIL. Each
    response's start (monotonic ns, a clock shared by every namespace) is reported, so the
    host's serialisation of the responses can be measured, and the connection's SRTT as it
    starts (what the last response left for this one's loss-probe and RTO timers)."""
    mib0 = read_mib()
    infos: list[dict] = [{} for _ in range(conns)]
    starts: list[list[int]] = [[] for _ in range(conns)]
    srtts: list[list[int]] = [[] for _ in range(conns)]
    pacing: list[list[int]] = [[] for _ in range(conns)]
    delivery: list[list[int]] = [[] for _ in range(conns)]
    # BBR's own bandwidth estimate and pacing gain as each response starts (BBR only).
    bbr_bw: list[list[int]] = [[] for _ in range(conns)]
    bbr_gain: list[list[int]] = [[] for _ in range(conns)]
    errors: list[str] = []
    with listener(port, conns + 16, timeout, cca) as srv:
        accepted = [srv.accept()[0] for _ in range(conns)]
    # Which connection is which in a capture: the aggregator's port of each.
    peer_ports = [c.getpeername()[1] for c in accepted]
    # The handshake is each connection's first RTT sample (`tcp_synack_rtt_meas()`), so its min
    # RTT until data does better: how long the aggregator's host took to answer the SYN-ACK. A
    # retransmitted SYN-ACK gives no sample (min RTT still ~0U): such connections are left out.
    handshake_rtt_us = [r for r in (tcp_info(c)["min_rtt_us"] for c in accepted) if r and r < NO_RTT_US]

    def serve(i: int, sock: socket.socket) -> None:
        try:
            with sock:
                sock.settimeout(timeout)
                while True:
                    (n,) = _REQUEST.unpack(recv_exact(sock, _REQUEST.size))
                    if n == 0:
                        break
                    srtt, pace, rate = at_response(sock)
                    bbr = bbr_at_response(sock) if is_bbr else None
                    srtts[i].append(srtt)
                    pacing[i].append(pace)
                    delivery[i].append(rate)
                    if bbr is not None:
                        bbr_bw[i].append(bbr[0])
                        bbr_gain[i].append(bbr[2])
                    starts[i].append(time.monotonic_ns())
                    send_zeros(sock, n)
                infos[i] = tcp_info(sock)
        except (OSError, ConnectionError) as exc:
            errors.append(f"conn {i}: {exc}")

    threads = [threading.Thread(target=serve, args=(i, s), daemon=True) for i, s in enumerate(accepted)]
    # One name if every connection runs the same algorithm, else all of them ("bbr,cubic").
    cca_used = ",".join(sorted({cca_of(c) for c in accepted}))
    is_bbr = cca_used == "bbr"
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
    if errors:
        raise ConnectionError("; ".join(errors))
    return {"mode": "incast-serve", "conns": conns, "cca": cca_used,
            "total_retrans": sum(i.get("total_retrans") or 0 for i in infos),
            "max_rto_us": max(i.get("rto_us") or 0 for i in infos),
            "tcp_info": infos, "peer_ports": peer_ports, "handshake_rtt_us": handshake_rtt_us,
            "response_starts_ns": starts, "srtt_at_response_us": srtts,
            "pacing_at_response_Bps": pacing, "delivery_at_response_Bps": delivery,
            "bbr_bw_at_response_Bps": bbr_bw, "bbr_gain_at_response": bbr_gain,
            "mib": mib_delta(mib0, read_mib())}


def incast_query(host: str, port: int, conns: int, per_sender: int, queries: int,
                 timeout: float) -> dict:
    """Open `conns` persistent connections; `queries` times, ask all at once for `per_sender`
    bytes each and time until the last byte of the last response (query completion time)."""
    mib0 = read_mib()
    deadline = time.monotonic() + timeout
    socks = [connect(host, port, deadline, None)[0] for _ in range(conns)]
    sel = selectors.DefaultSelector()
    buf = bytearray(_CHUNK)
    request = _REQUEST.pack(per_sender)
    qct: list[float] = []
    sent_ns: list[int] = []
    gaps: list[float] = []
    sock_gaps: list[float] = []
    waits: list[tuple[float, int]] = []
    reads = wakes = 0
    # The aggregator's own cost of each query: its CPU time (user and system: the reads'
    # copies and the requests' sends), reads and wake-ups, to set beside the query's time.
    cpu_us: list[float] = []
    query_reads: list[int] = []
    query_wakes: list[int] = []
    try:
        for s in socks:
            s.setblocking(False)
            sel.register(s, selectors.EVENT_READ)
            s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        for _ in range(queries):
            left = {s.fileno(): per_sender for s in socks}
            cpu0, reads0, wakes0 = time.process_time_ns(), reads, wakes
            t0 = time.monotonic_ns()
            sent_ns.append(t0)
            for s in socks:
                s.send(request)  # 8 bytes into an idle, empty send buffer: never partial
            woke: list[int] = []
            last_read: dict[int, int] = {}
            while left:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"query {len(qct)}: {len(left)} senders still pending")
                ready = sel.select(remaining)
                woke.append(time.monotonic_ns())
                wakes += 1
                for key, _ in ready:
                    reads += 1
                    fd = key.fd
                    t_read = time.monotonic_ns()
                    if fd in last_read:
                        sock_gaps.append((t_read - last_read[fd]) / 1e3)
                    # Its last read, or the request: nothing of this query was there before.
                    prev = last_read.get(fd, t0)
                    last_read[fd] = t_read
                    if fd not in left:
                        raise ConnectionError("a sender sent more than it was asked for")
                    k = sampled_read(key.fileobj, buf, min(_CHUNK, left[fd]), reads, waits, prev)
                    if k == 0:
                        raise ConnectionError("a sender closed mid-query")
                    left[fd] -= k
                    if left[fd] <= 0:
                        del left[fd]
            qct.append((time.monotonic_ns() - t0) / 1e9)
            cpu_us.append((time.process_time_ns() - cpu0) / 1e3)
            query_reads.append(reads - reads0)
            query_wakes.append(wakes - wakes0)
            gaps += gaps_us(woke)
        ratio = receive_scaling_ratio(socks[0])
        for s in socks:
            s.setblocking(True)
            s.settimeout(max(0.1, deadline - time.monotonic()))
            s.sendall(_REQUEST.pack(0))
    finally:
        sel.close()
        for s in socks:
            s.close()
    return {"mode": "incast-query", "conns": conns, "bytes_per_sender": per_sender,
            "queries": queries, "qct_s": qct, "query_sent_ns": sent_ns, "reads": reads,
            "query_cpu_us": cpu_us, "query_reads": query_reads, "query_wakes": query_wakes,
            # How often the loop wakes, and how often it comes back to each connection: the
            # latter is how long a connection's data waits to be read.
            "wakes": wakes, "wake_gap_us": mean_gap_us(gaps), "read_gap_us": mean_gap_us(sock_gaps),
            # How long data waited to be read (sampled reads): the latency the twin's reader has.
            **wait_summary(waits),
            # The len/truesize ratio the aggregator's sockets measured (all alike: one host).
            "scaling_ratio": ratio,
            "mib": mib_delta(mib0, read_mib())}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="burstlab.validate.traffic", description=__doc__.splitlines()[0])
    p.add_argument("--timeout", type=float, default=60.0, help="bound on the whole run, seconds")
    sub = p.add_subparsers(dest="mode", required=True)
    r = sub.add_parser("bulk-recv")
    r.add_argument("--port", type=int, required=True)
    s = sub.add_parser("bulk-send")
    s.add_argument("--host", required=True)
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--bytes", type=int, required=True)
    s.add_argument("--cca")
    s.add_argument("--sndbuf", type=int, help="SO_SNDBUF in bytes (keeps the flow window-limited)")
    u = sub.add_parser("udp-sink")
    u.add_argument("--port", type=int, required=True)
    u.add_argument("--duration", type=float, required=True)
    b = sub.add_parser("udp-burst")
    b.add_argument("--host", required=True)
    b.add_argument("--port", type=int, required=True)
    b.add_argument("--rate-bps", type=float, required=True)
    b.add_argument("--duration", type=float, required=True)
    b.add_argument("--size", type=int, default=1400)
    b.add_argument("--delay", type=float, default=0.0)
    v = sub.add_parser("incast-serve")
    v.add_argument("--port", type=int, required=True)
    v.add_argument("--conns", type=int, required=True)
    v.add_argument("--cca")
    q = sub.add_parser("incast-query")
    q.add_argument("--host", required=True)
    q.add_argument("--port", type=int, required=True)
    q.add_argument("--conns", type=int, required=True)
    q.add_argument("--bytes-per-sender", type=int, required=True)
    q.add_argument("--queries", type=int, required=True)
    a = p.parse_args(argv)
    if a.mode == "bulk-recv":
        out = bulk_recv(a.port, a.timeout)
    elif a.mode == "bulk-send":
        out = bulk_send(a.host, a.port, a.bytes, a.cca, a.timeout, a.sndbuf)
    elif a.mode == "udp-sink":
        out = udp_sink(a.port, a.duration)
    elif a.mode == "udp-burst":
        out = udp_burst(a.host, a.port, a.rate_bps, a.duration, a.size, a.delay)
    elif a.mode == "incast-serve":
        out = incast_serve(a.port, a.conns, a.cca, a.timeout)
    else:
        out = incast_query(a.host, a.port, a.conns, a.bytes_per_sender, a.queries, a.timeout)
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
