"""``magis``: MAGIS-style reordering with swap planning at the peak (Chen et al.,
2024, "MAGIS: Memory Optimization via Coordinated Graph Transformation and
Scheduling for DNN"), followed by the shared best-fit + LRU memory stage. No
timing stage.

1. **Order** (:func:`reverse_post_order`): reverse post-order of a depth-first
   search of the operation graph (sources and successors visited by ascending
   id), each ALLOC just before its first user and each FREE right after its last
   (:func:`~dansched.application.baselines.common.full_order`).
2. **Swaps at the peak** (:func:`plan_swaps`): while some tier's residency
   profile (buffers resident from ALLOC to FREE, minus planned swap gaps) exceeds
   its capacity, take the worst position and, among the buffers resident there
   but not needed there, swap the one with the longest reuse distance (the gap
   between its previous and next need; ties: larger, then lower index): store
   right after its previous need (its producer, for a fresh tensor) and load just
   before its first later consumer. Gaps that end at the FREE are never swapped
   (the buffer is dead). The memory stage runs with these swaps planned
   (:func:`~dansched.stages.dlr.scan.linear_scan` ``planned=``); LRU covers what
   fragmentation still needs.
3. **Hoisting** (:func:`hoist_loads`): each load (SPILL_IN) then moves earlier,
   as far as its addresses stay free and the resident L1+UB units stay within the
   plan's physical peak ("hoisted while memory allows"), never above its store.
   The hoisted plan is kept when the evaluator accepts it.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...graph import needs_positions
from ...instance import KIND_ALLOC, KIND_FREE, Instance
from ...plan import Plan
from ...simulate import evaluate, spill_node_ids, spill_of_node
from .common import MethodResult, OpGraph, Stopwatch, full_order, lru_memory_stage, op_graph

__all__ = ["run", "reverse_post_order", "plan_swaps", "hoist_loads"]


def reverse_post_order(g: OpGraph) -> list[int]:
    """Operation indices in reverse post-order of an iterative DFS from the sources."""
    seen = bytearray(g.m)
    post: list[int] = []
    for root in range(g.m):
        if g.preds[root] or seen[root]:
            continue
        seen[root] = 1
        stack = [(root, 0)]
        while stack:
            v, i = stack[-1]
            ws = g.succs[v]
            while i < len(ws) and seen[ws[i]]:
                i += 1
            if i < len(ws):
                stack[-1] = (v, i + 1)
                seen[ws[i]] = 1
                stack.append((ws[i], 0))
            else:
                stack.pop()
                post.append(v)
    return post[::-1]


def plan_swaps(inst: Instance, order: Sequence[int]) -> tuple[dict[int, list[int]], int]:
    """Swaps chosen at the worst overflowing position until every tier's profile fits
    (see the module docstring): ``(position -> buffers stored right after it, swaps)``."""
    needs = needs_positions(inst, order)
    n = len(order)
    sizes = inst.buf_size.tolist()
    pos = [0] * inst.n
    for i, v in enumerate(order):
        pos[v] = i
    alloc_pos = np.array([pos[a] for a in inst.buf_alloc.tolist()], dtype=np.int64)
    free_pos = np.array([pos[f] for f in inst.buf_free.tolist()], dtype=np.int64)
    planned: dict[int, list[int]] = {}
    swaps = 0
    for t, name in enumerate(inst.hw.tiers):
        cap = inst.hw.capacity[name]
        bufs = np.flatnonzero(inst.buf_tier == t)
        if len(bufs) == 0:
            continue
        diff = np.zeros(n + 1, dtype=np.int64)
        np.add.at(diff, alloc_pos[bufs], inst.buf_size[bufs])
        np.add.at(diff, free_pos[bufs] + 1, -inst.buf_size[bufs])
        occ = np.cumsum(diff[:n])
        swapped: dict[int, set[int]] = {}  # buffer -> gap indices already swapped
        hopeless = np.zeros(n, dtype=bool)
        while True:
            over = np.where(hopeless, 0, occ - cap)
            k = int(np.argmax(over))
            if over[k] <= 0:
                break
            live = bufs[(alloc_pos[bufs] <= k) & (free_pos[bufs] >= k)].tolist()
            best = None
            for b in live:
                ns = needs[b]
                j = bisect_right(ns, k) - 1  # previous need at or before k
                if j < 0 or j + 1 >= len(ns) or ns[j] == k or ns[j + 1] == free_pos[b]:
                    continue  # needed at k, or the next need is only its FREE
                if j in swapped.get(b, ()):
                    continue
                key = (ns[j + 1] - ns[j], sizes[b], -b)
                if best is None or key > best[0]:
                    best = (key, b, j)
            if best is None:
                hopeless[k] = True
                continue
            _, b, j = best
            lo, hi = needs[b][j], needs[b][j + 1]
            occ[lo + 1 : hi] -= sizes[b]
            swapped.setdefault(b, set()).add(j)
            planned.setdefault(lo, []).append(b)
            swaps += 1
    return {k: sorted(v) for k, v in sorted(planned.items())}, swaps


def _segments(inst: Instance, plan: Plan):
    """Residency segments ``[start, end]`` (sequence indices) per buffer, from a plan."""
    n = inst.n
    index = {int(b): i for i, b in enumerate(inst.buf_id.tolist())}
    offset = {index[b]: o for b, o in plan.offsets or ()}
    spill_buf = [index[b] for b, _ in plan.spills]
    spill_off = [o for _, o in plan.spills]
    L = inst.lists()
    open_at: dict[int, tuple[int, int, int]] = {}
    segs: list[list[int]] = []  # [buf, start, end, offset, spill slot of the start or -1]
    for i, v in enumerate(plan.order):
        if v < n:
            if L.kind[v] == KIND_ALLOC:
                b = L.node_buf[v]
                open_at[b] = (i, offset[b], -1)
            elif L.kind[v] == KIND_FREE:
                b = L.node_buf[v]
                s, o, slot = open_at.pop(b)
                segs.append([b, s, i, o, slot])
            continue
        k, is_out = spill_of_node(n, v)
        b = spill_buf[k]
        if not is_out:
            open_at[b] = (i, spill_off[k], k)
        else:
            s, o, slot = open_at.pop(b)
            segs.append([b, s, i, o, slot])
    return segs


def hoist_loads(inst: Instance, plan: Plan, physical_peak: int) -> tuple[Plan, int]:
    """Move every SPILL_IN as early as its addresses and ``physical_peak`` allow (see the
    module docstring); returns the new plan and how many loads moved."""
    n = inst.n
    segs = _segments(inst, plan)
    sizes = inst.buf_size.tolist()
    tiers = inst.buf_tier.tolist()
    peak_tiers = {inst.hw.tier_index(t) for t in inst.hw.peak_tiers}
    m = len(plan.order)
    diff = np.zeros(m + 1, dtype=np.int64)
    for b, s, e, _, _ in segs:
        if tiers[b] in peak_tiers:
            diff[s] += sizes[b]
            diff[e + 1] -= sizes[b]
    units = np.cumsum(diff[:m])
    where = {v: i for i, v in enumerate(plan.order)}
    key = [float(i) for i in range(m)]
    arr = {
        name: np.array([sg[col] for sg in segs], dtype=np.int64)
        for col, name in enumerate(("buf", "start", "end", "off"))
    }
    arr["tier"] = np.array([tiers[sg[0]] for sg in segs], dtype=np.int64)
    arr["size"] = np.array([sizes[sg[0]] for sg in segs], dtype=np.int64)
    moved = 0
    for si in sorted(range(len(segs)), key=lambda s: segs[s][1]):
        b, start, end, off, slot = segs[si]
        if slot < 0:
            continue
        t, size = tiers[b], sizes[b]
        floor = where[spill_node_ids(n, slot)[0]] + 1  # never above its SPILL_OUT
        clash = (
            (arr["tier"] == t)
            & (arr["start"] < start)
            & (arr["end"] >= floor)
            & (arr["off"] < off + size)
            & (arr["off"] + arr["size"] > off)
        )
        clash[si] = False
        if clash.any():
            floor = max(floor, int(arr["end"][clash].max()) + 1)
        q = floor
        if t in peak_tiers and floor < start:
            full = np.flatnonzero(units[floor:start] + size > physical_peak)
            if len(full):
                q = floor + int(full[-1]) + 1
        if q < start:
            if t in peak_tiers:
                units[q:start] += size
            segs[si][1] = q
            arr["start"][si] = q
            key[start] = q - 0.5 + start * 1e-9  # before index q; moved loads keep their order
            moved += 1
    order = [v for _, v in sorted(zip(key, plan.order))]
    return Plan(order=tuple(order), offsets=plan.offsets, spills=plan.spills), moved


def run(inst: Instance, time_limit: float = 60.0) -> MethodResult:
    """Reverse post-order, swaps at the peak, best fit + LRU, hoisted loads."""
    sw = Stopwatch()
    g = op_graph(inst)
    order = full_order(inst, g, reverse_post_order(g))
    sw.lap("order")
    planned, swaps = plan_swaps(inst, order)
    sw.lap("swaps")
    plan, _ = lru_memory_stage(inst, order, planned=planned)
    ev = evaluate(inst, plan)
    info: dict[str, Any] = {"planned_swaps": swaps, "spills": len(plan.spills)}
    if ev.valid and plan.spills:
        hoisted, moved = hoist_loads(inst, plan, int(ev.physical_peak or 0))
        ev2 = evaluate(inst, hoisted)
        info["hoisted_loads"] = moved if ev2.valid else 0
        if ev2.valid:
            plan = hoisted
        else:
            info["hoist_rejected"] = ev2.first_violation("invalid")
    sw.lap("memory")
    return MethodResult(plan, info | {"stage_seconds": sw.seconds})
