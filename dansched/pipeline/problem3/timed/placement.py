"""Where a buffer goes in its tier, at simulated time: the resident segments of one tier,
the address-reuse waits, and the time-aware best fit (paper Eq. 24).

A segment that starts on addresses an earlier segment occupied cannot start before the
event that ended that earlier segment (the address-reuse edge from that FREE or
SPILL_OUT). :class:`ReuseWaits` keeps, for the tier's addresses, the end time of the
event that ended their most recent occupant, as disjoint intervals: its size grows with
the segments that ended, never with the tier's capacity.

>>> tier = Tier(16)
>>> tier.add(0, 4, b=0); tier.add(8, 4, b=1)
>>> tier.gaps()
[(4, 8), (12, 16)]
>>> tier.remove(8, end_time=30)
>>> tier.wait(6, 4), tier.wait(12, 4)
(30, 0)
>>> time_aware_best_fit(tier, 4, want=10)  # [4, 8) is free at once and fits exactly
4
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence

__all__ = ["ReuseWaits", "Tier", "time_aware_best_fit", "has_prefetch_room", "reserved_room"]


class ReuseWaits:
    """Per address, the end time of the event that ended its most recent occupant (0 for
    addresses never occupied), stored as sorted disjoint intervals ``[lo, hi) -> end``.

    >>> w = ReuseWaits()
    >>> w.paint(0, 10, 5); w.paint(4, 2, 9)
    >>> w.intervals()
    [(0, 4, 5), (4, 6, 9), (6, 10, 5)]
    >>> w.wait(5, 3), w.wait(20, 4)
    (9, 0)
    """

    def __init__(self) -> None:
        self._lo: list[int] = []
        self._hi: list[int] = []
        self._end: list[int] = []

    def _first_meeting(self, lo: int) -> int:
        """Index of the first interval that ends after ``lo``."""
        i = bisect.bisect_right(self._lo, lo) - 1
        return i if i >= 0 and self._hi[i] > lo else i + 1

    def wait(self, off: int, size: int) -> int:
        """The latest end over addresses ``[off, off + size)``: when a segment there may start."""
        hi = off + size
        best = 0
        i = self._first_meeting(off)
        while i < len(self._lo) and self._lo[i] < hi:
            if self._end[i] > best:
                best = self._end[i]
            i += 1
        return best

    def paint(self, off: int, size: int, end: int) -> None:
        """Addresses ``[off, off + size)`` were last freed by an event ending at ``end``."""
        lo, hi = off, off + size
        i = self._first_meeting(lo)
        j = i
        while j < len(self._lo) and self._lo[j] < hi:
            j += 1
        los, his, ends = [lo], [hi], [end]
        if i < j and self._lo[i] < lo:  # the first interval met keeps its part left of lo
            los.insert(0, self._lo[i])
            his.insert(0, lo)
            ends.insert(0, self._end[i])
        if i < j and self._hi[j - 1] > hi:  # the last one keeps its part right of hi
            los.append(hi)
            his.append(self._hi[j - 1])
            ends.append(self._end[j - 1])
        self._lo[i:j] = los
        self._hi[i:j] = his
        self._end[i:j] = ends

    def intervals(self) -> list[tuple[int, int, int]]:
        """The stored ``(lo, hi, end)`` intervals, by address."""
        return list(zip(self._lo, self._hi, self._end))


class Tier:
    """The resident segments of one tier of ``cap`` units, sorted by offset, and the
    address-reuse waits of its addresses."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.offs: list[int] = []  # sorted offsets of resident segments
        self.seg: dict[int, tuple[int, int]] = {}  # offset -> (size, buffer)
        self.used = 0
        self.waits = ReuseWaits()

    def gaps(self, extra: Sequence[tuple[int, int]] = ()) -> list[tuple[int, int]]:
        """Free address ranges [lo, hi), ``extra`` (offset, size) counted as occupied."""
        segs = [(o, self.seg[o][0]) for o in self.offs]
        if extra:
            segs = sorted(segs + list(extra))
        out = []
        at = 0
        for o, s in segs:
            if o > at:
                out.append((at, o))
            at = max(at, o + s)
        if at < self.cap:
            out.append((at, self.cap))
        return out

    def wait(self, off: int, size: int) -> int:
        """When a segment on ``[off, off + size)`` may start (address reuse)."""
        return self.waits.wait(off, size)

    def add(self, off: int, size: int, b: int) -> None:
        """Buffer ``b`` becomes resident on ``[off, off + size)``."""
        bisect.insort(self.offs, off)
        self.seg[off] = (size, b)
        self.used += size

    def remove(self, off: int, end_time: int) -> None:
        """The segment at ``off`` ends with an event ending at ``end_time``."""
        size, _ = self.seg.pop(off)
        self.offs.pop(bisect.bisect_left(self.offs, off))
        self.used -= size
        self.waits.paint(off, size, end_time)

    def overlapping(self, lo: int, hi: int) -> list[int]:
        """Offsets of resident segments meeting [lo, hi), by address."""
        i = bisect.bisect_left(self.offs, lo)
        if i > 0:
            o = self.offs[i - 1]
            if o + self.seg[o][0] > lo:
                i -= 1
        out = []
        while i < len(self.offs) and self.offs[i] < hi:
            out.append(self.offs[i])
            i += 1
        return out


def time_aware_best_fit(tier: Tier, size: int, want: int, extra: Sequence[tuple[int, int]] = ()) -> int | None:
    """Eq. 24 with time first: among the free gaps long enough for ``size`` (``extra``
    counted as taken), at either end of each gap, the address whose reuse wait ends by
    ``want`` (or least past it), then the smallest gap (least slack, Eq. 24), then the
    lowest address. ``None`` when no gap is long enough."""
    best = None
    for lo, hi in tier.gaps(extra):
        if hi - lo < size:
            continue
        for a in (lo, hi - size) if hi - lo > size else (lo,):
            key = (max(0, tier.wait(a, size) - want), hi - lo, a)
            if best is None or key < best:
                best = key
    return None if best is None else best[2]


def has_prefetch_room(tier: Tier, size: int, extra: Sequence[tuple[int, int]], reserve: int, fill: float) -> bool:
    """A task ahead of the frontier may take ``size`` more units (besides ``extra``)
    only while the tier stays at most ``fill`` full with ``reserve`` units kept free."""
    return not tier.used + sum(s for _, s in extra) + size + reserve > fill * tier.cap


def reserved_room(
    upcoming: Iterable[int],
    op_bufs: Sequence[Sequence[int]],
    buf_tier: Sequence[int],
    buf_size: Sequence[int],
    where: Sequence[int | None],
    t: int,
    pinned: set[int],
) -> int:
    """Units of tier ``t`` that the ``upcoming`` operations still need: their buffers of
    that tier not resident, each counted once, ``pinned`` ones aside."""
    need = 0
    seen: set[int] = set()
    for v in upcoming:
        for b in op_bufs[v]:
            if buf_tier[b] == t and where[b] is None and b not in pinned and b not in seen:
                seen.add(b)
                need += buf_size[b]
    return need
