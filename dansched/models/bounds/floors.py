"""Makespan floors: what the busiest engine allows, for the instance and for a plan.

Each floor is a proven lower bound on the makespan (the cycle simulator of docs/rules.md,
section 7; paper Eqs. 9-10), valid for the plans of its *scope*:

- the **instance floor**: max(busiest pipe's total cycles, longest path) on the
  instance DAG; holds for every plan of the instance;
- the **plan floor**: the same on a plan's augmented DAG G2 (spill tasks
  included: SPILL_OUT on MTE3, SPILL_IN on MTE2, each ``2*Size+150`` cycles, a
  backed SPILL_OUT 0; plus the spill and address-reuse edges); holds for every
  order with that plan's memory behaviour;
- the **head-body-tail** floor per pipe, the one-machine relaxation: every task
  ``v`` of a pipe has a head ``r_v`` (a proven earliest start), a body ``p_v`` (its
  cycles) and a tail ``q_v`` (a proven least time after its end). The pipe runs one task
  at a time, so the makespan is at least ``min r + sum p + min q`` over the pipe's tasks,
  and at least the optimum of the preemptive one-machine problem with heads and tails
  (Jackson's preemptive schedule), which dominates it; and at least ``r_v + p_v + q_v``
  for every node. The heads and tails respect the pipes (:mod:`dansched.models.bounds.heads`:
  the same one-machine bound applied recursively to each node's ancestors, and
  descendants, on each pipe), not only the longest paths (Eq. 32's dependency-only
  earliest start), which treat a node's ancestors on one pipe as if they ran side by
  side. On the instance DAG it holds for every plan, on G2 (from the instance's heads and
  tails on) for the plan's memory behaviour;
- the **traffic floors**: every SPILL_IN runs on the spill-in pipe for
  ``beta * Size + alpha`` cycles (docs/rules.md, section 5.2) and carries ``Size``
  (backed) or ``2 * Size`` bytes of traffic (section 5.3). A plan whose spills carry ``T``
  bytes in all has ``k >= ceil(T / t_max)`` of them (``t_max``: the largest traffic of one
  spill of a buffer of the instance) and their sizes add up to at least
  ``ceil(T * m)`` (``m``: the least ``Size / traffic`` of a buffer, 1/2 when one is not
  backed), so that pipe runs its instance tasks and at least
  ``beta * ceil(T * m) + alpha * k`` cycles of SPILL_IN (:func:`spill_in_load`), each after
  some buffer's ALLOC and SPILL_OUT and before its FREE (:func:`reload_window`): the
  head-body-tail floor of that pipe with those cycles as one more task
  (:func:`traffic_floor`), which grows with ``T``. With ``T`` the traffic proven over all
  orders (:mod:`dansched.models.bounds.traffic_orders`) it holds for every plan (the
  **traffic-forced floor**, the larger of it and the instance floors); with a plan's own
  traffic it holds for every plan carrying at least that much
  (:func:`makespan_floor_at_traffic`, likewise the larger: the floor under a point of the
  traffic-makespan frontier);
- the **address floor** (:func:`address_free_floor`): the plan retimed with every
  address-reuse edge dropped, by the shared simulator; it holds for every re-addressing
  of the plan (the same order and spills), and the plan's makespan less it is what its
  addresses cost;

:func:`makespan_floors` computes them all; :class:`Floors` reports the best and
the gap of a makespan to it.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...graph import topological_order
from ...hardware import spill_traffic
from ...instance import Instance
from ...kernels.csr import csr_of_pairs, int64_array, transposed
from ...params import BoundParams
from ...simulate import AugmentedGraph, simulate_timing_arrays
from .bound import Bound, gap
from .heads import pipe_aware_heads
from .makespan import longest_path_bound

__all__ = [
    "busiest_pipe",
    "busiest_pipe_by_name",
    "HeadsTails",
    "heads_and_tails",
    "head_body_tail",
    "jackson_preemptive_bound",
    "one_machine_floor",
    "dag_floor",
    "Floors",
    "floor_row",
    "instance_floors",
    "makespan_floors",
    "address_free_floor",
    "floor_gaps",
    "INSTANCE_SCOPE",
    "PLAN_SCOPE",
    "TRAFFIC_SCOPE",
    "ADDRESS_SCOPE",
    "ORDER_SCOPES",
    "spill_in_load",
    "reload_window",
    "traffic_floor",
    "makespan_floor_at_traffic",
]

INSTANCE_SCOPE = "global"
PLAN_SCOPE = "fixed memory behaviour"
TRAFFIC_SCOPE = "plans with at least this traffic"
ADDRESS_SCOPE = "fixed order and spills"
ORDER_SCOPES = (INSTANCE_SCOPE, TRAFFIC_SCOPE, PLAN_SCOPE)  # the scopes in which the order may change


def busiest_pipe(pipe: Sequence[int], cycles: Sequence[int]) -> tuple[int, int]:
    """(pipe index, total cycles) of the pipe with the largest load; (-1, 0) when no node
    takes a pipe. Ties go to the smaller pipe index."""
    load: dict[int, int] = {}
    for p, c in zip(pipe, cycles):
        if p >= 0:
            load[p] = load.get(p, 0) + int(c)
    if not load:
        return -1, 0
    p = min(load, key=lambda k: (-load[k], k))
    return p, load[p]


def busiest_pipe_by_name(pipes: Sequence[str], pipe: Sequence[int], cycles: Sequence[int]) -> tuple[str, int]:
    """(name, total cycles) of the busiest pipe (:func:`busiest_pipe`) among the hardware's
    ``pipes``; when no node takes a pipe every pipe ties at 0 and the first is named: the one
    name the frontier's rows and the waits report give.

    >>> busiest_pipe_by_name(["MTE2", "CUBE"], [1, 0, 1, -1], [5, 7, 4, 0])
    ('CUBE', 9)
    >>> busiest_pipe_by_name(["MTE2", "CUBE"], [-1], [0])
    ('MTE2', 0)
    """
    p, load = busiest_pipe(pipe, cycles)
    return pipes[max(p, 0)], load


def head_body_tail(tasks: Sequence[tuple[int, int, int]]) -> int:
    """``min r + sum p + min q`` over one machine's tasks ``(r, p, q)`` (0 for none)."""
    if not tasks:
        return 0
    return min(t[0] for t in tasks) + sum(t[1] for t in tasks) + min(t[2] for t in tasks)


def jackson_preemptive_bound(tasks: Sequence[tuple[int, int, int]]) -> int:
    """Optimum of the preemptive one-machine problem with heads ``r``, bodies ``p`` and
    tails ``q`` (minimise max completion + tail): Jackson's preemptive schedule runs, at
    every moment, the released task with the largest tail. It is at least
    :func:`head_body_tail` of every subset of the tasks, so a floor no worse."""
    ready = sorted(tasks)
    heap: list[tuple[int, int, int]] = []  # (-tail, index, remaining body)
    i, t, best = 0, 0, 0
    n = len(ready)
    while i < n or heap:
        if not heap and ready[i][0] > t:
            t = ready[i][0]
        while i < n and ready[i][0] <= t:
            r, p, q = ready[i]
            heapq.heappush(heap, (-q, i, p))
            i += 1
        negq, k, rem = heapq.heappop(heap)
        nxt = ready[i][0] if i < n else None
        run = rem if nxt is None else min(rem, nxt - t)
        t += run
        rem -= run
        if rem == 0:
            best = max(best, t - negq)
        else:
            heapq.heappush(heap, (negq, k, rem))
    return best


@dataclass(frozen=True)
class HeadsTails:
    """Per node of a DAG, its pipe-aware head and tail (:mod:`dansched.models.bounds.heads`): a
    proven earliest start and a proven least time from its end to the end of the plan."""

    heads: np.ndarray
    tails: np.ndarray

    def __repr__(self) -> str:
        return f"HeadsTails({len(self.heads):,} nodes)"


def heads_and_tails(
    pipe: np.ndarray,
    cycles: np.ndarray,
    pred_ptr: np.ndarray,
    pred_idx: np.ndarray,
    order: Sequence[int],
    limit: int,
    base: HeadsTails | None = None,
) -> HeadsTails:
    """Pipe-aware heads and tails of the CSR DAG (``order``: a topological order of it),
    from ``base`` (heads and tails proven already, e.g. the instance's for a plan's DAG:
    its first nodes are the instance's; zeros for the others) on; ``limit`` the most
    ancestors (descendants) of one pipe a node's head (tail) is computed from."""
    n = len(pipe)
    order_arr = int64_array(order)

    def start(known: np.ndarray | None) -> np.ndarray | None:
        if known is None:
            return None
        out = np.zeros(n, dtype=np.int64)
        m = min(n, len(known))
        out[:m] = known[:m]
        return out

    heads = pipe_aware_heads(pred_ptr, pred_idx, pipe, cycles, order_arr, limit, start(base.heads if base else None))
    succ_ptr, succ_idx = transposed(pred_ptr, pred_idx)  # the tails: the heads of the reversed DAG
    reverse = order_arr[::-1].copy()
    tails = pipe_aware_heads(succ_ptr, succ_idx, pipe, cycles, reverse, limit, start(base.tails if base else None))
    return HeadsTails(heads, tails)


def one_machine_floor(
    pipe: np.ndarray, cycles: np.ndarray, ht: HeadsTails, pipe_names: Sequence[str], scope: str
) -> Bound:
    """The best head-body-tail floor over the pipes, with the heads and tails ``ht`` that
    respect the pipes (:func:`heads_and_tails`): per pipe, the optimum of the preemptive
    one-machine problem with those heads, bodies and tails (Jackson's preemptive schedule,
    which dominates ``min r + sum p + min q``), and the path through each node (its head,
    cycles and tail); the method names the pipe, or the node."""
    pipe_l, cycles_l = pipe.tolist(), cycles.tolist()
    head_l, tail_l = ht.heads.tolist(), ht.tails.tolist()
    per_pipe: dict[int, list[tuple[int, int, int]]] = {}
    for v, p in enumerate(pipe_l):
        if p >= 0:
            per_pipe.setdefault(p, []).append((head_l[v], cycles_l[v], tail_l[v]))
    best, where = 0, -1
    for p in sorted(per_pipe):
        b = jackson_preemptive_bound(per_pipe[p])
        if b > best:
            best, where = b, p
    through = [h + c + q for h, c, q in zip(head_l, cycles_l, tail_l)]
    node = max(range(len(through)), key=through.__getitem__, default=-1)
    if node >= 0 and through[node] > best:
        return Bound(
            through[node], f"the path through node {node}: its head, cycles and tail, which respect the pipes ({scope})"
        )
    name = pipe_names[where] if 0 <= where < len(pipe_names) else "no pipe"
    return Bound(
        best,
        f"head-body-tail on {name}: Jackson's preemptive one-machine bound, heads and tails that respect the pipes ({scope})",
    )


def dag_floor(
    pipe: Sequence[int],
    cycles: Sequence[int],
    preds: Sequence[Sequence[int]],
    topo: Sequence[int],
    pipe_names: Sequence[str],
    scope: str,
) -> Bound:
    """max(busiest pipe's load, longest path (Eq. 34's critical chain)); the method says
    which one and names the pipe."""
    p, load = busiest_pipe(pipe, cycles)
    path = longest_path_bound(preds, cycles, topo)
    if load >= path:
        name = pipe_names[p] if 0 <= p < len(pipe_names) else "no pipe"
        return Bound(load, f"busiest pipe load, {name} ({scope})")
    return Bound(path, f"longest path ({scope})")


@dataclass(frozen=True)
class Floors:
    """The makespan floors of one instance and, when a plan is given, of that plan.
    ``instance_heads``: the instance's pipe-aware heads and tails they were computed from
    (what :func:`makespan_floor_at_traffic` reuses)."""

    instance: Bound
    head_body_tail_instance: Bound
    plan: Bound | None = None
    head_body_tail: Bound | None = None
    # every plan: the larger of the instance floors and the spill-in pipe's floor at the traffic proven over all orders
    traffic_forced: Bound | None = None
    traffic: Bound | None = None  # the same for every plan carrying at least the plan's traffic
    addresses: Bound | None = None  # this plan's order and spills retimed without address-reuse edges
    instance_heads: HeadsTails | None = field(default=None, repr=False, compare=False)

    def named(self) -> dict[str, tuple[Bound, str]]:
        """``{name: (bound, scope)}`` for the floors computed, in a fixed order."""
        out = {
            "instance": (self.instance, INSTANCE_SCOPE),
            "head_body_tail_instance": (self.head_body_tail_instance, INSTANCE_SCOPE),
        }
        extra = (
            ("traffic_forced", self.traffic_forced, INSTANCE_SCOPE),
            ("traffic", self.traffic, TRAFFIC_SCOPE),
            ("plan", self.plan, PLAN_SCOPE),
            ("head_body_tail", self.head_body_tail, PLAN_SCOPE),
            ("addresses", self.addresses, ADDRESS_SCOPE),
        )
        for name, b, scope in extra:
            if b is not None:
                out[name] = (b, scope)
        return out

    def best(self, scope: str | None = None) -> tuple[str, Bound]:
        """The largest floor, of ``scope`` when given (:data:`INSTANCE_SCOPE`: valid for every
        plan; :data:`PLAN_SCOPE`: for this plan's memory behaviour), else of the scopes in
        which the order may change (all but :data:`ADDRESS_SCOPE`), the first in
        :meth:`named` order on ties. ``ValueError`` when no floor has that scope."""
        items = [
            (name, b)
            for name, (b, s) in self.named().items()
            if (s == scope if scope is not None else s in ORDER_SCOPES)
        ]
        if not items:
            raise ValueError(f"no makespan floor of scope {scope!r}")
        return max(items, key=lambda kv: kv[1].value)

    def to_dict(self, makespan: int | None) -> dict[str, Any]:
        """Each floor with method, scope, the gap of ``makespan`` to it and whether it proves
        a plan of ``makespan`` optimal in its scope (``optimal``: the floor meets it); then
        the gaps that say different things (:func:`floor_gaps`): ``gap_to_global_floor``
        (to the best floor valid for every plan: how far any plan could go) and, with a plan,
        ``gap_to_plan_floor`` (to the best floor of this plan's memory behaviour: what
        reordering alone could gain) and ``gap_to_addresses_floor`` (what this plan's rooms
        cost)."""
        out: dict[str, Any] = {}
        for name, (b, scope) in self.named().items():
            out[name] = floor_row(b, scope, makespan)
        return out | floor_gaps(out)


def floor_row(b: Bound, scope: str, makespan: int | None) -> dict[str, Any]:
    """One floor as the reports give it: value, method, scope, the gap of ``makespan`` to it
    and ``optimal`` (``makespan`` is known and the floor meets it: that plan is optimal among
    the plans of the scope)."""
    return {
        "value": int(b.value),
        "method": b.method,
        "scope": scope,
        "gap": gap(makespan, b.value),
        "optimal": makespan is not None and int(b.value) == makespan,
    }


def floor_gaps(floors: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """``global_floor``/``gap_to_global_floor`` and, when floors of those scopes are there,
    ``traffic_floor``/``gap_to_traffic_floor`` (plans with at least this plan's traffic),
    ``plan_floor``/``gap_to_plan_floor`` and ``addresses_floor``/``gap_to_addresses_floor``:
    for each scope the largest floor of ``floors`` (``{name: {value, scope, gap, ...}}``,
    the first on ties) and the gap to it."""
    out: dict[str, Any] = {}
    for scope, key in (
        (INSTANCE_SCOPE, "global"),
        (TRAFFIC_SCOPE, "traffic"),
        (PLAN_SCOPE, "plan"),
        (ADDRESS_SCOPE, "addresses"),
    ):
        named = [k for k, f in floors.items() if isinstance(f, dict) and f.get("scope") == scope]
        if named:
            best = max(named, key=lambda k: floors[k]["value"])
            out[f"{key}_floor"] = best
            out[f"gap_to_{key}_floor"] = floors[best]["gap"]
    return out


def instance_floors(inst: Instance, params: BoundParams | None = None) -> tuple[Bound, Bound, HeadsTails]:
    """The instance's two floors (busiest pipe or longest path; head-body-tail with
    pipe-aware heads and tails) and those heads and tails."""
    params = BoundParams() if params is None else params
    L = inst.lists()
    names = inst.hw.pipes
    topo = topological_order(inst)
    glob = dag_floor(L.pipe, L.cycles, L.pred, topo, names, "instance")
    pipe, cycles = int64_array(inst.pipe), int64_array(inst.cycles)
    ht = heads_and_tails(pipe, cycles, inst.pred_ptr, inst.pred_idx, topo, params.head_set_limit)
    return glob, one_machine_floor(pipe, cycles, ht, names, "instance DAG"), ht


def makespan_floors(
    inst: Instance,
    graph: AugmentedGraph | None = None,
    order: Sequence[int] | None = None,
    forced_traffic: int | None = None,
    plan_traffic: int | None = None,
    params: BoundParams | None = None,
) -> Floors:
    """All floors of ``inst``; with a plan's augmented DAG ``graph`` and its schedule
    ``order`` (a topological order of ``graph``), also the plan's (its memory behaviour's,
    with the instance's heads and tails as the first; and its order's and spills', by
    :func:`address_free_floor`); with ``forced_traffic`` (traffic proven over all orders)
    the traffic-forced floor, with ``plan_traffic`` the floor of every plan carrying at
    least that traffic. ``params``: the limit of the heads and tails
    (``BoundParams.head_set_limit``)."""
    params = BoundParams() if params is None else params
    glob, hbt_glob, ht = instance_floors(inst, params)
    base = (glob, hbt_glob)
    forced = at = None
    if forced_traffic is not None:
        forced = _at_least(inst, forced_traffic, "every plan: traffic forced", base, ht)
    if plan_traffic is not None:
        at = _at_least(inst, plan_traffic, "plans carrying at least", base, ht)
    if graph is None:
        return Floors(glob, hbt_glob, traffic_forced=forced, traffic=at, instance_heads=ht)
    assert order is not None
    names = inst.hw.pipes
    own = dag_floor(graph.pipe, graph.cycles, graph.preds, order, names, "this plan's spills and reuse edges")
    plan_ht = heads_and_tails(
        graph.pipe_array, graph.cycles_array, graph.pred_ptr, graph.pred_idx, order, params.head_set_limit, ht
    )
    hbt_own = one_machine_floor(graph.pipe_array, graph.cycles_array, plan_ht, names, "this plan's augmented DAG")
    return Floors(glob, hbt_glob, own, hbt_own, forced, at, address_free_floor(inst, graph, order), ht)


def address_free_floor(inst: Instance, graph: AugmentedGraph, order: Sequence[int]) -> Bound:
    """This plan retimed with every address-reuse edge dropped (docs/rules.md, section 6: the
    same order, the same spill nodes and spill edges, the same pipes) by the shared cycle
    simulator. Another placement of the same buffers, the order and spills kept, only
    changes which reuse edges there are, and an edge more never makes the simulator's
    start times earlier (Eqs. 9-10 take maxima), so this is a floor for every re-addressing
    of this plan: the plan's makespan less it is what its addresses (its rooms) cost."""
    n = graph.n
    instance = inst.edges
    spills = graph.spill_edge_array.reshape(-1, 2)
    pairs = np.unique(np.concatenate([instance.reshape(-1, 2), spills]).astype(np.int64), axis=0)
    ptr, idx = csr_of_pairs(n, pairs[:, 1].copy(), pairs[:, 0].copy())
    _, _, makespan = simulate_timing_arrays(int64_array(order), ptr, idx, graph.pipe_array, graph.cycles_array)
    return Bound(
        makespan,
        f"this plan's order and spills retimed without its {len(graph.reuse_edge_array):,} address-reuse "
        "edges (the same pipes): every re-addressing of this plan takes at least this long",
    )


def spill_in_load(inst: Instance, traffic: int) -> int:
    """The least cycles the SPILL_INs of any plan whose spills carry ``traffic`` bytes (or
    more) add to the spill-in pipe: ``beta * ceil(T * m) + alpha * ceil(T / t_max)`` (module
    docstring); 0 for no traffic or no buffer."""
    if traffic <= 0 or inst.num_buffers == 0:
        return 0
    sizes = inst.buf_size.tolist()
    backed = inst.buf_backed.tolist()
    pairs = [(sizes[b], spill_traffic(sizes[b], backed[b])) for b in range(inst.num_buffers)]
    t_max = max(t for _s, t in pairs)
    least_bytes = min(-(-traffic * s // t) for s, t in pairs)  # ceil(T * Size / traffic), least over buffers
    spills = -(-traffic // t_max)
    return inst.hw.spill_cycles_per_unit * least_bytes + inst.hw.spill_fixed_cycles * spills


def reload_window(inst: Instance, ht: HeadsTails) -> tuple[int, int]:
    """``(head, tail)`` every SPILL_IN of every plan has at least: a SPILL_IN of buffer ``b``
    follows its SPILL_OUT (``2 * Size + 150`` cycles, 0 when backed: docs/rules.md, section
    5.2), which follows ``ALLOC(b)``, and precedes ``FREE(b)``; the least over the buffers of
    the instance's pipe-aware head of ``ALLOC(b)`` plus that SPILL_OUT, and of the tail of
    ``FREE(b)``. (0, 0) without buffers."""
    if inst.num_buffers == 0:
        return 0, 0
    sizes, backed = inst.buf_size.tolist(), inst.buf_backed.tolist()
    alloc, free = inst.buf_alloc.tolist(), inst.buf_free.tolist()
    heads, tails = ht.heads.tolist(), ht.tails.tolist()
    spill_out = [0 if backed[b] else inst.hw.spill_cycles(sizes[b]) for b in range(inst.num_buffers)]
    head = min(heads[alloc[b]] + spill_out[b] for b in range(inst.num_buffers))
    tail = min(tails[free[b]] for b in range(inst.num_buffers))
    return head, tail


def traffic_floor(inst: Instance, traffic: int, what: str, ht: HeadsTails | None = None) -> Bound:
    """The spill-in pipe's floor at ``traffic``: Jackson's preemptive one-machine bound over
    its instance tasks (pipe-aware heads and tails ``ht``, computed when not given) and the
    SPILL_IN cycles that much traffic forces (:func:`spill_in_load`), taken as one task no
    earlier than every SPILL_IN's head and with the least tail (:func:`reload_window`): at
    least the pipe's instance load plus those cycles. ``what`` opens the method (whose plans
    it covers)."""
    ht = ht if ht is not None else instance_floors(inst)[2]
    pipe = inst.hw.spill_in_pipe
    p = inst.hw.pipes.index(pipe)
    on = np.flatnonzero(inst.pipe == p).tolist()
    cycles, heads, tails = inst.cycles.tolist(), ht.heads.tolist(), ht.tails.tolist()
    tasks = [(heads[v], cycles[v], tails[v]) for v in on]
    load = sum(cycles[v] for v in on)
    extra = spill_in_load(inst, traffic)
    head, tail = reload_window(inst, ht)
    value = jackson_preemptive_bound(tasks + ([(head, extra, tail)] if extra else []))
    return Bound(
        max(value, load + extra),
        f"{what} {traffic:,} bytes: {pipe} runs its {load:,} instance cycles and at least "
        f"{extra:,} of SPILL_IN (beta * bytes + alpha * spills), one at a time, from their heads to their "
        f"tails (Jackson's preemptive one-machine bound)",
    )


def _at_least(inst: Instance, traffic: int, what: str, others: Sequence[Bound], ht: HeadsTails) -> Bound:
    """The larger of :func:`traffic_floor` and the floors ``others`` (valid for every plan),
    the method saying which and what the spill-in floor was."""
    own = traffic_floor(inst, traffic, what, ht)
    best = max(others, key=lambda b: b.value, default=own)
    if own.value >= best.value:
        return own
    return Bound(
        best.value,
        f"{what} {traffic:,} bytes: {best.method}, above the spill-in pipe's floor for that traffic ({own.value:,})",
    )


def makespan_floor_at_traffic(inst: Instance, traffic: int, floors: Floors | None = None) -> Bound:
    """A makespan floor for every plan of ``inst`` whose extra traffic is at least
    ``traffic``: the largest of the instance floors (``floors``, computed when not given) and
    the spill-in pipe's floor for that traffic (the floor under a frontier point)."""
    base = floors if floors is not None else makespan_floors(inst)
    ht = base.instance_heads if base.instance_heads is not None else instance_floors(inst)[2]
    return _at_least(inst, traffic, "plans carrying at least", (base.instance, base.head_body_tail_instance), ht)
