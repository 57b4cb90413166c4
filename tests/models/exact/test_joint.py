"""The exact joint model (order + residency + offsets + spills): a tiny
instance that needs exactly one spill, brute force over every order, the
fixed-order model and the pipeline as upper bounds, and determinism."""

from __future__ import annotations

import pytest
from helpers import one_spill_instance

from dansched.hardware import load_hardware
from dansched.instance import instance_from_records
from dansched.models.exact.joint import canonical_order, joint_min_traffic
from dansched.models.exact.order import exact_min_peak
from dansched.models.exact.placement import fixed_order_placement
from dansched.pipeline import SolveOptions, run_pipeline
from dansched.plan import Plan
from dansched.simulate import evaluate
from dansched.testing import audit_instance


def _hw(tmp_path, text):
    p = tmp_path / "hw.toml"
    p.write_text(text)
    return load_hardware(p)


@pytest.mark.parametrize("backed,cost", [(True, 6), (False, 12)])
def test_infeasible_without_a_spill_feasible_with_one(tmp_path, backed, cost):
    inst = one_spill_instance(tmp_path, backed)
    none = joint_min_traffic(inst, max_spills=0, deterministic_time=5)
    assert none.status == "INFEASIBLE" and none.plan is None
    assert fixed_order_placement(inst, list(range(inst.n)), allow_spills=False).status == "INFEASIBLE"
    for kwargs in ({"max_spills": 1}, {}):
        res = joint_min_traffic(inst, deterministic_time=5, **kwargs)
        assert res.status == "OPTIMAL" and res.optimal
        assert res.traffic == res.bound == cost
        assert res.spill_count == 1
        ev = evaluate(inst, res.plan)
        assert ev.valid, [e.message for e in ev.errors[:3]]
        assert ev.extra_traffic == cost and ev.spill_count == 1
        assert res.plan.spills == ((0, res.plan.spills[0][1]),)  # the spilled buffer is a


def _tiny_orders(inst):
    """Every topological order (tiny graphs only)."""
    preds = [set(inst.pred(v).tolist()) for v in range(inst.n)]
    out: list[list[int]] = []

    def rec(order, done):
        if len(order) == inst.n:
            out.append(list(order))
            return
        for v in range(inst.n):
            if v not in done and preds[v] <= done:
                order.append(v)
                done.add(v)
                rec(order, done)
                order.pop()
                done.discard(v)

    rec([], set())
    return out


def _crossing(tmp_path):
    """Two chains meeting in F: X1 (COPY_IN x) -> Z (x, z) -> F (x, y) and Y1 (y) -> W (y, w)
    -> F; x and y are 4, z and w 3, UB holds 8. Whichever chain runs second, the first
    one's buffer is live across its middle step: 4 + 4 + 3 = 11 > 8, so x or y is
    spilled. x is backed (4 of traffic), y is not (8): the optimum, 4, needs the X chain
    first; the worst orders cost 34. A few extra edges keep the orders few."""
    hw = _hw(tmp_path, "[tiers]\nUB = 8\n")

    def cache(v, op, b, size):
        return {"Id": v, "Op": op, "BufId": b, "Size": size, "Type": "UB"}

    def op(v, name, bufs):
        return {"Id": v, "Op": name, "Pipe": "MTE2" if name == "COPY_IN" else "VECTOR", "Cycles": 1, "Bufs": bufs}

    nodes = [
        cache(0, "ALLOC", 0, 4),
        cache(1, "ALLOC", 1, 4),
        cache(2, "ALLOC", 2, 3),
        cache(3, "ALLOC", 3, 3),
        op(4, "COPY_IN", [0]),
        op(5, "DUP", [1]),
        op(6, "MUL", [0, 2]),
        op(7, "MUL", [1, 3]),
        op(8, "ADD", [0, 1]),
        cache(9, "FREE", 0, 4),
        cache(10, "FREE", 1, 4),
        cache(11, "FREE", 2, 3),
        cache(12, "FREE", 3, 3),
    ]
    edges = [
        [0, 4],
        [4, 6],
        [2, 6],
        [6, 8],
        [0, 8],
        [0, 6],
        [1, 5],
        [5, 7],
        [3, 7],
        [7, 8],
        [1, 8],
        [1, 7],
        [8, 9],
        [0, 9],
        [8, 10],
        [1, 10],
        [6, 11],
        [2, 11],
        [7, 12],
        [3, 12],
        [4, 2],
        [5, 3],
        [11, 8],
        [12, 8],
        [9, 10],
        [4, 1],  # fewer orders for the brute force
    ]
    return instance_from_records("crossing", nodes, edges, hw)


def test_joint_matches_brute_force_over_every_order(tmp_path):
    """The joint optimum (with and without the order dominance constraints) is the least
    fixed-order optimum over all topological orders."""
    inst = _crossing(tmp_path)
    orders = _tiny_orders(inst)
    assert 10 < len(orders) < 100
    values = [fixed_order_placement(inst, o, deterministic_time=2).traffic for o in orders]
    best = min(values)
    assert best == 4 and max(values) > best  # the order matters
    for dominance in (True, False):
        res = joint_min_traffic(inst, deterministic_time=5, dominance=dominance)
        assert res.optimal and res.traffic == res.bound == best
        assert evaluate(inst, res.plan).valid
    tie = joint_min_traffic(inst, deterministic_time=5, tie_break_spills=True)
    assert tie.optimal and tie.traffic == tie.bound == best and tie.spill_count == 1


SEEDS = [(15, 22), (170, 22), (171, 22)]  # (seed, max nodes) of bench_audit's instances that the pipeline spills on


@pytest.fixture(scope="module")
def audited():
    out = []
    for seed, max_nodes in SEEDS:
        inst = audit_instance(seed, max_nodes)
        pipe = run_pipeline(inst, SolveOptions(problem=2))
        out.append((inst, pipe, joint_min_traffic(inst, hint=pipe.plan, deterministic_time=10)))
    return out


def test_joint_is_never_above_the_pipeline_or_a_fixed_order(audited):
    for inst, pipe, res in audited:
        assert 20 <= inst.n <= 22
        assert res.optimal, res.status
        assert res.evaluation.valid and res.evaluation.extra_traffic == res.traffic
        assert res.traffic <= pipe.evaluation.extra_traffic
        for order in ([v for v in pipe.plan.order if v < inst.n], exact_min_peak(inst).order):
            fixed = fixed_order_placement(inst, order, deterministic_time=5)
            assert fixed.optimal
            assert res.traffic <= fixed.traffic
        # the joint plan's own order is a best order: the fixed-order model meets the joint optimum there
        own = fixed_order_placement(inst, [v for v in res.plan.order if v < inst.n], deterministic_time=5)
        assert own.optimal and own.traffic == res.traffic


def test_canonical_order_keeps_a_plan_valid(audited):
    """The hint path: the pipeline's plan on its canonical order, with the same offsets and
    spilled gaps, is still a valid plan of the same traffic (the dominance argument)."""
    from dansched.models.exact.placement import plan_points, points_to_plan, residency_points

    for inst, pipe, _ in audited:
        _, offs, spilled = plan_points(inst, pipe.plan)
        base = canonical_order(inst, pipe.plan.order)
        plan = points_to_plan(inst, base, residency_points(inst, base), offs, spilled)
        ev = evaluate(inst, plan)
        assert ev.valid, [e.message for e in ev.errors[:3]]
        assert ev.extra_traffic == pipe.evaluation.extra_traffic


def test_deterministic():
    inst = audit_instance(15, 22)
    a = joint_min_traffic(inst, deterministic_time=2)
    b = joint_min_traffic(inst, deterministic_time=2)
    assert (a.status, a.traffic, a.bound, a.plan) == (b.status, b.traffic, b.bound, b.plan)
    assert a.stats["deterministic_time"] == b.stats["deterministic_time"]


def test_no_pressure_is_zero_without_a_solve(tmp_path):
    """When every tier holds all its buffers at once, traffic 0 is optimal at once."""
    inst = _crossing(tmp_path)
    roomy = instance_from_records("roomy", *inst.to_records())  # default capacities
    res = joint_min_traffic(roomy)
    assert res.optimal and res.traffic == res.bound == 0
    assert evaluate(roomy, res.plan).valid
    assert isinstance(res.plan, Plan)
