"""The screen of a Stage-2 candidate (dansched.pipeline.problem3.stage3.screen): one
list-scheduling pass inside the candidate's memory behaviour, the smaller of that order's
makespan and the candidate's own. Checked by hand on two chains, and against the shared
evaluator on generated graphs that spill: the screened order, judged as a plan, is valid,
keeps the candidate's traffic and takes the makespan the screen says."""

from __future__ import annotations

import pytest
from helpers import TWO_CHAINS_FAST, TWO_CHAINS_SLOW, generated, two_chains

from dansched.pipeline.problem3.stage3.resequence import loose_list_schedule
from dansched.pipeline.problem3.stage3.screen import screened_makespan
from dansched.plan import Plan
from dansched.simulate import evaluate
from dansched.stages.dlr.stage import dlr_plan
from dansched.stages.mpas.stage import mpas_order


def test_the_screen_by_hand():
    """The slow order runs B's VEC first (makespan 180); the pass puts A's VEC first, the
    longer tail (Eq. 20), and reaches the longest path, 120. A plan at 120 stays there."""
    inst = two_chains()
    slow = evaluate(inst, TWO_CHAINS_SLOW)
    assert slow.valid and slow.makespan == 180
    assert screened_makespan(inst, TWO_CHAINS_SLOW, slow) == 120
    fast = evaluate(inst, TWO_CHAINS_FAST)
    assert screened_makespan(inst, TWO_CHAINS_FAST, fast) == fast.makespan == 120


@pytest.mark.parametrize("family, scale, seed", [("matmul", 2, 0), ("conv", 2, 1), ("fa", 2, 0)])
def test_the_screened_makespan_is_the_evaluators(family, scale, seed):
    inst = generated(family, scale, seed)
    s2 = dlr_plan(inst, mpas_order(inst).order, other_orders=False)
    plan, ev = s2.plan, s2.evaluation
    assert ev.valid and ev.spill_count > 0
    _, order = loose_list_schedule(inst, plan, ev.graph)
    judged = evaluate(inst, Plan(tuple(order), plan.offsets, plan.spills))
    assert judged.valid and (judged.extra_traffic, judged.spill_count) == (ev.extra_traffic, ev.spill_count)
    assert screened_makespan(inst, plan, ev) == min(ev.makespan, judged.makespan)
