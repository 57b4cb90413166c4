"""The window-sliding driver shared by the fixed-memory and the memory-aware exact
windows: its bookkeeping on a toy search with a known answer, and on generated graphs
both window kinds hand back plans the evaluator accepts, no slower than their input."""

from __future__ import annotations

import pytest

from dansched.generate import generate
from dansched.instance import instance_from_records
from dansched.models.windows.driver import slide_windows
from dansched.models.windows.seam import ModelStats, WindowOutcome
from dansched.params import MemoryWindowParams
from dansched.pipeline.problem3.stage3.polish import memory_exact_windows
from dansched.plan import Plan
from dansched.simulate import evaluate
from dansched.stages.cpe.exact_window import exact_windows
from dansched.stages.cpe.skeleton import is_refinement, memory_skeleton
from dansched.stages.dlr.stage import dlr_plan
from dansched.stages.mpas import mpas_order


class _SortRound:
    """A toy round: every node is a pipe node on the chain; a window's answer is its nodes
    sorted, so each kept window swaps one adjacent inversion."""

    def __init__(self, order: list[int]) -> None:
        self.order = order
        self.pipe = [0] * len(order)
        self.chain = list(order)

    def solve(self, lo, hi, wall_time):
        return WindowOutcome("OPTIMAL", sorted(self.order[lo:hi]), ModelStats(hi - lo))


def _judge(cur: list[int], cand: list[int]):
    return (cand, None) if cand < cur else (None, "NOT_BETTER")


def test_driver_keeps_each_better_window_until_none_is_left():
    run = slide_windows([3, 2, 1, 0], 2, start_round=_SortRound, judge=_judge, max_windows=1000, time_limit=60)
    # windows of two adjacent nodes sort like bubble sort: one kept window per inversion (6)
    assert run.state == [0, 1, 2, 3] and run.improved == 6
    assert run.statuses["OPTIMAL"] == run.windows == run.evaluated
    assert run.statuses["NOT_BETTER"] == run.windows - 6 and not run.stopped_by_clock
    one = slide_windows([3, 2, 1, 0], 2, start_round=_SortRound, judge=_judge, max_windows=1, time_limit=60)
    assert (one.state, one.windows, one.improved) == ([2, 3, 1, 0], 1, 1)  # the first window, positions 0-1


def _dlr_plan(family: str, seed: int):
    inst = instance_from_records(f"{family}{seed}", *generate(family, 1, seed))
    res = dlr_plan(inst, mpas_order(inst).order)
    return inst, res.plan, res.evaluation


@pytest.mark.parametrize("family, seed", [("matmul", 0), ("random", 3)])
def test_fixed_and_memory_windows_give_valid_plans_no_slower(family, seed):
    inst, plan, ev = _dlr_plan(family, seed)
    assert ev.valid
    skel = memory_skeleton(inst, plan.order, ev.graph)
    order, makespan, stats = exact_windows(skel, plan.order, 16, time_limit=3)
    fixed = evaluate(inst, Plan(order=tuple(order), offsets=plan.offsets, spills=plan.spills))
    assert fixed.valid, fixed.errors[:3]
    assert fixed.makespan == makespan <= ev.makespan and is_refinement(skel, order)
    assert stats.windows >= 1 and (makespan < ev.makespan) == (stats.improved > 0)
    params = MemoryWindowParams(windows=6, width=16, deterministic_time=0.2, wall_seconds=3)
    new_plan, new_ev, mstats = memory_exact_windows(inst, plan, ev, params)
    again = evaluate(inst, new_plan)
    assert again.valid and again.makespan == new_ev.makespan == mstats.makespan_after <= ev.makespan
    assert (again.extra_traffic, again.spill_count) == (ev.extra_traffic, ev.spill_count)
    assert mstats.windows >= 1 and mstats.evaluated <= mstats.windows
    assert min(makespan, new_ev.makespan) < ev.makespan  # the DLR plan leaves room: some window is kept
