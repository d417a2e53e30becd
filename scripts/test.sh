#!/usr/bin/env bash
# Everything CI checks: install, the Rust tests (release: the simulator's integration tests run
# millions of packets), then the Python tests against the installed package.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"

bash scripts/setup.sh
cargo test --workspace --release
"$PYTHON" -m pytest -q tests/python
