"""Non-delay list scheduling on CSR arrays: the compiled core of
:mod:`dansched.stages.cpe.list_schedule` (which documents the rule and keeps the Python entry
points).

At each step the scheduler emits, over all pipes (ascending), the node that can start
earliest; ties go to the higher priority, then the smaller tie value, then the smaller node
id, then the smaller pipe. A node without a pipe is emitted as soon as its last order
predecessor is (the last such node first). Per pipe two binary heaps hold the nodes whose
order predecessors have all been emitted: *waiting* (keyed by ready time, priority, tie,
id) and *available* (ready by the time the pipe is free; keyed by priority, tie, id). Each
key is a total order, so any heap gives the same order as Python's ``heapq``.
"""

from __future__ import annotations

import numpy as np

from .jit import compiled

__all__ = ["list_schedule", "warm"]


@compiled
def _before(a: int, b: int, ready: np.ndarray, negp: np.ndarray, tie: np.ndarray, by_ready: bool) -> bool:
    """Node ``a``'s key is smaller than ``b``'s: (ready,) -priority, tie, id."""
    if by_ready and ready[a] != ready[b]:
        return bool(ready[a] < ready[b])
    if negp[a] != negp[b]:
        return bool(negp[a] < negp[b])
    if tie[a] != tie[b]:
        return bool(tie[a] < tie[b])
    return a < b


@compiled
def _push(
    heap: np.ndarray, base: int, size: int, v: int, ready: np.ndarray, negp: np.ndarray, tie: np.ndarray, by_ready: bool
) -> None:
    """Add ``v`` to the heap ``heap[base:base + size]`` (the caller counts it)."""
    i = size
    while i > 0:
        parent = (i - 1) // 2
        u = heap[base + parent]
        if not _before(v, u, ready, negp, tie, by_ready):
            break
        heap[base + i] = u
        i = parent
    heap[base + i] = v


@compiled
def _pop(
    heap: np.ndarray, base: int, size: int, ready: np.ndarray, negp: np.ndarray, tie: np.ndarray, by_ready: bool
) -> int:
    """Remove and return the smallest node of ``heap[base:base + size]`` (the caller counts it)."""
    top = heap[base]
    size -= 1
    x = heap[base + size]
    i = 0
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        if child + 1 < size and _before(heap[base + child + 1], heap[base + child], ready, negp, tie, by_ready):
            child += 1
        if not _before(heap[base + child], x, ready, negp, tie, by_ready):
            break
        heap[base + i] = heap[base + child]
        i = child
    heap[base + i] = x
    return int(top)


@compiled
def _ready(v: int, tpred_ptr: np.ndarray, tpred_idx: np.ndarray, end: np.ndarray) -> int:
    """The latest end among ``v``'s timing predecessors (0 without any)."""
    rt = 0
    for j in range(tpred_ptr[v], tpred_ptr[v + 1]):
        if end[tpred_idx[j]] > rt:
            rt = end[tpred_idx[j]]
    return rt


@compiled
def _release(
    v: int,
    top: int,
    stack: np.ndarray,
    pipe: np.ndarray,
    waiting: np.ndarray,
    base: np.ndarray,
    nwait: np.ndarray,
    ready: np.ndarray,
    negp: np.ndarray,
    tie: np.ndarray,
    tpred_ptr: np.ndarray,
    tpred_idx: np.ndarray,
    end: np.ndarray,
) -> int:
    """``v``'s order predecessors have all been emitted: onto the stack when it has no pipe,
    else into its pipe's waiting heap at its ready time. Returns the stack's new height."""
    if pipe[v] < 0:
        stack[top] = v
        return top + 1
    p = pipe[v]
    ready[v] = _ready(v, tpred_ptr, tpred_idx, end)
    _push(waiting, base[p], nwait[p], v, ready, negp, tie, True)
    nwait[p] += 1
    return top


@compiled
def list_schedule(
    indeg: np.ndarray,
    osucc_ptr: np.ndarray,
    osucc_idx: np.ndarray,
    tpred_ptr: np.ndarray,
    tpred_idx: np.ndarray,
    pipe: np.ndarray,
    cycles: np.ndarray,
    priority: np.ndarray,
    tie: np.ndarray,
) -> tuple[np.ndarray, bool]:
    """The order (see the module docstring) and True; False when the order constraints are
    cyclic. ``indeg``: each node's number of order predecessors (changed in place); the
    order successors and the timing predecessors as CSR arrays."""
    n = pipe.shape[0]
    pipes = 0
    for v in range(n):
        pipes = max(pipes, pipe[v] + 1)
    base = np.zeros(pipes + 1, dtype=np.int64)  # pipe p's heaps are heap[base[p]:base[p + 1]]
    for v in range(n):
        if pipe[v] >= 0:
            base[pipe[v] + 1] += 1
    for p in range(pipes):
        base[p + 1] += base[p]
    waiting = np.empty(n, dtype=np.int64)
    available = np.empty(n, dtype=np.int64)
    nwait = np.zeros(pipes, dtype=np.int64)
    navail = np.zeros(pipes, dtype=np.int64)
    pipe_free = np.zeros(pipes, dtype=np.int64)
    ready = np.zeros(n, dtype=np.int64)
    negp = np.empty(n, dtype=np.int64)
    for v in range(n):
        negp[v] = -priority[v]
    end = np.zeros(n, dtype=np.int64)
    order = np.empty(n, dtype=np.int64)
    stack = np.empty(n, dtype=np.int64)  # nodes without a pipe, ready to emit
    top = 0
    for v in range(n):
        if indeg[v] == 0:
            top = _release(v, top, stack, pipe, waiting, base, nwait, ready, negp, tie, tpred_ptr, tpred_idx, end)
    count = 0
    while count < n:
        p = -1  # the pipe the next node runs on, -1 for a node without one
        if top > 0:
            top -= 1
            v = stack[top]
            start = _ready(v, tpred_ptr, tpred_idx, end)
        else:
            best = -1
            k0, k1, k2 = 0, 0, 0
            for q in range(pipes):
                while nwait[q] > 0 and ready[waiting[base[q]]] <= pipe_free[q]:
                    u = _pop(waiting, base[q], nwait[q], ready, negp, tie, True)
                    nwait[q] -= 1
                    _push(available, base[q], navail[q], u, ready, negp, tie, False)
                    navail[q] += 1
                if navail[q] > 0:
                    u = available[base[q]]
                    key0 = pipe_free[q]
                elif nwait[q] > 0:
                    u = waiting[base[q]]
                    key0 = ready[u]
                else:
                    continue
                if best < 0 or (key0, negp[u], tie[u]) < (k0, k1, k2):
                    best, k0, k1, k2 = q, key0, negp[u], tie[u]
            if best < 0:
                return order[:count].copy(), False
            p, start = best, k0
            if navail[p] > 0:
                v = _pop(available, base[p], navail[p], ready, negp, tie, False)
                navail[p] -= 1
            else:
                v = _pop(waiting, base[p], nwait[p], ready, negp, tie, True)
                nwait[p] -= 1
        end[v] = start + cycles[v]
        order[count] = v
        count += 1
        for j in range(osucc_ptr[v], osucc_ptr[v + 1]):
            w = osucc_idx[j]
            indeg[w] -= 1
            if indeg[w] == 0:
                top = _release(w, top, stack, pipe, waiting, base, nwait, ready, negp, tie, tpred_ptr, tpred_idx, end)
        if p >= 0:
            pipe_free[p] = end[v]
    return order, True


def warm() -> None:
    """Compile (or load from the cache) this module's kernel: a chain of three nodes."""
    a = np.array
    i64 = np.int64
    list_schedule(
        a([0, 1, 1], dtype=i64),
        a([0, 1, 2, 2], dtype=i64),
        a([1, 2], dtype=i64),
        a([0, 0, 1, 2], dtype=i64),
        a([0, 1], dtype=i64),
        a([0, -1, 0], dtype=i64),
        a([1, 0, 1], dtype=i64),
        a([0, 0, 0], dtype=i64),
        a([0, 1, 2], dtype=i64),
    )
