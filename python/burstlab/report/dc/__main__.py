"""Run the data-centre study into a directory: ``python -m burstlab.report.dc DIR [PART ...]
[--websearch-seconds S] [-j N] [--set KEY=VALUE ...]``; then ``burstlab report DIR`` prints its
findings. Parts: law1, law1_staggered, law2, law3, secn_peaks, goodput, incast, websearch (all
by default)."""

from __future__ import annotations

import argparse
import sys

from burstlab.report.dc.study import PARTS, run_study


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m burstlab.report.dc", description=__doc__)
    p.add_argument("dir")
    p.add_argument("parts", nargs="*", choices=[[], *PARTS, "websearch"], metavar="PART")
    p.add_argument("--websearch-seconds", type=float, default=300.0,
                   help="simulated seconds of each web-search run (the paper's: 300)")
    p.add_argument("-j", "--jobs", type=int, default=None, metavar="N",
                   help="worker processes for the web-search runs (default: the CPUs this process may use)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="sets",
                   help="an override for every run of the parts run now, after each run's own "
                        "(e.g. hosts.rto_min=200ms); recorded in the study file under 'set'")
    a = p.parse_args(argv)
    try:
        path = run_study(a.dir, websearch_seconds=a.websearch_seconds, parts=a.parts or None,
                         progress=lambda s: print(s, file=sys.stderr), jobs=a.jobs,
                         sets=a.sets)
    except KeyboardInterrupt:
        print("interrupted: the parts finished before are kept", file=sys.stderr)
        return 130
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
