"""Schedule trace (Trace Event Format JSON), task statistics and plan pictures."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import official_path, run_cli

from dansched.application.report.stats import (
    STATISTIC_KEYS,
    estimated_latency_line,
    intersection_length,
    task_statistics,
    union_intervals,
)
from dansched.application.report.trace import (
    BUFFER_PID,
    CORE_PID,
    build_trace,
    plan_statistics,
    timed_tasks,
    write_trace,
)
from dansched.errors import ArgumentError, TraceError
from dansched.hardware import load_hardware
from dansched.instance import instance_from_records, load_instance
from dansched.plan import Plan, plan_from_indices, write_plan
from dansched.simulate import evaluate

EXP_PLAN = Plan(order=tuple(range(7)), offsets=((0, 0), (1, 5)))
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


# ---- helpers ------------------------------------------------------------------------


def thread_names(trace: dict) -> dict[tuple[int, int], str]:
    return {
        (e["pid"], e["tid"]): e["args"]["name"]
        for e in trace["traceEvents"]
        if e["ph"] == "M" and e["name"] == "thread_name"
    }


def x_events(trace: dict, pid: int) -> list[dict]:
    return [e for e in trace["traceEvents"] if e["ph"] == "X" and e["pid"] == pid]


def disjoint_layout_plan(inst) -> Plan:
    """Order = ids (a topological order in the contest files); buffers side by side per tier."""
    offsets = np.zeros(inst.num_buffers, dtype=np.int64)
    next_free: dict[int, int] = {}
    for b in range(inst.num_buffers):
        t = int(inst.buf_tier[b])
        offsets[b] = next_free.get(t, 0)
        next_free[t] = int(offsets[b] + inst.buf_size[b])
    return plan_from_indices(inst, range(inst.n), offsets)


def roomy_hardware(tmp_path: Path, path: Path):
    """A hardware override whose tiers hold every buffer of the instance at once."""
    inst = load_instance(path)
    totals = {t: int(inst.buf_size[inst.buf_tier == i].sum()) for i, t in enumerate(inst.hw.tiers)}
    toml = tmp_path / "roomy.toml"
    toml.write_text("[tiers]\n" + "".join(f"{t} = {max(v, inst.hw.capacity[t])}\n" for t, v in totals.items()))
    return toml, load_hardware(toml)


def write_exp_plan(directory: Path, plan: Plan = EXP_PLAN) -> Path:
    write_plan(plan, directory, "Exp")
    return directory


def brute_force_statistics(groups: dict[str, list[tuple[int, int]]], total: int) -> dict[str, int]:
    """Every statistic by marking unit time slots (small integer horizons only)."""
    busy = {k: np.zeros(total, dtype=bool) for k in ("DMA", "CUBE", "VECTOR")}
    anything = np.zeros(total, dtype=bool)
    for k, ivs in groups.items():
        for a, b in ivs:
            anything[a:b] = True
            if k in busy:
                busy[k][a:b] = True
    d, c, v = busy["DMA"], busy["CUBE"], busy["VECTOR"]
    return {
        "total_duration": total,
        "dma_duration": int(d.sum()),
        "cube_duration": int(c.sum()),
        "vector_duration": int(v.sum()),
        "dma_cube_overlap": int((d & c).sum()),
        "dma_vector_overlap": int((d & v).sum()),
        "cube_vector_overlap": int((c & v).sum()),
        "all_tasks_union": int(anything.sum()),
        "total_idle": int((~anything).sum()),
        "vector_without_cube": int((v & ~c).sum()),
        "dma_without_overlaps": int((d & ~c & ~v).sum()),
        "sum_dma": sum(b - a for a, b in groups.get("DMA", [])),
        "sum_cube": sum(b - a for a, b in groups.get("CUBE", [])),
        "sum_vector": sum(b - a for a, b in groups.get("VECTOR", [])),
    }


def assert_statistics_add_up(cycles: dict[str, int]) -> None:
    assert cycles["all_tasks_union"] + cycles["total_idle"] == cycles["total_duration"]
    assert cycles["total_idle"] >= 0
    for pair, (x, y) in {
        "dma_cube_overlap": ("dma_duration", "cube_duration"),
        "dma_vector_overlap": ("dma_duration", "vector_duration"),
        "cube_vector_overlap": ("cube_duration", "vector_duration"),
    }.items():
        assert 0 <= cycles[pair] <= min(cycles[x], cycles[y])
    for k in ("dma", "cube", "vector"):
        assert cycles[f"{k}_duration"] <= cycles[f"sum_{k}"]
        assert cycles[f"{k}_duration"] <= cycles["all_tasks_union"]
    assert cycles["vector_without_cube"] == cycles["vector_duration"] - cycles["cube_vector_overlap"]
    assert 0 <= cycles["dma_without_overlaps"] <= cycles["dma_duration"]


# ---- the Exp example (docs/rules.md, section 9) -----------------------------------------------


def test_exp_trace_has_three_pipe_events_with_exact_times(exp_path, tmp_path):
    inst = load_instance(exp_path)
    ev = evaluate(inst, EXP_PLAN)
    assert ev.valid and ev.makespan == 60
    out = tmp_path / "Exp_trace.json"
    stats = write_trace(inst, EXP_PLAN, ev, out)
    text = out.read_text()
    assert text.startswith('{"traceEvents"')
    trace = json.loads(text)
    assert list(trace)[:2] == ["traceEvents", "taskStatistics"]
    names = thread_names(trace)
    tasks = sorted(x_events(trace, CORE_PID), key=lambda e: e["ts"])
    assert [names[(CORE_PID, e["tid"])] for e in tasks] == ["MTE2", "VECTOR", "MTE3"]
    assert [e["name"] for e in tasks] == ["1 COPY_IN", "3 EXP", "5 COPY_OUT"]
    assert [e["cat"] for e in tasks] == ["DMA", "VECTOR", "DMA"]
    # 1 GHz: 1 cycle = 0.001 us; 0-15, 15-45, 45-60 cycles
    assert [e["ts"] for e in tasks] == pytest.approx([0.0, 0.015, 0.045])
    assert [e["dur"] for e in tasks] == pytest.approx([0.015, 0.030, 0.015])
    assert [e["args"]["Bufs"] for e in tasks] == [[0], [1, 0], [1]]
    assert [e["args"]["slack_cycles"] for e in tasks] == [0, 0, 0]
    assert {e["args"]["Id"] for e in tasks} == {1, 3, 5}  # ALLOC/FREE get no task event
    assert stats.cycles["total_duration"] == 60


def test_exp_trace_metadata_names_processes_threads_and_order(exp_path):
    inst = load_instance(exp_path)
    trace = build_trace(inst, EXP_PLAN, evaluate(inst, EXP_PLAN))
    meta = [e for e in trace["traceEvents"] if e["ph"] == "M"]
    kinds = {e["name"] for e in meta}
    assert kinds == {"process_name", "process_sort_index", "thread_name", "thread_sort_index"}
    procs = {e["pid"]: e["args"]["name"] for e in meta if e["name"] == "process_name"}
    assert set(procs) == {CORE_PID, BUFFER_PID}
    core_threads = [n for (pid, _), n in sorted(thread_names(trace).items()) if pid == CORE_PID]
    assert core_threads == list(inst.hw.pipes)
    first_x = next(i for i, e in enumerate(trace["traceEvents"]) if e["ph"] == "X")
    assert all(e["ph"] == "M" for e in trace["traceEvents"][:first_x])


def test_exp_buffer_lifetimes_are_a_second_process(exp_path):
    inst = load_instance(exp_path)
    trace = build_trace(inst, EXP_PLAN, evaluate(inst, EXP_PLAN))
    bufs = {e["args"]["BufId"]: e for e in x_events(trace, BUFFER_PID)}
    assert set(bufs) == {0, 1}
    assert (bufs[0]["args"]["start_cycle"], bufs[0]["args"]["end_cycle"]) == (0, 45)  # FREE after EXP
    assert (bufs[1]["args"]["start_cycle"], bufs[1]["args"]["end_cycle"]) == (0, 60)
    assert bufs[0]["tid"] != bufs[1]["tid"]  # overlapping lifetimes sit on different lanes
    assert {bufs[b]["cat"] for b in bufs} == {"UB"}
    assert bufs[1]["args"]["range"] == "[5, 10)"


def test_exp_statistics_keys_and_values(exp_path):
    inst = load_instance(exp_path)
    trace = build_trace(inst, EXP_PLAN, evaluate(inst, EXP_PLAN))
    st = trace["taskStatistics"]
    assert list(st) == list(STATISTIC_KEYS) + [f"{k}_pct" for k in STATISTIC_KEYS]
    assert st["total_duration"] == pytest.approx(0.060)
    assert st["dma_duration"] == pytest.approx(0.030) and st["dma_duration_pct"] == 50.0
    assert st["vector_duration"] == pytest.approx(0.030)
    assert st["cube_duration"] == 0.0 and st["total_idle"] == 0.0
    assert st["all_tasks_union"] + st["total_idle"] == pytest.approx(st["total_duration"])


def test_clock_scales_microseconds(exp_path):
    inst = load_instance(exp_path)
    ev = evaluate(inst, EXP_PLAN)
    trace = build_trace(inst, EXP_PLAN, ev, freq_ghz=2.0)
    tasks = sorted(x_events(trace, CORE_PID), key=lambda e: e["ts"])
    assert [e["ts"] for e in tasks] == pytest.approx([0.0, 0.0075, 0.0225])
    assert trace["taskStatistics"]["total_duration"] == pytest.approx(0.030)
    with pytest.raises(ArgumentError, match="--freq-ghz must be a number from 0.001 to 1000"):
        build_trace(inst, EXP_PLAN, ev, freq_ghz=0.0)


def test_problem_one_order_has_no_trace(exp_path):
    inst = load_instance(exp_path)
    order_only = Plan(order=tuple(range(7)))
    with pytest.raises(TraceError, match="layout"):
        build_trace(inst, order_only, evaluate(inst, order_only))


def test_estimated_latency_line():
    assert estimated_latency_line(60, 1.0) == "Estimated latency: 0.060 us (60 cycles at 1 GHz)"
    assert estimated_latency_line(942_784, 1.0) == "Estimated latency: 942.784 us (942,784 cycles at 1 GHz)"
    assert "at 1.5 GHz" in estimated_latency_line(3000, 1.5)
    assert "2.000 us" in estimated_latency_line(3000, 1.5)


# ---- slack and spills ---------------------------------------------------------------------


def fork_instance():
    """COPY_IN (10) then VECTOR (30) and a short CUBE (5) in parallel, and a zero-cycle op."""
    nodes = [
        {"Id": 0, "Op": "ALLOC", "BufId": 0, "Size": 4, "Type": "UB"},
        {"Id": 1, "Op": "COPY_IN", "Pipe": "MTE2", "Cycles": 10, "Bufs": [0]},
        {"Id": 2, "Op": "VADD", "Pipe": "VECTOR", "Cycles": 30, "Bufs": [0]},
        {"Id": 3, "Op": "MMAD", "Pipe": "CUBE", "Cycles": 5, "Bufs": [0]},
        {"Id": 4, "Op": "NOP", "Pipe": "FIXP", "Cycles": 0, "Bufs": [0]},
        {"Id": 5, "Op": "FREE", "BufId": 0, "Size": 4, "Type": "UB"},
    ]
    edges = [[0, 1], [1, 2], [1, 3], [3, 4], [2, 5], [4, 5]]
    return instance_from_records("fork", nodes, edges)


def test_slack_is_latest_start_minus_start():
    inst = fork_instance()
    plan = Plan(order=tuple(range(6)), offsets=((0, 0),))
    ev = evaluate(inst, plan)
    assert ev.valid and ev.makespan == 40
    by_id = {t.node: t for t in timed_tasks(inst, plan, ev)}
    assert by_id[1].slack == 0 and by_id[2].slack == 0  # the critical path
    assert by_id[3].slack == 40 - 5 - 10  # CUBE may start as late as 35
    assert (by_id[4].start, by_id[4].end, by_id[4].slack) == (15, 15, 25)  # zero-cycle op kept
    trace = build_trace(inst, plan, ev)
    assert "4 NOP" in {e["name"] for e in x_events(trace, CORE_PID)}


def test_spill_nodes_and_resident_segments(exp_path):
    inst = load_instance(exp_path)
    # b1 is spilled after EXP and comes back at offset 0 (freed by b0): SPILL_OUT 7, SPILL_IN 8
    plan = Plan(order=(0, 1, 2, 3, 4, 7, 8, 5, 6), offsets=((0, 0), (1, 5)), spills=((1, 0),))
    ev = evaluate(inst, plan)
    assert ev.valid, ev.errors
    trace = build_trace(inst, plan, ev)
    tasks = {e["args"]["Id"]: e for e in x_events(trace, CORE_PID)}
    assert tasks[7]["name"] == "7 SPILL_OUT" and tasks[7]["args"]["Bufs"] == [1]
    assert tasks[8]["name"] == "8 SPILL_IN"
    assert (tasks[7]["args"]["start_cycle"], tasks[7]["args"]["end_cycle"]) == (45, 205)
    segs = sorted(
        (
            e["args"]["BufId"],
            e["args"]["segment"],
            e["args"]["offset"],
            e["args"]["start_cycle"],
            e["args"]["end_cycle"],
        )
        for e in x_events(trace, BUFFER_PID)
    )
    assert segs == [(0, 0, 0, 0, 45), (1, 0, 5, 0, 205), (1, 1, 0, 205, ev.makespan)]


# ---- statistics definitions ------------------------------------------------------------------


def test_union_and_intersection():
    assert union_intervals([(5, 7), (0, 2), (1, 3), (3, 4), (9, 9)]) == [(0, 4), (5, 7)]
    assert intersection_length([(0, 4), (5, 7)], [(3, 6)]) == 2


def test_statistics_match_brute_force_on_random_intervals():
    rng = np.random.default_rng(7)
    for _ in range(40):
        total = int(rng.integers(5, 60))
        groups: dict[str, list[tuple[int, int]]] = {}
        for k in ("DMA", "CUBE", "VECTOR", "EXTRA"):
            for _ in range(int(rng.integers(0, 6))):
                a = int(rng.integers(0, total))
                b = int(rng.integers(a, total + 1))
                groups.setdefault(k, []).append((a, b))
        stats = task_statistics(groups, total)
        assert dict(stats.cycles) == brute_force_statistics(groups, total)
        assert_statistics_add_up(stats.cycles)


# ---- an official case ---------------------------------------------------------------------------


def test_statistics_of_an_official_plan_agree_with_the_simulator(tmp_path):
    path = official_path("FlashAttention_Case0")
    _, hw = roomy_hardware(tmp_path, path)
    inst = load_instance(path, hw)
    plan = disjoint_layout_plan(inst)
    ev = evaluate(inst, plan)
    assert ev.valid, ev.errors[:3]
    tasks = timed_tasks(inst, plan, ev)
    stats = plan_statistics(tasks, ev.makespan)
    assert stats.cycles["total_duration"] == ev.makespan == max(t.end for t in tasks)
    assert_statistics_add_up(stats.cycles)
    assert min(t.slack for t in tasks) == 0 and all(t.slack >= 0 for t in tasks)
    assert all(t.slack == 0 for t in tasks if t.end == ev.makespan)
    trace = build_trace(inst, plan, ev)
    assert trace["taskStatistics"]["total_duration"] == pytest.approx(ev.makespan / 1000)
    core = x_events(trace, CORE_PID)
    assert max(e["ts"] + e["dur"] for e in core) == pytest.approx(ev.makespan / 1000)
    lanes: dict[int, list[tuple[int, int]]] = {}
    for e in x_events(trace, BUFFER_PID):
        lanes.setdefault(e["tid"], []).append((e["args"]["start_cycle"], e["args"]["end_cycle"]))
    for spans in lanes.values():
        spans.sort()
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))  # no collisions on a lane
    assert sum(len(v) for v in lanes.values()) == inst.num_buffers


# ---- command line ---------------------------------------------------------------------------------


def test_cli_trace_writes_json_and_png_side_by_side(exp_path, tmp_path, monkeypatch, capsys):
    before = write_exp_plan(tmp_path / "before")
    after = write_exp_plan(tmp_path / "after")
    png = tmp_path / "exp.png"
    rc, out, err = run_cli(
        monkeypatch,
        capsys,
        "trace",
        exp_path,
        "--plan",
        after,
        "--compare",
        before,
        "--png",
        png,
    )
    assert rc == 0, err
    assert "Estimated latency: 0.060 us" in out and "DMA-VECTOR overlap" in out
    # Exp: VECTOR (30 cycles) is the busiest pipe and waits 15 cycles for the COPY_IN
    assert "busiest pipe VECTOR: load 30 cycles, idle 15 before its last task, tail 15" in out
    assert "waits 15 cycles in 1 gap(s) on dag:MTE2" in out
    trace = json.loads((after / "Exp_trace.json").read_text())
    assert len(x_events(trace, CORE_PID)) == 3
    data = png.read_bytes()
    assert data.startswith(PNG_MAGIC) and len(data) > 1000


def test_cli_trace_out_and_clock(exp_path, tmp_path, monkeypatch, capsys):
    plan_dir = write_exp_plan(tmp_path / "plan")
    out_file = tmp_path / "elsewhere" / "t.json"
    rc, out, _ = run_cli(
        monkeypatch, capsys, "trace", exp_path, "--plan", plan_dir, "--out", out_file, "--freq-ghz", "0.5"
    )
    assert rc == 0
    assert "0.120 us (60 cycles at 0.5 GHz)" in out
    assert json.loads(out_file.read_text())["taskStatistics"]["total_duration"] == pytest.approx(0.12)
    assert not (plan_dir / "Exp_trace.json").exists()


@pytest.mark.parametrize(
    "extra, setup, code",
    [
        ((), "order_only", 2),
        ((), "invalid", 1),
        (("--freq-ghz", "0"), "valid", 2),
        (("--compare", "."), "valid", 2),
        ((), "missing", 2),
    ],
)
def test_cli_trace_refuses_bad_input_and_writes_nothing(exp_path, tmp_path, monkeypatch, capsys, extra, setup, code):
    plan_dir = tmp_path / "plan"
    plan_dir.mkdir()
    if setup == "order_only":
        (plan_dir / "Exp_schedule.txt").write_text("".join(f"{v}\n" for v in range(7)))
    elif setup == "invalid":
        write_exp_plan(plan_dir, Plan(order=(0, 1, 2, 3, 4, 5, 6), offsets=((0, 0), (1, 2))))  # overlap
    elif setup == "valid":
        write_exp_plan(plan_dir)
    before = sorted(p.name for p in plan_dir.iterdir())
    rc, _, err = run_cli(monkeypatch, capsys, "trace", exp_path, "--plan", plan_dir, *extra)
    assert rc == code
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert sorted(p.name for p in plan_dir.iterdir()) == before


def test_cli_trace_on_an_official_case_with_hw_override(tmp_path, monkeypatch, capsys):
    path = official_path("FlashAttention_Case0")
    toml, hw = roomy_hardware(tmp_path, path)
    inst = load_instance(path, hw)
    write_plan(disjoint_layout_plan(inst), tmp_path, inst.name)
    rc, out, err = run_cli(monkeypatch, capsys, "trace", path, "--plan", tmp_path, "--hw", toml)
    assert rc == 0, err
    makespan = evaluate(inst, disjoint_layout_plan(inst)).makespan
    assert f"({makespan:,} cycles at 1 GHz)" in out


def test_matplotlib_is_imported_only_when_drawing():
    code = (
        "import sys, dansched.cli, dansched.application.report.trace, dansched.application.report.stats, dansched.application.report.info\n"
        "assert 'matplotlib' not in sys.modules, 'matplotlib imported eagerly'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
