"""Belady's farthest-next-use replacement on an access sequence: the compiled core of
:func:`dansched.stages.dlr.wave_search.source_loads` (which documents its use).

Each tier keeps at most ``slots[tier]`` items; on a miss with the tier full, the item whose
next use is farthest ahead leaves. An item's next use after position ``i`` is the position
of its next access, or ``len(seq) + i`` when there is none; those values are distinct, so
the evicted item is the same whatever the heap.
"""

from __future__ import annotations

import numpy as np

from .jit import compiled

__all__ = ["belady_misses", "warm"]


@compiled
def belady_misses(seq: np.ndarray, seq_tier: np.ndarray, slots: np.ndarray, num_items: int) -> int:
    """Misses of ``seq`` (item ids below ``num_items``; ``seq_tier[i]`` the tier of
    ``seq[i]``) under farthest-next-use replacement with ``slots[t]`` items per tier."""
    n = len(seq)
    nxt = np.empty(n, dtype=np.int64)
    last = np.full(num_items, -1, dtype=np.int64)
    for i in range(n - 1, -1, -1):
        s = seq[i]
        nxt[i] = last[s] if last[s] >= 0 else n + i
        last[s] = i
    tiers = len(slots)
    heap = np.empty((tiers, n + 1), dtype=np.int64)  # per tier: a max-heap of next-use positions
    size = np.zeros(tiers, dtype=np.int64)
    held = np.zeros(tiers, dtype=np.int64)  # items cached per tier
    cur = np.full(num_items, -1, dtype=np.int64)  # item -> its next use while cached, else -1
    misses = 0
    for i in range(n):
        s = seq[i]
        t = seq_tier[i]
        if cur[s] < 0:
            misses += 1
            while held[t] >= slots[t]:
                top = heap[t, 0]  # pop the largest next use
                size[t] -= 1
                x = heap[t, size[t]]
                j = 0
                while True:
                    c = 2 * j + 1
                    if c >= size[t]:
                        break
                    if c + 1 < size[t] and heap[t, c + 1] > heap[t, c]:
                        c += 1
                    if heap[t, c] <= x:
                        break
                    heap[t, j] = heap[t, c]
                    j = c
                if size[t] > 0:
                    heap[t, j] = x
                victim = seq[top] if top < n else seq[top - n]
                if cur[victim] == top:  # else a stale entry of an item used since
                    cur[victim] = -1
                    held[t] -= 1
            held[t] += 1
        cur[s] = nxt[i]
        j = size[t]  # push nxt[i]
        size[t] += 1
        while j > 0:
            p = (j - 1) // 2
            if heap[t, p] >= nxt[i]:
                break
            heap[t, j] = heap[t, p]
            j = p
        heap[t, j] = nxt[i]
    return misses


def warm() -> None:
    """Compile (or load from the cache) this module's kernel: three accesses, one slot."""
    i64 = np.int64
    belady_misses(np.array([0, 1, 0], dtype=i64), np.array([0, 0, 0], dtype=i64), np.array([1], dtype=i64), 2)
