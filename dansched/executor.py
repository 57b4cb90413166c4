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
  whose workers ignore SIGINT, so Ctrl-C reaches only this process, which then
  cancels what is queued and terminates the workers;
- ``scheduler="tcp://host:port"``: the jobs are submitted to a running Dask
  scheduler (the workers must import ``dansched`` and see the same input paths);
- ``dask_workers=N``: a :class:`distributed.LocalCluster` of ``N`` single-threaded
  worker processes on 127.0.0.1 is started for the run and closed after it.

Dask reschedules the job of a worker that dies (up to its ``allowed-failures``),
so a lost worker costs time, not results. Dask is an optional extra
(``pip install -e '.[dist]'``); :class:`DaskMissingError` says so in one line.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import signal
from collections.abc import Callable, Generator, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

from .errors import DaskMissingError, ExecutorError

__all__ = [
    "ExecutorOptions",
    "ExecutorError",
    "DaskMissingError",
    "DASK_INSTALL_HINT",
    "LOCAL_DASK_CONFIG",
    "dask_available",
    "default_jobs",
    "run_tasks",
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
    ``scheduler``: address of a running Dask scheduler. ``dask_workers``: size of a
    local Dask cluster started for the run. At most one of the two Dask options."""

    jobs: int | None = None
    scheduler: str | None = None
    dask_workers: int | None = None
    dask_config: tuple[tuple[str, Any], ...] | None = None  # --dask-workers cluster settings (None: LOCAL_DASK_CONFIG)

    def __post_init__(self) -> None:
        if self.jobs is not None and self.jobs < 1:
            raise ExecutorError(f"--jobs must be at least 1, got {self.jobs}")
        if self.dask_workers is not None and self.dask_workers < 1:
            raise ExecutorError(f"--dask-workers must be at least 1, got {self.dask_workers}")
        if self.scheduler is not None and self.dask_workers is not None:
            raise ExecutorError("give either --scheduler or --dask-workers, not both")
        if self.scheduler is not None and not self.scheduler.strip():
            raise ExecutorError("--scheduler needs an address such as tcp://host:8786")

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


def _ignore_sigint() -> None:
    """Pool worker initializer: Ctrl-C is the parent's to handle."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _terminate_pool(pool: ProcessPoolExecutor) -> None:
    """Stop a pool now: cancel queued jobs, end the worker processes, do not wait."""
    procs = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        if p.is_alive():
            p.terminate()
    for p in procs:
        p.join(timeout=5)


def _run_pool(fn: Callable[..., Any], tasks: Sequence[tuple], jobs: int) -> Iterator[Outcome]:
    pool = ProcessPoolExecutor(max_workers=min(jobs, len(tasks)), initializer=_ignore_sigint)
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


def _dask_client(opts: ExecutorOptions, stack: ExitStack):
    """A :class:`distributed.Client` on the scheduler ``opts`` names (a new local cluster
    for ``dask_workers``), registered on ``stack`` to be closed."""
    from distributed import Client, LocalCluster

    if opts.scheduler is not None:
        try:
            return stack.enter_context(Client(opts.scheduler, timeout="10s"))
        except (OSError, TimeoutError) as exc:
            raise ExecutorError(f"cannot reach the Dask scheduler at {opts.scheduler}: {exc}") from None
    import dask

    stack.enter_context(dask.config.set(dict(LOCAL_DASK_CONFIG if opts.dask_config is None else opts.dask_config)))
    cluster = stack.enter_context(
        LocalCluster(
            n_workers=opts.dask_workers,
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
        client = _dask_client(opts, stack)
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
