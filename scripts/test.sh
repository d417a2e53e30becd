#!/usr/bin/env bash
# Everything CI checks: install, the Rust tests and lints, the wheel's demo, the fuzz smoke, then
# the Python tests against the installed package.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"
# Each phase's start, so CI's log shows where its minutes go; with the CPU time the phases before
# it used (what this shell waited for: /proc/PID/stat cutime + cstime; the part that runs beside
# counts once it has ended) and the load average, so it also shows how busy the two cores were.
phase() {
    local stat load
    read -ra stat <"/proc/$BASHPID/stat"
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

# The tests that time a real kernel or a real server (pytest markers netns and serial) run one
# at a time and leave a core idle for minutes. What needs neither those tests nor a timing of
# its own runs beside them, at the lowest priority: SCHED_IDLE (chrt --idle) gets a CPU only
# when no ordinary process wants it, so the measured hosts, our traffic tools and iperf3
# (SCHED_OTHER or SCHED_FIFO) run as if it were not there. In its own process group, so that one
# signal stops all of it. The Rust tests are built there and run afterwards at normal priority:
# some assert wall times (the replay pacing, the memory budget's refusals).
lowest_priority() {
    chrt --idle -p 0 "$BASHPID" >/dev/null 2>&1 || renice -n 19 -p "$BASHPID" >/dev/null
    ionice -c 3 -p "$BASHPID" 2>/dev/null || true
}
beside_log="$(mktemp)"
set -m
(
    lowest_priority
    # `pip install .` into a fresh virtualenv, then `burstlab demo --quick` in an empty folder:
    # the wheel must carry the scenario catalogue and all the demo needs.
    phase "beside: the wheel's demo"
    bash scripts/check_wheel.sh
    # Every telemetry parser under libFuzzer for a fixed time each (long runs:
    # docs/reliability.md), while the core the tests leave idle is free for it.
    phase "beside: the fuzz smoke"
    FUZZ_SECONDS="${FUZZ_SECONDS:-8}" bash scripts/fuzz.sh smoke
    phase "beside: the Rust tests' build"
    cargo test --workspace --no-run
    # Lints, warnings as errors, and formatting as rustfmt.toml sets it (both come with
    # rustup's default profile).
    phase "beside: clippy and rustfmt"
    cargo clippy --workspace --all-targets -- -D warnings
    cargo fmt --all --check
    phase "beside: done"
) >"$beside_log" 2>&1 &
beside=$!
set +m
beside_shown=false
finish() {
    kill -TERM -- "-$beside" 2>/dev/null || true
    if [ "$beside_shown" = false ]; then
        echo "test: what ran beside the tests, as far as it got:" >&2
        cat "$beside_log" >&2
    fi
    rm -f "$beside_log"
}
trap finish EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A part that fails (pytest's exit 1, or any failure of a build, a lint or the Rust tests) lets
# the next run; Ctrl-C (pytest's exit 2) or any other pytest error stops here. The slowest tests
# are listed, so CI's log shows where its time goes.
failed=()
run_pytest() {  # WHAT PYTEST-ARGS...
    local what="$1" status=0
    shift
    phase "pytest $what"
    "$PYTHON" -m pytest -q --durations=15 "$@" tests/python || status=$?
    [ "$status" = 0 ] || [ "$status" = 1 ] || exit "$status"
    [ "$status" = 0 ] || failed+=("pytest $what")
}
run_pytest "alone (real kernels and servers), the builds beside" -p no:xdist -m "netns or serial"
# A module to a worker, so each module-scoped fixture is built once.
run_pytest "on both cores" -n 2 --dist loadscope -m "not (netns or serial)"

phase "waiting for the part beside"
beside_status=0
wait "$beside" || beside_status=$?
beside_shown=true
cat "$beside_log"
[ "$beside_status" = 0 ] || failed+=("the part beside (exit $beside_status; its last phase line says which)")

# The Rust tests at normal priority. The test profile is optimised (Cargo.toml) and keeps debug
# assertions: the engine's invariants (queue ≤ buffer, dequeue spacing, monotone time) are
# checked in every integration test.
phase "cargo test"
cargo test --workspace || failed+=("cargo test")
[ ${#failed[@]} = 0 ] || { echo "test: failed: ${failed[*]}" >&2; exit 1; }
phase "done"
