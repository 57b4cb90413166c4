"""The screen of a Stage-2 candidate: one list-scheduling pass inside its memory behaviour
and its forward-backward improvement.

Problem 3 has more Stage-2 candidates than full Stage-3 runs to spend. Each candidate is
screened by the first step of the Stage-3 round *resequence*: non-delay list scheduling
(priority to the longest tail, the criticality h(v) of paper Eq. 20; ties by the Stage-2
position) over the constraints that keep its memory behaviour, the augmented DAG G2 and
the residency brackets of every operation, the memory events free to interleave
(:func:`~dansched.stages.cpe.skeleton.memory_skeleton` with ``chain=False``), then the
forward-backward passes (:func:`~dansched.stages.cpe.list_schedule.forward_backward`, at
most four, each one list schedule backward and one forward). The screened makespan is
the smaller of that order's and the candidate's own.

The backward-forward passes matter: a plan DLR made without looking at time often ends
far faster after them (FlashAttention_Case0, recency-aware victims: 35,917 cycles after
one pass, 31,101 after the passes, 31,101 after the full Stage 3), while a time-driven
plan is nearly done; ranked by the single pass, the time-driven plans crowd out the one
that ends fastest. When Stage 3 runs at least one round the screened makespan is an upper
bound on Stage 3's result (that round tries this order first and keeps only faster plans).
"""

from __future__ import annotations

from ...instance import Instance
from ...plan import Plan
from ...simulate import Evaluation
from .list_schedule import forward_backward
from .resequence import loose_list_schedule

__all__ = ["screened_makespan"]


def screened_makespan(inst: Instance, plan: Plan, ev: Evaluation) -> int:
    """The candidate's makespan after the screen (module docstring); ``ev`` is the
    evaluator's verdict on ``plan`` (valid, with its augmented DAG)."""
    assert ev.valid and ev.graph is not None and ev.makespan is not None
    skel, order = loose_list_schedule(inst, plan, ev.graph)
    _, makespan, _ = forward_backward(skel, order)
    return min(int(ev.makespan), makespan)
