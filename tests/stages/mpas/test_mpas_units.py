"""Units of the production MPAS greedy (dansched.stages.mpas.units), by hand: an operation
whose successors all lead to one consumer and whose buffers are opened inside that unit is a
private feeder of it; an operation read by two units, or one working on a buffer another
unit opens, heads its own unit. Each unit waits for the nodes outside it that its members
need; on generated graphs every operation is in exactly one unit, after its feeders."""

from __future__ import annotations

import pytest
from helpers import alloc, free, generated, op

from dansched.graph import build_mpas_graph
from dansched.instance import KIND_OP, instance_from_records
from dansched.stages.mpas.units import build_units

# a (loaded by 1) is read by F (5), C (6) and D (7); w (loaded by 3) only by C; F makes f for C
NODES = [
    alloc(0, 0, 4),  # a
    op(1, "LOAD_A", "MTE2", 5, [0]),
    alloc(2, 1, 4),  # w
    op(3, "LOAD_W", "MTE2", 5, [1]),
    alloc(4, 2, 4),  # f
    op(5, "F", "VECTOR", 5, [0, 2]),
    op(6, "C", "VECTOR", 5, [0, 1, 2]),
    op(7, "D", "VECTOR", 5, [0]),
    free(8, 0, 4),
    free(9, 1, 4),
    free(10, 2, 4),
]
EDGES = [[0, 1], [2, 3], [1, 5], [4, 5], [1, 6], [3, 6], [5, 6], [1, 7], [6, 8], [7, 8], [6, 9], [6, 10]]


def test_units_by_hand():
    g = build_mpas_graph(instance_from_records("units", NODES, EDGES))
    units = build_units(g, [])
    # LOAD_W feeds C alone on a buffer C's unit opens: C's private feeder, run just before it.
    # F feeds C alone too, but reads a, which LOAD_A (another unit) opens: it heads its own.
    assert units.members == {1: [1], 6: [3, 6], 5: [5], 7: [7]}
    assert [units.head_of[v] for v in (1, 3, 5, 6, 7)] == [1, 6, 5, 6, 7]
    assert units.ext == {1: [], 6: [1, 5], 5: [1], 7: [1]}  # ALLOCs are never waited for
    assert units.waiters[1] == [6, 5, 7] and units.waiters[5] == [6]
    assert all(not units.waiters[v] for v in (0, 2, 3, 4, 6, 7, 8, 9, 10))


@pytest.mark.parametrize("family, seed", [("matmul", 0), ("conv", 1), ("fa", 0)])
def test_every_operation_is_in_one_unit_after_its_feeders(family, seed):
    inst = generated(family, 1, seed, tight=False)
    g = build_mpas_graph(inst)
    units = build_units(g, [])
    ops = [v for v in range(g.n) if g.kind[v] == KIND_OP]
    placed = [v for ms in units.members.values() for v in ms]
    assert sorted(placed) == ops  # each operation once
    topo = {v: i for i, v in enumerate(g.topo)}
    for head, ms in units.members.items():
        assert ms[-1] == head and all(units.head_of[v] == head for v in ms)
        assert [topo[v] for v in ms] == sorted(topo[v] for v in ms)
        inside = set(ms)
        for v in ms[:-1]:  # a feeder's operation successors are all inside its unit
            assert all(w in inside for w in g.succs[v] if g.kind[w] == KIND_OP)
