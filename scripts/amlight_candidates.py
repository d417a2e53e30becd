"""Issue 39's candidate experiments: the AmLight base at 209 ms with one change, run at the
full study's grid points with the full study's seeds, so each run pairs with the study's.

    python scripts/amlight_candidates.py OUT.jsonl --set flow[0].skb_truesize=11520 \
        --starts 2s,3s,4s --durations 100ms,2000ms [--jobs 2]

One JSON line per run (CCA, start, duration, seed, FCT, retransmits, timeouts, lost
retransmissions, the flow's drops before the burst, in its first RTT and after that, the receiver's
`receive_memory` and `hosts` when present); runs already in OUT are skipped, so a rerun
resumes. The seeds are `burstlab sweep`'s for the study's axes in its order (topology.rtt,
flow[0].cca, burst[0].duration, burst[0].start; sweep seed 0, repetition 0).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
from pathlib import Path

import burstlab
from burstlab.advise.units import seconds
from burstlab.sweep.grid import Point
from burstlab.sweep.seeds import run_seed

SCENARIO = Path(__file__).resolve().parent.parent / "scenarios/amlight/base-209ms.toml"


def study_seed(cca: str, start: str, duration: str) -> int:
    point = Point(0, (("topology.rtt", "209ms"), ("flow[0].cca", cca),
                      ("burst[0].duration", duration), ("burst[0].start", start)))
    return run_seed(0, point, 0)


def one(job: tuple[str, str, str, list[str]]) -> dict:
    cca, start, duration, extra = job
    seed = study_seed(cca, start, duration)
    sets = {"topology.rtt": "209ms", "flow[0].cca": cca, "burst[0].duration": duration,
            "burst[0].start": start, "seed": str(seed)}
    sets.update(kv.split("=", 1) for kv in extra)
    result = burstlab.run(str(SCENARIO), set=sets)
    summary = result.summary
    flow = summary["flows"][0]
    # The flow's drops split at one RTT after the burst starts: before it no sender can know of
    # a loss, so those are what the window in flight met; after it, what was sent knowing.
    drops = result.table("drops").to_pandas()
    drop_t = drops.t_s[drops.flow_id == 0]
    base_rtt_s = result.table("flows").column("base_rtt_s")[0].as_py()
    burst_start = seconds("burst[0].start", start)
    first_rtt_end = burst_start + base_rtt_s
    return {"cca": cca, "start": start, "duration": duration, "seed": seed, "set": extra,
            "fct_s": flow["fct_s"], "retransmits": flow["retransmits"],
            "timeouts": flow["timeouts"], "lost_retransmits": flow["lost_retransmits"],
            "drops_before": int((drop_t < burst_start).sum()),
            "drops_first_rtt": int(((drop_t >= burst_start) & (drop_t < first_rtt_end)).sum()),
            "drops_after": int((drop_t >= first_rtt_end).sum()),
            "receive_memory": flow.get("receive_memory"), "hosts": summary.get("hosts")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("--set", action="append", default=[], dest="sets", metavar="PATH=VALUE")
    ap.add_argument("--ccas", default="htcp,bbr")
    ap.add_argument("--starts", required=True)
    ap.add_argument("--durations", required=True)
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    done = set()
    if a.out.exists():
        for line in a.out.read_text().splitlines():
            r = json.loads(line)
            done.add((r["cca"], r["start"], r["duration"]))
    jobs = [(c, s, d, a.sets) for c in a.ccas.split(",") for s in a.starts.split(",")
            for d in a.durations.split(",") if (c, s, d) not in done]
    with multiprocessing.Pool(a.jobs) as pool, a.out.open("a") as out:
        try:
            for r in pool.imap_unordered(one, jobs):
                out.write(json.dumps(r) + "\n")
                out.flush()
                print(r["cca"], r["start"], r["duration"], r["retransmits"], r["fct_s"], flush=True)
        except KeyboardInterrupt:
            pool.terminate()
            return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
