"""Memory-aware exact windows (--exact-window-mode memory): a hand-computed case where
swapping two segments that share addresses is the only way to go faster, and validity
/ determinism on generated graphs."""

from __future__ import annotations

import pytest

from dansched.generate import generate
from dansched.hardware import load_hardware
from dansched.instance import instance_from_records
from dansched.params import MemoryWindowParams
from dansched.pipeline import SolveOptions, effort_options, run_pipeline
from dansched.pipeline.problem3.stage3.polish import memory_exact_windows
from dansched.plan import Plan
from dansched.simulate import evaluate
from dansched.stages.cpe.refine import cpe_refine


def _swap_case(tmp_path):
    """UB holds 4 units; b0 and b1 (4 units each) both live at offset 0, so one segment
    must end before the other starts. Z (CUBE 50) -> A = COPY_IN b0 (MTE2 10) -> X = VEC b0
    (VECTOR 100); B = COPY_IN b1 (MTE2 10) -> Y = VEC b1 (VECTOR 5)."""
    hw_path = tmp_path / "hw.toml"
    hw_path.write_text("[tiers]\nUB = 4\n")
    nodes = [
        {"Id": 0, "Op": "ALLOC", "BufId": 0, "Size": 4, "Type": "UB"},
        {"Id": 1, "Op": "MATMUL", "Pipe": "CUBE", "Cycles": 50, "Bufs": []},
        {"Id": 2, "Op": "COPY_IN", "Pipe": "MTE2", "Cycles": 10, "Bufs": [0]},
        {"Id": 3, "Op": "VEC", "Pipe": "VECTOR", "Cycles": 100, "Bufs": [0]},
        {"Id": 4, "Op": "FREE", "BufId": 0, "Size": 4, "Type": "UB"},
        {"Id": 5, "Op": "ALLOC", "BufId": 1, "Size": 4, "Type": "UB"},
        {"Id": 6, "Op": "COPY_IN", "Pipe": "MTE2", "Cycles": 10, "Bufs": [1]},
        {"Id": 7, "Op": "VEC", "Pipe": "VECTOR", "Cycles": 5, "Bufs": [1]},
        {"Id": 8, "Op": "FREE", "BufId": 1, "Size": 4, "Type": "UB"},
    ]
    edges = [(0, 2), (1, 2), (2, 3), (3, 4), (5, 6), (6, 7), (7, 8)]
    inst = instance_from_records("swap", nodes, edges, load_hardware(hw_path))
    plan = Plan(order=tuple(range(9)), offsets=((0, 0), (1, 0)), spills=())
    return inst, plan


def test_memory_window_swaps_segments_sharing_addresses(tmp_path):
    inst, plan = _swap_case(tmp_path)
    ev = evaluate(inst, plan)
    assert ev.valid, ev.errors
    # Z 0-50, A 50-60, X 60-160, FREE b0 at 160 -> ALLOC b1 (reuse edge), B 160-170, Y 170-175
    assert ev.makespan == 175
    # with the memory events' order fixed, nothing beats 175 (B waits for X through the reuse edge)
    fixed = cpe_refine(inst, plan, ev, exact_window=64, time_limit=5)
    assert evaluate(inst, fixed.plan).makespan == 175
    # b1's segment first: B 0-10, Y 10-15, FREE b1 at 15, ALLOC b0; Z 0-50, A 50-60, X 60-160
    new_plan, new_ev, stats = memory_exact_windows(inst, plan, ev, MemoryWindowParams(windows=5, width=64))
    assert new_ev.valid and evaluate(inst, new_plan).makespan == 160 == new_ev.makespan
    assert new_plan.order.index(8) < new_plan.order.index(0)  # FREE b1 before ALLOC b0
    assert new_ev.extra_traffic == ev.extra_traffic and new_ev.physical_peak == ev.physical_peak
    assert stats.improved >= 1


def test_memory_window_params_are_validated():
    with pytest.raises(ValueError):
        MemoryWindowParams(deterministic_time=0)
    with pytest.raises(ValueError):
        MemoryWindowParams(windows=-1)
    with pytest.raises(ValueError):
        MemoryWindowParams(width=0)
    with pytest.raises(ValueError):
        effort_options("default", exact_window_mode="bogus")


@pytest.mark.parametrize("family,seed", [("fa", 0), pytest.param("matmul", 1, marks=pytest.mark.slow)])
def test_memory_windows_valid_and_deterministic(family, seed):
    nodes, edges = generate(family, 1, seed)
    inst = instance_from_records(f"{family}{seed}", nodes, edges)
    res = run_pipeline(inst, SolveOptions(problem=3))
    ev = evaluate(inst, res.plan)
    params = MemoryWindowParams(windows=5, width=32, deterministic_time=0.2)
    runs = [memory_exact_windows(inst, res.plan, ev, params) for _ in range(2)]
    (p1, e1, s1), (p2, _, _) = runs
    assert p1 == p2
    again = evaluate(inst, p1)
    assert again.valid and again.makespan == e1.makespan <= ev.makespan
    assert (again.extra_traffic, again.spill_count) == (ev.extra_traffic, ev.spill_count)
    assert p1.offsets == res.plan.offsets and p1.spills == res.plan.spills


def test_the_callers_cpe_params_reach_the_cpe_after_the_windows(tmp_path, monkeypatch):
    """After an improving window, CPE runs again inside the new skeleton with the caller's
    CpeParams (it once ran with the defaults whatever the solve was given); and problem 3
    hands the solve's own CpeParams to the polish."""
    from dansched.params import CpeParams
    from dansched.pipeline.problem3.stage3 import polish, run

    inst, plan = _swap_case(tmp_path)
    ev = evaluate(inst, plan)
    seen = []
    real = polish.cpe_refine

    def spy(*args, **kwargs):
        seen.append(kwargs.get("params"))
        return real(*args, **kwargs)

    monkeypatch.setattr(polish, "cpe_refine", spy)
    mine = CpeParams(width=3, local_evaluations=7)
    s3 = real(inst, plan, ev, params=mine)
    got, got_ev = polish.memory_window_polish(inst, s3, ev, MemoryWindowParams(windows=5), cpe=mine)
    assert got_ev.valid and got_ev.makespan == 160 and got.stats.memory_windows.improved >= 1
    assert seen == [mine]

    handed = []
    real_polish = run.memory_window_polish

    def polish_spy(*args, **kwargs):
        handed.append(kwargs.get("cpe"))
        return real_polish(*args, **kwargs)

    monkeypatch.setattr(run, "memory_window_polish", polish_spy)
    res = run_pipeline(inst, SolveOptions(problem=3, cpe=mine, polish=MemoryWindowParams(windows=2)))
    assert handed and all(p == mine for p in handed) and evaluate(inst, res.plan).valid
