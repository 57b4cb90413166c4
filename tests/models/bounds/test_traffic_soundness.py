"""Soundness of the bounds over all orders, against exhaustive search on tiny instances.

Every extra-traffic bound of :mod:`dansched.models.bounds.traffic_orders` must stay at or below
the least traffic the independent Dijkstra search of ``tests/traffic_oracle.py`` finds
(a relaxation of every plan, so at most the true optimum); the makespan floors (the
traffic-forced one and the floor at a plan's own traffic) must stay at or below the
makespan the shared evaluator gives every plan a solve returns. Instances: prefixes of the
random family under the tightest capacities their operations allow (the per-tier bound
bites there), and tiny blocked products with a grid of cells (the grid bounds). A few
dozen run by default; ``-m slow`` runs 500.
"""

from __future__ import annotations

import random
import tempfile
from pathlib import Path

import pytest

from dansched.hardware import load_hardware
from dansched.instance import Instance, instance_from_records
from dansched.models.bounds.floors import makespan_floor_at_traffic, makespan_floors
from dansched.models.bounds.traffic_orders import all_orders_traffic_bounds
from dansched.testing import alloc_record, free_record, op_record, small_random_records, tight_hardware
from tests.traffic_oracle import least_traffic

SHAPES = [(2, 2, 2), (1, 2, 2), (2, 2, 1), (1, 3, 1), (2, 3, 1), (3, 2, 1), (1, 2, 3)]


def tiny_grid(seed: int) -> Instance:
    """A blocked product ``C[i][j] += A[i][k] B[k][j]`` of a random small shape: one MATMUL
    per product using its L0C cell and its two L1 tiles, the products of a cell chained,
    random sizes, and L1 / L0C capacities from one to two working sets."""
    rng = random.Random(seed)
    n_i, n_j, n_k = rng.choice(SHAPES)
    nodes: list[dict] = []
    edges: list[list[int]] = []
    users: dict[int, list[int]] = {}

    def alloc(size: int, tier: str) -> tuple[int, int]:
        b = len(users)
        users[b] = []
        nodes.append(alloc_record(len(nodes), b, size, tier))
        return b, len(nodes) - 1

    sa, sb, sc = rng.choice([1, 2]), rng.choice([1, 2]), rng.choice([1, 2])
    a = {(i, k): alloc(sa, "L1") for i in range(n_i) for k in range(n_k)}
    b = {(k, j): alloc(sb, "L1") for k in range(n_k) for j in range(n_j)}
    c = {(i, j): alloc(sc, "L0C") for i in range(n_i) for j in range(n_j)}
    for i in range(n_i):
        for j in range(n_j):
            prev = None
            for k in range(n_k):
                v = len(nodes)
                bufs = [c[i, j], a[i, k], b[k, j]]
                nodes.append(op_record(v, "MATMUL", "CUBE", rng.randint(1, 9), [x for x, _ in bufs]))
                for x, al in bufs:
                    users[x].append(v)
                    edges.append([al, v])
                if prev is not None:
                    edges.append([prev, v])
                prev = v
    for x, al in [*a.values(), *b.values(), *c.values()]:
        v = len(nodes)
        nodes.append(free_record(v, x, nodes[al]["Size"], nodes[al]["Type"]))
        edges += [[al, v]] + [[u, v] for u in users[x]]
    caps = {"L1": (sa + sb) * rng.choice([1, 1, 2]), "L0C": sc * rng.choice([1, 2])}
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "hw.toml"
        path.write_text("[tiers]\n" + "".join(f"{t} = {v}\n" for t, v in caps.items()))
        hw = load_hardware(path)
    return instance_from_records(f"grid{seed}", nodes, edges, hw)


def random_tight(seed: int) -> Instance:
    nodes, edges = small_random_records(seed, max_nodes=14)
    return instance_from_records(f"random-s{seed}", nodes, edges, tight_hardware(nodes))


def instances(count: int):
    """Three tiny grids for one random prefix (the prefixes rarely need a spill)."""
    for seed in range(count):
        yield random_tight(seed) if seed % 4 == 0 else tiny_grid(seed)


def check(inst: Instance, seen: dict[str, int], solve: bool) -> None:
    opt = least_traffic(inst)
    if opt is None:
        return
    seen["instances"] += 1
    bounds = all_orders_traffic_bounds(inst)
    for name, b in zip(("per tier", "segments", "live lines"), bounds):
        assert b.value <= opt, f"{inst.name}: {b.method} = {b.value} > least traffic {opt}"
        if b.value > 0:
            seen[name] = seen.get(name, 0) + 1
    if not solve:
        return
    from dansched.pipeline import effort_options, run_pipeline

    forced = max(b.value for b in bounds)
    floors = makespan_floors(inst, forced_traffic=forced)
    assert floors.traffic_forced is not None
    ev = run_pipeline(inst, effort_options("fast", problem=3)).evaluation
    assert ev.valid and ev.extra_traffic >= opt, f"{inst.name}: a valid plan below the oracle's optimum"
    assert ev.makespan is not None and floors.traffic_forced.value <= ev.makespan
    at = makespan_floor_at_traffic(inst, ev.extra_traffic, floors)
    assert at.value <= ev.makespan, f"{inst.name}: {at.method} > {ev.makespan}"
    seen["solved"] = seen.get("solved", 0) + 1


def _run(count: int, solved: int) -> dict[str, int]:
    seen = {"instances": 0}
    for i, inst in enumerate(instances(count)):
        check(inst, seen, solve=i < solved)
    return seen


def test_no_bound_exceeds_the_least_traffic_on_tiny_instances():
    seen = _run(24, solved=2)
    assert seen["instances"] >= 20 and seen["solved"] == 2
    assert seen.get("per tier", 0) >= 3, seen  # the per-tier bound is > 0 on some


@pytest.mark.slow
def test_no_bound_exceeds_the_least_traffic_on_500_tiny_instances():
    seen = _run(500, solved=40)
    print(seen)
    assert seen["instances"] >= 400 and seen.get("segments", 0) > 0
