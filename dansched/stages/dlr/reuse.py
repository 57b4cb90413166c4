"""Reuse-aware list schedule: an order chosen for traffic rather than peak (Stage 2's sigma(2)).

The schedule keeps a simulated cache ``H`` of each upper tier (L1, UB; LRU by
default) and picks the next operation by which resident buffers it reuses:

- *Lazy loads, eager frees*: an ALLOC, or an operation all of whose predecessors are
  ALLOCs (a load such as COPY_IN), is emitted only when an operation that needs it
  is chosen; a FREE is emitted as soon as it is ready.
- *Tasks*: operations that share a buffer of a lower (near-compute) tier form a
  task (:func:`lower_tier_tasks`), e.g. a MATMUL accumulator with its MOVEs. A
  task runs its operations in the base order's relative order and holds a
  *reserve*, its own peak in each lower tier; tasks are opened while their
  reserves fit the lower tiers, so those tiers never have to spill.
- *Which task to open*: the one whose footprint (the upper-tier buffers its
  operations use) is most covered by ``H`` and the open tasks' footprints, plus
  the best such cover a partner task would get next to it (one step of lookahead:
  tasks that share an input are worth running side by side). Tasks open in
  *waves*: a new wave once the previous one is done, its tasks either side by
  side (as many as the reserves allow) or, with ``serial``, chosen together but
  run one after another.
- *Which operation next*: among the heads of open tasks and the ready operations
  outside tasks, the least *inflow* (upper-tier units it brings into ``H``: loads,
  reloads, new outputs), then the task that has waited longest (open tasks
  interleave), then the base order.

Nothing here knows an operator family. On a blocked matrix product the waves
become pairs of output blocks that share an input block per k step (side by side)
or bands of blocks sharing a row or column (serial), swept through the others;
:func:`dansched.stages.dlr.stage.dlr_plan` runs several settings and keeps the best.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

from ...errors import ReuseBudgetExceeded
from ...graph import lifetime_graph
from ...instance import KIND_ALLOC, KIND_FREE, KIND_OP, Instance

__all__ = ["lower_tier_tasks", "lazy_loads", "reuse_order"]


def _find(parent: list[int], x: int) -> int:
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


def lazy_loads(inst: Instance) -> list[bool]:
    """Operations all of whose predecessors are ALLOCs (loads such as COPY_IN): they only
    fill fresh buffers, so they are emitted on demand like the ALLOCs themselves."""
    L = inst.lists()
    pred, succ = lifetime_graph(inst)
    return [
        L.kind[v] == KIND_OP and bool(succ[v]) and all(L.kind[u] == KIND_ALLOC for u in pred[v]) for v in range(inst.n)
    ]


def lower_tier_tasks(inst: Instance, lazy: Sequence[bool]) -> list[list[int]]:
    """Tasks: the non-lazy operations joined by shared buffers of the lower (non-peak)
    tiers, the near-compute working set of one compute step (multi-operation tasks only)."""
    L = inst.lists()
    peak = {inst.hw.tier_index(t) for t in inst.hw.peak_tiers}
    tiers = inst.buf_tier.tolist()
    parent = list(range(inst.n))
    for b in range(inst.num_buffers):
        if tiers[b] in peak:
            continue
        users = [u for u in L.users[b] if not lazy[u]]
        for u in users[1:]:
            ra, rb = _find(parent, users[0]), _find(parent, u)
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)
    groups: dict[int, list[int]] = {}
    for v in range(inst.n):
        if L.kind[v] == KIND_OP and not lazy[v]:
            groups.setdefault(_find(parent, v), []).append(v)
    return [g for g in groups.values() if len(g) > 1]


class _Hot:
    """The simulated content ``H`` of one upper tier. When it overflows, the least recently
    used buffer leaves (``policy="lru"``), or (``policy="remaining"``) the one with the
    fewest remaining users, then the least recently used: a Belady stand-in for an
    order still being built."""

    __slots__ = ("cap", "used", "last", "sizes", "remaining", "clock", "policy")

    def __init__(self, cap: int, sizes: Sequence[int], remaining: list[int], policy: str = "lru") -> None:
        self.cap = cap
        self.used = 0
        self.last: dict[int, int] = {}
        self.sizes = sizes
        self.remaining = remaining
        self.clock = 0
        self.policy = policy

    def __contains__(self, b: int) -> bool:
        return b in self.last

    def touch(self, b: int) -> list[int]:
        """Use ``b`` now; returns the buffers that left to make room."""
        self.clock += 1
        if b not in self.last:
            self.used += self.sizes[b]
        self.last[b] = self.clock
        gone = []
        while self.used > self.cap and len(self.last) > 1:
            if self.policy == "lru":
                victim = min((c for c in self.last if c != b), key=lambda c: self.last[c])
            else:
                victim = min((c for c in self.last if c != b), key=lambda c: (self.remaining[c], self.last[c]))
            self.drop(victim)
            gone.append(victim)
        return gone

    def drop(self, b: int) -> None:
        if b in self.last:
            del self.last[b]
            self.used -= self.sizes[b]


def reuse_order(
    inst: Instance,
    base_order: Sequence[int],
    lookahead: int = 6,
    waves: bool = True,
    width: int = 0,
    hot_policy: str = "lru",
    serial: bool = False,
    budget: int | None = None,
    allowance: int = 1000,
) -> list[int]:
    """A reuse-aware topological order of all nodes (see the module docstring);
    ``lookahead`` is how many of the best tasks get the partner lookahead (0: none);
    with ``waves``, tasks open in groups once every open task is done, so the tasks
    of a group start together and meet their shared inputs at the same step;
    ``width`` caps the tasks open at once (0: as many as the lower tiers hold);
    ``hot_policy`` is how ``H`` forgets: ``"lru"`` or ``"remaining"`` (fewest remaining users first);
    with ``serial``, the tasks of a wave run one after another (chosen together, so
    they share inputs, but never holding lower tiers at the same time).
    ``budget`` caps the ready-set and task scans (the part that grows faster than
    linearly when many tasks are ready at once) per node emitted; past it
    :class:`ReuseBudgetExceeded` is raised."""
    return _ReuseScheduler(inst, base_order, lookahead, waves, width, hot_policy, serial, budget, allowance).run()


class _ReuseScheduler:
    """State of one reuse-aware list schedule; ``run`` returns the order."""

    def __init__(
        self,
        inst: Instance,
        base_order: Sequence[int],
        lookahead: int,
        waves: bool,
        width: int,
        hot_policy: str = "lru",
        serial: bool = False,
        budget: int | None = None,
        allowance: int = 1000,
    ) -> None:
        L = inst.lists()
        self.work, self.budget, self.allowance = 0, budget, allowance
        self.waves = waves
        self.width = width
        self.serial = serial
        self.gate = width != 1  # one task at a time: the partner is the next task, always look ahead
        hw = inst.hw
        self.inst, self.L, self.lookahead = inst, L, lookahead
        n = inst.n
        self.rank = [0] * n
        for i, v in enumerate(base_order):
            self.rank[v] = i
        self.sizes = inst.buf_size.tolist()
        tiers = inst.buf_tier.tolist()
        self.tiers = tiers
        peak = {hw.tier_index(t) for t in hw.peak_tiers}
        self.is_upper = [t in peak for t in range(len(hw.tiers))]
        self.caps = [hw.capacity[t] for t in hw.tiers]
        self.remaining = [len(L.users[b]) for b in range(inst.num_buffers)]
        self.hot = {t: _Hot(self.caps[t], self.sizes, self.remaining, hot_policy) for t in peak}
        self.lazy = lazy_loads(inst)
        self.soft = [L.kind[v] == KIND_ALLOC or self.lazy[v] for v in range(n)]
        self.emitted = [False] * n
        self.pred, self.succ = lifetime_graph(inst)
        self.missing = [len(self.pred[v]) for v in range(n)]
        # nodes whose predecessors are all out, by rank (lazily cleaned): the fallback's pool
        self.ready_heap = [(self.rank[v], v) for v in range(n) if self.missing[v] == 0]
        heapq.heapify(self.ready_heap)
        self.hard_missing = [sum(1 for u in self.pred[v] if not self.soft[u]) for v in range(n)]
        self.out: list[int] = []
        # tasks
        tasks = [sorted(g, key=self.rank.__getitem__) for g in lower_tier_tasks(inst, self.lazy)]
        tasks.sort(key=lambda g: self.rank[g[0]])
        self.tasks = tasks
        self.task_of = [-1] * n
        for ti, g in enumerate(tasks):
            for v in g:
                self.task_of[v] = ti
        self.head = [0] * len(tasks)
        self.task_last = [-1] * len(tasks)
        self.footprint = [self._footprint(g) for g in tasks]
        self.fsize = [sum(self.sizes[b] for b in f) or 1 for f in self.footprint]
        self.reserve = [self._reserve(g) for g in tasks]
        self.tasks_of_buf: dict[int, list[int]] = {}
        for ti, f in enumerate(self.footprint):
            for b in f:
                self.tasks_of_buf.setdefault(b, []).append(ti)
        self.present = [False] * inst.num_buffers  # in H or in an open task's footprint
        self.cov_units = [0] * len(tasks)  # units of each task's footprint that are present
        self.unopened = set(range(len(tasks)))
        self.open: list[int] = []
        self.reserved = [0] * len(self.caps)
        self.open_fp: dict[int, int] = {}  # buffer -> number of open tasks using it
        self.ready_free: set[int] = {
            v
            for v in range(n)
            if L.kind[v] == KIND_OP and not self.lazy[v] and self.task_of[v] < 0 and self.hard_missing[v] == 0
        }

    # ---- static task facts ------------------------------------------------------------
    def _upper_bufs(self, v: int) -> list[int]:
        return [b for b in self.L.bufs[v] if self.is_upper[self.tiers[b]]]

    def _footprint(self, g: list[int]) -> set[int]:
        f: set[int] = set()
        for v in g:
            f.update(self._upper_bufs(v))
            for u in self.pred[v]:
                if self.lazy[u]:
                    f.update(self._upper_bufs(u))
        return f

    def _reserve(self, g: list[int]) -> dict[int, int]:
        """Peak of the task's own lower-tier buffers along its operation sequence."""
        first: dict[int, int] = {}
        last: dict[int, int] = {}
        for i, v in enumerate(g):
            for b in self.L.bufs[v]:
                if not self.is_upper[self.tiers[b]]:
                    first.setdefault(b, i)
                    last[b] = i
        peak: dict[int, int] = {}
        for i in range(len(g)):
            live: dict[int, int] = {}
            for b in first:
                if first[b] <= i <= last[b]:
                    live[self.tiers[b]] = live.get(self.tiers[b], 0) + self.sizes[b]
            for t, s in live.items():
                peak[t] = max(peak.get(t, 0), s)
        return peak

    # ---- readiness and emission -------------------------------------------------------------
    def pullable(self, v: int) -> bool:
        """Every not-yet-emitted ancestor of ``v`` is soft (ALLOC or lazy load) and itself pullable."""
        if self.hard_missing[v]:
            return False
        return all(self.emitted[u] or self.pullable(u) for u in self.pred[v])

    def emit_one(self, v: int) -> None:
        L = self.L
        self.emitted[v] = True
        self.out.append(v)
        hard = not self.soft[v]
        for w in self.succ[v]:
            self.missing[w] -= 1
            if self.missing[w] == 0:
                heapq.heappush(self.ready_heap, (self.rank[w], w))
            if hard:
                self.hard_missing[w] -= 1
                if self.hard_missing[w] == 0 and L.kind[w] == KIND_OP and self.task_of[w] < 0 and not self.lazy[w]:
                    self.ready_free.add(w)
        k = L.kind[v]
        if k == KIND_OP:
            for b in L.bufs[v]:
                self.remaining[b] -= 1
                t = self.tiers[b]
                if self.is_upper[t]:
                    for c in self.hot[t].touch(b):
                        self.refresh(c)
                    self.refresh(b)
        elif k == KIND_FREE:
            b = L.node_buf[v]
            if self.is_upper[self.tiers[b]]:
                self.hot[self.tiers[b]].drop(b)
                self.refresh(b)
        for w in self.succ[v]:
            if L.kind[w] == KIND_FREE and self.missing[w] == 0 and not self.emitted[w]:
                self.emit_one(w)

    def emit_with_ancestors(self, v: int) -> None:
        stack = [(v, False)]
        while stack:
            u, expanded = stack.pop()
            if self.emitted[u]:
                continue
            if expanded:
                self.emit_one(u)
                continue
            stack.append((u, True))
            todo = sorted((p for p in self.pred[u] if not self.emitted[p]), key=self.rank.__getitem__, reverse=True)
            stack.extend((p, False) for p in todo)

    # ---- scoring ---------------------------------------------------------------------
    def is_hot(self, b: int) -> bool:
        return b in self.hot[self.tiers[b]]

    def refresh(self, b: int) -> None:
        """Keep ``present[b]`` and the covered units of the tasks using ``b`` up to date."""
        now = self.is_hot(b) or b in self.open_fp
        if now != self.present[b]:
            self.present[b] = now
            delta = self.sizes[b] if now else -self.sizes[b]
            for ti in self.tasks_of_buf.get(b, ()):
                self.cov_units[ti] += delta

    def inflow(self, v: int) -> int:
        """Upper-tier units ``v`` (with the loads it pulls in) brings into ``H``."""
        seen = set()
        total = 0
        for u in [v] + [p for p in self.pred[v] if self.lazy[p] and not self.emitted[p]]:
            for b in self._upper_bufs(u):
                if b not in seen:
                    seen.add(b)
                    if not self.is_hot(b):
                        total += self.sizes[b]
        return total

    def cover(self, f: set[int], extra: set[int] | None = None) -> int:
        """Units of footprint ``f`` already in ``H``, in open tasks' footprints or in ``extra``."""
        total = 0
        for b in f:
            if self.is_hot(b) or b in self.open_fp or (extra is not None and b in extra):
                total += self.sizes[b]
        return total

    def fits(self, ti: int) -> bool:
        if self.width and len(self.open) >= self.width:
            return False
        if self.serial:  # one task of the wave runs at a time: only its own reserve must fit
            return not self.open or all(s <= self.caps[t] for t, s in self.reserve[ti].items())
        return all(self.reserved[t] + s <= self.caps[t] for t, s in self.reserve[ti].items())

    def room_after(self, ti: int) -> bool:
        """Would a task like ``ti`` still fit once ``ti`` is open (so a partner can join it)?"""
        if self.width and len(self.open) + 1 >= self.width:
            return False
        if self.serial:
            return bool(self.width)
        return all(self.reserved[t] + 2 * s <= self.caps[t] for t, s in self.reserve[ti].items())

    def head_ready(self, ti: int) -> bool:
        return self.pullable(self.tasks[ti][self.head[ti]])

    def partner_score(self, ti: int) -> float:
        """Best cover a partner task would get once ``ti`` is open (one step of lookahead)."""
        f = self.footprint[ti]
        best = 0.0
        seen = {ti}
        for b in f:
            for tj in self.tasks_of_buf.get(b, ()):
                if tj in seen or tj not in self.unopened:
                    continue
                seen.add(tj)
                best = max(best, self.cover(self.footprint[tj], f) / self.fsize[tj])
        return best

    # ---- tasks ------------------------------------------------------------------------
    def open_task(self, ti: int) -> None:
        self.unopened.discard(ti)
        self.open.append(ti)
        for t, s in self.reserve[ti].items():
            self.reserved[t] += s
        for b in self.footprint[ti]:
            self.open_fp[b] = self.open_fp.get(b, 0) + 1
            self.refresh(b)
        self.task_last[ti] = len(self.out)

    def close_task(self, ti: int) -> None:
        self.open.remove(ti)
        for t, s in self.reserve[ti].items():
            self.reserved[t] -= s
        for b in self.footprint[ti]:
            c = self.open_fp[b] - 1
            if c:
                self.open_fp[b] = c
            else:
                del self.open_fp[b]
                self.refresh(b)

    def choose_task(self, force: bool = False) -> int | None:
        """The task to open next: best cover of its footprint, plus (when a partner could
        still join it) the best partner's cover. Partner lookahead is spent on the
        ``lookahead`` best tasks, one per distinct covered set (tasks covered by the same
        buffers are alike, so only the first in the base order stands for them)."""
        self.spend(len(self.unopened))
        avail = [ti for ti in self.unopened if (force or self.fits(ti)) and self.head_ready(ti)]
        if not avail:
            return None
        base = {ti: self.cov_units[ti] / self.fsize[ti] for ti in avail}
        avail.sort(key=lambda ti: (-base[ti], self.rank[self.tasks[ti][0]]))
        if self.lookahead <= 0 or (self.gate and not self.room_after(avail[0])):
            return avail[0]
        top: list[int] = []
        groups: set[frozenset[int]] = set()
        for ti in avail:
            covered = self.covered_part(self.footprint[ti])
            if covered not in groups:
                groups.add(covered)
                top.append(ti)
                if len(top) == self.lookahead:
                    break
        total = {ti: base[ti] + self.partner_score(ti) for ti in top}
        return min(top, key=lambda ti: (-total[ti], self.rank[self.tasks[ti][0]]))

    def covered_part(self, f: set[int]) -> frozenset[int]:
        """The buffers of footprint ``f`` already in ``H`` or in open tasks' footprints."""
        return frozenset(b for b in f if self.is_hot(b) or b in self.open_fp)

    def open_tasks(self) -> None:
        if self.waves and self.open:
            return
        while True:
            ti = self.choose_task()
            if ti is None:
                return
            self.open_task(ti)

    # ---- main loop ----------------------------------------------------------------------
    def candidates(self) -> list[tuple[tuple, int]]:
        self.spend(len(self.open) + len(self.ready_free))
        out = []
        for ti in self.open[:1] if self.serial else self.open:
            v = self.tasks[ti][self.head[ti]]
            if self.pullable(v):
                out.append(((self.inflow(v), 0, self.task_last[ti], self.rank[v]), v))
        for v in self.ready_free:
            if not self.emitted[v] and self.pullable(v):
                out.append(((self.inflow(v), 1, 0, self.rank[v]), v))
        return out

    def spend(self, steps: int) -> None:
        """Count ready-set and task scans; past ``budget`` per node emitted so far (plus
        ``allowance`` nodes' worth before the first one) the schedule is abandoned, so a hopeless run stops early."""
        self.work += steps
        if self.budget is not None and self.work > self.budget * (len(self.out) + self.allowance):
            raise ReuseBudgetExceeded(
                f"reuse-aware order: {self.work:,} scan steps after {len(self.out):,} nodes (budget {self.budget} per node)"
            )

    def run(self) -> list[int]:
        n = self.inst.n
        while len(self.out) < n:
            self.open_tasks()
            cands = self.candidates()
            if not cands:
                ti = self.choose_task(force=True)
                if ti is not None:
                    self.open_task(ti)
                    continue
                self.emit_fallback()
                continue
            _, v = min(cands)
            self.emit_with_ancestors(v)
            self.after(v)
        return self.out

    def emit_fallback(self) -> None:
        """Nothing schedulable by the rules (e.g. a load nobody needs): the first ready node of the base order."""
        while self.ready_heap and self.emitted[self.ready_heap[0][1]]:
            heapq.heappop(self.ready_heap)
        assert self.ready_heap, "the instance graph has a cycle"
        best = self.ready_heap[0][1]
        self.emit_with_ancestors(best)
        self.after(best)

    def after(self, v: int) -> None:
        """Bookkeeping once operation ``v`` is out: its task's head moves on (closing the
        task when it is done), or it leaves the ready set."""
        ti = self.task_of[v]
        if ti < 0:
            self.ready_free.discard(v)
            return
        g = self.tasks[ti]
        h = self.head[ti]
        while h < len(g) and self.emitted[g[h]]:
            h += 1
        self.head[ti] = h
        self.task_last[ti] = len(self.out)
        if h == len(g):
            if ti in self.unopened:
                self.open_task(ti)
            self.close_task(ti)
