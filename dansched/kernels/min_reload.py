"""Which victims keep a tier's remaining reload traffic at farthest-next-use's: the compiled
core of the ``min-reload`` victim rule (:class:`dansched.stages.dlr.victim.MinReload`, which
documents the rule).

A tier's future is its *events*: the positions ``pos[e]`` (ascending) at which some of its
buffers must be resident, each with its entries ``ptr[e]..ptr[e+1]`` (buffer ``buf[i]``, loaded
largest first, and ``after[i]``, the buffer's next need after ``pos[e]``, or :data:`NONE` when
this need is its last, the FREE that ends it) and the units ``cap[e]`` the scan plans the
tier for there. A *continuation* from event ``e0`` walks these events in units: at each, a
missing buffer is loaded, evicting first the resident whose next need is farthest (ties:
larger size, lower index; never a buffer the event needs) while it does not fit, each
eviction adding the victim's spill traffic; after the loads the buffers whose last need it
is leave. A continuation with nothing left to evict over-fills the tier (the scan empties
it there instead), both continuations alike.

:func:`first_keeping_minimum` runs, for each candidate ``p`` in turn, two continuations side
by side from the same resident set: one evicts the farthest-next-use victim ``f`` first, the
other ``p``; it stops at the first event after which both hold the same buffers (from there
on they do the same thing) and compares the traffic spent so far. It returns the first
candidate whose traffic is no more than ``f``'s.
"""

from __future__ import annotations

import numpy as np

from .jit import compiled

__all__ = ["NONE", "first_keeping_minimum", "warm"]

NONE = np.iinfo(np.int64).max  # ``after`` of a buffer's last need: no next need


@compiled
def _gap(
    p: int,
    f: int,
    residents: np.ndarray,
    e0: int,
    pos: np.ndarray,
    ptr: np.ndarray,
    buf: np.ndarray,
    after: np.ndarray,
    cap: np.ndarray,
    need_ptr: np.ndarray,
    need_pos: np.ndarray,
    sizes: np.ndarray,
    traffic: np.ndarray,
    rank: np.ndarray,
    nxt: np.ndarray,
    held: np.ndarray,
    members: np.ndarray,
) -> int:
    """Traffic of the continuation that evicts ``p`` first (side 1) minus that of the one that
    evicts ``f`` first (side 0), both run until they hold the same buffers. Scratch: ``nxt``
    (next need per buffer), ``held`` (two rows of membership flags, zero on entry and on
    return) and ``members`` (two rows of at least ``len(residents) + len(buf)``)."""
    if p == f:
        return 0
    k = pos[e0]
    count = np.zeros(2, dtype=np.int64)
    units = np.zeros(2, dtype=np.int64)
    spent = np.zeros(2, dtype=np.int64)
    total = 0
    for j in range(len(residents)):
        r = residents[j]
        lo, hi = need_ptr[r], need_ptr[r + 1]
        while lo < hi:  # the first need at or after k
            mid = (lo + hi) // 2
            if need_pos[mid] < k:
                lo = mid + 1
            else:
                hi = mid
        nxt[r] = need_pos[lo] if lo < need_ptr[r + 1] else NONE
        total += sizes[r]
    for side in range(2):
        first = f if side == 0 else p
        n = 0
        for j in range(len(residents)):
            r = residents[j]
            if r != first:
                members[side, n] = r
                held[side, r] = 1
                n += 1
        count[side] = n
        units[side] = total - sizes[first]
        spent[side] = traffic[first]
    diff = 2  # buffers held by one side only
    for e in range(e0, len(pos)):
        at = pos[e]
        for i in range(ptr[e], ptr[e + 1]):
            nxt[buf[i]] = at
        for side in range(2):
            other = 1 - side
            for i in range(ptr[e], ptr[e + 1]):
                x = buf[i]
                if held[side, x]:
                    continue
                while units[side] + sizes[x] > cap[e]:
                    best = -1  # the farthest next need not needed here; larger, then lower index
                    far = at
                    high = -1
                    for j in range(count[side]):
                        y = members[side, j]
                        if nxt[y] > far or (nxt[y] == far and far > at and rank[y] > high):
                            best, far, high = j, nxt[y], rank[y]
                    if best < 0:
                        break
                    v = members[side, best]
                    count[side] -= 1
                    members[side, best] = members[side, count[side]]
                    units[side] -= sizes[v]
                    spent[side] += traffic[v]
                    held[side, v] = 0
                    diff += 1 if held[other, v] else -1
                members[side, count[side]] = x
                count[side] += 1
                units[side] += sizes[x]
                held[side, x] = 1
                diff += -1 if held[other, x] else 1
            for i in range(ptr[e], ptr[e + 1]):
                if after[i] == NONE:
                    x = buf[i]
                    for j in range(count[side]):
                        if members[side, j] == x:
                            count[side] -= 1
                            members[side, j] = members[side, count[side]]
                            break
                    units[side] -= sizes[x]
                    held[side, x] = 0
                    diff += 1 if held[other, x] else -1
        for i in range(ptr[e], ptr[e + 1]):
            nxt[buf[i]] = after[i]
        if diff == 0:
            break
    for side in range(2):
        for j in range(count[side]):
            held[side, members[side, j]] = 0
    return int(spent[1] - spent[0])


@compiled
def first_keeping_minimum(
    candidates: np.ndarray,
    f: int,
    residents: np.ndarray,
    e0: int,
    pos: np.ndarray,
    ptr: np.ndarray,
    buf: np.ndarray,
    after: np.ndarray,
    cap: np.ndarray,
    need_ptr: np.ndarray,
    need_pos: np.ndarray,
    sizes: np.ndarray,
    traffic: np.ndarray,
    rank: np.ndarray,
    by_threshold: int,
) -> int:
    """Index in ``candidates`` of the first buffer ``p`` such that evicting ``p`` at event ``e0``
    and continuing farthest-next-use spends no more traffic than evicting ``f`` there and
    continuing alike (module docstring); -1 when none does. ``residents``: the tier's buffers
    now (``f`` and every candidate among them); ``need_ptr``/``need_pos``: every buffer's need
    positions (CSR, ascending), for the next needs of the residents; ``rank``: per buffer, its
    place in the order larger size, then lower index (the farthest-next-use tie-break).

    ``by_threshold`` (1 or 0): the candidates that keep the minimum are exactly those whose next need
    is at or after some position (true when the tier's buffers have one size and one spill
    traffic: :class:`dansched.stages.dlr.victim.MinReload` proves it), so a binary search over
    the candidates' next needs finds that position with a logarithmic number of comparisons."""
    nxt = np.zeros(len(sizes), dtype=np.int64)
    held = np.zeros((2, len(sizes)), dtype=np.int8)
    members = np.zeros((2, len(residents) + len(buf)), dtype=np.int64)
    args = (residents, e0, pos, ptr, buf, after, cap, need_ptr, need_pos, sizes, traffic, rank)
    if not by_threshold:
        for c in range(len(candidates)):
            if _gap(candidates[c], f, *args, nxt, held, members) <= 0:
                return c
        return -1
    k = pos[e0]
    nu = np.empty(len(candidates), dtype=np.int64)
    for c in range(len(candidates)):
        r = candidates[c]
        lo, hi = need_ptr[r], need_ptr[r + 1]
        while lo < hi:  # the first need after k
            mid = (lo + hi) // 2
            if need_pos[mid] <= k:
                lo = mid + 1
            else:
                hi = mid
        nu[c] = need_pos[lo] if lo < need_ptr[r + 1] else NONE
    by_need = np.arange(len(candidates))  # by next need: insertion sort (few candidates, no sort to compile)
    for c in range(1, len(candidates)):
        x = by_need[c]
        j = c - 1
        while j >= 0 and nu[by_need[j]] > nu[x]:
            by_need[j + 1] = by_need[j]
            j -= 1
        by_need[j + 1] = x
    lo, hi = 0, len(candidates)  # the first of by_need that keeps the minimum (all after it do)
    while lo < hi:
        mid = (lo + hi) // 2
        if _gap(candidates[by_need[mid]], f, *args, nxt, held, members) <= 0:
            hi = mid
        else:
            lo = mid + 1
    if lo == len(candidates):
        return -1
    threshold = nu[by_need[lo]]
    for c in range(len(candidates)):
        if nu[c] >= threshold:
            return c
    return -1


def warm() -> None:
    """Compile (or load from the cache) this module's kernel on a tier of two units."""
    i64 = np.int64
    a = np.array
    facts = (  # three buffers of one unit, two units: buffer 2 arrives at position 2
        a([0, 1], dtype=i64),  # residents
        0,  # e0
        a([2, 3, 4, 5], dtype=i64),  # pos
        a([0, 1, 2, 3, 4], dtype=i64),  # ptr
        a([2, 0, 1, 2], dtype=i64),  # buf
        a([5, NONE, NONE, NONE], dtype=i64),  # after
        a([2, 2, 2, 2], dtype=i64),  # cap
        a([0, 2, 4, 6], dtype=i64),  # need_ptr
        a([0, 3, 1, 4, 2, 5], dtype=i64),  # need_pos
        a([1, 1, 1], dtype=i64),  # sizes
        a([1, 1, 1], dtype=i64),  # traffic
        a([2, 1, 0], dtype=i64),  # rank
    )
    for by_threshold in (0, 1):
        first_keeping_minimum(a([0], dtype=i64), 1, *facts, by_threshold)
