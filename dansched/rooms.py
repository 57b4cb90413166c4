"""Rooms: which free address range a segment takes, decided apart from which buffer leaves.

A *room* is the address range ``[offset, offset + size)`` a segment (docs/rules.md, residency)
takes in its tier. Wherever a buffer is placed or reloaded two things are decided: which
buffers leave to make space (the victim rule, :mod:`dansched.stages.dlr.victim`, paper
Eqs. 25-31) and which free range the buffer then takes (the room rule, here). Best fit (paper
Eq. 24) packs tightly, so it tends to take the range freed last -- often the victim's own --
and the reload then waits on the address-reuse edge from the victim's SPILL_OUT
(docs/rules.md, section 6.2), which waits on the victim's last use. A room whose last occupant
left earlier costs that edge nothing.

The candidates are the two ends of every free range long enough for the segment (a room
flush with a neighbour keeps the rest of the range in one piece). Each rule is a key to
minimise:

- ``best-fit`` (Eq. 24): the least slack ``hi - lo - size``, then the lowest address;
- ``earliest-released``: the room whose last occupant left earliest (``released``: when the
  last occupant of any of its addresses left, in the caller's unit, a schedule position or a
  time: the address-release map, :class:`dansched.addresses.ReleaseMap`), then best fit;
- ``least-late``: the room whose last occupant left least late for the time ``want`` the
  segment is wanted (``max(0, released - want)``), then best fit.

>>> ranges = [(0, 4), (8, 16)]
>>> left = {0: 30, 8: 5, 12: 5}  # when the last occupant of the room starting there left
>>> released = lambda offset, size: left[offset]
>>> choose_room(ranges, 4, "best-fit"), choose_room(ranges, 4, "earliest-released", released)
(0, 8)
>>> choose_room(ranges, 4, "least-late", released, want=40), choose_room(ranges, 9, "best-fit")
(0, None)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

__all__ = ["ROOM_RULES", "Released", "choose_room", "ranked_rooms"]

Released = Callable[[int, int], int]
"""``released(offset, size)``: when the last occupant of any address of ``[offset, offset +
size)`` left (:meth:`dansched.addresses.ReleaseMap.last_release`)."""

RoomKey = Callable[[int, int, int, int], tuple[int, ...]]
"""A room rule's key of a candidate: ``key(offset, slack, released, want)``, smaller is better."""

ROOM_RULES: dict[str, RoomKey] = {
    "best-fit": lambda off, slack, released, want: (slack, off),
    "earliest-released": lambda off, slack, released, want: (released, slack, off),
    "least-late": lambda off, slack, released, want: (max(0, released - want), slack, off),
}
"""The room rules by name (module docstring)."""


def ranked_rooms(
    ranges: Iterable[tuple[int, int]],
    size: int,
    rule: str = "best-fit",
    released: Released | None = None,
    want: int = 0,
) -> list[int]:
    """The offsets of every candidate room (the two ends of each free range of ``ranges``,
    ``[lo, hi)`` in any order, long enough for ``size`` units), the one ``rule`` prefers
    first. ``released`` is needed by every rule but ``best-fit``."""
    key_of = ROOM_RULES[rule]
    if rule != "best-fit" and released is None:
        raise ValueError(f"the room rule {rule!r} needs the release times of the addresses")
    keys: list[tuple[int, ...]] = []
    for lo, hi in ranges:
        slack = hi - lo - size
        if slack < 0:
            continue
        for off in (lo, hi - size) if slack else (lo,):
            when = released(off, size) if released is not None else 0
            keys.append(key_of(off, slack, when, want))
    keys.sort()
    return [k[-1] for k in keys]


def choose_room(
    ranges: Iterable[tuple[int, int]],
    size: int,
    rule: str = "best-fit",
    released: Released | None = None,
    want: int = 0,
) -> int | None:
    """The offset of the room ``rule`` prefers among the free ``ranges`` for a segment of
    ``size`` units (:func:`ranked_rooms`' first); ``None`` when no range is long enough."""
    ranked = ranked_rooms(ranges, size, rule, released, want)
    return ranked[0] if ranked else None
