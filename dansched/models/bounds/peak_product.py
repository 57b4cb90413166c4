"""Product-pattern lower bound on maxV_stay (problem 1, paper Eq. 6) over every order.

Blocked matmul (``C[i][j] += A[i][k] B[k][j]``) and attention (``S[q][kb] = Q[q] K[kb]^T``)
share a shape: *cells* -- buffers of a single-residency tier (an L0C accumulator per output
block) -- each fed by one *row* set and one *column* set of L1/UB buffers. The L0 rule
runs the cells one after the other, and a row or column set stays live from the first
cell it feeds to the last, so whichever line is finished first, the lines of the other
orientation are all still open. This module finds that shape in the product relation
read from the graph (:mod:`dansched.models.bounds.grid`, never from names) and turns the
argument into a bound.

Definitions (all read from the graph, for one single-residency *cell tier* ``T``):

- the *span* of a cell ``c`` (a buffer of ``T``) is the stretch of the order from its
  first to its last user. Two buffers of ``T`` never have overlapping lifetimes (the L0
  rule), so in every valid order the spans of the cells are disjoint and the cells run
  in a sequence ``c_1, c_2, ...``;
- a peak buffer ``p`` *feeds* cell ``c`` when an operation ``w`` uses ``p`` and either
  ``w`` uses ``c`` itself (*direct*), or ``w`` uses a *carrier* ``x`` (a buffer of another
  single-residency tier) and a DAG edge runs from ``w`` to an operation ``y`` that uses
  both ``x`` and ``c`` (the MOVE into L0A before the MATMUL);
- a *grid* is a list of row sets ``R_1..R_n`` and column sets ``C_1..C_m`` of peak
  buffers (all disjoint) with a distinct cell ``c_ij`` fed by every buffer of ``R_i``
  and of ``C_j`` (rows' cell sets pairwise disjoint, columns' too, each row's meeting each
  column's). Row weights ``r_i = s(R_i)``, column weights ``q_j = s(C_j)``, totals ``R, Q``.

**Lemma (live lines).** Number the grid cells in the order their spans run, and let
``beta_u`` be the first user of the ``u``-th grid cell. A buffer ``p`` of a line ``L``
is live at ``beta_u`` when ``L`` has a grid cell before ``u`` and a grid cell after
``u``, except possibly buffers that reach every later cell through a carrier live at
``beta_u``. Proof: ``p`` feeds the earlier cell through an op ``w`` that is (direct) a
user of that cell or (carrier) a DAG predecessor of one, so ``ALLOC(p) < w < beta_u``.
It feeds the later cell ``c`` through ``w'``: directly, then ``w'`` lies in the span of
``c``, after ``beta_u``; or through a carrier ``x`` used by a user ``y`` of ``c``, with
``y > beta_u``; if ``x`` is not live at ``beta_u`` its lifetime, which contains ``y``,
starts after ``beta_u``, so ``w' > beta_u``. Then ``FREE(p) > w' > beta_u``. At most one
buffer per single-residency tier is live at ``beta_u``, so the exception costs at most
``E = sum over carrier tiers of the largest weight that feeds through one carrier``;
``E = 0`` when (*exact carriers*) each cell has a unique first user (the only user of
the cell without a DAG predecessor among its users), that user holds a carrier of every
carrier tier, and no buffer of a carrier tier shares an operation with two different
cells -- then the live carriers at ``beta_u`` are those of cell ``u``'s first user and
serve cell ``u`` only.

So ``maxV_stay >= val(u) - E`` for every ``u``, where ``val(u)`` is the weight of the
lines with a grid cell before ``u`` and one after ``u``.

**Theorem (n, m >= 3).** In every sequence of the grid cells some ``u`` has::

    val(u) >= min( Q + min_i r_i,  R + min_j q_j,  R + Q - max r - max q,
                   Q - max q + R - top4(r),  R - max r + Q - top4(q) )

(``top4``: the sum of the four largest weights). Proof: let ``s`` be the first cell that
completes a line (all its cells run by ``s``).
(1) ``s`` completes a row ``a`` and a column ``b`` together. Every other row has its cell
in column ``b`` before ``s`` and is unfinished, so has a cell after ``s``; the same for
the other columns: ``val(s) >= R - r_a + Q - q_b``.
(2) ``s`` completes a row only (a column only is the mirror image, giving the last
term). Every column has its row-``a`` cell by ``s``. Let ``c`` be the first cell that
completes a column; for ``s < u < c`` every column has a cell before ``u`` and, being
unfinished, one after ``u``. (2a) If some such ``u`` has a row with a cell before and
after it, ``val(u) >= Q + min r``. (2b) Otherwise, for ``s < u <= c - 2`` the row of cell
``u`` has a cell before ``u+1`` hence none after ``u+1``; having ``m >= 3`` cells it has
one before ``u`` hence none after ``u``: it finishes at ``u``, and its other cells cannot
lie in ``(s, u)`` (the same reasoning would finish it there), so they run before ``s``;
then at ``u' = s + 1`` that row has a cell before and one at ``u`` after unless
``u = s + 1``. So ``c <= s + 3``. At ``c``: every column other than the one finished
has its row-``a`` cell before ``c`` and is unfinished; every row other than that of
cell ``c`` has its cell in the finished column before ``c``, and only rows finished by
``c`` -- row ``a`` and at most two finished at ``s+1, s+2`` -- lack a later cell:
``val(c) >= Q - max q + R - top4(r)``. QED.

With every row and column of weight ``K * size`` on an ``n x n`` grid the minimum is
``(n + 1) K size``: the n + 1 lines the row-by-row order keeps, which it is then proven
optimal.

:func:`product_peak_bound` searches grids greedily (any grid found gives a valid bound)
over every single-residency tier as the cell tier and returns the best, with the grid's
shape in its method.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ...instance import Instance
from ...params import ProductParams
from .bound import Bound
from .grid import ProductRelation, product_relation

__all__ = ["ProductGrid", "feeds", "find_grids", "grid_value", "product_peak_bound"]


@dataclass(frozen=True)
class ProductGrid:
    """A grid of the theorem: line weights, the cell tier, and the exception ``E``."""

    tier: str
    rows: tuple[int, ...]  # weights r_i
    cols: tuple[int, ...]  # weights q_j
    exception: int  # E of the lemma (0 with exact carriers)

    @property
    def value(self) -> int:
        return max(grid_value(self.rows, self.cols), grid_exact_value(self.rows, self.cols)) - self.exception


EXACT_GRID_CELLS = 16  # grids (or their heaviest sub-grid) of at most this many cells get the exact DP


def grid_exact_value(rows, cols) -> int:
    """``min over cell sequences of max over u of val(u)`` exactly, by dynamic programming
    over the sets of cells already run, on the heaviest sub-grid of at most
    :data:`EXACT_GRID_CELLS` cells (a sub-grid is a grid, so this stays a bound; it is
    the lemma's relaxation solved exactly). ``val`` depends only on the set ``D`` run
    before ``u`` and on ``u``: the open touched lines of ``D`` less those whose last
    cell is ``u``; so ``best(D + u) = min over u of max(best(D), val(D, u))``."""
    rs = tuple(sorted(rows, reverse=True))
    qs = tuple(sorted(cols, reverse=True))
    n, m = len(rs), len(qs)
    while n * m > EXACT_GRID_CELLS:
        if n >= m:
            n -= 1
        else:
            m -= 1
    if n < 2 or m < 2 or sum(rs[:n]) + sum(qs[:m]) <= grid_value(rows, cols):
        return 0  # the sub-grid cannot beat the theorem: skip the DP
    return _grid_dp(rs[:n], qs[:m])


@lru_cache(maxsize=256)
def _grid_dp(rs: tuple[int, ...], qs: tuple[int, ...]) -> int:
    n, m = len(rs), len(qs)
    N = n * m
    row_mask = [sum(1 << (i * m + j) for j in range(m)) for i in range(n)]
    col_mask = [sum(1 << (i * m + j) for i in range(n)) for j in range(m)]
    lines = list(zip(row_mask, rs)) + list(zip(col_mask, qs))
    cell_lines = [(row_mask[u // m], rs[u // m], col_mask[u % m], qs[u % m]) for u in range(N)]
    best = {0: 0}
    layer = [0]
    for _ in range(N):
        nxt: dict[int, int] = {}
        for D in layer:
            b = best[D]
            open_w = sum(w for mask, w in lines if mask & D and mask & ~D)
            for u in range(N):
                bit = 1 << u
                if D & bit:
                    continue
                rm, rw, cm, cw = cell_lines[u]
                v = open_w
                if rm & D and rm & ~D == bit:
                    v -= rw
                if cm & D and cm & ~D == bit:
                    v -= cw
                if v < b:
                    v = b
                Du = D | bit
                if v < nxt.get(Du, 1 << 62):
                    nxt[Du] = v
        best = nxt
        layer = list(nxt)
    return best[(1 << N) - 1]


def grid_value(rows, cols) -> int:
    """The theorem's minimum over its five cases (0 unless both sides have >= 3 lines)."""
    if len(rows) < 3 or len(cols) < 3:
        return 0
    R, Q = sum(rows), sum(cols)
    rs, qs = sorted(rows, reverse=True), sorted(cols, reverse=True)
    return max(
        0,
        min(
            Q + rs[-1],
            R + qs[-1],
            R + Q - rs[0] - qs[0],
            Q - qs[0] + R - sum(rs[:4]),
            R - rs[0] + Q - sum(qs[:4]),
        ),
    )


class _TooMuchWork(Exception):
    pass


def feeds(inst: Instance, tier: int, params: ProductParams = ProductParams()):
    """``(sig, carrier_weight, exact)`` for cell tier ``tier``, from its product relation
    (:func:`~dansched.models.bounds.grid.product_relation`): ``sig[p]`` the frozenset of
    cells (buffers of ``tier``) peak buffer ``p`` feeds; ``carrier_weight[t]`` the largest
    peak weight that feeds through one carrier of tier ``t``; ``exact`` whether the
    exact-carrier conditions of the lemma hold (then ``E = 0``). :class:`_TooMuchWork`
    when the operations holding a peak buffer have more than ``params.max_feeds`` scan
    pairs."""
    rel = product_relation(inst, tier)
    tiers = inst.buf_tier.tolist()
    sizes = inst.buf_size.tolist()
    holders = [w for w in range(inst.n) if rel.tiles[w]]
    if rel.scan_pairs(holders) > params.max_feeds:
        raise _TooMuchWork
    sig: dict[int, set[int]] = {}
    for w in holders:
        got = rel.reached.get(w)
        if got:
            for p in rel.tiles[w]:
                sig.setdefault(p, set()).update(got)
    carrier_weight: dict[int, int] = {}
    for x, pset in rel.carried.items():
        t = tiers[x]
        carrier_weight[t] = max(carrier_weight.get(t, 0), sum(sizes[p] for p in pset))
    carrier_tiers = {tiers[x] for x in rel.carried}
    exact = _one_cell_per_carrier(rel, tiers, carrier_tiers) and _first_users_hold_carriers(rel, tiers, carrier_tiers)
    return {p: frozenset(s) for p, s in sig.items()}, carrier_weight, exact


def _one_cell_per_carrier(rel: ProductRelation, tiers: list[int], carrier_tiers: set[int]) -> bool:
    """No buffer of a carrier tier shares operations with two different cells (so the
    carrier a cell's first user holds serves that cell only)."""
    return all(len(cells) <= 1 for x, cells in rel.served.items() if tiers[x] in carrier_tiers)


def _first_users_hold_carriers(rel: ProductRelation, tiers: list[int], carrier_tiers: set[int]) -> bool:
    """Each cell of the relation's tier has a unique user without a DAG predecessor among
    its users (so that user runs first in every order), and it holds a buffer of every
    carrier tier."""
    for first in rel.first_users.values():
        if len(first) != 1:
            return False
        if not carrier_tiers <= {tiers[x] for x in rel.carriers[first[0]]}:
            return False
    return True


def find_grids(inst: Instance, params: ProductParams = ProductParams()) -> list[ProductGrid]:
    """Grids found greedily, per cell tier: seed a row group, take as columns the groups
    meeting it that are pairwise disjoint, then as rows the groups meeting every column,
    pairwise disjoint (buffers with the same cell set form one group)."""
    sizes = inst.buf_size.tolist()
    out: list[ProductGrid] = []
    for tname in inst.hw.single_residency_tiers:
        t = inst.hw.tier_index(tname)
        try:
            sig, carrier_weight, exact = feeds(inst, t, params)
        except _TooMuchWork:
            continue
        groups: dict[frozenset, int] = {}
        for p, s in sig.items():
            groups[s] = groups.get(s, 0) + sizes[p]
        keys = sorted(groups, key=lambda s: (-groups[s] * len(s), min(s), len(s)))
        by_cell: dict[int, list[int]] = {}
        for gi, s in enumerate(keys):
            for c in s:
                by_cell.setdefault(c, []).append(gi)
        E = 0 if exact else sum(carrier_weight.values())
        best: ProductGrid | None = None
        for seed in range(min(len(keys), params.max_seeds)):
            g = _grow(keys, groups, by_cell, seed)
            if g is None:
                continue
            rows, cols = g
            cand = ProductGrid(tname, tuple(rows), tuple(cols), E)
            if best is None or _rank(cand) > _rank(best):
                best = cand
        if best is not None and best.value > 0:
            out.append(best)
    return out


def _rank(g: ProductGrid) -> tuple[int, int]:
    """Cheap ranking of candidate grids (the exact DP runs only on the winner)."""
    return grid_value(g.rows, g.cols), sum(sorted(g.rows)[-4:]) + sum(sorted(g.cols)[-4:])


def _disjoint_pick(cands: list[int], keys) -> list[int]:
    picked: list[int] = []
    used: set[int] = set()
    for gi in cands:
        if used.isdisjoint(keys[gi]):
            picked.append(gi)
            used |= keys[gi]
    return picked


def _grow(keys, groups, by_cell, seed: int):
    """Columns: groups meeting the seed, pairwise disjoint; rows: groups meeting every
    column, pairwise disjoint, not a column. Deterministic (groups in ``keys`` order)."""
    meet = sorted({gi for c in keys[seed] for gi in by_cell[c]} - {seed})
    cols = _disjoint_pick(meet, keys)
    if len(cols) < 3:
        return None
    colset = set(cols)
    count: dict[int, int] = {}
    for cj in cols:
        for gi in {gi for c in keys[cj] for gi in by_cell[c]}:
            if gi not in colset:
                count[gi] = count.get(gi, 0) + 1
    full = sorted(gi for gi, k in count.items() if k == len(cols))
    rows = _disjoint_pick(([seed] if seed in full else []) + [g for g in full if g != seed], keys)
    if len(rows) < 3:
        return None
    return [groups[keys[g]] for g in rows], [groups[keys[g]] for g in cols]


def product_peak_bound(inst: Instance, params: ProductParams = ProductParams()) -> Bound:
    """The best grid bound (see the module docstring), or 0 when no grid is found."""
    best: ProductGrid | None = None
    for g in find_grids(inst, params):
        if best is None or g.value > best.value:
            best = g
    if best is None:
        return Bound(0, "product pattern: no row x column grid of cells found")
    ex = "exact carriers" if best.exception == 0 else f"minus {best.exception} for live carriers"
    return Bound(
        best.value,
        f"product pattern: {len(best.rows)} x {len(best.cols)} grid of {best.tier} cells, "
        f"the first finished line leaves the other side open ({ex})",
    )
