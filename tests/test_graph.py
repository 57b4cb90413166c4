"""The lifetime graph, one home for every model and stage: the instance edges plus
ALLOC -> user -> FREE, compared with a tiny instance's graph written out by hand."""

from __future__ import annotations

from helpers import alloc, free, op

from dansched.graph import bottom_level, build_mpas_graph, lifetime_graph, tail_after
from dansched.instance import instance_from_records
from dansched.models.bounds.traffic_global import _dag
from dansched.models.exact.joint import _precedence
from dansched.stages.dlr.reorder import is_topological

# b0 is used by 2 and 3, b1 by 3; the instance states only the edge 2 -> 3
NODES = [
    alloc(0, 0, 4),
    alloc(1, 1, 4),
    op(2, "ADD", "VECTOR", 3, [0]),
    op(3, "MUL", "VECTOR", 5, [0, 1]),
    free(4, 0, 4),
    free(5, 1, 4),
]
PREDS = [[], [], [0], [0, 1, 2], [0, 2, 3], [1, 3]]
SUCCS = [[2, 3, 4], [3, 5], [3, 4], [4, 5], [], []]


def _inst():
    return instance_from_records("tiny_lifetimes", NODES, [[2, 3]])


def test_lifetime_graph_by_hand():
    inst = _inst()
    assert lifetime_graph(inst) == (PREDS, SUCCS)
    g = build_mpas_graph(inst)
    assert (g.preds, g.succs) == (PREDS, SUCCS)
    assert [sorted(s) for s in _precedence(inst)] == SUCCS
    preds, succs, topo = _dag(inst)
    assert (preds, succs) == (PREDS, SUCCS) and sorted(topo) == list(range(6))
    assert all(topo.index(u) < topo.index(v) for v in range(6) for u in PREDS[v])


def test_lifetime_edges_decide_topological_orders():
    inst = _inst()
    assert is_topological(inst, [0, 1, 2, 3, 4, 5])
    assert not is_topological(inst, [0, 2, 3, 1, 4, 5])  # 3 uses b1 before its ALLOC
    assert not is_topological(inst, [0, 1, 2, 4, 3, 5])  # b0 freed before its user 3


def test_bottom_level_is_eq20_by_hand():
    inst = _inst()
    # h(4) = h(5) = 0, h(3) = 5, h(2) = 3 + 5, h(1) = 0 + h(3), h(0) = max(h(2), h(3), h(4))
    assert build_mpas_graph(inst).h == [8, 5, 8, 5, 0, 0]
    cycles = [0, 0, 3, 5, 0, 0]
    assert bottom_level(PREDS, cycles, [1, 0, 2, 3, 5, 4]) == [8, 5, 8, 5, 0, 0]
    assert tail_after(PREDS, cycles, [0, 1, 2, 3, 4, 5]) == [8, 5, 5, 0, 0, 0]
