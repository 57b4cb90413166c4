"""Stage 3, memory-aware exact windows (``--exact-window W --exact-window-mode memory``).

Slides the CP-SAT window of :mod:`dansched.models.windows.memory` along the
critical chain (Eq. 34) of the current plan, with the driver the fixed-memory
windows use too (:mod:`dansched.models.windows.driver`). Unlike the fixed-memory
windows of :mod:`dansched.models.windows.fixed`, memory events inside a window may move, so
segments sharing addresses may swap and the address-reuse edges change; offsets,
spills and traffic stay. Every candidate is judged by the shared evaluator and
kept only when it is valid, strictly faster (Eq. 36), with the same traffic and
spill count; the physical peak may change (problem 3 bounds traffic, not peak).

Deterministic: one worker, a fixed seed, a ``max_deterministic_time`` per window
and a window count (:class:`~dansched.params.MemoryWindowParams`); the wall clock is
only a safety net.
"""

from __future__ import annotations

from dataclasses import replace

from ....instance import Instance
from ....models.windows.driver import WindowStats, slide_windows
from ....models.windows.memory import MemoryWindowContext, solve_memory_window
from ....models.windows.seam import WindowOutcome, schedule_of
from ....params import CpeParams, MemoryWindowParams
from ....plan import Plan
from ....simulate import Evaluation, evaluate
from ....stages.cpe.refine import CPEResult, cpe_refine
from ....stages.cpe.skeleton import critical_chain

__all__ = ["memory_exact_windows", "memory_window_polish"]


def _acceptable(cand: Evaluation, ev: Evaluation) -> bool:
    """Valid, strictly faster, same traffic and spill count. The physical peak may move
    (segments coexist differently; offsets and capacities are unchanged, and problem 3
    bounds traffic, not peak)."""
    if not cand.valid:
        return False
    new, old = cand.metrics, ev.metrics
    return new.makespan < old.makespan and (new.extra_traffic, new.spill_count) == (old.extra_traffic, old.spill_count)


def _rejection(cand: Evaluation, ev: Evaluation) -> str:
    """Why the evaluator's verdict ``cand`` was not kept (a stats key)."""
    if not cand.valid:
        return "REJECTED_INVALID"
    if cand.metrics.makespan >= ev.metrics.makespan:
        return "REJECTED_NOT_FASTER"
    return "REJECTED_TRAFFIC"


class _MemoryRound:
    """One round of memory-aware windows on ``plan`` (a :class:`~dansched.models.windows.driver.WindowRound`)."""

    def __init__(self, inst: Instance, plan: Plan, ev: Evaluation, seed: int, params: MemoryWindowParams) -> None:
        timing = ev.timing
        assert timing is not None, "a full plan's evaluation"
        g = timing.graph
        self.seed, self.params = seed, params
        self.order = list(plan.order)
        self.pipe = g.pipe
        self.chain = critical_chain(g, self.order, timing.start, timing.end)
        self.ctx = MemoryWindowContext.of(inst, ev.segments(), schedule_of(timing, self.order))

    def solve(self, lo: int, hi: int, wall_time: float) -> WindowOutcome[list[int]]:
        return solve_memory_window(
            self.ctx, lo, hi, deterministic_time=self.params.deterministic_time, wall_time=wall_time, seed=self.seed
        )


def memory_exact_windows(
    inst: Instance, plan: Plan, ev: Evaluation, params: MemoryWindowParams, *, seed: int = 0
) -> tuple[Plan, Evaluation, WindowStats]:
    """Polish the valid ``plan`` (judged as ``ev``, with its augmented graph) with
    ``params.windows`` memory-aware windows of ``params.width`` operation nodes
    (``params.wall_seconds`` the wall-clock safety net). Returns (plan, evaluation, what the
    slide did); the plan is ``plan`` itself when no window helped."""
    assert ev.valid and ev.graph is not None and ev.start is not None and ev.end is not None
    first = ev.metrics.makespan

    def judge(cur: tuple[Plan, Evaluation], order: list[int]) -> tuple[tuple[Plan, Evaluation] | None, str | None]:
        cur_plan, cur_ev = cur
        cand_plan = Plan(order=tuple(order), offsets=cur_plan.offsets, spills=cur_plan.spills)
        cand = evaluate(inst, cand_plan)
        if _acceptable(cand, cur_ev):
            return (cand_plan, cand), None
        return None, _rejection(cand, cur_ev)

    run = slide_windows(
        (plan, ev),
        params.width,
        start_round=lambda cur: _MemoryRound(inst, cur[0], cur[1], seed, params),
        judge=judge,
        max_windows=params.windows,
        time_limit=params.wall_seconds,
    )
    plan, ev = run.state
    return plan, ev, WindowStats.of(run, "memory", params.width, first, ev.metrics.makespan)


def memory_window_polish(
    inst: Instance,
    s3: CPEResult,
    ev3: Evaluation,
    params: MemoryWindowParams,
    *,
    seed: int = 0,
    cpe: CpeParams = CpeParams(),
) -> tuple[CPEResult, Evaluation]:
    """The problem-3 hook: memory-aware windows on CPE's result ``s3`` (judged as ``ev3``),
    then CPE (``cpe``: its parameters) again inside the new memory skeleton; the faster
    result, its ``stats.memory_windows`` saying what the windows did."""
    plan, ev, stats = memory_exact_windows(inst, s3.plan, ev3, params, seed=seed)
    if ev.metrics.makespan >= ev3.metrics.makespan:
        return CPEResult(s3.plan, replace(s3.stats, memory_windows=stats), s3.makespan), ev3
    again = cpe_refine(inst, plan, ev, params=cpe)
    ev_again = evaluate(inst, again.plan)
    if _acceptable(ev_again, ev):
        plan, ev = again.plan, ev_again
        stats = replace(stats, makespan_after_cpe=ev.metrics.makespan)
    found_by = f"{s3.stats.found_by} + memory-aware CP-SAT windows"
    cpe_stats = replace(s3.stats, found_by=found_by, memory_windows=stats)
    return CPEResult(plan, cpe_stats, ev.metrics.makespan), ev
