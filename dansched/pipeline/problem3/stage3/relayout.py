"""Timing-aware relayout, a round of the Stage-3 loop (:mod:`.run`) when the makespan matters (problem 3):
it changes only what Stage 2 decides (offsets), never traffic or spills.

Address reuse is what ties memory to time: a segment that starts on addresses an
earlier segment held waits for the event that ended it (docs/rules.md, section 6.2). Best-fit
(paper Eq. 24) packs tightly and so tends to reuse the hole freed *last*, which puts
reuse edges on the critical path. This pass keeps the order, the residency
segments and the spill decisions of a valid plan — so traffic, spill count and
logical peak are unchanged — and chooses new offsets: each segment, in schedule
order, goes to the free range whose previous occupants finished earliest relative
to the time the segment is wanted (estimated by the cycle simulator on the plan
without reuse edges), ties broken best-fit. A plan is returned only when every
segment fits and the evaluator accepts it.

Memory and time depend on the segments, not on the tiers' capacities: free space is a
free-segment list (:class:`~dansched.stages.dlr.freelist.FreeList`) and the release
time of each address the address-release map (:class:`~dansched.addresses.ReleaseMap`);
times are Python integers, exact at any size.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ....addresses import ReleaseMap, free_ranges
from ....instance import Instance
from ....plan import Plan
from ....simulate import Evaluation, evaluate, simulate_timing, spill_of_node
from ....stages.dlr.freelist import FreeList

__all__ = ["relayout_for_timing", "move_late_segments"]


def _wanted_times(ev: Evaluation, order: Sequence[int]) -> list[int]:
    """Start times on the augmented DAG without its reuse edges: when each event would run
    if addresses never made it wait."""
    timing = ev.timing
    assert timing is not None, "a full plan's evaluation"
    g = timing.graph
    reuse: dict[int, set[int]] = {}
    for u, w in g.reuse_edges:
        reuse.setdefault(w, set()).add(u)
    preds = [[u for u in ps if u not in reuse.get(v, ())] if v in reuse else ps for v, ps in enumerate(g.preds)]
    return simulate_timing(order, preds, g.pipe, g.cycles)[0]


def relayout_for_timing(inst: Instance, plan: Plan, ev: Evaluation) -> tuple[Plan, Evaluation] | None:
    """The faster of two relayouts (each segment at its least-late range; or at its old
    offset unless that makes it wait), or None when neither fits or beats ``plan``."""
    best = None
    bar = ev.metrics.makespan
    for keep_old in (False, True):
        r = _relayout(inst, plan, ev, keep_old)
        if r is not None and r[1].metrics.makespan < bar:
            best, bar = r, r[1].metrics.makespan
    return best


def _relayout(inst: Instance, plan: Plan, ev: Evaluation, keep_old: bool) -> tuple[Plan, Evaluation] | None:
    """Same order and spills, offsets chosen segment by segment in schedule order: the
    candidate (each free range's two ends, and the old offset when free) whose previous
    occupants finished least late for it, ties best-fit. With ``keep_old`` a segment keeps
    its old offset whenever that is free and not late. None if a segment does not fit."""
    assert ev.valid and ev.graph is not None
    g = ev.graph
    order = list(plan.order)
    wanted = _wanted_times(ev, order)
    caps = [inst.hw.capacity[t] for t in inst.hw.tiers]
    free = [FreeList(c) for c in caps]
    freed_at = [ReleaseMap() for _ in caps]  # estimated end time of the last occupant
    where: dict[int, int] = {}
    first_offset = [0] * inst.num_buffers
    spill_offset = [0] * len(g.spill_buf)
    ids = inst.buf_id.tolist()
    segs = ev.segments()
    # the memory events in schedule order: each segment's start and end
    events = sorted(
        [(seg.start, True, k) for k, seg in enumerate(segs)] + [(seg.end, False, k) for k, seg in enumerate(segs)]
    )
    for _, starting, k in events:
        seg = segs[k]
        b, t, s = seg.buf, seg.tier, seg.size
        if not starting:
            v = seg.end_node
            off = where.pop(b)
            free[t].release(off, s)
            freed_at[t].release(off, s, wanted[v] + g.cycles[v] if v >= inst.n else wanted[v])
            continue
        v, old = seg.start_node, seg.offset

        def lateness(off: int, t: int = t, s: int = s, v: int = v) -> int:
            return max(0, freed_at[t].last_release(off, s) - wanted[v])

        old_free = free[t].is_free(old, s)
        if keep_old and old_free and lateness(old) == 0:
            off = old
        else:
            best = None
            for lo, hi in free[t].segments():
                if hi - lo < s:
                    continue
                cands = {lo, hi - s} | ({old} if old_free and lo <= old and old + s <= hi else set())
                for off in cands:
                    key = (lateness(off), hi - lo - s, off)
                    if best is None or key < best:
                        best = key
            if best is None:
                return None
            off = best[2]
        free[t].take(off, s)
        where[b] = off
        if seg.spill < 0:
            first_offset[b] = off
        else:
            spill_offset[seg.spill] = off
    new = Plan(
        order=plan.order,
        offsets=tuple((ids[b], first_offset[b]) for b in range(inst.num_buffers)),
        spills=tuple((ids[b], spill_offset[k]) for k, b in enumerate(g.spill_buf)),
    )
    ev2 = evaluate(inst, new)
    if not ev2.valid or ev2.extra_traffic != ev.extra_traffic or ev2.spill_count != ev.spill_count:
        return None
    return new, ev2


@dataclass
class _TierSegments:
    start: np.ndarray  # schedule position where the segment starts
    end: np.ndarray  # position where it ends
    off: np.ndarray
    size: np.ndarray
    end_event: np.ndarray
    start_event: np.ndarray


def _segments_by_tier(ev: Evaluation) -> dict[int, _TierSegments]:
    """The plan's residency segments (the evaluator's) as columns per tier, in the order
    the segments end."""
    rows: dict[int, list[tuple[int, int, int, int, int, int]]] = {}
    for seg in sorted(ev.segments(), key=lambda seg: seg.end):
        rows.setdefault(seg.tier, []).append((seg.start, seg.end, seg.offset, seg.size, seg.end_node, seg.start_node))
    out = {}
    for t, r in rows.items():
        a = np.array(r, dtype=np.int64)
        out[t] = _TierSegments(a[:, 0], a[:, 1], a[:, 2], a[:, 3], a[:, 4], a[:, 5])
    return out


class _OverlapSweep:
    """The segments whose residency ``[start, end)`` meets a query ``[ps, pe)``, for
    queries with non-decreasing ``ps``: the segments live at ``ps`` (kept as the sweep
    advances) plus those starting in ``(ps, pe)`` -- the cost of a query is its answer,
    not the number of segments."""

    def __init__(self, start: np.ndarray, end: np.ndarray) -> None:
        self.by_start = np.argsort(start, kind="stable")
        self.starts = start[self.by_start]
        self.start, self.end = start.tolist(), end.tolist()
        self.next = 0
        self.live: dict[int, None] = {}
        self.leaving: list[tuple[int, int]] = []

    def __call__(self, ps: int, pe: int) -> list[int]:
        order = self.by_start
        while self.next < len(order) and self.starts[self.next] <= ps:
            k = int(order[self.next])
            self.live[k] = None
            heapq.heappush(self.leaving, (self.end[k], k))
            self.next += 1
        while self.leaving and self.leaving[0][0] <= ps:
            del self.live[heapq.heappop(self.leaving)[1]]
        upto = int(np.searchsorted(self.starts, pe, side="left"))
        return [k for k in self.live if self.start[k] < pe] + order[self.next : upto].tolist()


def move_late_segments(inst: Instance, plan: Plan, ev: Evaluation) -> tuple[Plan, Evaluation] | None:
    """Move, one at a time, each segment whose start waits on an address-reuse edge to the
    free range (free in the current layout for the segment's whole residency) whose previous
    occupants finished earliest. Every move keeps the layout valid by construction; the
    result is kept only if the evaluator accepts it and it is faster."""
    timing = ev.timing
    assert ev.valid and timing is not None
    g = timing.graph
    wanted = _wanted_times(ev, plan.order)
    end_time = timing.end
    late_events: dict[int, int] = {}
    for u, w in g.reuse_edges:
        if end_time[u] > wanted[w]:
            late_events[w] = max(late_events.get(w, 0), end_time[u] - wanted[w])
    if not late_events:
        return None
    segs = _segments_by_tier(ev)
    caps = [inst.hw.capacity[t] for t in inst.hw.tiers]
    moved = 0
    for t, S in segs.items():
        cap = caps[t]
        cand_rows = sorted(
            (j for j in range(len(S.start)) if int(S.start_event[j]) in late_events), key=lambda j: int(S.start[j])
        )
        by_end = np.argsort(S.end, kind="stable").tolist()
        painted = 0
        freed = ReleaseMap()  # end time of the last occupant ended so far
        overlapping = _OverlapSweep(S.start, S.end)
        for j in cand_rows:
            ps, pe, size = int(S.start[j]), int(S.end[j]), int(S.size[j])
            while painted < len(by_end) and S.end[by_end[painted]] <= ps:
                k = by_end[painted]
                o = int(S.off[k])
                freed.release(o, int(S.size[k]), end_time[int(S.end_event[k])])
                painted += 1
            busy = [(int(S.off[k]), int(S.size[k])) for k in overlapping(ps, pe) if k != j]
            want = wanted[int(S.start_event[j])]
            best = None
            for lo, hi in free_ranges(cap, busy):
                if hi - lo < size:
                    continue
                for off in (lo, hi - size):
                    key = (max(0, freed.last_release(off, size) - want), hi - lo - size, off)
                    if best is None or key < best:
                        best = key
            if best is None or best[0] >= late_events[int(S.start_event[j])]:
                continue
            S.off[j] = best[2]
            moved += 1
    if not moved:
        return None
    return _plan_from_segments(inst, plan, ev, segs)


def _plan_from_segments(
    inst: Instance, plan: Plan, ev: Evaluation, segs: dict[int, _TierSegments]
) -> tuple[Plan, Evaluation] | None:
    n = inst.n
    timing = ev.timing
    assert timing is not None, "a full plan's evaluation"
    g = timing.graph
    ids = inst.buf_id.tolist()
    index = {bid: i for i, bid in enumerate(ids)}
    first = {index[bid]: o for bid, o in plan.offsets or ()}
    spill = [o for _, o in plan.spills]
    for S in segs.values():
        for v, off in zip(S.start_event.tolist(), S.off.tolist()):
            if v < n:
                first[int(inst.node_buf[v])] = off
            else:
                spill[spill_of_node(n, v)[0]] = off
    new = Plan(
        order=plan.order,
        offsets=tuple((ids[b], int(first[b])) for b in range(inst.num_buffers)),
        spills=tuple((ids[b], int(spill[k])) for k, b in enumerate(g.spill_buf)),
    )
    ev2 = evaluate(inst, new)
    if not ev2.valid or ev2.extra_traffic != ev.extra_traffic or ev2.metrics.makespan >= timing.makespan:
        return None
    return new, ev2
