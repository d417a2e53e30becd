"""``burstlab tune``: host settings for a path, each backed by a simulated before/after."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from burstlab.cli import output, status


def command(
    rate: Annotated[str, typer.Option("--rate", metavar="RATE", help='The path\'s bottleneck rate, e.g. "10Gbps": the slower of the path, the receiver, and what the hosts carry (iperf3 -w 2M through the path).')],
    rtt: Annotated[str, typer.Option("--rtt", metavar="TIME", help='The path\'s round-trip time, e.g. "92ms".')],
    mtu: Annotated[int, typer.Option("--mtu", metavar="BYTES", help="The largest MTU every hop carries.")] = 1500,
    host_rate: Annotated[str | None, typer.Option("--host-rate", metavar="RATE", help="The sending host's NIC rate. Default: --rate.")] = None,
    streams: Annotated[int, typer.Option("--streams", metavar="N", help="Parallel TCP streams of the transfer.")] = 1,
    burst: Annotated[list[str] | None, typer.Option("--burst", metavar="RATE:DURATION", help='An expected burst across the bottleneck, e.g. "25Gbps:100ms" (repeatable): every change is also simulated with it.')] = None,
    size: Annotated[str | None, typer.Option("--size", metavar="SIZE", help="The simulated transfer. Default: a second (or 20 RTTs) at --rate, at most 200,000 segments.")] = None,
    buffer: Annotated[str | None, typer.Option("--buffer", metavar="SIZE", help="The bottleneck's buffer in the twin. Default: the simulator's.")] = None,
    dev: Annotated[str, typer.Option("--dev", metavar="IFACE", help="The interface the tc and ip commands name.")] = "eth0",
    tbf: Annotated[bool, typer.Option("--tbf", help="The bottleneck is a Linux tbf between hosts on veth pairs (--buffer is its limit), as `explain --tbf`.")] = False,
    tcp_rmem: Annotated[str | None, typer.Option("--tcp-rmem", metavar="'MIN DEF MAX'", help="The receiver's net.ipv4.tcp_rmem now (the \"before\"). Default: Linux's.")] = None,
    tcp_wmem: Annotated[str | None, typer.Option("--tcp-wmem", metavar="'MIN DEF MAX'", help="The sender's net.ipv4.tcp_wmem now. Default: Linux's.")] = None,
    cca: Annotated[str | None, typer.Option("--cca", metavar="NAME", help="The sender's congestion control now: cubic (default), htcp, bbr or reno.")] = None,
    rmem_max: Annotated[str | None, typer.Option("--rmem-max", metavar="SIZE", help="The receiver's net.core.rmem_max (with tcp_rmem's max it sets the window scale). Default: tcp_rmem's max.")] = None,
    cpu: Annotated[str | None, typer.Option("--cpu", metavar="PROFILE", help='The hosts\' CPU in the twin, a profile such as "veth-this-machine" (docs/scenarios.md). Default: hosts that never limit.')] = None,
    skb_scaling_ratio: Annotated[int | None, typer.Option("--skb-scaling-ratio", metavar="N", help="The len/truesize ratio (of 256) the receiver's first full-sized skb measures (Linux >= 6.6). Default: 128.")] = None,
    ccas: Annotated[str, typer.Option("--ccas", metavar="A,B", help="Congestion controls the host can load, compared in the twin (its /proc/sys/net/ipv4/tcp_available_congestion_control).")] = "cubic,htcp,bbr",
    kernel: Annotated[str | None, typer.Option("--kernel", metavar="RELEASE", help="The receiving host's kernel release (`uname -r`): 6.18 and later grow the receive buffer their own way.")] = None,
    html: Annotated[Path | None, typer.Option("--html", metavar="FILE", help="Also write the result as a self-contained HTML page (the reports' style).")] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Let --html replace an existing FILE.")] = False,
    json_: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Recommend host settings for a path, each backed by a simulated before/after.

    Sizes the socket buffers from the bandwidth-delay product with the kernel's accounting
    (half a buffer is window), picks the congestion control, fq and a pacing rate below the
    receiver's when the host outruns the path (fq maxrate, or SO_MAX_PACING_RATE above fq's
    34.36 Gbit/s), initcwnd/initrwnd, the MTU, and tcp_no_metrics_save. Each change is replayed
    on a dumbbell twin of the path, cumulatively from the host as it is (--tcp-rmem, --tcp-wmem,
    --cca; Linux's defaults when not given), with and without the --burst given; one the
    simulation shows hurting is left out, and no buffer the host has is lowered. Prints a sysctl.conf fragment,
    the tc and ip commands, and the before/after table (FCT, throughput, retransmits).

        burstlab tune --rate 10Gbps --rtt 8ms
        burstlab tune --rate 100Gbps --rtt 209ms --mtu 9000 --burst 25Gbps:100ms
        burstlab tune --rate 10Gbps --host-rate 100Gbps --rtt 92ms --streams 4 --dev ens1f0
        burstlab tune --rate 10Gbps --rtt 20ms --json
        burstlab tune --rate 10Gbps --rtt 20ms --html tune.html
        burstlab tune --rate 50Mbps --host-rate 500Mbps --rtt 250us --tbf --buffer 16KiB --cca bbr

    Exit status: 0 advised, 2 bad options (the flag is named) or --html FILE exists without
    --overwrite, 130 interrupted (Ctrl-C), 1 internal error.
    """
    err = Console(stderr=True, highlight=False)
    raise typer.Exit(_tune(dict(rate=rate, rtt=rtt, mtu=mtu, host_rate=host_rate, streams=streams,
                                bursts=burst or [], size=size, buffer=buffer, dev=dev, tbf=tbf, tcp_rmem=tcp_rmem,
                                tcp_wmem=tcp_wmem, cca=cca, kernel=kernel,
                                rmem_max=rmem_max, cpu=cpu, skb_scaling_ratio=skb_scaling_ratio,
                                ccas=[c.strip() for c in ccas.split(",") if c.strip()]), html, overwrite, json_, err))


def _tune(options: dict[str, Any], html: Path | None, overwrite: bool, as_json: bool, err: Console) -> int:
    from burstlab.advise.tune import to_html, tune
    from burstlab.cli.explain import _write
    from burstlab.errors import OutputExistsError

    def progress(done: int, total: int, what: str) -> None:
        if err.is_terminal or done == 0 or done == total:
            err.print(f"tune: simulation {min(done + 1, total)}/{total}: {what}", markup=False)

    with status.guarded("tune", err, interrupted="nothing written"):
        if html is not None and html.exists() and not overwrite:
            raise OutputExistsError(f"--html {html}: the file exists; give --overwrite to replace it")
        result = tune(**options, progress=progress)
        if html is not None:
            _write(html, to_html(result))
    return output.emit(result, as_json, _print)


def _print(r: dict[str, Any]) -> None:
    from rich import box
    from rich.table import Table

    from burstlab.advise.explain import fmt_bytes, fmt_rate

    console = output.wide_console()
    p, f = r["path"], r["figures"]
    console.print(f"path {fmt_rate(p['rate_bps'])}, RTT {p['rtt_s'] * 1e3:.4g} ms, MTU {p['mtu']}, host "
                  f"{fmt_rate(p['host_rate_bps'])}, {p['streams']} stream(s): BDP {fmt_bytes(f['bdp_bytes'])}; "
                  f"simulated transfer {fmt_bytes(p['transfer_bytes'])}", markup=False)
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, title="simulated: each change on top of those kept before it")
    for name in ("change", "case", "FCT s", "throughput", "retransmits", "advised"):
        table.add_column(name, justify="left" if name in ("change", "case", "advised") else "right")
    for row in r["changes"]:
        verdict = "yes" if row["kept"] else "NO: simulated worse"
        if not row["simulated"]:
            table.add_row(row["change"], "not simulated", "", "", "", verdict)
            continue
        for case, b in row["before"].items():
            a = row["after"][case]
            table.add_row(row["change"], case, f"{b['fct_s']:.3f} -> {a['fct_s']:.3f}",
                          f"{fmt_rate(b['throughput_bps'])} -> {fmt_rate(a['throughput_bps'])}",
                          f"{b['retransmits']} -> {a['retransmits']}", verdict)
    console.print(table)
    for row in r["changes"]:
        console.print(f"{row['change']}: {row['why']}", markup=False)
    console.print("")
    console.print(r["sysctl_conf"], markup=False, end="")
    if r["commands"]:
        console.print("")
        for cmd in r["commands"]:
            console.print(cmd, markup=False, soft_wrap=True)
    for note in r["notes"]:
        console.print(f"note: {note}", markup=False)
