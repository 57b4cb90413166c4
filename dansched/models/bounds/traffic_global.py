"""Lower bound on extra DDR traffic (problems 2 and 3) over *every* order.

While operation ``v`` runs, a buffer ``b`` whose ALLOC is a DAG ancestor of ``v`` and
whose FREE a DAG descendant of ``v`` (the lifetime edges ``ALLOC -> user -> FREE``
included) is live in every order: its *forced-live set* ``F(v)``. A live buffer is
either resident in its tier or spilled (docs/rules.md, section 6.1: a buffer leaves its tier only
by a SPILL_OUT), and ``v``'s own buffers must be resident. So in tier ``t`` with
capacity ``cap_t`` the buffers of ``F_t(v) - Bufs(v)`` that are spilled across ``v``
hold at least ``excess_t(v) = s(F_t(v)) - cap_t`` bytes. Each spilled buffer ``b`` costs
at least one spill, ``T(b) = Size`` when a COPY_IN backs it (DDR already holds it),
else ``2 * Size``. Hence, per tier, the traffic is at least::

    max over operations v of  min { sum T(b) : S subset of F_t(v) - Bufs(v), s(S) >= excess_t(v) }

(solved exactly as a knapsack when small, else bounded from below by its fractional
relaxation, backed buffers first, rounded up). Different tiers spill different buffers, so the per-tier bounds
add up. The bound is 0 -- and the report says so -- when every tier's largest forced
set fits its capacity: then the DAG alone forces no spill, and whether some order
needs one is not decided here.

Forced sets are Python-int bitsets over buffers indexed by ALLOC topological position,
built forwards (ancestor ALLOCs) and backwards (descendant FREEs); work and memory are
capped by :class:`TrafficParams` (deterministic, by bit counts), and past the cap the
bound falls back to the working sets ``Bufs(v)`` alone, which needs no DAG sets (a
working set larger than its tier means no valid plan at all).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ...graph import lifetime_graph
from ...hardware import spill_traffic
from ...instance import KIND_ALLOC, KIND_FREE, KIND_OP, Instance
from ...params import TrafficParams
from .bound import Bound

__all__ = ["TierExcess", "forced_live_excess", "global_traffic_bound"]


@dataclass(frozen=True)
class TierExcess:
    """The worst operation of one tier: forced-live bytes there, the capacity, and the
    least traffic that clears the excess (0 when it fits)."""

    tier: str
    op: int
    forced: int
    capacity: int
    traffic: int


class _TooLarge(Exception):
    pass


def _dag(inst: Instance) -> tuple[list[list[int]], list[list[int]], list[int]]:
    """The lifetime graph (:func:`~dansched.graph.lifetime_graph`) and a topological order of
    it; ``(preds, succs, topo)`` (topo empty on a cycle)."""
    n = inst.n
    preds, succs = lifetime_graph(inst)
    indeg = [len(p) for p in preds]
    stack = [v for v in range(n - 1, -1, -1) if indeg[v] == 0]
    topo: list[int] = []
    while stack:
        v = stack.pop()
        topo.append(v)
        for w in reversed(succs[v]):
            indeg[w] -= 1
            if indeg[w] == 0:
                stack.append(w)
    return preds, succs, topo if len(topo) == n else []


def _forced_sets(inst: Instance, params: TrafficParams):
    """Yield ``(v, bits)`` per operation: bit ``i`` set when buffer ``order[i]`` is forced
    live at ``v``; also returns the buffer order. Raises :class:`_TooLarge` past the cap."""
    preds, succs, topo = _dag(inst)
    if not topo:
        raise _TooLarge
    L = inst.lists()
    pos = [0] * inst.n
    for i, v in enumerate(topo):
        pos[v] = i
    alloc = inst.buf_alloc.tolist()
    bufs = sorted(range(inst.num_buffers), key=lambda b: (pos[alloc[b]], b))
    index = {b: i for i, b in enumerate(bufs)}
    work = 0
    # backwards: FREEs that are descendants, kept for operations only
    after_op: dict[int, int] = {}
    left = [len(p) for p in preds]
    sets: dict[int, int] = {}
    for v in reversed(topo):
        bits = 0
        for w in succs[v]:
            bits |= sets[w]
        if L.kind[v] == KIND_FREE:
            bits |= 1 << index[L.node_buf[v]]
        sets[v] = bits
        work += bits.bit_length()
        if L.kind[v] == KIND_OP:
            after_op[v] = bits
            work += bits.bit_length()
        if work > params.max_bits:
            raise _TooLarge
        # drop successors' sets once all their predecessors have read them
        for w in succs[v]:
            left[w] -= 1
            if left[w] == 0:
                del sets[w]
    sets.clear()
    left = [len(s) for s in succs]
    for v in topo:
        bits = 0
        for u in preds[v]:
            bits |= sets[u]
            left[u] -= 1
            if left[u] == 0:
                del sets[u]
        if L.kind[v] == KIND_ALLOC:
            bits |= 1 << index[L.node_buf[v]]
        work += bits.bit_length()
        if work > params.max_bits:
            raise _TooLarge
        if left[v]:
            sets[v] = bits
        if L.kind[v] == KIND_OP:
            yield v, bits & after_op.pop(v), bufs


EXACT_COVER_WORK = 200_000  # items x bytes of the knapsack DP before the fractional bound is used


def _cheapest_cover(cands: list[tuple[int, int]], excess: int) -> float:
    """Least cost of whole ``(size, cost)`` items adding up to at least ``excess`` bytes:
    exactly (complement knapsack: keep the costliest items that fit in ``total - excess``)
    when small enough, else the fractional relaxation (cheapest cost per byte first),
    which is below it. Infinity when even all items fall short."""
    total = sum(sz for sz, _ in cands)
    if total < excess:
        return math.inf
    room = total - excess
    if len(cands) * (room + 1) <= EXACT_COVER_WORK:
        keep = [0] * (room + 1)  # keep[r]: largest cost of items left unspilled in r bytes
        for sz, c in cands:
            for r in range(room, sz - 1, -1):
                if keep[r - sz] + c > keep[r]:
                    keep[r] = keep[r - sz] + c
        return float(sum(c for _, c in cands) - keep[room])
    need = excess
    out = 0.0
    for size, cost in sorted(cands, key=lambda sc: (sc[1] / sc[0], sc[0])):
        take = min(size, need)
        out += cost * take / size
        need -= take
        if need <= 0:
            return out
    return math.inf


def forced_live_excess(inst: Instance, params: TrafficParams = TrafficParams()) -> tuple[list[TierExcess], bool]:
    """Per tier, the operation whose forced-live set costs the most traffic to fit (or,
    when none overflows, the largest forced set); the flag is False when the DAG sets
    exceeded the cap and only working sets were used."""
    sizes = inst.buf_size.tolist()
    tiers = inst.buf_tier.tolist()
    backed = inst.buf_backed.tolist()
    cost = [spill_traffic(sizes[b], backed[b]) for b in range(inst.num_buffers)]
    caps = [inst.hw.capacity[t] for t in inst.hw.tiers]
    best: dict[int, TierExcess] = {}
    L = inst.lists()

    def consider(v: int, members: list[int]) -> None:
        by_tier: dict[int, list[int]] = {}
        for b in members:
            by_tier.setdefault(tiers[b], []).append(b)
        own = set(L.bufs[v])
        for t, bs in by_tier.items():
            forced = sum(sizes[b] for b in bs)
            excess = forced - caps[t]
            traffic = 0
            if excess > 0:
                c = _cheapest_cover([(sizes[b], cost[b]) for b in bs if b not in own and sizes[b] > 0], excess)
                traffic = math.ceil(c - 1e-9) if c != math.inf else 0
            cur = best.get(t)
            if cur is None or (traffic, forced) > (cur.traffic, cur.forced):
                best[t] = TierExcess(inst.hw.tiers[t], v, forced, caps[t], traffic)

    full = True
    try:
        seen: set[tuple[int, tuple[int, ...]]] = set()
        for v, bits, order in _forced_sets(inst, params):
            key = (bits, tuple(sorted(L.bufs[v])))
            if key in seen:
                continue
            seen.add(key)
            members = []
            while bits:
                lsb = bits & -bits
                members.append(order[lsb.bit_length() - 1])
                bits ^= lsb
            consider(v, members)
    except _TooLarge:
        full = False
        best.clear()
        for v in range(inst.n):
            if L.kind[v] == KIND_OP:
                consider(v, list(L.bufs[v]))
    return [best[t] for t in sorted(best)], full


def global_traffic_bound(inst: Instance, params: TrafficParams = TrafficParams()) -> Bound:
    """Sum over tiers of the forced-live cover (module docstring), with the reason when 0."""
    rows, full = forced_live_excess(inst, params)
    what = "forced-live set" if full else "working set (DAG sets over budget)"
    total = sum(r.traffic for r in rows)
    if total > 0:
        parts = ", ".join(f"{r.tier} {r.traffic} (op {r.op}: {r.forced} > {r.capacity})" for r in rows if r.traffic)
        return Bound(total, f"all orders: per tier, cheapest spills clearing the largest {what} excess: {parts}")
    worst = max(rows, key=lambda r: r.forced / r.capacity, default=None)
    if worst is None:
        return Bound(0, "all orders: 0, no operation uses a buffer")
    return Bound(
        0,
        f"all orders: 0, every {what} fits its tier (fullest: {worst.tier} {worst.forced} of "
        f"{worst.capacity} at op {worst.op}); no spill is forced by the DAG alone",
    )
