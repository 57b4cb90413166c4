"""The linear scan of Stage 2 (paper Algorithm 2): placement, event-driven eviction and
spill insertion along a fixed order of the instance's nodes.

:func:`linear_scan` walks the order once. An ALLOC places its buffer by best fit
(Eqs. 23-24) in a free-segment list per tier (Eq. 22); an operation whose buffer
was spilled gets it back by a SPILL_IN right before it runs (as late as its user
allows); when nothing fits, victims of the same tier only (Eq. 25) leave by a
SPILL_OUT emitted right then (when space is needed): by eager flush in the L0 tiers
(Eq. 26) and by the chosen rule in L1/UB (Eqs. 27-31, or LRU). A FREE returns its
segment and merges it with its neighbours. Spill nodes get the ids of
docs/rules.md, section 5.1 (:func:`~dansched.simulate.spill_node_ids`); the spill and reuse edges
follow from where they sit, as the evaluator derives them.

Two placement modes:

- ``"bestfit"``: addresses are chosen online (the paper). ``evict="greedy"`` evicts
  one victim at a time until a segment fits (Algorithm 2, lines 7-12);
  ``evict="window"`` evicts the cheapest contiguous window instead (fewer victims
  when the tier is fragmented).
- ``"units"``: only free units are counted (``capacity`` may shrink a tier);
  addresses come later from an offline lifetime-aware packing of the segments
  (:mod:`dansched.stages.dlr.packing`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ...addresses import ReleaseMap
from ...errors import PlacementFailed
from ...graph import needs_positions
from ...hardware import spill_traffic
from ...instance import KIND_ALLOC, KIND_OP, Instance
from ...rooms import choose_room
from ...simulate import Segment, spill_node_ids
from .freelist import FreeList
from .victim import INF, RULES, VictimFacts, VictimRule, round_trip_cycles, running_buffers, victim_rule

__all__ = ["Reservation", "ScanResult", "linear_scan"]


@dataclass(frozen=True)
class Reservation:
    """Units of each tier (by tier index) that the victim rule plans around: while the scan
    is at a position before ``until`` (of the order it walks; ``None``: the whole order), a
    tier of capacity ``C`` is planned for ``C - units[tier]`` -- victims leave as soon as that
    is exceeded -- while addresses still use all ``C``. The spare units let a load take a
    room whose last occupant left earlier (:mod:`dansched.rooms`), so it need not
    wait for its victim: double buffering in general form, paid for in traffic."""

    units: Mapping[int, int]
    until: int | None = None

    def at(self, tier: int, k: int) -> int:
        """The units of ``tier`` kept aside at position ``k``."""
        if self.until is not None and k >= self.until:
            return 0
        return int(self.units.get(tier, 0))


@dataclass
class ScanResult:
    sequence: list[int]  # node ids, spill ids included
    offsets: list[int]  # ALLOC offset of each buffer (-1 until packed in "units" mode)
    spill_buf: list[int]  # buffer of spill k (0-based)
    spill_offset: list[int]  # NewOffset of spill k (-1 until packed in "units" mode)
    segments: list[Segment] = field(default_factory=list)  # positions index ``sequence``; offsets -1 until packed
    traffic: int = 0

    @property
    def spill_count(self) -> int:
        return len(self.spill_buf)

    def spills(self) -> list[tuple[int, int]]:
        return list(zip(self.spill_buf, self.spill_offset))


class _Units:
    """Free-unit counter for the ``"units"`` mode (no addresses)."""

    __slots__ = ("capacity", "free_units")

    def __init__(self, capacity: int) -> None:
        self.capacity = self.free_units = int(capacity)

    def best_fit(self, size: int) -> int | None:
        return 0 if size <= self.free_units else None

    def take(self, offset: int, size: int) -> None:
        self.free_units -= size

    def release(self, offset: int, size: int) -> None:
        self.free_units += size


class _NextNeed:
    """``nu(b,k)`` (Eq. 26) over the needs lists, with per-buffer cursors that only move
    forward as the scan advances."""

    __slots__ = ("needs", "ptr", "k")

    def __init__(self, needs: list[list[int]]) -> None:
        self.needs = needs
        self.ptr = [0] * len(needs)
        self.k = 0

    def __call__(self, b: int) -> float:
        ns = self.needs[b]
        p = self.ptr[b]
        k = self.k
        while p < len(ns) and ns[p] <= k:
            p += 1
        self.ptr[b] = p
        return ns[p] if p < len(ns) else INF


def linear_scan(
    inst: Instance,
    order: Sequence[int],
    rule: str | VictimRule = "score",
    mode: str = "bestfit",
    evict: str = "greedy",
    capacity: Mapping[int, int] | None = None,
    planned: Mapping[int, Sequence[int]] | None = None,
    traffic_limit: int | None = None,
    room: str = "best-fit",
    reserve: Reservation | None = None,
) -> ScanResult:
    """Algorithm 2 along ``order`` (original node ids, a topological order).

    ``rule`` is the L1/UB victim rule (a name :func:`dansched.stages.dlr.victim.victim_rule` knows,
    or any :class:`~dansched.stages.dlr.victim.VictimRule`);
    the L0 tiers always use eager flush. ``capacity`` overrides tier capacities
    (by tier index) in ``"units"`` mode. Raises :class:`PlacementFailed` when a
    buffer cannot be placed at all. ``planned`` maps a position to buffers to spill right
    after it (a spill plan chosen in advance, e.g. by :mod:`dansched.stages.dlr.spillplan`);
    eviction by ``rule`` still covers whatever the plan leaves unplaceable. With
    ``traffic_limit``, the scan stops with :class:`PlacementFailed` as soon as its traffic
    passes the limit (traffic only grows along the scan). In ``"bestfit"`` mode, ``room``
    names the room rule (:data:`dansched.rooms.ROOM_RULES`; release times are
    positions of the output sequence) and ``reserve`` the units each tier's victims are
    planned around (:class:`Reservation`)."""
    return _Scan(inst, order, rule, mode, evict, capacity, planned, traffic_limit, room, reserve).run()


class _Scan:
    """State of one linear scan; ``run`` returns the :class:`ScanResult`."""

    def __init__(
        self, inst, order, rule, mode, evict, capacity, planned=None, traffic_limit=None, room="best-fit", reserve=None
    ) -> None:
        self.planned = planned or {}
        self.traffic_limit = traffic_limit
        if mode != "bestfit" and (room != "best-fit" or reserve is not None):
            raise ValueError("a room rule or a reservation needs the bestfit placement mode")
        self.room, self.reserve = room, reserve
        hw = inst.hw
        L = inst.lists()
        self.inst, self.L, self.order = inst, L, list(order)
        self.mode, self.evict_mode = mode, evict
        self.sizes = inst.buf_size.tolist()
        self.tiers = inst.buf_tier.tolist()
        backed = inst.buf_backed.tolist()
        a, beta = hw.spill_fixed_cycles, hw.spill_cycles_per_unit
        self.traffic_of = [spill_traffic(s, bk) for s, bk in zip(self.sizes, backed)]
        self.cycles_of = [round_trip_cycles(s, bk, a, beta) for s, bk in zip(self.sizes, backed)]
        caps = [hw.capacity[t] for t in hw.tiers]
        self.alloc: list[_Units] | list[FreeList]
        if mode == "units":
            for t, c in (capacity or {}).items():
                caps[t] = int(c)
            self.alloc = [_Units(c) for c in caps]
        elif mode == "bestfit":
            self.alloc = [FreeList(c) for c in caps]
        else:
            raise ValueError(f"unknown placement mode {mode!r}")
        # per tier, the output position at which each address was last released (room rules)
        self.released = [ReleaseMap(never=-1) for _ in caps] if room != "best-fit" else None
        l0 = {hw.tier_index(t) for t in hw.single_residency_tiers}
        upper = victim_rule(rule) if isinstance(rule, str) else rule
        self.rule_of: list[VictimRule] = [RULES["eager"] if t in l0 else upper for t in range(len(caps))]
        self.next_need = _NextNeed(needs_positions(inst, self.order))
        nb = inst.num_buffers
        self.off = [-1] * nb  # current offset, -1 when not resident
        self.resident: list[dict[int, None]] = [dict() for _ in caps]  # insertion-ordered sets
        self.last_use = [-1] * nb
        # the look-ahead rules also read the needs, the tiers, the residents and the units each
        # tier is planned for at a position (its capacity less the reservation there); the
        # time-aware ones, the buffers of the operations running at a position
        self.facts = VictimFacts(
            self.next_need,
            self.last_use,
            self.sizes,
            self.traffic_of,
            self.cycles_of,
            needs=self.next_need.needs,
            tiers=self.tiers,
            residents=lambda t: self.resident[t].keys(),
            capacity=self.planned_units,
            running=running_buffers(inst, self.order),
        )
        self.seg_start = [-1] * nb
        self.seg_slot = [-1] * nb
        self.pending_spill = [-1] * nb  # spill number awaiting its SPILL_IN
        self.out: list[int] = []
        self.res = ScanResult([], [-1] * nb, [], [])

    # ---- events ---------------------------------------------------------------------
    def run(self) -> ScanResult:
        L, nn = self.L, self.next_need
        kind, node_buf, bufs = L.kind, L.node_buf, L.bufs
        for k, v in enumerate(self.order):
            nn.k = k
            kv = kind[v]
            if kv == KIND_OP:
                self.ensure_resident(bufs[v], k)
                self.out.append(v)
                for b in bufs[v]:
                    self.last_use[b] = k
            elif kv == KIND_ALLOC:
                b = node_buf[v]
                off = self.place(b, (b,), k)
                if off is None:  # a (virtual) capacity smaller than the buffer itself
                    raise PlacementFailed(f"buffer {int(self.inst.buf_id[b])} cannot be placed at its ALLOC")
                self.res.offsets[b] = off
                self.start_segment(b, off, -1, v, k)
            else:
                b = node_buf[v]
                if self.off[b] < 0:
                    self.ensure_resident([b], k)
                self.out.append(v)
                self.end_segment(b)
            for b in self.planned.get(k, ()):
                if self.off[b] >= 0:
                    self.spill_out(b)
        self.res.sequence = self.out
        return self.res

    def start_segment(self, b: int, off: int, slot: int, event: int, k: int) -> None:
        self.off[b] = off
        self.alloc[self.tiers[b]].take(off, self.sizes[b])
        self.resident[self.tiers[b]][b] = None
        self.seg_start[b] = len(self.out)
        self.seg_slot[b] = slot
        self.out.append(event)
        self.last_use[b] = k

    def end_segment(self, b: int) -> None:
        """Close ``b``'s segment at the event just appended to the output."""
        t = self.tiers[b]
        self.alloc[t].release(self.off[b], self.sizes[b])
        if self.released is not None:
            self.released[t].release(self.off[b], self.sizes[b], len(self.out) - 1)
        del self.resident[t][b]
        start, end = self.seg_start[b], len(self.out) - 1
        self.res.segments.append(
            Segment(b, t, self.sizes[b], self.off[b], start, end, self.out[start], self.out[end], self.seg_slot[b])
        )
        self.off[b] = -1

    def spill_out(self, b: int) -> None:
        """SPILL_OUT of ``b`` now, opening spill number ``len(spill_buf)``."""
        kk = len(self.res.spill_buf)
        self.res.spill_buf.append(b)
        self.res.spill_offset.append(-1)
        self.res.traffic += self.traffic_of[b]
        if self.traffic_limit is not None and self.res.traffic > self.traffic_limit:
            raise PlacementFailed(f"traffic {self.res.traffic} passes the limit {self.traffic_limit}")
        self.pending_spill[b] = kk
        self.out.append(spill_node_ids(self.inst.n, kk)[0])
        self.end_segment(b)

    def ensure_resident(self, need: Sequence[int], k: int) -> None:
        """SPILL_IN every buffer of ``need`` that is not resident (largest first). When a
        tier is so fragmented that only buffers of ``need`` stand in the way, the whole
        tier is emptied and ``need``'s buffers of that tier come back packed from
        address 0 (they fit: docs/rules.md, section 1.2, rejects an operation whose buffers do not)."""
        missing = sorted((b for b in need if self.off[b] < 0), key=lambda b: (-self.sizes[b], b))
        cleared: set[int] = set()
        while missing:
            b = missing.pop(0)
            t = self.tiers[b]
            off = self.room_for(t, self.sizes[b]) if t in cleared else self.place(b, need, k)
            if off is None:
                if t in cleared:
                    raise PlacementFailed(f"buffer {int(self.inst.buf_id[b])} cannot be placed at position {k}")
                cleared.add(t)
                for c in list(self.resident[t]):
                    self.spill_out(c)
                    if c in need:
                        missing.append(c)
                missing.append(b)
                missing.sort(key=lambda c: (-self.sizes[c], c))
                continue
            kk = self.pending_spill[b]
            if kk < 0:
                raise PlacementFailed(f"buffer {int(self.inst.buf_id[b])} is used before its ALLOC")
            self.pending_spill[b] = -1
            self.res.spill_offset[kk] = off
            self.start_segment(b, off, kk, spill_node_ids(self.inst.n, kk)[1], k)

    # ---- placement and eviction ---------------------------------------------------------
    def room_for(self, t: int, s: int) -> int | None:
        """The room of ``s`` units the room rule picks among tier ``t``'s free ranges (Eq. 24
        for best fit), ``None`` when no range is long enough."""
        al = self.alloc[t]
        if self.released is None:
            return al.best_fit(s)
        assert isinstance(al, FreeList)
        return choose_room(al.segments(), s, self.room, self.released[t].last_release)

    def planned_units(self, t: int, k: int) -> int:
        """The units tier ``t`` is planned for at position ``k``: its capacity less the
        reservation there (a function of the tier and the position alone)."""
        cap = self.alloc[t].capacity
        return cap if self.reserve is None else cap - self.reserve.at(t, k)

    def planned_room(self, t: int, s: int, k: int) -> int | None:
        """:meth:`room_for`, or ``None`` while taking ``s`` more units would pass the units
        tier ``t`` is planned for at position ``k`` (:meth:`planned_units`)."""
        if self.reserve is not None:
            al = self.alloc[t]
            if al.capacity - al.free_units + s > self.planned_units(t, k):
                return None
        return self.room_for(t, s)

    def place(self, b: int, pinned: Sequence[int], k: int) -> int | None:
        """Offset for ``b`` by the room rule (best fit, Eq. 24, by default), evicting from its
        tier while nothing fits or the tier passes what it is planned for (Algorithm 2, lines
        7-12). ``None`` when only ``pinned`` buffers are left in the way; a reservation that
        only pinned buffers keep from holding gives way to the tier's real capacity."""
        t, s = self.tiers[b], self.sizes[b]
        off = self.planned_room(t, s, k)
        if off is not None:
            return off
        if self.mode == "bestfit" and self.evict_mode == "window":
            if not self.evict_window(t, s, pinned, k):
                return None
            off = self.planned_room(t, s, k)
            if off is not None or self.reserve is None:
                return off
        pin = set(pinned)
        rule = self.rule_of[t]
        while off is None:
            pool = [c for c in self.resident[t] if c not in pin]
            if not pool:
                return self.room_for(t, s) if self.reserve is not None else None
            self.spill_out(rule.pick(pool, self.facts, k))
            off = self.planned_room(t, s, k)
        return off

    def evict_window(self, t: int, s: int, pinned: Sequence[int], k: int) -> bool:
        """Evict the cheapest set of resident buffers that frees a contiguous window of
        ``s`` units in tier ``t`` (ties: fewer units evicted, then the lowest address); a
        window costs the sum of what the tier's rule says each of its victims costs."""
        pin = set(pinned)
        rule = self.rule_of[t]
        cap = self.alloc[t].capacity
        occupied = sorted((self.off[c], c) for c in self.resident[t])
        starts = sorted({0} | {o for o, _ in occupied} | {o + self.sizes[c] for o, c in occupied})
        best = None
        cost_cache: dict[int, float] = {}
        for x in starts:
            if x + s > cap:
                break
            cost, units, victims, ok = 0.0, 0, [], True
            for o, c in occupied:
                if o >= x + s:
                    break
                if o + self.sizes[c] <= x:
                    continue
                if c in pin:
                    ok = False
                    break
                if c not in cost_cache:
                    cost_cache[c] = rule.cost(c, self.facts, k)
                cost += cost_cache[c]
                units += self.sizes[c]
                victims.append(c)
            if ok:
                key = (cost, units, x)
                if best is None or key < best[0]:
                    best = (key, victims)
        if best is None:
            return False
        for c in best[1]:
            self.spill_out(c)
        return True
