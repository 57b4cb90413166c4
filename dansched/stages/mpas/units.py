"""Units of the production MPAS greedy: an operation with its private feeders.

An operation whose every successor leads to one consumer unit (FREEs without
successors aside) and that works only on buffers opened inside that unit -- a
weight's COPY_IN and MOVE feeding one CONV -- is a *private feeder*: it runs
just before its consumer, never on its own, so a load is not issued long before
the operation that needs it. Everything else is the head of its own unit.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...graph import MpasGraph
from ...instance import KIND_ALLOC, KIND_FREE, KIND_OP

__all__ = ["Units", "build_units"]


@dataclass(frozen=True)
class Units:
    """Static unit structure: ``members[v]`` (feeders in topological order, then the
    head ``v``) for every head, ``head_of`` for every operation, ``ext[v]`` the
    non-ALLOC nodes outside the unit that it waits for, ``waiters[x]`` the heads
    waiting for ``x``."""

    members: dict[int, list[int]]
    head_of: list[int]
    ext: dict[int, list[int]]
    waiters: list[list[int]]


def _heads(g: MpasGraph, forced: set[int]) -> list[int]:
    """Single-consumer rule: an operation all of whose successors lead to one unit
    (FREEs without successors aside) joins that unit, unless it is in ``forced``."""
    head_of = [-1] * g.n
    for u in reversed(g.topo):
        if g.kind[u] != KIND_OP:
            continue
        owners = set()
        private = u not in forced
        for w in g.succs[u]:
            if g.kind[w] == KIND_OP:
                owners.add(head_of[w])
            elif not (g.kind[w] == KIND_FREE and not g.succs[w]):
                private = False
        head_of[u] = owners.pop() if private and len(owners) == 1 else u
    return head_of


def build_units(g: MpasGraph, rank: list[int]) -> Units:
    """Group every private feeder with its consumer (see the module docstring).

    A feeder must also work only on buffers opened inside its unit (a weight's
    COPY_IN and MOVE), so deferring it never keeps an outside buffer alive."""
    forced: set[int] = set()
    while True:
        head_of = _heads(g, forced)
        bad = set()
        for u in range(g.n):
            if g.kind[u] != KIND_OP or head_of[u] == u:
                continue
            for b in g.bufs[u]:
                if any(g.kind[w] == KIND_OP and head_of[w] != head_of[u] for w in g.succs[g.buf_alloc[b]]):
                    bad.add(u)
                    break
        if not bad:
            break
        forced |= bad
    members: dict[int, list[int]] = {}
    for u in g.topo:
        if g.kind[u] == KIND_OP:
            members.setdefault(head_of[u], []).append(u)
    ext: dict[int, list[int]] = {}
    waiters: list[list[int]] = [[] for _ in range(g.n)]
    for v, ms in members.items():
        inside = set(ms)
        outside = sorted({u for m in ms for u in g.preds[m] if u not in inside and g.kind[u] != KIND_ALLOC})
        ext[v] = outside
        for u in outside:
            waiters[u].append(v)
    return Units(members, head_of, ext, waiters)
