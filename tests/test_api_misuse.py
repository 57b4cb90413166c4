"""Every public call of ``dansched.__all__`` checks its arguments before any work: a wrong
type or value raises :class:`dansched.errors.ArgumentError` (a ValueError and a TypeError)
or another class of ``dansched.errors``, with a message naming the argument, never a bare
KeyError, AttributeError or OverflowError from deep inside."""

from __future__ import annotations

import dataclasses
import inspect
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from helpers import SHIPPED
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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
    "solve": (lambda i, p, d: dansched.solve(42), "solve: inst"),
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


# ---- random arguments to every public call -------------------------------------------------
# Every call of ``dansched.__all__`` is made with its valid arguments (``VALID``) and then
# with one or two of them replaced by a random value: None, booleans, numbers (NaN, the
# infinities, integers past 64 bits), text, bytes, containers, and paths to files of every
# kind (missing, a folder, binary, a path under a file...). Whatever the call does, what it
# raises must be one of the classes errors.py documents as reaching a caller; the records
# (Instance, Hardware, Evaluation, Solution, the reports and bounds) are results, built by
# these calls, and not fuzzed.

DOCUMENTED = (
    dansched.errors.InputError,  # ArgumentError among them
    dansched.errors.InstanceError,
    dansched.errors.HardwareError,
    dansched.errors.PlanFormatError,  # OutputError, MixedPlanError
    dansched.errors.TraceError,
    dansched.errors.ViewError,
    dansched.errors.PlanInvalidError,  # NoLegalOrderError, PlacementFailed
    dansched.errors.OutOfMemory,
)
RECORDS = {"Instance", "Hardware", "Evaluation", "SolveResult", "Solution", "SolveReport", "Bound"}
RECORDS |= {"BoundResult", "AuditResult"}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """The valid arguments: Exp, a plan folder solved from it, and files of every kind."""
    d = tmp_path_factory.mktemp("world")
    inst = dansched.load_instance(EXP)
    solved = dansched.solve(inst, dansched.effort_options("fast"), out=d / "plan", bounds=False)
    files = {
        "bin": b"\xff\xfe\x00 not text",
        "ids.txt": b"0\n1\n2\n",
        "pairs.txt": b"0:0\n1:5\n",
        "huge.txt": str(10**30).encode() + b"\n",
        "bad.json": b'{"Nodes": [{"Id": 0, "Op": "ALLOC"}], "Edges": [[0, 0]]}',
        "list.json": b"[1, 2]",
        "deep.json": b"[" * 100_000,
        "hw.toml": b"[tiers]\nUB = -1\n",
        "hw2.toml": b"tiers = 3\n",
        "x_Nodes.csv": b"Id,Op\n0,ALLOC\n",
    }
    for name, data in files.items():
        (d / name).write_bytes(data)
    (d / "folder").mkdir()
    paths = [d / n for n in files] + [d / "folder", d / "ids.txt" / "under", d / "missing.json", d / ("n" * 300)]
    (d / "Exp.json").write_bytes(EXP.read_bytes())  # a good instance, which a writer may overwrite
    paths += [str(p) for p in paths[:3]] + ["", "\0", d / "Exp.json", str(d / "Exp.json"), d / "new" / "x_Nodes.csv"]
    return {"inst": inst, "solved": solved, "dir": d, "paths": paths}


def junk(paths: list) -> st.SearchStrategy:
    """Any value a caller might pass by mistake (module comment)."""
    return st.one_of(
        st.none(),
        st.booleans(),
        st.floats(allow_nan=True, allow_infinity=True),
        st.integers(-3, 3),
        st.sampled_from([2**63, -(2**63) - 1, 2**80, 10**400]),
        st.text(max_size=6),
        st.binary(max_size=3),
        st.lists(st.integers(-2, 9), max_size=3),
        st.tuples(st.integers(-2, 9), st.integers(-2, 9)),
        st.dictionaries(st.text(max_size=2), st.integers(-2, 2), max_size=2),
        st.sampled_from(paths),
        st.sampled_from([object(), np.int64(3), np.float64("nan"), np.array([1, 2]), ("a",), {1}]),
    )


def _valid(name: str, w: dict) -> tuple[Callable[..., Any], dict[str, Any]]:
    """The call ``name`` names and valid keyword arguments for it (a quick one: Exp, --effort fast)."""
    inst, solved, d = w["inst"], w["solved"], w["dir"]
    plan, folder = solved.plan, d / "plan"
    fast = dansched.effort_options("fast", problem=1)
    gb = dansched.GraphBuilder()
    buf = gb.alloc(8, "UB")
    calls: dict[str, tuple[Callable[..., Any], dict[str, Any]]] = {
        "load_instance": (dansched.load_instance, {"path": d / "Exp.json", "hw": None}),
        "instance_from_records": (
            dansched.instance_from_records,
            dict(zip(("nodes", "edges"), inst.to_records())) | {"name": "r"},
        ),
        "write_json": (dansched.write_json, {"inst": inst, "path": d / "w.json"}),
        "write_csv_pair": (dansched.write_csv_pair, {"inst": inst, "directory": d / "csv", "case": "c"}),
        "generate_file": (dansched.generate_file, {"family": "chain", "scale": 1, "seed": 0, "out": d / "g.json"}),
        "load_hardware": (dansched.load_hardware, {"path": None}),
        "solve": (dansched.solve, {"inst": inst, "options": fast, "bounds": False, "out": d / "s", "freq_ghz": 1.0}),
        "effort_options": (dansched.effort_options, {"preset": "fast", "seed": 1, "time_limit": 5.0, "problem": 1}),
        "read_plan_dir": (dansched.read_plan_dir, {"directory": folder, "case": "Exp"}),
        "read_schedule": (dansched.read_schedule, {"path": folder / "Exp_schedule.txt"}),
        "read_memory": (dansched.read_memory, {"path": folder / "Exp_memory.txt"}),
        "read_spill": (dansched.read_spill, {"path": folder / "Exp_spill.txt"}),
        "write_plan": (dansched.write_plan, {"plan": plan, "directory": d / "wp", "case": "Exp", "report": None}),
        "contest_paths": (dansched.contest_paths, {"directory": d, "case": "Exp"}),
        "evaluate": (dansched.evaluate, {"inst": inst, "plan": plan}),
        "evaluate_files": (
            dansched.evaluate_files,
            {"inst": inst, "schedule": folder / "Exp_schedule.txt", "memory": folder / "Exp_memory.txt", "spill": None},
        ),
        "judge_folder": (dansched.judge_folder, {"inst": inst, "folder": folder}),
        "evaluate_folder": (dansched.evaluate_folder, {"inst": inst, "folder": folder}),
        "folder_hardware": (dansched.folder_hardware, {"folder": folder, "case": "Exp", "hw_path": None}),
        "trace_folder": (dansched.trace_folder, {"inst": inst, "folder": folder, "out": d / "t.json", "freq_ghz": 1.0}),
        "view_folder": (dansched.view_folder, {"inst": inst, "folder": folder, "out": d / "v.html", "freq_ghz": 1.0}),
        "peak_lower_bound": (dansched.peak_lower_bound, {"inst": inst}),
        "traffic_lower_bound": (
            dansched.traffic_lower_bound,
            {"inst": inst, "order": list(plan.order), "time_limit": 5.0},
        ),
        "makespan_lower_bound": (dansched.makespan_lower_bound, {"inst": inst}),
        "audit_plan": (
            dansched.audit_plan,
            {"inst": inst, "plan": plan, "ev": solved.evaluation, "time_limit": 5.0, "seed": 0, "cpsat": False},
        ),
        "bound": (dansched.bound, {"inst": inst, "time_limit": 5.0, "seed": 0}),
        "audit_folder": (dansched.audit_folder, {"inst": inst, "folder": folder, "time_limit": 5.0, "seed": 0}),
        "Plan": (dansched.Plan, {"order": (0, 1), "offsets": ((0, 0),), "spills": ()}),
        "GraphBuilder.alloc": (gb.alloc, {"size": 8, "tier": "UB"}),
        "GraphBuilder.op": (gb.op, {"name": "ADD", "pipe": "VECTOR", "cycles": 3, "bufs": [buf], "after": []}),
        "GraphBuilder.free": (dansched.GraphBuilder().free, {"b": 0}),
        "GraphBuilder.build": (gb.build, {"name": "g", "hw": None}),
        "Solution.write": (solved.write, {"folder": d / "sw", "outputs": (), "freq_ghz": 1.0}),
        "Solution.files": (solved.files, {"outputs": ("trace",), "freq_ghz": 1.0}),
    }
    if name in calls:
        return calls[name]
    cls = getattr(dansched, name)  # a parameter class: its defaults are valid
    return cls, {f.name: getattr(cls(), f.name) for f in dataclasses.fields(cls)}


def fuzzed_calls() -> list[str]:
    names = [n for n in dansched.__all__ if callable(getattr(dansched, n, None)) and n not in RECORDS]
    names = [
        n for n in names if not (inspect.isclass(getattr(dansched, n)) and issubclass(getattr(dansched, n), Exception))
    ]
    names.remove("default_hardware")  # takes nothing
    methods = ["GraphBuilder.alloc", "GraphBuilder.op", "GraphBuilder.free", "GraphBuilder.build"]
    return sorted(names) + methods + ["Solution.write", "Solution.files"]


@pytest.mark.parametrize("name", fuzzed_calls())
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_arguments_raise_only_documented_errors(name, world, data, monkeypatch):
    monkeypatch.chdir(world["dir"])  # a random text is a relative path too: the files it names land there
    if name == "GraphBuilder":
        call, kwargs = dansched.GraphBuilder, {}
    else:
        call, kwargs = _valid(name, world)
    if not kwargs:
        call()
        return
    names = sorted(kwargs)
    for arg in data.draw(st.lists(st.sampled_from(names), min_size=1, max_size=2, unique=True), label="replaced"):
        kwargs[arg] = data.draw(junk(world["paths"]), label=arg)
    try:
        call(**kwargs)
    except DOCUMENTED:
        pass
