"""The reservation source's engine (dansched.pipeline.problem3.sources.reservation): the tile
of a tier (the most common size it spills, by hand), the settings it tries, and plans whose
victims keep the reserved rooms free. Each plan is judged by the shared evaluator, and the
rooms it keeps are counted by brute force from the evaluator's residency segments: at every
schedule position the tier's resident units stay within its capacity less the reservation,
except where one node's own buffers need more."""

from __future__ import annotations

import pytest
from helpers import alloc, free, generated, op

from dansched.instance import KIND_OP, instance_from_records
from dansched.pipeline.problem3.sources.reservation import reservation_plan, reservation_settings, tile_sizes
from dansched.simulate import evaluate
from dansched.stages.dlr.stage import dlr_plan
from dansched.stages.mpas.stage import mpas_order


def test_the_tile_of_a_tier_is_its_most_common_spilled_size_by_hand():
    sizes = {10: ("UB", 4), 11: ("UB", 4), 12: ("UB", 8), 20: ("L1", 32), 21: ("L1", 16)}
    nodes, edges = [], []
    for k, (bid, (tier, size)) in enumerate(sizes.items()):
        nodes += [
            alloc(3 * k, bid, size, tier),
            op(3 * k + 1, "VEC", "VECTOR", 1, [bid]),
            free(3 * k + 2, bid, size, tier),
        ]
        edges += [[3 * k, 3 * k + 1], [3 * k + 1, 3 * k + 2]]
    inst = instance_from_records("tiles", nodes, edges)
    ub, l1 = inst.hw.tier_index("UB"), inst.hw.tier_index("L1")
    spilled = [inst.buffer_index(b) for b in (10, 11, 12, 20, 21)]
    assert tile_sizes(inst, spilled) == {l1: 16, ub: 4}  # L1: a tie of 32 and 16, the smaller
    assert tile_sizes(inst, [inst.buffer_index(12)]) == {ub: 8} and tile_sizes(inst, []) == {}


def test_the_settings_by_hand():
    """On the default core (L1 4096, UB 1024), largest buffers 1536 (L1) and 256 (UB), tiles of
    1024 and 256: L1 keeps 1 or 2 rooms (3072, 2048 >= 1536; 3 rooms leave 1024 < 1536), UB
    1, 2 or 3 (768, 512, 256 >= 256; 4 leave 0), both together 1 or 2. Sweeps: none, L1
    alone, UB alone, both."""
    nodes = [alloc(0, 0, 1536, "L1"), op(1, "USE", "MTE1", 1, [0]), free(2, 0, 1536, "L1")]
    nodes += [alloc(3, 1, 256, "UB"), op(4, "USE", "VECTOR", 1, [1]), free(5, 1, 256, "UB")]
    inst = instance_from_records("sizes", nodes, [[0, 1], [1, 2], [3, 4], [4, 5]])
    l1, ub = inst.hw.tier_index("L1"), inst.hw.tier_index("UB")
    sweeps = [[dict(s.rooms) for s in sweep] for sweep in reservation_settings(inst, {l1: 1024, ub: 256}, 5)]
    assert sweeps == [
        [{}],
        [{l1: 1}, {l1: 2}],
        [{ub: 1}, {ub: 2}, {ub: 3}],
        [{l1: 1, ub: 1}, {l1: 2, ub: 2}],
    ]
    setting = reservation_settings(inst, {l1: 1024, ub: 256}, 5)
    next(setting)
    first = next(setting)[1]
    assert first.reservation(10).units == {l1: 2048} and first.describe(inst) == "L1 2 rooms of 1024"
    assert first.reservation(10).until is None
    # in parts: the first room for the first third, two thirds, then the whole order
    halves = list(reservation_settings(inst, {l1: 1024, ub: 256}, 5, parts=3))[1]
    assert [(dict(s.rooms), str(s.part)) for s in halves] == [
        ({l1: 1}, "1/3"),
        ({l1: 1}, "2/3"),
        ({l1: 1}, "1"),
        ({l1: 2}, "1"),
    ]
    assert [s.reservation(9).until for s in halves] == [3, 6, None, None]
    assert halves[0].describe(inst) == "L1 1 room of 1024, for the first 1/3 of the order"


def _problem2(family, scale, seed):
    inst = generated(family, scale, seed)
    s2 = dlr_plan(inst, mpas_order(inst).order, other_orders=False)
    index = {bid: i for i, bid in enumerate(inst.buf_id.tolist())}
    spilled = [index[bid] for bid, _ in s2.plan.spills]
    return inst, s2, [v for v in s2.plan.order if v < inst.n], tile_sizes(inst, spilled)


@pytest.mark.parametrize("family, scale, seed", [("conv", 2, 1), ("fa", 2, 0), ("matmul", 2, 0)])
def test_every_setting_keeps_its_rooms_free(family, scale, seed):
    inst, _, order, tiles = _problem2(family, scale, seed)
    assert tiles, "the premise: the problem-2 plan spills"
    made = 0
    for sweep in reservation_settings(inst, tiles, 2):
        for setting in sweep:
            plan = reservation_plan(inst, order, setting, "min-reload")
            assert plan is not None
            ev = evaluate(inst, plan)
            assert ev.valid, ev.first_violation()
            made += 1
            kept = setting.reservation(len(order)).units
            segs = ev.segments()
            for t, units in kept.items():
                cap = inst.hw.capacity[inst.hw.tiers[t]]
                mine = [s for s in segs if s.tier == t]
                for i in range(len(plan.order)):
                    staying = [s for s in mine if s.start <= i < s.end]  # resident after the node at i
                    if sum(s.size for s in staying) <= cap - units:
                        continue
                    # only where the operation the node at i serves (itself, or the next one
                    # for a SPILL_IN placed for it) needs every resident buffer of the tier
                    served = _served_operation(inst, plan.order, i)
                    assert all(s.buf in served for s in staying), (family, i)
    assert made >= 2


def _served_operation(inst, order, i):
    """The buffers of the first operation of the instance at or after position ``i``."""
    L = inst.lists()
    for v in order[i:]:
        if v < inst.n and L.kind[v] == KIND_OP:
            return set(L.bufs[v])
    return set()
