"""List scheduling on CSR arrays: the compiled core of
:mod:`dansched.stages.cpe.list_schedule` (which documents the rules and keeps the Python
entry points).

Each pipe's *earliest* node is the one of its released nodes (order predecessors all
emitted) that can start first; ties go to the higher priority, then the smaller tie value,
then the smaller node id. On a pipe in the *non-delay* mode that node is emitted when its
pipe's turn comes; its time is its start. On a pipe in the *active* mode (Giffler and
Thompson's generation of active schedules) the earliest node ``e`` sets the *conflict
set*: the pipe's released nodes that can start before ``e`` would finish; the one of
highest priority (then smaller tie, then smaller id) is emitted, at its own start, and the
pipe idles until then. The pipe's time is ``e``'s finish, so the decision waits until
every node that starts earlier elsewhere has been emitted (and what they release has
joined the conflict set). At each step the pipe of least (time, -priority, tie of its
earliest node, pipe index) takes its turn. A node without a pipe is emitted as soon as its
last order predecessor is (the last such node first). Per pipe two binary heaps hold
the nodes whose order predecessors have all been emitted: *waiting* (keyed by ready time,
priority, tie, id) and *available* (ready by the time the pipe is free; keyed by priority,
tie, id). Each key is a total order, so any heap gives the same order as Python's ``heapq``.
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
def _most_urgent(
    e: int,
    start: int,
    from_avail: bool,
    p: int,
    waiting: np.ndarray,
    available: np.ndarray,
    base: np.ndarray,
    nwait: np.ndarray,
    navail: np.ndarray,
    conflict: np.ndarray,
    ready: np.ndarray,
    negp: np.ndarray,
    tie: np.ndarray,
    cycles: np.ndarray,
) -> tuple[int, int]:
    """The active mode on pipe ``p``, whose earliest node ``e`` (taken from its heap) would start
    at ``start``: the node of the conflict set to emit and its start. Every node still
    available starts when ``e`` does and ranks below it, so only the waiting nodes ready
    before ``e`` would finish compete (each waiting node is ready after the pipe is free, so
    it starts at its ready time). The losers, ``e`` among them, go back to their heaps."""
    finish = start + cycles[e]
    k = 0
    while nwait[p] > 0 and ready[waiting[base[p]]] < finish:
        conflict[k] = _pop(waiting, base[p], nwait[p], ready, negp, tie, True)
        nwait[p] -= 1
        k += 1
    if k == 0:
        return e, start
    c = e
    for i in range(k):
        if _before(conflict[i], c, ready, negp, tie, False):
            c = conflict[i]
    for i in range(k):
        if conflict[i] != c:
            _push(waiting, base[p], nwait[p], conflict[i], ready, negp, tie, True)
            nwait[p] += 1
    if c == e:
        return e, start
    if from_avail:
        _push(available, base[p], navail[p], e, ready, negp, tie, False)
        navail[p] += 1
    else:
        _push(waiting, base[p], nwait[p], e, ready, negp, tie, True)
        nwait[p] += 1
    return c, ready[c]


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
    active: np.ndarray,
) -> tuple[np.ndarray, bool]:
    """The order (see the module docstring) and True; False when the order constraints are
    cyclic. ``indeg``: each node's number of order predecessors (changed in place); the
    order successors and the timing predecessors as CSR arrays; ``active[p]`` nonzero: pipe
    ``p`` is in the active mode (a pipe past the array's end is non-delay)."""
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
    conflict = np.empty(n, dtype=np.int64)  # an active pipe's waiting nodes that start before f
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
            k0, k1, k2, best_start = 0, 0, 0, 0
            for q in range(pipes):
                while nwait[q] > 0 and ready[waiting[base[q]]] <= pipe_free[q]:
                    u = _pop(waiting, base[q], nwait[q], ready, negp, tie, True)
                    nwait[q] -= 1
                    _push(available, base[q], navail[q], u, ready, negp, tie, False)
                    navail[q] += 1
                if navail[q] > 0:
                    u = available[base[q]]
                    s = pipe_free[q]
                elif nwait[q] > 0:
                    u = waiting[base[q]]
                    s = ready[u]
                else:
                    continue
                key0 = s + cycles[u] if q < active.shape[0] and active[q] != 0 else s
                if best < 0 or (key0, negp[u], tie[u]) < (k0, k1, k2):
                    best, k0, k1, k2, best_start = q, key0, negp[u], tie[u], s
            if best < 0:
                return order[:count].copy(), False
            p, start = best, best_start
            from_avail = navail[p] > 0
            if from_avail:
                v = _pop(available, base[p], navail[p], ready, negp, tie, False)
                navail[p] -= 1
            else:
                v = _pop(waiting, base[p], nwait[p], ready, negp, tie, True)
                nwait[p] -= 1
            if p < active.shape[0] and active[p] != 0:
                v, start = _most_urgent(
                    v, start, from_avail, p, waiting, available, base, nwait, navail, conflict, ready, negp, tie, cycles
                )
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
        a([1], dtype=i64),
    )
