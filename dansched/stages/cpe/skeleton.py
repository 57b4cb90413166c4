"""The fixed memory skeleton of a Stage-2 plan: the order constraints that keep its
memory behaviour exactly (paper Eq. 14, the refinement set R(sigma2, G2)).

A refined order keeps (a) every edge of the augmented DAG G2, (b) the subsequence
of memory events (ALLOC, FREE, SPILL_OUT, SPILL_IN) unchanged, and (c) every
operation inside the residency segment it ran in (after the event that made
each of its buffers resident, before the event that ends that residency). Then
the residency segments, the address-reuse edges and the spill edges the
evaluator derives are the same, so traffic, spill count, offsets and physical
peak cannot change. Only the per-pipe sequences — and so the timing — can.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ...instance import KIND_OP, Instance
from ...kernels.csr import csr_of_lists, transposed
from ...simulate import AugmentedGraph, spill_of_node

__all__ = ["Skeleton", "memory_skeleton", "is_refinement", "critical_chain"]


@dataclass(frozen=True)
class Skeleton:
    """``order_preds[v]``: nodes that must precede ``v`` in any refined order (G2 edges,
    the memory-event chain, residency brackets); ``timing`` is G2 itself."""

    timing: AugmentedGraph
    order_preds: list[list[int]]
    memory_events: tuple[int, ...]  # in their fixed order

    @property
    def n(self) -> int:
        return self.timing.n

    def order_succs(self) -> list[list[int]]:
        """The successors of each node under the order constraints (computed once; read only)."""
        return self._order_succs

    @cached_property
    def order_pred_csr(self) -> tuple[np.ndarray, np.ndarray]:
        """``order_preds`` as CSR arrays (for the compiled list scheduler)."""
        return csr_of_lists(self.order_preds)

    @cached_property
    def order_succ_csr(self) -> tuple[np.ndarray, np.ndarray]:
        """The order successors as CSR arrays, each list ascending (as :meth:`order_succs`)."""
        return transposed(*self.order_pred_csr)

    @cached_property
    def _order_succs(self) -> list[list[int]]:
        out: list[list[int]] = [[] for _ in range(self.n)]
        for v, ps in enumerate(self.order_preds):
            for u in ps:
                out[u].append(v)
        return out


def _event_buffer(inst: Instance, graph: AugmentedGraph, v: int) -> int:
    if v < inst.n:
        return int(inst.node_buf[v])
    return graph.spill_buf[spill_of_node(inst.n, v)[0]]


def memory_skeleton(inst: Instance, order: Sequence[int], graph: AugmentedGraph, chain: bool = True) -> Skeleton:
    """Order constraints of Eq. 14 for the valid plan whose schedule is ``order`` and
    whose augmented DAG (from :func:`dansched.simulate.evaluate`) is ``graph``.

    With ``chain=False`` the memory events are not chained: any topological order of the
    remaining constraints (G2 and the residency brackets) still gives the same segments,
    offsets, spill and reuse edges — G2's reuse edges already order the segments that share
    addresses — but the memory events may interleave differently. Stage 2 uses that
    freedom (:mod:`dansched.pipeline.problem3.resequence`); Stage 3 keeps the chain."""
    L = inst.lists()
    preds: list[set[int]] = [set(ps) for ps in graph.preds]
    events: list[int] = []
    last_event: dict[int, int] = {}  # buffer -> event that started its current segment
    pending: dict[int, list[int]] = {}  # buffer -> operations run in its current segment
    for v in order:
        if v < inst.n and L.kind[v] == KIND_OP:
            for b in L.bufs[v]:
                if b in last_event:
                    preds[v].add(last_event[b])
                pending.setdefault(b, []).append(v)
            continue
        if events and chain:
            preds[v].add(events[-1])
        events.append(v)
        b = _event_buffer(inst, graph, v)
        for u in pending.pop(b, []):
            preds[v].add(u)
        last_event[b] = v
    return Skeleton(graph, [sorted(p) for p in preds], tuple(events))


def is_refinement(skel: Skeleton, order: Sequence[int]) -> bool:
    """True when ``order`` is a permutation of the skeleton's nodes that keeps every constraint."""
    if len(order) != skel.n:
        return False
    pos = [-1] * skel.n
    for i, v in enumerate(order):
        if not 0 <= v < skel.n or pos[v] >= 0:
            return False
        pos[v] = i
    return all(pos[u] < pos[v] for v in range(skel.n) for u in skel.order_preds[v])


def critical_chain(skel: Skeleton, order: Sequence[int], start: Sequence[int], end: Sequence[int]) -> list[int]:
    """The chain that sets the makespan (Eq. 34 on the timed graph): from the last node
    to finish, repeatedly step to the G2 predecessor or the previous node on the same
    pipe whose finish equals the current start. Returned first to last."""
    g = skel.timing
    pos = {v: i for i, v in enumerate(order)}
    prev_on_pipe: dict[int, int] = {}
    last: dict[int, int] = {}
    for v in order:
        p = g.pipe[v]
        if p >= 0:
            if p in last:
                prev_on_pipe[v] = last[p]
            last[p] = v
    v = max(order, key=lambda x: (end[x], -pos[x]))
    chain = [v]
    while start[v] > 0:
        cands = [u for u in g.preds[v] if end[u] == start[v]]
        q = prev_on_pipe.get(v)
        if q is not None and end[q] == start[v]:
            cands.append(q)
        if not cands:
            break
        v = max(cands, key=lambda x: pos[x])
        chain.append(v)
    chain.reverse()
    return chain
