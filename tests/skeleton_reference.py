"""The Python memory skeleton that the compiled one replaced (dansched/stages/cpe/skeleton.py
before the kernel): the oracle of tests/test_kernels.py. Kept as it was, with sets and
dictionaries; it returns the order predecessors of each node, ascending."""

from __future__ import annotations

from collections.abc import Sequence

from dansched.instance import KIND_OP, Instance
from dansched.simulate import AugmentedGraph, spill_of_node


def _event_buffer(inst: Instance, graph: AugmentedGraph, v: int) -> int:
    if v < inst.n:
        return int(inst.node_buf[v])
    return graph.spill_buf[spill_of_node(inst.n, v)[0]]


def order_preds(
    inst: Instance, order: Sequence[int], graph: AugmentedGraph, chain: bool = True
) -> tuple[list[list[int]], tuple[int, ...]]:
    """Each node's order predecessors (Eq. 14) and the memory events in order."""
    L = inst.lists()
    preds: list[set[int]] = [set(ps) for ps in graph.preds]
    events: list[int] = []
    last_event: dict[int, int] = {}  # buffer -> event that started its current segment
    pending: dict[int, list[int]] = {}  # buffer -> operations run in its current segment
    for v in order:
        if v < inst.n and L.kind[v] == KIND_OP:
            for b in L.bufs[v]:
                if b in last_event:
                    preds[v].add(last_event[b])
                pending.setdefault(b, []).append(v)
            continue
        if events and chain:
            preds[v].add(events[-1])
        events.append(v)
        b = _event_buffer(inst, graph, v)
        for u in pending.pop(b, []):
            preds[v].add(u)
        last_event[b] = v
    return [sorted(p) for p in preds], tuple(events)
