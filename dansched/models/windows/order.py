"""Exact order windows for problem 2: the joint model of
:mod:`dansched.models.exact.joint` on a window of consecutive positions of a plan, with
everything outside the window fixed.

A plan is read in the joint model's terms (:class:`PointPlan`): the order of the
instance's nodes (spill nodes dropped), per buffer its *points* (ALLOC, each user,
FREE), the offset at each point and whether each *gap* between two consecutive
points is spilled (SPILL_OUT right after the first point, SPILL_IN right before
the second) or resident throughout at one offset. :func:`point_plan` reads any
valid plan that way; the form never has more traffic (a spilled gap costs one
spill, however many the plan made there) and stays valid (the residents at every
moment are a subset of the plan's).

For a window ``[lo, hi)`` of positions, with ``W = base[lo:hi]`` its nodes, the
model (built with the joint model's :class:`~dansched.models.exact.joint._JointBuilder`
on ``W`` alone, renumbered) re-decides:

- the order of ``W`` inside ``[lo, hi)`` (every edge among them forward; edges from
  outside already hold, as every predecessor outside sits before ``lo`` and every
  successor after ``hi``);
- for each buffer with a point in ``W`` (*active*), residency, offset and spill at
  each window position exactly as the joint model does, with boundary conditions:

  - *entry gap* (the buffer was allocated before ``lo``): ``k_in`` says whether the
    gap from its last point before ``lo`` is kept resident. Then it is resident at
    the offset it has there (``y0``) until its first point in ``W``. A gap the plan
    spills stays spilled (its outside part may hold other buffers); a kept gap may
    be spilled instead (the outside part then only loses a resident);
  - *exit gap* (the buffer is freed after ``hi``): ``k_out`` likewise, with the
    offset at its first point after ``hi`` (``y1``); a spilled exit gap stays
    spilled, a kept one may be spilled (out right after its last point in ``W``,
    back in before its next point at ``y1``);
- each gap that spans the whole window of a buffer without a point in ``W``
  (*straddling*) and is resident in the plan may be spilled (``s``); it keeps its
  offset otherwise.

Per tier the resident rectangles at the window's positions never overlap
(``add_no_overlap_2d``, as in the joint model). Outside the window nothing
changes except gaps that became spilled, so the residents at every outside
position are a subset of the plan's and the new plan is valid wherever the old
one was; inside, every buffer resident at a window position is in the model (it
has a point there, or a gap spans the whole window). The objective is the joint
model's (traffic, then spill count) over the gaps the window touches; the plan's
own choice is the solution hint, so the model returns it or better. Gaps with
both points outside the window are decided by the plan, so only a spilled gap
with both points inside ``[lo, hi)`` can disappear.

Deterministic: :func:`~dansched.models.exact.solver.deterministic_solver`. The caller
judges every rebuilt plan with :func:`dansched.simulate.evaluate`.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ortools.sat.python import cp_model

from ...instance import KIND_OP, Instance
from ...plan import Plan
from ..exact.joint import _JointBuilder, _precedence, spill_cost
from ..exact.placement import plan_points, points_to_plan, residency_points
from .seam import WindowOutcome, solve_window_model

__all__ = [
    "PointPlan",
    "point_plan",
    "precedence",
    "solve_order_window",
    "inner_spills",
    "window_buffers",
]


def precedence(inst: Instance) -> list[set[int]]:
    """The joint model's successor sets (edges plus ALLOC -> user -> FREE), computed once
    per plan and shared by its windows."""
    return _precedence(inst)


@dataclass(frozen=True)
class PointPlan:
    """A plan in the joint model's terms (module docstring): ``base`` the instance's nodes
    in order, per buffer ``pts`` (positions of its points), ``offs`` (offset at each) and
    ``spilled`` (per gap)."""

    base: list[int]
    pts: list[list[int]]
    offs: list[list[int]]
    spilled: list[list[bool]]

    def to_plan(self, inst: Instance) -> Plan:
        return points_to_plan(inst, self.base, self.pts, self.offs, self.spilled)


def point_plan(inst: Instance, plan: Plan) -> PointPlan:
    """Read a valid plan as a :class:`PointPlan` (module docstring)."""
    base, offs, spilled = plan_points(inst, plan)
    return PointPlan(base, residency_points(inst, base), offs, spilled)


def inner_spills(pp: PointPlan, lo: int, hi: int, window_buffers: Sequence[int]) -> int:
    """How many spilled gaps of ``window_buffers`` have both points in ``[lo, hi)``: the
    spills a window can remove."""
    count = 0
    for b in window_buffers:
        p = pp.pts[b]
        j = bisect_left(p, lo)
        while j + 1 < len(p) and p[j + 1] < hi:
            count += pp.spilled[b][j]
            j += 1
    return count


def window_buffers(inst: Instance, nodes: Sequence[int]) -> list[int]:
    L = inst.lists()
    out: set[int] = set()
    for v in nodes:
        if L.kind[v] == KIND_OP:
            out.update(L.bufs[v])
        else:
            out.add(L.node_buf[v])
    return sorted(out)


def _straddlers(
    inst: Instance, pp: PointPlan, lo: int, hi: int, tiers: set[int], active: set[int]
) -> list[tuple[int, int]]:
    """(buffer, gap) of every resident gap of a buffer of ``tiers`` without a point in the
    window that spans the whole window."""
    out = []
    tier_of = inst.buf_tier.tolist()
    for b in range(inst.num_buffers):
        if b in active or tier_of[b] not in tiers:
            continue
        p = pp.pts[b]
        if not p or p[0] >= lo or p[-1] < hi:
            continue
        j = bisect_left(p, lo)
        if 0 < j < len(p) and p[j] >= hi and not pp.spilled[b][j - 1]:
            out.append((b, j - 1))
    return out


class _WindowBuilder(_JointBuilder):
    """The joint builder on a window's nodes (renumbered ``0..k-1``, positions ``lo + i``)
    plus the boundary conditions of the module docstring."""

    def __init__(self, inst: Instance, pp: PointPlan, lo: int, hi: int, succ: list[set[int]], max_shift: int) -> None:
        self.nodes = pp.base[lo:hi]
        self.local = {v: i for i, v in enumerate(self.nodes)}
        local_succ = [{self.local[w] for w in succ[v] if w in self.local} for v in self.nodes]
        super().__init__(inst, local_succ)
        # each node moves at most ``max_shift`` positions (a smaller neighbourhood, same model)
        self.lo = [max(a, v - max_shift) for v, a in enumerate(self.lo)]
        self.hi = [min(h, v + max_shift) for v, h in enumerate(self.hi)]
        self.pp, self.wlo, self.whi = pp, lo, hi
        self.k_in: dict[int, Any] = {}
        self.k_out: dict[int, Any] = {}
        self.straddle: dict[int, tuple[int, Any]] = {}
        self.active: list[int] = []

    def add_window_buffer(self, b: int) -> None:
        """Residency, offsets and spills of an active buffer over the window, with its entry
        and exit gaps (module docstring)."""
        inst, m, pp, X = self.inst, self.m, self.pp, self.X
        k = self.n
        self.active.append(b)
        p = pp.pts[b]
        j_in, j_out = bisect_left(p, self.wlo), bisect_left(p, self.whi)
        a, f = int(inst.buf_alloc[b]), int(inst.buf_free[b])
        la, lf = self.local.get(a), self.local.get(f)
        L = inst.lists()
        need_nodes = [self.local[v] for v in [a, f, *L.users[b]] if v in self.local]
        first = self.lo[la] if la is not None else 0
        last = self.hi[lf] if lf is not None else k - 1
        started: Any = 0 if la is not None else 1
        ended_before: Any = 0
        for i in range(first, last + 1):
            if la is not None:
                started = started + X(la, i)
            self.add_cell(b, i, started - ended_before, self._need(need_nodes, i))
            if lf is not None:
                ended_before = ended_before + X(lf, i)
        r, y = self.r, self.y
        if la is None:  # entry gap j_in - 1
            kin = m.new_bool_var(f"kin{b}")
            self.k_in[b] = kin
            if pp.spilled[b][j_in - 1]:
                m.add(kin == 0)
            else:
                self.cost_terms.append(spill_cost(inst, b) * (1 - kin))
                self.spill_terms.append(1 - kin)
            m.add(kin <= r[b, 0])
            m.add(r[b, 0] <= kin + self._need(need_nodes, 0))
            m.add(y[b, 0] == pp.offs[b][j_in - 1]).only_enforce_if(kin)
        for i in range(first, last):
            self.link_step(
                b,
                i,
                r[b, i],
                r[b, i + 1],
                self._need(need_nodes, i),
                self._need(need_nodes, i + 1),
                X(lf, i) if lf is not None else 0,
                y[b, i],
                y[b, i + 1],
            )
        if lf is None:  # exit gap j_out - 1
            kout = m.new_bool_var(f"kout{b}")
            self.k_out[b] = kout
            if pp.spilled[b][j_out - 1]:
                m.add(kout == 0)
            self.link_step(
                b,
                k - 1,
                r[b, k - 1],
                kout,
                self._need(need_nodes, k - 1),
                0,
                0,
                y[b, k - 1],
                m.new_constant(pp.offs[b][j_out]),
            )

    def add_straddler(self, b: int, gap: int) -> None:
        """A resident gap spanning the window: kept at its offset (a fixed rectangle) or spilled."""
        inst, m = self.inst, self.m
        t, s = int(inst.buf_tier[b]), int(inst.buf_size[b])
        keep = m.new_bool_var(f"s{b}")
        self.straddle[b] = (gap, keep)
        xs, ys = self.rect.setdefault(t, ([], []))
        xs.append(m.new_optional_fixed_size_interval_var(0, self.n, keep, f"xs{b}"))
        ys.append(m.new_optional_fixed_size_interval_var(self.pp.offs[b][gap], s, keep, f"ys{b}"))
        for i in range(self.n):
            self.load.setdefault((t, i), []).append(s * keep)
        self.cost_terms.append(spill_cost(inst, b) * (1 - keep))
        self.spill_terms.append(1 - keep)

    def add_hint(self) -> None:
        """The plan's own choice: the window's order unchanged, its residency, offsets and spills."""
        m, pp, lo = self.m, self.pp, self.wlo
        for (v, i), var in self.x.items():
            m.add_hint(var, int(v == i))
        for v, var in enumerate(self.pos):
            m.add_hint(var, v)
        for b in self.active:
            cells = _current_cells(pp, b, lo, self.whi)
            for (bb, i), var in self.r.items():
                if bb == b:
                    m.add_hint(var, int(i in cells))
                    m.add_hint(self.y[b, i], cells.get(i, 0))
            p = pp.pts[b]
            gap_after = {q - lo: pp.spilled[b][j] for j, q in enumerate(p[:-1]) if lo <= q < self.whi}
            for (bb, i), var in self.o.items():
                if bb == b:
                    m.add_hint(var, int(gap_after.get(i, False)))
            if b in self.k_in:
                m.add_hint(self.k_in[b], int(not pp.spilled[b][bisect_left(p, lo) - 1]))
            if b in self.k_out:
                m.add_hint(self.k_out[b], int(not pp.spilled[b][bisect_left(p, self.whi) - 1]))
        for _b, (_gap, keep) in self.straddle.items():
            m.add_hint(keep, 1)


def _current_cells(pp: PointPlan, b: int, lo: int, hi: int) -> dict[int, int]:
    """Window position (relative to ``lo``) -> offset of each cell where the plan keeps ``b``
    resident."""
    p, offs, sp = pp.pts[b], pp.offs[b], pp.spilled[b]
    out: dict[int, int] = {}
    j = max(0, bisect_left(p, lo) - 1)
    while j < len(p) and p[j] < hi:
        if p[j] >= lo:
            out[p[j] - lo] = offs[j]
        if j + 1 < len(p) and not sp[j]:
            for q in range(max(lo, p[j] + 1), min(hi, p[j + 1])):
                out[q - lo] = offs[j]
        j += 1
    return out


def _hint_objective(m: cp_model.CpModel) -> float:
    """The objective at the solution hint (every objective variable is hinted)."""
    hint = dict(zip(m.proto.solution_hint.vars, m.proto.solution_hint.values))
    obj = m.proto.objective
    total = obj.offset
    for ref, c in zip(obj.vars, obj.coeffs):
        total += c * (hint[ref] if ref >= 0 else 1 - hint[-ref - 1])
    return total * (obj.scaling_factor or 1.0)


def _extract(wb: _WindowBuilder, solver: cp_model.CpSolver) -> PointPlan:
    """The :class:`PointPlan` of a solution: the window's new order, the active buffers'
    points, offsets and spilled gaps, and the straddling gaps' choices."""
    pp, lo, hi = wb.pp, wb.wlo, wb.whi
    seq = [0] * wb.n
    for (v, i), var in wb.x.items():
        if solver.value(var):
            seq[i] = wb.nodes[v]
    base = pp.base[:lo] + seq + pp.base[hi:]
    pts, offs, spilled = list(pp.pts), list(pp.offs), list(pp.spilled)
    new_pts = residency_points(wb.inst, seq)
    for b in wb.active:
        p = pp.pts[b]
        j_in, j_out = bisect_left(p, lo), bisect_left(p, hi)
        inside = [lo + q for q in new_pts[b]]
        pts[b] = p[:j_in] + inside + p[j_out:]
        offs[b] = pp.offs[b][:j_in] + [int(solver.value(wb.y[b, q - lo])) for q in inside] + pp.offs[b][j_out:]
        sp = list(pp.spilled[b])
        if b in wb.k_in:
            sp[j_in - 1] = not solver.boolean_value(wb.k_in[b])
        for j in range(j_in, min(j_out, len(sp))):
            sp[j] = bool(solver.value(wb.o[b, pts[b][j] - lo]))
        spilled[b] = sp
    for b, (gap, keep) in wb.straddle.items():
        if not solver.boolean_value(keep):
            sp = list(pp.spilled[b])
            sp[gap] = True
            spilled[b] = sp
    return PointPlan(base, pts, offs, spilled)


def solve_order_window(
    inst: Instance,
    pp: PointPlan,
    lo: int,
    hi: int,
    succ: list[set[int]],
    *,
    deterministic_time: float,
    time_limit: float,
    seed: int = 0,
    max_shift: int | None = None,
    probing: bool = False,
) -> WindowOutcome[PointPlan]:
    """Re-optimise positions ``[lo, hi)`` of ``pp`` (module docstring). ``succ``:
    :func:`precedence` of ``inst``. The outcome's plan is the rebuilt point plan, only when
    the window's objective (traffic, then spills) dropped below the plan's own (else the
    status says why: CP-SAT's, or ``NO_GAIN``). ``max_shift``: how far a
    node may move from its position (default: anywhere in the window); ``probing``: CP-SAT's
    probing presolve (off by default: on these models it took most of a small budget)."""
    wb = _WindowBuilder(inst, pp, lo, hi, succ, hi - lo if max_shift is None else max_shift)
    wb.add_order()
    bufs = window_buffers(inst, wb.nodes)
    for b in bufs:
        wb.add_window_buffer(b)
    tiers = {int(inst.buf_tier[b]) for b in bufs}
    for b, gap in _straddlers(inst, pp, lo, hi, tiers, set(bufs)):
        wb.add_straddler(b, gap)
    wb.add_tier_capacity()
    wb.set_objective(tie_break_spills=True)
    wb.add_hint()
    current = _hint_objective(wb.m)
    counts = {"buffers": len(bufs), "straddling": len(wb.straddle)}
    solver, status, stats = solve_window_model(
        wb.m,
        wb.n,
        deterministic_time=deterministic_time,
        wall_time=time_limit,
        seed=seed,
        counts=counts,
        current=current,
        probing_level=None if probing else 0,
    )
    if solver is None:
        return WindowOutcome(status, None, stats)
    if solver.objective_value >= current - 0.5:
        return WindowOutcome("NO_GAIN", None, stats)
    return WindowOutcome(status, _extract(wb, solver), stats)
