"""Problem 3: the time-driven producer's use in the pipeline (a shim while the pipeline
still calls it from here).

The scheduler itself lives in :mod:`dansched.stages.dlr.timed` (:func:`timed_schedule`
builds a whole Stage-2 plan while simulating the engines). This module keeps what the
pipeline calls: :func:`timed_plans` judges each trial's plan with
:func:`dansched.simulate.evaluate` and keeps those within the traffic allowance,
:func:`replaced_plan` puts DLR's placement on the fastest trial's order,
:func:`timed_candidates` returns both for Stage 3, :func:`traffic_allowance` and
:func:`trials_for` say what problem 3 may spend and which trials run.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from ...errors import PlacementFailed
from ...instance import Instance
from ...models.traffic import traffic_lower_bound
from ...plan import Plan
from ...simulate import Evaluation, evaluate
from ..dlr.reorder import tighten_lifetimes
from ..dlr.stage import dlr_plan
from ..dlr.timed import DEFAULT_TRIALS, SLACK_TRIALS, TimedFailed, TimedParams, timed_schedule

__all__ = [
    "TimedParams",
    "TimedFailed",
    "timed_schedule",
    "timed_plans",
    "trials_for",
    "traffic_allowance",
    "replaced_plan",
    "DEFAULT_TRIALS",
    "SLACK_TRIALS",
    "TimedProducerParams",
    "timed_candidates",
]


@dataclass(frozen=True)
class TimedProducerParams:
    """When the pipeline runs the time-driven producer: up to ``max_nodes`` nodes (above,
    its extra Stage 3 took Matmul_Case1's full pipeline from 53 s to 97 s for 0.1 %) or,
    when ``--traffic-slack`` allows more traffic, up to ``slack_max_nodes`` (there its
    eviction-ahead trials pay: Matmul_Case1 at slack 20, 1,012,136 -> 978,679 cycles), and
    only for plans whose makespan before CPE is within ``promising`` times the best one
    after Stage 3 (CPE rarely gains more)."""

    max_nodes: int = 20_000
    slack_max_nodes: int = 100_000
    promising: float = 1.25

    def __post_init__(self) -> None:
        for name in ("max_nodes", "slack_max_nodes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"TimedProducerParams.{name} must be an integer >= 0, got {value!r}")
        if not (isinstance(self.promising, (int, float)) and self.promising >= 1.0):
            raise ValueError(f"TimedProducerParams.promising must be a number >= 1, got {self.promising!r}")


def trials_for(
    inst: Instance, slack: float, max_nodes: int = TimedProducerParams().max_nodes
) -> tuple[TimedParams, ...]:
    """The parameter sets :func:`timed_plans` tries: the defaults, plus eviction ahead of
    the frontier when ``slack`` (percent) allows more traffic; none above ``max_nodes``."""
    if inst.n > max_nodes:
        return ()
    return DEFAULT_TRIALS + (SLACK_TRIALS if slack > 0 else ())


def timed_plans(
    inst: Instance,
    reference: Sequence[int],
    traffic_limit: int,
    trials: Sequence[TimedParams] = DEFAULT_TRIALS,
) -> tuple[list[tuple[Plan, Evaluation, str]], list[dict], tuple[Plan, Evaluation, str] | None]:
    """Run :func:`timed_schedule` for each parameter set. Returns the plans the evaluator
    accepts with traffic within ``traffic_limit``, fastest first (ties: trial order); one
    record per trial, ``{producer, traffic, makespan}`` or ``{producer, failed}``; and the
    fastest valid plan whatever its traffic (its order is worth DLR's placement, see
    :func:`replaced_plan`), or ``None``. Trials run without the limit so that the
    fastest order is known even when its own spills cost too much."""
    out = []
    attempts: list[dict] = []
    fastest = None
    for i, params in enumerate(trials):
        try:
            plan = timed_schedule(inst, reference, params)
        except TimedFailed as exc:
            attempts.append({"producer": params.name, "failed": str(exc)})
            continue
        ev = evaluate(inst, plan)
        if not ev.valid:  # a bug, never a result: the tests catch it
            attempts.append({"producer": params.name, "failed": f"invalid plan: {ev.errors[0].message}"})
            continue
        attempts.append({"producer": params.name, "traffic": ev.extra_traffic, "makespan": ev.makespan})
        if fastest is None or ev.makespan < fastest[1].makespan:
            fastest = (plan, ev, params.name)
        if ev.extra_traffic <= traffic_limit:
            out.append((ev.makespan, i, plan, ev, params.name))
        else:
            ev.drop_detail()
    out.sort(key=lambda x: (x[0], x[1]))
    return [(plan, ev, name) for _, _, plan, ev, name in out], attempts, fastest


def replaced_plan(
    inst: Instance, plan: Plan, traffic_limit: int, name: str, cover_time_limit: float = 10.0
) -> tuple[Plan, Evaluation, str] | None:
    """Stage 2's placement and victim rules (DLR without order search) on the order of a
    time-driven ``plan`` (spill nodes dropped): the order keeps the producer's engine
    overlap, DLR's exact spill plan keeps the traffic low. ``None`` when it cannot place
    or exceeds ``traffic_limit``; also, without running DLR, when the capacity-cover bound
    of that order (lifetimes tightened as DLR does) already exceeds it: no placement of
    the order can then be within the limit, so the answer is the same, only sooner."""
    order = [v for v in plan.order if v < inst.n]
    if traffic_lower_bound(inst, tighten_lifetimes(inst, order), time_limit=cover_time_limit).value > traffic_limit:
        return None
    try:
        got = dlr_plan(inst, order, search=False)
    except (PlacementFailed, ValueError):
        return None
    ev = got.evaluation
    if not ev.valid or ev.extra_traffic > traffic_limit:
        return None
    return got.plan, ev, f"dlr-on-{name}"


def traffic_allowance(traffic: int, slack: float) -> int:
    """Problem-2 traffic times (1 + slack/100), rounded down: what problem 3 may spend."""
    return int(traffic * (100 + slack) // 100) if slack == int(slack) else int(traffic * (1 + slack / 100))


def timed_candidates(
    inst: Instance, plan2: Plan, traffic2: int, slack: float, params: TimedProducerParams = TimedProducerParams()
) -> tuple[list[tuple[Plan, Evaluation, str]], dict]:
    """The time-driven producer on the Stage-2 order ``plan2`` (traffic ``traffic2``),
    within the allowance :func:`traffic_allowance`: its fastest plan (before CPE) and
    DLR's placement on that plan's order (``dlr-on-...``), as (plan, evaluation, name)
    for Stage 3. The info lists {producer, traffic, makespan} of every plan made
    (makespan before CPE; ``failed`` when a trial could not finish) and the allowance;
    the caller sets ``winner`` when one of them ends fastest after Stage 3."""
    t0 = time.perf_counter()
    limit = traffic_allowance(traffic2, slack)
    reference = [v for v in plan2.order if v < inst.n]
    plans, tried, fastest = timed_plans(
        inst, reference, limit, trials_for(inst, slack, params.slack_max_nodes if slack > 0 else params.max_nodes)
    )
    out = plans[:1]
    if fastest is not None:
        replaced = replaced_plan(inst, fastest[0], limit, fastest[2])  # the fastest order, DLR's spills
        if replaced is not None:
            tried.append(
                {"producer": replaced[2], "traffic": replaced[1].extra_traffic, "makespan": replaced[1].makespan}
            )
            out.append(replaced)
    info = {"allowance": limit, "tried": tried, "winner": None, "seconds": round(time.perf_counter() - t0, 3)}
    return out, info
