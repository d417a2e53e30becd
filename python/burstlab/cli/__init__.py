"""The ``burstlab`` command. Verbs are listed once, in :data:`VERBS`; each lives in its own module
``burstlab.cli.<verb>`` exposing ``command`` (a function whose docstring is its help)."""

from __future__ import annotations

import importlib

import typer

#: verb -> module defining ``command``.
VERBS: dict[str, str] = {
    "run": "burstlab.cli.run",
    "sweep": "burstlab.cli.sweep",
    "query": "burstlab.cli.query",
    "report": "burstlab.cli.report",
    "demo": "burstlab.cli.demo",
    "validate": "burstlab.cli.validate",
    "decode": "burstlab.cli.decode",
    "detect": "burstlab.cli.detect",
}


def build_app() -> typer.Typer:
    app = typer.Typer(
        name="burstlab",
        help="Detect, explain and mitigate microbursts. Run `burstlab VERB --help` for details.",
        no_args_is_help=True,
        # Markdown: docstring paragraphs reflow to the terminal, indented examples stay verbatim.
        rich_markup_mode="markdown",
        add_completion=False,
        pretty_exceptions_enable=False,
        context_settings={"help_option_names": ["-h", "--help"]},
    )

    @app.callback()
    def _root(
        version: bool = typer.Option(
            False, "--version", is_eager=True, callback=_print_version, help="Print the version and exit."
        ),
    ) -> None:
        """Detect, explain and mitigate microbursts."""
        # Having a callback keeps `burstlab run ...` a sub-command while `run` is the only verb.

    for verb, module in VERBS.items():
        app.command(verb)(importlib.import_module(module).command)
    return app


def _print_version(value: bool) -> None:
    if value:
        from burstlab import __version__

        typer.echo(f"burstlab {__version__}")
        raise typer.Exit()


def main() -> None:
    """Entry point of the ``burstlab`` console script."""
    build_app()(prog_name="burstlab")
