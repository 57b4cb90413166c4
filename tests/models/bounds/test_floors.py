"""Makespan floors (dansched.models.bounds.floors): hand-computed values on tiny instances and
floor <= makespan for evaluator-accepted plans (random valid plans and solved graphs)."""

from __future__ import annotations

import itertools

import pytest
from helpers import official_path
from hypothesis import given
from hypothesis import strategies as st
from strategies import SETTINGS, cases, hw  # noqa: F401  (hw is a fixture)

from dansched.application.audit import audit_plan, rows_report
from dansched.generate import generate
from dansched.instance import instance_from_records, load_instance
from dansched.models.bounds.floors import (
    ADDRESS_SCOPE,
    INSTANCE_SCOPE,
    head_body_tail,
    jackson_preemptive_bound,
    makespan_floors,
)
from dansched.pipeline import SolveOptions, effort_options, run_pipeline
from dansched.plan import Plan
from dansched.simulate import evaluate


def _two_loads_two_vectors():
    """b0, b1 in UB. A = COPY_IN b0 (MTE2, 10), B = COPY_IN b1 (MTE2, 20),
    C = VEC b0 b1 (VECTOR, 5), D = VEC b1 (VECTOR, 7); A -> C, B -> C, C -> D."""
    nodes = [
        {"Id": 0, "Op": "ALLOC", "BufId": 0, "Size": 4, "Type": "UB"},
        {"Id": 1, "Op": "ALLOC", "BufId": 1, "Size": 4, "Type": "UB"},
        {"Id": 2, "Op": "COPY_IN", "Pipe": "MTE2", "Cycles": 10, "Bufs": [0]},
        {"Id": 3, "Op": "COPY_IN", "Pipe": "MTE2", "Cycles": 20, "Bufs": [1]},
        {"Id": 4, "Op": "VEC", "Pipe": "VECTOR", "Cycles": 5, "Bufs": [0, 1]},
        {"Id": 5, "Op": "VEC", "Pipe": "VECTOR", "Cycles": 7, "Bufs": [1]},
        {"Id": 6, "Op": "FREE", "BufId": 0, "Size": 4, "Type": "UB"},
        {"Id": 7, "Op": "FREE", "BufId": 1, "Size": 4, "Type": "UB"},
    ]
    edges = [(0, 2), (1, 3), (2, 4), (3, 4), (4, 5), (4, 6), (5, 7)]
    return instance_from_records("tiny", nodes, edges)


def test_instance_floors_by_hand():
    f = makespan_floors(_two_loads_two_vectors())
    # busiest pipe: MTE2 10 + 20 = 30; longest path B -> C -> D = 20 + 5 + 7 = 32
    assert f.instance.value == 32 and "longest path" in f.instance.method
    # MTE2: A (r 0, p 10, q 12), B (r 0, p 20, q 12): 0 + 30 + 12 = 42 (the optimum:
    # A, B back to back, C at 30, D ends at 42); VECTOR: C (20, 5, 7), D (25, 7, 0): 32
    assert f.head_body_tail_instance.value == 42 and "MTE2" in f.head_body_tail_instance.method
    assert f.plan is None and f.best() == ("head_body_tail_instance", f.head_body_tail_instance)


def test_plan_floors_by_hand_with_a_spill(exp_path):
    """Exp (COPY_IN b0 15 -> EXP b0 b1 30 -> COPY_OUT b1 15), with b0 spilled right after
    its COPY_IN: b0 is backed, so SPILL_OUT costs 0 and SPILL_IN 2*5+150 = 160 on MTE2."""
    inst = load_instance(exp_path)
    so, si = inst.n, inst.n + 1
    plan = Plan(order=(0, 1, so, si, 2, 3, 4, 5, 6), offsets=((0, 0), (1, 5)), spills=((0, 0),))
    ev = evaluate(inst, plan)
    assert ev.valid, ev.errors
    f = makespan_floors(inst, ev.graph, plan.order)
    # instance: busiest pipe 30 (VECTOR); longest path 15 + 30 + 15 = 60
    assert f.instance.value == 60
    # plan: MTE2 15 + 160 = 175; longest path 15 + 0 + 160 + 30 + 15 = 220
    assert f.plan.value == 220 and "longest path" in f.plan.method
    # MTE2 tasks: COPY_IN (0, 15, 205), SPILL_IN (15, 160, 45): Jackson gives 220
    assert f.head_body_tail.value == 220
    assert ev.makespan == 220
    d = f.to_dict(ev.makespan)
    assert d["plan_floor"] == "plan" and d["gap_to_plan_floor"] == 0.0
    # the best floor valid for every plan is the instance's 60: a gap of (220 - 60) / 220
    assert d["global_floor"] == "instance" and d["gap_to_global_floor"] == round(160 / 220, 6)


def test_head_body_tail_formula_by_hand():
    assert head_body_tail([(3, 4, 10), (5, 6, 2)]) == 3 + 10 + 2
    assert head_body_tail([]) == 0
    # Jackson: t 0-3 idle? no: task 1 released at 0 runs 0-4 (q 1); task 2 (r 2, q 10)
    # preempts at 2, runs 2-5 -> 15; task 1 resumes 5-7 -> 8. Optimum 15.
    assert jackson_preemptive_bound([(0, 4, 1), (2, 3, 10)]) == 15


tasks_st = st.lists(st.tuples(st.integers(0, 30), st.integers(0, 15), st.integers(0, 30)), min_size=1, max_size=6)


@given(tasks=tasks_st)
def test_jackson_between_subset_bounds_and_best_sequence(tasks):
    """Jackson's preemptive optimum is >= min r + sum p + min q of every subset and <= the
    best non-preemptive sequence (so it is a valid floor for one machine)."""
    jps = jackson_preemptive_bound(tasks)
    for k in range(1, len(tasks) + 1):
        for sub in itertools.combinations(tasks, k):
            assert jps >= head_body_tail(sub)
    best = None
    for perm in itertools.permutations(tasks):
        t = worst = 0
        for r, p, q in perm:
            t = max(t, r) + p
            worst = max(worst, t + q)
        best = worst if best is None else min(best, worst)
    assert jps <= best


@SETTINGS
@given(case=cases())
def test_floors_below_makespan_of_random_valid_plans(hw, case):
    inst = instance_from_records("prop", case.nodes, case.edges, hw)
    ev = evaluate(inst, case.plan())
    assert ev.valid, ev.errors
    f = makespan_floors(inst, ev.graph, case.order)
    for name, (b, _) in f.named().items():
        assert b.value <= ev.makespan, (name, b, ev.makespan)
    # the plan's floors are at least the instance's (more tasks, more edges)
    assert f.head_body_tail.value >= f.head_body_tail_instance.value
    assert f.plan.value >= f.instance.value


@pytest.mark.parametrize(
    "family,seed",
    [
        pytest.param("matmul", 0, marks=pytest.mark.slow),
        ("random", 3),
        pytest.param("fa", 1, marks=pytest.mark.slow),
        pytest.param("conv", 2, marks=pytest.mark.slow),
    ],
)
def test_floors_below_makespan_of_solved_graphs(family, seed):
    nodes, edges = generate(family, 1, seed)
    inst = instance_from_records(f"{family}{seed}", nodes, edges)
    res = run_pipeline(inst, SolveOptions(problem=3))
    assert res.evaluation.valid
    report = rows_report(audit_plan(inst, res.plan, res.evaluation, cpsat=False))
    floors = report["makespan_floors"]
    assert set(floors) >= {"instance", "plan", "head_body_tail", "head_body_tail_instance"}
    for name in ("instance", "plan", "head_body_tail", "head_body_tail_instance"):
        assert floors[name]["value"] <= res.evaluation.makespan, name
    assert floors[floors["global_floor"]]["scope"] == "global"
    assert floors[floors["plan_floor"]]["scope"] == "fixed memory behaviour"
    assert report["makespan"]["value"] == max(
        floors[k]["value"] for k in (floors["global_floor"], floors["plan_floor"])
    )


def test_solve_report_bound_and_audit_show_the_floors(exp_path, tmp_path):
    """The floors reach `solve`'s report, `bound --json`, `audit --json` and the text tables."""
    import json

    from typer.testing import CliRunner

    from dansched.cli import app

    run = CliRunner()
    out = tmp_path / "plan"
    assert run.invoke(app, ["solve", str(exp_path), "--out", str(out), "--quiet"]).exit_code == 0
    report = json.loads((out / "Exp_report.json").read_text())
    floors = report["bounds"]["makespan_floors"]
    # Exp: COPY_IN 15 -> EXP 30 -> COPY_OUT 15 in a chain: every floor is 60, the makespan
    assert report["makespan"] == 60
    assert {floors[k]["value"] for k in ("instance", "plan", "head_body_tail", "head_body_tail_instance")} == {60}
    assert floors["gap_to_global_floor"] == floors["gap_to_plan_floor"] == 0.0
    b = run.invoke(app, ["bound", str(exp_path), "--json", "--time-limit", "1"])
    assert b.exit_code == 0 and json.loads(b.stdout)["makespan_floors"]["plan"]["value"] == 60
    a = run.invoke(app, ["audit", str(exp_path), "--plan", str(out), "--json", "--time-limit", "1"])
    rows = [r for r in json.loads(a.stdout)["bounds"] if r["metric"] == "makespan"]
    assert a.exit_code == 0 and {r["floor"] for r in rows} == {
        "instance",
        "plan",
        "head_body_tail",
        "head_body_tail_instance",
        "traffic_forced",
        "traffic",
        "addresses",
    }
    # Exp has no address-reuse edge: retimed without them it is the same plan
    (addresses,) = (r for r in rows if r["floor"] == "addresses")
    assert addresses["value"] == 60 and addresses["rooms_cost"] == 0 and addresses["scope"] == "fixed order and spills"
    t = run.invoke(app, ["bound", str(exp_path), "--time-limit", "1"])
    assert t.exit_code == 0 and "head_body_tail" in t.stdout


# Floors derived by hand from the contest graphs (docs/guide.md, bound and audit): before
# FlashAttention's first VECTOR operation, four 581-cycle COPY_INs run one after another on
# MTE2 and 31 + 128 + 41 cycles of dependent work follow (a head of 2,524); after its last,
# 191 cycles must follow; VECTOR carries 25,600 (Case0) or 104,960 (Case1) cycles. Conv_Case0:
# the floor with heads and tails from longest paths, which stays a floor.
DERIVED = {
    "FlashAttention_Case0": 2_524 + 25_600 + 191,
    "FlashAttention_Case1": 2_524 + 104_960 + 191,
    "Conv_Case0": 351_599,
}


@pytest.mark.parametrize("case", sorted(DERIVED))
def test_official_floors_reach_the_derived_ones(case):
    inst = load_instance(official_path(case))
    floors = makespan_floors(inst)
    name, best = floors.best(INSTANCE_SCOPE)
    assert best.value >= DERIVED[case] and name == "head_body_tail_instance", (best, DERIVED[case])


@pytest.mark.slow
def test_audit_of_an_official_plan_shows_what_its_rooms_cost():
    """FlashAttention_Case0 solved at --effort fast: its address floor is the plan retimed by
    the simulator with the same order and spills but no address-reuse edge, between the
    plan's memory floors and its makespan; the row names the rooms' cost."""
    inst = load_instance(official_path("FlashAttention_Case0"))
    res = run_pipeline(inst, effort_options("fast", problem=3))
    ev = res.evaluation
    rows = audit_plan(inst, res.plan, ev, cpsat=False)
    (row,) = (r for r in rows if r.extra.get("floor") == "addresses")
    assert row.scope == ADDRESS_SCOPE and row.bound.value <= ev.makespan
    assert row.extra["rooms_cost"] == ev.makespan - row.bound.value
    assert f"{len(ev.graph.reuse_edges):,} address-reuse edges" in row.bound.method
    # every floor below the plan; the global one at least the derived one
    for r in rows:
        if r.metric == "makespan":
            assert r.bound.value <= ev.makespan, r.bound
    report = rows_report(rows)
    assert report["makespan"]["scope"] != ADDRESS_SCOPE
    assert report["makespan_floors"]["addresses_floor"] == "addresses"
    assert report["makespan_floors"][report["makespan_floors"]["global_floor"]]["value"] >= DERIVED[inst.name]
