"""The time-driven Stage-2 producer for problem 3 (issue 14): every plan it makes passes
the shared evaluator, its simulated timing is the evaluator's, and what the pipeline
keeps stays within the traffic allowance."""

from __future__ import annotations

import pytest
from helpers import SHIPPED

from dansched.generate import generate
from dansched.hardware import default_hardware, hardware_from_table
from dansched.instance import instance_from_records, load_instance
from dansched.simulate import evaluate
from dansched.stages.cpe.timed_memory import (
    DEFAULT_TRIALS,
    SLACK_TRIALS,
    TimedFailed,
    TimedParams,
    timed_plans,
    timed_schedule,
    traffic_allowance,
)
from dansched.stages.dlr.stage import dlr_plan
from dansched.stages.mpas.stage import mpas_order

ALL_TRIALS = DEFAULT_TRIALS + SLACK_TRIALS


def _reference(inst):
    """The Stage-2 plan (DLR on the MPAS order) and its order without spill ids."""
    s2 = dlr_plan(inst, mpas_order(inst).order)
    return s2, [v for v in s2.plan.order if v < inst.n]


def _tight_hardware():
    """The default core with L1 and UB cut to 1024 and 256 units, so generated graphs spill."""
    table = default_hardware().to_dict()
    return hardware_from_table({**table, "tiers": {**table["tiers"], "L1": 1024, "UB": 256}})


def _generated(family: str, scale: int, seed: int, tight: bool = True):
    nodes, edges = generate(family, scale, seed=seed)
    return instance_from_records(f"{family}_s{scale}_{seed}", nodes, edges, _tight_hardware() if tight else None)


GENERATED = [("matmul", 2, 1), ("fa", 2, 3), ("conv", 2, 5), ("random", 5, 11)]


@pytest.mark.parametrize("tight", [True, False])
@pytest.mark.parametrize("family,scale,seed", GENERATED + [("random", 3, 7)])
def test_every_trial_gives_a_valid_plan_on_generated_graphs(family, scale, seed, tight):
    inst = _generated(family, scale, seed, tight)
    _, ref = _reference(inst)
    made = 0
    for params in ALL_TRIALS:
        try:
            plan = timed_schedule(inst, ref, params)
        except TimedFailed:
            continue  # allowed (no room after evicting); the pipeline then keeps Stage 2's plan
        ev = evaluate(inst, plan)
        assert ev.valid, (params.name, [e.message for e in ev.errors[:3]])
        made += 1
    assert made > 0, "no trial produced a plan"


@pytest.mark.parametrize("name", ["matmul_s2", "fa_s2", "conv_s2", "random_s5", "Exp"])
def test_kept_plans_stay_within_the_allowance_on_shipped_instances(name):
    inst = load_instance(SHIPPED / f"{name}.json")
    s2, ref = _reference(inst)
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


@pytest.mark.parametrize("family,scale,seed", GENERATED)
def test_traffic_limit_stops_the_producer(family, scale, seed):
    inst = _generated(family, scale, seed)
    _, ref = _reference(inst)
    try:
        plan = timed_schedule(inst, ref, DEFAULT_TRIALS[0])
    except TimedFailed:
        pytest.skip("the trial cannot place this instance")
    used = evaluate(inst, plan).extra_traffic
    if used == 0:
        pytest.skip("no spill on this instance")
    with pytest.raises(TimedFailed):
        timed_schedule(inst, ref, DEFAULT_TRIALS[0], traffic_limit=used - 1)


def test_exp_worked_example_is_serial():
    """SPEC section 6: the Exp chain runs strictly serially, makespan 60, no spill."""
    inst = load_instance(SHIPPED / "Exp.json")
    plan = timed_schedule(inst, list(range(inst.n)), TimedParams())
    ev = evaluate(inst, plan)
    assert ev.valid and ev.makespan == 60 and ev.extra_traffic == 0


def test_traffic_allowance():
    assert traffic_allowance(1000, 0) == 1000
    assert traffic_allowance(1000, 20) == 1200
    assert traffic_allowance(999, 0.5) == 1003


@pytest.mark.parametrize(
    "kwargs",
    [
        {"window": -1},
        {"fill": 0.0},
        {"fill": 1.5},
        {"victim_tolerance": -0.1},
        {"priority": "random"},
        {"reserve_ops": -2},
        {"compute_window": -1},
        {"feed_window": -1},
        {"victim_horizon": -1},
    ],
)
def test_params_are_validated(kwargs):
    with pytest.raises(ValueError):
        TimedParams(**kwargs)


def test_deterministic():
    inst = _generated("fa", 2, 3)
    _, ref = _reference(inst)
    assert timed_schedule(inst, ref, DEFAULT_TRIALS[1]) == timed_schedule(inst, ref, DEFAULT_TRIALS[1])


def test_buffer_without_users_next_to_a_full_tier():
    """A buffer no operation uses is allocated at its FREE; when its tier is full the
    frontier makes room, and the plan stays valid."""
    nodes = [
        {"Id": 0, "Op": "ALLOC", "BufId": 0, "Size": 1024, "Type": "UB"},
        {"Id": 1, "Op": "COPY_IN", "Pipe": "MTE2", "Cycles": 10, "Bufs": [0]},
        {"Id": 2, "Op": "ALLOC", "BufId": 1, "Size": 512, "Type": "UB"},
        {"Id": 3, "Op": "FREE", "BufId": 1, "Size": 512, "Type": "UB"},
        {"Id": 4, "Op": "COPY_OUT", "Pipe": "MTE3", "Cycles": 10, "Bufs": [0]},
        {"Id": 5, "Op": "FREE", "BufId": 0, "Size": 1024, "Type": "UB"},
    ]
    inst = instance_from_records("unused", nodes, [[0, 1], [1, 4], [4, 5], [2, 3], [1, 3]])
    for ref in ([0, 1, 2, 3, 4, 5], [2, 3, 0, 1, 4, 5]):
        ev = evaluate(inst, timed_schedule(inst, ref, TimedParams()))
        assert ev.valid, [e.message for e in ev.errors]


def test_replaced_plan_skips_dlr_only_when_no_plan_of_the_order_fits():
    """replaced_plan: below the cover bound of the (tightened) order the answer is None
    without running DLR; at the DLR plan's own traffic the plan comes back, valid."""
    from dansched.models.traffic import traffic_lower_bound
    from dansched.stages.cpe.timed_memory import replaced_plan
    from dansched.stages.dlr.reorder import tighten_lifetimes

    covers = []
    for family, scale, seed in (("matmul", 2, 0), ("conv", 2, 1), ("random", 2, 3)):
        inst = _generated(family, scale, seed)
        plan = timed_schedule(inst, _reference(inst)[1], DEFAULT_TRIALS[0])
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
