"""``dansched solve`` the way a newcomer meets it: where the plan goes, what is printed
where, arguments checked before the work, progress on long runs, the version, and the
exit status when a polite kill lands after the plan is written.

Real processes (``python -m dansched.cli``) where the exit status or the streams are the
point; the shipped ``instances/Exp.json`` (7 nodes) keeps each run short.
"""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import REPO, SHIPPED, run_cli, run_proc_cli

import dansched.application.solution
from dansched.application.report.progress import progress_reporter
from dansched.instance import load_instance
from dansched.params import ProgressParams
from dansched.plan import read_plan_dir
from dansched.plan_folder import check_folder, folder_group
from dansched.simulate import evaluate

EXP = SHIPPED / "Exp.json"
GROUP = ["Exp_schedule.txt", "Exp_memory.txt", "Exp_spill.txt", "Exp_report.json"]


def files_in(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_default_folder_holds_the_plan_and_nothing_else_is_left(tmp_path):
    """Without --out the plan goes to ./dansched-out/ (no file, no hidden lock in the
    current folder); stdout names every file written, the figures are the evaluator's."""
    proc = run_proc_cli("solve", EXP, "--trace", "--html", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert files_in(tmp_path) == ["dansched-out"]
    out = tmp_path / "dansched-out"
    written = GROUP[:3] + ["Exp_trace.json", "Exp_view.html", "Exp_report.json"]
    assert files_in(out) == sorted(written)  # no .dansched.lock either
    ev = evaluate(load_instance(EXP), read_plan_dir(out, "Exp"))
    assert ev.valid and ev.makespan == 60  # COPY_IN 15 -> EXP 30 -> COPY_OUT 15
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("Exp: makespan 60, extra_traffic 0, spill_count 0 (")
    # the physical peak beside the capacity it must fit (L1 4,096 + UB 1,024 by default); the logical peak labelled
    assert lines[1] == f"physical peak {ev.physical_peak} of capacity 5,120 (L1+UB)"
    assert lines[2] == f"max_v_stay {ev.max_v_stay} (logical L1+UB: problem 1's metric, not a capacity check)"
    assert lines[3] == "Estimated latency: 0.060 us (60 cycles at 1 GHz)"
    assert lines[4] == "traffic budget 0: the problem-2 plan's traffic 0 + 0% slack (--traffic-slack)"
    assert " ".join(s.strip() for s in lines[5:7]) == "wrote 6 file(s) in dansched-out: " + ", ".join(written)
    assert lines[7] == "open dansched-out/Exp_view.html in a browser to explore the plan"
    assert proc.stderr == ""  # a short run on a pipe: no heartbeat, no warning


def test_json_prints_one_object_for_scripts(monkeypatch, capsys, tmp_path):
    code, out, err = run_cli(monkeypatch, capsys, "solve", EXP, "--problem", "2", "--out", tmp_path / "p", "--json")
    assert code == 0, err
    summary = json.loads(out)  # the whole of stdout is one object
    ev = evaluate(load_instance(EXP), read_plan_dir(tmp_path / "p", "Exp"))
    seconds = summary.pop("seconds")
    floor = summary.pop("floor")
    assert summary == {
        "instance": "Exp",
        "problem": 2,
        "status": "optimal",  # no spill: traffic 0, and no plan carries less
        "valid": True,
        "max_v_stay": ev.max_v_stay,
        "physical_peak": ev.physical_peak,
        "extra_traffic": ev.extra_traffic,
        "spill_count": ev.spill_count,
        "makespan": ev.makespan,
        "objective": "extra_traffic",
        "gap": 0.0,
        "files": [str(tmp_path / "p" / n) for n in GROUP],
    }
    assert floor["value"] == 0 and floor["method"] and isinstance(seconds, float) and seconds > 0


def heartbeats(err: str) -> list[str]:
    """The progress lines of a run whose stderr is not a terminal, checked for their form."""
    beats = err.splitlines()
    assert beats and all(re.match(r"dansched: \d+:\d\d ", s) for s in beats), beats
    assert all(s.endswith(" in this step)") for s in beats), beats
    return beats


def test_solve_shows_a_heartbeat_and_quiet_drops_only_that(monkeypatch, capsys, tmp_path):
    """Piped, solve says every few seconds what runs and for how long (here every 0.05 s,
    so that a short run shows it); --quiet drops those lines and nothing else."""
    monkeypatch.setenv("DANSCHED_HEARTBEAT", "0.05")
    conv = SHIPPED / "conv_s2.json"
    code, loud, err = run_cli(monkeypatch, capsys, "solve", conv, "--problem", "2", "--out", tmp_path / "a")
    assert code == 0 and any("Stage " in s for s in heartbeats(err))
    code, quiet, err = run_cli(monkeypatch, capsys, "solve", conv, "--problem", "2", "--out", tmp_path / "b", "--quiet")
    assert code == 0 and err == ""
    group = [n.replace("Exp", "conv_s2") for n in GROUP]
    wrote = next(i for i, s in enumerate(quiet.splitlines()) if s.startswith("wrote "))
    assert quiet.splitlines()[1:wrote] == loud.splitlines()[1:wrote]
    assert " ".join(s.strip() for s in quiet.splitlines()[wrote:]) == f"wrote 4 file(s) in {tmp_path / 'b'}: " + (
        ", ".join(group)
    )


@pytest.mark.parametrize("command", [pytest.param("bound", marks=pytest.mark.slow), "audit"])
def test_bound_and_audit_show_their_steps_and_how_many_are_left(monkeypatch, capsys, tmp_path, command):
    """conv_s2 with L1 = 1024 spills, so the audit has a placement model to run."""
    conv, hw = SHIPPED / "conv_s2.json", tmp_path / "l1.toml"
    hw.write_text("[tiers]\nL1 = 1024\n")
    if command == "audit":
        args = ["--problem", "2", "--out", tmp_path / "plan", "--hw", hw, "--quiet"]
        assert run_cli(monkeypatch, capsys, "solve", conv, *args)[0] == 0
    extra = {"bound": ["--time-limit", "1"], "audit": ["--plan", tmp_path / "plan", "--hw", hw, "--time-limit", "1"]}
    monkeypatch.setenv("DANSCHED_HEARTBEAT", "0.05")
    code, _, err = run_cli(monkeypatch, capsys, command, conv, *extra[command], "--json")
    assert code == 0, err
    assert any(re.match(rf"dansched: \d+:\d\d {command} \d/\d", s) for s in heartbeats(err))  # "bound 2/3: ..."


def _wait_for(buf: io.StringIO, text: str, seconds: float = 60.0) -> None:
    """Until ``text`` is shown on ``buf`` (at most ``seconds``: the outcome is asserted after)."""
    deadline = time.monotonic() + seconds
    while text not in buf.getvalue() and time.monotonic() < deadline:
        time.sleep(0.02)


def test_the_reporter_on_a_terminal_shows_the_step_and_the_time(tmp_path):
    buf = io.StringIO()
    with progress_reporter(stream=buf, terminal=True, params=ProgressParams(refresh_per_second=20)) as say:
        say("Stage 2: DLR")
        _wait_for(buf, "0:01 in this step")  # a busy machine draws late, never wrong
    shown = buf.getvalue()
    assert "Stage 2: DLR (0:01 in this step, 0:01 in all)" in shown


def test_the_reporter_escapes_what_it_shows():
    buf = io.StringIO()
    with progress_reporter(stream=buf, terminal=False, params=ProgressParams(heartbeat_seconds=0.05)) as say:
        say("Writing a\nb\x1b[2J")
        _wait_for(buf, "\n")  # the first heartbeat line
    assert "a\\nb\\x1b[2J" in buf.getvalue() and "\x1b" not in buf.getvalue()
    assert all(line.startswith("dansched: ") for line in buf.getvalue().splitlines())


def test_an_output_folder_that_is_a_file_is_refused_before_solving(monkeypatch, capsys, tmp_path):
    """The pipeline is never reached: exit 2, one line, the file untouched."""

    def no_solve(*_args, **_kwargs):
        raise AssertionError("solved before checking --out")

    monkeypatch.setattr(dansched.application.solution, "run_pipeline", no_solve)
    target = tmp_path / "taken"
    target.write_text("keep")
    for out in (target, target / "below"):
        code, stdout, err = run_cli(monkeypatch, capsys, "solve", EXP, "--out", out)
        assert code == 2 and stdout == "" and len(err.splitlines()) == 1, err
        assert err.startswith(f"dansched: error: {out}") and "is a file" in err
    (tmp_path / "plan" / "Exp_report.json").mkdir(parents=True)  # a group file in the way
    code, _, err = run_cli(monkeypatch, capsys, "solve", EXP, "--out", tmp_path / "plan")
    assert code == 2 and "Exp_report.json: is a folder" in err
    assert target.read_text() == "keep"


@pytest.mark.parametrize(
    "args, message",
    [
        (["solve", "{dir}"], "{dir}: is a folder; give <case>.json or <case>_Nodes.csv"),
        (["info", "{dir}"], "{dir}: is a folder; give <case>.json or <case>_Nodes.csv"),
        (["info", EXP, "--png", "{dir}"], "{dir}: is a folder, not a file name"),
        (["view", EXP, "--plan", "{plan}", "--out", "{dir}"], "{dir}: is a folder, not a file name"),
        (
            ["trace", EXP, "--plan", "{plan}", "--out", "{file}/t.json"],
            "{file}/t.json: cannot write: {file} is a file, not a folder",
        ),
        (["generate", "fa", "--out", "{file}/g.json"], "{file}/g.json: cannot write: {file} is a file, not a folder"),
        (
            ["bench", EXP, "--methods", "base", "--out", "{file}"],
            "{file}/bench.json: cannot write: {file} is a file, not a folder",
        ),
    ],
)
def test_arguments_are_checked_before_the_work(monkeypatch, capsys, tmp_path, args, message):
    plan = tmp_path / "plan"
    assert run_cli(monkeypatch, capsys, "solve", EXP, "--out", plan, "--quiet")[0] == 0
    (tmp_path / "dir").mkdir()
    (tmp_path / "file").write_text("x")
    before = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*")}
    names = {"dir": tmp_path / "dir", "plan": plan, "file": tmp_path / "file"}
    code, out, err = run_cli(monkeypatch, capsys, *[str(a).format(**names) for a in args])
    assert code == 2 and out == "" and err.splitlines() == [f"dansched: error: {message.format(**names)}"]
    assert {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*")} == before  # nothing written


def test_version(monkeypatch, capsys):
    code, out, err = run_cli(monkeypatch, capsys, "--version")
    assert code == 0 and out == f"dansched {dansched.__version__}\n" and err == ""


def _solve_and_term(folder: Path, delay: float) -> int:
    """Start a solve, send SIGTERM ``delay`` seconds after its report appears; the status."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "dansched.cli", "solve", str(EXP), "--out", str(folder), "--quiet"],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    report = folder / "Exp_report.json"
    while not report.exists() and proc.poll() is None:
        time.sleep(0.0005)
    time.sleep(delay)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert "Traceback" not in err, err
    return proc.returncode


def test_sigterm_after_the_plan_is_written_never_ends_the_process_by_signal(tmp_path):
    """Once the plan is complete a SIGTERM gives exit 143, or 0 when the process had already
    ended; before, the interpreter's half-second teardown ran with the default handler
    back in place and the process died by the signal (status -15) nearly every time."""
    codes = [_solve_and_term(tmp_path / f"p{i}", delay) for i, delay in enumerate((0.0, 0.01))]
    assert set(codes) <= {0, 143}, codes
    for i in range(2):
        assert check_folder(tmp_path / f"p{i}", "Exp", folder_group()) is not None


def test_sigterm_during_the_work_exits_143_and_leaves_no_half_folder(tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-m", "dansched.cli", "bound", str(SHIPPED / "conv_s2.json")],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "DANSCHED_HEARTBEAT": "0.05"},
    )
    assert proc.stderr.readline().startswith("dansched: ")  # past the imports: working
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)
    assert proc.returncode == 143
