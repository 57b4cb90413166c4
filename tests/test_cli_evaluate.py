"""``dansched evaluate``: JSON keys, tables and exit codes (0 valid, 1 invalid plan, 2 bad input).

Most cases call the console entry point ``dansched.cli:main`` in-process (it is
what maps errors to exit codes); a few run the real ``python -m dansched.cli``
in a subprocess to check the exit status and that no traceback is printed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import MALFORMED, exp_records, run_cli


def run_proc(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "dansched.cli", *map(str, args)], capture_output=True, text=True, timeout=60
    )


def assert_input_error(code: int, out: str, err: str, pattern: str | None = None) -> None:
    assert code == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("dansched: error: ")
    assert "Traceback" not in err and "Traceback" not in out
    assert out == ""
    if pattern is not None:
        import re

        assert re.search(pattern, lines[0]), lines[0]


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    """Exp's problem-1 schedule, a UB-of-10 hardware file, its layout and an empty spill list."""
    d = {
        "schedule": tmp_path / "Exp_schedule.txt",
        "memory": tmp_path / "Exp_memory.txt",
        "spill": tmp_path / "Exp_spill.txt",
        "hw": tmp_path / "ub10.toml",
    }
    d["schedule"].write_text("".join(f"{i}\n" for i in range(7)))
    d["memory"].write_text("0:0\n1:5\n")
    d["spill"].write_text("")
    d["hw"].write_text("[tiers]\nUB = 10\n")
    return d


def write_instance(tmp_path: Path, nodes, edges, name: str = "case") -> Path:
    p = tmp_path / f"{name}.json"
    p.write_text(json.dumps({"Nodes": nodes, "Edges": edges}))
    return p


# ---------------------------------------------------------------------------------
# valid and invalid plans
# ---------------------------------------------------------------------------------


def test_problem1_order_json(monkeypatch, capsys, exp_path, files):
    code, out, err = run_cli(monkeypatch, capsys, "evaluate", exp_path, "--schedule", files["schedule"], "--json")
    assert code == 0 and err == ""
    d = json.loads(out)
    assert d["valid"] is True and d["errors"] == [] and d["max_v_stay"] == 10
    # the layout figures appear only with memory and spill files
    assert not {"physical_peak", "extra_traffic", "spill_count", "makespan"} & set(d)


def test_full_plan_json(monkeypatch, capsys, exp_path, files):
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "evaluate",
        exp_path,
        "--schedule",
        files["schedule"],
        "--memory",
        files["memory"],
        "--spill",
        files["spill"],
        "--hw",
        files["hw"],
        "--json",
    )
    assert code == 0, err
    d = json.loads(out)
    assert {
        k: d[k] for k in ("valid", "errors", "max_v_stay", "physical_peak", "extra_traffic", "spill_count", "makespan")
    } == {
        "valid": True,
        "errors": [],
        "max_v_stay": 10,
        "physical_peak": 10,
        "extra_traffic": 0,
        "spill_count": 0,
        "makespan": 60,
    }


def test_full_plan_table(monkeypatch, capsys, exp_path, files):
    code, out, _ = run_cli(
        monkeypatch,
        capsys,
        "evaluate",
        exp_path,
        "--schedule",
        files["schedule"],
        "--memory",
        files["memory"],
        "--spill",
        files["spill"],
        "--hw",
        files["hw"],
    )
    assert code == 0
    assert "valid" in out and "makespan" in out and "60" in out


def test_layout_over_default_capacity_is_fine_and_with_small_ub_is_input_error(
    monkeypatch, capsys, exp_path, files, tmp_path
):
    # the default UB (1024) holds Exp at offsets 0 and 5
    code, out, _ = run_cli(
        monkeypatch,
        capsys,
        "evaluate",
        exp_path,
        "--schedule",
        files["schedule"],
        "--memory",
        files["memory"],
        "--spill",
        files["spill"],
        "--json",
    )
    assert code == 0 and json.loads(out)["makespan"] == 60
    small = tmp_path / "ub9.toml"
    small.write_text("[tiers]\nUB = 9\n")
    code, out, err = run_cli(monkeypatch, capsys, "evaluate", exp_path, "--schedule", files["schedule"], "--hw", small)
    assert_input_error(code, out, err, r"node 3 \(EXP\): its buffers in UB need 10, the tier holds 9")


@pytest.mark.parametrize(
    "memory,kind",
    [("0:0\n1:4\n", "overlap"), ("0:0\n1:6\n", "capacity"), ("0:0\n", "bad-offset"), ("0:0\n1:5\n7:0\n", "bad-offset")],
)
def test_invalid_layout_exits_1(monkeypatch, capsys, exp_path, files, memory, kind):
    files["memory"].write_text(memory)
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "evaluate",
        exp_path,
        "--schedule",
        files["schedule"],
        "--memory",
        files["memory"],
        "--spill",
        files["spill"],
        "--hw",
        files["hw"],
        "--json",
    )
    assert code == 1 and err == ""
    d = json.loads(out)
    assert d["valid"] is False
    assert kind in d["error_counts"] and d["errors"][0]["kind"] == kind


def test_invalid_order_exits_1_with_table(monkeypatch, capsys, exp_path, files):
    files["schedule"].write_text("0\n2\n3\n1\n4\n5\n6\n")
    code, out, err = run_cli(monkeypatch, capsys, "evaluate", exp_path, "--schedule", files["schedule"])
    assert code == 1 and err == ""
    assert "invalid" in out and "not-topological" in out and "edge 1 -> 3" in out


def test_spill_ids_in_problem1_order_exit_1(monkeypatch, capsys, exp_path, files):
    files["schedule"].write_text("0\n1\n7\n2\n8\n3\n4\n5\n6\n")
    code, out, _ = run_cli(monkeypatch, capsys, "evaluate", exp_path, "--schedule", files["schedule"], "--json")
    assert code == 1 and json.loads(out)["error_counts"] == {"unknown-node": 2}


def test_spilled_exp_plan(monkeypatch, capsys, exp_path, files):
    """Spill b1 (unbacked) after EXP and bring it back for COPY_OUT: N = 7 -> ids 7, 8.
    EXP [15,45); SPILL_OUT (2*5+150 = 160 on MTE3) [45,205); SPILL_IN (160 on MTE2) [205,365);
    COPY_OUT [365,380)."""
    files["schedule"].write_text("0\n1\n2\n3\n4\n7\n8\n5\n6\n")
    files["spill"].write_text("1:0\n")
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "evaluate",
        exp_path,
        "--schedule",
        files["schedule"],
        "--memory",
        files["memory"],
        "--spill",
        files["spill"],
        "--hw",
        files["hw"],
        "--json",
    )
    assert code == 0, out
    d = json.loads(out)
    assert (d["extra_traffic"], d["spill_count"], d["makespan"]) == (10, 1, 380)


def test_negative_cycles_cost_one_with_a_warning(monkeypatch, capsys, tmp_path, files):
    nodes, edges = exp_records()
    nodes[3]["Cycles"] = -5
    inst = write_instance(tmp_path, nodes, edges, "neg")
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "evaluate",
        inst,
        "--schedule",
        files["schedule"],
        "--memory",
        files["memory"],
        "--spill",
        files["spill"],
        "--json",
    )
    assert code == 0
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dansched: warning: neg: 1 operation node(s)")
    assert "(EXP: 1)" in lines[0]
    # EXP now costs 1: 15 + 1 + 15
    assert json.loads(out)["makespan"] == 31


# ---------------------------------------------------------------------------------
# bad input: exit 2, one line on stderr, no traceback
# ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name,mutate,pattern", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_instance_exits_2(monkeypatch, capsys, tmp_path, files, name, mutate, pattern):
    nodes, edges = exp_records()
    mutate(nodes, edges)
    inst = write_instance(tmp_path, nodes, edges)
    code, out, err = run_cli(monkeypatch, capsys, "evaluate", inst, "--schedule", files["schedule"])
    assert_input_error(code, out, err, pattern)


def _bad_csv(tmp_path: Path) -> Path:
    (tmp_path / "b_Nodes.csv").write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe\x00")
    (tmp_path / "b_Edges.csv").write_text("StartNodeId,EndNodeId\n")
    return tmp_path / "b_Nodes.csv"


def _bad_json(tmp_path: Path) -> Path:
    p = tmp_path / "bad.json"
    p.write_text('{"Nodes": [{"Id": 0,}]}')
    return p


BAD_FILES = {
    # name: (files to rewrite {key: text}, extra args, pattern)
    "invalid JSON": ({}, "instance=bad_json", r"not valid JSON"),
    "missing instance": ({}, "instance=missing", r"no such file"),
    "binary CSV instance": ({}, "instance=bad_csv", r"cannot read as a CSV instance"),
    "hardware not TOML": ({"hw": "[tiers\nUB = 10\n"}, "hw", r"not valid TOML"),
    "hardware negative capacity": (
        {"hw": "[tiers]\nUB = -10\n"},
        "hw",
        r"capacity of tier UB must be a positive integer",
    ),
    "hardware unknown spill pipe": ({"hw": '[roles]\nspill_in_pipe = "DMA"\n'}, "hw", r"spill_in_pipe = 'DMA'"),
    "missing hardware file": ({}, "hw=missing", r"hardware: no such file"),
    "schedule not integers": ({"schedule": "0\n1\ntwo\n"}, "", r"Exp_schedule.txt:3: a node id must be an integer"),
    "missing schedule file": ({}, "schedule=missing", r"no such file"),
    "memory without colon": ({"memory": "0:0\n1 5\n"}, "full", r"Exp_memory.txt:2: expected 'BufId:Offset'"),
    "memory offset not an integer": ({"memory": "0:0\n1:five\n"}, "full", r"Offset must be an integer"),
    "spill not pairs": ({"spill": "1:0:2\n"}, "full", r"Exp_spill.txt:1: expected 'BufId:NewOffset'"),
    "spill buffer not an integer": ({"spill": "b1:0\n"}, "full", r"BufId must be an integer"),
    "spill without memory": ({}, "spill-only", r"--spill needs --memory"),
    "missing --schedule": ({}, "no-schedule", r"give the plan: --plan DIR, or --schedule FILE"),
    "unknown option": ({}, "unknown-option", r"No such option"),
}


def _bad_file_args(tmp_path, exp_path, files, rewrite, mode):
    for key, text in rewrite.items():
        files[key].write_text(text)
    instance = exp_path
    if mode == "instance=bad_json":
        instance = _bad_json(tmp_path)
    elif mode == "instance=missing":
        instance = tmp_path / "nope.json"
    elif mode == "instance=bad_csv":
        instance = _bad_csv(tmp_path)
    args = ["evaluate", instance, "--schedule", files["schedule"]]
    if mode == "hw":
        args += ["--hw", files["hw"]]
    elif mode == "hw=missing":
        args += ["--hw", tmp_path / "nope.toml"]
    elif mode == "schedule=missing":
        args[3] = tmp_path / "nope.txt"
    elif mode == "full":
        args += ["--memory", files["memory"], "--spill", files["spill"]]
    elif mode == "spill-only":
        args += ["--spill", files["spill"]]
    elif mode == "no-schedule":
        args = ["evaluate", instance]
    elif mode == "unknown-option":
        args += ["--frobnicate"]
    return args


@pytest.mark.parametrize("name", list(BAD_FILES))
def test_bad_input_files_exit_2(monkeypatch, capsys, tmp_path, exp_path, files, name):
    rewrite, mode, pattern = BAD_FILES[name]
    args = _bad_file_args(tmp_path, exp_path, files, rewrite, mode)
    code, out, err = run_cli(monkeypatch, capsys, *args)
    assert_input_error(code, out, err, pattern)


@pytest.mark.parametrize("name", ["hardware not TOML", "binary CSV instance", "memory without colon"])
def test_bad_input_in_a_real_process(tmp_path, exp_path, files, name):
    rewrite, mode, pattern = BAD_FILES[name]
    proc = run_proc(*_bad_file_args(tmp_path, exp_path, files, rewrite, mode))
    assert_input_error(proc.returncode, proc.stdout, proc.stderr, pattern)


@pytest.mark.parametrize("name", ["cycle", "Type not a string", "buffer larger than its tier"])
def test_malformed_instance_in_a_real_process(tmp_path, files, name):
    _, mutate, pattern = next(m for m in MALFORMED if m[0] == name)
    nodes, edges = exp_records()
    mutate(nodes, edges)
    proc = run_proc("evaluate", write_instance(tmp_path, nodes, edges), "--schedule", files["schedule"])
    assert_input_error(proc.returncode, proc.stdout, proc.stderr, pattern)


def test_valid_and_invalid_in_a_real_process(exp_path, files):
    ok = run_proc(
        "evaluate",
        exp_path,
        "--schedule",
        files["schedule"],
        "--memory",
        files["memory"],
        "--spill",
        files["spill"],
        "--hw",
        files["hw"],
        "--json",
    )
    assert ok.returncode == 0 and json.loads(ok.stdout)["makespan"] == 60
    files["memory"].write_text("0:0\n1:3\n")
    bad = run_proc(
        "evaluate",
        exp_path,
        "--schedule",
        files["schedule"],
        "--memory",
        files["memory"],
        "--spill",
        files["spill"],
        "--hw",
        files["hw"],
        "--json",
    )
    assert bad.returncode == 1 and "Traceback" not in bad.stderr
    assert json.loads(bad.stdout)["error_counts"] == {"overlap": 1}


# ---------------------------------------------------------------------------------
# what a newcomer meets: a forgotten file, edited files, the plan's name
# ---------------------------------------------------------------------------------


def test_a_forgotten_spill_file_is_named_once(monkeypatch, capsys, exp_path, files):
    """The spilled Exp plan judged without --spill: its spill ids (7, 8 >= N = 7) do not
    exist; one line lists them, and one note says why and what to pass, once."""
    files["schedule"].write_text("0\n1\n2\n3\n4\n7\n8\n5\n6\n")
    args = ["evaluate", exp_path, "--schedule", files["schedule"], "--hw", files["hw"]]
    code, out, _ = run_cli(monkeypatch, capsys, *args, "--memory", files["memory"], "--json")
    assert code == 1
    verdict = json.loads(out)
    messages = [e["message"] for e in verdict["errors"] if e["kind"] == "unknown-node"]
    assert messages == [f"schedule names node {v}, which does not exist (valid ids 0..6)" for v in (7, 8)]
    assert verdict["notes"] == ["ids >= 7 are spill nodes: pass --spill Exp_spill.txt"]
    code, out, _ = run_cli(monkeypatch, capsys, *args, "--memory", files["memory"])
    assert code == 1 and out.count("are spill nodes") == 1
    lines = out.splitlines()
    at = [k for k, line in enumerate(lines) if "unknown-node" in line]
    assert len(at) == 1 and lines[at[0] + 1].startswith("      ")  # one violation, wrapped at 80 columns
    assert " ".join(s.strip() for s in lines[at[0] : at[0] + 2]) == (
        "unknown-node x2 (first at position 5): schedule names node 7, which does not exist (valid ids 0..6)"
    )
    code, out, _ = run_cli(monkeypatch, capsys, *args)  # as a problem-1 order: the full-plan files
    assert code == 1
    assert (
        "ids >= 7 are spill nodes: a problem-1 order has none; to judge a full plan pass --memory Exp_memory.txt --spill Exp_spill.txt"
        in " ".join(out.split())  # the note wrapped between words at 80 columns
    )
    assert all(len(line) <= 80 for line in out.splitlines())
    # with the spill file the hint is not needed, and ids past the spills get none
    files["spill"].write_text("1:0\n")
    files["schedule"].write_text("0\n1\n2\n3\n4\n7\n9\n5\n6\n")
    code, out, _ = run_cli(monkeypatch, capsys, *args, "--memory", files["memory"], "--spill", files["spill"], "--json")
    assert code == 1 and "spill nodes" not in out


def test_a_full_plan_is_named_for_problems_2_and_3(monkeypatch, capsys, exp_path, files):
    base = ["evaluate", exp_path, "--schedule", files["schedule"]]
    code, out, _ = run_cli(monkeypatch, capsys, *base, "--memory", files["memory"], "--spill", files["spill"])
    assert code == 0 and out.splitlines()[0] == "Exp: full plan (problems 2 and 3) is valid"
    assert "problem-2 plan" not in out
    code, out, _ = run_cli(monkeypatch, capsys, *base)
    assert code == 0 and out.splitlines()[0] == "Exp: problem-1 order is valid"


def _solved_exp(tmp_path: Path, exp_path: Path) -> Path:
    """Exp solved into a folder: its schedule is 0 1 2 3 5 6 4 (b0 at 0, b1 at 5, no spill)."""
    from helpers import run_proc_cli

    folder = tmp_path / "plan"
    assert run_proc_cli("solve", exp_path, "--out", folder, "--quiet").returncode == 0
    assert (folder / "Exp_schedule.txt").read_text().split() == ["0", "1", "2", "3", "5", "6", "4"]
    return folder


def _swap_lines(path: Path, i: int, j: int) -> None:
    lines = path.read_text().splitlines(keepends=True)
    lines[i], lines[j] = lines[j], lines[i]
    path.write_text("".join(lines))


@pytest.mark.parametrize("how", ["--plan", pytest.param("--schedule", marks=pytest.mark.slow)])
def test_edited_files_in_a_solve_folder_are_judged_as_they_are(tmp_path, exp_path, how):
    """Edit, then judge: files edited after `solve` in its folder are judged as they are,
    with one note (stderr; `differs_from_report` in JSON), the exit status per validity.
    Oracles by hand on Exp: swapping COPY_IN (1) and ALLOC b1 (2), which no edge joins,
    keeps the plan valid (makespan 15 + 30 + 15 = 60); swapping ALLOC b0 (0) and its user
    COPY_IN (1) breaks edge 0 -> 1."""
    from helpers import run_proc_cli

    folder = _solved_exp(tmp_path, exp_path)
    schedule = folder / "Exp_schedule.txt"
    args = (
        ["--plan", folder]
        if how == "--plan"
        else ["--schedule", schedule, "--memory", folder / "Exp_memory.txt", "--spill", folder / "Exp_spill.txt"]
    )
    _swap_lines(schedule, 1, 2)  # two independent lines
    proc = run_proc_cli("evaluate", exp_path, *args)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Exp: full plan (problems 2 and 3) is valid") and "60" in proc.stdout
    [note] = proc.stderr.splitlines()
    assert note.startswith("dansched: note: ") and "Exp_schedule.txt does not match the fingerprint" in note
    got = json.loads(run_proc_cli("evaluate", exp_path, *args, "--json").stdout)
    assert got["valid"] is True and got["makespan"] == 60
    assert "Exp_schedule.txt does not match the fingerprint in Exp_report.json" in got["differs_from_report"]
    _swap_lines(schedule, 1, 2)  # back to the plan solve wrote: no note
    proc = run_proc_cli("evaluate", exp_path, *args, "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["differs_from_report"] is None and proc.stderr == ""
    _swap_lines(schedule, 0, 1)  # breaks edge 0 -> 1
    proc = run_proc_cli("evaluate", exp_path, *args, "--json")
    got = json.loads(proc.stdout)
    assert proc.returncode == 1 and got["valid"] is False and got["differs_from_report"] is not None
    assert any(e["kind"] == "not-topological" and "edge 0 -> 1" in e["message"] for e in got["errors"])


def test_an_invalid_plan_shows_its_verdict_first_and_no_timing(monkeypatch, capsys, exp_path, files):
    """Verdict first: swapping ALLOC b0 (0) and COPY_IN (1) breaks edge 0 -> 1, the oracle.
    The verdict line, then the violations, then the figures marked as an invalid plan's;
    no makespan and no latency (the plan has no timing); `null` in JSON; exit 1."""
    files["schedule"].write_text("1\n0\n2\n3\n4\n5\n6\n")
    args = ["evaluate", exp_path, "--schedule", files["schedule"], "--memory", files["memory"]]
    args += ["--spill", files["spill"], "--hw", files["hw"]]
    code, out, _ = run_cli(monkeypatch, capsys, *args)
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == "Exp: full plan (problems 2 and 3) is invalid (2 violation(s))"
    broken = next(i for i, line in enumerate(lines) if "edge 0 -> 1" in line)
    table = next(i for i, line in enumerate(lines) if line.startswith("metric"))
    assert broken < table and "(invalid plan)" in lines[table]
    assert [line.split()[-1] for line in lines if line.startswith("makespan")] == ["-"]
    assert "Estimated latency" not in out and "no makespan: the order runs a node before one it depends on" in out
    code, out, _ = run_cli(monkeypatch, capsys, *args, "--json")
    got = json.loads(out)
    assert code == 1 and got["valid"] is False and got["makespan"] is None and got["timing_defined"] is False
    assert got["max_v_stay"] == 10  # +5 (b0), +5 (b1): the schedule is still a permutation


def test_an_invalid_plan_with_a_timing_marks_its_latency(monkeypatch, capsys, exp_path, files):
    """b1 at [4, 9) overlaps b0 at [0, 5): invalid, the order keeps every edge, so the makespan
    (60 = 15 + 30 + 15) and its latency are shown, marked as an invalid plan's."""
    files["memory"].write_text("0:0\n1:4\n")
    args = ["evaluate", exp_path, "--schedule", files["schedule"], "--memory", files["memory"]]
    code, out, _ = run_cli(monkeypatch, capsys, *args, "--spill", files["spill"], "--hw", files["hw"])
    assert code == 1 and "Estimated latency: 0.060 us (60 cycles at 1 GHz) (invalid plan)" in out


def test_the_cause_comes_first(monkeypatch, capsys, exp_path, files):
    """EXP (node 3) moved before COPY_IN (1) and ALLOC b1 (2), and b1 placed over b0: the two
    broken edges are the cause, b1 not resident and the overlap follow from them or the
    addresses. Listed order first, then residency, then addresses (by position within each),
    in --json and on screen, every line within 80 columns, wrapped between words."""
    files["schedule"].write_text("0\n3\n1\n2\n4\n5\n6\n")
    files["memory"].write_text("0:0\n1:4\n")
    args = ["evaluate", exp_path, "--schedule", files["schedule"], "--memory", files["memory"]]
    args += ["--spill", files["spill"], "--hw", files["hw"]]
    code, out, _ = run_cli(monkeypatch, capsys, *args, "--json")
    kinds = [e["kind"] for e in json.loads(out)["errors"]]
    assert code == 1 and kinds[:2] == ["not-topological", "not-topological"], kinds
    assert "not-resident" in kinds and kinds[-1] == "overlap", kinds
    code, out, _ = run_cli(monkeypatch, capsys, *args)
    lines = out.splitlines()
    assert code == 1 and all(len(line) <= 80 for line in lines), lines
    starts = [line.split()[0] for line in lines[1:] if line.startswith("  ") and not line.startswith("   ")]
    assert starts[:2] == ["not-topological", "not-topological"] and starts[-1] == "overlap", starts


def test_the_order_violations_are_shown_even_past_the_first_twenty():
    """A matmul_s2 plan (problem 2, fast) with the last 30 ALLOCs of its order moved to its
    end: each breaks its edges and leaves its buffer not resident where it is used (more
    than 20 of each, the residency walk finding them first); the violations shown are the
    broken edges, the cause, and all are counted."""
    from dataclasses import replace

    from helpers import SHIPPED

    from dansched.instance import load_instance
    from dansched.pipeline import effort_options, run_pipeline
    from dansched.simulate import evaluate_reference

    inst = load_instance(SHIPPED / "matmul_s2.json")
    plan = run_pipeline(inst, effort_options("fast", problem=2)).plan
    allocs = [v for v in plan.order if v < inst.n and inst.op[v] == "ALLOC"][-30:]
    moved = [v for v in plan.order if v not in set(allocs)] + allocs
    ev = evaluate_reference(inst, replace(plan, order=tuple(moved)))
    residency = sum(c for k, c in ev.error_counts.items() if k in ("lifetime", "not-resident"))
    assert ev.error_counts["not-topological"] >= 30 and residency > 20, ev.error_counts
    assert [e.kind for e in ev.errors] == ["not-topological"] * 20
