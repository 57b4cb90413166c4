"""The makespan search over complete plans (dansched.pipeline.problem3.search): its moves change the
memory skeleton, every state it keeps passes the shared evaluator within the traffic
allowance, it is deterministic, and on a plan whose only wait is an address-reuse edge it
finds the hand-computed faster plan."""

from __future__ import annotations

import pytest
from helpers import alloc, capacities, free, op

from dansched.addresses import free_ranges
from dansched.instance import instance_from_records
from dansched.params import SearchParams
from dansched.pipeline import SolveOptions, run_pipeline
from dansched.pipeline.problem3.search.driver import MOVES, makespan_search
from dansched.plan import Plan
from dansched.simulate import evaluate
from dansched.testing import audit_instance


def _reuse_bound():
    """Two UB buffers of 10 units in a tier of 30: b0 loaded (MTE2, 10) then read by a
    VECTOR op (100); b2 loaded (MTE2, 10) then read by a CUBE op (100). The plan puts b2 on
    b0's addresses, so b2's load waits for b0's FREE at 110 and the CUBE op ends at 220;
    at the free addresses [10, 30) b2 loads at 10 and the CUBE op ends at 120."""
    nodes = [
        alloc(0, 0, 10),
        op(1, "COPY_IN", "MTE2", 10, [0]),
        op(2, "VEC", "VECTOR", 100, [0]),
        free(3, 0, 10),
        alloc(4, 2, 10),
        op(5, "COPY_IN", "MTE2", 10, [2]),
        op(6, "MAT", "CUBE", 100, [2]),
        free(7, 2, 10),
    ]
    edges = [[0, 1], [1, 2], [2, 3], [4, 5], [5, 6], [6, 7]]
    inst = instance_from_records("reuse", nodes, edges, capacities(UB=30))
    plan = Plan(order=tuple(range(8)), offsets=((0, 0), (2, 0)), spills=())
    return inst, plan


def test_search_removes_an_address_reuse_wait_by_hand():
    inst, plan = _reuse_bound()
    ev = evaluate(inst, plan)
    assert ev.valid and ev.makespan == 220
    got = makespan_search(inst, plan, ev, allowance=0, params=SearchParams(iterations=60), seed=0)
    again = evaluate(inst, got.plan)
    assert again.valid and again.makespan == got.evaluation.makespan == 120
    assert got.start == 220 and _saved(got) == 100


def test_free_ranges_by_hand():
    inst, plan = _reuse_bound()
    segs = evaluate(inst, plan).segments()
    assert [(s.buf, s.offset, s.start, s.end) for s in segs] == [(0, 0, 0, 3), (1, 0, 4, 7)]

    def free_over(lo, hi, skip=()):  # the ranges a move may take from position lo to hi
        return free_ranges(30, [(s.offset, s.size) for s in segs if s.meets(lo, hi) and s not in skip])

    assert free_over(0, 3) == [(10, 30)]  # b0 holds [0, 10) until position 3
    assert free_over(3, 4) == [(10, 30)]  # b0's FREE at 3 is still resident there
    assert free_over(4, 7, skip=[segs[1]]) == [(0, 30)]


def _saved(got):
    """The cycles the repairs' new best plans took off (each new best is one repair's)."""
    return sum(row.saved for name, row in got.operators.items() if name in MOVES)


def _tight_case(seed: int):
    inst = audit_instance(seed)
    res = run_pipeline(inst, SolveOptions(problem=2, order_search=None))
    return inst, res.plan, evaluate(inst, res.plan)


@pytest.mark.parametrize("seed", [3, 11, 19, 27])
@pytest.mark.parametrize("slack_units", [0, 200])
def test_every_kept_state_is_valid_within_the_allowance(seed, slack_units):
    inst, plan, ev = _tight_case(seed)
    allowance = int(ev.extra_traffic) + slack_units
    got = makespan_search(inst, plan, ev, allowance, SearchParams(iterations=40), seed=seed)
    judged = evaluate(inst, got.plan)
    assert judged.valid and judged.extra_traffic <= allowance
    assert judged.makespan == got.evaluation.makespan <= ev.makespan
    assert got.evaluation.makespan == got.start - _saved(got)
    for name, row in got.operators.items():
        assert row.tried >= row.applied >= row.improved >= 0 and (row.saved > 0) == (row.improved > 0), name


def test_the_search_is_deterministic_and_keeps_to_its_budget():
    inst, plan, ev = _tight_case(11)
    params = SearchParams(iterations=25, work=10**9)
    a = makespan_search(inst, plan, ev, int(ev.extra_traffic) + 100, params, seed=4)
    b = makespan_search(inst, plan, ev, int(ev.extra_traffic) + 100, params, seed=4)
    assert a.plan == b.plan and a.summary() == b.summary() and a.iterations == 25
    assert SearchParams(iterations=25, work=1000).budget(100) == 10
    assert makespan_search(inst, plan, ev, int(ev.extra_traffic), SearchParams(work=1), seed=0).plan is plan
