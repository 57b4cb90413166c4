"""SIGINT and SIGTERM: one policy for a whole run of the command line.

``dansched`` owns both signals from the first line of its entry point to the last
(:func:`dansched.cli.entry`; while ``dansched.cli`` itself is imported, by
:func:`install_early`). Third-party handlers stay off: CP-SAT's is switched off by
:func:`dansched.models.exact.solver.deterministic_solver` (``catch_sigint_signal``). The policy:

- before :func:`own` (the imports of the entry point's module), a signal ends the process
  at once with the interruption line: nothing has been written yet;
- from :func:`own` on, the first signal is acted on in the main thread, where its Python
  handler raises :class:`~dansched.errors.Interrupted` (a ``BaseException``: no
  ``except Exception`` swallows it), so every ``finally`` on the way out runs (temporary
  files, the folder lock and the folders a write created are removed; a pool's workers
  are stopped). Inside :func:`held` sections (a group's renames, a lock taken or let go)
  it is deferred to the section's end;
- the handler runs only between Python bytecodes, so a watcher thread (woken through
  :func:`signal.set_wakeup_fd`, which the C-level handler writes to even while the main
  thread is in native code) stops every CP-SAT search in progress with the solver's own
  stop call (:func:`stoppable`: ``CpSolver.stop_search``, repeated until the main thread
  has acted, so a search that starts meanwhile stops too). Nothing is ever run inside
  native code;
- an exception raised in a finalizer (``__del__``: the garbage collector runs them
  anywhere) is lost, printed as "Exception ignored": the policy raises it again where
  the main thread goes on (:func:`_unraisable`);
- outside a held section, if the main thread has not acted within :data:`GRACE_SECONDS`
  (it is in native code without a stop call, such as HiGHS), or has not ended the run
  :data:`GRACE_SECONDS` after acting, the watcher ends the process with the line: every
  write (a temporary made, a rename, a removal) is a held section, so none is cut;
- a second signal ends the process at once.

The line is ``dansched: interrupted (nothing written)``, or ``(kept: DIR)`` naming where
this run's completed writes are (:func:`note_written`), and the exit status is 130 for
SIGINT and 143 for SIGTERM (128 + the signal's number).

**Stopping early.** A solve's pipeline runs inside an :func:`anytime` section
(:func:`dansched.solve` opens it around :func:`dansched.pipeline.run_pipeline`). There the first SIGINT (Ctrl-C) is a request to
stop, not an interruption: the handler records it and returns, the watcher stops every
CP-SAT search in progress (:func:`stoppable`, again and again until the section ends: no
grace period ends the run), and the stages read :func:`stopping` at their step
boundaries, ending each loop as if its budget had run out, so the solve returns the best
valid plan it has, which the command line writes whole. The section's ``limit`` (``solve
--time-limit``) requests the same stop at its deadline, from a timer thread; a library
caller may request it from anywhere (:func:`request_stop`). What stopped it, in which
step and when is the section's :class:`Stop`. A second SIGINT is the interruption above
(nothing written unless the write was already under way: then its whole unit), a third
ends the process at once; SIGTERM is never a stop request.

Outside the command line (a library caller, a test) nothing is installed: :func:`held`
then defers SIGTERM and SIGINT by swapping their handlers for the section, as before, and
an :func:`anytime` section stops only at its deadline or on :func:`request_stop`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from .errors import Interrupted

__all__ = [
    "GRACE_SECONDS",
    "install_early",
    "own",
    "owned",
    "new_run",
    "held",
    "stoppable",
    "note_written",
    "received",
    "line",
    "claim_line",
    "exit_status",
    "Stop",
    "Anytime",
    "anytime",
    "stopping",
    "request_stop",
    "CTRL_C",
    "TIME_LIMIT",
    "STOPPING_LINE",
]

CTRL_C = "Ctrl-C"  # Stop.by: the first SIGINT of an anytime section
TIME_LIMIT = "time limit"  # Stop.by: the section's deadline (solve --time-limit)
# what the command line says at the first Ctrl-C of a solve's search
STOPPING_LINE = "dansched: stopping early: the best plan found so far will be written (Ctrl-C again: abort)"

SIGNALS = (signal.SIGTERM, signal.SIGINT)
GRACE_SECONDS = 1.0  # how long the main thread gets to act on a signal before the watcher ends the run
RESTOP_SECONDS = 0.05  # how often the watcher repeats the stop call of the searches in progress


class _Run:
    """The state of this run's signal policy (one per process)."""

    def __init__(self) -> None:
        self.owned = False
        self.first: int | None = None  # the first signal the main thread's handler saw
        self.acted = False  # the main thread raised Interrupted (or ended the run) for it
        self.depth = 0  # nesting of held sections (main thread)
        self.pending: int | None = None  # a signal deferred by a held section
        self.stops: dict[int, Callable[[], None]] = {}  # searches in progress: their stop calls
        self.written: list[Path] = []  # where completed writes of this run are
        self.printed = threading.Lock()  # taken by whoever prints the line (once)
        self.shown: Callable[[str], str] = str  # the command line's escaping of text from input
        self.recording = False  # note_written records (a run of the command line)
        self.raise_again = False  # the first signal's exception was swallowed: the handler raises it again
        self.own_trips = 0  # wakeup bytes of the handler run again on purpose (not signals)
        self.section: Anytime | None = None  # the anytime section in force (a solve's pipeline)
        self.ctrl_c_stop = False  # a SIGINT was taken as a stop request (by the handler or the watcher)
        self.handler_stopped = False  # the main thread's handler took its SIGINT as the stop request
        self.trip = False  # the watcher ran the handler again to interrupt after a stop request
        self.stop_lock = threading.Lock()
        self.born: float | None = None  # when the command line started (install_early, else own)


_run = _Run()


def exit_status(signum: int) -> int:
    """130 for SIGINT, 143 for SIGTERM."""
    return 128 + int(signum)


def line() -> str:
    """The one interruption line: ``dansched: interrupted (nothing written)`` or ``(kept: DIR)``."""
    kept = list(dict.fromkeys(str(p) for p in _run.written))
    return f"dansched: interrupted ({'kept: ' + ', '.join(kept) if kept else 'nothing written'})"


def note_written(path: str | Path) -> None:
    """Record that a write of this run of the command line completed at ``path`` (a
    folder, or a file): the interruption line names it as kept. Outside the command line
    nothing is recorded."""
    if _run.recording:
        _run.written.append(Path(path))


def received() -> int | None:
    """The signal that interrupted this run, when one did (None otherwise)."""
    return _run.first


def owned() -> bool:
    """Whether the command line's policy is in force in this process."""
    return _run.owned


def new_run() -> None:
    """Forget the writes and the line of an earlier run in this process (the command line
    run again in one process, by a test); the policy's own state stays."""
    _run.written = []
    _run.printed = threading.Lock()
    _run.recording = True
    _run.ctrl_c_stop = _run.handler_stopped = False


def _say_and_exit(signum: int) -> None:
    """Print the line (unless someone already did) and end the process now. Safe from a
    signal handler and from the watcher thread: no lock that the main thread may hold is
    waited for, and nothing is flushed."""
    if _run.printed.acquire(blocking=False):
        with contextlib.suppress(OSError):
            os.write(2, (_run.shown(line()) + "\n").encode("utf-8", "backslashreplace"))
    os._exit(exit_status(signum))


def claim_line() -> bool:
    """Take the right to print the interruption line, and end the watcher's wait (False:
    the line was printed already)."""
    _run.acted = True
    return _run.printed.acquire(blocking=False)


def install_early() -> None:
    """Before :func:`own`: a signal ends the process at once, with the line (the imports of
    the entry point's module; nothing is written yet). Main thread only."""
    _run.born = time.monotonic()
    for s in SIGNALS:
        signal.signal(s, lambda signum, _frame: _say_and_exit(signum))


def _handler(signum: int, _frame: object) -> None:
    """The main thread's handler once the run owns the signals (module docstring)."""
    if _run.raise_again:  # the first signal's exception was swallowed (see _unraisable): raise it again
        _run.raise_again = False
        _run.acted = True
        raise Interrupted(_run.first or signum)
    tripped, _run.trip = _run.trip, False
    if _run.first is not None:  # a signal after the interrupting one
        if tripped:  # the watcher's trip for a signal this handler acted on already
            return
        _say_and_exit(_run.first)
    if signum == signal.SIGINT and not tripped and not _run.handler_stopped and _takes_stop():
        _run.handler_stopped = True  # the first Ctrl-C of an anytime section: a stop request
        request_stop(CTRL_C)
        return
    _run.first = signum
    if _run.depth:
        _run.pending = signum
        return
    _run.acted = True
    raise Interrupted(signum)


def _unraisable(hook: Callable[[sys.UnraisableHookArgs], object]) -> Callable[[sys.UnraisableHookArgs], object]:
    """``sys.unraisablehook`` that keeps an :class:`~dansched.errors.Interrupted` from being
    lost: raised inside a finalizer (``__del__``, a weakref callback: the garbage
    collector ran there), Python prints it as "Exception ignored" and goes on. Then the
    handler is made to run again (the signal sent to the main thread once more, from
    another thread, so that it lands once the finalizer is left and wakes a blocking
    wait), to raise it where it is not swallowed; other unraisable exceptions go to
    ``hook``."""

    def again() -> None:
        time.sleep(RESTOP_SECONDS)
        _run.own_trips += 1  # the watcher will see its byte: not a second signal
        main = threading.main_thread().ident
        if main is not None:
            signal.pthread_kill(main, _run.first or signal.SIGINT)

    def unraisable(info: sys.UnraisableHookArgs) -> object:
        if not isinstance(info.exc_value, Interrupted):
            return hook(info)
        _run.raise_again = True
        threading.Thread(target=again, name="dansched-again", daemon=True).start()
        return None

    return unraisable


def _watch(fd: int) -> None:
    """The watcher thread: one byte per signal (the C-level handler writes it to the wakeup
    fd, whatever the main thread is doing)."""
    count = 0
    stopped = False  # this thread took a SIGINT as the anytime section's stop request
    while True:
        try:
            data = os.read(fd, 64)
        except InterruptedError:
            continue
        except OSError:
            return
        for signum in data:
            if _run.own_trips:  # the handler run again on purpose (_unraisable, _trip)
                _run.own_trips -= 1
                continue
            if signum == signal.SIGINT and not stopped and _takes_stop():
                stopped = True  # the section's stopper thread stops the searches from here on
                request_stop(CTRL_C)
                continue
            count += 1
            if count > 1:
                _say_and_exit(_run.first or signum)
            if stopped:  # the interruption after a stop request: the handler may have seen one signal for both
                _trip(signum)
            threading.Thread(target=_stop_searches, args=(signum,), name="dansched-stop", daemon=True).start()


def _takes_stop() -> bool:
    """Whether a SIGINT now is a stop request: an anytime section is in force, or a SIGINT
    was taken as one already (that same signal, seen by the other of handler and watcher)."""
    section = _run.section
    return (section is not None and section.active) or _run.ctrl_c_stop


def _trip(signum: int) -> None:
    """Run the main thread's handler once more, told to interrupt (two SIGINTs in a row may
    reach it as one, the stop request)."""
    _run.trip = True
    _run.own_trips += 1
    main = threading.main_thread().ident
    if main is not None:
        signal.pthread_kill(main, signum)


def _stop_searches(signum: int) -> None:
    """Stop the searches in progress until the main thread acts on the signal. Outside a
    held section, end the run with the line if the main thread has not acted within
    :data:`GRACE_SECONDS` (it is in native code without a stop call), or has not ended the
    run :data:`GRACE_SECONDS` after that (its exception was lost)."""
    deadline = time.monotonic() + GRACE_SECONDS
    acted_by = None
    while True:
        if not _run.acted:
            for stop in list(_run.stops.values()):
                with contextlib.suppress(Exception):
                    stop()
        elif acted_by is None:
            acted_by = time.monotonic() + GRACE_SECONDS
        late = time.monotonic() > (deadline if acted_by is None else acted_by)
        if late and not _run.depth and _run.pending is None:
            _say_and_exit(_run.first or signum)
        time.sleep(RESTOP_SECONDS)


def own(shown: Callable[[str], str] = str) -> None:
    """Take SIGINT and SIGTERM for the rest of the process (the command line's entry point,
    main thread): the policy of the module docstring. ``shown`` escapes text from input
    (the folders of the line) for the terminal."""
    _run.shown = shown
    if _run.born is None:
        _run.born = time.monotonic()
    r, w = os.pipe()
    os.set_blocking(w, False)
    signal.set_wakeup_fd(w, warn_on_full_buffer=False)
    threading.Thread(target=_watch, args=(r,), name="dansched-signals", daemon=True).start()
    sys.unraisablehook = _unraisable(sys.unraisablehook)
    _run.owned = _run.recording = True
    for s in SIGNALS:
        signal.signal(s, _handler)


@contextlib.contextmanager
def held() -> Iterator[None]:
    """SIGTERM and SIGINT acted on only after the block (a group's renames, a lock taken
    or let go, a pool being stopped). Under the command line's policy a signal meanwhile
    is recorded and raised as :class:`~dansched.errors.Interrupted` when the outermost
    section ends (a second one still ends the process at once); elsewhere the handlers
    are swapped for one that records the signal (a signal already pending when the block
    starts lands there too), then restored and the recorded signal raised again."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signals reach the main thread only
        return
    if _run.owned:
        _run.depth += 1
        try:
            yield
        finally:
            _run.depth -= 1
            if not _run.depth and _run.pending is not None:
                signum, _run.pending = _run.pending, None
                _run.acted = True
                raise Interrupted(signum)
        return
    got: list[int] = []
    old = {s: signal.signal(s, lambda signum, _f: got.append(signum)) for s in SIGNALS}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        for signum in dict.fromkeys(got):
            signal.raise_signal(signum)


@contextlib.contextmanager
def stoppable(stop: Callable[[], None]) -> Iterator[None]:
    """A native search in progress (a CP-SAT solve) that ``stop`` ends early: the watcher
    calls it when a signal arrives (module docstring)."""
    key = id(stop)
    _run.stops[key] = stop
    try:
        yield
    finally:
        _run.stops.pop(key, None)


@dataclass(frozen=True)
class Stop:
    """An early stop of an :func:`anytime` section: ``by`` what (:data:`CTRL_C`,
    :data:`TIME_LIMIT`, or what :func:`request_stop` named), during which ``step`` (the
    last progress message before the request) and after how many ``seconds`` of it."""

    by: str
    step: str
    seconds: float

    def to_dict(self) -> dict[str, object]:
        return {"by": self.by, "step": self.step, "seconds": round(self.seconds, 3)}


class Anytime:
    """The state of an :func:`anytime` section: its deadline (None: none), the step in
    progress (:meth:`tracking` records it) and, once requested, its :class:`Stop`."""

    def __init__(self, limit: float | None, started: float | None = None) -> None:
        self.started = time.monotonic() if started is None else started
        self.deadline = None if limit is None else self.started + limit
        self.limit = limit
        self.step = ""
        self.stop: Stop | None = None
        self.active = True
        self.requested = threading.Event()
        self.lock = threading.Lock()

    def request(self, by: str) -> None:
        """Record the stop (the first request wins) and wake the stopper thread."""
        with self.lock:
            if self.stop is None:
                self.stop = Stop(by, self.step, time.monotonic() - self.started)
        self.requested.set()

    def stopping(self) -> bool:
        """Whether the section was asked to stop (its deadline passed counts at once, before
        the timer thread wakes)."""
        if self.stop is None and self.deadline is not None and time.monotonic() >= self.deadline:
            self.request(TIME_LIMIT)
        return self.stop is not None

    def tracking(self, say: Callable[[str], None]) -> Callable[[str], None]:
        """``say``, recording each message as the step in progress (where a stop cut)."""

        def tracked(message: str) -> None:
            self.step = message
            say(message)

        return tracked


def _stopper(section: Anytime) -> None:
    """The section's thread: at its deadline, or when a stop is requested, record the stop
    and stop every CP-SAT search in progress, again every :data:`RESTOP_SECONDS` (a search
    that starts meanwhile stops too) until the section ends."""
    while section.active:
        left = None if section.deadline is None else max(0.0, section.deadline - time.monotonic())
        if section.requested.wait(timeout=left) or not section.active:
            break
        if section.deadline is not None and time.monotonic() >= section.deadline:
            section.request(TIME_LIMIT)
            break
    while section.active:
        for stop in list(_run.stops.values()):
            with contextlib.suppress(Exception):
                stop()
        time.sleep(RESTOP_SECONDS)


@contextlib.contextmanager
def anytime(limit: float | None = None) -> Iterator[Anytime]:
    """A section whose work may be asked to stop early with its best result (module
    docstring): at ``limit`` seconds of wall clock (None: no deadline; counted from the
    command line's start under its policy, so that ``solve --time-limit S`` bounds the
    command, else from the section's), on the first Ctrl-C
    under the command line's policy, or on :func:`request_stop`. Yields its
    :class:`Anytime` (``.stop``: what stopped it, None when nothing did). Sections do not
    nest: an inner one is the outer one."""
    if _run.section is not None and _run.section.active:
        yield _run.section
        return
    section = Anytime(limit, _run.born if _run.owned else None)  # the command's clock, or the section's
    thread = threading.Thread(target=_stopper, args=(section,), name="dansched-anytime", daemon=True)
    _run.section = section
    thread.start()
    try:
        yield section
    finally:
        section.active = False
        section.requested.set()  # the thread ends
        thread.join(timeout=1.0)
        if _run.section is section:
            _run.section = None


def stopping() -> bool:
    """Whether the :func:`anytime` section in force was asked to stop: the check every long
    loop of a solve reads at its step boundaries (False outside a section: the deterministic
    budgets alone decide)."""
    section = _run.section
    return section is not None and section.active and section.stopping()


def request_stop(by: str = "request") -> None:
    """Ask the :func:`anytime` section in force to stop early with its best result (from
    any thread: a progress callback, a user interface); nothing happens outside one. ``by``
    names the cause in the :class:`Stop`."""
    section = _run.section
    if by == CTRL_C:
        with _run.stop_lock:  # the handler and the watcher may both take the same signal as the request
            first, _run.ctrl_c_stop = not _run.ctrl_c_stop, True
        if first and _run.owned:  # said at once, from whichever thread saw the signal first
            with contextlib.suppress(OSError):
                os.write(2, (STOPPING_LINE + "\n").encode())
    if section is not None and section.active:
        section.request(by)
