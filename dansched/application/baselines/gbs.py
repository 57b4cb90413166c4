"""``gbs``: greedy-by-size offset assignment over known lifetimes in place of DLR's
online best fit (the static memory planners of TFLite, "greedy by size", and XLA's
decreasing-size heap simulator).

On Stage 1's order with lifetimes tightened (the order DLR starts from), residency
and spills are decided first by a unit-counting scan
(:func:`~dansched.stages.dlr.scan.linear_scan` in ``"units"`` mode, DAN's cost-aware
victim rule, so only the placement differs from DAN), which fixes every residency
segment's lifetime. Offsets are then assigned offline, largest segment first, each
into the tightest gap left by the already placed segments it meets in time
(:func:`~dansched.stages.dlr.packing.pack_tier` with ``order="size"``, one pass, no
second ordering). A tier that does not pack is scanned again with a smaller
virtual capacity (at most :data:`ROUNDS` times). No timing stage.
"""

from __future__ import annotations

from ...errors import PlacementFailed
from ...instance import Instance
from ...simulate import Segment
from ...stages.dlr.packing import apply_packing, pack_tier
from ...stages.dlr.reorder import tighten_lifetimes
from ...stages.dlr.scan import linear_scan
from ...stages.mpas.stage import mpas_order
from .common import MethodResult, Stopwatch, scan_plan

__all__ = ["run", "greedy_by_size", "ROUNDS", "VICTIM"]

ROUNDS = 12
VICTIM = "score"  # the cost-aware rule (Eq. 31)


def greedy_by_size(segments: list[Segment], capacity: dict[int, int]) -> tuple[dict[int, int], dict[int, int]]:
    """Offsets (by segment index) from one decreasing-size pass per tier, and the excess
    units of each tier that does not fit (empty when all fit)."""
    by_tier: dict[int, list[int]] = {}
    for i, s in enumerate(segments):
        by_tier.setdefault(s.tier, []).append(i)
    out: dict[int, int] = {}
    overflow: dict[int, int] = {}
    for t, members in sorted(by_tier.items()):
        offs, top = pack_tier([segments[i] for i in members], capacity[t], order="size")
        if top > capacity[t]:
            overflow[t] = top - capacity[t]
        out.update(zip(members, offs))
    return out, overflow


def run(inst: Instance, time_limit: float = 60.0) -> MethodResult:
    """Units scan on the MPAS order, then greedy-by-size offsets; ``time_limit`` unused."""
    sw = Stopwatch()
    order = tighten_lifetimes(inst, mpas_order(inst).order)
    sw.lap("mpas")
    caps = {t: inst.hw.capacity[name] for t, name in enumerate(inst.hw.tiers)}
    virtual = dict(caps)
    for rounds in range(1, ROUNDS + 1):
        res = linear_scan(inst, order, rule=VICTIM, mode="units", capacity=virtual)
        offsets, overflow = greedy_by_size(res.segments, caps)
        if not overflow:
            apply_packing(res, offsets)
            sw.lap("memory")
            shrunk = {inst.hw.tiers[t]: c for t, c in virtual.items() if c != caps[t]}
            return MethodResult(
                scan_plan(inst, res), {"rounds": rounds, "virtual_capacity": shrunk, "stage_seconds": sw.seconds}
            )
        for t, excess in overflow.items():
            virtual[t] = max(1, virtual[t] - max(excess, caps[t] // 100))
    raise PlacementFailed(f"{inst.name}: greedy-by-size did not pack within {ROUNDS} rounds")
