"""List scheduling inside a fixed memory skeleton: non-delay, or active on chosen pipes.

The order a refined plan may take is any topological order of the skeleton's
order constraints (:mod:`dansched.stages.cpe.skeleton`); its timing is the cycle
simulator's on G2 (paper Eqs. 9-10). This scheduler builds such an order by
simulating time: at each step it takes, over all pipes, the node that can start
earliest (ties: higher priority). Cache nodes (no pipe, no cycles) are emitted as
soon as they are allowed.

- *Non-delay* (every pipe by default): that node is emitted, so an engine idles only
  when nothing it could run is ready, and priority only breaks ties. DMA that the
  skeleton lets start early (COPY_IN, MOVE, SPILL_IN) is thereby pulled forward: the
  prefetch the problem text describes.
- *Active* (the pipes in ``active``; Giffler and Thompson's generation of active
  schedules): that node's pipe takes its turn when that node would finish, and may
  then wait for a more urgent node instead. The *conflict set* is the pipe's released
  nodes that can start before the earliest one would finish; the one of highest
  priority goes first, at its own ready time. With an urgency as the
  priority, a load pipe then issues the load whose consumer is needed first rather
  than the one that became ready first (:func:`dansched.stages.cpe.refine.feed_by_need`).

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

__all__ = [
    "list_schedule",
    "list_schedule_arrays",
    "list_schedule_csr",
    "backward_pass",
    "forward_pass",
    "forward_backward",
]


def list_schedule(skel: Skeleton, priority: Sequence[int], tie: Sequence[int], active: Sequence[int] = ()) -> list[int]:
    """A refined order of ``skel``: non-delay, ties by larger ``priority`` then smaller ``tie``;
    the pipes in ``active`` (pipe indices) in the active mode, their conflicts decided by
    the same keys."""
    g = skel.timing
    order = list_schedule_csr(
        skel.order_pred_csr[0],
        skel.order_succ_csr,
        (g.pred_ptr, g.pred_idx),
        g.pipe_array,
        g.cycles_array,
        int64_array(priority),
        int64_array(tie),
        active,
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
    active: Sequence[int] = (),
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
        active,
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
    active: Sequence[int] = (),
) -> np.ndarray:
    """:func:`list_schedule` on int64 arrays, the compiled scheduler
    (:mod:`dansched.kernels.list_schedule`): the order predecessors' CSR pointers (only their
    counts matter), the order successors and the timing predecessors as CSR ``(ptr, idx)``;
    ``active``: the pipes in the active mode. Raises ``RuntimeError`` when the order
    constraints are cyclic."""
    n = len(pipe)
    for ptr, idx in (order_succs, tpreds):
        if len(ptr) != n + 1 or (idx.size and not 0 <= int(idx.min()) <= int(idx.max()) < n):
            raise ValueError("list_schedule: adjacency lists that do not match the nodes")
    if len(order_pred_ptr) != n + 1 or len(cycles) != n or len(priority) != n or len(tie) != n:
        raise ValueError("list_schedule: one figure per node is needed")
    if any(p < 0 for p in active):
        raise ValueError("list_schedule: active pipes are pipe indices (0 or more)")
    flags = np.zeros(max(active, default=-1) + 1, dtype=np.int64)
    flags[list(active)] = 1
    order, acyclic = kernel.list_schedule(
        np.diff(order_pred_ptr), *order_succs, *tpreds, pipe, cycles, priority, tie, flags
    )
    if not acyclic:
        raise RuntimeError("list_schedule: the skeleton's order constraints are cyclic")
    return order


def _positions(order: np.ndarray, n: int) -> np.ndarray:
    pos = np.zeros(n, dtype=np.int64)
    pos[order] = np.arange(len(order), dtype=np.int64)
    return pos


def backward_pass(skel: Skeleton, order: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The right-justified schedule of ``order`` (timed as ``end``): the reversed skeleton
    list-scheduled from the end, priority to the nodes that finish late, then to the later in
    ``order``. Returns each node's latest start in it (the makespan of the reversed schedule
    less its end there) and its position in the reversed order."""
    g = skel.timing
    pos = _positions(order, g.n)
    rev = list_schedule_csr(
        skel.order_succ_csr[0], skel.order_pred_csr, g.succ_csr, g.pipe_array, g.cycles_array, end, -pos
    )
    _, rev_end, total = simulate_timing_arrays(rev, *g.succ_csr, g.pipe_array, g.cycles_array)
    return total - rev_end, _positions(rev, g.n)


def forward_pass(skel: Skeleton, late_start: np.ndarray, rev_pos: np.ndarray, active: Sequence[int] = ()) -> np.ndarray:
    """The forward half of forward-backward: the skeleton list-scheduled with priority to the
    nodes whose latest start (from :func:`backward_pass`) is earliest, ties to the later in the
    reversed order; ``active``: the pipes in the active mode."""
    g = skel.timing
    opreds, osuccs = skel.order_pred_csr, skel.order_succ_csr
    return list_schedule_csr(
        opreds[0], osuccs, (g.pred_ptr, g.pred_idx), g.pipe_array, g.cycles_array, -late_start, -rev_pos, active
    )


def forward_backward(skel: Skeleton, order: Sequence[int], passes: int = 4) -> tuple[list[int], int, int]:
    """Forward-backward improvement (justification, as in project scheduling): schedule
    the reversed skeleton from the end with priority to nodes that finish late, which
    right-justifies every node; then schedule forward again with priority to nodes whose
    right-justified start is early. Each pass keeps the best order seen.
    Returns (order, makespan, passes run)."""
    g = skel.timing
    tpreds, pipe, cycles = (g.pred_ptr, g.pred_idx), g.pipe_array, g.cycles_array
    best = cur = int64_array(order)
    _, cur_end, best_m = simulate_timing_arrays(best, *tpreds, pipe, cycles)
    runs = 0
    for _ in range(passes):
        runs += 1
        fwd = forward_pass(skel, *backward_pass(skel, cur, cur_end))
        _, cur_end, m2 = simulate_timing_arrays(fwd, *tpreds, pipe, cycles)
        cur = fwd
        if m2 < best_m:
            best, best_m = fwd, m2
        else:
            break
    return best.tolist(), int(best_m), runs
