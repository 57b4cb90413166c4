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

- *destroy* operators (:class:`Destroy`, registered in :data:`DESTROY`) pick the focus, a
  residency segment: a reload on the critical chain (paper Eq. 34), a segment whose start
  waits on an address-reuse edge of the critical chain, or any spill's reload;
- *repair* operators are the moves of :mod:`dansched.pipeline.problem3.search.moves`
  (:class:`~dansched.pipeline.problem3.search.moves.Move`, registered in
  :data:`~dansched.pipeline.problem3.search.moves.MOVES`): re-addressing, reload hoisting,
  delayed eviction, victim swap, room for a reload.

Deterministic: a seeded generator, an iteration budget from the effort
(:class:`SearchParams`), never a clock. Only plans the evaluator accepts within the budget
become states. :class:`SearchResult` says which moves improved the plan and by how much.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from ....instance import Instance
from ....params import SearchParams
from ....plan import Plan
from ....simulate import Evaluation, Segment, evaluate, spill_node_ids, spill_of_node
from ....stages.cpe.refine import makespan_of
from ....stages.cpe.skeleton import Skeleton, critical_chain
from ..resequence import loose_list_schedule
from .layout import Layout
from .moves import MOVES, Move, MoveContext

__all__ = ["SearchParams", "SearchResult", "makespan_search", "Destroy", "DESTROY", "PlanState"]

INFEASIBLE = float("inf")


@dataclass
class PlanState:
    """A state of the search: a valid plan within the budget, its evaluation (with its
    augmented graph, timing and segments), its layout, the focus a destroy operator chose
    (the node that starts the focus segment) and the repair that made it."""

    plan: Plan | None
    evaluation: Evaluation | None
    layout: Layout | None
    focus: int | None = None
    move: str = ""

    def objective(self) -> float:
        return INFEASIBLE if self.evaluation is None else float(self.evaluation.makespan or 0)

    def with_focus(self, focus: int | None) -> PlanState:
        return PlanState(self.plan, self.evaluation, self.layout, focus)


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


class Destroy(Protocol):
    """A destroy operator: the focus of the next repair (the node that starts the focus
    segment), or ``None`` when it finds none."""

    name: str

    def choose(self, state: PlanState, rng: np.random.Generator, inst: Instance) -> int | None: ...


class RandomSpill:
    """Focus: the reload of any spill of the plan."""

    name = "random spill"

    def choose(self, state: PlanState, rng: np.random.Generator, inst: Instance) -> int | None:
        ev = state.evaluation
        assert ev is not None and ev.graph is not None
        count = len(ev.graph.spill_buf)
        return spill_node_ids(inst.n, int(rng.integers(count)))[1] if count else None


class CriticalReload:
    """Focus: a SPILL_IN on the critical chain (none: any spill's)."""

    name = "critical reload"

    def choose(self, state: PlanState, rng: np.random.Generator, inst: Instance) -> int | None:
        n = inst.n
        reloads = [v for v in _critical(state) if v >= n and not spill_of_node(n, v)[1]]
        if not reloads:
            return RandomSpill().choose(state, rng, inst)
        return reloads[int(rng.integers(len(reloads)))]


class CriticalReuse:
    """Focus: a segment start on the critical chain bound by an address-reuse edge."""

    name = "critical reuse"

    def choose(self, state: PlanState, rng: np.random.Generator, inst: Instance) -> int | None:
        ev = state.evaluation
        assert ev is not None and ev.graph is not None and ev.start is not None and ev.end is not None
        start, end = ev.start, ev.end
        reuse: dict[int, list[int]] = {}
        for u, w in ev.graph.reuse_edges:
            reuse.setdefault(w, []).append(u)
        starts = [v for v in _critical(state) if any(end[u] == start[v] for u in reuse.get(v, ()))]
        return starts[int(rng.integers(len(starts)))] if starts else None


DESTROY: dict[str, Destroy] = {d.name: d for d in (CriticalReload(), CriticalReuse(), RandomSpill())}


def _state_of(inst: Instance, layout: Layout | None, allowance: int, move: str) -> PlanState:
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
    return PlanState(plan, ev, Layout.of(inst, plan, ev), move=move)


def _repair(
    move: Move, state: PlanState, rng: np.random.Generator, inst: Instance, allowance: int, choices: int
) -> PlanState:
    """``move`` applied at ``state``'s focus, judged (:func:`_state_of`)."""
    if state.focus is None or state.layout is None or state.evaluation is None:
        return PlanState(None, None, None, move=move.name)
    headroom = allowance - int(state.evaluation.extra_traffic or 0)
    ctx = MoveContext(inst, state.layout, state.evaluation, headroom, choices)
    focus: Segment | None = ctx.by_start.get(state.focus)
    got = move.apply(ctx, focus, rng) if focus is not None else None
    return _state_of(inst, got, allowance, move.name)


def _destroy_operator(destroy: Destroy) -> Any:
    """``destroy`` as an operator of the ``alns`` package."""

    def op(state: PlanState, rng: np.random.Generator, inst: Instance, **_: Any) -> PlanState:
        return state.with_focus(destroy.choose(state, rng, inst))

    return op


def _repair_operator(move: Move) -> Any:
    """``move`` as an operator of the ``alns`` package."""

    def op(
        state: PlanState, rng: np.random.Generator, inst: Instance, allowance: int, choices: int, **_: Any
    ) -> PlanState:
        return _repair(move, state, rng, inst, allowance, choices)

    return op


def makespan_search(
    inst: Instance, plan: Plan, ev: Evaluation, allowance: int, params: SearchParams, seed: int = 0
) -> SearchResult:
    """The search (module docstring) from the valid ``plan`` (judged ``ev``, with its
    augmented graph), keeping extra traffic within ``allowance``."""
    assert ev.valid and ev.graph is not None and ev.makespan is not None
    start = PlanState(plan, ev, Layout.of(inst, plan, ev))
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
    for name, destroy in DESTROY.items():
        alns.add_destroy_operator(_destroy_operator(destroy), name)
    for name, move in MOVES.items():
        alns.add_repair_operator(_repair_operator(move), name)
    best_seen = [start.objective()]

    def on_best(cand: PlanState, _rng: np.random.Generator, **_: Any) -> None:
        row = result.improved.setdefault(cand.move, {"times": 0, "cycles": 0})
        row["times"] += 1
        row["cycles"] += int(best_seen[0] - cand.objective())
        best_seen[0] = cand.objective()

    alns.on_best(on_best)
    select = RouletteWheel(list(params.scores), params.decay, len(DESTROY), len(MOVES))
    got = alns.iterate(
        start, select, HillClimbing(), MaxIterations(iterations), inst=inst, allowance=allowance, choices=params.choices
    )
    best = got.best_state
    if best.plan is not None and best.evaluation is not None and best.objective() < start.objective():
        result.plan, result.evaluation = best.plan, best.evaluation
    return result
