"""How chaotic a single-flow twin is in the read gap it is given (history/validation-notes.md,
"A chaotic twin"). No root: only the simulator runs.

The twin runs once at every µs of read gap in a range; each gap is marked `.` (rate at or above
the floor), `x` (below it) or `T` (an RTO). Then it simulates sittings from those runs: `--runs`
real runs whose gaps fall uniformly within ±s µs of a centre, `--sittings` per centre, and
counts how often the case's twin (the median rate over the runs' twins) falls below the floor,
with one twin per run and with the ensemble `twin_single` builds (`GAP_ENSEMBLE_US`).

    python3 scripts/twin_gap_sweep.py --cca bbr --limit-bytes 16384 --gaps 400:560 --floor 0.711
"""

from __future__ import annotations

import argparse
import random
import statistics

from burstlab.validate.compare import GAP_ENSEMBLE_US, sim_single_flow

#: This machine's namespaces' socket-buffer sysctls (`Dumbbell.buffer_sysctls`).
KERNEL_BUFFERS = {"tcp_rmem": [4096, 131072, 33554432], "rmem_max": [4194304], "tcp_wmem": [4096, 16384, 4194304]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cca", default="bbr", help="congestion control (default bbr)")
    ap.add_argument("--limit-bytes", type=int, default=16384, help="tbf limit (default 16384)")
    ap.add_argument("--rate-bps", type=int, default=100_000_000, help="tbf rate (default 100 Mbit/s)")
    ap.add_argument("--size-bytes", type=int, default=10_000_000, help="bytes to send (default 10 MB)")
    ap.add_argument("--gaps", default="400:560", help="read gaps swept, µs, FROM:TO (TO excluded)")
    ap.add_argument("--floor", type=float, required=True,
                    help="a rate below this fails the case: real × (1 − tolerance), e.g. 0.765 × 0.929")
    ap.add_argument("--spreads", default="3,6,10,15", help="± µs the runs of a sitting spread over")
    ap.add_argument("--runs", type=int, default=10, help="real runs per sitting (default 10, as CI)")
    ap.add_argument("--sittings", type=int, default=40, help="sittings per centre (default 40)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    lo, hi = (int(x) for x in args.gaps.split(":"))
    spreads = [int(s) for s in args.spreads.split(",")]

    rate, rto = {}, {}
    for gap in range(lo, hi):
        m = sim_single_flow(args.cca, size_bytes=args.size_bytes, limit_bytes=args.limit_bytes, read_gap_us=gap,
                            buffers=KERNEL_BUFFERS, rate_bps=args.rate_bps)
        rate[gap], rto[gap] = m["rate_fraction"], m["timeouts"] > 0
    marks = "".join("T" if rto[g] else "." if rate[g] >= args.floor else "x" for g in range(lo, hi))
    print(f"{args.cca} through {args.limit_bytes} B at {args.rate_bps / 1e6:g} Mbit/s, read gaps {lo}-{hi - 1} µs:")
    print(marks)
    print(f"RTO at {sum(rto.values())} of {hi - lo} gaps; below the floor at {sum(r < args.floor for r in rate.values())}")

    # Centres far enough inside the sweep for every run's ensemble.
    margin = max(abs(s) for s in GAP_ENSEMBLE_US)
    rng = random.Random(args.seed)
    print("spread ±µs  one twin per run  ensemble  one twin's worst centre: one twin / ensemble  ensemble's worst")
    for spread in spreads:
        centres = range(lo + spread + margin, hi - spread - margin)
        share = {"one": {}, "ensemble": {}}
        for c in centres:
            fails = {"one": 0, "ensemble": 0}
            for _ in range(args.sittings):
                gaps = [c + rng.randint(-spread, spread) for _ in range(args.runs)]
                fails["one"] += statistics.median(rate[g] for g in gaps) < args.floor
                fails["ensemble"] += statistics.median(rate[g + s] for g in gaps for s in GAP_ENSEMBLE_US) < args.floor
            for k in fails:
                share[k][c] = fails[k] / args.sittings
        worst = max(centres, key=lambda c: share["one"][c])
        worst_ens = max(centres, key=lambda c: share["ensemble"][c])
        mean = {k: statistics.fmean(v.values()) for k, v in share.items()}
        print(f"{spread:>9}  {mean['one']:>15.1%}  {mean['ensemble']:>8.1%}  "
              f"{worst} µs: {share['one'][worst]:.0%} / {share['ensemble'][worst]:.0%}"
              f"{'':>20}{share['ensemble'][worst_ens]:.0%} at {worst_ens} µs")


if __name__ == "__main__":
    main()
