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

The same path at other settings, for the studies' other long-haul questions (scaled paths: see
docs/studies.md): `--mtu`, `--streams` (iperf3 -P), `--cc`, `--fq-rate` (per-stream pacing cap,
SO_MAX_PACING_RATE), `--tcp-rmem`/`--tcp-wmem` (whole triples, both hosts), `--line-rate`/`--line-limit` (a
bottleneck port inside the delay line: a rate and a tail-drop buffer, for runs that must lose
where a switch would; `--rate none` then drops the tbf). Each run also records, at the end of the test, `ss -tmi` of
every stream on both ends (the sender's rwnd_limited / sndbuf_limited / busy chronographs,
retransmits; the receiver's rcv_ssthresh, rcv_space and receive memory), each netns's `nstat`
counters (TcpExtTCPRcvQDrop, ...) and each second's retransmits. `--sample-ms` also samples `ss -tinm`
on both ends through the run (the data streams' cwnd, snd_wnd, unacked, rwnd_limited on the sender;
rcv_space, rcv_ssthresh, rcv_rtt and sk_rcvbuf on the receiver), for per-RTT time series.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import threading
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


def parse_rate(text: str) -> int:
    """Bits per second from "1gbit", "500mbit", "2.5G" or a plain number."""
    m = re.fullmatch(r"([\d.]+)\s*([kmg]?)(?:bit|bps)?", text.strip().lower())
    if not m:
        raise ValueError(f"--line-rate {text!r}: expected a rate such as 1gbit, 500mbit or 1000000000")
    return round(float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2)])


def per_second(rates_mbps: list[float], seconds: int) -> list[float]:
    """Mean of each second's `INTERVAL` rates (Mbit/s)."""
    k = round(1 / INTERVAL)
    return [round(sum(rates_mbps[i * k:(i + 1) * k]) / k, 1) for i in range(seconds) if len(rates_mbps) >= (i + 1) * k]


def server_rates(text: str) -> list[float]:
    """The iperf3 server's interval rates (Mbit/s) from its text output, the summary line left out."""
    rows = re.findall(r"(\d+\.\d+)-(\d+\.\d+)\s+sec\s+\S+ \S+\s+([\d.]+) ([KMG]?)bits/sec", text)
    return [float(v) * _UNIT[u] for a, b, v, u in rows if float(b) - float(a) < INTERVAL * 1.5]


NSTAT_KEYS = ("TcpRetransSegs", "TcpExtTCPRcvQDrop", "TcpExtTCPRcvPruned", "TcpExtPruneCalled",
              "TcpExtTCPRcvCollapsed", "TcpExtTCPOFOQueue", "TcpExtTCPOFODrop", "TcpExtTCPBacklogDrop",
              "TcpExtTCPZeroWindowDrop", "TcpExtTCPLossProbes", "TcpExtTCPSackRecovery", "TcpExtTCPTimeouts",
              "TcpExtTCPWantZeroWindowAdv", "TcpExtTCPToZeroWindowAdv", "TcpExtTCPLostRetransmit",
              "TcpExtTCPSpuriousRTOs", "TcpExtTCPDSACKRecv", "TcpExtTCPHystartTrainDetect",
              "TcpExtTCPHystartTrainCwnd", "TcpExtTCPHystartDelayDetect", "TcpExtTCPHystartDelayCwnd",
              "IpExtInOctets", "IpExtOutOctets")
_SS_FIELDS = ("cwnd", "ssthresh", "rcv_ssthresh", "rcv_space", "snd_wnd", "retrans", "lost", "delivery_rate",
              "busy", "rwnd_limited", "sndbuf_limited", "rtt", "skmem", "unacked", "pacing_rate", "bytes_acked",
              "bytes_received", "data_segs_out", "data_segs_in", "reordering")


def parse_ss(text: str) -> list[dict]:
    """`ss -tmin` of the iperf3 data streams (the control connection, which carries few bytes, left out)."""
    out = []
    for block in re.split(r"\n(?=ESTAB)", text):
        if not block.startswith("ESTAB"):
            continue
        row: dict = {}
        for key in _SS_FIELDS:
            m = re.search(rf"(?<![\w_]){key}[: ]([^\s]+(?:\s\(\S+\))?)", block)
            if m:
                row[key] = m.group(1)
        moved = int(row.get("bytes_acked", row.get("bytes_received", "0")))
        if moved > 1_000_000:
            out.append(row)
    return out


# Integer fields of a sampled `ss -tinm` line (sk_rcvbuf and the queued bytes come from skmem).
_SAMPLE_INTS = ("cwnd", "ssthresh", "snd_wnd", "unacked", "bytes_acked", "bytes_received", "rcv_space",
                "rcv_ssthresh", "data_segs_in", "data_segs_out", "rcvmss", "notsent")


def parse_ss_sample(text: str) -> dict[str, dict]:
    """Every connection of one `ss -tinm` snapshot, keyed "local>peer": its integer fields, `rb`
    (sk_rcvbuf) and `r` (sk_rmem_alloc) from skmem, `rcv_rtt` and `rtt` in ms and `rwnd_limited_ms`."""
    out: dict[str, dict] = {}
    for block in re.split(r"\n(?=ESTAB|\S)", text):
        head = re.match(r"(?:ESTAB\s+)?\d+\s+\d+\s+(\S+)\s+(\S+)", block)
        if not head or "skmem" not in block:
            continue
        row: dict = {}
        for key in _SAMPLE_INTS:
            m = re.search(rf"(?<![\w_]){key}:(\d+)", block)
            if m:
                row[key] = int(m.group(1))
        if m := re.search(r"skmem:\(r(\d+),rb(\d+)", block):
            row["r"], row["rb"] = int(m.group(1)), int(m.group(2))
        for key in ("rcv_rtt", "rtt"):
            if m := re.search(rf"(?<![\w_]){key}:([\d.]+)", block):
                row[key] = float(m.group(1))
        if m := re.search(r"rwnd_limited:(\d+)ms", block):
            row["rwnd_limited_ms"] = int(m.group(1))
        out[f"{head.group(1)}>{head.group(2)}"] = row
    return out


class Sampler:
    """`ss -tinm` in a namespace every `period` seconds on a thread, each snapshot stamped with the
    seconds since `t0` (time.monotonic())."""

    def __init__(self, ns: str, period: float, t0: float):
        self.ns, self.period, self.t0 = ns, period, t0
        self.samples: list[tuple[float, dict[str, dict]]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            t = time.monotonic() - self.t0
            text = subprocess.run(["ip", "netns", "exec", self.ns, "ss", "-tinm"], capture_output=True,
                                  text=True).stdout
            self.samples.append((round(t, 3), parse_ss_sample(text)))
            self._stop.wait(max(0.0, self.period - (time.monotonic() - self.t0 - t)))

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def series(self, streams: int) -> list[list]:
        """The `streams` connections that moved the most bytes, as rows [t, key, fields], a row
        left out where its fields are those of the stream's row before (the record stays small)."""
        moved: dict[str, int] = {}
        for _, conns in self.samples:
            for key, row in conns.items():
                moved[key] = max(moved.get(key, 0), row.get("bytes_acked", 0), row.get("bytes_received", 0))
        keep = set(sorted(moved, key=moved.get, reverse=True)[:streams])
        out, last = [], {}
        for t, conns in self.samples:
            for key, row in conns.items():
                if key in keep and last.get(key) != row:
                    out.append([t, key, row])
                    last[key] = row
        return out


def ramp_marks(run: dict, rtt_s: float) -> dict:
    """When a single stream's ramp first moved, from its sampled `ss` series: the window the sender
    saw once the first flight was acknowledged (`snd_wnd`), and the flight (counted in RTTs from
    the first) at whose read DRS first grew `rcv_space`. None where the series does not show it."""
    snd = [row for _, _, row in run["ss_series"].get("sender", [])]
    rcv = [(t, row) for t, _, row in run["ss_series"].get("receiver", [])]
    if not snd or not rcv:
        return {"first_window": None, "drs_first_flight": None}
    t0 = next((t for t, row in rcv if row.get("bytes_received", 0) > 1000), None)
    if t0 is None:
        return {"first_window": None, "drs_first_flight": None}
    # The whole first flight: what had arrived half an RTT after its first bytes.
    row0 = [row for t, row in rcv if t < t0 + rtt_s / 2][-1]
    acked = row0["bytes_received"] + 1  # the sender's count includes the SYN
    window = next((row.get("snd_wnd") for row in snd if row.get("bytes_acked", 0) >= acked), None)
    space0 = row0.get("rcv_space")
    grown = next((t for t, row in rcv if space0 and row.get("rcv_space", 0) > space0), None)
    return {"first_window": window, "drs_first_flight": None if grown is None else round((grown - t0) / rtt_s)}


def nstat(ns: str) -> dict[str, int]:
    text = subprocess.run(["ip", "netns", "exec", ns, "nstat", "-asz"], capture_output=True, text=True).stdout
    got = {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)", text, re.M)}
    return {k: got.get(k, 0) for k in NSTAT_KEYS}


def one_run(args: argparse.Namespace, delayline: Path, run_index: int = 0) -> dict:
    procs: list[subprocess.Popen] = []
    samplers: list[Sampler] = []
    load_at_start = [round(v, 2) for v in os.getloadavg()]
    rmem = args.tcp_rmem or f"4096 {args.rmem_default} 268435456"
    try:
        for ns in (SENDER, RECEIVER):
            sh("ip", "netns", "add", ns)
            sh("ip", "-n", ns, "link", "set", "lo", "up")
        half_us = str(round(args.rtt_ms * 500))
        bottleneck = [str(parse_rate(args.line_rate)), str(args.line_limit)] if args.line_rate else []
        line = subprocess.Popen(["ip", "netns", "exec", SENDER, "chrt", "-f", "20", str(delayline), "tunA", "tunB",
                                 half_us, *bottleneck], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        procs.append(line)
        if line.stdout.readline().strip() != "ready":
            raise RuntimeError(f"delay line did not start: {line.stderr.read().strip()}")
        sh("ip", "-n", SENDER, "link", "set", "tunB", "netns", RECEIVER)
        for ns, dev, addr, wmem_default in ((SENDER, "tunA", ADDR_S, args.wmem_default),
                                            (RECEIVER, "tunB", ADDR_R, 16384)):
            wmem = args.tcp_wmem or f"4096 {wmem_default} 268435456"
            sh("ip", "netns", "exec", ns, "sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1")
            sh("ip", "-n", ns, "addr", "add", f"{addr}/24", "dev", dev)
            sh("ip", "-n", ns, "link", "set", dev, "mtu", str(args.mtu), "txqueuelen", "20000", "up")
            sh("ip", "netns", "exec", ns, "sysctl", "-q", "-w", f"net.ipv4.tcp_rmem={rmem}",
               f"net.ipv4.tcp_wmem={wmem}", "net.ipv4.tcp_no_metrics_save=1")
        if args.rate != "none":
            sh("ip", "netns", "exec", SENDER, "tc", "qdisc", "add", "dev", "tunA", "root", "tbf", "rate", args.rate,
               "burst", args.burst, "limit", args.limit)
        server = subprocess.Popen(["ip", "netns", "exec", RECEIVER, "chrt", "-f", "20", "iperf3", "-s", "-1", "-p",
                                   str(PORT), "-i", str(INTERVAL)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append(server)
        time.sleep(1.0)
        # Both ends' sockets near the test's end (cumulative chronographs, counters); the window scale.
        probes = {ns: subprocess.Popen(["ip", "netns", "exec", ns, "sh", "-c",
                                        f"sleep {args.seconds - 0.5}; ss -tmin"],
                                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
                  for ns in (SENDER, RECEIVER)}
        procs.extend(probes.values())
        if args.pcap:  # the receiver's view of the first seconds: data in, ACKs (windows) out
            procs.append(subprocess.Popen(["ip", "netns", "exec", RECEIVER, "timeout", str(args.pcap_seconds),
                                           "tcpdump", "-i", "tunB", "-s", "96", "-n", "-w",
                                           f"{args.pcap}-{run_index}.pcap", "tcp", "port", str(PORT)],
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        t0 = time.monotonic()
        if args.sample_ms:
            samplers = [Sampler(ns, args.sample_ms / 1000, t0) for ns in (SENDER, RECEIVER)]
        for sampler in samplers:
            sampler.start()
        client_cmd = ["ip", "netns", "exec", SENDER, "chrt", "-f", "20", "iperf3", "-c", ADDR_R, "-p", str(PORT),
                      "-C", args.cc, "-t", str(args.seconds), "-i", str(INTERVAL), "-P", str(args.streams), "-J",
                      "--get-server-output"]
        if args.fq_rate:
            client_cmd += ["--fq-rate", args.fq_rate]
        client = subprocess.run(client_cmd, capture_output=True, text=True, timeout=args.seconds + 60)
        if client.returncode != 0:
            raise RuntimeError(f"iperf3 -c exit {client.returncode}: {client.stderr.strip() or client.stdout[-300:]}")
        report = json.loads(client.stdout)
        for sampler in samplers:
            sampler.stop()
        ss = {ns: p.communicate(timeout=10)[0] for ns, p in probes.items()}
        # What the sender's TUN device itself dropped: its queue to the delay line overflowed (the
        # line reading too slowly), not the bottleneck's.
        tun = json.loads(subprocess.run(["ip", "-n", SENDER, "-s", "-j", "link", "show", "tunA"], capture_output=True,
                                        text=True, check=True).stdout)[0]["stats64"]["tx"]
        counters = {"sender": nstat(SENDER), "receiver": nstat(RECEIVER)}
    finally:
        for sampler in samplers:
            sampler.stop()
        for p in procs:
            if p.poll() is None:
                p.terminate()
                p.wait(timeout=10)
        line_report = line.stderr.read() if procs and line.stderr else ""
        for ns in (SENDER, RECEIVER):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    written = [i["sum"]["bits_per_second"] / 1e6 for i in report["intervals"]]
    retr = [i["sum"].get("retransmits", 0) for i in report["intervals"]]
    k = round(1 / INTERVAL)
    received = server_rates(report.get("server_output_text", ""))
    if args.streams > 1:  # the server's [SUM] lines only
        received = [float(v) * _UNIT[u] for a, b, v, u in re.findall(
            r"\[SUM\]\s+(\d+\.\d+)-(\d+\.\d+)\s+sec\s+\S+ \S+\s+([\d.]+) ([KMG]?)bits/sec",
            report.get("server_output_text", "")) if float(b) - float(a) < INTERVAL * 1.5]
    result = {
        "loadavg_at_start": load_at_start,
        "written_mbps_per_s": per_second(written, args.seconds),
        "received_mbps_per_s": per_second(received, args.seconds),
        "retransmits_per_s": [sum(retr[i * k:(i + 1) * k]) for i in range(len(retr) // k)],
        "retransmits": report["end"]["sum_sent"].get("retransmits", 0),
        "received_mbps": round(report["end"]["sum_received"]["bits_per_second"] / 1e6, 1),
        "wscale": sorted(set(re.findall(r"wscale:(\d+,\d+)", ss[RECEIVER]))),
        "ss_sender": parse_ss(ss[SENDER]),
        "ss_receiver": parse_ss(ss[RECEIVER]),
        "nstat": counters,
        "line": line_report.strip(),
        "sender_tun_tx": {k: tun.get(k, 0) for k in ("packets", "dropped", "errors")},
        "interval_s": INTERVAL,
        "received_mbps_per_interval": [round(v, 3) for v in received],
        "written_mbps_per_interval": [round(v, 3) for v in written],
        # Seconds since iperf3's client was started (its test begins after the control handshake).
        "ss_series": {"sender": samplers[0].series(args.streams), "receiver": samplers[1].series(args.streams)}
        if samplers else {},
    }
    if samplers and args.streams == 1:
        result.update(ramp_marks(result, args.rtt_ms / 1000))
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rtt-ms", type=float, default=150.0)
    ap.add_argument("--rate", default="1gbit",
                    help="the tbf in front of the delay line (tc's units), or none (no tbf)")
    ap.add_argument("--line-rate", help="a bottleneck inside the delay line, sender to receiver (e.g. 1gbit): a "
                    "remote port, which a local tbf is not (TCP Small Queues keep it nearly empty)")
    ap.add_argument("--line-limit", type=int, default=6_000_000, help="that bottleneck's buffer, bytes")
    ap.add_argument("--burst", default="200kb", help="the tbf's bucket (tc's units)")
    ap.add_argument("--limit", default="16mb", help="the tbf's queue (tc's units)")
    ap.add_argument("--rmem-default", type=int, default=87380, help="tcp_rmem's default value (both hosts)")
    ap.add_argument("--wmem-default", type=int, default=16384, help="the sender's tcp_wmem default value")
    ap.add_argument("--tcp-rmem", help='tcp_rmem on both hosts, e.g. "8192 87380 16777216" (overrides --rmem-default)')
    ap.add_argument("--tcp-wmem", help="tcp_wmem on both hosts (overrides --wmem-default)")
    ap.add_argument("--mtu", type=int, default=9000)
    ap.add_argument("--streams", type=int, default=1, help="parallel streams (iperf3 -P)")
    ap.add_argument("--cc", default="cubic", help="congestion control (iperf3 -C)")
    ap.add_argument("--fq-rate", help="each stream's pacing cap (iperf3 --fq-rate, e.g. 240M)")
    ap.add_argument("--sample-ms", type=int, default=0,
                    help="sample ss -tinm on both ends every this many ms through the run (0: only at the end)")
    ap.add_argument("--pcap", help="capture the receiver's TUN (headers) into PCAP-<run>.pcap for --pcap-seconds")
    ap.add_argument("--pcap-seconds", type=int, default=20)
    ap.add_argument("--seconds", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    runs = []
    try:
        delayline = build_delayline()
        for k in range(args.repeat):
            r = one_run(args, delayline, k)
            runs.append(r)
            limited = [(s.get("rwnd_limited"), s.get("sndbuf_limited")) for s in r["ss_sender"]]
            print(f"run {k}: {r['received_mbps']} Mbit/s received; received {r['received_mbps_per_s']} Mbit/s per "
                  f"second, written {r['written_mbps_per_s']}, {r['retransmits']} retransmits "
                  f"{r['retransmits_per_s']}, wscale {r['wscale']}, (rwnd, sndbuf)_limited {limited}, "
                  f"RcvQDrop {r['nstat']['receiver']['TcpExtTCPRcvQDrop']}"
                  + (f", window after the first flight {r['first_window']}, DRS first grew at flight "
                     f"{r['drs_first_flight']}" if "first_window" in r else ""), flush=True)
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
