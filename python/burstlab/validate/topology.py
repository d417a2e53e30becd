"""A dumbbell of network namespaces with a `tbf` bottleneck, built and always torn down.

    sender ns bl-<run>-s0 ─veth─┐
    sender ns bl-<run>-s1 ─veth─┤ router ns bl-<run>-rt ─veth [tbf]─ receiver ns bl-<run>-r0
    ...                         ┘

Every interface is created directly inside its namespace (`ip link add … netns A type veth peer
… netns B`), so nothing appears, even briefly, in the root namespace, and two runs can use the
same interface names and addresses without colliding: only the namespace names are global, and
they carry the pid. The root namespace's settings are never read-modified-written: all sysctls
go through `ip netns exec <ns> sysctl` and all routes through `ip -n <ns>`.

No namespace has a default route or any link out of the dumbbell, so traffic cannot leave it.

Every veth spreads its received packets over the CPUs by flow (RPS over all CPUs), as a NIC's
receive-side scaling does. Without it a veth hands each packet to the backlog of the CPU that
sent it, and a flow whose segments leave from two CPUs (the application's `sendmsg()` on one,
ACK-clocked sends in softirq on the other) arrives out of order: Linux then undoes recoveries,
widens RACK's reordering window and, in one sitting, timed out in a third of single-flow runs.
A flow hashed to one CPU keeps its order, as it would through a real NIC.

Incast (N senders) uses one sender namespace holding N sockets served by one process rather than N
namespaces: per-connection TCP state (cwnd, RTO, retransmissions) is per socket in Linux whatever
the namespace, the only shared per-namespace state is the MIB counters (which we sum anyway) and
the tcp_metrics cache (disabled with `tcp_no_metrics_save=1`), and on a 2-core machine N Python
processes, N veth pairs and a bridge cost more CPU jitter than they add realism. `senders=k`
still builds k sender namespaces for scenarios that want distinct hosts.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import signal
import subprocess
import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from burstlab.validate import host_stalls

#: Every namespace this package creates starts with this prefix; `cleanup_stale` relies on it.
PREFIX = "bl-"
#: `bl-<pid>x<seq>-<role>`: the pid lets `cleanup_stale` tell a crashed run from a live one.
_NAME_RE = re.compile(r"^bl-(\d+)x(\d+)-[a-z0-9]+$")
_NETNS_DIR = Path("/run/netns")
_seq = itertools.count()

#: Sender i sits on 10.201.i.0/24 (.2 the sender, .1 the router), the receiver on 10.202.0.0/24.
SENDER_NET = "10.201"
RECEIVER_NET = "10.202.0"
_HAS_IPV6 = Path("/proc/sys/net/ipv6").exists()  #: a kernel built without IPv6 has nothing to turn off
MAX_SENDERS = 250

#: The veths' MTU unless a dumbbell asks for another (what `ip link add … type veth` gives).
DEFAULT_MTU = 1500
#: What tbf counts on top of an IP packet on a veth (`qdisc_pkt_len`): the 14-byte Ethernet
#: header, no FCS or preamble.
ETH_HEADER_BYTES = 14


def frame_bytes(mtu: int) -> int:
    """The frame of a full `mtu`-byte IP packet, as tbf counts it."""
    return mtu + ETH_HEADER_BYTES


#: The frame of a full packet at the default MTU.
FRAME_BYTES = frame_bytes(DEFAULT_MTU)


def default_burst_bytes(mtu: int = DEFAULT_MTU) -> int:
    """The default bucket: ten full frames. tbf refuses packets larger than the bucket and
    segments GSO super-packets larger than it (tbf_segment in net/sched/sch_tbf.c), so a small
    bucket keeps the byte `limit` counting wire-sized packets rather than 64 KB GSO aggregates."""
    return 10 * frame_bytes(mtu)


DEFAULT_BURST_BYTES = default_burst_bytes()
#: The MTUs a dumbbell accepts: IPv4's least (RFC 791) up to what a veth takes (`VETH_MAX_MTU`).
MIN_MTU, MAX_MTU = 68, 65535


class TopologyError(RuntimeError):
    """An `ip`/`tc`/`sysctl` command failed; the message carries the command and its stderr."""


def run_cmd(argv: Sequence[str], *, timeout: float = 15.0, check: bool = True) -> str:
    """Run one command, return stdout; raise TopologyError with stderr on failure."""
    try:
        proc = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise TopologyError(f"{' '.join(argv)}: {exc}") from exc
    if check and proc.returncode != 0:
        raise TopologyError(f"{' '.join(argv)}: exit {proc.returncode}: {proc.stderr.strip()}")
    return proc.stdout


def list_namespaces(prefix: str = PREFIX) -> list[str]:
    """Names of the namespaces (as `ip netns` sees them) that start with `prefix`."""
    if not _NETNS_DIR.is_dir():
        return []
    return sorted(p.name for p in _NETNS_DIR.iterdir() if p.name.startswith(prefix))


def namespace_pids(ns: str) -> list[int]:
    """Pids of the processes living in namespace `ns` (`ip netns pids`)."""
    out = run_cmd(["ip", "netns", "pids", ns], check=False)
    return [int(tok) for tok in out.split() if tok.isdigit()]


def _kill_namespace_processes(ns: str, grace: float = 1.0) -> None:
    """SIGTERM, then SIGKILL, every process in `ns`: they are ours, we started them there."""
    pids = namespace_pids(ns)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + grace
        while pids and time.monotonic() < deadline:
            pids = [p for p in pids if _alive(p)]
            if pids:
                time.sleep(0.02)
        if not pids:
            return


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie still answers kill(0); it holds no namespace reference, treat it as gone.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[-1][:1] != "Z"
    except OSError:
        return False


def delete_namespace(ns: str) -> None:
    """Kill the processes inside `ns`, then delete it (its veth ends go with it)."""
    _kill_namespace_processes(ns)
    run_cmd(["ip", "netns", "del", ns], check=False)


def cleanup_stale(*, all_runs: bool = False) -> list[str]:
    """Delete `bl-*` namespaces, and the `burstlab-*` ftrace instances (`host_stalls`), left by
    runs whose process is gone; return the names removed.

    A namespace whose name does not parse, or whose owning pid is dead, is stale. With
    `all_runs=True` live runs' namespaces are removed too (only for a machine you own alone).
    """
    removed = []
    for ns in list_namespaces():
        if all_runs or _stale(ns):
            delete_namespace(ns)
            removed.append(ns)
    for inst in host_stalls.stale_instances(lambda pid: pid == os.getpid() or _alive(pid)):
        host_stalls.remove_instance(inst)
        removed.append(f"tracefs instance {inst.name}")
    return removed


#: Namespaces owned by open Dumbbells of this process (so cleanup_stale spares them).
_LIVE: set[str] = set()


def _stale(ns: str) -> bool:
    m = _NAME_RE.match(ns)
    if m is None:
        return True
    pid = int(m.group(1))
    if pid == os.getpid():
        return ns not in _LIVE
    return not _alive(pid)


def rto_min_route_value(rto_min: float) -> str:
    """`ip route … rto_min` takes whole milliseconds (RTAX_RTO_MIN is stored in ms)."""
    ms = round(rto_min * 1000)
    if ms < 1 or abs(ms / 1000 - rto_min) > 1e-9:
        raise ValueError(f"rto_min must be a whole number of milliseconds >= 1 ms, got {rto_min} s")
    return f"{ms}ms"


#: RPS mask of every CPU: `rps_cpus` takes a hex CPU bitmap.
_ALL_CPUS = f"{(1 << (os.cpu_count() or 1)) - 1:x}"


def _steer_by_flow(ns: str, ifname: str) -> None:
    """Receive-side scaling for a veth: its packets are spread over all CPUs by flow hash
    (`rps_cpus`, Documentation/networking/scaling.rst), so each flow is processed, in order, on
    one CPU. A kernel without RPS has no such file; its veths keep the sender's CPU."""
    path = f"/sys/class/net/{ifname}/queues/rx-0/rps_cpus"
    run_cmd(["ip", "netns", "exec", ns, "sh", "-c", f"[ ! -e {path} ] || echo {_ALL_CPUS} > {path}"])


@dataclass(frozen=True)
class HostTuning:
    """Per-namespace TCP settings applied to every sender and receiver namespace."""

    #: Namespace default CCA. Linux lets a non-init namespace pick only an algorithm listed in
    #: the root's `tcp_allowed_congestion_control` (tcp_set_default_congestion_control in
    #: net/ipv4/tcp_cong.c returns -EPERM otherwise; here that list is "reno bbr"), so this is
    #: best effort: `Dumbbell.cca_default_set` says whether it took, and the traffic tool sets
    #: TCP_CONGESTION on every socket anyway (allowed for any loaded CCA with CAP_NET_ADMIN).
    cca: str | None = None
    rmem: tuple[int, int, int] | None = None
    wmem: tuple[int, int, int] | None = None
    #: Seconds; applied as the route attribute `rto_min` on the hosts' routes.
    rto_min: float | None = None
    #: Route attribute `quickack 1`: the receiver ACKs every segment (no delayed ACK).
    quickack: bool = False

    def sysctls(self) -> list[str]:
        values = ["net.ipv4.tcp_no_metrics_save=1"]
        if self.rmem is not None:
            values.append("net.ipv4.tcp_rmem=" + " ".join(map(str, self.rmem)))
        if self.wmem is not None:
            values.append("net.ipv4.tcp_wmem=" + " ".join(map(str, self.wmem)))
        return values

    def route_attrs(self) -> list[str]:
        attrs = []
        if self.rto_min is not None:
            attrs += ["rto_min", rto_min_route_value(self.rto_min)]
        if self.quickack:
            attrs += ["quickack", "1"]
        return attrs


@dataclass(frozen=True)
class Bottleneck:
    """The router's egress qdisc toward the receiver: `tc qdisc add dev X root tbf rate R burst B
    limit L`. `rate` uses tc syntax ("1gbit"); `burst` is the bucket depth and `limit` the queue
    bound, both in bytes as tbf counts them (Ethernet frames, headers included)."""

    rate: str = "1gbit"
    burst_bytes: int = DEFAULT_BURST_BYTES
    limit_bytes: int = 128 * 1024

    def tc_args(self) -> list[str]:
        return ["tbf", "rate", self.rate, "burst", str(self.burst_bytes), "limit", str(self.limit_bytes)]


@dataclass(frozen=True)
class DelayLine:
    """A path delay on the router-receiver link, for a kernel without netem: that link is a pair
    of TUN devices (the router's `rr0`, the receiver's `r0`) joined by scripts/delayline.c, which
    writes every packet to the other device `one_way_us` after reading it, each direction alike,
    so the RTT grows by twice that. The line carries about 1 Gbit/s (less at MTU 1500): keep the
    tbf well below. It runs under SCHED_FIFO `fifo_priority` so that the machine's load does not
    move its timing: by default above the hosts' traffic run under `chrt -f 20`, so that they do
    not delay the wire either."""

    #: The compiled delay line (`gcc -O2 -o BINARY scripts/delayline.c`).
    binary: str
    one_way_us: int
    fifo_priority: int | None = 30

    def argv(self, dev_a: str, dev_b: str) -> list[str]:
        fifo = ["chrt", "-f", str(self.fifo_priority)] if self.fifo_priority else []
        return [*fifo, self.binary, dev_a, dev_b, str(self.one_way_us)]


def rate_bps(rate: str) -> float:
    """Bits per second of a tc rate string ("1gbit", "500mbit", "100kbit", "1000000bit")."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([kmgt]?)bit", rate.strip().lower())
    if m is None:
        raise ValueError(f"rate must look like '1gbit' or '500mbit', got {rate!r}")
    scale = {"": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}[m.group(2)]
    return float(m.group(1)) * scale


@dataclass
class Dumbbell:
    """Context manager: `with Dumbbell(senders=1, bottleneck=…, tuning=…) as net:`.

    Teardown (kill our processes, delete every namespace) runs on normal exit, on exceptions and
    on SIGINT/SIGTERM: the handlers installed on entry tear down, restore the previous handler
    and re-deliver the signal, so the caller still sees KeyboardInterrupt or dies of SIGTERM.
    """

    senders: int = 1
    bottleneck: Bottleneck = field(default_factory=Bottleneck)
    tuning: HostTuning = field(default_factory=HostTuning)
    #: Every veth's MTU (`ip link set … mtu`); the hosts' MSS follows from it.
    mtu: int = DEFAULT_MTU
    #: A delay on the router-receiver link (None: a veth, the namespaces' ~30 µs RTT).
    delay: DelayLine | None = None
    run: str = field(default_factory=lambda: f"{os.getpid()}x{next(_seq)}")
    #: False when a namespace refused `tuning.cca` as its default (see HostTuning.cca).
    cca_default_set: bool = field(default=True, init=False)
    _created: list[str] = field(default_factory=list, init=False, repr=False)
    _procs: list[subprocess.Popen] = field(default_factory=list, init=False, repr=False)
    _old_handlers: dict[int, Any] = field(default_factory=dict, init=False, repr=False)
    _on_close: list[Callable[[], None]] = field(default_factory=list, init=False, repr=False)

    def __post_init__(self) -> None:
        if not 1 <= self.senders <= MAX_SENDERS:
            raise ValueError(f"senders must be in 1..{MAX_SENDERS}, got {self.senders}")
        if not MIN_MTU <= self.mtu <= MAX_MTU:
            raise ValueError(f"mtu must be in {MIN_MTU}..{MAX_MTU} bytes, got {self.mtu}")

    # -- names and addresses -------------------------------------------------------------------
    @property
    def sender_ns(self) -> list[str]:
        return [f"{PREFIX}{self.run}-s{i}" for i in range(self.senders)]

    @property
    def router_ns(self) -> str:
        return f"{PREFIX}{self.run}-rt"

    @property
    def receiver_ns(self) -> str:
        return f"{PREFIX}{self.run}-r0"

    def sender_addr(self, i: int = 0) -> str:
        return f"{SENDER_NET}.{i}.2"

    @property
    def receiver_addr(self) -> str:
        return f"{RECEIVER_NET}.2"

    #: Router-side interface toward the receiver, the one carrying the tbf.
    bottleneck_dev = "rr0"

    @property
    def tbf_handle(self) -> int:
        """The tbf's handle (major << 16, as tracepoints print it), distinct per dumbbell so that
        a trace can pick out this one's qdisc events (`host_stalls.TbfTrace`)."""
        return (0x100 + zlib.crc32(self.run.encode()) % 0x7E00) << 16

    @property
    def namespaces(self) -> list[str]:
        return [*self.sender_ns, self.router_ns, self.receiver_ns]

    # -- lifecycle ------------------------------------------------------------------------------
    def __enter__(self) -> Dumbbell:
        self._install_signal_handlers()
        try:
            self._build()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def on_close(self, teardown: Callable[[], None]) -> None:
        """Have `close()` also run `teardown` (first, once): for what a run sets up outside the
        namespaces, such as an ftrace instance, so that a signal removes it too."""
        self._on_close.append(teardown)

    def close(self) -> None:
        """Idempotent teardown: what `on_close` registered, our child processes, then every
        namespace we created."""
        while self._on_close:
            try:
                self._on_close.pop()()
            except OSError:
                pass  # best effort: a teardown must not stop the rest
        for proc in self._procs:
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            try:
                proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
        self._procs.clear()
        for ns in reversed(self._created):
            delete_namespace(ns)
            _LIVE.discard(ns)
        self._created.clear()
        self._restore_signal_handlers()

    def _install_signal_handlers(self) -> None:
        import threading

        if threading.current_thread() is not threading.main_thread():
            return  # signal handlers can only be set from the main thread
        for sig in (signal.SIGINT, signal.SIGTERM):
            self._old_handlers[sig] = signal.signal(sig, self._on_signal)

    def _restore_signal_handlers(self) -> None:
        for sig, old in self._old_handlers.items():
            signal.signal(sig, old if old is not None else signal.SIG_DFL)
        self._old_handlers.clear()

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        self.close()  # restores the previous handler
        signal.raise_signal(signum)

    def _add_ns(self, ns: str) -> None:
        run_cmd(["ip", "netns", "add", ns])
        self._created.append(ns)
        _LIVE.add(ns)
        run_cmd(["ip", "-n", ns, "link", "set", "lo", "up"])

    def _build(self) -> None:
        rt, rx = self.router_ns, self.receiver_ns
        self._add_ns(rt)
        self._add_ns(rx)
        run_cmd(["ip", "netns", "exec", rt, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1"])
        # Receiver link: r0 (receiver) <-> rr0 (router, carries the tbf).
        if self.delay is None:
            self._veth(rx, "r0", f"{RECEIVER_NET}.2/24", rt, "rr0", f"{RECEIVER_NET}.1/24")
        else:
            self._delay_line(rx, "r0", f"{RECEIVER_NET}.2/24", rt, "rr0", f"{RECEIVER_NET}.1/24")
        for i, sx in enumerate(self.sender_ns):
            self._add_ns(sx)
            self._veth(sx, "s0", f"{SENDER_NET}.{i}.2/24", rt, f"rs{i}", f"{SENDER_NET}.{i}.1/24")
            run_cmd(["ip", "-n", sx, "route", "add", f"{RECEIVER_NET}.0/24", "via", f"{SENDER_NET}.{i}.1",
                     *self.tuning.route_attrs()])
        run_cmd(["ip", "-n", rx, "route", "add", f"{SENDER_NET}.0.0/16", "via", f"{RECEIVER_NET}.1",
                 *self.tuning.route_attrs()])
        for ns in [*self.sender_ns, rx]:
            run_cmd(["ip", "netns", "exec", ns, "sysctl", "-q", "-w", *self.tuning.sysctls()])
            if self.tuning.cca is not None:
                self.cca_default_set &= self._try_default_cca(ns, self.tuning.cca)
        run_cmd(["tc", "-n", rt, "qdisc", "add", "dev", self.bottleneck_dev, "root",
                 "handle", f"{self.tbf_handle >> 16:x}:", *self.bottleneck.tc_args()])

    def _try_default_cca(self, ns: str, cca: str) -> bool:
        try:
            run_cmd(["ip", "netns", "exec", ns, "sysctl", "-q", "-w", f"net.ipv4.tcp_congestion_control={cca}"])
        except TopologyError as exc:
            if "not permitted" in str(exc):
                return False
            raise
        return True

    def _veth(self, ns_a: str, if_a: str, addr_a: str, ns_b: str, if_b: str, addr_b: str) -> None:
        run_cmd(["ip", "link", "add", if_a, "netns", ns_a, "type", "veth", "peer", "name", if_b, "netns", ns_b])
        self._links_up(((ns_a, if_a, addr_a), (ns_b, if_b, addr_b)))

    def _delay_line(self, ns_a: str, if_a: str, addr_a: str, ns_b: str, if_b: str, addr_b: str) -> None:
        """`if_b` in `ns_b` and `if_a` in `ns_a` as TUN devices joined by the delay line, which
        creates both in `ns_b` (where it runs); `if_a` is then moved."""
        assert self.delay is not None
        line = self.spawn(ns_b, self.delay.argv(if_b, if_a))
        ready = line.stdout.readline().strip() if line.stdout else ""
        if ready != "ready":
            line.kill()
            raise TopologyError(f"{' '.join(self.delay.argv(if_b, if_a))}: the delay line did not start "
                                f"(said {ready!r}): {line.communicate(timeout=5)[1].strip()}")
        run_cmd(["ip", "-n", ns_b, "link", "set", if_a, "netns", ns_a])
        self._links_up(((ns_a, if_a, addr_a), (ns_b, if_b, addr_b)))

    def _links_up(self, links: Sequence[tuple[str, str, str]]) -> None:
        for ns, ifname, addr in links:
            # No IPv6 on the link: its router solicitations, DAD and MLD reports are the kernel's
            # own traffic, and the router's meet the tbf, which then counts drops no sender caused
            # (one CI capture: 921 tbf drops, 920 of them packets that had entered the router).
            # Per link: the veth is born in the root namespace, with its defaults, then moved.
            if _HAS_IPV6:
                run_cmd(["ip", "netns", "exec", ns, "sysctl", "-q", "-w", f"net.ipv6.conf.{ifname}.disable_ipv6=1"])
            run_cmd(["ip", "-n", ns, "addr", "add", addr, "dev", ifname])
            if self.mtu != DEFAULT_MTU:
                run_cmd(["ip", "-n", ns, "link", "set", ifname, "mtu", str(self.mtu)])
            _steer_by_flow(ns, ifname)
            run_cmd(["ip", "-n", ns, "link", "set", ifname, "up"])

    # -- running things inside -------------------------------------------------------------------
    def spawn(self, ns: str, argv: Sequence[str], **popen: Any) -> subprocess.Popen:
        """Start `argv` inside `ns` in its own process group; killed by `close()` if still alive."""
        if ns not in self._created:
            raise ValueError(f"{ns} is not a namespace of this dumbbell")
        proc = subprocess.Popen(["ip", "netns", "exec", ns, *argv], start_new_session=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen)
        self._procs.append(proc)
        return proc

    def sysctl(self, ns: str, key: str) -> str:
        """Read one sysctl as seen inside `ns`."""
        return run_cmd(["ip", "netns", "exec", ns, "sysctl", "-n", key]).strip()

    def buffer_sysctls(self) -> dict[str, list[int]]:
        """The socket-buffer settings the twin must share with these hosts, as this kernel has
        them (here `tcp_rmem[2]` is 32 MiB and `rmem_max` 4 MiB, where the simulator's defaults
        are the 6 MiB and 208 KiB of older kernels): the receiver's `tcp_rmem` and `rmem_max`
        (which also fix its window scale) and the sender's `tcp_wmem`."""
        def ints(ns: str, key: str) -> list[int]:
            return [int(v) for v in self.sysctl(ns, key).split()]
        return {"tcp_rmem": ints(self.receiver_ns, "net.ipv4.tcp_rmem"),
                "rmem_max": ints(self.receiver_ns, "net.core.rmem_max"),
                "tcp_wmem": ints(self.sender_ns[0], "net.ipv4.tcp_wmem")}

    def qdisc_stats(self) -> dict[str, int]:
        """The bottleneck tbf's counters (`tc -s -j qdisc show`): bytes, packets, drops, overlimits."""
        out = run_cmd(["tc", "-s", "-j", "-n", self.router_ns, "qdisc", "show", "dev", self.bottleneck_dev])
        for q in json.loads(out):
            if q.get("kind") == "tbf":
                return {k: int(q.get(k, 0)) for k in ("bytes", "packets", "drops", "overlimits", "requeues")}
        raise TopologyError(f"no tbf qdisc on {self.router_ns}/{self.bottleneck_dev}: {out}")

    def routes(self, ns: str) -> str:
        return run_cmd(["ip", "-n", ns, "route", "show"])
