"""Heuristic quality audit: lower bounds, optimality gaps and certified optima
(``dansched bound`` and ``dansched audit``).

Every figure dansched prints comes with how far it can be from the best possible:

- ``max_v_stay``: the best structural bound of :mod:`dansched.models.peak`; on
  graphs small enough, the exact minimum-peak order of :mod:`dansched.models.order`
  (then the bound is the optimum itself);
- ``extra_traffic``: a *global* bound only where it can be argued (0 otherwise,
  said so), and a *fixed-order* bound for the plan's order: the larger of the
  per-position capacity cover (:mod:`dansched.models.traffic`) and the CP-SAT
  placement model's proven bound (:mod:`dansched.models.placement`), which also
  certifies the plan when it meets it;
- ``makespan``: the floors of :mod:`dansched.models.floors`: busiest pipe load and
  longest path, and the head-body-tail (one-machine) bound per pipe, each for the
  instance and for the plan's augmented DAG; ``rows_report`` lists them all under
  ``makespan_floors`` with the gap to the best.

``optimal`` is true only when a plan of that value is known and the bound meets it.

Each row also says how strong its bound is (:func:`bound_strength`):

- ``exact``: the bound is a proven optimum (an exact solver finished) or meets the
  plan's value, so the gap is real or zero;
- ``strong``: the bound is at least :data:`STRONG_RATIO` (half) of the plan's value,
  so the plan is provably within a factor 2 and the gap is worth attributing;
- ``weak``: anything below (including a bound of 0): the gap may be slack in the
  bound, not in the plan.

:func:`worst_stage` names a stage only from rows whose bound is not weak.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .instance import Instance
from .models.bound import Bound, gap
from .models.floors import makespan_floors
from .models.peak_bounds import PeakBoundParams, best_peak_bound
from .models.placement import fixed_order_placement
from .models.traffic import traffic_lower_bound
from .models.traffic_global import global_traffic_bound
from .params import BoundParams
from .plan import Plan
from .simulate import Evaluation

__all__ = [
    "AuditRow",
    "peak_bound",
    "traffic_bounds",
    "audit_plan",
    "rows_report",
    "worst_stage",
    "STRONG_RATIO",
    "bound_strength",
]

STRONG_RATIO = 0.5  # a bound of at least this share of the plan's value is "strong"


def bound_strength(bound: Bound, value: int | None) -> str:
    """``exact`` | ``strong`` | ``weak`` by the rule in the module docstring."""
    if value is not None and bound.value >= value:
        return "exact"
    if bound.optimal:
        return "exact"
    if value is None or value <= 0:
        return "weak"
    return "strong" if bound.value >= STRONG_RATIO * value else "weak"


@dataclass
class AuditRow:
    """One metric: the plan's figure, its best lower bound and what that bound covers."""

    metric: str
    stage: str  # the stage that owns the metric
    value: int | None
    bound: Bound
    scope: str  # "global" or "fixed order"
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def gap(self) -> float | None:
        return gap(self.value, self.bound.value)

    @property
    def optimal(self) -> bool:
        return self.value is not None and self.value == self.bound.value

    @property
    def strength(self) -> str:
        return bound_strength(self.bound, self.value)

    def to_dict(self) -> dict[str, Any]:
        d = {
            "value": int(self.bound.value),
            "method": self.bound.method,
            "optimal": self.optimal,
            "scope": self.scope,
            "plan_value": self.value,
            "gap": self.gap,
            "stage": self.stage,
            "strength": self.strength,
        }
        d.update(self.extra)
        return d


def peak_bound(inst: Instance, params: BoundParams = BoundParams()) -> tuple[Bound, int | None]:
    """Best maxV_stay bound over all orders (:mod:`dansched.models.peak_bounds`); on small
    graphs the exact optimum (returned second, else None)."""
    b, _ = best_peak_bound(inst, PeakBoundParams(exact_max_nodes=params.exact_peak_max_nodes), params)
    return b, (b.value if b.optimal else None)


def traffic_bounds(
    inst: Instance,
    plan: Plan,
    time_limit: float,
    seed: int = 0,
    cpsat: bool = True,
    params: BoundParams = BoundParams(),
    plan_traffic: int | None = None,
) -> tuple[Bound, dict[str, Any]]:
    """Fixed-order traffic bound for ``plan``'s order (spill ids aside): the larger of the
    capacity cover and (with ``cpsat``) the CP-SAT placement model's proven bound, hinted
    with ``plan``; the placement model only up to ``params.placement_max_nodes`` nodes,
    and not at all when the cover already reaches ``plan_traffic`` (the plan's own
    traffic: nothing is left to prove)."""
    cover = traffic_lower_bound(inst, plan.order, time_limit=max(1.0, time_limit / 3))
    if not cpsat:
        return cover, {"cover_bound": cover.value}
    if plan_traffic is not None and cover.value >= plan_traffic:
        return cover, {
            "cpsat_status": "SKIPPED (the cover bound reaches the plan's traffic)",
            "cover_bound": cover.value,
        }
    if inst.n > params.placement_max_nodes:
        skipped = f"SKIPPED ({inst.n:,} nodes > {params.placement_max_nodes:,})"
        return cover, {"cpsat_status": skipped, "cover_bound": cover.value}
    res = fixed_order_placement(
        inst,
        plan.order,
        hint=plan,
        time_limit=max(1.0, 2 * time_limit / 3),
        deterministic_time=max(1.0, time_limit),
        seed=seed,
        max_rectangles=params.max_rectangles,
    )
    extra = {
        "cpsat_status": res.status,
        "cpsat_bound": res.bound,
        "cpsat_traffic": res.traffic,
        "cover_bound": cover.value,
    }
    if res.bound > cover.value:
        how = "proven optimum" if res.optimal else f"best bound ({res.status})"
        return Bound(res.bound, f"fixed order: CP-SAT placement/spill model, {how}"), extra
    return cover, extra


def audit_plan(
    inst: Instance,
    plan: Plan,
    ev: Evaluation,
    time_limit: float = 30.0,
    seed: int = 0,
    cpsat: bool = True,
    params: BoundParams = BoundParams(),
    with_peak: bool = True,
) -> list[AuditRow]:
    """Bounds and gaps for each metric of a valid plan (problem 1: peak only). Without
    ``cpsat`` only the fast bounds are computed (as ``solve`` does for its report); without
    ``with_peak`` no maxV_stay row (a caller that audits another plan's peak already)."""
    rows = []
    if with_peak:
        pb, _ = peak_bound(inst, params)
        rows.append(AuditRow("max_v_stay", "MPAS", ev.max_v_stay, pb, "global"))
    if ev.problem == 1:
        return rows
    extra: dict[str, Any]
    if ev.extra_traffic == 0:
        tb, extra = Bound(0, "no traffic: nothing to bound"), {}
    else:
        tb, extra = traffic_bounds(inst, plan, time_limit, seed, cpsat, params, ev.extra_traffic)
    rows.append(AuditRow("extra_traffic", "DLR", ev.extra_traffic, tb, "fixed order", extra))
    rows.append(AuditRow("extra_traffic", "DLR", ev.extra_traffic, global_traffic_bound(inst), "global"))
    floors = makespan_floors(inst, ev.graph, plan.order) if ev.graph is not None else makespan_floors(inst)
    for name, (b, scope) in floors.named().items():
        rows.append(AuditRow("makespan", "CPE", ev.makespan, b, scope, {"floor": name}))
    return rows


def rows_report(rows: list[AuditRow]) -> dict[str, Any]:
    """``{metric: {value, method, optimal, scope, plan_value, gap, stage, strength, ...}}``,
    keeping for each metric its tightest bound (the first row on ties), plus
    ``extra_traffic_all_orders`` when a fixed-order traffic bound is the tightest; then
    ``makespan_floors``: every makespan floor by name (value, method, scope, gap), ``best``
    and ``gap_to_best``."""
    out: dict[str, Any] = {}
    floors: dict[str, Any] = {}
    for r in rows:
        if r.metric not in out or r.bound.value > out[r.metric]["value"]:
            out[r.metric] = r.to_dict()
        if "floor" in r.extra:
            floors[r.extra["floor"]] = {
                "value": int(r.bound.value),
                "method": r.bound.method,
                "scope": r.scope,
                "gap": r.gap,
            }
    # the all-orders traffic bound also when a fixed-order one is tighter (it says what any order needs)
    for r in rows:
        if (
            r.metric == "extra_traffic"
            and r.scope == "global"
            and out.get("extra_traffic", {}).get("scope") != "global"
        ):
            out["extra_traffic_all_orders"] = r.to_dict()
    if floors:
        best = max(floors, key=lambda k: floors[k]["value"])  # first on ties
        floors["best"] = best
        floors["gap_to_best"] = floors[best]["gap"]
        out["makespan_floors"] = floors
    return out


def worst_stage(rows: list[AuditRow]) -> str | None:
    """The stage whose metric is relatively furthest from an informative (not weak) bound;
    None when no informative bound leaves a gap (all met, or all bounds weak)."""
    worst = None
    for r in rows:
        g = r.gap
        if r.strength == "weak":
            continue
        if g is not None and g > 0 and (worst is None or g > worst[0]):
            worst = (g, r.stage)
    return worst[1] if worst else None
