"""The CLI's Enum choices match the names the package accepts, and a bad choice is bad
usage: exit status 2 with one line on stderr, before any work is done."""

from __future__ import annotations

import pytest
from helpers import SHIPPED, run_cli

from dansched.cli import Family, Variant, Victim
from dansched.generate import FAMILIES
from dansched.stages.dlr.victim import VICTIMS
from dansched.stages.mpas.stage import VARIANTS


def test_enum_choices_are_the_package_names():
    assert [v.value for v in Variant] == list(VARIANTS)
    assert [v.value for v in Victim] == list(VICTIMS)
    assert [f.value for f in Family] == list(FAMILIES)


@pytest.mark.parametrize(
    "args, pattern",
    [
        (("--victim", "fifo"), "'fifo' is not one of 'cost', 'lru'"),
        (("--variant", "greedy"), "'greedy' is not one of 'mpas', 'mpas-greedy', 'mpas-paper'"),
        (("--problem", "7"), "--problem"),
        (("--effort", "quick"), "Invalid value for '--effort': 'quick' is not one of 'fast', 'default', 'max'."),
    ],
)
def test_bad_choice_is_one_line_and_exit_2(monkeypatch, capsys, tmp_path, args, pattern):
    code, out, err = run_cli(monkeypatch, capsys, "solve", SHIPPED / "Exp.json", "--out", tmp_path, *args)
    lines = err.strip().splitlines()
    assert code == 2 and out == "" and len(lines) == 1, err
    assert lines[0].startswith("dansched: error: ") and pattern in lines[0]
    assert "Value error" not in lines[0]  # the validation library's prefix stays out
    assert list(tmp_path.iterdir()) == []


def test_choices_reach_the_pipeline(monkeypatch, capsys, tmp_path):
    code, _, err = run_cli(
        monkeypatch,
        capsys,
        "solve",
        SHIPPED / "Exp.json",
        "--problem",
        "2",
        "--victim",
        "lru",
        "--variant",
        "mpas-paper",
        "--out",
        tmp_path,
        "--quiet",
    )
    assert code == 0, err
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".")) == [
        "Exp_memory.txt",
        "Exp_report.json",
        "Exp_schedule.txt",
        "Exp_spill.txt",
    ]
    assert '"variant": "mpas-paper"' in (tmp_path / "Exp_report.json").read_text()


@pytest.mark.parametrize(
    "typed, suggested",
    [
        ("--efort", "(did you mean --effort?)"),  # not --out: only close options
        ("--exact-windw", "(did you mean --exact-window or --exact-window-mode?)"),  # the closest first
        ("--qiet", "(did you mean --quiet?)"),
        ("--zzzz", None),  # nothing close: no suggestion
    ],
)
def test_a_mistyped_option_suggests_the_closest_first(monkeypatch, capsys, tmp_path, typed, suggested):
    code, out, err = run_cli(monkeypatch, capsys, "solve", SHIPPED / "Exp.json", "--out", tmp_path, typed, "1")
    [line] = err.strip().splitlines()
    assert code == 2 and out == ""
    head = f"dansched: error: No such option: {typed}"
    assert line == (head if suggested is None else f"{head} {suggested}")
    assert list(tmp_path.iterdir()) == []
