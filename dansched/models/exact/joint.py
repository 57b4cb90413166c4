"""Exact joint model for small graphs: order + residency + offsets + spills in one
CP-SAT model, the end-to-end audit of the three stages' traffic.

Problem 2 asks for the least extra traffic of any valid plan (docs/rules.md, section 8.2).
The stages fix the order first (MPAS), then choose layout and spills (DLR); the
fixed-order model (:mod:`dansched.models.exact.placement`) is exact only for one order.
This model lets the order vary too, so on graphs of a few dozen nodes its
optimum is the true problem-2 optimum and its best bound a global lower bound.

Variables (``N`` instance nodes, positions ``0..N-1``):

- ``x[v, i]``: node ``v`` runs at position ``i`` (a permutation; every edge, and
  the implied ones ALLOC(b) -> user -> FREE(b), goes forward; a node only gets
  the positions its ancestors and descendants leave it);
- ``r[b, i]``: buffer ``b`` is resident at position ``i``. It can only be while
  alive (``ALLOC(b) <= i <= FREE(b)``), and it must be at its *points*: its
  ALLOC, each operation using it, its FREE;
- ``o[b, i]``: a spill of ``b`` between positions ``i`` and ``i+1`` (SPILL_OUT
  right after ``i``). Every 1 -> 0 step of ``r`` while alive is one, and a spill
  may also move ``b`` between two adjacent points (out and in in the same slot);
- ``y[b, i]``: ``b``'s offset at ``i``, inside its tier, kept from one resident
  position to the next unless ``o`` says it was spilled in between. The
  rectangles ``[i, i+1) x [y, y+Size)`` of resident buffers never overlap
  (``add_no_overlap_2d`` per tier), with the per-position capacity sum as a
  redundant linear cut.

Objective: ``sum Size(b) * o[b, i]`` for backed buffers (used by a COPY_IN) and
``2*Size(b)`` for the others, the extra traffic of docs/rules.md, section 5.3; optionally
the spill count breaks ties (``tie_break_spills``).

Why positions suffice. Spill nodes take no position of their own: in a plan they
sit in the *slots* between two consecutive instance nodes, and they are the only
events that change residency between instance nodes. Dropping them from any
valid plan leaves an order of the ``N`` nodes, and reading residency and
offsets at each of its positions gives a solution of this model: the buffers
resident while a node runs never overlap (the evaluator checks every segment
start against the residents), every 1 -> 0 step of a live buffer and every
offset change needs at least one SPILL_OUT in that slot or stretch, and every
spill of ``b`` costs the same. So the model's optimum is at most the traffic of
every valid plan. Conversely (:func:`~dansched.models.exact.placement.points_to_plan`),
a solution becomes a plan with exactly its traffic: SPILL_OUT right after the
last resident position before a spilled stretch and SPILL_IN (at the offset
there) right before the next point, every SPILL_OUT of a slot before every
SPILL_IN; the residents at any moment are a subset of those of a neighbouring
position, so nothing overlaps, and every spill and reuse edge runs forward.
Between two consecutive points of a buffer (a *gap*) freeing it for the whole
gap frees the most any spill there can free and costs the same, hence exact.

Dominance constraints (each keeps at least one optimal solution):

- always: a gap is either resident throughout or spilled throughout, its spill
  right after its first point (so ``o`` lives only on points, at most one per
  gap), the form the plan conversion above needs;
- with ``dominance=True`` (see :func:`canonical_order`; off by default, as on the
  audit's graphs they did not make CP-SAT faster): the node right after ALLOC(b)
  is a successor of it, a user of ``b``, FREE(b) or another ALLOC; the node right
  before FREE(b) is a predecessor of it, a user of ``b``, ALLOC(b) or another
  FREE (moving an ALLOC later past any other node, or a FREE earlier, only
  shrinks residency).

Tiers whose buffers all fit at once are left out (fixed offsets, never spilled).

Solving is deterministic: one worker, a fixed ``random_seed`` and
``max_deterministic_time`` (plus a wall-clock safety limit). The status and
``best_objective_bound`` are always reported; :attr:`JointResult.optimal` is true
only when CP-SAT proved it. Every solution is converted to a plan and judged by
:func:`dansched.simulate.evaluate`, which must find it valid with the model's
traffic (:class:`JointModelError` otherwise).

>>> res = joint_min_traffic(inst, hint=pipeline_plan, deterministic_time=60)  # doctest: +SKIP
>>> res.status, res.traffic, res.bound, res.evaluation.valid  # doctest: +SKIP
('OPTIMAL', 118, 118, True)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ortools.sat.python import cp_model

from ...errors import JointModelError, JointModelTooLarge, NoLegalOrderError
from ...graph import lifetime_graph, lifetime_successor_sets, smallest_first_order
from ...hardware import spill_traffic
from ...instance import Instance
from ...params import BoundParams
from ...plan import Plan
from ...simulate import Evaluation, evaluate
from .placement import plan_points, points_to_plan, residency_points
from .solver import deterministic_solver, solve_model, stopped_by_clock

__all__ = [
    "JointResult",
    "joint_min_traffic",
    "canonical_order",
    "spill_cost",
]


@dataclass
class JointResult:
    """``status``: CP-SAT's status name (``OPTIMAL``, ``FEASIBLE``, ``INFEASIBLE``,
    ``UNKNOWN``, ``MODEL_INVALID``). ``traffic``/``spill_count``: of the best plan found
    (``None`` without one). ``bound``: proven lower bound on the extra traffic of every
    valid plan of the instance (any order). ``plan`` and ``evaluation``: the best plan
    and the evaluator's verdict on it."""

    status: str
    traffic: int | None
    spill_count: int | None
    bound: int
    plan: Plan | None = None
    evaluation: Evaluation | None = field(default=None, repr=False)
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def optimal(self) -> bool:
        """True only when CP-SAT proved the traffic optimal."""
        return self.status == "OPTIMAL"

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "optimal": self.optimal,
            "traffic": self.traffic,
            "spill_count": self.spill_count,
            "bound": self.bound,
            "stats": dict(self.stats),
        }


def spill_cost(inst: Instance, b: int) -> int:
    """Extra traffic of one spill of buffer ``b`` (docs/rules.md, section 5.3): ``Size`` when a COPY_IN
    uses it (backed), else ``2*Size``."""
    return spill_traffic(int(inst.buf_size[b]), bool(inst.buf_backed[b]))


# ---------------------------------------------------------------------------------
# graph facts
# ---------------------------------------------------------------------------------


def _precedence(inst: Instance) -> list[set[int]]:
    """Successor sets: the instance's edges plus the ones every valid plan obeys anyway,
    ALLOC(b) -> each user of b -> FREE(b) and ALLOC(b) -> FREE(b)
    (:func:`~dansched.graph.lifetime_successor_sets`)."""
    return lifetime_successor_sets(inst)


def _closure_counts(n: int, succ: list[set[int]]) -> tuple[list[int], list[int]]:
    """Number of ancestors and of descendants of each node (bitset closure; small graphs)."""
    indeg = [0] * n
    for v in range(n):
        for w in succ[v]:
            indeg[w] += 1
    topo = [v for v in range(n) if indeg[v] == 0]
    for v in topo:
        for w in sorted(succ[v]):
            indeg[w] -= 1
            if indeg[w] == 0:
                topo.append(w)
    if len(topo) != n:
        raise NoLegalOrderError("joint model: the graph with its buffer precedences has a cycle (no valid plan exists)")
    desc = [0] * n
    for v in reversed(topo):
        m = 0
        for w in succ[v]:
            m |= desc[w] | (1 << w)
        desc[v] = m
    anc = [0] * n
    for v in topo:
        for w in succ[v]:
            anc[w] |= anc[v] | (1 << v)
    return [a.bit_count() for a in anc], [d.bit_count() for d in desc]


def _allowed_neighbours(inst: Instance, succ: list[set[int]]) -> tuple[dict[int, set[int]], dict[int, set[int]]]:
    """For each ALLOC node the nodes that may follow it, for each FREE node the nodes that
    may precede it, in a canonical order (module docstring)."""
    L = inst.lists()
    allocs = {int(a) for a in inst.buf_alloc.tolist()}
    frees = {int(f) for f in inst.buf_free.tolist()}
    pred: list[set[int]] = [set() for _ in range(inst.n)]
    for v in range(inst.n):
        for w in succ[v]:
            pred[w].add(v)
    after: dict[int, set[int]] = {}
    before: dict[int, set[int]] = {}
    for b in range(inst.num_buffers):
        a, f = int(inst.buf_alloc[b]), int(inst.buf_free[b])
        users = set(L.users[b])
        after[a] = (succ[a] | users | {f} | allocs) - {a}
        before[f] = (pred[f] | users | {a} | frees) - {f}
    return after, before


def canonical_order(inst: Instance, order: Sequence[int]) -> list[int]:
    """``order`` (spill ids dropped) with every ALLOC moved as late and every FREE as early
    as the canonical form of the module docstring asks: repeatedly, an ALLOC followed by a
    node outside its allowed followers swaps with it, a FREE preceded by a node outside its
    allowed predecessors swaps with it. Each swap keeps every edge and only shrinks some
    buffer's residency, and ``sum pos(ALLOC) - sum pos(FREE)`` grows with each, so this
    ends; a valid plan of the old order with the same points, offsets and spilled gaps
    stays valid on the new one. This is the argument that the order dominance
    constraints keep an optimal solution, and how a hint is made to satisfy them."""
    base = [int(v) for v in order if 0 <= v < inst.n]
    after, before = _allowed_neighbours(inst, _precedence(inst))
    changed = True
    while changed:
        changed = False
        for i in range(len(base) - 1):
            v, w = base[i], base[i + 1]
            if (v in after and w not in after[v]) or (w in before and v not in before[w]):
                base[i], base[i + 1] = w, v
                changed = True
    return base


# ---------------------------------------------------------------------------------
# the model
# ---------------------------------------------------------------------------------


@dataclass
class _Vars:
    x: dict[tuple[int, int], Any]
    r: dict[tuple[int, int], Any]
    o: dict[tuple[int, int], Any]
    y: dict[tuple[int, int], Any]
    pos: list[Any]
    active: list[int]
    lo: list[int]
    hi: list[int]


def _pressured_tiers(inst: Instance) -> set[int]:
    """Tiers whose buffers do not all fit at once: only there can a spill ever help."""
    total: dict[int, int] = {}
    for _b, (t, s) in enumerate(zip(inst.buf_tier.tolist(), inst.buf_size.tolist())):
        total[t] = total.get(t, 0) + s
    return {t for t, s in total.items() if s > inst.hw.capacity[inst.hw.tiers[t]]}


class _JointBuilder:
    """Builds the joint model one constraint family at a time (the variables of
    :class:`_Vars` are created in the same order as the families are added)."""

    def __init__(self, inst: Instance, succ: list[set[int]] | None = None) -> None:
        self.inst = inst
        # ``succ``: the successor sets of the nodes ordered (all of ``inst`` by default; the
        # order windows of :mod:`dansched.models.windows.order` pass a window's, renumbered)
        self.succ = _precedence(inst) if succ is None else succ
        self.n = n = len(self.succ)
        n_anc, n_desc = _closure_counts(n, self.succ)
        self.lo = n_anc
        self.hi = [n - 1 - d for d in n_desc]
        self.m = cp_model.CpModel()
        self.x: dict[tuple[int, int], Any] = {}
        self.r: dict[tuple[int, int], Any] = {}
        self.o: dict[tuple[int, int], Any] = {}
        self.y: dict[tuple[int, int], Any] = {}
        self.pos: list[Any] = []
        self.rect: dict[int, tuple[list[Any], list[Any]]] = {}  # tier -> (x intervals, y intervals)
        self.load: dict[tuple[int, int], list[Any]] = {}  # (tier, position) -> resident sizes
        self.cost_terms: list[Any] = []
        self.spill_terms: list[Any] = []

    def X(self, v: int, i: int):
        return self.x.get((v, i), 0)

    def add_order(self) -> None:
        """The order: ``x[v, i]`` (node v at position i) an assignment, ``pos[v]`` its
        position, every precedence edge forward."""
        m, x, lo, hi, n = self.m, self.x, self.lo, self.hi, self.n
        for v in range(n):
            for i in range(lo[v], hi[v] + 1):
                x[v, i] = m.new_bool_var(f"x{v}_{i}")
        at: list[list[int]] = [[] for _ in range(n)]  # nodes that may sit at position i
        for v in range(n):
            m.add_exactly_one(x[v, i] for i in range(lo[v], hi[v] + 1))
            for i in range(lo[v], hi[v] + 1):
                at[i].append(v)
        for i in range(n):
            m.add_exactly_one(x[v, i] for v in at[i])
        self.pos = pos = [m.new_int_var(lo[v], hi[v], f"pos{v}") for v in range(n)]
        for v in range(n):
            m.add(pos[v] == sum(i * x[v, i] for i in range(lo[v], hi[v] + 1)))
        m.add_all_different(pos)
        for v in range(n):
            for w in self.succ[v]:
                m.add(pos[v] + 1 <= pos[w])

    def add_dominance(self) -> None:
        """Order dominance: the allowed neighbours after an ALLOC and before a FREE."""
        m, x, lo, hi, n = self.m, self.x, self.lo, self.hi, self.n
        after, before = _allowed_neighbours(self.inst, self.succ)
        for a, ok in after.items():
            for i in range(lo[a], hi[a] + 1):
                if i + 1 >= n:
                    m.add(x[a, i] == 0)
                    continue
                m.add(x[a, i] <= sum(x[w, i + 1] for w in ok if (w, i + 1) in x))
        for f, ok in before.items():
            for i in range(lo[f], hi[f] + 1):
                if i == 0:
                    m.add(x[f, i] == 0)
                    continue
                m.add(x[f, i] <= sum(x[w, i - 1] for w in ok if (w, i - 1) in x))

    def _need(self, nodes: list[int], i: int):
        return sum(self.X(v, i) for v in nodes)

    def add_residency(self, b: int, need_nodes: list[int]) -> None:
        """Buffer ``b`` resident ``r[b, i]`` only while alive (ALLOC at or before i, FREE not
        before i) and at every point that needs it; its offset ``y[b, i]`` and rectangle."""
        inst, X = self.inst, self.X
        a, f = int(inst.buf_alloc[b]), int(inst.buf_free[b])
        started = 0
        ended_before = 0
        for i in range(self.lo[a], self.hi[f] + 1):
            started = started + X(a, i)
            self.add_cell(b, i, started - ended_before, self._need(need_nodes, i))
            ended_before = ended_before + X(f, i)

    def add_cell(self, b: int, i: int, alive: Any, need: Any) -> Any:
        """``r[b, i]`` (resident at most while ``alive``, at least where ``need``), the
        offset ``y[b, i]`` inside the tier and the rectangle of that cell; returns ``r[b, i]``."""
        inst, m = self.inst, self.m
        t, s = int(inst.buf_tier[b]), int(inst.buf_size[b])
        cap = inst.hw.capacity[inst.hw.tiers[t]]
        rb = m.new_bool_var(f"r{b}_{i}")
        self.r[b, i] = rb
        m.add(rb <= alive)
        m.add(rb >= need)
        yb = m.new_int_var(0, cap - s, f"y{b}_{i}")
        self.y[b, i] = yb
        m.add(yb == 0).only_enforce_if(rb.negated())
        xs, ys = self.rect.setdefault(t, ([], []))
        xs.append(m.new_optional_fixed_size_interval_var(i, 1, rb, f"xi{b}_{i}"))
        ys.append(m.new_optional_fixed_size_interval_var(yb, s, rb, f"yi{b}_{i}"))
        self.load.setdefault((t, i), []).append(s * rb)
        return rb

    def add_spills(self, b: int, need_nodes: list[int]) -> None:
        """Spill ``o[b, i]`` right after point i: out for the whole gap, back (at any
        offset) by the next point that needs it; its traffic (docs/rules.md, section 5.3) is the cost."""
        inst, X, r = self.inst, self.X, self.r
        a, f = int(inst.buf_alloc[b]), int(inst.buf_free[b])
        for i in range(self.lo[a], self.hi[f]):
            self.link_step(
                b,
                i,
                r[b, i],
                r[b, i + 1],
                self._need(need_nodes, i),
                self._need(need_nodes, i + 1),
                X(f, i),
                self.y[b, i],
                self.y[b, i + 1],
            )

    def link_step(
        self, b: int, i: int, ri: Any, rn: Any, need_i: Any, need_next: Any, free_i: Any, yi: Any, yn: Any
    ) -> Any:
        """The step from position ``i`` to ``i + 1`` of buffer ``b`` (residency ``ri``/``rn``,
        offsets ``yi``/``yn``; ``need_*``: whether a point of ``b`` sits there; ``free_i``:
        whether FREE(b) sits at ``i``): the spill ``o[b, i]`` and its cost. Shared with the
        order windows of :mod:`dansched.models.windows.order`, which pass their boundary."""
        m = self.m
        ob = m.new_bool_var(f"o{b}_{i}")
        self.o[b, i] = ob
        m.add(ob <= ri)
        m.add(ob <= 1 - free_i)  # no spill at the FREE
        m.add(ob >= ri - rn - free_i)  # leaving residency while alive is a spill
        m.add(ob <= need_i)  # spill right after a point ...
        m.add(rn + ob <= 1 + need_next)  # ... out for the whole gap
        m.add(rn <= ri + need_next)  # spilled stays out until the next point
        m.add(ri <= rn + need_i)  # resident stays resident until the next point
        m.add(yn == yi).only_enforce_if([ri, rn, ob.negated()])
        self.cost_terms.append(spill_cost(self.inst, b) * ob)
        self.spill_terms.append(ob)
        return ob

    def add_tier_capacity(self) -> None:
        """Per tier, resident rectangles (position x address) never overlap, and the
        resident sizes at each position fit (the redundant cumulative of each no-overlap-2D)."""
        hw = self.inst.hw
        for _t, (xs, ys) in self.rect.items():
            self.m.add_no_overlap_2d(xs, ys)
        for (t, _i), terms in self.load.items():
            if len(terms) > 1:
                self.m.add(sum(terms) <= hw.capacity[hw.tiers[t]])

    def set_objective(self, tie_break_spills: bool) -> int:
        """Least traffic (then, with ``tie_break_spills``, fewest spills); returns the weight
        of the traffic term."""
        if not self.cost_terms:
            return 1
        if tie_break_spills:
            weight = len(self.spill_terms) + 1
            self.m.minimize(weight * sum(self.cost_terms) + sum(self.spill_terms))
            return weight
        self.m.minimize(sum(self.cost_terms))
        return 1


def _build(
    inst: Instance, dominance: bool, tie_break_spills: bool, max_spills: int | None = None
) -> tuple[cp_model.CpModel, _Vars, int]:
    """The joint model (module docstring), built per constraint family: the order, the
    optional dominance, residency and spills of each buffer of a pressured tier, the tier
    capacities, then the objective."""
    jb = _JointBuilder(inst)
    jb.add_order()
    if dominance:
        jb.add_dominance()
    pressured = _pressured_tiers(inst)
    active = [b for b in range(inst.num_buffers) if int(inst.buf_tier[b]) in pressured]
    users = inst.lists().users
    for b in active:
        need_nodes = [int(inst.buf_alloc[b]), int(inst.buf_free[b])] + list(users[b])
        jb.add_residency(b, need_nodes)
        jb.add_spills(b, need_nodes)
    if max_spills is not None and jb.spill_terms:
        jb.m.add(sum(jb.spill_terms) <= max_spills)
    jb.add_tier_capacity()
    weight = jb.set_objective(tie_break_spills)
    return jb.m, _Vars(jb.x, jb.r, jb.o, jb.y, jb.pos, active, jb.lo, jb.hi), weight


def _hint(m: cp_model.CpModel, inst: Instance, v: _Vars, plan: Plan, dominance: bool) -> bool:
    """Hint a valid plan (any order): its order made canonical, and its offsets at points and
    spilled gaps read with :func:`~dansched.models.exact.placement.plan_points`. False when the
    plan's order does not fit the model's position windows."""
    _, offs, spilled = plan_points(inst, plan)
    base = canonical_order(inst, plan.order) if dominance else [u for u in plan.order if u < inst.n]
    posn = {u: i for i, u in enumerate(base)}
    if any((u, i) not in v.x for u, i in posn.items()):
        return False
    for (u, i), var in v.x.items():
        m.add_hint(var, int(posn[u] == i))
    for u, var in enumerate(v.pos):
        m.add_hint(var, posn[u])
    pts = residency_points(inst, base)
    for b in v.active:
        p = pts[b]
        res: dict[int, int] = {}
        off: dict[int, int] = {}
        outs: set[int] = set()
        for j, q in enumerate(p):
            res[q], off[q] = 1, offs[b][j]
            if j + 1 < len(p):
                if spilled[b][j]:
                    outs.add(q)
                else:
                    for k in range(q + 1, p[j + 1]):
                        res[k], off[k] = 1, offs[b][j]
        for (bb, i), var in v.r.items():
            if bb == b:
                m.add_hint(var, res.get(i, 0))
                m.add_hint(v.y[b, i], off.get(i, 0))
        for (bb, i), var in v.o.items():
            if bb == b:
                m.add_hint(var, int(i in outs))
    return True


def _prefix_offsets(inst: Instance, buffers: Sequence[int]) -> dict[int, int]:
    """Offsets packing each tier's ``buffers`` side by side from address 0."""
    used: dict[int, int] = {}
    out: dict[int, int] = {}
    for b in buffers:
        t = int(inst.buf_tier[b])
        out[b] = used.get(t, 0)
        used[t] = out[b] + int(inst.buf_size[b])
    return out


def _extract(inst: Instance, solver: cp_model.CpSolver, v: _Vars) -> Plan:
    n = inst.n
    base = [0] * n
    for (u, i), var in v.x.items():
        if solver.value(var):
            base[i] = u
    pts = residency_points(inst, base)
    active = set(v.active)
    fixed = _prefix_offsets(inst, [b for b in range(inst.num_buffers) if b not in active])
    offs: list[list[int]] = []
    spilled: list[list[bool]] = []
    for b, p in enumerate(pts):
        if b in active:
            offs.append([int(solver.value(v.y[b, q])) for q in p])
            spilled.append([bool(solver.value(v.o[b, q])) for q in p[:-1]])
        else:
            offs.append([fixed[b]] * len(p))
            spilled.append([False] * max(0, len(p) - 1))
    return points_to_plan(inst, base, pts, offs, spilled)


def _topological(inst: Instance) -> list[int]:
    preds, succs = lifetime_graph(inst)
    return smallest_first_order(succs, [len(p) for p in preds])


def joint_min_traffic(
    inst: Instance,
    *,
    hint: Plan | None = None,
    deterministic_time: float = 30.0,
    time_limit: float = 300.0,
    seed: int = 0,
    dominance: bool = False,
    tie_break_spills: bool = False,
    max_spills: int | None = None,
    max_nodes: int = BoundParams().joint_max_nodes,  # O(N^2 + B*N) variables: not meant for more
) -> JointResult:
    """The least extra traffic of any valid plan of ``inst`` (see the module docstring).

    ``hint``: a valid plan (e.g. the pipeline's) to start from. ``deterministic_time``:
    CP-SAT's deterministic budget (the result depends on it, not on the machine);
    ``time_limit``: a wall-clock safety net only. ``dominance``: the order dominance
    constraints. ``tie_break_spills``: among least-traffic plans, fewest spills.
    ``max_spills``: allow at most that many spills (``0``: is there a plan without any?);
    the bound is then over the plans with at most that many.
    Raises :class:`JointModelTooLarge` past ``max_nodes`` nodes and
    :class:`JointModelError` if a solution fails the evaluator."""
    if inst.n > max_nodes:
        raise JointModelTooLarge(f"joint model: {inst.n} nodes, more than max_nodes={max_nodes}")
    stats: dict[str, Any] = {"nodes": inst.n, "buffers": inst.num_buffers}
    if not _pressured_tiers(inst):
        # every tier holds all its buffers at once: any order, side-by-side offsets, no spill
        base = [u for u in hint.order if u < inst.n] if hint is not None else _topological(inst)
        pts = residency_points(inst, base)
        fixed = _prefix_offsets(inst, range(inst.num_buffers))
        plan = points_to_plan(
            inst,
            base,
            pts,
            [[fixed[b]] * len(p) for b, p in enumerate(pts)],
            [[False] * max(0, len(p) - 1) for p in pts],
        )
        ev = _judge(inst, plan, 0)
        stats.update(active_buffers=0, wall_seconds=0.0, deterministic_time=0.0)
        return JointResult("OPTIMAL", 0, 0, 0, plan, ev, stats)

    m, v, weight = _build(inst, dominance, tie_break_spills, max_spills)
    hinted = _hint(m, inst, v, hint, dominance) if hint is not None else False
    solver = deterministic_solver(seed, deterministic_time, time_limit)
    status = solve_model(solver, m)
    name = solver.status_name(status)
    stats.update(
        active_buffers=len(v.active),
        variables=len(m.proto.variables),
        constraints=len(m.proto.constraints),
        hinted=hinted,
        wall_seconds=round(solver.wall_time, 3),
        deterministic_time=round(solver.deterministic_time, 3),
        branches=solver.num_branches,
        stopped_by_clock=stopped_by_clock(solver, status),
    )
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        # INFEASIBLE only with max_spills: without it, spilling every gap of every buffer is
        # feasible for any loadable instance (each operation's buffers fit their tiers)
        bound = 0 if status == cp_model.INFEASIBLE else max(0, _traffic_bound(solver.best_objective_bound, weight))
        return JointResult(name, None, None, bound, stats=stats)
    plan = _extract(inst, solver, v)
    objective = int(round(solver.objective_value))
    traffic = objective // weight if tie_break_spills else objective
    ev = _judge(inst, plan, traffic)
    bound = _traffic_bound(solver.best_objective_bound, weight)
    if status == cp_model.OPTIMAL:
        bound = traffic
    return JointResult(name, traffic, ev.spill_count, min(bound, traffic), plan, ev, stats)


def _traffic_bound(objective_bound: float, weight: int) -> int:
    """A traffic lower bound from CP-SAT's objective bound. The objective is integral, and
    with the spill tie-break it is ``weight * traffic + spills`` with ``spills < weight``."""
    return max(0, math.ceil(objective_bound - 1e-6) // weight)


def _judge(inst: Instance, plan: Plan, traffic: int) -> Evaluation:
    ev = evaluate(inst, plan)
    if not ev.valid:
        first = ev.first_violation("?")
        raise JointModelError(
            f"joint model: plan rejected by the evaluator ({ev.error_count} violation(s)); first: {first}"
        )
    if ev.extra_traffic != traffic:
        raise JointModelError(f"joint model: plan has traffic {ev.extra_traffic}, the model says {traffic}")
    return ev
