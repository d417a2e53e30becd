"""Human-readable rendering of a run (``burstlab run`` without ``--json``): iperf3's interval
lines while it proceeds, then the summary's tables."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:
    from burstlab.api import IntervalRow


def print_summary(console: Console, summary: dict[str, Any], out: Path | None) -> None:
    """Flows, ports and engine speed as rich tables on ``console``."""
    console.print(f"[bold]{summary['scenario']}[/bold]  seed {summary['seed']}")
    print_flows(console, summary["flows"])
    console.print(ports_table(summary["ports"]))
    console.print(engine_line(summary["engine"]))
    if out is not None:
        console.print(f"records written to {out}/")


def rows_not_kept_warning(summary: dict[str, Any]) -> str | None:
    """One line naming each record table that reached its cap (a quarter of the memory budget)
    and the rows it did not keep; ``None`` when every row was kept."""
    not_kept = summary.get("rows_not_kept") or {}
    if not not_kept:
        return None
    counts = ", ".join(f"{table} {n:,}" for table, n in not_kept.items())
    return (f"burstlab run: warning: rows not kept past their table's cap (a quarter of the "
            f"memory budget each): {counts}; a larger memory_budget keeps them")


def _table(title: str, caption: str) -> Table:
    return Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False,
                 caption=caption, caption_justify="left")


#: The flows table's columns; ``cca`` and ``path`` are left-aligned, ``path`` alone may wrap.
FLOW_COLUMNS = ("flow", "cca", "path", "size", "delivered", "FCT s", "done s", "Gbit/s", "retx",
                "RTOs", "max cwnd")

#: Rows per table when a run has more flows: rich holds a table's cells until it is printed
#: (about 5 KB a row), so 100,000 flows are printed as tables of this many rows, each column as
#: wide as its widest cell over all of them, so that they read as one table.
FLOW_ROWS_PER_TABLE = 1000

FLOWS_CAPTION = (
    "FCT: first SYN to last byte delivered; done: last byte acked at the sender; "
    "Gbit/s: delivered bytes x 8 / time active (the FCT; first SYN to the end of the run "
    "for an unfinished flow; the burst's duration for udp); retx: retransmitted segments; "
    "RTOs: timeouts"
)


def flow_cells(f: dict[str, Any]) -> tuple[str, ...]:
    """One summary flow's cells, in :data:`FLOW_COLUMNS` order."""
    # A UDP burst has no completion: its row shows what was sent and what got through.
    tcp = f["kind"] == "tcp"
    return (
        str(f["flow_id"]),
        f["cca"] or f["kind"],
        f"{f['src']} > {f['dst']}",
        human_bytes(f["size_bytes"]),
        human_bytes(f["delivered_bytes"]),
        seconds(f["fct_s"]) if tcp else "–",
        seconds(f["sender_done_s"]) if tcp else "–",
        gbps(throughput_gbps(f)),
        str(f["retransmits"]) if tcp else "–",
        str(f["timeouts"]) if tcp else "–",
        human_bytes(f["max_cwnd_bytes"]),
    )


def flows_table(flows: list[dict[str, Any]], widths: list[int] | None = None, *, first: bool = True,
                last: bool = True) -> Table:
    """The flows as one table; with ``widths``, a part of a longer one: its columns that wide,
    no blank edge lines, the title and header only on the ``first`` part, the caption on the
    ``last``."""
    table = Table(title="flows" if first else None, title_justify="left", box=box.SIMPLE_HEAD,
                  pad_edge=False, caption=FLOWS_CAPTION if last else None, caption_justify="left",
                  show_header=first, show_edge=widths is None)
    for k, header in enumerate(FLOW_COLUMNS):
        table.add_column(header, justify="left" if header in ("cca", "path") else "right",
                         no_wrap=header != "path", min_width=None if widths is None else widths[k])
    for f in flows:
        table.add_row(*flow_cells(f))
    return table


def print_flows(console: Console, flows: list[dict[str, Any]]) -> None:
    """The flows table on ``console``, in parts of :data:`FLOW_ROWS_PER_TABLE` rows if longer."""
    if len(flows) <= FLOW_ROWS_PER_TABLE:
        console.print(flows_table(flows))
        return
    widths = [cell_len(h) for h in FLOW_COLUMNS]
    for f in flows:
        widths = [max(w, cell_len(c)) for w, c in zip(widths, flow_cells(f), strict=True)]
    for start in range(0, len(flows), FLOW_ROWS_PER_TABLE):
        end = start + FLOW_ROWS_PER_TABLE
        console.print(flows_table(flows[start:end], widths, first=start == 0, last=end >= len(flows)))


def ports_table(ports: list[dict[str, Any]]) -> Table:
    table = _table(
        "ports",
        "max queue: peak bytes queued; mean queue: bytes queued averaged over the run's time "
        "(– where the queue is not recorded)",
    )
    for header in ("node", "port", "drops", "max queue", "mean queue", "ECN marks"):
        table.add_column(header, justify="left" if header in ("node", "port") else "right")
    for p in ports:
        mean = p.get("mean_queue_bytes")
        table.add_row(p["node"], p["port"], str(p["drops"]), human_bytes(p["max_queue_bytes"]),
                      "–" if mean is None else human_bytes(round(mean)), str(p["ecn_marks"]))
    return table


def engine_line(engine: dict[str, Any]) -> str:
    return (
        f"engine: {engine['events']:,} events in {engine['wall_s']:.3f} s wall "
        f"({engine['events_per_s'] / 1e6:.2f} M events/s), {engine['sim_time_s']:.3f} s simulated, "
        f"burstlab {engine['version']}"
    )


def throughput_gbps(flow: dict[str, Any]) -> float | None:
    """Goodput over the time the flow was active (the summary's ``throughput_bps``: delivered
    bytes × 8 / ``active_s``), Gbit/s; ``None`` for a flow that never started."""
    bps = flow["throughput_bps"]
    return None if bps is None else bps / 1e9


# ---- iperf3's interval lines -------------------------------------------------------------------

#: iperf3's client header with retransmits and cwnd (src/iperf_locale.c,
#: report_bw_retrans_cwnd_header).
INTERVAL_HEADER = "[ ID] Interval           Transfer     Bitrate         Retr  Cwnd"


def interval_line(row: IntervalRow) -> str:
    """One ``intervals`` row as iperf3 prints it (src/iperf_locale.c,
    report_bw_retrans_cwnd_format: ``[%3d] %6.2f-%-6.2f sec  %ss  %ss/sec  %3u   %ss``), the
    flow id in the ID column and times on the simulation clock."""
    transfer = iperf_units(row.bytes, bits=False)
    bitrate = iperf_units(row.bits_per_second / 8, bits=True)
    cwnd = iperf_units(row.cwnd_bytes, bits=False)
    return (
        f"[{row.flow_id:3d}] {row.t_start_s:6.2f}-{row.t_end_s:<6.2f} sec  {transfer}s  "
        f"{bitrate}s/sec  {row.retransmits:3d}   {cwnd}s"
    ).rstrip()


def iperf_units(num_bytes: float, *, bits: bool) -> str:
    """iperf3's adaptive units (src/units.c ``unit_snprintf`` with format ``A`` or ``a``):
    bytes in steps of 1024 (``KByte``), bits in steps of 1000 (``Kbit``), four significant
    places; iperf3 appends the plural ``s``."""
    value = num_bytes * 8 if bits else float(num_bytes)
    step = 1000.0 if bits else 1024.0
    labels = ("bit", "Kbit", "Mbit", "Gbit", "Tbit") if bits else ("Byte", "KByte", "MByte", "GByte", "TByte")
    k = 0
    while value >= step and k < len(labels) - 1:
        value /= step
        k += 1
    if value < 9.995:
        number = f"{value:4.2f}"
    elif value < 99.95:
        number = f"{value:4.1f}"
    else:
        number = f"{value:4.0f}"
    return f"{number} {labels[k]}"


def gbps(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def seconds(value: float | None) -> str:
    """Six significant digits: microseconds for a data-centre flow, milliseconds for a 13 GiB one."""
    return "unfinished" if value is None else f"{value:.6g}"


def human_bytes(n: int | None) -> str:
    """Binary units, as `ip`/`ss` and the seeds' GiB sizes: 1536 → "1.50 KiB"."""
    if n is None:
        return "–"
    if n < 1024:
        return f"{n} B"
    value = n / 1024
    for unit in ("KiB", "MiB", "GiB"):
        if value < 1024:
            return f"{value:.2f} {unit}"
        value /= 1024
    return f"{value:.2f} TiB"
