"""The makespan search over complete plans (problem 3): adaptive large-neighbourhood search
whose moves change the memory skeleton, not only the order inside it.

Stage 3 reorders inside a memory skeleton chosen without time; every wait that keeps a plan
above its floors is then a memory decision: which buffer a spill evicts, when a reload
runs, which addresses a segment takes. This search edits those decisions on a complete,
evaluator-accepted plan within the traffic budget, and its objective is the shared
evaluator's makespan after one list-scheduling pass inside the new skeleton (the screen of
:mod:`dansched.pipeline.problem3.screen`, memory events free to interleave).

The adaptive large-neighbourhood search of the ``alns`` package (operator selection by a
roulette wheel whose weights follow each operator's success, hill climbing that accepts
equal plans, stopping after a number of iterations) drives it:

- *destroy* operators pick the focus: a reload on the critical chain (paper Eq. 34), a
  segment whose start waits on an address-reuse edge of the critical chain, or any spill;
- *repair* operators change the plan there (:mod:`dansched.pipeline.problem3.search.moves`):
  re-addressing, reload hoisting, delayed eviction, victim swap, room for a reload.

Deterministic: a seeded generator, an iteration budget from the effort
(:class:`SearchParams`), never a clock. Only plans the evaluator accepts within the budget
become states. :class:`SearchResult` says which moves improved the plan and by how much.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ....instance import Instance
from ....params import SearchParams
from ....plan import Plan
from ....simulate import Evaluation, evaluate
from ....stages.cpe.refine import makespan_of
from ....stages.cpe.skeleton import Skeleton, critical_chain
from ..resequence import loose_list_schedule
from .layout import Layout
from .moves import MoveContext, add_room, delay_eviction, hoist_reload, readdress, swap_victim

__all__ = ["SearchParams", "SearchResult", "makespan_search", "DESTROY", "REPAIR"]

INFEASIBLE = float("inf")


@dataclass
class PlanState:
    """A state of the search: a valid plan within the budget, its evaluation (with its
    augmented graph and timing), its layout, the focus a destroy operator chose and the
    repair that made it."""

    plan: Plan | None
    evaluation: Evaluation | None
    layout: Layout | None
    focus: tuple[str, int] | None = None
    move: str = ""

    def objective(self) -> float:
        return INFEASIBLE if self.evaluation is None else float(self.evaluation.makespan or 0)


@dataclass
class SearchResult:
    """The best plan (``plan``, ``evaluation``), the makespan the search started from, the
    iterations run, and per move how many times it made a new best plan and the cycles
    those improvements saved (``improved``)."""

    plan: Plan
    evaluation: Evaluation
    start: int
    iterations: int
    improved: dict[str, dict[str, int]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "start_makespan": self.start,
            "makespan": int(self.evaluation.makespan or 0),
            "iterations": self.iterations,
            "improved": self.improved,
        }


def _critical(state: PlanState) -> list[int]:
    ev = state.evaluation
    assert ev is not None and ev.graph is not None and state.plan is not None
    assert ev.start is not None and ev.end is not None
    return critical_chain(Skeleton(ev.graph, [], ()), state.plan.order, ev.start, ev.end)  # the timing graph only


def _with_focus(state: PlanState, focus: tuple[str, int] | None) -> PlanState:
    return PlanState(state.plan, state.evaluation, state.layout, focus)


def critical_reload(state: PlanState, rng: np.random.Generator, inst: Instance, **_: Any) -> PlanState:
    """Focus: a SPILL_IN on the critical chain (none: any spill)."""
    n = inst.n
    reloads = [(v - n) // 2 for v in _critical(state) if v >= n and (v - n) % 2 == 1]
    if not reloads:
        return random_spill(state, rng, inst)
    return _with_focus(state, ("spill", reloads[int(rng.integers(len(reloads)))]))


def critical_reuse(state: PlanState, rng: np.random.Generator, inst: Instance, **_: Any) -> PlanState:
    """Focus: a segment start on the critical chain bound by an address-reuse edge."""
    ev = state.evaluation
    assert ev is not None and ev.graph is not None and ev.start is not None and ev.end is not None
    start, end = ev.start, ev.end
    reuse: dict[int, list[int]] = {}
    for u, w in ev.graph.reuse_edges:
        reuse.setdefault(w, []).append(u)
    starts = [v for v in _critical(state) if any(end[u] == start[v] for u in reuse.get(v, ()))]
    if not starts:
        return _with_focus(state, None)
    return _with_focus(state, ("segment", starts[int(rng.integers(len(starts)))]))


def random_spill(state: PlanState, rng: np.random.Generator, inst: Instance, **_: Any) -> PlanState:
    """Focus: any spill of the plan."""
    ev = state.evaluation
    assert ev is not None and ev.graph is not None
    count = len(ev.graph.spill_buf)
    return _with_focus(state, ("spill", int(rng.integers(count))) if count else None)


DESTROY: dict[str, Callable[..., PlanState]] = {
    "critical reload": critical_reload,
    "critical reuse": critical_reuse,
    "random spill": random_spill,
}


def _judge(inst: Instance, layout: Layout | None, allowance: int, move: str) -> PlanState:
    """The state of ``layout``: evaluated, within ``allowance``, then reordered by one
    list-scheduling pass inside its skeleton when that is faster."""
    if layout is None:
        return PlanState(None, None, None, move=move)
    plan = layout.plan(inst)
    ev = evaluate(inst, plan)
    if not ev.valid or int(ev.extra_traffic or 0) > allowance:
        return PlanState(None, None, None, move=move)
    assert ev.graph is not None and ev.makespan is not None
    skel, order = loose_list_schedule(inst, plan, ev.graph)
    if makespan_of(skel, order) < ev.makespan:
        faster = Plan(tuple(order), plan.offsets, plan.spills)
        ev2 = evaluate(inst, faster)
        if ev2.valid and ev2.makespan is not None and ev2.makespan < ev.makespan:
            plan, ev = faster, ev2
    assert ev.graph is not None
    return PlanState(plan, ev, Layout.of(inst, plan, ev.graph), move=move)


def _repair(move: Callable[..., Layout | None], needs: str) -> Callable[..., PlanState]:
    """A repair operator from a move of :mod:`.moves` that applies to a spill or a segment."""

    def apply(
        state: PlanState, rng: np.random.Generator, inst: Instance, allowance: int, choices: int, **_: Any
    ) -> PlanState:
        name = apply.__name__
        if state.focus is None or state.layout is None or state.evaluation is None:
            return PlanState(None, None, None, move=name)
        kind, what = state.focus
        ctx = MoveContext(
            inst, state.layout, state.evaluation, allowance - int(state.evaluation.extra_traffic or 0), choices
        )
        if needs == "spill":
            if kind == "segment":
                seg = ctx.by_start.get(what)
                what = (seg.start_node - inst.n) // 2 if seg is not None and seg.slot >= 0 else -1
            got = move(ctx, what, rng) if what >= 0 else None
        else:
            seg = ctx.by_start.get(what if kind == "segment" else inst.n + 2 * what + 1)
            got = move(ctx, seg, rng) if seg is not None else None
        return _judge(inst, got, allowance, name)

    return apply


REPAIR: dict[str, Callable[..., PlanState]] = {}
for _name, _move, _needs in (
    ("readdress", readdress, "segment"),
    ("hoist reload", hoist_reload, "spill"),
    ("delay eviction", delay_eviction, "spill"),
    ("swap victim", swap_victim, "spill"),
    ("add room", add_room, "spill"),
):
    _op = _repair(_move, _needs)
    _op.__name__ = _name
    REPAIR[_name] = _op


def makespan_search(
    inst: Instance, plan: Plan, ev: Evaluation, allowance: int, params: SearchParams, seed: int = 0
) -> SearchResult:
    """The search (module docstring) from the valid ``plan`` (judged ``ev``, with its
    augmented graph), keeping extra traffic within ``allowance``."""
    assert ev.valid and ev.graph is not None and ev.makespan is not None
    start = PlanState(plan, ev, Layout.of(inst, plan, ev.graph))
    iterations = params.budget(ev.graph.n)
    result = SearchResult(plan, ev, int(ev.makespan), iterations)
    if iterations <= 0:
        return result
    # the alns package imports matplotlib's pyplot when it loads (0.7 s): only a search pays it
    from alns import ALNS
    from alns.accept import HillClimbing
    from alns.select import RouletteWheel
    from alns.stop import MaxIterations

    alns = ALNS(np.random.default_rng(seed))
    for name, op in DESTROY.items():
        alns.add_destroy_operator(op, name)
    for name, op in REPAIR.items():
        alns.add_repair_operator(op, name)
    best_seen = [start.objective()]

    def on_best(cand: PlanState, _rng: np.random.Generator, **_: Any) -> None:
        row = result.improved.setdefault(cand.move, {"times": 0, "cycles": 0})
        row["times"] += 1
        row["cycles"] += int(best_seen[0] - cand.objective())
        best_seen[0] = cand.objective()

    alns.on_best(on_best)
    select = RouletteWheel(list(params.scores), params.decay, len(DESTROY), len(REPAIR))
    got = alns.iterate(
        start, select, HillClimbing(), MaxIterations(iterations), inst=inst, allowance=allowance, choices=params.choices
    )
    best = got.best_state
    if best.plan is not None and best.evaluation is not None and best.objective() < start.objective():
        result.plan, result.evaluation = best.plan, best.evaluation
    return result
