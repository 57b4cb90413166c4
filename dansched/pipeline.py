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
LARGE_GRAPH_NODES = 200_000  # Stage 3 runs one cheap Stage-2 round from here on (see _stage3)
TIMED_PROMISING = 1.25  # a time-driven Stage-2 plan goes through Stage 3 only if within 25% before CPE


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


def _judged(inst: Instance, plan: Plan, stage: str, ev: Evaluation | None = None) -> Evaluation:
    """The evaluator's verdict on ``plan`` (``ev`` when the stage already has it); an
    invalid plan raises :class:`PlanInvalidError` naming the stage."""
    ev = ev if ev is not None else evaluate(inst, plan)
    if not ev.valid:
        first = ev.errors[0].message if ev.errors else "unknown violation"
        raise PlanInvalidError(f"{stage} produced a plan the evaluator rejects ({ev.error_count} violation(s)); first: {first}")
    return ev


def solve(inst: Instance, opts: SolveOptions = SolveOptions(), progress: Progress | None = None) -> SolveResult:
    """Run the stages that ``opts.problem`` needs and return the final plan and report."""
    from .instance import topological_order
    from .simulate import max_v_stay
    from .stages.mpas import mpas_order
    from .stages.mpas_graph import NoLegalOrderError

    say = progress or (lambda _msg: None)
    stages: dict[str, Any] = {}

    say("Stage 1: MPAS")
    t0 = time.perf_counter()
    try:
        s1 = mpas_order(inst, variant=opts.variant)
        order1, variant1 = list(s1.order), s1.variant
    except NoLegalOrderError as exc:
        if opts.problem == 1:
            raise
        # problems 2 and 3 have no single-residency rule: any topological order will do
        order1, variant1 = topological_order(inst), f"topological order (no L0-legal order: {exc})"
    plan1 = Plan(order=tuple(order1))
    if opts.problem == 1:
        ev1 = _judged(inst, plan1, "Stage 1 (MPAS)")
        stages["mpas"] = stage_figures(ev1, time.perf_counter() - t0) | {"variant": variant1}
        return SolveResult(plan1, ev1, {"max_v_stay": ev1.max_v_stay, "stages": stages})
    stages["mpas"] = {"max_v_stay": max_v_stay(inst, order1), "seconds": round(time.perf_counter() - t0, 3),
                      "variant": variant1}

    from .stages.dlr import dlr_plan

    say("Stage 2: DLR")
    t0 = time.perf_counter()
    s2 = dlr_plan(inst, order1, victim=opts.victim, slack=opts.traffic_slack if opts.problem == 3 else 0.0)
    ev2 = _judged(inst, s2.plan, "Stage 2 (DLR)", s2.evaluation)  # dlr_plan's evaluator verdict on s2.plan
    stages["dlr"] = stage_figures(ev2, time.perf_counter() - t0) | s2.info
    final_plan, final_ev = s2.plan, ev2
    pareto: list[dict[str, Any]] | None = None
    if opts.problem == 3 and opts.cpe:
        say("Stage 3: CPE")
        t0 = time.perf_counter()
        layout, layout_ev, s3, ev3, relayout_info = _stage3(inst, s2.plan, ev2, opts)
        name2 = "/".join(str(s2.info[k]) for k in ("order", "placement", "victim_rule") if k in s2.info) or "dlr"
        pareto = [{"stage2": name2, "extra_traffic": ev2.extra_traffic, "makespan": ev3.makespan}]
        for alt_plan, alt_ev, name in s2.alternatives:  # --traffic-slack: trade traffic for makespan
            got = _stage3(inst, alt_plan, alt_ev, opts)
            pareto.append({"stage2": name, "extra_traffic": alt_ev.extra_traffic, "makespan": got[3].makespan})
            if got[3].makespan < ev3.makespan:
                ev2 = alt_ev
                stages["dlr"] = stage_figures(alt_ev, stages["dlr"]["seconds"]) | {"variant": name, "within_slack_of": s2.evaluation.extra_traffic}
                layout, layout_ev, s3, ev3, relayout_info = got
        timed = _timed_producer(inst, s2, opts)  # issue 14: time-driven list scheduling with memory
        for alt_plan, alt_ev, name in timed["plans"]:
            if alt_ev.makespan > TIMED_PROMISING * ev3.makespan:  # CPE rarely gains more: save its time
                continue
            got = _stage3(inst, alt_plan, alt_ev, opts)
            pareto.append({"stage2": name, "extra_traffic": alt_ev.extra_traffic, "makespan": got[3].makespan})
            if got[3].makespan < ev3.makespan:
                ev2 = alt_ev
                stages["dlr"] = stage_figures(alt_ev, stages["dlr"]["seconds"]) | {"variant": name, "within_slack_of": s2.evaluation.extra_traffic}
                layout, layout_ev, s3, ev3, relayout_info = got
                timed["info"]["winner"] = name
        stages["timed"] = timed["info"]
        if relayout_info["rounds"]:
            stages["relayout"] = stage_figures(layout_ev, relayout_info.pop("seconds")) | relayout_info
        for key in ("extra_traffic", "spill_count"):
            if getattr(ev3, key) != getattr(ev2, key):
                raise PlanInvalidError(f"Stage 3 (CPE) changed {key} ({getattr(ev2, key)} -> {getattr(ev3, key)})")
        if ev3.physical_peak != layout_ev.physical_peak:
            raise PlanInvalidError("Stage 3 (CPE) changed the physical peak")
        if s3.plan.offsets != layout.offsets or s3.plan.spills != layout.spills:
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
    if pareto is not None:  # problem 3: the (traffic, makespan) pairs Stage 3 tried
        report["pareto"] = pareto
    return SolveResult(final_plan, final_ev, report)


def _timed_producer(inst: Instance, s2, opts: SolveOptions) -> dict[str, Any]:
    """The time-driven Stage-2 producer (:mod:`dansched.stages.timed_memory`) on the
    Stage-2 order, within the traffic allowance: its fastest plan (before CPE) goes on
    to Stage 3. ``info['tried']`` lists {producer, traffic, makespan} of every plan it
    made (makespan before CPE; ``failed`` instead when a trial could not finish),
    then DLR's placement on the order of the fastest of them (``dlr-on-...``; beyond
    ``TIMED_FEW_TRIALS_NODES`` nodes it alone goes on to Stage 3 when it fits);
    ``info['winner']`` is set by the caller when its plan ends faster after Stage 3."""
    from .stages.timed_memory import TIMED_FEW_TRIALS_NODES, replaced_plan, timed_plans, traffic_allowance, trials_for

    t0 = time.perf_counter()
    limit = traffic_allowance(s2.evaluation.extra_traffic, opts.traffic_slack)
    reference = [v for v in s2.plan.order if v < inst.n]
    plans, tried, fastest = timed_plans(inst, reference, limit, trials_for(inst, opts.traffic_slack))
    out = plans[:1]
    if fastest is not None:
        replaced = replaced_plan(inst, fastest[0], limit, fastest[2])  # the fastest order, DLR's spills
        if replaced is not None:
            tried.append({"producer": replaced[2], "traffic": replaced[1].extra_traffic, "makespan": replaced[1].makespan})
            # large graphs afford one more Stage 3: the re-placed plan, whose traffic fits any slack
            out = (out if inst.n <= TIMED_FEW_TRIALS_NODES else []) + [replaced]
    info: dict[str, Any] = {"allowance": limit, "tried": tried, "winner": None,
                            "seconds": round(time.perf_counter() - t0, 3)}
    return {"plans": out, "info": info}


def _stage3(inst: Instance, plan2: Plan, ev2: Evaluation, opts: SolveOptions):
    """CPE on the Stage-2 plan, alternating with timing-aware Stage-2 rounds while the
    makespan after CPE drops: resequencing (:mod:`dansched.stages.resequence`: a faster
    order with the same segments, offsets and spills) and relayout
    (:mod:`dansched.stages.relayout`: same order, segments and spills, new offsets).
    From :data:`LARGE_GRAPH_NODES` nodes on, a single round of the cheapest step
    (moving late segments, the one that wins first on large graphs) keeps a million
    nodes within minutes. Then the optional exact CP-SAT windows. Every candidate
    keeps Stage 2's traffic and spill count. Evaluations that are only reported from
    then on (``ev2`` included) drop their per-node detail to save memory. Returns
    (layout plan, its evaluation, CPE result, its evaluation, info)."""
    from .stages.cpe import cpe_refine
    from .stages.relayout import move_late_segments, relayout_for_timing
    from .stages.resequence import resequence_for_timing

    s3 = cpe_refine(inst, plan2, ev2)
    ev2.drop_detail()  # from here on only its metrics are read
    ev3 = _judged(inst, s3.plan, "Stage 3 (CPE)")
    layout, layout_ev = plan2, ev2
    t0 = time.perf_counter()
    rounds = 0
    used: list[str] = []
    large = inst.n >= LARGE_GRAPH_NODES
    max_rounds = 6 if inst.n < 10_000 else 1 if large else 3
    while rounds < max_rounds:
        tries = [("move late segments", move_late_segments)]
        if not large:
            tries.insert(0, ("resequence", resequence_for_timing))
            if rounds == 0:
                tries.append(("relayout", relayout_for_timing))
        best = None
        for name, step in tries:  # one candidate at a time: each holds a full evaluation
            r = step(inst, s3.plan, ev3)
            if r is None:
                continue
            c = cpe_refine(inst, r[0], r[1])
            r[1].drop_detail()
            ev_c = _judged(inst, c.plan, f"Stage 3 (CPE after {name})")
            if ev_c.makespan < (best[4].makespan if best else ev3.makespan):
                best = (name, r[0], r[1], c, ev_c)
        if best is None:
            break
        name, layout, layout_ev, s3, ev3 = best
        used.append(name)
        rounds += 1
    info = {"rounds": rounds, "steps": used, "seconds": time.perf_counter() - t0}
    if opts.exact_window > 0:
        polished = cpe_refine(
            inst, s3.plan, ev3, exact_window=opts.exact_window, time_limit=opts.time_limit, seed=opts.seed
        )
        ev_p = _judged(inst, polished.plan, "Stage 3 (CPE exact windows)")
        if ev_p.makespan < ev3.makespan:
            polished.info["winner"] = "CPE then " + polished.info["winner"]
            s3, ev3 = polished, ev_p
    return layout, layout_ev, s3, ev3, info
