"""Exact spill plan for a fixed order, and an exact packing of its segments.

For a fixed order, which buffers leave which tier and when is a covering problem
(:mod:`dansched.models.bounds.traffic`): one binary ``x_g`` per gap between two
consecutive needs of a buffer, ``sum_g T(b_g) x_g`` to minimise, and at every
position the spilled gaps must cover the tier's excess. Its integer optimum,
solved with HiGHS (:func:`scipy.optimize.milp`), is the least traffic of any plan
with that order *if* placement costs nothing; :func:`planned_spills` turns it into
the positions after which the scan spills (right after a buffer's last need
before the gap; its SPILL_IN then comes right before the next need).

Placement can still cost: the segments must be packed into each tier without
overlap. :func:`cpsat_pack` packs the segments of a scan as rectangles (time x
address) with ``add_no_overlap_2d`` (CP-SAT, one worker, deterministic time limit),
after the greedy packer of :mod:`dansched.stages.dlr.packing` fails.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from ortools.sat.python import cp_model

from ...instance import Instance
from ...models.bounds.traffic import TierCover, cover_lp_bound, cover_matrix, quiet_native_stdout, tier_covers
from ...models.exact.solver import deterministic_solver, solve_model
from ...simulate import Segment

__all__ = ["cover_optimum", "planned_spills", "cpsat_pack"]


def cover_optimum(
    cover: TierCover,
    node_limit: int,
    time_limit: float,
    capacity_cut: int = 0,
) -> tuple[list[float], float, bool] | None:
    """Integer optimum of one tier's covering problem: per-gap values, objective, and whether
    HiGHS proved it optimal; ``None`` when no feasible cover is found within ``node_limit``
    branch-and-bound nodes (the deterministic budget; ``time_limit`` seconds is a safety net).
    ``capacity_cut`` shrinks the tier (every excess grows by that many units)."""
    from scipy.optimize import Bounds, LinearConstraint, milp  # loaded on first use: a second of start-up

    if not cover.rows:
        return [0.0] * len(cover.gaps), 0.0, True
    A, rhs, cost = cover_matrix(cover)
    with quiet_native_stdout():
        res = milp(
            cost,
            constraints=LinearConstraint(A, lb=rhs + capacity_cut),
            integrality=np.ones(len(cost)),
            bounds=Bounds(0, 1),
            options={"time_limit": time_limit, "node_limit": node_limit, "presolve": True},
        )
    if res.x is None:
        return None
    return [float(x) for x in res.x], float(res.fun), res.status == 0


def planned_spills(
    inst: Instance,
    order: Sequence[int],
    node_limit: int,
    time_limit: float,
    capacity_cut: Mapping[int, int] | None = None,
    traffic_limit: int | None = None,
) -> tuple[dict[int, list[int]], int, bool] | None:
    """``{position: buffers to spill right after it}``, the plan's traffic and whether it is
    proven optimal for ``order`` (without placement costs); ``None`` when a tier's cover
    finds no feasible solution within its budget (see :func:`cover_optimum`), or at once
    when the covers' LP relaxations (:func:`~dansched.models.bounds.traffic.cover_lp_bound`)
    already pass ``traffic_limit``: then every plan of the order does, the one found
    included."""
    cut = capacity_cut or {}
    covers = list(tier_covers(inst, order))
    if traffic_limit is not None and sum(cover_lp_bound(c, cut.get(c.tier, 0)) for c in covers) > traffic_limit:
        return None
    planned: dict[int, list[int]] = {}
    total = 0.0
    proven = True
    for cover in covers:
        got = cover_optimum(cover, node_limit, time_limit, cut.get(cover.tier, 0))
        if got is None:
            return None
        xs, value, opt = got
        total += value
        proven = proven and opt
        for g, x in zip(cover.gaps, xs):
            if x > 0.5:
                planned.setdefault(g.lo, []).append(g.buf)
    for k in planned:
        planned[k].sort()
    return planned, int(round(total)), proven


def cpsat_pack(
    segs: Sequence[Segment], capacity: Mapping[int, int], deterministic_time: float = 5.0
) -> dict[int, int] | None:
    """Offsets (by index into ``segs``) that keep every segment inside its tier and apart
    from every segment it meets in time, or ``None`` when CP-SAT finds none in time."""

    m = cp_model.CpModel()
    ys = []
    by_tier: dict[int, tuple[list, list]] = {}
    for i, s in enumerate(segs):
        cap = capacity[s.tier]
        if s.size > cap:
            return None
        y = m.new_int_var(0, cap - s.size, f"y{i}")
        ys.append(y)
        xs_t, ys_t = by_tier.setdefault(s.tier, ([], []))
        xs_t.append(m.new_fixed_size_interval_var(s.start, s.end - s.start + 1, f"x{i}"))
        ys_t.append(m.new_fixed_size_interval_var(y, s.size, f"a{i}"))
    for xs_t, ys_t in by_tier.values():
        m.add_no_overlap_2d(xs_t, ys_t)
    solver = deterministic_solver(0, deterministic_time, time_limit=1e9)  # no wall-clock net: deterministic
    status = solve_model(solver, m)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None
    return {i: int(solver.value(y)) for i, y in enumerate(ys)}
