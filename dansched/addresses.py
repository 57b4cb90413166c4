"""The addresses of a tier: which ranges are free, and when each range was last released.

Two questions every layer that places a buffer asks (Stage 2's scan and relayout, the
time-driven scheduler, the makespan search's moves), answered here once:

- :func:`free_ranges`: the maximal free ranges ``[lo, hi)`` of a tier, in address order,
  when some segments ``(offset, size)`` are in use (the free segments ``F_m`` of paper
  Eq. 22, built from scratch in the number of segments);
- :class:`ReleaseMap`, the *address-release map*: per address, when its most recent
  occupant was released (a segment that starts on addresses an earlier segment held waits
  for the event that ended it: the address-reuse edge of docs/rules.md, section 6.2). The
  caller chooses the unit (a schedule position, a time in cycles).

Both cost in the number of segments, never in the tier's capacity, and use Python integers
(exact at any size).

>>> free_ranges(10, [(1, 2), (2, 3), (7, 1)])
[(0, 1), (5, 7), (8, 10)]
>>> rel = ReleaseMap()
>>> rel.release(8, 8, 70); rel.release(12, 8, 30)
>>> rel.last_release(0, 8), rel.last_release(0, 9), rel.last_release(12, 2**40)
(0, 70, 30)
>>> rel.pieces()
[(0, 8, 0), (8, 12, 70), (12, 20, 30), (20, None, 0)]
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable

__all__ = ["free_ranges", "ReleaseMap"]


def free_ranges(capacity: int, occupied: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """The maximal free ranges ``[lo, hi)`` of a tier of ``capacity`` units, in address order,
    when the segments ``(offset, size)`` of ``occupied`` (which may overlap) are in use."""
    out = []
    at = 0
    for off, size in sorted(occupied):
        if off > at:
            out.append((at, off))
        at = max(at, off + size)
    if at < capacity:
        out.append((at, capacity))
    return out


class ReleaseMap:
    """The address-release map of one tier (module docstring): a piecewise-constant function
    over the addresses ``[0, inf)``, stored as the sorted starts of its pieces and one value
    per piece (``never`` where nothing was released yet). Recording a release costs
    ``O(log P + pieces it covers)`` and reading the latest release over a range
    ``O(log P + pieces it meets)``, ``P`` the number of pieces (at most twice the number of
    releases recorded, plus one)."""

    __slots__ = ("_starts", "_values")

    def __init__(self, never: int = 0) -> None:
        self._starts = [0]
        self._values = [never]

    def _cut(self, x: int) -> int:
        """Index of the piece that starts at ``x`` (splitting the piece holding ``x``)."""
        i = bisect.bisect_right(self._starts, x) - 1
        if self._starts[i] != x:
            i += 1
            self._starts.insert(i, x)
            self._values.insert(i, self._values[i - 1])
        return i

    @staticmethod
    def _check(offset: int, size: int) -> None:
        if offset < 0 or size <= 0:
            raise ValueError(f"[{offset}, {offset + size}) is not a non-empty range of addresses")

    def release(self, offset: int, size: int, at: int) -> None:
        """Addresses ``[offset, offset + size)`` were released at ``at`` (it replaces what they held)."""
        self._check(offset, size)
        lo = offset
        i = self._cut(lo)
        j = self._cut(offset + size)
        # merge with equal neighbours so that the pieces stay as few as the values allow
        if self._values[j] == at:
            j += 1
        if i > 0 and self._values[i - 1] == at:
            i -= 1
            lo = self._starts[i]
        self._starts[i:j] = [lo]
        self._values[i:j] = [at]

    def last_release(self, offset: int, size: int) -> int:
        """When the range ``[offset, offset + size)`` was last released: the latest release
        over its addresses (``never`` when none was)."""
        self._check(offset, size)
        i = bisect.bisect_right(self._starts, offset) - 1
        j = bisect.bisect_left(self._starts, offset + size, lo=i)
        return max(self._values[i:j])

    def pieces(self) -> list[tuple[int, int | None, int]]:
        """``(lo, hi, at)`` per piece, by address (``hi`` None: the last piece, unbounded)."""
        ends: list[int | None] = [*self._starts[1:], None]
        return list(zip(self._starts, ends, self._values))
