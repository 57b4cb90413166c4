"""The gap-hiding walk: problem 3's frontier step, from one plan to the next heavier one.

A plan above its floors idles its busiest pipe in gaps, and each gap is a chain of waits
(:class:`~dansched.stages.cpe.skeleton.BindingChains`): a reload waiting for its victim's
write-out, which waits for the operation still using that victim; a new buffer waiting for
the room the previous operation frees. The walk hides them one at a time:

1. the foci are the nodes behind the busiest pipe's largest gaps
   (:class:`~dansched.pipeline.problem3.search.focus.BusiestGaps`);
2. every segment move of the search (:data:`~dansched.pipeline.problem3.search.driver.MOVES`
   named by ``GapParams.moves``) is tried on every focus it accepts, ``GapParams.tries``
   times (seeded), within a headroom of one spill more than the plan carries (the most one
   spill of a tier the plan spills from costs), each result judged by the shared evaluator
   after one list-scheduling pass (:func:`~dansched.pipeline.problem3.search.driver.state_of`);
3. the step takes the result that hides the most busiest-pipe time per unit of extra traffic:
   a faster plan at no more traffic first (the most cycles), else the most cycles gained per
   unit of traffic added (ties: fewer units, then the earlier try).

Each step that adds traffic is a frontier point, one spill or so heavier than the last, so
the frontier is dense from the problem-2 plan's traffic up: evict ahead of need (the
``add room`` move, its victim chosen by the search's victim rule) where a load waited for a
running operation's write-out, an earlier reload, another address. The walk ends when no
move gains, when its best step would pass ``reach``, when the plan is within
``saturation`` of its busiest pipe's load (only less traffic could make it much faster), or
when its work is spent (``GapParams.work`` node-visits: one per node of the plan per try,
deterministic, no clock).

A step depends only on the plan it starts from (the headroom is the plan's own, never the
reach), so the walk to a smaller reach is a prefix of the walk to a larger one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ....hardware import spill_traffic
from ....instance import Instance
from ....interrupt import stopping
from ....params import GapParams, SearchParams
from ..frontier import saturated
from .driver import MOVES, PlanState, state_of
from .focus import BusiestGaps

__all__ = ["GapStep", "WalkSummary", "step_headroom", "gap_step", "hide_gaps"]


@dataclass(frozen=True)
class GapStep:
    """One step of the walk: the plan it reached, the move that made it, the cycles it took
    off and the traffic it added."""

    state: PlanState
    move: str
    gain: int
    extra: int


@dataclass
class WalkSummary:
    """What a walk did, as the report gives it: the steps it took, the node-visits it spent
    and why it ended (``end``: ``no traffic to trade`` when the reach is the plan's own
    traffic, ``saturated``, ``no move gains``, ``the next step passes the reach``, ``work
    spent``)."""

    steps: int
    work: int
    end: str

    def to_dict(self) -> dict[str, object]:
        return {"steps": self.steps, "work": self.work, "end": self.end}


def step_headroom(inst: Instance, state: PlanState) -> int:
    """The traffic one step may add: the most one spill of a buffer costs (``Size``, or
    ``2*Size`` when not backed), among the tiers the plan spills from (none: every tier)."""
    g = state.evaluation.graph
    assert g is not None, "a full plan's evaluation"
    tier, size, backed = inst.buf_tier.tolist(), inst.buf_size.tolist(), inst.buf_backed.tolist()
    tiers = {tier[b] for b in g.spill_buf} or set(tier)
    return max((spill_traffic(size[b], bool(backed[b])) for b in range(len(tier)) if tier[b] in tiers), default=0)


def _key(gain: int, extra: int) -> tuple[int, float, int]:
    """The rank of a result (larger first): no extra traffic before any, then cycles per unit."""
    return (1, float(gain), -extra) if extra <= 0 else (0, gain / extra, -extra)


def gap_step(
    inst: Instance, state: PlanState, params: GapParams, search: SearchParams, work: int, seed: int = 0
) -> tuple[GapStep | None, int]:
    """One step of the walk (module docstring, steps 1-3) from the valid ``state``, within
    ``work`` node-visits: the step (``None`` when no move gains) and the work it used."""
    ev = state.evaluation
    assert ev.graph is not None, "a full plan's evaluation"
    destroy = BusiestGaps(params.gaps, params.depth)
    traffic = ev.metrics.extra_traffic
    allowance = traffic + step_headroom(inst, state)
    ctx = state.context(inst, allowance, search, seed)
    foci = destroy.foci(state.chain())
    best: tuple[tuple[int, float, int], GapStep] | None = None
    used = tried = 0
    for name in params.moves:
        move = MOVES[name]
        for v in foci:
            if used >= work or stopping() or not move.accepts(ctx, v):  # stopped early: the best so far
                continue
            for t in range(params.tries):
                got = move.apply(ctx, v, np.random.default_rng((seed, tried, t)))
                used += ev.graph.n
                new = state_of(inst, got, allowance) if got is not None else None
                if new is None or new.makespan >= state.makespan:
                    continue
                gain, extra = state.makespan - new.makespan, new.evaluation.metrics.extra_traffic - traffic
                key = _key(gain, extra)
                if best is None or key > best[0]:
                    best = (key, GapStep(new, name, gain, extra))
            tried += 1
    return (None if best is None else best[1]), used


def hide_gaps(
    inst: Instance,
    state: PlanState,
    reach: int,
    params: GapParams,
    search: SearchParams,
    saturation: float,
    seed: int = 0,
) -> list[GapStep]:
    """The walk (module docstring) from the valid ``state``, each step taken from the plan the
    last one reached, keeping extra traffic within ``reach``; ``search`` gives the moves
    their parameters (the rooms they choose from, the victim rule). Returns the steps, first
    to last (the last one's plan is the fastest)."""
    work = params.work
    steps: list[GapStep] = []
    while work > 0 and not saturated(state.makespan, state.evaluation, saturation):
        step, used = gap_step(inst, state, params, search, work, seed + len(steps))
        work -= used
        if step is None or step.state.evaluation.metrics.extra_traffic > reach:
            break
        steps.append(step)
        state = step.state
    return steps
