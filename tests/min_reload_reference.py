"""The remaining reload traffic of one tier, computed plainly: the oracle of the ``min-reload``
victim rule (dansched/stages/dlr/victim.py) and of its kernel (dansched/kernels/min_reload.py)
in tests/test_kernels.py and tests/stages/dlr/test_victim.py.

A tier is given by the need positions of its buffers (``needs[b]``, ascending: the ALLOC, the
uses, the FREE), their ``sizes`` and spill ``traffic`` and the units ``capacity(j)`` planned at
position ``j``. From position ``k`` with the buffers ``residents`` resident, after evicting
``first``, the tier walks every later position where a buffer is needed: it loads the missing
buffers of the position largest first (ties: lower index), evicting while one does not fit,
each eviction paying the victim's traffic (never a buffer the position needs; with none left
the tier over-fills), then the buffers whose last need it was leave.

- :func:`remaining_traffic`: farthest-next-use at every eviction (Belady), walked to the end
  with sets (no early stop, unlike the kernel's two continuations side by side); with
  ``every_choice``, the least traffic over every sequence of eviction choices (a brute
  force, memoised on the state).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from functools import cache


def next_need(needs: Sequence[Sequence[int]], b: int, j: int) -> float:
    """The first need of ``b`` after position ``j`` (infinity when none)."""
    return next((x for x in needs[b] if x > j), float("inf"))


def farthest(needs: Sequence[Sequence[int]], sizes: Sequence[int], pool: Sequence[int], j: int) -> int:
    """Farthest next need first, then larger size, then lower index (Eq. 26)."""
    return max(pool, key=lambda b: (next_need(needs, b, j), sizes[b], -b))


def remaining_traffic(
    needs: Sequence[Sequence[int]],
    sizes: Sequence[int],
    traffic: Sequence[int],
    capacity: Callable[[int], int],
    residents: Collection[int],
    k: int,
    first: int,
    every_choice: bool = False,
) -> int:
    """The traffic from ``k`` on when ``first`` is evicted now and the farthest next need at
    every later eviction; with ``every_choice``, the least over every eviction sequence that
    evicts ``first`` now (the brute force)."""

    def choose(pool: list[int], j: int) -> list[int]:
        return pool if every_choice else [farthest(needs, sizes, pool, j)]

    positions = sorted({j for ns in needs for j in ns if j >= k})
    at = {j: sorted((b for b, ns in enumerate(needs) if j in ns), key=lambda b: (-sizes[b], b)) for j in positions}
    if first in at[k] or first not in residents:
        raise ValueError("the first victim must be a resident the position does not need")

    @cache
    def best(e: int, i: int, held: frozenset[int]) -> int:
        if e == len(positions):
            return 0
        j = positions[e]
        need = at[j]
        if i == len(need):
            gone = {b for b in need if needs[b][-1] == j}
            return best(e + 1, 0, held - gone)
        x = need[i]
        if x in held or sum(sizes[b] for b in held) + sizes[x] <= capacity(j):
            return best(e, i + 1, held | {x})
        pool = sorted(b for b in held if b not in need)
        if not pool:  # nothing left to evict: over-fill
            return best(e, i + 1, held | {x})
        return min(traffic[v] + best(e, i, held - {v}) for v in choose(pool, j))

    start = frozenset(residents) - {first}
    return traffic[first] + best(0, 0, start)


def random_tier(rng, buffers: int, sizes: Sequence[int], capacity: int, ops: int) -> list[list[int]]:
    """The need positions of ``buffers`` buffers of one tier from a random program: each
    position ALLOCs the next buffer, FREEs a live one or runs an operation on one or two live
    buffers that fit in ``capacity`` together; the buffers are ALLOCed in index order and every
    one is FREEd by the end."""
    needs: list[list[int]] = [[] for _ in range(buffers)]
    live: list[int] = []
    fresh = list(range(buffers))
    at = steps = 0
    while fresh or live:
        r = rng.random()
        if fresh and (not live or r < 0.3):
            b = fresh.pop(0)
            live.append(b)
            needs[b].append(at)
        elif live and (r < 0.45 or (not fresh and steps > ops)):
            b = rng.choice(live)
            live.remove(b)
            needs[b].append(at)
        else:
            use = rng.sample(live, rng.randint(1, min(2, len(live))))
            while sum(sizes[b] for b in use) > capacity and len(use) > 1:
                use.pop()
            for b in use:
                needs[b].append(at)
        at += 1
        steps += 1
    return needs


def eviction_points(
    rng, needs: Sequence[Sequence[int]], sizes: Sequence[int], capacity: int
) -> list[tuple[int, frozenset[int], list[int]]]:
    """Walk the tier evicting at random; at each eviction, ``(position, residents, pool)``
    (the pool: the residents the position does not need)."""
    held: set[int] = set()
    out = []
    for j in sorted({j for ns in needs for j in ns}):
        need = sorted((b for b, ns in enumerate(needs) if j in ns), key=lambda b: (-sizes[b], b))
        for x in need:
            if x in held:
                continue
            while sum(sizes[b] for b in held) + sizes[x] > capacity:
                pool = sorted(b for b in held if b not in need)
                if not pool:
                    break
                out.append((j, frozenset(held), pool))
                held.discard(rng.choice(pool))
            held.add(x)
        held -= {b for b in need if needs[b][-1] == j}
    return out
