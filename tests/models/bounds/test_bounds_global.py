"""Bounds over all orders: every bound must stay at or below the exact optimum.

- the product-pattern theorem against the exact grid relaxation, and the grid relaxation
  against a brute force over every cell sequence;
- every peak bound against the exact minimum-peak DP on generated and hand-made graphs;
- the global traffic bound against the joint model's optimum and the pipeline's plans;
- audit strength and stage attribution.
"""

from __future__ import annotations

import itertools
import random

import pytest
from helpers import OFFICIAL_CASES, official_path, one_spill_instance

from dansched.application.audit import AuditRow, bound_strength, informative, worst_stage
from dansched.errors import ExactModelTooLarge, NoLegalOrderError
from dansched.generate import GraphBuilder, generate
from dansched.hardware import load_hardware
from dansched.instance import InstanceError, instance_from_records, load_instance
from dansched.models.bounds.bound import Bound
from dansched.models.bounds.peak_bounds import best_peak_bound, peak_bounds
from dansched.models.bounds.peak_product import _grid_dp, find_grids, grid_value, product_peak_bound
from dansched.models.bounds.traffic_global import global_traffic_bound
from dansched.models.exact.joint import joint_min_traffic
from dansched.models.exact.order import exact_min_peak
from dansched.params import PeakBoundParams
from dansched.pipeline import SolveOptions, run_pipeline

# ---- the grid argument on its own ------------------------------------------------------


def _brute_grid(rows, cols) -> int:
    """min over every sequence of the cells of max over u of val(u) (definition, no DP)."""
    n, m = len(rows), len(cols)
    cells = [(i, j) for i in range(n) for j in range(m)]
    best = None
    for seq in itertools.permutations(cells):
        idx = {c: k for k, c in enumerate(seq)}
        worst = 0
        for u in range(len(seq)):
            val = 0
            for i in range(n):
                ks = [idx[(i, j)] for j in range(m)]
                if min(ks) < u < max(ks):
                    val += rows[i]
            for j in range(m):
                ks = [idx[(i, j)] for i in range(n)]
                if min(ks) < u < max(ks):
                    val += cols[j]
            worst = max(worst, val)
        best = worst if best is None else min(best, worst)
    return best


@pytest.mark.parametrize("n,m", [(2, 2), (2, 3), (3, 2)])
def test_grid_dp_equals_brute_force(n, m):
    rng = random.Random(n * 10 + m)
    for _ in range(3):
        rows = [rng.randint(1, 9) for _ in range(n)]
        cols = [rng.randint(1, 9) for _ in range(m)]
        assert _grid_dp(tuple(rows), tuple(cols)) == _brute_grid(rows, cols)


@pytest.mark.parametrize("n,m", [(3, 3), (3, 4), (4, 3), (3, 5)])
def test_grid_theorem_below_exact_relaxation(n, m):
    """The closed-form theorem never exceeds the exact min-max over cell sequences."""
    rng = random.Random(f"{n}x{m}")
    for trial in range(8):
        rows = [rng.choice([1, 2, 3, 5, 8]) for _ in range(n)]
        cols = [rng.choice([1, 2, 3, 5, 8]) for _ in range(m)]
        if trial == 0:
            rows, cols = [1] * n, [1] * m
        exact = _grid_dp(tuple(rows), tuple(cols))
        assert grid_value(rows, cols) <= exact, (rows, cols)
    # uniform grids: the relaxation keeps min(n, m) + 1 lines
    assert _grid_dp(tuple([1] * n), tuple([1] * m)) == min(n, m) + 1


@pytest.mark.parametrize("n", [6, 8, 16])
def test_grid_theorem_gives_n_plus_one_lines(n):
    """From n = 6 on, the closed form reaches the n + 1 lines a row-by-row order keeps."""
    assert grid_value([3] * n, [3] * n) == 3 * (n + 1)


# ---- product graphs ----------------------------------------------------------------------


def _product_graph(n: int, m: int, k: int, seed: int, carriers: bool = True, chain: bool = True, uniform: bool = False):
    """A blocked product with random line sizes: cell (i, j) is an L0C accumulator fed,
    per step, by A[i][kk] and B[kk][j] (L1, loaded once) -- through L0A/L0B MOVEs when
    ``carriers``, else read directly by the product op. Cells are visited in a random order."""
    rng = random.Random(seed)
    g = GraphBuilder()
    A: dict = {}
    B: dict = {}
    left_a: dict = {}
    left_b: dict = {}
    pick = (lambda: 32) if uniform else (lambda: rng.choice([16, 32, 48]))
    sa = {key: pick() for key in itertools.product(range(n), range(k))}
    sb = {key: pick() for key in itertools.product(range(k), range(m))}

    def load(table, key, size):
        if key not in table:
            b = g.alloc(size, "L1")
            table[key] = (b, g.op("COPY_IN", "MTE2", 5, [b]))
        return table[key]

    cells = [(i, j) for i in range(n) for j in range(m)]
    rng.shuffle(cells)
    for i, j in cells:
        c = g.alloc(64, "L0C")
        prev = None
        for kk in range(k):
            ab, ac = load(A, (i, kk), sa[(i, kk)])
            bb, bc = load(B, (kk, j), sb[(kk, j)])
            after = [prev] if (prev is not None and chain) else []
            if carriers:
                la, lb = g.alloc(16, "L0A"), g.alloc(16, "L0B")
                ma = g.op("MOVE", "MTE1", 3, [la, ab], after=[ac])
                mb = g.op("MOVE", "MTE1", 3, [lb, bb], after=[bc])
                prev = g.op("MATMUL", "CUBE", 5, [c, lb, la], after=[ma, mb] + after)
                g.free(la)
                g.free(lb)
            else:
                prev = g.op("MATMUL", "CUBE", 5, [c, ab, bb], after=[ac, bc] + after)
            left_a[(i, kk)] = left_a.get((i, kk), 0) + 1
            left_b[(kk, j)] = left_b.get((kk, j), 0) + 1
            if left_a[(i, kk)] == m:
                g.free(A[(i, kk)][0])
            if left_b[(kk, j)] == n:
                g.free(B[(kk, j)][0])
        g.op("COPY_OUT", "FIXP", 4, [c], after=[prev])
        g.free(c)
    return instance_from_records(f"prod{n}x{m}x{k}-{seed}", *g.records())


def _assert_below_exact(inst, max_states=400_000):
    """Every peak bound <= the exact optimum; returns the optimum (None when out of reach)."""
    try:
        ex = exact_min_peak(inst, max_states=max_states)
    except (ExactModelTooLarge, NoLegalOrderError):
        return None
    for b in peak_bounds(inst, PeakBoundParams(exact_max_nodes=0)):
        assert b.value <= ex.peak, (inst.name, b)
    return ex.peak


@pytest.mark.parametrize("seed", range(6))
def test_product_bound_below_exact_direct_feeds(seed):
    inst = _product_graph(3, 3, 1, seed, carriers=False, chain=bool(seed % 2))
    grids = find_grids(inst)
    assert grids, "the 3 x 3 product is detected"
    opt = _assert_below_exact(inst)
    assert opt is not None and product_peak_bound(inst).value > 0


@pytest.mark.parametrize("seed", range(3))
def test_product_bound_below_exact_generated(seed):
    checked = 0
    for fam, scale in (("random", 1), ("matmul", 1)):
        inst = instance_from_records(f"{fam}{scale}-{seed}", *generate(fam, scale=scale, seed=seed))
        checked += _assert_below_exact(inst, max_states=40_000) is not None
    assert checked >= 1


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_product_bound_below_exact_generated_larger(seed):
    checked = 0
    for fam, scale in (("random", 2), ("conv", 1), ("fa", 1)):
        inst = instance_from_records(f"{fam}{scale}-{seed}", *generate(fam, scale=scale, seed=seed))
        checked += _assert_below_exact(inst) is not None
    assert checked >= 1


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(2))
def test_product_bound_below_exact_with_carriers(seed):
    """3 x 3 grid through L0A/L0B carriers (exact carriers, E = 0): a few hundred thousand
    down-sets, tens of seconds."""
    inst = _product_graph(3, 3, 1, seed, carriers=True)
    assert find_grids(inst)
    assert _assert_below_exact(inst, max_states=3_000_000) is not None


def test_product_bound_proves_uniform_matmul():
    """An 8 x 8 x 2 blocked matmul with equal tiles: (n + 1) lines of K tiles."""
    inst = _product_graph(8, 8, 2, 0, uniform=True)
    b = product_peak_bound(inst)
    assert "exact carriers" in b.method
    assert b.value == 9 * 2 * 32


# ---- global traffic ----------------------------------------------------------------------


def _hw(tmp_path, text):
    p = tmp_path / "hw.toml"
    p.write_text(text)
    return load_hardware(p)


@pytest.mark.parametrize("backed,cost", [(True, 6), (False, 12)])
def test_global_traffic_meets_joint_optimum_when_forced(tmp_path, backed, cost):
    """UB holds 10; a (6) lives across Q, which uses b (6): one spill of a in every order."""
    inst = one_spill_instance(tmp_path, backed)
    b = global_traffic_bound(inst)
    assert b.value == cost
    assert joint_min_traffic(inst, deterministic_time=5).traffic == cost


def _tight_hw(tmp_path):
    return _hw(tmp_path, "[tiers]\nL1 = 600\nUB = 300\nL0A = 128\nL0B = 128\nL0C = 256\n")


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(5))
def test_global_traffic_below_joint_optimum(tmp_path, seed):
    hw = _tight_hw(tmp_path)
    try:
        inst = instance_from_records(f"r{seed}", *generate("random", scale=1, seed=seed), hw)
    except InstanceError:  # a working set larger than a tier: no valid plan to compare
        return
    b = global_traffic_bound(inst)
    assert b.method.startswith("all orders")
    res = joint_min_traffic(inst, deterministic_time=10)
    if res.optimal:
        assert b.value <= res.traffic
    else:
        assert b.value <= (res.traffic if res.traffic is not None else b.value)


@pytest.mark.parametrize("fam,scale", [("random", 2), ("conv", 1), ("fa", 1), ("matmul", 1)])
def test_global_traffic_below_pipeline_plans(tmp_path, fam, scale):
    hw = _tight_hw(tmp_path)
    try:
        inst = instance_from_records(fam, *generate(fam, scale=scale, seed=1), hw)
    except InstanceError:
        return
    b = global_traffic_bound(inst)
    try:  # DLR's plan (the order search's exact model would only lower it: the bound holds a fortiori)
        res = run_pipeline(inst, SolveOptions(problem=2, order_search=None))
    except Exception:  # no valid plan on this tight hardware: nothing to compare
        return
    assert res.evaluation.valid
    assert b.value <= res.evaluation.extra_traffic


def test_global_traffic_says_why_zero():
    inst = instance_from_records("m", *generate("matmul", scale=1, seed=0))
    b = global_traffic_bound(inst)
    assert b.value == 0 and "fits its tier" in b.method


# ---- audit ---------------------------------------------------------------------------------


def test_bound_strength_rule():
    """The strength is the bound's kind, whatever plan it is compared with."""
    for plan_value in (None, 0, 5, 10, 1_000):
        assert bound_strength(Bound(3, "x", optimal=True), "global") == "exact"
        assert bound_strength(Bound(3, "x", optimal=True), "fixed order") == "exact"
        assert bound_strength(Bound(10, "x"), "global") == "lower bound"
        assert bound_strength(Bound(10, "x"), "fixed memory behaviour") == "conditional"
        rows = [AuditRow(m, "CPE", plan_value, Bound(10, "x"), "global") for m in ("makespan",)]
        assert rows[0].strength == "lower bound"
    assert not informative(Bound(4, "x"), 10) and informative(Bound(5, "x"), 10) and informative(Bound(0, "x"), 0)


def test_worst_stage_ignores_weak_bounds():
    rows = [
        AuditRow("max_v_stay", "MPAS", 100, Bound(1, "weak one"), "global"),
        AuditRow("extra_traffic", "DLR", 100, Bound(80, "strong one"), "fixed order"),
        AuditRow("makespan", "CPE", 100, Bound(90, "strong one"), "global"),
    ]
    assert worst_stage(rows) == "DLR"
    assert worst_stage(rows[:1]) is None
    met = [AuditRow("max_v_stay", "MPAS", 100, Bound(100, "meets the plan"), "global")]
    assert worst_stage(met) is None


def test_best_peak_bound_is_exact_on_small_graphs():
    inst = instance_from_records("r", *generate("random", scale=1, seed=3))
    best, allb = best_peak_bound(inst)
    ex = exact_min_peak(inst)
    assert best.optimal and best.value == ex.peak
    assert all(b.value <= ex.peak for b in allb)


# ---- official graphs (slow) ----------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("case", OFFICIAL_CASES)
def test_official_bounds_below_plans(case):
    inst = load_instance(official_path(case))
    p1 = run_pipeline(inst, SolveOptions(problem=1))
    p2 = run_pipeline(inst, SolveOptions(problem=2))
    best, allb = best_peak_bound(inst)
    for b in allb:
        assert b.value <= p1.evaluation.max_v_stay, (case, b)
    assert global_traffic_bound(inst).value <= p2.evaluation.extra_traffic
    if case.startswith("Matmul"):
        assert best.value == p1.evaluation.max_v_stay  # proven optimal by the product bound
