"""Progress for long work: what runs now and for how long.

Library calls that take a while (:func:`dansched.solution.solve`, :func:`dansched.audit.bound`,
:func:`dansched.audit.audit_folder`) accept ``progress(message)``, called with the name of each
step as it starts (where the number of steps is known, the message says ``k/n``).
:func:`progress_reporter` turns those calls into something a user sees on stderr:

- on a terminal, one live line: a spinner, the step, the time spent in it and in all;
- otherwise (a pipe, a log file, CI), one plain line every ``heartbeat_seconds``,
  ``dansched: 0:15 elapsed; now: <step> (0:04 in this step)``, so a long run is never
  silent and a short one prints nothing;
- with ``quiet``, nothing.

>>> clock(5.04), clock(75), clock(3725)
('0:05', '1:15', '1:02:05')
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

from ..params import ProgressParams
from .text import printable

__all__ = ["progress_reporter", "Reporter", "clock"]


def clock(seconds: float) -> str:
    """``M:SS`` (``H:MM:SS`` from an hour on), whole seconds."""
    s = int(seconds)
    h, rest = divmod(s, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class Reporter:
    """The ``progress(message)`` callable: remembers the current step and when it and
    the whole run started (:attr:`elapsed`, :meth:`line`)."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self._step: tuple[str, float] = ("starting", self.started)

    def __call__(self, message: str) -> None:
        self._step = (printable(message), time.monotonic())

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def line(self) -> str:
        """``<step> (M:SS in this step, M:SS in all)``."""
        step, since = self._step
        now = time.monotonic()
        return f"{step} ({clock(now - since)} in this step, {clock(now - self.started)} in all)"

    def heartbeat(self) -> str:
        step, since = self._step
        now = time.monotonic()
        return f"dansched: {clock(now - self.started)} elapsed; now: {step} ({clock(now - since)} in this step)"


@contextmanager
def progress_reporter(
    quiet: bool = False,
    params: ProgressParams = ProgressParams(),
    stream: TextIO | None = None,
    terminal: bool | None = None,
) -> Iterator[Reporter]:
    """Yields a :class:`Reporter` to pass as ``progress``; shows it on ``stream`` (stderr)
    as a live line when that is a terminal (``terminal`` overrides the test), else as a
    heartbeat line every ``params.heartbeat_seconds``; shows nothing when ``quiet``."""
    reporter = Reporter()
    out = stream if stream is not None else sys.stderr
    if quiet:
        yield reporter
        return
    if terminal if terminal is not None else out.isatty():
        from rich.console import Console
        from rich.live import Live
        from rich.spinner import Spinner
        from rich.text import Text

        spinner = Spinner("dots")

        def render() -> Spinner:
            spinner.update(text=Text(reporter.line()))
            return spinner

        live = Live(
            console=Console(file=out, force_terminal=True),
            get_renderable=render,
            refresh_per_second=params.refresh_per_second,
            transient=True,
        )
        with live:
            yield reporter
        return
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(params.heartbeat_seconds):
            try:
                out.write(reporter.heartbeat() + "\n")
                out.flush()
            except (OSError, ValueError):  # the stream went away (a closed pipe): stay quiet
                return

    thread = threading.Thread(target=beat, name="dansched-heartbeat", daemon=True)
    thread.start()
    try:
        yield reporter
    finally:
        stop.set()
        thread.join()
