"""Plan: a schedule, an offset per buffer and an ordered spill list (SPEC sections 4-5),
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
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

__all__ = [
    "Plan",
    "PlanFormatError",
    "plan_from_indices",
    "read_schedule",
    "read_memory",
    "read_spill",
    "read_plan_dir",
    "write_plan",
    "atomic_write_text",
    "contest_paths",
]


class PlanFormatError(ValueError):
    """A plan file that cannot be parsed at all (bad input, exit status 2)."""


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


def plan_from_indices(
    inst, order: Iterable[int], offsets: Sequence[int] | np.ndarray | None = None,
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


def contest_paths(directory: str | Path, case: str) -> dict[str, Path]:
    d = Path(directory)
    return {
        "schedule": d / f"{case}_schedule.txt",
        "memory": d / f"{case}_memory.txt",
        "spill": d / f"{case}_spill.txt",
        "report": d / f"{case}_report.json",
    }


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
        raise PlanFormatError(f"{path}:{line}: {what} must be an integer, got {text.strip()!r}") from None


def read_schedule(path: str | Path) -> tuple[int, ...]:
    """One node id per line."""
    return tuple(_int(s, path, i, "a node id") for i, s in _lines(path))


def _read_pairs(path: str | Path, what: str) -> tuple[tuple[int, int], ...]:
    out = []
    for i, s in _lines(path):
        if s.count(":") != 1:
            raise PlanFormatError(f"{path}:{i}: expected 'BufId:{what}', got {s!r}")
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


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder and a rename."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", dir=p.parent)
    try:
        os.chmod(tmp, 0o666 & ~_umask())
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(tmp, p)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_plan(plan: Plan, directory: str | Path, case: str) -> list[Path]:
    """Write the contest files of ``plan``: the schedule, and memory + spill for a layout."""
    paths = contest_paths(directory, case)
    atomic_write_text(paths["schedule"], "".join(f"{v}\n" for v in plan.order))
    written = [paths["schedule"]]
    if plan.offsets is not None:
        atomic_write_text(paths["memory"], "".join(f"{b}:{o}\n" for b, o in sorted(plan.offsets)))
        atomic_write_text(paths["spill"], "".join(f"{b}:{o}\n" for b, o in plan.spills))
        written += [paths["memory"], paths["spill"]]
    return written
