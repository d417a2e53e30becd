"""The ``burstlab`` command. Verbs are listed once, in :data:`VERBS`; each lives in its own module
``burstlab.cli.<verb>`` exposing ``command`` (a function whose docstring is its help).

What every verb shares is settled here: help rendered from the docstrings (examples one per
line, flags without a type), ``burstlab help VERB``, ``-V``, and the way out when the reader of
stdout goes away (:data:`~burstlab.cli.status.PIPE_CLOSED`) or Ctrl-C comes before a verb runs.

A verb's module is imported only when that verb is called or listed (pip's ``commands_dict``),
and the verb modules import what their work needs inside it: ``burstlab --version`` and
``burstlab VERB --help`` load neither pyarrow, numpy, pandas, DuckDB nor matplotlib.
"""

from __future__ import annotations

import atexit
import difflib
import importlib
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from burstlab.cli import status
from burstlab.cli.help_text import code_width, summary, to_markdown

if TYPE_CHECKING:
    from typer import _click as click

#: verb -> module defining ``command``.
VERBS: dict[str, str] = {
    "run": "burstlab.cli.run",
    "graph": "burstlab.cli.graph",
    "sweep": "burstlab.cli.sweep",
    "query": "burstlab.cli.query",
    "report": "burstlab.cli.report",
    "demo": "burstlab.cli.demo",
    "study": "burstlab.cli.study",
    "validate": "burstlab.cli.validate",
    "decode": "burstlab.cli.decode",
    "detect": "burstlab.cli.detect",
    "collect": "burstlab.cli.collect",
    "replay": "burstlab.cli.replay",
    "explain": "burstlab.cli.explain",
    "tune": "burstlab.cli.tune",
}

#: What the root and every verb share: Markdown help (prose reflows to the terminal;
#: help_text.to_markdown fences the examples), and burstlab's own error reporting.
_APP_SETTINGS: dict[str, Any] = {"rich_markup_mode": "markdown", "pretty_exceptions_enable": False}



def build_app() -> typer.Typer:
    """The root of the command: its options and help; the verbs are added by :class:`_Group`
    when they are looked up."""
    app = typer.Typer(
        name="burstlab",
        cls=_Group,
        help="Detect, explain and mitigate microbursts. Run `burstlab help VERB` for details.",
        no_args_is_help=True,
        add_completion=False,
        context_settings={"help_option_names": ["-h", "--help"]},
        **_APP_SETTINGS,
    )

    @app.callback()
    def _root(
        version: bool = typer.Option(
            False, "--version", "-V", is_eager=True, callback=_print_version, help="Print the version and exit."
        ),
    ) -> None:
        """Detect, explain and mitigate microbursts."""
        # Having a callback keeps `burstlab run ...` a sub-command while `run` is the only verb.

    return app


def verb_command(verb: str, width: int) -> click.Command | None:
    """The command of ``verb`` (``None`` if there is none), its examples fitted to ``width``
    columns (:func:`~burstlab.cli.help_text.code_width`)."""
    if verb == "help":
        function = help_verb
    elif verb in VERBS:
        function = importlib.import_module(VERBS[verb]).command
    else:
        return None
    doc = function.__doc__ or ""
    app = typer.Typer(add_completion=False, **_APP_SETTINGS)
    app.command(verb, cls=_Command, help=to_markdown(doc, width), short_help=summary(doc))(function)
    return typer.main.get_command(app)


def help_verb(
    ctx: typer.Context,
    verb: Annotated[str | None, typer.Argument(metavar="VERB", show_default=False, help="A verb, e.g. run.")] = None,
) -> None:
    """Show the help of VERB, the same as `burstlab VERB --help`; without VERB, burstlab's own.

    Exit status: 0 shown, 2 no such verb.
    """
    root = ctx.find_root()
    if verb is None:
        root.command.make_context(root.info_name, ["--help"])  # prints the help and exits 0
        return
    command = root.command.get_command(root, verb)  # type: ignore[attr-defined]
    if command is None:
        known = [*VERBS, "help"]
        near = difflib.get_close_matches(verb, known, n=1)
        hint = f"did you mean {near[0]!r}? " if near else ""
        typer.echo(f"burstlab help: no verb {verb!r}; {hint}the verbs are {', '.join(known)}", err=True)
        raise typer.Exit(status.BAD_INPUT)
    command.make_context(verb, ["--help"], parent=root)


def _print_version(value: bool) -> None:
    if value:
        from burstlab import __version__

        typer.echo(f"burstlab {__version__}")
        raise typer.Exit()


def _help_width() -> int:
    """The width typer's help console will have (it reads TERMINAL_WIDTH, then the terminal)."""
    from rich.console import Console

    width = os.environ.get("TERMINAL_WIDTH")
    return Console(width=int(width) if width and width.isdigit() else None).width


class _FlagsWithoutType:
    """A flag takes no value, so its help shows none (typer would show ``<bool>``)."""

    def get_params(self, ctx: typer.Context) -> list:
        params = super().get_params(ctx)  # type: ignore[misc]
        for param in params:
            if getattr(param, "is_flag", False) and param.metavar is None:
                param.metavar = ""
        return params

    def get_help_option(self, ctx: typer.Context) -> click.Option | None:
        option = super().get_help_option(ctx)  # type: ignore[misc]
        # Not given, typer's help flag is None, not False, and typer converts a flag that is
        # not a bool with pydantic: importing it cost every invocation 0.1-0.4 s.
        if option is not None and option.default is None:
            option.default = False
        return option


class _Group(_FlagsWithoutType, typer.core.TyperGroup):
    """The verbs of :data:`VERBS` and ``help``, each built when first looked up."""

    def list_commands(self, ctx: typer.Context) -> list[str]:
        return [*VERBS, "help"]

    _width: int | None = None

    def get_command(self, ctx: typer.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands:
            if self._width is None:
                self._width = code_width(_help_width())
            command = verb_command(cmd_name, self._width)
            if command is None:
                return None
            self.commands[cmd_name] = command
        return self.commands[cmd_name]


class _Command(_FlagsWithoutType, typer.core.TyperCommand):
    pass


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the ``burstlab`` console script."""
    try:
        command = typer.main.get_command(build_app())
        try:
            command.main(args=list(argv) if argv is not None else None, prog_name="burstlab")
            code = status.SUCCESS
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (status.SUCCESS if e.code is None else status.INTERNAL_ERROR)
            # typer and rich each end a write to a closed pipe with exit 1; say what it was.
            if _caused_by_broken_pipe(e):
                code = status.PIPE_CLOSED
        sys.stdout.flush()
    except KeyboardInterrupt:
        # Before a verb runs (each verb reports its own interrupt).
        sys.stderr.write("burstlab: interrupted\n")
        code = status.INTERRUPTED
    except BrokenPipeError:
        code = status.PIPE_CLOSED
    if code == status.PIPE_CLOSED:
        # The interpreter flushes stdout once more at exit; let that go nowhere, quietly.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.__stdout__.fileno())
    if code == status.INTERRUPTED:
        _leave_now(code)
    sys.exit(code)


def _leave_now(code: int) -> NoReturn:
    """End the process soon after Ctrl-C. The verb has stopped its work, put or removed its
    files and said so. The exit handlers still run (multiprocessing's release the semaphores a
    sweep's pool made); what is skipped is the teardown of every module loaded (pyarrow,
    DuckDB, matplotlib, pandas where installed): up to a second on a busy two-core machine,
    while the user waits."""
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def _caused_by_broken_pipe(exc: BaseException) -> bool:
    """Whether ``exc`` was raised while handling a write to a pipe whose reader had gone."""
    seen = 0
    while exc.__context__ is not None and seen < 8:
        exc, seen = exc.__context__, seen + 1
        if isinstance(exc, BrokenPipeError):
            return True
    return False
