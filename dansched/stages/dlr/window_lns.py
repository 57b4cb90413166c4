"""Exact windows over the order for problem 2: a large-neighbourhood
search that slides :func:`dansched.models.windows.order.solve_order_window` over a
Stage-2 plan.

The plan is read in the joint model's terms (:func:`~dansched.models.windows.order.point_plan`:
order, points, offsets, spilled gaps). A window of ``LnsParams.window`` consecutive
positions is re-optimised exactly (order, residency, offsets and spills inside it;
the rest fixed, see :mod:`dansched.models.windows.order`). Only a spilled gap with
both points inside a window can disappear there, so a window is solved only when it
holds one. Windows, in this order:

1. centred on each spilled gap short enough to fit, the most expensive spill first
   (then by position, then buffer index);
2. sliding over the whole plan with a stride of half a window.

Each pass tries them all (skipping windows without an inner spill); passes repeat
while one improved, up to ``max_passes``. A window's plan is kept only when the
shared evaluator :func:`dansched.simulate.evaluate` accepts it with strictly less
extra traffic (ties: fewer spills). The search stops when the windows solved reach
``max_windows`` or CP-SAT's deterministic time reaches ``total_deterministic_time``
(each window gets at most ``window_deterministic_time``), so the result does not
depend on the machine; the wall-clock ``deadline`` is only a safety net. Graphs of
more than ``max_nodes`` nodes are skipped before any work.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ...instance import Instance
from ...interrupt import stopping
from ...models.exact.joint import spill_cost
from ...models.windows.order import (
    PointPlan,
    inner_spills,
    point_plan,
    precedence,
    solve_order_window,
    window_buffers,
)
from ...params import LnsParams
from ...plan import Plan
from ...simulate import Evaluation, evaluate
from .stats import LnsStats

__all__ = ["LnsResult", "spill_windows", "window_lns"]


@dataclass
class LnsResult:
    """The best plan found (the input plan when no window improved it), its evaluation,
    and what the search did (``stats``: how many windows improved it among them)."""

    plan: Plan
    evaluation: Evaluation
    stats: LnsStats

    @property
    def improved(self) -> int:
        return self.stats.improved


def _key(ev: Evaluation) -> tuple[int, int]:
    m = ev.metrics
    return (m.extra_traffic, m.spill_count)


def spill_windows(inst: Instance, pp: PointPlan, window: int) -> list[int]:
    """Window starts: centred on each spilled gap that fits in ``window`` positions, the
    most expensive spill first, then the sliding windows; each start once."""
    n = len(pp.base)
    width = min(window, n)
    gaps = []
    for b, p in enumerate(pp.pts):
        for j, spilled in enumerate(pp.spilled[b]):
            if spilled and p[j + 1] - p[j] < width:
                gaps.append((-spill_cost(inst, b), p[j], b, (p[j] + p[j + 1]) // 2))
    gaps.sort()
    starts = [max(0, min(n - width, mid - width // 2)) for *_, mid in gaps]
    stride = max(1, width // 2)
    starts += list(range(0, n - width + 1, stride))
    if starts and starts[-1] != n - width:
        starts.append(n - width)
    return list(dict.fromkeys(starts))


def window_lns(
    inst: Instance,
    plan: Plan,
    evaluation: Evaluation,
    params: LnsParams = LnsParams(),
    *,
    seed: int = 0,
    deadline: float | None = None,
) -> LnsResult:
    """Slide exact windows over ``plan`` (a valid plan with ``evaluation``); see the module
    docstring. ``deadline``: a ``time.perf_counter()`` value, only a safety net."""
    t0 = time.perf_counter()
    if inst.n > params.max_nodes:
        return LnsResult(plan, evaluation, LnsStats(skipped=f"{inst.n} nodes > max_nodes={params.max_nodes}"))
    if evaluation.extra_traffic == 0:
        return LnsResult(plan, evaluation, LnsStats(skipped="no traffic"))
    best_plan, best_ev = plan, evaluation
    pp = point_plan(inst, plan)
    canon = pp.to_plan(inst)
    canon_ev = evaluate(inst, canon)
    if not canon_ev.valid:  # cannot happen for a valid plan (order_window docstring); keep the plan
        return LnsResult(plan, evaluation, LnsStats(skipped="canonical form rejected by the evaluator"))
    if _key(canon_ev) < _key(best_ev):
        best_plan, best_ev = canon, canon_ev
    succ = precedence(inst)
    improved = rejected = windows = 0
    used = 0.0
    stop = ""
    for _pass in range(params.max_passes):
        changed = False
        for lo in spill_windows(inst, pp, params.window):
            hi = min(len(pp.base), lo + params.window)
            if inner_spills(pp, lo, hi, window_buffers(inst, pp.base[lo:hi])) == 0:
                continue
            if windows >= params.max_windows:
                stop = "max_windows"
                break
            left = params.total_deterministic_time - used
            if left <= 1e-3:
                stop = "total_deterministic_time"
                break
            wall = float("inf") if deadline is None else deadline - time.perf_counter()
            if wall <= 0.05:
                stop = "deadline"
                break
            if stopping():  # a stop request (dansched.interrupt): the best plan so far
                stop = "stopped early"
                break
            res = solve_order_window(
                inst,
                pp,
                lo,
                hi,
                succ,
                deterministic_time=min(params.window_deterministic_time, left),
                time_limit=min(wall, 3600.0),
                seed=seed,
                max_shift=params.max_shift,
            )
            windows += 1
            used += res.stats.deterministic_time
            if res.plan is None:
                continue
            cand = res.plan.to_plan(inst)
            ev = evaluate(inst, cand)
            if not ev.valid:
                rejected += 1
                continue
            if _key(ev) < _key(best_ev):
                pp, best_plan, best_ev = res.plan, cand, ev
                improved += 1
                changed = True
        if stop or not changed:
            break
    stats = LnsStats(
        windows=windows,
        improved=improved,
        deterministic_time=used,
        rejected=rejected,
        traffic_before=evaluation.metrics.extra_traffic,
        traffic=best_ev.metrics.extra_traffic,
        seconds=time.perf_counter() - t0,
        stopped=stop,
    )
    return LnsResult(best_plan, best_ev, stats)
