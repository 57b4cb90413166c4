"""The cycle simulator (docs/rules.md, section 7; paper Eqs. 9-10): the compiled one on
int64 arrays (:mod:`dansched.kernels.timing`) and the Python loop with exact integers it is
tested against.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..kernels import timing
from ..kernels.csr import csr_of_lists, int64_array
from . import work

__all__ = ["simulate_timing", "simulate_timing_arrays", "simulate_timing_reference", "INT64_ROOM"]

INT64_ROOM = 2**63  # the fast path's figures (int64) must stay below this


def simulate_timing(
    order: Sequence[int], preds: Sequence[Sequence[int]], pipe: Sequence[int], cycles: Sequence[int]
) -> tuple[list[int], list[int], int]:
    """The cycle simulator (docs/rules.md, section 7; paper Eqs. 9-10): walk ``order``;
    ``start(v) = max(end of v's predecessors, end of the previous node on v's pipe)``,
    ``end(v) = start(v) + cycles(v)``. Nodes with pipe -1 take no pipe.
    Returns per-node start and end (indexed by node id) and the makespan.

    Runs the compiled simulator (:func:`simulate_timing_arrays`) on the lists made arrays;
    ids outside ``0..len(pipe)-1`` or figures that could pass 64 bits take the Python loop
    (:func:`simulate_timing_reference`), which computes with exact integers."""
    arrays = _timing_arrays(order, preds, pipe, cycles)
    if arrays is None:
        return simulate_timing_reference(order, preds, pipe, cycles)
    start, end, makespan = simulate_timing_arrays(*arrays)
    return start.tolist(), end.tolist(), makespan


def _timing_arrays(
    order: Sequence[int], preds: Sequence[Sequence[int]], pipe: Sequence[int], cycles: Sequence[int]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """The simulator's arguments as int64 arrays; None when the compiled simulator cannot take
    them (an id out of range, no list or figures for some node, a total that could pass 64 bits)."""
    n = len(pipe)
    try:
        o, p, c = int64_array(order), int64_array(pipe), int64_array(cycles)
        ptr, idx = csr_of_lists(preds)
    except OverflowError:
        return None
    if len(c) != n or len(ptr) != n + 1 or not (_ids_within(o, n) and _ids_within(idx, n)):
        return None
    if n and (int(c.min()) < 0 or int(c.max()) * max(n, len(o)) >= INT64_ROOM):
        return None
    return o, ptr, idx, p, c


def simulate_timing_arrays(
    order: np.ndarray, pred_ptr: np.ndarray, pred_idx: np.ndarray, pipe: np.ndarray, cycles: np.ndarray
) -> tuple[np.ndarray, np.ndarray, int]:
    """:func:`simulate_timing` on int64 arrays (CSR predecessor lists): per-node start and end
    arrays and the makespan. The caller keeps every id in range and every figure in int64."""
    work.add(len(order))
    start, end, makespan = timing.simulate(order, pred_ptr, pred_idx, pipe, cycles)
    return start, end, int(makespan)


def _ids_within(ids: np.ndarray, n: int) -> bool:
    return not ids.size or (int(ids.min()) >= 0 and int(ids.max()) < n)


def simulate_timing_reference(
    order: Sequence[int], preds: Sequence[Sequence[int]], pipe: Sequence[int], cycles: Sequence[int]
) -> tuple[list[int], list[int], int]:
    """:func:`simulate_timing` as a plain Python loop, with exact integers: the reference
    the compiled simulator is tested against."""
    n = len(pipe)
    start = [0] * n
    end = [0] * n
    pipe_free: dict[int, int] = {}
    makespan = 0
    for v in order:
        t = 0
        for u in preds[v]:
            e = end[u]
            if e > t:
                t = e
        p = pipe[v]
        if p >= 0:
            f = pipe_free.get(p, 0)
            if f > t:
                t = f
            fin = t + cycles[v]
            pipe_free[p] = fin
        else:
            fin = t + cycles[v]
        start[v] = t
        end[v] = fin
        if fin > makespan:
            makespan = fin
    return start, end, makespan
