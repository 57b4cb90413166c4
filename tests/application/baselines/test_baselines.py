"""Baselines: every method returns a plan the evaluator accepts, and the
building blocks (HMCOS hierarchy, MAGIS swaps and hoisting, greedy by size, COSMA
fallback) behave as documented."""

from __future__ import annotations

import pytest
from helpers import SHIPPED, official_path

from dansched.application.baselines import (
    DAN_FAMILY,
    EXTERNAL,
    METHODS,
    MethodResult,
    cosma,
    gbs,
    hmcos,
    magis,
    run_method,
)
from dansched.application.baselines.common import full_order, input_order, lru_memory_stage, op_graph
from dansched.generate import generate
from dansched.instance import instance_from_records, load_instance
from dansched.models.exact.placement import PlacementResult
from dansched.simulate import Segment, evaluate
from dansched.stages.dlr.reorder import is_topological

# the default run covers one graph of each kind of structure; the rest run under slow
GENERATED = [
    pytest.param(("matmul", 1, 0), marks=pytest.mark.slow),
    pytest.param(("fa", 1, 0), marks=pytest.mark.slow),
    pytest.param(("conv", 1, 0), marks=pytest.mark.slow),
    pytest.param(("random", 1, 0), marks=pytest.mark.slow),
    ("random", 1, 3),
]


def _generated(family: str, scale: int, seed: int):
    nodes, edges = generate(family, scale, seed)
    return instance_from_records(f"{family}_s{scale}_{seed}", nodes, edges)


@pytest.fixture(scope="module", params=GENERATED, ids=lambda p: "-".join(map(str, p)))
def generated(request):
    return _generated(*request.param)


def test_registry_lists_every_method_once():
    assert set(EXTERNAL) | set(DAN_FAMILY) == set(METHODS)
    assert not set(EXTERNAL) & set(DAN_FAMILY)
    assert list(METHODS)[0] == "base" and list(METHODS)[-1] == "dan"


@pytest.mark.parametrize("method", list(METHODS))
def test_every_method_is_valid_on_generated_graphs(generated, method):
    res = run_method(method, generated, 5.0)
    assert isinstance(res, MethodResult)
    ev = evaluate(generated, res.plan)
    assert ev.valid, (method, ev.errors[:3])
    assert ev.problem == 2
    assert isinstance(res.info, dict)


@pytest.mark.slow
@pytest.mark.parametrize("method", list(METHODS))
def test_every_method_is_valid_on_an_official_case(method):
    inst = load_instance(official_path("FlashAttention_Case0"))
    ev = evaluate(inst, run_method(method, inst, 10.0).plan)
    assert ev.valid, (method, ev.errors[:3])


def test_base_keeps_the_id_order():
    inst = load_instance(SHIPPED / "conv_s2.json")
    order, as_given = input_order(inst)
    assert as_given and order == list(range(inst.n))
    plan, _ = lru_memory_stage(inst, order)
    assert [v for v in plan.order if v < inst.n] == order
    assert METHODS["base"](inst, 1.0).plan == plan


def test_input_order_falls_back_to_a_topological_order():
    recs = [
        {"Id": 0, "Op": "COPY_OUT", "Pipe": "MTE3", "Cycles": 5, "Bufs": [1]},
        {"Id": 1, "Op": "ALLOC", "BufId": 1, "Size": 4, "Type": "UB"},
        {"Id": 2, "Op": "FREE", "BufId": 1, "Size": 4, "Type": "UB"},
    ]
    inst = instance_from_records("rev", recs, [[1, 0], [0, 2]])
    order, as_given = input_order(inst)
    assert not as_given and order == [1, 0, 2]
    assert evaluate(inst, METHODS["base"](inst, 1.0).plan).valid


def test_hmcos_hierarchy_is_laminar_and_convex():
    inst = load_instance(SHIPPED / "fa_s2.json")
    g = op_graph(inst)
    h = hmcos.groups(g)
    assert sorted(i for s in h.seqs for i in s) == list(range(g.m))
    for chain in h.seqs:  # a chain is linked by single-successor / single-predecessor edges
        for a, b in zip(chain, chain[1:]):
            assert g.succs[a] == [b] and g.preds[b] == [a]
    for a in range(len(h.members)):
        for b in range(a + 1, len(h.members)):
            x, y = h.members[a], h.members[b]
            assert x <= y or y <= x or not (x & y)
    for r in h.members:  # no path leaves a group and comes back
        outside = {w for u in r for w in h.succs[u] if w not in r}
        seen, todo = set(outside), list(outside)
        while todo:
            for w in h.succs[todo.pop()]:
                assert w not in r
                if w not in seen:
                    seen.add(w)
                    todo.append(w)


def test_hmcos_order_is_topological_and_lowers_the_model_peak():
    inst = load_instance(SHIPPED / "matmul_s2.json")
    order, info = hmcos.hmcos_order(inst)
    assert is_topological(inst, order)
    assert info["model_peak"] <= info["model_peak_first"]
    assert order == hmcos.hmcos_order(inst)[0]  # deterministic


def test_schedule_items_respects_the_budget():
    inst = _generated("random", 1, 0)
    g = op_graph(inst)
    items = [[i] for i in range(g.m)]
    mem = hmcos._Memory(g)
    free = hmcos.schedule_items(mem, items, g.preds, g.succs, float("inf"), 8)
    assert sorted(free) == list(range(g.m))
    assert hmcos.schedule_items(mem, items, g.preds, g.succs, 0, 8) is None or all(not b for b in g.bufs)


def test_magis_order_swaps_and_hoisting():
    inst = load_instance(SHIPPED / "matmul_s2.json")
    g = op_graph(inst)
    rpo = magis.reverse_post_order(g)
    pos = {i: k for k, i in enumerate(rpo)}
    assert all(pos[i] < pos[j] for i in range(g.m) for j in g.succs[i])
    order = full_order(inst, g, rpo)
    planned, swaps = magis.plan_swaps(inst, order)
    assert swaps == sum(len(v) for v in planned.values()) > 0
    plan, _ = lru_memory_stage(inst, order, planned=planned)
    ev = evaluate(inst, plan)
    assert ev.valid
    hoisted, moved = magis.hoist_loads(inst, plan, ev.physical_peak)
    ev2 = evaluate(inst, hoisted)
    assert moved > 0 and ev2.valid
    assert ev2.physical_peak <= ev.physical_peak
    assert (ev2.extra_traffic, ev2.spill_count) == (ev.extra_traffic, ev.spill_count)


def test_greedy_by_size_places_largest_first_without_overlap():
    def seg(buf, size, start, end):  # tier 0, not yet placed
        return Segment(buf, 0, size, -1, start, end, -1, -1, -1)

    segs = [seg(0, 4, 0, 3), seg(1, 4, 1, 2), seg(2, 8, 4, 5)]
    offsets, overflow = gbs.greedy_by_size(segs, {0: 8})
    assert overflow == {} and offsets[2] == 0 and {offsets[0], offsets[1]} == {0, 4}
    _, overflow = gbs.greedy_by_size(segs, {0: 6})
    assert overflow == {0: 2}


def test_cosma_falls_back_to_dlr_with_a_note(monkeypatch):
    inst = load_instance(SHIPPED / "conv_s2.json")
    monkeypatch.setattr(
        cosma, "fixed_order_placement", lambda *a, **k: PlacementResult("TOO_LARGE", None, 0, stats={"rectangles": 9})
    )
    res = cosma.run(inst, 1.0)
    assert res.info["fallback"].startswith("model too large")
    assert evaluate(inst, res.plan).valid


def test_cosma_solves_a_small_instance():
    inst = load_instance(SHIPPED / "Exp.json")
    res = cosma.run(inst, 2.0)
    assert "fallback" not in res.info and res.info["status"] == "OPTIMAL"
    assert evaluate(inst, res.plan).extra_traffic == 0
