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
still to run, without the reuse edges inside the window). The solution is turned back
into an order by Kahn's algorithm over all the order constraints above plus the chosen
pipe sequences (a cycle drops the window); the caller re-judges it with the evaluator.

:class:`MemoryWindowModel` builds the model one constraint family per method (start
times, precedence, residency brackets, segment order, pipe capacity, objective), as
:mod:`dansched.models.joint` does; :class:`MemoryWindowContext` holds what every window
of one plan reads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ortools.sat.python import cp_model

from ..graph import keyed_topological_order
from ..instance import KIND_OP, Instance
from ..simulate import AugmentedGraph, Segment, spill_of_node
from .solver import deterministic_solver, solve_model, stopped_by_clock
from .timing_window import TimedSchedule, timed_schedule

__all__ = [
    "segments_by_buffer",
    "window_segments",
    "MemoryWindowContext",
    "memory_window_context",
    "MemoryWindowModel",
    "solve_memory_window",
    "window_rest",
]


def segments_by_buffer(num_buffers: int, segments: Sequence[Segment]) -> list[list[Segment]]:
    """Each buffer's residency segments, in schedule order (``segments``: a plan's, from the
    evaluator, :meth:`~dansched.simulate.Evaluation.segments`)."""
    out: list[list[Segment]] = [[] for _ in range(num_buffers)]
    for seg in sorted(segments, key=lambda s: s.start):
        out[seg.buf].append(seg)
    return out


def window_segments(
    inst: Instance,
    graph: AugmentedGraph,
    segments_of: Sequence[Sequence[Segment]],
    window: Sequence[int],
    inside: set[int],
    pos: Sequence[int],
) -> tuple[list[Segment], dict[tuple[int, int], Segment]]:
    """The segments with an event in the window (by buffer, then schedule order), and for
    each (operation, buffer) of the window the segment the operation runs in."""
    n = inst.n
    L = inst.lists()
    bufs: set[int] = set()
    for v in window:
        if v >= n:
            bufs.add(graph.spill_buf[spill_of_node(n, v)[0]])
        elif L.kind[v] == KIND_OP:
            bufs.update(L.bufs[v])
        else:
            bufs.add(L.node_buf[v])
    segs: list[Segment] = []
    runs_in: dict[tuple[int, int], Segment] = {}
    for b in sorted(bufs):
        for seg in segments_of[b]:
            if seg.start_node in inside or seg.end_node in inside:
                segs.append(seg)
            for u in L.users[b]:
                if u in inside and seg.start < pos[u] < seg.end:
                    runs_in[(u, b)] = seg
    return segs, runs_in


@dataclass(frozen=True)
class MemoryWindowContext:
    """What every memory-aware window of one plan reads: the instance, the plan's residency
    segments by buffer, its timed schedule on the augmented DAG G2, G2's address-reuse edges
    and successor lists."""

    inst: Instance
    segments_of: list[list[Segment]]
    sched: TimedSchedule
    reuse: set[tuple[int, int]]
    succs: list[list[int]]


def memory_window_context(
    inst: Instance,
    segments: Sequence[Segment],
    graph: AugmentedGraph,
    order: Sequence[int],
    start: Sequence[int],
    end: Sequence[int],
) -> MemoryWindowContext:
    """The :class:`MemoryWindowContext` of a valid plan's ``order`` on its augmented DAG
    ``graph`` with its residency ``segments``."""
    return MemoryWindowContext(
        inst,
        segments_by_buffer(inst.num_buffers, segments),
        timed_schedule(graph, order, start, end),
        set(graph.reuse_edges),
        graph.succs(),
    )


class MemoryWindowModel:
    """The model of positions ``[lo, hi)`` of the context's schedule (module docstring).
    Build with :meth:`build` (False: the window's boundary admits no order), then :meth:`solve`."""

    def __init__(self, ctx: MemoryWindowContext, lo: int, hi: int) -> None:
        sched = ctx.sched
        self.ctx, self.lo, self.hi = ctx, lo, hi
        self.window = list(sched.order[lo:hi])
        self.inside = set(self.window)
        horizon = max(sched.end) if sched.end else 0
        self.big = 2 * horizon + max(sched.rest, default=0) + 1
        self.segs, self.runs_in = window_segments(
            ctx.inst, sched.graph, ctx.segments_of, self.window, self.inside, sched.pos
        )
        self.m = cp_model.CpModel()
        self.s: dict[int, Any] = {}
        self.order_edges: list[tuple[int, int]] = []  # the order constraints, for Kahn
        self.choices: list[tuple[Any, Segment, Segment]] = []  # (Boolean: a before b, a, b)
        self.current = 0  # the current order's objective (set by set_objective)

    def _pipe_neighbours(self) -> tuple[dict[int, int], dict[int, int]]:
        """Per pipe, the end of its last task before the window (0 when none) and the start
        of its first task after the window."""
        g, order, start, end = self.ctx.sched.graph, self.ctx.sched.order, self.ctx.sched.start, self.ctx.sched.end
        before_end: dict[int, int] = {}
        after_start: dict[int, int] = {}
        for v in order[: self.lo][::-1]:
            p = g.pipe[v]
            if p >= 0 and p not in before_end:
                before_end[p] = end[v]
                if len(before_end) == len({x for x in g.pipe if x >= 0}):
                    break
        for v in self.window:
            p = g.pipe[v]
            if p >= 0 and p not in before_end:
                before_end[p] = 0
        pipes_in = {g.pipe[v] for v in self.window if g.pipe[v] >= 0}
        for v in order[self.hi :]:
            p = g.pipe[v]
            if p in pipes_in and p not in after_start:
                after_start[p] = start[v]
                if len(after_start) == len(pipes_in):
                    break
        return before_end, after_start

    def add_start_times(self) -> None:
        """A start time per window node between its fixed releases (predecessors outside, the
        pipe's task before the window) and deadlines (successors after the window, the
        pipe's task after it); the current start is the hint."""
        sched, m = self.ctx.sched, self.m
        g, pos, start, end = sched.graph, sched.pos, sched.start, sched.end
        before_end, after_start = self._pipe_neighbours()
        for v in self.window:
            c = g.cycles[v]
            lb = max((end[u] for u in g.preds[v] if u not in self.inside), default=0)
            ub_end = self.big
            p = g.pipe[v]
            if p >= 0:
                lb = max(lb, before_end.get(p, 0))
                ub_end = min(ub_end, after_start.get(p, self.big))
            for w in self.ctx.succs[v]:
                if w not in self.inside and pos[w] >= self.hi:
                    ub_end = min(ub_end, start[w])
            self.s[v] = m.new_int_var(lb, max(lb, ub_end - c), f"s{v}")
            m.add_hint(self.s[v], start[v])

    def add_precedence(self) -> None:
        """Every G2 edge inside the window except the address-reuse edges (re-derived from
        the new order by the evaluator)."""
        g, m, s = self.ctx.sched.graph, self.m, self.s
        for v in self.window:
            for u in g.preds[v]:
                if u in self.inside and (u, v) not in self.ctx.reuse:
                    m.add(s[v] >= s[u] + g.cycles[u])
                    self.order_edges.append((u, v))

    def add_residency_brackets(self) -> None:
        """Each operation inside the residency segment it ran in (order only)."""
        m, s, inside = self.m, self.s, self.inside
        for (v, _b), seg in self.runs_in.items():
            if seg.start_node in inside:
                m.add(s[v] >= s[seg.start_node])
                self.order_edges.append((seg.start_node, v))
            if seg.end_node in inside:
                m.add(s[seg.end_node] >= s[v])
                self.order_edges.append((v, seg.end_node))

    def add_segment_order(self) -> bool:
        """Two segments of one tier whose address ranges meet never coexist: one Boolean per
        pair (which comes first) when both lie in the window, else the side fixed by the
        boundary. False when the boundary fixes both sides against each other."""
        g, m, s, pos, inside = self.ctx.sched.graph, self.m, self.s, self.ctx.sched.pos, self.inside
        segs = self.segs
        for i, a in enumerate(segs):
            for b2 in segs[i + 1 :]:
                if not a.shares_addresses(b2):
                    continue
                a_first, a_last = a.start_node in inside, a.end_node in inside
                b_first, b_last = b2.start_node in inside, b2.end_node in inside
                if a_first and a_last and b_first and b_last:
                    x = m.new_bool_var(f"o{a.start_node}_{b2.start_node}")
                    m.add(s[b2.start_node] >= s[a.end_node] + g.cycles[a.end_node]).only_enforce_if(x)
                    m.add(s[a.start_node] >= s[b2.end_node] + g.cycles[b2.end_node]).only_enforce_if(~x)
                    m.add_hint(x, pos[a.end_node] < pos[b2.start_node])
                    self.choices.append((x, a, b2))
                    continue
                # one of them is open at the window's start or end: its side is fixed
                first, second = (a, b2) if (not a_first or not b_last) else (b2, a)
                if second.start_node not in inside or first.end_node not in inside:
                    return False
                m.add(s[second.start_node] >= s[first.end_node] + g.cycles[first.end_node])
                self.order_edges.append((first.end_node, second.start_node))
        return True

    def add_pipe_no_overlap(self) -> None:
        """Each pipe runs one task at a time (Eqs. 9-10)."""
        g, m = self.ctx.sched.graph, self.m
        per_pipe: dict[int, list[Any]] = {}
        for v in self.window:
            if g.pipe[v] >= 0 and g.cycles[v] > 0:
                per_pipe.setdefault(g.pipe[v], []).append(
                    m.new_fixed_size_interval_var(self.s[v], g.cycles[v], f"i{v}")
                )
        for ivs in per_pipe.values():
            m.add_no_overlap(ivs)

    def set_objective(self) -> None:
        """Minimise the window's latest ``end(v) + rest(v)``, ``rest`` without the reuse edges
        inside the window (:func:`window_rest`); :attr:`current` is the current order's value."""
        g, m, end = self.ctx.sched.graph, self.m, self.ctx.sched.end
        rest = window_rest(g, self.window, self.inside, self.ctx.reuse, self.ctx.succs, self.ctx.sched.rest)
        self.current = max(end[v] + rest[v] for v in self.window)
        obj = m.new_int_var(0, self.big + self.current, "obj")
        for v in self.window:
            m.add(obj >= self.s[v] + g.cycles[v] + rest[v])
        m.minimize(obj)

    def build(self) -> bool:
        """Every constraint family, in order; False when the segment order cannot hold."""
        self.add_start_times()
        self.add_precedence()
        self.add_residency_brackets()
        if not self.add_segment_order():
            return False
        self.add_pipe_no_overlap()
        self.set_objective()
        return True

    def solve(
        self, *, deterministic_time: float, wall_time: float, seed: int
    ) -> tuple[list[int] | None, dict[str, Any]]:
        """The window's new node sequence (None when the model finds nothing better than the
        current window or no order realises its choice) and stats."""
        solver = deterministic_solver(seed, deterministic_time, max(0.01, wall_time))
        status = solve_model(solver, self.m)
        stats: dict[str, Any] = {
            "status": solver.status_name(status),
            "nodes": len(self.window),
            "segments": len(self.segs),
            "pairs": len(self.choices),
            "stopped_by_clock": stopped_by_clock(solver, status),
        }
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return None, stats
        stats["objective"] = int(solver.objective_value)
        if stats["objective"] >= self.current:
            stats["status"] = "NO_GAIN"
            return None, stats
        order_edges = list(self.order_edges)
        for x, a, b2 in self.choices:
            order_edges.append((a.end_node, b2.start_node) if solver.boolean_value(x) else (b2.end_node, a.start_node))
        g, pos = self.ctx.sched.graph, self.ctx.sched.pos
        key = {v: (solver.value(self.s[v]), pos[v]) for v in self.window}
        ops_by_pipe: dict[int, list[int]] = {}
        for v in self.window:
            if g.pipe[v] >= 0:
                ops_by_pipe.setdefault(g.pipe[v], []).append(v)
        for seq_p in ops_by_pipe.values():
            seq_p.sort(key=lambda v: key[v])
            order_edges += list(zip(seq_p, seq_p[1:]))
        seq = keyed_topological_order(self.window, order_edges, key)
        if seq is None:
            stats["status"] = "CYCLIC_ORDER"
        return seq, stats


def solve_memory_window(
    ctx: MemoryWindowContext, lo: int, hi: int, *, deterministic_time: float, wall_time: float, seed: int
) -> tuple[list[int] | None, dict[str, Any]]:
    """Build and solve the window ``[lo, hi)`` (:class:`MemoryWindowModel`); returns the
    window's new node sequence (or None) and stats."""
    model = MemoryWindowModel(ctx, lo, hi)
    if not model.build():
        return None, {"status": "BOUNDARY_CONFLICT", "nodes": len(model.window)}
    return model.solve(deterministic_time=deterministic_time, wall_time=wall_time, seed=seed)


def window_rest(
    g: AugmentedGraph,
    window: Sequence[int],
    inside: set[int],
    reuse: set[tuple[int, int]],
    succs: Sequence[Sequence[int]] | Mapping[int, Sequence[int]],
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
