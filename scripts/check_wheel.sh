#!/usr/bin/env bash
# burstlab as a user installs it with `pip install .`: build the wheel, install it with its
# dependencies into a fresh virtualenv, and run `burstlab demo --quick` in an empty folder, so
# everything the demo needs (the extension, the scenario catalogue, the report) must ship in the
# wheel. Run by scripts/test.sh after setup.sh, whose release build in cargo's target/ the wheel
# reuses (the Rust is not compiled again).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"
# In memory where there is a tmpfs: the virtualenv is 450 MB in 8,000 files, written once and
# removed, and on a shared disk that alone took half a minute.
work="$(mktemp -d -p /dev/shm 2>/dev/null || mktemp -d)"
trap 'rm -rf "$work"' EXIT

step() { echo "check_wheel: $1 (${SECONDS} s so far)" >&2; }

step "building the wheel"
"$PYTHON" -m pip wheel --quiet --no-deps --wheel-dir "$work/dist" .
wheel=("$work"/dist/burstlab-*.whl)

step "installing $(basename "${wheel[0]}") and its dependencies into a fresh virtualenv"
"$PYTHON" -m venv "$work/venv"
# The dependencies' wheels are kept between runs: installing from them without asking the index
# takes a third of the time. Pins that changed find no wheel there; pip then fetches them.
# --no-compile: byte-compiling the dependencies (matplotlib, dask, ...) checks nothing of ours.
cache="${BURSTLAB_WHEEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/burstlab/wheels}"
mkdir -p "$cache"
install=("$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-compile)
if ! "${install[@]}" --no-index --find-links "$cache" "${wheel[0]}" 2>/dev/null; then
    step "fetching the dependencies' wheels into $cache"
    "$PYTHON" -m pip download --quiet --disable-pip-version-check --dest "$cache" "${wheel[0]}"
    rm -f "$cache"/burstlab-*.whl
    "${install[@]}" --no-index --find-links "$cache" "${wheel[0]}"
fi

mkdir "$work/empty"
cd "$work/empty"
# The venv's burstlab, not the checkout's: its package must be the one in the venv.
"$work/venv/bin/python" - <<'PY'
import pathlib, sys
import burstlab
where = pathlib.Path(burstlab.__file__).resolve()
if not where.is_relative_to(pathlib.Path(sys.prefix).resolve()):
    sys.exit(f"check_wheel: burstlab imported from {where}, not from the virtualenv {sys.prefix}")
PY
step "burstlab demo --quick in an empty folder"
"$work/venv/bin/burstlab" demo --quick >"$work/demo.out"
grep -q "^report: burstlab-demo-quick/report.html$" "$work/demo.out" || {
    cat "$work/demo.out" >&2
    echo "check_wheel: the demo printed no report path" >&2
    exit 1
}
test -s burstlab-demo-quick/report.html
step "ok: the demo ran from the wheel"
