"""A run over its memory budget is refused before anything is built (issue 41): the scenarios
that aborted the process (SIGABRT, exit 134) raise ``MemoryBudgetError`` from Python and exit 2
from the CLI with one line naming the field, and nothing is written."""

from __future__ import annotations

import pickle

import pytest

import burstlab
from burstlab.errors import MemoryBudgetError, ScenarioError
from helpers import burstlab as cli

DUMBBELL = 'name = "x"\n[topology]\nbottleneck_rate = "10Gbps"\nrtt = "1ms"\n'

# Each aborted the process before the budget: field named, and a piece of what it holds.
ABORTS = {
    "sources": (
        DUMBBELL + '[[burst]]\nsources = 4294967295\nrate = "1Gbps"\nstart = "1ms"\nduration = "1ns"\n',
        "scenario.burst[0].sources = 4294967295", "4294967295 burst sources",
    ),
    "intervals": (
        'name = "x"\nstop = "18000000s"\ninterval = "1ms"\n[topology]\nbottleneck_rate = "1bps"\n'
        'rtt = "1ms"\n[[flow]]\ncca = "cubic"\n',
        'scenario.interval = "1ms"', "the intervals table",
    ),
    "drops": (
        'name = "x"\nstop = "100s"\n[topology]\nbottleneck_rate = "10Gbps"\nrtt = "1ms"\n'
        'burst_link_rate = "1Tbps"\n[[burst]]\nrate = "1Tbps"\nstart = "0s"\nduration = "100s"\n'
        'packet_size = 64\n',
        'scenario.burst[0].rate = "1Tbps"', "the drops table",
    ),
}


@pytest.mark.parametrize("case", sorted(ABORTS))
def test_aborts_raise_memory_budget_error_naming_the_field(case, tmp_path):
    text, field, what = ABORTS[case]
    path = tmp_path / f"{case}.toml"
    path.write_text(text)
    with pytest.raises(MemoryBudgetError) as info:
        burstlab.run(path)
    err = info.value
    assert isinstance(err, ScenarioError) and err.kind == "memory_budget"
    message = str(err)
    assert message.startswith(field + ": the run would hold about "), message
    assert what in message and "over the memory budget of" in message and "\n" not in message


def test_refusal_survives_pickling_to_a_sweep_worker():
    err = pickle.loads(pickle.dumps(MemoryBudgetError("m", "memory_budget")))
    assert (type(err), err.message, err.kind) == (MemoryBudgetError, "m", "memory_budget")


def test_memory_budget_is_settable_from_the_command_line(tmp_path):
    scenario = tmp_path / "small.toml"
    scenario.write_text(DUMBBELL + '[[flow]]\ncca = "cubic"\nsize = "1MB"\n')
    out = tmp_path / "out"
    proc = cli("run", scenario, "--set", "memory_budget=1MiB", "--out", out)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "over the memory budget of 1.0 MiB (memory_budget)" in lines[0]
    assert not out.exists()
    proc = cli("run", scenario, "--set", "memory_budget=1GiB", "--json")
    assert proc.returncode == 0, proc.stderr
