"""Exit statuses: a usage error's one line (with the options close to a mistyped one),
what counts as an interruption, and ending the process with its status whatever signal
arrives meanwhile (docs/cli.md, exit statuses)."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import typer

from .. import interrupt
from ..errors import (
    HardwareError,
    InputError,
    InstanceError,
    Interrupted,
    OutOfMemory,
    PlanFormatError,
    PlanInvalidError,
    TraceError,
    ViewError,
    WriteFailed,
)
from .lines import echo, error_line, flush_warnings

if TYPE_CHECKING:
    from ..interrupt import Stop


def raise_interrupted(signum: int, _frame: Any) -> None:
    """SIGINT or SIGTERM while :func:`dansched.cli.main` runs without :func:`dansched.cli.entry` (in a test's
    process): it unwinds like an exception (temporary files are removed on the way out)
    and, unlike a ``KeyboardInterrupt``, is not turned into a bare status by typer."""
    raise Interrupted(signum)


# typer checks option values with pydantic, whose message for a failed check starts with this
VALIDATION_PREFIX = "Value error, "


# how alike a mistyped option and a real one must be (difflib's ratio, the dashes aside) to suggest it
CLOSE_OPTION = 0.7


def option_suggestions(typed: str, options: Iterable[str]) -> list[str]:
    """The ``options`` close to ``typed`` (:data:`CLOSE_OPTION`), the closest first (ties
    by name): ``--efort`` -> ``["--effort"]``, not ``--out``.

    >>> option_suggestions("--exact-windw", ["--out", "--exact-window-mode", "--exact-window"])
    ['--exact-window', '--exact-window-mode']
    """
    from difflib import SequenceMatcher

    bare = typed.lstrip("-")
    ranked = sorted((-SequenceMatcher(None, bare, o.lstrip("-")).ratio(), o) for o in set(options))
    return [o for score, o in ranked if -score >= CLOSE_OPTION]


def _command_options(exc: Exception) -> list[str]:
    """The long options of the command a usage error is about (its context's), else the
    ones the parser found close."""
    ctx = getattr(exc, "ctx", None)
    command = getattr(ctx, "command", None)
    params = getattr(command, "params", None) or []
    found = [o for p in params for o in getattr(p, "opts", []) + getattr(p, "secondary_opts", []) if o.startswith("--")]
    return found or list(getattr(exc, "possibilities", None) or [])


def usage_message(exc: Exception) -> str:
    """The one line of a click / typer usage error, without the validation library's
    prefix (``Invalid value for '--effort': 'quick' is not one of ...``); an unknown option
    with the options close to it, the closest first (:func:`option_suggestions`)."""
    typed = getattr(exc, "option_name", None)
    if type(exc).__name__ == "NoSuchOption" and isinstance(typed, str):  # click's, or typer's copy of click
        close = option_suggestions(typed, _command_options(exc) + ["--help"])
        hint = f" (did you mean {' or '.join(close)}?)" if close else ""
        return f"{getattr(exc, 'message', f'No such option: {typed}')}{hint}"
    return str(exc.format_message()).replace(f": {VALIDATION_PREFIX}", ": ", 1)  # type: ignore[attr-defined]


def interruption(exc: BaseException) -> int | None:
    """The signal that ended the run, when ``exc`` is its consequence: an
    :class:`~dansched.errors.Interrupted`, a ``KeyboardInterrupt`` (a caller without the
    policy), or anything at all once a signal arrived (a library that turned the
    interruption into its own error: OR-Tools' import fails with ``initialization
    failed``). None: not an interruption."""

    if isinstance(exc, Interrupted):
        return exc.signum
    if isinstance(exc, (KeyboardInterrupt, typer.Abort)):
        return signal.SIGINT
    return interrupt.received()


def exit_now(code: int) -> None:
    """End the process with ``code`` at once. From here a signal only sets the status:
    SIGTERM and SIGINT are recorded and blocked, the atexit handlers run and the output
    is flushed; a signal that arrived meanwhile turns the status into 143 (SIGTERM) or
    130 (SIGINT), with the interruption line unless the run printed it already. Skipping
    the interpreter's teardown (half a second with the solvers loaded) is what makes the
    status reliable: during that teardown Python has already put the default handlers
    back, and a SIGTERM then killed the process by signal instead of ending it with 143."""
    import atexit

    late: list[int] = []
    held = {signal.SIGTERM, signal.SIGINT}
    for s in held:
        signal.signal(s, lambda signum, _frame: late.append(signum))
    signal.pthread_sigmask(signal.SIG_BLOCK, held)
    atexit._run_exitfuncs()
    pending = signal.sigpending()
    late += [s for s in (signal.SIGTERM, signal.SIGINT) if s in pending]
    if late and interrupt.received() is None:
        code = interrupt.exit_status(late[0])
        if interrupt.claim_line():
            echo(interrupt.line(), err=True)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


class Failure(Exception):
    """No valid plan, or an invalid one: one line on stderr (``dansched: <message>``), exit 1
    (as is a solve that runs out of host memory, :class:`~dansched.errors.OutOfMemory`)."""


BAD_INPUT = (InstanceError, HardwareError, PlanFormatError, InputError, TraceError, ViewError)


def end_stopped(stop: Stop | None) -> None:
    """A solve that Ctrl-C stopped early ends with the interruption line and status 130, its
    plan written (the line names it as kept); a time limit's stop ends as a solve does."""
    if stop is not None and stop.by == interrupt.CTRL_C:
        if interrupt.claim_line():
            echo(interrupt.line(), err=True)
        raise typer.Exit(interrupt.exit_status(signal.SIGINT))


def run_app(app: typer.Typer) -> None:
    """Run ``app`` (the command line's), its errors mapped to exit statuses (raises SystemExit)."""
    try:
        rc = app(standalone_mode=False)
    except WriteFailed as exc:  # the write failed after the checks: an I/O failure, not bad input
        error_line(f"dansched: {exc}")
        sys.exit(1)
    except BAD_INPUT as exc:
        error_line(f"dansched: error: {exc}")
        sys.exit(2)
    except (Failure, PlanInvalidError, OutOfMemory) as exc:
        error_line(f"dansched: {exc}")
        sys.exit(1)
    except MemoryError:  # outside a solve (reading a huge file): no graph to size yet
        error_line("dansched: out of memory")
        sys.exit(1)
    except typer.Exit as exc:
        flush_warnings()
        sys.exit(exc.exit_code)
    except OSError as exc:  # an output that cannot be written, outside the atomic writers
        where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        error_line(f"dansched: error: {where}{exc.strerror or exc}")
        sys.exit(2)
    except Exception as exc:
        if hasattr(exc, "format_message"):  # click / typer usage errors
            error_line(f"dansched: error: {usage_message(exc)}")
            sys.exit(2)
        raise
    flush_warnings()
    sys.exit(rc if isinstance(rc, int) else 0)
