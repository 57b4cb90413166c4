"""The Python farthest-next-use replacement that the compiled one replaced (the body of
dansched/stages/dlr/wave_search.source_loads before the kernel): the oracle of
tests/test_kernels.py, kept as it was with dictionaries and heapq."""

from __future__ import annotations

import heapq
from collections.abc import Sequence


def belady_misses(seq: Sequence[int], seq_tier: Sequence[int], slots: dict[int, int]) -> int:
    """Misses of ``seq`` with ``slots[t]`` items per tier, the farthest next use evicted."""
    nxt = [0] * len(seq)
    last: dict[int, int] = {}
    for i in range(len(seq) - 1, -1, -1):
        nxt[i] = last.get(seq[i], len(seq) + i)
        last[seq[i]] = i
    cache: dict[int, dict[int, int]] = {t: {} for t in slots}  # tier -> item -> next use
    heaps: dict[int, list[tuple[int, int]]] = {t: [] for t in slots}
    loads = 0
    for i, s in enumerate(seq):
        t = seq_tier[i]
        c, h = cache[t], heaps[t]
        if s not in c:
            loads += 1
            while len(c) >= slots[t]:
                neg, victim = heapq.heappop(h)
                if c.get(victim) == -neg:
                    del c[victim]
        c[s] = nxt[i]
        heapq.heappush(h, (-nxt[i], s))
    return loads
