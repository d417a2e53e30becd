#!/usr/bin/env python3
"""The real kernel's ramp-up over a long path: GRNET's 150 ms experiment (seed 003) on this machine.

    python scripts/real_ramp.py --out /tmp/ramp.json                       # root; 3 repeats
    python scripts/real_ramp.py --rmem-default 268435456 --out /tmp/c.json # tcp_rmem's default raised

This kernel has no netem (`CONFIG_NET_SCH_NETEM` is not set), so the path's delay is a user-space
delay line (scripts/delayline.c) between two TUN devices, one in a sender namespace and one in a
receiver namespace, with a tbf at `--rate` in front of it (the line carries ~1 Gbit/s). Both
hosts get the seed's sysctls (`tcp_rmem` "4096 <default> 268435456", `tcp_wmem` max 268435456);
one CUBIC iperf3 stream runs `--seconds`, MTU 9000, the ends and the line under SCHED_FIFO 20.

Each run prints two counts per second: what the receiver got (iperf3's server intervals) and what
the sender's application wrote into its socket (the client's intervals: iperf2's client, which
the seed's output is, counts the same way). They differ by what waits in the send buffer, which
`--wmem-default` (the sender's `tcp_wmem` default value) sizes.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SENDER, RECEIVER = "rr-s", "rr-r"
ADDR_S, ADDR_R = "10.203.0.1", "10.203.0.2"
PORT = 5201
INTERVAL = 0.25
_UNIT = {"": 1e-6, "K": 1e-3, "M": 1.0, "G": 1e3}


def sh(*argv: str) -> None:
    subprocess.run(argv, check=True, capture_output=True, text=True)


def build_delayline() -> Path:
    binary = Path("/tmp/burstlab-delayline")
    src = HERE / "delayline.c"
    if not binary.exists() or binary.stat().st_mtime < src.stat().st_mtime:
        sh("gcc", "-O2", "-Wall", "-o", str(binary), str(src))
    return binary


def per_second(rates_mbps: list[float], seconds: int) -> list[float]:
    """Mean of each second's `INTERVAL` rates (Mbit/s)."""
    k = round(1 / INTERVAL)
    return [round(sum(rates_mbps[i * k:(i + 1) * k]) / k, 1) for i in range(seconds) if len(rates_mbps) >= (i + 1) * k]


def server_rates(text: str) -> list[float]:
    """The iperf3 server's interval rates (Mbit/s) from its text output, the summary line left out."""
    rows = re.findall(r"(\d+\.\d+)-(\d+\.\d+)\s+sec\s+\S+ \S+\s+([\d.]+) ([KMG]?)bits/sec", text)
    return [float(v) * _UNIT[u] for a, b, v, u in rows if float(b) - float(a) < INTERVAL * 1.5]


def one_run(args: argparse.Namespace, delayline: Path) -> dict:
    procs: list[subprocess.Popen] = []
    try:
        for ns in (SENDER, RECEIVER):
            sh("ip", "netns", "add", ns)
            sh("ip", "-n", ns, "link", "set", "lo", "up")
        half_us = str(round(args.rtt_ms * 500))
        line = subprocess.Popen(["ip", "netns", "exec", SENDER, "chrt", "-f", "20", str(delayline), "tunA", "tunB",
                                 half_us], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        procs.append(line)
        if line.stdout.readline().strip() != "ready":
            raise RuntimeError(f"delay line did not start: {line.stderr.read().strip()}")
        sh("ip", "-n", SENDER, "link", "set", "tunB", "netns", RECEIVER)
        for ns, dev, addr, wmem_default in ((SENDER, "tunA", ADDR_S, args.wmem_default),
                                            (RECEIVER, "tunB", ADDR_R, 16384)):
            sh("ip", "netns", "exec", ns, "sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1")
            sh("ip", "-n", ns, "addr", "add", f"{addr}/24", "dev", dev)
            sh("ip", "-n", ns, "link", "set", dev, "mtu", "9000", "txqueuelen", "20000", "up")
            sh("ip", "netns", "exec", ns, "sysctl", "-q", "-w",
               f"net.ipv4.tcp_rmem=4096 {args.rmem_default} 268435456",
               f"net.ipv4.tcp_wmem=4096 {wmem_default} 268435456", "net.ipv4.tcp_no_metrics_save=1")
        sh("ip", "netns", "exec", SENDER, "tc", "qdisc", "add", "dev", "tunA", "root", "tbf", "rate", args.rate,
           "burst", "200kb", "limit", "16mb")
        server = subprocess.Popen(["ip", "netns", "exec", RECEIVER, "chrt", "-f", "20", "iperf3", "-s", "-1", "-p",
                                   str(PORT), "-i", str(INTERVAL)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append(server)
        time.sleep(1.0)
        # The window scale both ends agreed on, read while the stream runs.
        probe = subprocess.Popen(["ip", "netns", "exec", RECEIVER, "sh", "-c", f"sleep {args.seconds / 2}; ss -tin"],
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        procs.append(probe)
        client = subprocess.run(["ip", "netns", "exec", SENDER, "chrt", "-f", "20", "iperf3", "-c", ADDR_R, "-p",
                                 str(PORT), "-C", "cubic", "-t", str(args.seconds), "-i", str(INTERVAL), "-J",
                                 "--get-server-output"], capture_output=True, text=True, timeout=args.seconds + 30)
        if client.returncode != 0:
            raise RuntimeError(f"iperf3 -c exit {client.returncode}: {client.stderr.strip() or client.stdout[-300:]}")
        report = json.loads(client.stdout)
        ss = probe.communicate(timeout=10)[0]
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
                p.wait(timeout=10)
        for ns in (SENDER, RECEIVER):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    written = [i["sum"]["bits_per_second"] / 1e6 for i in report["intervals"]]
    received = server_rates(report.get("server_output_text", ""))
    return {
        "written_mbps_per_s": per_second(written, args.seconds),
        "received_mbps_per_s": per_second(received, args.seconds),
        "retransmits": report["end"]["sum_sent"].get("retransmits", 0),
        "wscale": sorted(set(re.findall(r"wscale:(\d+,\d+)", ss))),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rtt-ms", type=float, default=150.0)
    ap.add_argument("--rate", default="1gbit", help="the tbf in front of the delay line (tc's units)")
    ap.add_argument("--rmem-default", type=int, default=87380, help="tcp_rmem's default value (both hosts)")
    ap.add_argument("--wmem-default", type=int, default=16384, help="the sender's tcp_wmem default value")
    ap.add_argument("--seconds", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    runs = []
    try:
        delayline = build_delayline()
        for k in range(args.repeat):
            r = one_run(args, delayline)
            runs.append(r)
            print(f"run {k}: received {r['received_mbps_per_s']} Mbit/s per second, written "
                  f"{r['written_mbps_per_s']}, {r['retransmits']} retransmits, wscale {r['wscale']}", flush=True)
            Path(args.out).write_text(json.dumps({"settings": vars(args), "runs": runs}, indent=1))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except (RuntimeError, subprocess.CalledProcessError) as exc:
        detail = getattr(exc, "stderr", "") or ""
        print(f"real_ramp: {exc} {detail}".strip(), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
