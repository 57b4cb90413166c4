"""The reader of the product grid (dansched.models.bounds.grid) on hand-built 2 x 2
blocked matmuls: every field of the carrier graph and of the L0C product relation stated
by hand, the three grids built on it, and variants that are not grids."""

from __future__ import annotations

from dataclasses import dataclass, field

from dansched.generate import GraphBuilder
from dansched.models.bounds.grid import carrier_graph, product_relation
from dansched.models.bounds.peak_product import find_grids
from dansched.models.bounds.traffic_grid import find_product_grid
from dansched.params import ProductParams
from dansched.stages.dlr.wave_search import detect_grid


@dataclass
class Mm:
    """Node and buffer ids of the hand-built graph: tiles ``A[i]`` (rows), ``B[j]``
    (columns) in L1; per cell ``(i, j)`` the carriers ``a[i, j]`` (L0A), ``b[i, j]`` (L0B),
    the cell ``C[i, j]`` (L0C) and the operations that use them."""

    g: GraphBuilder = field(default_factory=GraphBuilder)
    A: list[int] = field(default_factory=list)
    B: list[int] = field(default_factory=list)
    load: dict[int, int] = field(default_factory=dict)  # tile -> its COPY_IN
    a: dict[tuple[int, int], int] = field(default_factory=dict)
    b: dict[tuple[int, int], int] = field(default_factory=dict)
    C: dict[tuple[int, int], int] = field(default_factory=dict)
    move_a: dict[tuple[int, int], int] = field(default_factory=dict)
    move_b: dict[tuple[int, int], int] = field(default_factory=dict)
    mm: dict[tuple[int, int], int] = field(default_factory=dict)
    out: dict[tuple[int, int], int] = field(default_factory=dict)
    U: int = -1  # a UB tile (with ``direct`` or ``tap``)
    tap: int = -1  # the operation on ``U`` and ``b[0, 0]`` (with ``tap``)


def _matmul(direct=None, tap=False) -> Mm:
    """``C[i, j] = A[i] B[j]`` on a 2 x 2 grid, K = 1: MOVE A[i] -> a, MOVE B[j] -> b,
    MATMUL(a, b, C), COPY_OUT(C). ``direct``: the cell whose MATMUL also reads the UB tile
    ``U``; ``tap``: an operation TAP(U, b[0, 0]) without an edge to any other operation."""
    m = Mm()
    g = m.g
    for tiles in (m.A, m.B):
        for _ in range(2):
            t = g.alloc(128, "L1")
            tiles.append(t)
            m.load[t] = g.op("COPY_IN", "MTE2", 10, [t])
    if direct is not None or tap:
        m.U = g.alloc(64, "UB")
    for i in range(2):
        for j in range(2):
            a, b, c = g.alloc(64, "L0A"), g.alloc(64, "L0B"), g.alloc(128, "L0C")
            m.a[i, j], m.b[i, j], m.C[i, j] = a, b, c
            m.move_a[i, j] = g.op("MOVE", "MTE1", 5, [m.A[i], a], after=[m.load[m.A[i]]])
            m.move_b[i, j] = g.op("MOVE", "MTE1", 5, [m.B[j], b], after=[m.load[m.B[j]]])
            extra = [m.U] if (i, j) == direct else []
            m.mm[i, j] = g.op("MATMUL", "CUBE", 20, [a, b, c, *extra], after=[m.move_a[i, j], m.move_b[i, j]])
            m.out[i, j] = g.op("COPY_OUT", "FIXP", 5, [c], after=[m.mm[i, j]])
            if tap and (i, j) == (0, 0):
                m.tap = g.op("TAP", "VECTOR", 1, [m.U, b])
            for x in (a, b, c):
                g.free(x)
    for t in [*m.A, *m.B, *([m.U] if m.U >= 0 else [])]:
        g.free(t)
    return m


CELLS = [(i, j) for i in range(2) for j in range(2)]


def test_carrier_graph_by_hand():
    m = _matmul()
    inst = m.g.build("mm2")
    g = carrier_graph(inst)
    assert g.single == {inst.hw.tier_index(t) for t in ("L0A", "L0B", "L0C")}
    for ij in CELLS:
        i, j = ij
        a, b, c = m.a[ij], m.b[ij], m.C[ij]
        assert g.tiles[m.move_a[ij]] == (m.A[i],) and g.carriers[m.move_a[ij]] == (a,)
        assert g.tiles[m.mm[ij]] == () and g.carriers[m.mm[ij]] == (a, b, c)
        # the MOVEs feed the MATMUL through their carrier (a DAG edge each); nothing else links
        assert g.links_out[m.move_a[ij]] == ((a, m.mm[ij]),)
        assert g.links_out[m.move_b[ij]] == ((b, m.mm[ij]),)
        assert g.links_in[m.mm[ij]] == tuple(sorted([(a, m.move_a[ij]), (b, m.move_b[ij])]))
        assert g.links_out[m.mm[ij]] == ((c, m.out[ij]),)  # MATMUL -> COPY_OUT share the cell
        assert g.links_in[m.out[ij]] == ((c, m.mm[ij]),)
        assert g.sources[a] == {m.A[i]} and g.sources[b] == {m.B[j]}
        assert c not in g.sources  # MATMUL and COPY_OUT hold only L0 buffers
        assert g.users[a] == g.users[b] == g.users[c] == 2
    for t in m.A + m.B:
        assert g.links_out[m.load[t]] == () and g.users[t] == 3  # COPY_IN and two MOVEs


def test_product_relation_by_hand():
    m = _matmul()
    inst = m.g.build("mm2")
    rel = product_relation(inst, inst.hw.tier_index("L0C"))
    assert rel is product_relation(inst, inst.hw.tier_index("L0C"))  # read once
    assert set(rel.fed) == {m.mm[ij] for ij in CELLS}  # the COPY_OUTs touch a cell, no tile feeds them
    for ij in CELLS:
        i, j = ij
        a, b, c = m.a[ij], m.b[ij], m.C[ij]
        assert rel.cells[m.mm[ij]] == rel.cells[m.out[ij]] == (c,)
        assert rel.carriers[m.mm[ij]] == (a, b) and rel.carriers[m.out[ij]] == ()
        assert rel.fed[m.mm[ij]] == {(m.A[i], a), (m.B[j], b)}
        for op in (m.move_a[ij], m.move_b[ij], m.mm[ij], m.out[ij]):
            assert rel.reached[op] == {c}
        assert rel.carried[a] == {m.A[i]} and rel.carried[b] == {m.B[j]}
        assert rel.served[a] == rel.served[b] == {c}
        assert rel.first_users[c] == (m.mm[ij],)  # the COPY_OUT follows the MATMUL
        # scan pairs: a carrier's users -- 2 for each of a, b
        assert rel.pairs[m.move_a[ij]] == 2 and rel.pairs[m.mm[ij]] == 4 and rel.pairs[m.out[ij]] == 0
    assert not any(rel.cells[m.load[t]] or m.load[t] in rel.reached for t in m.A + m.B)
    assert len(rel.reached) == 16 and len(rel.carried) == len(rel.served) == 8 and len(rel.first_users) == 4


def test_grids_built_on_the_reader_by_hand():
    m = _matmul()
    inst = m.g.build("mm2")
    cg = find_product_grid(inst)
    assert cg is not None and cg.cell_tier == "L0C" and cg.shape == (2, 2, 1)
    assert cg.cells == ((m.C[0, 0], m.C[0, 1]), (m.C[1, 0], m.C[1, 1]))
    assert cg.rows == ((m.A[0],), (m.A[1],)) and cg.cols == ((m.B[0],), (m.B[1],))
    assert cg.row_carriers == tuple(sorted(m.a.values())) and cg.col_carriers == tuple(sorted(m.b.values()))
    assert cg.per_carrier == 1
    tg = detect_grid(inst)
    assert tg is not None and tg.shape == (2, 2, 1)
    assert tg.ops == [[[m.mm[0, 0]], [m.mm[0, 1]]], [[m.mm[1, 0]], [m.mm[1, 1]]]]
    assert tg.sources == {m.mm[i, j]: (m.A[i], m.B[j]) for i, j in CELLS}
    assert find_grids(inst) == []  # the peak bound needs at least 3 x 3 (or a DP gain on 2 x 2)


def test_work_cap_counts_scan_pairs():
    """The products (the MATMULs) have 4 scan pairs each: 16 in all."""
    inst = _matmul().g.build("mm2")
    assert find_product_grid(inst, ProductParams(max_feeds=16)) is not None
    assert find_product_grid(inst, ProductParams(max_feeds=15)) is None


def test_direct_tile_makes_no_grid():
    """One MATMUL also reads a UB tile: the relation says so, and no consumer sees a grid
    (a product with three tiles; a key operation with a direct source)."""
    m = _matmul(direct=(1, 0))
    inst = m.g.build("mm2u")
    rel = product_relation(inst, inst.hw.tier_index("L0C"))
    assert rel.fed[m.mm[1, 0]] == {(m.A[1], m.a[1, 0]), (m.B[0], m.b[1, 0]), (m.U, -1)}
    assert rel.fed[m.mm[0, 1]] == {(m.A[0], m.a[0, 1]), (m.B[1], m.b[0, 1])}
    assert carrier_graph(inst).sources[m.C[1, 0]] == {m.U}
    assert find_product_grid(inst) is None
    assert detect_grid(inst) is None
    assert find_grids(inst) == []


def test_co_user_without_edge_is_a_source_not_a_feed():
    """TAP uses carrier ``b[0, 0]`` and a UB tile with no DAG edge to the MOVE or the
    MATMUL: not linked (the product relation ignores it), yet a source of the carrier (the
    wave search's undirected reading), which breaks the wave grid and not the uniform one."""
    m = _matmul(tap=True)
    inst = m.g.build("mm2tap")
    cg = carrier_graph(inst)
    assert cg.links_out[m.tap] == () and cg.links_in[m.tap] == ()
    assert cg.sources[m.b[0, 0]] == {m.B[0], m.U}
    rel = product_relation(inst, inst.hw.tier_index("L0C"))
    assert rel.fed[m.mm[0, 0]] == {(m.A[0], m.a[0, 0]), (m.B[0], m.b[0, 0])}
    assert m.tap not in rel.reached and rel.carried[m.b[0, 0]] == {m.B[0]}
    assert rel.pairs[m.mm[0, 0]] == 5  # b[0, 0] has three users now
    grid = find_product_grid(inst)
    assert grid is not None and grid.shape == (2, 2, 1)
    assert detect_grid(inst) is None  # MATMUL(0, 0) has two sources on its L0B port
