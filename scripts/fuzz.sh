#!/usr/bin/env bash
# Coverage-guided fuzzing of every telemetry parser with cargo-fuzz (libFuzzer, nightly Rust).
#
#   bash scripts/fuzz.sh smoke          # each target for FUZZ_SECONDS (default 20 s): CI runs this
#   bash scripts/fuzz.sh long [RUNS]    # each target for RUNS inputs (default 100,000,000);
#                                       # history/reliability-notes.md records the results
#
# Targets live in crates/telemetry/fuzz/fuzz_targets/. A crash leaves its input under
# crates/telemetry/fuzz/artifacts/<target>/ and fails this script; reproduce it with
# `cargo +nightly fuzz run <target> <file>` from crates/telemetry.
set -euo pipefail
cd "$(dirname "$0")/../crates/telemetry"

mode="${1:-smoke}"
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
cargo +nightly fuzz build "${flags[@]}"
for t in $targets; do
    mkdir -p "fuzz/corpus/$t"
    case "$mode" in
        smoke) limit=(-max_total_time="${FUZZ_SECONDS:-20}") ;;
        long) limit=(-runs="${2:-100000000}") ;;
        *) echo "usage: fuzz.sh smoke|long [RUNS]" >&2; exit 2 ;;
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
