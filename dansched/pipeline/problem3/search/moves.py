"""Moves of the makespan search that change a plan's memory skeleton, not only its order.

Every move is a :class:`Move`: it says which *foci* it accepts (nodes of the plan a destroy
operator offers, :mod:`.focus`), edits a copy of a
:class:`~dansched.pipeline.problem3.search.layout.Layout` around one and returns it, or
``None`` when it does not apply there; the shared evaluator judges the result. The moves
here take the residency segment the focus starts (a reload's segment, or one whose start
waits on an address); the window moves of :mod:`.windows` a task at the window's centre.
:data:`.driver.MOVES` registers the moves of both modules by name, in the order the search offers
them.

Addresses are chosen by *lateness*: for a segment that starts when the current timing says
it is wanted, the previous occupants of an address range make it wait until the latest of
their ends (the address-reuse edge, docs/rules.md); ranges whose previous occupants end
earliest come first, then the tighter fit and the lower address (best fit, paper Eq. 24).
``rng`` picks among the ``choices`` best ranges so that repeated moves explore.

- :class:`Readdress`: a segment to another free range (the address-reuse edge on the
  critical path disappears).

The others apply to a reload's segment (a focus that a SPILL_IN starts):

- :class:`HoistReload`: the SPILL_IN earlier in the schedule, into room free from then on;
- :class:`DelayEviction`: its SPILL_OUT later, the segments that used its room moved away;
- :class:`SwapVictim`: the buffer the spill evicts replaced by another resident of the same
  tier (no more traffic than the budget allows), memory repaired around it;
- :class:`AddRoom`: one more spill, of a buffer idle around the reload, so that the reload
  runs ahead into the room it frees (room for the next tile, paid with traffic).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Protocol

import numpy as np

from ....addresses import free_ranges
from ....hardware import spill_traffic
from ....instance import KIND_OP, Instance
from ....models.windows.seam import Schedule, schedule_of
from ....params import SearchParams
from ....rooms import Released, ranked_rooms
from ....simulate import Evaluation, Segment
from ....stages.dlr.victim import INF, VictimFacts, VictimRule, round_trip_cycles, victim_rule
from .layout import Layout

__all__ = [
    "MoveContext",
    "Move",
    "Readdress",
    "HoistReload",
    "DelayEviction",
    "SwapVictim",
    "AddRoom",
    "SEGMENT_MOVES",
]


@dataclass
class MoveContext:
    """What every move reads: the instance, the current layout and its evaluation (start
    and end times, augmented graph, residency segments), the traffic headroom left in the
    budget, the search's parameters (``params.choices``: how many of the best address
    ranges a move may choose from; the windows' width and budget) and the seed of the
    window models; the timed schedule the window models read is built on first use."""

    inst: Instance
    layout: Layout
    evaluation: Evaluation
    headroom: int
    params: SearchParams = field(default_factory=SearchParams)
    seed: int = 0

    @property
    def choices(self) -> int:
        return self.params.choices

    @cached_property
    def schedule(self) -> Schedule:
        timing = self.evaluation.timing
        assert timing is not None, "a full plan's evaluation"
        return schedule_of(timing, self.layout.order)

    @cached_property
    def succs(self) -> list[list[int]]:
        return self.schedule.graph.succs()

    @cached_property
    def victim(self) -> VictimRule:
        """The rule that ranks the victims the moves choose from (``params.victim``)."""
        return victim_rule(self.params.victim)

    @cached_property
    def _previous_on_pipe(self) -> dict[int, int]:
        """Each operation of the plan -> the previous operation on its pipe in the order."""
        L = self.inst.lists()
        before: dict[int, int] = {}
        last: dict[int, int] = {}
        for v in self.layout.order:
            if v < self.inst.n and L.kind[v] == KIND_OP:
                if L.pipe[v] in last:
                    before[v] = last[L.pipe[v]]
                last[L.pipe[v]] = v
        return before

    def running(self, seg: Segment) -> frozenset[int]:
        """The buffers of the operations that run while ``seg`` waits to start: with ``u``
        the first operation that uses ``seg``'s buffer from its start on, the previous
        operation on ``u``'s pipe and the operations ``u`` depends on directly (as
        :func:`dansched.stages.dlr.victim.running_buffers` reads a scan's order)."""
        at = self.next_use(seg.buf, seg.start - 1, len(self.layout.order))
        if at is None:
            return frozenset()
        L = self.inst.lists()
        u = self.layout.order[at]
        ops = [w for w in L.pred[u] if L.kind[w] == KIND_OP]
        if u in self._previous_on_pipe:
            ops.append(self._previous_on_pipe[u])
        return frozenset(b for w in ops for b in L.bufs[w])

    def facts_at(self, position: int, running: frozenset[int], pool: Sequence[int]) -> VictimFacts:
        """What the victim rule reads at schedule ``position`` about the buffers of ``pool``:
        each one's next use after it (Eq. 26), its last use before it (-1: none), its size and
        the traffic and cycles of one spill, and ``running``."""
        last_use = [-1] * self.inst.num_buffers
        for b in pool:
            last = self.last_use(b, position)
            if last is not None:
                last_use[b] = last
        end = len(self.layout.order)

        def next_need(b: int) -> float:
            nxt = self.next_use(b, position, end)
            return INF if nxt is None else nxt

        return VictimFacts(next_need, last_use, self.sizes, self.traffic, self.cycles, running=lambda _k: running)

    def ranked_victims(self, pool: Sequence[int], facts: VictimFacts, position: int) -> list[int]:
        """``pool`` (buffers) cheapest first by the victim rule (ties: the lower index)."""
        rule = self.victim
        return sorted(pool, key=lambda b: (rule.cost(b, facts, position), b))

    @cached_property
    def cheapest(self) -> dict[int, int]:
        """Per tier, the least traffic a spill of one of its resident buffers costs."""
        out: dict[int, int] = {}
        for s in self.segments:
            out[s.tier] = min(out.get(s.tier, self.traffic[s.buf]), self.traffic[s.buf])
        return out

    def __post_init__(self) -> None:
        inst = self.inst
        self.segments = self.evaluation.segments()
        self.capacity = [inst.hw.capacity[t] for t in inst.hw.tiers]
        self.by_tier: dict[int, list[Segment]] = {}
        for s in self.segments:
            self.by_tier.setdefault(s.tier, []).append(s)
        self.by_end = {s.end_node: s for s in self.segments}
        self.by_start = {s.start_node: s for s in self.segments}
        self.sizes = inst.buf_size.tolist()
        backed = inst.buf_backed.tolist()
        self.traffic = [spill_traffic(int(z), bool(k)) for z, k in zip(self.sizes, backed)]
        hw = inst.hw
        self.cycles = [
            round_trip_cycles(int(z), bool(k), hw.spill_fixed_cycles, hw.spill_cycles_per_unit)
            for z, k in zip(self.sizes, backed)
        ]
        L = inst.lists()
        self.uses: list[list[int]] = [[] for _ in range(inst.num_buffers)]  # positions of each buffer's operations
        for i, v in enumerate(self.layout.order):
            if v < inst.n and L.kind[v] == KIND_OP:
                for b in L.bufs[v]:
                    self.uses[b].append(i)

    def next_use(self, buf: int, after: int, until: int) -> int | None:
        """Position of ``buf``'s first operation after ``after`` and before ``until``."""
        us = self.uses[buf]
        i = bisect_right(us, after)
        return us[i] if i < len(us) and us[i] < until else None

    def last_use(self, buf: int, before: int) -> int | None:
        """Position of ``buf``'s last operation before ``before``."""
        us = self.uses[buf]
        i = bisect_left(us, before)
        return us[i - 1] if i else None

    def end_time(self, node: int) -> int:
        assert self.evaluation.end is not None
        return int(self.evaluation.end[node])

    def start_time(self, node: int) -> int:
        assert self.evaluation.start is not None
        return int(self.evaluation.start[node])

    def evicted(self, reload: Segment) -> Segment | None:
        """The segment that the SPILL_OUT of ``reload``'s spill ends (``None`` for an ALLOC
        segment)."""
        if reload.spill < 0:
            return None
        return self.by_end.get(self.layout.spill_nodes(reload.spill)[0])


class Move(Protocol):
    """A repair operator of the makespan search: whether it ``accepts`` a focus (a node of
    the plan), and ``apply``: a new layout around it, or ``None`` when the move does not
    apply there. ``uses_cpsat``: the move solves a CP-SAT model, so each use is charged
    ``SearchParams.window_time`` against ``SearchParams.window_budget``."""

    name: str
    uses_cpsat: bool

    def accepts(self, ctx: MoveContext, focus: int) -> bool: ...

    def apply(self, ctx: MoveContext, focus: int, rng: np.random.Generator) -> Layout | None: ...


class SegmentMove:
    """A move on the segment its focus starts (any segment: :class:`Readdress`)."""

    uses_cpsat = False

    def accepts(self, ctx: MoveContext, focus: int) -> bool:
        return focus in ctx.by_start

    def apply(self, ctx: MoveContext, focus: int, rng: np.random.Generator) -> Layout | None:
        return self.edit(ctx, ctx.by_start[focus], rng)

    def edit(self, ctx: MoveContext, seg: Segment, rng: np.random.Generator) -> Layout | None:
        raise NotImplementedError


class ReloadMove(SegmentMove):
    """A move on a reload's segment: its focus is a SPILL_IN."""

    def accepts(self, ctx: MoveContext, focus: int) -> bool:
        seg = ctx.by_start.get(focus)
        return seg is not None and ctx.evicted(seg) is not None


def _ids(segments: Sequence[Segment]) -> set[int]:
    """The identities of ``segments``: the moves tell a context's segments apart by identity
    (two are never equal), which is cheaper than comparing their fields."""
    return {id(s) for s in segments}


def _released(ctx: MoveContext, tier: int, before: int, skip: Sequence[Segment]) -> Released:
    """``released(offset, size)``: the latest end time of the segments of ``tier`` that end
    before schedule position ``before`` (``skip`` aside) on those addresses: when a segment
    there may start (the address-reuse wait)."""
    gone = _ids(skip)
    earlier = [s for s in ctx.by_tier.get(tier, ()) if s.end < before and id(s) not in gone]

    def released(offset: int, size: int) -> int:
        latest = 0
        for s in earlier:
            if s.offset < offset + size and offset < s.offset + s.size:
                latest = max(latest, ctx.end_time(s.end_node))
        return latest

    return released


def _choose(
    ctx: MoveContext,
    rng: np.random.Generator,
    tier: int,
    size: int,
    lo: int,
    hi: int,
    want: int,
    busy: Sequence[Segment],
    skip: Sequence[Segment],
    avoid: int | None = None,
) -> int | None:
    """An offset for a segment of ``size`` units resident from position ``lo`` to ``hi``,
    free of ``busy`` (the tier's segments as they will be) apart from ``skip``: one of the
    ``ctx.choices`` rooms the least-late rule ranks first (:mod:`dansched.rooms`; the
    segment wanted at time ``want``), ``avoid`` excluded."""
    gone = _ids(skip)
    occupied = [(s.offset, s.size) for s in busy if s.meets(lo, hi) and id(s) not in gone]
    ranges = free_ranges(ctx.capacity[tier], occupied)
    cands = [
        off for off in ranked_rooms(ranges, size, "least-late", _released(ctx, tier, lo, skip), want) if off != avoid
    ]
    if not cands:
        return None
    k = min(len(cands), max(1, ctx.choices))
    return cands[int(rng.integers(k))] if k > 1 else cands[0]


def _repack(
    ctx: MoveContext,
    rng: np.random.Generator,
    tier: int,
    fixed: list[Segment],
    movable: list[Segment],
    extents: dict[Segment, tuple[int, int]],
) -> dict[Segment, int] | None:
    """Offsets for ``movable`` (each resident over ``extents[s]``) apart from ``fixed`` and
    from each other, placed in start order; ``None`` when one does not fit."""
    placed: dict[Segment, int] = {}
    busy = list(fixed)
    for s in sorted(movable, key=lambda s: (extents[s][0], -s.size, s.buf)):
        lo, hi = extents[s]
        off = _choose(ctx, rng, tier, s.size, lo, hi, ctx.start_time(s.start_node), busy, [])
        if off is None:
            return None
        placed[s] = off
        busy.append(Segment(s.buf, s.tier, s.size, off, lo, hi, s.start_node, s.end_node, s.spill))
    return placed


def _clashing(ctx: MoveContext, seg: Segment, lo: int, hi: int, skip: Sequence[Segment]) -> list[Segment]:
    """The tier's segments (other than ``skip``) that start after ``lo``, are resident by
    ``hi`` and share addresses with ``seg``: those that took its room."""
    gone = _ids(skip)
    return [
        s
        for s in ctx.by_tier[seg.tier]
        if id(s) not in gone and s.meets(lo, hi) and s.start > lo and s.shares_addresses(seg)
    ]


class Readdress(SegmentMove):
    """The focus segment at another offset free over its whole residency."""

    name = "readdress"

    def edit(self, ctx: MoveContext, focus: Segment, rng: np.random.Generator) -> Layout | None:
        want = ctx.start_time(focus.start_node)
        by_tier = ctx.by_tier[focus.tier]
        off = _choose(ctx, rng, focus.tier, focus.size, focus.start, focus.end, want, by_tier, [focus], focus.offset)
        if off is None:
            return None
        out = ctx.layout.copy()
        out.set_offset(focus, off)
        return out


class HoistReload(ReloadMove):
    """The reload moved earlier, between its SPILL_OUT and its old place, into an offset free
    from there to the end of its segment; the earliest such place among a few tried (right
    after the SPILL_OUT, a quarter, half, three quarters of the way)."""

    name = "hoist reload"

    def edit(self, ctx: MoveContext, focus: Segment, rng: np.random.Generator) -> Layout | None:
        out_seg = ctx.evicted(focus)
        if out_seg is None:
            return None
        p, q = out_seg.end, focus.start
        if q - p < 2:
            return None
        busy = ctx.by_tier[focus.tier]
        for frac in (0.0, 0.25, 0.5, 0.75):
            at = p + 1 + int(frac * (q - p - 1))
            if at >= q:
                break
            want = ctx.end_time(out_seg.end_node)
            off = _choose(ctx, rng, focus.tier, focus.size, at, focus.end, want, busy, [focus])
            if off is not None:
                lay = ctx.layout.copy()
                lay.set_offset(focus, off)
                lay.move_node(focus.start_node, at)
                return lay
        return None


class DelayEviction(ReloadMove):
    """The reload's SPILL_OUT moved later (a quarter or half of the way to its SPILL_IN): its
    buffer keeps its room meanwhile, and the segments that had taken that room are moved to
    other free ranges."""

    name = "delay eviction"

    def edit(self, ctx: MoveContext, focus: Segment, rng: np.random.Generator) -> Layout | None:
        seg = ctx.evicted(focus)
        if seg is None:
            return None
        p, q = seg.end, focus.start
        if q - p < 2:
            return None
        for frac in (0.5, 0.25):
            at = p + 1 + int(frac * (q - p - 1))
            if at >= q:
                continue
            grown = Segment(
                seg.buf, seg.tier, seg.size, seg.offset, seg.start, at, seg.start_node, seg.end_node, seg.spill
            )
            clash = _clashing(ctx, seg, p, at, [seg])
            gone = _ids([seg, *clash])
            fixed = [s for s in ctx.by_tier[seg.tier] if id(s) not in gone] + [grown]
            placed = _repack(ctx, rng, seg.tier, fixed, clash, {s: (s.start, s.end) for s in clash})
            if placed is None:
                continue
            lay = ctx.layout.copy()
            for s, off in placed.items():
                lay.set_offset(s, off)
            lay.move_node(seg.end_node, at)
            return lay
        return None


class SwapVictim(ReloadMove):
    """The reload's spill evicts another buffer: one resident in the same tier when the
    SPILL_OUT runs and used again before its segment ends (a random one of the few the search's
    victim rule ranks cheapest, :attr:`MoveContext.victim`: by default the least recently used
    of those no operation running while the reload waits holds), at no more traffic than the
    headroom allows. The first buffer
    stays resident until its old reload's segment ends, at its first offset; the new victim
    leaves where the old one did and comes back right before its next use; every segment
    that had taken the first buffer's room, and the new victim's reload, are placed again
    (:func:`_repack`). ``None`` when no victim fits."""

    name = "swap victim"

    def edit(self, ctx: MoveContext, focus: Segment, rng: np.random.Generator) -> Layout | None:
        before = ctx.evicted(focus)
        if before is None:
            return None
        b, tier, p = before.buf, before.tier, before.end
        pool: dict[int, tuple[Segment, int]] = {}
        for c in ctx.by_tier[tier]:
            if c.buf == b or not (c.start < p < c.end) or ctx.traffic[c.buf] - ctx.traffic[b] > ctx.headroom:
                continue
            use = ctx.next_use(c.buf, p, c.end)
            if use is not None:
                pool[c.buf] = (c, use)
        ranked = ctx.ranked_victims(list(pool), ctx.facts_at(p, ctx.running(focus), list(pool)), p)
        first = int(rng.integers(max(1, min(len(ranked), ctx.choices)))) if ranked else 0
        for buf in ranked[first:] + ranked[:first]:  # from a random one of the cheapest few
            c, use = pool[buf]
            got = self._swapped(ctx, rng, before, focus, c, use)
            if got is not None:
                return got
        return None

    @staticmethod
    def _swapped(
        ctx: MoveContext, rng: np.random.Generator, before: Segment, after: Segment, c: Segment, use: int
    ) -> Layout | None:
        """The swap with the new victim ``c`` (next used at position ``use``)."""
        lay = ctx.layout
        k = after.spill
        b, tier, p = before.buf, before.tier, before.end
        merged = Segment(
            b, tier, before.size, before.offset, before.start, after.end, before.start_node, after.end_node, -1
        )
        head = Segment(c.buf, tier, c.size, c.offset, c.start, p, c.start_node, -1, c.spill)
        clash = _clashing(ctx, before, p, after.end, [before, after, c])
        tail = Segment(c.buf, tier, c.size, c.offset, use, c.end, -1, c.end_node, k)
        gone = _ids([before, after, c, *clash])
        fixed = [s for s in ctx.by_tier[tier] if id(s) not in gone] + [merged, head]
        extents = {s: (s.start, s.end) for s in clash} | {tail: (use, c.end)}
        placed = _repack(ctx, rng, tier, fixed, clash + [tail], extents)
        if placed is None:
            return None
        out = lay.copy()
        for s, off in placed.items():
            if s is not tail:
                out.set_offset(s, off)
        out.set_victim(k, c.buf, placed[tail])
        # the old SPILL_OUT's place now evicts c; its SPILL_IN moves right before c's next use
        out.move_before(after.start_node, lay.order[use])
        return out


class AddRoom(SegmentMove):
    """Room for a segment ahead of need, paid with traffic: another resident buffer of the
    tier, idle around the segment's start (used before it, needed again after it), leaves
    right after its last use before it (a new spill, within the headroom) and comes back right
    before its next use; the segment takes the room it frees, or any range free from there
    on. A reload also moves to just after that eviction (never before its own SPILL_OUT), so
    it can run while the operations before it still hold their buffers (room for the next
    tile); a new buffer's ALLOC stays where it is. The buffer is one of the few the search's
    victim rule ranks cheapest (:attr:`MoveContext.victim`: by default the least recently
    used of those no operation running while the segment waits holds: its write-out need not
    wait for one, evict ahead of need). ``None`` when no buffer gives room."""

    name = "add room"

    def accepts(self, ctx: MoveContext, focus: int) -> bool:
        # one more spill: only within the traffic headroom
        seg = ctx.by_start.get(focus)
        return seg is not None and ctx.cheapest.get(seg.tier, ctx.headroom + 1) <= ctx.headroom

    def edit(self, ctx: MoveContext, focus: Segment, rng: np.random.Generator) -> Layout | None:
        seg = focus
        out_seg = ctx.evicted(seg)
        tier, q = seg.tier, seg.start
        p = out_seg.end if out_seg is not None else -1
        pool: dict[int, tuple[Segment, int, int]] = {}
        for c in ctx.by_tier[tier]:
            if c.buf == seg.buf or not (c.start < q < c.end) or ctx.traffic[c.buf] > ctx.headroom:
                continue
            last = ctx.last_use(c.buf, q)
            nxt = ctx.next_use(c.buf, q, c.end)
            if nxt is None or last is None or last < max(c.start, p) or last >= q - 1:
                continue
            pool[c.buf] = (c, last, nxt)
        ranked = ctx.ranked_victims(list(pool), ctx.facts_at(q, ctx.running(seg), list(pool)), q)
        first = int(rng.integers(max(1, min(len(ranked), ctx.choices)))) if ranked else 0
        for buf in ranked[first:] + ranked[:first]:  # from a random one of the cheapest few
            c, last, nxt = pool[buf]
            head = Segment(c.buf, tier, c.size, c.offset, c.start, last, c.start_node, -1, c.spill)
            busy = [s for s in ctx.by_tier[tier] if s is not c and s is not seg] + [head]
            at = max(last, p) + 1 if out_seg is not None else q
            want = ctx.end_time(out_seg.end_node) if out_seg is not None else ctx.start_time(seg.start_node)
            off = _choose(ctx, rng, tier, seg.size, at, seg.end, want, busy, [])
            if off is None:
                continue
            moved = Segment(seg.buf, tier, seg.size, off, at, seg.end, seg.start_node, seg.end_node, seg.spill)
            back = _choose(ctx, rng, tier, c.size, nxt, c.end, ctx.start_time(c.end_node), busy + [moved], [])
            if back is None:
                continue
            lay = ctx.layout.copy()
            new_out, new_in = lay.add_spill(c.buf, back)
            lay.set_offset(seg, off)
            after_last, before_next = lay.order[last + 1], lay.order[nxt]
            lay.insert_before(new_out, after_last)
            if at < q:  # a reload runs right after the new eviction
                lay.move_before(seg.start_node, after_last)
            lay.insert_before(new_in, before_next)
            return lay
        return None


SEGMENT_MOVES: tuple[Move, ...] = (Readdress(), HoistReload(), DelayEviction(), SwapVictim(), AddRoom())
