"""The exact order window: the joint model on a window of a plan with
its boundary fixed (:mod:`dansched.models.windows.order`)."""

from __future__ import annotations

import pytest
from helpers import dlr_only_plan, traffic_key
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import SETTINGS, cases, hw  # noqa: F401  (hw is a fixture)

from dansched.instance import instance_from_records
from dansched.models.exact.joint import joint_min_traffic
from dansched.models.windows.order import point_plan, precedence, solve_order_window
from dansched.plan import Plan
from dansched.simulate import evaluate
from dansched.testing import audit_instance


@SETTINGS
@given(case=cases(), data=st.data())
def test_random_windows_give_valid_plans_never_worse(hw, case, data):
    """On random valid plans (random spills, addresses reused), the canonical form and every
    window's plan are evaluator-valid and never worse; outside the window the order stays."""
    inst = instance_from_records("prop", case.nodes, case.edges, hw)
    ev = evaluate(inst, case.plan())
    assert ev.valid
    pp = point_plan(inst, case.plan())
    canon = evaluate(inst, pp.to_plan(inst))
    assert canon.valid and traffic_key(canon) <= traffic_key(ev)
    n = len(pp.base)
    lo = data.draw(st.integers(0, n - 1))
    hi = data.draw(st.integers(lo + 1, n))
    res = solve_order_window(inst, pp, lo, hi, precedence(inst), deterministic_time=5.0, time_limit=60.0)
    assert res.status in ("OPTIMAL", "FEASIBLE", "NO_GAIN"), res.status
    if res.plan is not None:
        got = evaluate(inst, res.plan.to_plan(inst))
        assert got.valid, [e.message for e in got.errors[:3]]
        assert traffic_key(got) < traffic_key(canon)
        assert res.plan.base[:lo] == pp.base[:lo] and res.plan.base[hi:] == pp.base[hi:]
        assert sorted(res.plan.base[lo:hi]) == sorted(pp.base[lo:hi])


@settings(SETTINGS, max_examples=30)
@given(case=cases())
def test_whole_plan_window_removes_every_needless_spill(hw, case):
    """Every tier of the property hardware holds all its buffers at once, so a window over
    the whole plan must end without traffic."""
    inst = instance_from_records("prop", case.nodes, case.edges, hw)
    pp = point_plan(inst, case.plan())
    if not any(any(s) for s in pp.spilled):
        return
    res = solve_order_window(inst, pp, 0, len(pp.base), precedence(inst), deterministic_time=5.0, time_limit=60.0)
    assert res.plan is not None, res.status
    got = evaluate(inst, res.plan.to_plan(inst))
    assert got.valid and got.extra_traffic == 0 and got.spill_count == 0


def test_whole_plan_window_survives_a_cp_sat_presolve_crash(hw):
    """A model on which CP-SAT 9.15's presolve fails inside (``absl::btree_map::at``) with
    the plan as hint: the window still ends without traffic (one retry, symmetry off)."""
    bufs = {"Op": "COPY_IN", "Pipe": "MTE1", "Cycles": 0, "Bufs": [0, 1]}
    nodes = [
        {"Id": 0, "Op": "ALLOC", "BufId": 0, "Size": 1, "Type": "L1"},
        {"Id": 1, "Op": "ALLOC", "BufId": 1, "Size": 1, "Type": "L1"},
        *({"Id": i} | bufs for i in (2, 3, 4, 6, 7)),
        {"Id": 5, "Op": "COPY_IN", "Pipe": "MTE1", "Cycles": 0, "Bufs": []},
        {"Id": 8, "Op": "FREE", "BufId": 0, "Size": 1, "Type": "L1"},
        {"Id": 9, "Op": "FREE", "BufId": 1, "Size": 1, "Type": "L1"},
    ]
    edges = [(b, u) for b in (0, 1) for u in (2, 3, 4, 6, 7)] + [(0, 8), (1, 9), (3, 5)]
    edges += [(u, f) for u in (2, 3, 4, 6, 7) for f in (8, 9)]
    inst = instance_from_records("crash", nodes, edges, hw)
    plan = Plan(
        order=(0, 1, 10, 11, 2, 12, 13, 3, 14, 15, 4, 16, 17, 6, 7, 5, 8, 9),
        offsets=((0, 0), (1, 1)),
        spills=((0, 0),) * 4,
    )
    assert evaluate(inst, plan).extra_traffic == 4  # four spills of a one-unit buffer
    pp = point_plan(inst, plan)
    res = solve_order_window(inst, pp, 0, len(pp.base), precedence(inst), deterministic_time=5.0, time_limit=60.0)
    assert res.plan is not None, res.status
    got = evaluate(inst, res.plan.to_plan(inst))
    assert got.valid and got.extra_traffic == 0


@pytest.mark.parametrize("seed,max_nodes", [(15, 22), (171, 22)])
def test_whole_plan_window_meets_the_joint_optimum(seed, max_nodes):
    """A window over every position is the joint model with the plan as hint: same optimum."""
    inst = audit_instance(seed, max_nodes)
    plan, ev = dlr_only_plan(inst)
    joint = joint_min_traffic(inst, deterministic_time=10)
    assert joint.optimal
    pp = point_plan(inst, plan)
    res = solve_order_window(inst, pp, 0, len(pp.base), precedence(inst), deterministic_time=10.0, time_limit=60.0)
    if res.plan is None:  # the plan was already optimal
        assert res.status == "NO_GAIN" and ev.extra_traffic == joint.traffic
        return
    got = evaluate(inst, res.plan.to_plan(inst))
    assert got.valid and got.extra_traffic == joint.traffic


def test_window_improves_a_tight_graph_and_is_deterministic():
    """bench_audit's seed 41 (39 nodes): DLR spills; a 16-position window around the spill
    finds a plan without it. Two solves give the same plan."""
    inst = audit_instance(41)
    plan, ev = dlr_only_plan(inst)
    assert ev.extra_traffic > 0
    pp = point_plan(inst, plan)
    b, j = next((b, j) for b, sp in enumerate(pp.spilled) for j, s in enumerate(sp) if s)
    mid = (pp.pts[b][j] + pp.pts[b][j + 1]) // 2
    lo = max(0, min(len(pp.base) - 16, mid - 8))
    runs = [
        solve_order_window(
            inst, pp, lo, lo + 16, precedence(inst), deterministic_time=5.0, time_limit=60.0, max_shift=8
        )
        for _ in range(2)
    ]
    assert runs[0].plan is not None
    plans = [r.plan.to_plan(inst) for r in runs]
    assert plans[0] == plans[1]
    got = evaluate(inst, plans[0])
    assert got.valid and got.extra_traffic < ev.extra_traffic
