"""Lines on stderr and stdout from input-derived text (escaped), and the warnings pending
until a command ends (printed then, or folded into its one error line)."""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

import typer

from ..application.report.text import printable
from ..errors import InputError

if TYPE_CHECKING:
    from ..application.report.progress import Reporter


pending_warnings: list[str] = []  # printed when the command ends, or folded into its error line


def echo(line: str, err: bool = False) -> None:
    """One line from input-derived text, escaped (:func:`printable`); on stdout wrapped
    between words at ``$COLUMNS`` (80 on a pipe; :func:`dansched.application.report.text.wrapped`)."""
    if err:
        typer.echo(printable(line), err=True)
        return
    from ..application.report.text import wrapped

    for part in wrapped(printable(line)):
        typer.echo(part)


def with_warnings(line: str) -> str:
    """``line`` with the pending warnings folded in (so an error stays one line)."""
    if not pending_warnings:
        return line
    folded = "; ".join(pending_warnings)
    pending_warnings.clear()
    return f"{line} (warning: {folded})"


def flush_warnings() -> None:
    for w in pending_warnings:
        echo(f"dansched: warning: {w}", err=True)
    pending_warnings.clear()


def error_line(line: str) -> None:
    typer.echo(printable(with_warnings(line)), err=True)


def progress(quiet: bool) -> AbstractContextManager[Reporter]:
    """The progress reporter of a long command (live line on a terminal, else a heartbeat
    line every ``$DANSCHED_HEARTBEAT`` seconds, default 5; nothing with --quiet)."""
    from ..application.report.progress import progress_reporter
    from ..params import ProgressParams

    value = os.environ.get(HEARTBEAT_ENV)
    try:
        params = ProgressParams(heartbeat_seconds=float(value)) if value else ProgressParams()
    except ValueError:
        raise InputError(f"{HEARTBEAT_ENV} must be a positive number of seconds, got {value!r}") from None
    return progress_reporter(quiet, params)


def echo_latency(makespan: int | None, freq_ghz: float) -> None:
    """The estimated latency line: a result, on stdout."""
    if makespan is not None:
        from ..application.report.stats import estimated_latency_line

        typer.echo(estimated_latency_line(makespan, freq_ghz))


def watch_work(say: Reporter, nodes: int, effort: str) -> Callable[[str], None]:
    """``say``, checking at each step the deterministic work done so far
    (:func:`dansched.simulate.work.slow_note`): once past the rule, one warning line on
    stderr (docs/guide.md, *Slow runs*), at most once a run."""
    from ..simulate import work

    start = work.units()
    warned: list[bool] = []

    def watched(message: str) -> None:
        say(message)
        note = None if warned else work.slow_note(work.units() - start, nodes, effort)
        if note is not None:
            warned.append(True)
            echo(f"dansched: warning: {note} (docs/guide.md)", err=True)

    return watched


HEARTBEAT_ENV = "DANSCHED_HEARTBEAT"  # seconds between progress lines when stderr is not a terminal
