#!/usr/bin/env bash
# Take a Debian machine with Python >= 3.11, Rust (cargo) and pip to an installed burstlab:
# the Rust extension is built in release mode by maturin (pip's build backend) and the package
# is installed editable with its dev extras. Safe to run again: pip and cargo rebuild only what
# changed.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"

"$PYTHON" - <<'PY'
import sys
if sys.version_info < (3, 11):
    sys.exit(f"burstlab needs Python >= 3.11, found {sys.version.split()[0]}")
PY
command -v cargo >/dev/null || { echo "setup: cargo not found; install Rust (rustup) first" >&2; exit 1; }

# Debian marks its system Python "externally managed" (PEP 668). Outside a virtualenv, install
# anyway so the `burstlab` command lands on PATH, as the README's quick start expects.
pip_flags=()
if "$PYTHON" -c 'import sys, sysconfig, pathlib; sys.exit(not (sys.prefix == sys.base_prefix and pathlib.Path(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED").exists()))'; then
    echo "setup: system Python is externally managed; installing with --break-system-packages" >&2
    pip_flags+=(--break-system-packages)
fi

# tcpdump records the captures the telemetry tests read (and that users feed `burstlab detect`).
if ! command -v tcpdump >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "setup: installing tcpdump (Debian package)" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tcpdump >/dev/null
fi
# iperf3 makes the real runs `burstlab explain`'s tests explain (tests/python/advise).
if ! command -v iperf3 >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "setup: installing iperf3 (Debian package)" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq iperf3 >/dev/null
fi
# gcc builds scripts/delayline.c, the 4 ms path of those tests' window set-ups (this kernel has no netem).
if ! command -v gcc >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gcc >/dev/null; fi
# Prometheus and InfluxDB 1.x, which `burstlab collect`'s integration test exports to; without
# root it says what is missing (that test then fails under CI=true, skips elsewhere).
bash scripts/collect_servers.sh || true

"$PYTHON" -m pip install --disable-pip-version-check ${pip_flags[@]+"${pip_flags[@]}"} -e '.[dev]'
"$PYTHON" -c 'import burstlab; print("burstlab", burstlab.__version__, "installed")'
