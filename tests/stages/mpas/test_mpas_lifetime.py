"""Orders that keep every buffer's lifetime (dansched.stages.mpas.lifetime), for problems 2
and 3. On small random graphs against a brute force over every permutation: the result is
the lexicographically smallest order in which every edge points forward and every buffer's
ALLOC precedes its users and its FREE follows them, the evaluator finds nothing wrong with
it but the single-residency rule (problems 2 and 3 have none), and when no permutation
keeps the lifetimes it is refused."""

from __future__ import annotations

import itertools

import pytest
from helpers import alloc, free, op
from hypothesis import given, settings
from hypothesis import strategies as st

from dansched.errors import NoLegalOrderError
from dansched.instance import instance_from_records
from dansched.plan import Plan
from dansched.simulate import evaluate
from dansched.stages.mpas.lifetime import lifetime_order


@st.composite
def _small_graphs(draw):
    """Two buffers (L0A or UB), up to three operations using them, random edges between any
    two nodes (which may close a lifetime cycle); at most eight nodes."""
    nodes = []
    bufs = []
    for b in range(2):
        tier, size = draw(st.sampled_from(["L0A", "UB"])), draw(st.integers(1, 8))
        bufs.append((b, tier, size))
    ops = draw(st.integers(1, 3))
    ids = draw(st.permutations(range(4 + ops)))
    it = iter(ids)
    for b, tier, size in bufs:
        nodes += [alloc(next(it), b, size, tier), free(next(it), b, size, tier)]
    for _ in range(ops):
        used = draw(st.lists(st.sampled_from([0, 1]), min_size=1, max_size=2, unique=True))
        nodes.append(op(next(it), "VEC", "VECTOR", 1, used))
    pairs = list(itertools.permutations(range(len(nodes)), 2))
    edges = draw(st.lists(st.sampled_from(pairs), max_size=3, unique=True))
    return sorted(nodes, key=lambda r: r["Id"]), [list(e) for e in edges]


def _keeps_lifetimes(order, nodes, edges) -> bool:
    pos = {v: i for i, v in enumerate(order)}
    if any(pos[u] > pos[w] for u, w in edges):
        return False
    for r in nodes:
        if r["Op"] == "ALLOC":
            b = r["BufId"]
            (f,) = [x["Id"] for x in nodes if x["Op"] == "FREE" and x["BufId"] == b]
            users = [x["Id"] for x in nodes if x["Op"] not in ("ALLOC", "FREE") and b in x["Bufs"]]
            if pos[r["Id"]] > pos[f] or any(not pos[r["Id"]] < pos[u] < pos[f] for u in users):
                return False
    return True


@settings(max_examples=40, deadline=None)
@given(_small_graphs())
def test_the_smallest_order_that_keeps_every_lifetime(graph):
    nodes, edges = graph
    try:
        inst = instance_from_records("small", nodes, edges)
    except ValueError:  # the random edges closed a cycle of their own: not an instance
        return
    best = next((p for p in itertools.permutations(range(len(nodes))) if _keeps_lifetimes(p, nodes, edges)), None)
    if best is None:
        with pytest.raises(NoLegalOrderError, match="form a cycle"):
            lifetime_order(inst)
        return
    order = lifetime_order(inst)
    assert order == list(best)
    ev = evaluate(inst, Plan(order=tuple(order)))
    assert set(ev.error_counts) <= {"l0-single-residency"}


def test_a_lifetime_order_by_hand():
    """Ids 0..6: the edge 5 -> 1 makes the second buffer's operation run first."""
    nodes = [
        alloc(0, 7, 4),
        op(1, "VEC", "VECTOR", 1, [7]),
        free(2, 7, 4),
        alloc(3, 8, 4),
        free(4, 8, 4),
        op(5, "VEC", "VECTOR", 1, [8]),
        op(6, "VEC", "VECTOR", 1, [7, 8]),
    ]
    inst = instance_from_records("hand", nodes, [[5, 1]])
    # 0 (ALLOC 7) first; 1 waits for 5, which waits for 3 (ALLOC 8); 6 needs both; then the FREEs
    assert lifetime_order(inst) == [0, 3, 5, 1, 6, 2, 4]
