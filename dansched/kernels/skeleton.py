"""The memory skeleton's order constraints on CSR arrays: the compiled core of
:func:`dansched.stages.cpe.skeleton.memory_skeleton` (which documents the rule, paper
Eq. 14, and keeps the Python entry point).

One pass over the order adds, to each node's G2 predecessors: for an operation, the event
that started the current residency segment of each of its buffers; for a memory event, the
previous memory event (when the events are chained) and every operation that ran in the
segment of its buffer it ends. Each node's list is then sorted ascending without repeats
(two counting sorts: no comparison sort to compile).
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
    # every constraint u -> v: G2's edges, then the ones found above
    e = pred_ptr[n] + m
    esrc = np.empty(e, dtype=np.int64)
    edst = np.empty(e, dtype=np.int64)
    for v in range(n):
        for k in range(pred_ptr[v], pred_ptr[v + 1]):
            esrc[k] = pred_idx[k]
            edst[k] = v
    esrc[pred_ptr[n] :] = src[:m]
    edst[pred_ptr[n] :] = dst[:m]
    # two counting sorts (by source, then stably by target): each target's sources ascending
    by_src = _bucket_order(esrc, np.arange(e), n)
    by_dst = _bucket_order(edst, by_src, n)
    out_ptr = np.zeros(n + 1, dtype=np.int64)
    idx = np.empty(e, dtype=np.int64)
    w = 0
    prev_v, prev_u = -1, -1
    for r in range(e):
        j = by_dst[r]
        v, u = edst[j], esrc[j]
        if v != prev_v or u != prev_u:
            idx[w] = u
            w += 1
            out_ptr[v + 1] += 1
            prev_v, prev_u = v, u
    for v in range(n):
        out_ptr[v + 1] += out_ptr[v]
    return out_ptr, idx[:w].copy()


@compiled
def _bucket_order(key: np.ndarray, items: np.ndarray, n: int) -> np.ndarray:
    """``items`` (indices into ``key``) stably ordered by ``key`` (values below ``n``)."""
    start = np.zeros(n + 1, dtype=np.int64)
    for i in items:
        start[key[i] + 1] += 1
    for v in range(n):
        start[v + 1] += start[v]
    out = np.empty(len(items), dtype=np.int64)
    for i in items:
        out[start[key[i]]] = i
        start[key[i]] += 1
    return out


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
