"""A complete plan in the form the makespan search edits: the schedule, the ALLOC offset of
each buffer, and the spill list, with buffer *indices*.

:class:`Layout` holds what the contest files say; the search reads the residency segments of
the plan it edits from the evaluator (:meth:`dansched.simulate.Evaluation.segments`), never
from a walk of its own. The moves edit a copy through the methods here and the shared
evaluator judges the result (:func:`dansched.simulate.evaluate`); nothing here decides
validity.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ....instance import Instance
from ....plan import Plan, plan_from_indices
from ....simulate import Evaluation, Segment, spill_node_ids, spill_of_node

__all__ = ["Layout"]


@dataclass
class Layout:
    """A plan with buffer indices on an instance of ``n`` nodes: ``order`` (node ids, spill
    nodes as :func:`~dansched.simulate.spill_node_ids` numbers them), ``first`` (the ALLOC
    offset of each buffer), ``spill_buf`` and ``spill_off`` (buffer and NewOffset of each
    spill, in spill order)."""

    n: int
    order: list[int]
    first: list[int]
    spill_buf: list[int]
    spill_off: list[int]

    @classmethod
    def of(cls, inst: Instance, plan: Plan, ev: Evaluation) -> Layout:
        """The layout of a plan the evaluator accepted (``ev``: its verdict, with detail)."""
        assert ev.graph is not None, "a full plan's evaluation"
        index = {bid: i for i, bid in enumerate(inst.buf_id.tolist())}
        first = [0] * inst.num_buffers
        for bid, off in plan.offsets or ():
            first[index[bid]] = int(off)
        return cls(inst.n, list(plan.order), first, list(ev.graph.spill_buf), [int(o) for _, o in plan.spills])

    def copy(self) -> Layout:
        return Layout(self.n, list(self.order), list(self.first), list(self.spill_buf), list(self.spill_off))

    def plan(self, inst: Instance) -> Plan:
        """The contest plan (buffer ids), spills numbered in the order of their SPILL_OUTs
        so that equal layouts give equal plans."""
        n = self.n
        outs = [v for v in self.order if v >= n and spill_of_node(n, v)[1]]
        renumber = {spill_of_node(n, v)[0]: k for k, v in enumerate(outs)}
        if all(old == new for old, new in renumber.items()):
            return plan_from_indices(inst, self.order, self.first, zip(self.spill_buf, self.spill_off))
        order = []
        for v in self.order:
            if v < n:
                order.append(v)
            else:
                k, is_out = spill_of_node(n, v)
                order.append(spill_node_ids(n, renumber[k])[0 if is_out else 1])
        spills: list[tuple[int, int]] = [(0, 0)] * len(outs)
        for old, new in renumber.items():
            spills[new] = (self.spill_buf[old], self.spill_off[old])
        return plan_from_indices(inst, order, self.first, spills)

    def set_offset(self, seg: Segment, offset: int) -> None:
        """Move ``seg`` to ``offset`` (its ALLOC offset or its spill's NewOffset)."""
        if seg.spill < 0:
            self.first[seg.buf] = offset
        else:
            self.spill_off[seg.spill] = offset

    def move_node(self, node: int, before: int) -> None:
        """Move ``node`` so that it runs right before the node now at position ``before``
        (positions of the current order; ``before`` may be ``len(order)``)."""
        i = self.order.index(node)
        self.order.insert(before, node)
        del self.order[i if i < before else i + 1]

    def move_before(self, node: int, anchor: int) -> None:
        """Move ``node`` so that it runs right before node ``anchor``."""
        self.order.remove(node)
        self.order.insert(self.order.index(anchor), node)

    def insert_before(self, node: int, anchor: int) -> None:
        """Insert the new node ``node`` right before node ``anchor``."""
        self.order.insert(self.order.index(anchor), node)

    def spill_nodes(self, k: int) -> tuple[int, int]:
        """The SPILL_OUT and SPILL_IN ids of spill ``k``."""
        return spill_node_ids(self.n, k)

    def add_spill(self, buf: int, offset: int) -> tuple[int, int]:
        """A new spill of ``buf`` reloading at ``offset`` (its nodes not yet scheduled): its
        SPILL_OUT and SPILL_IN ids."""
        self.spill_buf.append(buf)
        self.spill_off.append(offset)
        return self.spill_nodes(len(self.spill_buf) - 1)

    def remove_spills(self, spills: Iterable[int]) -> None:
        """Drop the spills ``spills`` (0-based indices) and their nodes, numbering the others
        again in their old order."""
        gone = set(spills)
        if not gone:
            return
        keep = [k for k in range(len(self.spill_buf)) if k not in gone]
        renumber = {old: new for new, old in enumerate(keep)}
        order = []
        for v in self.order:
            if v < self.n:
                order.append(v)
                continue
            k, is_out = spill_of_node(self.n, v)
            if k in renumber:
                order.append(self.spill_nodes(renumber[k])[0 if is_out else 1])
        self.order = order
        self.spill_buf = [self.spill_buf[k] for k in keep]
        self.spill_off = [self.spill_off[k] for k in keep]

    def set_victim(self, k: int, buf: int, offset: int) -> None:
        """Spill ``k`` now evicts ``buf``, which comes back at ``offset``."""
        self.spill_buf[k] = buf
        self.spill_off[k] = offset
