"""``burstlab validate``: compare the simulator with this machine's real Linux TCP."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from burstlab.cli import status


#: Where the records of real runs that ship with burstlab live; `--replay latest` takes the
#: newest (`newest_record`).
RECORDS = Path(__file__).resolve().parent.parent / "validate" / "records"
#: The shipped records of the incast matrix (each CCA through 64, 128 and 512 KB, N = 1-32):
#: `--replay latest-incast` takes the newest.
INCAST_RECORDS = RECORDS / "incast"


def newest_record(folder: Path = RECORDS) -> Path | None:
    """The shipped record made last, by the time it holds (`recorded.date`, UTC): names carry
    only the day and a word, and two sittings of one day need not sort by name."""
    shipped = sorted(folder.glob("*.json"))
    if not shipped:
        return None
    return max(shipped, key=lambda p: str(json.loads(p.read_text()).get("recorded", {}).get("date", "")))


@contextmanager
def _progress(err: Console, sides: str) -> Iterator[Callable[[int, int, str], None] | None]:
    """A bar over the cases on stderr while someone watches; nothing in a log."""
    if not err.is_terminal:
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("[bold]validate[/bold] {task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=err, transient=True) as bar:
        task = bar.add_task("", total=None)

        def update(done: int, total: int, label: str) -> None:
            bar.update(task, completed=done, total=total, description=f"{label} ({sides})")

        yield update


def command(
    quick: Annotated[bool, typer.Option("--quick", help="A lean subset: one flow each of reno, cubic and bbr at 64 and 128 KB, and through 16 and 32 KB at 100 Mbit/s; incast N in 1, 8, 32.")] = False,
    repeat: Annotated[int | None, typer.Option("--repeat", min=1, show_default=False, help="Real-side repetitions per case [default: 3]; --quick runs its three steady controls at most 5 times (compare.STEADY_QUICK).")] = None,
    json_: Annotated[bool, typer.Option("--json", help='Print {"cases": [...]} as JSON on stdout.')] = False,
    detail: Annotated[Path | None, typer.Option("--detail", help="Also write every metric of both sides (per case: the real runs' mean, median, min, max; the twin's values and the host parameters it was given) to this JSON file: a record --replay can run again.")] = None,
    replay: Annotated[str | None, typer.Option("--replay", metavar="RECORD", help="Run no real side: simulate the twins of a record --detail wrote again and compare them with the real runs it holds. 'latest' is the newest record shipped with burstlab, 'latest-incast' the newest of the incast matrix (reno, cubic, bbr through 64, 128, 512 KB). No root needed.")] = None,
    no_host_measurements: Annotated[bool, typer.Option("--no-host-measurements", help="Twins from what a user can describe, as a new user would build them: the tbf (rate, burst, limit), MTU, CCA, rto_min, quickack, HZ = 250, the hosts' socket-buffer sysctls and kernel, and one host profile calibrated once for this kind of machine (compare.HOST_PROFILE), never a run's own measured latencies. Incast only: the median QCT where the kernel has not collapsed (within 15 %, not widened by the runs' spread) and the onset of the collapse, the first N whose median QCT exceeds 100 ms (within one step). Live, it runs the whole incast matrix on the real side (126 cells; about 30 min at --repeat 3); with --replay, any record's incast cells.")] = False,
) -> None:
    """Run the same set-ups on real Linux and in the simulator and compare them metric by metric.

    The real side builds network namespaces joined by veth pairs with a `tbf` bottleneck
    (1 Gbit/s, 100 Mbit/s for one control), runs real reno/cubic/bbr between them with burstlab's own traffic tool, reads
    the kernel's counters (TCP_INFO, MIB), and tears everything down, also on Ctrl-C. No
    traffic leaves the namespaces it creates. Needs root.

    Cases: one bulk flow per CCA through a 64, 128 and 512 KB limit (throughput as a fraction
    of the shaped rate, FCT, retransmits, timeouts), and N-to-1 incast at 128 KB for N = 1 ...
    32, with the default RTO and with `rto_min 5ms quickack 1` on the routes (median and p99
    query completion time, retransmits, timeouts, the stall fraction: the share of queries over
    100 ms, and the first N where it reaches 10 %). Counts are compared where they are large
    enough to mean something (retransmits above 50, timeouts from 5 per run, the stall fraction
    where the real runs collapse). Two controls, where the hosts' scheduling hardly matters, so
    a miss there is most likely the simulator's: one 10 MB flow per CCA through a 100 Mbit/s tbf
    of 16 and 32 KB (one known exception: reno's occasional RTO through 16 KB,
    docs/validation-notes.md), and the 1 Gbit/s single flows again on links of MTU 9000, where
    the hosts do a sixth of the per-packet work. --quick: one flow per CCA at 64 and 128 KB,
    each of the three through 16 and 32 KB at 100 Mbit/s and through 128 KB at MTU 9000,
    incast N in 1, 8, 32 (what CI runs). The full matrix takes about three minutes at
    --repeat 3, --quick about 25 s per repetition.

    The simulated twin of each case is given what the hosts' CPUs did in its real runs: how
    long the receiving application took to read (its gap between reads at 1 Gbit/s and 1500
    bytes, where it falls behind; in the controls, which it keeps up with, how long arrived
    data waited for it; for incast, the aggregator's own share: not the time a flight it was
    held for took to arrive), where the hosts stalled a single flow,
    how the incast server spaced its responses (in a fresh order each query, as the real
    server's threads wake), and how long each connection's handshake took (the receiving
    host's latency, which the twin gives every segment it receives). Each row shows the
    real value (median of the repeats), the simulated value, the relative error and the
    tolerance: the issue's, or
    the band the real repeats spread over, widened by it, where that is wider. --detail keeps
    every metric of both sides, the twin's host parameters, and how often real runs agree with
    each other within the fixed tolerance. Below the table: how much of each single flow's
    transfer the busiest CPU spent on the hosts' network work (softirq), per rate, and the SRTT
    each incast case's connections started their responses on, real and twin (a longer one
    arms the loss probes a jiffy later). See docs/validation.md for what the real side can and
    cannot do on a shared 2-core machine.

    --replay RECORD runs only the twins, given what a --detail record says the real hosts did,
    and compares them with the real runs it holds: a change to the simulator checked against
    real Linux without root, the same result every time: `--replay latest` takes about 10 s of
    CPU time on one core (the twins run one after the other), so 10 to 30 s as the machine is
    idle or busy. It takes
    the newest record shipped with burstlab (python/burstlab/validate/records/, the full matrix
    behind docs/fidelity.md's table).

    --no-host-measurements builds each twin as a user would, from the set-up alone and one
    host profile calibrated once for this kind of machine, with nothing any run measured; it
    compares the incast cells only, on issue 36's terms (median QCT within 15 % where the
    kernel has not collapsed; the first N whose median QCT exceeds 100 ms within one step).
    `--replay latest-incast --no-host-measurements` is the table docs/fidelity.md reports.

    Exit status: 0 every case within tolerance, 1 some outside, 2 not root or a bad record,
    130 interrupted (Ctrl-C; nothing written).
    """
    err = Console(stderr=True, highlight=False)
    record: dict = {}
    if replay is not None:
        if quick or repeat is not None:
            err.print("burstlab validate: --replay runs no real side; --quick and --repeat do not apply "
                      "(the record holds the cases and repeats it was run with)")
            raise typer.Exit(status.BAD_INPUT)
        from burstlab.validate.compare import replay as replay_record, replay_described

        with status.guarded("validate", err, interrupted="nothing written"):
            record = _read_record(replay)
            with _progress(err, "twin") as progress:
                if no_host_measurements:
                    result = replay_described(record, progress=progress)
                    record = {}  # its twins had measurements: no 'was' column
                else:
                    result = replay_record(record, progress=progress)
    else:
        if os.geteuid() != 0:
            err.print("burstlab validate: the real side needs root (network namespaces); "
                      "--replay latest compares the simulator with recorded real runs without it")
            raise typer.Exit(status.BAD_INPUT)
        from burstlab.validate.compare import compare, compare_described

        if no_host_measurements and quick:
            err.print("burstlab validate: --no-host-measurements runs the incast matrix; --quick does not apply")
            raise typer.Exit(status.BAD_INPUT)
        with status.guarded("validate", err, interrupted="the namespaces are removed, nothing written"), \
                _progress(err, "real, then twin") as progress:
            if no_host_measurements:
                result = compare_described(repeat=repeat or 3, progress=progress)
            else:
                result = compare(quick=quick, repeat=repeat or 3, progress=progress)
    from burstlab.validate.compare import host_softirq_loads, incast_srtts

    cases = result["cases"]
    if detail is not None:
        from burstlab.validate.compare import record_json

        from burstlab.sweep.store import write_atomic

        write_atomic(detail, record_json(result).encode())  # whole or not at all, also on Ctrl-C
    if json_:
        print(json.dumps({"cases": cases}))
    else:
        # A replay also shows what the record's own twins gave, and which verdicts moved.
        recorded = {(c["name"], c["metric"]): c for c in record.get("cases", []) if isinstance(c, dict)}
        title = "real Linux vs burstlab" + (" (replayed: 'was' is the record's twin)" if recorded else "")
        table = Table(title=title, title_justify="left")
        heads = ("case", "metric", "real", "sim", *(("was",) if recorded else ()), "rel. error", "tolerance", "")
        for h in heads:
            table.add_column(h, justify="left" if h in ("case", "metric") else "right", no_wrap=True)
        for c in cases:
            was = recorded.get((c["name"], c["metric"]))
            verdict = "pass" if c["pass"] else "[red]FAIL[/red]"
            if was is not None and was.get("pass") != c["pass"]:
                verdict += " (was " + ("pass" if was.get("pass") else "FAIL") + ")"
            shown_was = (f"{was['sim']:.4g}" if isinstance(was, dict) and isinstance(was.get("sim"), int | float) else "-",)
            table.add_row(c["name"], c["metric"], f"{c['real']:.4g}", f"{c['sim']:.4g}",
                          *(shown_was if recorded else ()),
                          f"{c['rel_error']:.1%}" if not c["metric"].startswith("onset") else f"{c['rel_error']:.0f} step",
                          f"{c['tolerance']:.0%}" if not c["metric"].startswith("onset") else "1 step", verdict)
        # Piped to a file or CI log, rich would squeeze the table into 80 columns.
        out = Console()
        if not out.is_terminal:
            out = Console(width=140)
        out.print(table)
        loads = host_softirq_loads(result)
        if loads:
            # How near the hosts came to their own limit: what the 1 Gbit/s misses have in common.
            spans = "; ".join(f"{rate}: {min(v.values()):.0%}-{max(v.values()):.0%}" for rate, v in loads.items())
            out.print(f"Hosts: the busiest CPU's share of each single flow's transfer spent on network "
                      f"softirq work (median per case), {spans}. At 1 Gbit/s one CPU carries the "
                      "flow's whole path and has little left (docs/validation.md, \"Host softirq load\").")
        srtts = incast_srtts(result)
        if srtts:
            # The kernel's loss probes wait 2·SRTT + 2 ms in whole jiffies: a longer SRTT, a later probe.
            pairs = ", ".join(f"{name} {real:,.0f}/{sim:,.0f}" for name, (real, sim) in srtts.items())
            out.print(f"Incast SRTT as the responses start, µs (real/twin, median over the queries): {pairs} "
                      "(docs/validation.md, \"SRTT as the responses start\").")
    if not all(c["pass"] for c in cases):
        raise typer.Exit(1)


def _read_record(spec: str) -> dict:
    """The record `--replay` names: a file, or `latest` (the newest one shipped)."""
    from burstlab.errors import ReplayError

    if spec in ("latest", "latest-incast"):
        folder = RECORDS if spec == "latest" else INCAST_RECORDS
        path = newest_record(folder)
        if path is None:
            raise ReplayError(f"--replay {spec}: no record shipped in {folder}")
    else:
        path = Path(spec)
    try:
        text = path.read_text()
    except OSError as e:
        raise ReplayError(f"--replay {spec}: cannot read {path}: {e.strerror or e}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise ReplayError(f"--replay {spec}: {path} is not JSON (line {e.lineno}, column {e.colno}: {e.msg}); "
                          "expected the file burstlab validate --detail writes") from None
