"""Fixed-order lower bound on extra DDR traffic (problems 2 and 3).

Fix the order of the instance's own nodes (spill nodes may go anywhere in between).
At each position ``k`` every buffer between its ALLOC and its FREE is live; the
buffers the node at ``k`` needs (its operands, or the buffer an ALLOC/FREE names)
must be resident, and the resident ones of a tier must fit its capacity. A live
buffer that is not resident at ``k`` has been spilled, and one spill of ``b``
keeps it out at most for one *gap* between two consecutive needs of ``b`` (its
ALLOC, each user, its FREE), at the price ``T(b)`` of SPEC section 5 (``Size``
when backed by a COPY_IN, ``2*Size`` otherwise). So, per tier, with ``x_g`` in
``[0, 1]`` for each gap::

    minimise  sum_g T(b_g) x_g
    s.t.      sum_{g covers k} Size(b_g) x_g  >=  live(k) - capacity     for every k

is a relaxation of every valid plan with that order (an LP; integral when all
sizes of a tier are equal, because each column covers consecutive positions).
Two bounds come from it:

- :func:`position_bound`: the largest over ``k`` of the cheapest fractional cover of
  the excess at ``k`` alone (closed form, always cheap);
- :func:`lp_bound`: the LP above, solved by HiGHS (:func:`scipy.optimize.linprog`);
  rows whose covering gaps and excess repeat are merged;
- :func:`mip_bound`: the integer program itself (:func:`scipy.optimize.milp`), whose
  optimum is the least traffic of any plan with that order when placement costs
  nothing (its dual bound when branch and bound stops early).

:func:`traffic_lower_bound` returns the best that finishes as a :class:`~dansched.models.bound.Bound`.
Fragmentation is ignored, so the bound holds for every placement.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from ..graph import needs_positions
from ..instance import Instance
from ..simulate import spill_traffic
from .bound import Bound

__all__ = [
    "Gap",
    "TierCover",
    "tier_covers",
    "position_bound",
    "lp_bound",
    "mip_bound",
    "cover_matrix",
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


def _fractional_cover(cols: Sequence[int], cost: Sequence[int], size: Sequence[int], excess: int) -> float:
    """Cheapest fractional choice of ``cols`` whose sizes add up to ``excess`` (greedy by
    cost per unit is optimal for one row); infinity when even all of them fall short."""
    need = excess
    total = 0.0
    for g in sorted(cols, key=lambda g: (cost[g] / size[g], g)):
        take = min(size[g], need)
        total += cost[g] * take / size[g]
        need -= take
        if need <= 0:
            return total
    return math.inf


def position_bound(covers: Sequence[TierCover]) -> int:
    """Sum over tiers of the largest single-position cover cost (rounded up)."""
    total = 0
    for c in covers:
        best = 0.0
        for cols, excess in c.rows:
            best = max(best, _fractional_cover(cols, c.cost, c.size, excess))
        total += math.ceil(best - 1e-6) if best != math.inf else 0
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

    data, indices, indptr, rhs = [], [], [0], []
    for cols, excess in c.rows:
        data.extend(c.size[g] for g in cols)
        indices.extend(cols)
        indptr.append(len(indices))
        rhs.append(excess)
    A = csr_matrix((np.array(data, dtype=float), np.array(indices), np.array(indptr)), shape=(len(c.rows), len(c.gaps)))
    return A, np.array(rhs, dtype=float), np.array(c.cost, dtype=float)


def lp_bound(covers: Sequence[TierCover], time_limit: float = 30.0) -> int | None:
    """Sum over tiers of the LP optimum (rounded up), or ``None`` when HiGHS does not
    finish within ``time_limit`` seconds overall."""
    from scipy.optimize import linprog

    deadline = time.perf_counter() + time_limit
    total = 0
    for c in covers:
        if not c.rows:
            continue
        left = deadline - time.perf_counter()
        if left <= 0:
            return None
        A, rhs, cost = cover_matrix(c)
        res = linprog(cost, A_ub=-A, b_ub=-rhs, bounds=(0, 1), method="highs", options={"time_limit": max(1.0, left)})
        if res.status != 0:
            return None
        total += math.ceil(res.fun - 1e-6)
    return total


def _uniform(c: TierCover) -> bool:
    """One size and one price per unit in the tier: the cover matrix scaled by that size
    is an interval matrix (totally unimodular), so the LP optimum is integral."""
    return len(set(c.size)) <= 1 and len({co / si for co, si in zip(c.cost, c.size)}) <= 1


def _tier_optimum(c: TierCover, time_limit: float, node_limit: int) -> tuple[int, bool] | None:
    """(bound, exact) for one tier: the LP when it is integral, else branch and bound."""
    from scipy.optimize import Bounds, LinearConstraint, linprog, milp

    A, rhs, cost = cover_matrix(c)
    if _uniform(c):
        res = linprog(cost, A_ub=-A, b_ub=-rhs, bounds=(0, 1), method="highs", options={"time_limit": time_limit})
        return (math.ceil(res.fun - 1e-6), True) if res.status == 0 else None
    with quiet_native_stdout():
        res = milp(
            cost,
            constraints=LinearConstraint(A, lb=rhs),
            integrality=np.ones(len(cost)),
            bounds=Bounds(0, 1),
            options={"time_limit": time_limit, "node_limit": node_limit},
        )
    if res.status == 0 and res.fun is not None:
        return math.ceil(res.fun - 1e-6), True
    dual = getattr(res, "mip_dual_bound", None)
    if dual is None or not math.isfinite(dual):
        return None
    return math.ceil(dual - 1e-6), False


def mip_bound(covers: Sequence[TierCover], time_limit: float = 30.0, node_limit: int = 5000) -> tuple[int, bool] | None:
    """Sum over tiers of the integer optimum of the cover (HiGHS: the LP where it is
    integral, branch and bound elsewhere, its proven dual bound where the search stops
    early); the flag says whether every tier was solved to optimality. ``None`` when a
    tier yields no bound in time."""
    deadline = time.perf_counter() + time_limit
    total = 0
    exact = True
    for c in covers:
        if not c.rows:
            continue
        left = deadline - time.perf_counter()
        if left <= 0:
            return None
        got = _tier_optimum(c, max(1.0, left), node_limit)
        if got is None:
            return None
        total += got[0]
        exact = exact and got[1]
    return total, exact


def traffic_lower_bound(inst: Instance, order: Sequence[int], time_limit: float = 20.0) -> Bound:
    """Lower bound on the extra traffic of every valid plan whose instance nodes run in
    ``order``'s relative order (spill ids in ``order`` are ignored): the integer optimum of
    the cover when HiGHS proves it (placement aside, no plan of this order does better),
    else its dual bound, else the per-position cover."""
    covers = tier_covers(inst, order)
    if not covers:
        return Bound(0, "fixed order: no tier is ever over capacity", optimal=True)
    got = mip_bound(covers, time_limit)
    if got is not None:
        value, exact = got
        how = "integer optimum" if exact else "branch-and-bound dual bound"
        return Bound(value, f"fixed order: {how} of the per-position capacity cover (HiGHS)")
    return Bound(position_bound(covers), "fixed order: cheapest cover of the largest per-position excess")
