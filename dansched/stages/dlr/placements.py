"""The registry of Stage-2 placements (paper Algorithm 2 and our variants): each turns a
(tightened) order and an L1/UB victim rule into a :class:`~dansched.stages.dlr.scan.ScanResult`,
or ``None`` when it cannot place. :func:`~dansched.stages.dlr.stage.dlr_plan` tries them
in the registry's order.

- ``bestfit-greedy``: the paper's online best fit, evicting one victim at a time
  (Algorithm 2, lines 7-12);
- ``bestfit-window``: best fit, evicting the cheapest contiguous window of victims;
- ``lifetime-packing``: a unit-counting scan, then offline lifetime packing of its
  segments (:mod:`dansched.stages.dlr.packing`);
- ``spill-plan``: the exact spill plan of the order (:mod:`dansched.stages.dlr.spillplan`),
  its segments packed greedily or by CP-SAT.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ...errors import PlacementFailed
from ...instance import Instance
from ...params import DlrParams
from .packing import apply_packing, pack_segments
from .scan import ScanResult, linear_scan
from .spillplan import cpsat_pack, planned_spills

__all__ = ["Placement", "PLACEMENTS", "scan_variant"]


def _greedy_scan(inst: Instance, order: Sequence[int], rule: str, params: DlrParams) -> ScanResult:
    """The paper's placement: best fit, evicting greedily at each node."""
    return linear_scan(inst, order, rule=rule, mode="bestfit", evict="greedy", traffic_limit=params.traffic_limit)


def _window_scan(inst: Instance, order: Sequence[int], rule: str, params: DlrParams) -> ScanResult:
    """Best fit, evicting the victims that free a contiguous window."""
    return linear_scan(inst, order, rule=rule, mode="bestfit", evict="window", traffic_limit=params.traffic_limit)


def _packed_scan(inst: Instance, order: Sequence[int], rule: str, params: DlrParams) -> ScanResult | None:
    """Unit-counting scan, then offline packing; a tier that does not pack gets a smaller
    virtual capacity and the scan runs again (at most ``params.packing_rounds`` times)."""
    caps = {t: inst.hw.capacity[name] for t, name in enumerate(inst.hw.tiers)}
    virtual = dict(caps)
    for _ in range(params.packing_rounds):
        res = linear_scan(inst, order, rule=rule, mode="units", capacity=virtual, traffic_limit=params.traffic_limit)
        offsets, overflow = pack_segments(res.segments, caps)
        if not overflow:
            apply_packing(res, offsets)
            return res
        for t, excess in overflow.items():
            virtual[t] = max(1, virtual[t] - max(excess, caps[t] // 100))
    return None


def _planned_scan(inst: Instance, order: Sequence[int], rule: str, params: DlrParams) -> ScanResult | None:
    """The exact spill plan of ``order`` (:func:`~dansched.stages.dlr.spillplan.planned_spills`),
    its segments packed greedily or else by CP-SAT; a tier that still does not pack is
    planned again one percent smaller (at most ``params.packing_rounds`` times); only up to
    ``params.spill_plan_max_nodes`` nodes, and not packed when the plan's traffic already
    passes ``params.traffic_limit``."""
    if inst.n > params.spill_plan_max_nodes:
        return None
    caps = {t: inst.hw.capacity[name] for t, name in enumerate(inst.hw.tiers)}
    cut: dict[int, int] = {}
    for _ in range(params.packing_rounds):
        got = planned_spills(
            inst,
            order,
            params.spill_plan_node_limit,
            params.spill_plan_time_limit,
            capacity_cut=cut,
            traffic_limit=params.traffic_limit,
        )
        if got is None:
            return None
        planned = got[0]
        if params.traffic_limit is not None and got[1] > params.traffic_limit:
            return None
        res = linear_scan(inst, order, rule=rule, mode="units", planned=planned)
        offsets, overflow = pack_segments(res.segments, caps)
        if overflow:
            packed = cpsat_pack(res.segments, caps)
            if packed is not None:
                offsets, overflow = packed, {}
        if not overflow:
            apply_packing(res, offsets)
            return res
        for t in overflow:
            cut[t] = cut.get(t, 0) + max(1, caps[t] // 100)
    return None


Placement = Callable[[Instance, Sequence[int], str, DlrParams], "ScanResult | None"]

PLACEMENTS: dict[str, Placement] = {  # the registry of Stage-2 placements, in the order they are tried
    "bestfit-greedy": _greedy_scan,
    "bestfit-window": _window_scan,
    "lifetime-packing": _packed_scan,
    "spill-plan": _planned_scan,
}


def scan_variant(
    inst: Instance, order: Sequence[int], placement: str, rule: str, params: DlrParams = DlrParams()
) -> ScanResult | None:
    """Run one placement variant (a key of :data:`PLACEMENTS`) on a (tightened) order;
    ``None`` if it cannot place."""
    if placement not in PLACEMENTS:
        raise ValueError(f"unknown placement {placement!r}")
    try:
        return PLACEMENTS[placement](inst, order, rule, params)
    except PlacementFailed:
        return None
