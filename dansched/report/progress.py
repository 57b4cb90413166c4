"""Progress for long work: a rich status line on a terminal, silence when piped or --quiet."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["progress_reporter"]


@contextmanager
def progress_reporter(quiet: bool = False) -> Iterator[Callable[[str], None]]:
    """Yields ``say(message)``; shows it as a spinner on stderr when stderr is a terminal."""
    if quiet or not sys.stderr.isatty():
        yield lambda _msg: None
        return
    from rich.console import Console

    console = Console(stderr=True)
    with console.status("starting") as status:
        yield lambda msg: status.update(msg)
