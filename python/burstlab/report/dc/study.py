"""The data-centre study's runs (scenarios/dc/, seeds/004) and what each measures: run them
with :func:`run_study`, which writes ``dc-study.json`` into a directory; the findings are
computed from that file (:mod:`burstlab.report.dc.findings`).

Every run is a shipped scenario file with overrides or, where the paper's hosts each emulate
several senders, with its sender list written out. Repetitions: the paper repeats each
microbenchmark 100 times; the slope-law fan-ins repeat their one query on new connections over
:data:`REPS` seeds (the paper's phase 2 has "all flows ... in slow start phase", which warm
connections holding the ssthresh of their last query's losses are not); the others repeat a
query within one run, and the deterministic threshold-marking runs need no seeds.
"""

from __future__ import annotations

import json
import math
import os
import re
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from burstlab.report.dc import measure

__all__ = ["SCENARIO_DIR", "STUDY_FILE", "PORT", "run_study", "load_study"]

#: Where the study's scenario files are.
SCENARIO_DIR = Path(__file__).resolve().parents[2] / "scenarios" / "dc"
#: The file a study directory holds.
STUDY_FILE = "dc-study.json"
#: The port the paper measures: the root switch's towards Host 10's rack.
PORT = ("agg", "agg->tor3")
#: The port rate, bit/s (every link of the testbed).
RATE_BPS = 1e9
#: The hosts that answer (Hosts 1-9); the paper's hosts each emulate several senders.
SERVERS = [f"h{i}" for i in range(9)]
#: The loads of the web-search benchmark (seeds/004 Fig. 18-19).
LOADS = (0.2, 0.3, 0.4, 0.5, 0.6)
#: Incast sizes: around the paper's 19-32 (Fig. 17).
INCAST_SENDERS = (9, 16, 19, 24, 28, 32, 40)
#: The two markings every S-ECN part compares. All of §IV-D's figures (Fig. 14-19) are "realistic
#: experiments (in the testbed described in §III-A)", whose switches run S-ECN as §IV-C
#: implements it on NetFPGA: the accumulator, not random draws (``ecn_mode = "s-ecn-hardware"``).
MARKING = {"dctcp": [], "s-ecn": ["topology.ecn_mode=s-ecn-hardware"]}
#: The web-search benchmark's markings: the same as every other part's.
WEBSEARCH_MARKING = MARKING
#: Seeds over which a one-query fan-in is repeated (each run new connections).
REPS = 20
#: When the background studies' one query starts, s: spread over 1 s from the paper's 0.5 s,
#: longer than one NewReno sawtooth of a 512 KB port at 1 Gbit/s (~170 packets of growth, one
#: per ~4 ms round trip: ~0.7 s), so the runs meet the background at every phase of it.
SPREAD = (0.49, 1.49)


def _text(name: str) -> str:
    return (SCENARIO_DIR / name).read_text(encoding="utf-8")


def _senders(text: str, hosts: Sequence[str]) -> str:
    """``text`` with its incast answered by ``hosts`` (a host may repeat)."""
    src = ", ".join(f'"{h}"' for h in hosts)
    text = re.sub(r"(?m)^senders = \d+$", f"senders = {len(hosts)}", text, count=1)
    return re.sub(r"(?m)^src = \[.*\]$", f"src = [{src}]", text, count=1)


#: Overrides a part run with ``run_study(sets=...)`` (``--set``) applies after each run's own.
_EXTRA: list[str] = []


def _run(text: str, sets: Sequence[str]) -> Any:
    import burstlab

    return burstlab.run(text, set=[*sets, *_EXTRA])


def _port(summary: dict[str, Any]) -> dict[str, Any]:
    node, port = PORT
    return next(p for p in summary["ports"] if p["node"] == node and p["port"] == port)


def _queue(result: Any) -> tuple[list[float], list[float]]:
    q = result.table("queue").to_pandas()
    p = q[(q.node == PORT[0]) & (q.port == PORT[1])]
    return p.t_s.tolist(), p.occupancy_bytes.astype(float).tolist()


def _queries(result: Any, kind: str = "incast") -> Any:
    q = result.table("queries").to_pandas()
    return q[q.kind == kind]


def _phase2(result: Any, first_round_bytes: float) -> dict[str, Any]:
    """Per query: the slope of phase 1 (until the queue holds the first round) and of phase 2
    (from there to 90 % of the query's peak), least squares, bit/s."""
    t, occ = _queue(result)
    p1, p2 = [], []
    for _, row in _queries(result).iterrows():
        s = measure.phase_fit(t, occ, row.request_s, row.done_s, first_round_bytes)
        if s is not None:
            p1.append(s[0])
            p2.append(s[1])
    return {"phase1_bps": p1, "phase2_bps": p2}


def _phase2_seeds(text: str, first_round_bytes: float, reps: int) -> dict[str, Any]:
    """:func:`_phase2` of ``reps`` runs of ``text``, seeds 1…reps, their slopes in one list."""
    out: dict[str, Any] = {"phase1_bps": [], "phase2_bps": []}
    for seed in range(1, reps + 1):
        one = _phase2(_run(text, [f"seed={seed}"]), first_round_bytes)
        out["phase1_bps"] += one["phase1_bps"]
        out["phase2_bps"] += one["phase2_bps"]
    return out


def law1(reps: int = REPS) -> dict[str, Any]:
    # 18 senders × the initial window of 3: the first round is 54 packets.
    return _phase2_seeds(_text("law1-fan-in.toml"), 54 * 1500, reps)


def law1_staggered(reps: int = REPS) -> dict[str, Any]:
    # 18 senders, their first rounds spread over ~2 ms: phase 1 holds 18 × 3 packets.
    return _phase2_seeds(_text("fan-in-staggered.toml"), 54 * 1500, reps)


def _background(text: str, per_host: int, hosts: Sequence[str], dsts: Sequence[str]) -> str:
    """``text`` with ``per_host`` long flows from each of ``hosts`` instead of one."""
    head, _, tail = text.partition("[[flow]]")
    rest = tail[tail.index("[[incast]]"):]
    flows = []
    for k in range(per_host):
        for i, h in enumerate(hosts):
            flows.append(f'[[flow]]\nsrc = "{h}"\ndst = "{dsts[(i + k) % len(dsts)]}"\nsize = "1GB"\n')
    return head + "\n".join(flows) + "\n" + rest


def _phase2_starts(text: str, first_round_bytes: float, sets: Sequence[str], reps: int) -> dict[str, Any]:
    """:func:`_phase2` of ``reps`` runs of ``text`` whose one query starts at :data:`SPREAD`
    evenly spaced moments, their slopes in one list: the background's sawtooth is deterministic
    here, so the moments stand for the phases of it the paper's repetitions met at 0.5 s."""
    out: dict[str, Any] = {"phase1_bps": [], "phase2_bps": []}
    for k in range(reps):
        start = SPREAD[0] + (SPREAD[1] - SPREAD[0]) * k / reps
        one = _phase2(_run(text, [*sets, f"incast[0].start={start * 1e3:.3f}ms"]), first_round_bytes)
        out["phase1_bps"] += one["phase1_bps"]
        out["phase2_bps"] += one["phase2_bps"]
    return out


def law2(reps: int = REPS) -> dict[str, Any]:
    out = {}
    for n in (3, 6, 9):
        text = _background(_text("law2-same-hop.toml"), n // 3, ["h0", "h3", "h6"], ["h10", "h11"])
        out[str(n)] = _phase2_starts(text, 18 * 1500, [], reps)
    return out


def law3(reps: int = REPS) -> dict[str, Any]:
    out = {}
    for kb in (128, 256, 512):
        out[str(kb)] = _phase2_starts(_text("law3-hidden-buffer.toml"), 18 * 1500, [f"link[2].ab.buffer={kb}KB"], reps)
    return out


def secn_peaks() -> dict[str, Any]:
    text = _text("secn-fan-in.toml")
    sets = {**MARKING, "dctcp-k2": ["topology.ecn_threshold=2KB"], "dequeue": ["topology.ecn_mode=dequeue"]}
    out: dict[str, Any] = {}
    for key, s in sets.items():
        out[key] = _peaks(_run(text, s))
    for key in ("dctcp", "s-ecn"):
        out[f"{key}-36"] = _peaks(_run(_senders(text, SERVERS * 4), MARKING[key]))
    return out


def _peaks(result: Any) -> list[float]:
    """The queue's peak at the port in each query, bytes."""
    t, occ = _queue(result)
    peaks = []
    for _, row in _queries(result).iterrows():
        during = [o for ti, o in zip(t, occ, strict=True) if row.request_s <= ti <= row.done_s]
        if during:
            peaks.append(max(during))
    return peaks


def goodput() -> dict[str, float]:
    out = {}
    for key, s in MARKING.items():
        iv = _run(_text("goodput.toml"), s).table("intervals").to_pandas()
        iv = iv[iv.t_start_s >= 0.5]
        out[key] = float(iv.bytes.sum() * 8 / (iv.t_end_s.max() - 0.5))
    return out


def incast(reps: int = REPS) -> dict[str, Any]:
    """Per marking and sender count, the QCT of one query on new connections in each of ``reps``
    seeds (the paper repeats the experiment, as its Law 1 runs), and what each run lost: drops
    at the port, RTOs and loss probes (``losses``, one value per run)."""
    out: dict[str, Any] = {"losses": {}}
    text = _text("incast.toml")
    for n in INCAST_SENDERS:
        hosts = [SERVERS[i % len(SERVERS)] for i in range(n)]
        for key, s in MARKING.items():
            qct: list[float] = []
            lost: dict[str, list[int]] = {"drops": [], "timeouts": [], "loss_probes": []}
            for seed in range(1, reps + 1):
                r = _run(_senders(text, hosts), [*s, f"seed={seed}"])
                qct += _queries(r).qct_s.tolist()
                lost["drops"].append(_port(r.summary)["drops"])
                for k in ("timeouts", "loss_probes"):
                    lost[k].append(sum(f[k] for f in r.summary["flows"]))
            out[f"{key}-{n}"] = qct
            out["losses"][f"{key}-{n}"] = lost
    return out


def _websearch_run(load: float, key: str, seconds: float, extra: Sequence[str] = ()) -> dict[str, Any]:
    """One web-search run (a worker process's task): its QCTs and per-class FCTs; ``extra``
    overrides after the run's own (a worker does not share this process's :data:`_EXTRA`)."""
    t0 = time.perf_counter()
    r = _run(_text("websearch.toml"),
             [*WEBSEARCH_MARKING[key], f"websearch[0].load={load}", f"stop={seconds}s", *extra])
    q = r.table("queries").to_pandas()
    bg = q[q.kind == "background"]
    return {
        "qct_s": q[q.kind == "query"].qct_s.tolist(),
        "fct_s": {c: bg[bg.size_class == c].qct_s.tolist() for c in ("small", "medium", "large")},
        **_websearch_tcp(r.summary),
        "wall_s": time.perf_counter() - t0,
    }


def _websearch_tcp(summary: dict[str, Any]) -> dict[str, Any]:
    """What TCP and the ports did in a web-search run, the queries' answer connections apart
    from the background flows' (the app opens the answers' n·(n−1) first:
    ``WebSearchSpec::connections``): RTOs, retransmits, delivered bytes; each port's drops and
    ECN marks. The findings' causes are read from these."""
    flows = summary["flows"]
    n = len({f["src"] for f in flows} | {f["dst"] for f in flows})
    groups = {"answers": flows[: n * (n - 1)], "background": flows[n * (n - 1):]}
    tcp = {name: {key: sum(f[key] for f in fs) for key in ("timeouts", "retransmits", "delivered_bytes")}
           for name, fs in groups.items()}
    ports = {p["port"]: {"drops": p["drops"], "ecn_marks": p["ecn_marks"]} for p in summary["ports"]}
    return {"tcp": tcp, "ports": ports}


def websearch(seconds: float, *, loads: Sequence[float] = LOADS, jobs: int | None = None,
              sets: Sequence[str] = ()) -> dict[str, Any]:
    """Every load under both markings, ``jobs`` runs at a time in worker processes (default:
    the CPUs this process may use), each load's two markings side by side. A run takes minutes
    at 300 s; Ctrl-C ends the workers at once (:func:`burstlab.sweep.executors.open_executor`)."""
    from burstlab.sweep.executors import open_executor

    cases = [(load, key) for load in loads for key in WEBSEARCH_MARKING]
    with open_executor(jobs) as (pool, _):
        runs = [pool.submit(_websearch_run, load, key, seconds, tuple(sets)) for load, key in cases]
        return {f"{key}-{load}": run.result() for (load, key), run in zip(cases, runs, strict=True)}


PARTS: dict[str, Callable[..., Any]] = {
    "law1": law1, "law1_staggered": law1_staggered, "law2": law2, "law3": law3, "secn_peaks": secn_peaks,
    "goodput": goodput, "incast": incast,
}


def runs() -> int:
    """How many simulator runs the whole study makes (each part's loop above)."""
    return (2 * REPS  # law1, law1_staggered
            + 2 * 3 * REPS  # law2 (3, 6, 9 flows), law3 (128, 256, 512 KB)
            + 4 + 2  # secn_peaks: four markings at 9 senders, two at 36
            + len(MARKING)  # goodput
            + len(MARKING) * len(INCAST_SENDERS) * REPS  # incast
            + len(WEBSEARCH_MARKING) * len(LOADS))


def run_study(out_dir: str | os.PathLike[str], *, websearch_seconds: float = 300.0,
              parts: Sequence[str] | None = None, progress: Callable[[str], object] = print,
              jobs: int | None = None, sets: Sequence[str] = ()) -> Path:
    """Run the study's parts (all by default; ``"websearch"`` included) one after another and
    write ``out_dir/dc-study.json`` (parts already in it are kept unless run again); web search
    runs ``jobs`` worker processes (default: the CPUs this process may use). ``sets`` are
    overrides applied to every run of these parts after its own, recorded per part under
    ``"set"`` so a figure from such runs says how it was made."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / STUDY_FILE
    data = load_study(out) if path.exists() else {}
    chosen = list(parts) if parts else [*PARTS, "websearch"]
    for name in chosen:
        t0 = time.perf_counter()
        if name == "websearch":
            data[name] = websearch(websearch_seconds, jobs=jobs, sets=sets)
            data["websearch_seconds"] = websearch_seconds
        else:
            _EXTRA[:] = sets
            try:
                data[name] = PARTS[name]()
            finally:
                _EXTRA.clear()
        recorded = data.setdefault("set", {})
        if sets:
            recorded[name] = list(sets)
        else:
            recorded.pop(name, None)
        progress(f"{name}: {time.perf_counter() - t0:.1f} s")
        tmp = path.with_suffix(".partial")
        tmp.write_text(json.dumps(_nulls(data), allow_nan=False), encoding="utf-8")
        os.replace(tmp, path)
    return path


def _nulls(value: Any) -> Any:
    """``value`` with every non-finite float (a fit that found no slope) as None: JSON has no
    NaN, so the file is null there and any JSON reader can read it."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _nulls(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_nulls(v) for v in value]
    return value


def load_study(out_dir: str | os.PathLike[str]) -> dict[str, Any]:
    return json.loads((Path(out_dir) / STUDY_FILE).read_text(encoding="utf-8"))


def cv(values: Sequence[float]) -> float:
    """Coefficient of variation (population standard deviation over mean)."""
    m = statistics.fmean(values) if values else math.nan
    return statistics.pstdev(values) / m if values and m else math.nan
