"""An L0-legal order by CP-SAT: problem 1's feasibility question (docs/rules.md,
sections 3 and 8.1) on the part of the graph a greedy could not finish.

Given the nodes already scheduled (a prefix, closed under predecessors) and so the L0
buffers live at that point, find an order of the rest that is topological (the instance's
edges and the lifetime edges ALLOC -> user -> FREE of the Stage-1 graph) and keeps at most
one live buffer per single-residency tier.

Only the *events* matter: the ALLOC and FREE nodes of the single-residency buffers still
to close. The model gives each event a time ``t`` in ``[0, K)`` (``K`` events), with
``t(x) < t(y)`` whenever the graph has a path from ``x`` to ``y`` (one constraint per path
that meets no other event: the rest follow by transitivity), and, for every two buffers
of one tier, one lifetime before the other: ``t(FREE b) < t(ALLOC c)`` or ``t(FREE c) <
t(ALLOC b)``. A pair the paths already order needs no choice; a pair that paths force to
overlap (``ALLOC b`` reaches ``FREE c`` and ``ALLOC c`` reaches ``FREE b``) is a proof by
itself that no order exists; every other pair is one Boolean choice. A buffer live at the
start comes first in its tier.

Why it is exact: a legal completion gives a solution (``t`` = the events' positions).
From a solution, chain the events in ``(t, id)`` order: the graph with the chain edges
has no cycle (along any cycle ``t`` would have to grow strictly, since every path between
two events goes forward in ``t``), so a topological order of it exists, and in it every
tier's lifetimes follow the chain, disjoint. So INFEASIBLE proves that no legal completion
of the prefix exists; from the empty prefix, that the instance has no L0-legal order at
all. The solve is deterministic (:mod:`dansched.models.exact.solver`); its wall clock is a
safety net only.

>>> from dansched.generate import generate
>>> from dansched.graph import build_mpas_graph
>>> from dansched.instance import instance_from_records
>>> g = build_mpas_graph(instance_from_records("m", *generate("matmul", 1, 0)))
>>> found = l0_legal_completion(g, [], deterministic_time=5.0, time_limit=60.0)
>>> found.status, len(found.order) == g.n
('found', True)
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass, field

from ortools.sat.python import cp_model

from ...graph import MpasGraph
from .solver import deterministic_solver, solve_model, stopped_by_clock

__all__ = ["L0Completion", "l0_legal_completion"]


@dataclass(frozen=True)
class L0Completion:
    """``status``: ``found`` (``order`` is a legal completion of the prefix), ``infeasible``
    (proven: none exists) or ``unknown`` (the budget ran out first; ``stopped_by_clock``
    when the wall-clock safety net, not the deterministic budget, stopped it). ``events``:
    the ALLOC and FREE nodes the model ordered; ``proof``: how ``infeasible`` was proven."""

    status: str
    order: list[int] = field(default_factory=list)
    events: int = 0
    stopped_by_clock: bool = False
    proof: str = ""  # how ``infeasible`` was proven


def _event_edges(g: MpasGraph, done: bytearray, events: list[int], is_event: bytearray) -> list[tuple[int, int]]:
    """``(x, y)`` for each event ``y`` reached from event ``x`` by a path of the rest whose
    inner nodes are not events."""
    out = []
    seen = [-1] * g.n
    for x in events:
        stack = [x]
        while stack:
            v = stack.pop()
            for w in g.succs[v]:
                if done[w] or seen[w] == x:
                    continue
                seen[w] = x
                if is_event[w]:
                    out.append((x, w))
                else:
                    stack.append(w)
    return out


def _chained_order(g: MpasGraph, done: bytearray, rank: dict[int, int]) -> list[int]:
    """A topological order of the rest in which the events keep their ``rank`` order
    (Kahn's algorithm; an event waits for the events ranked before it)."""
    pend = [0] * g.n
    for v in range(g.n):
        if not done[v]:
            pend[v] = sum(1 for u in g.preds[v] if not done[u])
    ready = [(rank.get(v, -1), v) for v in range(g.n) if not done[v] and pend[v] == 0]
    heapq.heapify(ready)
    by_rank = sorted(rank, key=rank.__getitem__)
    next_event = 0  # the index in by_rank of the next event allowed to run
    parked: list[tuple[int, int]] = []
    order: list[int] = []
    while ready or parked:
        if not ready:  # only events wait: the next one in rank order must be among them
            heapq.heapify(parked)
            ready, parked = parked, []
        key, v = heapq.heappop(ready)
        if v in rank and by_rank[next_event] != v:
            parked.append((key, v))
            continue
        if v in rank:
            next_event += 1
            ready.extend(parked)
            heapq.heapify(ready)
            parked = []
        order.append(v)
        for w in g.succs[v]:
            if not done[w]:
                pend[w] -= 1
                if pend[w] == 0:
                    heapq.heappush(ready, (rank.get(w, -1), w))
    return order


def _reach(events: list[int], edges: list[tuple[int, int]]) -> dict[int, int]:
    """Per event, the set of events it reaches (a bitset over the positions of ``events``,
    which are in a topological order)."""
    at = {v: i for i, v in enumerate(events)}
    succ: dict[int, list[int]] = {v: [] for v in events}
    for x, y in edges:
        succ[x].append(y)
    reach: dict[int, int] = {}
    for v in reversed(events):
        bits = 0
        for w in succ[v]:
            bits |= (1 << at[w]) | reach[w]
        reach[v] = bits
    return {v: reach[v] for v in events}


def l0_legal_completion(
    g: MpasGraph, prefix: Sequence[int], deterministic_time: float, time_limit: float, seed: int = 0
) -> L0Completion:
    """An L0-legal order of the nodes of ``g`` not in ``prefix`` (an L0-legal prefix closed
    under predecessors), by the model of the module docstring."""
    done = bytearray(g.n)
    for v in prefix:
        done[v] = 1
    is_event = bytearray(g.n)
    tiers: dict[int, list[tuple[int, int]]] = {}  # tier -> (ALLOC, FREE) of its buffers still to close
    for b, free in enumerate(g.buf_free):
        tier = g.l0_tier[free]
        if tier >= 0 and not done[free]:
            alloc = g.buf_alloc[b]
            tiers.setdefault(tier, []).append((alloc, free))
            is_event[free] = 1
            if not done[alloc]:
                is_event[alloc] = 1
    events = [v for v in g.topo if is_event[v]]
    if not events:
        return L0Completion("found", _chained_order(g, done, {}), 0)
    edges = _event_edges(g, done, events, is_event)
    reach = _reach(events, edges)
    at = {v: i for i, v in enumerate(events)}

    def path(x: int, y: int) -> bool:  # a scheduled node (the ALLOC of a buffer live at the start) is reached by none
        return x in at and y in at and bool(reach[x] >> at[y] & 1)

    m = cp_model.CpModel()
    horizon = len(events)
    t = {v: m.new_int_var(0, horizon - 1, f"t{v}") for v in events}
    for x, y in edges:
        m.add(t[x] + 1 <= t[y])
    for bufs in tiers.values():
        for i, (a1, f1) in enumerate(bufs):
            for a2, f2 in bufs[i + 1 :]:
                if path(f1, a2) or path(f2, a1):  # the paths order the two lifetimes already
                    continue
                # a buffer live at the start comes first; otherwise an ALLOC that reaches the other
                # buffer's FREE opens before that buffer closes, so its buffer must come first
                first = done[a1] or path(a1, f2)
                second = done[a2] or path(a2, f1)
                if first and second:  # both must come first: the lifetimes overlap in every order
                    why = (
                        f"the buffers of ALLOC nodes {a1} and {a2}, of one single-residency tier, are live "
                        "together in every order (each opens before the other can close)"
                    )
                    return L0Completion("infeasible", [], horizon, proof=why)
                if first or second:
                    m.add(t[f1] + 1 <= t[a2]) if first else m.add(t[f2] + 1 <= t[a1])
                    continue
                choice = m.new_bool_var(f"b{f1}<b{f2}")
                m.add(t[f1] + 1 <= t[a2]).only_enforce_if(choice)
                m.add(t[f2] + 1 <= t[a1]).only_enforce_if(~choice)
    solver = deterministic_solver(seed, deterministic_time, time_limit)
    status = solve_model(solver, m)
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        ranked = sorted(events, key=lambda v: (solver.value(t[v]), v))
        return L0Completion("found", _chained_order(g, done, {v: i for i, v in enumerate(ranked)}), horizon)
    if status == cp_model.INFEASIBLE:
        why = (
            f"CP-SAT proved that no order of the {horizon:,} ALLOC and FREE nodes of the single-residency "
            "buffers keeps one buffer live per tier"
        )
        return L0Completion("infeasible", [], horizon, proof=why)
    return L0Completion("unknown", [], horizon, stopped_by_clock(solver, status))
