"""The destroy operators of the makespan search: where the next repair looks.

A *focus* is a node of the plan: the event that starts a residency segment (for the moves
that edit a segment or a reload) or a task (the centre of a window). Each destroy operator
offers the foci of one kind of wait on the critical chain (paper Eq. 34), the chain of
binding predecessors that ends the plan (docs/rules.md, section 7):

- ``critical reload``: the SPILL_INs on the chain (a reload the plan waits for);
- ``critical reuse``: the segment starts on the chain bound by an address-reuse edge (a
  segment that waits for the previous occupant of its addresses);
- ``critical task``: every task on the chain (the window moves re-plan around it);
- ``head``: the chain's first tasks, where the engines start (which tile's loads go
  first);
- ``random spill``: the reload of any spill, so that a plan whose chain holds none of the
  above still gets looked at;
- ``busiest gaps``: the nodes on the chains of binding predecessors behind the largest idle
  gaps of the busiest pipe (:class:`BusiestGaps`), critical or not: the waits that keep the
  pipe every plan is bound by from running (the gap-hiding walk's foci,
  :mod:`.gaps`).

The driver keeps, among an operator's foci, those the chosen repair accepts, and draws one.
"""

from __future__ import annotations

from functools import cached_property
from typing import Protocol

from ....models.bounds.floors import busiest_pipe
from ....simulate import Evaluation, spill_node_ids, spill_of_node
from ....stages.cpe.skeleton import BindingChains

__all__ = ["Chain", "Destroy", "BusiestGaps", "DESTROY", "HEAD_TASKS"]

HEAD_TASKS = 8  # the chain's first tasks the head operator offers


class Chain:
    """The critical chain of a valid plan judged with its detail (``order``: its schedule),
    and the waits along it."""

    def __init__(self, order: tuple[int, ...] | list[int], ev: Evaluation) -> None:
        timing = ev.timing
        assert timing is not None, "a full plan's evaluation"
        self.order, self.timing = order, timing

    @cached_property
    def bindings(self) -> BindingChains:
        t = self.timing
        return BindingChains(t.graph, self.order, t.start, t.end)

    @cached_property
    def nodes(self) -> list[int]:
        """The critical chain (Eq. 34), first to last."""
        end, pos = self.timing.end, self.bindings.pos
        return self.bindings.behind(max(self.order, key=lambda x: (end[x], -pos[x])))

    def idle_gaps(self) -> list[tuple[int, int]]:
        """The busiest pipe's idle gaps (spill tasks included) as ``(cycles, task)``: the idle
        time before each of its tasks, largest first (ties: the earlier task)."""
        g, start, end = self.timing.graph, self.timing.start, self.timing.end
        p, _ = busiest_pipe(g.pipe, g.cycles)
        gaps: list[tuple[int, int]] = []
        free = 0
        for i, v in enumerate(self.order):
            if g.pipe[v] != p or p < 0:
                continue
            if start[v] > free:
                gaps.append((start[v] - free, i))
            free = end[v]
        gaps.sort(key=lambda x: (-x[0], x[1]))
        return [(c, self.order[i]) for c, i in gaps]

    @cached_property
    def tasks(self) -> list[int]:
        pipe = self.timing.graph.pipe
        return [v for v in self.nodes if pipe[v] >= 0]


class Destroy(Protocol):
    """A destroy operator: the foci it offers on a plan (in chain order)."""

    name: str

    def foci(self, chain: Chain) -> list[int]: ...


class CriticalReload:
    name = "critical reload"

    def foci(self, chain: Chain) -> list[int]:
        n = chain.timing.graph.n_orig
        return [v for v in chain.nodes if v >= n and not spill_of_node(n, v)[1]]


class CriticalReuse:
    name = "critical reuse"

    def foci(self, chain: Chain) -> list[int]:
        t = chain.timing
        reuse: dict[int, list[int]] = {}
        for u, w in t.graph.reuse_edges:
            reuse.setdefault(w, []).append(u)
        return [v for v in chain.nodes if any(t.end[u] == t.start[v] for u in reuse.get(v, ()))]


class CriticalTask:
    name = "critical task"

    def foci(self, chain: Chain) -> list[int]:
        return chain.tasks


class Head:
    name = "head"

    def foci(self, chain: Chain) -> list[int]:
        return chain.tasks[:HEAD_TASKS]


class RandomSpill:
    name = "random spill"

    def foci(self, chain: Chain) -> list[int]:
        g = chain.timing.graph
        return [spill_node_ids(g.n_orig, k)[1] for k in range(len(g.spill_buf))]


class BusiestGaps:
    """The nodes behind the ``gaps`` largest idle gaps of the busiest pipe: for each, the
    chain of binding predecessors of the task after it, back ``depth`` tasks (the gap's own
    task first, then further back), the chains in order of their gaps, each node once."""

    name = "busiest gaps"

    def __init__(self, gaps: int = 20, depth: int = 4) -> None:
        self.gaps, self.depth = gaps, depth

    def foci(self, chain: Chain) -> list[int]:
        out: dict[int, None] = {}
        for _, v in chain.idle_gaps()[: self.gaps]:
            for u in reversed(chain.bindings.behind(v, self.depth)):
                out.setdefault(u, None)
        return list(out)


DESTROY: dict[str, Destroy] = {
    d.name: d for d in (CriticalReload(), CriticalReuse(), CriticalTask(), Head(), RandomSpill())
}
