"""Victim choice of the time-driven scheduler: which contiguous window of resident
buffers to spill to make room for ``size`` units (paper Eqs. 25-31, with time in mind).

A window ``[a, a + size)`` of the tier is a candidate when none of the buffers meeting it
is pinned (needed by the task making room) or dead (no use left: it only waits for its
FREE), and it avoids the ``extra`` ranges already promised. Its cost is what the
scheduler's victim rule (:class:`~dansched.stages.dlr.victim.VictimRule`, ``TimedParams.victim``)
says each of its victims costs, summed (the window eviction of Stage 2's scan does the
same): by default the cost-aware rule, ``1/score(b,k)`` of Eq. 30 with the reuse distance
counted in operations of the reference order from the one before the frontier (far reuse
and low traffic are cheap). The cheapest window wins, but windows within ``tolerance`` of
its cost, and with a ``victim_horizon`` every window whose victims are all reused at least
that far ahead, compete on time: the earliest SPILL_OUT start (the latest end of the
victims' uses so far) first, then the cost, then the lowest address.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .placement import Tier

__all__ = ["VictimWindow", "victim_windows", "chosen_window"]


@dataclass(frozen=True)
class VictimWindow:
    """A candidate window: its summed cost, when its SPILL_OUTs may start (``ready``),
    its start address, its victims by address, and the soonest reuse distance among them."""

    cost: float
    ready: int
    start: int
    victims: list[int]
    nearest: int


def _window_starts(tier: Tier, size: int, extra: Sequence[tuple[int, int]]) -> list[int]:
    """Start addresses worth trying: 0, and where a window would begin or end flush with a
    resident segment or a promised range."""
    starts = {0}
    for o in tier.offs:
        s = tier.seg[o][0]
        starts.update((o, o + s, o + s - size))
    for o, s in extra:
        starts.update((o + s, o + s - size))
    return sorted(starts)


def victim_windows(
    tier: Tier,
    size: int,
    pinned: set[int],
    extra: Sequence[tuple[int, int]],
    *,
    next_use: Callable[[int], int],
    frontier: int,
    n_ops: int,
    cost: Callable[[int], float],
    use_end: Sequence[int],
    horizon: int | None = None,
) -> list[VictimWindow]:
    """Every candidate window of ``size`` units, by start address. ``next_use(b)`` is ν(b)
    of Eq. 26 as a position among the ``n_ops`` operations (``n_ops``: none left);
    ``cost(b)`` what evicting ``b`` costs (the victim rule's); with ``horizon``, a victim
    must be next used past that position."""
    out = []
    for a in _window_starts(tier, size, extra):
        if a < 0 or a + size > tier.cap:
            continue
        if any(o < a + size and a < o + s for o, s in extra):
            continue
        victims = [tier.seg[o][1] for o in tier.overlapping(a, a + size)]
        if any(b in pinned for b in victims):
            continue
        total = 0.0
        ok = True
        ready = 0
        nearest = n_ops
        for b in victims:
            nxt = next_use(b)
            if nxt >= n_ops or (horizon is not None and nxt <= horizon):
                ok = False  # dead (waiting for its FREE: never worth spilling) or needed soon
                break
            total += cost(b)
            ready = max(ready, use_end[b])
            nearest = min(nearest, nxt - frontier)
        if ok:
            out.append(VictimWindow(total, ready, a, victims, nearest))
    return out


def chosen_window(windows: Sequence[VictimWindow], tolerance: float, victim_horizon: int) -> VictimWindow:
    """The window to spill (Eq. 31 over windows): among those within ``tolerance`` of the
    cheapest cost, or whose victims are all reused at least ``victim_horizon`` operations
    ahead (when positive), the one whose SPILL_OUTs may start first, then the cheapest,
    then the lowest address. ``windows`` must not be empty."""
    best_cost = min(w.cost for w in windows)
    bar = best_cost * (1 + tolerance) + 1e-12
    pool = [w for w in windows if w.cost <= bar or (victim_horizon and w.nearest >= victim_horizon)]
    return min(pool, key=lambda w: (w.ready, w.cost, w.start))
