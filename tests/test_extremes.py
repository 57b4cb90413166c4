"""Legal extremes through the real command line: huge Cycles, huge capacities, huge spill
costs, figures past 2**53 and 2**63 (docs/rules.md, Supported ranges).

Every run must end with an exit status of the documented table (0 plan / valid, 1 no
plan / invalid, 2 bad input), never a traceback, and on exit 2 exactly one
``dansched: error:`` line and nothing written. Inputs inside the supported ranges get a
plan whose figures the evaluator confirms; expected figures are computed by hand from
docs/rules.md, section 5 (spill cost ``alpha + beta * Size``, traffic ``Size`` for a buffer a
COPY_IN backs) in each test.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers import SHIPPED, exp_records, run_cli_here

from dansched.errors import InstanceError
from dansched.hardware import load_hardware
from dansched.instance import instance_from_records

LIMIT = 2**60  # the supported time and traffic horizons (docs/rules.md)


def dansched(*args: Any) -> subprocess.CompletedProcess:
    """``dansched ARGS`` through the console entry point, in this process."""
    return run_cli_here(*args)


def check(proc: subprocess.CompletedProcess, status: int, *words: str) -> None:
    """The contract: the expected exit status, no traceback; on exit 2 one error line (the
    last line of stderr) holding ``words`` and nothing on stdout."""
    where = f"{proc.args[3:]}: exit {proc.returncode}\nstdout: {proc.stdout[-800:]}\nstderr: {proc.stderr[-800:]}"
    assert proc.returncode == status, where
    assert "Traceback" not in proc.stdout + proc.stderr, where
    errors = [s for s in proc.stderr.splitlines() if s.startswith("dansched: error: ")]
    if status == 2:
        assert len(errors) == 1 and proc.stderr.splitlines()[-1] == errors[0] and proc.stdout == "", where
        assert all(w in errors[0] for w in words), where
    else:
        assert not errors, where


def write(path: Path, nodes: list[dict], edges: list[list[int]]) -> Path:
    path.write_text(json.dumps({"Nodes": nodes, "Edges": edges}))
    return path


def hw_file(path: Path, **keys: dict[str, int]) -> Path:
    """A --hw file setting the given tables, e.g. ``tiers={"UB": 8}``."""
    path.write_text("".join(f"[{t}]\n" + "".join(f"{k} = {v}\n" for k, v in kv.items()) for t, kv in keys.items()))
    return path


def three_buffers(size: int, cycles: int) -> tuple[list[dict], list[list[int]]]:
    """Buffers 0, 1, 2 of ``size`` in UB, each loaded by a COPY_IN (so DDR backs it: a spill
    costs ``Size`` of traffic and one SPILL_IN), used pairwise by three VECTOR operations;
    in a UB of ``2 * size`` at least one spill is needed. Each buffer has 3 users, so 4
    gaps between needs (ALLOC, users, FREE)."""
    nodes: list[dict] = []
    edges: list[list[int]] = []

    def add(rec: dict) -> int:
        rec["Id"] = len(nodes)
        nodes.append(rec)
        return rec["Id"]

    alloc, load = {}, {}
    for b in range(3):
        alloc[b] = add({"Op": "ALLOC", "BufId": b, "Size": size, "Type": "UB"})
        load[b] = add({"Op": "COPY_IN", "Pipe": "MTE2", "Cycles": cycles, "Bufs": [b]})
        edges.append([alloc[b], load[b]])
    pairs = [(0, 1), (1, 2), (0, 2)]
    ops = []
    for x, y in pairs:
        ops.append(add({"Op": "MUL", "Pipe": "VECTOR", "Cycles": cycles, "Bufs": [x, y]}))
        edges += [[load[x], ops[-1]], [load[y], ops[-1]]]
    for b in range(3):
        f = add({"Op": "FREE", "BufId": b, "Size": size, "Type": "UB"})
        edges += [[alloc[b], f]] + [[o, f] for o, (x, y) in zip(ops, pairs) if b in (x, y)]
    return nodes, edges


def solve_and_confirm(tmp_path: Path, inst: Path, hw: Path) -> dict:
    """``solve --problem 3``, then ``evaluate --json`` of the written plan: the report's
    figures are the evaluator's. Returns the report."""
    out = tmp_path / "plan"
    check(dansched("solve", inst, "--hw", hw, "--out", out, "--quiet"), 0)
    case = inst.stem
    report = json.loads((out / f"{case}_report.json").read_text())
    files = [out / f"{case}_{k}.txt" for k in ("schedule", "memory", "spill")]
    ev = dansched(
        "evaluate", inst, "--hw", hw, "--schedule", files[0], "--memory", files[1], "--spill", files[2], "--json"
    )
    check(ev, 0)
    got = json.loads(ev.stdout)
    assert got["valid"]
    for key in ("makespan", "extra_traffic", "spill_count", "physical_peak"):
        assert got[key] == report[key], key
    return report


# ---------------------------------------------------------------------------------
# the horizons, in process: exact boundaries computed by hand
# ---------------------------------------------------------------------------------


def test_time_horizon_boundary_on_exp():
    """Exp (docs/rules.md, section 9): Cycles 15 + 30 + 15; buffer 0 (Size 5, backed by the COPY_IN,
    2 users: 3 gaps) spills at 0 + 160 cycles, buffer 1 (not backed, 3 gaps) at 160 + 160:
    time horizon 60 + 3 * 160 + 3 * 320 = 1500. Node 3's Cycles moves it to 2**60 - 1
    (accepted) and 2**60 (refused, naming node 3)."""
    for extra, ok in ((LIMIT - 1 - 1500, True), (LIMIT - 1500, False)):
        nodes, edges = exp_records()
        nodes[3]["Cycles"] = 30 + extra
        if ok:
            assert instance_from_records("exp", nodes, edges).n == 7
            continue
        try:
            instance_from_records("exp", nodes, edges)
        except InstanceError as exc:
            assert "time horizon is 1152921504606846976 cycles" in str(exc)
            assert "node 3 (EXP)" in str(exc) and "docs/rules.md" in str(exc)
        else:
            raise AssertionError("a time horizon of 2**60 must be refused")


def test_traffic_horizon_boundary_on_exp(tmp_path):
    """Exp with both buffers of Size S in a UB of 2S and spills costing 150 cycles flat:
    traffic horizon 3 * S (buffer 0, backed) + 3 * 2S (buffer 1) = 9S, time horizon
    60 + 3 * 150 + 3 * 300 = 1410. 9S < 2**60 loads, 9S >= 2**60 is refused naming
    buffer 1 (the larger part)."""
    for size, ok in (((LIMIT - 1) // 9, True), (-(-LIMIT // 9), False)):
        nodes, edges = exp_records()
        for i in (0, 2, 4, 6):
            nodes[i]["Size"] = size
        hw = load_hardware(hw_file(tmp_path / "hw.toml", tiers={"UB": 2 * size}, spill={"cycles_per_unit": 0}))
        if ok:
            assert instance_from_records("exp", nodes, edges, hw).n == 7
            continue
        try:
            instance_from_records("exp", nodes, edges, hw)
        except InstanceError as exc:
            assert f"traffic horizon is {9 * size} units" in str(exc) and "buffer 1 (Size" in str(exc)
        else:
            raise AssertionError("a traffic horizon of 2**60 must be refused")


# ---------------------------------------------------------------------------------
# through the command line
# ---------------------------------------------------------------------------------


def test_makespan_past_2_63_is_refused_in_one_line(tmp_path):
    """Cycles adding up to just under 2**63 with a forced spill: the makespan would pass
    2**63 (this crashed problem 3 in Stage 3). Every command refuses the instance in one
    line naming the time horizon, and writes nothing."""
    inst = write(tmp_path / "big.json", *three_buffers(4, (2**63 - 100) // 6))
    hw = hw_file(tmp_path / "hw.toml", tiers={"UB": 8})
    (tmp_path / "plan").mkdir()
    for args in (
        ("solve", inst, "--hw", hw, "--out", tmp_path / "out", "--quiet"),
        ("bound", inst, "--hw", hw),
        ("evaluate", inst, "--hw", hw, "--schedule", tmp_path / "none.txt"),
        ("trace", inst, "--hw", hw, "--plan", tmp_path / "plan"),
    ):
        check(dansched(*args), 2, "time horizon", "2**60")
    assert not (tmp_path / "out").exists() and list((tmp_path / "plan").iterdir()) == []


def test_huge_spill_costs_are_refused_in_one_line(tmp_path):
    """A spill cost of 2**62 cycles per unit (under 2**63 alone) or a spill cost that
    makes the time horizon pass 2**60: one line naming the key or the horizon."""
    inst = write(tmp_path / "three.json", *three_buffers(4, 10))
    for spill, words in (
        ({"cycles_per_unit": 2**62}, ("spill.cycles_per_unit", "2**60")),
        ({"fixed_cycles": 2**62 - 1}, ("spill.fixed_cycles", "2**60")),
        ({"cycles_per_unit": 2**59}, ("time horizon", "buffer")),
    ):
        hw = hw_file(tmp_path / "hw.toml", tiers={"UB": 8}, spill=spill)
        check(dansched("solve", inst, "--hw", hw, "--out", tmp_path / "out", "--quiet"), 2, *words)
    assert not (tmp_path / "out").exists()


def test_huge_spill_costs_inside_the_range_give_exact_plans(tmp_path):
    """Spill cycles of 2**51 per unit (a SPILL_IN of Size 4 costs 150 + 2**53), so the
    makespan passes 2**53: solve, evaluate, bound and trace all succeed; the makespan is
    at least the Cycles of the COPY_INs and MULs plus one SPILL_IN (all serial on their
    pipes or chained), and every bound is at most the plan's figure."""
    inst = write(tmp_path / "three.json", *three_buffers(4, 10))
    hw = hw_file(tmp_path / "hw.toml", tiers={"UB": 8}, spill={"cycles_per_unit": 2**51})
    report = solve_and_confirm(tmp_path, inst, hw)
    spill_in = 150 + 4 * 2**51
    assert report["spill_count"] >= 1 and report["extra_traffic"] == 4 * report["spill_count"]
    assert report["makespan"] >= spill_in + 20 > 2**53
    bound = dansched("bound", inst, "--hw", hw, "--json")
    check(bound, 0)
    rows = json.loads(bound.stdout)
    for metric in ("max_v_stay", "extra_traffic", "makespan"):
        assert rows[metric]["value"] <= rows[metric]["plan_value"], rows[metric]
    check(dansched("trace", inst, "--hw", hw, "--plan", tmp_path / "plan"), 0)
    assert (tmp_path / "plan" / "three_trace.json").is_file()


def test_traffic_past_2_53_stays_exact(tmp_path):
    """Buffers of Size 2**55 + 12345 (not a double) in a UB of twice that: the traffic is
    Size per spill (COPY_IN backs every buffer), exactly; the fixed-order traffic bound
    of ``bound`` and of the report never exceeds it (doubles once rounded it up)."""
    size = 2**55 + 12345
    inst = write(tmp_path / "wide.json", *three_buffers(size, 10))
    hw = hw_file(tmp_path / "hw.toml", tiers={"UB": 2 * size})
    report = solve_and_confirm(tmp_path, inst, hw)
    assert report["spill_count"] >= 1 and report["extra_traffic"] == size * report["spill_count"]
    assert report["bounds"]["extra_traffic"]["value"] <= report["extra_traffic"]
    bound = dansched("bound", inst, "--hw", hw, "--json")
    check(bound, 0)
    rows = json.loads(bound.stdout)
    assert rows["extra_traffic"]["value"] <= rows["extra_traffic"]["plan_value"] == report["extra_traffic"]


def test_huge_capacity_plans_exp(tmp_path):
    """Exp with a UB of 2**40 units (problem 3 once allocated one cell per address): the
    plan of docs/rules.md, section 9, makespan 15 + 30 + 15 = 60."""
    exp = write(tmp_path / "Exp.json", *exp_records())
    hw = hw_file(tmp_path / "hw.toml", tiers={"UB": 2**40})
    assert solve_and_confirm(tmp_path, exp, hw)["makespan"] == 60


def test_a_plan_you_bring_may_pass_2_63(tmp_path):
    """One buffer of Size 1 (backed: SPILL_OUT 0 cycles, SPILL_IN 2**58 cycles) spilled 40
    times between its COPY_IN and its user: the instance is in range (time horizon
    1 + 1 + 3 * 2**58), the plan is not, and its figures are exact: makespan
    1 + 40 * 2**58 + 1 (each SPILL_IN waits for the one before), traffic 40."""
    nodes = [
        {"Id": 0, "Op": "ALLOC", "BufId": 0, "Size": 1, "Type": "UB"},
        {"Id": 1, "Op": "COPY_IN", "Pipe": "MTE2", "Cycles": 1, "Bufs": [0]},
        {"Id": 2, "Op": "ADD", "Pipe": "VECTOR", "Cycles": 1, "Bufs": [0]},
        {"Id": 3, "Op": "FREE", "BufId": 0, "Size": 1, "Type": "UB"},
    ]
    inst = write(tmp_path / "one.json", nodes, [[0, 1], [1, 2], [2, 3]])
    hw = hw_file(tmp_path / "hw.toml", spill={"fixed_cycles": 2**58 - 1, "cycles_per_unit": 1})
    plan = tmp_path / "plan"
    plan.mkdir()
    spills = 40
    order = [0, 1] + [4 + i for i in range(2 * spills)] + [2, 3]
    (plan / "one_schedule.txt").write_text("".join(f"{v}\n" for v in order))
    (plan / "one_memory.txt").write_text("0:0\n")
    (plan / "one_spill.txt").write_text("0:0\n" * spills)
    files = [plan / f"one_{k}.txt" for k in ("schedule", "memory", "spill")]
    ev = dansched(
        "evaluate", inst, "--hw", hw, "--schedule", files[0], "--memory", files[1], "--spill", files[2], "--json"
    )
    check(ev, 0)
    got = json.loads(ev.stdout)
    assert got["valid"] and got["makespan"] == 2 + spills * 2**58 > 2**63
    assert (got["extra_traffic"], got["spill_count"]) == (spills, spills)
    check(dansched("trace", inst, "--hw", hw, "--plan", plan), 0)
    audit = dansched("audit", inst, "--hw", hw, "--plan", plan, "--json")
    check(audit, 0)
    for row in json.loads(audit.stdout)["bounds"]:
        assert row["value"] <= row["plan_value"], row


def _solve_cost(hw_text: str | None, tmp_path: Path) -> tuple[int, int, dict[str, Any]]:
    """(peak traced bytes, deterministic work units, the report) of a fast solve of
    matmul_s2, its report's bounds included, on the default hardware or ``hw_text``."""
    import tracemalloc

    import dansched
    from dansched.simulate import work

    hw = None
    if hw_text is not None:
        (tmp_path / "hw.toml").write_text(hw_text)
        hw = load_hardware(tmp_path / "hw.toml")
    inst = dansched.load_instance(SHIPPED / "matmul_s2.json", hw)
    dansched.solve(inst, dansched.effort_options("fast"), bounds=True)  # compiled and cached: not measured
    start = work.units()
    tracemalloc.start()
    try:
        solved = dansched.solve(inst, dansched.effort_options("fast"), bounds=True)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak, work.units() - start, solved.report


@pytest.fixture(scope="module")
def default_cost(tmp_path_factory) -> tuple[int, int, dict[str, Any]]:
    return _solve_cost(None, tmp_path_factory.mktemp("default"))


@pytest.mark.parametrize(
    "tiers",
    [
        {"L1": 10**12},
        pytest.param({"L1": 10**8}, marks=pytest.mark.slow),
        {"L1": 2**63 - 1, "UB": 2**63 - 1, "L0A": 2**63 - 1, "L0B": 10**12, "L0C": 10**12},
    ],
    ids=["L1=1e12", "L1=1e8", "every tier past its buffers"],
)
def test_a_capacity_past_the_graphs_buffers_costs_what_the_default_does(tiers, tmp_path, default_cost):
    """The probe's case: a hardware file with L1 = 10**12 was accepted, then the report's
    segment traffic bound sized its tables by the capacity (87 GiB: "out of memory"; at
    10**8, 65 s and 4.4 GB). A capacity larger than the tier's buffers can fill behaves
    like their sum: the solve's traced memory and its deterministic work stay within a
    quarter of the default hardware's (numpy's arrays are traced too; no clock involved),
    and its plan is valid with no spill."""
    base_peak, base_work, _ = default_cost
    text = "[tiers]\n" + "".join(f"{t} = {v}\n" for t, v in tiers.items())
    peak, units, report = _solve_cost(text, tmp_path)
    assert peak <= 1.25 * base_peak + 2**20, (peak, base_peak)
    assert units <= 1.25 * base_work, (units, base_work)
    assert report["spill_count"] == 0 and report["extra_traffic"] == 0
