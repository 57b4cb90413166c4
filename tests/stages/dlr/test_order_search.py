"""Stage 2's order search: the exact joint model on small graphs, the wave /
sweep search on blocked reductions, and their hook into the pipeline."""

from __future__ import annotations

import sys

import pytest
from helpers import REPO, official_path

from dansched.generate import generate
from dansched.hardware import load_hardware
from dansched.instance import instance_from_records, load_instance
from dansched.models.exact.joint import joint_min_traffic
from dansched.params import OrderSearchParams, WaveParams
from dansched.pipeline import SolveOptions, run_pipeline
from dansched.simulate import evaluate
from dansched.stages.dlr.wave_search import detect_grid, source_loads, sweep_orders, wave_search

sys.path.insert(0, str(REPO / "benchmarks"))
from bench_audit import audit_instance


def _matmul(tmp_path, scale: int, l1_tiles: int):
    """The generator's blocked matmul with L1 cut to ``l1_tiles`` tiles of 128."""
    p = tmp_path / "hw.toml"
    p.write_text(f"[tiers]\nL1 = {128 * l1_tiles}\n")
    nodes, edges = generate("matmul", scale, 0)
    return instance_from_records(f"mm{scale}", nodes, edges, load_hardware(p))


def test_grid_detected_from_structure(tmp_path):
    inst = _matmul(tmp_path, 2, 8)
    grid = detect_grid(inst)
    assert grid is not None and grid.shape == (4, 4, 4) and grid.width == 2
    ops = [v for r in grid.ops for c in r for v in c]
    assert len(set(ops)) == len(ops) == 64
    # every step k of a row uses one row source, the same one across the row's tiles
    for r in grid.ops:
        for k in range(4):
            assert len({grid.sources[c[k]][0] for c in r}) == 1


@pytest.mark.parametrize("family", ["random", "fa", pytest.param("conv", marks=pytest.mark.slow)])
def test_no_grid_in_other_families(family):
    nodes, edges = generate(family, 1, 0)
    assert detect_grid(instance_from_records(family, nodes, edges)) is None


def test_sweeps_are_permutations_of_the_key_ops(tmp_path):
    grid = detect_grid(_matmul(tmp_path, 2, 8))
    keys = sorted(grid.sources)
    for name, seq in sweep_orders(grid, 4).items():
        assert sorted(seq) == keys, name


def test_source_loads_at_least_compulsory(tmp_path):
    inst = _matmul(tmp_path, 2, 8)
    grid = detect_grid(inst)
    sources = {s for pair in grid.sources.values() for s in pair}
    for seq in sweep_orders(grid, 2).values():
        assert source_loads(inst, grid, seq) >= len(sources)


def test_wave_plan_valid_and_not_worse_than_dlr(tmp_path):
    inst = _matmul(tmp_path, 2, 6)
    got = wave_search(inst)
    assert got is not None
    ev = evaluate(inst, got.plan)
    assert ev.valid and ev.extra_traffic == got.traffic
    dlr = run_pipeline(inst, SolveOptions(problem=2, order_search=None)).evaluation
    res = run_pipeline(inst, SolveOptions(problem=2))
    assert res.evaluation.valid and res.evaluation.extra_traffic <= dlr.extra_traffic
    assert res.evaluation.extra_traffic <= got.traffic
    info = res.report.to_dict()["stages"]["dlr"]
    assert info["found_by"] in ("dlr", "wave", "exact")


def test_exact_producer_reaches_the_joint_optimum():
    inst = audit_instance(15, 22)
    dlr = run_pipeline(inst, SolveOptions(problem=2, order_search=None)).evaluation.extra_traffic
    res = run_pipeline(inst, SolveOptions(problem=2))
    joint = joint_min_traffic(inst, deterministic_time=20)
    assert joint.optimal
    assert res.evaluation.valid and res.evaluation.extra_traffic == joint.traffic
    info = res.report.to_dict()["stages"]["dlr"]
    assert info["proven_optimal"] is True and info["bound"] == joint.traffic and info["gap"] == 0
    assert info["found_by"] == ("exact" if joint.traffic < dlr else "dlr")


def test_problem3_inherits_the_search():
    inst = audit_instance(15, 22)
    p2 = run_pipeline(inst, SolveOptions(problem=2)).evaluation.extra_traffic
    p3 = run_pipeline(inst, SolveOptions(problem=3))
    assert p3.evaluation.valid and p3.evaluation.extra_traffic == p2


def test_order_search_deterministic():
    inst = audit_instance(15, 22)
    a = run_pipeline(inst, SolveOptions(problem=2)).plan
    b = run_pipeline(inst, SolveOptions(problem=2)).plan
    assert a == b


@pytest.mark.parametrize(
    "kwargs", [{"exact_max_nodes": -1}, {"exact_max_nodes": 10_000}, {"exact_deterministic_time": 0}]
)
def test_params_validated(kwargs):
    with pytest.raises(ValueError):
        OrderSearchParams(**kwargs)


@pytest.mark.parametrize("kwargs", [{"max_band": 0}, {"replay": 0}, {"keep": 0}, {"max_key_ops": 0}, {"max_nodes": 0}])
def test_wave_params_validated(kwargs):
    with pytest.raises(ValueError):
        WaveParams(**kwargs)


@pytest.mark.slow
@pytest.mark.parametrize("case", ["Matmul_Case0", "Matmul_Case1"])
def test_official_matmul_wave_not_worse(case):
    inst = load_instance(official_path(case))
    dlr = run_pipeline(inst, SolveOptions(problem=2, order_search=None)).evaluation.extra_traffic
    res = run_pipeline(inst, SolveOptions(problem=2))
    assert res.evaluation.valid and res.evaluation.extra_traffic <= dlr
