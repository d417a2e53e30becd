"""Ctrl-C that is never lost while a report is made.

Python raises ``KeyboardInterrupt`` wherever the main thread happens to be when SIGINT arrives.
Inside a weakref callback or a ``__del__`` (matplotlib runs many while it draws) the exception
is printed as "Exception ignored" with a traceback and dropped, and the report would go on to
the end. While :func:`catching` is active, SIGINT also leaves a mark, such a dropped interrupt
is not printed, and :func:`check` (called between the report's steps: each query, each panel
drawn, before the page is put in place) raises ``KeyboardInterrupt`` again when a mark is there.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

__all__ = ["catching", "check"]

_pending = threading.Event()


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    _pending.set()
    raise KeyboardInterrupt


def _quiet_dropped_interrupt(previous: Callable[[Any], object]) -> Callable[[Any], None]:
    def hook(unraisable: Any) -> None:  # a sys.UnraisableHookArgs
        if isinstance(unraisable.exc_value, KeyboardInterrupt) and _pending.is_set():
            return  # check() raises it again at the next step
        previous(unraisable)

    return hook


@contextmanager
def catching() -> Iterator[None]:
    """Route SIGINT through :func:`check`'s mark for the duration (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _pending.clear()
    previous_hook = sys.unraisablehook
    sys.unraisablehook = _quiet_dropped_interrupt(previous_hook)
    previous = signal.signal(signal.SIGINT, _on_sigint)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        sys.unraisablehook = previous_hook
        _pending.clear()


def check() -> None:
    """Raise ``KeyboardInterrupt`` if SIGINT arrived since :func:`catching` began."""
    if _pending.is_set():
        raise KeyboardInterrupt
