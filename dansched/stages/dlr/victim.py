"""Victim rules of Stage 2 (paper Eqs. 25-31) and the LRU rule of the Table 4 ablation,
behind one interface (:class:`VictimRule`) and in one registry (:data:`RULES`).

All rules pick from the victim pool ``V_r`` (Eq. 25): buffers resident in the tier
of the requested buffer, minus the buffers the current event needs. Distances are
counted in positions of the (original-node) schedule.

- :class:`EagerFlush` (L0 tiers): farthest next need first (Eq. 26).
- :class:`CostAware` (L1/UB): largest ``score(b,k) = d(b,k) / (lambda_byte*T + lambda_cyc*S + eps)``
  (Eqs. 27-31), with the reuse distance ``d`` (:func:`reuse_distance`), the spill's
  extra traffic ``T`` (:func:`dansched.hardware.spill_traffic`: ``Size`` for a buffer
  backed by a COPY_IN, ``2*Size`` otherwise) and its cycles ``S`` (:func:`round_trip_cycles`, Eq. 8).
- :class:`SpaceTime` (our extension): ``score * Size``, the space-time freed per unit
  of cost, which stops the paper's rule from evicting many small buffers where one
  large buffer would do.
- :class:`Lru`: least recently used first.
- :class:`RecencyAware` (victims chosen with time in mind): the cost-aware
  score divided by ``max(1, W / (k - last_use(b) + 1))``, so a buffer used within the
  last ``W`` positions costs more to evict the more recently it was used. Its reload
  then lands on addresses whose last reader finished long ago instead of on those of
  the operation just before; named ``recency-<W>`` (:func:`victim_rule`).
- :class:`MinReload` (victims chosen with time in mind, traffic kept): among the victims that
  *keep the minimum* (evicting one now, then the farthest next need at every later eviction,
  spends no more reload traffic on the tier than evicting the farthest next need now), the
  least recently used (``min-reload``). It looks ahead along the tier's future needs
  (:class:`TierEvents`, :mod:`dansched.kernels.min_reload`), so it reads more facts than
  the others: every buffer's need positions, its tier, the tier's residents and the
  capacity the scan plans it for (:class:`VictimFacts`). Its tie-break ``ahead``
  (``min-reload-ahead``) puts the buffers of the running operations last.
- :class:`AheadOfNeed` (evict ahead of need): another rule's choice among the victims that
  no *running* operation uses (:attr:`VictimFacts.running`: the operations that run while
  the event waits, the previous one on its pipe among them), the whole pool only when every
  victim is running; named ``ahead-<rule>``. A running operation's buffer can leave only
  when that operation ends, and the load that takes its room waits for that write-out: the
  engine that needs the load idles for the write-out and the load. A victim last used
  earlier leaves while the running operation computes, and the load follows it there.

Every rule breaks ties deterministically (then larger size, then lower buffer index).

A rule answers two questions (:class:`VictimRule`): which buffer of a pool to evict
(``pick``, the greedy eviction of Algorithm 2) and what evicting one buffer costs
(``cost``, summed over the victims of a window by the window eviction of
:mod:`dansched.stages.dlr.scan`). A new rule gives both; nothing else in the scan
knows which rule it runs. :data:`VICTIMS` maps the ``--victim`` choices to the L1/UB
rules Stage 2 tries for each.

>>> round(score(reuse_distance=10, spill_traffic=128, round_trip_cycles=406), 4)  # 10 / (128 + 0.01 * 406)
0.0757
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from ...instance import KIND_OP, Instance
from ...kernels.csr import csr_of_lists, int64_array
from ...kernels.min_reload import NONE, first_keeping_minimum

__all__ = [
    "INF",
    "LAMBDA_BYTE",
    "LAMBDA_CYC",
    "EPS",
    "reuse_distance",
    "round_trip_cycles",
    "score",
    "inverse_score",
    "VictimFacts",
    "VictimRule",
    "EagerFlush",
    "CostAware",
    "SpaceTime",
    "Lru",
    "RecencyAware",
    "TierEvents",
    "tier_events",
    "TIE_BREAKS",
    "MinReload",
    "AheadOfNeed",
    "RUNNING_COST",
    "running_buffers",
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


def round_trip_cycles(size: int, backed: bool, alpha: int, beta: int) -> int:
    """Serialization cycles of one spill, ``c_out + c_in`` with ``alpha + beta*Size`` each (Eqs. 8, 29);
    the SPILL_OUT of a backed buffer costs nothing."""
    one = alpha + beta * int(size)
    return one if backed else 2 * one


def score(
    reuse_distance: float,
    spill_traffic: float,
    round_trip_cycles: float,
    lambda_byte: float = LAMBDA_BYTE,
    lambda_cyc: float = LAMBDA_CYC,
) -> float:
    """``score(b,k) = d(b,k) / (lambda_byte*T + lambda_cyc*S + eps)`` (Eq. 30), with ``d`` the
    reuse distance, ``T`` the spill traffic and ``S`` the spill cycles."""
    return reuse_distance / (lambda_byte * spill_traffic + lambda_cyc * round_trip_cycles + EPS)


def inverse_score(reuse_distance: float, spill_traffic: float, round_trip_cycles: float) -> float:
    """``1/score(b,k)`` (Eq. 30 inverted, so that the costs of several victims add up); 0 for a
    buffer never needed again.

    >>> inverse_score(10, 128, 406) == (128 + 0.01 * 406 + EPS) / 10
    True
    """
    if reuse_distance == INF:
        return 0.0
    return (LAMBDA_BYTE * spill_traffic + LAMBDA_CYC * round_trip_cycles + EPS) / reuse_distance


@dataclass(frozen=True)
class VictimFacts:
    """What a victim rule may read about the buffers (lists indexed by buffer): ``next_need``
    gives ``nu(b,k)`` (Eq. 26) at the current position, ``last_use`` the position of the
    last ALLOC, use or SPILL_IN (kept up to date by the scan), ``sizes``, and the spill
    ``traffic`` and ``cycles`` of one spill of each buffer.

    The rules that look further ahead (:class:`MinReload`) also read ``needs``, every
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
    running: Callable[[int], Collection[int]] | None = None
    memo: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def is_running(self, b: int, k: int) -> bool:
        """Whether an operation that runs while the event at ``k`` waits uses ``b``."""
        return self.running is not None and b in self.running(k)


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


@dataclass(frozen=True)
class TierEvents:
    """The future of one tier as the kernels of :mod:`dansched.kernels.min_reload` read it:
    the positions ``pos`` (ascending) where some of its buffers must be resident; per
    position ``e`` its entries ``ptr[e]..ptr[e+1]``, each a buffer ``buf[i]`` (largest first,
    then lowest index: the order the scan loads them in) and ``after[i]``, that buffer's next
    need after ``pos[e]`` (:data:`~dansched.kernels.min_reload.NONE` at its last need, its
    FREE); ``cap[e]``, the units the scan plans the tier for at ``pos[e]``."""

    pos: np.ndarray
    ptr: np.ndarray
    buf: np.ndarray
    after: np.ndarray
    cap: np.ndarray

    def event_at(self, k: int) -> int:
        """The index of position ``k`` in ``pos``."""
        e = int(np.searchsorted(self.pos, k))
        if e == len(self.pos) or int(self.pos[e]) != k:
            raise ValueError(f"no buffer of this tier is needed at position {k}")
        return e


def tier_events(
    needs: Sequence[Sequence[int]],
    tiers: Sequence[int],
    sizes: Sequence[int],
    tier: int,
    capacity: Callable[[int, int], int],
) -> TierEvents:
    """The :class:`TierEvents` of tier ``tier`` from the need positions of every buffer."""
    entries = sorted(
        (j, -sizes[b], b, ns[i + 1] if i + 1 < len(ns) else NONE)
        for b, ns in enumerate(needs)
        if tiers[b] == tier
        for i, j in enumerate(ns)
    )
    pos: list[int] = []
    ptr = [0]
    for i, (j, _s, _b, _a) in enumerate(entries):
        if not pos or pos[-1] != j:
            if pos:
                ptr.append(i)
            pos.append(j)
    ptr.append(len(entries))
    if not pos:
        ptr = [0]
    return TierEvents(
        int64_array(pos),
        int64_array(ptr),
        int64_array([e[2] for e in entries]),
        int64_array([e[3] for e in entries]),
        int64_array([capacity(tier, j) for j in pos]),
    )


@dataclass(frozen=True)
class _Lookahead:
    """What the kernels of :mod:`dansched.kernels.min_reload` read about one tier at position
    ``k``: its residents, the index ``e0`` of ``k`` in its events, the events, every buffer's
    need positions (CSR), sizes, spill traffic and farthest-next-use rank, and whether the
    tier's buffers have one size and one traffic (``uniform``)."""

    residents: np.ndarray
    e0: int
    events: TierEvents
    need_ptr: np.ndarray
    need_pos: np.ndarray
    sizes: np.ndarray
    traffic: np.ndarray
    rank: np.ndarray
    uniform: bool

    def first_keeping_minimum(self, candidates: Sequence[int], f: int) -> int:
        ev = self.events
        return first_keeping_minimum(
            int64_array(candidates),
            f,
            self.residents,
            self.e0,
            ev.pos,
            ev.ptr,
            ev.buf,
            ev.after,
            ev.cap,
            self.need_ptr,
            self.need_pos,
            self.sizes,
            self.traffic,
            self.rank,
            int(self.uniform),
        )


def _lru_key(facts: VictimFacts, k: int, b: int) -> float:
    return facts.last_use[b]


def _idle_key(facts: VictimFacts, k: int, b: int) -> float:
    return facts.last_use[b] - facts.next_need(b)


def _backed_key(facts: VictimFacts, k: int, b: int) -> float:
    """Backed buffers first (their write-out takes no cycles: nothing waits on it), then LRU."""
    unbacked = facts.traffic[b] > facts.sizes[b]
    return facts.last_use[b] + (2.0**52 if unbacked else 0.0)


def _ahead_key(facts: VictimFacts, k: int, b: int) -> float:
    """Buffers no running operation uses first (their write-out need not wait for one), then LRU."""
    return facts.last_use[b] + (2.0**52 if facts.is_running(b, k) else 0.0)


# the timing tie-breaks of :class:`MinReload`: the smaller key is evicted first. ``lru`` is the
# registered rule's (``min-reload``); ``idle`` was measured against it on the official cases
# (benchmarks/results/bench_victim.md): after Stage 3 it is slower on four of five with the
# scan's best fit, and slower in total with either room
TIE_BREAKS: dict[str, Callable[[VictimFacts, int, int], float]] = {
    "lru": _lru_key,
    "idle": _idle_key,
    "backed": _backed_key,
    "ahead": _ahead_key,
}


class MinReload:
    """Among the victims that keep the tier's remaining reload traffic at its minimum, the
    first by a timing tie-break (``lru``: the least recently used; ``idle``: the longest idle
    stretch from its last use to its next need, ``nu(b,k) - last_use(b)``); then larger size,
    then lower index. Named ``min-reload`` (LRU, the registered rule) and
    ``min-reload-<tie-break>``.

    *The minimum* is that of the farthest-next-use continuation (Eq. 26, Belady): the traffic
    the scan spends on the tier from position ``k`` on if it evicts the farthest-next-use
    buffer ``f`` now and at every later eviction. A candidate ``p`` *keeps the minimum* when
    evicting ``p`` now, then continuing farthest-next-use, spends no more. Continuations count
    units against ``capacity(t, j)`` (sizes may differ: a victim smaller than the room wanted
    is followed by more victims), load each position's missing buffers largest first, and pay a
    buffer's spill traffic (``Size``, or ``2*Size`` when not backed) at each eviction (a spilled
    buffer comes back before its next need, its FREE included). Both continuations run side by
    side until they hold the same buffers (:mod:`dansched.kernels.min_reload`); the candidates
    are tried in tie-break order and the first that keeps the minimum is evicted (``f`` keeps
    it by definition).

    *One size, one traffic.* When every buffer of the tier has the same size and spill traffic,
    farthest-next-use is optimal, so the candidates are exactly the first victims of the
    least-traffic eviction sequences; and they are exactly those whose next need is at or
    after some position ``m``, which a binary search over the candidates' next needs finds.
    Proof: keeping a buffer from one need to the next is an interval; an eviction sequence
    keeps a set of intervals whose load stays within the tier's rooms at every position, and
    the least traffic keeps the most intervals, a maximum-weight flow along the positions
    (intervals are arcs of weight 1 that skip the positions they span; a position's own arc
    carries its unused rooms). Let ``F`` be the flow of the farthest-next-use continuation.
    Evicting ``p`` at ``k`` is optimal exactly when some optimum leaves out ``p``'s interval
    ``[k, nu(p))``, i.e. when the residual graph of ``F`` has a walk of weight ``+1`` from
    ``k`` to ``nu(p)`` (closing a cycle of weight 0 with ``p``'s interval reversed). Every
    position between ``k`` and ``nu(p)`` is spanned by ``p``'s interval itself, so the
    residual graph can always move forward from any such position to ``nu(p)`` at no cost:
    if ``p`` has such a walk, so has every ``q`` with ``nu(q) >= nu(p)``. The candidates are
    thus upward closed in their next need. ``tests/stages/dlr/test_min_reload.py`` checks both
    claims against a brute force. With several sizes or traffics every candidate is tested.

    Evicting ``b`` costs nothing when it keeps the minimum and its spill traffic otherwise
    (each victim of a window taken alone), plus a term below one unit of traffic that orders
    the victims by the tie-break."""

    prefix = "min-reload"

    def __init__(self, tie_break: str = "lru") -> None:
        if tie_break not in TIE_BREAKS:
            raise ValueError(f"unknown tie-break {tie_break!r} (known: {', '.join(TIE_BREAKS)})")
        self.tie_break = tie_break
        self.name = self.prefix if tie_break == "lru" else f"{self.prefix}-{tie_break}"
        self._key = TIE_BREAKS[tie_break]

    def _ranked(self, pool: Iterable[int], facts: VictimFacts, k: int) -> list[int]:
        key, sizes = self._key, facts.sizes
        return sorted(pool, key=lambda b: (key(facts, k, b), -sizes[b], b))

    def _check(self, facts: VictimFacts) -> tuple[Callable[[int], Collection[int]], Callable[[int, int], int]]:
        """The facts' ``residents`` and ``capacity``; ``ValueError`` when the scan gave too few facts."""
        if facts.residents is None or facts.capacity is None or not facts.needs or not facts.tiers:
            raise ValueError(f"{self.name} needs the facts needs, tiers, residents and capacity")
        return facts.residents, facts.capacity

    def _lookahead(self, facts: VictimFacts, tier: int, k: int) -> _Lookahead:
        """The kernels' view of ``tier`` at ``k`` (what does not change during the scan is
        built once, in ``facts.memo``)."""
        residents, capacity = self._check(facts)
        memo = facts.memo
        if "needs" not in memo:
            sizes = facts.sizes
            rank = np.empty(len(sizes), dtype=np.int64)  # larger size, then lower index: higher rank
            rank[sorted(range(len(sizes)), key=lambda b: (sizes[b], -b))] = np.arange(len(sizes))
            memo["needs"] = (*csr_of_lists(facts.needs), int64_array(sizes), int64_array(facts.traffic), rank)
        key = f"tier {tier}"
        if key not in memo:
            kinds = {(facts.sizes[b], facts.traffic[b]) for b, t in enumerate(facts.tiers) if t == tier}
            memo[key] = (tier_events(facts.needs, facts.tiers, facts.sizes, tier, capacity), len(kinds) <= 1)
        events, uniform = memo[key]
        need_ptr, need_pos, sizes_a, traffic_a, rank_a = memo["needs"]
        return _Lookahead(
            int64_array(residents(tier)),
            events.event_at(k),
            events,
            need_ptr,
            need_pos,
            sizes_a,
            traffic_a,
            rank_a,
            uniform,
        )

    def pick(self, pool: Iterable[int], facts: VictimFacts, k: int) -> int:
        self._check(facts)
        pool = list(pool)
        f = RULES["eager"].pick(pool, facts, k)
        ranked = self._ranked(pool, facts, k)
        ahead = ranked.index(f)
        if ahead == 0:
            return f
        c = self._lookahead(facts, facts.tiers[f], k).first_keeping_minimum(ranked[:ahead], f)
        return f if c < 0 else ranked[c]

    def cost(self, b: int, facts: VictimFacts, k: int) -> float:
        look = self._lookahead(facts, facts.tiers[b], k)
        ev = look.events
        residents = look.residents.tolist()
        pinned = set(ev.buf[ev.ptr[look.e0] : ev.ptr[look.e0 + 1]].tolist())
        f = RULES["eager"].pick((c for c in residents if c not in pinned), facts, k)
        keeps = b == f or look.first_keeping_minimum([b], f) == 0
        ranked = self._ranked(residents, facts, k)
        return (0 if keeps else facts.traffic[b]) + ranked.index(b) / (len(ranked) + 1) ** 2


def running_buffers(inst: Instance, order: Sequence[int]) -> Callable[[int], frozenset[int]]:
    """``running(k)`` for a scan along ``order`` (instance nodes, topological; positions of
    ``order``): the buffers (indices) of the operations that run while the event at position
    ``k`` waits for its room. With ``v`` the first operation at or after ``k``, those are the
    previous operation on ``v``'s pipe (``v`` starts after it ends) and the operations ``v``
    depends on directly (their results feed it: they end just before it starts); nothing
    after the last operation. Built once, answered per position on demand."""
    L = inst.lists()
    kind, pipe, bufs, pred = L.kind, L.pipe, L.bufs, L.pred
    n = len(order)
    next_op = [n] * (n + 1)  # the position of the first operation at or after each position
    for i in range(n - 1, -1, -1):
        next_op[i] = i if kind[order[i]] == KIND_OP else next_op[i + 1]
    before: dict[int, int] = {}  # operation -> the previous operation on its pipe in ``order``
    last: dict[int, int] = {}
    for v in order:
        if kind[v] == KIND_OP:
            if pipe[v] in last:
                before[v] = last[pipe[v]]
            last[pipe[v]] = v
    memo: dict[int, frozenset[int]] = {}

    def running(k: int) -> frozenset[int]:
        j = next_op[min(max(k, 0), n)]
        if j >= n:
            return frozenset()
        v = order[j]
        if v not in memo:
            ops = [u for u in pred[v] if kind[u] == KIND_OP]
            if v in before:
                ops.append(before[v])
            memo[v] = frozenset(b for u in ops for b in bufs[u])
        return memo[v]

    return running


class AheadOfNeed:
    """Evict ahead of need (module docstring): the choice of ``base`` among the pool's
    buffers that no running operation uses (:attr:`VictimFacts.running`), the whole pool
    only when every victim is running; named ``ahead-<base>``. Evicting a running buffer
    costs what ``base`` says plus :data:`RUNNING_COST`, so a window avoids running buffers
    wherever another window exists."""

    prefix = "ahead-"

    def __init__(self, base: VictimRule) -> None:
        self.base = base
        self.name = f"{self.prefix}{base.name}"

    def pick(self, pool: Iterable[int], facts: VictimFacts, k: int) -> int:
        pool = list(pool)
        idle = [b for b in pool if not facts.is_running(b, k)]
        return self.base.pick(idle or pool, facts, k)

    def cost(self, b: int, facts: VictimFacts, k: int) -> float:
        return self.base.cost(b, facts, k) + (RUNNING_COST if facts.is_running(b, k) else 0.0)


RUNNING_COST = 2.0**40  # above any cost a rule gives a window's victims: a running buffer is the last resort


RULES: dict[str, VictimRule] = {
    rule.name: rule for rule in (EagerFlush(), CostAware(), SpaceTime(), Lru(), MinReload())
}

# the ``--victim`` choices (CLI, SolveOptions.victim) -> the L1/UB rules Stage 2 tries for each
VICTIMS: dict[str, tuple[str, ...]] = {"cost": ("score", "space-time"), "lru": ("lru",)}


def victim_rule(name: str) -> VictimRule:
    """The rule called ``name``: a key of :data:`RULES`, ``recency-<W>`` (:class:`RecencyAware`),
    ``min-reload-<tie-break>`` (:class:`MinReload`, a key of :data:`TIE_BREAKS`) or
    ``ahead-<rule>`` (:class:`AheadOfNeed` over any of these).

    >>> victim_rule("recency-16").window
    16
    >>> victim_rule("ahead-min-reload").base.name
    'min-reload'
    """
    if name in RULES:
        return RULES[name]
    if name.startswith(RecencyAware.prefix) and name[len(RecencyAware.prefix) :].isdigit():
        return RecencyAware(int(name[len(RecencyAware.prefix) :]))
    if name.startswith(MinReload.prefix + "-") and name[len(MinReload.prefix) + 1 :] in TIE_BREAKS:
        return MinReload(name[len(MinReload.prefix) + 1 :])
    if name.startswith(AheadOfNeed.prefix) and len(name) > len(AheadOfNeed.prefix):
        return AheadOfNeed(victim_rule(name[len(AheadOfNeed.prefix) :]))
    known = f"{', '.join(RULES)}, recency-<W>, min-reload-<{'|'.join(TIE_BREAKS)}>, ahead-<rule>"
    raise ValueError(f"unknown victim rule {name!r} (known: {known})")


def is_victim_rule(name: str) -> bool:
    """Whether :func:`victim_rule` knows ``name``."""
    try:
        victim_rule(name)
    except ValueError:
        return False
    return True
