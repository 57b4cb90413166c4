"""Plan: a schedule, an offset per buffer and an ordered spill list (docs/rules.md, section 5),
and the contest files that carry them.

A plan holds exactly what the contest files say, in ``BufId`` values, so that the
evaluator can judge any plan, however wrong. Files are written atomically
(temporary file, then rename) so an interrupted run leaves nothing half-written.

>>> p = Plan(order=(0, 1, 2), offsets=((7, 0),), spills=())
>>> p.problem
2
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from .errors import OutputError, PlanFormatError

__all__ = [
    "Plan",
    "plan_from_indices",
    "read_schedule",
    "read_memory",
    "read_spill",
    "read_plan_dir",
    "write_plan",
    "plan_texts",
    "atomic_write_text",
    "atomic_write_files",
    "CONTEST_SUFFIXES",
    "contest_paths",
    "check_writable_folder",
    "check_output_file",
]


def _shown(text: str, limit: int = 40) -> str:
    """``repr`` of a file's text for a one-line message, shortened when it is long."""
    return repr(text) if len(text) <= limit else repr(text[:limit]) + f"... ({len(text)} characters)"


@dataclass(frozen=True)
class Plan:
    """``order``: node ids (spill ids ``N+2(k-1)``, ``N+2(k-1)+1`` included);
    ``offsets``: ``(BufId, Offset)`` lines, or ``None`` for a problem-1 order;
    ``spills``: ``(BufId, NewOffset)`` in spill order."""

    order: tuple[int, ...]
    offsets: tuple[tuple[int, int], ...] | None = None
    spills: tuple[tuple[int, int], ...] = ()

    @property
    def problem(self) -> int:
        """1 for an order alone, 2 when it carries a layout (problems 2 and 3 share the rules)."""
        return 1 if self.offsets is None else 2


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


def contest_paths(directory: str | Path, case: str) -> dict[str, Path]:
    """``{kind: DIR/<case><suffix>}`` of :data:`CONTEST_SUFFIXES`."""
    d = Path(directory)
    return {k: d / f"{case}{s}" for k, s in CONTEST_SUFFIXES.items()}


def _lines(path: str | Path) -> list[tuple[int, str]]:
    p = Path(path)
    try:
        text = p.read_text()
    except FileNotFoundError:
        raise PlanFormatError(f"{p}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PlanFormatError(f"{p}: cannot read: {exc}") from None
    return [(i, s.strip()) for i, s in enumerate(text.splitlines(), start=1) if s.strip()]


def _int(text: str, path: str | Path, line: int, what: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise PlanFormatError(f"{path}:{line}: {what} must be an integer, got {_shown(text.strip())}") from None


def read_schedule(path: str | Path) -> tuple[int, ...]:
    """One node id per line."""
    return tuple(_int(s, path, i, "a node id") for i, s in _lines(path))


def _read_pairs(path: str | Path, what: str) -> tuple[tuple[int, int], ...]:
    out = []
    for i, s in _lines(path):
        if s.count(":") != 1:
            raise PlanFormatError(f"{path}:{i}: expected 'BufId:{what}', got {_shown(s)}")
        a, b = s.split(":")
        out.append((_int(a, path, i, "BufId"), _int(b, path, i, what)))
    return tuple(out)


def read_memory(path: str | Path) -> tuple[tuple[int, int], ...]:
    """``BufId:Offset`` per line."""
    return _read_pairs(path, "Offset")


def read_spill(path: str | Path) -> tuple[tuple[int, int], ...]:
    """``BufId:NewOffset`` per line, in spill order (an empty file: no spill)."""
    return _read_pairs(path, "NewOffset")


def read_plan_dir(directory: str | Path, case: str) -> Plan:
    """Read ``<case>_schedule.txt`` and, when present, ``_memory.txt`` and ``_spill.txt``."""
    paths = contest_paths(directory, case)
    order = read_schedule(paths["schedule"])
    if not paths["memory"].exists():
        return Plan(order=order)
    spills = read_spill(paths["spill"]) if paths["spill"].exists() else ()
    return Plan(order=order, offsets=read_memory(paths["memory"]), spills=spills)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _check_under(target: Path, folder: Path) -> None:
    """``target`` (a file or folder to create under ``folder``) can be written: the nearest
    existing folder on the way is a folder, and writable."""
    nearest = folder
    while not nearest.exists() and nearest != nearest.parent:
        nearest = nearest.parent
    if nearest.exists() and not nearest.is_dir():
        raise OutputError(f"{target}: cannot write: {nearest} is a file, not a folder")
    if nearest.is_dir() and not os.access(nearest, os.W_OK | os.X_OK):
        raise OutputError(f"{target}: cannot write: {nearest} is not writable")


def check_writable_folder(directory: str | Path) -> None:
    """Raise :class:`OutputError` (one line) when files cannot be written into
    ``directory``: it is a file, it would be created under a file, or the nearest folder
    on its path is not writable. Nothing is created (callers check before long work)."""
    d = Path(directory)
    if d.exists() and not d.is_dir():
        raise OutputError(f"{d}: is a file, not a folder")
    _check_under(d, d)


def check_output_file(path: str | Path) -> None:
    """Raise :class:`OutputError` (one line) when ``path`` cannot be written as a file: it
    is a folder, or its folder cannot be written or created."""
    p = Path(path)
    if p.is_dir():
        raise OutputError(f"{p}: is a folder, not a file name")
    _check_under(p, p.parent)


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder and a rename."""
    atomic_write_files([(path, text)])


def atomic_write_files(items: Sequence[tuple[str | Path, str | bytes]]) -> None:
    """Write several files all-or-nothing as far as the file system allows: every text goes
    to a temporary file beside its target first, and only when all are complete are they
    renamed into place. A failure before the renames (a folder in the way, no room, no
    permission) touches no target; it removes the temporary files and raises
    :class:`OutputError` (one line, naming the path)."""
    staged: list[tuple[str, Path]] = []
    try:
        for path, text in items:
            p = Path(path)
            if p.is_dir():
                raise OutputError(f"{p}: is a folder, not a file name")
            try:
                p.parent.mkdir(parents=True, exist_ok=True)
                fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", dir=p.parent)
            except OSError as exc:
                raise OutputError(f"{p}: cannot write: {exc.strerror or exc}") from None
            staged.append((tmp, p))
            try:
                with os.fdopen(fd, "wb" if isinstance(text, bytes) else "w") as fh:
                    os.chmod(tmp, 0o666 & ~_umask())
                    fh.write(text)
            except OSError as exc:
                raise OutputError(f"{p}: cannot write: {exc.strerror or exc}") from None
        for tmp, p in staged:
            try:
                os.replace(tmp, p)
            except OSError as exc:
                raise OutputError(f"{p}: cannot write: {exc.strerror or exc}") from None
    finally:
        for tmp, _ in staged:
            if os.path.exists(tmp):
                os.unlink(tmp)


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
    paths = contest_paths(directory, case)
    items: list[tuple[Path, str]] = [(paths[k], text) for k, text in plan_texts(plan).items()]
    if report is not None:
        items.append((paths["report"], report))
    atomic_write_files(items)
    return [p for p, _ in items]
