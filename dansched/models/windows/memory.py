"""Memory-aware exact CP-SAT window (``--exact-window W --exact-window-mode memory``).

The fixed-memory window of :mod:`dansched.models.windows.fixed` keeps the
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
times, precedence, residency brackets, segment order, pipe capacity, objective) on the
families every window shares (:mod:`dansched.models.windows.seam`); :class:`MemoryWindowContext`
holds what every window of one plan reads. A window returns a
:class:`~dansched.models.windows.seam.WindowOutcome` whose plan is its new node sequence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...graph import keyed_topological_order
from ...instance import KIND_OP, Instance
from ...simulate import AugmentedGraph, Segment, spill_of_node
from .seam import Schedule, WindowModel, WindowOutcome, pipe_sequence_edges, window_rest

__all__ = [
    "segments_by_buffer",
    "window_segments",
    "MemoryWindowContext",
    "MemoryWindowModel",
    "solve_memory_window",
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
    segments by buffer, its schedule on the augmented DAG G2, G2's address-reuse edges
    and successor lists."""

    inst: Instance
    segments_of: list[list[Segment]]
    sched: Schedule
    reuse: set[tuple[int, int]]
    succs: list[list[int]]

    @classmethod
    def of(cls, inst: Instance, segments: Sequence[Segment], sched: Schedule) -> MemoryWindowContext:
        """The context of a valid plan's schedule ``sched`` with its residency ``segments``."""
        g = sched.graph
        return cls(inst, segments_by_buffer(inst.num_buffers, segments), sched, set(g.reuse_edges), g.succs())


class MemoryWindowModel(WindowModel):
    """The model of positions ``[lo, hi)`` of the context's schedule (module docstring).
    Build with :meth:`build` (False: the window's boundary admits no order), then :meth:`solve`."""

    def __init__(self, ctx: MemoryWindowContext, lo: int, hi: int) -> None:
        super().__init__(ctx.sched, lo, hi)
        self.ctx = ctx
        self.segs, self.runs_in = window_segments(
            ctx.inst, ctx.sched.graph, ctx.segments_of, self.window, self.inside, ctx.sched.pos
        )
        self.choices: list[tuple[Any, Segment, Segment]] = []  # (Boolean: a before b, a, b)

    current: float = 0  # the current window's objective (set by set_objective)

    def counts(self) -> dict[str, int]:
        return {"segments": len(self.segs), "pairs": len(self.choices)}

    def add_precedence(self) -> None:
        """Every G2 edge inside the window except the address-reuse edges (re-derived from
        the new order by the evaluator)."""
        g = self.sched.graph
        for v in self.window:
            for u in g.preds[v]:
                if u in self.inside and (u, v) not in self.ctx.reuse:
                    self.add_edge(u, v)

    def add_residency_brackets(self) -> None:
        """Each operation inside the residency segment it ran in (order only)."""
        m, s, inside = self.m, self.s, self.inside
        for (v, _b), seg in self.runs_in.items():
            if seg.start_node in inside:
                m.add(s[v] >= s[seg.start_node])
                self.order_edges.append((seg.start_node, v, None))
            if seg.end_node in inside:
                m.add(s[seg.end_node] >= s[v])
                self.order_edges.append((v, seg.end_node, None))

    def add_segment_order(self) -> bool:
        """Two segments of one tier whose address ranges meet never coexist: one Boolean per
        pair (which comes first) when both lie in the window, else the side fixed by the
        boundary. False when the boundary fixes both sides against each other."""
        g, m, s, pos, inside = self.sched.graph, self.m, self.s, self.sched.pos, self.inside
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
                self.add_edge(first.end_node, second.start_node)
        return True

    def set_objective(self) -> None:
        """Minimise the window's latest ``end(v) + rest(v)``, ``rest`` without the reuse edges
        inside the window (:func:`~dansched.models.windows.seam.window_rest`); :attr:`current` is
        the current order's value."""
        g, end = self.sched.graph, self.sched.end
        rest = window_rest(g, self.window, self.inside, self.ctx.reuse, self.ctx.succs, self.sched.rest)
        self.current = max(end[v] + rest[v] for v in self.window)
        self.minimize_latest(((v, g.cycles[v], rest[v], None) for v in self.window), self.big + self.current)

    def build(self) -> bool:
        """Every constraint family, in order; False when the segment order cannot hold."""
        self.add_start_times(self.ctx.succs)
        self.add_precedence()
        self.add_residency_brackets()
        if not self.add_segment_order():
            return False
        for v in self.window:
            self.add_task_interval(v, self.pipe[v], self.cycles[v])
        self.add_pipe_no_overlap()
        self.set_objective()
        return True

    def solve(self, *, deterministic_time: float, wall_time: float, seed: int) -> WindowOutcome[list[int]]:
        """The window's new node sequence (None when the model finds nothing better than the
        current window or no order realises its choice), with the status and stats."""
        solver, status, stats = self.solve_model(deterministic_time=deterministic_time, wall_time=wall_time, seed=seed)
        if solver is None:
            return WindowOutcome(status, None, stats)
        if stats.objective is not None and stats.objective >= self.current:
            return WindowOutcome("NO_GAIN", None, stats)
        order_edges = [(u, v) for u, v, _ in self.order_edges]
        for x, a, b2 in self.choices:
            order_edges.append((a.end_node, b2.start_node) if solver.boolean_value(x) else (b2.end_node, a.start_node))
        key = {v: (solver.value(self.s[v]), self.sched.pos[v]) for v in self.window}
        order_edges += pipe_sequence_edges(self.window, self.sched.graph.pipe, key)
        seq = keyed_topological_order(self.window, order_edges, key)
        return WindowOutcome(status if seq is not None else "CYCLIC_ORDER", seq, stats)


def solve_memory_window(
    ctx: MemoryWindowContext, lo: int, hi: int, *, deterministic_time: float, wall_time: float, seed: int
) -> WindowOutcome[list[int]]:
    """Build and solve the window ``[lo, hi)`` (:class:`MemoryWindowModel`)."""
    model = MemoryWindowModel(ctx, lo, hi)
    if not model.build():
        return WindowOutcome("BOUNDARY_CONFLICT", None, model.unsolved())
    return model.solve(deterministic_time=deterministic_time, wall_time=wall_time, seed=seed)
