"""The literal Stage-1 rule of the paper (Algorithm 1, Eqs. 17-21): variant ``mpas-paper``.

At step k the ready set Q_k (Eq. 17) holds the unscheduled nodes whose
predecessors are all scheduled; the next node is
``argmin <lambda(v), Delta_pk(v), -h(v), ord(v)>`` (Eq. 21) with lambda of Eq. 18,
Delta_pk of Eq. 19 and h of Eq. 20. All four keys are static, so one binary heap
gives O((V + E) log V).

Two readings this module commits to, so that the result is a valid problem-1
answer:

- the edges are the instance's plus the lifetime edges ALLOC(b) -> user -> FREE(b)
  the evaluator enforces (on the official graphs they are already implied);
- the ready set is restricted to *L0-legal* nodes: an ALLOC of an L0A/L0B/L0C
  buffer waits while its tier holds a live buffer, or while opening it would
  leave no way to close the live L0 buffers (:mod:`.l0`). A waiting ALLOC
  re-enters the heap when an L0 buffer is freed or opened. An ALLOC that the last
  completion found still allows (:func:`~.l0.witness_allows`) opens without a new
  simulation: that completion proves the step legal. Without this
  restriction Eq. 21 opens every L0 ALLOC first (their Delta_pk is 0), which the
  evaluator rejects; with it, the literal priority decides everything else.

If the restricted ready set runs dry before every node is scheduled, no L0-legal
completion was found: :func:`paper_run` returns the prefix it scheduled (Stage 1 goes on
from there, :mod:`.stage`) and :func:`paper_order` raises
:class:`~dansched.errors.NoLegalOrderError`.
"""

from __future__ import annotations

import heapq

from ...errors import NoLegalOrderError
from ...graph import MpasGraph, lambda_level
from ...instance import KIND_ALLOC, KIND_FREE
from .l0 import l0_completion_exists, quick_blocker, witness_allows

__all__ = ["paper_key", "paper_order", "paper_run"]


def paper_key(g: MpasGraph, v: int) -> tuple[int, int, int, int]:
    """Eq. 21's lexicographic key ``<lambda(v), Delta_pk(v), -h(v), ord(v)>``."""
    return (lambda_level(g.kind[v]), g.delta_pk[v], -g.h[v], v)


def paper_order(g: MpasGraph, trace: list | None = None) -> list[int]:
    """Algorithm 1 on ``g`` with the L0-legal ready set; ``trace`` (if given) receives
    ``(k, v, key)`` for every step, for step-by-step checks. Raises
    :class:`~dansched.errors.NoLegalOrderError` when the ready set runs dry."""
    order, stuck = paper_run(g, trace)
    if stuck is not None:
        raise NoLegalOrderError(f"no L0-legal order found: {stuck}")
    return order


def paper_run(g: MpasGraph, trace: list | None = None) -> tuple[list[int], str | None]:
    """:func:`paper_order`'s run: the order and None, or the prefix it scheduled
    (L0-legal, closed under predecessors) and why it stopped."""
    n = g.n
    rank = [0] * n
    for i, v in enumerate(g.topo):
        rank[v] = i
    indeg = [len(p) for p in g.preds]
    heap = [paper_key(g, v) for v in range(n) if indeg[v] == 0]
    heapq.heapify(heap)
    done = bytearray(n)
    held: dict[int, int] = {}  # L0 tier -> live buffer
    parked_on: dict[int, list[tuple[int, int, int, int]]] = {}  # live buffer -> keys it blocks
    parked_any: list[tuple[int, int, int, int]] = []  # keys to retry at the next L0 event
    needs: dict[int, dict[int, list[int]]] = {}  # live buffer -> tiers it must open before its FREE
    witness: list[int] = []  # the L0 opens of the last legal completion found, pending ones in order
    order: list[int] = []
    while heap:
        key = heapq.heappop(heap)
        v = key[3]
        t = g.l0_tier[v]
        if t >= 0 and g.kind[v] == KIND_ALLOC:
            if t in held:
                parked_on.setdefault(held[t], []).append(key)
                continue
            if held and witness_allows(g, witness, [v]):
                ok, blocker = True, -1
            else:
                blocker = quick_blocker(g, done, held, needs, g.node_buf[v])
                ok = blocker < 0
                if ok:
                    ok, blocker, opened = l0_completion_exists(g, rank, done, held, [g.node_buf[v]])
                    if ok:
                        witness = opened
            if not ok:
                (parked_on.setdefault(blocker, []) if blocker >= 0 else parked_any).append(key)
                continue
            held[t] = g.node_buf[v]
        elif t >= 0 and g.kind[v] == KIND_FREE and held.get(t) == g.node_buf[v]:
            del held[t]
            for k in parked_on.pop(g.node_buf[v], ()):
                heapq.heappush(heap, k)
        if t >= 0:
            needs.clear()
        if t >= 0 and parked_any:
            for k in parked_any:
                heapq.heappush(heap, k)
            parked_any.clear()
        done[v] = 1
        if trace is not None:
            trace.append((len(order), v, key))
        order.append(v)
        for w in g.succs[v]:
            indeg[w] -= 1
            if indeg[w] == 0:
                heapq.heappush(heap, paper_key(g, w))
    if len(order) < n:
        return order, (
            f"mpas-paper stopped after {len(order)} of {n} nodes with every ready node waiting on a "
            "single-residency tier"
        )
    return order, None
