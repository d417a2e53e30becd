"""What every verb shares (python/burstlab/cli/__init__.py, help_text.py): help rendered one
example per line at any width, flags without a type, `burstlab help VERB`, `-V`, and a quiet
exit when the reader of stdout goes away, all run as a user runs them (a subprocess, real
pipes)."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from typer.testing import CliRunner, Result

from burstlab.cli import VERBS, build_app, status
from burstlab.cli.help_text import to_markdown
from helpers import burstlab

REPO = Path(__file__).resolve().parents[3]


def _help(*args: str, columns: int, monkeypatch: pytest.MonkeyPatch) -> Result:
    """burstlab ARGS in this process (help needs no subprocess: one per call would cost a
    second each), its help laid out ``columns`` wide."""
    monkeypatch.setenv("COLUMNS", str(columns))
    monkeypatch.delenv("TERMINAL_WIDTH", raising=False)
    return CliRunner().invoke(build_app(), list(args), prog_name="burstlab")


def _examples(verb: str) -> list[str]:
    """The example lines of a verb's docstring: its blocks indented beyond the prose."""
    doc = importlib.import_module(VERBS[verb]).command.__doc__
    md = to_markdown(doc, width=10_000)  # wide: no line is broken
    lines, inside = [], False
    for line in md.splitlines():
        if line.startswith("```"):
            inside = not inside
        elif inside and line.strip():
            lines.append(line)
    return lines


def _shown_commands(text: str) -> list[str]:
    """The help's lines, each shell continuation (`` \\``) joined to the line after it."""
    out, pending = [], ""
    for raw in text.splitlines():
        line = raw.strip()
        if line.endswith(" \\"):
            pending += line[:-2] + " "
            continue
        out.append(pending + line)
        pending = ""
    return out


# ---- help ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("columns", [80, 200])
@pytest.mark.parametrize("verb", ["run", "sweep", "query", "demo", "detect", "decode"])
def test_each_example_is_a_line_of_its_own(verb: str, columns: int, monkeypatch: pytest.MonkeyPatch):
    examples = _examples(verb)
    if not examples:
        pytest.skip(f"{verb}'s help has no example block")
    r = _help(verb, "--help", columns=columns, monkeypatch=monkeypatch)
    assert r.exit_code == 0, r.output
    shown = _shown_commands(r.stdout)
    for example in examples:
        # A line is shown whole (or broken with continuations that join back to it), never
        # folded into the prose or into the example after it.
        assert " ".join(example.split()) in {" ".join(s.split()) for s in shown}, (example, r.stdout)
    if columns == 80:
        # Broken to fit where a break is possible: only a single shell word may run longer.
        for line in r.stdout.splitlines():
            assert len(line) <= 80 or " " not in line.strip(), line


def test_a_long_example_breaks_before_an_option_and_pastes_back():
    doc = """Do it.

    Example:

        burstlab sweep scenarios/amlight-209ms-burst.toml --grid 'burst[0].start=1.5s..7.5s/0.5s' --grid 'flow[0].cca=cubic,reno' --reps 3
    """
    md = to_markdown(doc, width=60)
    code = md.split("```text\n", 1)[1].split("\n```", 1)[0].splitlines()
    assert code == [
        "burstlab sweep scenarios/amlight-209ms-burst.toml \\",
        "    --grid 'burst[0].start=1.5s..7.5s/0.5s' \\",
        "    --grid 'flow[0].cca=cubic,reno' --reps 3",
    ]
    # A quoted string over several lines is left as written: a backslash inside it would be data.
    quoted = to_markdown("Q.\n\nExample:\n\n    burstlab query d 'SELECT a, b, c, d, e, f, g\n        FROM t'\n", width=20)
    assert "burstlab query d 'SELECT a, b, c, d, e, f, g\n    FROM t'\n```" in quoted


def test_indented_lines_that_continue_prose_stay_prose():
    md = to_markdown("Title.\n\nSome prose\n    that is indented\n", width=80)
    assert "```" not in md


def test_no_verb_shows_a_type_for_a_flag(monkeypatch: pytest.MonkeyPatch):
    for args in (["--help"], *([verb, "--help"] for verb in VERBS)):
        r = _help(*args, columns=200, monkeypatch=monkeypatch)
        assert r.exit_code == 0, (args, r.output)
        assert "<bool>" not in r.stdout, args
    # Options that take a value still show it.
    assert "PATH=VALUE" in _help("run", "--help", columns=200, monkeypatch=monkeypatch).stdout


@pytest.mark.parametrize("verb", [*VERBS, None])
def test_help_verb_is_verb_dash_dash_help(verb: str | None, monkeypatch: pytest.MonkeyPatch):
    args = [verb] if verb else []
    via_help = _help("help", *args, columns=100, monkeypatch=monkeypatch)
    direct = _help(*args, "--help", columns=100, monkeypatch=monkeypatch)
    assert via_help.exit_code == direct.exit_code == 0, via_help.output
    assert via_help.stdout == direct.stdout
    assert "Usage: burstlab" in via_help.stdout


def test_help_as_a_user_runs_it():
    """Once through the console script's path (main(), a subprocess): examples whole, no type
    on a flag."""
    env = {**os.environ, "COLUMNS": "80"}
    env.pop("TERMINAL_WIDTH", None)
    r = subprocess.run([sys.executable, "-m", "burstlab", "help", "sweep"], capture_output=True, text=True,
                       env=env, timeout=120)
    assert r.returncode == 0 and r.stderr == ""
    shown = {" ".join(line.split()) for line in _shown_commands(r.stdout)}
    assert " ".join(_examples("sweep")[0].split()) in shown
    assert "<bool>" not in r.stdout


def test_help_of_an_unknown_verb_is_one_line_exit_2():
    r = burstlab("help", "rnu")
    assert r.returncode == status.BAD_INPUT
    assert r.stdout == ""
    assert r.stderr.count("\n") == 1, r.stderr
    assert "no verb 'rnu'" in r.stderr and "did you mean 'run'" in r.stderr


def test_dash_capital_v_is_version():
    short, long_ = burstlab("-V"), burstlab("--version")
    assert short.returncode == long_.returncode == 0
    assert short.stdout == long_.stdout
    assert short.stdout.startswith("burstlab ") and len(short.stdout.split()) == 2


def test_root_help_lists_every_verb_and_help(monkeypatch: pytest.MonkeyPatch):
    text = _help("--help", columns=120, monkeypatch=monkeypatch).stdout
    for verb in [*VERBS, "help"]:
        assert f" {verb} " in text, verb


# ---- the reader of stdout goes away ------------------------------------------------------------


def _closed_reader(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """Run burstlab with stdout a pipe whose reading end is already closed: its first write
    meets a gone reader, as `burstlab ... | head` does once head has read enough."""
    read_fd, write_fd = os.pipe()
    os.close(read_fd)
    try:
        return subprocess.run([sys.executable, "-m", "burstlab", *map(str, args)], stdout=write_fd,
                              stderr=subprocess.PIPE, text=True, timeout=300)
    finally:
        os.close(write_fd)


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from helpers import SMALL_SCENARIO

    root = tmp_path_factory.mktemp("q")
    scenario = root / "small.toml"
    scenario.write_text(SMALL_SCENARIO)
    out = root / "s"
    r = burstlab("sweep", scenario, "--grid", "topology.rtt=1ms,2ms", "--out", out, "-j", "1", "--json")
    assert r.returncode == 0, r.stderr
    return out


#: 30,000 rows of mixed types from the sweep's runs.
BIG_QUERY = ('SELECT r.run_id, i.range AS i, i.range * 1.5e-3 AS t_s, r."topology.rtt" AS rtt, '
             "r.started_at, NULL AS nothing FROM runs r, range(15000) i ORDER BY ALL")


def _assert_quiet_141(r: subprocess.CompletedProcess[str]) -> None:
    assert r.returncode == status.PIPE_CLOSED, r.stderr
    for noise in ("Traceback", "Broken pipe", "Exception", "internal error"):
        assert noise not in r.stderr, r.stderr


@pytest.mark.parametrize("args", [["--help"], ["help", "run"], ["sweep", "--help"]])
def test_help_to_a_closed_stdout_exits_quietly_with_141(args: list[str]):
    _assert_quiet_141(_closed_reader(*args))


@pytest.mark.parametrize("args", [
    ["query", "{sweep}", BIG_QUERY],
    ["query", "{sweep}", BIG_QUERY, "--json"],
    ["run", "{scenario}", "--json"],
    ["run", "{scenario}"],
])
def test_output_to_a_closed_stdout_exits_quietly_with_141(args: list[str], sweep_dir: Path, small_scenario: Path):
    _assert_quiet_141(_closed_reader(*(a.format(sweep=sweep_dir, scenario=small_scenario) for a in args)))


def test_pipe_to_head_in_a_shell(sweep_dir: Path):
    """As the README shows it: the shell's own pipe, head leaving after one line."""
    cmd = f"set -o pipefail; {sys.executable} -m burstlab query {sweep_dir} '{BIG_QUERY}' | head -n 1"
    r = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=300)
    assert r.stdout.startswith("run_id")
    assert r.stdout.count("\n") == 1
    assert r.stderr == ""
    assert r.returncode in (0, status.PIPE_CLOSED)  # 0 only if everything fitted in the pipe first


def test_decode_to_a_closed_pipe(tmp_path: Path):
    pcap = tmp_path / "r.pcap"
    ok = burstlab("run", REPO / "scenarios" / "int-burst.toml", "--set", "telemetry.int_sample=5000",
                  "--set", "stop=850ms", "--int-pcap", pcap)
    assert ok.returncode == 0, ok.stderr
    _assert_quiet_141(_closed_reader("decode", pcap))


# ---- status.guarded ------------------------------------------------------------------------------


def test_guarded_interrupt_is_one_line_and_130_and_a_closed_pipe_passes_through():
    import io

    import typer
    from rich.console import Console

    from burstlab.cli.status import guarded

    buf = io.StringIO()
    err = Console(file=buf, width=40)  # narrower than the message: it must not wrap
    with pytest.raises(typer.Exit) as exit_:
        with guarded("sweep", err, interrupted="finished runs are kept in some/long/directory/"):
            raise KeyboardInterrupt
    assert exit_.value.exit_code == status.INTERRUPTED
    assert buf.getvalue() == "burstlab sweep: interrupted; finished runs are kept in some/long/directory/\n"
    with pytest.raises(BrokenPipeError):
        with guarded("query", err):
            raise BrokenPipeError
