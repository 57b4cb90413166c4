"""Stage 3, memory-aware exact windows (``--exact-window W --exact-window-mode memory``).

Slides the CP-SAT window of :mod:`dansched.models.memory_window` along the
critical chain (Eq. 34) of the current plan. Unlike the fixed-memory windows of
:mod:`dansched.models.timing_window`, memory events inside a window may move, so
segments sharing addresses may swap and the address-reuse edges change; offsets,
spills and traffic stay. Every candidate is judged by the shared evaluator and
kept only when it is valid, strictly faster (Eq. 36), with the same traffic and
spill count; the physical peak may change (problem 3 bounds traffic, not peak).

Deterministic: one worker, a fixed seed, a ``max_deterministic_time`` per window
and a window count derived from ``time_limit`` (:class:`MemoryWindowParams`);
the wall clock is only a safety net.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from ...graph import bottom_level
from ...instance import Instance
from ...models.memory_window import memory_layout, solve_memory_window
from ...plan import Plan
from ...simulate import Evaluation, evaluate
from .exact_window import window_bounds
from .refine import CPEResult, cpe_refine
from .skeleton import Skeleton, critical_chain

__all__ = ["EXACT_WINDOW_MODES", "MemoryWindowParams", "memory_exact_windows", "memory_window_polish"]

EXACT_WINDOW_MODES = ("fixed", "memory")


@dataclass(frozen=True)
class MemoryWindowParams:
    """Budgets of the memory-aware windows: CP-SAT deterministic time per window, and
    windows per second of ``--time-limit`` (a count, so the result does not depend on
    the machine's speed). A window costs about one wall second on official graphs
    (CP-SAT plus one evaluator run), so half a window per second of limit keeps the
    count, not the wall-clock safety net, in charge."""

    deterministic_time: float = 0.5
    windows_per_second: float = 0.5

    def __post_init__(self) -> None:
        if not self.deterministic_time > 0:
            raise ValueError(f"deterministic_time must be positive, got {self.deterministic_time}")
        if not self.windows_per_second > 0:
            raise ValueError(f"windows_per_second must be positive, got {self.windows_per_second}")


def _acceptable(cand: Evaluation, ev: Evaluation) -> bool:
    """Valid, strictly faster, same traffic and spill count. The physical peak may move
    (segments coexist differently; offsets and capacities are unchanged, and problem 3
    bounds traffic, not peak)."""
    return (
        cand.valid
        and cand.makespan < ev.makespan
        and cand.extra_traffic == ev.extra_traffic
        and cand.spill_count == ev.spill_count
    )


def _rejection(cand: Evaluation, ev: Evaluation) -> str:
    """Why the evaluator's verdict ``cand`` was not kept (a stats key)."""
    if not cand.valid:
        return "REJECTED_INVALID"
    if cand.makespan >= ev.makespan:
        return "REJECTED_NOT_FASTER"
    return "REJECTED_TRAFFIC"


def memory_exact_windows(
    inst: Instance,
    plan: Plan,
    ev: Evaluation,
    width: int,
    *,
    time_limit: float = 60.0,
    seed: int = 0,
    params: MemoryWindowParams = MemoryWindowParams(),
) -> tuple[Plan, Evaluation, dict[str, Any]]:
    """Polish the valid ``plan`` (judged as ``ev``, with its augmented graph) with
    memory-aware windows of ``width`` operation nodes. Returns (plan, evaluation, stats);
    the plan is ``plan`` itself when no window helped."""
    assert ev.valid and ev.graph is not None and ev.start is not None and ev.end is not None
    t0 = time.monotonic()
    lay = memory_layout(inst, plan)
    max_windows = max(1, int(params.windows_per_second * time_limit))
    solved = improved = evaluated = 0
    statuses: dict[str, int] = {}
    done_centers: set[int] = set()
    first = ev.makespan
    while solved < max_windows and time.monotonic() - t0 < time_limit:
        g = ev.graph
        order = list(plan.order)
        pos = [0] * g.n
        for i, v in enumerate(order):
            pos[v] = i
        chain = critical_chain(Skeleton(g, [], ()), order, ev.start, ev.end)  # uses the timing graph only
        centers = [pos[v] for v in chain if g.pipe[v] >= 0 and pos[v] not in done_centers]
        if not centers:
            break
        rest = [t - c for t, c in zip(bottom_level(g.preds, g.cycles, order), g.cycles)]
        reuse = set(g.reuse_edges)
        succs = g.succs()
        progressed = False
        for c in centers:
            if solved >= max_windows or time.monotonic() - t0 >= time_limit:
                break
            lo, hi = window_bounds(order, g.pipe, c, width)
            done_centers.update(range(lo, hi))
            seq, st = solve_memory_window(
                inst,
                g,
                lay,
                order,
                pos,
                lo,
                hi,
                ev.start,
                ev.end,
                rest,
                reuse,
                succs,
                deterministic_time=params.deterministic_time,
                wall_time=time_limit - (time.monotonic() - t0),
                seed=seed,
            )
            solved += 1
            statuses[st["status"]] = statuses.get(st["status"], 0) + 1
            if seq is None:
                continue
            cand_plan = Plan(order=tuple(order[:lo] + seq + order[hi:]), offsets=plan.offsets, spills=plan.spills)
            cand = evaluate(inst, cand_plan)
            evaluated += 1
            if _acceptable(cand, ev):
                plan, ev = cand_plan, cand
                improved += 1
                done_centers.clear()
                progressed = True
                break
            why = _rejection(cand, ev)
            statuses[why] = statuses.get(why, 0) + 1
        if not progressed:
            break
    stats = {
        "mode": "memory",
        "width": width,
        "windows": solved,
        "evaluated": evaluated,
        "improved": improved,
        "statuses": statuses,
        "makespan_before": first,
        "makespan_after": ev.makespan,
        # True when the wall-clock safety net, not the window count, ended the search
        "stopped_by_clock": time.monotonic() - t0 >= time_limit,
    }
    return plan, ev, stats


def memory_window_polish(
    inst: Instance,
    s3: CPEResult,
    ev3: Evaluation,
    width: int,
    *,
    time_limit: float,
    seed: int,
    params: MemoryWindowParams = MemoryWindowParams(),
) -> tuple[CPEResult, Evaluation]:
    """The pipeline's hook: memory-aware windows on CPE's result ``s3`` (judged as ``ev3``),
    then CPE again inside the new memory skeleton; the faster result, with
    ``info["exact_windows_memory"]`` holding the window statistics."""
    plan, ev, stats = memory_exact_windows(inst, s3.plan, ev3, width, time_limit=time_limit, seed=seed, params=params)
    info = dict(s3.info, exact_windows_memory=stats)
    if ev.makespan >= ev3.makespan:
        return CPEResult(s3.plan, info), ev3
    again = cpe_refine(inst, plan, ev)
    ev_again = evaluate(inst, again.plan)
    if _acceptable(ev_again, ev):
        plan, ev = again.plan, ev_again
        stats["makespan_after_cpe"] = ev.makespan
    info["found_by"] = f"{s3.info.get('found_by', 'CPE')} + memory-aware CP-SAT windows"
    return CPEResult(plan, info), ev
