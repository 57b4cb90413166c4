"""Problem 3's Stage-2 candidates: the plans Stage 3 may turn into the final plan.

Stage 3 only reorders inside a memory skeleton (paper Eq. 14), so which Stage-2 plan it
starts from decides much of the makespan. A *candidate* is a complete Stage-2 plan judged
by the shared evaluator, with the name of the *source* that made it. Sources register by
name in :data:`SOURCES`; the pipeline runs those its effort names
(:attr:`dansched.params.EffortParams.sources`), keeps the candidates the one traffic budget
admits (:class:`dansched.budget.TrafficBudget`), screens them and runs the full Stage 3 on
the best few (``dansched.pipeline.problem3``). The first candidate is always the problem-2 plan
(:func:`problem2_candidate`: source ``dlr``, or ``order-search`` when the order search
found it). The sources:

- ``dlr``: DLR's other (order, placement, victim rule) combinations, least traffic
  first (paper Algorithm 2);
- ``victim-rules``: DLR's placements on the problem-2 plan's order with each other victim
  rule of the effort:
  the recency-aware rule (:class:`~dansched.stages.dlr.victim.RecencyAware`: reloads land on
  addresses whose last reader finished long ago) and LRU (paper Table 4);
- ``algorithm-1-order``: DLR on the literal Algorithm-1 order (a different skeleton);
- ``reservation``: the problem-2 plan's order placed again with rooms taken apart from the
  victims, the victims planned around no, one, two... rooms per tier
  (:mod:`dansched.pipeline.problem3.sources.reservation`: double buffering in general form);
- ``time-driven``: the time-driven list scheduler with memory
  (:mod:`dansched.pipeline.problem3.sources.timed`), one candidate per trial;
- ``dlr-on-time-driven``: DLR's placement on the fastest time-driven order (the
  scheduler's engine overlap with DLR's spill decisions).

A source yields every plan it made, whatever its traffic, one at a time (the pipeline
screens each and forgets its per-node detail before the next is made): the budget
filters, in one place, so every path keeps exactly the plans within it. A source that cannot place a plan
returns fewer candidates (:class:`~dansched.errors.PlacementFailed` and
:class:`~dansched.errors.TimedFailed` are expected outcomes; anything else is a bug and
propagates).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ....budget import TrafficBudget
from ....errors import NoLegalOrderError, PlacementFailed, TimedFailed
from ....instance import Instance
from ....models.bounds.traffic import traffic_lower_bound
from ....params import Problem3Params
from ....plan import Plan
from ....reprs import one_line_repr
from ....simulate import Evaluation, evaluate
from ....stages.dlr.reorder import tighten_lifetimes
from ....stages.dlr.stage import DlrResult, dlr_plan
from ....stages.dlr.victim import VICTIMS
from ....stages.mpas.stage import mpas_order
from ..frontier import saturated
from .reservation import reservation_plan, reservation_settings, tile_sizes
from .timed import timed_schedule

__all__ = ["Candidate", "CandidateRecord", "SourceContext", "CandidateSource", "SOURCES", "problem2_candidate"]


@dataclass
class CandidateRecord:
    """One Stage-2 candidate of problem 3: its source and detail, its traffic, its screened
    makespan (``None`` when the budget did not admit it), its makespan after the full Stage
    3 (``None`` when it was not among the best screened) and whether it became the final
    plan (``kept``). A plan identical to an earlier candidate's is not screened again:
    ``same_as`` is that candidate's row index."""

    __repr__ = one_line_repr

    source: str
    detail: str
    traffic: int
    screened: int | None = None
    makespan: int | None = None
    kept: bool = False
    same_as: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "detail": self.detail,
            "traffic": self.traffic,
            "screened": self.screened,
            "makespan": self.makespan,
            "kept": self.kept,
            "same_as": self.same_as,
        }


@dataclass(frozen=True)
class Candidate:
    """A complete Stage-2 plan, the evaluator's verdict on it, the source that made it and
    what within the source (``detail``: a DLR combination, a trial's parameters)."""

    plan: Plan
    evaluation: Evaluation
    source: str
    detail: str = ""

    @property
    def traffic(self) -> int:
        return int(self.evaluation.extra_traffic or 0)


@dataclass
class SourceContext:
    """What a source may read: the instance, the Stage-1 order, Stage 2's result, the
    budget, problem 3's parameters (``params``, from the solve's options: the effort, the
    stage parameters, the Stage-1 variant and victim choice the caller chose, the
    time-driven scheduler's trials), and the candidates the sources before it made
    (``made``, whatever their traffic)."""

    inst: Instance
    order1: Sequence[int]
    stage2: DlrResult
    budget: TrafficBudget
    params: Problem3Params
    made: list[Candidate] = field(default_factory=list)


CandidateSource = Callable[[SourceContext], Iterator[Candidate]]


def _accepted(inst: Instance, plan: Plan, source: str, detail: str) -> Iterator[Candidate]:
    """The candidate of ``plan`` when the evaluator accepts it (an invalid plan is a bug of
    its source, never a result: the tests catch it)."""
    ev = evaluate(inst, plan)
    if ev.valid:
        yield Candidate(plan, ev, source, detail)


def _dlr_candidate(
    ctx: SourceContext, order: Sequence[int], source: str, detail: str, **kw: object
) -> Iterator[Candidate]:
    """DLR on ``order`` (keyword arguments of :func:`~dansched.stages.dlr.stage.dlr_plan`) as
    one candidate, none when it cannot place; its exact spill plan is not packed when its
    traffic alone passes the budget (that plan could not be admitted)."""
    try:
        params = replace(ctx.params.dlr, traffic_limit=ctx.budget.allowance)
        got = dlr_plan(ctx.inst, order, params=params, **kw)  # type: ignore[arg-type]
    except PlacementFailed:
        return
    if got.evaluation.valid:
        yield Candidate(got.plan, got.evaluation, source, detail)


def problem2_candidate(s2: DlrResult) -> Candidate:
    """The problem-2 plan as a candidate: source ``dlr`` (detail: its combination) or
    ``order-search`` (detail: the method that found it)."""
    if s2.stats.found_by == "dlr":
        return Candidate(s2.plan, s2.evaluation, "dlr", s2.stats.combination)
    return Candidate(s2.plan, s2.evaluation, "order-search", s2.stats.found_by)


def dlr_source(ctx: SourceContext) -> Iterator[Candidate]:
    """Up to ``effort.dlr_variants`` of DLR's other combinations, least traffic first (one
    whose scan already exceeds the budget is not built: its plan carries the scan's traffic)."""
    seen = {ctx.stage2.stats.combination}
    made = 0
    for v in sorted(ctx.stage2.variants, key=lambda v: (v.key, v.name)):
        if made >= ctx.params.effort.dlr_variants or not ctx.budget.admits(v.scan.traffic):
            return
        if v.name in seen:
            continue
        seen.add(v.name)
        for cand in _accepted(ctx.inst, v.plan(ctx.inst), "dlr", v.name):
            made += 1
            yield cand


def victim_rules_source(ctx: SourceContext) -> Iterator[Candidate]:
    """DLR's placements (no order search) on the problem-2 plan's order, spill nodes dropped,
    with each victim rule of ``effort.victim_rules`` (only when the caller's victim choice
    is the cost-aware one: an ablation keeps its own rules). The order search would cost several
    times more for the same plans: measured on FlashAttention_Case0 and Conv_Case0, the
    rule's plan on the searched order and on this one reach the same makespan."""
    if ctx.params.victim != "cost":
        return
    order = [v for v in ctx.stage2.plan.order if v < ctx.inst.n]
    for rule in ctx.params.effort.victim_rules:
        yield from _dlr_candidate(ctx, order, "victim-rules", rule, victim=rule, other_orders=False)


def algorithm1_order_source(ctx: SourceContext) -> Iterator[Candidate]:
    """DLR (the caller's victim choice, with its variants, other orders and placements: on the
    literal order alone it carries several times the traffic) on the literal Algorithm-1
    order (``mpas-paper``), unless that is already the Stage-1 order; none when the graph
    has no L0-legal order."""
    if ctx.params.variant == "mpas-paper":
        return
    try:
        order = mpas_order(ctx.inst, variant="mpas-paper", params=ctx.params.mpas).order
    except NoLegalOrderError:
        return
    yield from _dlr_candidate(ctx, order, "algorithm-1-order", "mpas-paper", victim=ctx.params.victim)


def paper_placements_source(ctx: SourceContext) -> Iterator[Candidate]:
    """DLR with the paper's placements alone (best fit, greedy and window eviction: Algorithm
    2) on the Stage-1 order without restarts (the compacted input order made lazy and
    L0-legal), the Stage 2 of ``--effort fast``: another skeleton, often a little heavier,
    that the full Stage 3 can make faster than its screen suggests. None when that order is
    the Stage-1 order already, or the graph has no L0-legal order."""
    if ctx.params.variant != "mpas":
        return
    params = replace(ctx.params.mpas, restart_work=0)
    try:
        order = mpas_order(ctx.inst, variant="mpas-greedy", params=params).order
    except NoLegalOrderError:
        return
    if list(order) == list(ctx.order1):
        return
    paper = ("bestfit-greedy", "bestfit-window")
    yield from _dlr_candidate(
        ctx, order, "paper-placements", "mpas-greedy", victim=ctx.params.victim, other_orders=False, placements=paper
    )


def reservation_source(ctx: SourceContext) -> Iterator[Candidate]:
    """The problem-2 plan's order (spill nodes dropped) placed again with each room taken
    apart from its victims (earliest released) and the victims planned around a reservation
    (:mod:`~dansched.pipeline.problem3.sources.reservation`): none, then one room more per step
    of each sweep. Each setting is placed with ``min-reload`` (the least reloads, then the
    least recently used) and with the first rule of the caller's victim choice (``score``,
    Eq. 31: the two differ in which victims leave, and neither is faster everywhere), or with
    that rule alone when the caller chose another than the cost-aware one. A sweep stops at
    the first setting whose plans all pass the budget, and after the first whose makespan is
    within ``effort.saturation`` of its busiest pipe's load."""
    inst, effort = ctx.inst, ctx.params.effort
    index = {bid: i for i, bid in enumerate(inst.buf_id.tolist())}
    tiles = tile_sizes(inst, [index[bid] for bid, _ in ctx.stage2.plan.spills])
    order = [v for v in ctx.stage2.plan.order if v < inst.n]
    first = VICTIMS[ctx.params.victim][0]
    rules = ("min-reload", first) if ctx.params.victim == "cost" else (first,)
    for sweep in reservation_settings(inst, tiles, effort.reservation_steps, effort.reservation_parts):
        for setting in sweep:
            made = full = False
            for rule in rules:
                plan = reservation_plan(inst, order, setting, rule, ctx.budget.allowance)
                detail = f"{setting.describe(inst)}, {rule}"
                cand = None if plan is None else next(_accepted(inst, plan, "reservation", detail), None)
                if cand is not None:
                    ev = cand.evaluation
                    made, full = True, full or saturated(int(ev.makespan or 0), ev, effort.saturation)
                    yield cand
            if not made or full:
                break


def time_driven_source(ctx: SourceContext) -> Iterator[Candidate]:
    """The time-driven scheduler with each trial's parameters on the problem-2 plan's order;
    a trial stops as soon as its traffic passes the budget (no candidate then). Only with the
    cost-aware victim rule."""
    if ctx.params.victim != "cost":
        return
    reference = [v for v in ctx.stage2.plan.order if v < ctx.inst.n]
    for trial in ctx.params.timed_trials:
        try:
            plan = timed_schedule(ctx.inst, reference, trial, traffic_limit=ctx.budget.allowance)
        except TimedFailed:
            continue
        yield from _accepted(ctx.inst, plan, "time-driven", trial.name)


def dlr_on_time_driven_source(ctx: SourceContext) -> Iterator[Candidate]:
    """DLR's placement and victim rules (no order search) on the order of the fastest
    time-driven candidate, spill nodes dropped (its memory events kept in DLR's own way: the
    order's engine overlap with DLR's spills). DLR is not run when the capacity
    cover bound of that order (lifetimes tightened as DLR does) already exceeds the budget:
    no placement of the order could be admitted, so the answer is the same, only sooner."""
    timed = [c for c in ctx.made if c.source == "time-driven"]
    if not timed:
        return
    fastest = min(timed, key=lambda c: int(c.evaluation.makespan or 0))
    order = [v for v in fastest.plan.order if v < ctx.inst.n]
    if not ctx.budget.admits(traffic_lower_bound(ctx.inst, tighten_lifetimes(ctx.inst, order)).value):
        return
    yield from _dlr_candidate(
        ctx, order, "dlr-on-time-driven", fastest.detail, victim=ctx.params.victim, other_orders=False
    )


SOURCES: dict[str, CandidateSource] = {  # by name, in the order the pipeline runs them
    "dlr": dlr_source,
    "victim-rules": victim_rules_source,
    "algorithm-1-order": algorithm1_order_source,
    "paper-placements": paper_placements_source,
    "reservation": reservation_source,
    "time-driven": time_driven_source,
    "dlr-on-time-driven": dlr_on_time_driven_source,
}
