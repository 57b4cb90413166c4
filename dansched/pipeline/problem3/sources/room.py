"""Room for the next tile: a Stage-2 plan that keeps one tile's worth of a tier unused by the
eviction decisions, so that the next load can run while the current tile is still in use.

On a regular kernel (a blocked reduction, a stream of equal tiles) a full tier makes every
load wait for the tile it replaces: the victim is the tile just used (farthest next use,
paper Eqs. 27-31), so the engine that loads runs only one tile ahead. This placement
scans the order with the tier one *tile* smaller (units only, paper Algorithm 2 with the
cost rule, or the exact spill plan), then packs the segments into the real tier (:mod:`dansched.stages.dlr.packing`): the spare tile
gives each load addresses whose last occupant finished earlier. The spills are the exact
spill plan of the smaller tier where the graph allows it (the least traffic for the order).
It spends traffic (a smaller tier spills more); problem 3 keeps it only within the traffic
budget. The tile is
the most common size among the buffers the problem-2 plan spills from that tier.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from ....errors import PlacementFailed
from ....instance import Instance
from ....params import DlrParams
from ....plan import Plan, plan_from_indices
from ....stages.dlr.packing import apply_packing, pack_segments
from ....stages.dlr.scan import ScanResult, linear_scan
from ....stages.dlr.spillplan import cpsat_pack, planned_spills

__all__ = ["tile_sizes", "reserved_room_plan"]


def tile_sizes(inst: Instance, spilled: Sequence[int]) -> dict[int, int]:
    """Per tier index, the most common size among the ``spilled`` buffers (indices) of that
    tier (the smaller one on ties)."""
    by_tier: dict[int, Counter[int]] = {}
    for b in spilled:
        by_tier.setdefault(int(inst.buf_tier[b]), Counter())[int(inst.buf_size[b])] += 1
    return {t: min(c, key=lambda s: (-c[s], s)) for t, c in sorted(by_tier.items())}


def reserved_room_plan(
    inst: Instance, order: Sequence[int], tier: int, room: int, rule: str = "score", params: DlrParams = DlrParams()
) -> Plan | None:
    """The plan of ``order`` (instance nodes, topological) whose evictions keep at least
    ``room`` units of ``tier`` free, packed into the real tiers: the exact spill plan of the
    smaller tier (:func:`~dansched.stages.dlr.spillplan.planned_spills`, least traffic;
    graphs up to ``params.spill_plan_max_nodes``) when it packs, else the scan with the
    ``rule`` (units only). A tier whose segments do not pack is planned again a little
    smaller (at most ``params.packing_rounds`` times, as DLR's packing does); ``None``
    when nothing places and packs, or the exact plan's traffic passes
    ``params.traffic_limit``."""
    caps = {t: inst.hw.capacity[name] for t, name in enumerate(inst.hw.tiers)}
    if room <= 0 or room >= caps[tier]:
        return None
    if inst.n <= params.spill_plan_max_nodes:
        cut = {tier: room}
        for _ in range(params.packing_rounds):
            got = planned_spills(
                inst, order, params.spill_plan_node_limit, params.spill_plan_time_limit, cut, params.traffic_limit
            )
            if got is None or (params.traffic_limit is not None and got[1] > params.traffic_limit):
                break
            res = linear_scan(inst, order, rule=rule, mode="units", planned=got[0])
            packed = _packed(res, caps)
            if packed is not None:
                return plan_from_indices(inst, packed.sequence, packed.offsets, packed.spills())
            cut[tier] += max(1, caps[tier] // 100)
    virtual = dict(caps)
    virtual[tier] -= room
    for _ in range(params.packing_rounds):
        try:
            res = linear_scan(
                inst, order, rule=rule, mode="units", capacity=virtual, traffic_limit=params.traffic_limit
            )
        except PlacementFailed:
            return None
        offsets, overflow = pack_segments(res.segments, caps)
        if not overflow:
            apply_packing(res, offsets)
            return plan_from_indices(inst, res.sequence, res.offsets, res.spills())
        for t, excess in overflow.items():
            virtual[t] = max(1, virtual[t] - max(excess, caps[t] // 100))
    return None


def _packed(res: ScanResult, caps: dict[int, int]) -> ScanResult | None:
    """``res`` with its segments packed into ``caps`` greedily, else by CP-SAT; ``None``
    when neither packs."""
    offsets, overflow = pack_segments(res.segments, caps)
    if overflow:
        exact = cpsat_pack(res.segments, caps)
        if exact is None:
            return None
        offsets = exact
    apply_packing(res, offsets)
    return res
