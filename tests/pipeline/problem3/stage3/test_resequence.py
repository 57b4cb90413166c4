"""Timing-aware resequencing (dansched.pipeline.problem3.stage3.resequence): a faster
order with the same memory behaviour, or None. By hand on two chains; on generated graphs
that spill, the evaluator's verdict on the new plan: valid, strictly faster, and every
residency segment the same (buffer, tier, offset, the events that start and end it), so
the traffic and the spills too."""

from __future__ import annotations

import pytest
from helpers import TWO_CHAINS_FAST, TWO_CHAINS_SLOW, generated, two_chains

from dansched.pipeline.problem3.stage3.resequence import resequence_for_timing
from dansched.simulate import evaluate
from dansched.stages.dlr.stage import dlr_plan
from dansched.stages.mpas.stage import mpas_order


def _segments(ev):
    return sorted((s.buf, s.tier, s.offset, s.size, s.start_node, s.end_node) for s in ev.segments())


def test_resequencing_by_hand():
    """The slow plan (180) becomes the longest path (120) with its offsets; a plan at the
    longest path has nothing faster."""
    inst = two_chains()
    got = resequence_for_timing(inst, TWO_CHAINS_SLOW, evaluate(inst, TWO_CHAINS_SLOW))
    assert got is not None
    plan, ev = got
    assert evaluate(inst, plan).makespan == ev.makespan == 120
    assert (plan.offsets, plan.spills) == (TWO_CHAINS_SLOW.offsets, TWO_CHAINS_SLOW.spills)
    assert resequence_for_timing(inst, TWO_CHAINS_FAST, evaluate(inst, TWO_CHAINS_FAST)) is None


@pytest.mark.parametrize("family, scale, seed", [("matmul", 2, 0), ("conv", 2, 1), ("fa", 2, 0)])
def test_a_resequenced_plan_keeps_every_segment_and_is_faster(family, scale, seed):
    inst = generated(family, scale, seed)
    s2 = dlr_plan(inst, mpas_order(inst).order, other_orders=False)
    got = resequence_for_timing(inst, s2.plan, s2.evaluation)
    assert got is not None  # DLR orders without looking at time: each of these has a faster one
    plan, ev = got
    judged = evaluate(inst, plan)
    assert judged.valid and judged.makespan == ev.makespan < s2.evaluation.makespan
    assert _segments(judged) == _segments(s2.evaluation)
    assert (judged.extra_traffic, judged.spill_count) == (s2.evaluation.extra_traffic, s2.evaluation.spill_count)
