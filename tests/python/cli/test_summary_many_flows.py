"""burstlab.cli.summary_view with many flows: printed in parts whose columns line up as one
table's, so rich never holds 100,000 rows of cells at once."""

import io

import pytest
from rich.console import Console

from burstlab.cli import summary_view
from burstlab.cli.summary_view import flows_table, print_flows

#: Rows per part in these tests (the real one is larger; the rendering is the same).
PART = 40


@pytest.fixture(autouse=True)
def _small_parts(monkeypatch):
    monkeypatch.setattr(summary_view, "FLOW_ROWS_PER_TABLE", PART)


def _flow(i: int) -> dict:
    tcp = i % 7 != 0
    return {"flow_id": i, "kind": "tcp" if tcp else "udp", "cca": "cubic" if tcp else None,
            "src": f"h{i}", "dst": f"r{i * 13}", "size_bytes": 10_000 + i, "delivered_bytes": 10_000 + i % 5,
            "fct_s": 0.0012 * (i % 11) if i % 9 else None, "sender_done_s": 0.001,
            "throughput_bps": 8e9 if i % 3 else None, "retransmits": i % 4, "timeouts": i % 2,
            "max_cwnd_bytes": 14480 * (1 + i % 3)}


def _render(draw) -> list[str]:
    console = Console(file=io.StringIO(), width=120, highlight=False)
    draw(console)
    return console.file.getvalue().splitlines()


def _rows(lines: list[str]) -> list[str]:
    return [line for line in lines if line[:6].strip().isdigit()]


def test_a_few_flows_print_as_a_single_table():
    flows = [_flow(i) for i in range(PART)]
    assert _render(lambda c: print_flows(c, flows)) == _render(lambda c: c.print(flows_table(flows)))


def test_many_flows_print_in_parts_aligned_as_one_table():
    # The widest cells come last (flow ids and host names grow), so the first part's columns
    # must already be as wide as the last part needs.
    flows = [_flow(i) for i in range(2 * PART + 25)]
    whole = _render(lambda c: c.print(flows_table(flows)))
    parts = _render(lambda c: print_flows(c, flows))
    # The same rows, less the one-space edge a single table draws on each side.
    assert _rows(parts) == [row[1:-1] for row in _rows(whole)]
    assert [int(r.split()[0]) for r in _rows(parts)] == list(range(len(flows)))
    assert sum(line.split() == ["flows"] for line in parts) == 1
    assert sum("FCT s" in line for line in parts) == 1
    assert sum(line.startswith("FCT: first SYN") for line in parts) == 1
