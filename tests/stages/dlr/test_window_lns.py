"""The order-window search for problem 2: :mod:`dansched.stages.dlr.window_lns`
and its hook in the Stage-2 order search."""

from __future__ import annotations

import pytest
from helpers import dlr_only_plan, official_path, traffic_key
from hypothesis import given, settings
from strategies import SETTINGS, cases, hw  # noqa: F401  (hw is a fixture)

from dansched.generate import generate
from dansched.instance import instance_from_records, load_instance
from dansched.params import LnsParams, OrderSearchParams
from dansched.pipeline import SolveOptions, run_pipeline
from dansched.simulate import evaluate
from dansched.stages.dlr.window_lns import window_lns
from dansched.testing import audit_instance, tight_hardware

SMALL = LnsParams(window=16, max_shift=8)


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(window=1),
        dict(max_shift=0),
        dict(max_windows=-1),
        dict(max_passes=0),
        dict(window_deterministic_time=0),
        dict(total_deterministic_time=-1.0),
        dict(window=True),
    ],
)
def test_params_are_checked(kwargs):
    with pytest.raises(ValueError, match="LnsParams"):
        LnsParams(**kwargs)


@pytest.mark.parametrize("seed", [15, 41, 93, 112, 306, 318])
def test_never_worse_and_valid_on_tight_random_graphs(seed):
    """bench_audit's graphs (38-40 nodes, every tier cut to one operation's working set):
    the result is evaluator-valid, never worse than DLR's plan, and what it reports."""
    inst = audit_instance(seed)
    plan, ev = dlr_only_plan(inst)
    res = window_lns(inst, plan, ev, SMALL)
    got = evaluate(inst, res.plan)
    assert got.valid
    assert traffic_key(got) <= traffic_key(ev)
    assert (
        got.extra_traffic
        == res.evaluation.extra_traffic
        == (res.stats.traffic if res.stats.traffic is not None else ev.extra_traffic)
    )
    assert (res.improved > 0) == (traffic_key(got) < traffic_key(ev))


def test_improves_where_a_window_can_remove_a_spill():
    inst = audit_instance(41)
    plan, ev = dlr_only_plan(inst)
    res = window_lns(inst, plan, ev, SMALL)
    assert res.improved >= 1 and res.evaluation.extra_traffic < ev.extra_traffic


@pytest.mark.parametrize("family,seed", [("matmul", 0), ("conv", 1), ("fa", 2), ("random", 3)])
def test_generated_families_under_tight_hardware(family, seed):
    """The generator's families with every tier cut to the largest working set of one
    operation: valid, never worse; the budget caps the windows."""
    nodes, edges = generate(family, 1, seed)
    inst = instance_from_records(f"{family}-tight", nodes, edges, tight_hardware(nodes))
    plan, ev = dlr_only_plan(inst)
    params = LnsParams(window=16, max_shift=6, max_windows=6, total_deterministic_time=3.0)
    res = window_lns(inst, plan, ev, params)
    got = evaluate(inst, res.plan)
    assert got.valid and traffic_key(got) <= traffic_key(ev)
    assert res.stats.windows <= 6


@settings(SETTINGS, max_examples=30)
@given(case=cases())
def test_random_valid_plans_come_back_valid_and_never_worse(hw, case):
    """Random valid plans (random spills and address reuse, nothing under pressure): the
    search returns an evaluator-valid plan, never worse, and removes every spill it can
    fit in one window."""
    inst = instance_from_records("prop", case.nodes, case.edges, hw)
    ev = evaluate(inst, case.plan())
    res = window_lns(inst, case.plan(), ev, LnsParams(window=64))
    got = evaluate(inst, res.plan)
    assert got.valid and traffic_key(got) <= traffic_key(ev)
    if ev.extra_traffic > 0:  # every plan fits in one 64-position window here
        assert got.extra_traffic == 0


def test_skips_large_graphs_before_any_work():
    inst = audit_instance(41)
    plan, ev = dlr_only_plan(inst)
    res = window_lns(inst, plan, ev, LnsParams(max_nodes=inst.n - 1))
    assert res.plan is plan and res.improved == 0 and res.stats.skipped


def test_budget_of_zero_windows_keeps_the_plan():
    inst = audit_instance(41)
    plan, ev = dlr_only_plan(inst)
    res = window_lns(inst, plan, ev, LnsParams(window=16, max_windows=0))
    assert res.improved == 0 and res.stats.windows == 0 and res.stats.stopped == "max_windows"
    assert traffic_key(res.evaluation) <= traffic_key(ev)


def test_pipeline_reports_the_lns_producer():
    """With the exact and wave producers off, the windows win on seed 41; the report says so
    and counts the windows that improved. Switched off, DLR's plan stays."""
    inst = audit_instance(41)
    on = run_pipeline(
        inst, SolveOptions(problem=2, order_search=OrderSearchParams(exact=False, wave=False, lns_params=SMALL))
    )
    off = run_pipeline(
        inst, SolveOptions(problem=2, order_search=OrderSearchParams(exact=False, wave=False, lns=False))
    )
    d_on, d_off = on.report.to_dict()["stages"]["dlr"], off.report.to_dict()["stages"]["dlr"]
    assert on.evaluation.valid and off.evaluation.valid
    assert d_on["found_by"] == "lns" and d_on["order_search"]["lns"]["improved"] >= 1
    assert on.evaluation.extra_traffic < off.evaluation.extra_traffic
    assert d_off["found_by"] == "dlr" and "lns" not in d_off.get("order_search", {})


@pytest.mark.slow
def test_flash_attention_case1_drops_below_dlr():
    """FlashAttention_Case1 (problem 2): the windows remove a spill DLR's order needs."""
    inst = load_instance(official_path("FlashAttention_Case1"))
    res = run_pipeline(inst, SolveOptions(problem=2))
    dlr = res.report.to_dict()["stages"]["dlr"]
    assert res.evaluation.valid
    assert dlr["found_by"] == "lns" and dlr["order_search"]["lns"]["improved"] >= 1
    assert res.evaluation.extra_traffic < dlr["order_search"]["lns"]["traffic_before"]
