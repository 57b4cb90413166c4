"""What a solve returns to a script and to the command line: :class:`SolveSummary`.

The typed result of :func:`dansched.solve` (:meth:`dansched.Solution.summary`), the shape
other solvers give theirs (a status, the objective, its bound and the gap, the seconds):

- ``status``: ``optimal`` (the plan meets a lower bound that holds for every plan: nothing
  can beat it), ``feasible`` (valid, not proven optimal) or ``invalid`` (one of
  :data:`STATUSES`);
- the plan's figures (``max_v_stay``; for problems 2 and 3 ``physical_peak``,
  ``extra_traffic``, ``spill_count``, ``makespan``), and ``objective``, the one the problem
  minimises (:data:`OBJECTIVES`);
- ``floor``: the best lower bound on the objective that holds for every plan (the report's
  bounds of scope ``global``; None when the solve computed no bounds) and ``gap``;
- ``seconds``; for problem 3 the ``traffic_budget``; with ``--frontier`` the frontier's
  rows, the plan folder of each, every allowance tried and :attr:`frontier_note`; the
  files written.

:meth:`SolveSummary.to_dict` is the JSON of ``dansched solve --json``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..budget import TrafficBudget
from ..interrupt import Stop
from ..models.bounds.bound import Bound, gap
from ..pipeline.problem3.frontier import (
    NO_FASTER_CANDIDATE,
    SATURATED,
    SEARCHED,
    WALKED,
    FrontierPoint,
    FrontierRow,
)
from ..pipeline.problem3.search.gaps import WalkSummary
from ..pipeline.report import STOPPED_NOTE, CandidateRecord
from ..simulate import Evaluation
from .audit import AuditRow

__all__ = ["SolveSummary", "STATUSES", "OBJECTIVES", "BUDGET_FROM", "frontier_note", "summary_of"]

OPTIMAL, FEASIBLE, INVALID = "optimal", "feasible", "invalid"
STATUSES = (OPTIMAL, FEASIBLE, INVALID)
OBJECTIVES = {1: "max_v_stay", 2: "extra_traffic", 3: "makespan"}  # what each problem minimises
FIGURES = ("max_v_stay", "physical_peak", "extra_traffic", "spill_count", "makespan")
DERIVED = ("makespan-search", "gap-hiding walk", "rival")  # candidate rows made from other plans, not by a source
BUDGET_FROM = "the problem-2 plan's extra traffic (base) plus slack_percent of it, rounded down"


def _figure(name: str, doc: str) -> Any:
    """The property reading figure ``name`` of :attr:`SolveSummary.figures` (None when the
    problem has none)."""
    return property(lambda self: self.figures.get(name), doc=doc)


@dataclass(frozen=True)
class SolveSummary:
    """The result of a solve (module docstring). Prints as one line:
    ``SolveSummary(Exp, problem 3, optimal, makespan 60 (floor 60, gap 0.0%), ...)``."""

    instance: str
    problem: int
    status: str
    figures: dict[str, int]
    floor: Bound | None
    seconds: float
    traffic_budget: TrafficBudget | None = None
    effort: str = "default"
    frontier: tuple[FrontierRow, ...] = ()
    frontier_folders: tuple[str, ...] = ()
    allowances: tuple[FrontierPoint, ...] = ()
    candidates: tuple[CandidateRecord, ...] = ()
    files: tuple[str, ...] = ()
    walk: WalkSummary | None = None
    stopped: Stop | None = None  # the solve stopped early (Ctrl-C, its time limit): what, where, when

    def __repr__(self) -> str:
        figures = []
        for key, value in self.figures.items():
            text = f"{key} {value:,}"
            if key == self.objective and self.floor is not None:
                g = self.gap
                text += f" (floor {self.floor.value:,}, gap {'-' if g is None else f'{100 * g:.1f}%'})"
            figures.append(text)
        return f"SolveSummary({self.instance}, problem {self.problem}, {self.status}, {', '.join(figures)}, {self.seconds:.1f} s)"

    @property
    def valid(self) -> bool:
        return self.status != INVALID

    @property
    def objective(self) -> str:
        """The figure the problem minimises (:data:`OBJECTIVES`)."""
        return OBJECTIVES[self.problem]

    @property
    def value(self) -> int | None:
        """The plan's objective."""
        return self.figures.get(self.objective)

    @property
    def gap(self) -> float | None:
        """``(value - floor) / value`` (None without a floor)."""
        return None if self.floor is None else gap(self.value, self.floor.value)

    max_v_stay = _figure("max_v_stay", "The order's logical peak (problem 1's metric).")
    physical_peak = _figure("physical_peak", "Resident L1+UB units at most; None for a problem-1 order.")
    extra_traffic = _figure("extra_traffic", "None for a problem-1 order.")
    spill_count = _figure("spill_count", "None for a problem-1 order.")
    makespan = _figure("makespan", "Cycles; None for a problem-1 order.")

    @property
    def frontier_note(self) -> str | None:
        """What the frontier tried and, with one point, why (:func:`frontier_note`); None
        without a frontier."""
        if not self.frontier or self.traffic_budget is None:
            return None
        base = self.traffic_budget.base
        top = self.allowances[-1].allowance if self.allowances else base
        heavier = sum(
            c.source not in DERIVED and c.same_as is None and base < c.traffic <= top for c in self.candidates
        )
        return frontier_note(len(self.frontier), self.allowances, base, heavier, self.effort, self.walk)

    def to_dict(self) -> dict[str, Any]:
        """The JSON of ``dansched solve --json``: ``instance``, ``problem``, ``status``,
        ``valid``, the figures, ``objective``, ``floor`` (``value``, ``method``) and ``gap``,
        ``seconds``; for problem 3 ``traffic_budget`` (with ``from``); with the frontier,
        ``frontier`` (the report's rows, each with its plan ``folder``), ``allowances`` and
        ``frontier_note``; and ``files``."""
        out: dict[str, Any] = {"instance": self.instance, "problem": self.problem, "status": self.status}
        out |= {"valid": self.valid} | self.figures | {"objective": self.objective}
        out["floor"] = None if self.floor is None else {"value": self.floor.value, "method": self.floor.method}
        out |= {"gap": self.gap, "seconds": round(self.seconds, 3)}
        if self.traffic_budget is not None:
            out["traffic_budget"] = self.traffic_budget.to_dict() | {"from": BUDGET_FROM}
        if self.frontier:
            folders = self.frontier_folders or ("",) * len(self.frontier)
            out["frontier"] = [r.to_dict() | {"folder": f or None} for r, f in zip(self.frontier, folders)]
            out["allowances"] = [p.tried_dict() for p in self.allowances]
            out["frontier_note"] = self.frontier_note
        if self.stopped is not None:  # stopped early: what, where, when (the report's stopped)
            out["stopped"] = self.stopped.to_dict() | {"note": STOPPED_NOTE}
        out["files"] = list(self.files)
        return out


def status_of(ev: Evaluation, objective: int | None, floor: Bound | None) -> str:
    """``invalid``, ``optimal`` (the objective meets ``floor``) or ``feasible``."""
    if not ev.valid:
        return INVALID
    return OPTIMAL if floor is not None and objective is not None and objective == floor.value else FEASIBLE


def best_floor(rows: list[AuditRow] | None, metric: str) -> Bound | None:
    """The highest bound on ``metric`` among ``rows`` that holds for every plan (scope
    ``global``); the first on ties."""
    best: Bound | None = None
    for r in rows or ():
        if r.metric == metric and r.scope == "global" and (best is None or r.bound.value > best.value):
            best = r.bound
    return best


def summary_of(
    instance: str,
    problem: int,
    ev: Evaluation,
    bounds: list[AuditRow] | None,
    seconds: float,
    *,
    budget: TrafficBudget | None = None,
    effort: str = "default",
    frontier: tuple[FrontierRow, ...] = (),
    frontier_folders: tuple[str, ...] = (),
    allowances: tuple[FrontierPoint, ...] = (),
    candidates: tuple[CandidateRecord, ...] = (),
    files: tuple[str, ...] = (),
    walk: WalkSummary | None = None,
    stopped: Stop | None = None,
) -> SolveSummary:
    """The :class:`SolveSummary` of a plan judged ``ev`` for ``problem``, with the report's
    ``bounds`` (None: none computed)."""
    keys = FIGURES[:1] if problem == 1 else FIGURES
    figures = {k: int(v) for k in keys if (v := getattr(ev, k)) is not None}
    floor = best_floor(bounds, OBJECTIVES[problem])
    status = status_of(ev, figures.get(OBJECTIVES[problem]), floor)
    return SolveSummary(
        instance,
        problem,
        status,
        figures,
        floor,
        seconds,
        budget,
        effort,
        frontier,
        frontier_folders,
        allowances,
        candidates,
        files,
        walk,
        stopped,
    )


def _share(traffic: int, base: int) -> str:
    """``+25%`` over ``base`` (nothing when ``base`` is 0)."""
    return f"{100 * (traffic - base) / base:+.0f}%" if base else ""


def frontier_note(
    points: int,
    tried: Sequence[FrontierPoint],
    base: int,
    heavier: int,
    effort: str,
    walk: WalkSummary | None = None,
) -> str:
    """How many allowances the frontier tried (``tried``, rising) and, when it has one point
    (``points``), why: the problem-2 plan carries no traffic (every allowance is a share of
    it), no candidate carries more (``heavier``: candidates above ``base``, none at
    ``--effort fast``, whose one candidate is the problem-2 plan), or every heavier
    allowance kept a plan no faster, each for the reason its outcome says; then how the
    gap-hiding walk (``walk``) ended.

    >>> frontier_note(1, [], 0, 0, "default")
    '1 allowance tried (0 traffic): the problem-2 plan carries no extra traffic, and every allowance is a share of it, so no plan may carry more'
    >>> frontier_note(3, [], 100, 0, "default", WalkSummary(2, 5000, "no move gains"))
    '1 allowance tried (0 traffic): 3 points; the gap-hiding walk took 2 steps and ended: no move gains'
    """
    levels = [p.allowance for p in tried]
    if len(levels) <= 1:
        head = f"1 allowance tried ({levels[0] if levels else 0:,} traffic)"
    else:
        head = (
            f"{len(levels)} allowances tried, {levels[0]:,} to {levels[-1]:,} traffic "
            f"({_share(levels[0], base)} to {_share(levels[-1], base)} over the problem-2 plan's)"
        )
    ended = ""
    if walk is not None and walk.end != "no traffic to trade":
        ended = f"the gap-hiding walk took {walk.steps} step{'s' if walk.steps != 1 else ''} and ended: {walk.end}"
    if points > 1:
        return f"{head}: {points} points" + (f"; {ended}" if ended else "")
    if base == 0:
        return f"{head}: the problem-2 plan carries no extra traffic, and every allowance is a share of it, so no plan may carry more"
    reasons = []
    if heavier == 0:
        reasons.append(
            "--effort fast makes a single candidate, the problem-2 plan (--effort default makes more)"
            if effort == "fast"
            else "no candidate carries more traffic than the problem-2 plan"
        )
    else:
        heavier_levels = [p for p in tried[1:] if p.outcome != WALKED]
        count = {o: sum(p.outcome == o for p in heavier_levels) for o in (NO_FASTER_CANDIDATE, SATURATED, SEARCHED)}
        why = []
        if count[NO_FASTER_CANDIDATE]:
            why.append(f"{count[NO_FASTER_CANDIDATE]} admitted no candidate that screened faster, so were not searched")
        if count[SATURATED]:
            why.append(f"{count[SATURATED]} had a plan already at its busiest pipe's load, so were not searched")
        if count[SEARCHED]:
            why.append(f"{count[SEARCHED]} searched without finding one")
        lightest = tried[0].makespan if tried else 0
        reasons.append(f"no heavier plan was faster than {lightest:,} cycles" + (f" ({'; '.join(why)})" if why else ""))
    if ended:
        reasons.append(ended)
    elif len(levels) <= 1 and heavier == 0:
        reasons = ["the frontier reaches no further than the problem-2 plan's traffic (EffortParams.frontier_slack)"]
    return f"{head}: one point: " + "; ".join(reasons)
