"""The reserved-room source's engine (dansched.pipeline.problem3.sources.room): the tile of a
tier (the most common size it spills, by hand) and plans whose evictions keep room for the
next tile. Each plan is judged by the shared evaluator, and the room it keeps is counted by
brute force from the evaluator's residency segments: at every schedule position the tier's
resident units stay within its capacity less the room (the scan's placement, which decides
its evictions on the smaller tier)."""

from __future__ import annotations

import pytest
from helpers import alloc, free, generated, op

from dansched.instance import instance_from_records
from dansched.params import DlrParams
from dansched.pipeline.problem3.sources.room import reserved_room_plan, tile_sizes
from dansched.simulate import evaluate
from dansched.stages.dlr.stage import dlr_plan
from dansched.stages.mpas.stage import mpas_order

SCAN_ONLY = DlrParams(spill_plan_max_nodes=0)  # the scan's placement, not the exact spill plan


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


def _problem2(family, scale, seed):
    inst = generated(family, scale, seed)
    s2 = dlr_plan(inst, mpas_order(inst).order, other_orders=False)
    index = {bid: i for i, bid in enumerate(inst.buf_id.tolist())}
    spilled = [index[bid] for bid, _ in s2.plan.spills]
    return inst, s2, [v for v in s2.plan.order if v < inst.n], tile_sizes(inst, spilled)


def _peak_units(inst, plan, tier):
    """The tier's most resident units at any schedule position, from the evaluator's segments."""
    segs = [s for s in evaluate(inst, plan).segments() if s.tier == tier]
    return max(sum(s.size for s in segs if s.start <= i <= s.end) for i in range(len(plan.order)))


@pytest.mark.parametrize("family, scale, seed", [("conv", 2, 1), ("fa", 2, 0)])
def test_the_scan_keeps_the_room_of_a_tile_free(family, scale, seed):
    inst, _, order, tiles = _problem2(family, scale, seed)
    made = 0
    for tier, tile in tiles.items():
        cap = inst.hw.capacity[inst.hw.tiers[tier]]
        for room in sorted({tile // 2, tile} - {0}):
            plan = reserved_room_plan(inst, order, tier, room, "score", SCAN_ONLY)
            if plan is None:
                continue
            made += 1
            assert evaluate(inst, plan).valid
            assert _peak_units(inst, plan, tier) <= cap - room, (inst.hw.tiers[tier], room)
    assert made


def test_no_room_to_keep_and_the_traffic_limit():
    inst, s2, order, tiles = _problem2("conv", 2, 1)
    tier, tile = next(iter(tiles.items()))
    cap = inst.hw.capacity[inst.hw.tiers[tier]]
    assert reserved_room_plan(inst, order, tier, 0) is None and reserved_room_plan(inst, order, tier, cap) is None
    free_plan = reserved_room_plan(inst, order, tier, tile, "score", SCAN_ONLY)
    assert free_plan is not None
    traffic = evaluate(inst, free_plan).extra_traffic
    assert traffic > s2.evaluation.extra_traffic  # the room costs traffic on this graph
    for params in (DlrParams(traffic_limit=traffic - 1), DlrParams(spill_plan_max_nodes=0, traffic_limit=traffic - 1)):
        got = reserved_room_plan(inst, order, tier, tile, "score", params)
        assert got is None or evaluate(inst, got).extra_traffic <= traffic - 1
