"""The fixed-memory and the memory-aware CP-SAT window models, each on a whole tiny plan,
against an enumeration written apart from them: every order the skeleton (or the plan's
dependencies) allows, timed by the shared simulator or judged by the shared evaluator.

Each starts from the slowest valid order of a Stage-2 plan of a tiny instance.

- :class:`~dansched.models.windows.fixed.TimingWindowModel` on the window ``[0, n)`` has no
  fixed neighbour, and its objective (the latest ``end + rest``) is the makespan, so its
  optimum is the least makespan over the orders of the memory skeleton R(sigma2, G2)
  (paper Eq. 14): the enumeration's minimum, exactly.
- :class:`~dansched.models.windows.memory.MemoryWindowModel` may move memory events; the
  plan its sequence gives must pass the evaluator with the same traffic, no slower than
  the plan it started from and no faster than the best valid order of the same addresses
  and spills (every order of the plan's augmented graph, judged).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from makespan_oracle import tiny_instance

from dansched.instance import Instance
from dansched.models.windows.fixed import TimingWindowModel
from dansched.models.windows.memory import MemoryWindowContext, MemoryWindowModel
from dansched.models.windows.seam import schedule_of
from dansched.plan import Plan
from dansched.simulate import Evaluation, Timing, evaluate, simulate_timing
from dansched.stages.cpe.skeleton import memory_skeleton
from dansched.stages.dlr.stage import dlr_plan
from dansched.stages.mpas import mpas_order


def _linear_extensions(preds: list[list[int]]) -> Iterator[list[int]]:
    """Every order of ``0..n-1`` that puts each node after its ``preds``."""
    n = len(preds)
    seq: list[int] = []
    placed = [False] * n

    def walk() -> Iterator[list[int]]:
        if len(seq) == n:
            yield list(seq)
            return
        for v in range(n):
            if not placed[v] and all(placed[u] for u in preds[v]):
                placed[v] = True
                seq.append(v)
                yield from walk()
                seq.pop()
                placed[v] = False

    yield from walk()


def _worst_plan(seed: int) -> tuple[Instance, Plan, Evaluation, int]:
    """A tiny instance (``tests/makespan_oracle.py``), Stage 2's addresses and spills for it,
    and of every order of that plan's augmented graph the evaluator accepts, the slowest
    (the plan the models start from) and the least makespan among them."""
    inst = tiny_instance(seed)
    res = dlr_plan(inst, mpas_order(inst).order)
    assert res.evaluation.valid
    offsets, spills = res.plan.offsets, res.plan.spills
    judged = [
        (ev.makespan, order)
        for order in _linear_extensions([list(p) for p in res.evaluation.graph.preds])
        if (ev := evaluate(inst, Plan(order=tuple(order), offsets=offsets, spills=spills))).valid
    ]
    slowest = Plan(order=tuple(max(judged)[1]), offsets=offsets, spills=spills)
    return inst, slowest, evaluate(inst, slowest), min(judged)[0]


SEEDS = (0, 1, 2, 9)
ROOM = (1, 9)  # seeds whose slowest order is slower than the best: a window must gain there


@pytest.mark.parametrize("seed", SEEDS)
def test_the_fixed_memory_model_on_a_whole_plan_finds_the_least_makespan_of_the_skeleton(seed):
    inst, plan, ev, _ = _worst_plan(seed)
    skel = memory_skeleton(inst, plan.order, ev.graph)
    g = skel.timing
    order = list(plan.order)
    start, end, makespan = simulate_timing(order, g.preds, g.pipe, g.cycles)
    sched = schedule_of(Timing(g, start, end, makespan), order)
    preds = [list(p) for p in skel.order_preds]
    least = min(simulate_timing(o, g.preds, g.pipe, g.cycles)[2] for o in _linear_extensions(preds))

    got = TimingWindowModel(sched, skel.order_preds, 0, len(order)).build()
    got = got.solve(deterministic_time=10.0, wall_time=60.0, seed=0)

    assert got.status == "OPTIMAL" and got.plan is not None
    assert sorted(got.plan) == sorted(order)
    pos = {v: i for i, v in enumerate(got.plan)}
    assert all(pos[u] < pos[v] for v in range(len(order)) for u in preds[v])  # inside R(sigma2, G2)
    assert simulate_timing(got.plan, g.preds, g.pipe, g.cycles)[2] == least
    assert (least < makespan) == (seed in ROOM)


@pytest.mark.parametrize("seed", SEEDS)
def test_the_memory_aware_model_on_a_whole_plan_gives_a_valid_plan_between_the_best_order_and_the_start(seed):
    inst, plan, ev, best = _worst_plan(seed)
    ctx = MemoryWindowContext.of(inst, ev.segments(), schedule_of(ev.timing, list(plan.order)))

    model = MemoryWindowModel(ctx, 0, len(plan.order))
    assert model.build()
    got = model.solve(deterministic_time=10.0, wall_time=60.0, seed=0)

    if got.status == "NO_GAIN":  # its optimum is the plan it started from
        assert got.plan is None and best <= got.stats.objective == got.stats.current == ev.makespan
        assert seed not in ROOM
        return
    assert got.status in ("OPTIMAL", "FEASIBLE") and got.plan is not None
    new = evaluate(inst, Plan(order=tuple(got.plan), offsets=plan.offsets, spills=plan.spills))
    assert new.valid, new.errors[:3]
    assert (new.extra_traffic, new.spill_count) == (ev.extra_traffic, ev.spill_count)
    assert best <= new.makespan < ev.makespan
