"""Heads that respect one pipe: the compiled core of :func:`dansched.models.bounds.heads.pipe_aware_heads`
(which documents the bound and its proof).

One pass over a DAG in topological order. Each node ``v`` gets the set ``A(v)`` of its
ancestors on pipe ``target`` with, for each ancestor ``u``, ``D(u, v)``: the longest path
from the end of ``u`` to the start of ``v`` (the cycles of the nodes strictly between).
``A(v)`` is the union over ``v``'s predecessors ``w`` of ``A(w)`` (each ``D`` plus
``cycles[w]``) and ``w`` itself when it is on the pipe (``D = 0``). Those ancestors run one
at a time, each from its head on, so ``v`` starts no earlier than the optimum of the
preemptive one-machine problem with heads ``head[u]``, bodies ``cycles[u]`` and tails
``D(u, v)`` (Jackson's preemptive schedule, :func:`jackson`). The new head of ``v`` is the
largest of its old head, the longest path (``head[w] + cycles[w]`` over its predecessors,
with the new heads) and that optimum. A set of more than ``limit`` ancestors is not kept:
that node, and every node after it that would contain it, gets the longest path alone.

The sets live in one pool, compacted when full (a set is dropped once its node's last
successor has read it), so memory follows the sets alive at once, not their sum.
"""

from __future__ import annotations

import numpy as np

from .jit import compiled

__all__ = ["jackson", "pipe_heads", "warm"]


@compiled
def _heap_push(key: np.ndarray, item: np.ndarray, size: int, k: int, x: int) -> int:
    """Push ``(k, x)`` on the max-heap of ``key`` (ties: the smaller ``item``); the new size."""
    j = size
    while j > 0:
        p = (j - 1) // 2
        if key[p] > k or (key[p] == k and item[p] < x):
            break
        key[j] = key[p]
        item[j] = item[p]
        j = p
    key[j] = k
    item[j] = x
    return size + 1


@compiled
def _heap_pop(key: np.ndarray, item: np.ndarray, size: int) -> int:
    """Remove the top of the max-heap (read it before the call); the new size."""
    size -= 1
    k, x = key[size], item[size]
    j = 0
    while True:
        c = 2 * j + 1
        if c >= size:
            break
        if c + 1 < size and (key[c + 1] > key[c] or (key[c + 1] == key[c] and item[c + 1] < item[c])):
            c += 1
        if key[c] < k or (key[c] == k and item[c] > x):
            break
        key[j] = key[c]
        item[j] = item[c]
        j = c
    if size > 0:
        key[j] = k
        item[j] = x
    return size


@compiled
def jackson(r: np.ndarray, p: np.ndarray, q: np.ndarray) -> int:
    """The optimum of the preemptive one-machine problem with heads ``r``, bodies ``p`` and
    tails ``q`` (max over tasks of completion plus tail): Jackson's preemptive schedule runs,
    at every moment, the released task with the largest tail (0 for no task)."""
    k = r.shape[0]
    if k == 0:
        return 0
    by_r = np.argsort(r, kind="mergesort")
    rem = p.copy()
    key = np.empty(k, dtype=np.int64)
    item = np.empty(k, dtype=np.int64)
    size = 0
    i = 0
    t = 0
    best = 0
    while i < k or size > 0:
        if size == 0 and r[by_r[i]] > t:
            t = r[by_r[i]]
        while i < k and r[by_r[i]] <= t:
            size = _heap_push(key, item, size, q[by_r[i]], by_r[i])
            i += 1
        top = item[0]
        run = rem[top]
        if i < k and r[by_r[i]] - t < run:
            run = r[by_r[i]] - t
        t += run
        rem[top] -= run
        if rem[top] == 0:
            size = _heap_pop(key, item, size)
            if t + q[top] > best:
                best = t + q[top]
    return best


@compiled
def pipe_heads(
    order: np.ndarray,
    pred_ptr: np.ndarray,
    pred_idx: np.ndarray,
    pipe: np.ndarray,
    cycles: np.ndarray,
    head: np.ndarray,
    target: int,
    limit: int,
) -> np.ndarray:
    """New heads (module docstring): ``order`` is a topological order of the graph whose
    predecessors are ``pred_idx[pred_ptr[v]:pred_ptr[v + 1]]``; ``head`` the heads so far
    (each a proven earliest start); ``target`` the pipe whose ancestors are counted."""
    n = pipe.shape[0]
    r = head.copy()
    left = np.zeros(n, dtype=np.int64)  # successors that have not read the node's set yet
    for j in range(pred_idx.shape[0]):
        left[pred_idx[j]] += 1
    start = np.zeros(n, dtype=np.int64)
    size = np.full(n, -1, dtype=np.int64)  # -1: no set (not reached yet, too large or dropped)
    cap = 1024
    pool_u = np.empty(cap, dtype=np.int64)
    pool_d = np.empty(cap, dtype=np.int64)
    used = 0
    stamp = np.full(n, -1, dtype=np.int64)
    at = np.zeros(n, dtype=np.int64)
    tmp_u = np.empty(limit + 1, dtype=np.int64)
    tmp_d = np.empty(limit + 1, dtype=np.int64)
    for i in range(order.shape[0]):
        v = order[i]
        h = r[v]
        k = 0
        over = False
        for j in range(pred_ptr[v], pred_ptr[v + 1]):
            w = pred_idx[j]
            e = r[w] + cycles[w]
            if e > h:
                h = e
            if over:
                continue
            if size[w] < 0:
                over = True
                continue
            cw = cycles[w]
            for s in range(start[w], start[w] + size[w]):
                u = pool_u[s]
                x = pool_d[s] + cw
                if stamp[u] == v:
                    if tmp_d[at[u]] < x:
                        tmp_d[at[u]] = x
                elif k == limit:
                    over = True
                    break
                else:
                    stamp[u] = v
                    at[u] = k
                    tmp_u[k] = u
                    tmp_d[k] = x
                    k += 1
            if not over and pipe[w] == target and stamp[w] != v:
                if k == limit:
                    over = True
                else:
                    stamp[w] = v
                    at[w] = k
                    tmp_u[k] = w
                    tmp_d[k] = 0
                    k += 1
        for j in range(pred_ptr[v], pred_ptr[v + 1]):  # drop the sets no successor reads any more
            w = pred_idx[j]
            left[w] -= 1
            if left[w] == 0:
                size[w] = -1
        if not over:
            if k >= 2:
                rr = np.empty(k, dtype=np.int64)
                pp = np.empty(k, dtype=np.int64)
                for s in range(k):
                    rr[s] = r[tmp_u[s]]
                    pp[s] = cycles[tmp_u[s]]
                b = jackson(rr, pp, tmp_d[:k].copy())
                if b > h:
                    h = b
            if left[v] > 0 and k > 0:
                if used + k > cap:  # compact the sets still read, then grow if still short
                    moved = 0
                    for s in range(i):
                        x = order[s]
                        if size[x] > 0:
                            for t in range(size[x]):
                                pool_u[moved + t] = pool_u[start[x] + t]
                                pool_d[moved + t] = pool_d[start[x] + t]
                            start[x] = moved
                            moved += size[x]
                    used = moved
                    if used + k > cap // 2:
                        cap = 2 * (used + k)
                        nu = np.empty(cap, dtype=np.int64)
                        nd = np.empty(cap, dtype=np.int64)
                        nu[:used] = pool_u[:used]
                        nd[:used] = pool_d[:used]
                        pool_u = nu
                        pool_d = nd
                start[v] = used
                for s in range(k):
                    pool_u[used + s] = tmp_u[s]
                    pool_d[used + s] = tmp_d[s]
                used += k
            size[v] = k if left[v] > 0 else -1
        r[v] = h
    return r


def warm() -> None:
    """Compile (or load from the cache) this module's kernels: two loads joined on one pipe."""
    i64 = np.int64
    order = np.arange(3, dtype=i64)
    ptr, idx = np.array([0, 0, 0, 2], dtype=i64), np.array([0, 1], dtype=i64)
    pipe, cycles = np.array([0, 0, 1], dtype=i64), np.array([2, 3, 1], dtype=i64)
    pipe_heads(order, ptr, idx, pipe, cycles, np.zeros(3, dtype=i64), 0, 8)
    jackson(cycles.copy(), cycles.copy(), cycles.copy())
