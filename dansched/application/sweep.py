"""``dansched sweep``: hardware design-space sweeps over many instances.

How much L1 (or UB) does a set of kernels need before spills stop costing latency?
A sweep answers it by solving every instance on every point of a grid of tier
capacities and tabulating the plans' figures.

- The **grid** is the product of the ``--set TIER=V1,V2,...`` lists over the base
  hardware (``--hw`` else the default model); no ``--set`` gives one point.
- One **cell** is one instance on one hardware point; its **key** is (the
  instance file's content hash, every tier's capacity, the rest of the hardware
  model, the problem, the options), so renaming a file or changing a tier the
  grid does not sweep is seen correctly.
- Cells run on the executor layer (:mod:`dansched.application.executor`: this process, a
  local process pool or Dask) through :func:`run_cell`, which never raises: a
  cell that fails (no valid plan, an instance that does not fit the hardware, a
  hardware point that is not a usable core) is a row with ``valid=false`` and a
  one-line ``error``.
- Every finished cell is appended as one JSON line to ``DIR/sweep.jsonl`` and
  flushed at once, so Ctrl-C or a crash keeps every finished cell; rerunning the
  same command skips the cells already there (:func:`read_done`) and runs the
  rest, and runs again the cells that failed for a reason that may pass next time
  (:data:`TRANSIENT_ERRORS`, :func:`is_transient`: out of memory, an operating-system
  error; ``retry_failed``: every failed cell). A job lost to the executor (a dead pool worker, a cell Dask gave up on)
  is not recorded, so a rerun retries it.
- Then ``DIR/sweep.csv`` (one line per cell of the grid, in instance then grid
  order), ``DIR/sweep.md`` (per instance and swept tier the smallest capacity from
  which traffic stays 0; the makespan at each point) and ``DIR/sweep_<TIER>.png``
  per swept tier (makespan and traffic against capacity, one line per instance,
  the other swept tiers at their largest value; needs matplotlib): the tables and
  figures are drawn by :mod:`dansched.application.report.sweep`, this module writes them.

Apart from ``seconds``, every row is a function of the cell, whatever the executor.
"""

from __future__ import annotations

import builtins
import glob
import hashlib
import importlib.util
import itertools
import json
import os
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from ..checks import PROBLEM, TRAFFIC_SLACK
from ..errors import ArgumentError, HardwareError, InstanceError, OutputError, PlanInvalidError, SweepInputError
from ..hardware import Hardware, check_capacity, did_you_mean, hardware_from_table, load_hardware
from ..instance import instance_name, load_instance
from ..interrupt import held, note_written
from ..params import Progress
from ..pipeline import SolveOptions, run_pipeline
from ..pipeline.memory import out_of_memory
from ..plan import atomic_write_files, check_output_file
from .executor import ExecutorError, ExecutorOptions, first_line, run_tasks
from .report.sweep import RESULT_METRICS, point_label, sweep_csv, sweep_markdown, swept_tiers, tier_png_bytes

__all__ = [
    "SweepInputError",
    "SweepOptions",
    "Cell",
    "parse_sets",
    "grid_points",
    "find_instances",
    "content_hash",
    "plan_cells",
    "run_cell",
    "read_done",
    "run_sweep",
    "SweepResult",
    "write_reports",
    "sweep",
    "TRANSIENT_ERRORS",
    "is_transient",
    "output_paths",
]

JSONL, CSV_FILE, MD_FILE, PNG_FILE = "sweep.jsonl", "sweep.csv", "sweep.md", "sweep_{}.png"


@dataclass(frozen=True)
class SweepOptions:
    """What each cell solves: the contest problem and the options of :class:`SolveOptions`
    a sweep exposes (part of every cell's key)."""

    problem: int = 3
    traffic_slack: float = 0.0

    def __post_init__(self) -> None:
        try:
            PROBLEM.check(self.problem, "--problem")
            TRAFFIC_SLACK.check(self.traffic_slack, "--traffic-slack")
        except ArgumentError as exc:
            raise SweepInputError(str(exc)) from None

    def options(self) -> dict[str, Any]:
        """The solve options recorded in every row (the problem has its own column)."""
        return {"traffic_slack": float(self.traffic_slack)}


@dataclass(frozen=True)
class Cell:
    """One instance on one hardware point."""

    path: str
    instance: str
    instance_hash: str
    capacity: Mapping[str, int]  # every tier of the hardware model, in its order
    hw_model: str  # hash of the non-capacity part of the hardware model (roles, spill cost)
    problem: int
    options: Mapping[str, Any]
    hw_table: Mapping[str, Any] = field(compare=False, repr=False)

    @property
    def key(self) -> str:
        return cell_key(self.instance_hash, self.capacity, self.hw_model, self.problem, self.options)


def cell_key(
    instance_hash: str, capacity: Mapping[str, int], hw_model: str, problem: int, options: Mapping[str, Any]
) -> str:
    """The resume key of a cell (a canonical JSON text)."""
    return json.dumps(
        [instance_hash, dict(capacity), hw_model, int(problem), dict(options)], sort_keys=True, separators=(",", ":")
    )


def row_key(row: Mapping[str, Any]) -> str | None:
    """The key of a recorded row, ``None`` when the row lacks a field of it."""
    try:
        return cell_key(row["instance_hash"], row["capacity"], row["hw_model"], row["problem"], row["options"])
    except (KeyError, TypeError, ValueError):
        return None


# ---- input ------------------------------------------------------------------------------


def parse_sets(specs: Sequence[str], hw: Hardware) -> dict[str, tuple[int, ...]]:
    """``["L1=2048,4096", "UB=512"]`` -> ``{"L1": (2048, 4096), "UB": (512,)}`` (order kept,
    repeated values dropped). Unknown tiers, repeated tiers, non-integers and capacities a
    hardware file could not set either (:func:`~dansched.hardware.check_capacity`: not
    positive, or 2**63 and more) are bad input."""
    out: dict[str, tuple[int, ...]] = {}
    for spec in specs:
        tier, sep, values = spec.partition("=")
        tier = tier.strip()
        if not sep or not tier:
            raise SweepInputError(f"--set {spec!r}: expected TIER=V1,V2,... (e.g. L1=2048,4096)")
        if tier not in hw.capacity:
            raise SweepInputError(f"--set {spec!r}: unknown tier {tier!r}{did_you_mean(tier, list(hw.tiers))}")
        if tier in out:
            raise SweepInputError(f"--set names tier {tier} twice; give all its values in one --set")
        parsed: list[int] = []
        for v in values.split(","):
            v = v.strip()
            try:
                n = check_capacity(int(v, 10), tier)
            except HardwareError as exc:  # a ValueError too: first
                raise SweepInputError(f"--set {spec!r}: {str(exc).removeprefix('hardware: ')}") from None
            except ValueError:
                raise SweepInputError(f"--set {spec!r}: {v!r} is not an integer capacity") from None
            if n not in parsed:
                parsed.append(n)
        out[tier] = tuple(parsed)
    return out


def grid_points(base: Hardware, sets: Mapping[str, Sequence[int]]) -> list[dict[str, int]]:
    """Every tier's capacity at each grid point: the product of the ``sets`` lists (first
    ``--set`` varying slowest) over ``base``'s capacities."""
    tiers = list(sets)
    points = []
    for values in itertools.product(*(sets[t] for t in tiers)):
        cap = dict(base.capacity)
        cap.update(zip(tiers, values))
        points.append(cap)
    return points


def _is_instance_file(p: Path) -> bool:
    return p.is_file() and (p.suffix.lower() == ".json" or p.name.endswith("_Nodes.csv"))


def find_instances(patterns: Sequence[str | Path]) -> list[Path]:
    """Instance files named by ``patterns``: files, folders (their ``*.json`` and
    ``*_Nodes.csv``) or glob patterns; in the order given, each folder or glob sorted,
    duplicates dropped. A name that matches nothing is bad input."""
    found: dict[Path, None] = {}
    for pat in patterns:
        p = Path(pat)
        if p.is_dir():
            hits = sorted(q for q in p.iterdir() if _is_instance_file(q))
        elif p.is_file():
            hits = [p]
        elif glob.has_magic(str(pat)):
            hits = sorted(Path(q) for q in glob.glob(str(pat)) if _is_instance_file(Path(q)))
        else:
            raise SweepInputError(f"{pat}: no such instance file or folder")
        if not hits:
            raise SweepInputError(f"{pat}: no instances found (contest .json or <case>_Nodes.csv)")
        for q in hits:
            found.setdefault(q.resolve(), None)
    names: dict[str, Path] = {}
    for q in found:
        other = names.setdefault(instance_name(q), q)
        if other != q:
            raise SweepInputError(f"two instances are both named {instance_name(q)!r}: {other} and {q}")
    return list(found)


def content_hash(path: str | Path) -> str:
    """SHA-256 of the instance's bytes (both files of a CSV pair), hex."""
    p = Path(path)
    h = hashlib.sha256()
    files = [p]
    if p.name.endswith("_Nodes.csv"):
        files.append(p.with_name(p.name[: -len("_Nodes.csv")] + "_Edges.csv"))
    for f in files:
        try:
            data = f.read_bytes()
        except OSError as exc:
            raise SweepInputError(f"{f}: cannot read: {exc.strerror or exc}") from None
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def _hw_model_hash(table: Mapping[str, Any]) -> str:
    rest = {k: v for k, v in table.items() if k != "tiers"}
    return hashlib.sha256(json.dumps(rest, sort_keys=True).encode()).hexdigest()[:16]


def plan_cells(
    instances: Sequence[Path], base: Hardware, points: Sequence[Mapping[str, int]], opts: SweepOptions
) -> list[Cell]:
    """Every (instance, point) cell, instance-major, each instance hashed once."""
    table = base.to_dict()
    model = _hw_model_hash(table)
    cells = []
    for p in instances:
        digest = content_hash(p)
        for cap in points:
            cells.append(
                Cell(
                    path=str(p),
                    instance=instance_name(p),
                    instance_hash=digest,
                    capacity=dict(cap),
                    hw_model=model,
                    problem=opts.problem,
                    options=opts.options(),
                    hw_table={**table, "tiers": dict(cap)},
                )
            )
    return cells


# ---- one cell ---------------------------------------------------------------------------


# Failures that may not happen on the next run: out of memory; operating-system errors (a full
# disk, a lost mount, a timeout, a refused connection); and SystemError, which is what CPython
# raises when an allocation fails inside C code that sets no MemoryError (under a 300 MB
# address-space limit a cell failed with "SystemError: <function _find_and_load> returned NULL
# without setting an exception" more often than with MemoryError, or with an ImportError whose
# loader could not map a library: "failed to map segment from shared object"). A cell that
# failed so runs again on resume; the others (bad input, no valid plan, a bug) would fail the
# same way.
TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (MemoryError, OSError, SystemError)
MAPPING_FAILED = ("failed to map segment", "cannot allocate memory")  # an ImportError for want of memory


def transient_error(exc: BaseException) -> bool:
    """Whether ``exc`` is a failure that may pass next time (:data:`TRANSIENT_ERRORS`, or an
    import that failed for want of memory)."""
    if isinstance(exc, ImportError):
        return any(m in str(exc).lower() for m in MAPPING_FAILED)
    return isinstance(exc, TRANSIENT_ERRORS)


def is_transient(row: Mapping[str, Any]) -> bool:
    """Whether a recorded failed row failed for a reason that may pass next time (its
    ``transient`` field; a row written before that field existed: the exception class its
    error names, e.g. ``MemoryError: ...``)."""
    if row.get("valid"):
        return False
    if "transient" in row:
        return bool(row["transient"])
    name = str(row.get("error") or "").partition(":")[0].strip()
    cls = getattr(builtins, name, None)
    return isinstance(cls, type) and issubclass(cls, TRANSIENT_ERRORS)


def run_cell(
    path: str,
    instance: str,
    instance_hash: str,
    hw_table: Mapping[str, Any],
    hw_model: str,
    problem: int,
    options: Mapping[str, Any],
) -> dict[str, Any]:
    """Solve one cell and return its row; a failure is a row with its one-line reason.

    Runs on a worker: everything it needs comes in as plain data."""
    row: dict[str, Any] = {
        "instance": instance,
        "instance_hash": instance_hash,
        "capacity": dict(hw_table["tiers"]),
        "hw_model": hw_model,
        "problem": problem,
        "options": dict(options),
        "valid": False,
    }
    row.update({k: None for k in RESULT_METRICS})
    row.update(seconds=None, error=None, transient=False)
    t0 = time.perf_counter()
    try:
        hw = hardware_from_table(hw_table)
        inst = load_instance(path, hw)
        with out_of_memory(inst):
            result = run_pipeline(
                inst, SolveOptions(problem=problem, traffic_slack=float(options.get("traffic_slack", 0.0)))
            )
        ev = result.evaluation
        for k in RESULT_METRICS:
            v = getattr(ev, k, None)
            row[k] = None if v is None else int(v)
        row["valid"] = bool(ev.valid)
        if not ev.valid:
            row["error"] = f"invalid plan ({ev.error_count} violation(s))"
    except (HardwareError, InstanceError, PlanInvalidError) as exc:
        row["error"] = first_line(exc)
    except Exception as exc:  # a cell's crash is a row, never the sweep's crash
        row["error"] = f"{type(exc).__name__}: {first_line(exc)}"
        row["transient"] = transient_error(exc)
    row["seconds"] = round(time.perf_counter() - t0, 3)
    return row


def _cell_args(c: Cell) -> tuple:
    return (c.path, c.instance, c.instance_hash, c.hw_table, c.hw_model, c.problem, c.options)


# ---- results file -------------------------------------------------------------------------


def read_done(path: Path) -> dict[str, dict[str, Any]]:
    """The rows of ``sweep.jsonl`` by cell key (the last row of a key wins); a line that
    does not parse (a write cut short) is ignored, so its cell runs again."""
    done: dict[str, dict[str, Any]] = {}
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return done
    except OSError as exc:
        raise SweepInputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    for line in text.splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        key = row_key(row) if isinstance(row, dict) else None
        if key is not None:
            done[key] = row
    return done


class _JsonlAppender:
    """Appends rows to ``sweep.jsonl``, one line each, flushed at once; the file (and its
    folder) is opened at the first row, so a sweep that runs nothing writes nothing."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._fh: TextIO | None = None

    def _open(self) -> TextIO:
        self._path.parent.mkdir(parents=True, exist_ok=True)
        p = self._path
        torn = p.exists() and p.stat().st_size > 0 and not p.read_bytes().endswith(b"\n")
        fh = p.open("a", encoding="utf-8")
        if torn:  # a line cut short by a crash: end it so the next row starts on its own line
            fh.write("\n")
        return fh

    def write(self, row: Mapping[str, Any]) -> None:
        """Append ``row`` (SIGTERM and SIGINT deferred meanwhile: a row is written whole)."""
        with held():
            fh = self._fh
            if fh is None:
                fh = self._fh = self._open()
            fh.write(json.dumps(row, separators=(",", ":")) + "\n")
            fh.flush()
        note_written(self._path.parent)

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()


# ---- running ------------------------------------------------------------------------------


@dataclass
class SweepResult:
    """What a sweep run did: ``rows`` are those of the requested cells that are recorded
    (in cell order); ``lost`` the cells the executor could not run (not recorded);
    ``files`` the reports :func:`sweep` wrote (``note``: why some were not, e.g. no PNGs
    without matplotlib); ``retried`` how many of the cells run had a failed row already."""

    cells: list[Cell]
    rows: list[dict[str, Any]]
    ran: int
    skipped: int
    failed: int
    lost: list[tuple[Cell, str]]
    seconds: float
    files: list[Path] = field(default_factory=list)
    note: str | None = None
    retried: int = 0

    def summary_line(self, executor: str) -> str:
        """``sweep: N cells (k already done, r run, f failed) on EXECUTOR in S s -> files``
        (``r run (t retried)`` when some of them had failed before)."""
        failed = sum(not r["valid"] for r in self.rows)
        ran = f"{self.ran} run" + (f" ({self.retried} retried)" if self.retried else "")
        return (
            f"sweep: {len(self.cells)} cells ({self.skipped} already done, {ran}, {failed} failed) "
            f"on {executor} in {self.seconds:.1f} s -> {', '.join(str(f) for f in self.files)}"
        )


def run_sweep(
    cells: Sequence[Cell],
    out: str | Path,
    executor: ExecutorOptions = ExecutorOptions(),
    progress: Progress | None = None,
    on_row: Callable[[dict[str, Any]], None] | None = None,
    retry_failed: bool = False,
) -> SweepResult:
    """Run the cells not yet in ``out/sweep.jsonl``, and those recorded as failed for a
    reason that may pass next time (:func:`is_transient`; ``retry_failed``: every failed
    cell), appending each finished row there (the newest row of a cell is the one read).

    Largest instance files go first (the long cells start early). ``progress(message)``
    is told how many cells are done as each one finishes; ``on_row`` is called with each
    new row after it is written. An interruption (``KeyboardInterrupt``, or
    :class:`~dansched.errors.Interrupted` under the command line's signal policy)
    propagates once the executor is shut down; every row written so far stays."""
    t0 = time.perf_counter()
    jsonl = Path(out) / JSONL
    done = read_done(jsonl)
    unique = list({c.key: c for c in cells}.values())

    def again(row: Mapping[str, Any]) -> bool:
        return not row.get("valid") and (retry_failed or is_transient(row))

    todo = [c for c in unique if c.key not in done or again(done[c.key])]
    retried = sum(c.key in done for c in todo)
    skipped = len(unique) - len(todo)
    size = {c.path: _instance_bytes(c.path) for c in todo}
    todo.sort(key=lambda c: -size[c.path])  # stable: instance, then grid order among equals
    failed = 0
    lost: list[tuple[Cell, str]] = []
    say = progress or (lambda _msg: None)
    before = f", {skipped} done before" if skipped else ""
    say(f"sweep: 0 of {len(todo)} cells run{before}")
    writer = _JsonlAppender(jsonl)
    token = uuid.uuid4().hex[:8]
    keys = [f"dansched-sweep-{token}-{i}" for i in range(len(todo))]
    try:
        with closing(run_tasks(run_cell, [_cell_args(c) for c in todo], executor, keys)) as results:
            for ran, (i, row, exc) in enumerate(results, start=1):
                if exc is not None:
                    lost.append((todo[i], f"{type(exc).__name__}: {first_line(exc)}"))
                else:
                    writer.write(row)
                    done[todo[i].key] = row
                    failed += not row["valid"]
                    if on_row is not None:
                        on_row(row)
                say(f"sweep: {ran} of {len(todo)} cells run ({failed + len(lost)} failed{before})")
    finally:
        writer.close()
    rows = [dict(done[c.key], instance=c.instance) for c in cells if c.key in done]  # same bytes, own name
    return SweepResult(
        list(cells),
        rows,
        len(todo) - len(lost),
        skipped,
        failed,
        lost,
        round(time.perf_counter() - t0, 3),
        retried=retried,
    )


def _instance_bytes(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


# ---- reports ------------------------------------------------------------------------------


def output_paths(out: str | Path, tiers: Sequence[str]) -> list[Path]:
    """Every file a sweep into ``out`` may write when ``tiers`` are swept: ``sweep.jsonl``,
    ``sweep.csv``, ``sweep.md`` and ``sweep_<TIER>.png`` per swept tier."""
    d = Path(out)
    return [d / JSONL, d / CSV_FILE, d / MD_FILE] + [d / PNG_FILE.format(t) for t in tiers]


def write_reports(rows: Sequence[Mapping[str, Any]], out: str | Path, lost: int = 0) -> tuple[list[Path], str | None]:
    """Write ``sweep.csv``, ``sweep.md`` and one PNG per swept tier (all or nothing);
    returns the files and a note when the PNGs were skipped."""

    d = Path(out)
    files: list[tuple[Path, str | bytes]] = []
    note = None
    swept = swept_tiers(rows)
    if swept:
        if importlib.util.find_spec("matplotlib") is None:
            note = "matplotlib is not installed: no PNGs (pip install -e '.[plot]')."
        else:
            files += [(d / PNG_FILE.format(t), tier_png_bytes(rows, t)) for t in swept]
    files = [(d / CSV_FILE, sweep_csv(rows)), (d / MD_FILE, sweep_markdown(rows, note, lost))] + files
    atomic_write_files(files)
    return [p for p, _ in files], note


# ---- the command ----------------------------------------------------------------------------


def sweep(
    instances: Sequence[str | Path],
    sets: Sequence[str] = (),
    hw_path: str | Path | None = None,
    problem: int = 3,
    traffic_slack: float = 0.0,
    out: str | Path = "sweep",
    executor: ExecutorOptions = ExecutorOptions(),
    progress: Progress | None = None,
    on_row: Callable[[dict[str, Any]], None] | None = None,
    retry_failed: bool = False,
) -> SweepResult:
    """Check every input and output path (raising :class:`SweepInputError`, nothing
    written), then run the sweep (:func:`run_sweep`; ``progress(message)`` told of each
    cell done) and write the reports. An interruption propagates with the finished cells
    kept (:func:`run_sweep`)."""
    opts = SweepOptions(problem=problem, traffic_slack=traffic_slack)
    try:
        base = load_hardware(hw_path)
    except HardwareError as exc:
        raise SweepInputError(str(exc)) from None
    swept = parse_sets(sets, base)
    grid = grid_points(base, swept)
    if not instances:
        raise SweepInputError("no instances given")
    paths = find_instances(instances)
    try:
        executor.check()
    except ExecutorError as exc:
        raise SweepInputError(str(exc)) from None
    if Path(out).exists() and not Path(out).is_dir():
        raise SweepInputError(f"{out}: is a file, not a folder for the sweep's results")
    for target in output_paths(out, [t for t, values in swept.items() if len(values) > 1]):
        try:
            check_output_file(target)
        except OutputError as exc:
            raise SweepInputError(str(exc)) from None
    cells = plan_cells(paths, base, grid, opts)
    try:
        result = run_sweep(cells, out, executor, progress=progress, on_row=on_row, retry_failed=retry_failed)
    except ExecutorError as exc:  # e.g. a scheduler that cannot be reached
        raise SweepInputError(str(exc)) from None
    files, result.note = write_reports(result.rows, out, len(result.lost))
    result.files = [Path(out) / JSONL, *files]
    return result


def lost_line(cell: Cell, why: str) -> str:
    """The diagnostic line of a cell the executor could not run."""
    return f"dansched: {cell.instance} at {point_label(cell.capacity, list(cell.capacity))}: not run ({why}); rerun to retry"
