"""``bound`` and ``audit`` as library calls (:func:`dansched.bound`, :func:`dansched.audit_folder`)
and at the command line: what can be bounded when problem 1 has no order, progress
callbacks with how much is left, and an invalid plan refused."""

from __future__ import annotations

import json

import pytest
from helpers import SHIPPED, alloc, free, op, run_cli

import dansched
from dansched.errors import PlanInvalidError
from dansched.plan import Plan, write_plan

# an operation using two L0A buffers at once: no problem-1 order (the L0 single-residency
# rule), but problems 2 and 3 plan it
TWO_L0A_NODES = [alloc(0, 0, 8, "L0A"), alloc(1, 1, 8, "L0A"), op(2, "ADD", "VECTOR", 5, [0, 1])]
TWO_L0A_NODES += [free(3, 0, 8, "L0A"), free(4, 1, 8, "L0A")]
TWO_L0A_EDGES = [[0, 2], [1, 2], [2, 3], [2, 4]]


@pytest.fixture
def two_l0a(tmp_path):
    p = tmp_path / "two_l0a.json"
    p.write_text(json.dumps({"Nodes": TWO_L0A_NODES, "Edges": TWO_L0A_EDGES}))
    return p


def test_bound_without_a_problem1_order_bounds_the_problem3_plan_and_says_what_is_missing(monkeypatch, capsys, two_l0a):
    code, out, err = run_cli(monkeypatch, capsys, "bound", two_l0a, "--time-limit", "1", "--json", "--quiet")
    assert code == 0, err
    report = json.loads(out)
    why = report["not_bounded"]["problem 1"]
    assert "no L0-legal order exists" in why and "buffers 0 and 1" in why and "L0A" in why
    # by hand: L0 buffers do not count towards maxV_stay (0); the one ADD takes 5 cycles on VECTOR
    assert report["max_v_stay"]["value"] == report["max_v_stay"]["plan_value"] == 0
    assert report["makespan"]["value"] == report["makespan"]["plan_value"] == 5
    assert report["extra_traffic"]["plan_value"] == 0
    code, out, _ = run_cli(monkeypatch, capsys, "bound", two_l0a, "--time-limit", "1", "--quiet")
    assert code == 0 and f"not bounded: problem 1: {why}" in " ".join(out.split())  # wrapped at 80 columns


def test_bound_reports_its_steps_with_how_many_are_left():
    said: list[str] = []
    result = dansched.bound(dansched.load_instance(SHIPPED / "Exp.json"), time_limit=1, progress=said.append)
    steps = [m.split(":")[0].split(",")[0] for m in said]
    assert steps[0] == "bound 1/3" and "bound 2/3" in steps and steps[-1] == "bound 3/3"
    assert steps == sorted(steps)  # in order
    assert any(m.startswith("bound 1/3, solving problem 3: Stage 1") for m in said)
    report = result.to_dict()
    assert report["makespan"]["value"] == 60 and "not_bounded" not in report  # COPY_IN 15 + EXP 30 + COPY_OUT 15


def test_audit_folder_judges_checks_and_refuses_an_invalid_plan(tmp_path):
    inst = dansched.load_instance(SHIPPED / "Exp.json")
    dansched.solve(inst, dansched.SolveOptions(problem=2), out=tmp_path / "good")
    said: list[str] = []
    result = dansched.audit_folder(inst, tmp_path / "good", time_limit=1, progress=said.append)
    assert said[0].startswith("audit 1/2") and said[-1].startswith("audit 2/2")
    rows = result.to_dict()["bounds"]
    assert {r["metric"] for r in rows} == {"max_v_stay", "extra_traffic", "makespan"}
    write_plan(Plan(order=tuple(range(7)), offsets=((0, 0), (1, 0))), tmp_path / "bad", "Exp")  # overlapping
    with pytest.raises(PlanInvalidError, match=r"the plan in .*bad is invalid \(\d+ violation"):
        dansched.audit_folder(inst, tmp_path / "bad", time_limit=1)
