"""Where a buffer goes in its tier, at simulated time: the resident segments of one tier
and the address-reuse waits (the room itself is chosen by a room rule, :mod:`dansched.rooms`).

A segment that starts on addresses an earlier segment occupied cannot start before the
event that ended that earlier segment (the address-reuse edge from that FREE or
SPILL_OUT). A :class:`Tier` keeps, in the address-release map of its addresses
(:class:`~dansched.addresses.ReleaseMap`), the end time of the event that ended their most
recent occupant: its size grows with the segments that ended, never with the tier's
capacity. Its free ranges are :func:`~dansched.addresses.free_ranges` of its residents.

>>> tier = Tier(16)
>>> tier.add(0, 4, b=0); tier.add(8, 4, b=1)
>>> tier.free_ranges()
[(4, 8), (12, 16)]
>>> tier.remove(8, end_time=30)
>>> tier.wait(6, 4), tier.wait(12, 4)
(30, 0)
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence

from .....addresses import ReleaseMap, free_ranges

__all__ = ["Tier", "has_prefetch_room", "reserved_room"]


class Tier:
    """The resident segments of one tier of ``cap`` units, sorted by offset, and when each of
    its addresses was last released (``releases``: the end time of that event)."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.offs: list[int] = []  # sorted offsets of resident segments
        self.seg: dict[int, tuple[int, int]] = {}  # offset -> (size, buffer)
        self.used = 0
        self.releases = ReleaseMap()

    def free_ranges(self, extra: Sequence[tuple[int, int]] = ()) -> list[tuple[int, int]]:
        """Free address ranges [lo, hi), in address order, ``extra`` (offset, size) counted as occupied."""
        return free_ranges(self.cap, [(o, self.seg[o][0]) for o in self.offs] + list(extra))

    def wait(self, off: int, size: int) -> int:
        """When a segment on ``[off, off + size)`` may start (address reuse)."""
        return self.releases.last_release(off, size)

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
        self.releases.release(off, size, end_time)

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
