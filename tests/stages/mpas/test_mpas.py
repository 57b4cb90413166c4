"""Stage 1 (MPAS): the literal paper rule step by step, the production variant's
validity and determinism, the L0 rule, and the five official targets."""

from __future__ import annotations

import pytest
from helpers import SHIPPED, official_path

from dansched.errors import NoLegalOrderError, PlanInvalidError
from dansched.generate import generate
from dansched.graph import build_mpas_graph, lambda_level
from dansched.instance import instance_from_records, load_instance
from dansched.params import MpasParams
from dansched.plan import Plan
from dansched.simulate import evaluate
from dansched.stages.mpas.greedy import greedy_run
from dansched.stages.mpas.paper import paper_order
from dansched.stages.mpas.stage import VARIANTS, mpas_order, restart_policies
from dansched.stages.mpas.units import build_units
from dansched.testing import alloc_record, free_record, op_record, random_dag, renumbered

# ---------------------------------------------------------------------------------
# small instance builders
# ---------------------------------------------------------------------------------


_alloc, _free, _op = alloc_record, free_record, op_record


def _assert_valid(inst, order):
    ev = evaluate(inst, Plan(order=tuple(order)))
    assert ev.valid, ev.errors[:3]
    return ev.max_v_stay


# ---------------------------------------------------------------------------------
# the literal rule (Algorithm 1, Eqs. 17-21), hand-worked
# ---------------------------------------------------------------------------------


def _hand_instance():
    """Buffers b0 (UB 8), b1 (UB 4), b2 (L1 4); ops X (10 cycles, uses b0),
    Y (3 cycles, uses b1), Z (7 cycles, uses b2); Y -> X.
    h (Eq. 20): X 10, Y 13, Z 7; ALLOC b0 10, ALLOC b1 13, ALLOC b2 7."""
    nodes = [
        _alloc(0, 0, 8, "UB"),
        _alloc(1, 1, 4, "UB"),
        _alloc(2, 2, 4, "L1"),
        _op(3, "X", "VECTOR", 10, [0]),
        _op(4, "Y", "VECTOR", 3, [1]),
        _op(5, "Z", "MTE2", 7, [2]),
        _free(6, 0, 8, "UB"),
        _free(7, 1, 4, "UB"),
        _free(8, 2, 4, "L1"),
    ]
    edges = [[0, 3], [3, 6], [0, 6], [1, 4], [4, 7], [1, 7], [2, 5], [5, 8], [2, 8], [4, 3]]
    return instance_from_records("hand", nodes, edges)


def test_paper_terms_on_hand_example():
    g = build_mpas_graph(_hand_instance())
    assert [lambda_level(k) for k in g.kind] == [2, 2, 2, 1, 1, 1, 0, 0, 0]  # Eq. 18
    assert g.delta_pk == [8, 4, 4, 0, 0, 0, -8, -4, -4]  # Eq. 19
    assert g.h == [10, 13, 7, 10, 13, 7, 0, 0, 0]  # Eq. 20


def test_paper_variant_step_by_step():
    """k=1: Q={0,1,2}, all ALLOCs; Delta 8/4/4, tie 1 vs 2 broken by -h (13 > 7) -> 1.
    k=2: Q={0,2,Y}: Y is an operation (lambda 1) -> 4.  k=3: FREE b1 ready (lambda 0) -> 7.
    k=4: Q={0,2}: Delta 4 < 8 -> 2.  k=5: Z -> 5.  k=6: FREE b2 -> 8.  k=7: 0.  k=8: X.  k=9: 6."""
    g = build_mpas_graph(_hand_instance())
    trace: list = []
    order = paper_order(g, trace)
    assert order == [1, 4, 7, 2, 5, 8, 0, 3, 6]
    assert [k for k, _v, _key in trace] == list(range(9))
    assert trace[0][2] == (2, 4, -13, 1)  # <lambda, Delta, -h, ord> of the first choice
    assert trace[3][2] == (2, 4, -7, 2)
    assert _assert_valid(_hand_instance(), order) == 8


def _l0_hand_instance():
    """a0, a1 in L0A (not counted in the peak, Delta 0), u0 in UB (16); M0 uses a0 and u0,
    M1 uses a1. Eq. 21 prefers both L0A ALLOCs (Delta 0) over u0, which would open a
    second live L0A buffer."""
    nodes = [
        _alloc(0, 0, 128, "L0A"),
        _alloc(1, 1, 128, "L0A"),
        _alloc(2, 2, 16, "UB"),
        _op(3, "M0", "MTE1", 5, [0, 2]),
        _op(4, "M1", "MTE1", 5, [1]),
        _free(5, 0, 128, "L0A"),
        _free(6, 1, 128, "L0A"),
        _free(7, 2, 16, "UB"),
    ]
    edges = [[0, 3], [2, 3], [3, 5], [3, 7], [0, 5], [2, 7], [1, 4], [4, 6], [1, 6]]
    return instance_from_records("l0hand", nodes, edges)


def test_paper_variant_respects_l0_rule_step_by_step():
    """k=1: ALLOC a0 (Delta 0, ord 0). k=2: ALLOC a1 would be next but L0A is live, so it
    waits; ALLOC u0. k=3: M0. k=4: FREEs {5, 7}: Delta -16 < 0 -> 7. k=5: FREE a0, which
    lets a1 back in. k=6: ALLOC a1. k=7: M1. k=8: FREE a1."""
    inst = _l0_hand_instance()
    order = paper_order(build_mpas_graph(inst))
    assert order == [0, 2, 3, 7, 5, 1, 4, 6]
    _assert_valid(inst, order)


def test_paper_variant_is_deterministic():
    inst = load_instance(SHIPPED / "fa_s2.json")
    a = mpas_order(inst, "mpas-paper")
    b = mpas_order(load_instance(SHIPPED / "fa_s2.json"), "mpas-paper")
    assert a.order == b.order and a.variant == "mpas-paper"
    _assert_valid(inst, a.order)


# ---------------------------------------------------------------------------------
# production variant: validity, determinism, quality
# ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["Exp", "conv_s2", "fa_s2", "matmul_s2", "random_s5"])
@pytest.mark.parametrize("variant", VARIANTS)
def test_every_variant_valid_on_shipped_instances(name, variant):
    inst = load_instance(SHIPPED / f"{name}.json")
    res = mpas_order(inst, variant)
    assert _assert_valid(inst, res.order) == res.max_v_stay
    assert res.variant.startswith(variant if variant == "mpas-paper" else "mpas")


@pytest.mark.parametrize("family", ["matmul", "fa", "conv", "random"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_valid_on_generated_graphs(family, seed):
    inst = instance_from_records(f"{family}{seed}", *generate(family, scale=2, seed=seed))
    for variant in VARIANTS:
        res = mpas_order(inst, variant)
        _assert_valid(inst, res.order)


@pytest.mark.parametrize("seed", range(8))
def test_valid_on_random_dags(seed):
    inst = random_dag(seed, n_ops=30)
    res = mpas_order(inst)
    _assert_valid(inst, res.order)
    assert res.max_v_stay <= mpas_order(inst, "mpas-greedy").max_v_stay


def test_production_never_worse_than_literal_on_shipped():
    for name in ["conv_s2", "fa_s2", "matmul_s2", "random_s5"]:
        inst = load_instance(SHIPPED / f"{name}.json")
        assert mpas_order(inst).max_v_stay <= mpas_order(inst, "mpas-paper").max_v_stay


def test_deterministic_and_reports_restarts():
    inst = load_instance(SHIPPED / "fa_s2.json")
    a, b = mpas_order(inst), mpas_order(load_instance(SHIPPED / "fa_s2.json"))
    assert a.order == b.order and a.variant == b.variant and a.restarts == b.restarts
    assert a.restarts and min(a.restarts.values()) == a.max_v_stay


def test_unknown_variant():
    with pytest.raises(ValueError, match="unknown MPAS variant"):
        mpas_order(load_instance(SHIPPED / "Exp.json"), "mpas-nope")


# ---------------------------------------------------------------------------------
# instances with no L0-legal order: exit 1 through PlanInvalidError
# ---------------------------------------------------------------------------------


def test_two_buffers_of_one_l0_tier_in_one_operation():
    nodes = [
        _alloc(0, 0, 64, "L0A"),
        _alloc(1, 1, 64, "L0A"),
        _op(2, "MM", "CUBE", 1, [0, 1]),
        _free(3, 0, 64, "L0A"),
        _free(4, 1, 64, "L0A"),
    ]
    inst = instance_from_records("bad", nodes, [[0, 2], [1, 2], [2, 3], [2, 4], [0, 3], [1, 4]])
    for variant in VARIANTS:
        with pytest.raises(NoLegalOrderError, match="L0A"):
            mpas_order(inst, variant)
    assert issubclass(NoLegalOrderError, PlanInvalidError)


def test_crossed_l0_lifetimes_have_no_legal_order():
    """X uses a (L0A) and must follow ALLOC(b); Y uses b (L0A) and must follow ALLOC(a):
    whichever runs first, the other buffer is already open."""
    nodes = [
        _alloc(0, 0, 64, "L0A"),
        _alloc(1, 1, 64, "L0A"),
        _op(2, "X", "MTE1", 1, [0]),
        _op(3, "Y", "MTE1", 1, [1]),
        _free(4, 0, 64, "L0A"),
        _free(5, 1, 64, "L0A"),
    ]
    edges = [[0, 2], [2, 4], [0, 4], [1, 3], [3, 5], [1, 5], [1, 2], [0, 3]]
    inst = instance_from_records("crossed", nodes, edges)
    for variant in VARIANTS:  # said only with a proof, here the exact search's: the two lifetimes overlap
        with pytest.raises(NoLegalOrderError, match="no L0-legal order exists: the buffers of ALLOC nodes 0 and 1"):
            mpas_order(inst, variant)


def test_lifetime_cycle_has_no_legal_order():
    """An operation that must run before the ALLOC of a buffer it uses."""
    nodes = [_alloc(0, 0, 8, "UB"), _op(1, "X", "VECTOR", 1, [0]), _free(2, 0, 8, "UB")]
    inst = instance_from_records("cyc", nodes, [[1, 0], [1, 2], [0, 2]])
    with pytest.raises(NoLegalOrderError, match="cycle"):
        mpas_order(inst)


# ---------------------------------------------------------------------------------
# official cases (their targets)
# ---------------------------------------------------------------------------------

TARGETS = {
    "Conv_Case0": 6912,
    "FlashAttention_Case0": 4498,
    "FlashAttention_Case1": 7586,
    "Matmul_Case0": 9216,
    "Matmul_Case1": 34816,
}


# measured with this version; a regression guard below the targets
ACHIEVED = {"FlashAttention_Case0": 4370}


def _check_official(case: str) -> None:
    inst = load_instance(official_path(case))
    res = mpas_order(inst)
    assert _assert_valid(inst, res.order) == res.max_v_stay <= ACHIEVED.get(case, TARGETS[case])


@pytest.mark.slow
def test_official_conv_case0_meets_target():
    _check_official("Conv_Case0")


def test_official_paper_variant_valid_fa0():
    inst = load_instance(official_path("FlashAttention_Case0"))
    _assert_valid(inst, mpas_order(inst, "mpas-paper").order)


@pytest.mark.slow
@pytest.mark.parametrize("case", ["FlashAttention_Case0", "FlashAttention_Case1", "Matmul_Case0", "Matmul_Case1"])
def test_official_targets(case):
    _check_official(case)


@pytest.mark.slow
@pytest.mark.parametrize("case", list(TARGETS))
def test_official_paper_variant_valid(case):
    inst = load_instance(official_path(case))
    _assert_valid(inst, mpas_order(inst, "mpas-paper").order)


def test_same_order_under_different_hash_seeds():
    import os
    import subprocess
    import sys

    code = (
        "from dansched.instance import load_instance; from dansched.stages.mpas.stage import mpas_order; "
        f"r = mpas_order(load_instance({str(SHIPPED / 'fa_s2.json')!r})); print(r.variant, r.order)"
    )
    outs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("1", "12345")
    }
    assert len(outs) == 1


# ---------------------------------------------------------------------------------
# graphs too large for the greedy: the compacted input order (linear time)
# ---------------------------------------------------------------------------------


@pytest.mark.parametrize("family", ["matmul", "fa", "conv", "random"])
def test_compacted_input_order_is_legal_and_no_higher(family):
    from dansched.graph import lazy_eager_order
    from dansched.simulate import max_v_stay

    inst = instance_from_records(family, *generate(family, scale=3, seed=1))
    own = list(range(inst.n))
    compact = lazy_eager_order(build_mpas_graph(inst), own)
    assert sorted(compact) == own
    assert _assert_valid(inst, compact) <= max_v_stay(inst, own)


def test_large_graph_path_compacts_the_input_order():
    inst = instance_from_records("r", *generate("random", scale=20, seed=0))
    res = mpas_order(inst, params=MpasParams(restart_work=inst.n - 1))  # no greedy restart fits the budget
    assert res.variant == "mpas[input, compacted]"
    assert _assert_valid(inst, res.order) == res.max_v_stay
    assert res.max_v_stay <= evaluate(inst, Plan(order=tuple(range(inst.n)))).max_v_stay


def test_every_restart_dead_ending_falls_back_to_the_compacted_input(monkeypatch):
    import dansched.stages.mpas.stage as mpas

    def dead_end(*_args, **_kw):
        return [], "stuck"

    monkeypatch.setattr(mpas, "greedy_run", dead_end)
    inst = instance_from_records("r", *generate("random", scale=5, seed=2))
    res = mpas_order(inst)
    assert res.variant.startswith("input order, compacted")
    _assert_valid(inst, res.order)


@pytest.mark.parametrize(
    "scale, seed, through", [(15, 7, "mpas-paper"), pytest.param(20, 4, "exact L0 search", marks=pytest.mark.slow)]
)
def test_every_greedy_pass_stuck_still_finds_an_order(scale, seed, through):
    """The random family (300 and 400 operations) under another numbering: an L0-legal
    order exists (the family's own id order, which the evaluator accepts), yet every
    greedy restart gets stuck on the L0 rule. Stage 1 falls back -- the paper's Algorithm
    1, then the exact search -- and every variant returns an order the evaluator accepts."""
    nodes, edges = generate("random", scale, seed)
    assert evaluate(instance_from_records("own", nodes, edges), Plan(order=tuple(range(len(nodes))))).valid
    inst = instance_from_records("renumbered", *renumbered(nodes, edges, seed))
    g = build_mpas_graph(inst)
    rank = list(range(g.n))
    for v, i in zip(g.topo, range(g.n)):
        rank[v] = i
    units = build_units(g, rank)
    assert all(greedy_run(g, make(), rank, units)[1] is not None for _, make in restart_policies(g))
    for variant in VARIANTS:
        res = mpas_order(inst, variant)
        assert _assert_valid(inst, res.order) == res.max_v_stay
        if variant == "mpas-greedy":
            assert through in res.variant
