"""Makespan lower bounds: the busiest pipe's total cycles and the longest path
(paper Eq. 34's critical chain), on the instance or on a plan's augmented DAG."""

from __future__ import annotations

from collections.abc import Sequence

from ..graph import topological_order
from ..instance import Instance, require_instance
from ..simulate import AugmentedGraph
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


def makespan_lower_bound(
    inst: Instance, graph: AugmentedGraph | None = None, order: Sequence[int] | None = None
) -> Bound:
    """max(busiest pipe load, longest path). With ``graph`` and its schedule ``order``, the
    bound holds for plans with that memory behaviour (spill nodes included); without,
    it holds for every plan of the instance."""
    require_instance(inst, "makespan_lower_bound: inst")
    if graph is None:
        L = inst.lists()
        topo = topological_order(inst)
        load = pipe_load_bound(L.pipe, L.cycles)
        path = longest_path_bound(L.pred, L.cycles, topo)
        scope = "instance"
    else:
        assert order is not None
        load = pipe_load_bound(graph.pipe, graph.cycles)
        path = longest_path_bound(graph.preds, graph.cycles, order)
        scope = "this plan's spills and reuse edges"
    if load >= path:
        return Bound(load, f"busiest pipe load ({scope})")
    return Bound(path, f"longest path ({scope})")
