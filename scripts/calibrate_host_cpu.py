#!/usr/bin/env python3
"""Calibrate the simulator's host CPU model (`cpu = "veth-this-machine"`) on this machine.

    python scripts/calibrate_host_cpu.py measure --fifo 10 --shaped-mtus 1500 3000 9000 \
        --out /tmp/hostcpu.json                                                        # root
    python scripts/calibrate_host_cpu.py fit /tmp/hostcpu.json                        # no root
    python scripts/calibrate_host_cpu.py check /tmp/other.json [/tmp/more.json ...]   # no root
    python scripts/calibrate_host_cpu.py sessions scripts/calibrate_host_cpu.session-*.json  # no root
    python scripts/calibrate_host_cpu.py measure --fifo 10 --streams 8 --mtus 1500 9000 --shaped-mtus \
        --out /tmp/p8.json && python scripts/calibrate_host_cpu.py check --streams 8 /tmp/p8.json   # -P 8

`measure` runs real single-stream iperf3 (Debian's `iperf3`) through the validation dumbbell
(python/burstlab/validate/topology.py: sender ns -veth- router ns -veth- receiver ns, each flow
on one CPU by RPS) at several MTUs, each both unshaped (the router's tbf at 100 Gbit/s with a
4 MB bucket: it never holds a packet back, so the hosts' CPUs are the bottleneck) and through
a 1 Gbit/s tbf (the path is the bottleneck). Runs of the MTUs alternate, so a change of load
on this shared machine falls on all of them alike; each run also records the 1-minute load
average and the busiest CPU's softirq share.

`fit` states the rule and applies it: the unshaped runs at the FIT MTUs (3000 and 16000 bytes,
never 1500 or 9000) give the two costs of a single stream on veth, a cost per segment `c`
and a cost per byte `a`, from the medians: 1/T = a + c/MSS per byte, solved exactly from
the two points. It prints the profile's parameters.

`check` runs the simulator (the dumbbell twin: veth, links far faster than the CPU, the
namespaces' ~30 us RTT) with `cpu = "veth-this-machine"` and compares with the median of the
CHECK MTUs' runs (1500 and 9000), which the fit never saw: the error at each MTU, and of
their ratio; and the 1 Gbit/s runs (not CPU-bound) against the same twin through a 1 Gbit/s
bottleneck.

`sessions` sets records' medians side by side and asks whether they differ by more than their
runs' spread. On this shared machine single runs spread −51/+100 % about their MTU's median, so
a median of 5 runs lands within 15 % of the pooled one only 69-83 % of the time, of 20 runs
96-99 % (docs/fidelity.md): check on 20 or more runs per MTU, in repeats spread over minutes
(`measure --repeat 10 --mtus 1500 9000 --shaped-mtus` twice, or several records pooled).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

FIT_MTUS = (3000, 16000)
CHECK_MTUS = (1500, 9000)
#: IPv4 + TCP headers with the timestamps option: MSS = MTU - 52 (the simulator's rule too).
TCP_IP_OVERHEAD = 52
PORT = 5201
#: A tbf that never holds a packet back on veth: a bucket far above a 64 KB GSO skb.
UNSHAPED = ("100gbit", 4 << 20, 4 << 20)
SHAPED = ("1gbit", None, 128 * 1024)


def mss(mtu: int) -> int:
    return mtu - TCP_IP_OVERHEAD


def load_average() -> float:
    return os.getloadavg()[0]


#: Columns of the aggregate `cpu` line of /proc/stat (`show_stat()`, fs/proc/stat.c), in USER_HZ
#: ticks: user nice system idle iowait irq softirq steal.
STAT_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
#: The kernel's work for a stream: its system time (the copies, TCP) and its interrupts. With
#: tick accounting softirq run in a process's context is charged to the `softirq` column only.
KERNEL_FIELDS = ("system", "irq", "softirq")


def cpu_ticks(text: str) -> dict[str, int]:
    """The aggregate `cpu` line of a /proc/stat text, by field."""
    for line in text.splitlines():
        fields = line.split()
        if fields and fields[0] == "cpu":
            return dict(zip(STAT_FIELDS, (int(v) for v in fields[1:1 + len(STAT_FIELDS)])))
    raise ValueError("no aggregate 'cpu' line in /proc/stat")


def read_cpu_ticks() -> tuple[float, dict[str, int]]:
    return time.monotonic(), cpu_ticks(Path("/proc/stat").read_text())


def kernel_cpu_s(before: tuple[float, dict[str, int]], after: tuple[float, dict[str, int]],
                 baseline: float, ticks_per_s: int) -> tuple[float, float]:
    """The machine's kernel CPU seconds (system + irq + softirq) between two readings, and that
    minus the `baseline` rate (kernel CPU-s per s the machine's other load took just before)."""
    span = after[0] - before[0]
    used = sum(after[1][f] - before[1][f] for f in KERNEL_FIELDS) / ticks_per_s
    return used, max(0.0, used - baseline * span)


def priority(nice: int, fifo: int | None) -> list[str]:
    """The command prefix that runs a measuring process at the chosen priority: SCHED_FIFO
    `fifo` (chrt; it runs ahead of every ordinary process on its CPU) or else `nice`."""
    return ["chrt", "-f", str(fifo)] if fifo else ["nice", "-n", str(nice)]


def threads_of(pid: int) -> int | None:
    """The number of threads of process `pid` (/proc/PID/status), or None if it has gone."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    return next((int(line.split()[1]) for line in text.splitlines() if line.startswith("Threads:")), None)


def one_run(mtu: int, shaped: bool, seconds: float, nice: int = 0, fifo: int | None = None,
            streams: int = 1) -> dict:
    """One iperf3 test of `streams` parallel streams (-P; cubic, default buffers) through a fresh
    dumbbell, both ends at scheduling priority `nice`, or SCHED_FIFO `fifo`. Besides the rate it
    records the CPU the transfer cost: the two iperf3 processes' user and system time (iperf3's
    getrusage) and the machine's kernel time less what the other load took in the second
    before; and the client's thread count mid-run (iperf3 before 3.16 runs every stream in one
    thread)."""
    from burstlab.validate.host_cpu import SoftirqMeter
    from burstlab.validate.topology import Bottleneck, Dumbbell, HostTuning, default_burst_bytes

    rate, burst, limit = SHAPED if shaped else UNSHAPED
    bottleneck = Bottleneck(rate=rate, burst_bytes=burst or default_burst_bytes(mtu), limit_bytes=limit)
    ticks = os.sysconf("SC_CLK_TCK")
    with Dumbbell(senders=1, bottleneck=bottleneck, tuning=HostTuning(), mtu=mtu) as net:
        load = load_average()
        prio = priority(nice, fifo)
        server = net.spawn(net.receiver_ns, [*prio, "iperf3", "-s", "-1", "-p", str(PORT)])
        idle0 = read_cpu_ticks()
        time.sleep(1.0)  # the server's listen socket; the other load's kernel time meanwhile
        idle1 = read_cpu_ticks()
        baseline = kernel_cpu_s(idle0, idle1, 0.0, ticks)[0] / (idle1[0] - idle0[0])
        softirq = SoftirqMeter()
        softirq.start()
        before = read_cpu_ticks()
        client = net.spawn(net.sender_ns[0], [*prio, "iperf3", "-c", net.receiver_addr, "-p", str(PORT),
                                              "-t", str(seconds), "-O", "1", "-J", "-P", str(streams)])
        time.sleep(1.5)  # past the omitted second: every stream runs
        client_threads = threads_of(client.pid)
        try:
            out, err = client.communicate(timeout=seconds + 20)
        except subprocess.TimeoutExpired as exc:
            raise RuntimeError(f"iperf3 client at MTU {mtu} did not finish") from exc
        after = read_cpu_ticks()
        share = softirq.busiest_share(seconds + 1)
        server.wait(timeout=10)
        if client.returncode != 0:
            raise RuntimeError(f"iperf3 -c exit {client.returncode}: {err.strip() or out[-300:]}")
        report = json.loads(out)
        end = report["end"]
    cpu = end["cpu_utilization_percent"]
    # The kernel counters span the whole run, the omitted first second too: its bytes at the
    # counted seconds' rate (a 30 us RTT ramps in milliseconds).
    wall = after[0] - before[0]
    received = end["sum_received"]["bits_per_second"] / 8 * wall
    kernel, kernel_ours = kernel_cpu_s(before, after, baseline, ticks)
    users = (cpu["host_user"] + cpu["remote_user"]) / 100 * wall
    return {
        "mtu": mtu,
        "streams": streams,
        "client_threads": client_threads,
        "shaped": shaped,
        "rate": rate,
        "received_bps": end["sum_received"]["bits_per_second"],
        "retransmits": end["sum_sent"].get("retransmits", 0),
        "cpu_sender_pct": cpu["host_total"],
        "cpu_receiver_pct": cpu["remote_total"],
        "load1": load,
        "softirq_busiest_share": share,
        "fifo": fifo,
        "wall_s": wall,
        "kernel_cpu_s": kernel,
        "kernel_baseline_cpu_s_per_s": baseline,
        "user_cpu_s": users,
        "cpu_ns_per_byte": 1e9 * (kernel_ours + users) / received,
    }


def measure(args: argparse.Namespace) -> int:
    mtus = args.mtus or sorted(set(FIT_MTUS) | set(CHECK_MTUS))
    runs = []
    out = Path(args.out)
    for k in range(args.repeat):
        for shaped in (False, True):
            for mtu in mtus:
                if shaped and mtu not in (CHECK_MTUS if args.shaped_mtus is None else args.shaped_mtus):
                    continue
                r = one_run(mtu, shaped, args.seconds, args.nice, args.fifo, args.streams)
                r["nice"] = args.nice
                r["repeat"] = k
                runs.append(r)
                print(f"repeat {k} mtu {mtu:5d} -P {args.streams} {r['rate']:>7}: "
                      f"{r['received_bps'] / 1e9:7.3f} Gbit/s, {r['client_threads']} client threads, "
                      f"{r['cpu_ns_per_byte']:.2f} CPU-ns/B (load {r['load1']:.2f}, "
                      f"softirq {r['softirq_busiest_share']})", flush=True)
                out.write_text(json.dumps({"seconds": args.seconds, "runs": runs}, indent=1))
    return 0


def medians(record: dict, shaped: bool) -> dict[int, float]:
    by_mtu: dict[int, list[float]] = {}
    for r in record["runs"]:
        if r["shaped"] == shaped:
            by_mtu.setdefault(r["mtu"], []).append(r["received_bps"])
    return {m: statistics.median(v) for m, v in sorted(by_mtu.items())}


def fit_costs(med: dict[int, float]) -> tuple[float, float]:
    """Seconds per byte `a` and per segment `c` through 1/T = a + c/MSS (T in bytes/s) at the
    two FIT MTUs."""
    (m1, m2) = FIT_MTUS
    y1, y2 = 8 / med[m1], 8 / med[m2]  # seconds per payload byte
    x1, x2 = 1 / mss(m1), 1 / mss(m2)
    c = (y1 - y2) / (x1 - x2)
    a = y1 - c * x1
    return a, c


#: The 1 Gbit/s runs the per-skb cost is fitted on: tbf's ten-frame bucket cuts every skb into
#: frames, which the router and the receiver then handle one skb each (veth has no GRO).
FIT_SHAPED_MTU = 3000
#: A shaped run at or above this share of the tbf's goodput is the path's, not the CPU's: it
#: cannot tell a per-skb cost, which the fit then sets to 0.
PATH_BOUND_SHARE = 0.95


def unshaped_skb_bytes(mtu: int) -> int:
    """Payload of the 64 KB TSO skbs an unshaped veth stream sends (`tcp_tso_autosize()` at
    these rates: whole segments within GSO_MAX_SIZE)."""
    return max(1, (65536 - TCP_IP_OVERHEAD) // mss(mtu)) * mss(mtu)


def fit_costs3(unshaped: dict[int, float], shaped_bps: float) -> tuple[float, float, float]:
    """Seconds per byte `a`, per segment `c` and per skb `k`: the unshaped medians at the FIT
    MTUs give 8/T = a + c/MSS + k/skb (64 KB skbs), the shaped median at FIT_SHAPED_MTU
    8/T = a + (c + k)/MSS (every frame an skb). Solved exactly (3 x 3)."""
    import numpy as np

    rows, rhs = [], []
    for m in FIT_MTUS:
        rows.append([1.0, 1 / mss(m), 1 / unshaped_skb_bytes(m)])
        rhs.append(8 / unshaped[m])
    rows.append([1.0, 1 / mss(FIT_SHAPED_MTU), 1 / mss(FIT_SHAPED_MTU)])
    rhs.append(8 / shaped_bps)
    a, c, k = np.linalg.solve(np.array(rows), np.array(rhs))
    return float(a), float(c), float(k)


def fit_profile(records: list[dict]) -> tuple[float, float, float]:
    """The rule: `a` per byte, `c` per segment, `k` per skb from the FIT runs of `records`
    pooled. The line 8/T = a + c/MSS through the unshaped medians at the FIT MTUs; a negative
    `c` (the larger MTU ran slower: the MTU's effect is below the runs' noise) is 0, and `a`
    the median of every fit run's 8/T. A per-skb cost `k` only from a CPU-bound median at 1 Gbit/s
    and FIT_SHAPED_MTU (fit_costs3); else 0."""
    pooled = {"runs": [r for rec in records for r in rec["runs"]]}
    med = medians(pooled, shaped=False)
    missing = [m for m in FIT_MTUS if m not in med]
    if missing:
        raise ValueError(f"no unshaped runs at MTU {missing} (the fit needs {FIT_MTUS})")
    shaped = medians(pooled, shaped=True).get(FIT_SHAPED_MTU)
    goodput = rate_bps_of(SHAPED[0]) * mss(FIT_SHAPED_MTU) / (FIT_SHAPED_MTU + 14)
    if shaped is not None and shaped < PATH_BOUND_SHARE * goodput:
        return fit_costs3(med, shaped)
    a, c = fit_costs(med)
    if c < 0:
        a = statistics.median(8 / r["received_bps"] for r in pooled["runs"]
                              if not r["shaped"] and r["mtu"] in FIT_MTUS)
        c = 0.0
    return a, c, 0.0


def fit(args: argparse.Namespace) -> int:
    records = [json.loads(Path(p).read_text()) for p in args.records]
    try:
        a, c, k = fit_profile(records)
    except ValueError as exc:
        print(f"{', '.join(args.records)}: {exc}", file=sys.stderr)
        return 2
    print(f"fit on {', '.join(args.records)}: unshaped MTU {FIT_MTUS}, 1 Gbit/s MTU {FIT_SHAPED_MTU}")
    print(f"  per byte    a = {a * 1e12:.2f} ps  (a core's byte rate {8 / a / 1e9:.3f} Gbit/s)")
    print(f"  per segment c = {c * 1e12:.0f} ps")
    print(f"  per skb     k = {k * 1e12:.0f} ps")
    print(f"profile: rx_packet = {round(c * 1e12)} ps, rx_skb = {round(k * 1e12)} ps, copy_rate = {round(8 / a)} bit/s")
    return 0


def rate_bps_of(rate: str) -> float:
    from burstlab.validate.topology import rate_bps

    return rate_bps(rate)


def bench_binary() -> Path:
    """The simulator's bench binary (release), built if missing: no Python extension needed."""
    root = Path(__file__).resolve().parent.parent
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "burstlab-sim", "--bin", "burstlab-bench"],
                   cwd=root, check=True)
    return Path(os.environ.get("CARGO_TARGET_DIR", root / "target")) / "release" / "burstlab-bench"


def simulate(mtu: int, shaped: bool, seconds: float, streams: int = 1) -> dict:
    """The twin's run (its summary): the dumbbell on veth at the namespaces' RTT, both hosts
    with `cpu = "veth-this-machine"`, through the same tbf as the real run when `shaped`, with
    `streams` parallel streams."""
    sets = [f"topology.mtu={mtu}", f"stop={seconds}s", f"flow[0].streams={streams}"]
    if shaped:
        rate, _, limit = SHAPED
        sets += ["topology.tbf_rate=1Gbps", f"topology.tbf_burst={10 * (mtu + 14)}B",
                 f"topology.tbf_limit={limit}B"]
    argv = [str(bench_binary()), str(Path(__file__).with_suffix(".toml")), "--json"]
    for s in sets:
        argv += ["--set", s]
    # The bench prints its table on stdout and the summary's JSON on stderr.
    run = subprocess.run(argv, capture_output=True, text=True, check=True)
    return json.loads(run.stderr)


def spread(values: list[float]) -> str:
    """Min-max of `values` about their median, in per cent."""
    m = statistics.median(values)
    return f"{100 * (min(values) - m) / m:+.0f}/{100 * (max(values) - m) / m:+.0f} %"


def cpu_per_byte(record: dict, mtu: int) -> list[float]:
    """The unshaped runs' CPU-ns per received byte at `mtu` (records that measured it)."""
    return [r["cpu_ns_per_byte"] for r in record["runs"]
            if not r["shaped"] and r["mtu"] == mtu and "cpu_ns_per_byte" in r]


def check(args: argparse.Namespace) -> int:
    # One record, or several pooled: a session's median moves with the machine's state.
    record = {"runs": [r for p in args.records for r in json.loads(Path(p).read_text())["runs"]
                       if r.get("streams", 1) == args.streams]}
    if not record["runs"]:
        print(f"no runs with {args.streams} streams in {', '.join(args.records)}", file=sys.stderr)
        return 1
    loads = [r["load1"] for r in record["runs"]]
    fifo = {r.get("fifo") for r in record["runs"]}
    print(f"{len(record['runs'])} real runs; 1-minute load average median {statistics.median(loads):.2f} "
          f"(min {min(loads):.2f}, max {max(loads):.2f}) on {os.cpu_count()} CPUs; "
          f"SCHED_FIFO {sorted(f for f in fifo if f) or 'no'}")
    rows = []
    for shaped in (False, True):
        med = medians(record, shaped)
        for mtu, real in med.items():
            summary = simulate(mtu, shaped, args.seconds, args.streams)
            runs = [r["received_bps"] for r in record["runs"] if r["shaped"] == shaped and r["mtu"] == mtu]
            rows.append((shaped, mtu, real, sum(f["throughput_bps"] for f in summary["flows"]), runs))
    print("| path | MTU | role | runs | real median Gbit/s | spread | model Gbit/s | error |")
    print("|---|---|---|---|---|---|---|---|")
    for shaped, mtu, real, sim, runs in rows:
        path = "1 Gbit/s tbf" if shaped else "veth, unshaped"
        role = "fit" if (not shaped and mtu in FIT_MTUS) or (shaped and mtu == FIT_SHAPED_MTU) else "check"
        print(f"| {path} | {mtu} | {role} | {len(runs)} | {real / 1e9:.2f} | {spread(runs)} | {sim / 1e9:.2f} | "
              f"{100 * (sim - real) / real:+.1f} % |")
    unshaped = {mtu: (real, sim) for shaped, mtu, real, sim, _ in rows if not shaped}
    if all(m in unshaped for m in CHECK_MTUS):
        (r1, s1), (r9, s9) = unshaped[1500], unshaped[9000]
        real_ratio, sim_ratio = r9 / r1, s9 / s1
        print(f"| ratio 9000/1500 | | check | | {real_ratio:.3f} | | {sim_ratio:.3f} | "
              f"{100 * (sim_ratio - real_ratio) / real_ratio:+.1f} % |")
        # The same ratio from the CPU each byte cost, which the machine's load does not scale.
        c1, c9 = cpu_per_byte(record, 1500), cpu_per_byte(record, 9000)
        if c1 and c9:
            cpu_ratio = statistics.median(c1) / statistics.median(c9)
            print(f"| ratio by CPU-ns per byte, 1500/9000 | | check | {len(c1)}+{len(c9)} | {cpu_ratio:.3f} "
                  f"({statistics.median(c1):.2f}/{statistics.median(c9):.2f} ns, spread {spread(c1)}, "
                  f"{spread(c9)}) | | {sim_ratio:.3f} | {100 * (sim_ratio - cpu_ratio) / cpu_ratio:+.1f} % |")
    return 0


#: The issue's tolerance on the model's error (docs/fidelity.md), used to say how often a median of
#: n runs drawn from the pooled runs lands within it of their median.
TOLERANCE = 0.15


def session_effect(values: dict[str, list[float]], trials: int = 5000, seed: int = 1) -> float:
    """Permutation p-value of a session effect: how often the variance of the sessions' means of
    ln rate (the log tames a run at +146 %), with the runs shuffled between sessions (each keeping
    its size), is at least the observed one. A small p says the sessions differ by more than their
    runs' spread explains."""
    import numpy as np

    rng = np.random.default_rng(seed)
    labels = np.array([k for k, v in values.items() for _ in v])
    logs = np.log(np.array([x for v in values.values() for x in v]))
    keys = list(values)

    def stat(lab: np.ndarray) -> float:
        return float(np.var([np.mean(logs[lab == k]) for k in keys]))

    observed = stat(labels)
    return float(np.mean([stat(rng.permutation(labels)) >= observed for _ in range(trials)]))


def within_tolerance(values: list[float], n: int, trials: int = 20000, seed: int = 1) -> float:
    """The share of medians of `n` runs drawn (with replacement) from `values` that lie within
    TOLERANCE of the median of all of them."""
    import numpy as np

    rng = np.random.default_rng(seed)
    v = np.array(values)
    meds = np.median(rng.choice(v, (trials, n)), axis=1)
    return float(np.mean(np.abs(meds / np.median(v) - 1) <= TOLERANCE))


def sessions(args: argparse.Namespace) -> int:
    """Each record's unshaped medians beside the others', and whether they differ by more than the
    runs' own spread: the measure of how many runs a session needs."""
    import numpy as np

    records = {Path(p).stem.rsplit(".", 1)[-1]: json.loads(Path(p).read_text())["runs"] for p in args.records}
    mtus = sorted({r["mtu"] for runs in records.values() for r in runs if not r["shaped"]})
    print("| session | runs | load average | " + " | ".join(f"MTU {m} median (n)" for m in mtus) + " |")
    print("|---|---|---|" + "---|" * len(mtus))
    for name, runs in records.items():
        un = [r for r in runs if not r["shaped"]]
        loads = [r["load1"] for r in un]
        cells = []
        for m in mtus:
            v = [r["received_bps"] / 1e9 for r in un if r["mtu"] == m]
            cells.append(f"{statistics.median(v):.2f} ({len(v)})" if v else "")
        print(f"| {name} | {len(un)} | {min(loads):.1f}-{max(loads):.1f} | " + " | ".join(cells) + " |")
    for m in mtus:
        by = {k: [r["received_bps"] / 1e9 for r in runs if not r["shaped"] and r["mtu"] == m]
              for k, runs in records.items()}
        by = {k: v for k, v in by.items() if v}
        pooled = [x for v in by.values() for x in v]
        line = (f"MTU {m}: pooled median {statistics.median(pooled):.2f} Gbit/s of {len(pooled)} runs, per-run "
                f"spread (sd of ln rate) {float(np.std(np.log(pooled))):.2f}")
        if len(by) > 1:
            line += f"; session effect p = {session_effect(by):.2f}"
        line += "; a median of n runs within ±15 % of the pooled: " + ", ".join(
            f"n={n} {within_tolerance(pooled, n):.0%}" for n in (5, 10, 20, 40))
        print(line)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("measure", help="real iperf3 runs (root)")
    m.add_argument("--repeat", type=int, default=5)
    m.add_argument("--seconds", type=float, default=4.0)
    m.add_argument("--out", required=True)
    m.add_argument("--nice", type=int, default=-20,
                   help="iperf3's scheduling priority (default -20: the machine's other load takes "
                        "little of its cores; softirq runs ahead of any process anyway)")
    m.add_argument("--fifo", type=int, metavar="PRIO",
                   help="run both iperf3 ends under SCHED_FIFO at this priority (chrt -f; overrides "
                        "--nice): the machine's ordinary load then takes none of their CPU time")
    m.add_argument("--mtus", type=int, nargs="+", help="the MTUs to run (default: the fit's and the check's)")
    m.add_argument("--streams", type=int, default=1, help="parallel streams per test (iperf3 -P)")
    m.add_argument("--shaped-mtus", type=int, nargs="*",
                   help="the MTUs also run through the 1 Gbit/s tbf (default: the check's; none if given empty)")
    f = sub.add_parser("fit", help="fit the profile's costs on the FIT MTUs of one or more records, pooled")
    f.add_argument("records", nargs="+")
    c = sub.add_parser("check", help="the model against the CHECK MTUs of one or more records, pooled")
    c.add_argument("records", nargs="+")
    c.add_argument("--seconds", type=float, default=2.0)
    c.add_argument("--streams", type=int, default=1,
                   help="check the runs of this many parallel streams (the twin runs as many)")
    s = sub.add_parser("sessions", help="records' unshaped medians side by side, and whether the sessions "
                                        "differ by more than their runs' spread (no simulation)")
    s.add_argument("records", nargs="+")
    args = ap.parse_args(argv)
    try:
        return {"measure": measure, "fit": fit, "check": check, "sessions": sessions}[args.cmd](args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
