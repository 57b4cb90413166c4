"""The cycle simulator on CSR arrays (docs/rules.md, section 7; paper Eqs. 9-10).

Walk ``order``; ``start(v) = max(end of v's predecessors, end of the previous node on
v's pipe)``, ``end(v) = start(v) + cycles(v)``; a node with pipe -1 takes no pipe.
:func:`dansched.simulate.simulate_timing` is the entry point with Python lists;
:func:`dansched.simulate.simulate_timing_arrays` the one with arrays.
"""

from __future__ import annotations

import numpy as np

from .jit import compiled

__all__ = ["simulate", "warm"]


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
    """Compile (or load from the cache) this module's kernel: two nodes on one pipe."""
    one = np.ones(2, dtype=np.int64)
    simulate(np.arange(2, dtype=np.int64), np.array([0, 0, 1], dtype=np.int64), np.zeros(1, dtype=np.int64), one, one)
