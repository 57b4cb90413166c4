"""Shared DAG helpers of the core layer: topological orders (smallest id first, Kahn),
bottom levels, the positions where an order needs each buffer, and the graph Stage 1
schedules (the instance DAG plus the buffer lifetime edges), which the exact models
of :mod:`dansched.models` and the stages share.

The graph Stage 1 (MPAS) schedules: the instance DAG plus the lifetime edges
the evaluator enforces, with the per-node figures the paper's equations use.

The evaluator accepts a problem-1 order only if every operation that uses a
buffer runs strictly between the buffer's ALLOC and FREE (docs/rules.md, section 3). The
official graphs imply those constraints through their edges; a user-supplied
graph need not, so MPAS adds them explicitly as *lifetime edges*
``ALLOC(b) -> u -> FREE(b)`` for every user ``u`` of ``b``. A cycle among the
original and lifetime edges, or one operation that needs two buffers of the
same single-residency tier (L0A/L0B/L0C), means no legal order exists:
:func:`build_mpas_graph` raises :class:`NoLegalOrderError` naming the culprit.

>>> from dansched.instance import instance_from_records
>>> inst = instance_from_records("t", [
...     {"Id": 0, "Op": "ALLOC", "BufId": 0, "Size": 4, "Type": "UB"},
...     {"Id": 1, "Op": "ADD", "Pipe": "VECTOR", "Cycles": 3, "Bufs": [0]},
...     {"Id": 2, "Op": "FREE", "BufId": 0, "Size": 4, "Type": "UB"}], [[0, 1], [1, 2]])
>>> g = build_mpas_graph(inst)
>>> g.delta_pk, g.h
([4, 0, -4], [3, 3, 0])
"""

from __future__ import annotations

import heapq
import weakref
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import NoLegalOrderError
from .instance import KIND_ALLOC, KIND_FREE, KIND_OP, Instance

__all__ = [
    "keyed_topological_order",
    "smallest_first_order",
    "topological_order",
    "bottom_level",
    "tail_after",
    "lifetime_edges",
    "lifetime_graph",
    "lifetime_successor_sets",
    "needs_positions",
    "MpasGraph",
    "build_mpas_graph",
    "lambda_level",
    "delta_pk",
    "lazy_eager_order",
]


def smallest_first_order(succs: Sequence[Sequence[int]], indeg: Sequence[int]) -> list[int]:
    """Kahn's algorithm taking the ready node of smallest id first (a heap-based ready list).
    Shorter than ``len(indeg)`` when the graph has a cycle."""
    deg = list(indeg)
    ready = [v for v, d in enumerate(deg) if d == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        v = heapq.heappop(ready)
        order.append(v)
        for w in succs[v]:
            deg[w] -= 1
            if deg[w] == 0:
                heapq.heappush(ready, w)
    return order


def topological_order(inst: Instance) -> list[int]:
    """The instance's topological order that always takes the ready node of smallest id."""
    L = inst.lists()
    return smallest_first_order(L.succ, [len(p) for p in L.pred])


def bottom_level(preds: Sequence[Sequence[int]], cycles: Sequence[int], topo: Sequence[int]) -> list[int]:
    """The criticality h(v) of paper Eq. 20: the longest path (summed cycles) from each node
    to a sink, its own cycles included; ``h(v) = c_v`` at a sink, ``c_v + max h(u)`` over
    its successors ``u`` otherwise. ``preds`` gives the graph, ``topo`` is any of its
    topological orders (the result does not depend on which).

    >>> bottom_level([[], [0], [0], [1, 2]], [2, 5, 1, 3], [0, 1, 2, 3])
    [10, 8, 4, 3]
    """
    tail = [0] * len(cycles)
    for v in reversed(topo):
        tail[v] += cycles[v]
        t = tail[v]
        for u in preds[v]:
            if t > tail[u]:
                tail[u] = t
    return tail


def tail_after(preds: Sequence[Sequence[int]], cycles: Sequence[int], topo: Sequence[int]) -> list[int]:
    """The longest path that still runs after each node finishes: ``h(v) - c_v``
    (:func:`bottom_level`, Eq. 20, without the node's own cycles).

    >>> tail_after([[], [0], [0], [1, 2]], [2, 5, 1, 3], [0, 1, 2, 3])
    [8, 3, 3, 0]
    """
    return [t - c for t, c in zip(bottom_level(preds, cycles, topo), cycles)]


def needs_positions(inst: Instance, order: Sequence[int]) -> list[list[int]]:
    """Per buffer, the sorted positions of ``order`` where it must be resident: its ALLOC,
    every operation using it and its FREE (the FREE of a spilled buffer needs a SPILL_IN)."""
    L = inst.lists()
    needs: list[list[int]] = [[] for _ in range(inst.num_buffers)]
    for i, v in enumerate(order):
        if L.kind[v] == KIND_OP:
            for b in L.bufs[v]:
                needs[b].append(i)
        else:
            needs[L.node_buf[v]].append(i)
    return needs


@dataclass(frozen=True)
class MpasGraph:
    """Per-node facts for Stage 1, as plain lists indexed by node id.

    ``preds``/``succs`` are the instance edges plus the lifetime edges; ``delta_pk``
    is Eq. 19's one-step upper-tier pressure (``+size`` for an ALLOC of an L1/UB
    buffer, ``-size`` for its FREE, 0 otherwise); ``l0_tier`` is the single-residency
    tier index of an ALLOC/FREE of an L0 buffer and -1 otherwise; ``h`` is Eq. 20."""

    n: int
    kind: list[int]
    node_buf: list[int]
    preds: list[list[int]]
    succs: list[list[int]]
    delta_pk: list[int]
    l0_tier: list[int]
    buf_alloc: list[int]
    buf_free: list[int]
    bufs: list[list[int]]
    h: list[int]
    topo: list[int]

    @property
    def ops(self) -> list[int]:
        return [v for v in range(self.n) if self.kind[v] == KIND_OP]


def lambda_level(kind: int) -> int:
    """Priority level of Eq. 18: FREE 0, operation 1, ALLOC 2 (smaller runs first)."""
    return 0 if kind == KIND_FREE else (2 if kind == KIND_ALLOC else 1)


def delta_pk(inst: Instance) -> list[int]:
    """Eq. 19: ``sum_b s_b * eta_b(v)`` over peak-tier buffers, i.e. ``+s_b`` at
    ``a_b``, ``-s_b`` at ``f_b`` and 0 at an operation."""
    peak = inst.is_peak_buffer().tolist()
    size = inst.buf_size.tolist()
    out = [0] * inst.n
    for v, (k, b) in enumerate(zip(inst.kind.tolist(), inst.node_buf.tolist())):
        if k != KIND_OP and peak[b]:
            out[v] = size[b] if k == KIND_ALLOC else -size[b]
    return out


def lifetime_edges(inst: Instance) -> Iterator[tuple[int, int]]:
    """The edges buffer lifetimes imply (docs/rules.md, section 3): per buffer ``b`` in
    index order, ``ALLOC(b) -> FREE(b)``, then ``ALLOC(b) -> u`` and ``u -> FREE(b)`` for
    each user ``u`` of ``b`` in the instance's order. A contest graph need not state them.
    """
    L = inst.lists()
    alloc, free = inst.buf_alloc.tolist(), inst.buf_free.tolist()
    for b, users in enumerate(L.users):
        a, f = alloc[b], free[b]
        yield a, f
        for u in users:
            yield a, u
            yield u, f


_LIFETIME_GRAPHS: weakref.WeakKeyDictionary[Instance, tuple[list[list[int]], list[list[int]]]] = (
    weakref.WeakKeyDictionary()
)


def lifetime_graph(inst: Instance) -> tuple[list[list[int]], list[list[int]]]:
    """Predecessor and successor lists (each sorted, no duplicates) of the instance's edges
    plus the :func:`lifetime_edges` (ALLOC before every user, every user before the FREE,
    ALLOC before FREE). Cached per instance: callers must not change the lists.

    >>> from dansched.instance import instance_from_records
    >>> inst = instance_from_records("t", [
    ...     {"Id": 0, "Op": "ALLOC", "BufId": 0, "Size": 4, "Type": "UB"},
    ...     {"Id": 1, "Op": "ADD", "Pipe": "VECTOR", "Cycles": 3, "Bufs": [0]},
    ...     {"Id": 2, "Op": "FREE", "BufId": 0, "Size": 4, "Type": "UB"}], [])
    >>> lifetime_graph(inst)
    ([[], [0], [0, 1]], [[1, 2], [2], []])
    """
    got = _LIFETIME_GRAPHS.get(inst)
    if got is not None:
        return got
    pred = [set(p) for p in inst.lists().pred]
    for u, w in lifetime_edges(inst):
        pred[w].add(u)
    preds = [sorted(p) for p in pred]
    succs: list[list[int]] = [[] for _ in range(inst.n)]
    for w, ps in enumerate(preds):
        for u in ps:
            succs[u].append(w)
    _LIFETIME_GRAPHS[inst] = (preds, succs)
    return preds, succs


def lifetime_successor_sets(inst: Instance) -> list[set[int]]:
    """The successors of :func:`lifetime_graph` as sets, filled in a fixed order (the
    instance's successor lists, then :func:`lifetime_edges`): the CP-SAT models built from
    them post their constraints in the sets' iteration order, which this keeps stable."""
    succ = [set(s) for s in inst.lists().succ]
    for u, w in lifetime_edges(inst):
        succ[u].add(w)
    return succ


def _topological(n: int, preds: list[list[int]], succs: list[list[int]]) -> list[int] | None:
    """Kahn's algorithm by smallest id (deterministic); None when the graph has a cycle."""
    out = smallest_first_order(succs, [len(p) for p in preds])
    return out if len(out) == n else None


def _check_l0_usage(inst: Instance, l0_tiers: set[int]) -> None:
    L = inst.lists()
    tiers = inst.buf_tier.tolist()
    for v in range(inst.n):
        if L.kind[v] != KIND_OP:
            continue
        seen: dict[int, int] = {}
        for b in L.bufs[v]:
            t = tiers[b]
            if t in l0_tiers:
                if t in seen:
                    raise NoLegalOrderError(
                        f"no L0-legal order exists: node {v} ({inst.op[v]}) needs buffers "
                        f"{int(inst.buf_id[seen[t]])} and {int(inst.buf_id[b])} live together in "
                        f"single-residency tier {inst.hw.tiers[t]}"
                    )
                seen[t] = b


def build_mpas_graph(inst: Instance, check_l0: bool = True) -> MpasGraph:
    """The Stage-1 graph of ``inst`` (see the module docstring); O(V + E + sum |Bufs|).
    ``check_l0=False`` skips the single-residency check (problems 2 and 3, and bounds,
    which hold without that rule); a lifetime cycle always raises."""
    L = inst.lists()
    n = inst.n
    l0 = {inst.hw.tier_index(t) for t in inst.hw.single_residency_tiers}
    if check_l0:
        _check_l0_usage(inst, l0)
    preds, succs = lifetime_graph(inst)
    topo = _topological(n, preds, succs)
    if topo is None:
        raise NoLegalOrderError(
            "no legal order exists: the edges together with the buffer lifetimes "
            "(ALLOC before every user, every user before FREE) form a cycle"
        )
    tiers = inst.buf_tier.tolist()
    l0_tier = [-1] * n
    for v in range(n):
        if L.kind[v] != KIND_OP and tiers[L.node_buf[v]] in l0:
            l0_tier[v] = tiers[L.node_buf[v]]
    return MpasGraph(
        n=n,
        kind=list(L.kind),
        node_buf=list(L.node_buf),
        preds=preds,
        succs=succs,
        delta_pk=delta_pk(inst),
        l0_tier=l0_tier,
        buf_alloc=inst.buf_alloc.tolist(),
        buf_free=inst.buf_free.tolist(),
        bufs=L.bufs,
        h=bottom_level(preds, L.cycles, topo),
        topo=topo,
    )


def lazy_eager_order(g: MpasGraph, seq: list[int]) -> list[int]:
    """The full node order that runs the non-ALLOC nodes of ``seq`` in that order with
    lazy ALLOC and eager FREE: each ALLOC just before the first node that needs it
    (after its own predecessors), every FREE as soon as it is ready. Nodes ``seq``
    leaves out follow in topological order. O(V + E).

    Given an operation sequence this is the node order it stands for (the local
    search and the exact DP work on operations). Given a whole legal order it is a
    *compaction*: relative to the operations every lifetime only shrinks (ALLOCs
    move later, FREEs earlier), so the L0 single-residency rule still holds and no
    prefix sum of Eq. 6 rises -- the linear-time stand-in for the input restart on
    graphs too large for the greedy (:class:`dansched.params.MpasParams` ``restart_work``)."""
    done = bytearray(g.n)
    pend = [len(p) for p in g.preds]
    out: list[int] = []

    def emit(x: int) -> None:
        ready = [x]
        while ready:
            y = ready.pop()
            done[y] = 1
            out.append(y)
            for w in g.succs[y]:
                pend[w] -= 1
                if pend[w] == 0 and g.kind[w] == KIND_FREE and not done[w]:
                    ready.append(w)

    def pull(x: int) -> None:
        """Emit ``x`` after its unscheduled predecessors (depth first, in ``g.preds`` order)."""
        stack = [(x, 0)]
        while stack:
            v, i = stack.pop()
            preds = g.preds[v]
            while i < len(preds) and done[preds[i]]:
                i += 1
            if i < len(preds):
                stack.append((v, i + 1))
                stack.append((preds[i], 0))
            elif not done[v]:
                emit(v)

    for x in seq:
        if not done[x] and g.kind[x] != KIND_ALLOC:
            pull(x)
    for x in g.topo:
        if not done[x]:
            pull(x)
    return out


def keyed_topological_order(
    nodes: Sequence[int], edges: Iterable[tuple[int, int]], key: Mapping[int, Any]
) -> list[int] | None:
    """A topological order of ``nodes`` under ``edges`` (both ends in ``nodes``), the
    smallest ``key`` first among the ready nodes; None when the edges form a cycle."""
    succ: dict[int, list[int]] = {v: [] for v in nodes}
    indeg = {v: 0 for v in nodes}
    for u, v in edges:
        succ[u].append(v)
        indeg[v] += 1
    heap = [(key[v], v) for v in nodes if indeg[v] == 0]
    heapq.heapify(heap)
    out: list[int] = []
    while heap:
        _, v = heapq.heappop(heap)
        out.append(v)
        for w in succ[v]:
            indeg[w] -= 1
            if indeg[w] == 0:
                heapq.heappush(heap, (key[w], w))
    return out if len(out) == len(nodes) else None
