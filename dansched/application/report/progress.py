"""Progress for long work: what runs now and for how long.

Library calls that take a while (:func:`dansched.application.solution.solve`, :func:`dansched.application.audit.bound`,
:func:`dansched.application.audit.audit_folder`) accept ``progress(message)``, called with the name of each
step as it starts (where the number of steps is known, the message says ``k/n``).
:func:`progress_reporter` turns those calls into something a user sees on stderr:

- on a terminal, one live line: a spinner, the step, the time spent in it and in all,
  cut to the terminal's width (it never wraps);
- otherwise (a pipe, a log file, CI), one plain line every ``heartbeat_seconds``,
  ``dansched: 0:15 <step> (0:04 in this step)`` (0:15 in all), so a long run is never
  silent and a short one prints nothing;
- with ``quiet``, nothing.

A step too long for ``$COLUMNS`` (80) is cut in its middle (:func:`fit_step`): its first
part (``Allowance 2 of 5``, ``Rival memory-windows``) and its count (``120/400 moves``)
stay, since they say how far the run has got.

>>> clock(5.04), clock(75), clock(3725)
('0:05', '1:15', '1:02:05')
"""

from __future__ import annotations

import re
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

from ...params import ProgressParams
from .text import fit, printable, width

__all__ = ["progress_reporter", "Reporter", "clock", "fit_step"]


def clock(seconds: float) -> str:
    """``M:SS`` (``H:MM:SS`` from an hour on), whole seconds."""
    s = int(seconds)
    h, rest = divmod(s, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


# a count at the end of a step's message (``: 120/400 moves``): a new count is the same step
_COUNT = re.compile(r"\d[\d,]*/[\d,]+ [a-z ]+$")


def fit_step(step: str, columns: int) -> str:
    """``step`` in ``columns``: cut in the middle, keeping its first part (up to the first
    ``": "``) and its last when that is a count (``120/400 moves``); ``...`` where it is cut.

    >>> fit_step("Allowance 2 of 5: Makespan search, start 2 of 2: 120/400 moves", 44)
    'Allowance 2 of 5: Makespan...: 120/400 moves'
    >>> fit_step("Stage 3 on candidate 2/4: time-driven timed(w=16,cw=8)", 34)
    'Stage 3 on candidate 2/4: time-...'
    >>> fit_step("Allowance 12 of 22: Makespan search, start 1 of 2: 120/400 moves", 38)
    'Allowance 12 of 22: ...: 120/400 moves'
    """
    if len(step) <= columns:
        return step
    parts = step.split(": ")
    count = parts[-1] if len(parts) > 1 and _COUNT.fullmatch(parts[-1]) else ""
    head = parts[0] + ": " if len(parts) > 2 or (len(parts) == 2 and not count) else ""
    tail = ": " + count if count else ""
    middle = step[len(head) : len(step) - len(tail)]
    room = columns - len(head) - len(tail)
    if room >= 8:
        return head + fit(middle, room) + tail
    if room >= 3:  # no room for any of the middle: the first part and the count alone
        return head + "..." + tail
    return fit(step, columns)


def same_step(a: str, b: str) -> bool:
    """Whether message ``b`` continues step ``a``: they differ only in the count at their end.

    >>> same_step("Makespan search, start 2 of 2: 10/400 moves", "Makespan search, start 2 of 2: 20/400 moves")
    True
    >>> same_step("Makespan search, start 1 of 2: 400/400 moves", "Makespan search, start 2 of 2: 0/400 moves")
    False
    """
    return _COUNT.sub("", a) == _COUNT.sub("", b)


class Reporter:
    """The ``progress(message)`` callable: remembers the current step and when it and
    the whole run started (:attr:`elapsed`, :meth:`line`). A message that only updates
    the count at the end of the current step's (:func:`same_step`) keeps its timer."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self._step: tuple[str, float] = ("starting", self.started)

    def __call__(self, message: str) -> None:
        text, since = printable(message), self._step[1]
        self._step = (text, since if same_step(self._step[0], text) else time.monotonic())

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def line(self, columns: int | None = None) -> str:
        """``<step> (M:SS in this step, M:SS in all)``, the step cut short to fit ``columns``."""
        step, since = self._step
        now = time.monotonic()
        tail = f" ({clock(now - since)} in this step, {clock(now - self.started)} in all)"
        return step + tail if columns is None else fit_step(step, max(columns - len(tail), 12)) + tail

    def heartbeat(self, columns: int | None = None) -> str:
        """``dansched: M:SS <step> (M:SS in this step)``: the time in all, the step and
        the time in it, in ``columns`` (the step cut in its middle when it would not fit,
        :func:`fit_step`; default: :func:`~dansched.application.report.text.width`)."""
        step, since = self._step
        now = time.monotonic()
        head = f"dansched: {clock(now - self.started)} "
        tail = f" ({clock(now - since)} in this step)"
        room = (columns or width()) - len(head) - len(tail)
        return head + fit_step(step, max(room, 12)) + tail


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
        console = Console(file=out, force_terminal=True)

        def render() -> Spinner:  # one line: cut to the terminal's width (the spinner takes 2 columns)
            spinner.update(text=Text(fit(reporter.line(console.width - 3), console.width - 3), no_wrap=True))
            return spinner

        live = Live(
            console=console,
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
