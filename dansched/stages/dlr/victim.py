"""Victim rules of Stage 2 (paper Eqs. 25-31) and the LRU rule of the Table 4 ablation,
behind one interface (:class:`VictimRule`) and in one registry (:data:`RULES`).

All rules pick from the victim pool ``V_r`` (Eq. 25): buffers resident in the tier
of the requested buffer, minus the buffers the current event needs. Distances are
counted in positions of the (original-node) schedule.

- :class:`EagerFlush` (L0 tiers): farthest next need first (Eq. 26).
- :class:`CostAware` (L1/UB): largest ``score(b,k) = d(b,k) / (lambda_byte*T + lambda_cyc*S + eps)``
  (Eqs. 27-31), with the reuse distance ``d`` (:func:`reuse_distance`), the spill's
  extra traffic ``T`` (:func:`dansched.simulate.spill_traffic`: ``Size`` for a buffer
  backed by a COPY_IN, ``2*Size`` otherwise) and its cycles ``S`` (:func:`spill_cycles`, Eq. 8).
- :class:`SpaceTime` (our extension): ``score * Size``, the space-time freed per unit
  of cost, which stops the paper's rule from evicting many small buffers where one
  large buffer would do.
- :class:`Lru`: least recently used first.
- :class:`RecencyAware` (victims chosen with time in mind): the cost-aware
  score divided by ``max(1, W / (k - last_use(b) + 1))``, so a buffer used within the
  last ``W`` positions costs more to evict the more recently it was used. Its reload
  then lands on addresses whose last reader finished long ago instead of on those of
  the operation just before; named ``recency-<W>`` (:func:`victim_rule`).

Every rule breaks ties deterministically (then larger size, then lower buffer index).

A rule answers two questions (:class:`VictimRule`): which buffer of a pool to evict
(``pick``, the greedy eviction of Algorithm 2) and what evicting one buffer costs
(``cost``, summed over the victims of a window by the window eviction of
:mod:`dansched.stages.dlr.scan`). A new rule gives both; nothing else in the scan
knows which rule it runs. :data:`VICTIMS` maps the ``--victim`` choices to the L1/UB
rules Stage 2 tries for each.

>>> round(score(reuse_distance=10, spill_traffic=128, spill_cycles=406), 4)  # 10 / (128 + 0.01 * 406)
0.0757
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

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
    "inverse_score",
    "VictimFacts",
    "VictimRule",
    "EagerFlush",
    "CostAware",
    "SpaceTime",
    "Lru",
    "RecencyAware",
    "RULES",
    "VICTIMS",
    "victim_rule",
    "is_victim_rule",
]

INF = float("inf")
LAMBDA_BYTE = 1.0
LAMBDA_CYC = 0.01  # cycles matter only as a tie-breaker after traffic (the Problem-2 objective)
EPS = 1e-9


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


def inverse_score(reuse_distance: float, spill_traffic: float, spill_cycles: float) -> float:
    """``1/score(b,k)`` (Eq. 30 inverted, so that the costs of several victims add up); 0 for a
    buffer never needed again.

    >>> inverse_score(10, 128, 406) == (128 + 0.01 * 406 + EPS) / 10
    True
    """
    if reuse_distance == INF:
        return 0.0
    return (LAMBDA_BYTE * spill_traffic + LAMBDA_CYC * spill_cycles + EPS) / reuse_distance


@dataclass(frozen=True)
class VictimFacts:
    """What a victim rule may read about the buffers (lists indexed by buffer): ``next_need``
    gives ``nu(b,k)`` (Eq. 26) at the current position, ``last_use`` the position of the
    last ALLOC, use or SPILL_IN (kept up to date by the scan), ``sizes``, and the spill
    ``traffic`` and ``cycles`` of one spill of each buffer.

    The rules that look further ahead also read ``needs``, every
    position where each buffer must be resident (:func:`dansched.graph.needs_positions`: its
    ALLOC, its uses and its FREE), ``tiers``, each buffer's tier index, ``residents(t)``, the
    buffers resident in tier ``t`` now, and ``capacity(t, j)``, the units the scan plans tier
    ``t`` for at position ``j`` (a function of ``t`` and ``j`` alone, fixed for the scan).
    ``memo`` holds what such a rule derives from these once per scan."""

    next_need: Callable[[int], float]
    last_use: Sequence[int]
    sizes: Sequence[int]
    traffic: Sequence[int]
    cycles: Sequence[int]
    needs: Sequence[Sequence[int]] = ()
    tiers: Sequence[int] = ()
    residents: Callable[[int], Collection[int]] | None = None
    capacity: Callable[[int, int], int] | None = None
    memo: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)


class VictimRule(Protocol):
    """A victim rule: ``pick`` chooses the buffer of ``pool`` (never empty) to evict at
    position ``k``; ``cost`` is what evicting ``b`` there costs, a non-negative number that
    adds up over the victims of one window (smaller is cheaper)."""

    @property
    def name(self) -> str: ...

    def pick(self, pool: Iterable[int], facts: VictimFacts, k: int) -> int: ...

    def cost(self, b: int, facts: VictimFacts, k: int) -> float: ...


def _argmax(pool: Iterable[int], key: Callable[[int], tuple[Any, ...]]) -> int:
    best = -1
    best_key = None
    for b in pool:
        kb = key(b)
        if best_key is None or kb > best_key:
            best, best_key = b, kb
    if best < 0:
        raise LookupError("empty victim pool")
    return best


class EagerFlush:
    """L0 rule (Eq. 26): the buffer whose next need is farthest (no future need first);
    evicting costs ``1/d(b,k)``."""

    name = "eager"

    def pick(self, pool: Iterable[int], facts: VictimFacts, k: int) -> int:
        nn, sizes = facts.next_need, facts.sizes
        return _argmax(pool, lambda b: (nn(b), sizes[b], -b))

    def cost(self, b: int, facts: VictimFacts, k: int) -> float:
        dist = reuse_distance(facts.next_need(b), k)
        return 0.0 if dist == INF else 1.0 / dist


class CostAware:
    """L1/UB rule (Eq. 31): ``argmax score(b,k)``, named ``score``; evicting costs
    ``1/score(b,k)``."""

    name = "score"

    def pick(self, pool: Iterable[int], facts: VictimFacts, k: int) -> int:
        nn, sizes, traffic, cycles = facts.next_need, facts.sizes, facts.traffic, facts.cycles
        return _argmax(pool, lambda b: (score(reuse_distance(nn(b), k), traffic[b], cycles[b]), sizes[b], -b))

    def cost(self, b: int, facts: VictimFacts, k: int) -> float:
        return inverse_score(reuse_distance(facts.next_need(b), k), facts.traffic[b], facts.cycles[b])


class SpaceTime(CostAware):
    """``argmax Size * score(b,k)``: units times positions freed per unit of cost. In a
    window the units freed are those of the window, whoever holds them, so evicting costs
    ``1/score(b,k)`` as for :class:`CostAware`."""

    name = "space-time"

    def pick(self, pool: Iterable[int], facts: VictimFacts, k: int) -> int:
        nn, sizes, traffic, cycles = facts.next_need, facts.sizes, facts.traffic, facts.cycles
        return _argmax(
            pool, lambda b: (sizes[b] * score(reuse_distance(nn(b), k), traffic[b], cycles[b]), sizes[b], -b)
        )


class Lru:
    """Least recently used (ALLOC, use or SPILL_IN) first, the Table 4 baseline; evicting
    costs ``1/(k - last_use(b) + 1)``, more the more recent the use."""

    name = "lru"

    def pick(self, pool: Iterable[int], facts: VictimFacts, k: int) -> int:
        last_use, sizes = facts.last_use, facts.sizes
        return _argmax(pool, lambda b: (-last_use[b], sizes[b], -b))

    def cost(self, b: int, facts: VictimFacts, k: int) -> float:
        return 1.0 / (k - facts.last_use[b] + 1)


class RecencyAware:
    """The cost-aware rule with a recency penalty of window ``window`` positions (module
    docstring): ``argmax score(b,k) / penalty(b,k)``, ``penalty = max(1, W / (k - last_use(b) + 1))``;
    evicting costs ``(1/score(b,k) + eps) * penalty(b,k)`` (``eps``: the penalty orders
    never-needed buffers too)."""

    prefix = "recency-"

    def __init__(self, window: int) -> None:
        if isinstance(window, bool) or not isinstance(window, int) or window < 1:
            raise ValueError(f"the recency window must be an integer >= 1, got {window!r}")
        self.window = window
        self.name = f"{self.prefix}{window}"

    def penalty(self, k: int, last_use: int) -> float:
        """How much more evicting a buffer last used at ``last_use`` costs at position ``k``."""
        return max(1.0, self.window / (k - last_use + 1))

    def pick(self, pool: Iterable[int], facts: VictimFacts, k: int) -> int:
        nn, last_use, sizes, traffic, cycles = facts.next_need, facts.last_use, facts.sizes, facts.traffic, facts.cycles
        return _argmax(
            pool,
            lambda b: (
                score(reuse_distance(nn(b), k), traffic[b], cycles[b]) / self.penalty(k, last_use[b]),
                sizes[b],
                -b,
            ),
        )

    def cost(self, b: int, facts: VictimFacts, k: int) -> float:
        base = inverse_score(reuse_distance(facts.next_need(b), k), facts.traffic[b], facts.cycles[b])
        return (base + EPS) * self.penalty(k, facts.last_use[b])


RULES: dict[str, VictimRule] = {rule.name: rule for rule in (EagerFlush(), CostAware(), SpaceTime(), Lru())}

# the ``--victim`` choices (CLI, SolveOptions.victim) -> the L1/UB rules Stage 2 tries for each
VICTIMS: dict[str, tuple[str, ...]] = {"cost": ("score", "space-time"), "lru": ("lru",)}


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
