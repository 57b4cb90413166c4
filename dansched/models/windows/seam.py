"""The seam every CP-SAT window of dansched shares: what a window reads, what it returns, and
the constraint families its models have in common.

A *window* is a stretch ``[lo, hi)`` of consecutive schedule positions of a plan re-planned
exactly by CP-SAT, everything outside it fixed (docs/architecture.md, "Words"). Its models
(:mod:`.fixed`: the memory fixed; :mod:`.memory`: memory events may move;
:mod:`.joint`: order, spills and offsets together; :mod:`.order`: problem 2's
traffic windows) read a :class:`Schedule` and return a :class:`WindowOutcome`: a status, the
re-planned window or ``None``, and the solver's :class:`ModelStats`.

The constraint families written once here, on a :class:`WindowModel`:

- :meth:`WindowModel.add_start_times`: a start time per window node between its fixed
  releases (predecessors outside the window, the pipe's last task before it) and its
  deadlines (successors after the window, the pipe's first task after it), the current
  start as the hint: nothing after the window can be delayed;
- :meth:`WindowModel.add_edge`: precedence, ``v`` after ``u`` ends (under a literal when
  given), kept as an order edge for the decoding;
- :meth:`WindowModel.add_task_interval` and :meth:`WindowModel.add_pipe_no_overlap`: each
  pipe runs one task at a time (paper Eqs. 9-10), an optional task only when present;
- :meth:`WindowModel.minimize_latest`: the objective, the window's latest
  ``end(v) + rest(v)`` (``rest``: the dependency-only path still to run after ``v``,
  :func:`~dansched.graph.tail_after`; :func:`window_rest` without the address-reuse edges
  the window may drop);
- :func:`solve_window_model`: CP-SAT on a window's model through :mod:`dansched.models.exact.solver` (one worker, a seed, a
  deterministic budget, the wall clock a safety net) and the outcome's status and stats;
- :func:`pipe_sequence_edges`: the pipe sequences CP-SAT chose, as order edges for Kahn's
  algorithm, which turns a solution back into a node sequence.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Generic, TypeVar

import numpy as np
from ortools.sat.python import cp_model

from ...graph import tail_after
from ...simulate import AugmentedGraph, Timing
from ..exact.solver import deterministic_solver, solve_model, stopped_by_clock

__all__ = [
    "Schedule",
    "schedule_of",
    "ModelStats",
    "WindowOutcome",
    "WindowModel",
    "pipe_neighbours",
    "pipe_sequence_edges",
    "window_rest",
    "solve_window_model",
]

Plan_ = TypeVar("Plan_")
SOLVED = (cp_model.OPTIMAL, cp_model.FEASIBLE)


@dataclass(frozen=True)
class Schedule:
    """A judged plan's schedule as every window of it reads it: the :class:`~dansched.simulate.Timing`
    (augmented DAG, start and end of each node), the order, each node's position in it,
    ``rest`` (:func:`~dansched.graph.tail_after`) and the pipes the graph uses. A window
    model never changes it."""

    timing: Timing
    order: list[int]
    pos: list[int]
    rest: list[int]
    pipes: frozenset[int]

    @property
    def graph(self) -> AugmentedGraph:
        return self.timing.graph

    @property
    def start(self) -> list[int]:
        return self.timing.start

    @property
    def end(self) -> list[int]:
        return self.timing.end


def schedule_of(timing: Timing, order: Sequence[int]) -> Schedule:
    """The :class:`Schedule` of ``order`` (a permutation of the timed graph's nodes)."""
    g = timing.graph
    order = list(order)
    pos = [0] * g.n
    for i, v in enumerate(order):
        pos[v] = i
    pipes = frozenset(np.unique(g.pipe_array[g.pipe_array >= 0]).tolist())
    return Schedule(timing, order, pos, tail_after(g.preds, g.cycles, order), pipes)


@dataclass(frozen=True)
class ModelStats:
    """What the solver did on one window: the window's nodes, whether the wall-clock safety
    net stopped it, its deterministic time, the objective it reached (``None`` when it found
    no solution), the current plan's objective (``current``) where the model
    compares with it, and the model's own sizes (``counts``: segments, pairs, chains, ...)."""

    nodes: int
    stopped_by_clock: bool = False
    deterministic_time: float = 0.0
    objective: float | None = None
    current: float | None = None
    counts: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class WindowOutcome(Generic[Plan_]):
    """What a window returns: ``status`` (CP-SAT's status name, or why the window gives no
    plan: ``NO_GAIN`` when the model's best is no better than the current window,
    ``CYCLIC_ORDER`` when no order realises its choice, ``BOUNDARY_CONFLICT`` or
    ``NO_OPERATION`` when no model was built), ``plan`` (the re-planned window, or ``None``)
    and ``stats``."""

    status: str
    plan: Plan_ | None
    stats: ModelStats


def _first_per_pipe(sched: Schedule, positions: Iterable[int], times: Sequence[int]) -> dict[int, int]:
    """Per pipe, ``times`` of its first task met at ``positions`` (a pipe with none is absent)."""
    pipe, order = sched.graph.pipe, sched.order
    out: dict[int, int] = {}
    for i in positions:
        v = order[i]
        p = pipe[v]
        if p >= 0 and p not in out:
            out[p] = times[v]
            if len(out) == len(sched.pipes):
                break
    return out


def pipe_neighbours(sched: Schedule, lo: int, hi: int) -> tuple[dict[int, int], dict[int, int]]:
    """Per pipe, the end of its last task before position ``lo`` and the start of its first
    task from position ``hi`` on (a pipe with none is absent)."""
    before_end = _first_per_pipe(sched, range(lo - 1, -1, -1), sched.end)
    after_start = _first_per_pipe(sched, range(hi, len(sched.order)), sched.start)
    return before_end, after_start


def pipe_sequence_edges(
    nodes: Iterable[int], pipe: Mapping[int, int] | Sequence[int], key: Mapping[int, Any]
) -> list[tuple[int, int]]:
    """The order CP-SAT chose on each pipe, as edges between consecutive tasks (``nodes`` of
    pipe ``pipe[v] >= 0``, sorted by ``key``)."""
    by_pipe: dict[int, list[int]] = {}
    for v in nodes:
        if pipe[v] >= 0:
            by_pipe.setdefault(pipe[v], []).append(v)
    edges: list[tuple[int, int]] = []
    for on_pipe in by_pipe.values():
        on_pipe.sort(key=lambda v: key[v])
        edges += zip(on_pipe, on_pipe[1:])
    return edges


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


class WindowModel:
    """The model of positions ``[lo, hi)`` of ``sched``: the CP-SAT model ``m``, the window's
    nodes (``window``, ``inside``) and the start time of each node it schedules (``s``);
    the families of the module docstring. ``big`` bounds every time of the window (twice
    the plan's makespan plus its longest rest)."""

    linearization_level: int | None = None  # CP-SAT's, when a model needs its own
    current: float | None = None  # the current window's objective, where a model compares with it

    def __init__(self, sched: Schedule, lo: int, hi: int) -> None:
        self.sched, self.lo, self.hi = sched, lo, hi
        self.window = list(sched.order[lo:hi])
        self.inside = set(self.window)
        self.horizon = max(sched.end) if sched.end else 0
        self.big = 2 * self.horizon + max(sched.rest, default=0) + 1
        self.m = cp_model.CpModel()
        self.s: dict[int, Any] = {}  # start time of each node the model schedules
        self.cycles: dict[int, int] = {}
        self.pipe: dict[int, int] = {}
        self.span: dict[int, tuple[int, int]] = {}  # earliest start and latest end each node's domain allows
        self.intervals: dict[int, list[Any]] = {}  # per pipe
        self.order_edges: list[tuple[int, int, Any]] = []  # (u, v, literal or None): for Kahn

    def unsolved(self) -> ModelStats:
        """The stats of a window whose model was not solved (no model could be built)."""
        return ModelStats(len(self.window))

    @cached_property
    def neighbours(self) -> tuple[dict[int, int], dict[int, int]]:
        """:func:`pipe_neighbours` of the window."""
        return pipe_neighbours(self.sched, self.lo, self.hi)

    def add_start_times(self, succs: Sequence[Sequence[int]]) -> None:
        """A start time per window node between its fixed releases and deadlines (module
        docstring; ``succs``: the augmented DAG's successor lists), the current start the
        hint; :attr:`span` records each node's earliest start and latest end, :attr:`cycles`
        and :attr:`pipe` its cycles and pipe."""
        sched, m = self.sched, self.m
        g, pos, start, end = sched.graph, sched.pos, sched.start, sched.end
        before_end, after_start = self.neighbours
        for v in self.window:
            c = g.cycles[v]
            lb = max((end[u] for u in g.preds[v] if u not in self.inside), default=0)
            ub_end = self.big
            p = g.pipe[v]
            if p >= 0:
                lb = max(lb, before_end.get(p, 0))
                ub_end = min(ub_end, after_start.get(p, self.big))
            for w in succs[v]:
                if w not in self.inside and pos[w] >= self.hi:
                    ub_end = min(ub_end, start[w])
            self.s[v] = m.new_int_var(lb, max(lb, ub_end - c), f"s{v}")
            self.span[v] = (lb, max(lb + c, ub_end))
            self.cycles[v], self.pipe[v] = c, p
            m.add_hint(self.s[v], start[v])

    def add_edge(self, u: int, v: int, lit: Any = None) -> None:
        """``v`` starts after ``u`` ends (under ``lit`` when given), kept as an order edge."""
        got = self.m.add(self.s[v] >= self.s[u] + self.cycles[u])
        if lit is not None:
            got.only_enforce_if(lit)
        self.order_edges.append((u, v, lit))

    def add_task_interval(self, v: int, p: int, c: int, lit: Any = None) -> None:
        """The interval of task ``v`` on pipe ``p`` (``c`` cycles; present under ``lit`` when
        given), for :meth:`add_pipe_no_overlap`; none for a node of no pipe or no cycles."""
        if p < 0 or c <= 0:
            return
        m = self.m
        if lit is None:
            iv = m.new_fixed_size_interval_var(self.s[v], c, f"i{v}")
        else:
            iv = m.new_optional_fixed_size_interval_var(self.s[v], c, lit, f"i{v}")
        self.intervals.setdefault(p, []).append(iv)

    def add_pipe_no_overlap(self) -> None:
        """Each pipe runs one task at a time (Eqs. 9-10): no overlap among its intervals."""
        for ivs in self.intervals.values():
            self.m.add_no_overlap(ivs)

    def minimize_latest(self, terms: Iterable[tuple[int, int, int, Any]], upper: int, name: str = "obj") -> Any:
        """Minimise the latest ``start(v) + cycles + rest`` over ``terms`` (node, cycles,
        rest, presence literal or ``None``); ``upper`` bounds the objective. Returns its
        variable (a model may bound it by more terms)."""
        m = self.m
        obj = m.new_int_var(0, upper, name)
        for v, c, rest, lit in terms:
            got = m.add(obj >= self.s[v] + c + rest)
            if lit is not None:
                got.only_enforce_if(lit)
        m.minimize(obj)
        return obj

    def counts(self) -> dict[str, int]:
        """The model's own sizes, for its stats (none here)."""
        return {}

    def solve_model(
        self, *, deterministic_time: float, wall_time: float, seed: int
    ) -> tuple[cp_model.CpSolver | None, str, ModelStats]:
        """:func:`solve_window_model` on this window's model (its counts, current objective
        and linearization level)."""
        return solve_window_model(
            self.m,
            len(self.window),
            deterministic_time=deterministic_time,
            wall_time=wall_time,
            seed=seed,
            counts=self.counts(),
            current=self.current,
            linearization_level=self.linearization_level,
        )


def solve_window_model(
    m: cp_model.CpModel,
    nodes: int,
    *,
    deterministic_time: float,
    wall_time: float,
    seed: int,
    counts: Mapping[str, int] | None = None,
    current: float | None = None,
    linearization_level: int | None = None,
    probing_level: int | None = None,
) -> tuple[cp_model.CpSolver | None, str, ModelStats]:
    """Solve a window's model of ``nodes`` nodes through :mod:`dansched.models.exact.solver` (one worker, ``seed``,
    ``deterministic_time``, the wall clock a safety net; ``linearization_level`` and
    ``probing_level``: CP-SAT's, when given). Returns the solver when it found a solution
    (else ``None``), the status name and the stats (``counts`` and ``current`` recorded in
    them)."""
    solver = deterministic_solver(seed, deterministic_time, max(0.01, wall_time))
    if linearization_level is not None:
        solver.parameters.linearization_level = linearization_level
    if probing_level is not None:
        solver.parameters.cp_model_probing_level = probing_level
    status = solve_model(solver, m)
    solved = status in SOLVED
    stats = ModelStats(
        nodes,
        stopped_by_clock(solver, status),
        solver.deterministic_time,
        int(solver.objective_value) if solved else None,
        current,
        dict(counts or {}),
    )
    return (solver if solved else None), solver.status_name(status), stats
