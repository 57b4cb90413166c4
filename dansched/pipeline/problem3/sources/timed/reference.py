"""The reference order the time-driven scheduler follows: operations ranked by it, the
buffers each operation needs, the next use of each buffer (paper Eq. 26) and the
priority of a ready task (the criticality h(v) of Eq. 20, or the reference rank).

The reference is a topological order of the instance (normally the Stage-2 order,
whose memory behaviour is known to be good); spill ids in it are ignored.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .....graph import bottom_level, topological_order
from .....instance import KIND_ALLOC, KIND_OP, Instance

__all__ = ["Operations", "NextUse", "task_priority"]


@dataclass(frozen=True)
class Operations:
    """The operations of an instance in reference order.

    ``ops``: operation ids by rank; ``rank``: node -> position among all nodes of the
    reference; ``index``: operation id -> position in ``ops``; ``bufs``: node -> the
    distinct buffers an operation uses, sorted (empty for ALLOC and FREE);
    ``pred_allocs``: node -> buffers whose ALLOC is an operation's predecessor though
    the operation does not use them (it must follow that ALLOC all the same)."""

    ops: list[int]
    rank: list[int]
    index: dict[int, int]
    bufs: list[list[int]]
    pred_allocs: list[list[int]]

    @classmethod
    def of(cls, inst: Instance, reference: Sequence[int]) -> Operations:
        """Rank the operations by ``reference``; ValueError unless it holds every node."""
        n = inst.n
        L = inst.lists()
        rank = [0] * n
        seen = 0
        for v in reference:
            if 0 <= v < n:
                rank[v] = seen
                seen += 1
        if seen != n:
            raise ValueError("timed_schedule needs a reference order of every node of the instance")
        kind = L.kind
        ops = sorted((v for v in range(n) if kind[v] == KIND_OP), key=rank.__getitem__)
        bufs = [sorted(set(L.bufs[v])) if kind[v] == KIND_OP else [] for v in range(n)]
        pred_allocs = [
            sorted({L.node_buf[u] for u in L.pred[v] if kind[u] == KIND_ALLOC} - set(bufs[v]))
            if kind[v] == KIND_OP
            else []
            for v in range(n)
        ]
        return cls(ops=ops, rank=rank, index={v: i for i, v in enumerate(ops)}, bufs=bufs, pred_allocs=pred_allocs)


class NextUse:
    """ν(b, k) of Eq. 26 over the reference order: the position in ``ops`` of buffer
    ``b``'s first user not yet emitted, ``len(ops)`` when none is left. An emitted
    node stays emitted, so each buffer keeps a pointer into its sorted user positions
    that only moves forward."""

    def __init__(self, inst: Instance, operations: Operations, emitted: Sequence[bool]) -> None:
        L = inst.lists()
        index = operations.index
        self._users = [sorted(index[u] for u in set(L.users[b])) for b in range(inst.num_buffers)]
        self._ptr = [0] * inst.num_buffers
        self._ops = operations.ops
        self._emitted = emitted  # the emission's live flags, read, never written

    def __call__(self, b: int) -> int:
        idx = self._users[b]
        i = self._ptr[b]
        ops, emitted = self._ops, self._emitted
        while i < len(idx) and emitted[ops[idx[i]]]:
            i += 1
        self._ptr[b] = i
        return idx[i] if i < len(idx) else len(ops)


def task_priority(inst: Instance, rank: Sequence[int], priority: str) -> list[int]:
    """Per node, how urgent it is among the ready tasks of its pipe (larger first):
    ``"tail"``, the criticality h(v) of Eq. 20 (longest path in cycles, own cycles
    included, to a sink of the instance graph); ``"rank"``, earlier in the reference
    order first."""
    if priority == "tail":
        L = inst.lists()
        return bottom_level(L.pred, L.cycles, topological_order(inst))
    n = inst.n
    return [n - r for r in rank]
