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
from ...kernels import skeleton as kernel
from ...kernels.csr import int64_array, lists_of, transposed
from ...simulate import AugmentedGraph, spill_of_node

__all__ = ["Skeleton", "memory_skeleton", "is_refinement", "BindingChains", "critical_chain"]


@dataclass(frozen=True)
class Skeleton:
    """The order constraints as CSR arrays: node ``v`` must follow every node of
    ``order_pred_idx[order_pred_ptr[v]:order_pred_ptr[v + 1]]`` (G2 edges, the memory-event
    chain, residency brackets; ascending, no repeats) in any refined order; ``timing`` is G2
    itself. The list views are built on first use and kept: treat all as read-only."""

    timing: AugmentedGraph
    order_pred_ptr: np.ndarray
    order_pred_idx: np.ndarray
    memory_events: tuple[int, ...]  # in their fixed order

    @property
    def n(self) -> int:
        return self.timing.n

    @property
    def order_pred_csr(self) -> tuple[np.ndarray, np.ndarray]:
        """The order predecessors as CSR arrays (for the compiled list scheduler)."""
        return self.order_pred_ptr, self.order_pred_idx

    @cached_property
    def order_succ_csr(self) -> tuple[np.ndarray, np.ndarray]:
        """The order successors as CSR arrays, each list ascending."""
        return transposed(self.order_pred_ptr, self.order_pred_idx)

    @cached_property
    def order_preds(self) -> list[list[int]]:
        """The order predecessors of each node, ascending."""
        return lists_of(self.order_pred_ptr, self.order_pred_idx)

    def order_succs(self) -> list[list[int]]:
        """The successors of each node under the order constraints, ascending (computed once; read only)."""
        return self._order_succs

    @cached_property
    def _order_succs(self) -> list[list[int]]:
        return lists_of(*self.order_succ_csr)


def memory_skeleton(inst: Instance, order: Sequence[int], graph: AugmentedGraph, chain: bool = True) -> Skeleton:
    """Order constraints of Eq. 14 for the valid plan whose schedule is ``order`` and
    whose augmented DAG (from :func:`dansched.simulate.evaluate`) is ``graph``: G2's edges;
    for each operation, the event that started the current residency segment of each of its
    buffers; for each memory event, the previous one and the operations that ran in the
    segment it ends (one compiled pass: :mod:`dansched.kernels.skeleton`).

    With ``chain=False`` the memory events are not chained: any topological order of the
    remaining constraints (G2 and the residency brackets) still gives the same segments,
    offsets, spill and reuse edges — G2's reuse edges already order the segments that share
    addresses — but the memory events may interleave differently. Stage 2 uses that
    freedom (:mod:`dansched.pipeline.problem3.stage3.resequence`); Stage 3 keeps the chain."""
    order_arr = int64_array(order)
    n = graph.n
    is_event = np.ones(n, dtype=np.int64)
    is_event[: inst.n] = inst.kind != KIND_OP
    event_buf = np.full(n, -1, dtype=np.int64)
    event_buf[: inst.n] = inst.node_buf
    event_buf[inst.n :] = [graph.spill_buf[spill_of_node(inst.n, v)[0]] for v in range(inst.n, n)]
    ptr, idx = kernel.order_constraints(
        order_arr,
        graph.pred_ptr,
        graph.pred_idx,
        is_event,
        event_buf,
        int64_array(inst.bufs_ptr),
        int64_array(inst.bufs_idx),
        inst.num_buffers,
        chain,
    )
    events = order_arr[is_event[order_arr] == 1]
    return Skeleton(graph, ptr, idx, tuple(events.tolist()))


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


class BindingChains:
    """The binding predecessors of a timed plan (graph ``g``, schedule ``order``, times
    ``start``/``end``): a node that starts at ``t > 0`` waits for a G2 predecessor, or the
    previous node on its pipe, that finishes at ``t`` (docs/rules.md, timing); among several,
    the latest in the order. :meth:`behind` walks that relation back from any node, and
    :func:`critical_chain` from the last node to finish (Eq. 34)."""

    def __init__(self, g: AugmentedGraph, order: Sequence[int], start: Sequence[int], end: Sequence[int]) -> None:
        self.g, self.order, self.start, self.end = g, order, start, end
        self.pos = {v: i for i, v in enumerate(order)}
        self.prev_on_pipe: dict[int, int] = {}
        last: dict[int, int] = {}
        for v in order:
            p = g.pipe[v]
            if p >= 0:
                if p in last:
                    self.prev_on_pipe[v] = last[p]
                last[p] = v

    def binding(self, v: int) -> int | None:
        """The predecessor ``v`` waits for, ``None`` when it starts at 0 or waits for none."""
        g, start, end, pos = self.g, self.start, self.end, self.pos
        if start[v] <= 0:
            return None
        cands = [u for u in g.pred_idx[g.pred_ptr[v] : g.pred_ptr[v + 1]].tolist() if end[u] == start[v]]
        q = self.prev_on_pipe.get(v)
        if q is not None and end[q] == start[v]:
            cands.append(q)
        return max(cands, key=lambda x: pos[x]) if cands else None

    def behind(self, v: int, tasks: int | None = None) -> list[int]:
        """The chain of binding predecessors that ends at ``v``, first to last; with
        ``tasks``, only as far back as that many tasks (nodes on a pipe) before ``v``."""
        chain = [v]
        seen = 0
        while tasks is None or seen < tasks:
            u = self.binding(chain[-1])
            if u is None:
                break
            chain.append(u)
            seen += self.g.pipe[u] >= 0
        chain.reverse()
        return chain


def critical_chain(g: AugmentedGraph, order: Sequence[int], start: Sequence[int], end: Sequence[int]) -> list[int]:
    """The chain that sets the makespan (Eq. 34 on the timed graph ``g``): from the last node
    to finish, repeatedly step to the G2 predecessor or the previous node on the same
    pipe whose finish equals the current start (:class:`BindingChains`). Returned first to
    last."""
    chains = BindingChains(g, order, start, end)
    last = max(order, key=lambda x: (end[x], -chains.pos[x]))
    return chains.behind(last)
