"""One rule for every command: results on stdout, progress and diagnostics on stderr, a
heartbeat on long work; and the first thing a newcomer types, ``dansched`` alone, prints
the help as help.

For the long commands the reporter prints a heartbeat at every step (as it does every
few seconds of long work: ``tests/test_cli_solve.py`` checks that clock), so that each
command's stderr shows what long work prints there; every stderr line must then be a
heartbeat (``dansched: M:SS <step> (M:SS in this step)``) and stdout must hold the results.
"""

from __future__ import annotations

import json
import re

import pytest
from helpers import SHIPPED, run_cli, run_proc_cli

import dansched

EXP = SHIPPED / "Exp.json"
HEARTBEAT = re.compile(r"^dansched: \d+:\d\d .+ \(\d+:\d\d in this step\)$")


def test_no_arguments_print_the_help_on_stdout():
    proc = run_proc_cli()
    assert proc.returncode == 0 and proc.stderr == ""
    assert proc.stdout == run_proc_cli("--help").stdout
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("Usage: ") and "Commands:" in lines and len(lines) > 10
    assert "\\n" not in proc.stdout  # printed as help, not escaped as text from input


def _streams(monkeypatch, capsys, *args) -> tuple[int, str, list[str]]:
    """Exit status, stdout and stderr lines of a command whose reporter beats at every step."""
    import contextlib
    import sys

    import dansched.application.report.progress as progress

    class BeatEveryStep(progress.Reporter):
        def __call__(self, message: str) -> None:
            super().__call__(message)
            print(self.heartbeat(), file=sys.stderr)

    @contextlib.contextmanager
    def reporter(quiet, params):
        yield BeatEveryStep()

    monkeypatch.setattr(progress, "progress_reporter", reporter)
    code, out, err = run_cli(monkeypatch, capsys, *args)
    return code, out, err.splitlines()


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    d = tmp_path_factory.mktemp("streams") / "plan"
    dansched.solve(dansched.load_instance(EXP), out=d)
    return d


def test_long_commands_print_results_on_stdout_and_a_heartbeat_on_stderr(monkeypatch, capsys, tmp_path, folder):
    cases = {
        "solve": (("solve", EXP, "--out", tmp_path / "s"), "wrote "),
        "bound": (("bound", EXP, "--time-limit", "1"), "how each bound was obtained:"),
        "audit": (("audit", EXP, "--plan", folder, "--time-limit", "1"), "stage furthest from its bound"),
        "bench": (("bench", EXP, "--methods", "base,dan", "--out", tmp_path / "b"), "bench: 2 rows (0 invalid)"),
        "sweep": (("sweep", EXP, "--set", "UB=512,1024", "--jobs", "1", "--out", tmp_path / "w"), "sweep: 2 cells"),
    }
    for name, (args, result) in cases.items():
        code, out, err = _streams(monkeypatch, capsys, *args)
        assert code == 0, (name, err)
        assert result in out, (name, out)
        assert err and all(HEARTBEAT.match(line) for line in err), (name, err)


@pytest.mark.parametrize("command", ["evaluate", "trace", "view", "info", "generate"])
def test_quick_commands_print_results_on_stdout_and_nothing_on_stderr(monkeypatch, capsys, tmp_path, folder, command):
    args = {
        "evaluate": ("evaluate", EXP, "--plan", folder),
        "trace": ("trace", EXP, "--plan", folder, "--out", tmp_path / "t.json"),
        "view": ("view", EXP, "--plan", folder, "--out", tmp_path / "v.html"),
        "info": ("info", EXP),
        "generate": ("generate", "chain", "--out", tmp_path / "g.json"),
    }[command]
    monkeypatch.delenv("DANSCHED_HEARTBEAT", raising=False)
    code, out, err = run_cli(monkeypatch, capsys, *args)
    assert code == 0 and err == "" and out.strip()


def test_evaluate_prints_the_estimated_latency_on_stdout_like_solve(monkeypatch, capsys, folder):
    code, out, err = run_cli(monkeypatch, capsys, "evaluate", EXP, "--plan", folder)
    makespan = json.loads((folder / "Exp_report.json").read_text())["makespan"]
    assert code == 0 and err == ""
    assert out.splitlines()[-1] == f"Estimated latency: {makespan / 1000:.3f} us ({makespan:,} cycles at 1 GHz)"


def test_the_summary_states_the_traffic_budget_and_where_it_came_from(monkeypatch, capsys, tmp_path):
    """The budget of problem 3 is the problem-2 plan's traffic (the report's ``stages.dlr``)
    plus the slack, rounded down: with a 50 % slack, floor(base * 150 / 100)."""
    hw = tmp_path / "hw.toml"
    hw.write_text("[tiers]\nL1 = 2048\n")  # matmul_s2 spills
    args = ("solve", SHIPPED / "matmul_s2.json", "--hw", hw, "--effort", "fast", "--traffic-slack", "50")
    code, out, err = run_cli(monkeypatch, capsys, *args, "--out", tmp_path / "p", "--json")
    assert code == 0, err
    budget = json.loads(out)["traffic_budget"]
    report = json.loads((tmp_path / "p" / "matmul_s2_report.json").read_text())
    base = report["stages"]["dlr"]["extra_traffic"]
    assert base > 0 and budget["base"] == base and budget["slack_percent"] == 50
    assert budget["allowance"] == base * 150 // 100 and "problem-2 plan" in budget["from"]
    code, out, _ = run_cli(monkeypatch, capsys, *args, "--out", tmp_path / "q")
    line = f"traffic budget {base * 150 // 100:,}: the problem-2 plan's traffic {base:,} + 50% slack (--traffic-slack)"
    lines = out.replace("\n  ", " ").splitlines()  # a line wrapped at 80 columns, joined again
    assert code == 0 and line in lines
