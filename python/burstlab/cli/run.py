"""``burstlab run``: simulate one scenario."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from burstlab.cli import params, status

if TYPE_CHECKING:
    from burstlab.api import IntervalRow, RunResult
    from burstlab.outputs import StagedFile

#: Report formats --int-version accepts (burstlab.telemetry.write_int_pcap).
INT_VERSIONS = ("1.0", "2.0")
#: The scenario loader's shortest interval (crates/sim/src/scenario/defaults.rs MIN_INTERVAL).
MIN_INTERVAL_S = 0.001


def command(
    scenario: params.Scenario,
    set_: params.Overrides = None,
    interval: Annotated[
        float | None,
        typer.Option(
            "--interval",
            metavar="SECONDS",
            help="Report every SECONDS of simulated time, as iperf3 -i (at least 0.001); "
            "default: the scenario's interval. Also the period of the intervals table.",
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            metavar="DIR",
            help="Write flows/intervals/queue/drops/queries/int .parquet and summary.json into "
            "DIR (new, or holding other files, which are left alone).",
        ),
    ] = None,
    json_: Annotated[
        bool, typer.Option("--json", help="Print only the summary, as one JSON object, on stdout.")
    ] = False,
    overwrite: Annotated[
        bool,
        typer.Option(
            "--overwrite",
            help="Replace the files an earlier run wrote in --out DIR (and an existing "
            "--int-pcap file); nothing else is touched.",
        ),
    ] = False,
    int_pcap: Annotated[
        Path | None,
        typer.Option(
            "--int-pcap",
            metavar="FILE",
            help="Write the run's INT rows as Telemetry Report packets in a pcap, for "
            "`burstlab decode`/`detect`; needs [telemetry] int_ports in the scenario.",
        ),
    ] = None,
    int_version: Annotated[
        str,
        typer.Option(
            "--int-version",
            metavar="1.0|2.0",
            help="Report format for --int-pcap: 1.0 = TR v1.0 + INT v1.0 as NoviFlow switches "
            "send it (UDP 5900), 2.0 = TR v2.0 (UDP 1234).",
        ),
    ] = "1.0",
) -> None:
    """Simulate a scenario: TCP flows (Linux CUBIC, Reno, BBR, ...) through a switch bottleneck,
    hit by constant-rate UDP bursts. While it runs, one iperf3-style line per flow and interval;
    at the end, each flow's completion time, throughput and retransmits, and each port's peak
    and mean queue, drops and ECN marks.

    Examples: a 13 GiB CUBIC transfer over a 209 ms path hit by a 100 ms, 4 x 25 Gbit/s burst;
    the same with a shorter RTT, saved as Parquet; reports every 100 ms of simulated time; the
    INT a switch would export, as a capture:

        burstlab run scenarios/amlight-209ms-burst.toml
        burstlab run scenarios/amlight-209ms-burst.toml --set topology.rtt=100ms --out runs/rtt100
        burstlab run scenarios/amlight-209ms-burst.toml --interval 0.1
        burstlab run scenarios/int-burst.toml --out runs/int --int-pcap runs/int.pcap

    Interval lines (stdout), as iperf3's client prints them: [ ID] the flow, Interval in
    simulated seconds, Transfer the bytes acknowledged in it (iperf3's units: 1 KByte = 1024
    bytes), Bitrate in bits/sec (1 Gbit = 10^9 bits), Retr the segments retransmitted in it,
    Cwnd the congestion window at its end. --json prints no interval lines: stdout is then one
    JSON object (keys: scenario, seed, flows, ports, engine). On a terminal a spinner shows the
    simulated time on stderr.

    Outputs: DIR may be new or hold other files; burstlab writes only its own names there,
    with a manifest (.burstlab-manifest.json) naming what it wrote. --overwrite replaces those
    files and nothing else; a file under one of burstlab's names that burstlab did not write
    is refused. --out, --int-pcap and the scenario are all checked before the simulation
    starts, and output is written all or nothing.

    Units: scenario files use human units ("100Gbps", "209ms", "13GiB"); output columns carry
    their unit in the name (fct_s seconds, bits_per_second, occupancy_bytes, srtt_us); the
    summary prints throughput in Gbit/s (10^9 bit/s) and sizes in binary units (GiB).

    Ctrl-C stops the run within a second and writes nothing.

    Exit status: 0 ok; 2 bad input (scenario, --set, an option, an output location; nothing
    is written); 130 interrupted (Ctrl-C; nothing is written); 141 the reader of stdout went
    away (`burstlab run ... | head`; a run still under way stops and writes nothing); 1
    internal error.
    """
    err = Console(stderr=True, highlight=False)
    options = _Options(set_ or [], interval, out, json_, overwrite, int_pcap, int_version)
    raise typer.Exit(_run(scenario, options, err))


class _Options:
    def __init__(
        self, overrides: list[str], interval: float | None, out: Path | None, as_json: bool,
        overwrite: bool, int_pcap: Path | None, int_version: str,
    ) -> None:
        self.overrides = overrides
        self.interval = interval
        self.out = out
        self.as_json = as_json
        self.overwrite = overwrite
        self.int_pcap = int_pcap
        self.int_version = int_version


def _run(scenario: Path, opts: _Options, err: Console) -> int:
    from burstlab import _core
    from burstlab.api import check_output_dir, read_scenario, run

    with status.guarded("run", err, interrupted="nothing written"):
        text = read_scenario(scenario)
        overrides = [*opts.overrides, *_interval_override(opts.interval)]
        # Validated, but only the fields read here come back: the whole normalised scenario
        # (burstlab.load) held 1.2 GB at 100,000 flows before the run had started.
        scn = json.loads(_core.check_scenario(text, overrides))
        # Every output is checked before a simulation that may take minutes.
        if opts.out is not None:
            check_output_dir(opts.out, overwrite=opts.overwrite, label="--out", overwrite_flag="--overwrite")
        if opts.int_pcap is not None:
            _check_int_pcap(opts.int_pcap, opts.int_version, opts.overwrite, scn)
        lines = None if opts.as_json else _IntervalLines(scn.get("streams", []))
        with _progress(err, enabled=err.is_terminal) as show:

            def on_progress(sim_time_s: float, rows: list[IntervalRow]) -> None:
                show(sim_time_s)
                if lines is not None:
                    lines.print(rows)

            result = run(text, set=overrides, progress=on_progress)
            show(None)
            _write(result, opts, err)
        from burstlab.cli.summary_view import rows_not_kept_warning

        if (warning := rows_not_kept_warning(result.summary)) is not None:
            err.print(warning, markup=False, soft_wrap=True)

    if opts.as_json:
        sys.stdout.write(json.dumps(result.summary) + "\n")
    else:
        from burstlab.cli.summary_view import print_summary

        console = Console(highlight=False)
        if not console.is_terminal:
            console.width = max(console.width, 120)  # a log file has no right margin to respect
        if lines is not None and lines.printed:
            console.print()
        print_summary(console, result.summary, opts.out)
    return status.SUCCESS


def _interval_override(interval: float | None) -> list[str]:
    """``--interval SECONDS`` as the scenario override it stands for."""
    from burstlab.errors import ScenarioError

    if interval is None:
        return []
    if not math.isfinite(interval) or interval < MIN_INTERVAL_S:
        raise ScenarioError(
            f"--interval {interval:g}: expected a report interval of at least {MIN_INTERVAL_S:g} "
            "seconds, such as 1 or 0.1",
            "invalid_value",
        )
    return [f"interval={interval!r}s"]


def _check_int_pcap(path: Path, version: str, overwrite: bool, scn: dict[str, Any]) -> None:
    """--int-pcap must mean something for this scenario, and be writable."""
    from burstlab.errors import ScenarioError
    from burstlab.outputs import check_output_file

    if version not in INT_VERSIONS:
        raise ScenarioError(
            f"--int-version {version}: expected one of {', '.join(INT_VERSIONS)}", "invalid_value"
        )
    if not scn["telemetry"]["int_ports"]:
        raise ScenarioError(
            f"--int-pcap {path}: scenario {scn['name']!r} records no INT; expected a scenario "
            'whose [telemetry] section names switch ports, e.g. int_ports = ["swA:swA->swB"]',
            "invalid_value",
        )
    check_output_file(path, overwrite=overwrite, label="--int-pcap", overwrite_flag="--overwrite")


def _write(result: RunResult, opts: _Options, err: Console) -> None:
    """All of the run's outputs or none: the capture is staged first (it can still fail on the
    run's rows), then the directory is written, then the capture renamed into place."""
    staged, reports = _stage_int_pcap(result, opts) if opts.int_pcap is not None else (None, 0)
    try:
        if opts.out is not None:
            result._write(opts.out, overwrite=opts.overwrite, label="--out", overwrite_flag="--overwrite")
        if staged is not None:
            staged.commit()
    except BaseException:
        if staged is not None:
            staged.discard()
        raise
    if staged is not None:
        err.print(f"wrote {reports} INT reports (TR v{opts.int_version}) to {opts.int_pcap}", markup=False)


def _stage_int_pcap(result: RunResult, opts: _Options) -> tuple[StagedFile, int]:
    from burstlab.errors import TelemetryInputError
    from burstlab.outputs import StagedFile, check_output_file
    from burstlab.telemetry import write_int_pcap

    assert opts.int_pcap is not None
    check_output_file(opts.int_pcap, overwrite=opts.overwrite, label="--int-pcap", overwrite_flag="--overwrite")
    table = result.table("int")
    if table.num_rows == 0:
        raise TelemetryInputError(
            f"--int-pcap {opts.int_pcap}: the run recorded no INT rows (no packet crossed the "
            "scenario's [telemetry] int_ports); nothing written"
        )
    staged = StagedFile(opts.int_pcap)
    try:
        return staged, write_int_pcap(table, staged.path, version=opts.int_version)
    except BaseException:
        staged.discard()
        raise


class _IntervalLines:
    """iperf3's interval report on stdout, flushed as rows arrive so a pipe sees them live; a
    flow of several streams (``streams``, iperf3 ``-P``) also gets iperf3's ``[SUM]`` line per
    interval once each of its streams' rows is in."""

    def __init__(self, streams: list[int]) -> None:
        self.printed = False
        # flow id -> (its [[flow]] entry, the entry's stream count), for entries of 2+ streams:
        # the loader numbers an entry's streams consecutively.
        self.group: dict[int, tuple[int, int]] = {}
        first = 0
        for entry, n in enumerate(streams):
            self.group.update({first + k: (entry, n) for k in range(n) if n > 1})
            first += n
        self.pending: dict[tuple[int, float], list[IntervalRow]] = {}

    def print(self, rows: list[IntervalRow]) -> None:
        from burstlab.cli.summary_view import INTERVAL_HEADER, interval_line

        if not rows:
            return
        text = []
        for row in rows:
            text.append(interval_line(row))
            if row.flow_id in self.group:
                entry, n = self.group[row.flow_id]
                got = self.pending.setdefault((entry, row.t_start_s), [])
                got.append(row)
                if len(got) == n:
                    text.append(_sum_line(self.pending.pop((entry, row.t_start_s))))
        if not self.printed:
            text.insert(0, INTERVAL_HEADER)
            self.printed = True
        sys.stdout.write("\n".join(text) + "\n")
        sys.stdout.flush()


def _sum_line(rows: list[IntervalRow]) -> str:
    """iperf3's ``[SUM]`` of one interval's streams (src/iperf_locale.c
    report_sum_bw_retrans_format), no cwnd column."""
    from burstlab.cli.summary_view import iperf_units

    r = rows[0]
    transfer = iperf_units(sum(x.bytes for x in rows), bits=False)
    bitrate = iperf_units(sum(x.bits_per_second for x in rows) / 8, bits=True)
    retransmits = sum(x.retransmits for x in rows)
    return f"[SUM] {r.t_start_s:6.2f}-{r.t_end_s:<6.2f} sec  {transfer}s  {bitrate}s/sec  {retransmits:3d}"


@contextmanager
def _progress(err: Console, *, enabled: bool) -> Iterator[Any]:
    """A spinner with the simulated time and the elapsed wall time on stderr while the run
    proceeds; yields ``show(sim_time_s)`` (``None``: the simulation is over, writing begins).
    Interval lines written to a terminal's stdout meanwhile appear above it."""
    if not enabled:
        yield lambda _t: None
        return
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    columns = (SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn())
    with Progress(*columns, console=err, transient=True, redirect_stdout=sys.stdout.isatty()) as progress:
        task = progress.add_task("simulating", total=None)

        def show(sim_time_s: float | None) -> None:
            text = "writing" if sim_time_s is None else f"simulating: t = {sim_time_s:.2f} s"
            progress.update(task, description=text)

        yield show
