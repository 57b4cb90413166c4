"""The public Python API: ``import dansched`` exposes what ``__all__`` lists, and the
README's example runs as written (it is read from README.md, so the two cannot drift)."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest
from helpers import REPO

import dansched
from dansched.errors import ArgumentError
from dansched.plan import read_plan_dir
from dansched.simulate import evaluate


def readme_example() -> str:
    """The first ``python`` code block of the README's "Python API" section."""
    text = (REPO / "README.md").read_text()
    section = text.split("## Python API", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "README.md: the Python API section has no python code block"
    return match.group(1)


def test_all_names_what_the_package_exports():
    assert set(dansched.__all__) == {"__version__", *dansched._EXPORTS}
    for name in dansched.__all__:
        assert getattr(dansched, name) is not None
    with pytest.raises(AttributeError):
        dansched.not_a_name  # noqa: B018
    # the public solve is the one that writes the plan folder; the pipeline stays the engine
    assert dansched.solve.__module__ == "dansched.application.solution"
    assert dansched.SolveOptions.__module__.startswith("dansched.pipeline")
    import importlib

    for module in (
        "dansched.application.audit",
        "dansched.generate",
        "dansched.application.judge",
        "dansched.application.solution",
    ):
        importlib.import_module(module)  # a loaded submodule must not shadow an exported name
    assert callable(dansched.bound) and callable(dansched.audit_folder) and callable(dansched.GraphBuilder)


def test_version_matches_the_package_metadata():
    import tomllib

    meta = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert dansched.__version__ == meta["version"]


def test_readme_example_runs_and_writes_a_valid_plan_folder(tmp_path, monkeypatch):
    """The README's example builds a graph in memory, solves problem 3 and writes the whole
    folder in one call; the files it names are there, judged by the evaluator and checked
    against the fingerprint the report carries."""
    from dansched.plan_folder import check_folder, folder_group

    code = readme_example()
    assert len(code.strip().splitlines()) <= 12  # a short example
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    lines = out.getvalue().splitlines()
    makespan = int(lines[0].split()[-1])
    inst = dansched.instance_from_records(
        "tiny",
        [
            {"Id": 0, "Op": "ALLOC", "BufId": 0, "Size": 64, "Type": "UB"},
            {"Id": 1, "Op": "COPY_IN", "Pipe": "MTE2", "Cycles": 20, "Bufs": [0]},
            {"Id": 2, "Op": "ADD", "Pipe": "VECTOR", "Cycles": 30, "Bufs": [0]},
            {"Id": 3, "Op": "FREE", "BufId": 0, "Size": 64, "Type": "UB"},
        ],
        [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]],
    )
    folder = tmp_path / "out"
    names = ["schedule.txt", "memory.txt", "spill.txt", "trace.json", "view.html", "report.json"]
    assert lines[1:] == [str(Path("out") / f"tiny_{n}") for n in names]
    assert sorted(p.name for p in folder.iterdir()) == sorted(f"tiny_{n}" for n in names)  # and nothing else
    plan = read_plan_dir(folder, "tiny")
    ev = evaluate(inst, plan)
    assert ev.valid and ev.problem == 2
    assert ev.makespan == makespan == 50  # COPY_IN (20) then ADD (30), nothing to overlap
    assert check_folder(folder, "tiny", folder_group()) is not None  # report and trace carry the plan's fingerprint
    report = json.loads((folder / "tiny_report.json").read_text())
    assert report["makespan"] == 50 and report["bounds"]["makespan"]["value"] == 50


def test_solution_report_is_what_the_command_line_writes(tmp_path, exp_path):
    """The library's folder and the command line's are the same files (the CLI only calls
    it): contest files byte for byte, reports equal apart from the seconds."""
    from helpers import run_proc_cli

    sol = dansched.solve(dansched.load_instance(exp_path), dansched.SolveOptions(problem=3))
    lib = sol.write(tmp_path / "lib", outputs=("trace",))
    proc = run_proc_cli("solve", exp_path, "--out", tmp_path / "cli", "--trace", "--quiet")
    assert proc.returncode == 0, proc.stderr
    cli = sorted((tmp_path / "cli").iterdir())
    assert [p.name for p in cli] == sorted(p.name for p in lib)
    for p in cli:
        if p.suffix == ".txt":
            assert p.read_bytes() == (tmp_path / "lib" / p.name).read_bytes()
    a, b = (json.loads((tmp_path / d / "Exp_report.json").read_text()) for d in ("lib", "cli"))
    assert without_seconds(a) == without_seconds(b)


def without_seconds(x):
    if isinstance(x, dict):
        return {k: without_seconds(v) for k, v in x.items() if k != "seconds"}
    if isinstance(x, list):
        return [without_seconds(v) for v in x]
    return x


def test_solve_options_reject_a_problem_out_of_range():
    with pytest.raises(ValueError, match="problem must be 1, 2 or 3, got 7"):
        dansched.SolveOptions(problem=7)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: dansched.SolveOptions(victim="fifo"), "victim"),
        (lambda: dansched.SolveOptions(exact_window=-1), "exact_window"),
        (lambda: dansched.SolveOptions(traffic_slack=float("nan")), "traffic_slack"),
        (lambda: dansched.SolveOptions(mpas=dansched.DlrParams()), "mpas must be a MpasParams"),
        (lambda: dansched.MpasParams(ls_evaluations=-1), "ls_evaluations"),
        (lambda: dansched.DlrParams(serial_wave_widths=(0,)), "serial_wave_widths"),
        (lambda: dansched.CpeParams(width=-1), "width"),
        (lambda: dansched.BoundParams(joint_max_nodes=1.5), "joint_max_nodes"),
        (lambda: dansched.EffortParams(stage3_runs=0), "stage3_runs"),
        (
            lambda: dansched.SolveOptions(effort=dansched.EffortParams(sources=("dlr", "oracle"))),
            "unknown source 'oracle'",
        ),
        (lambda: dansched.effort_options("slow"), "effort must be one of fast, default, max"),
        (lambda: dansched.SolveOptions(effort="fast"), "use effort_options"),
        (lambda: dansched.SolveOptions(search=(dansched.SearchParams(),) * 4), "must exceed the search rounds"),
        (lambda: dansched.SolveOptions(traffic_slack=-1), "traffic_slack"),
    ],
)
def test_parameters_are_validated_on_construction(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_parameter_defaults_are_the_measured_values():
    """The defaults are the values the tables in benchmarks/results were measured with
    (they were module constants before; changing one is a decision, not a refactor)."""
    assert dansched.MpasParams() == dansched.MpasParams(ls_evaluations=8000, ls_max_ops=6000, restart_work=60_000)
    assert dansched.CpeParams() == dansched.CpeParams(
        width=8, local_work=4_000_000, local_evaluations=2000, feed_by_need=("dma",)
    )
    assert dansched.CpeParams().evaluations(1000) == 2000 and dansched.CpeParams().evaluations(40_000) == 100
    assert dansched.BoundParams().peak.exact_max_nodes == dansched.BoundParams().joint_max_nodes == 80
    assert dansched.effort_options("default").effort == dansched.EffortParams(
        dlr_variants=6, victim_rules=("recency-16", "recency-32", "lru"), stage3_runs=4, stage3_rounds=6
    )
    # SolveOptions() is the default preset, every field of it
    assert dansched.SolveOptions() == dansched.effort_options("default")
    assert dansched.SolveOptions().polish == dansched.MemoryWindowParams(windows=30, width=64, wall_seconds=600.0)


def test_each_preset_is_complete_options():
    """A preset sets everything it stands for (nothing is overwritten later), and the fields
    a caller gives win; the memory-aware windows follow from ``exact_window_mode``."""
    fast, best = dansched.effort_options("fast"), dansched.effort_options("max")
    assert fast.effort_name == "fast" and fast.search == () and fast.polish.windows == 5
    assert fast.bounds == dansched.BoundParams().linear() and fast.effort.stage3_runs == 1
    assert fast.cpe == dansched.CpeParams(feed_by_need=()) and best.cpe == dansched.CpeParams()
    assert dansched.effort_options("fast", cpe=dansched.CpeParams()).cpe.feed_by_need == ("dma",)
    assert [r.iterations for r in best.search] == [200, 1000] and best.polish.windows == 30
    assert best.search[0] == dansched.effort_options("default").search[0]  # the default's round first
    assert dansched.effort_options("fast", seed=7, problem=2).seed == 7
    every = dansched.effort_options("default", exact_window=16, exact_window_mode="memory", time_limit=8)
    assert every.polish == dansched.MemoryWindowParams(windows=4, width=16, after_every_run=True, wall_seconds=8.0)
    assert dansched.effort_options("default", time_limit=5).polish.wall_seconds == 50.0


def test_problem3_result_carries_the_problem1_plan_of_its_stage1_order():
    """``SolveResult.stage1`` (what ``dansched bound`` audits for the peak) is exactly the
    problem-1 plan that solving problem 1 gives, and the evaluator judges it valid."""
    from helpers import SHIPPED

    from dansched.instance import load_instance
    from dansched.pipeline import SolveOptions, run_pipeline

    inst = load_instance(SHIPPED / "conv_s2.json")
    p1 = run_pipeline(inst, SolveOptions(problem=1))
    plan1 = run_pipeline(inst, SolveOptions(problem=2)).stage1
    ev1 = evaluate(inst, plan1)
    assert plan1 == p1.plan and ev1.valid and ev1.max_v_stay == p1.evaluation.max_v_stay
    assert p1.stage1 == p1.plan


@pytest.mark.slow
def test_problem3_progress_names_each_source_and_each_stage3_run(tmp_path):
    """solve's progress callback names each candidate source as it runs and each candidate
    the full Stage 3 runs on, in the order of the report's candidates (a long
    --traffic-slack run shows where it is)."""
    from helpers import SHIPPED

    from dansched.hardware import load_hardware
    from dansched.instance import load_instance
    from dansched.pipeline import SolveOptions, run_pipeline

    toml = tmp_path / "tight.toml"
    toml.write_text("[tiers]\nL1 = 1024\n")
    inst = load_instance(SHIPPED / "conv_s2.json", load_hardware(toml))
    said: list[str] = []
    res = run_pipeline(inst, SolveOptions(problem=3, traffic_slack=50.0), progress=said.append)
    assert said[:2] == ["Stage 1: MPAS", "Stage 2: DLR"]
    sources = [m.split(" from ")[1].split(" (")[0] for m in said if m.startswith("Problem 3: candidates from ")]
    assert sources == list(dansched.SolveOptions().sources)
    runs = [m for m in said if m.startswith("Stage 3 on candidate ")]
    searched = [m for m in said if m.startswith("Stage 3 on the makespan search's plan")]
    rows = res.report.to_dict()["candidates"]
    finalists = [c for c in rows if c["makespan"] is not None and c["source"] not in ("makespan-search", "rival")]
    assert len(searched) == sum(c["source"] == "makespan-search" for c in rows)
    assert len(runs) == len(finalists) and len(runs) + len(searched) == res.report.cpe.runs
    effort = dansched.SolveOptions().effort
    assert res.report.cpe.runs <= max(effort.stage3_runs, effort.stage3_work // inst.n + 1)
    named = sorted(line.split(": ", 1)[1] for line in runs)
    assert named == sorted(f"{row['source']} {row['detail']}".rstrip() for row in finalists)
    assert runs[0].endswith(f"{finalists[0]['source']} {finalists[0]['detail']}".rstrip())  # the problem-2 plan first


@pytest.mark.slow
def test_fast_effort_reports_the_linear_bounds_alone():
    """The fast effort skips the costly bounds (here the product-pattern peak bound, which
    the default reports on this grid kernel); what it reports are still lower bounds of
    the plan's figures as the evaluator measures them."""
    inst = dansched.load_instance(REPO / "instances" / "matmul_s2.json")
    fast = dansched.solve(inst, dansched.effort_options("fast", problem=3))
    full = dansched.solve(inst, dansched.SolveOptions(problem=3))
    assert "product pattern" in full.report["bounds"]["max_v_stay"]["method"]
    assert "product pattern" not in fast.report["bounds"]["max_v_stay"]["method"]
    ev = evaluate(inst, fast.plan)
    for metric in ("max_v_stay", "extra_traffic", "makespan"):
        assert fast.report["bounds"][metric]["value"] <= getattr(ev, metric)
    assert fast.bounds and all(row.bound.value <= getattr(ev, row.metric) for row in fast.bounds)


def test_effort_options_takes_every_field_of_the_options_by_its_type():
    """The typed keywords of effort_options are SolveOptions' fields, one for one, and a
    name that is none of them is refused with an ArgumentError naming it."""
    from dataclasses import fields

    from dansched.pipeline.options import OptionFields

    assert set(OptionFields.__annotations__) == {f.name for f in fields(dansched.SolveOptions)}
    got = dansched.effort_options("max", seed=5, victim="lru", exact_window=4, exact_window_mode="memory")
    assert (got.seed, got.victim, got.effort_name, got.polish.after_every_run) == (5, "lru", "max", True)
    with pytest.raises(ArgumentError, match="'speed' is not a field of SolveOptions"):
        dansched.effort_options("fast", speed=3)


def test_solve_has_a_short_signature_and_none_means_the_defaults():
    """`inspect.signature(dansched.solve)` reads in a line: the options default to None (the
    default SolveOptions), not to every default spelled out."""
    import inspect

    sig = inspect.signature(dansched.solve)
    assert sig.parameters["options"].default is None
    assert len(str(sig)) < 300, str(sig)
    for name in dansched.__all__:  # every public call reads in a line or two: no defaults spelled out
        called = getattr(dansched, name)
        if callable(called) and not isinstance(called, type):
            assert len(str(inspect.signature(called))) < 300, name
    inst = dansched.load_instance(REPO / "instances" / "Exp.json")
    got = dansched.solve(inst, bounds=False)
    assert got.options == dansched.SolveOptions() and got.evaluation.valid
    assert got.evaluation.makespan == 60  # Exp: COPY_IN 15, EXP 30, COPY_OUT 15 in a chain (docs/rules.md, section 9)


def test_reprs_are_one_short_line():
    """Evaluation, Plan and Solution print as one line of key figures, never their arrays
    (Exp's figures by hand: maxV_stay 5 + 5, makespan 15 + 30 + 15, no spill)."""
    inst = dansched.load_instance(REPO / "instances" / "Exp.json")
    got = dansched.solve(inst, bounds=False)
    figures = "valid, max_v_stay=10, extra_traffic=0, spill_count=0, makespan=60, physical_peak=10"
    assert repr(got) == f"Solution(Exp, problem 3, {figures})"
    assert repr(got.evaluation) == f"Evaluation(problem 2, {figures})"
    assert repr(got.plan) == "Plan(full plan, 7 schedule entries, 2 offsets, 0 spills)"
    assert repr(dansched.Plan(order=tuple(range(7)))) == "Plan(problem-1 order, 7 schedule entries)"
    assert max(len(repr(x)) for x in (got, got.evaluation, got.plan)) < 200


def test_solve_takes_a_path_and_returns_a_typed_summary():
    """``dansched.solve("case.json")`` reads the file; ``summary()`` is a SolveSummary: the
    status, the figures (the evaluator's), the floor under the objective (the best bound
    that holds for every plan, of the report's rows) and the gap, the seconds; one line."""
    from dansched.application.summary import SolveSummary

    path = REPO / "instances" / "Exp.json"
    got = dansched.solve(path, dansched.effort_options("fast"))
    again = dansched.solve(str(path), dansched.effort_options("fast"))
    assert got.plan == again.plan and got.instance.name == "Exp"
    summary = got.summary()
    assert isinstance(summary, SolveSummary) and summary.objective == "makespan"
    ev = evaluate(got.instance, got.plan)
    assert (summary.makespan, summary.extra_traffic, summary.spill_count) == (ev.makespan, 0, 0)
    best = max(r.bound.value for r in got.bounds if r.metric == "makespan" and r.scope == "global")
    assert summary.floor is not None and summary.floor.value == best == 60  # the chain COPY_IN, EXP, COPY_OUT
    assert summary.status == "optimal" and summary.gap == 0.0 and summary.seconds > 0
    assert summary.to_dict()["status"] == "optimal" and summary.to_dict()["floor"]["value"] == 60
    assert repr(summary).startswith("SolveSummary(Exp, problem 3, optimal, ") and len(repr(summary)) < 200
    assert "makespan 60 (floor 60, gap 0.0%)" in repr(summary)


def test_a_plan_above_its_floor_is_feasible_and_without_bounds_has_no_floor():
    """matmul_s2's plan (13,000-odd cycles) is above the busiest pipe's load: feasible, its
    gap the distance to the floor; a solve asked for no bounds has neither."""
    inst = dansched.load_instance(REPO / "instances" / "matmul_s2.json")
    got = dansched.solve(inst, dansched.effort_options("fast"))
    summary = got.summary()
    assert summary.status == "feasible" and summary.floor is not None
    assert summary.floor.value < summary.makespan
    assert summary.gap == pytest.approx((summary.makespan - summary.floor.value) / summary.makespan, abs=1e-6)
    from dataclasses import replace

    bare = replace(got, bounds=None).summary()  # what solve(..., bounds=False) returns
    assert bare.floor is None and bare.gap is None and bare.status == "feasible"
