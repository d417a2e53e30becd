"""``burstlab explain``: what limited a real iperf3 transfer, and its simulated twin."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from burstlab.cli import output, status


def command(
    run_json: Annotated[Path, typer.Argument(metavar="RUN.json", help="iperf3's JSON output (iperf3 -c HOST -J [--get-server-output]).")],
    rtt: Annotated[str | None, typer.Option("--rtt", metavar="TIME", help='The path\'s round-trip time, e.g. "20ms". Default: the least RTT the sender measured.')] = None,
    rate: Annotated[str | None, typer.Option("--rate", metavar="RATE", help='The path\'s bottleneck rate, e.g. "10Gbps". Default: the fastest interval.')] = None,
    mtu: Annotated[int | None, typer.Option("--mtu", metavar="BYTES", help="The path MTU. Default: the JSON's pmtu.")] = None,
    buffer: Annotated[str | None, typer.Option("--buffer", metavar="SIZE", help='The bottleneck\'s buffer, e.g. "16KiB" (with --tbf: its limit).')] = None,
    tbf: Annotated[bool, typer.Option("--tbf", help="The bottleneck is a Linux tbf between hosts on veth pairs (as `burstlab validate` builds).")] = False,
    tcp_rmem: Annotated[str | None, typer.Option("--tcp-rmem", metavar="'MIN DEF MAX'", help="The receiver's net.ipv4.tcp_rmem.")] = None,
    tcp_wmem: Annotated[str | None, typer.Option("--tcp-wmem", metavar="'MIN DEF MAX'", help="The sender's net.ipv4.tcp_wmem.")] = None,
    rmem_max: Annotated[str | None, typer.Option("--rmem-max", metavar="SIZE", help="The receiver's net.core.rmem_max (with tcp_rmem's max it sets the window scale). Default: the simulator's 212,992.")] = None,
    cpu: Annotated[str | None, typer.Option("--cpu", metavar="PROFILE", help='The hosts\' CPU in the twin, a profile such as "veth-this-machine" (docs/scenarios.md). Default: hosts that never limit.')] = None,
    skb_scaling_ratio: Annotated[int | None, typer.Option("--skb-scaling-ratio", metavar="N", help="The len/truesize ratio (of 256) the receiver's first full-sized skb measures (Linux >= 6.6). Default: 128.")] = None,
    maxrate: Annotated[str | None, typer.Option("--maxrate", metavar="RATE", help="A pacing cap on the sender (fq maxrate, SO_MAX_PACING_RATE).")] = None,
    ss: Annotated[Path | None, typer.Option("--ss", metavar="FILE", help="`ss -tin` snapshots taken on the sender during the run: Linux's own count of the time the receiver's window and the send buffer held it.")] = None,
    what_if: Annotated[list[str] | None, typer.Option("--what-if", metavar="KEY=VALUE", help="Rerun the twin with this change (repeatable): tcp_rmem, tcp_wmem, cca, initcwnd, max_pacing_rate, rtt, rate, buffer, ... or a --set path.")] = None,
    emit_scenario: Annotated[Path | None, typer.Option("--emit-scenario", metavar="FILE", help="Write the twin's scenario TOML to FILE.")] = None,
    html: Annotated[Path | None, typer.Option("--html", metavar="FILE", help="Also write the result as a self-contained HTML page (the sweep reports' style).")] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Let --emit-scenario and --html replace an existing FILE.")] = False,
    no_twin: Annotated[bool, typer.Option("--no-twin", help="Only explain; build and replay no twin.")] = False,
    json_: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Explain what limited an iperf3 transfer, phase by phase, and replay its twin.

    Reads iperf3's JSON (client side, `-J`; with `-R` give `--get-server-output` so that the
    sender's cwnd and RTT are there) from any 3.x release. Each interval of the sender gets one
    limit: slow start, the congestion window after loss, pacing or maxrate, the receiver's
    window (snd_wnd, iperf3 >= 3.10, or --tcp-rmem), the path rate (--rate), the send buffer
    (tcp_wmem) or the receiving host; runs of one limit are phases, runs of retransmits are
    loss episodes. The twin is a dumbbell with the path (--rtt, --rate, --mtu, --buffer, or
    what the JSON tells) and one flow per stream carrying what the run sent; its throughput is
    compared with the real run's (a match is within 10 %). --what-if reruns it with one change
    and prints before and after.

        burstlab explain run.json --rate 10Gbps --rtt 20ms
        burstlab explain run.json --rate 1Gbps --what-if 'tcp_rmem=4096 131072 33554432'
        burstlab explain run.json --emit-scenario twin.toml --html run.html
        burstlab explain run.json --no-twin --json
        burstlab explain run.json --ss ss.txt    # ss.txt: `while sleep 1; do ss -tin dst HOST; done`

    Exit status: 0 explained, 2 bad input (not iperf3 JSON, an aborted run, a UDP test, an
    empty file) or options, or --emit-scenario/--html FILE exists without --overwrite, 130
    interrupted (Ctrl-C), 1 internal error.
    """
    err = Console(stderr=True, highlight=False)
    raise typer.Exit(_explain(run_json, dict(rtt=rtt, rate=rate, mtu=mtu, buffer=buffer, tbf=tbf, tcp_rmem=tcp_rmem,
                                             tcp_wmem=tcp_wmem, rmem_max=rmem_max, cpu=cpu,
                                             skb_scaling_ratio=skb_scaling_ratio, maxrate=maxrate, what_if=what_if or [],
                                             twin=not no_twin, ss=ss),
                              emit_scenario, html, overwrite, json_, err))


def _explain(run_json: Path, options: dict[str, Any], emit: Path | None, html: Path | None, overwrite: bool,
             as_json: bool, err: Console) -> int:
    from burstlab.advise import explain_iperf3
    from burstlab.advise.units import FlagError
    from burstlab.errors import OutputExistsError

    with status.guarded("explain", err, interrupted="nothing written"):
        for flag, target in (("--emit-scenario", emit), ("--html", html)):
            if target is not None and target.exists() and not overwrite:
                raise OutputExistsError(f"{flag} {target}: the file exists; give --overwrite to replace it")
        if emit is not None and not options["twin"]:
            raise FlagError("--emit-scenario needs the twin: drop --no-twin")
        result = explain_iperf3(run_json, **options)
        if emit is not None:
            _write(emit, result["scenario"])
        if html is not None:
            from burstlab.advise.page import to_html

            _write(html, to_html(result))
    return output.emit(result, as_json, lambda r: _print(r, emit, html))


def _write(path: Path, text: str) -> None:
    """Write through a temporary name and rename, so a FILE is never left half written."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    tmp.replace(path)


def _print(r: dict[str, Any], emit: Path | None, html: Path | None) -> None:
    from rich import box
    from rich.table import Table

    from burstlab.advise.explain import fmt_rate

    console = output.wide_console()
    console.print(f"{r['input']}: {r['version']}, {r['streams']} stream(s), {r['cca'] or 'cca unknown'}, "
                  f"{fmt_rate(r['throughput_bps'])} over {r['seconds']:.2f} s, "
                  f"{r['retransmits'] if r['retransmits'] is not None else '?'} retransmits", markup=False)
    console.print(f"[bold]{r['summary']}[/bold]")
    view = Table(box=box.SIMPLE_HEAD, pad_edge=False, title="phases")
    for name, just in (("from s", "right"), ("to s", "right"), ("limit", "left"), ("rate", "right"),
                       ("retr", "right"), ("evidence", "left")):
        view.add_column(name, justify=just, overflow="fold")
    for p in r["phases"]:
        view.add_row(f"{p['start_s']:.2f}", f"{p['end_s']:.2f}", p["limit"], fmt_rate(p["mean_bps"]),
                     str(p["retransmits"]), p["evidence"])
    console.print(view)
    if r["losses"]:
        console.print(f"loss episodes: {len(r['losses'])}: " + "; ".join(
            f"{e['start_s']:.2f}-{e['end_s']:.2f} s, {e['retransmits']} retransmits" for e in r["losses"][:8])
            + (" ..." if len(r["losses"]) > 8 else ""), markup=False)
    for note in r["notes"]:
        console.print(f"note: {note}", markup=False)
    for what, target in (("twin scenario", emit), ("page", html)):
        if target is not None:
            console.print(f"{what} written to {target}", markup=False)
    if "twin" not in r:
        return
    t, m = r["twin"], r["match"]
    verdict = "matches" if m["within"] else "does NOT match"
    console.print(f"twin: {fmt_rate(t['throughput_bps'])} (real {fmt_rate(r['throughput_bps'])}, "
                  f"{m['throughput_rel_error']:+.1%}): {verdict} within {m['tolerance']:.0%}; "
                  f"{t['retransmits']} retransmits, FCT {t['fct_s']:.3f} s", markup=False)
    if r["what_if"]:
        table = Table(box=box.SIMPLE_HEAD, pad_edge=False, title="what if")
        for name in ("change", "throughput before", "after", "FCT before", "after", "retr before", "after"):
            table.add_column(name, justify="left" if name == "change" else "right")
        for w in r["what_if"]:
            b, a = w["before"], w["after"]
            table.add_row(w["change"], fmt_rate(b["throughput_bps"]), fmt_rate(a["throughput_bps"]),
                          f"{b['fct_s']:.3f} s", f"{a['fct_s']:.3f} s", str(b["retransmits"]), str(a["retransmits"]))
        console.print(table)
