"""Stage 3: Critical Path Enhancement (CPE, paper Algorithm 3).

Given a valid Stage-2 plan, CPE shortens the makespan by reordering inside the
refinement set R(sigma2, G2) of Eq. 14 — the memory skeleton of
:mod:`dansched.stages.cpe.skeleton` — so offsets, spills, traffic and peak stay
exactly those of Stage 2. Three steps, each accepting a new order only when it
is legal and strictly faster (Eq. 36):

1. list scheduling inside the skeleton under a few deterministic priority rules
   (:mod:`dansched.stages.cpe.list_schedule`): non-delay, so engines overlap and DMA
   is prefetched as early as the skeleton allows; and *loads fed by need*
   (:func:`feed_by_need`), in which the data-movement pipes issue the most urgent
   task of the conflict set rather than the earliest ready; the fastest is kept, then
   improved by forward-backward passes;
2. the paper's local refinement: timing, dependency-only earliest starts and
   slack (Eqs. 32-33), the critical chain (Eq. 34), a window of width W around
   each critical node (Eq. 35), single-node moves;
3. optionally, exact CP-SAT windows (:mod:`dansched.stages.cpe.exact_window`).

Budgets are counts of timing evaluations, never wall-clock, so the result is
deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ...graph import bottom_level
from ...hardware import Hardware
from ...instance import Instance
from ...interrupt import stopping
from ...kernels import timing as timing_kernel
from ...kernels.csr import csr_of_pairs, int64_array
from ...models.windows.driver import WindowStats
from ...params import CpeParams
from ...plan import Plan
from ...simulate import AugmentedGraph, Evaluation, simulate_timing, simulate_timing_arrays
from .exact_window import exact_windows
from .list_schedule import backward_pass, forward_backward, forward_pass, list_schedule
from .skeleton import Skeleton, critical_chain, is_refinement, memory_skeleton

__all__ = [
    "CpeStats",
    "CPEResult",
    "cpe_refine",
    "feed_by_need",
    "earliest_starts",
    "slack",
    "neighbourhood",
]


@dataclass(frozen=True)
class CpeStats:
    """What CPE did: the step that found the final order (``found_by``), each list
    schedule's makespan, the local-move evaluations spent, and what the exact windows did
    (``exact_windows``: the fixed-memory ones of ``--exact-window``; ``memory_windows``: the
    memory-aware ones problem 3 adds, :mod:`dansched.pipeline.problem3.stage3.polish`)."""

    found_by: str
    list_schedule_makespans: dict[str, int]
    local_evaluations: int
    exact_windows: WindowStats | None = None
    memory_windows: WindowStats | None = None


@dataclass
class CPEResult:
    """The refined plan, what CPE did (``stats``) and its makespan on the skeleton's timing
    graph (G2 is unchanged by CPE, so this is the evaluator's makespan too)."""

    plan: Plan
    stats: CpeStats
    makespan: int | None = None


def makespan_of(skel: Skeleton, order: Sequence[int]) -> int:
    g = skel.timing
    if _in_int64(g):
        return _timed(g, int64_array(order))[2]
    return simulate_timing(order, g.preds, g.pipe, g.cycles)[2]


def earliest_starts(skel: Skeleton, order: Sequence[int]) -> list[int]:
    """Dependency-only earliest starts theta_v (Eq. 32): the latest finish of v's
    predecessors in G2, ignoring pipe contention."""
    g = skel.timing
    if _in_int64(g):
        return list(_timed(g, int64_array(order), no_pipe=True)[0].tolist())
    return simulate_timing(order, g.preds, [-1] * g.n, g.cycles)[0]


def slack(start: Sequence[int], earliest: Sequence[int]) -> list[int]:
    """slack(v) = theta_v - earliest(v) >= 0 (Eq. 33): how long v waits for its pipe."""
    return [s - e for s, e in zip(start, earliest)]


def neighbourhood(order: Sequence[int], pos: dict[int, int], v: int, width: int, chain: set[int]) -> list[int]:
    """N_W(v) (Eq. 35): nodes within ``width`` positions of v that are not on the critical chain."""
    i = pos[v]
    lo, hi = max(0, i - width), min(len(order), i + width + 1)
    return [u for u in order[lo:hi] if u != v and u not in chain]


def _move(order: list[int], i: int, j: int) -> list[int]:
    """``order`` with the node at position i moved to position j."""
    out = order[:i] + order[i + 1 :]
    out.insert(j, order[i])
    return out


class MoveTiming:
    """Makespans of ``order`` (timed as ``end``) with one node moved, computed from the
    first position the move touches instead of from the start (the simulator of Eqs. 9-10
    again, same result; the compiled walk is :func:`dansched.kernels.timing.moved_makespan`):
    the prefix keeps its times, and past the move the walk stops as soon as no changed
    finish time has a successor left and every pipe is free at the same time as in
    ``order``; the rest keeps its times too. Also which moves keep the skeleton's order
    constraints: a node may move to position ``j`` when its last order predecessor stands
    before ``j`` (moving earlier) or its first order successor after ``j`` (later)."""

    def __init__(self, skel: Skeleton, order: np.ndarray, end: np.ndarray) -> None:
        g = skel.timing
        self.skel, self.order, self.end = skel, order, end
        n = len(order)
        pos = np.empty(g.n, dtype=np.int64)
        pos[order] = np.arange(n, dtype=np.int64)
        ptr, idx = g.pred_ptr, g.pred_idx
        targets = np.repeat(np.arange(g.n, dtype=np.int64), np.diff(ptr))
        self.last_succ = np.full(g.n, -1, dtype=np.int64)  # position of each node's last successor in G2
        np.maximum.at(self.last_succ, idx, pos[targets])
        on_pipe = np.flatnonzero(g.pipe_array[order] >= 0)
        pipes = int(g.pipe_array.max(initial=-1)) + 1
        self.pipe_pos_ptr, self.pipe_pos_idx = csr_of_pairs(pipes, g.pipe_array[order[on_pipe]], on_pipe)
        ends = end[order]
        self.prefix_max = np.maximum.accumulate(ends) if n else ends
        self.suffix_max = np.zeros(n + 1, dtype=np.int64)
        self.suffix_max[:n] = np.maximum.accumulate(ends[::-1])[::-1] if n else ends
        opp, opi = skel.order_pred_csr
        osp, osi = skel.order_succ_csr
        self.last_pred_pos = _reduce_at(pos[opi], opp, np.maximum, -1)
        self.first_succ_pos = _reduce_at(pos[osi], osp, np.minimum, n)
        self.scratch = np.full(g.n, -1, dtype=np.int64)

    def legal(self, i: int, j: int) -> bool:
        """Moving the node at position ``i`` to position ``j`` keeps every order constraint."""
        v = self.order[i]
        return bool(self.last_pred_pos[v] < j) if j < i else bool(self.first_succ_pos[v] > j)

    def makespan(self, i: int, j: int) -> int:
        """The makespan of ``order`` with the node at position ``i`` moved to position ``j``."""
        g = self.skel.timing
        return int(
            timing_kernel.moved_makespan(
                self.order,
                i,
                j,
                g.pred_ptr,
                g.pred_idx,
                g.pipe_array,
                g.cycles_array,
                self.end,
                self.last_succ,
                self.prefix_max,
                self.suffix_max,
                self.pipe_pos_ptr,
                self.pipe_pos_idx,
                self.scratch,
            )
        )


def _reduce_at(values: np.ndarray, ptr: np.ndarray, op: np.ufunc, empty: int) -> np.ndarray:
    """``op`` over each CSR list of ``values`` (``empty`` for an empty list)."""
    out = np.full(len(ptr) - 1, empty, dtype=np.int64)
    full = np.flatnonzero(np.diff(ptr) > 0)
    if len(full):
        out[full] = op.reduceat(values, ptr[full])
    return out


def _timed(g: AugmentedGraph, order: np.ndarray, no_pipe: bool = False) -> tuple[np.ndarray, np.ndarray, int]:
    pipe = np.full(g.n, -1, dtype=np.int64) if no_pipe else g.pipe_array
    return simulate_timing_arrays(order, g.pred_ptr, g.pred_idx, pipe, g.cycles_array)


def _in_int64(g: AugmentedGraph) -> bool:
    """The compiled walk can time ``g``: its figures are int64 and their total stays below 2**62."""
    return g.cycles_array.dtype == np.int64 and sum(g.cycles) < 2**62


def local_refinement(skel: Skeleton, order: list[int], width: int, budget: int) -> tuple[list[int], int, int]:
    """Algorithm 3, lines 4-11: passes over the critical chain; for each critical node,
    try moving it (or a non-critical neighbour from N_W, Eq. 35) earlier or later within
    the window; accept only legal, strictly faster orders (Eq. 36). ``budget`` caps the
    number of timing evaluations. Returns (order, makespan, evaluations used). A graph
    whose figures could pass 64 bits keeps its order (no moves are timed)."""
    g = skel.timing
    if not _in_int64(g):
        return order, makespan_of(skel, order), 0
    arr = int64_array(order)
    start_a, end_a, best = _timed(g, arr)
    used = 0
    improved = True
    while improved and used < budget:
        improved = False
        start, end = start_a.tolist(), end_a.tolist()
        chain = critical_chain(g, order, start, end)
        chain_set = set(chain)
        pos = {v: i for i, v in enumerate(order)}
        earliest = earliest_starts(skel, order)
        sl = slack(start, earliest)
        timing = MoveTiming(skel, arr, end_a)
        # critical nodes that wait for their pipe first: they gain from moving earlier
        for v in sorted(chain, key=lambda x: (-sl[x], pos[x])):
            if used >= budget or improved or stopping():  # a stop request: the best order so far
                break
            i = pos[v]
            moves = [(i, j) for j in range(max(0, i - width), i)]
            moves += [(pos[u], i) for u in neighbourhood(order, pos, v, width, chain_set) if pos[u] < i]
            for a, b in moves:
                if used >= budget:
                    break
                if not timing.legal(a, b):
                    continue
                used += 1
                m2 = timing.makespan(a, b)
                if m2 < best:
                    order, best = _move(order, a, b), m2
                    arr = int64_array(order)
                    start_a, end_a, _ = _timed(g, arr)
                    improved = True
                    break
    return order, best, used


def priority_rules(skel: Skeleton, order: Sequence[int]) -> dict[str, tuple[list[int], list[int]]]:
    """Deterministic (priority, tie) pairs for the list scheduler."""
    g = skel.timing
    tail = bottom_level(g.preds, g.cycles, order)
    pos = [0] * g.n
    for i, v in enumerate(order):
        pos[v] = i
    neg_pos = [-p for p in pos]
    return {
        "bottom-level": (tail, pos),
        "stage-2 order": (neg_pos, pos),
    }


def need_pipes(hw: Hardware, scope: str) -> list[int]:
    """The pipes (indices) of a scope of :data:`dansched.params.FEED_SCOPES`: ``dma``, the
    hardware's data-movement pipes (``roles.dma``: the loads COPY_IN, SPILL_IN and MOVE run
    there, and the stores); ``all``, every pipe."""
    if scope == "all":
        return list(range(len(hw.pipes)))
    return [hw.pipe_index(p) for p in hw.dma_pipes]


def feed_by_need(skel: Skeleton, order: Sequence[int], scopes: Sequence[tuple[str, list[int]]]) -> dict[str, list[int]]:
    """Loads fed by need: per named set of pipes, the skeleton list-scheduled with those pipes
    in the active mode (Giffler and Thompson: a free pipe issues, among its tasks that could
    start before the earliest-ready one would finish, the most urgent) and the others
    non-delay. Urgency is the task's latest start in the right-justified schedule of
    ``order`` (a backward pass, as in forward-backward: the time its consumers need it,
    pipe contention included; earlier is more urgent), ties to the later in that backward
    schedule. A load that becomes ready a little earlier then no longer runs before a load
    whose consumer is needed much sooner."""
    if not scopes:
        return {}
    g = skel.timing
    arr = int64_array(order)
    _, end, _ = simulate_timing_arrays(arr, g.pred_ptr, g.pred_idx, g.pipe_array, g.cycles_array)
    late_start, rev_pos = backward_pass(skel, arr, end)
    return {name: forward_pass(skel, late_start, rev_pos, pipes).tolist() for name, pipes in scopes}


def cpe_refine(
    inst: Instance,
    plan: Plan,
    ev: Evaluation,
    *,
    exact_window: int = 0,
    time_limit: float = 60.0,
    seed: int = 0,
    params: CpeParams = CpeParams(),
) -> CPEResult:
    """Refine the valid Stage-2 ``plan`` (judged as ``ev``) for makespan; memory behaviour fixed."""
    assert ev.valid and ev.graph is not None and ev.makespan is not None
    skel = memory_skeleton(inst, plan.order, ev.graph)
    best_order, best = list(plan.order), ev.makespan
    tried: dict[str, int] = {}
    found_by = "stage-2 order"
    schedules = {name: list_schedule(skel, prio, tie) for name, (prio, tie) in priority_rules(skel, plan.order).items()}
    scopes = [(f"loads fed by need: {x}", need_pipes(inst.hw, x)) for x in params.feed_by_need]
    schedules |= feed_by_need(skel, plan.order, scopes)
    for name, cand in schedules.items():
        m = makespan_of(skel, cand)
        tried[name] = m
        if m < best:
            best_order, best, found_by = cand, m, f"list scheduling ({name})"
    fb, m, runs = forward_backward(skel, best_order)
    tried["forward-backward"] = m
    if m < best:
        best_order, best, found_by = fb, m, found_by + " + forward-backward"
    refined, m, used = local_refinement(skel, best_order, params.width, params.evaluations(skel.n))
    if m < best:
        best_order, best, found_by = refined, m, found_by + " + local moves"
    windows = None
    if exact_window > 0:
        polished, m, windows = exact_windows(skel, best_order, exact_window, time_limit=time_limit, seed=seed)
        if m < best:
            best_order, best, found_by = polished, m, found_by + " + CP-SAT windows"
    if not is_refinement(skel, best_order):
        raise AssertionError("CPE produced an order outside the Stage-2 memory skeleton")
    stats = CpeStats(found_by, tried, used, windows)
    return CPEResult(Plan(order=tuple(best_order), offsets=plan.offsets, spills=plan.spills), stats, best)
