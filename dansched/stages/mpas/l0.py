"""Deadlock avoidance for the L0 single-residency rule (docs/rules.md, section 8.1).

Each of L0A/L0B/L0C holds at most one live buffer at a time. A greedy that opens
an L0 buffer too early can paint itself into a corner: on a blocked matmul, a
MOVE into L0A for output block O' leaves L0A held until the MATMUL of O' runs,
which needs O''s L0C accumulator, which cannot open while O's accumulator is
live, which in turn needs L0A for its remaining k steps -- a deadlock.

:func:`l0_completion_exists` is the check MPAS runs before each step that opens
an L0 buffer: from the state *after* the step it simulates a completion that
only schedules what closing the live L0 buffers requires (their FREEs' unscheduled
ancestors, and the closures of any L0 buffer opened on the way), opening L0
buffers lazily (only for an operation that is otherwise ready, earliest in a
reference order first) and only into free tiers. Success proves the step safe:

- the simulated steps are a legal continuation that ends with no L0 buffer live;
- from a state with no L0 buffer live, any legal order of the whole instance,
  restricted to the unscheduled nodes, is a legal completion (lifetimes of the
  remaining L0 buffers keep their relative order), so a feasible instance stays
  feasible;
- steps that open no L0 buffer never invalidate the simulated continuation.

The simulation is a heuristic, so it may call a safe step unsafe; MPAS then
tries other candidates. Cost: linear in the size of the closures it touches.
"""

from __future__ import annotations

import heapq

from ...graph import MpasGraph
from ...instance import KIND_ALLOC, KIND_OP

__all__ = ["l0_completion_exists", "need_tiers", "quick_blocker", "witness_allows"]


def _closure(g: MpasGraph, roots: list[int], done, mark: dict[int, int], out: list[int]) -> None:
    """Add the unscheduled ancestors of ``roots`` (themselves included) to ``out`` and ``mark``."""
    stack = [r for r in roots if not done[r] and r not in mark]
    for r in stack:
        mark[r] = -1
    while stack:
        v = stack.pop()
        out.append(v)
        for u in g.preds[v]:
            if not done[u] and u not in mark:
                mark[u] = -1
                stack.append(u)


class _Completion:
    """The simulated completion of :func:`l0_completion_exists`: ``sim`` holds the nodes it
    scheduled, ``live`` the L0 buffer live in each tier, ``members`` the nodes closing the
    live L0 buffers requires, ``mark`` each member's count of unscheduled non-ALLOC
    predecessors (-1: not counted yet)."""

    def __init__(self, g: MpasGraph, rank: list[int], done, live: dict[int, int], sim: set[int]) -> None:
        self.g, self.rank, self.done, self.live, self.sim = g, rank, done, live, sim
        self.mark: dict[int, int] = {x: 0 for x in sim}
        self.members: list[int] = []
        self.opened: list[int] = []
        self.ready: list[int] = []  # non-opening nodes that can run
        self.waiting: list[tuple[int, int]] = []  # heap (rank, node): operations that would open L0 buffers
        self.queued: set[int] = set()
        self.counted = 0
        _closure(g, [g.buf_free[b] for b in live.values()], done, self.mark, self.members)

    def is_done(self, x: int) -> bool:
        return self.done[x] or x in self.sim

    def count_new(self) -> None:
        """Count the unscheduled predecessors of the members added since the last call."""
        g, members, is_done = self.g, self.members, self.is_done
        while self.counted < len(members):
            x = members[self.counted]
            self.counted += 1
            if is_done(x):
                continue
            c = 0
            for u in g.preds[x]:
                if not is_done(u) and not (g.kind[u] == KIND_ALLOC and g.kind[x] == KIND_OP):
                    c += 1
            self.mark[x] = c
            if c == 0:
                self.classify(x)

    def alloc_preds_open(self, x: int) -> list[int] | None:
        """The L0 buffers operation ``x`` would open, or None when an ALLOC pred is not ready."""
        g, is_done = self.g, self.is_done
        bufs = []
        for u in g.preds[x]:
            if g.kind[u] == KIND_ALLOC and not is_done(u):
                if any(not is_done(p) for p in g.preds[u]):
                    return None
                if g.l0_tier[u] >= 0:
                    bufs.append(g.node_buf[u])
        return bufs

    def opens_of(self, x: int) -> list[int] | None:
        """The L0 buffers running waiting node ``x`` opens (None: not ready yet)."""
        return [self.g.node_buf[x]] if self.g.kind[x] == KIND_ALLOC else self.alloc_preds_open(x)

    def classify(self, x: int) -> None:
        """A node whose predecessors are done: ready, or waiting when it opens an L0 buffer."""
        g = self.g
        if g.kind[x] == KIND_OP:
            opens = self.alloc_preds_open(x)
            if opens is None:
                return
            if opens:
                self.wait(x)
            else:
                self.ready.append(x)
        elif g.kind[x] == KIND_ALLOC and g.l0_tier[x] >= 0:
            self.wait(x)
        else:
            self.ready.append(x)

    def wait(self, x: int) -> None:
        if x not in self.queued:
            self.queued.add(x)
            heapq.heappush(self.waiting, (self.rank[x], x))

    def run(self, x: int) -> None:
        """Schedule ``x`` in the simulation (with the non-L0 ALLOCs an operation pulls)."""
        g, is_done, mark = self.g, self.is_done, self.mark
        pulled = [x]
        if g.kind[x] == KIND_OP:
            pulled = [u for u in g.preds[x] if g.kind[u] == KIND_ALLOC and not is_done(u)] + [x]
        for y in pulled:
            self.sim.add(y)
            t = g.l0_tier[y]
            if t >= 0:
                if g.kind[y] == KIND_ALLOC:
                    self.opened.append(y)
                    self.live[t] = g.node_buf[y]
                    _closure(g, [g.buf_free[g.node_buf[y]]], self.done, mark, self.members)
                elif self.live.get(t) == g.node_buf[y]:
                    del self.live[t]
        for y in pulled:  # successors counted before this step
            for w in g.succs[y]:
                c = mark.get(w)
                if c is None or c < 0 or is_done(w):
                    continue
                if g.kind[y] == KIND_ALLOC and g.kind[w] == KIND_OP:
                    # an op does not wait for its ALLOCs; but a not-yet-ready op may now be
                    if c == 0 and w not in self.queued and w not in self.ready:
                        self.classify(w)
                    continue
                mark[w] = c - 1
                if c - 1 == 0:
                    self.classify(w)
        self.count_new()  # members added by this step, counted against the new state

    def next_opening(self) -> int:
        """The waiting node of lowest rank whose L0 tiers are all free (-1: none); the
        others keep waiting."""
        stalled: list[tuple[int, int]] = []
        pick = -1
        while self.waiting:
            item = heapq.heappop(self.waiting)
            x = item[1]
            if self.is_done(x):
                self.queued.discard(x)
                continue
            opens = self.opens_of(x)
            tiers = [self.g.l0_tier[self.g.buf_alloc[b]] for b in opens or ()]
            if opens is None or len(set(tiers)) < len(tiers) or any(t in self.live for t in tiers):
                stalled.append(item)
                continue
            pick = x
            break
        for item in stalled:  # lowest rank first among the eligible, the rest wait on
            heapq.heappush(self.waiting, item)
        return pick

    def complete(self) -> bool:
        """Run ready nodes, then the next eligible opening, until stuck; True when every
        member ran (every live L0 buffer closed)."""
        self.count_new()
        while True:
            while self.ready:
                x = self.ready.pop()
                if not self.is_done(x):
                    self.run(x)
            pick = self.next_opening()
            if pick < 0:
                break
            self.queued.discard(pick)
            self.run(pick)
        return all(self.is_done(x) for x in self.members)

    def blocker(self, original: set[int]) -> int:
        """A buffer of ``original`` (the live L0 buffers before the step) holding a tier
        that a waiting node needs, or -1."""
        for _r, x in sorted(self.waiting):
            if self.is_done(x):
                continue
            for b in self.opens_of(x) or ():
                owner = self.live.get(self.g.l0_tier[self.g.buf_alloc[b]])
                if owner is not None and owner in original:
                    return owner
        return -1


def l0_completion_exists(
    g: MpasGraph,
    rank: list[int],
    done,
    held: dict[int, int],
    new_bufs: list[int],
    extra_done=(),
) -> tuple[bool, int, list[int]]:
    """``(ok, blocker, opened)``: ``ok`` when, after opening the L0 buffers ``new_bufs`` on top of the live ones
    ``held`` (tier -> buffer), every live L0 buffer can still be closed legally.

    ``done`` flags the scheduled nodes (the ALLOCs of ``new_bufs`` and the nodes of
    ``extra_done`` -- a step of several nodes -- count as scheduled);
    ``rank`` orders the lazily opened buffers of the simulation (lower first).
    When not ``ok``, ``blocker`` is a buffer of ``held`` whose tier the simulation
    waited for (the step stays unsafe at least until it is freed), else -1.
    When ``ok``, ``opened`` lists the L0 ALLOCs the simulated completion opens, in
    order: a *witness* that :func:`witness_allows` reuses for later steps."""
    live = dict(held)
    for b in new_bufs:
        t = g.l0_tier[g.buf_alloc[b]]
        if t in live:
            return False, live[t] if live[t] in held.values() else -1, []
        live[t] = b
    sim: set[int] = {g.buf_alloc[b] for b in new_bufs}
    sim.update(extra_done)
    c = _Completion(g, rank, done, live, sim)
    if c.complete():
        return True, -1, c.opened
    return False, c.blocker(set(held.values())), []


def need_tiers(g: MpasGraph, done, h: int) -> dict[int, list[int]]:
    """The unscheduled L0 ALLOCs among the unscheduled ancestors of FREE(h), by tier:
    what must open before the live buffer ``h`` can be freed. It changes only when
    an L0 buffer is opened or freed."""
    out: dict[int, list[int]] = {}
    seen = {g.buf_free[h]}
    stack = [g.buf_free[h]]
    while stack:
        v = stack.pop()
        for u in g.preds[v]:
            if done[u] or u in seen:
                continue
            seen.add(u)
            if g.kind[u] == KIND_ALLOC and g.l0_tier[u] >= 0:
                out.setdefault(g.l0_tier[u], []).append(u)
            stack.append(u)
    return out


def quick_blocker(
    g: MpasGraph, done, held: dict[int, int], needs: dict[int, dict[int, list[int]]], b: int, extra=()
) -> int:
    """A fast test for a certain deadlock if L0 buffer ``b`` opened now.

    Returns the buffer ``a`` when closing ``b`` needs ``a``, of the same tier, to open
    first (``b`` stays unsafe until ``a`` is freed), a live buffer ``h`` when closing ``b`` needs ``h``'s tier while closing ``h`` needs
    ``b``'s tier (``needs`` caches :func:`need_tiers` per live buffer), else -1
    (no certain deadlock; :func:`l0_completion_exists` decides). Nodes in ``extra``
    count as scheduled."""
    t = g.l0_tier[g.buf_alloc[b]]
    a0 = g.buf_alloc[b]
    seen = {g.buf_free[b]}
    stack = [g.buf_free[b]]
    while stack:
        v = stack.pop()
        for u in g.preds[v]:
            if done[u] or u in seen or u == a0 or u in extra:
                continue
            seen.add(u)
            tu = g.l0_tier[u]
            if tu >= 0 and g.kind[u] == KIND_ALLOC:
                if tu == t:
                    return g.node_buf[u]
                h = held.get(tu)
                if h is not None:
                    nh = needs.get(h)
                    if nh is None:
                        nh = needs[h] = need_tiers(g, done, h)
                    if any(a != a0 for a in nh.get(t, ())):
                        return h
            stack.append(u)
    return -1


def witness_allows(g: MpasGraph, witness: list[int], allocs: list[int]) -> bool:
    """Whether opening the L0 ALLOCs ``allocs`` now keeps the witness (the pending
    L0 opens of the last successful simulation, in order) valid; if so they are
    removed from it.

    Opening ``b`` earlier than the witness does only lengthens ``b``'s lifetime
    backwards; that is legal when no pending open before ``b`` uses ``b``'s tier
    (then no FREE of that tier happens in between either, as the tier is free now)."""
    idx = []
    for a in allocs:
        try:
            i = witness.index(a)
        except ValueError:
            return False
        t = g.l0_tier[a]
        if any(g.l0_tier[x] == t for x in witness[:i]):
            return False
        idx.append(i)
    for i in sorted(idx, reverse=True):
        del witness[i]
    return True
