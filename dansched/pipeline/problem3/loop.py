"""Problem 3 as one search: candidates, one traffic budget, screen, Stage 3 on the best few.

1. **Budget.** The traffic budget (:class:`~dansched.budget.TrafficBudget`) is computed
   once from the problem-2 plan's traffic and ``--traffic-slack``.
2. **Candidates.** The problem-2 plan is the first candidate; then each source the effort
   names (:data:`dansched.pipeline.problem3.sources.candidates.SOURCES`) yields complete Stage-2 plans. No
   source is switched on or off by the slack or the graph's size: every candidate the
   budget admits competes.
3. **Screen.** Each admitted candidate (a plan identical to an earlier one's is recorded,
   not screened again) is screened by one list-scheduling pass inside its
   skeleton (:func:`~dansched.pipeline.problem3.stage3.screen.screened_makespan`); only the best few
   keep their per-node detail meanwhile.
4. **Stage 3.** The full Stage 3 (:func:`~dansched.pipeline.problem3.stage3.run.stage3`,
   with the memory-aware windows after it in the memory-window mode) runs on the
   finalists, ``effort.stage3_runs`` less one per search round, or more on a small graph
   (``effort.stage3_work`` node-visits of them): the problem-2 plan, then
   the best screened candidate of each other source in the order of their screens (the
   screen ranks plans of one source well, of different sources less: see
   :mod:`dansched.pipeline.problem3.stage3.screen`), then the best screened of the rest (ties: less
   traffic, then the earlier candidate). The fastest result is kept (ties: the earlier
   finalist).
5. **Makespan search.** From the fastest Stage-3 result (from each of the fastest few on a
   small graph: ``effort.start_work`` node-visits of starts, since the fastest before the
   search is not always the fastest after it), the search over complete plans
   (:mod:`dansched.pipeline.problem3.search.driver`) changes victims, reload times,
   addresses and orders (its segment moves and CP-SAT windows) within the same budget,
   round after round (``SolveOptions.search``); a round whose plan is faster ends in a full
   Stage-3 run. The fastest plan of every start is kept.
6. **Polish.** At the end of every round (or once, with no round), the kept plan's
   memory-aware CP-SAT windows (``Problem3Params.polish``: windows along its critical chain,
   :func:`~dansched.pipeline.problem3.stage3.polish.memory_window_polish`): memory events inside a
   window may move, offsets, spills and traffic stay. The kept row's makespan is then the
   polished plan's, and the next round starts from it.

Every candidate, finalist or not, is a row of the report's ``candidates``. What the loop
reads is one :class:`~dansched.params.Problem3Params`, built from the solve's options
(``SolveOptions.problem3``, where the memory-aware windows' mode is decided).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

from ...budget import TrafficBudget
from ...errors import PlanInvalidError
from ...instance import Instance
from ...params import Problem3Params, Progress
from ...plan import Plan
from ...simulate import Evaluation, evaluate
from ...stages.dlr.stage import DlrResult
from ..report import CandidateRecord
from .search.driver import SearchRound, makespan_search
from .sources.candidates import SOURCES, Candidate, SourceContext, problem2_candidate
from .stage3.run import Stage3Result, memory_windows, stage3
from .stage3.screen import screened_makespan

__all__ = ["Problem3Result", "problem3"]


@dataclass
class Problem3Result:
    """The final plan, the Stage-3 run that made it, the candidates (rows of the report),
    the budget, how many full Stage-3 runs were made, the seconds, and what each
    makespan-search round did."""

    plan: Plan
    evaluation: Evaluation
    stage3: Stage3Result
    candidates: list[CandidateRecord]
    budget: TrafficBudget
    runs: int
    seconds: float
    search: list[SearchRound] = field(default_factory=list)


def _check_stage3(ev2: Evaluation, s3: Stage3Result, p: Problem3Params) -> None:
    """Stage 3 keeps its candidate's traffic and spill count, and CPE keeps the layout it ran
    on; the physical peak too, except when the memory-aware windows run after every Stage-3
    run, since they may reorder memory events (problem 3 bounds traffic, not peak)."""
    ev3 = s3.evaluation
    for key in ("extra_traffic", "spill_count"):
        if getattr(ev3, key) != getattr(ev2, key):
            raise PlanInvalidError(f"Stage 3 (CPE) changed {key} ({getattr(ev2, key)} -> {getattr(ev3, key)})")
    if ev3.physical_peak != s3.layout_evaluation.physical_peak and p.stage3.memory_windows is None:
        raise PlanInvalidError("Stage 3 (CPE) changed the physical peak")
    if s3.cpe.plan.offsets != s3.layout.offsets or s3.cpe.plan.spills != s3.layout.spills:
        raise PlanInvalidError("Stage 3 (CPE) changed the layout or the spill plan")


def _detailed(inst: Instance, plan: Plan, ev: Evaluation) -> Evaluation:
    """``ev`` when it still holds its per-node detail, else ``plan`` judged again (only the
    best few candidates keep their detail while the others are made)."""
    return ev if ev.graph is not None else evaluate(inst, plan)


@dataclass
class _Kept:
    """The fastest Stage-3 run so far: its result, the evaluation of the plan it started
    from and that candidate's row."""

    stage3: Stage3Result
    stage2_evaluation: Evaluation
    row: CandidateRecord


@dataclass
class _Screened:
    """An admitted candidate, its row and its place in the screen's ranking."""

    key: tuple[int, int, int]  # (screened makespan, traffic, row index)
    candidate: Candidate
    row: CandidateRecord


def _collect(
    inst: Instance, s2: DlrResult, order1: list[int], budget: TrafficBudget, p: Problem3Params, say: Progress
) -> tuple[list[CandidateRecord], list[_Screened]]:
    """Steps 2 and 3 of the module docstring: every candidate's row, and the admitted ones
    screened. Only the problem-2 plan and the ``stage3_runs`` best screened candidates keep
    their per-node detail; the others drop it at once."""
    effort = p.effort
    ctx = SourceContext(inst, order1, s2, budget, p)
    rows: list[CandidateRecord] = []
    screened: list[_Screened] = []
    detailed: list[_Screened] = []  # the best screened others, at most stage3_runs - 1
    first_row: dict[Plan, int] = {}

    def take(cand: Candidate) -> None:
        ctx.made.append(cand)
        row = CandidateRecord(cand.source, cand.detail, cand.traffic, same_as=first_row.get(cand.plan))
        rows.append(row)
        first_row.setdefault(cand.plan, len(rows) - 1)
        if row.same_as is not None or not budget.admits(cand.traffic):
            cand.evaluation.drop_detail()
            return
        row.screened = screened_makespan(inst, cand.plan, cand.evaluation)
        item = _Screened((row.screened, cand.traffic, len(rows) - 1), cand, row)
        screened.append(item)
        if len(rows) == 1:  # the problem-2 plan is always a finalist
            return
        detailed.append(item)
        detailed.sort(key=lambda s: s.key)
        while len(detailed) > effort.stage3_runs - 1:
            detailed.pop().candidate.evaluation.drop_detail()

    take(problem2_candidate(s2))
    for name in p.sources:
        say(f"Problem 3: candidates from {name} (budget {budget.allowance:,} traffic)")
        for cand in SOURCES[name](ctx):
            take(cand)
    return rows, screened


def _finalists(screened: list[_Screened], count: int) -> list[_Screened]:
    """Step 4's choice: the problem-2 plan (the first screened), then the best screened of
    each other source in the order of their screens, then the best screened of the rest;
    at most ``count``."""
    first, others = screened[0], sorted(screened[1:], key=lambda s: s.key)
    per_source: dict[str, _Screened] = {}
    for s in others:
        per_source.setdefault(s.candidate.source, s)
    leaders = sorted(per_source.values(), key=lambda s: s.key)
    rest = [s for s in others if s not in leaders]
    return ([first] + leaders + rest)[:count]


def _stage3_on_finalists(
    inst: Instance, screened: list[_Screened], p: Problem3Params, say: Progress
) -> tuple[list[_Kept], int]:
    """Step 4: the full Stage 3 on the problem-2 plan and the best screened others, as many
    as the effort leaves once the search rounds have their runs (or more on a small graph);
    the results fastest first (the earlier finalist on ties), only the starts of step 5
    keeping their per-node detail, and how many runs were made."""
    effort, n = p.effort, max(1, inst.n)
    runs = max(1, effort.stage3_runs - len(p.search), effort.stage3_work // n)
    finalists = _finalists(screened, runs)
    done: list[_Kept] = []
    for k, item in enumerate(finalists):
        cand = item.candidate
        say(f"Stage 3 on candidate {k + 1}/{len(finalists)}: {cand.source} {cand.detail}".rstrip())
        ev2 = _detailed(inst, cand.plan, cand.evaluation)
        s3 = stage3(inst, cand.plan, ev2, p.stage3)
        item.row.makespan = s3.makespan
        done.append(_Kept(s3, ev2, item.row))
    done.sort(key=lambda kept: kept.stage3.makespan)  # stable: the earlier finalist first on ties
    for later in done[_starts(inst, p, len(done)) :]:
        later.stage3.evaluation.drop_detail()
    return done, len(finalists)


def _starts(inst: Instance, p: Problem3Params, finalists: int) -> int:
    """How many of the fastest Stage-3 results the search starts from: one, or more on a
    small graph (``effort.start_work`` node-visits of them, ``effort.max_starts`` at most)."""
    effort = p.effort
    return min(finalists, effort.max_starts, max(1, effort.start_work // max(1, inst.n)))


def _search_rounds(
    inst: Instance,
    kept: _Kept,
    rows: list[CandidateRecord],
    budget: TrafficBudget,
    p: Problem3Params,
    say: Progress,
) -> tuple[_Kept, list[SearchRound], int]:
    """Steps 5 and 6: round after round (``p.search``), the makespan search over complete
    plans (:mod:`dansched.pipeline.problem3.search`) from the best plan so far, a full
    Stage-3 run on its plan when it found a faster one (a candidate row of source
    ``makespan-search``), then the polish of the fastest (:func:`_polish`); with no round,
    the polish alone. Each round starts where the last ended, so more rounds never end
    slower. Returns the fastest plan, each round's report and the Stage-3 runs made."""
    reports: list[SearchRound] = []
    runs = 0
    start = kept
    _check_stage3(kept.stage2_evaluation, kept.stage3, p)
    for r, params in enumerate(p.search):
        say(f"Makespan search, round {r + 1} of {len(p.search)}: at most {params.iterations} moves")
        plan = kept.stage3.cpe.plan
        ev = _detailed(inst, plan, kept.stage3.evaluation)
        got = makespan_search(inst, plan, ev, budget.allowance, params, seed=p.seed + r)
        reports.append(got.summary())
        if got.plan is not plan:
            say(f"Stage 3 on the makespan search's plan of round {r + 1}")
            s3 = stage3(inst, got.plan, got.evaluation, p.stage3)
            runs += 1
            detail = f"round {r + 1} from {start.row.source} {start.row.detail}".rstrip()
            row = CandidateRecord(
                "makespan-search",
                detail,
                got.evaluation.metrics().extra_traffic,
                screened=got.evaluation.metrics().makespan,
                makespan=s3.makespan,
            )
            rows.append(row)
            if s3.makespan < kept.stage3.makespan:
                kept = _Kept(s3, got.evaluation, row)
                _check_stage3(kept.stage2_evaluation, kept.stage3, p)
        kept = _polish(inst, kept, p, say)
    if not p.search:
        kept = _polish(inst, kept, p, say)
    return kept, reports, runs


def _polish(inst: Instance, kept: _Kept, p: Problem3Params, say: Progress) -> _Kept:
    """``kept``'s Stage-3 result polished by the memory-aware windows of ``p.polish`` (none
    when there are none, or they ran after every Stage-3 run instead); its row's makespan is
    then the polished plan's."""
    if p.polish is None:
        return kept
    say(f"Polish: {p.polish.windows} memory-aware CP-SAT windows on the kept plan")
    s3 = memory_windows(inst, kept.stage3, p.polish, seed=p.seed, cpe=p.stage3.cpe)
    kept.row.makespan = s3.makespan
    return replace(kept, stage3=s3)


def problem3(inst: Instance, s2: DlrResult, order1: list[int], p: Problem3Params, say: Progress) -> Problem3Result:
    """Problem 3 on the Stage-2 result ``s2`` (module docstring)."""
    t0 = time.perf_counter()
    budget = TrafficBudget.of(int(s2.evaluation.extra_traffic or 0), p.traffic_slack)
    rows, screened = _collect(inst, s2, order1, budget, p, say)
    done, runs = _stage3_on_finalists(inst, screened, p, say)
    kept: _Kept | None = None
    search: list[SearchRound] = []
    more = 0
    for k, start in enumerate(done[: _starts(inst, p, len(done))]):
        if k:
            say(f"Makespan search from the Stage-3 result {k + 1}: {start.row.source} {start.row.detail}".rstrip())
        got, reports, made = _search_rounds(inst, start, rows, budget, p, say)
        search += reports
        more += made
        if kept is None or got.stage3.makespan < kept.stage3.makespan:
            kept = got
    assert kept is not None
    kept.row.kept = True
    s3 = kept.stage3
    return Problem3Result(s3.cpe.plan, s3.evaluation, s3, rows, budget, runs + more, time.perf_counter() - t0, search)
