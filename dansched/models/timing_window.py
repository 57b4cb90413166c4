"""Exact CP-SAT model of one window of a schedule with its memory fixed (``dansched solve
--exact-window W``; the driver that slides it is :mod:`dansched.stages.cpe.exact_window`).

For a window of consecutive schedule positions ``[lo, hi)`` the model has one interval
per pipe node and ``add_no_overlap`` per pipe: the order inside the window is free,
everything outside keeps its order and its start time. Cache nodes take no pipe and no
time, so a path of the augmented DAG G2 through them is a precedence between the pipe
nodes at its ends. Precedence comes from G2; the order-only constraints of the memory
skeleton (memory-event chain, residency brackets) bind time only between two nodes of
the same pipe (their pipe order is fixed); across pipes they are kept by building the
order with Kahn's algorithm over them and the pipe sequences CP-SAT chose, so the new
order stays inside R(sigma2, G2) (paper Eq. 14), and a window whose choice admits no
such order is dropped. Window nodes must finish before the fixed starts of their
successors outside and fit between the fixed neighbours on their pipe, so nothing after
the window can be delayed. The objective is the window's latest ``end(v) + rest(v)``,
where ``rest(v)`` is the dependency-only path still to run after ``v``
(:func:`~dansched.graph.tail_after`). The current order is the hint.

:class:`TimingWindowModel` builds the model one constraint family per method (tasks,
precedence, pipe capacity, objective), as :mod:`dansched.models.joint` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ortools.sat.python import cp_model

from ..graph import keyed_topological_order, tail_after
from ..simulate import AugmentedGraph
from .solver import deterministic_solver, solve_model, stopped_by_clock

__all__ = ["TimedSchedule", "timed_schedule", "TimingWindowModel", "solve_timing_window"]


@dataclass(frozen=True)
class TimedSchedule:
    """A schedule of every node of ``graph`` with its simulated ``start``/``end`` times, the
    position of each node in ``order`` and ``rest`` (:func:`~dansched.graph.tail_after`):
    what a window model reads and never changes."""

    graph: AugmentedGraph
    order: list[int]
    start: Sequence[int]
    end: Sequence[int]
    pos: list[int]
    rest: list[int]


def timed_schedule(
    graph: AugmentedGraph, order: Sequence[int], start: Sequence[int], end: Sequence[int]
) -> TimedSchedule:
    """The :class:`TimedSchedule` of ``order`` (a permutation of ``graph``'s nodes)."""
    order = list(order)
    pos = [0] * graph.n
    for i, v in enumerate(order):
        pos[v] = i
    return TimedSchedule(graph, order, start, end, pos, tail_after(graph.preds, graph.cycles, order))


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


def _order_ancestors(
    order_preds: Sequence[Sequence[int]], pipe: Sequence[int], window: Sequence[int], inside: set[int]
) -> dict[int, set[int]]:
    """For each window node, its pipe-node ancestors along order constraints inside the window."""
    anc: dict[int, set[int]] = {}
    for v in window:
        a: set[int] = set()
        for u in order_preds[v]:
            if u in inside:
                a |= anc[u]
                if pipe[u] >= 0:
                    a.add(u)
        anc[v] = a
    return anc


class TimingWindowModel:
    """The model of positions ``[lo, hi)`` of ``sched`` (module docstring); ``order_preds``
    are the skeleton's order constraints (G2 edges, the memory-event chain, residency
    brackets). Build with :meth:`build` (or the family methods in that order), then
    :meth:`solve`."""

    def __init__(self, sched: TimedSchedule, order_preds: Sequence[Sequence[int]], lo: int, hi: int) -> None:
        g = sched.graph
        self.sched, self.order_preds, self.lo, self.hi = sched, order_preds, lo, hi
        self.window = list(sched.order[lo:hi])
        self.inside = set(self.window)
        self.horizon = max(sched.end) if sched.end else 0
        self.tsrc = _expand_through_cache_nodes(self.window, self.inside, g.pipe, g.preds, sched.end)
        self.anc = _order_ancestors(order_preds, g.pipe, self.window, self.inside)
        self.ops = [v for v in self.window if g.pipe[v] >= 0]
        self.m = cp_model.CpModel()
        self.s: dict[int, Any] = {}
        self.per_pipe: dict[int, list[Any]] = {}

    def _fixed_neighbours(self) -> tuple[dict[int, int], dict[int, int], dict[int, int]]:
        """What stays fixed around the window: per pipe, the end of its last task before the
        window and the start of its first after; per window pipe node, the latest end its
        successors outside the window allow."""
        g, order, start, end = self.sched.graph, self.sched.order, self.sched.start, self.sched.end
        before_end: dict[int, int] = {}
        after_start: dict[int, int] = {}
        for v in order[: self.lo]:
            if g.pipe[v] >= 0:
                before_end[g.pipe[v]] = end[v]
        for v in order[self.hi :]:
            p = g.pipe[v]
            if p >= 0 and p not in after_start:
                after_start[p] = start[v]
        deadline: dict[int, int] = {}
        for w in order[self.hi :]:
            for u in g.preds[w]:
                if u in self.inside:
                    for x in {u} if g.pipe[u] >= 0 else self.tsrc[u][0]:
                        deadline[x] = min(deadline.get(x, self.horizon), start[w])
        return before_end, after_start, deadline

    def add_tasks(self) -> None:
        """A start time per pipe node, between its fixed releases and deadlines, an interval
        of its cycles (none for a zero-cycle node), and the current start as the hint."""
        g, m = self.sched.graph, self.m
        before_end, after_start, deadline = self._fixed_neighbours()
        for v in self.ops:
            p, c = g.pipe[v], g.cycles[v]
            lb = max(self.tsrc[v][1], before_end.get(p, 0))
            ub_end = min(deadline.get(v, self.horizon), after_start.get(p, self.horizon))
            sv = m.new_int_var(lb, max(lb, ub_end - c), f"s{v}")
            self.s[v] = sv
            if c > 0:
                self.per_pipe.setdefault(p, []).append(m.new_fixed_size_interval_var(sv, c, f"i{v}"))
            m.add_hint(sv, self.sched.start[v])

    def add_precedence(self) -> None:
        """G2 precedence (through cache nodes), and the skeleton's order between two nodes
        of the same pipe."""
        g, m, s = self.sched.graph, self.m, self.s
        for v in self.ops:
            for u in self.tsrc[v][0]:
                m.add(s[v] >= s[u] + g.cycles[u])
            for u in self.anc[v] - self.tsrc[v][0]:
                if g.pipe[u] == g.pipe[v]:  # same pipe, ordered by the skeleton: keep that pipe order
                    m.add(s[v] >= s[u] + g.cycles[u])

    def add_pipe_no_overlap(self) -> None:
        """Each pipe runs one task at a time (Eqs. 9-10)."""
        for ivs in self.per_pipe.values():
            self.m.add_no_overlap(ivs)

    def set_objective(self) -> None:
        """Minimise the window's latest ``end(v) + rest(v)``."""
        g, m, rest = self.sched.graph, self.m, self.sched.rest
        obj = m.new_int_var(0, 2 * self.horizon + max(rest, default=0), "obj")
        for v in self.ops:
            m.add(obj >= self.s[v] + g.cycles[v] + rest[v])
        m.minimize(obj)

    def build(self) -> TimingWindowModel:
        """Every constraint family, in order."""
        self.add_tasks()
        self.add_precedence()
        self.add_pipe_no_overlap()
        self.set_objective()
        return self

    def _sequence(self, key: dict[int, tuple[int, int, int]]) -> list[int] | None:
        """Kahn over the window's order constraints plus the pipe sequences CP-SAT chose (ties
        by ``key``); None when they form a cycle."""
        pipe = self.sched.graph.pipe
        edges = [(u, v) for v in self.window for u in self.order_preds[v] if u in self.inside]
        for p in {pipe[v] for v in self.ops}:
            seq_p = sorted((v for v in self.ops if pipe[v] == p), key=lambda v: key[v])
            edges += zip(seq_p, seq_p[1:])
        return keyed_topological_order(self.window, edges, key)

    def solve(
        self, *, deterministic_time: float, wall_time: float, seed: int
    ) -> tuple[list[int] | None, dict[str, Any]]:
        """The window's new node sequence (None when CP-SAT found nothing or no order realises
        its choice) and the solver's stats."""
        solver = deterministic_solver(seed, deterministic_time, max(0.01, wall_time))
        status = solve_model(solver, self.m)
        stats: dict[str, Any] = {
            "status": solver.status_name(status),
            "nodes": len(self.window),
            "stopped_by_clock": stopped_by_clock(solver, status),
        }
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return None, stats
        stats["objective"] = int(solver.objective_value)
        stats["best_bound"] = int(solver.best_objective_bound)
        pos = self.sched.pos
        key = {v: ((0, solver.value(self.s[v]), pos[v]) if v in self.s else (-1, 0, pos[v])) for v in self.window}
        seq = self._sequence(key)
        if seq is None:
            stats["status"] = "CYCLIC_ORDER"
        return seq, stats


def solve_timing_window(
    sched: TimedSchedule,
    order_preds: Sequence[Sequence[int]],
    lo: int,
    hi: int,
    *,
    deterministic_time: float,
    wall_time: float,
    seed: int,
) -> tuple[list[int] | None, dict[str, Any]]:
    """Build and solve the window ``[lo, hi)`` of ``sched`` (:class:`TimingWindowModel`)."""
    model = TimingWindowModel(sched, order_preds, lo, hi).build()
    return model.solve(deterministic_time=deterministic_time, wall_time=wall_time, seed=seed)
