"""Exact CP-SAT polish of a window of the schedule (``dansched solve --exact-window W``).

For a window of W consecutive operation nodes (plus the cache nodes between
them) around the critical chain, the model has one interval per node and
``add_no_overlap`` per pipe: the order inside the window is free, everything
outside keeps its order and its start time. Precedence comes from the
augmented DAG G2; the skeleton's order-only constraints (memory-event chain,
residency brackets) become ``start(u) <= start(v)`` so the window's new order,
read off the start times, stays inside R(sigma2, G2) (paper Eq. 14). Window
nodes must finish before the fixed starts of their successors outside and fit
between the fixed neighbours on their pipe, so nothing after the window can be
delayed. The objective is the window's latest ``end(v) + rest(v)``, where
``rest(v)`` is the dependency-only path still to run after v. The current order
is the hint. The solution is turned back into an order, re-timed by the cycle
simulator and kept only if the makespan is strictly lower (Eq. 36).

Deterministic: one worker, a fixed seed, a ``max_deterministic_time`` budget per
window and a window count derived from ``time_limit`` (10 windows per second of
limit); the wall-clock ``time_limit`` itself is only a safety net, and output is
byte-identical whenever that net does not trigger.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from ortools.sat.python import cp_model

from ...graph import bottom_level, keyed_topological_order
from ...models.solver import deterministic_solver, stopped_by_clock
from ...simulate import simulate_timing
from .skeleton import Skeleton, critical_chain

__all__ = ["window_bounds", "solve_window", "exact_windows"]


def window_bounds(order: Sequence[int], pipe: Sequence[int], center: int, width: int) -> tuple[int, int]:
    """Positions [lo, hi) holding ``width`` operation nodes around position ``center``."""
    lo = hi = center
    ops = 0
    before = width // 2
    while lo > 0 and before > 0:
        lo -= 1
        if pipe[order[lo]] >= 0:
            before -= 1
            ops += 1
    while hi < len(order) and ops < width:
        if pipe[order[hi]] >= 0:
            ops += 1
        hi += 1
    while lo > 0 and ops < width:
        lo -= 1
        if pipe[order[lo]] >= 0:
            ops += 1
    return lo, hi


def _expand_through_cache_nodes(
    window: Sequence[int], inside: set[int], pipe: Sequence[int], preds: Sequence[Sequence[int]], end: Sequence[int]
) -> dict[int, tuple[set[int], int]]:
    """For each window node: the window *pipe* nodes it depends on, looking through
    cache nodes (no pipe, zero cycles), and the latest fixed end among predecessors
    outside the window reached the same way."""
    src: dict[int, tuple[set[int], int]] = {}
    for v in window:  # the window is in a valid order, so predecessors come first
        nodes: set[int] = set()
        const = 0
        for u in preds[v]:
            if u not in inside:
                const = max(const, end[u])
            elif pipe[u] >= 0:
                nodes.add(u)
            else:
                n2, c2 = src[u]
                nodes |= n2
                const = max(const, c2)
        src[v] = (nodes, const)
    return src


def _order_ancestors(skel: Skeleton, window: Sequence[int], inside: set[int]) -> dict[int, set[int]]:
    """For each window node, its pipe-node ancestors along order constraints inside the window."""
    pipe = skel.timing.pipe
    anc: dict[int, set[int]] = {}
    for v in window:
        a: set[int] = set()
        for u in skel.order_preds[v]:
            if u in inside:
                a |= anc[u]
                if pipe[u] >= 0:
                    a.add(u)
        anc[v] = a
    return anc


def _fixed_neighbours(
    skel: Skeleton,
    order: Sequence[int],
    lo: int,
    hi: int,
    start: Sequence[int],
    end: Sequence[int],
    inside: set[int],
    tsrc: dict[int, tuple[set[int], int]],
    horizon: int,
) -> tuple[dict[int, int], dict[int, int], dict[int, int]]:
    """What stays fixed around the window: per pipe, the end of its last task before the
    window and the start of its first after; per window pipe node, the latest end its
    successors outside the window allow."""
    g = skel.timing
    before_end: dict[int, int] = {}
    after_start: dict[int, int] = {}
    for v in order[:lo]:
        if g.pipe[v] >= 0:
            before_end[g.pipe[v]] = end[v]
    for v in order[hi:]:
        p = g.pipe[v]
        if p >= 0 and p not in after_start:
            after_start[p] = start[v]
    deadline: dict[int, int] = {}
    for w in order[hi:]:
        for u in g.preds[w]:
            if u in inside:
                for x in {u} if g.pipe[u] >= 0 else tsrc[u][0]:
                    deadline[x] = min(deadline.get(x, horizon), start[w])
    return before_end, after_start, deadline


def _sequence_from_starts(
    skel: Skeleton, window: Sequence[int], inside: set[int], ops: Sequence[int], key: dict[int, tuple]
) -> list[int] | None:
    """Kahn over the window's order constraints plus the pipe sequences CP-SAT chose (ties
    by ``key``); None when they form a cycle."""
    pipe = skel.timing.pipe
    edges = [(u, v) for v in window for u in skel.order_preds[v] if u in inside]
    for p in {pipe[v] for v in ops}:
        seq_p = sorted((v for v in ops if pipe[v] == p), key=lambda v: key[v])
        edges += zip(seq_p, seq_p[1:])
    return keyed_topological_order(window, edges, key)


def solve_window(
    skel: Skeleton,
    order: Sequence[int],
    lo: int,
    hi: int,
    start: Sequence[int],
    end: Sequence[int],
    rest: Sequence[int],
    *,
    deterministic_time: float,
    wall_time: float,
    seed: int,
) -> tuple[list[int] | None, dict[str, Any]]:
    """Solve one window; returns the window's new node sequence (or None) and solver stats.

    Only pipe nodes get time variables: cache nodes take no pipe and no time, so a G2
    path through them is a precedence between the pipe nodes at its ends. Order-only
    constraints (memory-event chain, residency brackets) bind time only between two
    nodes of the same pipe (their pipe order is fixed); across pipes they are kept by
    building the order with Kahn's algorithm over them and the pipe sequences, and a
    window whose choice admits no such order is dropped."""
    g = skel.timing
    window = list(order[lo:hi])
    inside = set(window)
    pos = {v: i for i, v in enumerate(order)}
    horizon = max(end) if end else 0
    tsrc = _expand_through_cache_nodes(window, inside, g.pipe, g.preds, end)
    anc = _order_ancestors(skel, window, inside)
    before_end, after_start, deadline = _fixed_neighbours(skel, order, lo, hi, start, end, inside, tsrc, horizon)
    m = cp_model.CpModel()
    s: dict[int, Any] = {}
    per_pipe: dict[int, list[Any]] = {}
    ops = [v for v in window if g.pipe[v] >= 0]
    for v in ops:
        p, c = g.pipe[v], g.cycles[v]
        lb = max(tsrc[v][1], before_end.get(p, 0))
        ub_end = min(deadline.get(v, horizon), after_start.get(p, horizon))
        sv = m.new_int_var(lb, max(lb, ub_end - c), f"s{v}")
        s[v] = sv
        if c > 0:
            per_pipe.setdefault(p, []).append(m.new_fixed_size_interval_var(sv, c, f"i{v}"))
        m.add_hint(sv, start[v])
    for v in ops:
        for u in tsrc[v][0]:
            m.add(s[v] >= s[u] + g.cycles[u])
        for u in anc[v] - tsrc[v][0]:
            if g.pipe[u] == g.pipe[v]:  # same pipe, ordered by the skeleton: keep that pipe order
                m.add(s[v] >= s[u] + g.cycles[u])
    for ivs in per_pipe.values():
        m.add_no_overlap(ivs)
    obj = m.new_int_var(0, 2 * horizon + max(rest, default=0), "obj")
    for v in ops:
        m.add(obj >= s[v] + g.cycles[v] + rest[v])
    m.minimize(obj)
    solver = deterministic_solver(seed, deterministic_time, max(0.01, wall_time))
    status = solver.solve(m)
    stats = {
        "status": solver.status_name(status),
        "nodes": len(window),
        "stopped_by_clock": stopped_by_clock(solver, status),
    }
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None, stats
    stats["objective"] = int(solver.objective_value)
    stats["best_bound"] = int(solver.best_objective_bound)
    key = {v: ((0, solver.value(s[v]), pos[v]) if v in s else (-1, 0, pos[v])) for v in window}
    seq = _sequence_from_starts(skel, window, inside, ops, key)
    if seq is None:
        stats["status"] = "CYCLIC_ORDER"
    return seq, stats


def exact_windows(
    skel: Skeleton,
    order: Sequence[int],
    width: int,
    *,
    time_limit: float = 60.0,
    seed: int = 0,
    deterministic_time: float = 0.5,
    max_windows: int | None = None,
) -> tuple[list[int], int, dict[str, Any]]:
    """Slide CP-SAT windows of ``width`` operation nodes along the critical chain,
    keeping each strictly faster order. Returns (order, makespan, stats)."""
    g = skel.timing
    t0 = time.monotonic()
    order = list(order)
    start, end, best = simulate_timing(order, g.preds, g.pipe, g.cycles)
    if max_windows is None:  # a count, not the clock, decides how far we go: deterministic
        max_windows = max(1, int(10 * time_limit))
    solved = improved = 0
    clock = False  # the wall-clock safety net ended a window or the loop
    statuses: dict[str, int] = {}
    done_centers: set[int] = set()
    while solved < max_windows and time.monotonic() - t0 < time_limit:
        chain = critical_chain(skel, order, start, end)
        pos = {v: i for i, v in enumerate(order)}
        centers = [pos[v] for v in chain if g.pipe[v] >= 0 and pos[v] not in done_centers]
        if not centers:
            break
        rest = [t - c for t, c in zip(bottom_level(g.preds, g.cycles, order), g.cycles)]
        progressed = False
        for c in centers:
            if solved >= max_windows or time.monotonic() - t0 >= time_limit:
                break
            lo, hi = window_bounds(order, g.pipe, c, width)
            done_centers.update(range(lo, hi))
            seq, st = solve_window(
                skel,
                order,
                lo,
                hi,
                start,
                end,
                rest,
                deterministic_time=deterministic_time,
                wall_time=time_limit - (time.monotonic() - t0),
                seed=seed,
            )
            solved += 1
            clock = clock or st["stopped_by_clock"]
            statuses[st["status"]] = statuses.get(st["status"], 0) + 1
            if seq is None:
                continue
            cand = order[:lo] + seq + order[hi:]
            s2, e2, m2 = simulate_timing(cand, g.preds, g.pipe, g.cycles)
            if m2 < best:
                order, start, end, best = cand, s2, e2, m2
                improved += 1
                done_centers.clear()
                progressed = True
                break
        if not progressed:
            break
    clock = clock or (solved < max_windows and time.monotonic() - t0 >= time_limit)
    stats = {"windows": solved, "improved": improved, "statuses": statuses, "width": width}
    return order, best, stats | {"stopped_by_clock": clock}
