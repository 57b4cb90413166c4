"""Makespan lower bounds: the busiest pipe's total cycles and the longest path
(paper Eq. 34's critical chain), on the instance or on a plan's augmented DAG."""

from __future__ import annotations

from collections.abc import Sequence

from ...checks import check_integers, check_type
from ...errors import ArgumentError
from ...graph import smallest_first_order, topological_order
from ...instance import Instance, require_instance
from ...simulate import AugmentedGraph
from .bound import Bound

__all__ = ["pipe_load_bound", "longest_path_bound", "makespan_lower_bound"]


def pipe_load_bound(pipe: Sequence[int], cycles: Sequence[int]) -> int:
    """No pipe runs two nodes at once, so the makespan is at least the busiest pipe's load."""
    load: dict[int, int] = {}
    for p, c in zip(pipe, cycles):
        if p >= 0:
            load[p] = load.get(p, 0) + c
    return max(load.values(), default=0)


def longest_path_bound(preds: Sequence[Sequence[int]], cycles: Sequence[int], topo: Sequence[int]) -> int:
    """Length (summed cycles) of the longest path, the critical chain of Eq. 34; ``topo`` is
    any topological order of the graph given by ``preds``."""
    fin = [0] * len(cycles)
    best = 0
    for v in topo:
        t = max((fin[u] for u in preds[v]), default=0) + cycles[v]
        fin[v] = t
        best = max(best, t)
    return best


def _graph_order(graph: AugmentedGraph, order: Sequence[int] | None) -> list[int]:
    """A topological order of ``graph``: ``order`` checked (every node once, each after its
    predecessors), or without it Kahn's by smallest id; :class:`ArgumentError` otherwise."""
    preds = graph.preds
    if order is None:
        succs: list[list[int]] = [[] for _ in range(graph.n)]
        for v, ps in enumerate(preds):
            for u in ps:
                succs[u].append(v)
        got = smallest_first_order(succs, [len(ps) for ps in preds])
        if len(got) != graph.n:
            raise ArgumentError("makespan_lower_bound: graph has a cycle, so it is not the graph of a valid plan")
        return got
    got = list(check_integers(order, "makespan_lower_bound: order", "node ids"))
    position = [-1] * graph.n
    for i, v in enumerate(got):
        if not 0 <= v < graph.n or position[v] >= 0:
            raise ArgumentError(
                f"makespan_lower_bound: order must hold each of the graph's {graph.n:,} nodes once, got {v!r} "
                f"at position {i}"
            )
        position[v] = i
    if len(got) != graph.n:
        raise ArgumentError(f"makespan_lower_bound: order holds {len(got):,} of the graph's {graph.n:,} nodes")
    for v, ps in enumerate(preds):
        late = next((u for u in ps if position[u] > position[v]), None)
        if late is not None:
            raise ArgumentError(f"makespan_lower_bound: order runs node {v} before its predecessor {late}")
    return got


def makespan_lower_bound(
    inst: Instance, graph: AugmentedGraph | None = None, order: Sequence[int] | None = None
) -> Bound:
    """max(busiest pipe load, longest path). With ``graph`` (a judged plan's
    ``Evaluation.graph``), the bound holds for plans with that memory behaviour (spill
    nodes included); ``order``, a topological order of it (the plan's schedule), is checked,
    or made when not given. Without ``graph``, it holds for every plan of the instance.
    :class:`~dansched.errors.ArgumentError` for a graph of another instance, one with a
    cycle, or an order that is not a topological order of it."""
    require_instance(inst, "makespan_lower_bound: inst")
    if graph is None:
        if order is not None:
            raise ArgumentError("makespan_lower_bound: order is the order of graph: give graph with it")
        L = inst.lists()
        topo = topological_order(inst)
        load = pipe_load_bound(L.pipe, L.cycles)
        path = longest_path_bound(L.pred, L.cycles, topo)
        scope = "instance"
    else:
        check_type(graph, AugmentedGraph, "makespan_lower_bound: graph", "a judged plan's Evaluation.graph")
        if graph.n_orig != inst.n:
            raise ArgumentError(
                f"makespan_lower_bound: graph is of another instance ({graph.n_orig:,} nodes, not {inst.n:,})"
            )
        load = pipe_load_bound(graph.pipe, graph.cycles)
        path = longest_path_bound(graph.preds, graph.cycles, _graph_order(graph, order))
        scope = "this plan's spills and reuse edges"
    if load >= path:
        return Bound(load, f"busiest pipe load ({scope})")
    return Bound(path, f"longest path ({scope})")
