"""Reservations: Stage-2 plans whose victims are planned for less than a tier holds, so that
a load can take a room its victim did not just leave.

At the least traffic of an order, a tier is often full: every load evicts a victim, and best
fit (paper Eq. 24) puts the load where that victim was, so the load waits on the victim's
SPILL_OUT (the address-reuse edge, docs/rules.md, section 6.2), which waits on the victim's
last use: the loading engine runs at most one tile ahead (on a blocked matrix product, each
reload waits on its victim's MOVE). A *reservation* plans the victims of a tier for its
capacity less ``r`` rooms of its tile (:class:`~dansched.stages.dlr.scan.Reservation`) while
addresses use all of it, and each segment takes the room whose last occupant left earliest
(:mod:`dansched.rooms`): the spare rooms let every load run while the tile it replaces is
still in use -- double buffering in general form, in L1, UB and the L0 tiers alike. It costs
traffic (the victims see a smaller tier), so problem 3 plans at the traffic of each setting
(:mod:`dansched.pipeline.problem3.loop`) and keeps the faster plan only within its budget.

The *tile* of a tier is the most common size among the buffers the problem-2 plan spills from
it (:func:`tile_sizes`). :func:`reservation_settings` lists the settings in the order they are
tried: no reservation first (the rooms alone), then, for each tier the problem-2 plan spills
from and for all of them together, one room more at each step.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

from ....errors import PlacementFailed
from ....instance import Instance
from ....plan import Plan, plan_from_indices
from ....stages.dlr.scan import Reservation, linear_scan
from ....stages.dlr.victim import VictimRule

__all__ = ["Setting", "tile_sizes", "reservation_settings", "reservation_plan"]


@dataclass(frozen=True)
class Setting:
    """One reservation: ``rooms`` tiles kept aside per tier index (``tiles`` gives each
    tier's tile), ``sweep`` the tiers the setting belongs to (one tier, or all of them),
    ``part``: the rooms are kept aside for that share of the order only (its first
    positions; 1: the whole order)."""

    sweep: tuple[int, ...]
    rooms: Mapping[int, int]
    tiles: Mapping[int, int]
    part: Fraction = Fraction(1)

    def reservation(self, length: int) -> Reservation:
        """The :class:`~dansched.stages.dlr.scan.Reservation` of a scan along an order of
        ``length`` nodes."""
        until = None if self.part >= 1 else int(self.part * length)
        return Reservation({t: r * self.tiles[t] for t, r in self.rooms.items() if r}, until)

    def describe(self, inst: Instance) -> str:
        """``L1 1 room of 128, UB 2 rooms of 64`` (``rooms apart`` without a reservation),
        ``..., for the first 1/2 of the order`` for a part."""
        parts = [
            f"{inst.hw.tiers[t]} {r} room{'s' if r > 1 else ''} of {self.tiles[t]}"
            for t, r in sorted(self.rooms.items())
            if r
        ]
        text = ", ".join(parts) or "rooms apart"
        return text if self.part >= 1 or not parts else f"{text}, for the first {self.part} of the order"


def tile_sizes(inst: Instance, spilled: Sequence[int]) -> dict[int, int]:
    """Per tier index, the most common size among the ``spilled`` buffers (indices) of that
    tier (the smaller one on ties)."""
    by_tier: dict[int, Counter[int]] = {}
    for b in spilled:
        by_tier.setdefault(int(inst.buf_tier[b]), Counter())[int(inst.buf_size[b])] += 1
    return {t: min(c, key=lambda s: (-c[s], s)) for t, c in sorted(by_tier.items())}


def reservation_settings(
    inst: Instance, tiles: Mapping[int, int], steps: int, parts: int = 1
) -> Iterator[list[Setting]]:
    """The sweeps of settings in the order they are tried: first one sweep of the setting
    without a reservation, then per tier of ``tiles`` (by index) and, with more than one, for
    all of them together, ``1 .. steps`` rooms, fewer when the rooms would leave less than
    the tier's largest buffer; the first room also for the first ``1/parts``, ``2/parts``...
    of the order before the whole of it (the traffic between no room and one room, in
    ``parts`` steps). Each sweep is a list, the least reservation first: the caller stops a
    sweep early (the traffic budget passed, the busiest pipe saturated)."""
    yield [Setting((), {}, dict(tiles))]
    sweeps: list[tuple[int, ...]] = [(t,) for t in tiles]
    if len(tiles) > 1:
        sweeps.append(tuple(tiles))
    largest = _largest_buffer(inst)
    for sweep in sweeps:
        settings = []
        for r in range(1, steps + 1):
            if any(inst.hw.capacity[inst.hw.tiers[t]] - r * tiles[t] < largest.get(t, 0) for t in sweep):
                break
            if r == 1:
                settings += [
                    Setting(sweep, {t: 1 for t in sweep}, dict(tiles), Fraction(k, parts)) for k in range(1, parts)
                ]
            settings.append(Setting(sweep, {t: r for t in sweep}, dict(tiles)))
        if settings:
            yield settings


def _largest_buffer(inst: Instance) -> dict[int, int]:
    """Per tier index, the size of its largest buffer."""
    out: dict[int, int] = {}
    for t, s in zip(inst.buf_tier.tolist(), inst.buf_size.tolist()):
        out[t] = max(out.get(t, 0), s)
    return out


def reservation_plan(
    inst: Instance, order: Sequence[int], setting: Setting, rule: str | VictimRule, traffic_limit: int | None = None
) -> Plan | None:
    """The plan of ``order`` (instance nodes, topological) under ``setting``: the paper's
    placement (greedy eviction by ``rule``) with rooms chosen earliest-released; ``None`` when
    it cannot place or its traffic passes ``traffic_limit``."""
    try:
        res = linear_scan(
            inst,
            order,
            rule=rule,
            room="earliest-released",
            reserve=setting.reservation(len(order)) if setting.rooms else None,
            traffic_limit=traffic_limit,
        )
    except PlacementFailed:
        return None
    return plan_from_indices(inst, res.sequence, res.offsets, res.spills())
