"""Exit codes of every ``burstlab`` verb (one place, like pip's ``status_codes``), and how the
errors that escape a verb map to them."""

from __future__ import annotations

import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from rich.console import Console

#: The verb did what was asked.
SUCCESS = 0
#: A bug or an unexpected environment failure (disk full, ...); the message says "internal error".
INTERNAL_ERROR = 1
#: The user's input is wrong (scenario file, --set override, output directory); nothing written.
#: Also click's own code for usage errors, so every bad-input path exits alike.
BAD_INPUT = 2
#: Interrupted by Ctrl-C (128 + SIGINT), as shells report it.
INTERRUPTED = 130
#: The reader of stdout went away (`burstlab decode X | head`): the verb stops quietly with the
#: status a shell reports for a program ended by SIGPIPE (128 + 13), as `cat` or `git log` in
#: the same place, so `set -o pipefail` scripts see the same thing from burstlab as from them.
PIPE_CLOSED = 141


@contextmanager
def guarded(verb: str, err: Console, *, interrupted: str | None = None) -> Iterator[None]:
    """Map what escapes a verb's work to one message and its exit code (raised as ``typer.Exit``):
    a :class:`~burstlab.errors.BurstlabError` is bad input (2); Ctrl-C says ``interrupted``
    and what became of the work (130); a closed stdout passes on to the entry point, which
    stops quietly (141); anything else is an internal error (1) shown with its traceback."""
    from burstlab.errors import BurstlabError

    try:
        yield
    except KeyboardInterrupt:
        err.print(f"burstlab {verb}: interrupted" + (f"; {interrupted}" if interrupted else ""),
                  markup=False, soft_wrap=True)
        raise typer.Exit(INTERRUPTED) from None
    except BrokenPipeError:
        raise
    except BurstlabError as e:
        err.print(f"burstlab {verb}: {e}", markup=False, soft_wrap=True)
        raise typer.Exit(BAD_INPUT) from None
    except Exception:  # noqa: BLE001 - the CLI's last line of defence
        err.print(f"burstlab {verb}: internal error (please report it with the traceback below)")
        err.print(traceback.format_exc(), markup=False, soft_wrap=True)
        raise typer.Exit(INTERNAL_ERROR) from None
