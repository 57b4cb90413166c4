"""Product-grid segment bound: extra DDR traffic (problems 2 and 3) over *every* order of
a blocked matmul, in the style of Hong and Kung's red-blue pebble game and Irony, Toledo
and Tiskin's matmul I/O bound.

On the uniform grid of :mod:`dansched.models.bounds.traffic_grid` (``I x J`` cells, ``K``
products each, ``W = IJK`` products, rows ``A_i`` and columns ``B_j`` of ``K`` tiles),
fix any plan. Counted *arrivals*: a tile's ALLOC or SPILL_IN (one each) and a carrier's
SPILL_IN (``ppc`` each, ``ppc`` the most products one carrier feeds). Cut the schedule
after every ``R`` arrivals into ``n`` *segments* (the last one possibly shorter); so the
plan has at least ``(n - 1) R`` arrivals, of which only ``N`` (the tiles' ALLOCs) are free,
and every other one is a spill costing at least ``t`` (the least of a tile's spill traffic
and a carrier's over ``ppc``). Let ``S`` be the most tiles resident at one moment
(``cap // smallest tile`` per tier), ``C0`` the same for carriers times ``ppc``, ``c0``
for cells, and ``M = S + C0 + R + ppc - 1`` (``R + ppc - 1`` for the first segment:
nothing is resident before it).

**Segment lemma.** In a segment, let ``x_i`` (``y_j``) count the tiles of ``A_i`` (``B_j``)
resident at some moment of it, or feeding, through a carrier live across the segment's
first cut, a product of it: ``sum x + sum y <= M`` (the resident ones at the cut, the
arrivals, and at most ``ppc`` products per carrier live at the cut: resident there, or
back by a SPILL_IN counted as an arrival). A product ``y`` of cell ``c_ij`` in the
segment has its row tile counted in ``x_i`` (it was resident at the feeding operation,
in the segment, or the carrier crossed the cut), so the cell's products in the segment
are at most ``min(x_i, y_j)``. A cell *complete* in the segment (all ``K`` products in
it) has ``x_i = y_j = K``: call ``P`` and ``Q`` the rows and columns of complete cells,
``p = |P|``, ``q = |Q|``, ``L = M - (p + q) K`` what is left for the other lines. A cell
*partial* in the segment (some products in it, not all) is live at one of its cuts:
resident there (at most ``c0`` per cut) or it has a SPILL_IN or SPILL_OUT in the segment
(``e`` such events). The products of the segment are at most ``b + o``, with
``b = pqK`` (cells of ``P x Q``) and ``o`` those of at most ``h = 2 c0 + e`` partial cells
outside ``P x Q`` (``c0 + e`` in the first segment), each of value ``min(x_i, y_j)`` with a
line outside ``P`` or ``Q``: at most
``max over Lc + Lr = L of T(p, h, Lc) + T(q, h, Lr) + isqrt(h Lr Lc)`` and at most
``h min(K, L)``, where ``T(p, h, L)`` is the most ``h`` cells take from lines of at most
``K`` tiles, ``L`` in all, each line serving at most ``p`` cells (greedy: full lines
first), and ``isqrt(h Lr Lc)`` bounds the cells with both lines outside (Cauchy-Schwarz:
``sum min(x_i, y_j) <= sqrt(h sum x_i y_j)``).

**Global.** Products of partial cells outside ``P x Q`` belong to cells never complete
in one segment; each such cell crosses a cut, resident there (at most ``c0`` per cut) or
spilled across it (a spill of its own); so their products add up to at most
``K ((n - 1) c0 + sigma)`` with ``sigma`` cell spills, and the events add up to at most
``2 sigma``. A plan with ``n`` segments and ``sigma`` cell spills therefore needs
``sum_s (b_s + o_s) >= W`` under those two sums; for any ``lambda`` in ``[0, 1]`` and
``mu >= 0`` (Lagrangian relaxation, weak duality) the left side is at most
``sum_s Phi_s(lambda, mu) + lambda K ((n - 1) c0 + sigma) + 2 mu sigma`` with
``Phi_s = max over p, q, e of b + (1 - lambda) o - mu e`` (``e`` on a grid that is exact
up to ``EXACT_EVENTS``, then geometric: a cell between two grid points gets the value of the
upper one and the penalty of the lower one). When that falls short of ``W`` the pair
``(n, sigma)`` is impossible, so every plan costs at least the least
``t max(0, (n - 1) R - N) + sigma * t_cell`` over the pairs not ruled out. Every ``R``
gives a bound; the best over the sweep (``BoundParams.segment_steps`` values of ``R``
from ``S / 2`` to ``3 S``) is returned. Counting bytes: capacities become tile counts by
the smallest tile, and costs are each spill's own traffic, so uneven tiles stay sound.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from ...instance import Instance
from ...params import BoundParams, ProductParams
from .bound import Bound
from .traffic_grid import CellGrid, find_product_grid, least_spill, resident_count

__all__ = ["segment_traffic_bound", "sweep_values"]

EXACT_EVENTS = 96  # partial-cell events per segment evaluated one by one; beyond, a geometric grid
LAMBDAS = np.linspace(0.0, 1.0, 41)
MUS = np.array([0, 0.25, 0.5, 1, 1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32, 64])


@lru_cache(maxsize=4096)
def _take(p: int, h: int, k: int, most: int) -> np.ndarray:
    """``T(p, h, L)`` for ``L = 0..most``: the most ``h`` cells take from lines of at most
    ``k`` tiles and ``L`` tiles in all, each line serving at most ``p`` cells. Greedy (full
    lines first, the fullest serving the most cells): the ``x``-th tile joins line
    ``(x - 1) // k``, which serves ``min(p, h - line * p)`` cells, so each tile adds that."""
    line = np.arange(most) // k
    per_tile = np.clip(np.minimum(p, h - line * p), 0, None)
    return np.concatenate(([0], np.cumsum(per_tile)))


@lru_cache(maxsize=65536)
def _outside(p: int, q: int, h: int, budget: int, k: int) -> int:
    """The most ``h`` partial cells outside ``P x Q`` take with ``budget`` tiles left for the
    other lines (module docstring), the largest over ``Lc + Lr = budget``; the
    Cauchy-Schwarz term in reals, the total rounded down (products are whole)."""
    if p > q:
        p, q = q, p  # the bound is symmetric in (rows, columns)
    most = 1 << max(budget, 1).bit_length()  # one table per power of two serves every budget below it
    lc = np.arange(budget + 1)
    lr = budget - lc
    both = _take(p, h, k, most)[lc] + _take(q, h, k, most)[lr] + np.sqrt(float(h) * lc * lr)
    return min(int(math.floor(float(both.max()) + 1e-9)), h * min(k, budget))


def _event_grid(limit: int) -> list[int]:
    grid = list(range(min(EXACT_EVENTS, limit) + 1))
    x = grid[-1]
    while x < limit:
        x = min(limit, int(x * 1.1) + 1)
        grid.append(x)
    return grid


def _phi(m: int, h_base: int, shape: tuple[int, int, int]) -> np.ndarray:
    """``Phi(lambda, mu)`` of one segment of ``m`` countable tiles, ``h_base`` partial cells
    without events, on an ``I x J x K`` grid, for every pair of :data:`LAMBDAS` x :data:`MUS`."""
    n_rows, n_cols, k = shape
    blocks, outs, events = [], [], []
    grid = _event_grid(max(n_rows * n_cols - h_base, 0))
    for p in range(n_rows + 1):
        for q in range(n_cols + 1):
            if (p == 0) != (q == 0):
                continue
            budget = m - (p + q) * k
            if budget < 0:
                continue
            prev = -1
            for e in grid:
                h = min(h_base + e, n_rows * n_cols)
                blocks.append(p * q * k)
                outs.append(_outside(p, q, h, budget, k))
                events.append(prev + 1)
                prev = e
    b = np.array(blocks, dtype=float)
    o = np.array(outs, dtype=float)
    ev = np.array(events, dtype=float)
    val = b[None, None, :] + (1 - LAMBDAS)[:, None, None] * o[None, None, :] - MUS[None, :, None] * ev[None, None, :]
    return val.max(axis=2)


def _bound_for(r: int, shape, s_tiles: int, c0_car: int, ppc: int, c0: int, n_tiles: int, t: int, t_cell: int):
    """The least cost of the ``(n, sigma)`` pairs not ruled out for segment length ``r``."""
    n_rows, n_cols, k = shape
    w = n_rows * n_cols * k
    extra = max(ppc - 1, 0)
    rest = _phi(s_tiles + c0_car + r + extra, 2 * c0, shape)
    first = _phi(r + extra, c0, shape)
    lam = LAMBDAS[:, None]
    mu = MUS[None, :]
    best: int | None = None
    sigma = 0
    while best is None or sigma * t_cell < best:
        n = 1
        while True:
            cost = t * max(0, (n - 1) * r - n_tiles) + sigma * t_cell
            if best is not None and cost >= best:
                break
            cap = lam * k * ((n - 1) * c0 + sigma) + 2 * mu * sigma
            if float(np.min((n - 1) * rest + first + cap)) >= w:
                best = cost
                break
            n += 1
            if n > w + 2:  # every segment holds a product: never reached
                break
        sigma += 1
        if sigma > n_rows * n_cols * k:
            break
    return best if best is not None else 0


def sweep_values(s_tiles: int, steps: int) -> list[int]:
    """The segment lengths tried: ``steps`` values from ``S / 2`` to ``3 S`` (at least 1)."""
    lo, hi = max(1, s_tiles // 2), max(2, 3 * s_tiles)
    if steps == 1:
        return [max(1, (lo + hi) // 2)]
    return sorted({lo + round(i * (hi - lo) / (steps - 1)) for i in range(steps)})


def segment_traffic_bound(inst: Instance, params: BoundParams = BoundParams(), grid: CellGrid | None = None) -> Bound:
    """The segment bound of the module docstring on the product grid found (or given), best
    over the sweep of ``R``; 0, and why, without a grid."""
    if grid is None:
        grid = find_product_grid(inst, params.peak.product or ProductParams())
    if grid is None:
        return Bound(0, "product-grid segments: no uniform product grid of cells found")
    tiles = [b for line in grid.rows + grid.cols for b in line]
    carriers = sorted(set(grid.row_carriers) | set(grid.col_carriers))
    cells = [c for row in grid.cells for c in row]
    ppc = grid.per_carrier if carriers else 0
    s_tiles = resident_count(inst, tiles)
    c0_car = ppc * resident_count(inst, carriers) if carriers else 0
    t = least_spill(inst, tiles)
    if carriers:
        t = min(t, least_spill(inst, carriers) // max(ppc, 1))
    c0 = resident_count(inst, cells)
    t_cell = least_spill(inst, cells)
    best, where = 0, 0
    for r in sweep_values(s_tiles, params.segment_steps):
        v = _bound_for(r, grid.shape, s_tiles, c0_car, max(ppc, 1), c0, len(tiles), t, t_cell)
        if v > best:
            best, where = v, r
    how = f"best at R = {where} arrivals per segment" if best else "no segment length forces a spill"
    return Bound(
        best,
        f"all orders: product-grid segments (Hong-Kung style) on the {grid.describe()}, "
        f"{s_tiles} tiles resident at most, {len(sweep_values(s_tiles, params.segment_steps))} segment "
        f"lengths tried: {how}",
    )
