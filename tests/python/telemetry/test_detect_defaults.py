"""What `burstlab detect` finds with its default options, and what it says about each burst
(issue 33): the bursts a scenario makes and not its routine queueing; one role per flow and
burst; the drops of a queue-only run counted where they fell."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from helpers import burstlab

REPO = Path(__file__).resolve().parents[3]
INT_BURST = REPO / "scenarios" / "int-burst.toml"


def _detect(target: Path, *options: str) -> dict:
    r = burstlab("detect", target, *options, "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.fixture(scope="module")
def int_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """int-burst.toml as shipped: INT on every packet of the bottleneck, as TR v1.0 reports."""
    d = tmp_path_factory.mktemp("intburst")
    r = burstlab("run", INT_BURST, "--out", d / "run", "--int-pcap", d / "reports.pcap")
    assert r.returncode == 0, r.stderr
    return d


@pytest.fixture(scope="module")
def sampled_v2_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same scenario reported 1 packet in 8, as TR v2.0."""
    d = tmp_path_factory.mktemp("intburst-v2")
    r = burstlab("run", INT_BURST, "--set", "telemetry.int_sample=8", "--out", d / "run",
                 "--int-pcap", d / "reports.pcap", "--int-version", "2.0")
    assert r.returncode == 0, r.stderr
    return d


def _udp_flows(run_dir: Path) -> set[str]:
    flows = pq.read_table(run_dir / "flows.parquet").to_pylist()
    return {f"{f['src_ip']}:{f['src_port']} > {f['dst_ip']}:{f['dst_port']} udp" for f in flows if f["kind"] == "udp"}


@pytest.mark.parametrize("source", ["reports.pcap", "run"])
def test_defaults_find_the_scenarios_two_bursts_and_not_its_routine_queueing(int_run: Path, source: str) -> None:
    scenario = tomllib.loads(INT_BURST.read_text())
    windows = [(float(b["start"].removesuffix("ms")) / 1e3, float(b["duration"].removesuffix("ms")) / 1e3)
               for b in scenario["burst"]]
    got = _detect(int_run / source)
    bursts = got["bursts"]
    assert len(bursts) == len(windows) == 2, [(b["start_s"], b["peak_bytes"]) for b in bursts]
    udp = _udp_flows(int_run / "run")
    for b, (start, duration) in zip(bursts, windows, strict=True):
        # The queue passes half its deepest occupancy while the sources send, and drains after.
        assert start <= b["start_s"] <= start + duration, (b["start_s"], start)
        assert b["end_s"] > start + duration
        assert b["drops"] > 0 and b["definition"]["rise_of_deepest"] == 0.5
        assert {c["flow"] for c in b["culprits"]} <= udp, b["culprits"]
    # A fixed threshold near the routine queue (32 kB, no merge gap; the queue's mean is ~28 kB)
    # on the same input: thousands of "bursts", the two paced flows' TSO trains.
    assert len(_detect(int_run / source, "--rise", "32KB", "--merge-gap", "0s")["bursts"]) > 100


def test_defaults_on_sampled_v2_reports_find_the_same_two_bursts(sampled_v2_run: Path, int_run: Path) -> None:
    every = _detect(int_run / "reports.pcap")["bursts"]
    sampled = _detect(sampled_v2_run / "reports.pcap")
    assert sampled["format"] == "int-reports" and sampled["reports_lost"] == 0
    assert len(sampled["bursts"]) == 2
    for a, b in zip(every, sampled["bursts"], strict=True):
        # One report in 8 at 10 Gbit/s: the edges move by a few reports, ~10 µs each.
        assert abs(a["start_s"] - b["start_s"]) < 1e-4 and abs(a["end_s"] - b["end_s"]) < 1e-4


@pytest.mark.parametrize(
    ("source", "options"),
    [
        ("int/reports.pcap", []),
        ("int/reports.pcap", ["--buffer", "2MB", "--rise", "25%"]),
        ("int/reports.pcap", ["--rise", "64KB", "--merge-gap", "0s"]),
        ("int/run", []),
        ("int/run", ["--rise", "100KB", "--merge-gap", "0s"]),
        ("v2/reports.pcap", []),
        ("v2/reports.pcap", ["--rise", "64KB", "--fall", "20KB"]),
    ],
)
def test_no_flow_is_both_culprit_and_victim_of_a_burst(int_run: Path, sampled_v2_run: Path, source: str,
                                                       options: list[str]) -> None:
    base, _, rest = source.partition("/")
    target = (int_run if base == "int" else sampled_v2_run) / rest
    bursts = _detect(target, *options, "--top", "1000")["bursts"]
    assert bursts
    for b in bursts:
        culprits = {c["flow"] for c in b["culprits"]}
        victims = {v["flow"] for v in b["victims"]}
        assert not culprits & victims, (b["start_s"], culprits & victims)
    # The burst sources are culprits and the paced TCP flows that waited behind them victims:
    # the roles are not empty by construction.
    big = max(bursts, key=lambda b: b["peak_bytes"])
    assert any(c["flow"].endswith("udp") for c in big["culprits"])
    assert any(v["flow"].endswith("tcp") for v in big["victims"])


@pytest.fixture(scope="module")
def queue_only_runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Scenarios without [telemetry] whose bottleneck drops: queue.parquet + drops.parquet."""
    d = tmp_path_factory.mktemp("queue-only")
    runs = []
    for name, stop in (("amlight-209ms-burst", "2.5s"), ("incast-small-buffer", "1s")):
        out = d / name
        r = burstlab("run", REPO / "scenarios" / f"{name}.toml", "--set", f"stop={stop}", "--out", out)
        assert r.returncode == 0, r.stderr
        assert not (out / "int.parquet").exists() or pq.read_metadata(out / "int.parquet").num_rows == 0
        runs.append(out)
    return runs


@pytest.mark.parametrize("options", [[], ["--rise", "50KB", "--merge-gap", "0s"]])
def test_queue_only_bursts_count_the_drops_that_fell_in_them(queue_only_runs: list[Path], options: list[str]) -> None:
    for run in queue_only_runs:
        queue = pq.read_table(run / "queue.parquet")
        drops = pq.read_table(run / "drops.parquet")
        keys = {tuple(k.values()) for k in queue.select(["node", "port", "queue"]).to_pylist()}
        # One queue: the burst's numeric (switch, port, queue) can only name it.
        assert len(keys) == 1, keys
        (node, port, q), = keys
        mine = drops.filter(pc.and_(pc.and_(pc.equal(drops["node"], node), pc.equal(drops["port"], port)),
                                    pc.equal(drops["queue"], q)))
        t = mine.column("t_s")
        got = _detect(run, *options)
        assert got["format"] == "simulation-queue"
        assert got["bursts"], run
        for b in got["bursts"]:
            inside = pc.sum(pc.and_(pc.greater_equal(t, b["start_s"]), pc.less_equal(t, b["end_s"]))).as_py() or 0
            assert b["drops"] == inside, (run.name, b["start_s"], b["end_s"], b["drops"], inside)
        # A tail drop needs a full queue: every drop lies in some burst.
        assert sum(b["drops"] for b in got["bursts"]) == mine.num_rows > 0


def test_queue_only_burst_of_the_amlight_replay_holds_its_overflow(queue_only_runs: list[Path]) -> None:
    run = queue_only_runs[0]
    (burst,) = _detect(run)["bursts"]
    # The 100 ms burst from 2 s overflows the 64 MiB queue once: every drop is in it.
    assert 2.0 <= burst["start_s"] <= 2.1 and burst["drops"] == pq.read_metadata(run / "drops.parquet").num_rows > 100
