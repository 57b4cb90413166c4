"""The full DAN-Scheduler pipeline (paper Eq. 16): MPAS -> DLR -> CPE, each stage's result
judged by the shared evaluator before the next stage sees it.

:func:`run_pipeline` returns the final :class:`~dansched.plan.Plan`, the evaluator's verdict and
the typed report (:class:`~dansched.pipeline.report.SolveReport`). Problem 3 is one search
over Stage-2 candidates (:mod:`dansched.pipeline.problem3`).
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field, replace

from ..errors import NoLegalOrderError
from ..instance import Instance
from ..params import Progress
from ..plan import Plan
from ..reprs import one_line_repr
from ..simulate import Evaluation, evaluate, judged, max_v_stay
from ..stages.dlr.order_search import search_order
from ..stages.dlr.stage import DlrResult, dlr_plan
from ..stages.mpas.lifetime import lifetime_order
from ..stages.mpas.stage import mpas_order
from .memory import collection_paused
from .options import RIVALS, SolveOptions, rival_options
from .problem3.frontier import FrontierPoint, allowances_tried, frontier_rows
from .problem3.loop import Problem3Result, problem3
from .problem3.rivals import RivalRun, with_rivals
from .report import PlanFigures, RelayoutReport, SolveReport, Stage1Report, Stage2Report, Stage3Report

__all__ = ["SolveResult", "run_pipeline"]


@dataclass
class SolveResult:
    """The final plan, the evaluator's verdict on it and the report. ``stage1`` is the
    Stage-1 order as a problem-1 plan (``None`` when Stage 1 found no L0-legal order and
    problems 2/3 fell back to a topological one): ``dansched bound`` audits it instead of
    solving problem 1 again. ``frontier``: problem 3's traffic-makespan frontier, lightest
    first (:mod:`dansched.pipeline.problem3.frontier`), each point with its plan."""

    __repr__ = one_line_repr

    plan: Plan
    evaluation: Evaluation
    report: SolveReport
    stage1: Plan | None = None
    frontier: list[FrontierPoint] = field(default_factory=list)


def _stage1(inst: Instance, opts: SolveOptions) -> tuple[list[int], str, bool]:
    """The Stage-1 order, how it was found and whether it is L0-legal (a problem-1 plan).
    Problems 2 and 3 have no single-residency rule, so when no L0-legal order exists any
    order that keeps the buffer lifetimes will do."""
    restarts = opts.effort.stage1_restarts
    params = opts.mpas if restarts else replace(opts.mpas, restart_work=0)  # no restarts: the compacted input order
    variant = "mpas-greedy" if opts.variant == "mpas" and not restarts else opts.variant
    try:
        s1 = mpas_order(inst, variant=variant, params=params)
        return list(s1.order), s1.variant, True
    except NoLegalOrderError as exc:
        if opts.problem == 1:
            raise
        # a lifetime cycle (an edge FREE -> user or user -> ALLOC) raises NoLegalOrderError here: no plan exists
        return lifetime_order(inst), f"topological order (no L0-legal order: {exc})", False


def _stage2(inst: Instance, order1: list[int], opts: SolveOptions, say: Progress) -> DlrResult:
    """DLR on the Stage-1 order, then the order search (which keeps DLR's plan unless it
    finds an evaluator-accepted one with less traffic); the LRU ablation keeps DLR's own
    plan. An effort without DLR's variants runs the paper's placements (best fit with
    greedy or window eviction) on the Stage-1 order and, of the order search, the wave
    search alone."""
    if opts.effort.stage2_variants:
        s2 = dlr_plan(inst, order1, victim=opts.victim, params=opts.dlr)
        order_search = opts.order_search
    else:
        paper = ("bestfit-greedy", "bestfit-window")
        s2 = dlr_plan(inst, order1, victim=opts.victim, other_orders=False, placements=paper, params=opts.dlr)
        order_search = None if opts.order_search is None else replace(opts.order_search, exact=False, lns=False)
    if order_search is not None and opts.victim == "cost":
        s2 = search_order(inst, s2, order_search, time_limit=opts.time_limit, seed=opts.seed, progress=say)
    return s2


def run_pipeline(inst: Instance, opts: SolveOptions | None = None, progress: Progress | None = None) -> SolveResult:
    """Run the stages that ``opts.problem`` needs and return the final plan and report
    (the cyclic garbage collector paused meanwhile: :func:`~dansched.pipeline.memory.collection_paused`)."""
    with collection_paused():
        return _run_stages(inst, opts or SolveOptions(), progress)


def _rival_problem3(
    inst: Instance, opts: SolveOptions, name: str, order1: list[int], s2: DlrResult, say: Progress
) -> Problem3Result:
    """Problem 3 of rival ``name`` (:data:`~dansched.pipeline.options.RIVALS`): on the solve's
    own Stage-1 order and Stage-2 result when the rival shares them, else after its own
    Stages 1 and 2."""
    ropts = rival_options(opts, name)
    if not RIVALS[name].shares_stage2:
        order1 = _stage1(inst, ropts)[0]
        s2 = _stage2(inst, order1, ropts, say)
    elif s2.evaluation.graph is None:  # the solve's own problem 3 kept only its figures
        s2 = replace(s2, evaluation=evaluate(inst, s2.plan))
    return problem3(inst, s2, order1, ropts.problem3, say)


def _rival_runs(inst: Instance, opts: SolveOptions, order1: list[int], s2: DlrResult) -> list[tuple[str, RivalRun]]:
    """The rivals of ``opts.effort`` as runs for :func:`~dansched.pipeline.problem3.rivals.with_rivals`:
    none unless the graph's ``n`` nodes have ``n * len(rivals) <= effort.rival_work``."""
    effort = opts.effort
    if not effort.rivals or inst.n * len(effort.rivals) > effort.rival_work:
        return []
    return [(name, functools.partial(_rival_problem3, inst, opts, name, order1, s2)) for name in effort.rivals]


def _run_stages(inst: Instance, opts: SolveOptions, progress: Progress | None) -> SolveResult:
    say = progress or (lambda _msg: None)
    say("Stage 1: MPAS")
    t0 = time.perf_counter()
    order1, variant1, legal1 = _stage1(inst, opts)
    stage1 = Plan(order=tuple(order1)) if legal1 else None
    if opts.problem == 1:
        assert stage1 is not None
        ev1 = judged(inst, stage1, "Stage 1 (MPAS)")
        mpas = Stage1Report(int(ev1.max_v_stay or 0), time.perf_counter() - t0, variant1)
        return SolveResult(stage1, ev1, SolveReport(1, PlanFigures.of(ev1), opts.effort_name, mpas), stage1)
    mpas = Stage1Report(max_v_stay(inst, order1), time.perf_counter() - t0, variant1)
    say("Stage 2: DLR")
    t0 = time.perf_counter()
    s2 = _stage2(inst, order1, opts, say)
    ev2 = judged(inst, s2.plan, "Stage 2 (DLR)", s2.evaluation)  # dlr_plan's evaluator verdict on s2.plan
    dlr = Stage2Report.of(ev2, time.perf_counter() - t0, s2.stats)
    if opts.problem == 2:
        report = SolveReport(2, PlanFigures.of(ev2), opts.effort_name, mpas, dlr)
        return SolveResult(s2.plan, ev2, report, stage1)
    p3 = with_rivals(inst, problem3(inst, s2, order1, opts.problem3, say), _rival_runs(inst, opts, order1, s2), say)
    s3 = p3.stage3
    relayout = None
    if s3.steps:
        relayout = RelayoutReport(PlanFigures.of(s3.layout_evaluation), s3.seconds, len(s3.steps), list(s3.steps))
    stats = s3.cpe.stats
    cpe = Stage3Report(
        PlanFigures.of(p3.evaluation),
        p3.seconds,
        p3.runs,
        stats.found_by,
        dict(stats.list_schedule_makespans),
        stats.local_evaluations,
        stats.exact_windows or stats.memory_windows,
    )
    report = SolveReport(
        3,
        PlanFigures.of(p3.evaluation),
        opts.effort_name,
        mpas,
        dlr,
        relayout,
        cpe,
        p3.budget,
        p3.candidates,
        p3.search,
        frontier_rows(inst, p3.points, p3.budget.base, params=opts.bounds),
        allowances_tried(p3.points),
        p3.walk,
    )
    return SolveResult(p3.plan, p3.evaluation, report, stage1, [row.point for row in report.frontier])
