"""CP-SAT fixed-order placement model and the audit's bounds."""

from __future__ import annotations

import pytest

from dansched.application.audit import audit_plan, traffic_bounds
from dansched.generate import generate
from dansched.hardware import load_hardware
from dansched.instance import instance_from_records
from dansched.models.exact.placement import fixed_order_placement
from dansched.params import BoundParams
from dansched.pipeline import SolveOptions, effort_options, run_pipeline
from dansched.simulate import evaluate


def _one_spill_case(tmp_path):
    """UB holds 10. A (6) is used by op 1 and again by op 5; B (6) lives in between
    (ALLOC 2, op 3, FREE 4). In this order A and B overlap, so A must leave UB once:
    one spill, traffic 2 * 6 = 12 (A is not used by a COPY_IN)."""
    toml = tmp_path / "ub10.toml"
    toml.write_text("[tiers]\nUB = 10\n")
    nodes = [
        {"Id": 0, "Op": "ALLOC", "BufId": 0, "Size": 6, "Type": "UB"},
        {"Id": 1, "Op": "ADD", "Pipe": "VECTOR", "Cycles": 5, "Bufs": [0]},
        {"Id": 2, "Op": "ALLOC", "BufId": 1, "Size": 6, "Type": "UB"},
        {"Id": 3, "Op": "ADD", "Pipe": "VECTOR", "Cycles": 5, "Bufs": [1]},
        {"Id": 4, "Op": "FREE", "BufId": 1, "Size": 6, "Type": "UB"},
        {"Id": 5, "Op": "ADD", "Pipe": "VECTOR", "Cycles": 5, "Bufs": [0]},
        {"Id": 6, "Op": "FREE", "BufId": 0, "Size": 6, "Type": "UB"},
    ]
    edges = [[0, 1], [1, 2], [2, 3], [3, 4], [4, 5], [5, 6]]
    return instance_from_records("one_spill", nodes, edges, load_hardware(toml))


def test_infeasible_without_spill_feasible_with_exactly_one(tmp_path):
    inst = _one_spill_case(tmp_path)
    order = list(range(inst.n))
    none = fixed_order_placement(inst, order, allow_spills=False, time_limit=10)
    assert none.status == "INFEASIBLE" and none.plan is None
    one = fixed_order_placement(inst, order, time_limit=10)
    assert one.status == "OPTIMAL" and one.traffic == 12 and one.bound == 12
    ev = evaluate(inst, one.plan)
    assert ev.valid, ev.errors[:3]
    assert ev.spill_count == 1 and ev.extra_traffic == 12


@pytest.mark.parametrize("seeds, spills", [(range(1), 0), pytest.param(range(10), 3, marks=pytest.mark.slow)])
def test_bounds_never_exceed_valid_plans(tmp_path, seeds, spills):
    """On small random graphs with tight tiers, every audit bound is at most the figure of
    the pipeline's valid plan, and the fixed-order model never beats its own proven bound.
    Plans come from the full pipeline and from DLR alone (no order search, no time-driven
    producer: it spills more); at least a few of the latter must spill, or the traffic
    check would say nothing (one seed by default, ten under ``-m slow``, where at least
    three spill)."""
    spilled = sum(_check_bounds(seed, tmp_path) for seed in seeds)
    assert spilled >= spills


def _check_bounds(seed: int, tmp_path) -> bool:
    nodes, edges = generate("random", 2, seed)
    roomy = instance_from_records(f"r{seed}", nodes, edges)
    need: dict[str, int] = {}  # each tier cut to the largest working set of one operation
    for v in range(roomy.n):
        per: dict[str, int] = {}
        for b in roomy.bufs(v).tolist():
            t = roomy.hw.tiers[roomy.buf_tier[b]]
            per[t] = per.get(t, 0) + int(roomy.buf_size[b])
        for t, x in per.items():
            need[t] = max(need.get(t, 0), x)
    toml = tmp_path / "tight.toml"
    toml.write_text("[tiers]\n" + "".join(f"{t} = {x}\n" for t, x in sorted(need.items())))
    inst = instance_from_records(f"r{seed}", nodes, edges, load_hardware(toml))
    for opts in (SolveOptions(problem=3), effort_options("fast", problem=3)):
        res = run_pipeline(inst, opts)
        assert res.evaluation.valid
        for row in audit_plan(inst, res.plan, res.evaluation, time_limit=5):
            assert row.bound.value <= row.value, (row.metric, row.bound, row.value)
    p1 = run_pipeline(inst, SolveOptions(problem=1))
    for row in audit_plan(inst, p1.plan, p1.evaluation, time_limit=5):
        assert row.bound.value <= row.value
    fo = fixed_order_placement(inst, res.plan.order, hint=res.plan, time_limit=5, deterministic_time=5)
    assert fo.bound <= res.evaluation.extra_traffic
    if fo.plan is not None:
        ev = evaluate(inst, fo.plan)
        assert ev.valid and ev.extra_traffic == fo.traffic >= fo.bound
    return res.evaluation.extra_traffic > 0


def test_traffic_bounds_skip_the_placement_model_above_its_size_limit(tmp_path):
    """Above ``BoundParams.placement_max_nodes`` the fixed-order traffic bound is the cover
    alone, and the report says the placement model was skipped; at or below it the model
    runs (here it proves the one spill's 12 units)."""
    inst = _one_spill_case(tmp_path)
    one = fixed_order_placement(inst, list(range(inst.n)), time_limit=10)
    plan = one.plan
    skipped, extra = traffic_bounds(inst, plan, 5.0, params=BoundParams(placement_max_nodes=inst.n - 1))
    assert extra["cpsat_status"].startswith("SKIPPED") and "cpsat_bound" not in extra
    assert skipped.value == extra["cover_bound"] <= 12
    ran, extra = traffic_bounds(inst, plan, 5.0, params=BoundParams(placement_max_nodes=inst.n))
    assert extra["cpsat_status"] == "OPTIMAL" and ran.value == 12


def test_traffic_bounds_skip_the_placement_model_when_the_cover_reaches_the_plan(tmp_path):
    """A cover bound equal to the plan's own traffic is already exact: the placement model
    is not run, and the status says why; a plan with more traffic still gets the model."""
    inst = _one_spill_case(tmp_path)
    plan = fixed_order_placement(inst, list(range(inst.n)), time_limit=10).plan
    cover, _ = traffic_bounds(inst, plan, 5.0, cpsat=False)
    same, extra = traffic_bounds(inst, plan, 5.0, plan_traffic=cover.value)
    assert extra["cpsat_status"].startswith("SKIPPED (the cover") and same.value == cover.value
    _, extra = traffic_bounds(inst, plan, 5.0, plan_traffic=cover.value + 1)
    assert extra["cpsat_status"] == "OPTIMAL"
