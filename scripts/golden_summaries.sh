#!/usr/bin/env bash
# Run every shipped scenario with the release bench binary and save its summary minus wall
# time (events, FCTs, retransmits per flow, drops per port) as one JSON file per scenario, so
# a refactor can be checked to change no figure:
#
#   scripts/golden_summaries.sh /tmp/golden-before
#   ...change...
#   scripts/golden_summaries.sh /tmp/golden-after && diff -r /tmp/golden-before /tmp/golden-after
#
# Extra arguments (e.g. `--set stop=5s`) are passed to every run.
set -euo pipefail
out=${1:?usage: golden_summaries.sh OUT_DIR [--set path=value ...]}
shift
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
cargo build --release -q -p burstlab-sim --bin burstlab-bench
bench=${CARGO_TARGET_DIR:-$root/target}/release/burstlab-bench
mkdir -p "$out"
for f in scenarios/*.toml scenarios/amlight/*.toml; do
    name=$(echo "${f#scenarios/}" | tr / _)
    "$bench" "$f" --json "$@" 2>"$out/${name%.toml}.raw" >/dev/null
    jq 'del(.engine.wall_s, .engine.events_per_s)' "$out/${name%.toml}.raw" >"$out/${name%.toml}.json"
    rm "$out/${name%.toml}.raw"
    echo "$f: $(jq -c '[.engine.events, [.flows[] | .fct_s]]' "$out/${name%.toml}.json")"
done
