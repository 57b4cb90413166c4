"""The traffic-makespan frontier of problem 3: the plans no other plan beats on both counts.

Problem 3 trades extra DDR traffic for time (docs/rules.md, problem 3: "a Pareto report of
(traffic, makespan) pairs is the honest answer to 'not significantly'"). Problem 3 plans at a
rising sequence of traffic *allowances* (:mod:`dansched.pipeline.problem3.loop`): the
problem-2 plan's traffic first, then the traffic of each candidate above it and of each step
of the gap-hiding walk (:mod:`dansched.pipeline.problem3.search.gaps`: one move that hides
busiest-pipe idle time for the least traffic), up to the caller's allowance (asked for the
frontier, up to ``EffortParams.frontier_slack`` too). The plan kept at each allowance is a
:class:`FrontierPoint`; the *frontier* is those points that no other point beats on both
counts (:func:`pareto_front`): sorted by traffic, each strictly faster than every lighter one.

The *knee* (:func:`knee`) is the lightest point whose makespan is within ``tolerance`` of the
fastest point's: past it, more traffic buys less than that much time.

Every allowance planned at keeps a point, with how its plan was reached (``outcome``, one of
:data:`OUTCOMES`): the makespan search ran there (``searched``), or it did not because no
candidate the allowance newly admits screened faster than the plan kept below
(``no-faster-candidate``: that plan is kept) or because the best plan there was already
within ``EffortParams.saturation`` of its busiest pipe's load (``saturated``: only less traffic
could make it faster); a step of the gap-hiding walk is a point at its own traffic
(``walked``); a rival's finished plan is a point at the budget's allowance (``rival``). A heavier point that is no faster than a lighter one is not on the frontier, so
a frontier of one point with several allowances tried means every heavier allowance kept a
plan no faster than the lightest's (:func:`allowances_tried` lists them).

Each point is reported (:func:`frontier_rows`) with its busiest pipe and that pipe's load, the
*floor for its traffic* -- a makespan no plan carrying that much traffic can beat
(:func:`dansched.models.bounds.floors.makespan_floor_at_traffic`: the instance floors and the
spill-in pipe's floor for the traffic) -- the gap to it, and whether that floor proves the
point optimal (it meets the makespan).

>>> figures = [(100, 1000), (120, 900), (130, 950), (150, 880), (200, 879)]
>>> front = pareto_front([FrontierPoint(t, t, m, Plan(order=()), "") for t, m in figures])
>>> [(p.traffic, p.makespan) for p in front]
[(100, 1000), (120, 900), (150, 880), (200, 879)]
>>> knee(front, tolerance=0.01)  # 880 is within 1 % of 879
2
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ...instance import Instance
from ...models.bounds.bound import Bound, gap
from ...models.bounds.floors import (
    Floors,
    busiest_pipe,
    busiest_pipe_by_name,
    makespan_floor_at_traffic,
    makespan_floors,
)
from ...params import BoundParams
from ...plan import Plan
from ...reprs import one_line_repr
from ...simulate import Evaluation

__all__ = [
    "FrontierPoint",
    "FrontierRow",
    "OUTCOMES",
    "point_of",
    "saturated",
    "pareto_front",
    "knee",
    "frontier_rows",
    "allowances_tried",
]

# how the plan kept at an allowance was reached (module docstring; docs/report.md, ``allowances``)
SEARCHED = "searched"
NO_FASTER_CANDIDATE = "no-faster-candidate"
SATURATED = "saturated"
WALKED = "walked"
RIVAL = "rival"
OUTCOMES = (SEARCHED, NO_FASTER_CANDIDATE, SATURATED, WALKED, RIVAL)


@dataclass(frozen=True)
class FrontierPoint:
    """The plan kept at one traffic ``allowance``: its extra ``traffic`` and ``makespan``
    (the evaluator's), the plan itself, where it came from (``source``: the candidate
    row's source and detail), its busiest pipe (``busiest``, by name) with that pipe's
    load (cycles, spill tasks included), and how it was reached at that allowance
    (``outcome``, one of :data:`OUTCOMES`)."""

    __repr__ = one_line_repr

    allowance: int
    traffic: int
    makespan: int
    plan: Plan
    source: str
    busiest: str = ""
    busiest_load: int = 0
    outcome: str = SEARCHED

    def tried_dict(self) -> dict[str, Any]:
        """The allowance as the report's ``allowances`` lists it: the allowance, how its plan
        was reached, and that plan's traffic and makespan."""
        return {
            "allowance": self.allowance,
            "outcome": self.outcome,
            "traffic": self.traffic,
            "makespan": self.makespan,
        }


@dataclass(frozen=True)
class FrontierRow:
    """One point of the frontier as the report gives it: the point, its traffic over the
    problem-2 plan's (``over``, a fraction; ``None`` when that plan carries none), the floor
    for its traffic and the gap to it, whether that floor proves the point optimal
    (``optimal``, also the floor's own flag) and whether it is the knee."""

    __repr__ = one_line_repr

    point: FrontierPoint
    over: float | None
    floor: Bound
    knee: bool

    @property
    def gap(self) -> float | None:
        return gap(self.point.makespan, self.floor.value)

    @property
    def optimal(self) -> bool:
        """The floor meets the point's makespan: no plan carrying at least its traffic is faster."""
        return self.point.makespan == self.floor.value

    def to_dict(self) -> dict[str, Any]:
        p = self.point
        return {
            "allowance": p.allowance,
            "traffic": p.traffic,
            "over_problem2": None if self.over is None else round(self.over, 6),
            "makespan": p.makespan,
            "busiest_pipe": p.busiest,
            "busiest_load": p.busiest_load,
            "floor": replace(self.floor, optimal=self.optimal).to_dict(),
            "gap": self.gap,
            "optimal": self.optimal,
            "source": p.source,
            "knee": self.knee,
        }


def point_of(
    inst: Instance,
    allowance: int,
    plan: Plan,
    ev: Evaluation,
    makespan: int,
    source: str,
    outcome: str = SEARCHED,
) -> FrontierPoint:
    """The frontier point of ``plan`` (judged ``ev``, with its augmented graph) kept at
    ``allowance`` (reached as ``outcome`` says): its figures and its busiest pipe."""
    assert ev.graph is not None, "a full plan's evaluation"
    assert outcome in OUTCOMES, outcome
    name, load = busiest_pipe_by_name(inst.hw.pipes, ev.graph.pipe, ev.graph.cycles)
    return FrontierPoint(allowance, int(ev.extra_traffic or 0), makespan, plan, source, name, load, outcome)


def saturated(makespan: int, ev: Evaluation, within: float) -> bool:
    """Whether ``makespan`` (of the plan judged ``ev``, with its augmented graph) is within
    the tolerance ``within`` (a fraction) of that plan's busiest pipe's load, spill tasks
    included: at its traffic only a lighter plan could be much faster."""
    assert ev.graph is not None, "a full plan's evaluation"
    return makespan <= (1 + within) * busiest_pipe(ev.graph.pipe, ev.graph.cycles)[1]


def pareto_front(points: Sequence[FrontierPoint]) -> list[FrontierPoint]:
    """The points no other point beats on both counts, by traffic: each kept point is
    strictly faster than every point with no more traffic (ties on both: the one at the
    smaller allowance, then the earlier)."""
    ranked = sorted(enumerate(points), key=lambda ip: (ip[1].traffic, ip[1].makespan, ip[1].allowance, ip[0]))
    out: list[FrontierPoint] = []
    for _, p in ranked:
        if not out or p.makespan < out[-1].makespan:
            out.append(p)
    return out


def knee(front: Sequence[FrontierPoint], tolerance: float) -> int:
    """Index in ``front`` (:func:`pareto_front`'s order) of the lightest point whose makespan is
    at most ``(1 + tolerance)`` times the fastest point's; -1 for an empty front."""
    if not front:
        return -1
    fastest = min(p.makespan for p in front)
    for i, p in enumerate(front):
        if p.makespan <= fastest * (1 + tolerance):
            return i
    return len(front) - 1  # unreachable: the fastest point qualifies


def frontier_rows(
    inst: Instance,
    points: Sequence[FrontierPoint],
    base: int,
    tolerance: float = 0.01,
    params: BoundParams | None = None,
) -> list[FrontierRow]:
    """The frontier of ``points`` (:func:`pareto_front`) as report rows: each point's traffic
    over ``base`` (the problem-2 plan's), its floor at its traffic (the instance's floors with
    ``params``' heads and tails) and the knee (:func:`knee` with ``tolerance``)."""
    front = pareto_front(points)
    if not front:
        return []
    at = knee(front, tolerance)
    floors: Floors = makespan_floors(inst, params=params)
    return [
        FrontierRow(
            p,
            (p.traffic - base) / base if base else None,
            makespan_floor_at_traffic(inst, p.traffic, floors),
            k == at,
        )
        for k, p in enumerate(front)
    ]


def allowances_tried(points: Sequence[FrontierPoint]) -> list[FrontierPoint]:
    """The point kept at each allowance problem 3 planned at, rising (a rival's points are
    not allowances of their own and are left out).

    >>> pts = [FrontierPoint(a, 100, m, Plan(order=()), "", outcome=o) for a, m, o in
    ...        [(100, 900, SEARCHED), (150, 900, NO_FASTER_CANDIDATE), (100, 950, RIVAL)]]
    >>> [(p.allowance, p.outcome) for p in allowances_tried(pts)]
    [(100, 'searched'), (150, 'no-faster-candidate')]
    """
    return sorted((p for p in points if p.outcome != RIVAL), key=lambda p: p.allowance)
