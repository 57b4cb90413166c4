"""The solve report, typed: what ``<case>_report.json`` holds apart from the bounds and the
fingerprint (which ``dansched solve`` adds, see docs/report.md and the JSON Schema in
``dansched/data/report.schema.json``).

Each word means one thing: a *stage* is MPAS, DLR or CPE; a *candidate* is a Stage-2 plan
problem 3 considered, made by a *source* (``detail`` says what within it); *screened* is its
makespan after one list-scheduling pass, *makespan* after the full Stage 3; *kept* marks
the final plan; *found_by* names the method that found a stage's plan.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..budget import TrafficBudget
from ..interrupt import Stop
from ..models.windows.driver import WindowStats
from ..reprs import one_line_repr
from ..simulate import Evaluation
from ..stages.dlr.stats import DlrStats, OrderSearchStats
from .problem3.frontier import FrontierPoint, FrontierRow
from .problem3.search.driver import SearchRound
from .problem3.search.gaps import WalkSummary
from .problem3.sources.candidates import CandidateRecord

__all__ = [
    "PlanFigures",
    "Stage1Report",
    "Stage2Report",
    "RelayoutReport",
    "Stage3Report",
    "CandidateRecord",
    "SolveReport",
]

# the report's stopped.note: what an early stop means for the plan (docs/report.md)
STOPPED_NOTE = (
    "the solve stopped early: its plan is the best valid one found by then; the budgets did not run out, "
    "so another run may stop elsewhere and end with another plan"
)


@dataclass(frozen=True)
class PlanFigures:
    """The metrics of one judged plan (problem 1: ``max_v_stay`` only)."""

    __repr__ = one_line_repr

    max_v_stay: int
    physical_peak: int | None = None
    extra_traffic: int | None = None
    spill_count: int | None = None
    makespan: int | None = None

    @classmethod
    def of(cls, ev: Evaluation) -> PlanFigures:
        if ev.problem == 1:
            return cls(int(ev.max_v_stay or 0))
        return cls(
            int(ev.max_v_stay or 0),
            int(ev.physical_peak or 0),
            int(ev.extra_traffic or 0),
            int(ev.spill_count or 0),
            int(ev.makespan or 0),
        )

    def to_dict(self) -> dict[str, int]:
        out = {"max_v_stay": self.max_v_stay}
        for key in ("physical_peak", "extra_traffic", "spill_count", "makespan"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out


@dataclass(frozen=True)
class Stage1Report:
    """Stage 1 (MPAS): the order's maxV_stay and the variant that found it."""

    __repr__ = one_line_repr

    max_v_stay: int
    seconds: float
    variant: str

    def to_dict(self) -> dict[str, Any]:
        return {"max_v_stay": self.max_v_stay, "seconds": round(self.seconds, 3), "variant": self.variant}


@dataclass(frozen=True)
class Stage2Report:
    """Stage 2 (DLR and the order search): the problem-2 plan's figures, the DLR combination
    (order, placement, victim rule), how many combinations were scanned, each order's best
    traffic, the method that found the plan (``found_by``: ``dlr``, ``wave``, ``exact`` or
    ``lns``), whether it is proven optimal, the bound and gap where known and what each
    order-search method reached."""

    __repr__ = one_line_repr

    figures: PlanFigures
    seconds: float
    order: str
    placement: str
    victim_rule: str
    combinations: int
    order_traffic: dict[str, int]
    found_by: str
    proven_optimal: bool
    bound: int | None = None
    order_search: OrderSearchStats | None = None

    @classmethod
    def of(cls, ev: Evaluation, seconds: float, stats: DlrStats) -> Stage2Report:
        return cls(
            PlanFigures.of(ev),
            seconds,
            stats.order,
            stats.placement,
            stats.victim_rule,
            stats.combinations,
            dict(stats.order_traffic),
            stats.found_by,
            stats.proven_optimal,
            stats.bound,
            stats.order_search,
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = self.figures.to_dict() | {"seconds": round(self.seconds, 3)}
        out |= {
            "order": self.order,
            "placement": self.placement,
            "victim_rule": self.victim_rule,
            "combinations": self.combinations,
            "order_traffic": self.order_traffic,
            "found_by": self.found_by,
            "proven_optimal": self.proven_optimal,
        }
        if self.bound is not None:
            out |= {"bound": self.bound, "gap": int(self.figures.extra_traffic or 0) - self.bound}
        searched = self.order_search.to_dict() if self.order_search is not None else {}
        if searched:
            out["order_search"] = searched
        return out


@dataclass(frozen=True)
class RelayoutReport:
    """The timing-aware Stage-2 rounds of the kept Stage-3 run: the layout the final CPE ran
    on, how many rounds and which step each round took."""

    __repr__ = one_line_repr

    figures: PlanFigures
    seconds: float
    rounds: int
    steps: list[str]

    def to_dict(self) -> dict[str, Any]:
        return self.figures.to_dict() | {"seconds": round(self.seconds, 3), "rounds": self.rounds, "steps": self.steps}


@dataclass(frozen=True)
class Stage3Report:
    """Stage 3 (CPE) on the kept candidate: the final figures, the seconds of the whole of
    problem 3 (candidates, screens and every Stage-3 run), how many full Stage-3 runs were
    made (``runs``), the CPE step that found the final order (``found_by``), each list
    schedule's makespan and the local-move evaluations spent."""

    __repr__ = one_line_repr

    figures: PlanFigures
    seconds: float
    runs: int
    found_by: str
    list_schedule_makespans: dict[str, int]
    local_evaluations: int
    exact_windows: WindowStats | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = self.figures.to_dict() | {"seconds": round(self.seconds, 3)}
        out |= {
            "runs": self.runs,
            "found_by": self.found_by,
            "list_schedule_makespans": self.list_schedule_makespans,
            "local_evaluations": self.local_evaluations,
        }
        if self.exact_windows is not None:
            out["exact_windows"] = self.exact_windows.to_dict()
        return out


@dataclass
class SolveReport:
    """What a solve reports: the final plan's figures, each stage's report, and for problem
    3 the effort, the traffic budget, every candidate, each makespan-search round
    (:class:`~dansched.pipeline.problem3.search.driver.SearchRound`: ``start_makespan``,
    ``makespan``, ``iterations``, and per operator what it did), the traffic-makespan
    frontier (:class:`~dansched.pipeline.problem3.frontier.FrontierRow`, lightest first) with
    the plan kept at each allowance planned at (``allowances``, rising: how each was reached),
    and what the gap-hiding walk did (:class:`~dansched.pipeline.problem3.search.gaps.WalkSummary`)."""

    __repr__ = one_line_repr

    problem: int
    figures: PlanFigures
    effort: str
    mpas: Stage1Report
    dlr: Stage2Report | None = None
    relayout: RelayoutReport | None = None
    cpe: Stage3Report | None = None
    budget: TrafficBudget | None = None
    candidates: list[CandidateRecord] = field(default_factory=list)
    search: list[SearchRound] = field(default_factory=list)
    frontier: list[FrontierRow] = field(default_factory=list)
    allowances: list[FrontierPoint] = field(default_factory=list)
    walk: WalkSummary | None = None
    stopped: Stop | None = None  # the solve stopped early (Ctrl-C, its time limit): what, where, when

    def to_dict(self) -> dict[str, Any]:
        """The report as plain JSON data (the keys of docs/report.md)."""
        out: dict[str, Any] = self.figures.to_dict()
        out |= {"problem": self.problem, "effort": self.effort}
        stages: dict[str, Any] = {"mpas": self.mpas.to_dict()}
        for name in ("dlr", "relayout", "cpe"):
            part = getattr(self, name)
            if part is not None:
                stages[name] = part.to_dict()
        out["stages"] = stages
        if self.budget is not None:
            out["traffic_budget"] = self.budget.to_dict()
        if self.problem == 3:
            out["candidates"] = [c.to_dict() for c in self.candidates]
            out["search"] = [r.to_dict() for r in self.search]
            out["frontier"] = [r.to_dict() for r in self.frontier]
            out["allowances"] = [p.tried_dict() for p in self.allowances]
            out["walk"] = (self.walk or WalkSummary(0, 0, "no traffic to trade")).to_dict()
        if self.stopped is not None:
            out["stopped"] = self.stopped.to_dict() | {"note": STOPPED_NOTE}
        return out
