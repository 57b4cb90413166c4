"""The exact search for an L0-legal order (dansched/models/exact/l0_order.py) against a brute
force: on small random graphs whose L0 lifetimes are tangled by extra edges, it finds an
order exactly when a depth-first enumeration of the legal prefixes finds one, every order
it returns passes the evaluator, and from a prefix it completes that prefix."""

from __future__ import annotations

import random

import pytest

from dansched.graph import build_mpas_graph
from dansched.instance import instance_from_records
from dansched.models.exact.l0_order import l0_legal_completion
from dansched.plan import Plan
from dansched.simulate import evaluate
from dansched.testing import alloc_record, free_record, op_record


def tangled(seed: int):
    """Operations on L0A/L0B scratch buffers (one or two operations each) and UB buffers,
    with random extra edges between operations that follow one random order of them (so
    no cycle): some have no L0-legal order, some do."""
    rng = random.Random(seed)
    nodes, edges, ops = [], [], []
    for b in range(rng.randint(3, 5)):
        tier = rng.choice(["L0A", "L0B", "UB"])
        a = len(nodes)
        nodes.append(alloc_record(a, b, 8, tier))
        users = []
        for _ in range(rng.randint(1, 2)):
            v = len(nodes)
            nodes.append(op_record(v, "OP", "VECTOR", 1, [b]))
            edges.append([a, v])
            users.append(v)
        f = len(nodes)
        nodes.append(free_record(f, b, 8, tier))
        edges += [[a, f]] + [[u, f] for u in users]
        ops += users
    rng.shuffle(ops)  # extra edges follow one random order of the operations: no cycle
    for _ in range(rng.randint(1, 4)):
        i, j = sorted(rng.sample(range(len(ops)), 2))
        edges.append([ops[i], ops[j]])
    return instance_from_records(f"tangled{seed}", nodes, edges)


def brute_force_exists(g) -> bool:
    """Whether some topological order keeps one live buffer per single-residency tier
    (depth-first over legal prefixes, memoised on the scheduled set)."""
    seen: set[int] = set()

    def extend(done: int, live: dict[int, int]) -> bool:
        if done == (1 << g.n) - 1:
            return True
        if done in seen:
            return False
        seen.add(done)
        for v in range(g.n):
            if done >> v & 1 or any(not done >> u & 1 for u in g.preds[v]):
                continue
            t = g.l0_tier[v]
            nxt = dict(live)
            if t >= 0 and v == g.buf_alloc[g.node_buf[v]]:
                if t in live:
                    continue
                nxt[t] = g.node_buf[v]
            elif t >= 0:
                nxt.pop(t, None)
            if extend(done | 1 << v, nxt):
                return True
        return False

    return extend(0, {})


@pytest.mark.parametrize("seed", range(40))
def test_the_exact_search_agrees_with_a_brute_force(seed):
    inst = tangled(seed)
    g = build_mpas_graph(inst)
    got = l0_legal_completion(g, [], deterministic_time=5.0, time_limit=60.0)
    assert got.status == ("found" if brute_force_exists(g) else "infeasible")
    if got.status == "found":
        assert evaluate(inst, Plan(order=tuple(got.order))).valid
    else:
        assert got.proof


def test_both_outcomes_occur():
    """The generator tangles enough lifetimes for the comparison to mean something."""
    statuses = set()
    for seed in range(40):
        statuses.add(brute_force_exists(build_mpas_graph(tangled(seed))))
    assert statuses == {True, False}


def test_a_prefix_is_completed_after_its_live_buffer_closes():
    """ALLOC(a) is scheduled (a is live in L0A): the completion frees a before b opens."""
    nodes = [
        alloc_record(0, 0, 8, "L0A"),
        alloc_record(1, 1, 8, "L0A"),
        op_record(2, "X", "VECTOR", 1, [0]),
        op_record(3, "Y", "VECTOR", 1, [1]),
        free_record(4, 0, 8, "L0A"),
        free_record(5, 1, 8, "L0A"),
    ]
    edges = [[0, 2], [2, 4], [0, 4], [1, 3], [3, 5], [1, 5]]
    inst = instance_from_records("prefix", nodes, edges)
    g = build_mpas_graph(inst)
    got = l0_legal_completion(g, [0], deterministic_time=5.0, time_limit=60.0)
    assert got.status == "found" and sorted(got.order) == [1, 2, 3, 4, 5]
    assert evaluate(inst, Plan(order=(0, *got.order))).valid
    assert got.order.index(4) < got.order.index(1)  # a closes before b opens
