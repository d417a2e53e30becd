"""What the `burstlab` command loads before it does any work (python/burstlab/__init__.py,
cli/__init__.py): `--version` and `VERB --help` must not pay for the data libraries (0.5-1.5 s
of imports on a busy two-core machine), so their import is left to the work that uses them.
Checked on ``sys.modules`` in a fresh interpreter, not by timing."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from burstlab.cli import VERBS

#: Loaded by a verb's work (a run's tables, a query, a report), never to start the command.
HEAVY = ("numpy", "pyarrow", "pandas", "duckdb", "matplotlib")

#: Runs ``burstlab ARGS`` through the console script's entry point in this interpreter and
#: prints the top-level packages then loaded, as JSON on stderr (stdout is the command's).
_PROBE = """
import contextlib, io, json, sys
from burstlab.cli import main
args = json.loads(sys.argv[1])
sys.argv = ["burstlab", *args]
out = io.StringIO()
try:
    with contextlib.redirect_stdout(out):
        main(args)
except SystemExit as e:
    code = e.code
sys.stderr.write(json.dumps({"code": code, "out": out.getvalue(),
                             "modules": sorted({m.split(".")[0] for m in sys.modules})}))
"""


def _probe(*args: str) -> dict:
    r = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(args)], capture_output=True, text=True,
                       timeout=120)
    return json.loads(r.stderr.splitlines()[-1])


def test_importing_burstlab_and_its_cli_loads_no_data_library():
    code = "import json, sys, burstlab, burstlab.cli; print(json.dumps(sorted(sys.modules)))"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    loaded = set(json.loads(r.stdout))
    heavy = {m.split(".")[0] for m in loaded} & set(HEAVY)
    assert not heavy, sorted(heavy)
    # Nor the simulator: __version__ and run are read from it when first asked for.
    assert "burstlab._core" not in loaded


@pytest.mark.parametrize("args", [["--version"], ["-V"], ["--help"], *([verb, "--help"] for verb in VERBS),
                                  ["help", "sweep"]])
def test_version_and_help_load_no_data_library(args: list[str]):
    result = _probe(*args)
    assert result["code"] == 0, result
    assert result["out"].strip(), "printed nothing"
    heavy = set(result["modules"]) & set(HEAVY)
    assert not heavy, f"burstlab {' '.join(args)} imported {sorted(heavy)}"


def test_version_and_help_do_not_load_pydantic():
    """typer converts a flag that is not a bool with pydantic (0.1-0.4 s to import); the help
    flag is given a False default, so neither the root's help flag nor --version needs it."""
    for args in (["--version"], ["run", "--help"]):
        assert "pydantic" not in _probe(*args)["modules"], args


def test_version_loads_no_verb_module():
    """Only the verb called (or, for the root's help, listed) is imported."""
    loaded = set(_probe("--version")["modules"])
    assert "rich" not in loaded  # help layout and progress displays only
    code = ("import json, sys; from burstlab.cli import main\n"
            "try:\n    main(['graph', '--help'])\nexcept SystemExit: pass\n"
            "sys.stderr.write(json.dumps(sorted(m for m in sys.modules if m.startswith('burstlab.cli.'))))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    verbs = {m.rsplit(".", 1)[1] for m in json.loads(r.stderr.splitlines()[-1])} & set(VERBS)
    assert verbs == {"graph"}, verbs


def test_the_api_names_are_still_there():
    code = ("import json, burstlab; print(json.dumps([burstlab.__version__, list(burstlab.TABLES), "
            "callable(burstlab.run), burstlab.RunResult.__name__, sorted(set(burstlab.__all__) - set(dir(burstlab)))]))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    version, tables, run_callable, result_name, missing = json.loads(r.stdout)
    assert version and tables[0] == "flows" and run_callable and result_name == "RunResult"
    assert missing == []
    r = subprocess.run([sys.executable, "-c", "import burstlab; burstlab.nope"], capture_output=True, text=True,
                       timeout=120)
    assert "module 'burstlab' has no attribute 'nope'" in r.stderr
