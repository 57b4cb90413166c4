"""Per-tier free-segment list of Stage 2 (paper Eq. 22) with best-fit placement (Eqs. 23-24).

A :class:`FreeList` keeps the free address segments ``[left, r)`` of one tier, sorted
by ``left`` and merged, so the same sequence of calls always gives the same offsets.

>>> fl = FreeList(10)
>>> fl.take(0, 4); fl.take(6, 2)
>>> fl.segments()
[(4, 6), (8, 10)]
>>> best_fit(fl.segments(), 2)
4
>>> fl.release(0, 4); fl.segments()
[(0, 6), (8, 10)]
>>> fl.is_free(2, 4), fl.is_free(5, 2)
(True, False)

The free ranges of arbitrary occupied segments, built from scratch, are
:func:`dansched.addresses.free_ranges`.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable

__all__ = ["FreeList", "best_fit"]


def best_fit(segments: Iterable[tuple[int, int]], size: int) -> int | None:
    """Offset of the best-fit segment (Eq. 24): least slack ``r - left - size``, ties to the
    lowest address; ``None`` when no segment is long enough."""
    best = None
    best_slack = None
    for left, r in segments:
        slack = r - left - size
        if slack >= 0 and (best_slack is None or slack < best_slack):
            best, best_slack = left, slack
            if slack == 0:
                break
    return best


class FreeList:
    """The free segments ``F_m`` of one tier of ``capacity`` units (Eq. 22)."""

    __slots__ = ("capacity", "_starts", "_ends", "free_units")

    def __init__(self, capacity: int) -> None:
        self.capacity = int(capacity)
        self._starts = [0]
        self._ends = [self.capacity]
        self.free_units = self.capacity

    def segments(self) -> list[tuple[int, int]]:
        return list(zip(self._starts, self._ends))

    def best_fit(self, size: int) -> int | None:
        """Eq. 24 over this tier's segments."""
        return best_fit(zip(self._starts, self._ends), size)

    def is_free(self, offset: int, size: int) -> bool:
        """Whether ``[offset, offset+size)`` lies inside one free segment."""
        i = bisect.bisect_right(self._starts, offset) - 1
        return i >= 0 and offset + size <= self._ends[i]

    def take(self, offset: int, size: int) -> None:
        """Mark ``[offset, offset+size)`` used; it must lie inside one free segment."""
        i = bisect.bisect_right(self._starts, offset) - 1
        if i < 0 or offset + size > self._ends[i]:
            raise ValueError(f"[{offset}, {offset + size}) is not free")
        left, r = self._starts[i], self._ends[i]
        pieces = []
        if left < offset:
            pieces.append((left, offset))
        if offset + size < r:
            pieces.append((offset + size, r))
        self._starts[i : i + 1] = [p[0] for p in pieces]
        self._ends[i : i + 1] = [p[1] for p in pieces]
        self.free_units -= size

    def release(self, offset: int, size: int) -> None:
        """Return ``[offset, offset+size)`` and merge it with adjacent free segments."""
        left, r = offset, offset + size
        i = bisect.bisect_left(self._starts, left)
        lo, hi = i, i
        if i > 0 and self._ends[i - 1] == left:
            lo = i - 1
            left = self._starts[i - 1]
        if i < len(self._starts) and self._starts[i] == r:
            r = self._ends[i]
            hi = i + 1
        self._starts[lo:hi] = [left]
        self._ends[lo:hi] = [r]
        self.free_units += size
