"""Makespan floors: what the busiest engine allows, for the instance and for a plan.

Three floors, each a proven lower bound on the makespan (the cycle simulator of
docs/rules.md, section 7; paper Eqs. 9-10):

- the **instance floor**: max(busiest pipe's total cycles, longest path) on the
  instance DAG; holds for every plan of the instance;
- the **plan floor**: the same on a plan's augmented DAG G2 (spill tasks
  included: SPILL_OUT on MTE3, SPILL_IN on MTE2, each ``2*Size+150`` cycles, a
  backed SPILL_OUT 0; plus the spill and address-reuse edges); holds for every
  order with that plan's memory behaviour;
- the **traffic floors**: every SPILL_IN runs on the spill-in pipe for
  ``beta * Size + alpha`` cycles (docs/rules.md, section 5.2) and carries ``Size``
  (backed) or ``2 * Size`` bytes of traffic (section 5.3). A plan whose spills carry ``T``
  bytes in all has ``k >= ceil(T / t_max)`` of them (``t_max``: the largest traffic of one
  spill of a buffer of the instance) and their sizes add up to at least
  ``ceil(T * m)`` (``m``: the least ``Size / traffic`` of a buffer, 1/2 when one is not
  backed), so that pipe runs at least its instance load plus
  ``beta * ceil(T * m) + alpha * k`` (:func:`spill_in_load`), which grows with ``T``. With
  ``T`` the traffic proven over all orders (:mod:`dansched.models.traffic_orders`) it holds
  for every plan (the **traffic-forced floor**, the larger of it and the instance floors);
  with a plan's own traffic it holds for every plan carrying at least that much
  (:func:`makespan_floor_at_traffic`, likewise the larger: the floor under a point of the
  traffic-makespan frontier);
- the **head-body-tail** floor per pipe, the one-machine relaxation: every task
  ``v`` of a pipe has a head ``r_v`` (longest path to its start, Eq. 32's
  dependency-only earliest start), a body ``p_v`` (its cycles) and a tail
  ``q_v`` (longest path after its end). The pipe runs one task at a time, so the
  makespan is at least ``min r + sum p + min q`` over the pipe's tasks, and at
  least the optimum of the preemptive one-machine problem with heads and tails
  (Jackson's preemptive schedule), which dominates it. On the instance DAG it
  holds for every plan, on G2 for the plan's memory behaviour.

:func:`makespan_floors` computes them all; :class:`Floors` reports the best and
the gap of a makespan to it.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..graph import tail_after, topological_order
from ..hardware import spill_traffic
from ..instance import Instance
from ..simulate import AugmentedGraph
from .bound import Bound, gap
from .makespan import longest_path_bound

__all__ = [
    "busiest_pipe",
    "heads_and_tails",
    "head_body_tail",
    "jackson_preemptive_bound",
    "one_machine_floor",
    "dag_floor",
    "Floors",
    "makespan_floors",
    "floor_gaps",
    "INSTANCE_SCOPE",
    "PLAN_SCOPE",
    "TRAFFIC_SCOPE",
    "spill_in_load",
    "traffic_floor",
    "makespan_floor_at_traffic",
]

INSTANCE_SCOPE = "global"
PLAN_SCOPE = "fixed memory behaviour"
TRAFFIC_SCOPE = "plans with at least this traffic"


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


def heads_and_tails(
    preds: Sequence[Sequence[int]], cycles: Sequence[int], topo: Sequence[int]
) -> tuple[list[int], list[int]]:
    """Per node: head = longest path (summed cycles) ending just before it (the
    dependency-only earliest start theta_v of Eq. 32), tail = longest path starting just
    after it. ``topo`` is a topological order of the graph given by ``preds``."""
    n = len(cycles)
    head = [0] * n
    for v in topo:
        h = 0
        for u in preds[v]:
            e = head[u] + cycles[u]
            if e > h:
                h = e
        head[v] = h
    return head, tail_after(preds, cycles, topo)


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


def one_machine_floor(
    pipe: Sequence[int],
    cycles: Sequence[int],
    preds: Sequence[Sequence[int]],
    topo: Sequence[int],
    pipe_names: Sequence[str],
    scope: str,
) -> Bound:
    """The best head-body-tail floor over the pipes (Jackson's preemptive schedule per
    pipe, which dominates ``min r + sum p + min q``); the method names the pipe."""
    head, tail = heads_and_tails(preds, cycles, topo)
    per_pipe: dict[int, list[tuple[int, int, int]]] = {}
    for v, p in enumerate(pipe):
        if p >= 0:
            per_pipe.setdefault(p, []).append((head[v], int(cycles[v]), tail[v]))
    best, where = 0, -1
    for p in sorted(per_pipe):
        b = jackson_preemptive_bound(per_pipe[p])
        if b > best:
            best, where = b, p
    name = pipe_names[where] if 0 <= where < len(pipe_names) else "no pipe"
    return Bound(best, f"head-body-tail on {name}: one-machine relaxation, Jackson preemptive schedule ({scope})")


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
    """The makespan floors of one instance and, when a plan is given, of that plan."""

    instance: Bound
    head_body_tail_instance: Bound
    plan: Bound | None = None
    head_body_tail: Bound | None = None
    # every plan: the larger of the instance floors and the spill-in load of the traffic proven over all orders
    traffic_forced: Bound | None = None
    traffic: Bound | None = None  # the same for every plan carrying at least the plan's traffic

    def named(self) -> dict[str, tuple[Bound, str]]:
        """``{name: (bound, scope)}`` for the floors computed, in a fixed order."""
        out = {
            "instance": (self.instance, INSTANCE_SCOPE),
            "head_body_tail_instance": (self.head_body_tail_instance, INSTANCE_SCOPE),
        }
        if self.traffic_forced is not None:
            out["traffic_forced"] = (self.traffic_forced, INSTANCE_SCOPE)
        if self.traffic is not None:
            out["traffic"] = (self.traffic, TRAFFIC_SCOPE)
        if self.plan is not None:
            out["plan"] = (self.plan, PLAN_SCOPE)
        if self.head_body_tail is not None:
            out["head_body_tail"] = (self.head_body_tail, PLAN_SCOPE)
        return out

    def best(self, scope: str | None = None) -> tuple[str, Bound]:
        """The largest floor, of ``scope`` when given (:data:`INSTANCE_SCOPE`: valid for every
        plan; :data:`PLAN_SCOPE`: for this plan's memory behaviour), the first in
        :meth:`named` order on ties. ``ValueError`` when no floor has that scope."""
        items = [(name, b) for name, (b, s) in self.named().items() if scope is None or s == scope]
        if not items:
            raise ValueError(f"no makespan floor of scope {scope!r}")
        return max(items, key=lambda kv: kv[1].value)

    def to_dict(self, makespan: int | None) -> dict[str, Any]:
        """Each floor with method, scope and the gap of ``makespan`` to it; then the two gaps
        that say different things: ``gap_to_global_floor`` (to the best floor valid for
        every plan: how far any plan could go) and, with a plan, ``gap_to_plan_floor`` (to
        the best floor of this plan's memory behaviour: what reordering alone could gain)."""
        out: dict[str, Any] = {}
        for name, (b, scope) in self.named().items():
            out[name] = {"value": int(b.value), "method": b.method, "scope": scope, "gap": gap(makespan, b.value)}
        return out | floor_gaps(out)


def floor_gaps(floors: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """``global_floor``/``gap_to_global_floor`` and, when floors of those scopes are there,
    ``traffic_floor``/``gap_to_traffic_floor`` (plans with at least this plan's traffic) and
    ``plan_floor``/``gap_to_plan_floor``: for each scope the largest floor of
    ``floors`` (``{name: {value, scope, gap, ...}}``, the first on ties) and the gap to it."""
    out: dict[str, Any] = {}
    for scope, key in ((INSTANCE_SCOPE, "global"), (TRAFFIC_SCOPE, "traffic"), (PLAN_SCOPE, "plan")):
        named = [k for k, f in floors.items() if isinstance(f, dict) and f.get("scope") == scope]
        if named:
            best = max(named, key=lambda k: floors[k]["value"])
            out[f"{key}_floor"] = best
            out[f"gap_to_{key}_floor"] = floors[best]["gap"]
    return out


def makespan_floors(
    inst: Instance,
    graph: AugmentedGraph | None = None,
    order: Sequence[int] | None = None,
    forced_traffic: int | None = None,
    plan_traffic: int | None = None,
) -> Floors:
    """All floors of ``inst``; with a plan's augmented DAG ``graph`` and its schedule
    ``order`` (a topological order of ``graph``), also the plan's; with ``forced_traffic``
    (traffic proven over all orders) the traffic-forced floor, with ``plan_traffic`` the
    floor of every plan carrying at least that traffic."""
    L = inst.lists()
    names = inst.hw.pipes
    topo = topological_order(inst)
    glob = dag_floor(L.pipe, L.cycles, L.pred, topo, names, "instance")
    hbt_glob = one_machine_floor(L.pipe, L.cycles, L.pred, topo, names, "instance DAG")
    base = (glob, hbt_glob)
    forced = None if forced_traffic is None else _at_least(inst, forced_traffic, "every plan: traffic forced", base)
    at = None if plan_traffic is None else _at_least(inst, plan_traffic, "plans carrying at least", base)
    if graph is None:
        return Floors(glob, hbt_glob, traffic_forced=forced, traffic=at)
    assert order is not None
    own = dag_floor(graph.pipe, graph.cycles, graph.preds, order, names, "this plan's spills and reuse edges")
    hbt_own = one_machine_floor(graph.pipe, graph.cycles, graph.preds, order, names, "this plan's augmented DAG")
    return Floors(glob, hbt_glob, own, hbt_own, forced, at)


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


def traffic_floor(inst: Instance, traffic: int, what: str) -> Bound:
    """The spill-in pipe's instance load plus :func:`spill_in_load` of ``traffic``; ``what``
    opens the method (whose plans it covers)."""
    pipe = inst.hw.spill_in_pipe
    p = inst.hw.pipes.index(pipe)
    L = inst.lists()
    load = sum(int(c) for q, c in zip(L.pipe, L.cycles) if q == p)
    extra = spill_in_load(inst, traffic)
    return Bound(
        load + extra,
        f"{what} {traffic:,} bytes: {pipe} runs its {load:,} instance cycles and at least "
        f"{extra:,} of SPILL_IN (beta * bytes + alpha * spills)",
    )


def _at_least(inst: Instance, traffic: int, what: str, others: Sequence[Bound]) -> Bound:
    """The larger of :func:`traffic_floor` and the floors ``others`` (valid for every plan),
    the method saying which and what the spill-in load was."""
    own = traffic_floor(inst, traffic, what)
    best = max(others, key=lambda b: b.value, default=own)
    if own.value >= best.value:
        return own
    return Bound(
        best.value,
        f"{what} {traffic:,} bytes: {best.method}, above the spill-in pipe's load for that traffic ({own.value:,})",
    )


def makespan_floor_at_traffic(inst: Instance, traffic: int, floors: Floors | None = None) -> Bound:
    """A makespan floor for every plan of ``inst`` whose extra traffic is at least
    ``traffic``: the largest of the instance floors (``floors``, computed when not given) and
    the spill-in pipe's load for that traffic (the floor under a frontier point)."""
    base = floors if floors is not None else makespan_floors(inst)
    return _at_least(inst, traffic, "plans carrying at least", (base.instance, base.head_body_tail_instance))
