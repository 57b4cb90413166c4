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
4. **Stage 3.** The full Stage 3 (:func:`~dansched.pipeline.problem3.stage3.run.stage3`) runs on the
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
   memory-aware CP-SAT windows (``SolveOptions.polish``: windows along its critical chain,
   :func:`~dansched.pipeline.problem3.stage3.polish.memory_window_polish`): memory events inside a
   window may move, offsets, spills and traffic stay. The kept row's makespan is then the
   polished plan's, and the next round starts from it.

Every candidate, finalist or not, is a row of the report's ``candidates``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any

from ...budget import TrafficBudget
from ...errors import PlanInvalidError
from ...instance import Instance
from ...params import Progress
from ...plan import Plan
from ...simulate import Evaluation, evaluate, judged
from ...stages.dlr.stage import DlrResult
from ..options import SolveOptions
from ..report import CandidateRecord
from .search.driver import makespan_search
from .sources.candidates import SOURCES, Candidate, SourceContext, problem2_candidate
from .stage3.polish import memory_window_polish
from .stage3.run import Stage3Result, stage3
from .stage3.screen import screened_makespan

__all__ = ["Problem3Result", "problem3", "run_stage3"]


@dataclass
class Problem3Result:
    """The final plan, the Stage-3 run that made it, the candidates (rows of the report),
    the budget, how many full Stage-3 runs were made, the seconds, and each makespan-search
    round's report."""

    plan: Plan
    evaluation: Evaluation
    stage3: Stage3Result
    candidates: list[CandidateRecord]
    budget: TrafficBudget
    runs: int
    seconds: float
    search: list[dict[str, Any]] = field(default_factory=list)


def _memory_windows(inst: Instance, s3: Stage3Result, opts: SolveOptions) -> Stage3Result:
    """``s3`` polished by the memory-aware CP-SAT windows of ``opts.polish``."""
    ev = _detailed(inst, s3.cpe.plan, s3.evaluation)
    cpe, ev = memory_window_polish(inst, s3.cpe, ev, opts.polish, seed=opts.seed, cpe=opts.cpe)
    ev = judged(inst, cpe.plan, "Stage 3 (memory-aware CP-SAT windows)", ev)
    return replace(s3, cpe=cpe, evaluation=ev)


def run_stage3(inst: Instance, plan2: Plan, ev2: Evaluation, opts: SolveOptions) -> Stage3Result:
    """The full Stage 3 on one Stage-2 plan (:func:`~dansched.pipeline.problem3.stage3.run.stage3`);
    with ``opts.polish.after_every_run`` the memory-aware CP-SAT windows polish its result."""
    s3 = stage3(
        inst,
        plan2,
        ev2,
        rounds=opts.effort.stage3_rounds,
        exact_window=opts.exact_window,
        time_limit=opts.time_limit,
        seed=opts.seed,
        params=opts.cpe,
    )
    if opts.polish.after_every_run and opts.polish.windows > 0:
        s3 = _memory_windows(inst, s3, opts)
    return s3


def _check_stage3(ev2: Evaluation, s3: Stage3Result, opts: SolveOptions) -> None:
    """Stage 3 keeps its candidate's traffic and spill count, and CPE keeps the layout it ran
    on; the physical peak too, except in the memory-window mode, whose windows may reorder
    memory events (problem 3 bounds traffic, not peak)."""
    ev3 = s3.evaluation
    for key in ("extra_traffic", "spill_count"):
        if getattr(ev3, key) != getattr(ev2, key):
            raise PlanInvalidError(f"Stage 3 (CPE) changed {key} ({getattr(ev2, key)} -> {getattr(ev3, key)})")
    if ev3.physical_peak != s3.layout_evaluation.physical_peak and not opts.polish.after_every_run:
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
    inst: Instance, s2: DlrResult, order1: list[int], budget: TrafficBudget, opts: SolveOptions, say: Progress
) -> tuple[list[CandidateRecord], list[_Screened]]:
    """Steps 2 and 3 of the module docstring: every candidate's row, and the admitted ones
    screened. Only the problem-2 plan and the ``stage3_runs`` best screened candidates keep
    their per-node detail; the others drop it at once."""
    effort = opts.effort
    ctx = SourceContext(
        inst, order1, s2, budget, effort, opts.mpas, opts.dlr, opts.variant, opts.victim, opts.timed_trials
    )
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
    for name in opts.sources:
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
    inst: Instance, rows: list[CandidateRecord], screened: list[_Screened], opts: SolveOptions, say: Progress
) -> tuple[list[_Kept], int]:
    """Step 4: the full Stage 3 on the problem-2 plan and the best screened others, as many
    as the effort leaves once the search rounds have their runs (or more on a small graph);
    the results fastest first (the earlier finalist on ties), only the starts of step 5
    keeping their per-node detail, and how many runs were made."""
    effort, n = opts.effort, max(1, inst.n)
    runs = max(1, effort.stage3_runs - len(opts.search), effort.stage3_work // n)
    finalists = _finalists(screened, runs)
    done: list[_Kept] = []
    for k, item in enumerate(finalists):
        cand = item.candidate
        say(f"Stage 3 on candidate {k + 1}/{len(finalists)}: {cand.source} {cand.detail}".rstrip())
        ev2 = _detailed(inst, cand.plan, cand.evaluation)
        s3 = run_stage3(inst, cand.plan, ev2, opts)
        item.row.makespan = s3.makespan
        done.append(_Kept(s3, ev2, item.row))
    done.sort(key=lambda kept: kept.stage3.makespan)  # stable: the earlier finalist first on ties
    for later in done[_starts(inst, opts, len(done)) :]:
        later.stage3.evaluation.drop_detail()
    return done, len(finalists)


def _starts(inst: Instance, opts: SolveOptions, finalists: int) -> int:
    """How many of the fastest Stage-3 results the search starts from: one, or more on a
    small graph (``effort.start_work`` node-visits of them, ``effort.max_starts`` at most)."""
    effort = opts.effort
    return min(finalists, effort.max_starts, max(1, effort.start_work // max(1, inst.n)))


def _search_rounds(
    inst: Instance,
    kept: _Kept,
    rows: list[CandidateRecord],
    budget: TrafficBudget,
    opts: SolveOptions,
    say: Progress,
) -> tuple[_Kept, list[dict[str, Any]], int]:
    """Steps 5 and 6: round after round (``opts.search``), the makespan search over complete
    plans (:mod:`dansched.pipeline.problem3.search`) from the best plan so far, a full
    Stage-3 run on its plan when it found a faster one (a candidate row of source
    ``makespan-search``), then the polish of the fastest (:func:`_polish`); with no round,
    the polish alone. Each round starts where the last ended, so more rounds never end
    slower. Returns the fastest plan, each round's report and the Stage-3 runs made."""
    reports: list[dict[str, Any]] = []
    runs = 0
    start = kept
    _check_stage3(kept.stage2_evaluation, kept.stage3, opts)
    for r, params in enumerate(opts.search):
        say(f"Makespan search, round {r + 1} of {len(opts.search)}: at most {params.iterations} moves")
        plan = kept.stage3.cpe.plan
        ev = _detailed(inst, plan, kept.stage3.evaluation)
        got = makespan_search(inst, plan, ev, budget.allowance, params, seed=opts.seed + r)
        reports.append(got.to_dict())
        if got.plan is not plan:
            say(f"Stage 3 on the makespan search's plan of round {r + 1}")
            s3 = run_stage3(inst, got.plan, got.evaluation, opts)
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
                _check_stage3(kept.stage2_evaluation, kept.stage3, opts)
        kept = _polish(inst, kept, opts, say)
    if not opts.search:
        kept = _polish(inst, kept, opts, say)
    return kept, reports, runs


def _polish(inst: Instance, kept: _Kept, opts: SolveOptions, say: Progress) -> _Kept:
    """``kept``'s Stage-3 result polished by the memory-aware windows of ``opts.polish``
    (none when they ran after every Stage-3 run instead); its row's makespan is then the
    polished plan's."""
    if opts.polish.windows == 0 or opts.polish.after_every_run:
        return kept
    say(f"Polish: {opts.polish.windows} memory-aware CP-SAT windows on the kept plan")
    s3 = _memory_windows(inst, kept.stage3, opts)
    kept.row.makespan = s3.makespan
    return replace(kept, stage3=s3)


def problem3(inst: Instance, s2: DlrResult, order1: list[int], opts: SolveOptions, say: Progress) -> Problem3Result:
    """Problem 3 on the Stage-2 result ``s2`` (module docstring)."""
    t0 = time.perf_counter()
    budget = TrafficBudget.of(int(s2.evaluation.extra_traffic or 0), opts.traffic_slack)
    rows, screened = _collect(inst, s2, order1, budget, opts, say)
    done, runs = _stage3_on_finalists(inst, rows, screened, opts, say)
    kept: _Kept | None = None
    search: list[dict[str, Any]] = []
    more = 0
    for k, start in enumerate(done[: _starts(inst, opts, len(done))]):
        if k:
            say(f"Makespan search from the Stage-3 result {k + 1}: {start.row.source} {start.row.detail}".rstrip())
        got, reports, made = _search_rounds(inst, start, rows, budget, opts, say)
        search += reports
        more += made
        if kept is None or got.stage3.makespan < kept.stage3.makespan:
            kept = got
    assert kept is not None
    kept.row.kept = True
    s3 = kept.stage3
    return Problem3Result(s3.cpe.plan, s3.evaluation, s3, rows, budget, runs + more, time.perf_counter() - t0, search)
