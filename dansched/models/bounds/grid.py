"""The product grid of a blocked reduction as the graph states it: the one reader of that
structure. The peak bound (:mod:`dansched.models.bounds.peak_product`, its "Definitions"),
the traffic bounds (:mod:`dansched.models.bounds.traffic_grid`, its "The grid") and the
wave search (:mod:`dansched.stages.dlr.wave_search`, its "Structure") build their own grids
from what this module reads; none of them walks the graph for it.

Words (read from the graph and the hardware's tier roles, never from names):

- a *tile* is a buffer of a peak tier (L1/UB); a *carrier* a buffer of a single-residency
  tier (L0A/L0B/L0C);
- a *link* ``(w, x, y)``: operations ``w != y`` both use carrier ``x`` and a DAG edge runs
  ``w -> y`` -- ``w`` *feeds* ``y`` through ``x`` (the MOVE filling L0A, the MATMUL
  reading it). :class:`CarrierGraph` holds the links of every operation, both ways, with
  the tiles and carriers each operation uses, read once per instance;
- for a *cell tier* ``T`` (a single-residency tier: the L0C accumulator of an output
  block) the *cells* are the buffers of ``T`` and only buffers of the other
  single-residency tiers carry. The *product relation* of ``T`` (:class:`ProductRelation`,
  read once per instance and tier) gives, for every operation ``v``: its cells; the tiles
  *feeding* ``v`` -- its own (*direct*) and those of the operations linked to ``v``
  through a carrier; the cells ``v`` *reaches* -- its own and those of the operations it
  is linked to; its carriers. Per carrier: the tiles it passes to an operation on a cell
  and the cells its users touch; per cell: its *first users* (those without a DAG
  predecessor among the cell's users). A tile feeds a cell (peak_product) when an
  operation using the tile reaches the cell; a *product* (traffic_grid) is an operation on
  exactly one cell that some tile feeds;
- the *sources* of a carrier ``x`` (the wave search's reading, :attr:`CarrierGraph.sources`)
  are the buffers outside the single-residency tiers held by the operations using ``x``,
  DAG edge or not (the L1 tile a MOVE copies into L0A): the wave search keeps only
  operations all of whose buffers are carriers, reached through them.

The searches cap their work by *scan pairs*: an operation's (carrier, user of the carrier)
pairs, over its carriers (:attr:`ProductRelation.pairs`), summed over the operations a
search looks at (``ProductParams.max_feeds``).
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from dataclasses import dataclass

from ...instance import Instance

__all__ = ["CarrierGraph", "ProductRelation", "carrier_graph", "product_relation"]


@dataclass(frozen=True)
class CarrierGraph:
    """The links and buffer roles of every node (module docstring), cell tier aside. Per
    node ``v`` (empty for ALLOC / FREE): ``tiles[v]``, ``carriers[v]`` and ``spillable[v]``
    (its buffers outside the single-residency tiers) in its Bufs order; ``links_out[w]``
    the sorted ``(carrier, y)`` of the links ``(w, carrier, y)``, ``links_in[y]`` the sorted
    ``(carrier, w)``. ``sources``: carrier -> its sources (carriers with some only);
    ``users``: per buffer, how many operations use it."""

    single: frozenset[int]
    tiles: tuple[tuple[int, ...], ...]
    carriers: tuple[tuple[int, ...], ...]
    spillable: tuple[tuple[int, ...], ...]
    links_out: tuple[tuple[tuple[int, int], ...], ...]
    links_in: tuple[tuple[tuple[int, int], ...], ...]
    sources: dict[int, frozenset[int]]
    users: tuple[int, ...]


@dataclass(frozen=True)
class ProductRelation:
    """The product relation of cell tier ``tier`` (module docstring). Per node ``v``:
    ``cells[v]`` (Bufs order), ``carriers[v]`` (the buffers of the other single-residency
    tiers, Bufs order), ``tiles[v]`` (as :class:`CarrierGraph`), ``pairs[v]`` its scan
    pairs. ``fed``: operation on a cell -> ``(tile, carrier)`` pairs feeding it, carrier
    ``-1`` for a direct use; ``reached``: operation -> the cells it reaches; ``carried``:
    carrier -> the tiles it passes to an operation on a cell; ``served``: carrier -> the
    cells of its users; ``first_users``: cell -> its first users, ascending. Only
    non-empty entries are kept."""

    tier: int
    cells: tuple[tuple[int, ...], ...]
    carriers: tuple[tuple[int, ...], ...]
    tiles: tuple[tuple[int, ...], ...]
    pairs: tuple[int, ...]
    fed: dict[int, frozenset[tuple[int, int]]]
    reached: dict[int, frozenset[int]]
    carried: dict[int, frozenset[int]]
    served: dict[int, frozenset[int]]
    first_users: dict[int, tuple[int, ...]]

    def scan_pairs(self, ops: Iterable[int]) -> int:
        """The scan pairs of ``ops`` together (the work measure the searches cap)."""
        return sum(self.pairs[v] for v in ops)


_READINGS: weakref.WeakKeyDictionary[Instance, dict[int | None, object]] = weakref.WeakKeyDictionary()


def _cache(inst: Instance) -> dict[int | None, object]:
    got = _READINGS.get(inst)
    if got is None:
        got = _READINGS[inst] = {}
    return got


def carrier_graph(inst: Instance) -> CarrierGraph:
    """The :class:`CarrierGraph` of ``inst`` (read once, cached per instance: callers must
    not change it). The links come from the DAG edges: a link ``(w, x, y)`` is an edge
    ``w -> y`` whose ends share carrier ``x``."""
    cache = _cache(inst)
    got = cache.get(None)
    if isinstance(got, CarrierGraph):
        return got
    L = inst.lists()
    tiers = inst.buf_tier.tolist()
    peak = inst.is_peak_buffer().tolist()
    single = frozenset(inst.hw.tier_index(t) for t in inst.hw.single_residency_tiers)
    tiles = tuple(tuple(b for b in bs if peak[b]) for bs in L.bufs)
    carriers = tuple(tuple(b for b in bs if tiers[b] in single) for bs in L.bufs)
    spillable = tuple(tuple(b for b in bs if tiers[b] not in single) for bs in L.bufs)
    out: list[set[tuple[int, int]]] = [set() for _ in range(inst.n)]
    into: list[set[tuple[int, int]]] = [set() for _ in range(inst.n)]
    for w in range(inst.n):
        if not carriers[w]:
            continue
        held = set(carriers[w])
        for y in L.succ[w]:
            if y == w:
                continue
            for x in carriers[y]:
                if x in held:
                    out[w].add((x, y))
                    into[y].add((x, w))
    sources: dict[int, set[int]] = {}
    for v in range(inst.n):
        if spillable[v]:
            for x in carriers[v]:
                sources.setdefault(x, set()).update(spillable[v])
    graph = CarrierGraph(
        single,
        tiles,
        carriers,
        spillable,
        tuple(tuple(sorted(s)) for s in out),
        tuple(tuple(sorted(s)) for s in into),
        {x: frozenset(s) for x, s in sources.items()},
        tuple(len(us) for us in L.users),
    )
    cache[None] = graph
    return graph


def product_relation(inst: Instance, tier: int) -> ProductRelation:
    """The :class:`ProductRelation` of cell tier ``tier`` (a single-residency tier's index)
    on ``inst`` (read once, cached per instance and tier: callers must not change it)."""
    cache = _cache(inst)
    got = cache.get(tier)
    if isinstance(got, ProductRelation):
        return got
    g = carrier_graph(inst)
    tiers = inst.buf_tier.tolist()
    pred = inst.lists().pred
    n = inst.n
    cells = tuple(tuple(b for b in bs if tiers[b] == tier) if bs else () for bs in g.carriers)
    carriers = tuple(tuple(b for b in bs if tiers[b] != tier) if bs else () for bs in g.carriers)
    pairs = tuple(sum(g.users[x] for x in xs) if xs else 0 for xs in carriers)
    fed: dict[int, frozenset[tuple[int, int]]] = {}
    reached: dict[int, frozenset[int]] = {}
    carried: dict[int, set[int]] = {}
    served: dict[int, set[int]] = {}
    users: dict[int, set[int]] = {}
    for v in range(n):
        own = cells[v]
        if own:
            feeding = {(b, -1) for b in g.tiles[v]}
            for x, w in g.links_in[v]:
                if tiers[x] != tier and g.tiles[w]:
                    feeding.update((b, x) for b in g.tiles[w])
            if feeding:
                fed[v] = frozenset(feeding)
            for x in carriers[v]:
                served.setdefault(x, set()).update(own)
            for c in own:
                users.setdefault(c, set()).add(v)
        elif not g.links_out[v]:
            continue
        reach = set(own)
        for x, y in g.links_out[v]:
            if tiers[x] != tier and cells[y]:
                reach.update(cells[y])
                if g.tiles[v]:
                    carried.setdefault(x, set()).update(g.tiles[v])
        if reach:
            reached[v] = frozenset(reach)
    first_users = {c: tuple(sorted(y for y in us if us.isdisjoint(pred[y]))) for c, us in sorted(users.items())}
    rel = ProductRelation(
        tier,
        cells,
        carriers,
        g.tiles,
        pairs,
        fed,
        reached,
        {x: frozenset(s) for x, s in carried.items()},
        {x: frozenset(s) for x, s in served.items()},
        first_users,
    )
    cache[tier] = rel
    return rel
