"""A full Stage-3 run of problem 3 (dansched.pipeline.problem3.stage3.run): CPE alternated
with the timing-aware rounds, then the exact windows. By hand on two chains (it reaches the
longest path); on generated graphs that spill, the evaluator's verdict: the final plan is
valid, takes the makespan the run reports, is never slower than its Stage-2 plan, keeps its
traffic and spills, and keeps the layout the final CPE ran on."""

from __future__ import annotations

import pytest
from helpers import TWO_CHAINS_SLOW, generated, two_chains

from dansched.params import MemoryWindowParams, Stage3Params
from dansched.pipeline.problem3.stage3.run import ROUND_STEPS, stage3
from dansched.simulate import evaluate
from dansched.stages.dlr.stage import dlr_plan
from dansched.stages.mpas.stage import mpas_order


def test_a_stage3_run_by_hand():
    inst = two_chains()
    s3 = stage3(inst, TWO_CHAINS_SLOW, evaluate(inst, TWO_CHAINS_SLOW))
    final = evaluate(inst, s3.cpe.plan)
    assert final.valid and s3.makespan == final.makespan == 120  # the longest path: 10 + 10 + 100
    assert s3.cpe.plan.offsets == TWO_CHAINS_SLOW.offsets and s3.cpe.plan.spills == ()


def _stage2(family, scale, seed):
    inst = generated(family, scale, seed)
    s2 = dlr_plan(inst, mpas_order(inst).order, other_orders=False)
    assert s2.evaluation.valid and s2.evaluation.spill_count > 0
    return inst, s2


@pytest.mark.parametrize("family, scale, seed", [("matmul", 2, 0), ("conv", 2, 1)])
@pytest.mark.parametrize("rounds", [0, 2])
def test_a_stage3_run_agrees_with_the_evaluator(family, scale, seed, rounds):
    inst, s2 = _stage2(family, scale, seed)
    before = (s2.evaluation.makespan, s2.evaluation.extra_traffic, s2.evaluation.spill_count)
    s3 = stage3(inst, s2.plan, s2.evaluation, Stage3Params(rounds=rounds))
    final = evaluate(inst, s3.cpe.plan)
    assert final.valid and s3.makespan == final.makespan <= before[0]
    assert (final.extra_traffic, final.spill_count) == before[1:]
    assert (s3.cpe.plan.offsets, s3.cpe.plan.spills) == (s3.layout.offsets, s3.layout.spills)
    assert evaluate(inst, s3.layout).makespan == s3.layout_evaluation.makespan
    assert len(s3.steps) <= rounds and set(s3.steps) <= set(ROUND_STEPS)
    if rounds == 0:
        assert s3.layout == s2.plan


def test_the_memory_windows_after_a_run_keep_the_traffic_and_never_slow_it():
    inst, s2 = _stage2("conv", 2, 1)
    plain = stage3(inst, s2.plan, s2.evaluation, Stage3Params(rounds=1))
    _, s2 = _stage2("conv", 2, 1)  # a run drops its input's detail: a fresh Stage-2 result
    windows = MemoryWindowParams(windows=3, width=8)
    s3 = stage3(inst, s2.plan, s2.evaluation, Stage3Params(rounds=1, memory_windows=windows))
    final = evaluate(inst, s3.cpe.plan)
    assert final.valid and s3.makespan == final.makespan <= plain.makespan
    assert (final.extra_traffic, final.spill_count) == (plain.evaluation.extra_traffic, plain.evaluation.spill_count)
    assert s3.cpe.stats.memory_windows is not None and s3.cpe.stats.memory_windows.windows <= 3
