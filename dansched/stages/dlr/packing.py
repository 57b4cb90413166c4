"""Lifetime-aware placement: offsets for the residency segments of a finished scan.

When the scan runs in ``"units"`` mode (:func:`dansched.stages.dlr.scan.linear_scan`)
every segment's lifetime is known before any address is chosen, so placement
becomes offline interval packing (dynamic storage allocation): each segment is a
rectangle, its lifetime by its size, and rectangles that overlap in time must not
overlap in addresses. :func:`pack_segments` places them greedily, largest first
(the "greedy by size" planners of TFLite and XLA), each into the tightest gap
left by the already placed segments it meets in time; a second pass places them
in order of start (first fit, optimal when all sizes are equal) and the better
packing per tier is kept. A tier whose packing overflows its capacity is reported
so the caller can rerun the scan with a smaller virtual capacity there.

>>> from dansched.simulate import Segment
>>> def seg(buf, size, start, end):  # tier 0, not yet placed
...     return Segment(buf, 0, size, -1, start, end, -1, -1, -1)
>>> segs = [seg(0, 4, 0, 3), seg(1, 4, 1, 2), seg(2, 8, 4, 5)]
>>> pack_segments(segs, {0: 8})
({0: 0, 1: 4, 2: 0}, {})
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ...simulate import Segment

__all__ = ["pack_segments", "pack_tier", "apply_packing"]


def _gap_for(size: int, busy: list[tuple[int, int]], capacity: int) -> int:
    """Lowest offset of the tightest gap of at least ``size`` units between the busy
    address ranges ``busy`` (any order), or the first offset past them all."""
    busy.sort()
    best = None
    best_slack = None
    cursor = 0
    for lo, hi in busy:
        if lo > cursor:
            slack = lo - cursor - size
            if slack >= 0 and (best_slack is None or slack < best_slack):
                best, best_slack = cursor, slack
        cursor = max(cursor, hi)
    if best is not None:
        return best
    return cursor


def pack_tier(segs: Sequence[Segment], capacity: int, order: str = "size") -> tuple[list[int], int]:
    """Offsets for the segments of one tier (in the order given) and the highest address used.

    ``order="size"``: largest first (then longest, then earliest); ``"start"``: by start."""
    idx = list(range(len(segs)))
    if order == "size":
        idx.sort(key=lambda i: (-segs[i].size, -(segs[i].end - segs[i].start), segs[i].start, i))
    else:
        idx.sort(key=lambda i: (segs[i].start, -segs[i].size, i))
    if not idx:
        return [], 0
    horizon = max(s.end for s in segs) + 1
    width = max(1, horizon // max(1024, len(segs)))  # about one segment starting per bucket
    buckets: dict[int, list[int]] = {}
    offsets = [-1] * len(segs)
    top = 0
    for i in idx:
        s = segs[i]
        seen: set[int] = set()
        busy: list[tuple[int, int]] = []
        for bk in range(s.start // width, s.end // width + 1):
            for j in buckets.get(bk, ()):
                if j in seen:
                    continue
                seen.add(j)
                o = segs[j]
                if o.start <= s.end and s.start <= o.end:
                    busy.append((offsets[j], offsets[j] + o.size))
        off = _gap_for(s.size, busy, capacity)
        offsets[i] = off
        top = max(top, off + s.size)
        for bk in range(s.start // width, s.end // width + 1):
            buckets.setdefault(bk, []).append(i)
    return offsets, top


def pack_segments(segs: Sequence[Segment], capacity: Mapping[int, int]) -> tuple[dict[int, int], dict[int, int]]:
    """Place every segment; returns ``(offset by segment index, overflow by tier)`` where
    the overflow maps each tier whose best packing still exceeds its capacity to the
    excess units (empty when everything fits). Offsets are by index into ``segs``."""
    by_tier: dict[int, list[int]] = {}
    for i, s in enumerate(segs):
        by_tier.setdefault(s.tier, []).append(i)
    out: dict[int, int] = {}
    overflow: dict[int, int] = {}
    for t, members in sorted(by_tier.items()):
        sub = [segs[i] for i in members]
        best: tuple[list[int], int] | None = None
        for order in ("size", "start"):
            offs, top = pack_tier(sub, capacity[t], order)
            if best is None or top < best[1]:
                best = (offs, top)
            if top <= capacity[t]:
                break
        assert best is not None  # two packings were tried
        offs, top = best
        if top > capacity[t]:
            overflow[t] = top - capacity[t]
        for i, o in zip(members, offs):
            out[i] = o
    return out, overflow


def apply_packing(result, offsets: Mapping[int, int]) -> None:
    """Write packed segment offsets into a ``"units"`` scan result (ALLOC offsets and
    spill NewOffsets)."""
    for i, s in enumerate(result.segments):
        if s.spill < 0:
            result.offsets[s.buf] = offsets[i]
        else:
            result.spill_offset[s.spill] = offsets[i]
