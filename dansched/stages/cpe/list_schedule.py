"""Non-delay list scheduling inside a fixed memory skeleton.

The order a refined plan may take is any topological order of the skeleton's
order constraints (:mod:`dansched.stages.cpe.skeleton`); its timing is the cycle
simulator's on G2 (paper Eqs. 9-10). This scheduler builds such an order by
simulating time: at each step it emits, over all pipes, the node that can start
earliest (ties: higher priority), so an engine idles only when nothing it
could run is ready. Cache nodes (no pipe, no cycles) are emitted as soon as
they are allowed. DMA that the skeleton lets start early (COPY_IN, MOVE,
SPILL_IN) is thereby pulled forward: the prefetch the problem text describes.

Runs in O((V + E) log V), compiled: the loop is :mod:`dansched.kernels.list_schedule`
(which states the tie rule in full); this module keeps the entry points on a skeleton,
on Python lists and on CSR arrays, and the forward-backward passes, which chain that
kernel and the cycle simulator's.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...kernels import list_schedule as kernel
from ...kernels.csr import csr_of_lists, int64_array
from ...simulate import simulate_timing_arrays
from .skeleton import Skeleton

__all__ = ["list_schedule", "list_schedule_arrays", "list_schedule_csr", "forward_backward"]


def list_schedule(skel: Skeleton, priority: Sequence[int], tie: Sequence[int]) -> list[int]:
    """A refined order of ``skel``: non-delay, ties by larger ``priority`` then smaller ``tie``."""
    g = skel.timing
    order = list_schedule_csr(
        skel.order_pred_csr[0],
        skel.order_succ_csr,
        (g.pred_ptr, g.pred_idx),
        g.pipe_array,
        g.cycles_array,
        int64_array(priority),
        int64_array(tie),
    )
    return order.tolist()


def list_schedule_arrays(
    order_preds: Sequence[Sequence[int]],
    order_succs: Sequence[Sequence[int]],
    tpreds: Sequence[Sequence[int]],
    pipe: Sequence[int],
    cycles: Sequence[int],
    priority: Sequence[int],
    tie: Sequence[int],
) -> list[int]:
    """:func:`list_schedule` on plain lists (so it can run on a reversed graph too). A node's
    ready time is the latest end of its timing predecessors, known when its last order
    predecessor is emitted (every timing predecessor is an order predecessor)."""
    order = list_schedule_csr(
        csr_of_lists(order_preds)[0],
        csr_of_lists(order_succs),
        csr_of_lists(tpreds),
        int64_array(pipe),
        int64_array(cycles),
        int64_array(priority),
        int64_array(tie),
    )
    return order.tolist()


def list_schedule_csr(
    order_pred_ptr: np.ndarray,
    order_succs: tuple[np.ndarray, np.ndarray],
    tpreds: tuple[np.ndarray, np.ndarray],
    pipe: np.ndarray,
    cycles: np.ndarray,
    priority: np.ndarray,
    tie: np.ndarray,
) -> np.ndarray:
    """:func:`list_schedule` on int64 arrays, the compiled scheduler
    (:mod:`dansched.kernels.list_schedule`): the order predecessors' CSR pointers (only their
    counts matter), the order successors and the timing predecessors as CSR ``(ptr, idx)``.
    Raises ``RuntimeError`` when the order constraints are cyclic."""
    n = len(pipe)
    for ptr, idx in (order_succs, tpreds):
        if len(ptr) != n + 1 or (idx.size and not 0 <= int(idx.min()) <= int(idx.max()) < n):
            raise ValueError("list_schedule: adjacency lists that do not match the nodes")
    if len(order_pred_ptr) != n + 1 or len(cycles) != n or len(priority) != n or len(tie) != n:
        raise ValueError("list_schedule: one figure per node is needed")
    order, acyclic = kernel.list_schedule(np.diff(order_pred_ptr), *order_succs, *tpreds, pipe, cycles, priority, tie)
    if not acyclic:
        raise RuntimeError("list_schedule: the skeleton's order constraints are cyclic")
    return order


def _positions(order: np.ndarray, n: int) -> np.ndarray:
    pos = np.zeros(n, dtype=np.int64)
    pos[order] = np.arange(len(order), dtype=np.int64)
    return pos


def forward_backward(skel: Skeleton, order: Sequence[int], passes: int = 4) -> tuple[list[int], int, int]:
    """Forward-backward improvement (justification, as in project scheduling): schedule
    the reversed skeleton from the end with priority to nodes that finish late, which
    right-justifies every node; then schedule forward again with priority to nodes whose
    right-justified start is early. Each pass keeps the best order seen.
    Returns (order, makespan, passes run)."""
    g = skel.timing
    n = g.n
    opreds, osuccs = skel.order_pred_csr, skel.order_succ_csr
    tpreds, tsuccs = (g.pred_ptr, g.pred_idx), g.succ_csr
    pipe, cycles = g.pipe_array, g.cycles_array
    best = int64_array(order)
    _, cur_end, best_m = simulate_timing_arrays(best, *tpreds, pipe, cycles)
    cur_pos = _positions(best, n)
    runs = 0
    for _ in range(passes):
        runs += 1
        rev = list_schedule_csr(osuccs[0], opreds, tsuccs, pipe, cycles, cur_end, -cur_pos)
        _, rev_end, total = simulate_timing_arrays(rev, *tsuccs, pipe, cycles)
        late_start = total - rev_end
        fwd = list_schedule_csr(opreds[0], osuccs, tpreds, pipe, cycles, -late_start, -_positions(rev, n))
        _, cur_end, m2 = simulate_timing_arrays(fwd, *tpreds, pipe, cycles)
        cur_pos = _positions(fwd, n)
        if m2 < best_m:
            best, best_m = fwd, m2
        else:
            break
    return best.tolist(), int(best_m), runs
