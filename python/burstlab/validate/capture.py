"""A real microburst, captured: a UDP burst above the shaped rate next to a TCP flow, through a
`tbf` bottleneck in network namespaces, recorded with tcpdump entering and leaving the router.

    sender ns ─veth─ rs0 [router ns] rr0 (tbf) ─veth─ receiver ns
                    ^ tcpdump -Q in          ^ tcpdump -Q out (after the qdisc)

Packet taps see outgoing packets when the driver takes them (`dev_queue_xmit_nit` in
`xmit_one`), i.e. after the tbf has released them, and incoming packets before forwarding, so the
two captures bracket exactly the tbf queue: what entered and never left was dropped by it. Both
captures use the kernel's one clock, so `burstlab detect IN --egress OUT` can rebuild the queue.

The TCP flow is kept window-limited (a small SO_SNDBUF) so that on its own it holds only a few
packets in the queue: the queue grows past the detector's threshold only while the UDP burst
runs, and the TCP flow's packets wait behind it (the victim).
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from burstlab.validate.topology import Bottleneck, Dumbbell, HostTuning, rate_bps, run_cmd

_TRAFFIC = str(Path(__file__).with_name("traffic.py"))
TCP_PORT = 5001
UDP_PORT = 5002


@dataclass(frozen=True)
class BurstCapture:
    """What was captured and what the ground truth is."""

    ingress_pcap: str
    egress_pcap: str
    udp_flow: str  #: "src:sport > dst:dport udp", as burstlab prints flow keys
    tcp_flow: str
    burst_start_s: float  #: CLOCK_MONOTONIC of the sender, seconds (not the pcap clock)
    burst_end_s: float
    udp_datagrams: int
    tbf: dict  #: `tc -s` counters of the bottleneck after the run (drops, packets, bytes)

    def to_json(self) -> str:
        return json.dumps(asdict(self))


def capture_burst(
    out_dir: Path,
    *,
    rate: str = "50mbit",
    limit_bytes: int = 64 * 1024,
    burst_rate_bps: float = 150e6,
    burst_s: float = 0.1,
    burst_at_s: float = 0.6,
    tcp_bytes: int = 6_000_000,
    tcp_sndbuf: int = 16 * 1024,
) -> BurstCapture:
    """Run the experiment once (root needed) and return the two capture files' paths and the
    ground truth. Everything it creates is torn down on return, error or Ctrl-C."""
    if shutil.which("tcpdump") is None:
        raise RuntimeError("tcpdump is not installed (scripts/setup.sh installs it as root)")
    out_dir.mkdir(parents=True, exist_ok=True)
    ingress, egress = out_dir / "ingress.pcap", out_dir / "egress.pcap"
    bottleneck = Bottleneck(rate=rate, limit_bytes=limit_bytes)
    if burst_rate_bps <= rate_bps(rate):
        raise ValueError(f"the burst ({burst_rate_bps:.3g} bit/s) must exceed the shaped rate {rate}")
    with Dumbbell(senders=1, bottleneck=bottleneck, tuning=HostTuning()) as net:
        rt, rx, sx = net.router_ns, net.receiver_ns, net.sender_ns[0]
        # One MSS per skb, as a NIC puts them on the wire: without it the ingress tap sees 64 KB
        # GSO super-packets that tbf only splits at enqueue (tbf_segment).
        run_cmd(["ip", "-n", sx, "link", "set", "s0", "gso_max_segs", "1"])
        dumps = [
            net.spawn(rt, ["tcpdump", "-i", dev, "-Q", direction, "-n", "-s", "128",
                           "--time-stamp-precision=nano", "-w", str(path), "-U"])
            for dev, direction, path in (("rs0", "in", ingress), (net.bottleneck_dev, "out", egress))
        ]
        _wait_listening(dumps)
        py = sys.executable
        total = burst_at_s + burst_s + 1.5
        recv = net.spawn(rx, [py, _TRAFFIC, "--timeout", "30", "bulk-recv", "--port", str(TCP_PORT)])
        sink = net.spawn(rx, [py, _TRAFFIC, "udp-sink", "--port", str(UDP_PORT), "--duration", str(total)])
        time.sleep(0.3)  # listeners up
        send = net.spawn(sx, [py, _TRAFFIC, "--timeout", "30", "bulk-send", "--host", net.receiver_addr,
                              "--port", str(TCP_PORT), "--bytes", str(tcp_bytes), "--sndbuf", str(tcp_sndbuf)])
        burst = net.spawn(sx, [py, _TRAFFIC, "udp-burst", "--host", net.receiver_addr, "--port", str(UDP_PORT),
                               "--rate-bps", str(burst_rate_bps), "--duration", str(burst_s),
                               "--delay", str(burst_at_s)])
        outs = {name: _json_of(p, name, timeout=40) for name, p in
                (("udp-burst", burst), ("bulk-send", send), ("bulk-recv", recv), ("udp-sink", sink))}
        time.sleep(0.2)  # let the last packets reach the taps
        for p in dumps:
            p.send_signal(signal.SIGINT)  # tcpdump flushes and closes its file
        for p in dumps:
            p.wait(timeout=10)
        tbf = net.qdisc_stats()
        sender, receiver = net.sender_addr(0), net.receiver_addr
    b = outs["udp-burst"]
    return BurstCapture(
        ingress_pcap=str(ingress), egress_pcap=str(egress),
        udp_flow=f"{sender}:{b['sport']} > {receiver}:{UDP_PORT} udp",
        tcp_flow=f"{sender}:* > {receiver}:{TCP_PORT} tcp",
        burst_start_s=b["start_mono_s"], burst_end_s=b["end_mono_s"],
        udp_datagrams=b["datagrams"], tbf=tbf,
    )


def _wait_listening(dumps: list[subprocess.Popen], timeout: float = 5.0) -> None:
    """tcpdump says "listening on …" on stderr once its socket is bound."""
    for p in dumps:
        end = time.monotonic() + timeout
        line = ""
        while "listening on" not in line:
            if p.poll() is not None or time.monotonic() > end:
                raise RuntimeError(f"tcpdump did not start: {p.stderr.read() if p.poll() is not None else line}")
            line = p.stderr.readline()


def _json_of(proc: subprocess.Popen, name: str, timeout: float) -> dict:
    out, err = proc.communicate(timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"{name} failed (exit {proc.returncode}): {err.strip()}")
    return json.loads(out)
