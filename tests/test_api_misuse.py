"""Every public call of ``dansched.__all__`` checks its arguments before any work: a wrong
type or value raises :class:`dansched.errors.ArgumentError` (a ValueError and a TypeError)
or another class of ``dansched.errors``, with a message naming the argument, never a bare
KeyError, AttributeError or OverflowError from deep inside."""

from __future__ import annotations

import dataclasses
import functools
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
            dict(zip(("nodes", "edges"), inst.to_records())) | {"name": "r", "hw": None},
        ),
        "write_json": (dansched.write_json, {"inst": inst, "path": d / "w.json"}),
        "write_csv_pair": (dansched.write_csv_pair, {"inst": inst, "directory": d / "csv", "case": "c"}),
        "generate_file": (dansched.generate_file, {"family": "chain", "scale": 1, "seed": 0, "out": d / "g.json"}),
        "load_hardware": (dansched.load_hardware, {"path": None}),
        "solve": (
            dansched.solve,
            {
                "inst": inst,
                "options": fast,
                "progress": None,
                "bounds": False,
                "out": d / "s",
                "outputs": (),
                "freq_ghz": 1.0,
            },
        ),
        "effort_options": (
            dansched.effort_options,
            {"preset": "fast", "seed": 1, "time_limit": 5.0, "problem": 1, "exact_window_mode": "fixed"},
        ),
        "read_plan_dir": (dansched.read_plan_dir, {"directory": folder, "case": "Exp", "limits": None}),
        "read_schedule": (dansched.read_schedule, {"path": folder / "Exp_schedule.txt", "most": None}),
        "read_memory": (dansched.read_memory, {"path": folder / "Exp_memory.txt", "most": None}),
        "read_spill": (dansched.read_spill, {"path": folder / "Exp_spill.txt", "most": None}),
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
        "trace_folder": (
            dansched.trace_folder,
            {"inst": inst, "folder": folder, "out": d / "t.json", "freq_ghz": 1.0, "png": None, "compare": None},
        ),
        "view_folder": (dansched.view_folder, {"inst": inst, "folder": folder, "out": d / "v.html", "freq_ghz": 1.0}),
        "peak_lower_bound": (dansched.peak_lower_bound, {"inst": inst, "g": None, "params": None}),
        "traffic_lower_bound": (
            dansched.traffic_lower_bound,
            {"inst": inst, "order": list(plan.order), "time_limit": 5.0, "budget": dansched.CoverBudget()},
        ),
        "makespan_lower_bound": (
            dansched.makespan_lower_bound,
            {"inst": inst, "graph": solved.evaluation.graph, "order": list(plan.order)},
        ),
        "audit_plan": (
            dansched.audit_plan,
            {
                "inst": inst,
                "plan": plan,
                "ev": solved.evaluation,
                "time_limit": 5.0,
                "seed": 0,
                "cpsat": False,
                "params": None,
                "with_peak": True,
                "progress": None,
                "plan_name": "the plan",
            },
        ),
        "bound": (dansched.bound, {"inst": inst, "time_limit": 5.0, "seed": 0, "params": None, "progress": None}),
        "audit_folder": (
            dansched.audit_folder,
            {"inst": inst, "folder": folder, "time_limit": 5.0, "seed": 0, "params": None, "progress": None},
        ),
        "Plan": (dansched.Plan, {"order": (0, 1), "offsets": ((0, 0),), "spills": ()}),
        "GraphBuilder.alloc": (gb.alloc, {"size": 8, "tier": "UB"}),
        "GraphBuilder.op": (gb.op, {"name": "ADD", "pipe": "VECTOR", "cycles": 3, "bufs": [buf], "after": []}),
        "GraphBuilder.free": (dansched.GraphBuilder().free, {"b": 0}),
        "GraphBuilder.build": (gb.build, {"name": "g", "hw": None}),
        "Solution.write": (solved.write, {"folder": d / "sw", "outputs": (), "freq_ghz": 1.0}),
        "Solution.files": (solved.files, {"outputs": ("trace",), "freq_ghz": 1.0}),
        "Solution.point_report": (solved.point_report, {"k": 0, "ev": None}),
        "Instance.succ": (inst.succ, {"v": 0}),
        "Instance.pred": (inst.pred, {"v": 3}),
        "Instance.bufs": (inst.bufs, {"v": 3}),
        "Instance.users": (inst.users, {"b": 0}),
        "Instance.buffer_index": (inst.buffer_index, {"buf_id_value": 1}),
        "Instance.same_as": (inst.same_as, {"other": inst}),
        "Hardware.spill_cycles": (inst.hw.spill_cycles, {"size": 8}),
        "Hardware.tier_index": (inst.hw.tier_index, {"name": "UB"}),
        "Hardware.pipe_index": (inst.hw.pipe_index, {"name": "MTE2"}),
        "Evaluation.first_violation": (solved.evaluation.first_violation, {"default": "none"}),
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
    return sorted(names) + FUZZED_METHODS


# the public methods of the objects the calls return, fuzzed like the calls (a method whose
# arguments are all checked at its door); those that take nothing are called once (TAKE_NOTHING)
FUZZED_METHODS = [
    "GraphBuilder.alloc",
    "GraphBuilder.op",
    "GraphBuilder.free",
    "GraphBuilder.build",
    "Solution.write",
    "Solution.files",
    "Solution.point_report",
    "Instance.succ",
    "Instance.pred",
    "Instance.bufs",
    "Instance.users",
    "Instance.buffer_index",
    "Instance.same_as",
    "Hardware.spill_cycles",
    "Hardware.tier_index",
    "Hardware.pipe_index",
    "Evaluation.first_violation",
]
TAKE_NOTHING = {
    "Instance": ["is_peak_buffer", "lists", "to_records"],
    "Hardware": ["to_dict"],
    "Evaluation": ["drop_detail", "segments", "to_dict"],
    "Solution": ["summary"],
    "GraphBuilder": ["records"],
    "SolveReport": ["to_dict"],
    "BoundResult": ["to_dict"],
    "AuditResult": ["to_dict"],
    "AuditRow": ["to_dict"],
    "Bound": ["to_dict"],
}


def returned_objects(w: dict) -> dict[str, Any]:
    """An object of every class the public calls return (``RECORDS`` and the builder)."""
    inst, solved = w["inst"], w["solved"]
    bound = dansched.bound(inst, time_limit=5.0)
    audit = dansched.audit_folder(inst, w["dir"] / "plan", time_limit=5.0)
    return {
        "Instance": inst,
        "Hardware": inst.hw,
        "Evaluation": solved.evaluation,
        "Solution": solved,
        "SolveResult": solved.result,
        "SolveReport": solved.result.report,
        "Plan": solved.plan,
        "GraphBuilder": dansched.GraphBuilder(),
        "BoundResult": bound,
        "AuditResult": audit,
        "AuditRow": solved.bounds[0] if solved.bounds else bound.rows[0],
        "Bound": dansched.makespan_lower_bound(inst),
    }


def public_methods(obj: Any) -> list[str]:
    """The public methods of ``obj``'s class (not its properties, not what every object or
    tuple has)."""
    cls = type(obj)
    inherited = set(dir(object)) | (set(dir(tuple)) if issubclass(cls, tuple) else set())
    out = []
    for name in dir(cls):
        if name.startswith("_") or name in inherited:
            continue
        attr = inspect.getattr_static(cls, name)
        if isinstance(attr, (property, functools.cached_property)) or inspect.isclass(attr):
            continue
        if callable(getattr(obj, name)):
            out.append(name)
    return out


def test_every_public_method_of_a_returned_object_is_fuzzed_or_takes_nothing(world):
    """The class of public calls is whole: a new method of a returned object is fuzzed
    (``FUZZED_METHODS``) or listed as taking nothing; those are called once here."""
    for cls_name, obj in returned_objects(world).items():
        methods = public_methods(obj)
        fuzzed = [m.split(".")[1] for m in FUZZED_METHODS if m.split(".")[0] == cls_name]
        assert sorted(methods) == sorted(fuzzed + TAKE_NOTHING.get(cls_name, [])), cls_name
        for name in TAKE_NOTHING.get(cls_name, []):
            if name != "drop_detail":
                getattr(obj, name)()


def test_every_parameter_of_every_fuzzed_call_is_fuzzed(world):
    """Each fuzzed call's valid arguments name all its parameters, so every one of them
    meets the random values (a parameter left out, such as ``solve``'s ``outputs``, was
    where a bare TypeError hid)."""
    missing = []
    for name in fuzzed_calls():
        if name == "GraphBuilder":
            continue
        call, kwargs = _valid(name, world)
        params = inspect.signature(call).parameters
        named = {p for p, v in params.items() if v.kind not in (v.VAR_POSITIONAL, v.VAR_KEYWORD)}
        if named - set(kwargs):  # effort_options takes more, its **fields
            missing.append((name, sorted(named - set(kwargs))))
    assert not missing, missing


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
    except DOCUMENTED as exc:
        assert len(str(exc).splitlines()) <= 1, str(exc)  # one line, as the command line prints it


# ---- the probe's calls ---------------------------------------------------------------------


@pytest.mark.parametrize("outputs", [None, 5, "view", ("html",)])
def test_solve_checks_its_outputs_like_solution_write(outputs, inst, tmp_path):
    """``outputs=None`` and ``5`` raised a bare TypeError, and ``"view"`` was read letter by
    letter; ``Solution.write`` refused them all: so does ``solve``, before the work."""
    with pytest.raises(dansched.errors.InputError) as info:
        dansched.solve(inst, dansched.effort_options("fast"), out=tmp_path / "o", outputs=outputs)
    assert "output" in str(info.value) and len(str(info.value).splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def test_the_makespan_bound_of_a_plan_needs_no_order(inst):
    """Given a judged plan's graph without its order, the bound is the one with the order
    (a topological order of the graph is made): an AssertionError before, an
    AttributeError under ``python -O``. Hand-computed on Exp's plan: the chain 15 + 30 + 15."""
    plan = dansched.Plan(order=(0, 1, 2, 3, 4, 5, 6), offsets=((0, 0), (1, 5)))
    ev = dansched.evaluate(inst, plan)
    with_order = dansched.makespan_lower_bound(inst, ev.graph, plan.order)
    assert dansched.makespan_lower_bound(inst, ev.graph) == with_order and with_order.value == 60
    for order, words in (([0, 1], "holds 2 of the graph's 7 nodes"), ([6, 5, 4, 3, 2, 1, 0], "before its predecessor")):
        with pytest.raises(ArgumentError, match=words):
            dansched.makespan_lower_bound(inst, ev.graph, order)
    with pytest.raises(ArgumentError, match="makespan_lower_bound: graph must be an AugmentedGraph"):
        dansched.makespan_lower_bound(inst, "graph")


@pytest.mark.parametrize("k", [-1, 1, 2**70, "0", None, 0.0, True])
def test_a_frontier_point_is_named_by_its_index(k, inst):
    """``point_report(-1)`` wrote ``"frontier_point": -1``; a bad ``k`` raised a bare
    IndexError or TypeError."""
    solved = dansched.solve(inst, dansched.effort_options("fast"), bounds=False)
    assert len(solved.frontier) == 1 and solved.point_report(0)["frontier_point"] == 0
    with pytest.raises(ArgumentError, match=r"Solution.point_report: k \(a point of the frontier, 0 to 0\)"):
        solved.point_report(k)
