"""Fixed-order lower bound on extra DDR traffic (problems 2 and 3).

Fix the order of the instance's own nodes (spill nodes may go anywhere in between).
At each position ``k`` every buffer between its ALLOC and its FREE is live; the
buffers the node at ``k`` needs (its operands, or the buffer an ALLOC/FREE names)
must be resident, and the resident ones of a tier must fit its capacity. A live
buffer that is not resident at ``k`` has been spilled, and one spill of ``b``
keeps it out at most for one *gap* between two consecutive needs of ``b`` (its
ALLOC, each user, its FREE), at the price ``T(b)`` of docs/rules.md, section 5.3 (``Size``
when backed by a COPY_IN, ``2*Size`` otherwise). So, per tier, with ``x_g`` in
``[0, 1]`` for each gap::

    minimise  sum_g T(b_g) x_g
    s.t.      sum_{g covers k} Size(b_g) x_g  >=  live(k) - capacity     for every k

is a relaxation of every valid plan with that order (an LP; integral when all
sizes of a tier are equal, because each column covers consecutive positions).
Three bounds come from it:

- :func:`position_bound`: the largest over ``k`` of the cheapest fractional cover of
  the excess at ``k`` alone (closed form, exact rational arithmetic, always cheap);
- :func:`lp_bound`: the LP above, solved by HiGHS (:func:`scipy.optimize.linprog`);
  rows whose covering gaps and excess repeat are merged;
- :func:`mip_bound`: the integer program itself (:func:`scipy.optimize.milp`), whose
  optimum is the least traffic of any plan with that order when placement costs
  nothing (its dual bound when branch and bound stops early).

:func:`traffic_lower_bound` returns what HiGHS proves within a :class:`CoverBudget`
(counts: matrix size, branch-and-bound nodes, simplex iterations; so the same inputs
give the same bound on a busy machine), else the per-position cover, as a
:class:`~dansched.models.bounds.bound.Bound`. Fragmentation is ignored, so the bound holds for
every placement.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

import numpy as np

from ...checks import TIME_LIMIT, check_integers, check_type
from ...graph import needs_positions
from ...hardware import spill_traffic
from ...instance import Instance, require_instance
from ...params import CoverBudget
from .bound import Bound

__all__ = [
    "Gap",
    "TierCover",
    "tier_covers",
    "position_bound",
    "lp_bound",
    "mip_bound",
    "CoverResult",
    "cover_matrix",
    "cover_lp_bound",
    "quiet_native_stdout",
    "traffic_lower_bound",
]


@dataclass(frozen=True)
class Gap:
    """Positions ``(lo, hi)`` exclusive between two consecutive needs of buffer ``buf``."""

    buf: int
    lo: int
    hi: int


@dataclass
class TierCover:
    """The covering problem of one tier: its gaps, and per over-full position the
    indices of the gaps covering it and the excess to cover."""

    tier: int
    gaps: list[Gap]
    cost: list[int]
    size: list[int]
    rows: list[tuple[tuple[int, ...], int]]


def tier_covers(inst: Instance, order: Sequence[int]) -> list[TierCover]:
    """One :class:`TierCover` per tier that is over capacity somewhere along ``order``
    (original node ids; spill ids are dropped)."""
    order = [v for v in order if 0 <= v < inst.n]
    n = len(order)
    sizes = inst.buf_size.tolist()
    tiers = inst.buf_tier.tolist()
    backed = inst.buf_backed.tolist()
    needs = needs_positions(inst, order)
    out = []
    for t, name in enumerate(inst.hw.tiers):
        cap = inst.hw.capacity[name]
        bufs = [b for b in range(inst.num_buffers) if tiers[b] == t and needs[b]]
        live = np.zeros(n + 1, dtype=np.int64)
        for b in bufs:
            live[needs[b][0]] += sizes[b]
            live[needs[b][-1] + 1] -= sizes[b]
        live = np.cumsum(live)[:n]
        if len(live) == 0 or live.max() <= cap:
            continue
        gaps: list[Gap] = []
        for b in bufs:
            ns = needs[b]
            for a, z in zip(ns, ns[1:]):
                if z - a > 1:
                    gaps.append(Gap(b, a, z))
        # rows: positions where the tier is over capacity; the covering set changes only
        # at need positions, so walk positions with a sweep over gap starts/ends
        starts: dict[int, list[int]] = {}
        ends: dict[int, list[int]] = {}
        for gi, g in enumerate(gaps):
            starts.setdefault(g.lo + 1, []).append(gi)
            ends.setdefault(g.hi, []).append(gi)
        active: set[int] = set()
        rows: dict[tuple[int, ...], int] = {}
        key: tuple[int, ...] | None = None
        for k in range(n):
            changed = False
            for gi in ends.get(k, ()):
                active.discard(gi)
                changed = True
            for gi in starts.get(k, ()):
                active.add(gi)
                changed = True
            if changed or key is None:
                key = tuple(sorted(active))
            excess = int(live[k]) - cap
            if excess > 0:
                if rows.get(key, 0) < excess:
                    rows[key] = excess
        out.append(
            TierCover(
                t,
                gaps,
                [spill_traffic(sizes[g.buf], backed[g.buf]) for g in gaps],
                [sizes[g.buf] for g in gaps],
                sorted(rows.items()),
            )
        )
    return out


def _unit_prices(c: TierCover) -> list[int | Fraction]:
    """Each gap's price per unit (an integer when it divides, else an exact fraction)."""
    out: list[int | Fraction] = []
    for co, si in zip(c.cost, c.size):
        q, r = divmod(co, si)
        out.append(q if r == 0 else Fraction(co, si))
    return out


def _price_ranks(price: Sequence[int | Fraction]) -> list[int]:
    """Each gap's place when all are sorted by (price per unit, gap): sorted once, so that
    each row sorts plain integers."""
    rank = [0] * len(price)
    for r, g in enumerate(sorted(range(len(price)), key=lambda g: (price[g], g))):
        rank[g] = r
    return rank


def _fractional_cover(
    cols: Sequence[int], price: Sequence[int | Fraction], rank: Sequence[int], size: Sequence[int], excess: int
) -> int | Fraction | None:
    """Cheapest fractional choice of ``cols`` whose sizes add up to ``excess`` (greedy by
    price per unit, ``rank`` from :func:`_price_ranks`, is optimal for one row), exact; None
    when even all of them fall short."""
    need = excess
    total: int | Fraction = 0
    for g in sorted(cols, key=rank.__getitem__):
        take = size[g] if size[g] < need else need
        total += price[g] * take
        need -= take
        if need <= 0:
            return total
    return None


def position_bound(covers: Sequence[TierCover]) -> int:
    """Sum over tiers of the largest single-position cover cost (rounded up); exact integer
    and rational arithmetic, so it holds at any size."""
    total = 0
    for c in covers:
        price = _unit_prices(c)
        rank = _price_ranks(price)
        best: int | Fraction = 0
        for cols, excess in c.rows:
            got = _fractional_cover(cols, price, rank, c.size, excess)
            if got is not None and got > best:
                best = got
        total += math.ceil(best)
    return total


@contextlib.contextmanager
def quiet_native_stdout() -> Iterator[None]:
    """Silence what native solver code writes to file descriptor 1 (HiGHS' branch and
    bound prints debug lines there that would land in the CLI's output)."""
    try:
        sys.stdout.flush()
        saved = os.dup(1)
    except (OSError, ValueError):  # no real stdout (e.g. captured): nothing to protect
        yield
        return
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 1)
            yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def cover_matrix(c: TierCover):
    """``(A, excess, cost)``: the tier's rows as a sparse matrix of sizes, the excess per row
    and the price of each gap (for :func:`scipy.optimize.milp` / ``linprog``)."""
    from scipy.sparse import csr_matrix

    data: list[int] = []
    indices: list[int] = []
    indptr: list[int] = [0]
    rhs: list[int] = []
    for cols, excess in c.rows:
        data.extend(c.size[g] for g in cols)
        indices.extend(cols)
        indptr.append(len(indices))
        rhs.append(excess)
    A = csr_matrix(
        (np.array(data, dtype=np.float64), np.array(indices), np.array(indptr)), shape=(len(c.rows), len(c.gaps))
    )
    return A, np.array(rhs, dtype=np.float64), np.array(c.cost, dtype=np.float64)


@dataclass(frozen=True)
class CoverResult:
    """What HiGHS proved over the tiers: the bound (None when a tier gave none), whether
    every tier was solved to optimality, how (``integer optimum``, ``LP relaxation``, ...)
    and whether the wall-clock safety net stopped a solve."""

    value: int | None
    exact: bool
    how: str
    stopped_by_clock: bool = False


def _ceil(x: float) -> int:
    """A HiGHS objective rounded up to the integer bound it proves (1e-6 of slack)."""
    return math.ceil(x - 1e-6)


def _by_clock(res: Any) -> bool:
    """Whether HiGHS says its wall-clock limit (the safety net) stopped it."""
    return "time limit" in str(getattr(res, "message", "")).lower()


def _tier_lp(c: TierCover, budget: CoverBudget, whole: bool = False, capacity_cut: int = 0) -> tuple[int | None, bool]:
    """The LP relaxation of one tier: (its optimum rounded up or None, stopped by clock).
    With ``whole`` (a tier of one size, :func:`_uniform`) each row's excess is first rounded
    up to whole buffers: every plan spills whole buffers, so the bound still holds, and
    the matrix being an interval matrix, the LP optimum is then the integer optimum.
    ``capacity_cut`` grows every row's excess by that many units (a smaller tier)."""
    from scipy.optimize import linprog

    A, rhs, cost = cover_matrix(c)
    if whole and c.rows:
        size = c.size[0]
        rhs = np.array([-(-excess // size) * size for _, excess in c.rows], dtype=float)
    rhs = rhs + capacity_cut
    res = linprog(
        cost,
        A_ub=-A,
        b_ub=-rhs,
        bounds=(0, 1),
        method="highs",
        options={"time_limit": budget.safety_seconds, "maxiter": budget.lp_iteration_limit},
    )
    return (_ceil(res.fun) if res.status == 0 else None), _by_clock(res)


def cover_lp_bound(c: TierCover, capacity_cut: int = 0, budget: CoverBudget = CoverBudget()) -> int:
    """A lower bound on the traffic of any solution of one tier's cover, each row's excess
    grown by ``capacity_cut`` (the covering model of
    :func:`~dansched.stages.dlr.spillplan.cover_optimum`): its LP relaxation rounded up;
    0 when HiGHS is not run on the tier (:func:`_beyond_highs`) or the LP ends without an
    optimum within ``budget``."""
    if not c.rows or _beyond_highs(c, budget) is not None:
        return 0
    got, _ = _tier_lp(c, budget, capacity_cut=capacity_cut)
    return got or 0


def _tier_mip(c: TierCover, budget: CoverBudget) -> tuple[int | None, bool, bool]:
    """Branch and bound on one tier: (its proven dual bound rounded up or None, optimal,
    stopped by clock). The gap is closed to zero, so "optimal" means the integer optimum."""
    from scipy.optimize import Bounds, LinearConstraint, milp

    A, rhs, cost = cover_matrix(c)
    with quiet_native_stdout():
        res = milp(
            cost,
            constraints=LinearConstraint(A, lb=rhs),
            integrality=np.ones(len(cost)),
            bounds=Bounds(0, 1),
            options={"time_limit": budget.safety_seconds, "node_limit": budget.node_limit, "mip_rel_gap": 0.0},
        )
    dual = getattr(res, "mip_dual_bound", None)
    if dual is None or not math.isfinite(dual):
        return None, False, _by_clock(res)
    return _ceil(dual), res.status == 0, _by_clock(res)


def _beyond_highs(c: TierCover, budget: CoverBudget) -> str | None:
    """Why HiGHS is not run on a tier (None when it is): costs beyond its exact range, or a
    cover matrix larger than ``budget.lp_max_nonzeros``."""
    if sum(c.cost) > budget.exact_max_cost:
        return "costs beyond HiGHS's exact range"
    if _nonzeros(c) > budget.lp_max_nonzeros:
        return f"a tier's cover has more than {budget.lp_max_nonzeros} nonzeros"
    return None


def _nonzeros(c: TierCover) -> int:
    return sum(len(cols) for cols, _ in c.rows)


def lp_bound(covers: Sequence[TierCover], budget: CoverBudget = CoverBudget()) -> int | None:
    """Sum over tiers of the LP optimum (rounded up), or ``None`` when a tier's LP does not
    finish within ``budget`` (or HiGHS is not run on it, see :func:`_beyond_highs`)."""
    total = 0
    for c in covers:
        if not c.rows:
            continue
        if _beyond_highs(c, budget):
            return None
        got, _ = _tier_lp(c, budget)
        if got is None:
            return None
        total += got
    return total


def _uniform(c: TierCover) -> bool:
    """One size and one price per unit in the tier: the cover matrix scaled by that size
    is an interval matrix (each gap covers consecutive positions: totally unimodular), so
    with every excess rounded up to whole buffers the LP optimum is integral."""
    return len(set(c.size)) <= 1 and len({Fraction(co, si) for co, si in zip(c.cost, c.size)}) <= 1


def mip_bound(covers: Sequence[TierCover], budget: CoverBudget = CoverBudget()) -> CoverResult:
    """Sum over tiers of what HiGHS proves about the cover: the integer optimum (the LP where
    it is integral, branch and bound on tiers of at most ``budget.mip_max_nonzeros``
    nonzeros, its dual bound where the node limit stops it first), the LP relaxation on
    larger tiers. Every budget is a count, so the result does not depend on the machine's
    load; only the safety net can stop a solve by the clock, and the result says so."""
    total = 0
    exact = True
    kinds: list[str] = []
    clock = False
    for c in covers:
        if not c.rows:
            continue
        why = _beyond_highs(c, budget)
        if why:
            return CoverResult(None, False, why, clock)
        if _uniform(c):
            got, fired = _tier_lp(c, budget, whole=True)
            opt, kind = got is not None, "integer optimum"
        elif _nonzeros(c) <= budget.mip_max_nonzeros:
            got, opt, fired = _tier_mip(c, budget)
            kind = "integer optimum" if opt else "branch-and-bound dual bound"
        else:
            got, fired = _tier_lp(c, budget)
            opt, kind = False, "LP relaxation"
        clock = clock or fired
        if got is None:
            return CoverResult(None, False, "no bound within the budget", clock)
        total += got
        exact = exact and opt
        if kind not in kinds:
            kinds.append(kind)
    return CoverResult(total, exact, " + ".join(kinds) or "integer optimum", clock)


def traffic_lower_bound(
    inst: Instance, order: Sequence[int], budget: CoverBudget = CoverBudget(), time_limit: float | None = None
) -> Bound:
    """Lower bound on the extra traffic of every valid plan whose instance nodes run in
    ``order``'s relative order (spill ids in ``order`` are ignored): what HiGHS proves about
    the cover within ``budget`` (:func:`mip_bound`; with its integer optimum, placement
    aside, no plan of this order does better), else the per-position cover. ``time_limit``
    (seconds) can only lengthen the wall-clock safety net (``budget.safety_seconds``): a
    shorter clock would let the machine's load decide the bound."""
    require_instance(inst, "traffic_lower_bound: inst")
    TIME_LIMIT.check(time_limit, "traffic_lower_bound: time_limit", optional=True)
    order = check_integers(order, "traffic_lower_bound: order", "node ids")
    check_type(budget, CoverBudget, "traffic_lower_bound: budget")
    if time_limit is not None and time_limit > budget.safety_seconds:
        budget = replace(budget, safety_seconds=time_limit)
    covers = tier_covers(inst, order)
    if not covers:
        return Bound(0, "fixed order: no tier is ever over capacity", optimal=True)
    got = mip_bound(covers, budget)
    net = " (the wall-clock safety net stopped HiGHS)" if got.stopped_by_clock else ""
    if got.value is not None:
        method = f"fixed order: {got.how} of the per-position capacity cover (HiGHS){net}"
        return Bound(got.value, method, stopped_by_clock=got.stopped_by_clock)
    return Bound(
        position_bound(covers),
        f"fixed order: cheapest cover of the largest per-position excess (HiGHS: {got.how}){net}",
        stopped_by_clock=got.stopped_by_clock,
    )
