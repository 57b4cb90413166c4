"""Heuristic quality audit: lower bounds, optimality gaps and certified optima
(``dansched bound`` and ``dansched audit``).

Every figure dansched prints comes with how far it can be from the best possible:

- ``max_v_stay``: the best structural bound of :mod:`dansched.models.bounds.peak`; on
  graphs small enough, the exact minimum-peak order of :mod:`dansched.models.exact.order`
  (then the bound is the optimum itself);
- ``extra_traffic``: a *global* bound only where it can be argued (0 otherwise,
  said so), and a *fixed-order* bound for the plan's order: the larger of the
  per-position capacity cover (:mod:`dansched.models.bounds.traffic`) and the CP-SAT
  placement model's proven bound (:mod:`dansched.models.exact.placement`), which also
  certifies the plan when it meets it;
- ``extra_traffic`` over all orders: every bound of :mod:`dansched.models.bounds.traffic_orders`
  (per tier: forced-live sets and the least peak; product-grid segments; live lines), a row
  each, the best kept by ``rows_report``;
- ``makespan``: the floors of :mod:`dansched.models.bounds.floors`: busiest pipe load and
  longest path, and the head-body-tail (one-machine) bound per pipe with heads and tails
  that respect the pipes, each for the instance (every plan) and for the plan's augmented
  DAG (this plan's memory only); the spill-in pipe's floor for the traffic proven over all
  orders (every plan) and for the plan's own traffic (every plan carrying at least that
  much); the plan retimed without its address-reuse edges (every re-addressing of the
  plan: the row's ``rooms_cost`` is what its addresses cost, a Stage-2 figure);
  ``rows_report`` lists them all under ``makespan_floors`` with their scope and the gap to
  the best of each scope.

``optimal`` is true only when a plan of that value is known and the bound meets it.

Two library calls sit on top (``dansched bound`` and ``dansched audit`` print them):

- :func:`bound`: solves problem 3 and bounds its plan, and its Stage-1 order as the
  problem-1 plan. When the instance has no problem-1 order (no order keeps the L0
  single-residency rule) but problems 2 and 3 plan it, the bounds of the problem-3
  plan are still given and ``not_bounded`` says what is missing and why;
- :func:`audit_folder`: a plan folder you bring, checked against its fingerprint, judged,
  and every metric beside its best bound, with the stage furthest from its bound.

Each row also says what kind of bound it is (:func:`bound_strength`), a property of the
bound alone, whatever plan it is compared with:

- ``exact``: an exact solver finished, the bound is the optimum of its scope;
- ``lower bound``: holds for every plan (scope ``global``), not proven tight;
- ``conditional``: holds only for the plans of its scope (this order, this memory
  behaviour, at least this traffic), not proven tight.

Each row names the plan its ``plan_value`` is of (``plan``). :func:`worst_stage` names
a stage only from rows whose bound is informative for that plan: exact, or at least
:data:`STRONG_RATIO` (half) of the plan's value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..checks import SEED, TIME_LIMIT, check_path, check_progress, check_type
from ..errors import NoLegalOrderError
from ..instance import Instance, require_instance
from ..models.bounds.bound import Bound, gap
from ..models.bounds.floors import ADDRESS_SCOPE, floor_gaps, floor_row, makespan_floors
from ..models.bounds.peak_bounds import best_peak_bound
from ..models.bounds.traffic import traffic_lower_bound
from ..models.bounds.traffic_orders import best_traffic_bound
from ..models.exact.placement import fixed_order_placement
from ..params import BoundParams, CoverBudget, Progress
from ..pipeline import SolveOptions, effort_options, run_pipeline
from ..pipeline.memory import out_of_memory
from ..plan import Plan
from ..reprs import one_line_repr
from ..simulate import Evaluation, judged
from .judge import judge_folder, require_valid

__all__ = [
    "AuditRow",
    "peak_bound",
    "traffic_bounds",
    "audit_plan",
    "rows_report",
    "worst_stage",
    "STRONG_RATIO",
    "bound_strength",
    "informative",
    "BoundResult",
    "AuditResult",
    "bound",
    "audit_folder",
]


def _quiet(_msg: str) -> None:
    """The progress callback that shows nothing."""


STRONG_RATIO = 0.5  # a bound of at least this share of the plan's value is informative (worst_stage)


def bound_strength(bound: Bound, scope: str) -> str:
    """``exact`` | ``lower bound`` | ``conditional`` by the rule in the module docstring."""
    if bound.optimal:
        return "exact"
    return "lower bound" if scope == "global" else "conditional"


def informative(bound: Bound, value: int | None) -> bool:
    """Whether ``bound`` says something of a plan of ``value``: exact, met, or at least
    :data:`STRONG_RATIO` of it."""
    if bound.optimal or (value is not None and bound.value >= value):
        return True
    return value is not None and value > 0 and bound.value >= STRONG_RATIO * value


@dataclass
class AuditRow:
    """One metric: the plan's figure, its best lower bound and what that bound covers."""

    __repr__ = one_line_repr

    metric: str
    stage: str  # the stage that owns the metric
    value: int | None
    bound: Bound
    scope: str  # "global" or "fixed order"
    extra: dict[str, Any] = field(default_factory=dict)
    plan: str = "the plan"  # what plan_value is of, in words

    @property
    def gap(self) -> float | None:
        return gap(self.value, self.bound.value)

    @property
    def optimal(self) -> bool:
        return self.value is not None and self.value == self.bound.value

    @property
    def strength(self) -> str:
        return bound_strength(self.bound, self.scope)

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
            "plan": self.plan,
        }
        if self.bound.stopped_by_clock:
            d["stopped_by_clock"] = True
        d.update(self.extra)
        return d


def peak_bound(inst: Instance, params: BoundParams = BoundParams()) -> tuple[Bound, int | None]:
    """Best maxV_stay bound over all orders (:mod:`dansched.models.bounds.peak_bounds`); on small
    graphs the exact optimum (returned second, else None)."""
    b, _ = best_peak_bound(inst, params.peak, params)
    return b, (b.value if b.optimal else None)


def traffic_bounds(
    inst: Instance,
    plan: Plan,
    time_limit: float,
    seed: int = 0,
    cpsat: bool = True,
    params: BoundParams = BoundParams(),
    plan_traffic: int | None = None,
    cover_budget: CoverBudget | None = None,
) -> tuple[Bound, dict[str, Any]]:
    """Fixed-order traffic bound for ``plan``'s order (spill ids aside): the larger of the
    capacity cover (within ``cover_budget``: by default ``params.cover``, or
    ``params.report_cover`` without ``cpsat``) and (with ``cpsat``) the CP-SAT placement
    model's proven bound, hinted with ``plan``; the placement model only up to
    ``params.placement_max_nodes`` nodes, and not at all when the cover already reaches
    ``plan_traffic`` (the plan's own traffic: nothing is left to prove).

    Every budget that decides a figure is deterministic: HiGHS counts (see
    :class:`CoverBudget`), CP-SAT ``deterministic_time = time_limit / 3`` with one worker
    and ``seed``. Wall clocks (the cover's safety net, ``10 * time_limit`` for CP-SAT) are
    safety nets only; when one fires the row says so (``stopped_by_clock``,
    ``cpsat_stopped_by_clock``)."""
    budget = cover_budget or (params.cover if cpsat else params.report_cover)
    cover = traffic_lower_bound(inst, plan.order, budget)
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
        time_limit=max(10.0, 10 * time_limit),
        deterministic_time=max(1.0, time_limit / 3),
        seed=seed,
        max_rectangles=params.max_rectangles,
    )
    extra = {
        "cpsat_status": res.status,
        "cpsat_bound": res.bound,
        "cpsat_traffic": res.traffic,
        "cover_bound": cover.value,
    }
    if res.stats.get("stopped_by_clock"):
        extra["cpsat_stopped_by_clock"] = True
    if res.bound > cover.value:
        how = "proven optimum" if res.optimal else f"best bound ({res.status})"
        return Bound(res.bound, f"fixed order: CP-SAT placement/spill model, {how}"), extra
    return cover, extra


def _params(params: BoundParams | None, what: str) -> BoundParams:
    """The bounds' parameters: the defaults for None, else checked to be a BoundParams."""
    return BoundParams() if params is None else check_type(params, BoundParams, what, "BoundParams(...) makes them")


def audit_plan(
    inst: Instance,
    plan: Plan,
    ev: Evaluation,
    time_limit: float = 30.0,
    seed: int = 0,
    cpsat: bool = True,
    params: BoundParams | None = None,
    with_peak: bool = True,
    progress: Progress | None = None,
    plan_name: str = "the plan",
) -> list[AuditRow]:
    """Bounds and gaps for each metric of a valid plan (problem 1: peak only). Without
    ``cpsat`` only the fast bounds are computed (as ``solve`` does for its report); without
    ``with_peak`` no maxV_stay row (a caller that audits another plan's peak already).
    ``progress(message)`` is called as each bound starts; ``plan_name`` says in words what
    plan ``plan`` is (each row's ``plan``)."""
    require_instance(inst, "audit_plan: inst")
    params = _params(params, "audit_plan: params")
    check_type(plan, Plan, "audit_plan: plan")
    check_type(cpsat, bool, "audit_plan: cpsat", "True or False")
    check_type(with_peak, bool, "audit_plan: with_peak", "True or False")
    check_type(plan_name, str, "audit_plan: plan_name")
    check_progress(progress, "audit_plan: progress")
    check_type(ev, Evaluation, "audit_plan: ev", "evaluate(inst, plan) gives it")
    time_limit = TIME_LIMIT.check(time_limit, "audit_plan: time_limit")
    seed = SEED.check(seed, "audit_plan: seed")
    say = progress or _quiet
    rows = []
    if with_peak:
        say("maxV_stay bound over all orders")
        pb, _ = peak_bound(inst, params)
        rows.append(AuditRow("max_v_stay", "MPAS", ev.max_v_stay, pb, "global", plan=plan_name))  # problem 1 ends here
    if ev.problem == 1:
        return rows
    extra: dict[str, Any]
    if ev.extra_traffic == 0:
        tb, extra = Bound(0, "no traffic: nothing to bound"), {}
    else:
        budget = f"; CP-SAT placement model, up to {max(1.0, 2 * time_limit / 3):g} s" if cpsat else ""
        say(f"traffic bound for the plan's order (capacity cover{budget})")
        tb, extra = traffic_bounds(inst, plan, time_limit, seed, cpsat, params, ev.extra_traffic)
    rows.append(AuditRow("extra_traffic", "DLR", ev.extra_traffic, tb, "fixed order", extra))
    say("traffic bounds over all orders (per tier, product-grid segments, live lines)")
    forced, each = best_traffic_bound(inst, params)
    for b in each:
        rows.append(AuditRow("extra_traffic", "DLR", ev.extra_traffic, b, "global"))
    say("makespan floors")
    graph, order = (ev.graph, plan.order) if ev.graph is not None else (None, None)
    floors = makespan_floors(
        inst, graph, order, forced_traffic=forced.value, plan_traffic=ev.extra_traffic, params=params
    )
    for name, (b, scope) in floors.named().items():
        row = AuditRow("makespan", "CPE", ev.makespan, b, scope, {"floor": name})
        if scope == ADDRESS_SCOPE and ev.makespan is not None:  # what the rooms cost: Stage 2 placed them
            row.stage, row.extra["rooms_cost"] = "DLR", ev.makespan - b.value
        rows.append(row)
    for r in rows:
        r.plan = plan_name
    return rows


def rows_report(rows: list[AuditRow]) -> dict[str, Any]:
    """``{metric: {value, method, optimal, scope, plan_value, gap, stage, strength, ...}}``,
    keeping for each metric its tightest bound (the first row on ties; for the makespan, of
    the scopes in which the order may change: the address floor says what the plan's rooms
    cost, it is listed under ``makespan_floors``), plus
    ``extra_traffic_all_orders`` when a fixed-order traffic bound is the tightest; then
    ``makespan_floors``: every makespan floor by name (value, method, scope, gap), and the
    gaps to the best floor of each scope (:func:`~dansched.models.bounds.floors.floor_gaps`)."""
    out: dict[str, Any] = {}
    floors: dict[str, Any] = {}
    for r in rows:
        if r.scope != ADDRESS_SCOPE and (r.metric not in out or r.bound.value > out[r.metric]["value"]):
            out[r.metric] = r.to_dict()
        if "floor" in r.extra:
            floors[r.extra["floor"]] = floor_row(r.bound, r.scope, r.value) | {"strength": r.strength}
    # the best all-orders traffic bound also when a fixed-order one is tighter (it says what any order needs)
    if out.get("extra_traffic", {}).get("scope") != "global":
        best_global: AuditRow | None = None
        for r in rows:
            if r.metric == "extra_traffic" and r.scope == "global":
                if best_global is None or r.bound.value > best_global.bound.value:
                    best_global = r
        if best_global is not None:
            out["extra_traffic_all_orders"] = best_global.to_dict()
    if floors:
        out["makespan_floors"] = floors | floor_gaps(floors)
    return out


def worst_stage(rows: list[AuditRow]) -> str | None:
    """The stage whose metric is relatively furthest from an informative (not weak) bound;
    None when no informative bound leaves a gap (all met, or all bounds weak)."""
    worst = None
    for r in rows:
        g = r.gap
        if not informative(r.bound, r.value):
            continue
        if g is not None and g > 0 and (worst is None or g > worst[0]):
            worst = (g, r.stage)
    return worst[1] if worst else None


# what ``bound``'s plan values are of (the plans of ``dansched solve``'s default: problem 3, effort default)
SOLVE_PLAN = "the plan of dansched solve (problem 3, effort default)"
STAGE1_PLAN = "the Stage-1 (MPAS) order of dansched solve (problem 3, effort default), judged as a problem-1 order"


@dataclass
class BoundResult:
    """What :func:`bound` found: a row per bound tried, and what could not be bounded
    (``not_bounded``: metric or problem -> why)."""

    __repr__ = one_line_repr

    rows: list[AuditRow]
    not_bounded: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """:func:`rows_report` of the rows, plus ``not_bounded`` when something is missing."""
        out = rows_report(self.rows)
        if self.not_bounded:
            out["not_bounded"] = dict(self.not_bounded)
        return out


def bound(
    inst: Instance,
    time_limit: float = 30.0,
    seed: int = 0,
    params: BoundParams | None = None,
    progress: Progress | None = None,
) -> BoundResult:
    """Lower bounds on maxV_stay, extra traffic and makespan with how each was obtained:
    problem 3 is solved once; its Stage-1 order, judged as a problem-1 plan, is bounded
    for the peak, and its final plan for traffic (fixed-order and all-orders bounds) and
    makespan. Without a problem-1 order (none keeps the L0 rule) the problem-3 plan is
    bounded for the peak too and ``not_bounded`` says why problem 1 is not. Raises
    :class:`PlanInvalidError` when problem 3 has no plan either (nothing to bound)."""
    require_instance(inst, "bound: inst")
    params = _params(params, "bound: params")
    check_progress(progress, "bound: progress")
    time_limit = TIME_LIMIT.check(time_limit, "bound: time_limit")
    seed = SEED.check(seed, "bound: seed")
    say = progress or _quiet
    steps = 3
    say(f"bound 1/{steps}: solving problem 3 (its plans are the ones bounded)")
    with out_of_memory(inst):
        p3 = run_pipeline(
            inst,
            effort_options("default", problem=3),
            progress=lambda m: say(f"bound 1/{steps}, solving problem 3: {m}"),
        )
    not_bounded: dict[str, str] = {}
    plan1 = p3.stage1
    if plan1 is None:  # no L0-legal Stage-1 order: solving problem 1 says why
        try:
            plan1 = run_pipeline(inst, SolveOptions(problem=1)).stage1
        except NoLegalOrderError as exc:
            not_bounded["problem 1"] = f"{exc}; maxV_stay is bounded for the problem-3 plan instead"
    rows: list[AuditRow] = []
    if plan1 is not None:
        ev1 = judged(inst, plan1, "Stage 1 (MPAS)")
        rows += audit_plan(
            inst,
            plan1,
            ev1,
            time_limit,
            seed,
            params=params,
            progress=lambda m: say(f"bound 2/{steps}: {m}"),
            plan_name=STAGE1_PLAN,
        )
    rows += audit_plan(
        inst,
        p3.plan,
        p3.evaluation,
        time_limit,
        seed,
        params=params,
        with_peak=plan1 is None,
        progress=lambda m: say(f"bound 3/{steps}: {m}"),
        plan_name=SOLVE_PLAN,
    )
    return BoundResult(rows, not_bounded)


@dataclass
class AuditResult:
    """What :func:`audit_folder` found: a row per bound tried for the plan."""

    __repr__ = one_line_repr

    rows: list[AuditRow]

    @property
    def worst_stage(self) -> str | None:
        return worst_stage(self.rows)

    def to_dict(self) -> dict[str, Any]:
        """``bounds`` (every row, with its metric) and ``worst_stage``."""
        return {"bounds": [dict(metric=r.metric, **r.to_dict()) for r in self.rows], "worst_stage": self.worst_stage}


def audit_folder(
    inst: Instance,
    folder: str | Path,
    time_limit: float = 30.0,
    seed: int = 0,
    params: BoundParams | None = None,
    progress: Progress | None = None,
) -> AuditResult:
    """The plan of ``inst`` in ``folder`` beside its lower bounds: the folder is checked
    against its fingerprint (:func:`dansched.application.judge.judge_folder`), the plan must be valid
    (else :class:`PlanInvalidError`), then :func:`audit_plan` with the exact models."""
    require_instance(inst, "audit_folder: inst")
    params = _params(params, "audit_folder: params")
    check_progress(progress, "audit_folder: progress")
    check_path(folder, "audit_folder: folder")
    time_limit = TIME_LIMIT.check(time_limit, "audit_folder: time_limit")
    seed = SEED.check(seed, "audit_folder: seed")
    say = progress or _quiet
    say(f"audit 1/2: judging the plan in {folder}")
    plan, ev = judge_folder(inst, folder)
    require_valid(inst, folder, ev)
    rows = audit_plan(
        inst,
        plan,
        ev,
        time_limit,
        seed,
        params=params,
        progress=lambda m: say(f"audit 2/2: {m}"),
        plan_name=f"the plan in {folder}",
    )
    return AuditResult(rows)
