"""A solve that stops early with its best plan (docs/guide.md, *Stopping early*;
dansched/interrupt.py, ``anytime``): asked at any step -- by a caller
(``interrupt.request_stop``), by its deadline (``solve --time-limit``,
``SolveOptions.stop_after``) or by the first Ctrl-C -- the solve ends with a plan the
evaluator accepts, written whole, its report saying what stopped it and where; a second
Ctrl-C aborts with nothing written. Without a stop nothing changes: the deterministic
budgets alone decide, and the report has no ``stopped``.

A stop asked from the progress callback lands at the next step boundary, which does not
depend on the clock: such stops are deterministic, and most tests use them. The tests
that send signals wait for a progress line (a step the run has reached), never a time.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import OFFICIAL, REPO, SHIPPED, run_cli

import dansched
import dansched.plan_folder as pf
from dansched import interrupt

EXP, FA = SHIPPED / "Exp.json", SHIPPED / "fa_s2.json"
WAIT = 120.0  # seconds a process test waits for a line (a busy machine is slow, never wrong)

PROGRESS = re.compile(r"dansched: \d+:\d\d ")  # a progress line (report/progress: elapsed time, step)


def _steps(inst) -> list[str]:
    """The progress messages of a whole default solve, each step once, in order."""
    said: list[str] = []
    dansched.solve(inst, progress=said.append, bounds=False)
    kinds = dict.fromkeys(m.split(":")[0] for m in said)
    return [next(m for m in said if m.split(":")[0] == k) for k in kinds]


def _stopped_at(inst, step: str, **fields) -> dansched.Solution:
    """A solve asked to stop when its progress first says ``step``."""

    def say(message: str) -> None:
        if message == step:
            interrupt.request_stop("test")

    return dansched.solve(inst, dansched.effort_options("default", **fields), progress=say)


def _check_stopped(inst, solution: dansched.Solution, by: str, step: str) -> None:
    """The plan is valid for the evaluator, the report says it stopped and where."""
    ev = dansched.evaluate(inst, solution.plan)
    assert ev.valid and (ev.extra_traffic, ev.makespan) == (
        solution.evaluation.extra_traffic,
        solution.evaluation.makespan,
    )
    stopped = solution.report["stopped"]
    assert (stopped["by"], stopped["step"]) == (by, step) and "another run may" in stopped["note"]
    assert solution.report["extra_traffic"] <= solution.report["traffic_budget"]["allowance"]


def test_a_stop_at_every_step_of_a_solve_gives_a_valid_plan_that_says_where(exp_steps):
    """Exp's default solve: stages, candidates, Stage-3 runs, both makespan-search starts,
    the polish and the rivals, each asked to stop at its first progress line."""
    inst = dansched.load_instance(EXP)
    assert len(exp_steps) >= 8, exp_steps
    for step in exp_steps:
        _check_stopped(inst, _stopped_at(inst, step), "test", step)


@pytest.fixture(scope="module")
def exp_steps() -> list[str]:
    return _steps(dansched.load_instance(EXP))


@pytest.mark.slow
def test_a_stop_at_every_step_of_a_larger_solve_gives_a_valid_plan():
    inst = dansched.load_instance(FA)
    for step in _steps(inst):
        _check_stopped(inst, _stopped_at(inst, step), "test", step)


def test_a_stop_at_a_step_is_deterministic_and_the_frontier_lists_its_points(tmp_path):
    """Two solves stopped at the same step end with the same plan (the stop lands at the
    next step boundary, not at a moment of the clock); with --frontier the folder's
    points are those planned before the stop, each a plan folder."""
    inst = dansched.load_instance(FA)
    step = "Problem 3: candidates from dlr (budget 0 traffic)"
    first, second = (_stopped_at(inst, step, frontier=True) for _ in range(2))
    assert first.plan == second.plan and first.report["frontier"] == second.report["frontier"]
    first.write(tmp_path)
    rows = json.loads((tmp_path / "fa_s2_report.json").read_text())["frontier"]
    assert sorted(p.name for p in (tmp_path / "fa_s2_frontier").iterdir()) == [f"traffic-{r['traffic']}" for r in rows]


def test_without_a_stop_nothing_changes():
    """No request, no deadline: no ``stopped`` in the report or the summary, and the plan
    of a solve with a deadline far away is the plan without one."""
    inst = dansched.load_instance(EXP)
    plain = dansched.solve(inst, dansched.effort_options("fast"))
    far = dansched.solve(inst, dansched.effort_options("fast", stop_after=10**6))
    assert "stopped" not in plain.report and "stopped" not in plain.summary().to_dict() and plain.stopped is None
    assert far.stopped is None and far.plan == plain.plan


def test_a_deadline_already_passed_stops_at_the_first_step(tmp_path, monkeypatch, capsys):
    """``--time-limit 0``: the deadline has passed when the solve starts (no clock decides
    where it lands: the first check sees it). The plan is Stage 1's and 2's first one,
    valid, written; exit 0 (the limit was asked for), one line on stdout says so."""
    out = tmp_path / "out"
    code, stdout, err = run_cli(monkeypatch, capsys, "solve", FA, "--time-limit", "0", "--out", out, "--quiet")
    assert code == 0, err
    assert "stopped early by its --time-limit after 0.0 s, at its start: the plan is" in " ".join(stdout.split())
    report = json.loads((out / "fa_s2_report.json").read_text())
    assert report["stopped"]["by"] == "time limit" and report["options"]["stop_after"] == 0
    assert report["stopped"]["step"] in ("", "Stage 1: MPAS")  # the deadline fired before or as it began
    inst = dansched.load_instance(FA)
    _, ev = dansched.judge_folder(inst, out)
    assert ev.valid and ev.makespan == report["makespan"]


def test_the_default_solve_has_no_deadline(monkeypatch, capsys, tmp_path):
    """``--time-limit`` is opt-in: without it no stop_after, the CP-SAT safety net of 60 s."""
    out = tmp_path / "out"
    assert run_cli(monkeypatch, capsys, "solve", EXP, "--out", out, "--quiet", "--effort", "fast")[0] == 0
    options = json.loads((out / "Exp_report.json").read_text())["options"]
    assert options["stop_after"] is None and options["time_limit"] == 60


# ---- Ctrl-C on a real process ------------------------------------------------------------


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ, **extra)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _start(args: list[str], err: Path) -> subprocess.Popen:
    with open(err, "wb") as fh:
        return subprocess.Popen(
            [sys.executable, "-m", "dansched.cli", *map(str, args)],
            stdout=subprocess.PIPE,
            stderr=fh,
            env=_env(DANSCHED_HEARTBEAT="0.01"),
            text=True,
            start_new_session=True,
        )


def _wait_for(proc: subprocess.Popen, err: Path, words: str) -> None:
    """Until the run's progress says ``words`` (or it ended: the test then fails on it)."""
    deadline = time.monotonic() + WAIT
    while words not in err.read_text() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)
    assert words in err.read_text(), err.read_text()[-2000:]


def test_ctrl_c_during_the_search_writes_the_best_plan_so_far(tmp_path):
    """The first Ctrl-C once the makespan search runs: the run says it is stopping, ends
    with the best plan so far as a whole plan folder (valid, its report saying Ctrl-C
    stopped it in the search) and the interruption line naming it kept, status 130."""
    out, err = tmp_path / "out", tmp_path / "err"
    proc = _start(["solve", FA, "--out", out], err)
    try:
        _wait_for(proc, err, "Makespan search")
        os.killpg(proc.pid, signal.SIGINT)
        stdout, _ = proc.communicate(timeout=WAIT)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    lines = [s for s in err.read_text().splitlines() if not PROGRESS.match(s)]
    assert proc.returncode == 130, lines
    assert lines == [interrupt.STOPPING_LINE, f"dansched: interrupted (kept: {out})"], lines
    assert "stopped early by Ctrl-C" in stdout
    report = json.loads((out / "fa_s2_report.json").read_text())
    assert report["stopped"]["by"] == "Ctrl-C" and report["stopped"]["step"].startswith(
        ("Makespan search", "Stage 3 on the makespan", "Polish")
    )
    assert pf.check_folder(out, "fa_s2", pf.folder_group()) is not None
    _, ev = dansched.judge_folder(dansched.load_instance(FA), out)
    assert ev.valid and ev.makespan == report["makespan"]
    assert not [p.name for p in out.iterdir() if p.name.startswith(".")]


def test_a_second_ctrl_c_aborts_with_nothing_written(tmp_path):
    """The first Ctrl-C stops the search; the run then waits for the plan folder's lock,
    which the test holds (so the second Ctrl-C lands before the write, whatever the
    machine's speed): it aborts, nothing written, status 130."""
    out, err = tmp_path / "out", tmp_path / "err"
    proc = _start(["solve", FA, "--out", out], err)
    try:
        _wait_for(proc, err, "Makespan search")
        with pf.folder_lock(out):
            os.killpg(proc.pid, signal.SIGINT)
            _wait_for(proc, err, "Writing the plan folder")
            os.killpg(proc.pid, signal.SIGINT)
            proc.communicate(timeout=WAIT)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    lines = [s for s in err.read_text().splitlines() if not PROGRESS.match(s)]
    assert proc.returncode == 130 and lines == [interrupt.STOPPING_LINE, "dansched: interrupted (nothing written)"]
    assert not out.exists() or list(out.iterdir()) == []


@pytest.mark.slow
@pytest.mark.skipif(not (OFFICIAL / "FlashAttention_Case1.json").exists(), reason="no official instances here")
def test_a_time_limit_bounds_a_long_solve(tmp_path, monkeypatch, capsys):
    """The issue's case: ``--time-limit 4`` on FlashAttention_Case1 (a default solve of
    20-40 s) stops at its deadline with a valid plan folder whose report says where."""
    out = tmp_path / "out"
    case = OFFICIAL / "FlashAttention_Case1.json"
    code, stdout, err = run_cli(monkeypatch, capsys, "solve", case, "--time-limit", "4", "--out", out, "--quiet")
    assert code == 0, err
    report = json.loads((out / "FlashAttention_Case1_report.json").read_text())
    assert report["stopped"]["by"] == "time limit" and report["stopped"]["seconds"] >= 4
    _, ev = dansched.judge_folder(dansched.load_instance(case), out)
    assert ev.valid
