"""Problem 3 as one search: candidates, traffic allowances, screen, Stage 3 on the best few.

1. **Budget.** The traffic budget (:class:`~dansched.budget.TrafficBudget`) is computed
   once from the problem-2 plan's traffic and ``--traffic-slack``; asked for the frontier
   (``Problem3Params.frontier``), the candidates are collected up to the larger of it and
   ``effort.frontier_slack``.
2. **Candidates.** The problem-2 plan is the first candidate; then each source the effort
   names (:data:`dansched.pipeline.problem3.sources.candidates.SOURCES`) yields complete Stage-2 plans. No
   source is switched on or off by the slack or the graph's size: every candidate the
   budget admits competes.
3. **Screen.** Each admitted candidate (a plan identical to an earlier one's is recorded,
   not screened again) is screened by one list-scheduling pass inside its
   skeleton (:func:`~dansched.pipeline.problem3.stage3.screen.screened_makespan`); only the best few
   keep their per-node detail meanwhile.
4. **Allowances.** Problem 3 plans at a rising sequence of traffic allowances: the
   problem-2 plan's traffic, then the traffic of each admitted candidate above it
   (:func:`allowances`) and of each step of the gap-hiding walk (step 8), up to the *reach*:
   the budget's allowance, or with the frontier the larger of it and
   ``effort.frontier_slack``. At each allowance, steps 5-7 run on the candidates it newly
   admits, and the plan kept at the one below is a start too: a larger allowance is never
   slower. The plan kept at each allowance is a point of the traffic-makespan frontier
   (:mod:`dansched.pipeline.problem3.frontier`); the solve's plan is the last one kept within
   the budget. Nothing computed at an allowance depends on the reach (it only says where
   the sequence stops), so a smaller budget's plans are a prefix of a larger one's: the
   frontier finds at least what each fixed allowance within its reach finds.
5. **Stage 3.** The full Stage 3 (:func:`~dansched.pipeline.problem3.stage3.run.stage3`,
   with the memory-aware windows after it in the memory-window mode) runs on the
   finalists, each candidate once whatever the allowance. At the first allowance:
   ``effort.stage3_runs`` less one per search round, or more on a small graph
   (``effort.stage3_work`` node-visits of them): the problem-2 plan, then
   the best screened candidate of each other source in the order of their screens (the
   screen ranks plans of one source well, of different sources less: see
   :mod:`dansched.pipeline.problem3.stage3.screen`), then the best screened of the rest (ties: less
   traffic, then the earlier candidate); at each higher one, ``effort.level_runs`` of the
   candidates it newly admits, chosen alike. The fastest result is kept (ties: the earlier
   finalist). Above the first allowance only candidates that screen at most
   ``effort.level_margin`` above the plan kept below are worth a run (the full Stage 3 often
   ends well under a screen); an allowance where none ends faster than that plan keeps it as
   it is.
6. **Makespan search.** From the fastest Stage-3 result (from each of the fastest few on a
   small graph: ``effort.start_work`` node-visits of starts, since the fastest before the
   search is not always the fastest after it), the search over complete plans
   (:mod:`dansched.pipeline.problem3.search.driver`) changes victims, reload times,
   addresses and orders (its segment moves and CP-SAT windows) within the allowance,
   round after round (``SolveOptions.search``); a round whose plan is faster ends in a full
   Stage-3 run. The fastest plan of every start is kept. Above the first allowance a plan
   already within ``effort.saturation`` of its busiest pipe's load is not searched: only
   less traffic could make it faster. The problem-2 plan's allowance gets the whole search
   and polish; each candidate allowance above it ``effort.level_search`` of them
   (:meth:`~dansched.params.Problem3Params.share`), and only when it has a finalist.
7. **Polish.** At the end of every round (or once, with no round), the kept plan's
   memory-aware CP-SAT windows (``Problem3Params.polish``: windows along its critical chain,
   :func:`~dansched.pipeline.problem3.stage3.polish.memory_window_polish`): memory events inside a
   window may move, offsets, spills and traffic stay; then, when the windows changed the
   plan, a full Stage-3 run on it, kept when faster (their new memory order gives CPE a new
   skeleton).
   The kept row's makespan is then the polished plan's, and the next round starts from it.

8. **The gap-hiding walk.** From the plan kept so far, while the reach lies above the
   problem-2 plan's traffic, the walk (:mod:`dansched.pipeline.problem3.search.gaps`) takes
   the one move that hides the most of the busiest pipe's idle time per unit of extra
   traffic (evict ahead of need, an earlier reload, another address...), runs the full
   Stage 3 on its plan (a candidate row of source ``gap-hiding walk``) and keeps it: a
   frontier point about one spill heavier than the last. Walk steps and candidate
   allowances interleave by traffic; the walk continues from whichever plan is kept. It
   ends when no move gains, when its next step passes the reach, when the kept plan is
   within ``effort.saturation`` of its busiest pipe's load, or when its work
   (``GapParams.work``) is spent; the report says which (``walk``).

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
from ...interrupt import stopping
from ...params import Problem3Params, Progress, SearchParams
from ...plan import Plan
from ...simulate import Evaluation, evaluate
from ...stages.dlr.stage import DlrResult
from .frontier import NO_FASTER_CANDIDATE, SATURATED, SEARCHED, WALKED, FrontierPoint, point_of, saturated
from .search.driver import PlanState, SearchRound, makespan_search
from .search.gaps import GapStep, WalkSummary, gap_step
from .search.layout import Layout
from .sources.candidates import SOURCES, Candidate, CandidateRecord, SourceContext, problem2_candidate
from .stage3.run import Stage3Result, memory_windows, stage3
from .stage3.screen import screened_makespan

__all__ = ["Problem3Result", "problem3", "allowances"]


@dataclass
class Problem3Result:
    """The final plan, the Stage-3 run that made it, the candidates (rows of the report),
    the budget, how many full Stage-3 runs were made, the seconds, what each
    makespan-search round did, the plan kept at each allowance (``points``, rising:
    the frontier's points before :func:`~dansched.pipeline.problem3.frontier.pareto_front`)
    and what the gap-hiding walk did (``walk``)."""

    plan: Plan
    evaluation: Evaluation
    stage3: Stage3Result
    candidates: list[CandidateRecord]
    budget: TrafficBudget
    runs: int
    seconds: float
    search: list[SearchRound] = field(default_factory=list)
    points: list[FrontierPoint] = field(default_factory=list)
    walk: WalkSummary = field(default_factory=lambda: WalkSummary(0, 0, "no traffic to trade"))


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
        if stopping():  # stopped early (dansched.interrupt): the candidates made so far
            break
        say(f"Problem 3: candidates from {name} (budget {budget.allowance:,} traffic)")
        for cand in SOURCES[name](ctx):
            take(cand)
            if stopping():
                break
    return rows, screened


def _finalists(screened: list[_Screened], count: int, first: _Screened | None = None) -> list[_Screened]:
    """Step 5's choice: ``first`` (the problem-2 plan, at the first allowance), then the best
    screened of each other source in the order of their screens, then the best screened of
    the rest; at most ``count``."""
    others = sorted((s for s in screened if s is not first), key=lambda s: s.key)
    per_source: dict[str, _Screened] = {}
    for s in others:
        per_source.setdefault(s.candidate.source, s)
    leaders = sorted(per_source.values(), key=lambda s: s.key)
    rest = [s for s in others if s not in leaders]
    head = [first] if first is not None else []
    return head + (leaders + rest)[: max(0, count - len(head))]


def _stage3_on(inst: Instance, finalists: list[_Screened], p: Problem3Params, say: Progress) -> list[_Kept]:
    """The full Stage 3 on each finalist, the results fastest first (the earlier finalist on
    ties)."""
    done: list[_Kept] = []
    for k, item in enumerate(finalists):
        if done and stopping():  # stopped early: the runs made so far
            break
        cand = item.candidate
        say(f"Stage 3 on candidate {k + 1}/{len(finalists)}: {cand.source} {cand.detail}".rstrip())
        ev2 = _detailed(inst, cand.plan, cand.evaluation)
        s3 = stage3(inst, cand.plan, ev2, p.stage3)
        _check_stage3(ev2, s3, p)
        item.row.makespan = s3.makespan
        done.append(_Kept(s3, ev2, item.row))
    done.sort(key=lambda kept: kept.stage3.makespan)  # stable: the earlier finalist first on ties
    return done


def _starts(inst: Instance, p: Problem3Params, finalists: int) -> int:
    """How many of the fastest Stage-3 results the search starts from: one, or more on a
    small graph (``effort.start_work`` node-visits of them, ``effort.max_starts`` at most)."""
    effort = p.effort
    return min(finalists, effort.max_starts, max(1, effort.start_work // max(1, inst.n)))


def _search_rounds(
    inst: Instance,
    kept: _Kept,
    rows: list[CandidateRecord],
    allowance: int,
    p: Problem3Params,
    say: Progress,
    label: str = "Makespan search",
) -> tuple[_Kept, list[SearchRound], int]:
    """Steps 5 and 6: round after round (``p.search``), the makespan search over complete
    plans (:mod:`dansched.pipeline.problem3.search`) within ``allowance`` from the best plan so far, a full
    Stage-3 run on its plan when it found a faster one (a candidate row of source
    ``makespan-search``), then the polish of the fastest (:func:`_polish`); with no round,
    the polish alone. Each round starts where the last ended, so more rounds never end
    slower. Returns the fastest plan, each round's report and the Stage-3 runs made."""
    reports: list[SearchRound] = []
    runs = 0
    start = kept
    for r, params in enumerate(p.search):
        if stopping():  # stopped early: the plan so far
            break
        step = label + (f", round {r + 1} of {len(p.search)}" if len(p.search) > 1 else "")
        plan = kept.stage3.cpe.plan
        ev = _detailed(inst, plan, kept.stage3.evaluation)

        def moves(done: int, budget: int, step: str = step) -> None:
            say(f"{step}: {done:,}/{budget:,} moves")

        got = makespan_search(inst, plan, ev, allowance, params, seed=p.seed + r, moves_done=moves)
        reports.append(got.summary())
        if got.plan is not plan:
            say(f"Stage 3 on the makespan search's plan of round {r + 1}")
            s3 = stage3(inst, got.plan, got.evaluation, p.stage3)
            runs += 1
            detail = f"round {r + 1} from candidate {rows.index(start.row)} at allowance {allowance:,}"
            row = CandidateRecord(
                "makespan-search",
                detail,
                got.evaluation.metrics.extra_traffic,
                screened=got.evaluation.metrics.makespan,
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
    if s3.cpe.plan != kept.stage3.cpe.plan:  # the windows moved memory events: CPE again on the new skeleton
        again = stage3(inst, s3.cpe.plan, s3.evaluation, p.stage3)
        if again.makespan < s3.makespan:
            s3 = again
    kept.row.makespan = s3.makespan
    return replace(kept, stage3=s3)


def allowances(base: int, reach: int, screened: list[_Screened]) -> list[int]:
    """Step 4's candidate allowances, rising: the problem-2 plan's traffic ``base`` and the
    traffic of each admitted candidate above it, up to ``reach``."""
    levels = {base} | {s.candidate.traffic for s in screened}
    return sorted(t for t in levels if base <= t <= reach)


def _at_allowance(
    inst: Instance,
    allowance: int,
    fresh: list[_Screened],
    carried: _Kept | None,
    rows: list[CandidateRecord],
    p: Problem3Params,
    say: Progress,
    search_anyway: bool = True,
) -> tuple[_Kept, list[SearchRound], int, str]:
    """Steps 5-7 at one allowance: the full Stage 3 on the finalists among the ``fresh``
    candidates (those it newly admits; above the first allowance, only those screened at
    most ``effort.level_margin`` above the plan ``carried`` from the allowance below), then
    the search and the polish from the fastest few of their results and ``carried``.
    Without a finalist there, or none faster than ``carried`` after its Stage-3 run,
    ``carried`` is searched again only with ``search_anyway``. Returns the plan kept, the
    search rounds run, the full Stage-3 runs made and how the plan was reached (an outcome
    of :data:`~dansched.pipeline.problem3.frontier.OUTCOMES`)."""
    effort, n = p.effort, max(1, inst.n)
    if carried is None:  # the first allowance: the problem-2 plan (fresh[0]) and the best others
        count = max(1, effort.stage3_runs - len(p.search), effort.stage3_work // n)
        finalists = _finalists(fresh, count, first=fresh[0])
    else:  # above it, only candidates whose screen beats the plan kept below are worth a run
        worth = [s for s in fresh if s.key[0] < carried.stage3.makespan * (1 + effort.level_margin)]
        finalists = _finalists(worth, effort.level_runs)
        if not finalists and not search_anyway:
            return carried, [], 0, NO_FASTER_CANDIDATE
    if finalists:
        say(f"Stage 3 on {len(finalists)} candidate(s) at allowance {allowance:,}")
    done = _stage3_on(inst, finalists, p, say)
    if carried is not None and not search_anyway and all(k.stage3.makespan >= carried.stage3.makespan for k in done):
        for later in done:
            later.stage3.evaluation.drop_detail()
        return carried, [], len(finalists), NO_FASTER_CANDIDATE  # the plan kept below was searched already
    starts = sorted(done + ([carried] if carried is not None else []), key=lambda k: k.stage3.makespan)
    starts = starts[: _starts(inst, p, len(starts))]
    for later in done:
        if later not in starts:
            later.stage3.evaluation.drop_detail()
    best = starts[0].stage3
    if (
        carried is not None
        and best.evaluation.graph is not None
        and saturated(best.makespan, best.evaluation, effort.saturation)
    ):
        return starts[0], [], len(finalists), SATURATED
    kept: _Kept | None = None
    search: list[SearchRound] = []
    runs = len(finalists)
    for k, start in enumerate(starts):
        if kept is not None and stopping():  # stopped early: the plan so far
            break
        label = "Makespan search" + (f", start {k + 1} of {len(starts)}" if len(starts) > 1 else "")
        got, reports, made = _search_rounds(inst, start, rows, allowance, p, say, label)
        search += reports
        runs += made
        if kept is None or got.stage3.makespan < kept.stage3.makespan:
            kept = got
    assert kept is not None
    return kept, search, runs, SEARCHED


def _point(inst: Instance, allowance: int, kept: _Kept, outcome: str) -> FrontierPoint:
    """The frontier point of the plan ``kept`` at ``allowance``, reached as ``outcome`` says."""
    plan = kept.stage3.cpe.plan
    ev = _detailed(inst, plan, kept.stage3.evaluation)
    source = f"{kept.row.source} {kept.row.detail}".rstrip()
    return point_of(inst, allowance, plan, ev, kept.stage3.makespan, source, outcome)


def _at_level(say: Progress, k: int, count: int) -> Progress:
    """``say`` with each message prefixed by the allowance it is about: ``Allowance 2 of 5: ...``
    (short, so that a progress line at 80 columns keeps the step's count too)."""

    def said(message: str) -> None:
        say(f"Allowance {k} of {count}: {message}")

    return said


def _walked(inst: Instance, step: GapStep, rows: list[CandidateRecord], p: Problem3Params, index: int) -> _Kept:
    """The walk's ``step`` as a kept plan: its plan after a full Stage-3 run (a candidate row of
    source ``gap-hiding walk``)."""
    ev = step.state.evaluation
    s3 = stage3(inst, step.state.plan, ev, p.stage3)
    traffic = ev.metrics.extra_traffic
    detail = f"step {index}: {step.move}, {step.gain:,} cycles for {step.extra:,} traffic"
    row = CandidateRecord("gap-hiding walk", detail, traffic, screened=step.state.makespan, makespan=s3.makespan)
    rows.append(row)
    return _Kept(s3, ev, row)


def _state(inst: Instance, kept: _Kept) -> PlanState:
    """The walk's state of the plan ``kept``."""
    plan = kept.stage3.cpe.plan
    ev = _detailed(inst, plan, kept.stage3.evaluation)
    return PlanState(plan, ev, Layout.of(inst, plan, ev))


def problem3(inst: Instance, s2: DlrResult, order1: list[int], p: Problem3Params, say: Progress) -> Problem3Result:
    """Problem 3 on the Stage-2 result ``s2`` (module docstring)."""
    t0 = time.perf_counter()
    base = int(s2.evaluation.extra_traffic or 0)
    budget = TrafficBudget.of(base, p.traffic_slack)
    reach = TrafficBudget.of(base, max(p.traffic_slack, p.effort.frontier_slack)) if p.frontier else budget
    rows, screened = _collect(inst, s2, order1, reach, p, say)
    search: list[SearchRound] = []
    seen: set[int] = set()  # rows of the candidates already offered to Stage 3

    levels = allowances(base, reach.allowance, screened)

    def level(allowance: int, carried: _Kept | None, q: Problem3Params) -> tuple[_Kept, int, str]:
        k = len(levels) - len(pending)
        at = say if len(levels) == 1 else _at_level(say, k, len(levels))
        fresh = [s for s in screened if s.candidate.traffic <= allowance and s.key[2] not in seen]
        seen.update(s.key[2] for s in fresh)
        got, rounds, made, outcome = _at_allowance(inst, allowance, fresh, carried, rows, q, at, carried is None)
        search.extend(rounds)
        return got, made, outcome

    pending = levels[1:]  # the candidate allowances above the first, not yet planned at
    kept, runs, outcome = level(base, None, p)  # steps 5-7 at the problem-2 plan's traffic: the whole search
    points = [_point(inst, base, kept, outcome)]
    chosen = kept  # the plan kept at the budget
    shared = p.share(p.effort.level_search)
    moves = p.search[0] if p.search else SearchParams()  # what the walk's moves read
    work = p.gaps.work if reach.allowance > base else 0  # no traffic to trade: no walk
    walk = WalkSummary(0, 0, "no traffic to trade" if reach.allowance <= base else "work spent")
    step: GapStep | None = None  # the walk's next step from ``kept``, once computed
    stalled: _Kept | None = None  # the plan from which the walk found no step

    def next_step() -> GapStep | None:
        nonlocal work, stalled
        state = _state(inst, kept)
        found = None
        if saturated(state.makespan, state.evaluation, p.effort.saturation):
            walk.end = "saturated"
        else:
            traffic = state.evaluation.metrics.extra_traffic
            say(
                f"Gap-hiding walk, step {walk.steps + 1}: {state.makespan:,} cycles at {traffic:,} of {reach.allowance:,} traffic"
            )
            found, used = gap_step(inst, state, p.gaps, moves, work, p.seed + walk.steps)
            work -= used
            walk.work += used
            if found is None:
                walk.end = "work spent" if work <= 0 else "no move gains"
        if found is None:
            stalled = kept
        return found

    while not stopping():  # step 8: the levels and the walk's steps, by traffic (stopped early: those so far)
        if step is None and work > 0 and kept is not stalled:
            step = next_step()
        nxt = pending[0] if pending else None
        if nxt is not None and (step is None or nxt < step.state.evaluation.metrics.extra_traffic):
            pending.pop(0)
            got, made, outcome = level(nxt, kept, shared)
            runs += made
            if got.stage3.makespan < kept.stage3.makespan:
                if kept is not chosen:
                    kept.stage3.evaluation.drop_detail()
                kept, step = got, None
            at = nxt
        elif step is None:
            if work <= 0 and walk.end not in ("saturated", "no traffic to trade"):
                walk.end = "work spent"
            break
        elif step.state.evaluation.metrics.extra_traffic > reach.allowance:
            walk.end = "the next step passes the reach"
            break
        else:
            walk.steps += 1
            if kept is not chosen:
                kept.stage3.evaluation.drop_detail()
            kept, step, outcome = _walked(inst, step, rows, p, walk.steps), None, WALKED
            runs += 1
            at = kept.stage3.evaluation.metrics.extra_traffic
        point = _point(inst, at, kept, outcome)
        if points[-1].allowance == at:  # a faster plan at the same allowance (a walk step at no extra traffic)
            points[-1] = point
        else:
            points.append(point)
        if at <= budget.allowance:
            chosen = kept
    chosen.row.kept = True
    s3 = chosen.stage3
    seconds = time.perf_counter() - t0
    return Problem3Result(s3.cpe.plan, s3.evaluation, s3, rows, budget, runs, seconds, search, points, walk)
