"""Order changes Stage 2 makes for traffic (the paper's sigma(2)).

- :func:`tighten_lifetimes`: the operations keep their relative order; every ALLOC
  moves as late as its first successor allows and every FREE as early as its last
  predecessor allows, so buffers are live (and evictable) no longer than needed.

Traffic-oriented orders (reuse-aware list schedules) live in
:mod:`dansched.stages.dlr.reuse`; :func:`dansched.stages.dlr.stage.dlr_plan` compares them.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...graph import lifetime_graph
from ...instance import KIND_ALLOC, KIND_FREE, KIND_OP, Instance

__all__ = ["tighten_lifetimes", "is_topological"]


def is_topological(inst: Instance, order: Sequence[int]) -> bool:
    """``order`` is a permutation of the instance's nodes that respects every edge and
    every buffer lifetime (:func:`~dansched.graph.lifetime_graph`)."""
    if len(order) != inst.n:
        return False
    pos = [-1] * inst.n
    for i, v in enumerate(order):
        if not 0 <= v < inst.n or pos[v] >= 0:
            return False
        pos[v] = i
    preds, _ = lifetime_graph(inst)
    return all(pos[u] < pos[w] for w in range(inst.n) for u in preds[w])


def tighten_lifetimes(inst: Instance, order: Sequence[int], lazy_loads: bool = False) -> list[int]:
    """Lazy ALLOC, eager FREE (the other operations keep their relative order).

    Operations are emitted in ``order``; before one, its not-yet-emitted ancestors
    (ALLOCs, and whatever they wait for) are emitted depth-first in ``order``'s
    relative order; after any node, each FREE whose predecessors are all emitted
    follows at once. With ``lazy_loads``, an operation whose predecessors are all
    ALLOCs (a load such as COPY_IN) also waits until an operation needs it, and an
    operation whose successors are all FREEs (a store such as COPY_OUT) runs as
    soon as it is ready, so what it reads can be freed."""
    L = inst.lists()
    kind = L.kind
    pred, succ = lifetime_graph(inst)
    n = inst.n
    lazy = [
        lazy_loads and kind[v] == KIND_OP and bool(succ[v]) and all(kind[u] == KIND_ALLOC for u in pred[v])
        for v in range(n)
    ]
    eager = [
        kind[v] == KIND_FREE
        or (lazy_loads and kind[v] == KIND_OP and not lazy[v] and all(kind[w] == KIND_FREE for w in succ[v]))
        for v in range(n)
    ]
    rank = [0] * n
    for i, v in enumerate(order):
        rank[v] = i
    done = [False] * n
    missing = [len(pred[v]) for v in range(n)]
    out: list[int] = []

    def emit_one(v: int) -> None:
        done[v] = True
        out.append(v)
        for w in succ[v]:
            missing[w] -= 1

    def emit(v: int) -> None:
        # depth-first over not-yet-emitted predecessors, in order's relative order
        stack = [(v, False)]
        while stack:
            u, expanded = stack.pop()
            if done[u]:
                continue
            if expanded:
                emit_one(u)
                flush_frees(u)
                continue
            stack.append((u, True))
            todo = sorted((p for p in pred[u] if not done[p]), key=rank.__getitem__, reverse=True)
            stack.extend((p, False) for p in todo)

    def flush_frees(u: int) -> None:
        ready = [w for w in succ[u] if eager[w] and not done[w] and missing[w] == 0]
        while ready:
            w = ready.pop()
            if done[w]:
                continue
            emit_one(w)
            ready.extend(x for x in succ[w] if eager[x] and not done[x] and missing[x] == 0)

    for v in order:
        if kind[v] == KIND_OP and not done[v] and not lazy[v]:
            emit(v)
    for v in order:  # buffers no operation uses, and cache nodes left behind
        if not done[v]:
            emit(v)
    return out
