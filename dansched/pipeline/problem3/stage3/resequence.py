"""Timing-aware resequencing, a round of the Stage-3 loop (:mod:`.run`) when the
makespan matters (problem 3): an order change of the kind Stage 2 makes, with the same
segments, offsets and spills.

Stage 3 keeps the subsequence of memory events of the Stage-2 order (paper
Eq. 14), so that order decides much of the makespan. Yet the memory behaviour of a
plan — its residency segments, offsets, spills, spill and reuse edges, hence its
traffic — survives any order that keeps the augmented DAG G2 and runs every
operation inside the segment it ran in: G2's reuse edges already order the segments
that share addresses. This pass schedules that looser skeleton
(:func:`~dansched.stages.cpe.skeleton.memory_skeleton` with ``chain=False``) by non-delay
list scheduling and forward-backward passes, and keeps the new order only if the
evaluator accepts it with the same traffic and spills and it is faster. The
logical and physical peaks may change (problem 3 bounds traffic, not peak).
"""

from __future__ import annotations

from ....graph import bottom_level
from ....instance import Instance
from ....plan import Plan
from ....simulate import AugmentedGraph, Evaluation, evaluate
from ....stages.cpe.list_schedule import forward_backward, list_schedule
from ....stages.cpe.skeleton import Skeleton, memory_skeleton

__all__ = ["resequence_for_timing", "loose_list_schedule"]


def loose_list_schedule(inst: Instance, plan: Plan, g: AugmentedGraph) -> tuple[Skeleton, list[int]]:
    """The looser skeleton of ``plan`` (memory events not chained) and one non-delay
    list-scheduling pass over it: priority to the longest tail (criticality h(v), Eq. 20),
    ties by the position in ``plan``. ``g`` is the plan's augmented DAG."""
    skel = memory_skeleton(inst, plan.order, g, chain=False)
    pos = [0] * g.n
    for i, v in enumerate(plan.order):
        pos[v] = i
    return skel, list_schedule(skel, bottom_level(g.preds, g.cycles, plan.order), pos)


def resequence_for_timing(inst: Instance, plan: Plan, ev: Evaluation) -> tuple[Plan, Evaluation] | None:
    """A faster order with the same memory behaviour, or None."""
    assert ev.valid and ev.graph is not None
    skel, first = loose_list_schedule(inst, plan, ev.graph)
    order, _, _ = forward_backward(skel, first)
    new = Plan(order=tuple(order), offsets=plan.offsets, spills=plan.spills)
    ev2 = evaluate(inst, new)
    if (
        not ev2.valid
        or ev2.extra_traffic != ev.extra_traffic
        or ev2.spill_count != ev.spill_count
        or ev2.metrics.makespan >= ev.metrics.makespan
    ):
        return None
    return new, ev2
