"""The slow-run warning (docs/guide.md, *Slow runs*): measured in deterministic work
units (node-visits of the evaluator and the cycle simulator, CP-SAT model sizes), never
by the clock; one stderr line, once a run, past SlowRunParams.factor times the usual work per node."""

from __future__ import annotations

from helpers import SHIPPED, run_cli

from dansched.application.solution import solve
from dansched.instance import load_instance
from dansched.params import SlowRunParams
from dansched.pipeline import effort_options
from dansched.simulate import work

EXP = SHIPPED / "Exp.json"


def test_the_rule_by_hand():
    usual, limit = 8_000, 24_000  # SlowRunParams' defaults: 8,000 units per node at default, factor 3
    assert work.slow_note(limit * 10, 10, "default") is None  # at the limit: not yet
    assert work.slow_note(limit * 10 + 10, 10, "default") == (
        f"slow run: {(limit + 1) / usual:.1f}x the usual work per node"
    )
    assert work.slow_note(10**12, 10, "no such effort") is None
    assert (
        work.slow_note(40, 10, "fast", SlowRunParams(factor=2.0, usual_fast=1))
        == "slow run: 4.0x the usual work per node"
    )


def test_the_work_of_a_solve_is_the_same_every_time():
    inst = load_instance(EXP)
    done = []
    for _ in range(2):
        start = work.units()
        solve(inst, effort_options("fast", problem=3), bounds=False)
        done.append(work.units() - start)
    assert done[0] == done[1] > 0


def test_one_warning_line_past_the_rule_and_none_before(monkeypatch, capsys, tmp_path):
    args = ("solve", EXP, "--effort", "fast", "--quiet")
    code, _, err = run_cli(monkeypatch, capsys, *args, "--out", tmp_path / "a")
    assert code == 0 and err == ""  # a usual run: no word
    slow_note = work.slow_note
    # any run is past 3x one unit per node
    monkeypatch.setattr(work, "slow_note", lambda *a: slow_note(*a, SlowRunParams(usual_fast=1)))
    code, out, err = run_cli(monkeypatch, capsys, *args, "--out", tmp_path / "b")
    assert code == 0 and out
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("dansched: warning: slow run: ") and len(lines[0]) <= 80
