"""Where independent jobs run: in this process, a local process pool, or a Dask cluster.

One executor layer for every command that runs many independent jobs
(``dansched bench``, ``dansched sweep``). :func:`run_tasks` takes a picklable
function and one argument tuple per job, and yields ``(index, result, error)``
as each job finishes (completion order): ``error`` is ``None`` when the job
returned, else the exception that kept it from returning *in the executor*
(a worker process that died, a cell Dask gave up on after its retries). Job
functions are expected to report their own failures in their result; an
``error`` here is an infrastructure failure.

Executors (:class:`ExecutorOptions`):

- ``jobs == 1`` (no Dask option): the jobs run here, one after another;
- ``jobs > 1`` (default: the core count): a :class:`concurrent.futures.ProcessPoolExecutor`
  whose workers (:func:`_worker_init`) ignore SIGINT, so Ctrl-C reaches only this
  process, which then cancels what is queued and ends the workers (SIGTERM, then
  SIGKILL for one that does not stop within a second); they take SIGTERM's default
  action rather than the command line's handler, and die with this process even when
  it is killed outright (``PR_SET_PDEATHSIG`` on Linux, a thread watching the parent
  elsewhere);
- ``scheduler="tcp://host:port"``: the jobs are submitted to a running Dask
  scheduler (the workers must import ``dansched`` and see the same input paths). The
  address is checked before any connection (:func:`scheduler_address`), and every wait
  on the network is bounded: at most ``connect_timeout`` seconds to connect and
  ``handshake_timeout`` more for the scheduler's answer, then one line;
- ``dask_workers=N``: a :class:`distributed.LocalCluster` of ``N`` single-threaded
  worker processes on 127.0.0.1 is started for the run and closed after it.

Dask reschedules the job of a worker that dies (up to its ``allowed-failures``),
so a lost worker costs time, not results. Dask is an optional extra
(``pip install -e '.[dist]'``); :class:`DaskMissingError` says so in one line.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib.util
import logging
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

from ..checks import DASK_WORKERS, JOBS, NETWORK_TIMEOUT
from ..errors import DaskMissingError, ExecutorError
from ..interrupt import held

__all__ = [
    "ExecutorOptions",
    "ExecutorError",
    "DaskMissingError",
    "DASK_INSTALL_HINT",
    "LOCAL_DASK_CONFIG",
    "dask_available",
    "default_jobs",
    "run_tasks",
    "scheduler_address",
    "SCHEDULER_SCHEMES",
    "first_line",
]

DASK_INSTALL_HINT = "pip install -e '.[dist]'"

Outcome = tuple[int, Any, BaseException | None]

# Dask settings applied while a --dask-workers cluster runs (its nannies hand them to the
# workers): no statistical profiler sampling the running job every 10 ms, and slower
# event-loop ticks and monitors. Each wakes a thread that must take the GIL from the job,
# which costs far more than its own work when the cores are oversubscribed.
LOCAL_DASK_CONFIG: tuple[tuple[str, Any], ...] = (
    ("distributed.worker.profile.enabled", False),
    ("distributed.admin.tick.interval", "1s"),
    ("distributed.admin.system-monitor.interval", "2s"),
    ("distributed.admin.system-monitor.gil.enabled", False),
    ("distributed.worker.memory.monitor-interval", "1s"),
)


# the protocols a Dask client can reach a scheduler in another process by (inproc:// is
# within one process only)
SCHEDULER_SCHEMES = ("tcp", "tls", "ws", "wss", "ucx")
_HOST = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)$")  # a name, an IPv4 or a bracketed IPv6


def scheduler_address(address: str) -> str:
    """``address`` as ``scheme://host:port`` (``host:port`` alone is ``tcp://``), or
    :class:`ExecutorError` (one line) when it is not a Dask scheduler address another
    process can reach: no host or port, a port outside 1..65535, or an unknown or
    in-process protocol. Nothing is connected.

    >>> scheduler_address("10.0.0.5:8786")
    'tcp://10.0.0.5:8786'
    >>> scheduler_address("tcp://127.0.0.1")
    Traceback (most recent call last):
    ...
    dansched.errors.ExecutorError: --scheduler 'tcp://127.0.0.1': no port; expected tcp://HOST:PORT such as tcp://127.0.0.1:8786
    """
    shown = f"--scheduler {address!r}"
    want = "expected tcp://HOST:PORT such as tcp://127.0.0.1:8786"
    scheme, sep, loc = address.strip().partition("://")
    if not sep:
        scheme, loc = "tcp", address.strip()
    scheme = scheme.lower()
    if scheme == "inproc":
        raise ExecutorError(f"{shown}: an inproc:// scheduler lives inside one process; {want}")
    if scheme not in SCHEDULER_SCHEMES:
        raise ExecutorError(f"{shown}: unknown protocol {scheme!r} (known: {', '.join(SCHEDULER_SCHEMES)}); {want}")
    host, colon, port = loc.rpartition(":")
    if not colon or (":" in host and not host.startswith("[")):
        raise ExecutorError(f"{shown}: no port; {want}")
    if not _HOST.match(host):
        raise ExecutorError(f"{shown}: {'no host' if not host else f'{host!r} is not a host name or address'}; {want}")
    if not port.isdigit() or not 1 <= int(port) <= 65535:
        raise ExecutorError(f"{shown}: the port must be a number from 1 to 65535, got {port!r}; {want}")
    return f"{scheme}://{host}:{int(port)}"


def dask_available() -> bool:
    """True when ``distributed`` (Dask's cluster scheduler) can be imported."""
    return importlib.util.find_spec("distributed") is not None


def default_jobs() -> int:
    """The local pool's default size: the number of cores (at least 1)."""
    return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class ExecutorOptions:
    """Which executor runs the jobs (see the module docstring).

    ``jobs``: local pool size (``None``: :func:`default_jobs`); ignored with Dask.
    ``scheduler``: address of a running Dask scheduler (checked by
    :func:`scheduler_address`); ``connect_timeout`` and ``handshake_timeout``: seconds to
    wait for its connection and for its answer. ``dask_workers``: size of a local Dask
    cluster started for the run. At most one of the two Dask options. Sizes and timeouts
    out of range (:mod:`dansched.checks`) raise :class:`~dansched.errors.ArgumentError`."""

    jobs: int | None = None
    scheduler: str | None = None
    dask_workers: int | None = None
    dask_config: tuple[tuple[str, Any], ...] | None = None  # --dask-workers cluster settings (None: LOCAL_DASK_CONFIG)
    connect_timeout: float = 10.0
    handshake_timeout: float = 10.0

    def __post_init__(self) -> None:
        JOBS.check(self.jobs, "--jobs", optional=True)
        DASK_WORKERS.check(self.dask_workers, "--dask-workers", optional=True)
        NETWORK_TIMEOUT.check(self.connect_timeout, "--connect-timeout")
        NETWORK_TIMEOUT.check(self.handshake_timeout, "--handshake-timeout")
        if self.scheduler is not None and self.dask_workers is not None:
            raise ExecutorError("give either --scheduler or --dask-workers, not both")
        if self.scheduler is not None:
            if not isinstance(self.scheduler, str) or not self.scheduler.strip():
                raise ExecutorError("--scheduler needs an address such as tcp://host:8786")
            object.__setattr__(self, "scheduler", scheduler_address(self.scheduler))

    @property
    def uses_dask(self) -> bool:
        return self.scheduler is not None or self.dask_workers is not None

    def check(self) -> None:
        """Raise :class:`DaskMissingError` when a Dask option is set and Dask is missing."""
        if self.uses_dask and not dask_available():
            raise DaskMissingError(f"--scheduler and --dask-workers need Dask: {DASK_INSTALL_HINT}")

    def describe(self) -> str:
        """One short phrase naming the executor, for messages and tables."""
        if self.scheduler is not None:
            return f"Dask scheduler {self.scheduler}"
        if self.dask_workers is not None:
            return f"local Dask cluster of {self.dask_workers} worker(s)"
        n = self.jobs or default_jobs()
        return "this process" if n == 1 else f"local pool of {n} processes"


def run_tasks(
    fn: Callable[..., Any],
    tasks: Sequence[tuple],
    opts: ExecutorOptions = ExecutorOptions(),
    keys: Sequence[str] | None = None,
) -> Generator[Outcome, None, None]:
    """Run ``fn(*tasks[i])`` for every ``i`` on the executor ``opts`` names; yield
    ``(i, result, None)`` or ``(i, None, error)`` as each finishes.

    ``keys`` (Dask only) names the jobs on the cluster; they must be unique. Closing
    the generator early (or an exception such as KeyboardInterrupt while it waits)
    cancels the jobs not yet finished and shuts the executor down."""
    opts.check()
    if not tasks:
        return
    if opts.uses_dask:
        yield from _run_dask(fn, tasks, opts, keys)
    elif (opts.jobs or default_jobs()) <= 1:
        for i, args in enumerate(tasks):
            yield i, fn(*args), None
    else:
        yield from _run_pool(fn, tasks, opts.jobs or default_jobs())


# ---- local process pool -------------------------------------------------------------------


PR_SET_PDEATHSIG = 1  # prctl(2): the signal the kernel sends a process when its parent dies
PARENT_WATCH_SECONDS = 1.0  # where prctl is missing: how often a worker checks its parent


def _die_with_parent() -> None:
    """End this process when its parent dies, however it dies (SIGKILL included). On Linux
    the kernel does it (``prctl(PR_SET_PDEATHSIG, SIGKILL)``: no thread, nothing to wake,
    works while a solver holds the GIL; it fires when the parent's thread that started the
    worker ends, and :func:`run_tasks` starts them on the thread that consumes it);
    elsewhere a daemon thread polls the parent id. The parent is whoever it is now (this
    process under ``fork``, the fork server under ``forkserver``, which exits with it)."""
    parent = os.getppid()
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0:
                if os.getppid() != parent:  # the parent died before the request took effect
                    os._exit(1)
                return

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_WATCH_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="dansched-parent-watch", daemon=True).start()


def _worker_init() -> None:
    """Pool worker initializer. Ctrl-C is the parent's to handle (SIGINT ignored); SIGTERM
    takes its default action, not the handler the command line installed in the parent
    (which raised SystemExit inside the worker's queue handling: noise, and a worker stuck
    on a lock its parent then waited for); and the worker dies with its parent."""
    signal.set_wakeup_fd(-1)  # a forked worker must not wake the parent's signal watcher (dansched.interrupt)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _die_with_parent()


STOP_SECONDS = 1.0  # how long a terminated worker gets before SIGKILL


def _terminate_pool(pool: ProcessPoolExecutor) -> None:
    """Stop a pool now: cancel queued jobs, end the worker processes (SIGTERM, then SIGKILL
    for any still alive after :data:`STOP_SECONDS`) and reap them, so that nothing waits
    on a worker afterwards. SIGTERM and SIGINT are held meanwhile
    (:func:`~dansched.interrupt.held`: another Ctrl-C does not interrupt the cleanup; it
    is acted on after, and under the command line's policy a second signal ends the
    process at once)."""
    with held():
        procs = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for p in procs:
            if p.is_alive():
                p.terminate()
        deadline = time.monotonic() + STOP_SECONDS
        for p in procs:
            p.join(timeout=max(0.0, deadline - time.monotonic()))
        for p in procs:
            if p.is_alive():
                p.kill()
            p.join(timeout=STOP_SECONDS)


def _run_pool(fn: Callable[..., Any], tasks: Sequence[tuple], jobs: int) -> Iterator[Outcome]:
    pool = ProcessPoolExecutor(max_workers=min(jobs, len(tasks)), initializer=_worker_init)
    finished_cleanly = False
    try:
        index: dict[Future, int] = {pool.submit(fn, *args): i for i, args in enumerate(tasks)}
        pending = set(index)
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for f in sorted(done, key=index.__getitem__):
                exc = f.exception()
                yield (index[f], None, exc) if exc is not None else (index[f], f.result(), None)
        finished_cleanly = True
    finally:
        if finished_cleanly:
            pool.shutdown(wait=True)
        else:
            _terminate_pool(pool)


# ---- Dask ---------------------------------------------------------------------------------


def _connect_client(opts: ExecutorOptions, stack: ExitStack):
    """A :class:`distributed.Client` on ``opts.scheduler``, or :class:`ExecutorError` (one
    line). Dask bounds the TCP connect (``connect_timeout``) but not the wait for the
    scheduler's handshake, and a peer that answers garbage makes it raise whatever the
    bytes decode to; so the client is made on a thread given ``connect_timeout +
    handshake_timeout`` seconds in all, with Dask's log quiet meanwhile. A thread that is
    still waiting then is left behind (a daemon: it ends with the process)."""
    from distributed import Client
    from distributed.comm.registry import get_backend

    address = str(opts.scheduler)
    scheme = address.partition("://")[0]
    try:
        get_backend(scheme).get_connector()
    except Exception as exc:  # e.g. ucx:// without its backend package
        raise ExecutorError(f"--scheduler {address}: this Dask cannot use {scheme}:// ({first_line(exc)})") from None
    got: list[Any] = []

    def connect() -> None:
        try:
            got.append(Client(address, timeout=f"{opts.connect_timeout}s", set_as_default=False))
        except BaseException as exc:  # reported by the caller, on its own thread
            got.append(exc)

    log = logging.getLogger("distributed")
    level = log.level
    log.setLevel(logging.CRITICAL)
    try:
        worker = threading.Thread(target=connect, name="dansched-dask-connect", daemon=True)
        worker.start()
        worker.join(opts.connect_timeout + opts.handshake_timeout)
    finally:
        log.setLevel(level)
    where = f"cannot reach the Dask scheduler at {address}"
    if not got:
        total = opts.connect_timeout + opts.handshake_timeout
        raise ExecutorError(
            f"{where}: no answer within {total:g} s (--connect-timeout {opts.connect_timeout:g} "
            f"+ --handshake-timeout {opts.handshake_timeout:g})"
        )
    failure = got[0]
    if isinstance(failure, BaseException):
        detail = f"{type(failure).__name__}: {first_line(failure)}"
        if isinstance(failure, (MemoryError, ValueError)):  # bytes that decode to nonsense sizes
            detail = f"it does not answer as a Dask scheduler ({detail})"
        raise ExecutorError(f"{where}: {detail}")
    return stack.enter_context(failure)


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (its class name when it has none)."""
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _dask_client(opts: ExecutorOptions, stack: ExitStack, jobs: int):
    """A :class:`distributed.Client` on the scheduler ``opts`` names (a new local cluster
    of at most ``jobs`` workers for ``dask_workers``), registered on ``stack`` to be closed."""
    from distributed import Client, LocalCluster

    if opts.scheduler is not None:
        return _connect_client(opts, stack)
    import dask

    stack.enter_context(dask.config.set(dict(LOCAL_DASK_CONFIG if opts.dask_config is None else opts.dask_config)))
    cluster = stack.enter_context(
        LocalCluster(
            n_workers=min(int(opts.dask_workers or 1), jobs),
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address="127.0.0.1:0",
            silence_logs=logging.ERROR,  # its HTTP server: any free loopback port
        )
    )
    return stack.enter_context(Client(cluster))


def _run_dask(
    fn: Callable[..., Any], tasks: Sequence[tuple], opts: ExecutorOptions, keys: Sequence[str] | None
) -> Iterator[Outcome]:
    from distributed import as_completed

    with ExitStack() as stack:
        client = _dask_client(opts, stack, len(tasks))
        futures = [
            client.submit(fn, *args, pure=False, **({"key": keys[i]} if keys else {})) for i, args in enumerate(tasks)
        ]
        index = {f.key: i for i, f in enumerate(futures)}
        try:
            for f in as_completed(futures):
                i = index[f.key]
                if f.status == "finished":
                    yield i, f.result(), None
                else:
                    try:
                        exc = f.exception()
                    except BaseException as e:  # a cancelled future raises instead of returning
                        exc = e
                    yield i, None, exc
                f.release()
        finally:
            client.cancel([f for f in futures if not f.done()])
