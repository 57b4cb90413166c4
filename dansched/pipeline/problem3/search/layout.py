"""A complete plan in the form the makespan search edits: the schedule, an offset per
residency segment, the spill list, and the segments themselves.

A *segment* is one residency of a buffer (docs/rules.md, residency): from the event that
makes it resident (ALLOC or SPILL_IN) to the one that ends it (SPILL_OUT or FREE), at one
offset of its tier. Two segments of a tier may share addresses only when one ends before
the other starts in the schedule. :class:`Layout` holds what the contest files say (order,
first offsets, spill list) with buffer *indices*; :meth:`Layout.segments` derives the
segments with their positions, and :func:`free_ranges` answers "which addresses of a tier
are free over these positions". The search's moves edit a copy and the shared evaluator
judges the result (:func:`dansched.simulate.evaluate`); nothing here decides validity.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ....instance import KIND_ALLOC, KIND_OP, Instance
from ....plan import Plan, plan_from_indices
from ....simulate import AugmentedGraph

__all__ = ["Segment", "Layout", "free_ranges"]


@dataclass(frozen=True)
class Segment:
    """One residency: buffer index, tier index, size, offset, the schedule positions of the
    events that start and end it, those events' node ids, and the spill number of a
    SPILL_IN segment (``-1`` for the ALLOC segment)."""

    buf: int
    tier: int
    size: int
    offset: int
    start: int
    end: int
    start_node: int
    end_node: int
    slot: int

    def meets(self, lo: int, hi: int) -> bool:
        """Resident at some position strictly between ``lo`` and ``hi`` or at either end."""
        return self.start <= hi and lo <= self.end


@dataclass
class Layout:
    """A plan with buffer indices: ``order`` (node ids, spill ``k`` as ``N+2k`` and
    ``N+2k+1``), ``first`` (the ALLOC offset of each buffer), ``spill_buf`` and
    ``spill_off`` (buffer and NewOffset of each spill, in spill order)."""

    order: list[int]
    first: list[int]
    spill_buf: list[int]
    spill_off: list[int]
    _segments: list[Segment] | None = field(default=None, repr=False, compare=False)

    @classmethod
    def of(cls, inst: Instance, plan: Plan, graph: AugmentedGraph) -> Layout:
        """The layout of a plan the evaluator accepted (``graph``: its augmented DAG)."""
        index = {bid: i for i, bid in enumerate(inst.buf_id.tolist())}
        first = [0] * inst.num_buffers
        for bid, off in plan.offsets or ():
            first[index[bid]] = int(off)
        return cls(list(plan.order), first, list(graph.spill_buf), [int(o) for _, o in plan.spills])

    def copy(self) -> Layout:
        return Layout(list(self.order), list(self.first), list(self.spill_buf), list(self.spill_off))

    def plan(self, inst: Instance) -> Plan:
        """The contest plan (buffer ids), spills numbered in the order of their SPILL_OUTs
        so that equal layouts give equal plans."""
        n = inst.n
        outs = [v for v in self.order if v >= n and (v - n) % 2 == 0]
        renumber = {(v - n) // 2: k for k, v in enumerate(outs)}
        if all(old == new for old, new in renumber.items()):
            return plan_from_indices(inst, self.order, self.first, zip(self.spill_buf, self.spill_off))
        order = [v if v < n else n + 2 * renumber[(v - n) // 2] + (v - n) % 2 for v in self.order]
        spills: list[tuple[int, int]] = [(0, 0)] * len(outs)
        for old, new in renumber.items():
            spills[new] = (self.spill_buf[old], self.spill_off[old])
        return plan_from_indices(inst, order, self.first, spills)

    def segments(self, inst: Instance) -> list[Segment]:
        """Every residency segment, in the order their starting events run."""
        if self._segments is not None:
            return self._segments
        n = inst.n
        L = inst.lists()
        sizes, tiers = inst.buf_size.tolist(), inst.buf_tier.tolist()
        opened: dict[int, tuple[int, int, int, int]] = {}
        done: list[tuple[int, Segment]] = []
        for i, v in enumerate(self.order):
            if v < n:
                if L.kind[v] == KIND_OP:
                    continue
                b = L.node_buf[v]
                starting, off, slot = L.kind[v] == KIND_ALLOC, self.first[b], -1
            else:
                k, is_in = divmod(v - n, 2)
                b, starting, off, slot = self.spill_buf[k], bool(is_in), self.spill_off[k], k
            if starting:
                opened[b] = (i, v, off, slot)
            else:
                s, sv, so, sl = opened.pop(b)
                done.append((s, Segment(b, tiers[b], sizes[b], so, s, i, sv, v, sl)))
        done.sort(key=lambda x: x[0])
        self._segments = [seg for _, seg in done]
        return self._segments

    def set_offset(self, seg: Segment, offset: int) -> None:
        """Move ``seg`` to ``offset`` (its ALLOC offset or its spill's NewOffset)."""
        if seg.slot < 0:
            self.first[seg.buf] = offset
        else:
            self.spill_off[seg.slot] = offset
        self._segments = None

    def move_node(self, node: int, before: int) -> None:
        """Move ``node`` so that it runs right before the node now at position ``before``
        (positions of the current order; ``before`` may be ``len(order)``)."""
        i = self.order.index(node)
        self.order.insert(before, node)
        del self.order[i if i < before else i + 1]
        self._segments = None


def free_ranges(
    segments: Iterable[Segment], capacity: int, lo: int, hi: int, skip: Sequence[Segment] = ()
) -> list[tuple[int, int]]:
    """The address ranges ``[a, b)`` of a tier of ``capacity`` units that no segment of
    ``segments`` (those of that tier) other than ``skip`` occupies at any position from
    ``lo`` to ``hi``."""
    busy = sorted((s.offset, s.offset + s.size) for s in segments if s.meets(lo, hi) and s not in skip)
    out: list[tuple[int, int]] = []
    at = 0
    for a, b in busy:
        if a > at:
            out.append((at, a))
        at = max(at, b)
    if at < capacity:
        out.append((at, capacity))
    return out
