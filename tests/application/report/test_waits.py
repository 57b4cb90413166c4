"""The binding-constraint chains behind a pipe's idle gaps (dansched.application.report.waits)."""

from __future__ import annotations

import pytest
from helpers import SHIPPED, alloc, exp_records, free, hw_file, op

from dansched.application.report.waits import busiest_pipe_name, pipe_waits
from dansched.hardware import load_hardware
from dansched.instance import instance_from_records, load_instance
from dansched.pipeline import effort_options, run_pipeline
from dansched.plan import Plan
from dansched.simulate import evaluate


def _exp():
    nodes, edges = exp_records()
    inst = instance_from_records("Exp", nodes, edges)
    plan = Plan(order=tuple(range(7)), offsets=((0, 0), (1, 5)))
    ev = evaluate(inst, plan)
    assert ev.valid and ev.makespan == 60
    return inst, plan, ev


def test_exp_waits_follow_the_dag_back_to_the_load():
    inst, plan, ev = _exp()
    vec = pipe_waits(inst, plan, ev, "VECTOR")
    assert (vec.load, vec.idle, vec.tail) == (30, 15, 15)
    assert [(w.chain, w.cycles, w.gaps) for w in vec.waits] == [(("dag:MTE2",), 15, 1)]
    mte3 = pipe_waits(inst, plan, ev, "MTE3", depth=2)
    assert [(w.chain, w.cycles) for w in mte3.waits] == [(("dag:VECTOR", "dag:MTE2"), 45)]
    assert busiest_pipe_name(inst, ev) == "VECTOR"


def test_a_load_waiting_for_the_address_it_reuses(tmp_path):
    """B's ALLOC reuses A's addresses (UB holds one of them), so the COPY_IN of B waits
    for FREE(A), which waits for the VECTOR op on A: the chain says reuse, then VECTOR."""
    nodes = [
        alloc(0, 0, 5),
        op(1, "ADD", "VECTOR", 10, [0]),
        free(2, 0, 5),
        alloc(3, 1, 5),
        op(4, "COPY_IN", "MTE2", 7, [1]),
        free(5, 1, 5),
    ]
    edges = [[0, 1], [1, 2], [3, 4], [4, 5]]
    inst = instance_from_records("reuse", nodes, edges, load_hardware(hw_file(tmp_path, UB=5)))
    plan = Plan(order=tuple(range(6)), offsets=((0, 0), (1, 0)))
    ev = evaluate(inst, plan)
    assert ev.valid and ev.makespan == 17
    w = pipe_waits(inst, plan, ev, "MTE2")
    assert (w.load, w.idle, w.tail) == (7, 10, 0)
    assert [(x.chain, x.cycles) for x in w.waits] == [(("reuse:VECTOR",), 10)]


@pytest.mark.parametrize("name", ["fa_s2", "matmul_s2"])
def test_idle_time_adds_up_on_solved_plans(name):
    """On a pipeline plan, every pipe's load + idle + tail is the makespan, and the waits
    explain every idle cycle with links of the four kinds."""
    inst = load_instance(SHIPPED / f"{name}.json")
    res = run_pipeline(inst, effort_options("fast", problem=3))
    ev = evaluate(inst, res.plan)
    assert ev.valid
    for pipe in inst.hw.pipes:
        w = pipe_waits(inst, res.plan, ev, pipe)
        if w.load == 0:
            continue
        assert w.load + w.idle + w.tail == ev.makespan
        assert sum(x.cycles for x in w.waits) == w.idle
        for x in w.waits:
            assert 1 <= len(x.chain) <= 3
            for link in x.chain:
                kind, _, src = link.partition(":")
                assert kind in {"dag", "spill", "reuse", "pipe", "start"}, link


def test_waits_need_timing():
    inst, plan, ev = _exp()
    ev.drop_detail()
    with pytest.raises(ValueError, match="timing"):
        pipe_waits(inst, plan, ev, "VECTOR")
