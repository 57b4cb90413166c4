"""Fixed-order placement and spill decisions as a CP-SAT model (the
COSMA-style joint allocation/replacement model).

For a fixed order of the instance's nodes, every buffer must be resident at its
*points* — the positions of its ALLOC, of each operation using it, and of its
FREE. Between two consecutive points (a *gap*) it may stay resident at the same
offset, or be spilled: SPILL_OUT right after the first point, SPILL_IN right
before the second, at a new offset, costing ``Size`` (backed buffers) or
``2*Size`` of traffic (docs/rules.md, section 5.3). Each point and each kept gap is a
rectangle (positions x addresses); ``add_no_overlap_2d`` per tier keeps them
apart, and every offset keeps the buffer inside its tier.

Uses:

- ``allow_spills=False``: is there a layout with no spill at all for this order?
- ``allow_spills=True``: the minimum traffic for this order. A spill that frees a
  buffer for a whole gap is the most any plan of this order can free, so the
  solver's best bound is a lower bound on the traffic of every valid plan whose
  order (spill nodes aside) is this one; a solution converts to a plan the
  evaluator accepts.

Deterministic: one worker, fixed seed, ``max_deterministic_time``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ortools.sat.python import cp_model

from ...graph import needs_positions
from ...hardware import spill_traffic
from ...instance import KIND_OP, Instance
from ...params import BoundParams
from ...plan import Plan
from ...simulate import spill_node_ids, spill_of_node
from .solver import deterministic_solver, solve_model, stopped_by_clock

__all__ = [
    "PlacementResult",
    "residency_points",
    "fixed_order_placement",
    "plan_points",
    "points_to_plan",
]


@dataclass
class PlacementResult:
    status: str  # CP-SAT status name, or "TOO_LARGE"
    traffic: int | None  # traffic of the best solution found
    bound: int  # proven lower bound on the traffic for this order
    plan: Plan | None = None
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def optimal(self) -> bool:
        return self.status == "OPTIMAL"


def residency_points(inst: Instance, order: Sequence[int]) -> list[list[int]]:
    """Per buffer: the sorted positions (in ``order``, spill ids skipped) where it must be resident."""
    return needs_positions(inst, [v for v in order if v < inst.n])


def plan_points(inst: Instance, plan: Plan) -> tuple[list[int], list[list[int]], list[list[bool]]]:
    """Read a valid plan in the model's terms: its order without spill ids, and per buffer
    the offset at each point and whether each gap holds a spill."""
    n = inst.n
    base = [v for v in plan.order if v < n]
    pts = residency_points(inst, base)
    index = {int(b): i for i, b in enumerate(inst.buf_id.tolist())}
    offset = {index[b]: o for b, o in plan.offsets or ()}
    spill_buf = [index[b] for b, _ in plan.spills]
    spill_off = [o for _, o in plan.spills]
    L = inst.lists()
    cur = dict(offset)
    offs: list[list[int]] = [[] for _ in range(inst.num_buffers)]
    spilled: list[list[bool]] = [[False] * max(0, len(p) - 1) for p in pts]
    i = 0
    for v in plan.order:
        if v >= n:
            k, is_out = spill_of_node(n, v)
            b = spill_buf[k]
            if not is_out:
                cur[b] = spill_off[k]
            elif 0 < len(offs[b]) <= len(spilled[b]):
                spilled[b][len(offs[b]) - 1] = True
            continue
        bufs = L.bufs[v] if L.kind[v] == KIND_OP else [L.node_buf[v]]
        for b in bufs:
            offs[b].append(cur[b])
        i += 1
    return base, offs, spilled


def fixed_order_placement(
    inst: Instance,
    order: Sequence[int],
    *,
    allow_spills: bool = True,
    hint: Plan | None = None,
    deterministic_time: float = 10.0,
    time_limit: float = 60.0,
    seed: int = 0,
    max_rectangles: int = BoundParams().max_rectangles,
) -> PlacementResult:
    """Solve the model for ``order`` (spill ids in it are ignored); see the module docstring.
    With spills allowed, a layout without any spill is looked for first (a much easier
    model): when one exists, traffic 0 is optimal."""
    if allow_spills:
        first = _solve(
            inst,
            order,
            allow_spills=False,
            hint=None,
            deterministic_time=deterministic_time / 4,
            time_limit=time_limit / 4,
            seed=seed,
            max_rectangles=max_rectangles,
        )
        if first.plan is not None:
            first.status = "OPTIMAL"
            return first
    return _solve(
        inst,
        order,
        allow_spills=allow_spills,
        hint=hint,
        deterministic_time=deterministic_time,
        time_limit=time_limit,
        seed=seed,
        max_rectangles=max_rectangles,
    )


def _solve(
    inst: Instance,
    order: Sequence[int],
    *,
    allow_spills: bool = True,
    hint: Plan | None = None,
    deterministic_time: float = 10.0,
    time_limit: float = 60.0,
    seed: int = 0,
    max_rectangles: int = BoundParams().max_rectangles,
) -> PlacementResult:
    base = [v for v in order if v < inst.n]
    pts = residency_points(inst, base)
    nrect = sum(2 * len(p) for p in pts)
    if nrect > max_rectangles:
        return PlacementResult("TOO_LARGE", None, 0, stats={"rectangles": nrect})
    hw = inst.hw
    sizes = inst.buf_size.tolist()
    tiers = inst.buf_tier.tolist()
    m = cp_model.CpModel()
    xs: dict[int, list[Any]] = {}
    ys: dict[int, list[Any]] = {}
    y: list[list[Any]] = []
    spill: list[list[Any]] = []
    cost_terms = []
    for b, p in enumerate(pts):
        t, s = tiers[b], sizes[b]
        cap = hw.capacity[hw.tiers[t]]
        yb = [m.new_int_var(0, cap - s, f"y{b}_{j}") for j in range(len(p))]
        y.append(yb)
        sb = []
        for j, pos in enumerate(p):
            xs.setdefault(t, []).append(m.new_fixed_size_interval_var(pos, 1, f"xp{b}_{j}"))
            ys.setdefault(t, []).append(m.new_fixed_size_interval_var(yb[j], s, f"yp{b}_{j}"))
        for j in range(len(p) - 1):
            length = p[j + 1] - p[j] - 1
            if not allow_spills:
                m.add(yb[j + 1] == yb[j])
                if length > 0:
                    xs[t].append(m.new_fixed_size_interval_var(p[j] + 1, length, f"xg{b}_{j}"))
                    ys[t].append(m.new_fixed_size_interval_var(yb[j], s, f"yg{b}_{j}"))
                continue
            out = m.new_bool_var(f"spill{b}_{j}")
            sb.append(out)
            m.add(yb[j + 1] == yb[j]).only_enforce_if(out.negated())
            if length > 0:
                xs[t].append(m.new_optional_fixed_size_interval_var(p[j] + 1, length, out.negated(), f"xg{b}_{j}"))
                ys[t].append(m.new_optional_fixed_size_interval_var(yb[j], s, out.negated(), f"yg{b}_{j}"))
            cost_terms.append(spill_traffic(s, bool(inst.buf_backed[b])) * out)
        spill.append(sb)
    for t in xs:
        m.add_no_overlap_2d(xs[t], ys[t])
    if cost_terms:
        m.minimize(sum(cost_terms))
    if hint is None or not _add_hint(m, inst, hint, y, spill, allow_spills):
        if allow_spills:
            _add_all_spilled_hint(m, inst, pts, y, spill)
    solver = deterministic_solver(seed, deterministic_time, time_limit)
    status = solve_model(solver, m)
    name = solver.status_name(status)
    stats = {
        "rectangles": nrect,
        "wall_seconds": round(solver.wall_time, 3),
        "stopped_by_clock": stopped_by_clock(solver, status),
    }
    if status == cp_model.INFEASIBLE:
        return PlacementResult(name, None, 0, stats=stats)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        bound = int(solver.best_objective_bound) if cost_terms else 0
        return PlacementResult(name, None, max(0, bound), stats=stats)
    traffic = int(round(solver.objective_value)) if cost_terms else 0
    bound = int(round(solver.best_objective_bound)) if cost_terms else 0
    offs = [[solver.value(v) for v in yb] for yb in y]
    spilled = [
        [bool(solver.value(v)) for v in sb] if sb else [False] * max(0, len(pts[b]) - 1) for b, sb in enumerate(spill)
    ]
    plan = points_to_plan(inst, base, pts, offs, spilled)
    return PlacementResult(name, traffic, bound, plan, stats)


def _add_hint(m: cp_model.CpModel, inst: Instance, hint: Plan, y, spill, allow_spills: bool) -> bool:
    """Hint the solver with a valid plan of the same order; False when the orders differ."""
    _, offs, spilled = plan_points(inst, hint)
    if any(len(offs[b]) != len(yb) for b, yb in enumerate(y)):
        return False
    for b, yb in enumerate(y):
        for var, val in zip(yb, offs[b]):
            m.add_hint(var, val)
        if allow_spills:
            for var, val in zip(spill[b], spilled[b]):
                m.add_hint(var, int(val))
    return True


def _add_all_spilled_hint(m: cp_model.CpModel, inst: Instance, pts, y, spill) -> None:
    """A always-feasible (and costly) starting point: every gap spilled, so each position
    holds only the buffers of one node, packed from address 0 (they fit: docs/rules.md, section 1.2)."""
    used: dict[tuple[int, int], int] = {}
    sizes, tiers = inst.buf_size.tolist(), inst.buf_tier.tolist()
    for b, p in enumerate(pts):
        for j, pos in enumerate(p):
            key = (pos, tiers[b])
            m.add_hint(y[b][j], used.get(key, 0))
            used[key] = used.get(key, 0) + sizes[b]
        for var in spill[b]:
            m.add_hint(var, 1)


def points_to_plan(inst: Instance, base: list[int], pts, offs, spilled) -> Plan:
    """The plan of a solution in the model's terms (shared with :mod:`dansched.models.exact.joint`).

    ``base``: the instance's nodes in order; ``pts``: :func:`residency_points` of ``base``;
    ``offs[b][j]``: the offset of buffer ``b`` at its point ``j``; ``spilled[b][j]``: whether
    the gap between points ``j`` and ``j+1`` holds a spill. Inserts SPILL_OUT right after a
    spilled gap's first point and SPILL_IN right before its second (in each slot between two
    positions: every SPILL_OUT, then every SPILL_IN, so a SPILL_IN may take the addresses a
    SPILL_OUT of the same slot gave up); spill ``k`` is numbered in the order of the
    SPILL_OUTs and its NewOffset is the offset at the gap's second point."""
    outs_after: dict[int, list[tuple[int, int]]] = {}
    ins_before: dict[int, list[tuple[int, int]]] = {}
    gaps = []
    for b, p in enumerate(pts):
        for j, sp in enumerate(spilled[b]):
            if sp:
                gaps.append((p[j], b, j))
    gaps.sort()
    n = inst.n
    spills: list[tuple[int, int]] = []
    for k, (_, b, j) in enumerate(gaps):
        spills.append((b, offs[b][j + 1]))
        out_id, in_id = spill_node_ids(n, k)
        outs_after.setdefault(pts[b][j], []).append((b, out_id))
        ins_before.setdefault(pts[b][j + 1], []).append((b, in_id))
    order: list[int] = []
    for i, v in enumerate(base):
        order += [sid for _, sid in ins_before.get(i, [])]
        order.append(v)
        order += [sid for _, sid in outs_after.get(i, [])]
    # move each slot's SPILL_INs behind its SPILL_OUTs: a slot is the run of spill ids between two positions
    fixed: list[int] = []
    run: list[int] = []
    for v in order + [-1]:
        if v >= n:
            run.append(v)
            continue
        fixed += sorted(run, key=lambda s: (not spill_of_node(n, s)[1], s))
        run = []
        if v >= 0:
            fixed.append(v)
    first_offset = [o[0] if o else 0 for o in offs]
    ids = inst.buf_id.tolist()
    return Plan(
        order=tuple(fixed),
        offsets=tuple((ids[b], int(first_offset[b])) for b in range(inst.num_buffers)),
        spills=tuple((ids[b], int(o)) for b, o in spills),
    )
