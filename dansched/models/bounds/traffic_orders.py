"""Every extra-traffic lower bound over all orders (problems 2 and 3), each with its method,
and the best one.

- forced-live sets (:func:`dansched.models.bounds.traffic_global.forced_live_excess`) and the
  per-tier minimum peak (:func:`dansched.models.bounds.traffic_tiers.tier_peaks`): both count the
  spills of one tier at one moment, so per tier the larger holds and the tiers add up;
- the product-grid segment bound (:func:`dansched.models.bounds.traffic_segments.segment_traffic_bound`);
- the live-lines bound (:func:`dansched.models.bounds.traffic_grid.live_lines_traffic_bound`).

Each is a lower bound on the extra traffic of every plan; the best is their maximum (the
grid bounds count spills of several tiers, so they are not added to the per-tier ones).
"""

from __future__ import annotations

from ...graph import build_mpas_graph
from ...instance import Instance
from ...params import BoundParams, ProductParams
from .bound import Bound
from .traffic_global import forced_live_excess
from .traffic_grid import find_product_grid, live_lines_traffic_bound
from .traffic_segments import segment_traffic_bound
from .traffic_tiers import tier_peaks

__all__ = ["per_tier_traffic_bound", "all_orders_traffic_bounds", "best_traffic_bound"]


def per_tier_traffic_bound(inst: Instance, params: BoundParams = BoundParams()) -> Bound:
    """Per tier the larger of the forced-live cover and the minimum-peak excess, added up."""
    forced, full = forced_live_excess(inst, params.traffic_global)
    peaks = tier_peaks(inst, params, build_mpas_graph(inst, check_l0=False)) if inst.num_buffers else []
    by_tier: dict[str, tuple[int, str]] = {}
    for r in forced:
        if r.traffic:
            by_tier[r.tier] = (r.traffic, f"forced-live set at op {r.op}: {r.forced:,} > {r.capacity:,}")
    for p in peaks:
        if p.traffic > by_tier.get(p.tier, (0, ""))[0]:
            by_tier[p.tier] = (p.traffic, f"least peak {p.peak:,} > {p.capacity:,}")
    total = sum(v for v, _ in by_tier.values())
    if total == 0:
        what = "forced-live set" if full else "working set (DAG sets over budget)"
        return Bound(0, f"all orders: per tier 0, every {what} and every tier's least peak fits its capacity")
    parts = ", ".join(f"{t} {v:,} ({why})" for t, (v, why) in sorted(by_tier.items()))
    return Bound(total, f"all orders: per tier, the excess over capacity sits in open spills: {parts}")


def all_orders_traffic_bounds(inst: Instance, params: BoundParams = BoundParams()) -> list[Bound]:
    """Each bound, in a fixed order: per tier, product-grid segments, live lines (the grid is
    searched within ``params.peak.product``'s caps, or the default ones when that bound is off)."""
    grid = find_product_grid(inst, params.peak.product or ProductParams())
    if grid is None:
        return [per_tier_traffic_bound(inst, params), _no_grid("product-grid segments"), _no_grid("live lines")]
    return [
        per_tier_traffic_bound(inst, params),
        segment_traffic_bound(inst, params, grid),
        live_lines_traffic_bound(inst, grid=grid),
    ]


def _no_grid(name: str) -> Bound:
    return Bound(0, f"{name}: no uniform product grid of cells found")


def best_traffic_bound(inst: Instance, params: BoundParams = BoundParams()) -> tuple[Bound, list[Bound]]:
    """The largest bound (the first on ties) and all of them."""
    bounds = all_orders_traffic_bounds(inst, params)
    best = bounds[0]
    for b in bounds[1:]:
        if b.value > best.value:
            best = b
    return best, bounds
