"""The makespan floors against every plan of tiny instances (tests/makespan_oracle.py: every
order, spill choice and placement, judged by the shared evaluator), and a hand-made
instance on which the head-body-tail floor with pipe-aware heads and tails is tight.

Each floor is checked in its own scope: the floors valid for every plan against the least
makespan of all plans; the floor at a traffic ``T`` against the plans carrying at least
``T``; a plan's floors (its memory behaviour: the same augmented DAG) against every plan
with that augmented DAG; its address floor against every plan with the same order and
spills (any offsets).
"""

from __future__ import annotations

import tempfile
from collections import defaultdict
from pathlib import Path

import pytest
from makespan_oracle import every_plan, tiny_instance

from dansched.generate import GraphBuilder
from dansched.hardware import Hardware, load_hardware
from dansched.models.bounds.floors import (
    ADDRESS_SCOPE,
    INSTANCE_SCOPE,
    PLAN_SCOPE,
    address_free_floor,
    makespan_floor_at_traffic,
    makespan_floors,
)
from dansched.plan import Plan
from dansched.simulate import evaluate


def _ub(capacity: int) -> Hardware:
    """The default hardware with a UB of ``capacity`` units."""
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "hw.toml"
        path.write_text(f"[tiers]\nUB = {capacity}\n")
        return load_hardware(path)


def _graph_key(ev) -> tuple:
    g = ev.graph
    return g.pipe_array.tobytes(), g.cycles_array.tobytes(), g.pred_ptr.tobytes(), g.pred_idx.tobytes()


def check_against_every_plan(inst, seen: dict[str, int]) -> None:
    plans = list(every_plan(inst, max_spills=1))
    assert plans, inst.name
    fastest = min(ev.makespan for _, ev in plans)
    least = min(ev.extra_traffic for _, ev in plans)
    floors = makespan_floors(inst, forced_traffic=least)
    for name, (b, scope) in floors.named().items():
        assert scope == INSTANCE_SCOPE
        assert b.value <= fastest, f"{inst.name}: {name} {b.value} > the fastest plan's {fastest} ({b.method})"
    seen["tight"] += floors.best()[1].value == fastest
    for t in sorted({ev.extra_traffic for _, ev in plans}):
        at = makespan_floor_at_traffic(inst, t, floors)
        best_at = min(ev.makespan for _, ev in plans if ev.extra_traffic >= t)
        assert at.value <= best_at, f"{inst.name}: the floor at {t} bytes {at.value} > {best_at} ({at.method})"
    by_graph: dict[tuple, list] = defaultdict(list)
    by_order: dict[tuple, list] = defaultdict(list)
    for plan, ev in plans:
        by_graph[_graph_key(ev)].append((plan, ev))
        by_order[plan.order, tuple(b for b, _ in plan.spills)].append((plan, ev))
    for group in by_graph.values():
        plan, ev = group[0]
        own = makespan_floors(inst, ev.graph, plan.order)
        best = min(e.makespan for _, e in group)
        for name, (b, scope) in own.named().items():
            if scope == PLAN_SCOPE:
                assert b.value <= best, f"{inst.name}: {name} {b.value} > {best} of its memory behaviour"
        seen["plan tight"] += own.head_body_tail.value == best
    for group in by_order.values():
        plan, ev = group[0]
        b = address_free_floor(inst, ev.graph, plan.order)
        best = min(e.makespan for _, e in group)
        assert b.value <= best, f"{inst.name}: the address floor {b.value} > {best} of every re-addressing"
        seen["rooms cost"] += b.value < max(e.makespan for _, e in group)
    seen["spilled"] += any(p.spills for p, _ in plans)
    seen["instances"] += 1


QUICK = (1, 3, 5, 15, 19, 24)  # seeds whose enumeration takes well under a second each


def _seen() -> dict[str, int]:
    return {"instances": 0, "tight": 0, "plan tight": 0, "rooms cost": 0, "spilled": 0}


def test_no_plan_is_below_a_floor_on_tiny_instances():
    seen = _seen()
    for seed in QUICK:
        check_against_every_plan(tiny_instance(seed), seen)
    # not vacuous: spills everywhere, floors met, addresses that cost time
    assert seen["instances"] == len(QUICK) and seen["spilled"] == len(QUICK), seen
    assert seen["tight"] >= 1 and seen["plan tight"] >= 1 and seen["rooms cost"] >= 1, seen


@pytest.mark.slow
def test_no_plan_is_below_a_floor_on_30_tiny_instances():
    seen = _seen()
    for seed in range(30):
        check_against_every_plan(tiny_instance(seed), seen)
    print(seen)
    assert seen["instances"] == 30 and seen["rooms cost"] >= 5, seen


def _two_loads_then_three_vectors():
    """Two COPY_INs (MTE2, 10 each) joined by a MOVE (MTE1, 1), then three independent VECs
    (VECTOR, 5 each). The optimum, 36: the loads one after the other (20), the MOVE (21),
    the VECs one after the other (36). With heads and tails from longest paths the best
    one-machine floor is 26: VECTOR from the MOVE's head 10 + 1 and its 15 cycles; MTE2 from
    0, its 20 cycles and a tail of 1 + 5 = 6."""
    g = GraphBuilder()
    a, b = g.alloc(1, "UB"), g.alloc(1, "UB")
    la = g.op("COPY_IN", "MTE2", 10, [a])
    lb = g.op("COPY_IN", "MTE2", 10, [b])
    move = g.op("MOVE", "MTE1", 1, [a, b], after=[la, lb])
    vecs = [g.op("VEC", "VECTOR", 5, [x], after=[move]) for x in (a, b, a)]
    g.free(a)
    g.free(b)
    return g.build("two_loads", _ub(2)), (la, lb, move, vecs)


def test_pipe_aware_heads_and_tails_by_hand_and_tight():
    inst, (la, lb, move, vecs) = _two_loads_then_three_vectors()
    floors = makespan_floors(inst)
    ht = floors.instance_heads
    # head of the MOVE: both loads on MTE2, one at a time (20), not the longest path (10)
    assert int(ht.heads[move]) == 20 and all(int(ht.heads[v]) == 21 for v in vecs)
    # tail of the MOVE: its three VECs on VECTOR, one at a time (15); of a load: 1 + 15
    assert int(ht.tails[move]) == 15 and int(ht.tails[la]) == int(ht.tails[lb]) == 16
    assert floors.head_body_tail_instance.value == 36
    # the busiest pipe (MTE2, 20) and the longest path (10 + 1 + 5) stay where they were
    assert floors.instance.value == 20
    # a plan that meets it: the floor is the optimum, and every plan is at least it
    order = (0, 1, la, lb, move, *vecs, inst.n - 2, inst.n - 1)
    ev = evaluate(inst, Plan(order=order, offsets=((0, 0), (1, 1)), spills=()))
    assert ev.valid, ev.errors
    assert ev.makespan == 36
    fastest = min(e.makespan for _, e in every_plan(inst, max_spills=0))
    assert fastest == 36


def test_address_floor_by_hand():
    """Two UB buffers of 2 in a UB of 2: the second's ALLOC waits for the first's FREE (an
    address-reuse edge). A: COPY_IN a (MTE2, 4), B: VEC a (VECTOR, 3), C: COPY_IN b (MTE2, 5),
    D: VEC b (VECTOR, 2). With the reuse edge C starts at 7 and the plan ends at 14; without
    it C runs on MTE2 right after A (4 -> 9) and D ends at 11: the rooms cost 3 cycles."""
    g = GraphBuilder()
    a = g.alloc(2, "UB")
    load_a = g.op("COPY_IN", "MTE2", 4, [a])
    use_a = g.op("VEC", "VECTOR", 3, [a], after=[load_a])
    g.free(a)
    b = g.alloc(2, "UB")
    load_b = g.op("COPY_IN", "MTE2", 5, [b])
    g.op("VEC", "VECTOR", 2, [b], after=[load_b])
    g.free(b)
    inst = g.build("reuse", _ub(2))
    plan = Plan(order=tuple(range(inst.n)), offsets=((0, 0), (1, 0)), spills=())
    ev = evaluate(inst, plan)
    assert ev.valid, ev.errors
    assert ev.makespan == 14 and len(ev.graph.reuse_edges) == 1 and use_a < load_b
    floors = makespan_floors(inst, ev.graph, plan.order)
    assert floors.addresses is not None and floors.addresses.value == 11
    assert floors.named()["addresses"][1] == ADDRESS_SCOPE
    # the address floor says what the rooms cost; it is not the best floor of the plan
    assert floors.best()[0] != "addresses"
