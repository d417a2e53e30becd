#!/usr/bin/env python3
"""Write the leaf-spine benchmark scenario of docs/performance.md to stdout: 128 hosts
(8 leaves x 16 hosts at 10 Gbit/s, 4 spines at 40 Gbit/s) and 1,000 concurrent CUBIC flows,
each between hosts on different leaves (pairs drawn with a fixed seed), for 1 s simulated.

    scripts/gen_leaf_spine_bench.py > /tmp/leaf-spine-128.toml
    target/release/burstlab-bench /tmp/leaf-spine-128.toml
"""
import random
import sys

LEAVES, SPINES, PER_LEAF, FLOWS = 8, 4, 16, 1000


def main() -> None:
    rng = random.Random(34)
    out = [
        'name = "leaf-spine-128"',
        'stop = "1s"',
        "",
        "[topology]",
        'preset = "leaf-spine"',
        f"leaves = {LEAVES}",
        f"spines = {SPINES}",
        f"hosts_per_leaf = {PER_LEAF}",
        'host_rate = "10Gbps"',
        'fabric_rate = "40Gbps"',
        "mtu = 9000",
        'buffer = "1MiB"',
        "",
    ]
    hosts = LEAVES * PER_LEAF
    for _ in range(FLOWS):
        src = rng.randrange(hosts)
        dst = rng.randrange(hosts)
        while dst // PER_LEAF == src // PER_LEAF:
            dst = rng.randrange(hosts)
        out += ["[[flow]]", 'cca = "cubic"', f'src = "h{src}"', f'dst = "h{dst}"', ""]
    sys.stdout.write("\n".join(out))


if __name__ == "__main__":
    main()
