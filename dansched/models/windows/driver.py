"""The one driver that slides exact CP-SAT windows along the critical chain (paper
Eq. 34), shared by the fixed-memory windows (:mod:`dansched.stages.cpe.exact_window`)
and the memory-aware ones (:mod:`dansched.pipeline.problem3.stage3.polish`).

Each round starts from the current plan: its critical chain gives the window centres
(positions of chain pipe nodes not yet covered by a window of this plan). For each
centre, the window of ``width`` operation nodes around it (:func:`window_bounds`) is
solved; a new order is judged, and the first one the judge keeps (strictly faster,
Eq. 36) becomes the current plan and starts a new round. The search ends when a round
keeps nothing, after ``max_windows`` windows, or when the wall-clock safety net
``time_limit`` runs out (:attr:`WindowRun.stopped_by_clock` says so). The count, not
the clock, decides how far it goes, so the result is deterministic whenever the net
does not fire.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from ...interrupt import stopping
from .seam import WindowOutcome

__all__ = ["window_bounds", "WindowRound", "WindowRun", "WindowStats", "slide_windows"]

State = TypeVar("State")


def window_bounds(order: Sequence[int], pipe: Sequence[int], center: int, width: int) -> tuple[int, int]:
    """Positions ``[lo, hi)`` holding ``width`` operation nodes around position ``center``.

    >>> window_bounds([0, 1, 2, 3, 4, 5], [-1, 0, 0, -1, 1, 1], 2, 2)
    (1, 3)
    """
    lo = hi = center
    ops = 0
    before = width // 2
    while lo > 0 and before > 0:
        lo -= 1
        if pipe[order[lo]] >= 0:
            before -= 1
            ops += 1
    while hi < len(order) and ops < width:
        if pipe[order[hi]] >= 0:
            ops += 1
        hi += 1
    while lo > 0 and ops < width:
        lo -= 1
        if pipe[order[lo]] >= 0:
            ops += 1
    return lo, hi


class WindowRound(Protocol):
    """One round on the current plan: its ``order``, the ``pipe`` of each node (-1 for
    cache nodes), its critical ``chain`` (node ids, first to last) and the window model."""

    @property
    def order(self) -> list[int]: ...

    @property
    def pipe(self) -> Sequence[int]: ...

    @property
    def chain(self) -> list[int]: ...

    def solve(self, lo: int, hi: int, wall_time: float) -> WindowOutcome[list[int]]:
        """The window model's outcome on positions ``[lo, hi)``: its new node sequence (None:
        keep them), its status (counted per window) and stats."""
        ...


@dataclass
class WindowRun(Generic[State]):
    """What a slide reached: the final state, windows solved, orders evaluated, orders kept,
    a count per status (solver statuses and the judge's rejections), and whether the
    wall-clock safety net ended the search."""

    state: State
    windows: int = 0
    evaluated: int = 0
    improved: int = 0
    statuses: dict[str, int] = field(default_factory=dict)
    stopped_by_clock: bool = False


@dataclass(frozen=True)
class WindowStats:
    """What a slide of exact windows did, as the report shows it: the ``mode`` (``fixed``:
    memory events keep their order; ``memory``: they may move), the width in operation
    nodes, windows solved, orders evaluated, orders kept, a count per status, whether the
    wall-clock safety net ended it, and the makespan before and after (and after CPE again,
    for the memory-aware windows)."""

    mode: str
    width: int
    windows: int
    evaluated: int
    improved: int
    statuses: dict[str, int]
    stopped_by_clock: bool
    makespan_before: int
    makespan_after: int
    makespan_after_cpe: int | None = None

    @classmethod
    def of(cls, run: WindowRun[Any], mode: str, width: int, before: int, after: int) -> WindowStats:
        return cls(
            mode,
            width,
            run.windows,
            run.evaluated,
            run.improved,
            dict(run.statuses),
            run.stopped_by_clock,
            before,
            after,
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "mode": self.mode,
            "width": self.width,
            "windows": self.windows,
            "evaluated": self.evaluated,
            "improved": self.improved,
            "statuses": self.statuses,
            "makespan_before": self.makespan_before,
            "makespan_after": self.makespan_after,
            "stopped_by_clock": self.stopped_by_clock,
        }
        if self.makespan_after_cpe is not None:
            out["makespan_after_cpe"] = self.makespan_after_cpe
        return out


def slide_windows(
    state: State,
    width: int,
    *,
    start_round: Callable[[State], WindowRound],
    judge: Callable[[State, list[int]], tuple[State | None, str | None]],
    max_windows: int,
    time_limit: float,
) -> WindowRun[State]:
    """Slide windows of ``width`` operation nodes over ``state`` (module docstring).
    ``start_round`` gives the round of a state; ``judge`` turns a full candidate order into
    the next state, or ``None`` with the reason to count (or ``None`` for no count)."""
    t0 = time.monotonic()
    run = WindowRun(state)
    done_centers: set[int] = set()

    def clock_left() -> bool:
        return time.monotonic() - t0 < time_limit

    def more() -> bool:  # the clock, and no stop request (dansched.interrupt.stopping)
        return clock_left() and not stopping()

    while run.windows < max_windows and more():
        rnd = start_round(run.state)
        pos = {v: i for i, v in enumerate(rnd.order)}
        centers = [pos[v] for v in rnd.chain if rnd.pipe[v] >= 0 and pos[v] not in done_centers]
        if not centers:
            break
        progressed = False
        for c in centers:
            if run.windows >= max_windows or not more():
                break
            lo, hi = window_bounds(rnd.order, rnd.pipe, c, width)
            done_centers.update(range(lo, hi))
            got = rnd.solve(lo, hi, time_limit - (time.monotonic() - t0))
            run.windows += 1
            run.statuses[got.status] = run.statuses.get(got.status, 0) + 1
            if got.plan is None:
                continue
            run.evaluated += 1
            kept, why = judge(run.state, rnd.order[:lo] + got.plan + rnd.order[hi:])
            if kept is not None:
                run.state = kept
                run.improved += 1
                done_centers.clear()
                progressed = True
                break
            if why is not None:
                run.statuses[why] = run.statuses.get(why, 0) + 1
        if not progressed:
            break
    run.stopped_by_clock = not clock_left()
    return run
