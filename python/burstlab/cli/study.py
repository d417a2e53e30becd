"""``burstlab study``: the catalogue of seed studies, and one study run and checked."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from burstlab.cli import status


def command(
    name: Annotated[str | None, typer.Argument(metavar="[NAME]", show_default=False,
                                               help="The study to run: esnet, htc24, grnet or dc.")] = None,
    list_: Annotated[bool, typer.Option("--list", help="List every study with its seed, runs and time.")] = False,
    out: Annotated[
        Path | None,
        typer.Option("--out", metavar="DIR", show_default=False,
                     help="Study directory, one sweep per part (reruns resume) [default: burstlab-NAME]."),
    ] = None,
    jobs: Annotated[
        int | None, typer.Option("--jobs", "-j", metavar="N", help="Local worker processes [default: CPU count]; dc: its web-search runs'.")
    ] = None,
    json_: Annotated[bool, typer.Option("--json", help="Print the findings (or the list) as one JSON object.")] = False,
) -> None:
    """Run one of the catalogue's seed studies and check its findings, or list them.

    Each study reproduces a founding document's experiments from a few catalogue scenarios
    (scenarios/esnet, scenarios/htc24, scenarios/grnet, scenarios/dc) and prints a findings
    table: the seed's figure beside ours, the error, pass or fail, and for a miss its cause.

        burstlab study               # the catalogue: study, seed, runs, CPU time, command
        burstlab study grnet         # into ./burstlab-grnet/
        burstlab study esnet --out /tmp/esnet -j 2
        burstlab study dc -j 2       # parts one by one, web search in 2 workers

    Writes DIR/findings.md and DIR/findings.json; each part is a sweep directory that
    `burstlab report DIR/PART` and `burstlab query` read (dc: DIR/dc-study.json, which
    `burstlab report DIR` reads). Interrupted (Ctrl-C)? Run it again: finished runs (dc:
    finished parts) are kept. Exit status: 0 ok, 1 some runs failed, 2 bad input, 130 interrupted.
    """
    err = Console(stderr=True, highlight=False)
    if list_ or name is None:
        raise typer.Exit(_list(json_, err))
    if name == "dc":
        raise typer.Exit(_run_dc(out or Path("burstlab-dc"), jobs, json_, err))
    raise typer.Exit(_run(name, out or Path(f"burstlab-{name}"), jobs, json_, err))


def _list(as_json: bool, err: Console) -> int:
    from burstlab.report import studies

    with status.guarded("study", err):
        entries = studies.catalogue()
    if as_json:
        sys.stdout.write(json.dumps([e.__dict__ for e in entries]) + "\n")
        return status.SUCCESS
    rows = [("study", "seed", "runs", "CPU time", "command")]
    rows += [(e.name, e.seed, f"{e.runs}" + (f" (+{e.skipped_runs} need a key this burstlab lacks)" if e.skipped_runs
                                              else ""),
              (f"~{e.cpu_s:.0f} s (estimate)" if e.cpu_estimated else f"{e.cpu_s:.0f} s") if e.cpu_s
              else "not measured", e.command) for e in entries]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        sys.stdout.write("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() + "\n")
    sys.stdout.write("CPU time: measured on a 2-core machine; wall time is at least half of it on two cores "
                     "(dc runs its parts one after another; web search uses one worker per CPU, or -j N).\n")
    return status.SUCCESS


def _run(name: str, out: Path, jobs: int | None, as_json: bool, err: Console) -> int:
    from burstlab.cli.sweep import _Reporter
    from burstlab.report import studies

    started = time.monotonic()
    reporter = _Reporter(err, progress=not as_json and err.is_terminal, log=not as_json and not err.is_terminal)
    with status.guarded("study", err, interrupted=f"finished runs are kept in {out}/, run it again to complete them"):
        study = studies.get(name)
        with reporter:
            result = studies.run(study, out, jobs=jobs, reporter=reporter)
    if as_json:
        sys.stdout.write(json.dumps(result.to_json()) + "\n")
    else:
        sys.stdout.write(result.to_markdown())
        err.print(f"study {name}: {study.runs} runs ({result.failed_runs} failed or unfinished) in "
                  f"{time.monotonic() - started:.0f} s; {out}/findings.md", markup=False)
    return status.SUCCESS if result.failed_runs == 0 else 1


def _run_dc(out: Path, jobs: int | None, as_json: bool, err: Console) -> int:
    """The data-centre study (burstlab.report.dc): its parts run one by one into
    out/dc-study.json, web search's runs in ``jobs`` worker processes; a part already there is
    kept, so a rerun resumes."""
    from burstlab.report import dc
    from burstlab.report.dc.study import PARTS, STUDY_FILE, load_study, run_study

    started = time.monotonic()
    with status.guarded("study", err, interrupted=f"finished parts are kept in {out}/{STUDY_FILE}, run it "
                                                  "again to complete the rest"):
        done = load_study(out) if (out / STUDY_FILE).is_file() else {}
        todo = [p for p in [*PARTS, "websearch"] if p not in done]
        if todo:
            run_study(out, parts=todo, jobs=jobs,
                      progress=lambda line: as_json or err.print(f"dc {line}", markup=False))
        md, js = dc.to_markdown(out), dc.to_json(out)
    for name, text in (("findings.md", md), ("findings.json", js)):
        tmp = out / f".{name}.partial"
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(out / name)
    sys.stdout.write(js if as_json else md)
    if not as_json:
        err.print(f"study dc: {len(todo)} parts run in {time.monotonic() - started:.0f} s; {out}/findings.md",
                  markup=False)
    return status.SUCCESS
