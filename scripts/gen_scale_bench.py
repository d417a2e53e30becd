"""Write the scale benchmarks of docs/performance.md ("Memory and scale (issue 41)") as
scenario files: N tiny TCP flows on the dumbbell, or N burst sources sharing 50 Gbit/s.

    python3 scripts/gen_scale_bench.py flows 100000 > /tmp/flows-100000.toml
    python3 scripts/gen_scale_bench.py sources 100000 > /tmp/sources-100000.toml
    python3 scripts/gen_scale_bench.py sources 100000 1ns > /tmp/sources0-100000.toml  # setup only
    target/release/burstlab-bench /tmp/flows-100000.toml
"""

from __future__ import annotations

import sys


def flows(n: int) -> str:
    """N flows of 10 kB each on their own hosts, starting 1 ms apart in groups of 1000."""
    head = (f'name = "flows-{n}"\nstop = "2s"\n[topology]\nbottleneck_rate = "10Gbps"\n'
            'host_rate = "10Gbps"\nrtt = "1ms"\nbuffer = "4MiB"\n')
    body = "".join(f'[[flow]]\ncca = "cubic"\nsize = "10KB"\nstart = "{(i % 1000) * 1000}us"\n'
                   for i in range(n))
    return head + body


def sources(n: int, duration: str) -> str:
    """N burst sources whose rates add up to 50 Gbit/s (half the bottleneck: nothing queues
    for long), so every N gives the same datagrams and events."""
    return (f'name = "sources-{n}"\nstop = "1s"\n[topology]\nbottleneck_rate = "100Gbps"\n'
            f'rtt = "100us"\nbuffer = "4MiB"\n[[burst]]\nsources = {n}\n'
            f'rate = "{50e9 / n:.0f}bps"\nstart = "1ms"\nduration = "{duration}"\npacket_size = 1500\n')


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[0] not in ("flows", "sources") or not argv[1].isdigit():
        print("usage: gen_scale_bench.py flows|sources N [DURATION]", file=sys.stderr)
        return 2
    n = int(argv[1])
    sys.stdout.write(flows(n) if argv[0] == "flows" else sources(n, argv[2] if len(argv) > 2 else "200ms"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
