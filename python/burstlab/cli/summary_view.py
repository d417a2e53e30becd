"""Human-readable rendering of a run summary (``burstlab run`` without ``--json``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table


def print_summary(console: Console, summary: dict[str, Any], out: Path | None) -> None:
    """Flows, ports and engine speed as rich tables on ``console``."""
    console.print(f"[bold]{summary['scenario']}[/bold]  seed {summary['seed']}")
    console.print(flows_table(summary["flows"]))
    console.print(ports_table(summary["ports"]))
    console.print(engine_line(summary["engine"]))
    if out is not None:
        console.print(f"records written to {out}/")


def flows_table(flows: list[dict[str, Any]]) -> Table:
    table = Table(
        title="flows",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        caption="FCT: first SYN to last byte delivered; done: last byte acked at the sender; "
        "Gbit/s: delivered bytes x 8 / FCT; retx: retransmitted segments; RTOs: timeouts",
        caption_justify="left",
    )
    for header in ("flow", "cca", "path", "size", "delivered", "FCT s", "done s", "Gbit/s", "retx",
                   "RTOs", "max cwnd"):
        table.add_column(header, justify="left" if header in ("cca", "path") else "right",
                         no_wrap=header != "path")
    for f in flows:
        # A UDP burst has no completion: its row shows what was sent and what got through.
        tcp = f["kind"] == "tcp"
        table.add_row(
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
    return table


def ports_table(ports: list[dict[str, Any]]) -> Table:
    table = Table(title="ports", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    for header in ("node", "port", "drops", "max queue", "ECN marks"):
        table.add_column(header, justify="left" if header in ("node", "port") else "right")
    for p in ports:
        table.add_row(p["node"], p["port"], str(p["drops"]), human_bytes(p["max_queue_bytes"]),
                      str(p["ecn_marks"]))
    return table


def engine_line(engine: dict[str, Any]) -> str:
    return (
        f"engine: {engine['events']:,} events in {engine['wall_s']:.3f} s wall "
        f"({engine['events_per_s'] / 1e6:.2f} M events/s), {engine['sim_time_s']:.3f} s simulated, "
        f"burstlab {engine['version']}"
    )


def throughput_gbps(flow: dict[str, Any]) -> float | None:
    """Goodput over the flow's completion time (delivered bytes × 8 / FCT), Gbit/s; ``None``
    for an unfinished flow."""
    fct = flow["fct_s"]
    if not fct:
        return None
    return flow["delivered_bytes"] * 8 / fct / 1e9


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
