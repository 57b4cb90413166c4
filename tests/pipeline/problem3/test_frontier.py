"""Problem 3's traffic-makespan frontier (dansched/pipeline/problem3/frontier.py, ``solve
--frontier``): the Pareto set against a brute force, the knee by hand, every point's plan
folder judged again by the shared evaluator, the solve's plan the fastest point within its
budget, and a larger traffic slack never slower (the evaluator's figures are the oracle)."""

from __future__ import annotations

import json
import random
from dataclasses import replace

import pytest
from helpers import SHIPPED, hw_file, run_cli

from dansched.application.judge import judge_folder
from dansched.hardware import load_hardware
from dansched.instance import load_instance
from dansched.pipeline import effort_options, run_pipeline
from dansched.pipeline.problem3.frontier import FrontierPoint, frontier_rows, knee, pareto_front
from dansched.plan import Plan
from dansched.simulate import evaluate
from dansched.testing import audit_instance


def _points(figures: list[tuple[int, int]]) -> list[FrontierPoint]:
    return [FrontierPoint(k, t, m, Plan(order=()), f"p{k}") for k, (t, m) in enumerate(figures)]


@pytest.mark.parametrize("seed", range(40))
def test_the_front_is_exactly_the_points_no_other_beats(seed):
    rng = random.Random(seed)
    figures = [(rng.randint(0, 6), rng.randint(10, 16)) for _ in range(rng.randint(1, 12))]
    beaten = {
        (t, m)
        for t, m in figures
        if any(t2 <= t and m2 <= m and (t2, m2) != (t, m) for t2, m2 in figures)  # brute force
    }
    expected = sorted(set(figures) - beaten)
    assert [(p.traffic, p.makespan) for p in pareto_front(_points(figures))] == expected


def test_the_knee_by_hand():
    front = pareto_front(_points([(100, 1000), (120, 900), (150, 880), (200, 879)]))
    assert knee(front, tolerance=0.01) == 2  # 879 x 1.01 = 887.79: 880 is within, 900 is not
    assert knee(front, tolerance=0.0) == 3  # only the fastest itself
    assert knee(front, tolerance=0.2) == 0  # 1,000 <= 879 x 1.2 = 1,054.8
    assert knee([], tolerance=0.01) == -1


@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.slow), pytest.param(2, marks=pytest.mark.slow)])
def test_a_larger_slack_is_never_slower(seed):
    """Slack 20 against slack 0 on small instances that spill: each plan judged again."""
    inst = audit_instance(seed, max_nodes=30)
    got = {}
    for slack in (0.0, 20.0):
        res = run_pipeline(inst, effort_options("default", problem=3, traffic_slack=slack))
        ev = evaluate(inst, res.plan)
        assert ev.valid and ev.extra_traffic is not None and ev.makespan is not None
        got[slack] = (ev.extra_traffic, ev.makespan)
    assert got[20.0][1] <= got[0.0][1], got
    assert got[0.0][0] <= res.report.budget.base  # slack 0 stays within the problem-2 plan's traffic


def test_solve_frontier_writes_each_point_as_a_judged_plan_folder(monkeypatch, capsys, tmp_path):
    """conv_s2 with L1 = 1024 spills; --frontier at --traffic-slack 20: every point's folder
    passes the evaluator with the figures of its row, the rows form a Pareto front (traffic
    rising, makespan falling) above their floors, one knee, and the solve's plan is the
    fastest point within its budget."""
    conv, hw = SHIPPED / "conv_s2.json", hw_file(tmp_path, L1=1024)
    out = tmp_path / "out"
    code, stdout, err = run_cli(
        monkeypatch, capsys, "solve", conv, "--hw", hw, "--frontier", "--traffic-slack", "20",
        "--out", out, "--json", "--quiet",
    )  # fmt: skip
    assert code == 0, err
    summary = json.loads(stdout)
    rows = summary["frontier"]
    assert rows and sum(r["knee"] for r in rows) == 1
    inst = load_instance(conv, load_hardware(hw))
    folders = sorted((out / "conv_s2_frontier").iterdir())
    assert sorted(f.name for f in folders) == sorted(f"traffic-{r['traffic']}" for r in rows)
    for r in rows:
        _, ev = judge_folder(inst, out / "conv_s2_frontier" / f"traffic-{r['traffic']}")
        assert ev.valid and (ev.extra_traffic, ev.makespan) == (r["traffic"], r["makespan"])
        assert r["floor"]["value"] <= r["makespan"]
    assert all(a["traffic"] < b["traffic"] and a["makespan"] > b["makespan"] for a, b in zip(rows, rows[1:]))
    _, ev = judge_folder(inst, out)
    within = [r["makespan"] for r in rows if r["traffic"] <= summary["traffic_budget"]["allowance"]]
    assert ev.valid and ev.makespan == min(within)
    # each row carries its folder; every allowance tried is listed, rising, with how its plan was reached
    assert [r["folder"] for r in rows] == [str(out / "conv_s2_frontier" / f"traffic-{r['traffic']}") for r in rows]
    tried = summary["allowances"]
    base = summary["traffic_budget"]["base"]
    assert tried[0]["allowance"] == base and tried[0]["outcome"] in ("searched", "walked")
    assert [t["allowance"] for t in tried] == sorted({t["allowance"] for t in tried})
    assert tried[-1]["allowance"] <= base * 2  # EffortParams.frontier_slack: 100 %
    for below, t in zip(tried, tried[1:]):
        assert t["traffic"] <= t["allowance"] and t["makespan"] <= below["makespan"]  # never slower
        if t["outcome"] == "no-faster-candidate":  # not searched: the plan kept below, as it was
            assert (t["traffic"], t["makespan"]) == (below["traffic"], below["makespan"])
    assert {(r["traffic"], r["makespan"]) for r in rows} <= {(t["traffic"], t["makespan"]) for t in tried}
    top = tried[-1]["allowance"]
    assert summary["frontier_note"].startswith(f"{len(tried)} allowances tried, {base:,} to {top:,} traffic")


def _tried(*rows: tuple[int, int, str]) -> list[FrontierPoint]:
    return [FrontierPoint(a, a, m, Plan(order=()), "", outcome=o) for a, m, o in rows]


def test_the_frontier_note_says_how_many_allowances_were_tried_and_why_one_point():
    """By hand: no traffic to share, a single candidate at --effort fast, heavier plans no
    faster (counted by outcome), and a frontier of several points."""
    from dansched.application.summary import frontier_note

    note = frontier_note(1, _tried((0, 60, "searched")), 0, 0, "default")
    assert note.startswith("1 allowance tried (0 traffic): the problem-2 plan carries no extra traffic")
    two = _tried((100, 900, "searched"), (200, 900, "no-faster-candidate"))
    assert frontier_note(1, two, 100, 0, "fast") == (
        "2 allowances tried, 100 to 200 traffic (+0% to +100% over the problem-2 plan's): one point: "
        "--effort fast makes a single candidate, the problem-2 plan (--effort default makes more)"
    )
    assert frontier_note(1, two, 100, 0, "default").endswith(
        "one point: no candidate carries more traffic than the problem-2 plan"
    )
    mixed = _tried(
        (100, 900, "searched"),
        (120, 900, "no-faster-candidate"),
        (150, 900, "no-faster-candidate"),
        (180, 900, "saturated"),
        (200, 900, "searched"),
    )
    assert frontier_note(1, mixed, 100, 3, "default").endswith(
        "one point: no heavier plan was faster than 900 cycles (2 admitted no candidate that screened faster, "
        "so were not searched; 1 had a plan already at its busiest pipe's load, so were not searched; "
        "1 searched without finding one)"
    )
    assert frontier_note(3, mixed, 100, 3, "default").endswith("over the problem-2 plan's): 3 points")


def test_solve_frontier_says_on_screen_what_it_tried(monkeypatch, capsys, tmp_path):
    """conv_s2 with L1 = 1024 at --effort fast: one point, and the screen says why (fast's
    single candidate, and how the gap-hiding walk ended, as the report's walk says), the
    legend under the table, every line within 80 columns."""
    conv, hw = SHIPPED / "conv_s2.json", hw_file(tmp_path, L1=1024)
    args = ["solve", conv, "--hw", hw, "--frontier", "--effort", "fast", "--out", tmp_path / "o", "--quiet"]
    code, out, err = run_cli(monkeypatch, capsys, *args)
    assert code == 0, err
    text = " ".join(out.split())
    assert "over p2: traffic above the problem-2 plan's;" in text and "*: the knee, the lightest point" in text
    assert "1 allowance tried" in text and "one point: --effort fast makes a single candidate" in text
    walk = json.loads((tmp_path / "o" / "conv_s2_report.json").read_text())["walk"]
    steps = f"{walk['steps']} step{'s' if walk['steps'] != 1 else ''}"
    assert f"the gap-hiding walk took {steps} and ended: {walk['end']}" in text
    assert "each a whole plan folder to view, evaluate or submit" in text
    assert all(len(line) <= 80 or " " not in line.strip() for line in out.splitlines()), out


@pytest.mark.parametrize("problem", ["1", "2"])
def test_frontier_is_refused_for_problems_1_and_2(monkeypatch, capsys, tmp_path, problem):
    out = tmp_path / "o"
    code, stdout, err = run_cli(
        monkeypatch, capsys, "solve", SHIPPED / "Exp.json", "--frontier", "--problem", problem, "--out", out
    )
    assert code == 2 and stdout == "" and not out.exists()
    assert err.splitlines() == [
        f"dansched: error: --frontier plans problem 3's traffic-makespan frontier; it does not apply to --problem {problem}"
    ]


def test_a_point_on_its_floor_is_optimal_in_every_output():
    """Exp (COPY_IN 15 -> EXP 30 -> COPY_OUT 15, a chain): its one frontier point takes 60
    cycles, the floor for its traffic (the chain) is 60, so the row, its floor and the gap say
    it is optimal; one cycle slower, neither flag is set."""
    inst = load_instance(SHIPPED / "Exp.json")
    res = run_pipeline(inst, effort_options("fast", problem=3))
    (row,) = res.report.frontier
    d = row.to_dict()
    assert (d["makespan"], d["floor"]["value"], d["gap"]) == (60, 60, 0.0)
    assert d["optimal"] is True and d["floor"]["optimal"] is True
    slower = frontier_rows(inst, [replace(row.point, makespan=61)], base=0)[0].to_dict()
    assert slower["optimal"] is False and slower["floor"]["optimal"] is False and slower["gap"] > 0
