"""Which tasks the time-driven scheduler may consider, and in which order it takes them.

- :class:`Prerequisites`: what each operation and FREE waits for before it can be
  emitted (its instance predecessors, through the ALLOCs it needs; a FREE also its
  buffer's users).
- :class:`ReleaseWindow`: the *frontier* (the first operation of the reference order
  not yet emitted) and how far past it each class of operation may run ahead: loads
  (the spill-in pipe) and reloads ``window`` operations, the busiest pipe's operations
  ``compute_window``, the other pipes' ``feed_window``.
- :class:`TaskQueues`: released tasks per pipe; the next task is the one that can
  start earliest over all pipes (list scheduling), ties to the larger priority (the
  criticality h(v) of Eq. 20), then the reference rank, then the pipe.

A task is an entry ``(ready time, -priority, rank, task)``: ``task >= 0`` an operation,
``-(b + 1)`` the reload (SPILL_IN) of buffer ``b``.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Sequence

from .....instance import KIND_ALLOC, KIND_OP, Instance
from .....params import TimedParams
from .reference import Operations

__all__ = ["Task", "Prerequisites", "ReleaseWindow", "TaskQueues", "reload_task"]

Task = tuple[int, int, int, int]  # (ready time, -priority, rank, task)


def reload_task(b: int) -> int:
    """The task id of buffer ``b``'s reload (negative, apart from operation ids)."""
    return -(b + 1)


class Prerequisites:
    """Per operation and FREE, how many prerequisites are not emitted yet, and per node
    the tasks waiting on it. An operation waits for its non-ALLOC predecessors and the
    predecessors of the ALLOCs it needs (it emits those ALLOCs itself); a FREE for its
    non-ALLOC predecessors, its buffer's users and the predecessors of its ALLOC."""

    def __init__(self, inst: Instance, operations: Operations, alloc_node: Sequence[int]) -> None:
        L = inst.lists()
        kind = L.kind
        self.dependents: list[list[int]] = [[] for _ in range(inst.n)]
        self.count = [0] * inst.n
        for v in range(inst.n):
            k = kind[v]
            if k == KIND_ALLOC:
                continue
            reqs: set[int] = set()
            reqs.update(u for u in L.pred[v] if kind[u] != KIND_ALLOC)
            if k == KIND_OP:
                allocs = {u for u in L.pred[v] if kind[u] == KIND_ALLOC}
                allocs.update(alloc_node[b] for b in operations.bufs[v])
                for a in allocs:
                    reqs.update(L.pred[a])
            else:
                b = L.node_buf[v]
                reqs.update(L.users[b])
                reqs.update(L.pred[alloc_node[b]])
            reqs.discard(v)
            self.count[v] = len(reqs)
            for u in reqs:
                self.dependents[u].append(v)

    def done(self, v: int) -> list[int]:
        """Count ``v`` as emitted; the tasks left with no prerequisite, in dependents order."""
        out = []
        count = self.count
        for w in self.dependents[v]:
            count[w] -= 1
            if count[w] == 0:
                out.append(w)
        return out


class ReleaseWindow:
    """The frontier and, per class of operation (0 loads, 1 the busiest pipe's, 2 the
    other pipes'), how far past it operations are released; reloads follow ``window``."""

    def __init__(self, ops: Sequence[int], op_class: Sequence[int], class_window: tuple[int, int, int]) -> None:
        self.ops = ops
        self.op_class = op_class
        self.class_window = class_window
        self.frontier = 0  # position in ops
        self._ptr = [-1, -1, -1]  # last position released, per class
        self._reload_ptr = -1  # last position scanned for reloads

    @classmethod
    def of(cls, inst: Instance, ops: Sequence[int], params: TimedParams, load_pipe: int) -> ReleaseWindow:
        """Classes: operations on ``load_pipe``, on the pipe with the most operation
        cycles (ties to the lower pipe), on the others."""
        L = inst.lists()
        busy = [0] * len(inst.hw.pipes)
        for v in ops:
            busy[L.pipe[v]] += L.cycles[v]
        bottleneck = max(range(len(busy)), key=lambda p: (busy[p], -p))
        op_class = [0 if L.pipe[v] == load_pipe else 1 if L.pipe[v] == bottleneck else 2 for v in ops]
        return cls(ops, op_class, (params.window, params.compute_window, params.feed_window))

    def contains(self, i: int) -> bool:
        """Operation at position ``i`` lies inside its class's window."""
        return i < len(self.ops) and i <= self.frontier + self.class_window[self.op_class[i]]

    def advance(self, emitted: Sequence[bool]) -> tuple[list[int], list[int]]:
        """Move the frontier past emitted operations. Returns the operations that entered
        their class's window (class 0, then 1, then 2, each by position) and those not
        yet emitted that entered the reload window (by position)."""
        ops = self.ops
        while self.frontier < len(ops) and emitted[ops[self.frontier]]:
            self.frontier += 1
        entered = []
        for c in (0, 1, 2):
            hi = min(len(ops) - 1, self.frontier + self.class_window[c])
            while self._ptr[c] < hi:
                self._ptr[c] += 1
                if self.op_class[self._ptr[c]] == c:
                    entered.append(ops[self._ptr[c]])
        reloads = []
        hi = min(len(ops) - 1, self.frontier + self.class_window[0])
        while self._reload_ptr < hi:
            self._reload_ptr += 1
            v = ops[self._reload_ptr]
            if not emitted[v]:
                reloads.append(v)
        return entered, reloads

    def upcoming(self, k: int, emitted: Sequence[bool]) -> Iterator[int]:
        """The next ``k`` operations of the reference order not yet emitted, from the frontier."""
        i, taken = self.frontier, 0
        while i < len(self.ops) and taken < k:
            v = self.ops[i]
            i += 1
            if emitted[v]:
                continue
            taken += 1
            yield v


class TaskQueues:
    """Released tasks per pipe: ``waiting`` (by ready time) until their pipe is free by
    then, ``available`` (by priority) after; ``blocked`` ones wait for room."""

    def __init__(self, npipes: int) -> None:
        self.waiting: list[list[Task]] = [[] for _ in range(npipes)]
        self.available: list[list[tuple[int, int, int, int]]] = [[] for _ in range(npipes)]
        self.blocked: list[tuple[int, Task]] = []  # (pipe, entry), in blocking order
        self.released: set[int] = set()  # operations in a queue or blocked

    def push(self, pipe: int, entry: Task) -> None:
        heapq.heappush(self.waiting[pipe], entry)

    def next(self, pipe_free: Sequence[int]) -> tuple[int, Task] | None:
        """Take the task that can start earliest (its ready time or, once ready, its
        pipe's free time), ties by priority, rank, pipe; ``None`` when none is queued."""
        best = None
        for p in range(len(pipe_free)):
            w, a = self.waiting[p], self.available[p]
            while w and w[0][0] <= pipe_free[p]:
                rt, negp, rk, task = heapq.heappop(w)
                heapq.heappush(a, (negp, rk, task, rt))
            if a:
                key = (pipe_free[p], a[0][0], a[0][1], p)
            elif w:
                key = (w[0][0], w[0][1], w[0][2], p)
            else:
                continue
            if best is None or key < best:
                best = key
        if best is None:
            return None
        p = best[3]
        if self.available[p]:
            negp, rk, task, rt = heapq.heappop(self.available[p])
            return p, (rt, negp, rk, task)
        return p, heapq.heappop(self.waiting[p])

    def block(self, pipe: int, entry: Task) -> None:
        self.blocked.append((pipe, entry))

    def unblock_all(self) -> None:
        """Room was freed: every blocked task is queued again."""
        for p, entry in self.blocked:
            heapq.heappush(self.waiting[p], entry)
        self.blocked.clear()

    def unblock(self, task: int) -> None:
        """Queue ``task`` again if it is blocked (it became the frontier, which may evict)."""
        for i, (p, entry) in enumerate(self.blocked):
            if entry[3] == task:
                heapq.heappush(self.waiting[p], entry)
                self.blocked.pop(i)
                return
