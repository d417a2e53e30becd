"""The simulated twin of an iperf3 run: a dumbbell with the path the user gives (`rtt`, `rate`,
`mtu`, `buffer`, or a Linux `tbf` bottleneck) and a flow per iperf3 stream that carries what
the run sent, with the congestion control, segment size and socket buffers the JSON reports or
the flags set. Replayed with :func:`burstlab.run`; what-ifs rerun it with one change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from burstlab.advise.iperf3 import Iperf3Run
from burstlab.errors import BurstlabError

#: IP and TCP headers with timestamps: the MTU a segment size implies (`tcp_mtu_to_mss()`
#: less TCPOLEN_TSTAMP_ALIGNED, as validate.compare.TCP_IP_OVERHEAD).
TCP_IP_OVERHEAD = 52
#: Hosts' links in the twin, relative to the bottleneck: fast enough never to be the limit.
HOST_RATE_FACTOR = 10
#: Flow keys a what-if may name without a path (they apply to every flow of the twin).
FLOW_KEYS = frozenset({
    "cca", "tcp_rmem", "tcp_wmem", "rmem_max", "tcp_adv_win_scale", "initcwnd", "initrwnd", "rto_min",
    "quickack", "max_pacing_rate", "gso_max_size", "qdisc", "fq_maxrate", "read_latency", "ecn",
    "cpu", "sender_cpu", "receiver_cpu", "skb_scaling_ratio",
})
#: What-if names for topology keys.
TOPOLOGY_KEYS = {"rtt": "rtt", "buffer": "buffer", "mtu": "mtu", "rate": "bottleneck_rate",
                 "tbf_rate": "tbf_rate", "tbf_limit": "tbf_limit", "tbf_burst": "tbf_burst"}


def rcvbuf_tuning(kernel: str | None) -> str | None:
    """The receive-buffer auto-tuning (`rcvbuf_tuning`) of a kernel release such as
    "6.18.44-fc-v595": "6.18" from 6.18 on, else None (the simulator's 6.6-6.15 model; 6.16 and
    6.17 had a form of their own, not modelled)."""
    try:
        major, minor = (int(x) for x in (kernel or "").split(".")[:2])
    except ValueError:
        return None
    return "6.18" if (major, minor) >= (6, 18) else None



class WhatIfError(BurstlabError, ValueError):
    """A --what-if that is not KEY=VALUE or names no key of the twin."""


@dataclass(frozen=True)
class Path:
    """The path the twin runs on. With `tbf` the bottleneck is a Linux `tbf` (rate, bucket,
    byte limit) between namespaces joined by veth pairs, as `burstlab validate` builds it;
    otherwise a switch queue of `buffer` bytes at `rate_bps`."""

    rate_bps: float
    rtt_s: float
    mtu: int
    buffer_bytes: int | None = None
    tbf: bool = False
    tbf_burst_bytes: int | None = None
    #: The hosts' links; None: HOST_RATE_FACTOR times the bottleneck.
    host_rate_bps: float | None = None


@dataclass(frozen=True)
class Hosts:
    """Host settings the twin's flows get (None: the simulator's defaults)."""

    cca: str | None = None
    tcp_rmem: tuple[int, int, int] | None = None
    tcp_wmem: tuple[int, int, int] | None = None
    #: net.core.rmem_max: with tcp_rmem[2] it sets the receiver's window scale
    #: (tcp_select_initial_window()), so the unit its windows are rounded up to.
    rmem_max: int | None = None
    #: Both hosts' CPU, a profile of docs/scenarios.md ("veth-this-machine", "server-100g").
    cpu: str | None = None
    #: The len/truesize ratio (of 256) the receiving host's first full-sized skb measures.
    skb_scaling_ratio: int | None = None


@dataclass(frozen=True)
class Replay:
    throughput_bps: float
    fct_s: float
    retransmits: int
    drops: int

    def as_json(self) -> dict[str, Any]:
        return {"throughput_bps": self.throughput_bps, "fct_s": self.fct_s,
                "retransmits": self.retransmits, "drops": self.drops}


def path_from(run: Iperf3Run, *, rtt_s: float | None, rate_bps: float | None, mtu: int | None,
              buffer_bytes: int | None = None, tbf: bool = False) -> tuple[Path, list[str]]:
    """The twin's path: the flags where given, else what the JSON tells (the least RTT the
    sender measured, the path MTU, the fastest interval's rate), each such guess noted."""
    notes = []
    if rtt_s is None:
        if not run.min_rtt_us:
            raise BurstlabError(f"{run.path}: the JSON has no min_rtt (iperf3 < 3.1 or a receiver's "
                                "view): give the path's round-trip time with --rtt, e.g. --rtt 20ms")
        rtt_s = run.min_rtt_us / 1e6
        notes.append(f"RTT {run.min_rtt_us:.0f} µs: the least the sender measured (end.streams[].sender.min_rtt)")
    if mtu is None:
        mtu = run.pmtu or (run.mss + TCP_IP_OVERHEAD if run.mss else 1500)
        notes.append(f"MTU {mtu} bytes: from the JSON ({'pmtu' if run.pmtu else 'tcp_mss_default + 52'})")
    if rate_bps is None:
        rate_bps = max(iv.bits_per_second for iv in run.intervals)
        notes.append(f"rate {rate_bps / 1e6:.4g} Mbit/s: the fastest interval (give --rate for the path's own)")
    return Path(rate_bps, rtt_s, mtu, buffer_bytes, tbf), notes


def scenario_toml(run: Iperf3Run, path: Path, hosts: Hosts) -> str:
    """The twin as scenario TOML (docs/scenarios.md)."""
    streams = max(1, run.num_streams)
    # The receiver's window grows as its kernel's auto-tuning grows it (6.18 differs).
    return dumbbell_toml(f"twin of {run.path}", path, hosts, streams=streams,
                         bytes_each=max(1, run.sent_bytes // streams), cca=run.cca,
                         stop_s=max(60.0, 20 * run.seconds), rcvbuf_tuning=rcvbuf_tuning(run.receiver_kernel))


def dumbbell_toml(name: str, path: Path, hosts: Hosts, *, streams: int, bytes_each: int, cca: str | None,
                  stop_s: float, rcvbuf_tuning: str | None = None) -> str:
    """A dumbbell on `path` with `streams` flows of `bytes_each`, as scenario TOML."""
    name = name.replace("\\", "/").replace('"', "'")
    rate_mbps = path.rate_bps / 1e6
    host_mbps = path.host_rate_bps / 1e6 if path.host_rate_bps else rate_mbps * HOST_RATE_FACTOR
    lines = [f'name = "{name}"', f'stop = "{stop_s:.0f}s"', "", "[topology]"]
    if path.tbf:
        host = f"{host_mbps:.6g}Mbps"
        lines += [f'bottleneck_rate = "{host}"', f'host_rate = "{host}"', "veth = true",
                  f'tbf_rate = "{rate_mbps:.6g}Mbps"', f'tbf_burst = "{_tbf_burst(path)}B"']
        if path.buffer_bytes is not None:
            lines.append(f'tbf_limit = "{path.buffer_bytes}B"')
    else:
        lines += [f'bottleneck_rate = "{rate_mbps:.6g}Mbps"', f'host_rate = "{host_mbps:.6g}Mbps"']
        if path.buffer_bytes is not None:
            lines.append(f'buffer = "{path.buffer_bytes}B"')
    lines += [f'rtt = "{path.rtt_s * 1e6:.6g}us"', f"mtu = {path.mtu}"]
    for _ in range(streams):
        lines += ["", "[[flow]]", f'cca = "{hosts.cca or cca or "cubic"}"', f'size = "{bytes_each}B"']
        if hosts.tcp_rmem:
            lines.append(f'tcp_rmem = "{" ".join(map(str, hosts.tcp_rmem))}"')
        if hosts.tcp_wmem:
            lines.append(f'tcp_wmem = "{" ".join(map(str, hosts.tcp_wmem))}"')
        if hosts.rmem_max:
            lines.append(f"rmem_max = {hosts.rmem_max}")
        if hosts.cpu:
            lines.append(f'cpu = "{hosts.cpu}"')
        if hosts.skb_scaling_ratio:
            lines.append(f"skb_scaling_ratio = {hosts.skb_scaling_ratio}")
        if rcvbuf_tuning:
            lines.append(f'rcvbuf_tuning = "{rcvbuf_tuning}"')
    return "\n".join(lines) + "\n"


def _tbf_burst(path: Path) -> int:
    from burstlab.validate.topology import default_burst_bytes

    # sch_tbf keeps tc's burst to the byte (TCA_TBF_BURST, tbf_change()).
    return path.tbf_burst_bytes or default_burst_bytes(path.mtu)


#: A time-based twin's flows carry this many bytes each: more than any of them can send before
#: it stops (a petabyte is 4,000 s at 2 Tbit/s), so each is still sending when it is measured.
TIME_BASED_SIZE_BYTES = 10**15


def replay(toml: str, overrides: dict[str, str] | None = None, *, seconds: float | None = None,
           over_s: float | None = None) -> Replay:
    """Run the twin (with `overrides` as `--set` paths) and sum its flows.

    By default each flow carries its `size` and the throughput is what was delivered over the
    last flow's completion time, tail included. With `seconds` the twin is measured as
    `iperf3 -t` measures a run: every flow sends without end, the run stops at `seconds`, and
    the throughput is what the receivers got by then over `seconds`; `fct_s` is `seconds`. A
    loss at a transfer's very end, whose recovery waits for the RTO (no tail-loss probe is
    sent in recovery: tcp_schedule_loss_probe()), then costs nothing, as it costs iperf3 -t
    nothing. `over_s` (with `seconds`, not shorter) divides instead: iperf3's receiver counts
    what arrived over its own seconds, which can outlast the sender's.
    """
    import tomllib

    import burstlab

    sets = dict(overrides or {})
    if seconds is not None:
        if seconds <= 0:
            raise BurstlabError(f"replay seconds={seconds!r}: expected a positive time in seconds, such as 2.0")
        if over_s is not None and over_s < seconds:
            raise BurstlabError(f"replay over_s={over_s!r}: expected at least seconds={seconds!r}")
        sets["stop"] = f"{seconds * 1e6:.0f}us"
        for i in range(len(tomllib.loads(toml).get("flow", []))):
            sets.setdefault(f"flow[{i}].size", f"{TIME_BASED_SIZE_BYTES}B")
    summary = burstlab.run(toml, set=sets or None).summary
    # Burst sources are UDP flows of their own: only the transfer's flows count.
    flows = [f for f in summary["flows"] if f["kind"] == "tcp"]
    delivered = sum(f["delivered_bytes"] for f in flows)
    drops = sum(p.get("drops", 0) + p.get("tbf_drops", 0) for p in summary.get("ports", []))
    retransmits = sum(f["retransmits"] for f in flows)
    if seconds is not None:
        over = over_s or seconds
        return Replay(delivered * 8 / over, over, retransmits, drops)
    if any(f.get("fct_s") is None for f in flows):
        total = sum(f.get("size_bytes") or 0 for f in flows)
        raise BurstlabError(f"the twin did not finish in its stop time ({delivered:,} of {total:,} bytes delivered"
                            f"{' with ' + ', '.join(f'{k}={v}' for k, v in sets.items()) if sets else ''}): "
                            "the path given is far slower than the run; check --rate and --rtt")
    fct = max(f["fct_s"] for f in flows)
    return Replay(delivered * 8 / fct if fct else 0.0, fct, retransmits, drops)


def what_if_overrides(expr: str, flows: int, *, tbf: bool = False) -> dict[str, str]:
    """`KEY=VALUE` as `--set` overrides: a flow key for every flow, a path key on the topology
    (`rate` on the tbf of a tbf twin is `tbf_rate`), or any full `--set` path."""
    key, sep, value = expr.partition("=")
    key, value = key.strip(), value.strip()
    if not sep or not key or not value:
        raise WhatIfError(f"--what-if {expr!r}: expected KEY=VALUE, e.g. 'tcp_rmem=4096 131072 33554432'")
    if "." in key or "[" in key:
        return {key: value}
    if key in FLOW_KEYS:
        return {f"flow[{i}].{key}": value for i in range(flows)}
    if key == "rate" and tbf:
        return {"topology.tbf_rate": value}
    if key == "buffer" and tbf:
        return {"topology.tbf_limit": value}
    if key in TOPOLOGY_KEYS:
        return {f"topology.{TOPOLOGY_KEYS[key]}": value}
    known = ", ".join(sorted([*FLOW_KEYS, *TOPOLOGY_KEYS]))
    raise WhatIfError(f"--what-if {expr!r}: unknown key {key!r}: expected one of {known}, or a --set path "
                      "such as flow[0].initcwnd")
