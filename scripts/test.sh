#!/usr/bin/env bash
# Everything CI checks: install, the Rust tests and lints, then the Python tests against the
# installed package.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"
# Each phase's start, so CI's log shows where its minutes go; with the CPU time the phases before
# it used (what this script waited for: /proc/PID/stat cutime + cstime) and the load average, so
# it also shows how busy the two cores were and what else ran.
phase() {
    local stat load
    read -ra stat <"/proc/$$/stat"
    read -r load _ <"/proc/loadavg"
    echo "test: ${SECONDS} s: $1 [CPU $(( (stat[15] + stat[16]) / $(getconf CLK_TCK) )) s so far, load $load]" >&2
}

# CI builds a clean clone once: incremental compilation would write caches no build reads, and
# the test profile's full debug info is compile and link time for 40 test binaries; line tables
# keep file:line in a failing test's backtrace.
if [ "${CI:-}" = true ]; then
    export CARGO_INCREMENTAL=0 CARGO_PROFILE_TEST_DEBUG=line-tables-only
fi

phase "setup"
bash scripts/setup.sh
# The test profile is optimised (Cargo.toml) and keeps debug assertions: the engine's invariants
# (queue ≤ buffer, dequeue spacing, monotone time) are checked in every integration test.
phase "cargo test"
cargo test --workspace
# Lints, warnings as errors: clippy comes with rustup's default profile.
phase "clippy and rustfmt"
cargo clippy --workspace --all-targets -- -D warnings
# Formatting, as rustfmt.toml sets it (rustfmt comes with rustup's default profile).
cargo fmt --all --check
# `pip install .` into a fresh virtualenv, then `burstlab demo --quick` in an empty folder: the
# wheel must carry the scenario catalogue and all the demo needs. It runs beside the fuzz smoke,
# which takes its fixed time on one core whatever else runs; its log follows the fuzzers'.
phase "the wheel's demo beside the fuzz smoke"
wheel_log="$(mktemp)"
bash scripts/check_wheel.sh >"$wheel_log" 2>&1 &
wheel_pid=$!
trap 'kill "$wheel_pid" 2>/dev/null || true; rm -f "$wheel_log"' EXIT
# Every telemetry parser under libFuzzer for a short while (long runs: docs/reliability.md).
FUZZ_SECONDS="${FUZZ_SECONDS:-8}" bash scripts/fuzz.sh smoke
wheel_status=0
wait "$wheel_pid" || wheel_status=$?
cat "$wheel_log"
[ "$wheel_status" = 0 ] || { echo "test: check_wheel.sh failed (exit $wheel_status)" >&2; exit 1; }
# Most tests run on both cores, a module to a worker (each module-scoped fixture is built once);
# then, alone, those that time a real kernel or a real server (markers netns and serial), with
# nothing of ours beside them. A test that fails (pytest's exit 1) lets the second part
# run; Ctrl-C (exit 2) or any other error stops here. The slowest tests are listed, so CI's log
# shows where its time goes.
failed=()
run_pytest() {  # WHAT PYTEST-ARGS...
    local what="$1" status=0
    shift
    phase "pytest $what"
    "$PYTHON" -m pytest -q --durations=15 "$@" tests/python || status=$?
    [ "$status" = 0 ] || [ "$status" = 1 ] || exit "$status"
    [ "$status" = 0 ] || failed+=("$what")
}
run_pytest "on both cores" -n 2 --dist loadscope -m "not (netns or serial)"
run_pytest "alone (real kernels and servers)" -p no:xdist -m "netns or serial"
[ ${#failed[@]} = 0 ] || { echo "test: pytest failed: ${failed[*]}" >&2; exit 1; }
phase "done"
