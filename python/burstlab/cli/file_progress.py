"""A progress bar over the bytes of an input file, on stderr, only when a person is watching."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console

#: Inputs smaller than this finish before a bar would be worth drawing.
MIN_BYTES = 32 * 1024 * 1024


@contextmanager
def file_progress(err: Console, label: str, size: int) -> Iterator[Callable[[int, int], None] | None]:
    """Yield an ``on_progress(done, total)`` callback driving a bar with ETA, or ``None`` when
    stderr is not a terminal or the file is small."""
    if not err.is_terminal or size < MIN_BYTES:
        yield None
        return
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(TextColumn(label), BarColumn(), DownloadColumn(), TimeRemainingColumn(),
                  console=err, transient=True) as progress:
        task = progress.add_task(label, total=size)
        yield lambda done, total: progress.update(task, completed=done, total=total)
