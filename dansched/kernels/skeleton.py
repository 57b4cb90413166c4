"""The memory skeleton's order constraints on CSR arrays: the compiled core of
:func:`dansched.stages.cpe.skeleton.memory_skeleton` (which documents the rule, paper
Eq. 14, and keeps the Python entry point).

One pass over the order adds, to each node's G2 predecessors: for an operation, the event
that started the current residency segment of each of its buffers; for a memory event, the
previous memory event (when the events are chained) and every operation that ran in the
segment of its buffer it ends. Each node's list is then sorted ascending without repeats.
"""

from __future__ import annotations

import numpy as np

from .jit import compiled

__all__ = ["order_constraints", "warm"]


@compiled
def order_constraints(
    order: np.ndarray,
    pred_ptr: np.ndarray,
    pred_idx: np.ndarray,
    is_event: np.ndarray,
    event_buf: np.ndarray,
    bufs_ptr: np.ndarray,
    bufs_idx: np.ndarray,
    num_buffers: int,
    chain: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """CSR order predecessors (each list ascending, no repeats) of the ``len(pred_ptr) - 1``
    nodes: ``is_event[v]`` is 1 for a memory event (``event_buf[v]`` its buffer), 0 for an
    operation (its buffers ``bufs_idx[bufs_ptr[v]:bufs_ptr[v + 1]]``; ``bufs_ptr`` covers the
    instance's nodes, spill nodes are events)."""
    n = len(pred_ptr) - 1
    total_bufs = bufs_ptr[-1]
    cap = 2 * total_bufs + n
    src = np.empty(cap, dtype=np.int64)
    dst = np.empty(cap, dtype=np.int64)
    m = 0
    last_event = np.full(num_buffers, -1, dtype=np.int64)
    pend_head = np.full(num_buffers, -1, dtype=np.int64)
    ent_node = np.empty(total_bufs + 1, dtype=np.int64)
    ent_next = np.empty(total_bufs + 1, dtype=np.int64)
    entries = 0
    prev = -1
    for v in order:
        if is_event[v] == 0:
            for k in range(bufs_ptr[v], bufs_ptr[v + 1]):
                b = bufs_idx[k]
                if last_event[b] >= 0:
                    src[m] = last_event[b]
                    dst[m] = v
                    m += 1
                ent_node[entries] = v
                ent_next[entries] = pend_head[b]
                pend_head[b] = entries
                entries += 1
            continue
        if chain and prev >= 0:
            src[m] = prev
            dst[m] = v
            m += 1
        prev = v
        b = event_buf[v]
        e = pend_head[b]
        while e >= 0:
            src[m] = ent_node[e]
            dst[m] = v
            m += 1
            e = ent_next[e]
        pend_head[b] = -1
        last_event[b] = v
    counts = np.diff(pred_ptr).copy()
    for i in range(m):
        counts[dst[i]] += 1
    ptr = np.zeros(n + 1, dtype=np.int64)
    for v in range(n):
        ptr[v + 1] = ptr[v] + counts[v]
    idx = np.empty(ptr[n], dtype=np.int64)
    fill = ptr[:-1].copy()
    for v in range(n):
        for k in range(pred_ptr[v], pred_ptr[v + 1]):
            idx[fill[v]] = pred_idx[k]
            fill[v] += 1
    for i in range(m):
        idx[fill[dst[i]]] = src[i]
        fill[dst[i]] += 1
    out_ptr = np.zeros(n + 1, dtype=np.int64)
    w = 0
    for v in range(n):
        seg = np.sort(idx[ptr[v] : ptr[v + 1]])
        for k in range(len(seg)):
            if k == 0 or seg[k] != seg[k - 1]:
                idx[w] = seg[k]
                w += 1
        out_ptr[v + 1] = w
    return out_ptr, idx[:w].copy()


def warm() -> None:
    """Compile (or load from the cache) this module's kernel: an ALLOC, an operation, a FREE."""
    a = np.array
    i64 = np.int64
    order_constraints(
        a([0, 1, 2], dtype=i64),
        a([0, 0, 1, 2], dtype=i64),
        a([0, 1], dtype=i64),
        a([1, 0, 1], dtype=i64),
        a([0, -1, 0], dtype=i64),
        a([0, 0, 1, 1], dtype=i64),
        a([0], dtype=i64),
        1,
        True,
    )
