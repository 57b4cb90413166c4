"""The product grid of a blocked matmul, read from the graph, and the live-lines traffic
bound over every order (problems 2 and 3).

**The grid** (detected, never named: built on the product relation of
:mod:`dansched.models.bounds.grid`). A *cell tier* is a single-residency tier of the
hardware's roles (an L0C accumulator per output block). A *product* is an operation ``y``
using exactly one buffer ``c`` of the cell tier (its *cell*) and fed by exactly two *tiles*
(L1/UB buffers): used by ``y`` itself, or by an operation ``w`` that shares a *carrier*
``x`` (a buffer of another single-residency tier: the L0A/L0B copy of a MOVE) with ``y``,
with a DAG edge ``w -> y``. Tiles with the same set of cells form a *line*. The grid is
*uniform* when the lines split into rows ``A_1..A_I`` and columns ``B_1..B_J`` with row
cell sets pairwise disjoint, column cell sets pairwise disjoint, row ``i`` and column ``j``
sharing exactly one cell ``c_ij`` (every cell so named); every line holds ``K`` tiles and
every cell has ``K`` products, which use distinct tiles of its row and distinct tiles of
its column (so each tile of ``A_i`` feeds each cell of row ``i`` once). Operations on a
cell that no tile feeds (the COPY_OUT) are not products; anything else irregular means no
grid, and the bounds that need one are 0 and say so.

In a plan, a buffer is resident while an operation uses it (docs/rules.md, section 6.1); a
product's tile was resident at its feeding operation ``w``; a carrier written before a
moment and read after it is live across it, and a resident tier holds at most
``cap // smallest size`` of the buffers of one kind.

**Live-lines bound.** Let ``y*`` be the product at which the first line completes (its
last product runs), say row ``i*`` (columns: the mirror image, with rows and columns
swapped; the bound is the smaller of the two cases). At ``y*``: every column ``j`` is
unfinished (no line completes before ``y*``, and ``y*`` completes at most column ``j*``
of its own cell), and for ``j != j*`` its row-``i*`` cell is complete. Such a column
either has a *not-started* cell (no product yet), or a started unfinished cell, which is
logically live at ``y*`` and is not ``c_i*j*``. Cells live at ``y*`` other than
``c_i*j*`` are resident -- at most ``c0 - 1`` of them, ``c0 = cap // smallest cell`` --
or in an open spill (``sigma`` of them, each a spill of its own). So at least
``J - c0 - sigma`` columns have a not-started cell. Each tile ``b`` of such a column fed a
product of the complete cell ``c_i*j`` (ALLOC before ``y*``) and feeds a product of the
not-started cell after ``y*``, through an operation after ``y*`` (then ``b`` is live at
``y*``) or before it, whose carrier is then live across ``y*`` -- at most ``X`` products
so, ``X = ppc * (resident carriers of the column side + carriers in open spills)``,
``ppc`` the most products one carrier feeds. So the column tiles' tier holds at ``y*``
at least ``(lightest J - c0 - sigma columns) - X * (largest tile)`` live bytes; past its
capacity they sit in open spills, at least ``rho`` traffic per byte (1 for backed tiles,
2 else). The bound is the least, over ``sigma`` and the spilled carriers, of that
traffic plus ``sigma`` cell spills and the carrier spills (accumulator spills can stand
in for tile reloads, and the minimum takes that into account). QED.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ...hardware import spill_traffic
from ...instance import Instance
from ...params import ProductParams
from .bound import Bound
from .grid import product_relation

__all__ = ["CellGrid", "find_product_grid", "live_lines_traffic_bound"]


@dataclass(frozen=True)
class CellGrid:
    """A uniform product grid (module docstring): ``cells[i][j]`` the buffer of cell
    ``c_ij``; ``rows[i]`` / ``cols[j]`` the tile buffers of each line; ``depth`` = ``K``;
    ``per_carrier`` the most products one carrier feeds (0 without carriers);
    ``row_carriers`` / ``col_carriers`` the carrier buffers that pass row / column tiles."""

    cell_tier: str
    cells: tuple[tuple[int, ...], ...]
    rows: tuple[tuple[int, ...], ...]
    cols: tuple[tuple[int, ...], ...]
    depth: int
    per_carrier: int
    row_carriers: tuple[int, ...]
    col_carriers: tuple[int, ...]

    @property
    def shape(self) -> tuple[int, int, int]:
        return len(self.rows), len(self.cols), self.depth

    @property
    def products(self) -> int:
        return len(self.rows) * len(self.cols) * self.depth

    def describe(self) -> str:
        i, j, k = self.shape
        return f"{i} x {j} grid of {self.cell_tier} cells, {k} products each"


class _NoGrid(Exception):
    pass


def _products(inst: Instance, tier: int, params: ProductParams):
    """``[(y, cell, ((tile, carrier or -1), ...))]`` for every product of cell tier ``tier``
    (an operation using one buffer of ``tier`` that some tile feeds), from its product
    relation (:func:`~dansched.models.bounds.grid.product_relation`); :class:`_NoGrid` when
    the operations using one buffer of ``tier`` have more than ``params.max_feeds`` scan
    pairs."""
    rel = product_relation(inst, tier)
    on_one = [y for y in range(inst.n) if len(rel.cells[y]) == 1]
    if rel.scan_pairs(on_one) > params.max_feeds:
        raise _NoGrid
    return [(y, rel.cells[y][0], tuple(sorted(rel.fed[y]))) for y in on_one if y in rel.fed]


def _grid_for_tier(inst: Instance, tier: int, params: ProductParams) -> CellGrid | None:
    prods = _products(inst, tier, params)
    if not prods:
        return None
    for _y, _c, feeds in prods:
        if len({b for b, _x in feeds}) != 2:
            return None
    sig: dict[int, set[int]] = {}
    for _y, c, feeds in prods:
        for b, _x in feeds:
            sig.setdefault(b, set()).add(c)
    lines: dict[frozenset[int], list[int]] = {}
    for b, cs in sig.items():
        lines.setdefault(frozenset(cs), []).append(b)
    keys = sorted(lines, key=lambda s: min(lines[s]))
    # two-colour the lines: lines that share a cell are of different orientations
    colour: dict[frozenset[int], int] = {}
    by_cell: dict[int, list[frozenset[int]]] = {}
    for s in keys:
        for c in s:
            by_cell.setdefault(c, []).append(s)
    if any(len(v) != 2 for v in by_cell.values()):
        return None
    for start in keys:
        if start in colour:
            continue
        if colour:
            return None  # more than one connected grid
        colour[start] = 0
        stack = [start]
        while stack:
            s = stack.pop()
            for c in s:
                for o in by_cell[c]:
                    if o == s:
                        continue
                    if o not in colour:
                        colour[o] = 1 - colour[s]
                        stack.append(o)
                    elif colour[o] == colour[s]:
                        return None
    rows = [s for s in keys if colour[s] == 0]
    cols = [s for s in keys if colour[s] == 1]
    cell_at: dict[tuple[int, int], int] = {}
    for i, r in enumerate(rows):
        for j, q in enumerate(cols):
            both = r & q
            if len(both) != 1:
                return None
            cell_at[i, j] = next(iter(both))
    if len(set(cell_at.values())) != len(by_cell):
        return None
    k = len(lines[rows[0]])
    if any(len(lines[s]) != k for s in keys):
        return None
    row_of = {b: i for i, s in enumerate(rows) for b in lines[s]}
    col_of = {b: j for j, s in enumerate(cols) for b in lines[s]}
    seen: dict[int, tuple[set[int], set[int]]] = {}
    per_carrier: dict[int, int] = {}
    row_car: set[int] = set()
    col_car: set[int] = set()
    for _y, c, feeds in prods:
        tiles = sorted({b for b, _x in feeds})
        row_tiles = [b for b in tiles if b in row_of]
        col_tiles = [b for b in tiles if b in col_of]
        if len(row_tiles) != 1 or len(col_tiles) != 1:
            return None
        got_a, got_q = seen.setdefault(c, (set(), set()))
        if row_tiles[0] in got_a or col_tiles[0] in got_q:
            return None  # two products of one cell share a tile
        got_a.add(row_tiles[0])
        got_q.add(col_tiles[0])
        for b, x in feeds:
            if x >= 0:
                per_carrier[x] = per_carrier.get(x, 0) + 1
                (row_car if b in row_of else col_car).add(x)
    if any(len(a) != k for a, _q in seen.values()):
        return None
    name = inst.hw.tiers[tier]
    return CellGrid(
        name,
        tuple(tuple(cell_at[i, j] for j in range(len(cols))) for i in range(len(rows))),
        tuple(tuple(sorted(lines[s])) for s in rows),
        tuple(tuple(sorted(lines[s])) for s in cols),
        k,
        max(per_carrier.values(), default=0),
        tuple(sorted(row_car)),
        tuple(sorted(col_car)),
    )


def find_product_grid(inst: Instance, params: ProductParams = ProductParams()) -> CellGrid | None:
    """The largest uniform product grid over the single-residency tiers as cell tiers (the
    first such tier on ties), or None."""
    best: CellGrid | None = None
    for name in inst.hw.single_residency_tiers:
        try:
            g = _grid_for_tier(inst, inst.hw.tier_index(name), params)
        except _NoGrid:
            continue
        if g is not None and (best is None or g.products > best.products):
            best = g
    return best


def resident_count(inst: Instance, bufs) -> int:
    """At most how many of ``bufs`` are resident at one moment: per tier, its capacity over
    the smallest of them there, and never more than there are of them (a capacity larger
    than the graph can fill sizes nothing: the segment bound's tables follow this count)."""
    sizes = inst.buf_size.tolist()
    tiers = inst.buf_tier.tolist()
    smallest: dict[int, int] = {}
    count: dict[int, int] = {}
    for b in set(bufs):
        smallest[tiers[b]] = min(smallest.get(tiers[b], sizes[b]), sizes[b])
        count[tiers[b]] = count.get(tiers[b], 0) + 1
    return sum(min(int(inst.hw.capacity[inst.hw.tiers[t]]) // s, count[t]) for t, s in smallest.items())


def least_spill(inst: Instance, bufs) -> int:
    """The least traffic of one spill of a buffer of ``bufs``."""
    sizes = inst.buf_size.tolist()
    backed = inst.buf_backed.tolist()
    return min(spill_traffic(sizes[b], backed[b]) for b in bufs)


def _lines_case(inst: Instance, grid: CellGrid, lines, carriers) -> tuple[int, str]:
    """The live-lines bound when the first complete line is of the other orientation;
    ``lines`` are the tile lines counted, ``carriers`` the carriers that pass them."""
    sizes = inst.buf_size.tolist()
    backed = inst.buf_backed.tolist()
    tiers = inst.buf_tier.tolist()
    tiles = [b for line in lines for b in line]
    if len({tiers[b] for b in tiles}) != 1:
        return 0, "the lines' tiles lie in several tiers"
    cap = int(inst.hw.capacity[inst.hw.tiers[tiers[tiles[0]]]])
    weights = sorted(sum(sizes[b] for b in line) for line in lines)
    biggest = max(sizes[b] for b in tiles)
    rho = min(spill_traffic(sizes[b], backed[b]) / sizes[b] for b in tiles)
    cells = [c for row in grid.cells for c in row]
    c0 = resident_count(inst, cells)
    t_cell = least_spill(inst, cells)
    ppc = max(grid.per_carrier, 1 if carriers else 0)
    x0 = ppc * resident_count(inst, carriers) if carriers else 0
    t_car = least_spill(inst, carriers) if carriers else 0
    best, how = math.inf, ""
    for sigma in range(len(lines) + 1):
        open_lines = len(lines) - c0 - sigma
        for spilled in range(len(tiles) + 1 if carriers else 1):
            exempt = x0 + ppc * spilled
            live = sum(weights[: max(open_lines, 0)]) - exempt * biggest
            excess = live - cap
            cost = math.ceil(max(excess, 0) * rho - 1e-9) + sigma * t_cell + spilled * t_car
            if cost < best:
                best, how = cost, f"{sigma} accumulator spill(s), {max(open_lines, 0)} open lines"
            if excess <= 0:
                break
        if open_lines <= 0:
            break
    return int(best), how


def live_lines_traffic_bound(inst: Instance, params: ProductParams = ProductParams(), grid=None) -> Bound:
    """The live-lines bound of the module docstring on the product grid found (or given),
    the smaller of its two cases; 0, and why, without a grid."""
    if grid is None:
        grid = find_product_grid(inst, params)
    if grid is None:
        return Bound(0, "live lines: no uniform product grid of cells found")
    by_cols, how_c = _lines_case(inst, grid, grid.cols, grid.col_carriers)
    by_rows, how_r = _lines_case(inst, grid, grid.rows, grid.row_carriers)
    value, how = (by_cols, how_c) if by_cols <= by_rows else (by_rows, how_r)
    return Bound(
        value,
        f"all orders: live lines on the {grid.describe()}: when the first line completes, the "
        f"lines across it with a cell not started are live; least case: {how}",
    )
