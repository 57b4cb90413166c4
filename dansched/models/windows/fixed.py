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
precedence, pipe capacity, objective) on the families every window shares
(:mod:`dansched.models.windows.seam`); it returns a :class:`~dansched.models.windows.seam.WindowOutcome`
whose plan is the window's new node sequence.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...graph import keyed_topological_order
from .seam import Schedule, WindowModel, WindowOutcome, pipe_sequence_edges

__all__ = ["TimingWindowModel", "solve_timing_window"]


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


class TimingWindowModel(WindowModel):
    """The model of positions ``[lo, hi)`` of ``sched`` (module docstring); ``order_preds``
    are the skeleton's order constraints (G2 edges, the memory-event chain, residency
    brackets). Build with :meth:`build` (or the family methods in that order), then
    :meth:`solve`."""

    def __init__(self, sched: Schedule, order_preds: Sequence[Sequence[int]], lo: int, hi: int) -> None:
        super().__init__(sched, lo, hi)
        g = sched.graph
        self.order_preds = order_preds
        self.tsrc = _expand_through_cache_nodes(self.window, self.inside, g.pipe, g.preds, sched.end)
        self.anc = _order_ancestors(order_preds, g.pipe, self.window, self.inside)
        self.ops = [v for v in self.window if g.pipe[v] >= 0]

    def _deadlines(self) -> dict[int, int]:
        """Per window pipe node, the latest end its successors outside the window allow."""
        g, start = self.sched.graph, self.sched.start
        deadline: dict[int, int] = {}
        for w in self.sched.order[self.hi :]:
            for u in g.preds[w]:
                if u in self.inside:
                    for x in {u} if g.pipe[u] >= 0 else self.tsrc[u][0]:
                        deadline[x] = min(deadline.get(x, self.horizon), start[w])
        return deadline

    def add_tasks(self) -> None:
        """A start time per pipe node, between its fixed releases (its predecessors, through
        cache nodes; the pipe's task before the window) and deadlines, an interval of its
        cycles (none for a zero-cycle node), and the current start as the hint."""
        g, m = self.sched.graph, self.m
        before_end, after_start = self.neighbours
        deadline = self._deadlines()
        for v in self.ops:
            p, c = g.pipe[v], g.cycles[v]
            lb = max(self.tsrc[v][1], before_end.get(p, 0))
            ub_end = min(deadline.get(v, self.horizon), after_start.get(p, self.horizon))
            sv = m.new_int_var(lb, max(lb, ub_end - c), f"s{v}")
            self.s[v] = sv
            self.add_task_interval(v, p, c)
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

    def set_objective(self) -> None:
        """Minimise the window's latest ``end(v) + rest(v)``."""
        g, rest = self.sched.graph, self.sched.rest
        self.minimize_latest(
            ((v, g.cycles[v], rest[v], None) for v in self.ops), 2 * self.horizon + max(rest, default=0)
        )

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
        edges = [(u, v) for v in self.window for u in self.order_preds[v] if u in self.inside]
        edges += pipe_sequence_edges(self.ops, self.sched.graph.pipe, key)
        return keyed_topological_order(self.window, edges, key)

    def solve(self, *, deterministic_time: float, wall_time: float, seed: int) -> WindowOutcome[list[int]]:
        """The window's new node sequence (None when CP-SAT found nothing or no order realises
        its choice), with the solver's status and stats."""
        solver, status, stats = self.solve_model(deterministic_time=deterministic_time, wall_time=wall_time, seed=seed)
        if solver is None:
            return WindowOutcome(status, None, stats)
        pos = self.sched.pos
        key = {v: ((0, solver.value(self.s[v]), pos[v]) if v in self.s else (-1, 0, pos[v])) for v in self.window}
        seq = self._sequence(key)
        return WindowOutcome(status if seq is not None else "CYCLIC_ORDER", seq, stats)


def solve_timing_window(
    sched: Schedule,
    order_preds: Sequence[Sequence[int]],
    lo: int,
    hi: int,
    *,
    deterministic_time: float,
    wall_time: float,
    seed: int,
) -> WindowOutcome[list[int]]:
    """Build and solve the window ``[lo, hi)`` of ``sched`` (:class:`TimingWindowModel`)."""
    model = TimingWindowModel(sched, order_preds, lo, hi).build()
    return model.solve(deterministic_time=deterministic_time, wall_time=wall_time, seed=seed)
