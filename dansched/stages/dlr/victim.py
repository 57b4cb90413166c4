"""Victim rules of Stage 2 (paper Eqs. 25-31) and the LRU rule of the Table 4 ablation.

All rules pick from the victim pool ``V_r`` (Eq. 25): buffers resident in the tier
of the requested buffer, minus the buffers the current event needs. Distances are
counted in positions of the (original-node) schedule.

- :func:`eager_flush` (L0 tiers): farthest next need first (Eq. 26).
- :func:`cost_aware` (L1/UB): largest ``score(b,k) = d(b,k) / (lambda_byte*T + lambda_cyc*S + eps)``
  (Eqs. 27-31), with the reuse distance ``d`` (:func:`reuse_distance`), the spill's
  extra traffic ``T`` (:func:`dansched.simulate.spill_traffic`: ``Size`` for a buffer
  backed by a COPY_IN, ``2*Size`` otherwise) and its cycles ``S`` (:func:`spill_cycles`, Eq. 8).
- :func:`space_time` (our extension): ``score * Size``, the space-time freed per unit
  of cost, which stops the paper's rule from evicting many small buffers where one
  large buffer would do.
- :func:`lru`: least recently used first.
- :class:`RecencyAware` (issue 14, victims chosen with time in mind): the cost-aware
  score divided by ``max(1, W / (k - last_use(b) + 1))``, so a buffer used within the
  last ``W`` positions costs more to evict the more recently it was used. Its reload
  then lands on addresses whose last reader finished long ago instead of on those of
  the operation just before; named ``recency-<W>`` (:func:`victim_rule`).

Every rule breaks ties deterministically (then larger size, then lower buffer index).

>>> round(score(reuse_distance=10, spill_traffic=128, spill_cycles=406), 4)  # 10 / (128 + 0.01 * 406)
0.0757
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from ...simulate import spill_traffic

__all__ = [
    "INF",
    "LAMBDA_BYTE",
    "LAMBDA_CYC",
    "EPS",
    "reuse_distance",
    "spill_traffic",
    "spill_cycles",
    "score",
    "eager_flush",
    "cost_aware",
    "space_time",
    "lru",
    "RecencyAware",
    "RULES",
    "VictimRule",
    "victim_rule",
    "is_victim_rule",
]

INF = float("inf")
LAMBDA_BYTE = 1.0
LAMBDA_CYC = 0.01  # cycles matter only as a tie-breaker after traffic (the Problem-2 objective)
EPS = 1e-9

# A rule: (pool, next_need, last_use, sizes, traffic, cycles, k) -> victim buffer index
VictimRule = Callable[
    [Iterable[int], Callable[[int], float], Sequence[int], Sequence[int], Sequence[int], Sequence[int], int], int
]


def reuse_distance(next_need: float, k: int) -> float:
    """Reuse distance ``d(b,k) = nu(b,k) - k``, or infinity without a future need (Eq. 27)."""
    return INF if next_need == INF else next_need - k


def spill_cycles(size: int, backed: bool, alpha: int, beta: int) -> int:
    """Serialization cycles of one spill, ``c_out + c_in`` with ``alpha + beta*Size`` each (Eqs. 8, 29);
    the SPILL_OUT of a backed buffer costs nothing."""
    one = alpha + beta * int(size)
    return one if backed else 2 * one


def score(
    reuse_distance: float,
    spill_traffic: float,
    spill_cycles: float,
    lambda_byte: float = LAMBDA_BYTE,
    lambda_cyc: float = LAMBDA_CYC,
) -> float:
    """``score(b,k) = d(b,k) / (lambda_byte*T + lambda_cyc*S + eps)`` (Eq. 30), with ``d`` the
    reuse distance, ``T`` the spill traffic and ``S`` the spill cycles."""
    return reuse_distance / (lambda_byte * spill_traffic + lambda_cyc * spill_cycles + EPS)


def _argmax(pool: Iterable[int], key: Callable[[int], tuple]) -> int:
    best = -1
    best_key = None
    for b in pool:
        kb = key(b)
        if best_key is None or kb > best_key:
            best, best_key = b, kb
    if best < 0:
        raise LookupError("empty victim pool")
    return best


def eager_flush(pool, next_need, last_use, sizes, traffic, cycles, k) -> int:
    """L0 rule (Eq. 26): the buffer whose next need is farthest (no future need first)."""
    return _argmax(pool, lambda b: (next_need(b), sizes[b], -b))


def cost_aware(pool, next_need, last_use, sizes, traffic, cycles, k) -> int:
    """L1/UB rule (Eq. 31): ``argmax score(b,k)``."""
    return _argmax(pool, lambda b: (score(reuse_distance(next_need(b), k), traffic[b], cycles[b]), sizes[b], -b))


def space_time(pool, next_need, last_use, sizes, traffic, cycles, k) -> int:
    """``argmax Size * score(b,k)``: units times positions freed per unit of cost."""
    return _argmax(
        pool, lambda b: (sizes[b] * score(reuse_distance(next_need(b), k), traffic[b], cycles[b]), sizes[b], -b)
    )


def lru(pool, next_need, last_use, sizes, traffic, cycles, k) -> int:
    """Least recently used (ALLOC, use or SPILL_IN) first; the Table 4 baseline."""
    return _argmax(pool, lambda b: (-last_use[b], sizes[b], -b))


RULES: dict[str, VictimRule] = {
    "eager": eager_flush,
    "cost": cost_aware,
    "space-time": space_time,
    "lru": lru,
}


class RecencyAware:
    """The cost-aware rule with a recency penalty of window ``window`` positions (module
    docstring): ``argmax score(b,k) / penalty(b,k)``, ``penalty = max(1, W / (k - last_use(b) + 1))``."""

    prefix = "recency-"

    def __init__(self, window: int) -> None:
        if isinstance(window, bool) or not isinstance(window, int) or window < 1:
            raise ValueError(f"the recency window must be an integer >= 1, got {window!r}")
        self.window = window
        self.name = f"{self.prefix}{window}"

    def penalty(self, k: int, last_use: int) -> float:
        """How much more evicting a buffer last used at ``last_use`` costs at position ``k``."""
        return max(1.0, self.window / (k - last_use + 1))

    def __call__(self, pool, next_need, last_use, sizes, traffic, cycles, k) -> int:
        return _argmax(
            pool,
            lambda b: (
                score(reuse_distance(next_need(b), k), traffic[b], cycles[b]) / self.penalty(k, last_use[b]),
                sizes[b],
                -b,
            ),
        )


def victim_rule(name: str) -> VictimRule:
    """The rule called ``name``: a key of :data:`RULES` or ``recency-<W>`` (:class:`RecencyAware`).

    >>> victim_rule("recency-16").window
    16
    """
    if name in RULES:
        return RULES[name]
    if name.startswith(RecencyAware.prefix) and name[len(RecencyAware.prefix) :].isdigit():
        return RecencyAware(int(name[len(RecencyAware.prefix) :]))
    raise ValueError(f"unknown victim rule {name!r} (known: {', '.join(RULES)}, recency-<W>)")


def is_victim_rule(name: str) -> bool:
    """Whether :func:`victim_rule` knows ``name``."""
    try:
        victim_rule(name)
    except ValueError:
        return False
    return True
