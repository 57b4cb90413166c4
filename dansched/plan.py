"""Plan: a schedule, an offset per buffer and an ordered spill list (docs/rules.md, section 5),
and the contest files that carry them.

A plan holds exactly what the contest files say, in ``BufId`` values, so that the
evaluator can judge any plan, however wrong. Files are written atomically
(temporary file, then rename) so an interrupted run leaves nothing half-written.

A target that exists must be a regular file (:func:`check_target`): a named pipe, a
device, a socket, a folder, or a link to one of those, is refused with one line before
any work, and checked again just before the rename, so a rename never replaces one. A
symbolic link to a regular file is replaced by the new file, like any file: the file it
points to is left as it was (a link planted in an output folder cannot make dansched
write somewhere else). Text is written as UTF-8; a name that is not (a file name's
undecodable bytes) is written with those characters escaped (``\udcff``).

>>> p = Plan(order=(0, 1, 2), offsets=((7, 0),), spills=())
>>> p.problem
2
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from .checks import NAME_MAX, TEXT_ENCODING, check_integers, check_path, check_type
from .errors import ArgumentError, OutputError, PlanFormatError
from .interrupt import held, note_written

__all__ = [
    "Plan",
    "plan_from_indices",
    "read_schedule",
    "read_memory",
    "read_spill",
    "read_plan_dir",
    "Most",
    "PlanLimits",
    "plan_limits",
    "SPILLS_PER_GAP",
    "ENTRIES_AT_LEAST",
    "write_plan",
    "plan_texts",
    "atomic_write_text",
    "atomic_write_files",
    "CONTEST_SUFFIXES",
    "contest_paths",
    "check_writable_folder",
    "check_output_file",
    "check_target",
    "check_case_name",
    "check_names_fit",
    "encoded",
]


def _shown(text: str, limit: int = 40) -> str:
    """``repr`` of a file's text for a one-line message, shortened when it is long."""
    return repr(text) if len(text) <= limit else repr(text[:limit]) + f"... ({len(text)} characters)"


@dataclass(frozen=True)
class Plan:
    """``order``: node ids (spill ids ``N+2(k-1)``, ``N+2(k-1)+1`` included);
    ``offsets``: ``(BufId, Offset)`` lines, or ``None`` for a problem-1 order;
    ``spills``: ``(BufId, NewOffset)`` in spill order. Any integers are accepted (the
    evaluator judges them); anything else, or a pair that is not two integers, raises
    :class:`~dansched.errors.ArgumentError` (lists are kept as tuples)."""

    order: tuple[int, ...]
    offsets: tuple[tuple[int, int], ...] | None = None
    spills: tuple[tuple[int, int], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "order", _integers(self.order, "Plan.order"))
        if self.offsets is not None:
            object.__setattr__(self, "offsets", _pairs(self.offsets, "Plan.offsets"))
        object.__setattr__(self, "spills", _pairs(self.spills, "Plan.spills"))

    @property
    def problem(self) -> int:
        """1 for an order alone, 2 when it carries a layout (problems 2 and 3 share the rules)."""
        return 1 if self.offsets is None else 2

    def __repr__(self) -> str:
        """One line: what the plan is and how long its files are (never the entries).

        >>> Plan(order=(0, 1, 2))
        Plan(problem-1 order, 3 schedule entries)
        >>> Plan(order=(0, 1), offsets=((0, 0),), spills=())
        Plan(full plan, 2 schedule entries, 1 offsets, 0 spills)
        """
        if self.offsets is None:
            return f"Plan(problem-1 order, {len(self.order)} schedule entries)"
        return f"Plan(full plan, {len(self.order)} schedule entries, {len(self.offsets)} offsets, {len(self.spills)} spills)"


def _integers(values: object, what: str) -> tuple[int, ...]:
    """``values`` as a tuple of ints (numpy integers converted), else ArgumentError."""
    return check_integers(values, what, "node ids")


def _pairs(values: object, what: str) -> tuple[tuple[int, int], ...]:
    """``values`` as a tuple of ``(int, int)`` pairs, else ArgumentError."""
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise ArgumentError(f"{what} must be a sequence of (BufId, offset) pairs, got {type(values).__name__}")
    out = []
    for pair in values:
        if isinstance(pair, (str, bytes)) or not isinstance(pair, Iterable) or len(got := tuple(pair)) != 2:
            raise ArgumentError(f"{what} must hold (BufId, offset) pairs, got {pair!r}")
        out.append(_integers(got, what))
    return tuple((a, b) for a, b in out)


class _BufferIds(Protocol):
    """What :func:`plan_from_indices` reads of an instance: the BufId of each buffer index."""

    @property
    def buf_id(self) -> np.ndarray: ...


def plan_from_indices(
    inst: _BufferIds,
    order: Iterable[int],
    offsets: Sequence[int] | np.ndarray | None = None,
    spills: Iterable[tuple[int, int]] = (),
) -> Plan:
    """Build a :class:`Plan` from buffer *indices* (as the stages use them)."""
    ids = inst.buf_id.tolist()
    offs = None if offsets is None else tuple((ids[b], int(o)) for b, o in enumerate(offsets))
    return Plan(
        order=tuple(int(v) for v in order),
        offsets=offs,
        spills=tuple((ids[int(b)], int(o)) for b, o in spills),
    )


# the contest files and the report beside them: kind -> file name after <case>
CONTEST_SUFFIXES: dict[str, str] = {
    "schedule": "_schedule.txt",
    "memory": "_memory.txt",
    "spill": "_spill.txt",
    "report": "_report.json",
}


def check_case_name(case: object, what: str = "case") -> str:
    """``case`` when it can be the stem of a file name in a folder (every output file is
    ``<case>_<kind>``), else :class:`~dansched.errors.ArgumentError` naming ``what``: a
    non-empty string, not ``.`` or ``..``, without a path separator or a NUL. Refused, not
    rewritten: two cases must never end up with the same files."""
    name: str = check_type(case, str, what)
    bad = next((c for c in ("/", os.sep, os.altsep or "/", "\0") if c in name), None)
    if not name or name in (".", "..") or bad is not None:
        why = f"it holds {bad!r}" if bad is not None else "it is not a file name"
        raise ArgumentError(f"{what} {name!r} cannot name the case's files ({why}); give a name such as 'conv_s2'")
    return name


def contest_paths(directory: str | Path, case: str) -> dict[str, Path]:
    """``{kind: DIR/<case><suffix>}`` of :data:`CONTEST_SUFFIXES` (:func:`check_case_name` first)."""
    check_path(directory, "contest_paths: directory")
    check_case_name(case)
    d = Path(directory)
    return {k: d / f"{case}{s}" for k, s in CONTEST_SUFFIXES.items()}


# The bounds of a plan file read for an instance (:func:`plan_limits`): a contest file holds
# one entry per line, at most PLAN_LINE_CHARS characters (two 64-bit integers, a colon,
# spaces and the line end fit in 64), and the file at most PLAN_FILE_SLACK characters more
# than its entries' lines (blank lines, a note someone added)
PLAN_LINE_CHARS = 64
PLAN_FILE_SLACK = 4096
# A plan of an instance holds at most SPILLS_PER_GAP spills per gap between two consecutive
# needs of a buffer (its ALLOC, each operation using it, its FREE): dansched's own plans
# spill once per gap at most (DLR, the exact spill plan) or, rarely, reload early and spill
# again (the time-driven source), 0.43 per gap at most over every plan of
# benchmarks/results/bench. These bounds exist so that reading a plan file takes memory in
# proportion to the instance, whatever the file holds; below ENTRIES_AT_LEAST entries a file
# is always read, so that a plan with more spills in a gap (tests/test_extremes.py spills 40
# times in one) or the files of another case (judged, and named in a note) are judged rather
# than refused
SPILLS_PER_GAP = 4
ENTRIES_AT_LEAST = 1024


@dataclass(frozen=True)
class Most:
    """The most entries (non-blank lines) a contest file of a plan of an instance can
    hold, and why (``why``, said when a file holds more)."""

    entries: int
    why: str

    @property
    def characters(self) -> int:
        """The longest such a file can be: its entries' lines and :data:`PLAN_FILE_SLACK`."""
        return self.entries * PLAN_LINE_CHARS + PLAN_FILE_SLACK


class _Shape(Protocol):
    """What :func:`plan_limits` reads of an instance."""

    @property
    def name(self) -> str: ...

    @property
    def n(self) -> int: ...

    @property
    def num_buffers(self) -> int: ...

    @property
    def users_idx(self) -> np.ndarray: ...


@dataclass(frozen=True)
class PlanLimits:
    """The most each contest file of a plan of one instance can hold (:func:`plan_limits`)."""

    schedule: Most
    memory: Most
    spill: Most


def plan_limits(inst: _Shape) -> PlanLimits:
    """What the contest files of a plan of ``inst`` can hold: one offset per buffer;
    :data:`SPILLS_PER_GAP` spills per gap between two needs of a buffer; the instance's
    nodes with two spill nodes per spill; each at least :data:`ENTRIES_AT_LEAST` entries."""
    gaps = inst.num_buffers + len(inst.users_idx)  # a buffer's needs: its ALLOC, each user, its FREE
    spills = max(ENTRIES_AT_LEAST, SPILLS_PER_GAP * gaps)
    case = inst.name
    return PlanLimits(
        schedule=Most(
            inst.n + 2 * spills,
            f"{case} has {inst.n:,} nodes, and a plan of it at most {spills:,} spills of two nodes each",
        ),
        memory=Most(
            max(ENTRIES_AT_LEAST, inst.num_buffers),
            f"{case} has {inst.num_buffers:,} buffers, one offset each, and any file may hold {ENTRIES_AT_LEAST:,}",
        ),
        spill=Most(
            spills,
            f"a plan of {case} spills at most {SPILLS_PER_GAP} times per gap between two needs of a buffer "
            f"({gaps:,} gaps), and any file may hold {ENTRIES_AT_LEAST:,}",
        ),
    )


def _lines(path: str | Path, most: Most | None = None) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of each non-blank line of ``path``, stripped, read as a
    stream. With ``most``, the reading stops with :class:`PlanFormatError` (one line) at
    the first entry past ``most.entries``, at a line longer than :data:`PLAN_LINE_CHARS`,
    or at a file longer than ``most.characters``: what it keeps is bounded by the
    instance, not by the file."""
    p = Path(path)
    try:
        fh = open(p, encoding=TEXT_ENCODING)  # text mode: \n, \r\n and \r end lines, as splitlines does
    except FileNotFoundError:
        raise PlanFormatError(f"{p}: no such file") from None
    except OSError as exc:
        raise PlanFormatError(f"{p}: cannot read: {exc}") from None
    with fh:
        if most is not None:
            with contextlib.suppress(OSError):
                info = os.fstat(fh.fileno())
                if stat.S_ISREG(info.st_mode) and info.st_size > most.characters:
                    raise PlanFormatError(
                        f"{p}: {info.st_size:,} bytes, longer than a plan file of this instance can be "
                        f"(at most {most.entries:,} entries: {most.why})"
                    )
        line = entries = read = 0
        while True:
            try:
                chunk = fh.readline(-1 if most is None else PLAN_LINE_CHARS + 1)
            except (OSError, UnicodeDecodeError) as exc:
                raise PlanFormatError(f"{p}: cannot read: {exc}") from None
            if not chunk:
                return
            if most is not None:
                read += len(chunk)
                if len(chunk) > PLAN_LINE_CHARS and not chunk.endswith(("\n", "\r")):
                    raise PlanFormatError(
                        f"{p}:{line + 1}: a line of more than {PLAN_LINE_CHARS} characters, which no plan file holds"
                    )
                if read > most.characters:
                    raise PlanFormatError(
                        f"{p}:{line + 1}: the file is longer than a plan file of this instance can be "
                        f"(at most {most.entries:,} entries: {most.why})"
                    )
            for piece in chunk.splitlines() or [""]:
                line += 1
                text = piece.strip()
                if not text:
                    continue
                entries += 1
                if most is not None and entries > most.entries:
                    raise PlanFormatError(
                        f"{p}:{line}: more entries than a plan of this instance can hold (at most "
                        f"{most.entries:,}: {most.why})"
                    )
                yield line, text


def _int(text: str, path: str | Path, line: int, what: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise PlanFormatError(f"{path}:{line}: {what} must be an integer, got {_shown(text.strip())}") from None


def _most(most: Most | None, what: str) -> Most | None:
    return None if most is None else check_type(most, Most, what, "plan_limits(inst) gives them")


def read_schedule(path: str | Path, most: Most | None = None) -> tuple[int, ...]:
    """One node id per line (``most``: the bound of :func:`_lines`, e.g. ``plan_limits(inst).schedule``)."""
    check_path(path, "read_schedule: path")
    most = _most(most, "read_schedule: most")
    return tuple(_int(s, path, i, "a node id") for i, s in _lines(path, most))


def _read_pairs(path: str | Path, what: str, most: Most | None) -> tuple[tuple[int, int], ...]:
    out = []
    for i, s in _lines(path, most):
        if s.count(":") != 1:
            raise PlanFormatError(f"{path}:{i}: expected 'BufId:{what}', got {_shown(s)}")
        a, b = s.split(":")
        out.append((_int(a, path, i, "BufId"), _int(b, path, i, what)))
    return tuple(out)


def read_memory(path: str | Path, most: Most | None = None) -> tuple[tuple[int, int], ...]:
    """``BufId:Offset`` per line (``most``: as for :func:`read_schedule`)."""
    check_path(path, "read_memory: path")
    return _read_pairs(path, "Offset", _most(most, "read_memory: most"))


def read_spill(path: str | Path, most: Most | None = None) -> tuple[tuple[int, int], ...]:
    """``BufId:NewOffset`` per line, in spill order (an empty file: no spill; ``most``: as
    for :func:`read_schedule`)."""
    check_path(path, "read_spill: path")
    return _read_pairs(path, "NewOffset", _most(most, "read_spill: most"))


def read_plan_dir(directory: str | Path, case: str, limits: PlanLimits | None = None) -> Plan:
    """Read ``<case>_schedule.txt`` and, when present, ``_memory.txt`` and ``_spill.txt``
    (``limits``: the bounds of :func:`plan_limits` for the instance, read as streams)."""
    check_path(directory, "read_plan_dir: directory")
    if limits is not None:
        check_type(limits, PlanLimits, "read_plan_dir: limits", "plan_limits(inst) gives them")
    paths = contest_paths(directory, case)
    order = read_schedule(paths["schedule"], limits.schedule if limits else None)
    if not paths["memory"].exists():
        return Plan(order=order)
    spills = read_spill(paths["spill"], limits.spill if limits else None) if paths["spill"].exists() else ()
    return Plan(order=order, offsets=read_memory(paths["memory"], limits.memory if limits else None), spills=spills)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _mode(path: Path, target: Path) -> int | None:
    """The mode of ``path`` (links followed), None when nothing is there; a path that
    cannot be looked at (a name too long, a loop of links, a folder that cannot be
    searched) is :class:`OutputError` naming ``target``."""
    try:
        return os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise OutputError(f"{target}: cannot write: {exc.strerror or exc}") from None


def _check_under(target: Path, folder: Path) -> None:
    """``target`` (a file or folder to create under ``folder``) can be written: the nearest
    existing folder on the way is a folder, and writable."""
    nearest = folder
    while (mode := _mode(nearest, target)) is None and nearest != nearest.parent:
        nearest = nearest.parent
    if mode is not None and not stat.S_ISDIR(mode):
        raise OutputError(f"{target}: cannot write: {nearest} is a file, not a folder")
    if mode is not None and not os.access(nearest, os.W_OK | os.X_OK):
        raise OutputError(f"{target}: cannot write: {nearest} is not writable")
    if mode is not None:
        _probe(nearest, target)


def _probe(folder: Path, target: Path) -> None:
    """Make and remove an empty folder in ``folder``: the permission bits do not bind root,
    and a read-only or virtual file system (``/sys``, ``/proc``) refuses what ``os.access``
    allows. Raises :class:`OutputError` naming ``target`` when the folder takes nothing."""
    try:
        made = tempfile.mkdtemp(prefix=".dansched-probe-", dir=folder)
    except OSError as exc:
        raise OutputError(f"{target}: cannot write: {folder}: {exc.strerror or exc}") from None
    with contextlib.suppress(OSError):
        os.rmdir(made)


def check_writable_folder(directory: str | Path) -> None:
    """Raise :class:`OutputError` (one line) when files cannot be written into
    ``directory``: it is a file, it would be created under a file, or the nearest folder
    on its path is not writable. Nothing is created (callers check before long work)."""
    d = Path(directory)
    mode = _mode(d, d)
    if mode is not None and not stat.S_ISDIR(mode):
        raise OutputError(f"{d}: is a file, not a folder")
    _check_under(d, d)


_KINDS = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def check_target(path: str | Path) -> None:
    """Raise :class:`OutputError` (one line) unless ``path`` is absent or a regular file
    (following symbolic links): a folder, a named pipe, a device or a socket is never
    replaced by a rename. A dangling link counts as absent (the rename replaces the link)."""
    p = Path(path)
    try:
        mode = os.stat(p).st_mode
    except (FileNotFoundError, NotADirectoryError):  # nothing there (a file on the way: _check_under says so)
        return
    except OSError as exc:  # a loop of links, a folder on the way that cannot be searched
        raise OutputError(f"{p}: cannot write: {exc.strerror or exc}") from None
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        raise OutputError(f"{p}: is a folder, not a file name")
    kind = next((name for test, name in _KINDS if test(mode)), "a special file")
    via = f" (a link to {os.readlink(p)})" if p.is_symlink() else ""
    raise OutputError(f"{p}: is {kind}{via}, not a regular file: dansched replaces only regular files")


def check_output_file(path: str | Path) -> None:
    """Raise :class:`OutputError` (one line) when ``path`` cannot be written as a file: it
    is something other than a regular file (:func:`check_target`), its folder cannot be
    written or created, or its name or its temporary's (:func:`atomic_write_files`) is
    longer than the file system takes (:func:`check_names_fit`)."""
    p = Path(path)
    check_target(p)
    _check_under(p, p.parent)
    check_names_fit(p.parent, [p.name, _temporary_name(p, "x" * TEMPORARY_CHARS)], p)


TEMPORARY_CHARS = 8  # the random characters of a temporary file's name (mkstemp's, and plan_folder's tag)


def _temporary_name(p: Path, tag: str) -> str:
    """The name of ``p``'s temporary in :func:`atomic_write_files` (``tag``: its random part)."""
    return f".{p.name}.{tag}"


def check_names_fit(folder: str | Path, names: Iterable[str], target: str | Path) -> None:
    """Raise :class:`OutputError` (one line, naming ``target``) when one of ``names``, the
    file names a write will create in ``folder`` (its targets, their temporaries, a
    marker), is longer than the file system of ``folder`` (or of its nearest existing
    folder, when it is still to be made) takes. Run before the work, so that a long case
    name does not fail after a solve."""
    nearest = Path(folder)
    while _mode(nearest, Path(target)) is None and nearest != nearest.parent:
        nearest = nearest.parent
    try:
        limit = os.pathconf(nearest, "PC_NAME_MAX")
    except (OSError, ValueError):
        limit = NAME_MAX
    for name in names:
        size = len(os.fsencode(name))
        if size > limit:
            raise OutputError(
                f"{target}: cannot write: the file name {name[:40]!r}... is {size} bytes, longer than the "
                f"{limit} its file system takes: give a shorter name"
            )


def encoded(text: str | bytes) -> bytes:
    """The bytes a text file holds: UTF-8, with a character UTF-8 cannot carry (the lone
    surrogate that stands for an undecodable byte of a file name) written as an escape."""
    return text if isinstance(text, bytes) else text.encode("utf-8", "backslashreplace")


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder and a rename."""
    atomic_write_files([(path, text)])


def atomic_write_files(items: Sequence[tuple[str | Path, str | bytes]]) -> None:
    """Write several files all-or-nothing as far as the file system allows: every text goes
    to a temporary file beside its target first, and only when all are complete are they
    renamed into place. A failure before the renames (a folder or another non-regular
    file in the way, no room, no permission) touches no target; it removes the temporary
    files and raises :class:`OutputError` (one line, naming the path). SIGTERM and SIGINT
    are deferred while a temporary is made and written, during the renames and while the
    temporaries are removed (:func:`dansched.interrupt.held`): an interrupted write leaves
    no temporary, and replaces all its targets or none."""
    staged: list[tuple[str, Path]] = []
    try:
        for path, text in items:
            p = Path(path)
            check_target(p)
            with held():  # a temporary is made whole, and staged lists it (for the removal below)
                try:
                    p.parent.mkdir(parents=True, exist_ok=True)
                    fd, tmp = tempfile.mkstemp(prefix=_temporary_name(p, ""), dir=p.parent)
                except OSError as exc:
                    raise OutputError(f"{p}: cannot write: {exc.strerror or exc}") from None
                staged.append((tmp, p))
                try:
                    with os.fdopen(fd, "wb") as fh:
                        os.chmod(tmp, 0o666 & ~_umask())
                        fh.write(encoded(text))
                except OSError as exc:
                    raise OutputError(f"{p}: cannot write: {exc.strerror or exc}") from None
        with held():
            for tmp, p in staged:
                check_target(p)  # again: something may have been put there meanwhile
                try:
                    os.replace(tmp, p)
                except OSError as exc:
                    raise OutputError(f"{p}: cannot write: {exc.strerror or exc}") from None
    finally:
        with held():
            for tmp, _ in staged:
                if os.path.exists(tmp):
                    os.unlink(tmp)
    for _, p in staged:
        note_written(p.parent)


def plan_texts(plan: Plan) -> dict[str, str]:
    """The contest files' texts: ``schedule``, and ``memory`` + ``spill`` for a layout."""
    out = {"schedule": "".join(f"{v}\n" for v in plan.order)}
    if plan.offsets is not None:
        out["memory"] = "".join(f"{b}:{o}\n" for b, o in sorted(plan.offsets))
        out["spill"] = "".join(f"{b}:{o}\n" for b, o in plan.spills)
    return out


def write_plan(plan: Plan, directory: str | Path, case: str, report: str | None = None) -> list[Path]:
    """Write the contest files of ``plan``: the schedule, and memory + spill for a layout,
    and ``<case>_report.json`` when ``report`` is given (all through
    :func:`atomic_write_files`: none is replaced unless all could be written)."""
    check_type(plan, Plan, "write_plan: plan")
    check_path(directory, "write_plan: directory")
    if report is not None:
        check_type(report, str, "write_plan: report")
    paths = contest_paths(directory, case)
    items: list[tuple[Path, str]] = [(paths[k], text) for k, text in plan_texts(plan).items()]
    if report is not None:
        items.append((paths["report"], report))
    atomic_write_files(items)
    return [p for p, _ in items]
