"""Production Stage 1 (variant ``mpas``): an operation-level memory-pressure greedy.

The literal rule (Eq. 21) looks one *node* ahead, and ALLOCs are roots, so the
cheapest ALLOC anywhere in the graph wins and most buffers open before anything
frees. This greedy looks one *operation* ahead instead:

- the candidates are operations whose non-ALLOC predecessors are all scheduled
  (the ready set of Eq. 17 lifted to operations). An operation whose every
  successor leads only to one consumer (a weight's COPY_IN and MOVE feeding one
  CONV, the MOVEs feeding one MATMUL) is a *private feeder*: it is not a candidate
  of its own but runs just before its consumer, as one *unit*, so a load is never
  issued long before the operation that needs it;
- a unit is charged what it adds to the L1+UB live bytes (Eq. 19 summed over the
  ALLOCs it pulls) and credited the FREEs it makes ready: ``transient`` is the
  highest point reached inside the unit, ``net`` the change it leaves behind;
- a unit's ALLOCs are emitted just before the operation that first needs them
  and every FREE as soon as it is ready -- lazy ALLOC and eager FREE never raise
  a prefix sum;
- a unit that would open an L0A/L0B/L0C buffer waits while that tier holds a live
  buffer, and while the open would leave the live L0 buffers unclosable
  (:mod:`.l0`), so every order it returns is L0-legal.

The choice among ready units is the smallest key of a *policy*
(:mod:`.policy`): memory-first weights over ``net``, ``transient`` and the
criticality ``h(v)`` of Eq. 20, or a fixed priority such as the input order or a
depth-first completion order. Units come from :mod:`.units`. A run is
O((V + E) log V) plus the L0 checks, which reuse the last safety witness.
"""

from __future__ import annotations

import heapq

from ...errors import NoLegalOrderError
from ...graph import MpasGraph
from ...instance import KIND_ALLOC, KIND_FREE, KIND_OP
from .l0 import l0_completion_exists, quick_blocker, witness_allows
from .policy import Policy
from .units import Units, build_units

__all__ = ["greedy_order", "greedy_run"]


class _Walk:
    """The effect of running one unit now: nodes in order, memory figures, L0 use."""

    __slots__ = ("nodes", "transient", "net", "left_open", "transient_open", "blocked_by", "blocked_buf")

    def __init__(self) -> None:
        self.nodes: list[int] = []
        self.transient = 0
        self.net = 0
        self.left_open: list[int] = []  # L0 buffers opened and still live after the unit
        self.transient_open: list[int] = []  # L0 ALLOCs opened and closed inside the unit
        self.blocked_by = -1  # live L0 buffer whose tier the unit needs
        self.blocked_buf = -1  # the unit's L0 buffer that waits for it


class _Engine:
    """State of one greedy run."""

    def __init__(self, g: MpasGraph, units: Units, weights: Policy, rank: list[int]) -> None:
        self.g, self.units, self.weights, self.rank = g, units, weights, rank
        n = g.n
        self.done = bytearray(n)
        self.pend = [len(p) for p in g.preds]  # unscheduled preds (all kinds)
        self.wait = {v: len(e) for v, e in units.ext.items()}
        self.held: dict[int, int] = {}
        self.needs: dict[int, dict[int, list[int]]] = {}
        self.witness: list[int] = []
        self.order: list[int] = []
        self.hmax = max(g.h) or 1
        self.version = [0] * n
        self.heap: list[tuple] = []
        self.parked_on: dict[int, list[int]] = {}
        self.parked_any: list[int] = []
        self.touched: set[int] = set()
        self.standalone: list[int] = []
        self.stuck: str | None = None  # why the run stopped before the end (None: it did not)

    # ---- evaluating a unit ---------------------------------------------------------
    def walk(self, v: int) -> _Walk:
        g, done, pend = self.g, self.done, self.pend
        w = _Walk()
        live = dict(self.held)
        opened: dict[int, int] = {}  # buffer -> its ALLOC, opened in this unit
        dec: dict[int, int] = {}
        inside: set[int] = set()
        cur = 0
        for m in self.units.members[v]:
            if done[m]:
                continue
            for a in g.preds[m]:
                if g.kind[a] != KIND_ALLOC or done[a] or a in inside:
                    continue
                if pend[a]:
                    w.blocked_by = -3  # an ALLOC waiting for its own preds
                    return w
                t = g.l0_tier[a]
                if t >= 0:
                    if t in live:
                        w.blocked_by = live[t]
                        w.blocked_buf = g.node_buf[a]
                        return w
                    live[t] = g.node_buf[a]
                    opened[g.node_buf[a]] = a
                inside.add(a)
                w.nodes.append(a)
                cur += g.delta_pk[a]
                for f in g.succs[a]:
                    dec[f] = dec.get(f, 0) + 1
            if cur > w.transient:
                w.transient = cur
            inside.add(m)
            w.nodes.append(m)
            for f in g.succs[m]:
                dec[f] = dec.get(f, 0) + 1
            for f in g.succs[m]:
                if g.kind[f] == KIND_FREE and f not in inside and pend[f] == dec[f]:
                    inside.add(f)
                    w.nodes.append(f)
                    cur += g.delta_pk[f]
                    t = g.l0_tier[f]
                    if t >= 0 and live.get(t) == g.node_buf[f]:
                        del live[t]
                        if g.node_buf[f] in opened:
                            w.transient_open.append(opened.pop(g.node_buf[f]))
        w.net = cur
        w.left_open = list(opened)
        return w

    def push(self, v: int) -> None:
        w = self.walk(v)
        self.version[v] += 1
        key = self.weights.key(v, w.net, w.transient, self.g.h[v] / self.hmax, self.rank[v])
        heapq.heappush(self.heap, (key, self.version[v], v))

    # ---- L0 safety -----------------------------------------------------------------
    def safe(self, v: int, w: _Walk) -> int:
        """-2 when running ``w`` keeps a legal completion, else a buffer to wait for (or -1)."""
        g = self.g
        for a in w.transient_open:
            if a in self.witness:
                self.witness.remove(a)
        if not w.left_open:
            return -2
        allocs = [g.buf_alloc[b] for b in w.left_open]
        if self.held and witness_allows(g, self.witness, allocs):
            return -2
        extra = set(w.nodes)
        if len(w.left_open) == 1:
            blocker = quick_blocker(g, self.done, self.held, self.needs, w.left_open[0], extra)
            if blocker >= 0:
                return blocker
        held_after = {t: b for t, b in self.held.items() if g.buf_free[b] not in extra}
        ok, blocker, opened = l0_completion_exists(g, self.rank, self.done, held_after, w.left_open, extra)
        if ok:
            self.witness = opened
            return -2
        return blocker

    # ---- applying ------------------------------------------------------------------
    def emit(self, x: int) -> None:
        g = self.g
        self.done[x] = 1
        self.order.append(x)
        t = g.l0_tier[x]
        if t >= 0:
            b = g.node_buf[x]
            if g.kind[x] == KIND_ALLOC:
                self.held[t] = b
            elif self.held.get(t) == b:
                del self.held[t]
                self.touched.update(self.parked_on.pop(b, ()))
            self.needs.clear()
            self.touched.update(self.parked_any)
            self.parked_any.clear()
        for h in self.units.waiters[x]:
            self.wait[h] -= 1
            if self.wait[h] == 0:
                self.touched.add(h)
        if g.kind[x] == KIND_OP:
            for b in g.bufs[x]:
                for u in g.succs[g.buf_alloc[b]]:
                    if g.kind[u] == KIND_OP:
                        self.touched.add(self.units.head_of[u])
        for y in g.succs[x]:
            self.pend[y] -= 1
            if self.pend[y] == 0:
                if g.kind[y] == KIND_FREE:
                    self.emit(y)
                elif g.kind[y] == KIND_ALLOC:
                    self.alloc_ready(y)

    def alloc_ready(self, a: int) -> None:
        g = self.g
        ops = [u for u in g.succs[a] if g.kind[u] == KIND_OP]
        if ops:
            self.touched.update(self.units.head_of[u] for u in ops)
        else:
            self.standalone.append(a)

    def refresh(self) -> None:
        for h in sorted(self.touched):
            if h in self.wait and self.wait[h] == 0 and not self.done[h]:
                self.push(h)
        self.touched.clear()

    def run(self) -> list[int]:
        g = self.g
        for v in range(g.n):
            if self.pend[v] == 0 and g.kind[v] == KIND_ALLOC:
                self.alloc_ready(v)
        self.touched.update(v for v, c in self.wait.items() if c == 0)
        self.refresh()
        while len(self.order) < g.n:
            if self.standalone:
                a = self.standalone.pop()
                if not self.done[a] and not self.run_standalone(a):
                    return self.order
                self.refresh()
                continue
            if not self.heap:
                self.stuck = (
                    f"MPAS stopped after {len(self.order)} of {g.n} nodes "
                    "with every ready operation waiting on a single-residency tier"
                )
                return self.order
            _key, ver, v = heapq.heappop(self.heap)
            if ver != self.version[v] or self.done[v]:
                continue
            w = self.walk(v)
            if w.blocked_by == -3:
                continue
            if w.blocked_by >= 0:
                # wait for the longest-lived culprit: a certain deadlock names it
                culprit = quick_blocker(g, self.done, self.held, self.needs, w.blocked_buf)
                verdict = culprit if culprit >= 0 else w.blocked_by
            else:
                verdict = self.safe(v, w)
            if verdict != -2:
                (self.parked_on.setdefault(verdict, []) if verdict >= 0 else self.parked_any).append(v)
                continue
            for x in w.nodes:
                if not self.done[x]:
                    self.emit(x)
            self.refresh()
        return self.order

    def run_standalone(self, a: int) -> bool:
        """An ALLOC that no operation pulls (no operation among its successors); False when
        it cannot open its single-residency tier (the run is stuck)."""
        g = self.g
        t = g.l0_tier[a]
        if t >= 0:
            b = g.node_buf[a]
            if t in self.held or not l0_completion_exists(g, self.rank, self.done, self.held, [b])[0]:
                self.stuck = (
                    f"MPAS stopped after {len(self.order)} of {g.n} nodes: node {a} (ALLOC) cannot open "
                    "its single-residency tier"
                )
                return False
        self.emit(a)
        return True


def greedy_run(
    g: MpasGraph, weights: Policy, rank: list[int], units: Units | None = None
) -> tuple[list[int], str | None]:
    """One greedy run (see the module docstring): the node order, and None; or, when the
    run got stuck on the L0 rule, the prefix it scheduled (L0-legal, closed under
    predecessors) and why it stopped."""
    engine = _Engine(g, units or build_units(g, rank), weights, rank)
    order = engine.run()
    return order, engine.stuck


def greedy_order(g: MpasGraph, weights: Policy, rank: list[int], units: Units | None = None) -> list[int]:
    """One greedy run (see the module docstring); returns the full node order, or raises
    :class:`~dansched.errors.NoLegalOrderError` when it gets stuck."""
    order, stuck = greedy_run(g, weights, rank, units)
    if stuck is not None:
        raise NoLegalOrderError(f"no L0-legal order found: {stuck}")
    return order
