"""Stage 2's order search for traffic: methods that may find a plan with less traffic than DLR's.

Problem 2 is decided by the order: for the orders DLR tries, its traffic already
meets the fixed-order optimum, so what is left is the choice of order. After
:func:`~dansched.stages.dlr.stage.dlr_plan`, :func:`search_order` runs, within a
deterministic budget:

- **exact** (graphs of at most :attr:`OrderSearchParams.exact_max_nodes` nodes): the
  joint order + residency + offsets + spills CP-SAT model
  (:func:`dansched.models.exact.joint.joint_min_traffic`) hinted with DLR's plan. Its
  optimum is the problem-2 optimum over every valid plan; ``proven_optimal`` says
  whether CP-SAT proved it within the budget, ``bound`` is its proven lower bound.
- **wave** (regular graphs, :mod:`dansched.stages.dlr.wave_search`): sweeps over the
  output tiles of blocked reductions, each scored by an exact replay of the scan.
- **lns** (graphs of at most ``LnsParams.max_nodes`` nodes, :mod:`dansched.stages.dlr.window_lns`):
  exact CP-SAT windows over the best plan so far (order, residency, offsets and spills
  inside each window, the rest fixed), spill windows first, within a deterministic budget.

A method's plan replaces DLR's only when the shared evaluator accepts it and it
has less traffic (then fewer spills). The report's ``stages.dlr`` gets
``found_by`` (``dlr``, ``exact``, ``wave`` or ``lns``), ``proven_optimal``, where a
bound exists ``bound`` and ``gap`` (traffic - bound), and when the windows ran
``order_search.lns.improved`` (how many windows improved the plan).
"""

from __future__ import annotations

import time
from dataclasses import replace

from ...errors import JointModelError, JointModelTooLarge, NoLegalOrderError
from ...instance import Instance
from ...interrupt import stopping
from ...models.exact.joint import joint_min_traffic
from ...params import OrderSearchParams, Progress
from ...plan import Plan
from ...simulate import Evaluation, evaluate
from .stage import DlrResult
from .stats import ExactStats, OrderSearchStats
from .wave_search import wave_search
from .window_lns import window_lns

__all__ = ["search_order"]


def _key(ev: Evaluation) -> tuple[int, int]:
    m = ev.metrics
    return (m.extra_traffic, m.spill_count)


def _traffic(ev: Evaluation) -> int:
    return ev.metrics.extra_traffic


def _accepted(inst: Instance, plan: Plan | None) -> Evaluation | None:
    """The evaluator's verdict on ``plan`` when it is a valid plan, else ``None``."""
    if plan is None:
        return None
    ev = evaluate(inst, plan)
    return ev if ev.valid else None


def search_order(
    inst: Instance,
    s2: DlrResult,
    params: OrderSearchParams = OrderSearchParams(),
    time_limit: float = 60.0,
    seed: int = 0,
    progress: Progress | None = None,
) -> DlrResult:
    """DLR's result ``s2``, or a better plan from the wave, exact or window method (module
    docstring), its ``stats`` extended by ``found_by``, ``proven_optimal``, the bound where
    known and what each method did (:class:`~dansched.stages.dlr.stats.OrderSearchStats`). ``time_limit`` (wall seconds) is only a
    safety net; the budgets are deterministic. DLR's ``variants`` are passed on."""
    say = progress or (lambda _m: None)
    best_plan, best_ev, found_by = s2.plan, s2.evaluation, "dlr"
    wave = exact = lns = None
    bound: int | None = 0 if _traffic(best_ev) == 0 else None
    proven = _traffic(best_ev) == 0
    deadline = time.perf_counter() + 10 * max(0.0, time_limit)  # a safety net: the budgets above are counts
    if _traffic(best_ev) > 0 and params.wave and not stopping():  # a stop request: DLR's plan (dansched.interrupt)
        say("Stage 2: wave search")
        got = wave_search(inst, params.wave_params, deadline=deadline)
        if got is not None:
            wave = got.stats
            if _key(got.evaluation) < _key(best_ev):  # DLR judged it
                best_plan, best_ev, found_by = got.plan, got.evaluation, "wave"
    if _traffic(best_ev) > 0 and params.exact and inst.n <= params.exact_max_nodes and not stopping():
        say("Stage 2: exact joint model")
        t0 = time.perf_counter()
        left = deadline - time.perf_counter()
        if left > 0.5:
            try:
                res = joint_min_traffic(
                    inst,
                    hint=best_plan,
                    deterministic_time=params.exact_deterministic_time,
                    time_limit=left,
                    seed=seed,
                    max_nodes=params.exact_max_nodes,
                )
            except (JointModelError, JointModelTooLarge, NoLegalOrderError) as exc:  # keep DLR's plan
                exact = ExactStats(error=str(exc))
            else:
                exact = ExactStats(
                    res.status,
                    res.traffic,
                    res.bound,
                    time.perf_counter() - t0,
                    res.stats.get("deterministic_time"),
                )
                bound = max(bound or 0, res.bound)
                ev = _accepted(inst, res.plan)
                if ev is not None and res.plan is not None and _key(ev) < _key(best_ev):
                    best_plan, best_ev, found_by = res.plan, ev, "exact"
                proven = res.optimal and res.traffic is not None and _traffic(best_ev) <= res.traffic
    if (
        _traffic(best_ev) > 0 and params.lns and not proven and not stopping()
    ):  # skips past lns_params.max_nodes at once
        say("Stage 2: exact order windows")
        got_lns = window_lns(inst, best_plan, best_ev, params.lns_params, seed=seed, deadline=deadline)
        lns = got_lns.stats
        if _key(got_lns.evaluation) < _key(best_ev):
            best_plan, best_ev, found_by = got_lns.plan, got_lns.evaluation, "lns"
    optimal = bool(proven or (bound is not None and bound >= _traffic(best_ev)))
    stats = s2.stats.searched(found_by, optimal, bound, OrderSearchStats(wave, exact, lns))
    if found_by == "dlr":
        return replace(s2, stats=stats)
    return DlrResult(best_plan, best_ev, stats, s2.variants)
