"""``burstlab run``: simulate one scenario."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from burstlab.cli import status


def command(
    scenario: Annotated[Path, typer.Argument(metavar="SCENARIO.toml", help="Scenario file (TOML).")],
    set_: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            metavar="PATH=VALUE",
            help='Override one scenario field, e.g. --set topology.rtt=100ms (repeatable).',
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            metavar="DIR",
            help="Write flows/intervals/queue/drops .parquet and summary.json into DIR.",
        ),
    ] = None,
    json_: Annotated[
        bool, typer.Option("--json", help="Print only the summary, as one JSON object, on stdout.")
    ] = False,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace the files of a non-empty --out DIR.")
    ] = False,
    int_pcap: Annotated[
        Path | None,
        typer.Option(
            "--int-pcap",
            metavar="FILE",
            help="Write the run's INT rows ([telemetry] int_ports) as Telemetry Report packets in a pcap, for `burstlab decode`/`detect`.",
        ),
    ] = None,
    int_version: Annotated[
        str,
        typer.Option("--int-version", metavar="1.0|2.0", help="Report format for --int-pcap: 1.0 = TR v1.0 + INT v1.0 as NoviFlow switches send it (UDP 5900), 2.0 = TR v2.0 (UDP 1234)."),
    ] = "1.0",
) -> None:
    """Simulate a scenario: TCP flows (Linux CUBIC, Reno, ...) crossing a switch bottleneck,
    hit by constant-rate UDP bursts; report each flow's completion time, throughput, retransmits
    and timeouts, and each port's drops and peak queue.

    Example: a 13 GiB CUBIC transfer over a 209 ms path hit by a 100 ms 4 x 25 Gbit/s burst,
    with a shorter RTT, saved as Parquet:

        burstlab run scenarios/amlight-209ms-burst.toml --set topology.rtt=100ms --out runs/rtt100

    Units: scenario files use human units ("100Gbps", "209ms", "13GiB"); output columns carry
    their unit in the name (fct_s seconds, bits_per_second, occupancy_bytes, srtt_us).
    Throughput is printed in Gbit/s (10^9 bit/s). --json prints the summary only (keys:
    scenario, seed, flows, ports, engine).

    Exit status: 0 ok, 2 bad input (scenario, --set, --out; nothing is written), 1 internal error.
    """
    err = Console(stderr=True, highlight=False)
    code = _run(scenario, set_ or [], out, json_, overwrite, err, int_pcap, int_version)
    raise typer.Exit(code)


def _run(
    scenario: Path, overrides: list[str], out: Path | None, as_json: bool, overwrite: bool, err: Console,
    int_pcap: Path | None = None, int_version: str = "1.0",
) -> int:
    from burstlab.api import check_output_dir, run

    with status.guarded("run", err):
        if out is not None:
            # Fail before a long simulation, not after it.
            check_output_dir(out, overwrite=overwrite)
        with _progress(err, enabled=not as_json and sys.stderr.isatty()):
            result = run(scenario, set=overrides)
        if out is not None:
            result.write(out, overwrite=overwrite)
        if int_pcap is not None:
            _write_int_pcap(result, int_pcap, int_version, err)

    if as_json:
        sys.stdout.write(json.dumps(result.summary) + "\n")
    else:
        from burstlab.cli.summary_view import print_summary

        console = Console(highlight=False)
        if not console.is_terminal:
            console.width = max(console.width, 120)  # a log file has no right margin to respect
        print_summary(console, result.summary, out)
    return status.SUCCESS


def _write_int_pcap(result, path: Path, version: str, err: Console) -> None:
    from burstlab.errors import TelemetryInputError
    from burstlab.telemetry import write_int_pcap

    table = result.table("int")
    if table.num_rows == 0:
        raise TelemetryInputError(
            "--int-pcap: the run recorded no INT rows; name switch ports in the scenario's "
            '[telemetry] section, e.g. int_ports = ["swA:swA->swB"]'
        )
    n = write_int_pcap(table, path, version=version)
    err.print(f"wrote {n} INT reports (TR v{version}) to {path}")


@contextmanager
def _progress(err: Console, *, enabled: bool) -> Iterator[None]:
    """A spinner with elapsed wall time on stderr while the simulator runs (the GIL is released
    during the run, so the spinner keeps turning)."""
    if not enabled:
        yield
        return
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    columns = (SpinnerColumn(), TextColumn("simulating"), TimeElapsedColumn())
    with Progress(*columns, console=err, transient=True) as progress:
        progress.add_task("run", total=None)
        yield
