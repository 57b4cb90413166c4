"""Every line the main commands print fits 80 columns, or is longer only where it has no
space to wrap at (a long path); no line ends in spaces (docs/cli.md, *Output*). Run at
COLUMNS=80 on a small instance, stdout and stderr both, piped."""

from __future__ import annotations

import pytest
from helpers import SHIPPED, run_cli

from dansched.application.report.progress import Reporter
from dansched.application.report.text import fit, wrapped

CONV = SHIPPED / "conv_s2.json"


def bad_lines(text: str) -> list[str]:
    """Lines over 80 columns that hold a space (so could have been wrapped), and lines
    ending in spaces."""
    out = []
    for line in text.splitlines():
        if line != line.rstrip(" "):
            out.append(f"trailing spaces: {line!r}")
        if len(line) > 80 and " " in line.strip():
            out.append(f"{len(line)} columns: {line!r}")
    return out


@pytest.fixture(scope="module")
def hw(tmp_path_factory):
    d = tmp_path_factory.mktemp("hw")
    p = d / "l1.toml"
    p.write_text("[tiers]\nL1 = 1024\n")  # conv_s2 spills: the bound and audit tables have every kind of row
    return p


def test_main_commands_fit_80_columns(monkeypatch, capsys, tmp_path, hw):
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("DANSCHED_HEARTBEAT", "0.05")  # heartbeat lines too
    plan = tmp_path / "a-rather-long-folder-name-for-the-plan-of-this-case"
    commands = [
        ["solve", CONV, "--problem", "2", "--hw", hw, "--out", plan, "--html", "--trace", "--effort", "fast"],
        ["bound", CONV, "--hw", hw, "--time-limit", "1"],
        ["audit", CONV, "--plan", plan, "--time-limit", "1"],
        ["evaluate", CONV, "--plan", plan],
        ["trace", CONV, "--plan", plan],
        ["view", CONV, "--plan", plan],
        ["info", CONV],
    ]
    for args in commands:
        code, out, err = run_cli(monkeypatch, capsys, *args)
        assert code == 0, (args, err)
        assert out.strip(), args
        assert bad_lines(out) == [], (args[0], "stdout")
        assert bad_lines(err) == [], (args[0], "stderr")


def test_wrapping_breaks_between_words_only():
    text = "wrote 4 file(s) in /a/very/long/" + "x" * 90 + "/folder: a_schedule.txt, a_memory.txt"
    lines = wrapped(text, 80)
    assert " ".join(line.strip() for line in lines) == text  # nothing lost, nothing cut in a word
    assert all(len(line) <= 80 or " " not in line.strip() for line in lines)
    assert lines[1].startswith("  /a/very/long/")  # the long path alone on its line


def test_progress_lines_never_wrap():
    reporter = Reporter()
    reporter("Rival memory-windows: Stage 3 on candidate 2/9: time-driven " + "timed(w=32,cw=8)" * 8)
    assert len(reporter.heartbeat(80)) == 80
    assert reporter.heartbeat(80).endswith(" in this step)")
    assert fit("x" * 100, 40) == "x" * 37 + "..."
    assert fit("short", 40) == "short"


def test_a_cut_progress_line_keeps_the_allowance_and_the_count():
    """At 80 columns a long step loses its middle, not its first part (the allowance, n of
    m) nor its count (how far the step has got); the prefix before it is short."""
    reporter = Reporter()
    reporter("Allowance 3 of 8: Rival memory-windows: Makespan search, start 2 of 2, round 2 of 2: 1,234/5,000 moves")
    line = reporter.heartbeat(80)
    assert len(line) == 80 and line.startswith("dansched: 0:00 Allowance 3 of 8: ")
    assert line.endswith(": 1,234/5,000 moves (0:00 in this step)") and "..." in line
    live = reporter.line(80)
    assert len(live) <= 80 and live.startswith("Allowance 3 of 8: ") and ": 1,234/5,000 moves (" in live


COMMANDS = ("evaluate", "solve", "bound", "audit", "generate", "trace", "view", "info", "warm", "bench", "sweep")


@pytest.mark.parametrize("command", COMMANDS)
def test_help_keeps_option_names_whole_and_names_its_arguments(monkeypatch, capsys, command):
    """At 80 columns every line of a command's help fits, no option name is split across
    lines (``--traffic-`` / ``slack``), and the usage line names its arguments in capitals
    (``INSTANCE``), not ``{instance}``."""
    import re

    from dansched.cli import app

    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = run_cli(monkeypatch, capsys, command, "--help")
    assert code == 0
    lines = out.splitlines()
    assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]
    assert not [line for line in lines if re.search(r"-\w+-$", line.rstrip())], "an option name split at a hyphen"
    usage = lines[0]
    assert "{" not in usage and "}" not in usage, usage
    import typer.main

    params = typer.main.get_command(app).commands[command].params  # type: ignore[attr-defined]
    for opt in (o for p in params for o in p.opts if o.startswith("--")):
        assert opt in out, opt  # each option whole somewhere in the help
    for arg in (p for p in params if p.param_type_name == "argument"):
        assert str(arg.metavar or arg.name).upper() in usage, usage


def test_the_command_summaries_are_whole_first_sentences(monkeypatch, capsys):
    """``dansched --help`` lists each command with the first sentence of its help, whole:
    no ``...`` cut, ending in a full stop, the same text docs/cli.md lists."""
    from pathlib import Path

    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = run_cli(monkeypatch, capsys, "--help")
    assert code == 0
    listed = out.split("Commands:\n", 1)[1]
    summaries: dict[str, str] = {}
    name = ""
    for line in listed.splitlines():
        if line[:3] == "  " + line[2:3] and line[2:3].strip():  # "  name  summary..."
            name, _, text = line.strip().partition("  ")
            summaries[name] = text.strip()
        elif name:
            summaries[name] += " " + line.strip()
    assert sorted(summaries) == sorted(COMMANDS)
    cli_md = (Path(__file__).resolve().parents[1] / "docs" / "cli.md").read_text()
    for name, text in summaries.items():
        assert text.endswith(".") and not text.endswith("..."), (name, text)
        assert f"* `{name}`: {text}\n" in cli_md, name


def test_a_tier_and_its_capacity_stay_on_one_line():
    """The hardware line wraps between tiers, never between a tier and its capacity."""
    line = "hardware from matmul_s2_report.json in the plan folder: L1 4,096, UB 1,024, L0A 256, L0B 256, L0C 512"
    lines = wrapped(line, 80)
    assert len(lines) == 2 and lines[1].startswith("  ") and all(not s.rstrip().endswith("L0A") for s in lines)
    assert " ".join(s.strip() for s in lines) == line
