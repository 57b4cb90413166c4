"""The makespan search over complete plans (problem 3): adaptive large-neighbourhood search
whose moves change the memory skeleton, not only the order inside it.

Stage 3 reorders inside a memory skeleton chosen without time; every wait that keeps a plan
above its floors is then a decision that order and memory make together: which buffer a
spill evicts, when a reload runs, which addresses a segment takes, which tile's loads go
first. This search edits those decisions on a complete, evaluator-accepted plan within the
traffic budget; its objective is the shared evaluator's makespan after one
list-scheduling pass inside the new skeleton (the screen of
:mod:`dansched.pipeline.problem3.stage3.screen`, memory events free to interleave).

Each iteration (adaptive large-neighbourhood search):

1. a *repair* operator is drawn by a roulette wheel whose weights follow each operator's
   success (:data:`MOVES`: the segment moves of :mod:`.moves` and the CP-SAT window moves
   of :mod:`.windows`);
2. a *destroy* operator is drawn the same way among those that offer a focus the repair
   accepts (:mod:`.focus`: waits on the critical chain, paper Eq. 34, the head, any
   spill), and one of its foci at random;
3. the repair's plan is judged; hill climbing keeps it when it is no slower. A (repair,
   focus) pair that gave no new valid plan is not offered again until the plan changes.

Both wheels score the outcome (new best, better, accepted, rejected) and decay; a window
move stops being drawn once the round's deterministic CP-SAT time is spent. Deterministic:
a seeded generator, budgets counted in iterations, node-visits and CP-SAT's deterministic
time, never a clock. Only plans the evaluator accepts within the budget become states.
:class:`SearchResult` says, per operator, how often it was tried, applied (a valid plan
within the budget, other than the current one), made a new best plan, and the cycles
those new bests saved.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ....instance import Instance
from ....interrupt import stopping
from ....params import SearchParams
from ....plan import Plan
from ....reprs import one_line_repr
from ....simulate import Evaluation, evaluate
from ....stages.cpe.refine import makespan_of
from ..stage3.resequence import loose_list_schedule
from .focus import DESTROY, Chain
from .layout import Layout
from .moves import SEGMENT_MOVES, Move, MoveContext
from .windows import JointWindow, OrderWindow

__all__ = ["SearchResult", "SearchRound", "OperatorStats", "makespan_search", "MOVES", "PlanState", "state_of"]

MOVES: dict[str, Move] = {m.name: m for m in (*SEGMENT_MOVES, OrderWindow(), JointWindow())}
NEW_BEST, BETTER, ACCEPTED, REJECTED = range(4)


@dataclass
class OperatorStats:
    """What one operator did in a round: ``tried`` (it ran on a focus), ``applied`` (its
    plan was valid, within the budget and not the current one), ``improved`` (a new best
    plan), ``saved`` (the cycles those new bests took off)."""

    tried: int = 0
    applied: int = 0
    improved: int = 0
    saved: int = 0

    def to_dict(self) -> dict[str, int]:
        return {"tried": self.tried, "applied": self.applied, "improved": self.improved, "saved": self.saved}


@dataclass
class PlanState:
    """A state of the search: a valid plan within the budget, its evaluation (with its
    augmented graph, timing and segments) and its layout; the move context and the critical
    chain are built on first use."""

    plan: Plan
    evaluation: Evaluation
    layout: Layout
    _ctx: MoveContext | None = field(default=None, repr=False)
    _chain: Chain | None = field(default=None, repr=False)
    failed: set[tuple[str, int]] = field(default_factory=set, repr=False)  # (move, focus) that gave no plan here

    @property
    def makespan(self) -> int:
        return self.evaluation.metrics.makespan

    def context(self, inst: Instance, allowance: int, params: SearchParams, seed: int) -> MoveContext:
        if self._ctx is None:
            headroom = allowance - self.evaluation.metrics.extra_traffic
            self._ctx = MoveContext(inst, self.layout, self.evaluation, headroom, params, seed)
        return self._ctx

    def chain(self) -> Chain:
        if self._chain is None:
            self._chain = Chain(self.plan.order, self.evaluation)
        return self._chain


@dataclass
class SearchResult:
    """The best plan (``plan``, ``evaluation``), the makespan the search started from, the
    iterations run, the deterministic CP-SAT time the window moves spent, and per operator
    (repairs and destroys) what it did (:class:`OperatorStats`)."""

    plan: Plan
    evaluation: Evaluation
    start: int
    iterations: int
    window_time: float = 0.0
    operators: dict[str, OperatorStats] = field(default_factory=dict)

    def summary(self) -> SearchRound:
        """What the round did, as the report shows it (:class:`SearchRound`)."""
        operators = {name: replace(s) for name, s in self.operators.items()}
        return SearchRound(self.start, self.evaluation.metrics.makespan, self.iterations, self.window_time, operators)


@dataclass(frozen=True)
class SearchRound:
    """One round of the makespan search as the report shows it: the makespan it started
    from and the one it reached, the iterations run, the deterministic CP-SAT time its window
    moves spent, and what each operator did (:class:`OperatorStats`)."""

    __repr__ = one_line_repr

    start_makespan: int
    makespan: int
    iterations: int
    window_time: float
    operators: dict[str, OperatorStats]

    def to_dict(self) -> dict[str, Any]:
        return {
            "start_makespan": self.start_makespan,
            "makespan": self.makespan,
            "iterations": self.iterations,
            "window_time": round(self.window_time, 3),
            "operators": {name: s.to_dict() for name, s in self.operators.items()},
        }


def state_of(inst: Instance, layout: Layout, allowance: int) -> PlanState | None:
    """The state of ``layout``: evaluated, within ``allowance``, then reordered by one
    list-scheduling pass inside its skeleton when that is faster; None when the evaluator
    rejects it or it carries more traffic."""
    plan = layout.plan(inst)
    ev = evaluate(inst, plan)
    if not ev.valid or ev.metrics.extra_traffic > allowance:
        return None
    assert ev.graph is not None
    skel, order = loose_list_schedule(inst, plan, ev.graph)
    if makespan_of(skel, order) < ev.metrics.makespan:
        faster = Plan(tuple(order), plan.offsets, plan.spills)
        ev2 = evaluate(inst, faster)
        if ev2.valid and ev2.metrics.makespan < ev.metrics.makespan:
            plan, ev = faster, ev2
    return PlanState(plan, ev, Layout.of(inst, plan, ev))


class _Wheel:
    """A roulette wheel over named operators: draw in proportion to the weights, then
    ``w = decay * w + (1 - decay) * score`` of the outcome."""

    def __init__(self, names: list[str], params: SearchParams) -> None:
        self.names, self.params = names, params
        self.weight = {name: 1.0 for name in names}

    def draw(self, rng: np.random.Generator, allowed: list[str]) -> str:
        w = np.array([self.weight[n] for n in allowed], dtype=float)
        total = float(w.sum())
        if total <= 0:
            return allowed[int(rng.integers(len(allowed)))]
        return allowed[int(rng.choice(len(allowed), p=w / total))]

    def score(self, name: str, outcome: int) -> None:
        d = self.params.decay
        self.weight[name] = d * self.weight[name] + (1 - d) * self.params.scores[outcome]


def makespan_search(
    inst: Instance,
    plan: Plan,
    ev: Evaluation,
    allowance: int,
    params: SearchParams,
    seed: int = 0,
    moves_done: Callable[[int, int], None] | None = None,
) -> SearchResult:
    """The search (module docstring) from the valid ``plan`` (judged ``ev``, with its
    augmented graph), keeping extra traffic within ``allowance``. ``moves_done(done,
    budget)`` is told the moves made of the budget, at the start, every twentieth of it
    and at the end."""
    assert ev.valid and ev.graph is not None
    current = best = PlanState(plan, ev, Layout.of(inst, plan, ev))
    iterations = params.budget(ev.graph.n)
    result = SearchResult(plan, ev, current.makespan, iterations)
    stats = result.operators = {name: OperatorStats() for name in (*MOVES, *DESTROY)}
    repairs, destroys = _Wheel(list(MOVES), params), _Wheel(list(DESTROY), params)
    rng = np.random.default_rng(seed)
    tell = moves_done or (lambda _done, _budget: None)
    every = max(1, iterations // 20)
    tell(0, iterations)
    for done in range(iterations):
        if stopping():  # stopped early (dansched.interrupt): the best plan so far
            result.iterations = done
            break
        if done and done % every == 0:
            tell(done, iterations)
        moves = [m for m, mv in MOVES.items() if not mv.uses_cpsat or result.window_time < params.window_budget]
        name = repairs.draw(rng, moves)
        move = MOVES[name]
        ctx = current.context(inst, allowance, params, seed)
        offered = {
            d: [v for v in DESTROY[d].foci(current.chain()) if (name, v) not in current.failed and move.accepts(ctx, v)]
            for d in DESTROY
        }
        open_ = [d for d in DESTROY if offered[d]]
        if not open_:
            repairs.score(name, REJECTED)
            continue
        dname = destroys.draw(rng, open_)
        foci = offered[dname]
        focus = foci[int(rng.integers(len(foci)))]
        stats[name].tried += 1
        stats[dname].tried += 1
        if move.uses_cpsat:
            result.window_time += params.window_time
        got = move.apply(ctx, focus, rng)
        state = state_of(inst, got, allowance) if got is not None else None
        if state is None or state.plan == current.plan:  # nothing new here: not drawn again on this plan
            current.failed.add((name, focus))
        outcome = REJECTED
        if state is not None and state.plan != current.plan:
            for n in (name, dname):
                stats[n].applied += 1
            if state.makespan < best.makespan:
                for n in (name, dname):
                    stats[n].improved += 1
                    stats[n].saved += best.makespan - state.makespan
                best, outcome = state, NEW_BEST
            elif state.makespan < current.makespan:
                outcome = BETTER
            elif state.makespan == current.makespan:
                outcome = ACCEPTED
            if outcome != REJECTED:
                current = state
        repairs.score(name, outcome)
        destroys.score(dname, outcome)
    tell(result.iterations, iterations)
    if best.makespan < result.start:
        result.plan, result.evaluation = best.plan, best.evaluation
    return result
