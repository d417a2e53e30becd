"""``burstlab decode``: print the telemetry reports in a capture."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from burstlab.cli import status
from burstlab.cli.file_progress import file_progress


def command(
    capture: Annotated[Path, typer.Argument(metavar="FILE", help="A pcap or pcapng capture of INT report packets.")],
    json_: Annotated[bool, typer.Option("--json", help="One JSON object per report, one per line.")] = False,
    profile: Annotated[Path | None, typer.Option("--profile", metavar="FILE", help="Device profiles (TOML), per UDP port or switch id: cell size, timestamp width, flag layout, and which look-alike layout a device sends (docs/telemetry.md).")] = None,
    port: Annotated[list[int] | None, typer.Option("--port", metavar="UDP", help="Report UDP destination port (repeatable). Default: 5900, 32766, 8090, 1234.")] = None,
) -> None:
    """Decode Telemetry Reports (v0.5, its fabric-tna variant, v1.0, v2.0) and the INT-MD stacks
    they carry (v0.5, v1.0, v2.1) from a capture.

    Occupancy is always printed in bytes: without a profile, reports on UDP 5900 are read as
    AmLight's NoviFlow switches send them (80-byte cells, 32-bit timestamps). Hop counts come
    from the header lengths, never from RemainingHopCnt; a whole metadata word of all ones ("not
    available") prints as null; an all-ones sub-field beside a value is a value.

    Each report lists every hop, the reporting switch's own metadata first (from the report
    header), then the embedded INT stack, newest first. Frames that carry no report are counted
    by why (unreadable, not IP, not UDP, UDP to another port) in the summary on stderr; report
    frames under an MPLS label stack (fabric-tna between leaf and spine) are decoded.

    With --json each line is `{"frame", "report_version", "switch_id", "hw_id", "seq",
    "ingress_ts", "flags", "drop_reason", "int_version", "flow": {"src", "dst", "sport",
    "dport", "proto"}, "hops": [{"switch_id", "ingress_port", "egress_port", "hop_latency_ns",
    "queue_id", "queue_occupancy_bytes", "ingress_ts", "egress_ts"}], "source_only",
    "inner_error"}`: `flags` the letters of the D/Q/F bits set ("DQ", "F", ""), `int_version`
    the embedded INT-MD version ("0.5", "1.0", "2.1") or null, `source_only` INT v2.1
    source-only domain-specific metadata (`{"domain_id", "ds_instruction", "ds_flags", "hex"}`)
    or null, `inner_error` why the reported packet could not be read whole (its flow key or
    stack is then missing; the report and the switch's own metadata stand) or null. A report
    whose own header is malformed is `{"frame", "error", "offset"}` (the decoder goes on with
    the next frame). A capture cut short inside its last record (as one stopped mid-write is)
    is decoded up to the cut, with one warning on stderr naming it.

        burstlab decode int-reports.pcap --json | jq .hops[0].queue_occupancy_bytes

    Exit status: 0 decoded (malformed reports are listed, not fatal), 2 unreadable capture or
    profile, 130 interrupted (Ctrl-C), 1 internal error.
    """
    err = Console(stderr=True, highlight=False)
    raise typer.Exit(_decode(capture, json_, profile, port, err))


def _decode(capture: Path, as_json: bool, profile: Path | None, ports: list[int] | None, err: Console) -> int:
    from burstlab.telemetry import decode_lines

    out = sys.stdout
    if as_json:
        def write(lines: list[str]) -> None:
            if lines:  # the last batch may be empty: it only carries the final progress
                out.write("\n".join(lines) + "\n")
    else:
        table = _TextTable(out)
        write = table.write_batch
    size = capture.stat().st_size if capture.is_file() else 0
    with status.guarded("decode", err), file_progress(err, "decoding", size) as progress:
        stats = decode_lines(capture, write, profile=profile, ports=ports, on_progress=progress)
    for key in ("warning", "implausible"):
        if stats.get(key):
            err.print(f"burstlab decode: warning: {stats[key]}", markup=False, soft_wrap=True)
    # With --json the summary goes to stderr only when something was skipped, malformed or
    # suspect: never left out unsaid, and a clean capture's stderr stays empty for scripts.
    doubtful = stats["malformed"] or stats.get("suspect_sequence") or stats.get("implausible_records")
    if not as_json or doubtful or any((stats.get("skipped") or {}).values()):
        err.print(_summary(stats), markup=False, soft_wrap=True)
    return status.SUCCESS


#: How each reason a frame carries no report is said in the summary.
_SKIP_REASONS = (("unreadable", "unreadable"), ("not_ip", "not IP"), ("not_udp", "not UDP"),
                 ("other_port", "UDP to other ports"))


def _summary(stats: dict) -> str:
    """`12 reports, 0 malformed, 0 suspect, from 15 frames; 3 skipped (2 not IP, 1 not UDP)`."""
    line = (f"{stats['reports']} reports, {stats['malformed']} malformed, "
            f"{stats.get('suspect_sequence', 0)} suspect, from {stats['frames']} frames")
    skipped = stats.get("skipped") or {}
    total = sum(skipped.values())
    if total:
        why = ", ".join(f"{skipped[k]} {said}" for k, said in _SKIP_REASONS if skipped.get(k))
        line += f"; {total} skipped ({why})"
    if stats.get("implausible_records"):
        line += f"; {stats['implausible_records']} records with impossible lengths"
    return line


class _TextTable:
    """Fixed-width lines: one per hop (a report's first hop carries its header columns)."""

    HEADER = (f"{'frame':>7} {'ver':<14} {'int':<4} {'dqf':<3} {'drop':>4} {'switch':>10} {'hw':>3} "
              f"{'seq':>10}  {'flow':<44} "
              f"{'hop':>3} {'sw':>10} {'in':>5} {'out':>5} {'q':>3} {'occupancy_B':>12} {'latency_ns':>10}")

    def __init__(self, out) -> None:
        self.out = out
        self.out.write(self.HEADER + "\n")

    def write_batch(self, lines: list[str]) -> None:
        self.out.write("".join(self._rows(json.loads(line)) for line in lines))

    @staticmethod
    def _rows(r: dict) -> str:
        if "error" in r:
            return f"{r['frame']:>7} malformed at byte {r['offset']}: {r['error']}\n"
        f = r.get("flow")
        flow = f"{f['src']}:{f['sport']} > {f['dst']}:{f['dport']} {f['proto']}" if f else "-"
        head = (f"{r['frame']:>7} {r['report_version']:<14} {_n(r.get('int_version')):<4} "
                f"{r.get('flags') or '-':<3} {_n(r.get('drop_reason')):>4} {_n(r['switch_id']):>10} "
                f"{r['hw_id']:>3} {r['seq']:>10}  {flow:<44}")
        hops = r.get("hops") or [None]
        rows = []
        for i, h in enumerate(hops):
            lead = head if i == 0 else " " * len(head)
            if h is None:
                rows.append(f"{lead} {'-':>3}\n")
                continue
            rows.append(f"{lead} {i:>3} {_n(h['switch_id']):>10} {_n(h['ingress_port']):>5} "
                        f"{_n(h['egress_port']):>5} {_n(h['queue_id']):>3} "
                        f"{_n(h['queue_occupancy_bytes']):>12} {_n(h['hop_latency_ns']):>10}\n")
        if r.get("inner_error"):
            rows.append(f"{'':>7} reported packet not read whole: {r['inner_error']}\n")
        return "".join(rows)


def _n(v: object) -> str:
    return "-" if v is None else str(v)
