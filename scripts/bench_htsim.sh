#!/usr/bin/env bash
# Issue 40's comparison with htsim: run scenarios A, B and C (benches/htsim/*.toml) through the
# release bench binary, natively for the wall time and under callgrind for the instruction count
# (this VM has no hardware counters), and print per scenario the packet-hops, events,
# instructions, instructions per packet-hop, wall time per packet-hop and peak RSS.
#
#   scripts/bench_htsim.sh                              # all three, callgrind included
#   scripts/bench_htsim.sh benches/htsim/b-*.toml --set stop=2s
#   NO_CALLGRIND=1 scripts/bench_htsim.sh               # wall times only, in seconds
#   BENCH=/tmp/old-burstlab-bench scripts/bench_htsim.sh   # another build of the bench
#   PROFILES=/tmp/cg scripts/bench_htsim.sh             # keep callgrind.out.<scenario> there
#
# A packet-hop is one packet serialised on one port. The bench prints them (its packet_hops
# column, since eaf2ab0); for an older bench they are computed from its summary: each TCP flow
# sends a SYN, ceil(size / MSS) segments (MSS = MTU - 52) plus its retransmissions and loss
# probes along its path, and the receiver a SYN-ACK and its ACKs back along the reversed path; a packet dropped at a port is not serialised there nor
# after it. A flow still sending at the end of the run counts the segments it delivered, not
# those still in the network, so its figure is a lower bound (marked ">=").
#
# Arguments ending in .toml choose the scenarios; the others (e.g. --set stop=2s) go to every run.
set -euo pipefail
trap 'exit 130' INT
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scenarios=()
args=()
for a in "$@"; do
    case "$a" in
    *.toml) scenarios+=("$a") ;;
    *) args+=("$a") ;;
    esac
done
[ ${#scenarios[@]} -gt 0 ] || scenarios=(benches/htsim/*.toml)
if [ -z "${BENCH:-}" ]; then
    cargo build --release -q -p burstlab-sim --bin burstlab-bench
    BENCH=${CARGO_TARGET_DIR:-$root/target}/release/burstlab-bench
fi
command -v valgrind >/dev/null || [ -n "${NO_CALLGRIND:-}" ] ||
    { echo "bench_htsim.sh: valgrind not found (apt-get install valgrind, or NO_CALLGRIND=1)" >&2; exit 2; }
[ -z "${PROFILES:-}" ] || mkdir -p "$PROFILES"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

printf '%-26s %13s %11s %16s %10s %12s %9s\n' scenario packet_hops events instructions instr/hop wall_ns/hop rss_mib
for f in "${scenarios[@]}"; do
    name=$(basename "$f" .toml)
    "$BENCH" "$f" --graph json "${args[@]}" >"$tmp/graph.json"
    "$BENCH" "$f" --json "${args[@]}" >"$tmp/table.tsv" 2>"$tmp/summary.json"
    instructions=""
    if [ -z "${NO_CALLGRIND:-}" ]; then
        out=${PROFILES:+$PROFILES/callgrind.out.$name}
        valgrind --tool=callgrind --callgrind-out-file="${out:-/dev/null}" \
            "$BENCH" "$f" "${args[@]}" >/dev/null 2>"$tmp/callgrind.log"
        instructions=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$tmp/callgrind.log")
        [ -n "$instructions" ] ||
            { echo "$f: no 'Collected' line in callgrind's output:" >&2; cat "$tmp/callgrind.log" >&2; exit 1; }
    fi
    python3 - "$f" "$tmp/graph.json" "$tmp/summary.json" "$tmp/table.tsv" "$instructions" <<'EOF'
import json, math, sys

path, graph_file, summary_file, table_file, instructions = sys.argv[1:]
graph = json.load(open(graph_file))
summary = json.load(open(summary_file))
header, row = [line.split("\t") for line in open(table_file).read().splitlines()[:2]]
row = dict(zip(header, row))
mtu = None
for line in open(path):
    key, _, value = line.partition("=")
    if key.strip() == "mtu":
        mtu = int(value.split("#")[0].strip())
mss = (mtu or 1500) - 52  # mss_from_mtu(): IP 20 + TCP 20 + timestamps 12

exact = True
if "packet_hops" in row:
    hops = int(row["packet_hops"])
else:
    paths = {f["flow_id"]: f["path"] for f in graph["flows"]}
    # Ports a path crosses, as "a->b", and how many of them a packet dropped at each would
    # still have crossed (itself included).
    after = {}
    hops = 0
    for flow in summary["flows"]:
        if flow["kind"] != "tcp":
            sys.exit(f"{path}: flow {flow['flow_id']} is {flow['kind']}: only TCP flows are counted")
        nodes = paths[flow["flow_id"]]
        for way in (nodes, nodes[::-1]):
            ports = [f"{a}->{b}" for a, b in zip(way, way[1:])]
            for k, port in enumerate(ports):
                if after.setdefault(port, len(ports) - k) != len(ports) - k:
                    sys.exit(f"{path}: port {port} lies at different distances from the ends "
                             "of the paths through it; packet-hops cannot be told from drops")
        if flow["fct_s"] is None:
            exact = False
            segments = math.ceil(flow["delivered_bytes"] / mss)
        else:
            segments = math.ceil(flow["size_bytes"] / mss)
        data = 1 + segments + flow["retransmits"] + flow["loss_probes"]
        acks = 1 + flow["acks"]
        hops += (data + acks) * (len(nodes) - 1)
    for port in summary["ports"]:
        if port["drops"]:
            if port["port"] not in after:
                sys.exit(f"{path}: drops at {port['port']}, which no flow's path crosses")
            hops -= port["drops"] * after[port["port"]]
events = int(row["events"])
wall = float(row["wall_s"])
ins = int(instructions) if instructions else None
print(f"{summary['scenario']:<26} {('' if exact else '>=') + format(hops, ','):>13} "
      f"{events:>11,} {format(ins, ',') if ins else '-':>16} "
      f"{format(round(ins / hops), ',') if ins else '-':>10} {wall / hops * 1e9:>12.0f} "
      f"{row['peak_rss_mib']:>9}")
EOF
done
