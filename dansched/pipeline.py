"""The full DAN-Scheduler pipeline (paper Eq. 16): MPAS -> DLR -> CPE, each stage's
result judged by the shared evaluator before the next stage sees it.

:func:`solve` returns the final :class:`~dansched.plan.Plan` and the report that
``dansched solve`` writes as ``<case>_report.json``: the final plan's metrics as
top-level keys, ``stages`` (figures and seconds after each stage) and ``bounds``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

from .instance import Instance
from .plan import Plan
from .simulate import Evaluation, evaluate

__all__ = ["SolveOptions", "SolveResult", "PlanInvalidError", "solve", "stage_figures"]

Progress = Callable[[str], None]


class PlanInvalidError(RuntimeError):
    """A stage produced a plan the evaluator rejects, or no valid plan exists (exit status 1)."""


@dataclass(frozen=True)
class SolveOptions:
    problem: int = 3
    variant: str = "mpas"  # Stage-1 variant: "mpas" (production) or "mpas-paper" (literal Algorithm 1)
    victim: str = "cost"  # Stage-2 victim rule: "cost" (Eqs. 27-31) or "lru"
    exact_window: int = 0  # CP-SAT window width for Stage 3 (0: off)
    time_limit: float = 60.0  # seconds of budget for the optional exact parts
    seed: int = 0
    traffic_slack: float = 0.0  # percent of extra traffic Stage 3 may trade for makespan
    cpe: bool = True


@dataclass
class SolveResult:
    plan: Plan
    evaluation: Evaluation
    report: dict[str, Any] = field(default_factory=dict)


def stage_figures(ev: Evaluation, seconds: float) -> dict[str, Any]:
    """The figures a report keeps for one stage's plan."""
    out: dict[str, Any] = {"max_v_stay": ev.max_v_stay}
    if ev.problem != 1:
        out.update(
            physical_peak=ev.physical_peak,
            extra_traffic=ev.extra_traffic,
            spill_count=ev.spill_count,
            makespan=ev.makespan,
        )
    out["seconds"] = round(seconds, 3)
    return out


def _judged(inst: Instance, plan: Plan, stage: str) -> Evaluation:
    ev = evaluate(inst, plan)
    if not ev.valid:
        first = ev.errors[0].message if ev.errors else "unknown violation"
        raise PlanInvalidError(f"{stage} produced a plan the evaluator rejects ({ev.error_count} violation(s)); first: {first}")
    return ev


def solve(inst: Instance, opts: SolveOptions = SolveOptions(), progress: Progress | None = None) -> SolveResult:
    """Run the stages that ``opts.problem`` needs and return the final plan and report."""
    from .stages.mpas import mpas_order

    say = progress or (lambda _msg: None)
    stages: dict[str, Any] = {}

    say("Stage 1: MPAS")
    t0 = time.perf_counter()
    s1 = mpas_order(inst, variant=opts.variant)
    plan1 = Plan(order=tuple(s1.order))
    ev1 = _judged(inst, plan1, "Stage 1 (MPAS)")
    stages["mpas"] = stage_figures(ev1, time.perf_counter() - t0) | {"variant": s1.variant}
    if opts.problem == 1:
        return SolveResult(plan1, ev1, {"max_v_stay": ev1.max_v_stay, "stages": stages})

    from .stages.dlr import dlr_plan

    say("Stage 2: DLR")
    t0 = time.perf_counter()
    s2 = dlr_plan(inst, s1.order, victim=opts.victim)
    ev2 = _judged(inst, s2.plan, "Stage 2 (DLR)")
    stages["dlr"] = stage_figures(ev2, time.perf_counter() - t0) | s2.info
    final_plan, final_ev = s2.plan, ev2
    if opts.problem == 3 and opts.cpe:
        from .stages.cpe import cpe_refine

        say("Stage 3: CPE")
        t0 = time.perf_counter()
        s3 = cpe_refine(
            inst, s2.plan, ev2, exact_window=opts.exact_window, time_limit=opts.time_limit, seed=opts.seed
        )
        ev3 = _judged(inst, s3.plan, "Stage 3 (CPE)")
        for key in ("extra_traffic", "spill_count", "physical_peak"):
            if getattr(ev3, key) != getattr(ev2, key):
                raise PlanInvalidError(f"Stage 3 (CPE) changed {key} ({getattr(ev2, key)} -> {getattr(ev3, key)})")
        if s3.plan.offsets != s2.plan.offsets or s3.plan.spills != s2.plan.spills:
            raise PlanInvalidError("Stage 3 (CPE) changed the layout or the spill plan")
        stages["cpe"] = stage_figures(ev3, time.perf_counter() - t0) | s3.info
        final_plan, final_ev = s3.plan, ev3
    report = {
        "max_v_stay": final_ev.max_v_stay,
        "physical_peak": final_ev.physical_peak,
        "extra_traffic": final_ev.extra_traffic,
        "spill_count": final_ev.spill_count,
        "makespan": final_ev.makespan,
        "stages": stages,
    }
    return SolveResult(final_plan, final_ev, report)
