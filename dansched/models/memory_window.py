"""Memory-aware exact CP-SAT window (``--exact-window W --exact-window-mode memory``).

The fixed-memory window of :mod:`dansched.models.timing_window` keeps the
sequence of memory events, so two segments that share addresses keep their
order. Here the memory events inside the window may move too. For a window of
consecutive schedule positions ``[lo, hi)`` the model has:

- a start time per window node (operations, spill tasks, ALLOC and FREE; the
  latter take no pipe and no time) and ``add_no_overlap`` per pipe, between the
  fixed neighbours on each pipe (Eqs. 9-10);
- every edge of the augmented DAG G2 except the address-reuse edges between two
  window nodes (those follow from the new order and are re-derived by the
  evaluator); edges from outside are fixed release times, edges to nodes after
  the window are deadlines (the boundary is fixed);
- each operation inside the residency segment it ran in (after the event that
  started it, before the one that ends it);
- per tier, the residency intervals of the window's segments at their fixed
  offsets: no-overlap-2D with fixed heights, posted pairwise for the segments
  whose address ranges meet (one Boolean per pair, the order of the two
  segments); a segment that started before the window comes first, one that
  ends after it comes last. Offsets do not move, so capacity holds.

The objective is the window's latest ``end(v) + rest(v)`` (dependency-only path
still to run, without the reuse edges inside the window). The solution is turned back into an order by Kahn's algorithm
over all the order constraints above plus the chosen pipe sequences (a cycle
drops the window); the caller re-judges it with the evaluator.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ortools.sat.python import cp_model

from ..graph import keyed_topological_order
from ..instance import KIND_OP, Instance
from ..plan import Plan
from ..simulate import AugmentedGraph
from .solver import deterministic_solver, stopped_by_clock

__all__ = ["Segment", "MemoryLayout", "memory_layout", "window_segments", "solve_memory_window"]


@dataclass(frozen=True)
class Segment:
    """One residency of a buffer: from ``first`` (ALLOC or SPILL_IN) to ``last`` (SPILL_OUT
    or FREE), at ``[offset, offset + size)`` of ``tier``; ``*_in`` say whether the event
    lies in the window."""

    buf: int
    tier: int
    offset: int
    size: int
    first: int
    last: int
    first_in: bool
    last_in: bool


@dataclass(frozen=True)
class MemoryLayout:
    """A plan's offsets by buffer index, the new offset of each spill and, per buffer,
    its spill numbers (0-based, in spill-file order)."""

    offset: list[int]
    spill_offset: list[int]
    spills_of: list[list[int]]


def memory_layout(inst: Instance, plan: Plan) -> MemoryLayout:
    offset = [0] * inst.num_buffers
    for bid, off in plan.offsets or ():
        offset[inst.buffer_index(bid)] = int(off)
    spills_of: list[list[int]] = [[] for _ in range(inst.num_buffers)]
    spill_offset = []
    for k, (bid, off) in enumerate(plan.spills):
        spills_of[inst.buffer_index(bid)].append(k)
        spill_offset.append(int(off))
    return MemoryLayout(offset, spill_offset, spills_of)


def _buffer_segments(inst: Instance, lay: MemoryLayout, b: int, pos: Sequence[int]) -> list[tuple[int, int, int]]:
    """(first event, last event, offset) of each residency of buffer ``b``, in order."""
    n = inst.n
    events = [(pos[int(inst.buf_alloc[b])], int(inst.buf_alloc[b]), lay.offset[b])]
    for k in lay.spills_of[b]:
        events.append((pos[n + 2 * k], n + 2 * k, -1))
        events.append((pos[n + 2 * k + 1], n + 2 * k + 1, lay.spill_offset[k]))
    events.append((pos[int(inst.buf_free[b])], int(inst.buf_free[b]), -1))
    events.sort()
    return [(events[i][1], events[i + 1][1], events[i][2]) for i in range(0, len(events) - 1, 2)]


def window_segments(
    inst: Instance,
    graph: AugmentedGraph,
    lay: MemoryLayout,
    window: Sequence[int],
    inside: set[int],
    pos: Sequence[int],
) -> tuple[list[Segment], dict[tuple[int, int], Segment]]:
    """The segments with an event in the window, and for each (operation, buffer) of the
    window the segment the operation runs in."""
    n = inst.n
    L = inst.lists()
    bufs: set[int] = set()
    for v in window:
        if v >= n:
            bufs.add(graph.spill_buf[(v - n) // 2])
        elif L.kind[v] == KIND_OP:
            bufs.update(L.bufs[v])
        else:
            bufs.add(L.node_buf[v])
    segs: list[Segment] = []
    runs_in: dict[tuple[int, int], Segment] = {}
    for b in sorted(bufs):
        t, size = int(inst.buf_tier[b]), int(inst.buf_size[b])
        for first, last, off in _buffer_segments(inst, lay, b, pos):
            seg = Segment(b, t, off, size, first, last, first in inside, last in inside)
            if seg.first_in or seg.last_in:
                segs.append(seg)
            for u in L.users[b]:
                if u in inside and pos[first] < pos[u] < pos[last]:
                    runs_in[(u, b)] = seg
    return segs, runs_in


def solve_memory_window(
    inst: Instance,
    graph: AugmentedGraph,
    lay: MemoryLayout,
    order: Sequence[int],
    pos: Sequence[int],
    lo: int,
    hi: int,
    start: Sequence[int],
    end: Sequence[int],
    rest: Sequence[int],
    reuse: set[tuple[int, int]],
    succs: Sequence[Sequence[int]],
    *,
    deterministic_time: float,
    wall_time: float,
    seed: int,
) -> tuple[list[int] | None, dict[str, Any]]:
    """Solve one window; returns the window's new node sequence (None when the model finds
    nothing better than the current window or no order realises its choice) and stats."""
    g = graph
    window = list(order[lo:hi])
    inside = set(window)
    horizon = max(end) if end else 0
    big = 2 * horizon + max(rest, default=0) + 1
    segs, runs_in = window_segments(inst, g, lay, window, inside, pos)
    m = cp_model.CpModel()
    s: dict[int, Any] = {}
    before_end: dict[int, int] = {}
    after_start: dict[int, int] = {}
    for v in order[:lo][::-1]:
        p = g.pipe[v]
        if p >= 0 and p not in before_end:
            before_end[p] = end[v]
            if len(before_end) == len({x for x in g.pipe if x >= 0}):
                break
    for v in window:
        p = g.pipe[v]
        if p >= 0 and p not in before_end:
            before_end[p] = 0
    pipes_in = {g.pipe[v] for v in window if g.pipe[v] >= 0}
    for v in order[hi:]:
        p = g.pipe[v]
        if p in pipes_in and p not in after_start:
            after_start[p] = start[v]
            if len(after_start) == len(pipes_in):
                break
    order_edges: list[tuple[int, int]] = []
    for v in window:
        c = g.cycles[v]
        lb = max((end[u] for u in g.preds[v] if u not in inside), default=0)
        ub_end = big
        p = g.pipe[v]
        if p >= 0:
            lb = max(lb, before_end.get(p, 0))
            ub_end = min(ub_end, after_start.get(p, big))
        for w in succs[v]:
            if w not in inside and pos[w] >= hi:
                ub_end = min(ub_end, start[w])
        s[v] = m.new_int_var(lb, max(lb, ub_end - c), f"s{v}")
        m.add_hint(s[v], start[v])
    for v in window:
        for u in g.preds[v]:
            if u in inside and (u, v) not in reuse:
                m.add(s[v] >= s[u] + g.cycles[u])
                order_edges.append((u, v))
    for (v, _b), seg in runs_in.items():  # residency brackets: order only
        if seg.first_in:
            m.add(s[v] >= s[seg.first])
            order_edges.append((seg.first, v))
        if seg.last_in:
            m.add(s[seg.last] >= s[v])
            order_edges.append((v, seg.last))
    choices: list[tuple[Any, Segment, Segment]] = []
    for i, a in enumerate(segs):
        for b2 in segs[i + 1 :]:
            if a.tier != b2.tier or a.offset >= b2.offset + b2.size or b2.offset >= a.offset + a.size:
                continue
            if a.first_in and a.last_in and b2.first_in and b2.last_in:
                x = m.new_bool_var(f"o{a.first}_{b2.first}")
                m.add(s[b2.first] >= s[a.last] + g.cycles[a.last]).only_enforce_if(x)
                m.add(s[a.first] >= s[b2.last] + g.cycles[b2.last]).only_enforce_if(~x)
                m.add_hint(x, pos[a.last] < pos[b2.first])
                choices.append((x, a, b2))
                continue
            # one of them is open at the window's start or end: its side is fixed
            first, second = (a, b2) if (not a.first_in or not b2.last_in) else (b2, a)
            if not second.first_in or not first.last_in:
                return None, {"status": "BOUNDARY_CONFLICT", "nodes": len(window)}
            m.add(s[second.first] >= s[first.last] + g.cycles[first.last])
            order_edges.append((first.last, second.first))
    per_pipe: dict[int, list[Any]] = {}
    for v in window:
        if g.pipe[v] >= 0 and g.cycles[v] > 0:
            per_pipe.setdefault(g.pipe[v], []).append(m.new_fixed_size_interval_var(s[v], g.cycles[v], f"i{v}"))
    for ivs in per_pipe.values():
        m.add_no_overlap(ivs)
    rest = _window_rest(g, window, inside, reuse, succs, rest)
    current = max(end[v] + rest[v] for v in window)
    obj = m.new_int_var(0, big + current, "obj")
    for v in window:
        m.add(obj >= s[v] + g.cycles[v] + rest[v])
    m.minimize(obj)
    solver = deterministic_solver(seed, deterministic_time, max(0.01, wall_time))
    status = solver.solve(m)
    stats: dict[str, Any] = {
        "status": solver.status_name(status),
        "nodes": len(window),
        "segments": len(segs),
        "pairs": len(choices),
        "stopped_by_clock": stopped_by_clock(solver, status),
    }
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None, stats
    stats["objective"] = int(solver.objective_value)
    if stats["objective"] >= current:
        stats["status"] = "NO_GAIN"
        return None, stats
    for x, a, b2 in choices:
        order_edges.append((a.last, b2.first) if solver.boolean_value(x) else (b2.last, a.first))
    key = {v: (solver.value(s[v]), pos[v]) for v in window}
    ops_by_pipe: dict[int, list[int]] = {}
    for v in window:
        if g.pipe[v] >= 0:
            ops_by_pipe.setdefault(g.pipe[v], []).append(v)
    for seq_p in ops_by_pipe.values():
        seq_p.sort(key=lambda v: key[v])
        order_edges += list(zip(seq_p, seq_p[1:]))
    seq = keyed_topological_order(window, order_edges, key)
    if seq is None:
        stats["status"] = "CYCLIC_ORDER"
    return seq, stats


def _window_rest(
    g: AugmentedGraph,
    window: Sequence[int],
    inside: set[int],
    reuse: set[tuple[int, int]],
    succs: Sequence[Sequence[int]],
    rest: Sequence[int],
) -> dict[int, int]:
    """``rest`` (dependency-only path after each node, Eq. 20's criticality minus its own
    cycles) recomputed for the window's nodes without the reuse edges between two window
    nodes, which the window may drop; nodes outside keep the given values."""
    out: dict[int, int] = {}
    for v in reversed(window):
        r = 0
        for w in succs[v]:
            if w in inside:
                if (v, w) not in reuse:
                    r = max(r, g.cycles[w] + out[w])
            else:
                r = max(r, g.cycles[w] + rest[w])
        out[v] = r
    return out
