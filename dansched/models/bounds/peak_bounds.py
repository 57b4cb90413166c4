"""Every maxV_stay lower bound over all orders, each with its method, and the best one.

- forced liveness (:func:`dansched.models.bounds.peak.peak_lower_bound`: first-free peeling over
  the buffers the DAG keeps live, falling back to working sets past a work budget);
- the product pattern (:func:`dansched.models.bounds.peak_product.product_peak_bound`: rows and
  columns of L1/UB buffers feeding a grid of single-residency cells, with its exact
  relaxation on small sub-grids);
- the contracted-graph relaxation (:func:`dansched.models.bounds.peak_contracted.contracted_peak_bound`:
  single-residency blocks as super-nodes, the block order solved exactly by CP-SAT on
  windows), run only on windows that can beat the bounds above;
- the exact minimum (:func:`dansched.models.exact.order.exact_min_peak`) on graphs of at most
  ``exact_max_nodes`` nodes and ``exact_max_states`` down-sets.

All are true lower bounds on the optimum of Eq. 6 under the L0 rule; the best is their
maximum (the exact optimum when the DP finishes).
"""

from __future__ import annotations

from dataclasses import replace

from ...errors import ExactModelInapplicable, ExactModelTooLarge, NoLegalOrderError
from ...instance import Instance
from ...params import BoundParams, PeakBoundParams
from ..exact.order import exact_min_peak
from .bound import Bound
from .peak import peak_lower_bound
from .peak_contracted import contracted_peak_bound
from .peak_product import product_peak_bound

__all__ = ["peak_bounds", "best_peak_bound"]


def peak_bounds(
    inst: Instance, params: PeakBoundParams = PeakBoundParams(), bound_params: BoundParams = BoundParams()
) -> list[Bound]:
    """Each bound that applies, in a fixed order (forced liveness, product, contracted,
    exact); ``bound_params`` carries the forced-liveness and contracted-relaxation budgets."""
    out = [peak_lower_bound(inst, params=bound_params)]
    if params.product is not None:
        prod = product_peak_bound(inst, params.product)
        if prod.value > 0:
            out.append(prod)
    con = contracted_peak_bound(inst, floor=max(b.value for b in out), params=bound_params)
    if con.value > 0 or con.stopped_by_clock:
        out.append(con)
    if inst.n <= params.exact_max_nodes:
        try:
            ex = exact_min_peak(inst, max_states=params.exact_max_states)
        except (ExactModelTooLarge, ExactModelInapplicable, NoLegalOrderError):
            pass
        else:
            out.append(Bound(ex.peak, f"exact minimum-peak order (DP over {ex.states:,} down-sets)", optimal=True))
    return out


def best_peak_bound(
    inst: Instance, params: PeakBoundParams = PeakBoundParams(), bound_params: BoundParams = BoundParams()
) -> tuple[Bound, list[Bound]]:
    """The largest bound (the exact optimum when known; first on ties) and all of them; the
    best says ``stopped_by_clock`` when any of them was stopped by a wall-clock safety net
    (it might have been larger)."""
    bounds = peak_bounds(inst, params, bound_params)
    best = bounds[0]
    for b in bounds[1:]:
        if b.value > best.value or (b.optimal and b.value >= best.value):
            best = b
    if any(b.stopped_by_clock for b in bounds):
        best = replace(best, stopped_by_clock=True)
    return best, bounds
