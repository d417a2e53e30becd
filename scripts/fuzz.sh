#!/usr/bin/env bash
# Coverage-guided fuzzing of every telemetry parser with cargo-fuzz (libFuzzer, nightly Rust),
# and the simulator's scenario generator for a long while.
#
#   bash scripts/fuzz.sh smoke              # each target for FUZZ_SECONDS (default 20 s): CI runs this
#   bash scripts/fuzz.sh long [RUNS] [TARGET...]  # each target (default: all) for RUNS inputs
#                                                 # (default 100,000,000)
#   bash scripts/fuzz.sh generated [SECS]   # generated scenarios for SECS (default 3600) seconds
#
# docs/reliability.md records the long runs' figures. Targets live in
# crates/telemetry/fuzz/fuzz_targets/. A crash leaves its input under
# crates/telemetry/fuzz/artifacts/<target>/ and fails this script; reproduce it with
# `cargo +nightly fuzz run <target> <file>` from crates/telemetry.
#
# The generator (crates/sim/tests/generated_scenarios.rs) writes into GENERATED_DIR (default
# target/generated): current.toml, the case being checked; failed-N.toml, each failing case
# (shrunk); abort-N.toml, a case that killed the process (the run then goes on in a new one).
# Reproduce one with BURSTLAB_GENERATED_FILE=<file> cargo test -p burstlab-sim --test
# generated_scenarios -- --nocapture.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root/crates/telemetry"

mode="${1:-smoke}"

if [ "$mode" = generated ]; then
    cd "$root"
    out="${GENERATED_DIR:-$root/target/generated}"
    mkdir -p "$out"
    # "Executable tests/generated_scenarios.rs (PATH)", wherever CARGO_TARGET_DIR puts it.
    bin=$(cargo test -p burstlab-sim --test generated_scenarios --no-run 2>&1 \
        | sed -n 's/.*Executable tests\/generated_scenarios\.rs (\(.*\))$/\1/p' | tail -1)
    [ -n "$bin" ] || { echo "fuzz: cannot build the generated_scenarios test" >&2; exit 1; }
    end=$(( $(date +%s) + ${2:-3600} ))
    echo "fuzz: generated scenarios until $(date -d "@$end" +%T), commit $(git rev-parse --short HEAD), cases in $out"
    aborts=0
    status=0
    while [ "$(date +%s)" -lt "$end" ]; do
        set +e
        BURSTLAB_GENERATED_SECONDS=$(( end - $(date +%s) )) BURSTLAB_GENERATED_DIR="$out" \
            "$bin" generated_scenarios_are --nocapture
        status=$?
        set -e
        # Ctrl-C (SIGINT) or a SIGTERM ends the run; another signal is a case that killed it.
        case "$status" in
            130|143) exit "$status" ;;
            0|101) break ;;
        esac
        cp "$out/current.toml" "$out/abort-$aborts.toml"
        echo "fuzz: the process died (exit $status) on $out/abort-$aborts.toml; going on"
        aborts=$(( aborts + 1 ))
    done
    echo "fuzz: generated: exit $status, $aborts processes killed by a case"
    [ "$status" = 0 ] && [ "$aborts" = 0 ]
    exit
fi
CARGO_FUZZ_VERSION=0.13.2

rustup toolchain list | grep -q '^nightly' || {
    echo "fuzz: the nightly toolchain is missing (rustup toolchain install nightly)" >&2; exit 1; }
if ! cargo fuzz --version 2>/dev/null | grep -q "$CARGO_FUZZ_VERSION"; then
    echo "fuzz: installing cargo-fuzz $CARGO_FUZZ_VERSION" >&2
    cargo install --quiet --locked cargo-fuzz --version "$CARGO_FUZZ_VERSION"
fi

# No sanitizer (the crate has no unsafe code; libFuzzer still catches every panic), debug
# assertions on so integer overflow is a crash, release optimisation for speed.
flags=(--sanitizer none --debug-assertions --release)
targets=$(cargo +nightly fuzz list)
# `long RUNS TARGET...` runs only the named targets, so two can run side by side.
if [ "$mode" = long ] && [ $# -gt 2 ]; then
    for t in "${@:3}"; do
        grep -qx "$t" <<<"$targets" || { echo "fuzz: no target '$t'; the targets are:" $targets >&2; exit 2; }
    done
    targets="${*:3}"
fi
cargo +nightly fuzz build "${flags[@]}"
for t in $targets; do
    mkdir -p "fuzz/corpus/$t"
    case "$mode" in
        smoke) limit=(-max_total_time="${FUZZ_SECONDS:-20}") ;;
        long) limit=(-runs="${2:-100000000}") ;;
        *) echo "usage: fuzz.sh smoke|long [RUNS] [TARGET...]|generated [SECS]" >&2; exit 2 ;;
    esac
    start=$(date +%s)
    set +e
    cargo +nightly fuzz run "${flags[@]}" "$t" "fuzz/corpus/$t" -- "${limit[@]}" -print_final_stats=1 2>&1 \
        | grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|==[0-9]+== ERROR|.*panicked|SUMMARY)'
    status=${PIPESTATUS[0]}
    set -e
    echo "fuzz: $t: exit $status after $(( $(date +%s) - start )) s"
    [ "$status" = 0 ] || exit "$status"
done
