"""The full DAN-Scheduler pipeline (paper Eq. 16): MPAS -> DLR -> CPE, each stage's
result judged by the shared evaluator before the next stage sees it.

:func:`solve` returns the final :class:`~dansched.plan.Plan` and the report that
``dansched solve`` writes as ``<case>_report.json``: the final plan's metrics as
top-level keys, ``stages`` (figures and seconds after each stage) and ``bounds``.
:class:`SolveOptions` holds the options and, nested, each stage's parameters
(:mod:`dansched.params`); it is validated on construction.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from .errors import NoLegalOrderError, PlacementFailed, PlanInvalidError
from .instance import Instance
from .params import BoundParams, CpeParams, DlrParams, MpasParams, PortfolioParams
from .plan import Plan
from .simulate import Evaluation, judged, max_v_stay
from .stages.cpe.memory_windows import memory_window_polish
from .stages.cpe.stage import Stage3Result, stage3
from .stages.cpe.timed_memory import TimedProducerParams, timed_candidates, traffic_allowance
from .stages.dlr.order_search import OrderSearchParams, search_order
from .stages.dlr.stage import VICTIMS, DlrResult, dlr_plan
from .stages.dlr.victim import RecencyAware
from .stages.mpas.lifetime import lifetime_order
from .stages.mpas.stage import VARIANTS, mpas_order

__all__ = [
    "SolveOptions",
    "SolveResult",
    "solve",
    "stage2_portfolio",
    "stage_figures",
    "pareto_entry",
    "PROBLEMS",
    "WINDOW_MODES",
]

Progress = Callable[[str], None]
PROBLEMS = (1, 2, 3)
WINDOW_MODES = ("fixed", "memory")  # --exact-window-mode


@dataclass(frozen=True)
class SolveOptions:
    """What :func:`solve` does; ``ValueError`` (one line) for a value out of range.

    >>> SolveOptions(problem=7)
    Traceback (most recent call last):
    ...
    ValueError: SolveOptions.problem must be 1, 2 or 3, got 7
    """

    problem: int = 3
    variant: str = "mpas"  # Stage-1 variant: "mpas" (production) or "mpas-paper" (literal Algorithm 1)
    victim: str = "cost"  # Stage-2 victim rule: "cost" (Eqs. 27-31) or "lru"
    exact_window: int = 0  # CP-SAT window width for Stage 3 (0: off)
    exact_window_mode: str = "fixed"  # "fixed": memory events keep their order; "memory": they may move too
    time_limit: float = 60.0  # seconds of budget for the optional exact parts
    seed: int = 0
    traffic_slack: float = 0.0  # percent of extra traffic Stage 3 may trade for makespan
    mpas: MpasParams = field(default_factory=MpasParams)
    dlr: DlrParams = field(default_factory=DlrParams)
    cpe: CpeParams = field(default_factory=CpeParams)
    bounds: BoundParams = field(default_factory=BoundParams)
    order_search: OrderSearchParams | None = field(
        default_factory=OrderSearchParams
    )  # Stage-2 order search (None: off)
    timed: TimedProducerParams | None = field(
        default_factory=TimedProducerParams
    )  # problem 3's time-driven producer (None: off)
    portfolio: PortfolioParams | None = field(
        default_factory=PortfolioParams
    )  # problem 3's other Stage-2 producers (None: off)

    def __post_init__(self) -> None:
        if isinstance(self.problem, bool) or self.problem not in PROBLEMS:
            raise ValueError(f"SolveOptions.problem must be 1, 2 or 3, got {self.problem!r}")
        if self.variant not in VARIANTS:
            raise ValueError(f"SolveOptions.variant must be one of {', '.join(VARIANTS)}, got {self.variant!r}")
        if self.victim not in VICTIMS:
            raise ValueError(f"SolveOptions.victim must be one of {', '.join(VICTIMS)}, got {self.victim!r}")
        if isinstance(self.exact_window, bool) or not isinstance(self.exact_window, int) or self.exact_window < 0:
            raise ValueError(f"SolveOptions.exact_window must be an integer >= 0, got {self.exact_window!r}")
        for name in ("time_limit", "traffic_slack"):
            value = getattr(self, name)
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not (value >= 0 and math.isfinite(value))
            ):
                raise ValueError(f"SolveOptions.{name} must be a finite number >= 0, got {value!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise ValueError(f"SolveOptions.seed must be an integer, got {self.seed!r}")
        for name, kind in (("mpas", MpasParams), ("dlr", DlrParams), ("cpe", CpeParams), ("bounds", BoundParams)):
            if not isinstance(getattr(self, name), kind):
                raise ValueError(f"SolveOptions.{name} must be a {kind.__name__}, got {getattr(self, name)!r}")
        if self.exact_window_mode not in WINDOW_MODES:
            raise ValueError(
                f"SolveOptions.exact_window_mode must be one of {', '.join(WINDOW_MODES)}, got {self.exact_window_mode!r}"
            )
        if self.timed is not None and not isinstance(self.timed, TimedProducerParams):
            raise ValueError(f"SolveOptions.timed must be a TimedProducerParams or None, got {self.timed!r}")
        if self.portfolio is not None and not isinstance(self.portfolio, PortfolioParams):
            raise ValueError(f"SolveOptions.portfolio must be a PortfolioParams or None, got {self.portfolio!r}")
        if self.order_search is not None and not isinstance(self.order_search, OrderSearchParams):
            raise ValueError(
                f"SolveOptions.order_search must be an OrderSearchParams or None, got {self.order_search!r}"
            )


@dataclass
class SolveResult:
    """The final plan, the evaluator's verdict on it and the report. ``stage1`` is the
    Stage-1 order as a problem-1 plan (``None`` when Stage 1 found no L0-legal order and
    problems 2/3 fell back to a topological one): ``dansched bound`` audits it instead of
    solving problem 1 again."""

    plan: Plan
    evaluation: Evaluation
    report: dict[str, Any] = field(default_factory=dict)
    stage1: Plan | None = None


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


def _stage1(inst: Instance, opts: SolveOptions) -> tuple[list[int], str, bool]:
    """The Stage-1 order, how it was found and whether it is L0-legal (a problem-1 plan).
    Problems 2 and 3 have no single-residency rule, so when no L0-legal order exists any
    topological order will do."""
    try:
        s1 = mpas_order(inst, variant=opts.variant, params=opts.mpas)
        return list(s1.order), s1.variant, True
    except NoLegalOrderError as exc:
        if opts.problem == 1:
            raise
        # any order that keeps the buffer lifetimes will do; a lifetime cycle (an edge
        # FREE -> user or user -> ALLOC) raises NoLegalOrderError here: no plan exists
        return lifetime_order(inst), f"topological order (no L0-legal order: {exc})", False


def _stage2(inst: Instance, order1: list[int], opts: SolveOptions, say: Progress) -> DlrResult:
    """DLR on the Stage-1 order, then the order search (which keeps DLR's plan unless it
    finds an evaluator-accepted one with less traffic); the LRU ablation keeps DLR's own plan."""
    slack = opts.traffic_slack if opts.problem == 3 else 0.0
    s2 = dlr_plan(inst, order1, victim=opts.victim, slack=slack, params=opts.dlr)
    if opts.order_search is not None and opts.victim == "cost":
        s2 = search_order(
            inst, s2, opts.order_search, time_limit=opts.time_limit, seed=opts.seed, progress=say, slack=slack
        )
    return s2


def _stage3(inst: Instance, plan2: Plan, ev2: Evaluation, opts: SolveOptions) -> Stage3Result:
    """The Stage-3 loop (:func:`~dansched.stages.cpe.stage.stage3`); with
    ``exact_window_mode="memory"`` the memory-aware CP-SAT windows polish its result
    (:mod:`dansched.stages.cpe.memory_windows`: memory events inside a window may move)."""
    s3 = stage3(
        inst, plan2, ev2, exact_window=opts.exact_window, time_limit=opts.time_limit, seed=opts.seed, params=opts.cpe
    )
    if opts.exact_window > 0 and opts.exact_window_mode == "memory":
        cpe, ev = memory_window_polish(
            inst, s3.cpe, s3.evaluation, opts.exact_window, time_limit=opts.time_limit, seed=opts.seed
        )
        ev = judged(inst, cpe.plan, "Stage 3 (memory-aware CP-SAT windows)", ev)
        s3 = replace(s3, cpe=cpe, evaluation=ev)
    return s3


def _check_stage3(ev2: Evaluation, s3: Stage3Result, opts: SolveOptions) -> None:
    """Stage 3 keeps Stage 2's traffic and spill count, and CPE keeps the layout it ran on;
    the physical peak too, except in the memory-window mode, whose windows may reorder
    memory events (problem 3 bounds traffic, not peak)."""
    ev3 = s3.evaluation
    for key in ("extra_traffic", "spill_count"):
        if getattr(ev3, key) != getattr(ev2, key):
            raise PlanInvalidError(f"Stage 3 (CPE) changed {key} ({getattr(ev2, key)} -> {getattr(ev3, key)})")
    if ev3.physical_peak != s3.layout_evaluation.physical_peak and opts.exact_window_mode != "memory":
        raise PlanInvalidError("Stage 3 (CPE) changed the physical peak")
    if s3.cpe.plan.offsets != s3.layout.offsets or s3.cpe.plan.spills != s3.layout.spills:
        raise PlanInvalidError("Stage 3 (CPE) changed the layout or the spill plan")


def stage2_portfolio(
    inst: Instance, order1: list[int], allowance: int, opts: SolveOptions, slack: float
) -> list[tuple[Plan, Evaluation, str]]:
    """Stage-2 plans that spend traffic differently from the cost-aware rule's, for Stage 3
    to try (``opts.portfolio``, :class:`~dansched.params.PortfolioParams`): DLR with the
    recency-aware victim rule (:class:`~dansched.stages.dlr.victim.RecencyAware`: reloads
    land on addresses whose last reader finished long ago, so they wait less) on the
    Stage-1 order; with ``slack`` > 0 also the LRU rule (paper Table 4: more traffic, the
    least recent victims) and the cost-aware DLR on the literal Algorithm-1 order (a
    different memory skeleton). Only plans within ``allowance`` (extra traffic) are
    returned, as (plan, evaluation, name); a producer that cannot place is skipped. None
    for the LRU ablation (``opts.victim``), whose plans must stay the rule's own."""
    params = opts.portfolio
    if params is None or opts.victim != "cost" or inst.n > (params.slack_max_nodes if slack > 0 else params.max_nodes):
        return []
    rules = [f"{RecencyAware.prefix}{w}" for w in params.recency_windows] + (["lru"] if slack > 0 else [])
    makers = [(f"{rule}-victims", partial(dlr_plan, inst, order1, victim=rule, params=opts.dlr)) for rule in rules]
    if slack > 0 and opts.variant != "mpas-paper":

        def paper() -> DlrResult:
            return dlr_plan(inst, list(mpas_order(inst, variant="mpas-paper", params=opts.mpas).order), params=opts.dlr)

        makers.append(("mpas-paper-order", paper))
    out: list[tuple[Plan, Evaluation, str]] = []
    for name, make in makers:
        try:
            got = make()
        except (PlacementFailed, NoLegalOrderError, ValueError):
            continue
        if got.evaluation.valid and got.evaluation.extra_traffic <= allowance:
            out.append((got.plan, got.evaluation, name))
    return out


def _problem3(
    inst: Instance,
    s2: DlrResult,
    ev2: Evaluation,
    opts: SolveOptions,
    stages: dict[str, Any],
    order1: list[int],
    say: Progress,
) -> tuple[Plan, Evaluation, list[dict[str, Any]]]:
    """Stage 3 on the Stage-2 plan, on each alternative ``--traffic-slack`` allows, on the
    portfolio's plans (:func:`stage2_portfolio`) and the time-driven producer's; the
    fastest wins. Fills ``stages`` and returns the final plan, its evaluation and the
    (traffic, makespan) pairs tried."""
    t0 = time.perf_counter()
    s3 = _stage3(inst, s2.plan, ev2, opts)
    name2 = "/".join(str(s2.info[k]) for k in ("order", "placement", "victim_rule") if k in s2.info) or "dlr"
    pareto = [pareto_entry(name2, ev2.extra_traffic, s3.makespan)]
    kept = 0

    def consider(alt_plan: Plan, alt_ev: Evaluation, name: str) -> bool:
        """Stage 3 on another Stage-2 plan; it becomes the current one when it ends faster."""
        nonlocal s3, ev2, kept
        say(f"Stage 3: CPE on {name}")
        got = _stage3(inst, alt_plan, alt_ev, opts)
        pareto.append(pareto_entry(name, alt_ev.extra_traffic, got.makespan))
        if got.makespan >= s3.makespan:
            return False
        kept, ev2, s3 = len(pareto) - 1, alt_ev, got
        stages["dlr"] = stage_figures(alt_ev, stages["dlr"]["seconds"]) | {
            "variant": name,
            "within_slack_of": s2.evaluation.extra_traffic,
        }
        return True

    for alt in s2.alternatives:  # --traffic-slack: trade traffic for makespan
        consider(*alt)
    allowance = traffic_allowance(s2.evaluation.extra_traffic, opts.traffic_slack)
    say("Stage 2 portfolio: recency-aware victims" + (", LRU, Algorithm-1 order" if opts.traffic_slack > 0 else ""))
    for alt in stage2_portfolio(inst, order1, allowance, opts, opts.traffic_slack):
        consider(*alt)
    if opts.timed is not None:  # issue 14: time-driven list scheduling with memory
        say("Stage 2: time-driven producer")
        candidates, timed = timed_candidates(inst, s2.plan, s2.evaluation.extra_traffic, opts.traffic_slack, opts.timed)
        for alt_plan, alt_ev, name in candidates:
            # CPE rarely gains more than the promising factor: save its time
            if alt_ev.makespan <= opts.timed.promising * s3.makespan and consider(alt_plan, alt_ev, name):
                timed["winner"] = name
        stages["timed"] = timed
    pareto[kept]["kept"] = True
    info = dict(s3.info)
    if info["rounds"]:
        stages["relayout"] = stage_figures(s3.layout_evaluation, info.pop("seconds")) | info
    _check_stage3(ev2, s3, opts)
    stages["cpe"] = stage_figures(s3.evaluation, time.perf_counter() - t0) | s3.cpe.info
    return s3.cpe.plan, s3.evaluation, pareto


def pareto_entry(producer: str, traffic: int, makespan: int) -> dict[str, Any]:
    """One row of the report's ``pareto``: a Stage-2 producer's plan after Stage 3, its
    traffic and makespan, and whether it became the final plan (``kept``)."""
    return {"producer": producer, "traffic": traffic, "makespan": makespan, "kept": False}


def solve(inst: Instance, opts: SolveOptions = SolveOptions(), progress: Progress | None = None) -> SolveResult:
    """Run the stages that ``opts.problem`` needs and return the final plan and report."""
    say = progress or (lambda _msg: None)
    stages: dict[str, Any] = {}
    say("Stage 1: MPAS")
    t0 = time.perf_counter()
    order1, variant1, legal1 = _stage1(inst, opts)
    if opts.problem == 1:
        plan1 = Plan(order=tuple(order1))
        ev1 = judged(inst, plan1, "Stage 1 (MPAS)")
        stages["mpas"] = stage_figures(ev1, time.perf_counter() - t0) | {"variant": variant1}
        return SolveResult(plan1, ev1, {"max_v_stay": ev1.max_v_stay, "stages": stages}, plan1)
    stages["mpas"] = {
        "max_v_stay": max_v_stay(inst, order1),
        "seconds": round(time.perf_counter() - t0, 3),
        "variant": variant1,
    }
    stage1 = Plan(order=tuple(order1)) if legal1 else None
    say("Stage 2: DLR")
    t0 = time.perf_counter()
    s2 = _stage2(inst, order1, opts, say)
    ev2 = judged(inst, s2.plan, "Stage 2 (DLR)", s2.evaluation)  # dlr_plan's evaluator verdict on s2.plan
    stages["dlr"] = stage_figures(ev2, time.perf_counter() - t0) | s2.info
    final_plan, final_ev, pareto = s2.plan, ev2, None
    if opts.problem == 3:
        say("Stage 3: CPE")
        final_plan, final_ev, pareto = _problem3(inst, s2, ev2, opts, stages, order1, say)
    report = {
        "max_v_stay": final_ev.max_v_stay,
        "physical_peak": final_ev.physical_peak,
        "extra_traffic": final_ev.extra_traffic,
        "spill_count": final_ev.spill_count,
        "makespan": final_ev.makespan,
        "stages": stages,
    }
    if pareto is not None:  # problem 3: what each Stage-2 producer reached after Stage 3
        report["pareto"] = pareto
    return SolveResult(final_plan, final_ev, report, stage1)
