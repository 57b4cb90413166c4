"""The engine clock of the time-driven scheduler: the shared cycle simulator's start rule,
applied to each node as it is appended to the order.

Each pipe runs its nodes in order, one at a time; a node starts when its augmented
predecessors have ended and its pipe is free (paper Eq. 9), and the makespan is the
latest end (Eq. 10):

    start(v) = max(end of v's predecessors in the augmented graph, end of the previous node on v's pipe)
    end(v)   = start(v) + cycles(v)

The instance's own edges are read here; the edges a plan adds (spill edges, address
reuse) reach :meth:`Engines.run` as ``after``, the latest end among those extra
predecessors, which the caller knows.

>>> clock = Engines(preds=[[], [0]], n=2, npipes=1)
>>> clock.run(0, after=0, pipe=0, cycles=5), clock.run(1, after=0, pipe=0, cycles=3)
(5, 8)
>>> clock.run(2, after=6, pipe=-1, cycles=0)  # a node past the instance (a spill), no pipe
6
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["Engines", "NO_PIPE"]

NO_PIPE = -1  # ALLOC and FREE take no engine time


class Engines:
    """End time of every node emitted so far and, per pipe, when it is next free."""

    def __init__(self, preds: Sequence[Sequence[int]], n: int, npipes: int) -> None:
        self.preds = preds  # the instance's predecessors of nodes 0..n-1
        self.n = n
        self.end: list[int] = [0] * n  # grows with the spill nodes
        self.pipe_free: list[int] = [0] * npipes

    def run(self, v: int, after: int, pipe: int, cycles: int) -> int:
        """Time node ``v`` (Eq. 9): it starts at the latest of ``after``, the ends of its
        instance predecessors (none for a spill node, ``v >= n``) and, unless ``pipe`` is
        :data:`NO_PIPE`, the time its pipe is free; returns its end."""
        t = after
        if v < self.n:
            end = self.end
            for u in self.preds[v]:
                if end[u] > t:
                    t = end[u]
        if pipe >= 0:
            if self.pipe_free[pipe] > t:
                t = self.pipe_free[pipe]
            self.pipe_free[pipe] = t + cycles
        if v >= len(self.end):
            self.end.extend([0] * (v + 1 - len(self.end)))
        self.end[v] = t + cycles
        return t + cycles
