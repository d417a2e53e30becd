"""The network a scenario runs on, expanded: its nodes, its links (rate, propagation delay and
each direction's egress port) and each flow's path and base RTT, to check a topology before
running it (docs/graphs.md).

>>> from burstlab.graph import expand
>>> g = expand("scenarios/graphs/leaf-spine-incast.toml")  # doctest: +SKIP
>>> print(g.to_text())                                     # doctest: +SKIP
>>> g.flows[0]["path"], g.flows[0]["base_rtt_s"]           # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

from burstlab import _core
from burstlab.api import overrides, read_scenario

__all__ = ["expand", "Graph", "FORMATS"]

#: What :meth:`Graph.render` writes.
FORMATS = ("text", "json", "dot")


def expand(
    scenario: str | os.PathLike[str],
    *,
    set: Sequence[str] | Mapping[str, Any] | None = None,  # noqa: A002 - mirrors the CLI's --set
) -> Graph:
    """Load ``scenario`` (a path or the TOML text, with ``set`` overrides as for
    :func:`burstlab.run`) and expand its topology without running it: a dumbbell's keys or a
    preset become nodes and links, and every flow is routed as the run would route it (same
    seed, same ECMP choices).

    Raises
    ------
    burstlab.errors.ScenarioError
        The scenario or its graph is wrong (an unknown node in a link, a flow's ``path`` not
        connected, no route, ...); the message names the field, the value and what was expected.
    """
    return Graph(json.loads(_core.graph_view(read_scenario(scenario), overrides(set))))


class Graph:
    """An expanded network. ``data`` is the JSON :meth:`to_json` writes: ``scenario``,
    ``preset``, ``mtu_bytes``; ``nodes`` (``name``, ``kind`` ``host`` or ``switch``); ``links``
    (``a``, ``b``, ``rate_bps``, one-way ``delay_s``, and per direction ``ab`` (the port at ``a``
    towards ``b``) and ``ba``: a switch port's ``buffer_bytes``, ``scheduler``, ``queues``,
    ``tbf``, whether the ``queue`` table ``recorded`` it, or a host's ``qdisc``, ``buffer_bytes``
    null, ``nic_rate_bps`` (its ``nic_rate``, the rate the port serializes at, or null for the
    link's) and ``nic_binds`` (that rate is below the link's, so it caps what the host sends));
    ``flows`` (``flow_id``, ``kind`` ``tcp`` or ``udp``, the scenario
    ``entry`` it comes from, ``src``, ``dst``, ``path`` and ``ack_path`` as node names (null for
    UDP), and ``base_rtt_s``: an MTU-sized segment out and a 52-byte ACK back through empty
    queues; a UDP source's one-way delay)."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    @property
    def nodes(self) -> list[dict[str, Any]]:
        return self.data["nodes"]

    @property
    def links(self) -> list[dict[str, Any]]:
        return self.data["links"]

    @property
    def flows(self) -> list[dict[str, Any]]:
        return self.data["flows"]

    def render(self, fmt: str) -> str:
        """The graph as ``text``, ``json`` or ``dot``; ``ValueError`` for another format."""
        if fmt == "text":
            return self.to_text()
        if fmt == "json":
            return self.to_json()
        if fmt == "dot":
            return self.to_dot()
        raise ValueError(f"format {fmt!r}: expected one of {', '.join(FORMATS)}")

    def to_json(self) -> str:
        d = self.data
        keys = ("scenario", "preset", "mtu_bytes", "nodes", "links", "flows")
        return json.dumps({k: d[k] for k in keys}, indent=2) + "\n"

    def to_text(self) -> str:
        """Nodes, then a table of links, then one line per flow (and its ACKs' path where ECMP
        sends them another way than the data's, reversed)."""
        d = self.data
        hosts = [n["name"] for n in self.nodes if n["kind"] == "host"]
        switches = [n["name"] for n in self.nodes if n["kind"] == "switch"]
        out = [
            f"scenario {d['scenario']!r}: preset {d['preset']}, MTU {d['mtu_bytes']} bytes",
            "",
            f"nodes: {_count(len(hosts), 'host')}, {_count(len(switches), 'switch')}",
            f"  hosts     {' '.join(hosts) or '-'}",
            f"  switches  {' '.join(switches) or '-'}",
            "",
            f"links: {len(self.links)}  (port a->b is a's egress towards b)",
        ]
        rows = [("a -- b", "rate", "delay", "a->b", "b->a")]
        rows += [
            (f"{link['a']} -- {link['b']}", rate(link["rate_bps"]), duration(link["delay_s"]),
             port_text(link["ab"]), port_text(link["ba"]))
            for link in self.links
        ]
        out += _columns(rows, right=(1, 2))
        if any(link[d].get("nic_binds") for link in self.links for d in ("ab", "ba")):
            out.append("  (binds): the host's NIC is slower than its link and caps what it sends")
        out += ["", f"flows: {len(self.flows)}  (base RTT: an MTU segment out, an ACK back, empty queues)"]
        for f in self.flows:
            rtt = "one-way" if f["kind"] == "udp" else "base RTT"
            out.append(f"  {f['flow_id']} {f['kind']} {f['entry']}: {' > '.join(f['path'])}  "
                       f"{rtt} {duration(f['base_rtt_s'])}")
            ack = f["ack_path"]
            if ack is not None and ack != f["path"][::-1]:
                out.append(f"      ACKs: {' > '.join(ack)}")
        return "\n".join(out) + "\n"

    def to_dot(self) -> str:
        """Graphviz: hosts as boxes, switches as ellipses; each edge is a link labelled with
        its rate and delay, its ends with their ports' buffers (tail: a->b, head: b->a), or at
        a host with a ``nic_rate`` its NIC's rate. Flows are comments."""
        # Chains read left to right; fabrics, whose links are listed from the hosts up, with
        # the hosts at the bottom.
        rankdir = "LR" if self.data["preset"] in ("dumbbell", "parking-lot") else "BT"
        out = [
            f"graph {_quote(self.data['scenario'])} {{",
            f"  rankdir={rankdir}; node [fontsize=10]; edge [fontsize=8];",
        ]
        # A host's qdisc is on every port it sends from: shown once, on the host.
        qdisc = {link[end]: link[d]["qdisc"] for link in self.links for end, d in (("a", "ab"), ("b", "ba"))
                 if link[d].get("qdisc") is not None}
        for n in self.nodes:
            if n["kind"] == "host":
                lines = [n["name"], "fq"] if qdisc.get(n["name"]) == "fq" else [n["name"]]
                out.append(f"  {_quote(n['name'])} [shape=box, label={_quote(*lines)}];")
            else:
                out.append(f"  {_quote(n['name'])} [shape=ellipse];")
        for link in self.links:
            attrs = [f"label={_quote(rate(link['rate_bps']) + ', ' + duration(link['delay_s']))}"]
            for end, d in (("taillabel", "ab"), ("headlabel", "ba")):
                if link[d].get("qdisc") is None:
                    attrs.append(f"{end}={_quote(port_text(link[d]))}")
                elif link[d].get("nic_rate_bps") is not None:
                    attrs.append(f"{end}={_quote(nic_text(link[d]))}")
            out.append(f"  {_quote(link['a'])} -- {_quote(link['b'])} [{', '.join(attrs)}];")
        for f in self.flows:
            line = f"flow {f['flow_id']} ({f['kind']}, {f['entry']}): {' > '.join(f['path'])}, base RTT {f['base_rtt_s']!r} s"
            out.append("  // " + " ".join(line.splitlines()))
        out.append("}")
        return "\n".join(out) + "\n"


def port_text(port: dict[str, Any]) -> str:
    """A link direction's egress in a few words: a host's qdisc (and NIC rate where set), or a
    switch port's buffer, with its scheduler, ECN threshold and tbf rate where set."""
    if port.get("qdisc") is not None:
        if port.get("nic_rate_bps") is None:
            return f"host {port['qdisc']}"
        return f"host {port['qdisc']}, {nic_text(port)}"
    words = [size(port["buffer_bytes"])]
    if port["scheduler"] != "fifo":
        words.append(f"{port['scheduler']} x{len(port['queues'])}")
    ecn = [q["ecn"]["threshold_bytes"] for q in port["queues"] if q["ecn"] is not None]
    if ecn:
        words.append("ecn " + "/".join(size(k) for k in ecn))
    if port["tbf"] is not None:
        words.append(f"tbf {rate(port['tbf']['rate_bps'])}")
    return " ".join(words)


def nic_text(port: dict[str, Any]) -> str:
    """A host port's ``nic_rate``: ``NIC 1 Gbit/s (binds)`` where it is below the link's rate,
    so the host sends no faster whatever the link allows."""
    text = f"NIC {rate(port['nic_rate_bps'])}"
    return text + " (binds)" if port.get("nic_binds") else text


def rate(bps: float) -> str:
    """``10 Gbit/s``, ``2.5 Gbit/s``, ``100 Mbit/s`` (decimal prefixes, as link rates are named)."""
    for scale, unit in ((1e12, "Tbit/s"), (1e9, "Gbit/s"), (1e6, "Mbit/s"), (1e3, "kbit/s")):
        if bps >= scale:
            return f"{bps / scale:.6g} {unit}"
    return f"{bps:g} bit/s"


def duration(seconds: float) -> str:
    """``104.5 ms``, ``15.8144 us``: six significant digits in the largest unit below the value."""
    if seconds == 0:
        return "0"
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "us")):
        if seconds >= scale:
            return f"{seconds / scale:.6g} {unit}"
    return f"{seconds / 1e-9:.6g} ns"


def size(n: int) -> str:
    """Bytes in the largest unit that divides them, binary or decimal, as a scenario file
    writes them (``"256KB"`` is 256,000 bytes, ``"64MiB"`` 67,108,864)."""
    # Decimal first: 256,000 bytes is "256KB" in a scenario more often than "250KiB".
    for unit, scale in (("GB", 10**9), ("GiB", 1 << 30), ("MB", 10**6), ("MiB", 1 << 20),
                        ("KB", 10**3), ("KiB", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} B"


def _columns(rows: list[tuple[str, ...]], right: tuple[int, ...]) -> list[str]:
    """Rows as columns two spaces apart, indented; the ``right`` columns aligned right."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return [
        "  " + "  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))).rstrip()
        for row in rows
    ]


def _quote(*lines: str) -> str:
    """A Graphviz double-quoted string of ``lines``: ``"`` escaped, backslashes doubled (labels
    read ``\\N``, ``\\n`` as escapes), lines joined by the label escape ``\\n``."""
    return '"' + "\\n".join(s.replace("\\", "\\\\").replace('"', '\\"') for s in lines) + '"'


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}es" if noun.endswith("ch") else f"{n} {noun}s"
