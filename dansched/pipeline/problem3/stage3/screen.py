"""The cheap screen of a Stage-2 candidate: one list-scheduling pass inside its memory
behaviour.

Problem 3 has more Stage-2 candidates than full Stage-3 runs to spend. Each candidate is
screened by one non-delay list-scheduling pass (priority to the longest tail, the
criticality h(v) of paper Eq. 20; ties by the Stage-2 position) over the constraints that
keep its memory behaviour: the augmented DAG G2 and the residency brackets of every
operation, with the memory events free to interleave
(:func:`~dansched.stages.cpe.skeleton.memory_skeleton` with ``chain=False``, the first step
of the Stage-3 round *resequence*). The screened makespan is the smaller of that order's
and the candidate's own. It costs one O((V + E) log V) pass, and when Stage 3 runs at
least one round it is an upper bound on Stage 3's result (that round tries this order
first and keeps only faster plans). It ranks the candidates of one source much as the full
Stage 3 does, not always those of different sources: a plan DLR made without looking at
time gains more from Stage 3's relayout rounds than a time-driven plan does
(FlashAttention_Case0: recency-aware victims screened at 35,917 end at 31,101, a
time-driven plan screened at 31,258 ends at 31,224), so problem 3 picks its finalists per
source first (``dansched.pipeline.problem3``).
"""

from __future__ import annotations

from ....instance import Instance
from ....plan import Plan
from ....simulate import Evaluation
from ....stages.cpe.refine import makespan_of
from .resequence import loose_list_schedule

__all__ = ["screened_makespan"]


def screened_makespan(inst: Instance, plan: Plan, ev: Evaluation) -> int:
    """The candidate's makespan after one list-scheduling pass (module docstring); ``ev`` is
    the evaluator's verdict on ``plan`` (valid, with its augmented DAG)."""
    assert ev.valid and ev.graph is not None and ev.makespan is not None
    skel, order = loose_list_schedule(inst, plan, ev.graph)
    return min(int(ev.makespan), makespan_of(skel, order))
