"""Local improvement of a Stage-1 order (dansched.stages.mpas.improve): a hill climb on the
peak of Eq. 6 over operation sequences. By hand (two loads run before their uses: peak 20,
one buffer at a time: 10), and on small random graphs against a brute force over every
operation sequence and the shared evaluator: the peak it returns is the evaluator's
maxV_stay of the order it stands for, the order is legal, never worse than where it
started and never better than the best sequence there is."""

from __future__ import annotations

import itertools

from helpers import alloc, free, op
from hypothesis import given, settings
from hypothesis import strategies as st

from dansched.graph import build_mpas_graph, lazy_eager_order
from dansched.instance import instance_from_records
from dansched.models.exact.op_model import peak_op_model
from dansched.plan import Plan
from dansched.simulate import evaluate
from dansched.stages.mpas.improve import improve_order


def _improved(inst, start: list[int]) -> tuple[list[int], int, int]:
    """improve_order from the operation sequence ``start`` (node ids): the full order its
    result stands for, the peak it reports, and the evaluator's maxV_stay of the start."""
    g = build_mpas_graph(inst)
    m = peak_op_model(inst, g)
    index = {v: i for i, v in enumerate(m.ops.tolist())}
    seq, peak = improve_order(m, [index[v] for v in start], max_evaluations=500)
    order = lazy_eager_order(g, [int(m.ops[i]) for i in seq])
    first = evaluate(inst, Plan(order=tuple(lazy_eager_order(g, start)))).max_v_stay
    return order, peak, first


def test_improvement_by_hand():
    """UB buffers a and b (10 each): LOAD a, LOAD b, USE a, USE b holds both at once (20);
    each buffer freed before the next is loaded holds 10, the least any order can."""
    nodes = [
        alloc(0, 0, 10),
        op(1, "LOAD", "MTE2", 5, [0]),
        op(2, "USE", "VECTOR", 5, [0]),
        free(3, 0, 10),
        alloc(4, 1, 10),
        op(5, "LOAD", "MTE2", 5, [1]),
        op(6, "USE", "VECTOR", 5, [1]),
        free(7, 1, 10),
    ]
    inst = instance_from_records("two-loads", nodes, [[0, 1], [1, 2], [2, 3], [4, 5], [5, 6], [6, 7]])
    order, peak, first = _improved(inst, [1, 5, 2, 6])
    ev = evaluate(inst, Plan(order=tuple(order)))
    assert first == 20 and peak == ev.max_v_stay == 10 and ev.valid


@st.composite
def _small_graphs(draw):
    """Three UB or L1 buffers, each loaded by one operation and read by another (six
    operations), sometimes one more buffer read, and a few random forward edges between
    operations: the sequences differ in which lifetimes overlap."""
    nodes, ops, edges = [], [], []
    for b in range(3):
        size, tier = draw(st.integers(1, 9)), draw(st.sampled_from(["UB", "L1"]))
        a, f = len(nodes), len(nodes) + 1
        nodes += [alloc(a, b, size, tier), free(f, b, size, tier)]
        load, use = a + 2, a + 3
        extra = draw(st.lists(st.integers(0, b - 1), max_size=1)) if b else []
        nodes += [op(load, "LOAD", "MTE2", 1, [b]), op(use, "VEC", "VECTOR", 1, [b, *extra])]
        ops += [load, use]
        edges += [[a, load], [load, use], [use, f]]
    for e in extra_uses(nodes):
        edges.append(e)
    for u, w in itertools.combinations(ops, 2):
        if draw(st.integers(0, 9)) == 0:
            edges.append([u, w])
    return nodes, edges


def extra_uses(nodes):
    """The lifetime edges of the buffers an operation reads besides its own (ALLOC before
    it, FREE after it)."""
    alloc_of = {r["BufId"]: r["Id"] for r in nodes if r["Op"] == "ALLOC"}
    free_of = {r["BufId"]: r["Id"] for r in nodes if r["Op"] == "FREE"}
    out = []
    for r in nodes:
        if r["Op"] == "VEC":
            for b in r["Bufs"][1:]:
                out += [[alloc_of[b], r["Id"]], [r["Id"], free_of[b]]]
    return out


@settings(max_examples=25, deadline=None)
@given(_small_graphs())
def test_improvement_against_every_operation_sequence(graph):
    """From the worst legal sequence (the highest peak the evaluator measures)."""
    nodes, edges = graph
    inst = instance_from_records("small", nodes, edges)
    g = build_mpas_graph(inst)
    ops = [r["Id"] for r in nodes if r["Op"] in ("LOAD", "VEC")]
    legal = []
    for seq in itertools.permutations(ops):
        order = lazy_eager_order(g, list(seq))
        ev = evaluate(inst, Plan(order=tuple(order)))
        if ev.valid and [v for v in order if v in ops] == list(seq):
            legal.append((list(seq), ev.max_v_stay))
    start = max(legal, key=lambda seq_peak: seq_peak[1])[0]
    order, peak, first = _improved(inst, start)
    ev = evaluate(inst, Plan(order=tuple(order)))
    assert ev.valid and peak == ev.max_v_stay
    assert min(p for _, p in legal) <= peak <= first
