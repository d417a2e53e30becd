#!/usr/bin/env bash
# Everything CI checks: install, the Rust tests and lints, then the Python tests against the
# installed package.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"

bash scripts/setup.sh
# The test profile is optimised (Cargo.toml) and keeps debug assertions: the engine's invariants
# (queue ≤ buffer, dequeue spacing, monotone time) are checked in every integration test.
cargo test --workspace
# Lints, warnings as errors: clippy comes with rustup's default profile.
cargo clippy --workspace --all-targets -- -D warnings
# Formatting, as rustfmt.toml sets it (rustfmt comes with rustup's default profile).
cargo fmt --all --check
# Every telemetry parser under libFuzzer for a short while (long runs: docs/reliability.md).
FUZZ_SECONDS="${FUZZ_SECONDS:-15}" bash scripts/fuzz.sh smoke
"$PYTHON" -m pytest -q tests/python
