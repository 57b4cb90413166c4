"""Exact CP-SAT polish of Stage 3 with the memory fixed (``dansched solve --exact-window W``).

Windows of W operation nodes (plus the cache nodes between them) slide along the
critical chain (:mod:`dansched.models.windows.driver`); each is the model of
:mod:`dansched.models.windows.fixed`: the order inside the window is free within the
memory skeleton R(sigma2, G2) (paper Eq. 14), everything outside keeps its order and
its start times. A window's order is re-timed by the cycle simulator and kept only if
the makespan is strictly lower (Eq. 36).

Deterministic: one worker, a fixed seed, a ``max_deterministic_time`` budget per
window and a window count derived from ``time_limit`` (10 windows per second of
limit); the wall-clock ``time_limit`` itself is only a safety net, and output is
byte-identical whenever that net does not trigger.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...models.windows.driver import WindowStats, slide_windows
from ...models.windows.fixed import solve_timing_window
from ...models.windows.seam import WindowOutcome, schedule_of
from ...simulate import Timing, simulate_timing
from .skeleton import Skeleton, critical_chain

__all__ = ["exact_windows"]


class _FixedRound:
    """One round of fixed-memory windows on the order ``order`` timed as ``timing`` (a
    :class:`~dansched.models.windows.driver.WindowRound`)."""

    def __init__(self, skel: Skeleton, order: list[int], timing: Timing, deterministic_time: float, seed: int) -> None:
        self.skel, self.deterministic_time, self.seed = skel, deterministic_time, seed
        self.order = order
        self.pipe = timing.graph.pipe
        self.chain = critical_chain(timing.graph, order, timing.start, timing.end)
        self.sched = schedule_of(timing, order)

    def solve(self, lo: int, hi: int, wall_time: float) -> WindowOutcome[list[int]]:
        return solve_timing_window(
            self.sched,
            self.skel.order_preds,
            lo,
            hi,
            deterministic_time=self.deterministic_time,
            wall_time=wall_time,
            seed=self.seed,
        )


def exact_windows(
    skel: Skeleton,
    order: Sequence[int],
    width: int,
    *,
    time_limit: float = 60.0,
    seed: int = 0,
    deterministic_time: float = 0.5,
    max_windows: int | None = None,
) -> tuple[list[int], int, WindowStats]:
    """Slide CP-SAT windows of ``width`` operation nodes along the critical chain,
    keeping each strictly faster order. Returns (order, makespan, what the slide did)."""
    g = skel.timing
    order = list(order)
    start, end, best = simulate_timing(order, g.preds, g.pipe, g.cycles)
    if max_windows is None:  # a count, not the clock, decides how far we go: deterministic
        max_windows = max(1, int(10 * time_limit))

    def judge(cur: tuple[list[int], Timing], cand: list[int]) -> tuple[tuple[list[int], Timing] | None, str | None]:
        s2, e2, m2 = simulate_timing(cand, g.preds, g.pipe, g.cycles)
        return ((cand, Timing(g, s2, e2, m2)) if m2 < cur[1].makespan else None), None

    run = slide_windows(
        (order, Timing(g, start, end, best)),
        width,
        start_round=lambda cur: _FixedRound(skel, cur[0], cur[1], deterministic_time, seed),
        judge=judge,
        max_windows=max_windows,
        time_limit=time_limit,
    )
    final, timing = run.state
    return final, timing.makespan, WindowStats.of(run, "fixed", width, best, timing.makespan)
