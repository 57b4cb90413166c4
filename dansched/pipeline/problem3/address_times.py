"""When each address of a tier was last released: the address-reuse wait of docs/rules.md, section 6.2
(a segment that starts on addresses an earlier segment held waits for the event that
ended it), kept per range of addresses instead of per address.

An :class:`AddressTimes` is a piecewise-constant function over the addresses
``[0, capacity)`` of one tier, stored as the sorted starts of its pieces and one value
per piece. Writing a range costs ``O(log P + pieces it covers)`` and reading the
latest time over a range ``O(log P + pieces it meets)``, where ``P`` is the number of
pieces (at most twice the number of segments written, plus one): the cost depends on
the buffers, never on the size of the address space, and values are Python integers
(exact at any size).

>>> at = AddressTimes(2**40)
>>> at.assign(8, 16, 70); at.assign(12, 20, 30)
>>> at.latest(0, 8), at.latest(0, 9), at.latest(12, 2**40)
(0, 70, 30)
>>> at.pieces()
[(0, 8, 0), (8, 12, 70), (12, 20, 30), (20, 1099511627776, 0)]
"""

from __future__ import annotations

import bisect

__all__ = ["AddressTimes"]


class AddressTimes:
    """Per address of ``[0, capacity)``, the end time of the event that ended its most
    recent occupant (``initial`` where nothing has been released yet)."""

    __slots__ = ("capacity", "_starts", "_values")

    def __init__(self, capacity: int, initial: int = 0) -> None:
        if capacity <= 0:
            raise ValueError(f"capacity must be positive, got {capacity}")
        self.capacity = int(capacity)
        self._starts = [0]
        self._values = [initial]

    def _cut(self, x: int) -> int:
        """Index of the piece that starts at ``x`` (splitting the piece holding ``x``);
        the number of pieces when ``x`` is the capacity."""
        if x >= self.capacity:
            return len(self._starts)
        i = bisect.bisect_right(self._starts, x) - 1
        if self._starts[i] != x:
            i += 1
            self._starts.insert(i, x)
            self._values.insert(i, self._values[i - 1])
        return i

    def assign(self, lo: int, hi: int, value: int) -> None:
        """Addresses ``[lo, hi)`` were released at ``value`` (it replaces what they held)."""
        if not 0 <= lo < hi <= self.capacity:
            raise ValueError(f"[{lo}, {hi}) is not a non-empty range of [0, {self.capacity})")
        i = self._cut(lo)
        j = self._cut(hi)
        # merge with equal neighbours so that the pieces stay as few as the values allow
        if j < len(self._starts) and self._values[j] == value:
            j += 1
        if i > 0 and self._values[i - 1] == value:
            i -= 1
            lo = self._starts[i]
        self._starts[i:j] = [lo]
        self._values[i:j] = [value]

    def latest(self, lo: int, hi: int) -> int:
        """The largest value over ``[lo, hi)``: when the last occupant of any of those
        addresses was released."""
        if not 0 <= lo < hi <= self.capacity:
            raise ValueError(f"[{lo}, {hi}) is not a non-empty range of [0, {self.capacity})")
        i = bisect.bisect_right(self._starts, lo) - 1
        j = bisect.bisect_left(self._starts, hi, lo=i)
        return max(self._values[i:j])

    def pieces(self) -> list[tuple[int, int, int]]:
        """``(lo, hi, value)`` per piece, by address."""
        ends = self._starts[1:] + [self.capacity]
        return list(zip(self._starts, ends, self._values))
