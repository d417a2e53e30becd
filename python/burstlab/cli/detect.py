"""``burstlab detect``: find the microbursts, and the flows that caused and suffered them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from burstlab.cli import output, status
from burstlab.cli.file_progress import file_progress


def command(
    input_: Annotated[Path, typer.Argument(metavar="INPUT", help="An INT-report capture, a plain capture, or a `burstlab run --out` directory.")],
    egress: Annotated[Path | None, typer.Option("--egress", metavar="FILE", help="Capture of the packets LEAVING the device whose arrivals INPUT holds: rebuild its queue from the two.")] = None,
    profile: Annotated[Path | None, typer.Option("--profile", metavar="FILE", help="Device profiles (TOML), as for `burstlab decode`.")] = None,
    port: Annotated[list[int] | None, typer.Option("--port", metavar="UDP", help="Report UDP port (repeatable). Default: 5900, 32766, 8090, 1234.")] = None,
    rise: Annotated[str | None, typer.Option("--rise", metavar="SIZE|PCT", help='Burst starts when the queue reaches this: "200KB", or "50%" of --buffer. Default: 25% of --buffer; without --buffer, half the deepest occupancy seen on each queue, at least 30KB.')] = None,
    fall: Annotated[str | None, typer.Option("--fall", metavar="SIZE|PCT", help="Burst ends when the queue drops below this. Default: half of the queue's rise.")] = None,
    buffer: Annotated[str | None, typer.Option("--buffer", metavar="SIZE", help='Queue buffer size, e.g. "64MiB": the default rise is 25% of it, and "%" thresholds are of it.')] = None,
    min_duration: Annotated[str | None, typer.Option("--min-duration", metavar="TIME", help='Shorter bursts are discarded. Default "0s": every burst the input resolves.')] = None,
    merge_gap: Annotated[str | None, typer.Option("--merge-gap", metavar="TIME", help='A re-rise this soon after the fall continues the burst. Default "1ms"; "0s" is the switch vendors\' definition.')] = None,
    link_rate: Annotated[str | None, typer.Option("--link-rate", metavar="RATE", help='Plain captures: the link\'s rate, e.g. "10Gbps"; windows above --rate-threshold of it are bursts.')] = None,
    timescale: Annotated[list[str] | None, typer.Option("--timescale", metavar="TIME", help='Plain captures: window length (repeatable). Default: those of 100us, 1ms, 10ms that hold ten 1500-byte packets at the threshold rate (longer on links too slow for any).')] = None,
    rate_threshold: Annotated[float | None, typer.Option("--rate-threshold", metavar="FRACTION", help="Plain captures: fraction of --link-rate that makes a window hot. Default 0.95.")] = None,
    top: Annotated[int, typer.Option("--top", metavar="K", help="Culprits and victims listed per burst.")] = 10,
    json_: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Detect microbursts and attribute them.

    Which detector runs depends on INPUT:

    * **INT reports** (any report on the report ports): per (switch, port, queue) a rise/fall
      hysteresis on the reported queue occupancy in bytes — the definition Cisco, Arista and
      Juniper use — with --min-duration and --merge-gap. Report loss (from sequence numbers,
      per switch and hw_id) is counted beside each burst.
    * **Two captures** (INPUT = packets entering a device, --egress = packets leaving it): the
      queue is rebuilt packet by packet (occupancy = entered − left − dropped), then as above.
    * **A plain capture**: bytes per window at each --timescale against --link-rate.
    * **A simulation directory** (`burstlab run --out`): its `int` table if the scenario has a
      [telemetry] section, else its `queue` table (depth only, no culprits) with the drops of
      `drops.parquet` counted in the burst on their queue.

    **Thresholds.** Switches take a rise and a fall in bytes, or in % of the queue's buffer. With
    --buffer the default rise is 25% of it. Without, the buffer is unknown and each queue gets
    half the deepest occupancy seen on it (the buffer is at least that deep; exactly that when
    the queue dropped), never less than 30KB (20 packets, where DCTCP marks on a 1 Gbit/s port):
    the bursts are a port's large excursions, not its routine queueing, and the rise used is in
    each burst's `definition`. Give --rise (or --buffer) to compare ports or captures on one
    scale.

    **Culprits and victims.** Each flow has one role per burst. A **culprit** had packets in the
    queue while it grew (from the start to the peak) and brought a larger share of those bytes
    than its share of the queue's traffic outside bursts: it is what changed (a burst source
    silent otherwise, a flow that sped up). Culprits rank by those bytes; `share` is of all of
    them. A **victim** is any other flow whose packets waited longer than the queue's usual
    latency or were dropped during the burst (in a plain capture: that retransmitted, or whose
    receiver sent duplicate ACKs, during it or up to 200 ms after). A culprit hurt by its own
    burst stays a culprit.

        burstlab detect int-reports.pcap
        burstlab detect int-reports.pcap --buffer 64MiB --rise 25% --min-duration 100us
        burstlab detect ingress.pcap --egress egress.pcap --buffer 64KB --rise 50%
        burstlab detect uplink.pcap --link-rate 10Gbps
        burstlab detect runs/r1

    Exit status: 0 done (also when no burst is found), 2 bad input or options, 130 interrupted
    (Ctrl-C), 1 internal error.
    """
    err = Console(stderr=True, highlight=False)
    raise typer.Exit(_detect(input_, egress, profile, port, rise, fall, buffer, min_duration, merge_gap,
                             link_rate, timescale, rate_threshold, top, json_, err))


def _detect(input_: Path, egress, profile, ports, rise, fall, buffer, min_duration, merge_gap,
            link_rate, timescales, rate_threshold, top, as_json: bool, err: Console) -> int:
    from burstlab.telemetry import detect

    size = input_.stat().st_size if input_.is_file() else 0
    with status.guarded("detect", err, interrupted="nothing printed"), \
            file_progress(err, "reading", size) as progress:
        result = detect(input_, egress=egress, profile=profile, ports=ports, rise=rise, fall=fall,
                        buffer=buffer, min_duration=min_duration, merge_gap=merge_gap,
                        link_rate=link_rate, timescales=timescales, rate_threshold=rate_threshold,
                        top=top, on_progress=progress)
    for warning in result.get("warnings", ()):
        err.print(f"burstlab detect: warning: {warning}", markup=False, soft_wrap=True)
    return output.emit(result, as_json, _print)


def _print(result: dict[str, Any]) -> None:
    from rich import box
    from rich.table import Table

    console = output.wide_console()
    bursts = result["bursts"]
    head = f"{result['input']} ({result['format']}): {len(bursts)} bursts"
    if result["format"] in ("int-reports", "simulation-int") or result.get("malformed"):
        # Always said for reports, 0 included: "0 bursts" means little when none could be read.
        head += (f" from {result['reports']} reports, {result['reports_lost']} reports lost, "
                 f"{result['malformed']} malformed, {_suspect(result)}")
    elif result.get("suspect_occupancy"):
        head += f", {_suspect(result)}"
    console.print(head, soft_wrap=True)
    if not bursts:
        return
    view = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    for name, just in (("switch/port/q", "left"), ("start s", "right"), ("duration", "right"),
                       ("peak", "right"), ("bytes", "right"), ("drops", "right"), ("lost rep", "right"),
                       ("top culprit (share)", "left"), ("worst victim (delay, drops)", "left")):
        view.add_column(name, justify=just)
    for b in bursts:
        c = b["culprits"][0] if b["culprits"] else None
        v = b["victims"][0] if b["victims"] else None
        view.add_row(
            f"{b['switch_id']}/{b['port']}/{b['queue_id']}", f"{b['start_s']:.6f}",
            _dur(b["duration_s"]), _size(b["peak_bytes"]), _size(b["bytes"]), str(b["drops"]),
            str(b["reports_lost"]),
            f"{c['flow']} ({c['share']:.0%})" if c else "-",
            f"{v['flow']} ({_dur(v['delay_s'])}, {v['drops']})" if v else "-",
        )
    console.print(view)
    seen: list[dict[str, Any]] = []
    for b in bursts:
        if b["definition"] not in seen:
            seen.append(b["definition"])
    for d in seen:
        console.print("definition: " + _definition(d))


def _suspect(result: dict[str, Any]) -> str:
    """`3 suspect (1 sequence jump, 2 occupancy beyond --buffer)`, or `0 suspect`."""
    seq, occ = result.get("suspect_sequence", 0), result.get("suspect_occupancy", 0)
    if not seq and not occ:
        return "0 suspect"
    return f"{seq + occ} suspect ({seq} sequence jump, {occ} occupancy beyond --buffer)"


def _definition(d: dict[str, Any]) -> str:
    """One line a reader can check against a switch's configuration."""
    if d["kind"] == "rate":
        return (f"rate over {_dur(d['window_s'])} windows above {d['threshold']:g} × "
                f"{d['link_bps'] / 1e9:g} Gbit/s")
    rise = f"rise {_size(d['rise_bytes'])}"
    if d.get("rise_of_deepest") is not None:
        rise += f" ({d['rise_of_deepest']:.0%} of the deepest occupancy on its queue)"
    return (f"hysteresis, {rise}, fall {_size(d['fall_bytes'])}, min duration "
            f"{_dur(d['min_duration_s'])}, merge gap {_dur(d['merge_gap_s'])}")


def _dur(s: float) -> str:
    if s == 0:
        return "0 s"
    if s >= 1:
        return f"{s:.3f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.3f} ms"
    return f"{s * 1e6:.1f} µs"


def _size(n: float) -> str:
    for unit, k in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= k:
            return f"{n / k:.1f} {unit}"
    return f"{int(n)} B"
