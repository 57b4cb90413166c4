"""Operation-level view of the Stage-1 graph (:class:`OpModel`), shared by the exact
down-set DP (:mod:`dansched.models.exact.order`) and Stage 1's local search
(:mod:`dansched.stages.mpas.improve`): with lazy ALLOC and eager FREE an order is
determined by its operation sequence, and a peak-tier buffer is live from its first
opener to its last closer.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...graph import MpasGraph
from ...instance import KIND_OP

__all__ = ["OpModel", "build_op_model", "peak_op_model"]


@dataclass(frozen=True)
class OpModel:
    """Operation-level view of a graph: op index ``i`` stands for node ``ops[i]``."""

    ops: np.ndarray
    op_preds: list[list[int]]  # op indices that must run earlier (through cache nodes)
    op_succs: list[list[int]]
    open_ptr: np.ndarray  # CSR over buffers: op indices whose run needs the ALLOC first
    open_idx: np.ndarray
    close_ptr: np.ndarray  # CSR over buffers: op indices the FREE waits for
    close_idx: np.ndarray
    size: np.ndarray  # peak-tier size of each buffer (0 for other tiers)
    tier_bufs: list[np.ndarray]  # buffers of each single-residency tier
    bufs_of_op: list[list[int]]
    l0_of_buf: list[int]  # single-residency tier of each buffer, -1 for the others
    valid: bool  # every buffer has at least one opener and one closer


def _cache_reach(g: MpasGraph, start: int, forward: bool) -> list[int]:
    """Operations reached from ``start`` through cache nodes only."""
    nxt = g.succs if forward else g.preds
    out, seen, stack = [], {start}, [start]
    while stack:
        v = stack.pop()
        for w in nxt[v]:
            if w in seen:
                continue
            seen.add(w)
            if g.kind[w] == KIND_OP:
                out.append(w)
            else:
                stack.append(w)
    return out


def peak_op_model(inst, g: MpasGraph) -> OpModel:
    """:func:`build_op_model` for ``inst``: peak-tier sizes, and each buffer's tier when it
    is a single-residency (L0) tier."""
    peak = inst.is_peak_buffer().tolist()
    size = inst.buf_size.tolist()
    l0 = {inst.hw.tier_index(t) for t in inst.hw.single_residency_tiers}
    tiers = inst.buf_tier.tolist()
    return build_op_model(
        g,
        [size[b] if peak[b] else 0 for b in range(len(size))],
        [tiers[b] if tiers[b] in l0 else -1 for b in range(len(size))],
        len(inst.hw.tiers),
    )


def build_op_model(g: MpasGraph, peak_size: list[int], l0_tier_of_buf: list[int], n_tiers: int) -> OpModel:
    """Build the :class:`OpModel` (``peak_size[b]``: s_b when b is in L1/UB, else 0)."""
    ops = [v for v in range(g.n) if g.kind[v] == KIND_OP]
    index = {v: i for i, v in enumerate(ops)}
    op_preds = [sorted({index[u] for u in _cache_reach(g, v, False)}) for v in ops]
    op_succs: list[list[int]] = [[] for _ in ops]
    for i, ps in enumerate(op_preds):
        for p in ps:
            op_succs[p].append(i)
    nb = len(g.buf_alloc)
    openers = [sorted({index[u] for u in _cache_reach(g, g.buf_alloc[b], True)}) for b in range(nb)]
    closers = [sorted({index[u] for u in _cache_reach(g, g.buf_free[b], False)}) for b in range(nb)]
    valid = all(openers[b] and closers[b] for b in range(nb))

    def csr(lists: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
        ptr = np.zeros(len(lists) + 1, dtype=np.int64)
        ptr[1:] = np.cumsum([len(x) for x in lists])
        idx = np.array([i for x in lists for i in x], dtype=np.int64)
        return ptr, idx

    op_, oi = csr(openers)
    cp, ci = csr(closers)
    bufs_of_op: list[list[int]] = [[] for _ in ops]
    for b in range(nb):
        for i in set(openers[b]) | set(closers[b]):
            bufs_of_op[i].append(b)
    tier_bufs = [np.array([b for b in range(nb) if l0_tier_of_buf[b] == t], dtype=np.int64) for t in range(n_tiers)]
    return OpModel(
        ops=np.array(ops, dtype=np.int64),
        op_preds=op_preds,
        op_succs=op_succs,
        open_ptr=op_,
        open_idx=oi,
        close_ptr=cp,
        close_idx=ci,
        size=np.array(peak_size, dtype=np.int64),
        tier_bufs=[t for t in tier_bufs if len(t)],
        bufs_of_op=bufs_of_op,
        l0_of_buf=list(l0_tier_of_buf),
        valid=valid,
    )
