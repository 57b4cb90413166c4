"""Every public call of ``dansched.__all__`` checks its arguments before any work: a wrong
type or value raises :class:`dansched.errors.ArgumentError` (a ValueError and a TypeError)
or another class of ``dansched.errors``, with a message naming the argument, never a bare
KeyError, AttributeError or OverflowError from deep inside."""

from __future__ import annotations

import inspect
import math

import pytest
from helpers import SHIPPED

import dansched
from dansched.errors import ArgumentError

EXP = SHIPPED / "Exp.json"


@pytest.fixture(scope="module")
def inst():
    return dansched.load_instance(EXP)


@pytest.fixture(scope="module")
def plan():
    return dansched.Plan(order=(0, 1, 2, 3, 4, 5, 6), offsets=((0, 0), (1, 5)))


# name -> (a call with one bad argument, the words that name it)
MISUSE = {
    "load_instance": (lambda i, p, d: dansched.load_instance(EXP, "x"), "load_instance: hw"),
    "instance_from_records": (lambda i, p, d: dansched.instance_from_records(7, [], []), "name"),
    "write_json": (lambda i, p, d: dansched.write_json("x.json", d / "a.json"), "write_json: inst"),
    "write_csv_pair": (lambda i, p, d: dansched.write_csv_pair(i, None), "write_csv_pair: directory"),
    "generate_file": (lambda i, p, d: dansched.generate_file("chain", 1, 0, 42), "generate_file: out"),
    "load_hardware": (lambda i, p, d: dansched.load_hardware(12), "load_hardware: path"),
    "default_hardware": None,  # takes nothing
    "solve": (lambda i, p, d: dansched.solve("x.json"), "solve: inst"),
    "read_plan_dir": (lambda i, p, d: dansched.read_plan_dir(d, "a/b"), "'a/b'"),
    "read_schedule": (lambda i, p, d: dansched.read_schedule(None), "read_schedule: path"),
    "read_memory": (lambda i, p, d: dansched.read_memory(3), "read_memory: path"),
    "read_spill": (lambda i, p, d: dansched.read_spill([]), "read_spill: path"),
    "write_plan": (lambda i, p, d: dansched.write_plan({"order": [0]}, d, "Exp"), "write_plan: plan"),
    "contest_paths": (lambda i, p, d: dansched.contest_paths(d, ".."), "'..'"),
    "evaluate": (lambda i, p, d: dansched.evaluate(i, None), "evaluate: plan"),
    "evaluate_files": (lambda i, p, d: dansched.evaluate_files(i, 5), "evaluate_files: schedule"),
    "evaluate_folder": (lambda i, p, d: dansched.evaluate_folder(str(EXP), d), "evaluate_folder: inst"),
    "folder_hardware": (lambda i, p, d: dansched.folder_hardware(d, "a/b"), "folder_hardware: case"),
    "effort_options": (lambda i, p, d: dansched.effort_options("quick"), "effort must be one of"),
    "judge_folder": (lambda i, p, d: dansched.judge_folder("Exp", d), "judge_folder: inst"),
    "trace_folder": (lambda i, p, d: dansched.trace_folder(i, d, freq_ghz=math.inf), "--freq-ghz"),
    "view_folder": (lambda i, p, d: dansched.view_folder(i, d, out=3.5), "view_folder: out"),
    "peak_lower_bound": (lambda i, p, d: dansched.peak_lower_bound(None), "peak_lower_bound: inst"),
    "traffic_lower_bound": (lambda i, p, d: dansched.traffic_lower_bound(i, [0], time_limit=math.inf), "time_limit"),
    "makespan_lower_bound": (lambda i, p, d: dansched.makespan_lower_bound([1, 2]), "makespan_lower_bound: inst"),
    "audit_plan": (lambda i, p, d: dansched.audit_plan(i, p, None), "audit_plan: ev"),
    "bound": (lambda i, p, d: dansched.bound(i, time_limit=10**400), "bound: time_limit"),
    "audit_folder": (lambda i, p, d: dansched.audit_folder(i, d, seed=-1), "audit_folder: seed"),
}


def public_functions() -> list[str]:
    return [n for n in dansched.__all__ if inspect.isfunction(getattr(dansched, n))]


def test_every_public_function_has_a_misuse_case():
    assert sorted(MISUSE) == sorted(public_functions())


@pytest.mark.parametrize("name", sorted(n for n, case in MISUSE.items() if case is not None))
def test_a_bad_argument_is_a_documented_error_naming_it(name, inst, plan, tmp_path):
    call, words = MISUSE[name]
    with pytest.raises(ArgumentError) as info:
        call(inst, plan, tmp_path)
    assert isinstance(info.value, (ValueError, TypeError)) and words in str(info.value)
    assert len(str(info.value).splitlines()) == 1
    assert list(tmp_path.iterdir()) == []  # refused before anything was written


@pytest.mark.parametrize(
    "build, words",
    [
        (lambda g: g.op("ADD", "VECTOR", 1, [5]), "GraphBuilder.op: 5 is not a buffer of this builder"),
        (lambda g: g.free(5), "GraphBuilder.free: 5 is not a buffer"),
        (lambda g: g.free(g.free(g.alloc(4, "UB")) and 0), "buffer 0 is already freed"),
        (lambda g: g.alloc(math.inf, "UB"), "GraphBuilder.alloc: size must be an integer from 1"),
        (lambda g: g.alloc(0, "UB"), "GraphBuilder.alloc: size"),
        (lambda g: g.alloc(4, None), "GraphBuilder.alloc: tier must be a str"),
        (lambda g: g.op("ADD", "VECTOR", math.nan, []), "GraphBuilder.op: cycles"),
        (lambda g: g.op("ADD", "VECTOR", 1, [], after=[3]), "GraphBuilder.op: after"),
        (lambda g: g.op("ADD", "VECTOR", 1, 0), "GraphBuilder.op: bufs must be a list or a tuple"),
    ],
)
def test_graph_builder_misuse_names_the_argument(build, words):
    with pytest.raises(ArgumentError, match=words.replace("(", r"\(")):
        build(dansched.GraphBuilder())


@pytest.mark.parametrize("name", ["a/b", "", ".", "..", "nul\0byte"])
def test_a_case_name_that_cannot_name_files_is_refused_before_the_work(name, tmp_path):
    """Refused, not rewritten (two cases must never share files): by the builder and by
    every writer, before any stage runs or any folder is made."""
    g = dansched.GraphBuilder()
    b = g.alloc(8, "UB")
    g.op("ADD", "VECTOR", 3, [b])
    g.free(b)
    with pytest.raises(ArgumentError, match="cannot name the case's files"):
        g.build(name)
    with pytest.raises(ArgumentError, match="cannot name the case's files"):
        dansched.write_plan(dansched.Plan(order=(0, 1, 2)), tmp_path / "out", name)
    assert list(tmp_path.iterdir()) == []


def test_solve_checks_its_options_progress_and_clock_before_the_work(inst, tmp_path):
    for call, words in (
        (lambda: dansched.solve(inst, {"problem": 2}), "solve: options must be a SolveOptions"),
        (lambda: dansched.solve(inst, progress="loud"), "solve: progress"),
        (lambda: dansched.solve(inst, out=tmp_path / "o", outputs=("view",), freq_ghz=0), "solve: freq_ghz"),
    ):
        with pytest.raises(ArgumentError, match=words):
            call()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda: dansched.Plan(order=None), "Plan.order must be a sequence"),
        (lambda: dansched.Plan(order=("a",)), "Plan.order must hold integers, got 'a'"),
        (lambda: dansched.Plan(order=(0,), offsets=((0, "x"),)), "Plan.offsets must hold integers"),
        (lambda: dansched.Plan(order=(0,), spills=((0,),)), r"Plan.spills must hold \(BufId, offset\) pairs"),
    ],
)
def test_a_plan_holds_integers_or_is_refused(make, words):
    with pytest.raises(ArgumentError, match=words):
        make()


def test_a_plan_of_any_integers_is_kept_for_the_evaluator_to_judge(inst):
    import numpy as np

    p = dansched.Plan(order=[np.int64(0), 99], offsets=[(0, -5)])
    assert p.order == (0, 99) and p.offsets == ((0, -5),)  # tuples of ints, as the contest files say
    ev = dansched.evaluate(inst, p)
    assert not ev.valid and any("99" in v.message for v in ev.errors)
