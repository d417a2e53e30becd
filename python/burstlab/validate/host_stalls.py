"""Where the hosts, not TCP, left the bottleneck idle: read from the kernel's own tracepoints.

On this shared 2-core machine a single bulk flow loses 3-15 % of the tbf's rate in stretches of
0.2-4 ms in which the tbf sits empty and nothing is offered to it, although the flow has data to
send: the sender's or the receiver's softirq work waits for a CPU (a scheduler slice is ~3 ms).
Loss-based and paced flows alike lose them; a simulated host never stalls. So the twin is given
them: its bottleneck pauses where the real one stood empty (`bottleneck_pauses`).

The measurement is a private ftrace instance (`/sys/kernel/tracing/instances/<name>`) with two
events of the tbf alone (`qdisc:qdisc_enqueue`, `qdisc:qdisc_dequeue`, filtered by its handle):
cheap enough (~25,000 events per 50 MB flow) not to cause the stalls it measures. A stall is a
stretch from a dequeue to the next enqueue, the queue empty in between, of `MIN_STALL_S` to
`MAX_STALL_S`:

* shorter ones are the flow's own rhythm (the tbf sends a 9-segment skb in 109 µs);
* longer ones are TCP's (a retransmission timeout is 200 ms or more);
* the first `SKIP_S` (the handshake and the first round trips) are the flow's, too.

The same instance measures how late the host runs the tbf when it waits for tokens
(`watchdog_lateness_us`): `tbf_dequeue()` arms the qdisc watchdog, an hrtimer, for the time the
tokens suffice, and two more events of that timer alone (`timer:hrtimer_start`,
`timer:hrtimer_expire_entry`, filtered by `qdisc_watchdog`'s address in `/proc/kallsyms`) say
when it was due and when its interrupt ran; the next dequeue says when the softirq it raised
sent. On this 2-core VM that is 11-47 µs (p10-p99) at 1 Gbit/s and 24-104 µs idle at
100 Mbit/s, and the tokens earned meanwhile make the tbf send clumps (docs/scenarios.md,
`tbf_watchdog_latency`).
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

TRACEFS = Path("/sys/kernel/tracing")
#: Every ftrace instance this package creates is named `burstlab-<run>`, the run being a
#: dumbbell's `<pid>x<seq>`: `stale_instances` tells a crashed run's from a live one's by it.
INSTANCE_PREFIX = "burstlab-"
_INSTANCE_RE = re.compile(rf"^{INSTANCE_PREFIX}(\d+)x\d+$")
MIN_STALL_S = 200e-6
MAX_STALL_S = 20e-3
SKIP_S = 10e-3
#: Per-CPU ring size: a 50 MB flow writes ~1.5 MB of events.
BUFFER_KB = 8192

_EVENT = re.compile(r"\s(\d+\.\d+): qdisc_(enqueue|dequeue): ")
_PACKETS = re.compile(r" packets=(\d+) ")
_EVENTS = ("qdisc/qdisc_enqueue", "qdisc/qdisc_dequeue")
_TIMER_EVENTS = ("timer/hrtimer_start", "timer/hrtimer_expire_entry")
_TRACE_LINE = re.compile(r"\s(\d+\.\d+): (qdisc_enqueue|qdisc_dequeue|hrtimer_start|hrtimer_expire_entry): (.*)")
_EXPIRES = re.compile(r" expires=(\d+)")
_NOW = re.compile(r" now=(\d+)")


def tbf_stalls(trace: str, origin_s: float | None = None) -> list[tuple[float, float]]:
    """`(start_s, length_s)` of each stall in an ftrace text of one tbf's enqueue and dequeue
    events, in time order, `start_s` from `origin_s` (the flow's connect, on the trace's `mono`
    clock, CLOCK_MONOTONIC) or else from the first enqueue. Events before `origin_s` are not the
    flow's: a sender that found no listener yet tried again 10 ms later, and the gap after its
    refused SYN would read as a 10 ms stall."""
    first = last = offered = None
    stalls: list[tuple[float, float]] = []
    for line in trace.splitlines():
        m = _EVENT.search(line)
        if m is None:
            continue
        t = float(m.group(1))
        if origin_s is not None:
            if t < origin_s:
                continue
            first = origin_s
        if m.group(2) == "enqueue":
            first = t if first is None else first
            offered = t if offered is None else offered
            continue
        packets = _PACKETS.search(line, m.end())
        if packets is not None and packets.group(1) == "0":
            continue  # an attempt that found nothing the tokens allowed
        if last is not None and offered is not None and last - first >= SKIP_S \
                and MIN_STALL_S <= offered - last <= MAX_STALL_S:
            stalls.append((last - first, offered - last))
        last, offered = t, None
    return stalls


def watchdog_lateness_us(trace: str) -> list[float]:
    """How late the host ran the tbf after each qdisc-watchdog expiry, µs, from an ftrace text
    of the tbf's events and its watchdog's `hrtimer_start`/`hrtimer_expire_entry` (all on
    CLOCK_MONOTONIC): the timer interrupt's lateness (`now - expires`) plus the wait from it to
    the next dequeue that sent something (the `NET_TX` softirq it raised). A firing after
    which a packet arrived before that dequeue is left out: the arrival's own `qdisc_run()`
    may have sent, and the twin's arrivals dequeue by themselves as the kernel's do. So is one
    whose interrupt reads earlier than its expiry (one in some thousands)."""
    out: list[float] = []
    expires = fired = None
    late_irq = 0.0
    for line in trace.splitlines():
        m = _TRACE_LINE.search(line)
        if m is None:
            continue
        t, event, rest = float(m.group(1)), m.group(2), m.group(3)
        if event == "hrtimer_start":
            found = _EXPIRES.search(" " + rest)
            expires, fired = (int(found.group(1)) if found else None), None
        elif event == "hrtimer_expire_entry":
            now = _NOW.search(" " + rest)
            if expires is not None and now is not None:
                late_irq, fired = (int(now.group(1)) - expires) / 1e3, t
            expires = None
        elif event == "qdisc_enqueue":
            fired = None
        elif fired is not None:
            packets = _PACKETS.search(" " + rest + " ")
            if packets is not None and packets.group(1) != "0":
                # An interrupt before its own expiry is another watchdog's (a host qdisc's):
                # the arming it answered was not traced.
                if late_irq >= 0:
                    out.append(late_irq + (t - fired) * 1e6)
                fired = None
    return out


def watchdog_symbol(kallsyms: Path = Path("/proc/kallsyms")) -> int | None:
    """The address of `qdisc_watchdog` (the hrtimer function of every qdisc watchdog), or
    None where the kernel hides it (`kptr_restrict` prints zeros to non-root readers)."""
    try:
        found = _WATCHDOG_SYMBOL.search(kallsyms.read_text())
    except OSError:
        return None
    return (int(found.group(1), 16) or None) if found else None


#: A kallsyms line `ADDRESS TYPE qdisc_watchdog` (the core kernel's, so no `[module]` after it).
_WATCHDOG_SYMBOL = re.compile(r"^([0-9a-fA-F]+) \S+ qdisc_watchdog$", re.M)


@functools.cache
def _running_kernel_watchdog() -> int | None:
    """`watchdog_symbol()` of the running kernel, read once per process: kallsyms is some MB
    and every validation run's trace needs the address, which does not change while it runs."""
    return watchdog_symbol()


def within(stalls: list[tuple[float, float]], end_s: float) -> list[tuple[float, float]]:
    """The stalls, or their parts, before `end_s` (on the same origin): the flow's own. The trace
    goes on after the last byte was read (the connection's last packets, its close), and idle
    stretches there are not the flow's: counted, they made 33.6 ms of stalls in a CI run at
    0.985 of the rate."""
    return [(start, min(length, end_s - start)) for start, length in stalls if start < end_s]


def mount_tracefs(root: Path = TRACEFS) -> str:
    """Mount tracefs at `root` if it is not there yet, as `perf` and `trace-cmd` do; "" when
    instances can be made, else why not. systemd mounts it at boot, but a container or a CI
    sandbox may start without it, and without it the twin would lose the hosts' stalls. The
    mount is left in place: it is the kernel's own interface, shared, and holds no state of
    ours once our instances are removed."""
    if (root / "instances").is_dir():
        return ""
    if root != TRACEFS:
        return f"no {root / 'instances'} (tracefs not mounted there)"
    if os.geteuid() != 0:
        return f"no {root / 'instances'} (tracefs not mounted, and mounting it needs root)"
    done = subprocess.run(["mount", "-t", "tracefs", "nodev", str(root)],
                          capture_output=True, text=True)
    if done.returncode != 0 or not (root / "instances").is_dir():
        return f"no {root / 'instances'}: mount -t tracefs failed: {done.stderr.strip()}"
    return ""


class TbfTrace:
    """`with TbfTrace(name, handle) as tr: ...run...` then `tr.stalls(origin_s)`: the stalls of
    the tbf whose handle is `handle` (major << 16) during the block, or None if this kernel
    offers no tracefs instances (`tr.why` says why). The instance is removed on exit, also on
    errors."""

    def __init__(self, name: str, handle: int, root: Path = TRACEFS,
                 watchdog: int | None = None) -> None:
        self.dir = root / "instances" / name
        self.handle = handle
        #: `qdisc_watchdog`'s address: with it the trace also times the tbf's watchdog.
        self.watchdog = _running_kernel_watchdog() if watchdog is None and root == TRACEFS else watchdog
        self.text: str | None = None
        self.why = ""

    def _write(self, rel: str, value: str) -> None:
        (self.dir / rel).write_text(value)

    def __enter__(self) -> TbfTrace:
        self.why = mount_tracefs(self.dir.parent.parent)
        if self.why:
            return self
        try:
            self.dir.mkdir()
            self._write("buffer_size_kb", str(BUFFER_KB))
            self._write("trace_clock", "mono")
            for event in _EVENTS:
                self._write(f"events/{event}/filter", f"handle == {self.handle}")
                self._write(f"events/{event}/enable", "1")
            if self.watchdog is not None:
                # Every qdisc watchdog shares the function: a host qdisc with one (fq, another
                # tbf) would mix its firings in. burstlab's namespaces have no other.
                for event in _TIMER_EVENTS:
                    self._write(f"events/{event}/filter", f"function == {self.watchdog:#x}")
                    self._write(f"events/{event}/enable", "1")
            self._write("tracing_on", "1")
        except OSError as exc:
            self.why = f"ftrace instance {self.dir}: {exc}"
            self._remove()
        return self

    def __exit__(self, *exc: object) -> None:
        if not self.dir.is_dir():
            return
        try:
            self._write("tracing_on", "0")
            overrun = sum(_overrun(p) for p in (self.dir / "per_cpu").glob("cpu*/stats"))
            if overrun:
                self.why = f"the trace lost {overrun} events (ring of {BUFFER_KB} KB per CPU)"
            else:
                self.text = (self.dir / "trace").read_text()
        finally:
            self._remove()

    def _remove(self) -> None:
        remove_instance(self.dir)

    def close(self) -> None:
        """Remove the instance now (idempotent): a dumbbell torn down by a signal calls this, as
        a SIGTERM ends the process before the `with` block's exit runs."""
        self._remove()

    def stalls(self, origin_s: float | None = None) -> list[tuple[float, float]] | None:
        return None if self.text is None else tbf_stalls(self.text, origin_s)

    def watchdog_lateness(self) -> list[float] | None:
        """`watchdog_lateness_us` of the trace; None if it was not taken or had no watchdog."""
        if self.text is None or self.watchdog is None:
            return None
        return watchdog_lateness_us(self.text)


def _overrun(stats: Path) -> int:
    m = re.search(r"^overrun: (\d+)", stats.read_text(), re.M)
    return int(m.group(1)) if m else 0


def stale_instances(alive: Callable[[int], bool], root: Path = TRACEFS) -> list[Path]:
    """Our ftrace instances whose run's process is gone (`alive(pid)` False), e.g. after a
    SIGKILL; each holds a ring of `BUFFER_KB` per CPU until removed."""
    parent = root / "instances"
    if not parent.is_dir():
        return []
    out = []
    for d in sorted(parent.iterdir()):
        m = _INSTANCE_RE.match(d.name)
        if m is not None and not alive(int(m.group(1))):
            out.append(d)
    return out


def remove_instance(path: Path) -> None:
    """Disable an instance's events and remove it; silent if it is already gone."""
    if not path.is_dir():
        return
    for event in (*_EVENTS, *_TIMER_EVENTS):
        try:
            (path / "events" / event / "enable").write_text("0")
        except OSError:
            pass
    try:
        os.rmdir(path)
    except OSError:
        pass
