"""The scan's room rule and reservation (dansched.stages.dlr.scan): by hand on a tiny stream,
and every plan judged by the evaluator on random graphs."""

from __future__ import annotations

import pytest
from helpers import alloc, capacities, free, generated, op

from dansched.instance import instance_from_records
from dansched.plan import plan_from_indices
from dansched.simulate import evaluate
from dansched.stages.dlr.scan import Reservation, linear_scan


def _three_tiles():
    """UB of 8 units, three backed tiles of 4: b is freed (position 5) before a (7), then c
    is loaded. Each COPY_IN takes 10 cycles on MTE2, each use 10 on VECTOR."""
    nodes = [
        alloc(0, 0, 4),
        op(1, "COPY_IN", "MTE2", 10, [0]),
        alloc(2, 1, 4),
        op(3, "COPY_IN", "MTE2", 10, [1]),
        op(4, "OPY", "VECTOR", 10, [1]),
        free(5, 1, 4),
        op(6, "OPX", "VECTOR", 10, [0]),
        free(7, 0, 4),
        alloc(8, 2, 4),
        op(9, "COPY_IN", "MTE2", 10, [2]),
        op(10, "OPZ", "VECTOR", 10, [2]),
        free(11, 2, 4),
    ]
    edges = [[0, 1], [1, 6], [6, 7], [0, 7], [2, 3], [3, 4], [4, 5], [2, 5], [8, 9], [9, 10], [10, 11], [8, 11]]
    edges += [[4, 6]]  # OPY before OPX
    return instance_from_records("three-tiles", nodes, edges, capacities(UB=8))


def _plan(inst, res):
    return plan_from_indices(inst, res.sequence, res.offsets, res.spills())


def test_best_fit_loads_c_where_a_left_last_and_earliest_released_where_b_left():
    """Best fit puts c at 0, a's room, freed last (position 7): c's COPY_IN waits for OPX,
    0-10 a, 10-20 b, 20-30 OPY, 30-40 OPX, 40-50 c, 50-60 OPZ: 60. Earliest released puts c at
    4, b's room, freed at position 5 (after OPY, 30): c loads 30-40 while OPX runs, OPZ
    40-50: 50."""
    inst = _three_tiles()
    order = list(range(inst.n))
    by_rule = {}
    for room in ("best-fit", "earliest-released"):
        res = linear_scan(inst, order, room=room)
        ev = evaluate(inst, _plan(inst, res))
        assert ev.valid and ev.extra_traffic == 0
        by_rule[room] = (res.offsets[2], ev.makespan, sorted(ev.graph.reuse_edges))
    assert by_rule["best-fit"] == (0, 60, [(7, 8)])
    assert by_rule["earliest-released"] == (4, 50, [(5, 8)])


def test_a_reservation_spills_to_keep_its_units_free():
    """Planned for 4 of UB's 8 units, the scan evicts a (backed: 4 traffic) when b arrives,
    and reloads it for OPX once b is gone: one spill, and never more than 4 units resident."""
    inst = _three_tiles()
    ub = inst.hw.tier_index("UB")
    res = linear_scan(inst, list(range(inst.n)), room="earliest-released", reserve=Reservation({ub: 4}))
    ev = evaluate(inst, _plan(inst, res))
    assert ev.valid
    assert (ev.extra_traffic, ev.spill_count) == (4, 1)
    segs = ev.segments()
    for i in range(len(res.sequence)):
        assert sum(s.size for s in segs if s.start <= i <= s.end and s.tier == ub) <= 4
    # without the reservation nothing spills
    assert linear_scan(inst, list(range(inst.n))).traffic == 0


def test_a_reservation_that_ends_spills_only_before_its_end():
    """Kept until position 2 (the ALLOC of b), the reservation still evicts a there."""
    inst = _three_tiles()
    ub = inst.hw.tier_index("UB")
    early = linear_scan(inst, list(range(inst.n)), reserve=Reservation({ub: 4}, until=3))
    late = linear_scan(inst, list(range(inst.n)), reserve=Reservation({ub: 4}, until=2))
    assert (early.traffic, late.traffic) == (4, 0)


@pytest.mark.parametrize("family", ["conv", "fa", "matmul", "random"])
@pytest.mark.parametrize("room", ["best-fit", "earliest-released"])
@pytest.mark.parametrize("share", [0, 4, 2])
def test_every_room_rule_and_reservation_gives_a_valid_plan(family, room, share):
    """On tight generated graphs, every tier reserved a share (none, a quarter, a half) of its
    capacity: the evaluator accepts the plan and counts the scan's traffic."""
    inst = generated(family, 1, 0)
    caps = [inst.hw.capacity[t] for t in inst.hw.tiers]
    reserve = Reservation({t: c // share for t, c in enumerate(caps)}) if share else None
    order = list(range(inst.n))
    res = linear_scan(inst, order, rule="min-reload", room=room, reserve=reserve)
    ev = evaluate(inst, _plan(inst, res))
    assert ev.valid, ev.first_violation()
    assert ev.extra_traffic == res.traffic
