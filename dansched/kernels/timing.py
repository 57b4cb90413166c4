"""The cycle simulator on CSR arrays (docs/rules.md, section 7; paper Eqs. 9-10).

Walk ``order``; ``start(v) = max(end of v's predecessors, end of the previous node on
v's pipe)``, ``end(v) = start(v) + cycles(v)``; a node with pipe -1 takes no pipe.
:func:`dansched.simulate.simulate_timing` is the entry point with Python lists;
:func:`dansched.simulate.simulate_timing_arrays` the one with arrays.
"""

from __future__ import annotations

import numpy as np

from .jit import compiled

__all__ = ["simulate", "moved_makespan", "warm"]


@compiled
def simulate(
    order: np.ndarray, pred_ptr: np.ndarray, pred_idx: np.ndarray, pipe: np.ndarray, cycles: np.ndarray
) -> tuple[np.ndarray, np.ndarray, int]:
    """Per-node start and end (indexed by node id; 0 for a node ``order`` leaves out) and
    the makespan. ``pred_idx[pred_ptr[v]:pred_ptr[v + 1]]`` are the predecessors of ``v``."""
    n = pipe.shape[0]
    start = np.zeros(n, dtype=np.int64)
    end = np.zeros(n, dtype=np.int64)
    pipes = 1
    for v in range(n):
        if pipe[v] >= pipes:
            pipes = pipe[v] + 1
    pipe_free = np.zeros(pipes, dtype=np.int64)
    makespan = 0
    for i in range(order.shape[0]):
        v = order[i]
        t = 0
        for j in range(pred_ptr[v], pred_ptr[v + 1]):
            e = end[pred_idx[j]]
            if e > t:
                t = e
        p = pipe[v]
        if p >= 0:
            if pipe_free[p] > t:
                t = pipe_free[p]
            fin = t + cycles[v]
            pipe_free[p] = fin
        else:
            fin = t + cycles[v]
        start[v] = t
        end[v] = fin
        if fin > makespan:
            makespan = fin
    return start, end, makespan


def warm() -> None:
    """Compile (or load from the cache) this module's kernels: two nodes on one pipe."""
    i64 = np.int64
    one = np.ones(2, dtype=i64)
    order, ptr, idx = np.arange(2, dtype=i64), np.array([0, 0, 1], dtype=i64), np.zeros(1, dtype=i64)
    _, end, _ = simulate(order, ptr, idx, one, one)
    pos_ptr, pos_idx = np.array([0, 0, 2], dtype=i64), np.arange(2, dtype=i64)
    last, top = np.array([1, -1], dtype=i64), np.array([1, 2], dtype=i64)
    moved_makespan(
        order, 1, 0, ptr, idx, one, one, end, last, top, np.array([2, 2, 0], dtype=i64), pos_ptr, pos_idx, -one
    )


@compiled
def moved_makespan(
    order: np.ndarray,
    a: int,
    b: int,
    pred_ptr: np.ndarray,
    pred_idx: np.ndarray,
    pipe: np.ndarray,
    cycles: np.ndarray,
    end: np.ndarray,
    last_succ: np.ndarray,
    prefix_max: np.ndarray,
    suffix_max: np.ndarray,
    pipe_pos_ptr: np.ndarray,
    pipe_pos_idx: np.ndarray,
    scratch: np.ndarray,
) -> int:
    """The makespan of ``order`` (timed as ``end``) with the node at position ``a`` moved to
    position ``b``, simulated from position ``lo = min(a, b)`` on: the prefix keeps its
    times; past ``hi = max(a, b)`` the walk stops once no changed finish has a successor
    left (``last_succ``: position of each node's last successor) and every pipe is free at
    the same time as in ``order``, the rest keeping its times (``prefix_max`` /
    ``suffix_max``: the largest finish up to / from each position). ``pipe_pos_*``: CSR
    positions of each pipe's nodes, ascending. ``scratch``: -1 per node, left so."""
    n = order.shape[0]
    lo = min(a, b)
    hi = max(a, b)
    pipes = pipe_pos_ptr.shape[0] - 1
    free = np.full(pipes, -1, dtype=np.int64)  # -1: no node of that pipe yet
    old = np.full(pipes, -1, dtype=np.int64)
    for p in range(pipes):
        s, e = pipe_pos_ptr[p], pipe_pos_ptr[p + 1]
        i = np.searchsorted(pipe_pos_idx[s:e], lo)
        if i > 0:
            free[p] = end[order[pipe_pos_idx[s + i - 1]]]
    touched = np.empty(hi - lo + 1 + n - hi, dtype=np.int64)
    m = 0
    horizon = -1
    top = int(prefix_max[lo - 1]) if lo > 0 else 0
    result = -1
    k = lo
    while k < n:
        if k == hi + 1:
            for p in range(pipes):
                s, e = pipe_pos_ptr[p], pipe_pos_ptr[p + 1]
                i = np.searchsorted(pipe_pos_idx[s:e], k)
                old[p] = end[order[pipe_pos_idx[s + i - 1]]] if i > 0 else -1
        if k > hi and k > horizon:
            same = True
            for p in range(pipes):
                if free[p] != old[p]:
                    same = False
                    break
            if same:
                result = max(top, int(suffix_max[k]))
                break
        if a < b:
            v = order[k + 1] if lo <= k < hi else (order[a] if k == hi else order[k])
        else:
            v = order[a] if k == lo else (order[k - 1] if lo < k <= hi else order[k])
        t = 0
        for j in range(pred_ptr[v], pred_ptr[v + 1]):
            u = pred_idx[j]
            x = scratch[u] if scratch[u] >= 0 else end[u]
            if x > t:
                t = x
        p = pipe[v]
        if p >= 0:
            f = free[p] if free[p] > 0 else 0
            if f > t:
                t = f
            fin = t + cycles[v]
            free[p] = fin
            if k > hi:
                old[p] = end[v]
        else:
            fin = t + cycles[v]
        if fin != end[v]:
            scratch[v] = fin
            touched[m] = v
            m += 1
            if last_succ[v] > horizon:
                horizon = last_succ[v]
        if fin > top:
            top = fin
        k += 1
    for r in range(m):
        scratch[touched[r]] = -1
    return int(top) if result < 0 else int(result)
