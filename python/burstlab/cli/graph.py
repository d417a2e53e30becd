"""``burstlab graph``: print the network a scenario expands to, without running it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from burstlab.cli import params, status


def command(
    scenario: params.Scenario,
    set_: params.Overrides = None,
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            metavar="text|json|dot",
            help="text: a table for reading; json: every field, for scripts; dot: Graphviz "
            "(`dot -Tpng`).",
        ),
    ] = "text",
) -> None:
    """Show the network a scenario runs on, without running it. Its hosts and switches, each
    link's rate, propagation delay and the buffer of each direction's egress port, and each
    flow's path and base RTT, as the run would route them (same seed, same ECMP choices).

    Examples: a dumbbell; a parking lot of 2 hops instead of 3; a leaf-spine fabric as JSON;
    the racks testbed drawn with Graphviz:

        burstlab graph scenarios/amlight-209ms-burst.toml
        burstlab graph scenarios/graphs/parking-lot.toml --set topology.hops=2
        burstlab graph scenarios/graphs/leaf-spine-incast.toml --format json
        burstlab graph scenarios/graphs/racks-hidden-buffer.toml --format dot | dot -Tpng -o racks.png

    Links (text): "a -- b", the rate, the one-way delay, then each direction's egress: the
    port at a towards b ("a->b") and the one at b towards a. A switch port shows its buffer
    (with its scheduler, ECN threshold and tbf rate where set); a host's shows its qdisc, whose
    queue TCP Small Queues bounds rather than a byte limit, and its NIC's rate where nic_rate
    sets one ("NIC 1 Gbit/s (binds)" where it is below the link's: the NIC, not the link, caps
    what the host sends). Port names are those of the queue table and of [telemetry] int_ports.

    Flows: each TCP flow (the [[flow]] entries, then every incast sender) and UDP burst source, by flow id,
    with the scenario entry it comes from, its path, and its base RTT: an MTU-sized segment out
    and a 52-byte ACK back through empty queues (twice the summed propagation delays plus each
    hop's serialization); a UDP source's is its one-way delay. When ECMP sends a flow's ACKs
    along another equal-cost path, a second line shows it. The flows table of a run carries
    the same path and base_rtt_s.

    Exit status: 0 shown; 2 bad input (the scenario, --set, --format; the message names the
    field); 141 the reader of stdout went away; 1 internal error.
    """
    err = Console(stderr=True, highlight=False)
    raise typer.Exit(_show(scenario, set_ or [], fmt, err))


def _show(scenario: Path, overrides: list[str], fmt: str, err: Console) -> int:
    from burstlab.errors import ScenarioError
    from burstlab.graph import FORMATS, expand

    with status.guarded("graph", err, interrupted="nothing shown"):
        if fmt not in FORMATS:
            raise ScenarioError(f"--format {fmt}: expected one of {', '.join(FORMATS)}", "invalid_value")
        text = expand(scenario, set=overrides).render(fmt)
    sys.stdout.write(text)
    return status.SUCCESS
