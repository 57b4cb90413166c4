"""``cosma``: COSMA-style fixed-order joint allocation and replacement (Li et al., 2023)
as a CP-SAT model on the MPAS order.

COSMA decides, for a given operator order, where every tensor lives and which ones
are replaced (evicted and reloaded) in one optimisation model. Here that model is
:func:`dansched.models.exact.placement.fixed_order_placement` (NoOverlap2D per tier over
residency points and kept gaps, one Boolean per gap for a spill, traffic
minimised) on Stage 1's order with lifetimes tightened (the order DLR starts from,
:func:`~dansched.stages.dlr.reorder.tighten_lifetimes`). The solver is hinted with the
plan DLR finds on that same order (``dlr_plan(..., other_orders=False)``) when the two
orders agree, so it starts from a valid plan and can only improve it.

Budget: ``max_deterministic_time = time_limit / 20`` (what makes the result
reproducible: one deterministic unit took 5-15 wall seconds on the 2 shared cores
we measured on) and a wall-clock safety limit of ``10 * time_limit`` that should
never fire. When the model
is too large or no solution is found in time, the DLR plan of the same order is
returned instead and ``info["fallback"]`` says why. No timing stage.
"""

from __future__ import annotations

from ...instance import Instance
from ...models.exact.placement import fixed_order_placement
from ...simulate import evaluate
from ...stages.dlr.reorder import tighten_lifetimes
from ...stages.dlr.stage import dlr_plan
from ...stages.mpas.stage import mpas_order
from .common import MethodResult, Stopwatch

__all__ = ["run"]


def run(inst: Instance, time_limit: float = 60.0) -> MethodResult:
    """CP-SAT placement and spills on the MPAS order; DLR's plan as hint and fallback."""
    sw = Stopwatch()
    order = tighten_lifetimes(inst, mpas_order(inst).order)
    sw.lap("mpas")
    dlr = dlr_plan(inst, order, other_orders=False)
    hint = dlr.plan if [v for v in dlr.plan.order if v < inst.n] == order else None
    sw.lap("dlr-hint")
    res = fixed_order_placement(
        inst,
        order,
        allow_spills=True,
        hint=hint,
        deterministic_time=max(0.1, time_limit / 20),
        time_limit=max(1.0, 10 * time_limit),
    )
    sw.lap("cp-sat")
    info = {
        "status": res.status,
        "hinted": hint is not None,
        "hint_traffic": dlr.evaluation.extra_traffic,
        "traffic_bound": res.bound,
        "rectangles": res.stats.get("rectangles"),
    }
    if res.plan is not None:
        ev = evaluate(inst, res.plan)
        if ev.valid:
            return MethodResult(res.plan, info | {"stage_seconds": sw.seconds})
        why = f"the CP-SAT plan is invalid ({ev.first_violation('unknown')})"
    elif res.status == "TOO_LARGE":
        why = f"model too large ({res.stats.get('rectangles')} rectangles)"
    else:
        why = f"no CP-SAT solution within the budget (status {res.status})"
    info["fallback"] = f"{why}: DLR's plan of the same order"
    return MethodResult(dlr.plan, info | {"stage_seconds": sw.seconds})
