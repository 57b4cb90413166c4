"""The time-driven producer in the problem-3 pipeline (dansched.stages.cpe.timed_memory):
what it keeps passes the shared evaluator and stays within the traffic allowance. The
scheduler itself is tested in test_timed.py."""

from __future__ import annotations

import json

import pytest
from helpers import SHIPPED, official_path
from test_timed import ALL_TRIALS, generated, stage2_reference

from dansched.instance import load_instance
from dansched.models.traffic import traffic_lower_bound
from dansched.pipeline import SolveOptions, solve
from dansched.simulate import evaluate
from dansched.stages.cpe.timed_memory import DEFAULT_TRIALS, replaced_plan, timed_plans, traffic_allowance
from dansched.stages.dlr.reorder import tighten_lifetimes
from dansched.stages.dlr.stage import dlr_plan
from dansched.stages.dlr.timed import timed_schedule


@pytest.mark.parametrize("name", ["matmul_s2", "fa_s2", "conv_s2", "random_s5", "Exp"])
def test_kept_plans_stay_within_the_allowance_on_shipped_instances(name):
    inst = load_instance(SHIPPED / f"{name}.json")
    s2, ref = stage2_reference(inst)
    for slack in (0, 20):
        limit = traffic_allowance(s2.evaluation.extra_traffic, slack)
        plans, tried, _ = timed_plans(inst, ref, limit, ALL_TRIALS)
        assert len(tried) == len(ALL_TRIALS)
        for plan, ev, _ in plans:
            again = evaluate(inst, plan)
            assert again.valid and again.extra_traffic <= limit
            assert again.makespan == ev.makespan
        makespans = [ev.makespan for _, ev, _ in plans]
        assert makespans == sorted(makespans)


def test_traffic_allowance():
    assert traffic_allowance(1000, 0) == 1000
    assert traffic_allowance(1000, 20) == 1200
    assert traffic_allowance(999, 0.5) == 1003


def test_pipeline_reports_the_producer():
    inst = load_instance(SHIPPED / "fa_s2.json")
    res = solve(inst, SolveOptions(problem=3, traffic_slack=20))
    timed = res.report["stages"]["timed"]
    assert timed["allowance"] >= res.report["stages"]["dlr"].get("within_slack_of", 0)
    assert all({"producer"} <= set(t) and ("failed" in t or {"traffic", "makespan"} <= set(t)) for t in timed["tried"])
    assert res.evaluation.valid
    json.dumps(res.report)  # serialisable


@pytest.mark.slow
def test_official_flash_attention_within_allowance():
    inst = load_instance(official_path("FlashAttention_Case0"))
    p2 = solve(inst, SolveOptions(problem=2)).evaluation.extra_traffic
    for slack in (0, 20):
        res = solve(inst, SolveOptions(problem=3, traffic_slack=slack))
        assert res.evaluation.valid
        assert res.evaluation.extra_traffic <= traffic_allowance(p2, slack)
        assert evaluate(inst, res.plan).makespan == res.evaluation.makespan


def test_replaced_plan_skips_dlr_only_when_no_plan_of_the_order_fits():
    """replaced_plan: below the cover bound of the (tightened) order the answer is None
    without running DLR; at the DLR plan's own traffic the plan comes back, valid."""
    covers = []
    for family, scale, seed in (("matmul", 2, 0), ("conv", 2, 1), ("random", 2, 3)):
        inst = generated(family, scale, seed)
        plan = timed_schedule(inst, stage2_reference(inst)[1], DEFAULT_TRIALS[0])
        order = [v for v in plan.order if v < inst.n]
        cover = traffic_lower_bound(inst, tighten_lifetimes(inst, order)).value
        dlr = dlr_plan(inst, order, search=False).evaluation.extra_traffic
        assert cover <= dlr  # the bound is sound for DLR's own plan of that order
        got = replaced_plan(inst, plan, dlr, "t")
        assert got is not None and got[1].valid and got[1].extra_traffic == dlr
        if cover > 0:
            assert replaced_plan(inst, plan, cover - 1, "t") is None
        covers.append(cover)
    assert max(covers) > 0  # the tight tiers make at least one order spill
