"""Stage 3: Critical Path Enhancement (CPE, paper Algorithm 3).

Given a valid Stage-2 plan, CPE shortens the makespan by reordering inside the
refinement set R(sigma2, G2) of Eq. 14 — the memory skeleton of
:mod:`dansched.stages.cpe.skeleton` — so offsets, spills, traffic and peak stay
exactly those of Stage 2. Three steps, each accepting a new order only when it
is legal and strictly faster (Eq. 36):

1. non-delay list scheduling inside the skeleton under a few deterministic
   priority rules (:mod:`dansched.stages.cpe.list_schedule`): engines overlap and
   DMA is prefetched as early as the skeleton allows;
2. the paper's local refinement: timing, dependency-only earliest starts and
   slack (Eqs. 32-33), the critical chain (Eq. 34), a window of width W around
   each critical node (Eq. 35), single-node moves;
3. optionally, exact CP-SAT windows (:mod:`dansched.stages.cpe.exact_window`).

Budgets are counts of timing evaluations, never wall-clock, so the result is
deterministic.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate

from ...graph import bottom_level
from ...instance import Instance
from ...params import CpeParams
from ...plan import Plan
from ...simulate import Evaluation, simulate_timing
from .exact_window import exact_windows
from .list_schedule import forward_backward, list_schedule
from .skeleton import Skeleton, critical_chain, is_refinement, memory_skeleton
from .window_driver import WindowStats

__all__ = [
    "CpeStats",
    "CPEResult",
    "cpe_refine",
    "earliest_starts",
    "slack",
    "neighbourhood",
]


@dataclass(frozen=True)
class CpeStats:
    """What CPE did: the step that found the final order (``found_by``), each list
    schedule's makespan, the local-move evaluations spent, and what the exact windows did
    (``exact_windows``: the fixed-memory ones of ``--exact-window``; ``memory_windows``: the
    memory-aware ones problem 3 adds, :mod:`dansched.pipeline.problem3.polish`)."""

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
    return simulate_timing(order, g.preds, g.pipe, g.cycles)[2]


def earliest_starts(skel: Skeleton, order: Sequence[int]) -> list[int]:
    """Dependency-only earliest starts theta_v (Eq. 32): the latest finish of v's
    predecessors in G2, ignoring pipe contention."""
    g = skel.timing
    no_pipe = [-1] * g.n
    return simulate_timing(order, g.preds, no_pipe, g.cycles)[0]


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


def _legal_move(
    skel: Skeleton, succs: list[list[int]], order: Sequence[int], pos: dict[int, int], i: int, j: int
) -> bool:
    """Moving order[i] to position j keeps every order constraint of the skeleton."""
    v = order[i]
    if j < i:
        return all(pos[u] < j for u in skel.order_preds[v])
    return all(pos[w] > j for w in succs[v])


class MoveTiming:
    """Makespans of orders that differ from ``order`` (timed as ``end``) only inside a
    window of positions ``[lo, hi]``, computed from position ``lo`` on instead of from the
    start (the simulator of Eqs. 9-10 again, same result): the prefix keeps its times, and
    after the window the walk stops as soon as no changed finish time has a successor
    left and every pipe is free at the same time as in ``order``; the rest keeps its
    times too, so the makespan is the largest of the prefix's, the walked part's and the
    untouched suffix's finish times."""

    def __init__(self, skel: Skeleton, order: Sequence[int], end: Sequence[int]) -> None:
        g = skel.timing
        self.preds, self.pipe, self.cycles, self.end = g.preds, g.pipe, g.cycles, end
        self.order = order
        n = len(order)
        pos = [0] * g.n
        for i, v in enumerate(order):
            pos[v] = i
        last_succ = [-1] * g.n  # position of each node's last successor in G2
        for v in order:
            for u in g.preds[v]:
                if pos[v] > last_succ[u]:
                    last_succ[u] = pos[v]
        self.last_succ = last_succ
        self.pipe_positions: dict[int, list[int]] = {}
        for i, v in enumerate(order):
            if g.pipe[v] >= 0:
                self.pipe_positions.setdefault(g.pipe[v], []).append(i)
        self.prefix_max = list(accumulate((end[v] for v in order), max))
        suffix = [0] * (n + 1)
        for i in range(n - 1, -1, -1):
            suffix[i] = max(suffix[i + 1], end[order[i]])
        self.suffix_max = suffix

    def _pipe_free_before(self, k: int) -> dict[int, int]:
        """When each pipe is free just before position ``k`` of ``order``."""
        out = {}
        for p, positions in self.pipe_positions.items():
            i = bisect_left(positions, k)
            if i:
                out[p] = self.end[self.order[positions[i - 1]]]
        return out

    def makespan(self, cand: Sequence[int], lo: int, hi: int) -> int:
        """Makespan of ``cand``, equal to ``order`` outside positions ``[lo, hi]``."""
        preds, pipe, cycles, end, last_succ = self.preds, self.pipe, self.cycles, self.end, self.last_succ
        free = self._pipe_free_before(lo)
        changed: dict[int, int] = {}  # node -> its new finish, where it differs from end
        horizon = -1  # last position holding a successor of a changed node
        top = self.prefix_max[lo - 1] if lo > 0 else 0
        n = len(cand)
        k = lo
        old_free: dict[int, int] = {}
        while k < n:
            if k == hi + 1:
                old_free = self._pipe_free_before(k)
            if k > hi and k > horizon and free == old_free:
                return max(top, self.suffix_max[k])
            v = cand[k]
            t = 0
            for u in preds[v]:
                e = changed.get(u, end[u])
                if e > t:
                    t = e
            p = pipe[v]
            if p >= 0:
                f = free.get(p, 0)
                if f > t:
                    t = f
                fin = t + cycles[v]
                free[p] = fin
                if k > hi:
                    old_free[p] = end[v]
            else:
                fin = t + cycles[v]
            if fin != end[v]:
                changed[v] = fin
                if last_succ[v] > horizon:
                    horizon = last_succ[v]
            if fin > top:
                top = fin
            k += 1
        return top


def local_refinement(skel: Skeleton, order: list[int], width: int, budget: int) -> tuple[list[int], int, int]:
    """Algorithm 3, lines 4-11: passes over the critical chain; for each critical node,
    try moving it (or a non-critical neighbour from N_W, Eq. 35) earlier or later within
    the window; accept only legal, strictly faster orders (Eq. 36). ``budget`` caps the
    number of timing evaluations. Returns (order, makespan, evaluations used)."""
    g = skel.timing
    succs = skel.order_succs()
    start, end, best = simulate_timing(order, g.preds, g.pipe, g.cycles)
    used = 0
    improved = True
    while improved and used < budget:
        improved = False
        chain = critical_chain(g, order, start, end)
        chain_set = set(chain)
        pos = {v: i for i, v in enumerate(order)}
        earliest = earliest_starts(skel, order)
        sl = slack(start, earliest)
        timing = MoveTiming(skel, order, end)
        # critical nodes that wait for their pipe first: they gain from moving earlier
        for v in sorted(chain, key=lambda x: (-sl[x], pos[x])):
            if used >= budget or improved:
                break
            i = pos[v]
            moves = [(i, j) for j in range(max(0, i - width), i)]
            moves += [(pos[u], i) for u in neighbourhood(order, pos, v, width, chain_set) if pos[u] < i]
            for a, b in moves:
                if used >= budget:
                    break
                if not _legal_move(skel, succs, order, pos, a, b):
                    continue
                cand = _move(order, a, b)
                used += 1
                m2 = timing.makespan(cand, min(a, b), max(a, b))
                if m2 < best:
                    order, best = cand, m2
                    start, end, _ = simulate_timing(order, g.preds, g.pipe, g.cycles)
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
    for name, (prio, tie) in priority_rules(skel, plan.order).items():
        cand = list_schedule(skel, prio, tie)
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
