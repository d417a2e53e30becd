"""The real tests' path (realnet): the delay line a Dumbbell puts on its router-receiver link
(validate.topology.DelayLine) gives the path the RTT asked, as the handshake probe measures it,
and goes with the dumbbell."""

from __future__ import annotations

import shutil

import pytest

from burstlab.validate.topology import list_namespaces
from realnet import SETUPS, WINDOW_ONE_WAY_US, path_rtt_us

pytestmark = [pytest.mark.netns, pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc (scripts/setup.sh)")]


def test_the_delay_line_adds_twice_its_one_way_delay_and_goes_with_the_dumbbell():
    with SETUPS["loss"].dumbbell() as net:
        veths = path_rtt_us(net)
    with SETUPS["rmem"].dumbbell() as net:
        line = next(p for p in net._procs if p.poll() is None)
        delayed = path_rtt_us(net)
        assert net.qdisc_stats()["packets"] > 0  # the probe's packets passed the tbf on the line's device
        names = net.namespaces
    # The veths' ~30-70 us, and the line's 2 x 2 ms plus its own turnaround (0.1-0.3 ms measured).
    assert veths < 500, veths
    assert 2 * WINDOW_ONE_WAY_US <= delayed - veths < 2 * WINDOW_ONE_WAY_US + 500, (veths, delayed)
    assert line.poll() is not None, "the delay line outlived its dumbbell"
    assert not set(names) & set(list_namespaces())
