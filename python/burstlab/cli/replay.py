"""``burstlab replay``: send the report packets of a capture to a collector over UDP."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from burstlab.cli import status


def command(
    capture: Annotated[Path, typer.Argument(metavar="CAPTURE", help="A pcap/pcapng with INT reports: a real capture, or `burstlab run --int-pcap`.")],
    to: Annotated[str, typer.Option("--to", metavar="ADDR:PORT", help="The collector, e.g. 127.0.0.1:5900.")],
    speed: Annotated[str, typer.Option("--speed", metavar="1x|max", help='The capture\'s own pace times this ("1x", "10x", "0.5x"), or "max": as fast as the socket takes them.')] = "1x",
    rate: Annotated[float | None, typer.Option("--rate", metavar="PPS", help="Send this many report datagrams per second instead, evenly spaced.")] = None,
    port: Annotated[list[int] | None, typer.Option("--port", metavar="UDP", help="Report UDP port in the capture (repeatable). Default: 5900, 32766, 8090, 1234.")] = None,
    repeat: Annotated[int, typer.Option("--repeat", metavar="N", help="Send the capture N times over (a load test longer than the capture).")] = 1,
    json_: Annotated[bool, typer.Option("--json", help="Print the counts as one JSON object.")] = False,
) -> None:
    """Replay the telemetry reports of a capture over UDP, to drive or load-test a collector.

    The UDP payloads sent to the report ports in CAPTURE (what `burstlab decode` reads) are sent
    to --to, batched with sendmmsg, at the capture's pace (--speed), at a fixed --rate, or as
    fast as possible (--speed max). Send them to the port the switches used (or give the
    collector a --profile): the port chooses how reports are read.

        burstlab run scenarios/int-burst.toml --int-pcap int.pcap
        burstlab replay int.pcap --to 127.0.0.1:5900
        burstlab replay int.pcap --to 127.0.0.1:5900 --speed max --repeat 100

    Exit status: 0 sent, 2 bad input or options, 130 interrupted (Ctrl-C), 1 internal error.
    """
    from rich.console import Console

    err = Console(stderr=True, highlight=False)
    raise typer.Exit(_replay(capture, to, speed, rate, port, repeat, json_, err))


def _replay(capture: Path, to: str, speed: str, rate: float | None, ports: list[int] | None, repeat: int,
            as_json: bool, err) -> int:
    from burstlab.collect import replay

    with status.guarded("replay", err, interrupted="stopped sending"):
        result = replay(capture, to, speed=speed, rate=rate, ports=ports, repeat=repeat)
    if as_json:
        sys.stdout.write(json.dumps(result) + "\n")
    else:
        seconds = result["seconds"]
        err.print(f"burstlab replay: sent {result['sent']:,} report datagrams ({result['bytes']:,} bytes) from "
                  f"{result['frames']:,} frames in {seconds:.3f} s ({result['sent'] / max(seconds, 1e-9):,.0f}/s)"
                  + (f"; {result['refused']} refused (nothing listening at {to})" if result["refused"] else ""),
                  markup=False, soft_wrap=True)
    return status.SUCCESS
