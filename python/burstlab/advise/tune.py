"""`burstlab tune`: host settings for a path, each backed by a simulated before/after.

The settings are sized from the path's bandwidth-delay product (BDP) with the kernel's own
accounting, then every change is replayed, cumulatively, on a dumbbell twin (twin.dumbbell_toml)
of the untuned host: a change the simulation shows hurting is left out of the advice.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from burstlab.advise import twin as tw
from burstlab.advise import units
from burstlab.advise.explain import fmt_bytes
from burstlab.advise.twin import rcvbuf_tuning
from burstlab.advise.units import FlagError

#: Linux's defaults, the "before" host: net.ipv4.tcp_rmem / tcp_wmem as tcp_init() sets them
#: (net/ipv4/tcp.c; Documentation/networking/ip-sysctl.rst), the simulator's defaults too.
LINUX_TCP_RMEM = (4096, 131072, 6291456)
LINUX_TCP_WMEM = (4096, 16384, 4194304)
#: TCP_INIT_CWND, include/net/tcp.h (RFC 6928).
LINUX_INITCWND = 10
#: The receive window is space * scaling_ratio >> TCP_RMEM_TO_WIN_SCALE (tcp_win_from_space(),
#: include/net/tcp.h, Linux >= 6.6), the ratio starting at TCP_DEFAULT_SCALING_RATIO, one half;
#: before 6.6 space - (space >> tcp_adv_win_scale), also one half at the default scale 1. The
#: send side is alike: tcp_sndbuf_expand() (net/ipv4/tcp_input.c) asks for 2 * cwnd * per-MSS
#: truesize. So a socket needs twice the window it must offer.
BUFFER_PER_WINDOW = 2
#: Window scale <= 14 (RFC 7323 §2.3, TCP_MAX_WSCALE in include/net/tcp.h): 1 GiB of window.
MAX_WINDOW = 65535 << 14
#: The sysctls are ints: tcp_rmem's third value and rmem_max top out at INT_MAX.
SYSCTL_INT_MAX = 2**31 - 1
#: AmLight's 209 ms, 100 Gbit/s study found initcwnd 1000 gave the best FCT and larger values
#: retransmissions or a stall (seed 000; /work/shared/reference/seed-targets.md §1).
MAX_INITCWND = 1000
#: fq's maxrate is a u32 of bytes per second (TCA_FQ_FLOW_MAX_RATE, net/sched/sch_fq.c; tc-fq(8)):
#: 2^32 - 1 B/s, 34.36 Gbit/s. Faster caps go through SO_MAX_PACING_RATE (64-bit).
FQ_MAXRATE_MAX_BPS = (2**32 - 1) * 8
#: Pace a faster sender below the receiver's rate, as ESnet found for 100G -> 10G (seed 002:
#: "reduce the available bandwidth to achieve performance"): this share of the path per stream.
PACE_SHARE = 0.9
#: Above this RTT (ms) MTU 9000 and H-TCP/BBR matter most (seed 001); below, jumbo is advised only
#: when the path gives it.
JUMBO_MTU = 9000
#: A change is kept unless the simulation shows it lengthening the FCT by more than this share.
HURT_SHARE = 0.02
#: Simulated transfers stop at this many segments in all, so a tune finishes in seconds.
MAX_SEGMENTS = 200_000
#: Parallel streams the twin simulates, each a flow of its own.
MAX_STREAMS = 128
#: Congestion controls compared: Linux's default and the two ESnet recommends (fasterdata).
CCAS = ("cubic", "htcp", "bbr")


@dataclass(frozen=True)
class Burst:
    """An expected burst across the bottleneck: `rate_bps` for `duration_s`."""

    rate_bps: float
    duration_s: float
    text: str


def parse_burst(text: str) -> Burst:
    """`RATE:DURATION`, e.g. "25Gbps:100ms"."""
    rate, sep, duration = text.partition(":")
    if not sep:
        raise FlagError(f"--burst {text!r}: expected RATE:DURATION, such as '25Gbps:100ms'")
    try:
        return Burst(units.rate_bps("--burst", rate), units.seconds("--burst", duration), text)
    except FlagError:
        raise FlagError(f"--burst {text!r}: expected RATE:DURATION, such as '25Gbps:100ms'") from None


@dataclass
class Change:
    """One recommendation: what it sets on the host, and what the twin changes to show it."""

    name: str
    why: str
    sysctl: dict[str, str] = field(default_factory=dict)
    commands: list[str] = field(default_factory=list)
    #: twin what-if keys (flow or path keys of twin.what_if_overrides); none: not simulated.
    twin: dict[str, str] = field(default_factory=dict)
    #: several alternatives to simulate, the best kept (congestion control).
    choices: dict[str, dict[str, str]] = field(default_factory=dict)


def _pow2_at_least(n: float) -> int:
    return 1 << max(0, math.ceil(math.log2(max(1.0, n))))


def window_bound_bps(buffer_bytes: int, rtt_s: float) -> float:
    """The most a receive buffer of `buffer_bytes` lets one stream carry: its window per RTT."""
    return buffer_bytes / BUFFER_PER_WINDOW * 8 / rtt_s


def figures(rate_bps: float, rtt_s: float, mtu: int, streams: int) -> dict[str, Any]:
    """The BDP and the buffers it needs per socket."""
    mss = mtu - tw.TCP_IP_OVERHEAD
    bdp = rate_bps * rtt_s / 8
    window = math.ceil(bdp / streams)
    buffer = min(SYSCTL_INT_MAX, max(LINUX_TCP_RMEM[2], _pow2_at_least(BUFFER_PER_WINDOW * window)))
    return {"mss": mss, "bdp_bytes": bdp, "window_bytes": window, "buffer_bytes": buffer,
            "window_capped": window > MAX_WINDOW}


def plan(rate_bps: float, rtt_s: float, mtu: int, host_rate_bps: float, streams: int,
         dev: str, keep: tuple[int, int] = (0, 0), ccas: Sequence[str] = CCAS) -> tuple[dict[str, Any], list[Change]]:
    """The changes, in the order they are applied and simulated. `keep` is the host's own
    tcp_rmem and tcp_wmem maxima: advice never lowers them (a 6.18 host ships 32 MiB of rmem);
    `ccas` the congestion controls compared."""
    f = figures(rate_bps, rtt_s, mtu, streams)
    mss, buf = f["mss"], f["buffer_bytes"]
    changes = []
    rbuf, wbuf = max(buf, keep[0]), max(buf, keep[1])
    rmem, wmem = (LINUX_TCP_RMEM[0], LINUX_TCP_RMEM[1], rbuf), (LINUX_TCP_WMEM[0], LINUX_TCP_WMEM[1], wbuf)
    changes.append(Change(
        "socket buffers",
        f"BDP {fmt_bytes(f['bdp_bytes'])} ({rate_bps / 1e9:.4g} Gbit/s x {rtt_s * 1e3:.4g} ms), "
        f"{fmt_bytes(f['window_bytes'])} per stream; the kernel offers about half a buffer as window "
        "(tcp_win_from_space(), include/net/tcp.h) and both ends must grow: the receiver's rmem sets the "
        "window, the sender's wmem the bytes in flight (GRNET)",
        sysctl={"net.core.rmem_max": str(rbuf), "net.core.wmem_max": str(wbuf),
                "net.ipv4.tcp_rmem": " ".join(map(str, rmem)), "net.ipv4.tcp_wmem": " ".join(map(str, wmem))},
        twin={"tcp_rmem": " ".join(map(str, rmem)), "tcp_wmem": " ".join(map(str, wmem)), "rmem_max": str(rbuf)}))
    changes.append(Change(
        "tcp_adv_win_scale",
        "kernels <= 6.5 only (6.6 measures the skb truesize ratio instead): keep the default 1, which the "
        "buffer sizes above assume (half the buffer is window)",
        sysctl={"net.ipv4.tcp_adv_win_scale": "1"}))
    changes.append(Change(
        "congestion control", f"the best FCT of {', '.join(ccas)} in the twin",
        choices={cca: {"cca": cca} for cca in ccas}))
    pace = rate_bps * PACE_SHARE / streams if host_rate_bps > rate_bps else None
    fq = Change("fq", "fair queueing paces each flow (sch_fq.c), smoothing the bursts a sender's "
                "TSO and slow start put on the path", sysctl={"net.core.default_qdisc": "fq"},
                commands=[f"tc qdisc replace dev {dev} root fq"], twin={"qdisc": "fq"})
    if pace is not None:
        fq.name = "fq and pacing"
        fq.why += (f"; the host ({host_rate_bps / 1e9:.4g} Gbit/s) outruns the path ({rate_bps / 1e9:.4g} "
                   f"Gbit/s), so each of {streams} stream(s) is paced at {PACE_SHARE:.0%} of its share, "
                   "below the receiver's rate (ESnet)")
        if pace <= FQ_MAXRATE_MAX_BPS:
            fq.commands = [f"tc qdisc replace dev {dev} root fq maxrate {_tc_rate(pace)}"]
            fq.twin["fq_maxrate"] = f"{pace / 1e6:.6g}Mbps"
        else:
            fq.commands = [f"# {_tc_rate(pace)} per flow is above fq's maxrate limit (u32 bytes/s, 34.36 Gbit/s, "
                           "sch_fq.c): set SO_MAX_PACING_RATE in the application instead, e.g. "
                           f"iperf3 --fq-rate {_tc_rate(pace)}", f"tc qdisc replace dev {dev} root fq"]
            fq.twin["max_pacing_rate"] = f"{pace / 1e6:.6g}Mbps"
    changes.append(fq)
    packets = math.ceil(f["window_bytes"] / mss)
    initcwnd = min(MAX_INITCWND, max(LINUX_INITCWND, packets))
    if initcwnd > LINUX_INITCWND:
        # The receiver's first window is bounded by its initial buffer, tcp_rmem's middle value.
        mid = min(buf, max(LINUX_TCP_RMEM[1], _pow2_at_least(BUFFER_PER_WINDOW * initcwnd * mss)))
        rmem = (LINUX_TCP_RMEM[0], mid, rbuf)
        changes.append(Change(
            "initcwnd",
            f"the window holds {packets:,} segments of {mss} bytes; start at {initcwnd} (AmLight: 1000 best at "
            "209 ms, larger harmful), with initrwnd to match and tcp_rmem's middle value to hold it",
            sysctl={"net.ipv4.tcp_rmem": " ".join(map(str, rmem))},
            # `ip route show ... dev X` leaves out "dev X": it is given again.
            commands=[f"ip route change $(ip route show default dev {dev} | head -1) dev {dev} initcwnd {initcwnd} "
                      f"initrwnd {initcwnd}"],
            twin={"initcwnd": str(initcwnd), "initrwnd": str(initcwnd), "tcp_rmem": " ".join(map(str, rmem))}))
    changes.append(Change(
        "tcp_no_metrics_save", "do not start a connection from the ssthresh a previous one to this host "
        "cached after a loss (net/ipv4/tcp_metrics.c)", sysctl={"net.ipv4.tcp_no_metrics_save": "1"}))
    return f, changes


def mtu_change(mtu: int, dev: str) -> Change:
    return Change("MTU", f"the path carries {mtu}-byte packets: fewer per window and per loss recovery "
                  "(ESnet: 3x a single stream on 100G hosts); probe for black holes (RFC 4821)",
                  sysctl={"net.ipv4.tcp_mtu_probing": "1"}, commands=[f"ip link set dev {dev} mtu {mtu}"],
                  twin={"mtu": str(mtu)})


def _tc_rate(bps: float) -> str:
    for unit, scale in (("gbit", 1e9), ("mbit", 1e6), ("kbit", 1e3)):
        if bps >= scale:
            return f"{bps / scale:.4g}{unit}"
    return f"{bps:.0f}bit"


def tune(
    *,
    rate: str,
    rtt: str,
    mtu: int = 1500,
    host_rate: str | None = None,
    streams: int = 1,
    bursts: Sequence[str] = (),
    size: str | None = None,
    buffer: str | None = None,
    dev: str = "eth0",
    tbf: bool = False,
    tcp_rmem: str | None = None,
    tcp_wmem: str | None = None,
    cca: str | None = None,
    kernel: str | None = None,
    rmem_max: str | None = None,
    cpu: str | None = None,
    skb_scaling_ratio: int | None = None,
    ccas: Sequence[str] = CCAS,
    progress: Callable[[int, int, str], None] | None = None,
) -> dict[str, Any]:
    """Recommend host settings for a path and replay each on its twin (the CLI's `--json`).

    `rate`, `rtt`, `host_rate` (default: the path's rate), `size` and `buffer` take units;
    `bursts` are "RATE:DURATION". With `tbf` the bottleneck is a Linux tbf between hosts on
    veth pairs (`buffer` is its limit), as `explain --tbf` has it. The "before" is the host as
    it is: `tcp_rmem`, `tcp_wmem` (the sysctls' three numbers), `cca` and the receiving
    `kernel`'s release (its receive-buffer auto-tuning), each Linux's default when None; the
    receiver's `rmem_max` (default: its `tcp_rmem` max), the hosts' `cpu` profile and the
    receiver's `skb_scaling_ratio` describe the machine as explain_iperf3's do. `ccas`
    are the congestion controls the host can load (its tcp_available_congestion_control, or
    what its kernel was built with), compared in the twin.
    `progress(done, total, what)` is called before each simulation.
    """
    rate_bps = units.rate_bps("--rate", rate)
    rtt_s = units.seconds("--rtt", rtt)
    host_bps = units.rate_bps("--host-rate", host_rate) if host_rate else rate_bps
    if host_bps < rate_bps:
        raise FlagError(f"--host-rate {host_rate!r}: expected at least --rate {rate!r} (a host slower than "
                        "the path is the path's bottleneck: give it as --rate)")
    if not 576 <= mtu <= 65535:
        raise FlagError(f"--mtu {mtu}: expected an MTU from 576 to 65535 bytes, such as 9000")
    if not 1 <= streams <= MAX_STREAMS:
        raise FlagError(f"--streams {streams}: expected 1 to {MAX_STREAMS} (each is a simulated flow)")
    parsed = [parse_burst(b) for b in bursts]
    buffer_bytes = units.size_bytes("--buffer", buffer) if buffer else None
    if cca is not None and cca not in (*CCAS, "reno"):
        raise FlagError(f"--cca {cca!r}: expected the host's congestion control, one of {', '.join(CCAS)}, reno")
    unknown = [c for c in ccas if c not in CCAS]
    if unknown or not ccas:
        raise FlagError(f"--ccas {','.join(ccas)!r}: expected some of {', '.join(CCAS)} (the congestion controls "
                        "the host can load and tune compares)")
    if kernel is not None and not re.match(r"\d+\.\d+", kernel):
        raise FlagError(f"--kernel {kernel!r}: expected the receiver's kernel release, such as '6.18.4' (uname -r)")
    now = tw.Hosts(cca=cca or "cubic", tcp_rmem=units.triple("--tcp-rmem", tcp_rmem) if tcp_rmem else None,
                   tcp_wmem=units.triple("--tcp-wmem", tcp_wmem) if tcp_wmem else None, cpu=cpu,
                   skb_scaling_ratio=skb_scaling_ratio,
                   rmem_max=units.size_bytes("--rmem-max", rmem_max) if rmem_max else None)
    if now.tcp_rmem and now.rmem_max is None:
        now = replace(now, rmem_max=now.tcp_rmem[2])
    f, changes = plan(rate_bps, rtt_s, mtu, host_bps, streams, dev,
                      keep=((now.tcp_rmem or (0, 0, 0))[2], (now.tcp_wmem or (0, 0, 0))[2]), ccas=ccas)
    base_mtu = min(mtu, 1500)
    if mtu > base_mtu:
        # Before initcwnd, whose segments are the MTU's.
        at = next(i for i, c in enumerate(changes) if c.name in ("initcwnd", "tcp_no_metrics_save"))
        changes.insert(at, mtu_change(mtu, dev))
    # Slow start from 10 segments doubles each RTT up to the window; bursts come after it.
    ramp = rtt_s * (2 + math.log2(max(2.0, f["window_bytes"] / f["mss"] / LINUX_INITCWND)))
    busy_s = ramp + sum(b.duration_s + 2 * rtt_s for b in parsed)
    total = units.size_bytes("--size", size) if size else _default_size(rate_bps, rtt_s, base_mtu, busy_s)
    if total < streams * f["mss"]:
        raise FlagError(f"--size {size!r}: expected at least one segment per stream ({streams * f['mss']} bytes)")
    path = tw.Path(rate_bps, rtt_s, base_mtu, buffer_bytes, tbf=tbf, host_rate_bps=host_bps)
    rmem_now = now.tcp_rmem or LINUX_TCP_RMEM
    wmem_now = now.tcp_wmem or LINUX_TCP_WMEM
    slowest = min(rate_bps, streams * min(rmem_now[2], wmem_now[2]) / 2 * 8 / rtt_s)
    stop_s = max(60.0, 4 * total * 8 / slowest + 20 * rtt_s) + sum(b.duration_s for b in parsed)
    toml = tw.dumbbell_toml("burstlab tune", path, now, streams=streams, bytes_each=total // streams,
                            cca=now.cca, stop_s=stop_s, rcvbuf_tuning=rcvbuf_tuning(kernel))
    conditions = {"no bursts": toml}
    if parsed:
        # After slow start, but within every run: none ends before the transfer at the path's
        # rate plus an RTT. In slow start a flight leaves each round trip (data from one RTT on),
        # so the first burst straddles a round's start, where every run has packets in flight.
        first = parsed[0].duration_s
        rounds = max(2, math.floor(min(ramp, 0.5 * (total * 8 / rate_bps + rtt_s)) / rtt_s))
        burst_start_s = max(rtt_s, rounds * rtt_s - first / 2)
        conditions["with bursts"] = toml + _bursts_toml(parsed, start_s=burst_start_s)
    top_burst = max((b.rate_bps for b in parsed), default=0.0)
    extra = {"topology.burst_link_rate": f"{max(host_bps, top_burst) / 1e6:.6g}Mbps"} if parsed else {}
    simulated = [c for c in changes if c.twin or c.choices]
    runs = len(conditions) * (1 + sum(max(1, len(c.choices) - 1) for c in simulated))
    done = 0

    def overrides(keys: dict[str, str]) -> dict[str, str]:
        sets = dict(extra)
        for k, v in keys.items():
            sets.update(tw.what_if_overrides(f"{k}={v}", streams, tbf=tbf))
        return sets

    def replay(label: str, keys: dict[str, str]) -> dict[str, dict[str, Any]]:
        nonlocal done
        out = {}
        sets = overrides(keys)
        for name, text in conditions.items():
            if progress:
                progress(done, runs, f"{label}, {name}")
            done += 1
            out[name] = tw.replay(text, sets).as_json()
        return out

    decide = "with bursts" if parsed else "no bursts"
    applied: dict[str, str] = {}
    before = replay("the host as it is" if now != tw.Hosts(cca="cubic") else "Linux defaults", applied)
    baseline = before
    rows = []
    for change in changes:
        if not (change.twin or change.choices):
            rows.append(_row(change, None, None, kept=True))
            continue
        if change.choices:
            current = applied.get("cca", now.cca)
            tried = {name: before if name == current else replay(f"{change.name}: {name}", {**applied, **keys})
                     for name, keys in change.choices.items()}
            best = min(tried, key=lambda n: tried[n][decide]["fct_s"])
            change.twin = change.choices[best]
            change.sysctl = {"net.ipv4.tcp_congestion_control": best}
            change.commands = [f"modprobe tcp_{best}"] if best != "cubic" else []
            change.why += f": {best} (" + ", ".join(f"{n} {tried[n][decide]['fct_s']:.3f} s" for n in tried) + ")"
            after = tried[best]
        else:
            after = replay(change.name, {**applied, **change.twin})
        kept = after[decide]["fct_s"] <= before[decide]["fct_s"] * (1 + HURT_SHARE)
        rows.append(_row(change, before, after, kept=kept))
        if kept:
            applied.update(change.twin)
            before = after
    if progress:
        progress(runs, runs, "done")
    kept_changes = [c for c, r in zip(changes, rows) if r["kept"]]
    return {
        "path": {"rate_bps": rate_bps, "rtt_s": rtt_s, "mtu": mtu, "host_rate_bps": host_bps, "streams": streams,
                 "bursts": [{"rate_bps": b.rate_bps, "duration_s": b.duration_s} for b in parsed],
                 "buffer_bytes": buffer_bytes, "transfer_bytes": total,
                 "burst_start_s": burst_start_s if parsed else None, "tbf": tbf},
        "host": {"cca": now.cca, "tcp_rmem": list(rmem_now), "tcp_wmem": list(wmem_now),
                 "rcvbuf_tuning": rcvbuf_tuning(kernel), "rmem_max": now.rmem_max, "cpu": now.cpu,
                 "skb_scaling_ratio": now.skb_scaling_ratio},
        "figures": f,
        "changes": rows,
        "sysctl": _merged(kept_changes),
        "sysctl_conf": sysctl_conf(kept_changes),
        "commands": [cmd for c in kept_changes for cmd in c.commands],
        "before": baseline,
        "after": before,
        "scenario": toml,
        # The --set overrides that make `scenario` the host before and after the kept advice.
        "twin_sets": {"before": overrides({}), "after": overrides(applied)},
        "notes": _notes(f, mtu, rate_bps, streams),
    }


def replay_timed(result: dict[str, Any], seconds: float, over_s: float | None = None) -> dict[str, dict[str, Any]]:
    """`tune`'s twin of the host before and after its kept advice (no bursts), measured as
    `iperf3 -t SECONDS` measures a real run: each stream sends for `seconds` and its throughput
    is what arrived by then (twin.replay). tune's own figures time a transfer of
    `transfer_bytes` to its last byte, so a loss at the very end of the transfer that waits for
    the RTO is in them, and not in iperf3's. `over_s`: the receiver's seconds, when they
    outlast the sender's (twin.replay)."""
    sets = result["twin_sets"]
    return {side: tw.replay(result["scenario"], sets[side], seconds=seconds, over_s=over_s).as_json()
            for side in ("before", "after")}


def _row(change: Change, before: dict | None, after: dict | None, *, kept: bool) -> dict[str, Any]:
    return {"change": change.name, "why": change.why, "sysctl": change.sysctl, "commands": change.commands,
            "twin": change.twin, "simulated": before is not None, "before": before, "after": after, "kept": kept}


def _merged(changes: Sequence[Change]) -> dict[str, str]:
    out: dict[str, str] = {}
    for c in changes:
        out.update(c.sysctl)
    return out


def sysctl_conf(changes: Sequence[Change]) -> str:
    """A sysctl.conf fragment of the kept changes (later values of a key win)."""
    lines = ["# burstlab tune: copy to /etc/sysctl.d/90-burstlab.conf, then: sysctl --system"]
    for key, value in _merged(changes).items():
        lines.append(f"{key} = {value}")
    return "\n".join(lines) + "\n"


def _default_size(rate_bps: float, rtt_s: float, mtu: int, busy_s: float) -> int:
    """Long enough to leave slow start and meet the bursts (a second, 20 RTTs, or slow start and
    the bursts, at the path's rate), capped by segments."""
    seconds = max(1.0, 20 * rtt_s, 2 * busy_s)
    return int(min(rate_bps * seconds / 8, MAX_SEGMENTS * (mtu - tw.TCP_IP_OVERHEAD)))


def _bursts_toml(bursts: Sequence[Burst], *, start_s: float) -> str:
    lines = []
    t = start_s
    for b in bursts:
        lines += ["", "[[burst]]", f'rate = "{b.rate_bps / 1e6:.6g}Mbps"', f'start = "{t * 1e6:.0f}us"',
                  f'duration = "{b.duration_s * 1e6:.0f}us"']
        t += b.duration_s + 0.05
    return "\n".join(lines) + "\n"


def _notes(f: dict[str, Any], mtu: int, rate_bps: float, streams: int) -> list[str]:
    notes = ["simulated on a dumbbell twin; tcp_adv_win_scale, tcp_no_metrics_save and tcp_mtu_probing are "
             "not modelled by the simulator and are advised without a simulated figure"]
    if f["window_capped"]:
        notes.append(f"the window per stream ({f['window_bytes'] / 2**30:.3g} GiB) exceeds TCP's 1 GiB "
                     f"(window scale 14, RFC 7323): use more than {streams} stream(s)")
    if mtu < JUMBO_MTU and rate_bps >= 10e9:
        notes.append(f"MTU {mtu}: if every hop carries 9000-byte frames, jumbo frames help at 10 Gbit/s and above "
                     "(ESnet: a single stream 3x faster on 100G hosts); rerun with --mtu 9000")
    return notes


def to_html(result: dict[str, Any]) -> str:
    """One `tune` result as a self-contained page in the reports' style (advise.page)."""
    from burstlab import __version__
    from burstlab.advise.explain import fmt_rate
    from burstlab.advise.page import document
    from burstlab.report.page import Section, Table
    from burstlab.report.render import _e

    p, f = result["path"], result["figures"]
    rows = []
    for row in result["changes"]:
        verdict = "yes" if row["kept"] else "no: simulated worse"
        if not row["simulated"]:
            rows.append([row["change"], "not simulated", "", "", "", "", "", "", verdict])
            continue
        for case, b in row["before"].items():
            a = row["after"][case]
            rows.append([row["change"], case, b["fct_s"], a["fct_s"], fmt_rate(b["throughput_bps"]),
                         fmt_rate(a["throughput_bps"]), b["retransmits"], a["retransmits"], verdict])
    evidence = Section("evidence", "Simulated before and after", table=Table(
        ["change", "case", "FCT before s", "FCT after s", "throughput before", "after", "retransmits before",
         "after", "advised"], rows, [False, False, True, True, True, True, True, True, False]),
        note="Each change on top of those kept before it, from Linux's defaults, on a dumbbell twin of the path.")
    why = Section("why", "Why each change", table=Table(
        ["change", "why"], [[row["change"], row["why"]] for row in result["changes"]], [False, False]))
    settings = Section("settings", "Settings", table=Table(
        ["sysctl (/etc/sysctl.d/90-burstlab.conf)", "value"], [[k, v] for k, v in result["sysctl"].items()],
        [False, False]), note="Commands: " + " ; ".join(result["commands"]) if result["commands"] else "")
    head = (f"<h1>burstlab tune: {_e(fmt_rate(p['rate_bps']))}, {p['rtt_s'] * 1e3:.4g} ms</h1>"
            f"<p class=small>MTU {p['mtu']} · host {_e(fmt_rate(p['host_rate_bps']))} · {p['streams']} stream(s) · "
            f"BDP {_e(fmt_bytes(f['bdp_bytes']))} · transfer {_e(fmt_bytes(p['transfer_bytes']))} · "
            f"burstlab {_e(__version__)}</p>" + "".join(f"<p class=note>{_e(n)}</p>" for n in result["notes"]))
    return document(f"burstlab tune: {fmt_rate(p['rate_bps'])}, {p['rtt_s'] * 1e3:.4g} ms", head,
                    [settings, evidence, why])
