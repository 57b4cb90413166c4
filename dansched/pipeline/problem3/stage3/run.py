"""A full Stage-3 run (problem 3): CPE on the Stage-2 plan, alternating with the
timing-aware Stage-2 rounds while the makespan after CPE drops, then the optional
exact CP-SAT windows, fixed-memory and (``--exact-window-mode memory``) memory-aware.

The rounds are *resequencing* (:mod:`.resequence`: a faster order with the same
segments, offsets and spills), *relayout* (:mod:`.relayout`: same order, segments
and spills, new offsets) and *late-segment moves* (:func:`.relayout.move_late_segments`);
the effort sets how many rounds may run (``rounds``), at every graph size. Every candidate keeps Stage 2's traffic and
spill count, and every plan is judged by the shared evaluator
(:func:`dansched.simulate.judged`). Evaluations that are only reported from then on
(the Stage-2 one included) drop their per-node detail to save memory.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from ....instance import Instance
from ....interrupt import stopping
from ....params import CpeParams, MemoryWindowParams, Stage3Params
from ....plan import Plan
from ....simulate import Evaluation, evaluate, judged
from ....stages.cpe.refine import CPEResult, cpe_refine
from .polish import memory_window_polish
from .relayout import move_late_segments, relayout_for_timing
from .resequence import resequence_for_timing

__all__ = ["Stage3Result", "ROUND_STEPS", "stage3", "memory_windows"]

RoundStep = Callable[[Instance, Plan, Evaluation], "tuple[Plan, Evaluation] | None"]

ROUND_STEPS: dict[str, RoundStep] = {  # the timing-aware Stage-2 rounds, by report name
    "resequence": resequence_for_timing,
    "move late segments": move_late_segments,
    "relayout": relayout_for_timing,
}


@dataclass
class Stage3Result:
    """What the Stage-3 loop returns: the layout the final CPE ran on (the Stage-2 plan
    unless a round changed it) with its evaluation, the CPE result and its evaluation,
    the step each timing-aware round took (``steps``) and the seconds those rounds took."""

    layout: Plan
    layout_evaluation: Evaluation
    cpe: CPEResult
    evaluation: Evaluation
    steps: tuple[str, ...] = ()
    seconds: float = 0.0

    @property
    def makespan(self) -> int:
        return self.evaluation.metrics.makespan


def _round_steps(first_round: bool) -> list[str]:
    """The steps one round tries, in order: resequence, late-segment moves, and relayout
    in the first round only."""
    return ["resequence", "move late segments"] + (["relayout"] if first_round else [])


def _best_round(
    inst: Instance, cur: Stage3Result, names: list[str], params: CpeParams
) -> tuple[str, Stage3Result] | None:
    """The round step whose plan is fastest after CPE, if it beats ``cur``, and its name.
    Steps are compared by CPE's makespan (the timing of the step's augmented DAG, which CPE
    keeps); only the winner is judged by the evaluator, which must agree."""
    best: tuple[int, str, Plan, Evaluation, CPEResult] | None = None
    for name in names:
        if best is not None and stopping():  # a stop request (dansched.interrupt): the best step so far
            break
        r = ROUND_STEPS[name](inst, cur.cpe.plan, cur.evaluation)
        if r is None:
            continue
        c = cpe_refine(inst, r[0], r[1], params=params)
        assert c.makespan is not None
        if c.makespan < (best[0] if best else cur.makespan):
            if best is not None:
                best[3].drop_detail()
            best = (c.makespan, name, r[0], r[1], c)
        else:
            r[1].drop_detail()
    if best is None:
        return None
    makespan, name, layout, layout_ev, c = best
    # when CPE kept the step's plan, the step's own evaluation is the judge's verdict on it
    if c.plan == layout:
        ev_c = layout_ev
    else:
        ev_c = judged(inst, c.plan, f"Stage 3 (CPE after {name})")
        layout_ev.drop_detail()
    if ev_c.makespan != makespan:
        raise AssertionError(f"CPE's timing ({makespan}) disagrees with the evaluator ({ev_c.makespan}) after {name}")
    return name, Stage3Result(layout, layout_ev, c, ev_c)


def _exact_windows(
    inst: Instance, cur: Stage3Result, width: int, time_limit: float, seed: int, params: CpeParams
) -> Stage3Result:
    """``cur`` polished by exact CP-SAT windows when that is strictly faster."""
    polished = cpe_refine(
        inst, cur.cpe.plan, cur.evaluation, exact_window=width, time_limit=time_limit, seed=seed, params=params
    )
    ev_p = judged(inst, polished.plan, "Stage 3 (CPE exact windows)")
    if ev_p.metrics.makespan < cur.makespan:
        polished = replace(polished, stats=replace(polished.stats, found_by="CPE then " + polished.stats.found_by))
        return replace(cur, cpe=polished, evaluation=ev_p)
    return cur


def memory_windows(
    inst: Instance, s3: Stage3Result, params: MemoryWindowParams, *, seed: int, cpe: CpeParams
) -> Stage3Result:
    """``s3`` polished by the memory-aware CP-SAT windows of ``params``
    (:func:`~.polish.memory_window_polish`; ``cpe``: CPE's parameters after them), judged."""
    ev = s3.evaluation if s3.evaluation.graph is not None else evaluate(inst, s3.cpe.plan)
    got, ev = memory_window_polish(inst, s3.cpe, ev, params, seed=seed, cpe=cpe)
    ev = judged(inst, got.plan, "Stage 3 (memory-aware CP-SAT windows)", ev)
    return replace(s3, cpe=got, evaluation=ev)


def stage3(inst: Instance, plan2: Plan, ev2: Evaluation, params: Stage3Params = Stage3Params()) -> Stage3Result:
    """Stage 3 on the Stage-2 plan ``plan2`` (judged ``ev2``); see the module docstring.
    At most ``params.rounds`` timing-aware rounds; ``params.exact_window`` > 0 adds the
    CP-SAT windows of that width, ``params.memory_windows`` the memory-aware ones after them."""
    cpe = params.cpe
    s3 = cpe_refine(inst, plan2, ev2, params=cpe)
    if s3.plan == plan2:  # CPE kept the plan: its evaluation stands
        cur = Stage3Result(plan2, ev2, s3, ev2)
    else:
        ev2.drop_detail()  # from here on only its metrics are read
        cur = Stage3Result(plan2, ev2, s3, judged(inst, s3.plan, "Stage 3 (CPE)"))
    t0 = time.perf_counter()
    used: list[str] = []
    while len(used) < params.rounds and not stopping():
        best = _best_round(inst, cur, _round_steps(first_round=not used), cpe)
        if best is None:
            break
        step, cur = best
        used.append(step)
    cur = replace(cur, steps=tuple(used), seconds=time.perf_counter() - t0)
    if params.exact_window > 0:
        cur = _exact_windows(inst, cur, params.exact_window, params.time_limit, params.seed, cpe)
    if params.memory_windows is not None:
        cur = memory_windows(inst, cur, params.memory_windows, seed=params.seed, cpe=cpe)
    return cur
